"""Check builders for claims about agreement between rankings (papers 000 and 003): Kendall's τ
among the metrics' system rankings, between a metric's arithmetic and geometric rankings, and the
geometric mean's readings (trec_eval's floor, rec_eval's hit-only zeros; per-user or aggregate F1).

Each builder returns a ``check(results) -> Evidence``, deciding through the one rule of
:mod:`recmetrics.meta.findings` with the uncertainty each result has, as the builders of
:mod:`recmetrics.papers.checks` (whose helpers these use).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..meta.comparisons import replaying
from ..meta.firmness import replay_cached
from ..meta.findings import Evidence, compare, family, not_testable
from .checks import base_name, by_base, few_systems, robustness_area, robustness_replicates, replicates_of, _spread_text, _lowest, _se_text

__all__ = ["geometric_beats_arithmetic", "lowest_mean_correlation", "lowest_values", "per_user_f1_reading", "F1_PER_USER_REASON", "under_geometric_reading", "REC_EVAL_READING_TEXT"]


def _tau_note(results) -> str:
    """A τ verdict over few systems says how coarse τ is there."""
    n = results.get("n_systems")
    if n is None or n > 10:
        return ""
    return f"; τ over {n} systems moves in steps of {2 / (n * (n - 1) / 2):.3g} (one swapped pair: {4 / (n * (n - 1)):.3g})"


def geometric_beats_arithmetic(metrics: Sequence[str], scenario: str) -> Callable:
    """Each of ``metrics`` is more robust under ``scenario`` with the geometric mean than with the
    arithmetic one (``results["robustness_geo"]`` vs ``results["robustness"]``), beyond the noise
    (the metrics' comparisons one family; replicates paired when both studies ran with the same ones)."""
    metrics = list(metrics)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        g, gse = robustness_area(results["robustness_geo"], scenario)
        a, ase = robustness_area(results["robustness"], scenario)
        greps = robustness_replicates(results["robustness_geo"], scenario, metrics) or {}
        areps = robustness_replicates(results["robustness"], scenario, metrics) or {}
        comps = [compare(g[m], a[m], gse.get(m), ase.get(m), reps_a=greps.get(m), reps_b=areps.get(m),
                         label=f"G{m} {g[m]:.3f} vs {m} {a[m]:.3f}") for m in metrics]
        verdict, held, rev, und = family(comps)
        return Evidence(verdict, float(min(g[m] - a[m] for m in metrics)),
                        f"mean τ under {scenario}, geometric vs arithmetic ({_se_text(gse, metrics)}"
                        f"{_spread_text(greps, metrics)}): "
                        + "; ".join(f"{c.text()} → {'higher' if c in held else 'lower' if c in rev else 'within the noise'}"
                                    for c in comps))
    return check


def lowest_values(key: str, column: str, group: Sequence[str], what: str, *, exclude: Sequence[str] = ()) -> Callable:
    """``group`` has the lowest values of ``results[key][column]`` (e.g. τ between a metric's
    arithmetic and geometric rankings); ``results[key + "_replicates"]`` (replicates x metrics)
    gives the data split's spread (without it the values are estimates of unknown se and decide
    nothing); the metrics in ``exclude`` are left out (a claim's other half: "F1 and MRR do not"
    tested as F1 below every metric but MRR)."""
    group, exclude = list(group), list(exclude)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        table = results[key]
        values = by_base(table[column] if isinstance(table, pd.DataFrame) else table)
        values = values.drop([m for m in exclude if m in values.index])
        reps = replicates_of(results, key)
        reps = {base_name(k): v for k, v in reps.items() if base_name(k) not in exclude} if reps else None
        verdict, detail = _lowest(values.to_dict(), group, _unknown_without(reps, values.index), reps)
        rest = values.drop(group)
        return Evidence(verdict, float(values[group].max()),
                        f"{what}: {', '.join(f'{m} {values[m]:.3f}' for m in group)}; the others "
                        f"{rest.min():.3f} to {rest.max():.3f} (median {rest.median():.3f}){_spread_text(reps, group)} — "
                        f"{detail}{_tau_note(results)}")
    return check


def _unknown_without(reps, names) -> dict | None:
    """The se of τ-based values: a τ of full test sets is an estimate, so without the split's
    replicates to measure its spread it is unknown (NaN: the rule decides nothing) — never exact."""
    return None if reps else {m: float("nan") for m in names}


@replay_cached
def _tau_by_base(tau) -> pd.DataFrame:
    t = pd.DataFrame(tau).astype(np.float64)
    names = [base_name(m) for m in t.index]
    if len(set(names)) != len(names) or [base_name(m) for m in t.columns] != names:
        raise InputError(f"a τ matrix needs the same metrics, once each, on both axes; got {list(t.index)}")
    t.index = t.columns = names
    return t


def lowest_mean_correlation(key: str, group: Sequence[str], prefix: str = "G", *,
                            partner: Sequence[str] = ()) -> Callable:
    """``group`` correlates worse with the other metrics than those do among themselves: each
    metric's mean τ with the metrics outside ``group`` and ``partner`` (itself excluded), lowest for
    the group (:func:`best_of`; ``results[key + "_replicates"]``, one τ matrix per data-split
    replicate, gives the spread; without it the τ are estimates of unknown se and decide nothing).
    ``partner``: metrics the claim excepts ("except with each other": GF1's half of a claim about
    GF1 and GMRR leaves GMRR out), neither compared nor averaged over.
    The τ within the group is reported, not tested. ``results[key]``: the metrics × metrics τ matrix
    (metric names, without the ``prefix`` used in the detail)."""
    group, partner = list(group), list(partner)

    def check(results):
        few = few_systems(results)
        if few:
            return few
        tau = _tau_by_base(results[key])
        outside = tuple(m for m in tau.index if m not in group and m not in partner)
        keep = tuple(m for m in tau.index if m not in partner)
        mean_with_outside = _mean_tau_with(tau, keep, outside)
        mats = results.get(key + "_replicates")
        reps = None
        if mats is not None:
            per = [_mean_tau_with(_tau_by_base(t), keep, outside) for t in mats]
            reps = {m: np.array([p[m] for p in per]) for m in mean_with_outside}
        verdict, detail = _lowest(mean_with_outside, group, _unknown_without(reps, mean_with_outside), reps)
        inside = [tau.loc[a, b] for i, a in enumerate(group) for b in group[i + 1:]]
        return Evidence(verdict, float(max(mean_with_outside[m] for m in group)),
                        "mean τ with the other metrics: " + ", ".join(f"{prefix}{m} {mean_with_outside[m]:.3f}" for m in group)
                        + f"; the others {min(mean_with_outside[m] for m in outside):.3f} to "
                        f"{max(mean_with_outside[m] for m in outside):.3f}"
                        + (f"; within the group τ {', '.join(f'{t:.3f}' for t in inside)}" if inside else "")
                        + _spread_text(reps, group) + f" — {detail}{_tau_note(results)}")
    return check


@replay_cached
def _mean_tau_with(tau, keep: tuple, outside: tuple) -> dict:
    """Each metric of ``keep``: its mean τ with the metrics of ``outside`` (itself excluded, NaN skipped)."""
    block = tau.loc[list(keep), list(outside)].to_numpy(dtype=np.float64, copy=True)
    for i, m in enumerate(keep):
        if m in outside:
            block[i, outside.index(m)] = np.nan
    with np.errstate(all="ignore"):
        return {m: float(np.nanmean(row)) for m, row in zip(keep, block)}


#: why a GF1 claim cannot be tested under the per-user reading of F1 (Eq. 3 per user, then the mean)
F1_PER_USER_REASON = (
    "per user F1@n = P@n·2n/(n+|R_u|), a factor no system changes, so under the per-user reading "
    "(Eq. 3 per user, then the mean) the geometric GF1 is GP times a constant on every user with a hit: "
    "GF1, GP and GRecall can differ only through which users have no hit (floored alike in all three), "
    "so GF1 cannot behave unlike GP as the claim needs")


def per_user_f1_reading(inner: Callable, reading_key: str = "f1_reading",
                        other_key: str = "f1_aggregate_results") -> Callable:
    """Wrap a GF1 claim's check: under the per-user reading of F1 (``results[reading_key]``, default
    ``"per-user"``) the claim is ``not testable`` (:data:`F1_PER_USER_REASON`, with the measured
    τ(GF1, GP) when ``results["tau_geo"]`` has both); the detail adds what the other reading — F1 of
    the aggregated P and Recall, results in ``results[other_key]`` — gives (not while the check is
    replayed). Under ``"aggregate"`` the inner check decides."""
    def check(results):
        reading = results.get(reading_key, "per-user")
        if reading == "aggregate":
            return inner(results)
        if reading != "per-user":
            raise InputError(f"{reading_key} must be 'per-user' or 'aggregate', got {reading!r}")
        few = few_systems(results)
        if few:
            return few
        measured = ""
        tau = results.get("tau_geo")
        if tau is not None:
            t = _tau_by_base(tau)
            if "F1" in t.index and "P" in t.index:
                measured = f" (here τ(GF1, GP) = {t.loc['F1', 'P']:.3f}"
                if "Recall" in t.index:
                    measured += f", τ(GF1, GRecall) = {t.loc['F1', 'Recall']:.3f}"
                measured += ")"
        other = ""
        alt = results.get(other_key)
        if alt is not None and not replaying():   # the detail alone: left out of a replay
            try:
                ev = inner({**results, **alt})
                other = f". Under the other reading (F1 of the aggregated P and Recall): {ev.verdict} — {ev.detail}"
            except KeyError as exc:
                other = f". The other reading (F1 of the aggregated P and Recall) was not computed for {exc.args[0]!r}"
        return not_testable(F1_PER_USER_REASON + measured + other)
    return check


#: what rec_eval's reading of the geometric mean does, said on the rows it decides
REC_EVAL_READING_TEXT = ("rec_eval's reading (the authors' tool: m_gm_set_F.c and m_gm_recip_rank.c write a value only "
                         "on a hit, so a user with no hit enters GF1 and GMRR as log 1 = 0, the best score; the other "
                         "metrics floor at 1e-5)")
_TREC_EVAL_READING_TEXT = "trec_eval's reading (every zero floored at 1e-5)"


def under_geometric_reading(inner: Callable, *, f1: bool = False, reading_key: str = "geometric_reading",
                            other_key: str = "other_reading_results") -> Callable:
    """Wrap a claim about geometric metrics: decided under the reading of the geometric mean's zeros
    in ``results[reading_key]`` (``"trec_eval"``, the default, or ``"rec_eval"``,
    :data:`recmetrics.metrics.aggregate.GEOMETRIC_READINGS`), which the detail names; the detail adds
    what the other reading gives when ``results[other_key]`` holds its results. ``f1=True`` (a claim
    about GF1): under trec_eval's reading the per-user GF1 is GP times a constant on every user with
    a hit, so :func:`per_user_f1_reading` applies (``not testable`` unless ``f1_reading`` is
    ``"aggregate"``); under rec_eval's, whose GF1 is the geometric mean of per-user F1 with a user
    without a hit counted as log 1, the claim is decided. While the check is replayed (firmness, null
    rate: :func:`~recmetrics.meta.comparisons.replaying`) the other reading is left out: it decides
    nothing, and its comparisons would draw noise and count as the verdict's."""
    from ..metrics.aggregate import GEOMETRIC_READINGS

    trec = per_user_f1_reading(inner) if f1 else inner

    def decide(results):
        reading = results.get(reading_key, "trec_eval")
        if reading not in GEOMETRIC_READINGS:
            raise InputError(f"{reading_key} must be one of {GEOMETRIC_READINGS}, got {reading!r}")
        if reading == "rec_eval":
            if f1 and results.get("f1_reading", "per-user") != "per-user":
                raise InputError("rec_eval's GF1 is the geometric mean of per-user F1 (gm_set_F): "
                                 "f1_reading must be 'per-user' under its reading")
            ev = inner(results)
        else:
            ev = trec(results)
        return reading, ev

    def check(results):
        reading, ev = decide(results)
        text = REC_EVAL_READING_TEXT if reading == "rec_eval" else _TREC_EVAL_READING_TEXT
        detail = f"under {text}: {ev.detail}"
        alt = results.get(other_key)
        if alt is not None and not replaying():
            other = {**results, reading_key: "trec_eval" if reading == "rec_eval" else "rec_eval", **alt}
            if other[reading_key] == reading:
                raise InputError(f"{other_key} must hold the other reading's results, got {reading!r} again")
            other.pop(other_key, None)
            try:
                o_reading, o_ev = decide(other)
                detail += f". Under {o_reading}'s reading: {o_ev.verdict} — {o_ev.detail}"
            except KeyError as exc:
                detail += f". The other reading was not computed for {exc.args[0]!r}"
        return Evidence(ev.verdict, ev.value, detail)
    return check
