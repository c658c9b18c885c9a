"""Check builders for claims that compare metrics or cut-offs (papers 003 and 000, and any like them).

Each builder returns a ``check(results) -> Evidence`` for a :class:`~recmetrics.meta.findings.Claim`.
Every comparison goes through the one verdict rule of :mod:`recmetrics.meta.findings` —
:func:`~recmetrics.meta.findings.order`, :func:`~recmetrics.meta.findings.holds`,
:func:`~recmetrics.meta.findings.best_of` — with the uncertainty the result has:

* robustness (mean τ over a scenario's reduced sizes): the Monte Carlo standard error
  :meth:`Robustness.area_se <recmetrics.meta.robustness.Robustness.area_se>`, an estimate from the
  samples per size (an :class:`~recmetrics.meta.findings.SE` carrying their count: Student's t);
* discriminative power: the Monte Carlo standard error of DP, ``sqrt(Σ p(1−p)/B)``
  (:attr:`DiscriminativePower.dp_se <recmetrics.meta.discriminative.DiscriminativePower.dp_se>`),
  and the Monte Carlo floor: metrics (or cut-offs) whose every p-value is ``1/(B+1)`` cannot be
  ordered among themselves, so a claim that needs to order them is ``inconclusive``;
* Kendall's τ among rankings of the full test sets: an estimate too (the users are a sample);
* for all three, the data split's variability: the statistic on each replicate of the split
  (``results[key + "_replicates"]``, :meth:`Robustness.area_replicates
  <recmetrics.meta.robustness.Robustness.area_replicates>`; :mod:`recmetrics.meta.replicates`),
  whose paired spread enters every comparison; without replicates a check decides against the
  Monte Carlo noise alone, as before.

A claim that makes several comparisons decides them as one family
(:func:`~recmetrics.meta.findings.family`: ``agrees`` when every comparison holds, ``disagrees``
when Holm's step-down finds one reversed), so its error rate does not grow with the number of pairs.

A claim worded about a group ("Precision, F1 and NDCG show the best robustness") is tested as
worded: every member against every non-member (:func:`best_of`). Results are read by key from the
mapping a chapter passes to :func:`~recmetrics.meta.findings.assess`; metric names are reduced to
their base (``"infAP(unjudged=pooled)@100"`` → ``"infAP"``), so a chapter passes one reading of
each metric.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..meta.comparisons import undetermined
from ..meta.findings import NOISE_SE, SE, Evidence, best_of, compare, family, group_comparisons, weakest
from ..meta.firmness import replay_cached
from ..meta.replicates import spread

__all__ = ["MIN_SYSTEMS", "base_name", "by_base", "few_systems", "robustness_area", "robustness_best",
           "robustness_worst_everywhere", "robustness_among_least", "dp_best", "deeper_better",
           "replicates_of"]

#: below this many systems a ranking τ moves in steps too coarse to support a verdict
MIN_SYSTEMS = 5


def base_name(name: Any) -> str:
    """``"infAP(unjudged=pooled)@100"`` → ``"infAP"``; ``"nDCG@10"`` → ``"nDCG"``."""
    return re.split(r"[@(]", str(name), maxsplit=1)[0].strip()


def by_base(values) -> pd.Series:
    """A Series indexed by metric base names (two readings of one metric would collide: an error)."""
    s = pd.Series(values, dtype=np.float64) if not isinstance(values, pd.Series) else values.astype(np.float64)
    names = [base_name(m) for m in s.index]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"results name metric(s) {dup} twice (two readings?); pass one reading of each metric")
    return pd.Series(s.to_numpy(), index=names, name=s.name)


def few_systems(results: Mapping[str, Any]) -> Evidence | None:
    """``inconclusive`` when ``results["n_systems"]`` is below :data:`MIN_SYSTEMS`, else None."""
    n = results.get("n_systems")
    if n is not None and n < MIN_SYSTEMS:
        return Evidence("inconclusive", None, f"only {n} systems ranked (need {MIN_SYSTEMS}+ for a τ verdict)")
    return None


@replay_cached
def robustness_area(rob, scenario: str, among: Sequence[str] | None = None) -> tuple[pd.Series, pd.Series]:
    """Mean τ over the reduced sizes of ``scenario`` per metric and its Monte Carlo standard error
    (only the metrics ``among``, when given: a paper's own metrics). The se is an estimate from the
    scenario's samples per size: an :class:`~recmetrics.meta.findings.SE` carrying that count."""
    values = by_base(rob.area(scenario))
    if among is not None:
        values = values[[m for m in values.index if m in set(among)]]
    if values.empty:
        raise KeyError(f"robustness under {scenario}")
    se = by_base(rob.area_se(scenario)).reindex(values.index)
    n = rob.area_n(scenario) if hasattr(rob, "area_n") else None
    if n is not None:
        se = pd.Series([SE(float(v), n=n) if np.isfinite(v) else v for v in se], index=se.index, dtype=object)
    return values, se


def robustness_replicates(rob, scenario: str, index, sizes: Sequence[float] | None = None) -> dict | None:
    """``{metric base name: mean τ on each data-split replicate}`` of ``scenario`` (None without
    replicates): over the scenario's reduced sizes, or over ``sizes`` only (one size: the curve at it).
    While a check is replayed, the same names and sizes give the first result (whatever object holds them)."""
    return _robustness_replicates(rob, scenario, tuple(index), None if sizes is None else tuple(sizes))


@replay_cached
def _robustness_replicates(rob, scenario: str, index: tuple, sizes: tuple | None) -> dict | None:
    reps = rob.area_replicates(scenario, sizes) if hasattr(rob, "area_replicates") else None
    if reps is None:
        return None
    reps = reps.rename(columns=base_name)
    return {m: reps[m].to_numpy(dtype=np.float64) for m in index if m in reps.columns}


@replay_cached
def robustness_pair_se(rob, scenario: str) -> Callable | None:
    """``(a, b) -> se`` of the difference of two metrics' mean τ under ``scenario``, paired over the
    shared samples (:meth:`Robustness.area_diff_se <recmetrics.meta.robustness.Robustness.area_diff_se>`),
    an :class:`~recmetrics.meta.findings.SE` on the samples per size (None for a plain object)."""
    if not hasattr(rob, "area_diff_se"):
        return None
    table = rob.area_diff_se(scenario)
    names = [base_name(m) for m in table.columns]
    cells = {a: dict(zip(names, row)) for a, row in zip(names, table.to_numpy(dtype=np.float64).tolist())}
    n = rob.area_n(scenario)

    def pair(a, b):
        v = cells[a].get(b, math.nan) if a in cells else math.nan
        return SE(v, n=n) if math.isfinite(v) else v
    return pair


@replay_cached
def replicates_of(results: Mapping[str, Any], key: str, index=None) -> dict | None:
    """``results[key + "_replicates"]`` (replicates x entries) as ``{entry: per-replicate values}``."""
    reps = results.get(key + "_replicates")
    if reps is None:
        return None
    reps = pd.DataFrame(reps)
    return {c: reps[c].to_numpy(dtype=np.float64) for c in reps.columns if index is None or c in index}


def _spread_text(reps: dict | None, names: Iterable) -> str:
    if not reps:
        return ""
    parts = [f"{n} {spread(reps[n])}" for n in names if n in reps]
    return ("; per replicate: " + ", ".join(parts)) if parts else ""


def _lowest(values: Mapping, group: Sequence, se: Mapping | None, replicates: Mapping | None = None) -> tuple[str, str]:
    """:func:`best_of` for a claim that ``group`` has the *lowest* values (least robust, lowest τ):
    in its detail "X beats Y" then means X is lower than Y, so it is said that way."""
    verdict, detail = best_of(values, group, se, higher=False, replicates=replicates)
    return verdict, detail.replace(" beats ", " is lower than ").replace(" beat(s) every other entry",
                                                                         " lie(s) below every other entry")


def _se_text(se: pd.Series, names: Iterable[str]) -> str:
    se = se.to_dict()
    finite = [float(se[n]) for n in names if n in se and math.isfinite(float(se[n]))]
    return f"Monte Carlo se up to {max(finite):.3g}" if finite else "one sample per size: no Monte Carlo se"


def _family_detail(verdict: str, held: list, rev: list, und: list, lower: bool = False) -> str:
    """One line for a family of comparisons (Holm over all of them decides a reversal)."""
    def beats(c):   # a member-vs-other comparison against the claim: the other entry is ahead
        if c.pair is None:
            return c.text()
        (m, o), (vm, vo) = c.pair, c.values
        prefix = c.label.split(": ")[0] + ": " if ": " in c.label else ""
        return f"{prefix}{o} {'is lower than' if lower else 'beats'} {m} ({vo:.4g} vs {vm:.4g}; {c.margin()})"
    if rev:
        return (f"against the claim beyond the noise (Holm over the {len(held) + len(rev) + len(und)} comparisons): "
                + "; ".join(beats(c) for c in rev))
    if und:
        return "within the noise: " + "; ".join(c.text() for c in und)
    return f"all {len(held)} comparisons hold beyond {NOISE_SE:g} standard errors{weakest(held)}"


def _scenario_family(results, key, scenarios, group, among, higher: bool):
    """The member-vs-other comparisons of every scenario as one family, and a description per scenario."""
    comps, heads = [], []
    for sc in scenarios:
        values, se = robustness_area(results[key], sc, among)
        reps = robustness_replicates(results[key], sc, values.index)
        comps += group_comparisons(values.to_dict(), group, dict(zip(se.index, se.tolist())), higher=higher,
                                   replicates=reps, label=f"{sc}: " if len(scenarios) > 1 else "",
                                   pair_se=robustness_pair_se(results[key], sc))
        top = values.sort_values(ascending=not higher)
        heads.append((sc, values, f"mean τ under {sc} ({'best' if higher else 'lowest'}: "
                      f"{', '.join(f'{m} {v:.3f}' for m, v in top.iloc[:3].items())}; {_se_text(se, values.index)}"
                      f"{_spread_text(reps, group)})"))
    return comps, heads


def robustness_best(group: Sequence[str], scenario: str | Sequence[str], key: str = "robustness", *,
                    among: Sequence[str] | None = None) -> Callable:
    """``group`` is more robust than every other metric (of ``among``, default all) under
    ``scenario`` — or under each of several scenarios — each pair beyond the noise (Monte Carlo and,
    when the robustness study ran with replicates, the data split's: :mod:`recmetrics.meta.replicates`).
    All member-vs-other comparisons of all scenarios are one family (:func:`~recmetrics.meta.findings.family`):
    ``agrees`` when every one holds, ``disagrees`` when Holm finds one reversed, else ``inconclusive``."""
    group = list(group)
    scenarios = [scenario] if isinstance(scenario, str) else list(scenario)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        comps, heads = _scenario_family(results, key, scenarios, group, among, higher=True)
        verdict, held, rev, und = family(comps)
        detail = "; ".join(h for _, _, h in heads) + ": " + _family_detail(verdict, held, rev, und)
        return Evidence(verdict, min(float(v[group].min()) for _, v, _ in heads), detail)
    return check


def robustness_worst_everywhere(group: Sequence[str], scenarios: Sequence[str], key: str = "robustness", *,
                                among: Sequence[str] | None = None) -> Callable:
    """``group`` is the least robust (of ``among``, default all metrics) under every one of
    ``scenarios`` (each pair beyond the noise, all scenarios' comparisons one family).

    ``agrees`` when it is in every scenario, ``disagrees`` when Holm finds some other metric clearly
    below a member in some scenario, ``inconclusive`` otherwise."""
    group = list(group)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        comps, heads = _scenario_family(results, key, list(scenarios), group, among, higher=False)
        verdict, held, rev, und = family(comps)
        per_sc = {sc: all(c in held for c in comps if c.label.startswith(f"{sc}: ") or len(scenarios) == 1)
                  for sc, _, _ in heads}
        n_ok = sum(per_sc.values())
        return Evidence(verdict, float(n_ok),
                        f"{', '.join(group)} below every other metric beyond the noise in {n_ok} of {len(scenarios)} "
                        f"scenarios — " + "; ".join(h for _, _, h in heads) + ": "
                        + _family_detail(verdict, held, rev, und, lower=True))
    return check


def robustness_among_least(group: Sequence[str], scenario: str, key: str = "robustness", slack: int = 1) -> Callable:
    """"``group`` ranks among the least robust": each member is below all but at most ``slack`` of the
    other metrics beyond the noise (``agrees``); Holm over all the member-vs-other comparisons finds
    some member above more than ``slack`` of them (``disagrees``); otherwise ``inconclusive``.
    ``slack`` is the project's reading of "among the least"; the verdict is also computed at
    ``slack ± 1`` and a verdict that flips there is ``inconclusive`` (the detail says so)."""
    group = list(group)

    def at(comps, s, decided):
        verdict, held, rev, und = decided
        n_others = len(comps) // len(group)
        vs = []
        for m in group:
            mine = [c for c in comps if c.pair[0] == m]
            above = sum(c in rev for c in mine)
            below = sum(c in held for c in mine)
            vs.append("disagrees" if above > s else "agrees" if below >= n_others - s else "inconclusive")
        return ("disagrees" if "disagrees" in vs else "agrees" if all(v == "agrees" for v in vs) else "inconclusive",
                held, rev)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        values, se = robustness_area(results[key], scenario)
        reps = robustness_replicates(results[key], scenario, values.index)
        comps = group_comparisons(values.to_dict(), group, dict(zip(se.index, se.tolist())), higher=False,
                                  replicates=reps, pair_se=robustness_pair_se(results[key], scenario))
        decided = family(comps)            # the same family read at slack and one step either side
        verdict, held, rev = at(comps, slack, decided)
        steps = {s: at(comps, s, decided)[0] for s in (slack - 1, slack + 1) if s >= 0}
        opposite = {"agrees": "disagrees", "disagrees": "agrees"}.get(verdict)
        n_others = len(values) - len(group)
        parts = [f"{m} {values[m]:.3f}: clearly below {sum(c in held for c in comps if c.pair[0] == m)}, clearly above "
                 f"{sum(c in rev for c in comps if c.pair[0] == m)} of {n_others} others" for m in group]
        reading = (f"'among the least' = below all but at most {slack} other metric(s) beyond the noise, the project's "
                   f"reading: {verdict}; at " + " / ".join(f"{s}: {v}" for s, v in steps.items()))
        if opposite in steps.values():
            verdict = "inconclusive"
            reading += " — flips within one step of the project's reading"
        return Evidence(verdict, float(values[group].max()),
                        f"mean τ under {scenario} ({_se_text(se, values.index)}{_spread_text(reps, group)}; {reading}; "
                        f"Holm over the {len(comps)} comparisons for 'clearly above'): " + "; ".join(parts))
    return check


def _floor_members(values: pd.Series, floor: float | None) -> list:
    if floor is None or not np.isfinite(floor):
        return []
    return [k for k, v in values.items() if v <= floor * (1 + 1e-9)]


def dp_best(group: Sequence[Any] | Callable[[pd.Index], Sequence[Any]], key: str = "dp", *,
            metrics: bool = True, what: str = "DP", among: Sequence[str] | None = None,
            in_order: bool = False) -> Callable:
    """``group`` has a lower DP (more discriminative) than every other entry, beyond the Monte
    Carlo noise (``results[key + "_se"]``, optional) and the data split's (``results[key +
    "_replicates"]``, optional: replicates x entries, :func:`recmetrics.meta.replicates.dp_by_replicate`).
    ``results[key + "_floor"]`` (optional) is the
    DP of a metric whose every pair is at the Monte Carlo floor ``1/(B+1)``: a member and a
    non-member both there cannot be ordered (``inconclusive``). ``group`` may be a function of the
    entries (e.g. the cut-offs above 50). ``metrics=False`` keeps the index as it is (cut-offs).
    ``among``: compare only these metrics (a paper's own). ``in_order``: the group's members are
    also claimed in that order ("nDCG and precision (in this order)"): each must beat the next
    beyond the noise for ``agrees``; a reversal beyond it ``disagrees``. All comparisons of a claim
    are one family (Holm decides a reversal)."""
    def check(results):
        few = few_systems(results)
        if few:
            return few
        raw = pd.Series(results[key], dtype=np.float64)
        se_raw = results.get(key + "_se")
        se = pd.Series(se_raw, dtype=np.float64) if se_raw is not None else pd.Series(0.0, index=raw.index)
        reps = replicates_of(results, key)
        members = list(group(raw.index) if callable(group) else group)
        if metrics:
            values, se = by_base(raw), by_base(se)
            reps = {base_name(k): v for k, v in reps.items()} if reps else None
            if among is not None:
                values = values[[m for m in values.index if m in set(among)]]
        else:  # cut-offs: named "@5", "@10", ...
            values = pd.Series(raw.to_numpy(), index=[f"@{c}" for c in raw.index])
            se.index = [f"@{c}" for c in se.index]
            reps = {f"@{k}": v for k, v in reps.items()} if reps else None
            members = [f"@{c}" for c in members]
        se = se.reindex(values.index)
        if not members:
            return Evidence("inconclusive", None, f"no entry of {list(values.index)} is in the claimed group")
        floor = results.get(key + "_floor")
        at_floor = _floor_members(values, floor)
        stuck = [m for m in members if m in at_floor]
        rivals = [o for o in at_floor if o not in members]
        top = values.sort_values()
        head = f"{what} (lower is better; best: {', '.join(f'{m} {v:.4g}' for m, v in top.iloc[:3].items())})"
        if stuck and rivals:
            undetermined("entries tied at the Monte Carlo floor")
            return Evidence("inconclusive", float(values[members].max()),
                            f"{head}: {', '.join(map(str, stuck))} and {', '.join(map(str, rivals))} are all at the "
                            f"Monte Carlo floor (every pair p = 1/(B+1), DP {floor:.4g}): the test cannot order them")
        comps = group_comparisons(values.to_dict(), members, se.to_dict(), higher=False, replicates=reps)
        steps = []
        if in_order:
            for a, b in zip(members, members[1:]):
                if a in at_floor and b in at_floor:
                    undetermined("entries tied at the Monte Carlo floor")
                    steps.append(None)
                    continue
                c = compare(values[b], values[a], se.get(b), se.get(a), reps_a=(reps or {}).get(b),
                            reps_b=(reps or {}).get(a), label=f"{a} {values[a]:.4g} before {b} {values[b]:.4g}")
                steps.append(c)
        family_comps = comps + [c for c in steps if c is not None]
        verdict, held, rev, und = family(family_comps)
        if in_order and None in steps and verdict == "agrees":
            verdict = "inconclusive"
        detail = _family_detail(verdict, held, rev, und, lower=True)
        if in_order:
            detail += "; order " + ", ".join(
                "both at the floor" if c is None else f"{c.label}: " + ("beyond the noise" if c in held else
                                                                        "reversed beyond the noise" if c in rev
                                                                        else "within the noise") for c in steps)
        finite = se[np.isfinite(se)]
        se_note = f"Monte Carlo se up to {finite.max():.3g}" if len(finite) and finite.max() > 0 else "exact"
        return Evidence(verdict, float(values[members].max()),
                        f"{head}, {se_note}{_spread_text(reps, members)}: {detail}")
    return check


def deeper_better(key: str, what: str, *, larger_better: bool, metric: str = "") -> Callable:
    """"Deeper cut-offs are better" on ``results[key]`` (Series cut-off → value) with its standard
    errors ``results[key + "_se"]`` (optional; ``results[key + "_pair_se"]``, cut-off x cut-off,
    the se of each difference when the cut-offs share their samples), its values per data-split
    replicate ``results[key + "_replicates"]`` (optional, replicates x cut-offs) and floor
    ``results[key + "_floor"]`` (optional, DP).

    Every pair of cut-offs is one comparison of a family (Holm decides a reversal): ``agrees`` when
    the deepest cut-off beats the shallowest beyond the noise and no shallower cut-off beats a deeper
    one; ``disagrees`` when the shallowest beats the deepest; otherwise ``inconclusive`` (the detail
    names the reversals). The value is Spearman's ρ between cut-off and quality (+1: quality rises
    with every step)."""
    def check(results):
        few = few_systems(results)
        if few:
            return few
        s = pd.Series(results[key], dtype=np.float64).sort_index()
        if len(s) < 2:
            return Evidence("inconclusive", None, f"only {len(s)} cut-off(s)")
        se_raw = results.get(key + "_se")
        se = pd.Series(se_raw, dtype=object).reindex(s.index) if se_raw is not None else pd.Series(0.0, s.index)
        reps = replicates_of(results, key) or {}
        pair = results.get(key + "_pair_se")   # cut-off x cut-off se of differences over shared samples
        at_floor = set(_floor_members(s, results.get(key + "_floor")))
        sign = 1 if larger_better else -1
        cuts = list(s.index)
        comps = {}
        for i, a in enumerate(cuts):          # a shallower than b; gap > 0: the deeper one is better
            for b in cuts[i + 1:]:
                if a in at_floor and b in at_floor:
                    undetermined("cut-offs tied at the Monte Carlo floor")
                    continue
                x, y, sx, sy, rx, ry = s[b], s[a], se[b], se[a], reps.get(b), reps.get(a)
                if pair is not None:
                    sx, sy = pair.loc[b, a], None
                if sign < 0:
                    x, y, sx, sy, rx, ry = y, x, sy, sx, ry, rx
                comps[(a, b)] = compare(x, y, sx, sy, reps_a=rx, reps_b=ry, label=f"@{a} vs @{b}")
        verdict_all, held, rev, und = family(comps.values()) if comps else ("inconclusive", [], [], [])
        ends_c = comps.get((cuts[0], cuts[-1]))
        ends = 0 if ends_c is None else (1 if ends_c in held else -1 if ends_c in rev else 0)
        reversals = [k for k, c in comps.items() if c in rev]
        from scipy.stats import spearmanr

        quality = s.to_numpy() * sign
        rho = float(spearmanr(cuts, quality).statistic) if len(s) > 2 and np.ptp(quality) > 0 else float("nan")
        finite = [float(v) for v in se if np.isfinite(float(v))]
        detail = (f"{what}{' of ' + metric if metric else ''} @{cuts[0]} {s.iloc[0]:.4g}, @{cuts[-1]} {s.iloc[-1]:.4g}"
                  f" ({'Monte Carlo se up to %.3g' % max(finite) if finite and max(finite) > 0 else 'no se'}"
                  f"{_spread_text(reps, [cuts[0], cuts[-1]])}"
                  f"{'; at the Monte Carlo floor: ' + ', '.join(f'@{c}' for c in sorted(at_floor)) if at_floor else ''});"
                  f" Spearman ρ(cut-off, quality) {rho:.2f}")
        if ends < 0:
            return Evidence("disagrees", rho, f"{detail}; @{cuts[0]} beats @{cuts[-1]} beyond the noise (Holm over "
                                              f"{len(comps)} pairs; {ends_c.margin()})")
        if ends > 0 and not reversals:
            return Evidence("agrees", rho, f"{detail}; no shallower cut-off beats a deeper one beyond the noise "
                                           f"(the ends: {ends_c.margin()}{weakest(held)})")
        why = ("the ends differ within the noise" + (f" ({ends_c.margin()})" if ends_c is not None else "")
               if ends == 0 else "") + \
              (("; " if ends == 0 else "") + "shallower beats deeper beyond the noise at "
               + ", ".join(f"@{a} > @{b} ({comps[(a, b)].margin()})" for a, b in reversals[:5]) if reversals else "")
        return Evidence("inconclusive", rho, f"{detail}; {why}")
    return check
