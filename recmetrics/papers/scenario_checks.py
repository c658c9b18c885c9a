"""Check builders for claims that compare scenarios, tiers of metrics, or τ against a threshold
(papers 003 and 000, §6-7): the claims :mod:`recmetrics.papers.checks` does not cover.

Every comparison goes through the one verdict rule of :mod:`recmetrics.meta.findings`
(:func:`~recmetrics.meta.findings.holds`, :func:`~recmetrics.meta.findings.best_of`, a claim's parts
as one family: :func:`~recmetrics.meta.findings.jointly`) with the
uncertainty each result carries (the Monte Carlo se of a robustness curve or of DP; τ between
rankings of the full test sets with its bootstrap se over users, ``results[key + "_se"]`` from
:func:`recmetrics.meta.agreement.agreement_se`, when the chapter gives it; the data split's
replicates wherever the results carry them). Each builder returns ``check(results) -> Evidence``;
results are read by key, metric names reduced to their base names.

* :func:`robustness_tiers` — "A and B and, to a lesser degree, C and D show the best robustness":
  the first tier above every metric, the second above every metric outside the tiers.
* :func:`robustness_among_most` — "X and Y exhibit good robustness in all those scenarios": each
  member clearly above all but at most ``slack`` other metrics in every scenario.
* :func:`scenario_below` — "the drop is more pronounced under scenario A than under B": every
  metric's mean τ lower under A than under B, on the sizes both grids share.
* :func:`tau_at_size` — "the correlation is above 0.9 even when removing half of the test set":
  every metric's mean τ at one size against a threshold, with its Monte Carlo se.
* :func:`falls_slowly_linearly` — "the absolute value of P decreases quite slowly and linearly":
  the share of its full value a metric keeps, highest for the group, and close to a straight line.
* :func:`all_at_least` — every off-diagonal entry of a τ matrix at least a threshold; a τ within one
  swapped pair of systems of the threshold (:func:`swap_step`: 0.133 with 6 systems) decides nothing.
* :func:`tau_pair_at_least` — one entry of a τ matrix at least a threshold ("MAP is strongly
  correlated with NDCG").
* :func:`dp_worst` — a group with the highest DP (least discriminative), optionally in order.
* :func:`all_of` — a claim made of several checks' parts: their comparisons one family, every detail.
* :func:`least_robust_words` — 003 §7's wording of MRR's robustness: the worst under popularity,
  and among the least robust under sparsity, where bpref is the worst.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..meta.comparisons import holm, undetermined
from ..meta.firmness import replay_cached
from ..meta.findings import (NOISE_SE, Evidence, Verdict, best_of, compare, decide, family, holds, holds_comparison,
                             jointly, undecidable, weakest)
from .agreement_checks import _tau_by_base
from .checks import (_lowest, _se_text, _spread_text, base_name, by_base, few_systems, replicates_of, robustness_area,
                     robustness_replicates)

__all__ = ["STRONG_TAU", "LINEAR_TOLERANCE", "all_of", "swap_step", "robustness_tiers", "robustness_among_most", "scenario_below",
           "tau_at_size", "falls_slowly_linearly", "all_at_least", "tau_pair_at_least", "dp_worst",
           "least_robust_words"]

#: "strongly correlated", "almost identical rankings": the project's reading of the papers' words as
#: Kendall's τ ≥ 0.9 (000 §6.1: "all correlations are above 0.9, which indicates that the metrics
#: produce almost identical rankings"; 003 §6: correlations "above 0.9")
STRONG_TAU = 0.9
#: "linearly": the project's reading — the share of the full value kept at each reduced size lies
#: within this distance of the straight line through the two ends of the grid
LINEAR_TOLERANCE = 0.05



def swap_step(n_systems: int | None) -> float:
    """How far one swapped pair of systems moves Kendall's τ between two rankings of ``n_systems``:
    4 / (n (n − 1)) (0.133 for 6 systems, 0.0095 for 21); NaN when the count is unknown."""
    if n_systems is None or n_systems < 2:
        return float("nan")
    return 4.0 / (n_systems * (n_systems - 1))


def _tau_verdict(value: float, threshold: float, n_systems: int | None, se: float | None = None) -> tuple[str, str]:
    """``holds(value, ">=", threshold, se)`` for a τ between rankings of ``n_systems``: ``se`` is
    its bootstrap se over the users (:func:`recmetrics.meta.agreement.agreement_se`; ``None``: not
    computed, the τ is read as given), and a τ within one swapped pair of the threshold decides
    nothing either: the rankings of the full test sets are estimates, and one pair swapped by
    another split moves τ by :func:`swap_step`. An se of 0 (the τ read the same in every resample)
    says nothing of another split: the check is then gated
    (:func:`~recmetrics.meta.comparisons.undetermined`), its firmness unknown."""
    step = swap_step(n_systems)
    if se == 0:   # the τ read the same in every bootstrap resample: that says nothing of another split
        undetermined("τ the same in every bootstrap resample")
    c = holds_comparison(value, ">=", threshold, se if se else None)
    if np.isfinite(step) and abs(value - threshold) < step:
        return Verdict("inconclusive", undecidable([c])), (f"; within one swapped pair of {threshold:g} ({n_systems} "
                                                          f"systems: one pair moves τ by {step:.3f})")
    if se is not None and not np.isfinite(se):
        return Verdict("inconclusive", undecidable([c])), "; its bootstrap se is undefined"
    return decide([c]), ""


def _tau_se(results, key: str):
    """``results[key + "_se"]`` (bootstrap se of a τ matrix, by base names) or ``None``."""
    se = results.get(key + "_se")
    return None if se is None else _tau_by_base(se)


def robustness_tiers(tiers: Sequence[Sequence[str]], scenario: str, key: str = "robustness") -> Callable:
    """"``tiers[0]`` and, to a lesser degree, ``tiers[1]`` show the best robustness" under ``scenario``:
    the first tier above every other metric (the second tier included), each later tier above every
    metric outside the tiers so far, each pair beyond the noise (:func:`best_of`); combined."""
    tiers = [list(t) for t in tiers]

    def check(results):
        few = few_systems(results)
        if few:
            return few
        values, se = robustness_area(results[key], scenario)
        reps = robustness_replicates(results[key], scenario, values.index)
        verdicts, parts, before = [], [], []
        for tier in tiers:
            pool = values.drop([m for m in before if m in values.index])
            v, d = best_of(pool.to_dict(), tier, se.to_dict(),
                           replicates=None if reps is None else {m: reps[m] for m in pool.index})
            verdicts.append(v)
            parts.append(f"{', '.join(tier)} above {', '.join(m for m in pool.index if m not in tier)}: {v} ({d})")
            before += tier
        top = values.sort_values(ascending=False)
        return Evidence(jointly(verdicts), float(values[tiers[0]].min()),
                        f"mean τ under {scenario} ({', '.join(f'{m} {v:.3f}' for m, v in top.items())}; "
                        f"{_se_text(se, values.index)}{_spread_text(reps, [m for t in tiers for m in t])}) — "
                        + " | ".join(parts))
    return check


def _standing(rob, scenario: str, metric: str, group: Sequence[str], label: str) -> tuple[list, str]:
    """``metric`` against each metric outside ``group`` under ``scenario`` (``gap > 0``: above it) and a
    head for the detail."""
    values, se = robustness_area(rob, scenario)
    reps = robustness_replicates(rob, scenario, values.index) or {}
    v, s = _entries(values), _entries(se)
    if metric not in v:
        raise KeyError(metric)
    comps = [compare(v[metric], v[o], s.get(metric), s.get(o), reps_a=reps.get(metric),
                     reps_b=reps.get(o), label=f"{scenario}: {metric} vs {o}")
             for o in values.index if o not in group]
    return comps, f"{scenario}: {label}{metric} {v[metric]:.3f}"


@replay_cached
def _entries(series: pd.Series) -> dict:
    """``{label: entry}`` of ``series``, each entry the object ``series[label]`` gives (unique labels)."""
    return dict(zip(series.index, series.to_numpy()))


def robustness_among_most(group: Sequence[str], scenarios: Sequence[str], key: str = "robustness",
                          slack: int = 2, label: str = "") -> Callable:
    """"``group`` exhibits good robustness in all ``scenarios``": in each scenario every member is
    clearly above all but at most ``slack`` of the other metrics (``agrees``); a member clearly below
    more than ``slack`` of them in some scenario ``disagrees``; otherwise ``inconclusive``."""
    group = list(group)

    def check(results):
        parts = few_systems(results) or [_standing(results[key], sc, m, group, label)
                                          for sc in scenarios for m in group]
        if isinstance(parts, Evidence):
            return parts
        every = [c for comps, _ in parts for c in comps]
        rejected = {id(c) for c in holm(every)}          # every scenario's and member's pairs one family
        verdicts, texts = [], []
        for comps, head in parts:
            above = sum(c.holds() for c in comps)
            below = sum(id(c) in rejected and c.gap < 0 for c in comps)
            verdicts.append("disagrees" if below > slack else "agrees" if above >= len(comps) - slack else "inconclusive")
            texts.append(f"{head} above {above}, below {below} (Holm) of {len(comps)}")
        v = "disagrees" if "disagrees" in verdicts else "agrees" if all(x == "agrees" for x in verdicts) else "inconclusive"
        return Evidence(Verdict(v, every), None, "; ".join(texts)
                        + f" — 'good robustness': above all but at most {slack} other metrics beyond {NOISE_SE:g} se "
                        f"in every scenario; below more than {slack} (Holm over the {len(every)} comparisons) disagrees")
    return check


def _common_sizes(rob_a, sc_a: str, rob_b, sc_b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ca, cb = rob_a.curve(sc_a), rob_b.curve(sc_b)
    sizes = sorted((set(ca.index) & set(cb.index)) - {1.0})
    if not sizes:
        raise KeyError(f"robustness sizes shared by {sc_a} and {sc_b}")
    return ca.loc[sizes], cb.loc[sizes]


def _curve_se(rob, scenario: str, sizes) -> pd.DataFrame:
    s = rob.summary()
    s = s[s["scenario"] == scenario]
    se = s.assign(se=s["tau_std"] / np.sqrt(s["samples"])).pivot(index="size", columns="metric", values="se")
    return se.loc[list(sizes)]


@replay_cached
def _below_inputs(rob, lower: str, higher: str) -> tuple:
    """What :func:`scenario_below` compares, over the sizes both grids share: ``(sizes, mean τ under
    lower, under higher, their Monte Carlo se's, their replicates)`` by metric base name."""
    a, b = _common_sizes(rob, lower, rob, higher)
    sa, sb = _curve_se(rob, lower, a.index), _curve_se(rob, higher, b.index)
    ma, mb = by_base(a.mean()), by_base(b.mean())
    va = by_base((sa ** 2).sum().pow(0.5) / len(a))
    vb = by_base((sb ** 2).sum().pow(0.5) / len(b))
    ra = robustness_replicates(rob, lower, ma.index, a.index) or {}
    rb = robustness_replicates(rob, higher, mb.index, b.index) or {}
    return a.index, ma, mb, va, vb, ra, rb


def scenario_below(lower: str, higher: str, key: str = "robustness", what: str = "") -> Callable:
    """Every metric's mean τ over the sizes both grids share is lower under ``lower`` than under
    ``higher``, beyond the noise (Monte Carlo se of each mean, the samples independent)."""
    def check(results):
        few = few_systems(results)
        if few:
            return few
        sizes, ma, mb, va, vb, ra, rb = _below_inputs(results[key], lower, higher)
        comps = {m: compare(mb[m], ma[m], vb.get(m), va.get(m), reps_a=rb.get(m), reps_b=ra.get(m),
                            label=f"{m} {ma[m]:.3f} vs {mb[m]:.3f}") for m in ma.index}
        verdict, held, rev, und = family(comps.values())
        state = {id(c): "lower" if c in held else "higher (Holm)" if c in rev else "within the noise" for c in comps.values()}
        return Evidence(decide(comps.values()), float((ma - mb).max()),
                        f"mean τ over sizes {', '.join(f'{s:g}' for s in sizes)}, {lower} vs {higher}: "
                        + ", ".join(f"{c.label} ({state[id(c)]}; {c.margin()})" for c in comps.values())
                        + f"{what} — agrees when every metric is lower under {lower} beyond {NOISE_SE:g} se, the "
                        f"{len(comps)} comparisons one family"
                        + (f" (Monte Carlo and the {len(next(iter(ra.values())))} data-split replicates)" if ra else ""))
    return check


@replay_cached
def _at_size_inputs(rob, scenario: str, size: float) -> tuple:
    """What :func:`tau_at_size` compares: ``(the grid's size at or below size, mean τ there, its Monte
    Carlo se, its replicates)`` by metric base name."""
    curve = rob.curve(scenario)
    below = [s for s in curve.index if s <= size + 1e-9 and s < 1.0]
    if not below:
        raise KeyError(f"robustness[{scenario}] at a size ≤ {size:g}")
    at = max(below)
    tau = by_base(curve.loc[at])
    se = by_base(_curve_se(rob, scenario, [at]).iloc[0])
    reps = robustness_replicates(rob, scenario, tau.index, [at]) or {}
    return at, tau, se, reps


def tau_at_size(scenario: str, size: float, threshold: float, key: str = "robustness") -> Callable:
    """Every metric's mean τ at ``size`` of ``scenario`` is ≥ ``threshold`` (each against its Monte
    Carlo se); the nearest size of the grid at or below ``size`` is used and named."""
    def check(results):
        few = few_systems(results)
        if few:
            return few
        at, tau, se, reps = _at_size_inputs(results[key], scenario, size)
        comps = {m: holds_comparison(tau[m], ">=", threshold, se.get(m), replicates=reps.get(m), label=m)
                 for m in tau.index}
        verdict, held, rev, und = family(comps.values())
        low = tau.idxmin()
        status = (f"below {threshold:g} beyond the noise (Holm over the {len(comps)} metrics): "
                  + "; ".join(c.text() for c in rev) if rev else
                  f"not shown ≥ {threshold:g} beyond the noise, Monte Carlo and split together: "
                  + "; ".join(c.text() for c in und) if und else f"all ≥ {threshold:g}{weakest(held)}")
        return Evidence(decide(comps.values()), float(tau.min()),
                        f"mean τ at {at:g} of the {scenario} test set: "
                        + ", ".join(f"{m} {tau[m]:.3f}" for m in tau.sort_values().index)
                        + f"; lowest {low} {tau[low]:.3f} ({comps[low].margin()}) — claim: every metric ≥ {threshold:g}; "
                        f"{status}")
    return check


@replay_cached
def _kept_and_dropped(rob, scenario: str) -> tuple:
    """Under ``scenario``: each metric's share of its full-set value kept at each size (sizes x metrics),
    its mean drop and mean kept share over the reduced sizes, and their Monte Carlo se (``{metric: se}``)."""
    curve = rob.curve(scenario, "mean_value").sort_index()
    if 1.0 not in curve.index or len(curve) < 3:
        raise KeyError(f"robustness[{scenario}] values at 100% and two reduced sizes")
    full = curve.loc[1.0]
    s = rob.samples[(rob.samples["scenario"] == scenario) & (rob.samples["size"] < 1.0)]
    per = s.assign(kept=s["mean_value"] / s["metric"].map(full), drop=s["metric"].map(full) - s["mean_value"])

    def se_of(col):
        return by_base(per.groupby("metric")[col].agg(lambda x: x.std(ddof=1) / np.sqrt(len(x))))

    share = curve.div(full)
    share.columns = [base_name(c) for c in share.columns]
    drop = (curve.loc[1.0] - curve).drop(index=1.0).mean()
    drop.index = [base_name(c) for c in drop.index]
    kept = share.drop(index=1.0).mean()
    return share, drop, kept, se_of("kept").reindex(kept.index).to_dict(), se_of("drop").reindex(drop.index).to_dict()


def falls_slowly_linearly(group: Sequence[str], scenario: str, key: str = "robustness") -> Callable:
    """"The absolute value of ``group`` decreases quite slowly and linearly with the amount removed,
    whereas other metrics decrease much faster" (000 §6.3.1, read off Fig. 4's curves):

    (a) slowly — the paper does not say on which scale, so both readings are run: the *absolute*
    drop from the full-set value, averaged over the reduced sizes, lower for each member than for
    every other metric, and the *relative* one (the share of its full value a metric keeps) higher
    for each member; each beyond the Monte Carlo noise (:func:`best_of`). Both readings agreeing
    decides; a verdict that flips with the reading is ``inconclusive``.
    (b) linearly — at each reduced size the kept share is within :data:`LINEAR_TOLERANCE` of the
    straight line through the grid's two ends (the project's reading)."""
    group = list(group)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        share, drop, kept, kept_se, drop_se = _kept_and_dropped(results[key], scenario)
        rel, rel_d = best_of(kept.to_dict(), group, kept_se)
        ab, ab_d = best_of(drop.to_dict(), group, drop_se, higher=False)
        slow = rel if rel == ab else Verdict("inconclusive", undecidable(rel.comparisons))
        detail = (f"slowly — absolute drop (mean over the reduced sizes; lowest: "
                  + ", ".join(f"{m} {v:.4g}" for m, v in drop.sort_values().iloc[:3].items())
                  + f"): {ab} ({ab_d.replace(' beats ', ' falls less than ')}); share kept (highest: "
                  + ", ".join(f"{m} {v:.3f}" for m, v in kept.sort_values(ascending=False).iloc[:3].items())
                  + f"): {rel} ({rel_d})" + ("" if rel == ab else " — flips with the scale: inconclusive"))
        sizes = share.index.to_numpy(dtype=float)
        lin = []
        for m in group:
            col = share[m]
            line = col.iloc[0] + (col.iloc[-1] - col.iloc[0]) * (sizes - sizes[0]) / (sizes[-1] - sizes[0])
            dev = float(np.max(np.abs(col.to_numpy() - line)))
            lin.append(holds(dev, "<=", LINEAR_TOLERANCE))
            detail += f"; linearly — {m} kept share by size " + ", ".join(f"{x:g}: {v:.3f}" for x, v in col.items()) + \
                      f" (largest distance from the straight line {dev:.3f}, within {LINEAR_TOLERANCE:g}: {lin[-1]})"
        return Evidence(jointly([slow, *lin]), float(kept[group].min()), f"values under {scenario}: {detail}")
    return check


def all_at_least(key: str, threshold: float, what: str) -> Callable:
    """Every off-diagonal entry of the matrix ``results[key]`` (τ between rankings) is ≥ ``threshold``."""
    def check(results):
        few = few_systems(results)
        if few:
            return few
        t = pd.DataFrame(results[key]).astype(np.float64)
        off = t.where(~np.eye(len(t), dtype=bool)).stack()
        off = off[np.isfinite(off)]
        if not len(off):
            return Evidence("inconclusive", None, f"no finite {what}")
        n = results.get("n_systems")
        se = results.get(key + "_se")
        se = None if se is None else pd.DataFrame(se).astype(np.float64)
        verdicts = [_tau_verdict(v, threshold, n, None if se is None else float(se.loc[a, b]))
                    for (a, b), v in off.items()]
        low = off.idxmin()
        below = sum(v == "disagrees" for v, _ in verdicts)
        near = next((why for v, why in verdicts if why), "")
        low_se = "" if se is None else f" ± {float(se.loc[low[0], low[1]]):.3f} (bootstrap se over users)"
        return Evidence(jointly(v for v, _ in verdicts), float(off.min()),
                        f"lowest {what} {off.min():.3f}{low_se} ({low[0]} vs {low[1]}), median {off.median():.3f}; "
                        f"{below} of {len(off)} entries clearly below {threshold:g}{near} (claim: all ≥ {threshold:g})")
    return check


def tau_pair_at_least(key: str, a: str, b: str, threshold: float, what: str = "τ") -> Callable:
    """``results[key]``'s entry for metrics ``a`` and ``b`` (base names) is ≥ ``threshold``."""
    def check(results):
        few = few_systems(results)
        if few:
            return few
        t = _tau_by_base(results[key])
        v = float(t.loc[a, b])
        rank = t.loc[a].drop(a).sort_values(ascending=False)
        se = _tau_se(results, key)
        se = None if se is None else float(se.loc[a, b])
        verdict, near = _tau_verdict(v, threshold, results.get("n_systems"), se)
        spread = "" if se is None else f" ± {se:.3f} (bootstrap se over users)"
        return Evidence(verdict, v,
                        f"{what}({a}, {b}) = {v:.3f}{spread} (claim: ≥ {threshold:g}, the project's reading of 'strongly "
                        f"correlated'{near}); {a}'s highest τ: " + ", ".join(f"{m} {x:.3f}" for m, x in rank.iloc[:3].items()))
    return check


def dp_worst(group: Sequence[str], key: str = "dp", *, among: Sequence[str] | None = None,
             in_order: bool = False) -> Callable:
    """``group`` has a higher DP (less discriminative) than every other metric (of ``among``),
    beyond the Monte Carlo noise; ``in_order``: the members also in that order ("bpref, and to a
    lesser extent infAP": bpref above infAP beyond the noise). Metrics at the Monte Carlo floor are
    the most discriminative, never the worst, so the floor does not enter."""
    group = list(group)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        values = by_base(pd.Series(results[key], dtype=np.float64))
        se_raw = results.get(key + "_se")
        se = by_base(pd.Series(se_raw, dtype=np.float64)) if se_raw is not None else pd.Series(0.0, values.index)
        if among is not None:
            values = values[[m for m in values.index if m in set(among)]]
        se = se.reindex(values.index)
        reps = replicates_of(results, key)
        reps = {base_name(k): v for k, v in reps.items()} if reps else None
        verdict, detail = best_of(values.to_dict(), group, se.to_dict(), higher=True, replicates=reps)
        detail = detail.replace(" beats ", " is above ").replace(" beat(s) every other entry",
                                                                 " lie(s) above every other entry")
        if in_order:
            steps = [compare(values[a], values[b], se.get(a), se.get(b), reps_a=(reps or {}).get(a),
                             reps_b=(reps or {}).get(b), label=f"{a} above {b}") for a, b in zip(group, group[1:])]
            every = [*verdict.comparisons, *steps]
            verdict, held, rev, _ = family(every)
            detail += "; " + ", ".join(f"{c.text()}: " + ("holds" if c in held else "reversed (Holm)" if c in rev
                                                           else "within the noise") for c in steps)
            verdict = Verdict(verdict, every)
        top = values.sort_values(ascending=False)
        return Evidence(verdict, float(values[group].min()),
                        f"DP (lower is better; worst: {', '.join(f'{m} {v:.4g}' for m, v in top.iloc[:3].items())}"
                        f"{_spread_text(reps, group)}): " + detail)
    return check


def least_robust_words(metric: str, worst_sparsity: str, poor_sparsity: Sequence[str], key: str = "robustness", *,
                       among: Sequence[str] | None = None) -> Callable:
    """003 §7: "MRR is the worst one" under popularity and "bpref, and to a lesser extent infAP and
    MRR, show poor robustness to sparsity": ``metric`` the least robust under ``popular-items``;
    under ``ratings`` ``worst_sparsity`` the least robust and ``poor_sparsity`` (with it) below every
    other metric. Each part through the rule; combined."""
    poor = list(poor_sparsity)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        pop, pop_se = robustness_area(results[key], "popular-items", among)
        rat, rat_se = robustness_area(results[key], "ratings", among)
        pop_r = robustness_replicates(results[key], "popular-items", pop.index)
        rat_r = robustness_replicates(results[key], "ratings", rat.index)
        parts = [("worst under popularity", *_lowest(pop.to_dict(), [metric], pop_se.to_dict(), pop_r)),
                 (f"{worst_sparsity} worst under sparsity",
                  *_lowest(rat.to_dict(), [worst_sparsity], rat_se.to_dict(), rat_r)),
                 (f"{', '.join(poor)} the least robust under sparsity", *_lowest(rat.to_dict(), poor, rat_se.to_dict(), rat_r))]
        return Evidence(jointly(v for _, v, _ in parts), float(pop[metric]),
                        f"mean τ under popular-items: {', '.join(f'{m} {v:.3f}' for m, v in pop.sort_values().items())}; "
                        f"under ratings: {', '.join(f'{m} {v:.3f}' for m, v in rat.sort_values().items())} ("
                        f"{_se_text(rat_se, rat.index)}) — " + "; ".join(f"{w}: {v}" + ("" if v == "agrees" else f" ({d})")
                                                                        for w, v, d in parts))
    return check


def all_of(*checks: Callable) -> Callable:
    """One claim made of several checks' parts ("lower than under ratings *and* under items"): every
    part's comparisons one family (:func:`~recmetrics.meta.findings.jointly`), the details joined by
    ``" | "``, the first part's value; a part the set-up cannot test makes the claim not testable."""
    def check(results):
        parts = [c(results) for c in checks]
        untestable = next((p for p in parts if p.verdict == "not testable"), None)
        if untestable is not None:
            return untestable
        return Evidence(jointly(p.verdict for p in parts), parts[0].value, " | ".join(p.detail for p in parts))
    return check

