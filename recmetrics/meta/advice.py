"""Which metric should I report for these systems? An answer computed from discriminative power,
robustness to incomplete judgments and agreement, for the systems of one Study.

Valcarce et al. (RecSys 2018 §6, IRJ 2020 §6-8) choose metrics by two properties measured on the
systems being compared: **discriminative power** (Sakai 2006: DP = the sum of the p-values of a
paired permutation test over every pair of systems; lower tells more pairs apart) and
**robustness** (Kendall's τ between the ranking of systems on reduced test sets and on the full
one, averaged over sizes and scenarios; higher is more stable when judgments are missing). They
recommend the metric and cut-off that does well on both (nDCG at deep cut-offs on their systems).
:func:`advise` measures both for every metric and cut-off of a :class:`~recmetrics.study.Study`
— the user's own runs included — and decides with the one verdict rule of
:mod:`recmetrics.meta.findings`:

* candidate ``a`` **dominates** ``b`` when it is better beyond the noise on one property
  (:func:`~recmetrics.meta.findings.order`: more than ``NOISE_SE`` standard errors of the
  difference) and worse beyond the noise on none;
* the **candidates** to report are those no other candidate dominates (the noisy Pareto front);
* the **recommended** candidate is the front member with the best sum of ranks over the two
  properties (ties: lower DP, then higher robustness, then the deeper cut-off, which 003 §6
  favours).

Uncertainties: DP's Monte Carlo standard error is ``sqrt(Σ p (1 − p) / B)`` (pairs treated as
independent; 0 for exact enumeration); robustness's is the Monte Carlo error of the mean τ over
samples (:meth:`Robustness.area_se`), combined over scenarios as ``sqrt(Σ se²) / n_scenarios`` (a
scenario without an error estimate, e.g. one deterministic sample, adds none). With few systems τ
moves in coarse steps (``2 / (n (n − 1) / 2)``), so fewer candidates are told apart: the advice
says so rather than pretending precision.

The advice also reports, for the recommended candidate, how many system pairs are significant after
the multiple-comparison correction (Holm by default), which other candidates order the systems
differently (the system pairs that swap: when none do, the choice of metric does not change the
conclusions) and whether the geometric mean (000 §7) reorders them.

Example::

    adv = advise(study, n_permutations=2000, n_samples=5)
    adv.recommended        # e.g. 'nDCG@20'
    adv.table              # one row per metric@cutoff: dp, dp_se, robustness, ..., on_front
    print(adv.to_markdown())
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from .findings import NOISE_SE, order

__all__ = ["Advice", "advise", "decide", "dp_table", "ties_with_best", "infap_is_ap", "INFAP_IS_AP", "INFAP_WHY"]

#: why infAP equals AP when :func:`infap_is_ap` holds
INFAP_WHY = ("The judgments mark no item as pooled but unjudged (trec_eval's label −1), so trec_eval's infAP "
             "reads every item without a judgment as non-relevant: every retrieved item counts as judged, and "
             "then infAP is AP (up to its ε of 1e-5).")
#: why infAP is left out of the candidates when :func:`infap_is_ap` holds
INFAP_IS_AP = f"infAP is left out of the candidates: it equals AP on every user here. {INFAP_WHY} Its row would repeat AP's."

_CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}


def dp_table(dp_results: Mapping[str, Any], correction: str | None = "holm", alpha: float = 0.05) -> pd.DataFrame:
    """One row per candidate of ``{candidate: DiscriminativePower}`` (candidates named
    ``metric@cutoff``): ``metric``, ``cutoff``, ``dp``, ``dp_se`` (:attr:`DiscriminativePower.dp_se`), ``rank`` (1 = the
    lowest DP), ``significant`` (share of system pairs with p < ``alpha`` after ``correction``,
    :func:`~recmetrics.meta.significance.correct`) and ``median_p``.

    >>> import numpy as np, pandas as pd
    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(dp=0.06, dp_se=0.0, exact=True, n_permutations=64, pvalues=pd.DataFrame({"p": [0.01, 0.05]}))
    >>> t = dp_table({"P@10": r})                 # Holm: 0.01 -> 0.02 (significant), 0.05 -> 0.05 (not)
    >>> int(t.loc["P@10", "cutoff"]), float(t.loc["P@10", "dp"]), float(t.loc["P@10", "significant"])
    (10, 0.06, 0.5)
    """
    from .significance import correct

    rows = []
    for name, res in dp_results.items():
        base, _, cut = str(name).partition("@")
        p = np.asarray(res.pvalues["p"], dtype=np.float64)
        p_adj = correct(p, correction)
        rows.append({"candidate": str(name), "metric": base, "cutoff": int(cut) if cut.isdigit() else None,
                     "dp": float(res.dp), "dp_se": float(res.dp_se),
                     "significant": float(np.mean(p_adj < alpha)) if len(p) else np.nan,
                     "median_p": float(np.median(p)) if len(p) else np.nan})
    table = pd.DataFrame(rows).set_index("candidate")
    table.insert(4, "rank", table["dp"].rank(method="min").astype(int))
    return table


def ties_with_best(values: Mapping[str, float], se: Mapping[str, float] | None = None, *,
                   higher: bool = True, z: float = NOISE_SE) -> tuple[str, list[str]]:
    """The best entry of ``values`` and the others :func:`~recmetrics.meta.findings.order` cannot
    tell apart from it (within ``z`` standard errors of the difference).

    >>> ties_with_best({"a": 0.9, "b": 0.88, "c": 0.5}, {"a": 0.01, "b": 0.01, "c": 0.01})
    ('a', ['b'])
    >>> ties_with_best({"a": 0.1, "b": 0.3}, higher=False)
    ('a', [])
    """
    se = {} if se is None else dict(se)
    finite = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(float(v))}
    if not finite:
        raise InputError("no finite value to rank")
    best = (max if higher else min)(finite, key=finite.get)
    ties = [k for k in finite if k != best and order(finite[best], finite[k], se.get(best), se.get(k), z=z) == 0]
    return best, ties


def decide(table: pd.DataFrame, *, z: float = NOISE_SE) -> tuple[list[str], str | None, dict[str, list[str]]]:
    """The front and the recommendation from a candidates table (pure; used by :func:`advise`).

    ``table``: index = candidate names (``"nDCG@10"``), columns ``dp``, ``dp_se``, ``robustness``,
    ``robustness_se`` and optionally ``cutoff``. Lower DP and higher robustness are better; each
    comparison is :func:`~recmetrics.meta.findings.order` with the two standard errors (a NaN
    value decides nothing). Returns ``(front, recommended, dominated_by)``.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"dp": [0.10, 0.30, 0.11], "dp_se": 0.01, "robustness": [0.9, 0.95, 0.7],
    ...                   "robustness_se": 0.01}, index=["nDCG@10", "P@10", "RR@10"])
    >>> front, best, by = decide(t)
    >>> front, best, by["RR@10"]
    (['nDCG@10', 'P@10'], 'nDCG@10', ['nDCG@10'])
    """
    required = {"dp", "dp_se", "robustness", "robustness_se"}
    if not required <= set(table.columns):
        raise InputError(f"the candidates table needs columns {sorted(required)}, has {list(table.columns)}")
    if table.index.has_duplicates:
        raise InputError(f"candidate {table.index[table.index.duplicated()][0]!r} appears twice")
    names = list(table.index)
    rows = {n: table.loc[n] for n in names}

    def better(a, b) -> list[int]:
        ra, rb = rows[a], rows[b]
        return [order(rb.dp, ra.dp, rb.dp_se, ra.dp_se, z=z),                     # lower DP is better
                order(ra.robustness, rb.robustness, ra.robustness_se, rb.robustness_se, z=z)]

    dominated_by = {n: [] for n in names}
    for a in names:
        for b in names:
            if a != b:
                signs = better(a, b)
                if max(signs) > 0 and min(signs) >= 0:
                    dominated_by[b].append(a)
    front = [n for n in names if not dominated_by[n]]
    if not front:  # pragma: no cover - dominance is a strict partial order: some candidate is undominated
        return [], None, dominated_by
    sub = table.loc[front]
    rank = sub["dp"].rank(method="average", na_option="bottom") + \
        sub["robustness"].rank(method="average", ascending=False, na_option="bottom")
    cut = sub["cutoff"] if "cutoff" in sub else pd.Series(0, index=sub.index)
    key = pd.DataFrame({"rank": rank, "dp": sub["dp"].fillna(np.inf), "rob": -sub["robustness"].fillna(-np.inf),
                        "cut": -cut.astype(float)})
    best = key.sort_values(["rank", "dp", "rob", "cut"], kind="stable").index[0]
    return front, str(best), dominated_by


def infap_is_ap(study) -> bool:
    """Whether trec_eval's infAP equals AP on every user of ``study``: it holds both (the default
    reading, ``infAP`` without parameters, :func:`recmetrics.metrics.ranking.inferred_ap`) and no fold's
    judgments label an item pooled but unjudged (a negative label). Then every item without a
    judgment counts as non-relevant, every retrieved item as judged, and infAP's estimate of
    precision at each relevant item is the precision itself (to within ε = 1e-5).

    >>> import pandas as pd, recmetrics as rm
    >>> from types import SimpleNamespace
    >>> q = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5, 1]}))
    >>> infap_is_ap(SimpleNamespace(metrics=["AP", "infAP"], qrels=[q]))
    True
    >>> infap_is_ap(SimpleNamespace(metrics=["AP", "infAP(unjudged=pooled)"], qrels=[q]))
    False
    """
    names = [str(m) for m in study.metrics]
    if "AP" not in names or "infAP" not in names:
        return False
    return not any(bool((q.to_frame()["rating"].to_numpy() < 0).any()) for q in study.qrels)


@dataclass(frozen=True)
class Advice:
    """Result of :func:`advise`.

    ``table``: one row per candidate (``metric@cutoff``): ``metric``, ``cutoff``, ``dp``, ``dp_se``,
    ``significant`` (share of system pairs with corrected p < alpha), ``robustness`` (mean over
    scenarios of the mean τ over reduced sizes), ``robustness_se``, ``agreement`` (mean Kendall τ
    of its system ranking with the other candidates'), ``tau_geometric`` (τ between its arithmetic
    and geometric rankings), ``dominated_by`` and ``on_front``. ``robustness_by_scenario``:
    candidates × scenarios mean τ. ``recommended``, ``front``: see :func:`decide`. ``swaps``: for
    each other candidate, the system pairs ``(x, y, decided)`` it orders differently from the
    recommended one, ``decided`` when both find the pair significantly different (corrected p <
    alpha); ``geometric_swaps``: the same between the recommended candidate's arithmetic and
    geometric means (no test there, so never ``decided``). ``by_cutoff``: ``{cut-off: candidate}``,
    the recommendation among one cut-off's candidates alone (:func:`decide` on them): what to report
    when the cut-off is fixed. ``left_out``: ``{candidate: why}``, metrics not assessed (infAP when it
    is AP, :func:`infap_is_ap`).
    ``notes``: caveats (few systems, floors).
    """

    table: pd.DataFrame
    robustness_by_scenario: pd.DataFrame
    recommended: str | None
    front: list
    swaps: dict
    geometric_swaps: list
    n_systems: int
    settings: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    by_cutoff: dict = field(default_factory=dict)
    left_out: dict = field(default_factory=dict)

    def to_markdown(self) -> str:
        """The answer as Markdown: the recommendation, why, what else is on the front, whether the
        choice changes the ranking of the systems, the geometric mean, and the caveats."""
        t = self.table
        lines = []
        if self.recommended is None:
            return "No candidate could be assessed (nothing computed)."
        r = t.loc[self.recommended]
        others = [f for f in self.front if f != self.recommended]
        lines.append(f"**Report {self.recommended}.** Among the {len(t)} metric and cut-off candidates it is "
                     f"{'the only one' if not others else 'one of ' + str(len(self.front))} that no other candidate "
                     f"beats on discriminative power or robustness without losing on the other (beyond "
                     f"{self.settings.get('z', NOISE_SE):g} standard errors), and the best trade-off of those: DP {r.dp:.4g} ± {r.dp_se:.2g} "
                     f"(rank {int(t.dp.rank(method='min').loc[self.recommended])} of {len(t)}), mean robustness τ "
                     f"{r.robustness:.3f} ± {r.robustness_se:.2g} "
                     f"(rank {int(t.robustness.rank(method='min', ascending=False).loc[self.recommended])} of {len(t)}).")
        lines.append("")
        if others:
            lines.append(f"* Also undominated (equally defensible on these numbers): {', '.join(others)}.")
        lines.extend(self._cutoff_lines())
        n_pairs = self.n_systems * (self.n_systems - 1) // 2
        sig = r.significant
        lines.append(f"* Under {self.recommended}, {int(round(sig * n_pairs))} of {n_pairs} system pairs differ "
                     f"significantly ({_CORRECTION_NAMES.get(self.settings.get('correction'), 'no')} correction, alpha "
                     f"{self.settings.get('alpha', 0.05):g}).")
        differ = {k: v for k, v in self.swaps.items() if v}
        if not differ:
            lines.append(f"* Every other candidate orders the {self.n_systems} systems as {self.recommended} does: "
                         "the choice of metric does not change the ranking.")
        else:
            worst = sorted(differ.items(), key=lambda kv: (-sum(d for *_, d in kv[1]), -len(kv[1])))[:5]
            decided = sum(any(d for *_, d in v) for v in differ.values())
            lines.append(f"* {len(t) - 1 - len(differ)} of {len(t) - 1} other candidates order the systems as "
                         f"{self.recommended} does; {len(differ)} do not, e.g. "
                         + "; ".join(f"{k} swaps {', '.join(f'{a} / {b}' + (' (significant under both)' if d else '') for a, b, d in v[:3])}"
                                     for k, v in worst)
                         + (f". {decided} of them reverse a pair that both find significantly different: where "
                            "conclusions hinge on those pairs, report the metric that disagrees too." if decided else
                            ". None reverses a pair that both find significantly different: the swapped systems are "
                            "indistinguishable under at least one of the two metrics."))
        if self.geometric_swaps:
            lines.append(f"* The geometric mean (Valcarce et al. 2020 §7) reorders {len(self.geometric_swaps)} pair(s) under "
                         f"{self.recommended}: " + ", ".join(f"{a} / {b}" for a, b, _ in self.geometric_swaps[:5])
                         + " — a system that fails some users badly moves down; consider reporting it too.")
        else:
            lines.append(f"* The geometric mean (Valcarce et al. 2020 §7) gives the same order of systems under {self.recommended}.")
        for note in self.notes:
            lines.append(f"* *Caveat:* {note}")
        for why in dict.fromkeys(self.left_out.values()):
            lines.append(f"* {why}")
        return "\n".join(lines)

    def _cutoff_lines(self) -> list[str]:
        """How the answer depends on the cut-off: the recommendation among each cut-off's candidates."""
        if len(self.by_cutoff) < 2:
            return []
        cut = self.table.loc[self.recommended, "cutoff"]
        per = ", ".join(f"{best} at {c}" for c, best in self.by_cutoff.items() if best)
        metrics = {str(best).partition("@")[0] for best in self.by_cutoff.values() if best}
        cutoffs = ", ".join(str(c) for c in self.by_cutoff)
        same = (f"{metrics.pop()} is the best trade-off at every cut-off" if len(metrics) == 1 else
                "the best metric changes with the cut-off")
        return [f"* The answer depends on the cut-off: the candidates are every metric at {cutoffs}, and "
                f"{self.recommended} is the best trade-off of them all (cut-off {cut}). With the cut-off fixed, the "
                f"best trade-off among that cut-off's candidates is {per}: {same}. A book with other cut-offs "
                "(`-p cutoffs=[...]`) can recommend another metric."]


def _significant_pairs(res, correction: str | None, alpha: float) -> set[frozenset] | None:
    """The system pairs of a :class:`DiscriminativePower` result whose corrected p is below ``alpha``
    (None when its p-values do not name the pairs)."""
    from .significance import correct

    pv = res.pvalues
    if not {"a", "b", "p"} <= set(pv.columns):
        return None
    p_adj = correct(np.asarray(pv["p"], dtype=np.float64), correction)
    return {frozenset((str(x), str(y))) for x, y, q in zip(pv["a"], pv["b"], p_adj) if q < alpha}


def _pairs_swapped(a: pd.Series, b: pd.Series, sig_a: set | None = None,
                   sig_b: set | None = None) -> list[tuple[str, str, bool]]:
    """System pairs whose means ``a`` order one way and ``b`` the other (an exact tie or a
    floating-point difference orders nothing): ``(x, y, decided)``, ``decided`` when the pair
    differs significantly under both (``sig_a``, ``sig_b``: the significant pairs of each) — a swap
    that changes a reported conclusion, not just the order of two indistinguishable systems."""
    out = []
    names = list(a.index)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            da, db = order(a[x], a[y]), order(b[x], b[y])
            if da * db < 0:
                pair = frozenset((str(x), str(y)))
                decided = sig_a is not None and sig_b is not None and pair in sig_a and pair in sig_b
                out.append((str(x), str(y), decided))
    return out


def advise(study, *, metrics: Sequence[str] | None = None, cutoffs: Sequence[int] | None = None,
           n_permutations: int = 100_000, n_samples: int = 50,
           sizes: Sequence[float] | Mapping[str, Sequence[float]] | None = None,
           scenarios: Sequence[str] | None = None, seed: int = 0, pool: str = "concat", alpha: float = 0.05,
           correction: str | None = "holm", n_jobs: int = 1, progress: bool = False,
           dp: Mapping[str, Any] | None = None, robustness=None, z: float = NOISE_SE) -> Advice:
    """Which metric and cut-off to report for the systems of ``study``, from DP, robustness and agreement.

    Parameters
    ----------
    study : a :class:`~recmetrics.study.Study` (e.g. ``Study.from_runs(runs, qrels)`` for runs of
        any tool). Robustness masks its judgments, so plain score tables are not enough.
    metrics, cutoffs : the candidates (default: every metric at every cut-off of the study).
    n_permutations, seed, pool, alpha, correction : discriminative power
        (:func:`~recmetrics.meta.discriminative.discriminative_power`, one sign matrix for every
        candidate; ``pool`` as :meth:`Study.scores`) and the share of pairs significant after
        ``correction`` (:func:`~recmetrics.meta.significance.correct`).
    n_samples, sizes, scenarios, n_jobs, progress : robustness
        (:func:`~recmetrics.meta.robustness.robustness_study`; default its paper sizes and the five
        scenarios).
    dp, robustness : results already computed with the same settings (``{candidate:
        DiscriminativePower}``, a ``Robustness`` of the arithmetic mean), to avoid computing them
        twice.

    Rankings of systems (robustness, agreement) use the arithmetic mean over units, the usual
    report; ``tau_geometric`` compares it with the geometric mean.
    z : noise band in standard errors (default :data:`~recmetrics.meta.findings.NOISE_SE`).

    Returns an :class:`Advice`; the rules are in the module docstring.
    """
    from ..study import require_study
    from . import robustness as rob
    from .agreement import agreement_matrix, kendall_tau
    from .discriminative import discriminative_power

    study = require_study(study, "advise")
    metrics = list(study.metrics) if metrics is None else ([metrics] if isinstance(metrics, str) else list(metrics))
    left_out = {}
    if "AP" in metrics and "infAP" in metrics and infap_is_ap(study):
        metrics = [m for m in metrics if m != "infAP"]
        left_out["infAP"] = INFAP_IS_AP
    cutoffs = list(study.cutoffs) if cutoffs is None else ([cutoffs] if np.ndim(cutoffs) == 0 else list(cutoffs))
    names, parts = [], {}
    for m in metrics:
        for c in cutoffs:
            mi, ci = study.locate(m, c)                             # validates the metric and cut-off
            name = f"{study.metrics[mi]}@{study.cutoffs[ci]}"
            names.append(name)
            parts[name] = (study.metrics[mi], study.cutoffs[ci])
    if dp is None:
        dp = discriminative_power({n: study.scores(*parts[n], pool) for n in names},
                                  n_permutations=n_permutations, seed=seed, alpha=alpha)
    missing = [n for n in names if n not in dp]
    if missing:
        raise InputError(f"dp has no result for candidate {missing[0]!r}")
    if robustness is None:
        kw = {} if sizes is None else {"sizes": sizes}
        robustness = rob.robustness_study(study, list(scenarios or rob.SCENARIOS), n_samples=n_samples, seed=seed,
                                          metrics=metrics, cutoffs=cutoffs, aggregate="arithmetic", n_jobs=n_jobs,
                                          progress=progress, **kw)
    area, area_se = robustness.area(), robustness.area_se()
    by_scenario = area.unstack("scenario").reindex(names)
    se_by_scenario = area_se.unstack("scenario").reindex(index=names, columns=by_scenario.columns)
    n_sc = by_scenario.notna().sum(axis=1).replace(0, np.nan)
    rob_mean = by_scenario.mean(axis=1)
    rob_se = np.sqrt((se_by_scenario.fillna(0.0) ** 2).where(by_scenario.notna()).sum(axis=1)) / n_sc

    arith = pd.DataFrame({n: study.system_scores(*parts[n], pool, "arithmetic") for n in names})
    geo = pd.DataFrame({n: study.system_scores(*parts[n], pool, "geometric") for n in names})
    tau = agreement_matrix(arith, "tau")
    off = tau.where(~np.eye(len(names), dtype=bool))
    dps = dp_table({n: dp[n] for n in names}, correction, alpha)
    table = pd.DataFrame({"metric": [parts[n][0] for n in names], "cutoff": [parts[n][1] for n in names],
                          "dp": dps["dp"], "dp_se": dps["dp_se"], "significant": dps["significant"],
                          "robustness": rob_mean, "robustness_se": rob_se,
                          "agreement": [float(off[n].mean()) if len(names) > 1 else np.nan for n in names],
                          "tau_geometric": [kendall_tau(arith[n], geo[n]) for n in names]},
                         index=pd.Index(names, name="candidate"))
    front, best, dominated_by = decide(table, z=z)
    table["dominated_by"] = [", ".join(dominated_by[n]) for n in table.index]
    table["on_front"] = [not dominated_by[n] for n in table.index]
    sig = {n: _significant_pairs(dp[n], correction, alpha) for n in names}
    swaps = {n: _pairs_swapped(arith[best], arith[n], sig[best], sig[n]) for n in names if n != best} if best else {}
    geo_swaps = _pairs_swapped(arith[best], geo[best]) if best else []

    n_sys = len(study.systems)
    notes = []
    if n_sys < 5:
        notes.append(f"only {n_sys} systems: Kendall's τ moves in steps of {2 / (n_sys * (n_sys - 1) / 2):.2f}, so "
                     "robustness separates few candidates; more systems give a sharper answer.")
    floors = [n for n in names if hasattr(dp[n], "at_floor") and dp[n].at_floor]
    if not floors:
        floors = [n for n in names if not dp[n].exact
                  and np.all(np.asarray(dp[n].pvalues["p"]) <= 1.0 / (dp[n].n_permutations + 1) * (1 + 1e-9))]
    if floors:
        notes.append(f"{len(floors)} candidate(s) separate every pair at the smallest p the {dp[names[0]].n_permutations:,} "
                     f"permutations can give ({', '.join(floors[:6])}{', …' if len(floors) > 6 else ''}): their DP is "
                     "a bound, and more permutations would order them.")
    settings = {"n_permutations": int(dp[names[0]].n_permutations), "seed": int(seed), "pool": pool,
                "alpha": float(alpha), "correction": correction, "z": float(z),
                "scenarios": sorted(set(area.index.get_level_values("scenario"))),
                "n_samples": int(robustness.summary()["samples"].max())}
    by_cutoff = {}
    for c in dict.fromkeys(table["cutoff"]):
        at = table[table["cutoff"] == c]
        by_cutoff[int(c)] = decide(at[["dp", "dp_se", "robustness", "robustness_se", "cutoff"]], z=z)[1]
    return Advice(table, by_scenario, best, front, swaps, geo_swaps, n_sys, settings, notes, by_cutoff, left_out)
