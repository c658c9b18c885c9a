"""Experiments run the way a paper's set-up says: per-scenario robustness grids, the readings of GF1.

* :func:`robustness` — :func:`recmetrics.meta.robustness.robustness_study` over each scenario's own
  grid of test sizes (``SETUP.robustness_sizes``: 003 removes popular items only down to 80 % of
  the items, its sparsity grid goes to 5 %), gathered in one
  :class:`~recmetrics.meta.robustness.Robustness`.
* :func:`system_table` — systems × metrics aggregated with a given mean, geometric floor and
  reading of the geometric mean's zeros (trec_eval's or rec_eval's,
  :data:`recmetrics.metrics.aggregate.GEOMETRIC_READINGS`).
* :func:`gf1_readings` — paper 000 §7's GF1 under the readings of an aggregated F1 (the mean of
  per-user F1, or F1 of the aggregated P and Recall), of the geometric mean's zeros, and several
  floors: τ(F1, GF1) (the paper: 0.42 on MovieLens 1M), τ(GF1, GP), τ(GF1, GRecall), τ between GF1
  and the ranking by the share of users with no hit, and which system GF1 ranks first.
* :func:`geometric_agreement` — the τ matrix among geometric metrics and τ(arithmetic, geometric)
  per metric under one reading of GF1, one of the zeros and one floor (the results the §7.1 claims
  read).
* :func:`geometric_readings` — what each reading of the zeros does to §7.1's numbers: per metric,
  its mean τ with the other geometric metrics and τ(arithmetic, geometric); per hit-only metric
  (GF1, GMRR), the system it ranks first and τ with the ranking by the share of units with no hit.
* :func:`explain_readings` — chapter 07's computed prose on what §7's observations follow from.
* :func:`hit_only_metrics`, :func:`replace_metrics` — the metrics the readings treat differently,
  and a robustness study with those metrics' rows replaced (the other reading at their cost only).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["robustness", "robustness_by_mean", "system_table", "gf1_readings", "geometric_agreement",
           "geometric_readings", "hit_only_metrics", "replace_metrics", "explain_readings"]


def robustness(study, robustness_sizes: Mapping[str, Sequence[float]], n_samples: int, seed: int = 0, **kw):
    """Robustness of the study's metrics under every scenario of ``robustness_sizes``
    (``{scenario: sizes}``), each on its own grid; ``kw`` go to
    :func:`~recmetrics.meta.robustness.robustness_study` (``cutoffs``, ``metrics``, ``aggregate``,
    ``n_jobs``, ``progress``, ...). Each scenario draws from its own seeds, as in one call."""
    from ..study import require_study

    aggregate = kw.pop("aggregate", None) or require_study(study, "robustness_study").aggregate
    return robustness_by_mean(study, robustness_sizes, n_samples, seed, [aggregate], **kw)[aggregate]


def robustness_by_mean(study, robustness_sizes: Mapping[str, Sequence[float]], n_samples: int, seed: int = 0,
                       aggregates: Sequence[str] = ("arithmetic", "geometric"), **kw) -> dict:
    """:func:`robustness` under several means over users: ``{aggregate: Robustness}``, every result
    bit-identical to :func:`robustness` with that ``aggregate`` alone, the reduced test sets drawn and
    scored once (:func:`~recmetrics.meta.robustness.robustness_studies`)."""
    from ..meta.robustness import Robustness, robustness_studies

    if not robustness_sizes:
        raise InputError("give at least one scenario with its sizes, e.g. {'ratings': [1.0, 0.5, 0.1]}")
    parts = [robustness_studies(study, aggregates, [scenario], list(sizes), n_samples, seed, **kw)
             for scenario, sizes in robustness_sizes.items()]
    out = {}
    for a in dict.fromkeys(aggregates):
        reps = [p[a].replicate_samples for p in parts if p[a].replicate_samples is not None]
        out[a] = Robustness(pd.concat([p[a].samples for p in parts], ignore_index=True), parts[0][a].full,
                            grids={sc: g for p in parts for sc, g in p[a].grids.items()},
                            tie_break=parts[0][a].tie_break,
                            replicate_samples=pd.concat(reps, ignore_index=True) if reps else None)
    return out


def system_table(study, cutoff: int, metrics: Sequence[str] | None = None, *, method: str = "arithmetic",
                 floor: float | None = 1e-5, pool: str = "concat", f1_reading: str = "per-user",
                 reading: str | None = None) -> pd.DataFrame:
    """Systems × metrics: each metric's per-unit scores aggregated with ``method``, ``floor`` and
    ``reading`` (geometric mean only: ``"trec_eval"``, the default, or ``"rec_eval"``;
    :func:`recmetrics.metrics.aggregate.aggregate`). ``f1_reading="aggregate"`` replaces the F1
    column by F1 of the aggregated P and Recall (:func:`~recmetrics.metrics.aggregate.f1_of_means`;
    the study needs P and Recall)."""
    from ..metrics.aggregate import F1_READINGS, aggregate, f1_of_means
    from .checks import base_name

    if f1_reading not in F1_READINGS:
        raise InputError(f"f1_reading must be one of {F1_READINGS}, got {f1_reading!r}")
    metrics = list(study.metrics if metrics is None else metrics)
    out = {}
    for m in metrics:
        if base_name(m) == "F1" and f1_reading == "aggregate":
            names = {base_name(x): x for x in study.metrics}
            missing = [x for x in ("P", "Recall") if x not in names]
            if missing:
                raise InputError(f"the aggregate reading of F1 needs {' and '.join(missing)} in the study")
            p = study.score_matrix(names["P"], cutoff, pool)
            r = study.score_matrix(names["Recall"], cutoff, pool)
            out[m] = f1_of_means(p, r, method, axis=1, floor=floor, reading=reading)
        else:
            out[m] = aggregate(study.score_matrix(m, cutoff, pool), method, axis=1, floor=floor,
                               reading=reading, metric=m)
    return pd.DataFrame(out, index=pd.Index(study.systems, name="system"))


def gf1_readings(study, cutoff: int, floors: Sequence[float | None] = (1e-5,), *, pool: str = "concat") -> pd.DataFrame:
    """GF1 under the readings of an aggregated F1 and of the geometric mean's zeros, and each
    ``floor``: one row per (``reading``: F1's, ``zeros``: the geometric mean's, floor) with
    τ(F1, GF1) (F1: arithmetic mean of per-user F1, the paper's §6), τ(GF1, GP), τ(GF1, GRecall),
    τ(GF1, no-hit) — τ with the ranking by the share of units whose P is 0 (fewer is better) —, the
    spread of log GF1 − log GP over systems (0: GF1 is GP times a constant) and ``GF1 first``, the
    system GF1 ranks first. F1 of the aggregated P and Recall is the same under both readings of
    the zeros (P and Recall are floored under both): one row per floor. A floor of ``None`` uses
    the plain geometric mean (0 as soon as one unit is 0; under rec_eval's reading, only for units
    with a hit)."""
    from ..meta.agreement import kendall_tau
    from ..metrics.aggregate import F1_READINGS, GEOMETRIC_READINGS, aggregate

    names = {m.split("(")[0]: m for m in study.metrics}
    missing = [m for m in ("P", "Recall", "F1") if m not in names]
    if missing:
        raise InputError(f"gf1_readings needs P, Recall and F1 in the study (missing {', '.join(missing)})")
    f1_arith = aggregate(study.score_matrix(names["F1"], cutoff, pool), "arithmetic", axis=1)
    no_hit = -(study.score_matrix(names["P"], cutoff, pool) == 0).mean(axis=1)
    rows = []
    for reading in F1_READINGS:
        for zeros in GEOMETRIC_READINGS if reading == "per-user" else GEOMETRIC_READINGS[:1]:
            for floor in floors:
                t = system_table(study, cutoff, [names["P"], names["Recall"], names["F1"]], method="geometric",
                                 floor=floor, pool=pool, f1_reading=reading, reading=zeros)
                gp, gr, gf1 = (t[names[m]].to_numpy() for m in ("P", "Recall", "F1"))
                with np.errstate(divide="ignore", invalid="ignore"):
                    spread = np.log(gf1) - np.log(gp)
                spread = float(np.ptp(spread)) if np.isfinite(spread).all() else float("nan")
                rows.append({"reading": reading, "zeros": zeros, "floor": floor,
                             "tau(F1, GF1)": kendall_tau(f1_arith, gf1), "tau(GF1, GP)": kendall_tau(gf1, gp),
                             "tau(GF1, GRecall)": kendall_tau(gf1, gr), "tau(GF1, no-hit)": kendall_tau(gf1, no_hit),
                             "spread log GF1/GP": spread, "GF1 first": str(t.index[int(np.argmax(gf1))])})
    return pd.DataFrame(rows)


def geometric_agreement(study, cutoff: int, *, floor: float | None = 1e-5, pool: str = "concat",
                        f1_reading: str = "per-user", reading: str | None = None, labels=None) -> dict:
    """``{"tau_geo": τ among the geometric metrics, "mean_tau": DataFrame with column tau = τ between
    each metric's arithmetic and geometric ranking}`` under one reading of GF1, one reading of the
    geometric mean's zeros (``reading``: trec_eval's, the default, or rec_eval's) and one floor (the
    results paper 000's §7.1 claims read; metric names as in the study). ``labels``: the data split's
    replicates (:func:`recmetrics.meta.replicates.unit_labels`); the same τ on each of them is added
    as ``tau_geo_replicates`` (one matrix each) and ``mean_tau_replicates`` (replicates x metrics), the
    spread the τ verdicts decide against (a τ of full test sets is an estimate)."""
    from ..meta.agreement import agreement_matrix, kendall_tau
    from ..meta.replicates import view

    if reading == "rec_eval" and f1_reading != "per-user":
        raise InputError("rec_eval's GF1 is the geometric mean of per-user F1 (gm_set_F): under its reading "
                         f"f1_reading must be 'per-user', got {f1_reading!r}")
    arith = system_table(study, cutoff, method="arithmetic", pool=pool)
    geo = system_table(study, cutoff, method="geometric", floor=floor, pool=pool, f1_reading=f1_reading,
                       reading=reading)
    mean_tau = pd.DataFrame({"tau": {m: kendall_tau(geo[m].to_numpy(), arith[m].to_numpy()) for m in geo.columns}})
    out = {"tau_geo": agreement_matrix(geo, "tau"), "mean_tau": mean_tau}
    if labels is not None:
        n = int(np.max(labels)) + 1
        if n < 2:
            raise InputError(f"labels must give at least 2 replicates of the split, they give {n}")
        per = [geometric_agreement(view(study, labels, r), cutoff, floor=floor, pool=pool, f1_reading=f1_reading,
                                   reading=reading) for r in range(n)]
        out["tau_geo_replicates"] = [a["tau_geo"] for a in per]
        out["mean_tau_replicates"] = pd.DataFrame([a["mean_tau"]["tau"] for a in per]).reset_index(drop=True)
    return out


def hit_only_metrics(metrics: Sequence[str]) -> list[str]:
    """The ``metrics`` whose zeros rec_eval's reading counts as log 1 (F1, RR, any cut-off or alias):
    the only ones whose geometric mean differs between the readings."""
    from ..metrics.aggregate import zero_counts_as

    return [m for m in metrics if zero_counts_as("rec_eval", m) == "one"]


def replace_metrics(base, part):
    """``base`` (a :class:`~recmetrics.meta.robustness.Robustness`) with the rows and full-set
    columns of ``part``'s metrics taken from ``part`` — the same scenarios, sizes and seeds, so the
    samples are the same reduced test sets (each (scenario, size) draws from its own seed whatever
    the metrics). The values are those a whole study gives up to the order of floating-point sums
    (the aggregation's memory layout follows the number of metrics), which only matters for two
    systems whose aggregates tie to the last bit."""
    from ..meta.robustness import Robustness

    names = set(part.samples["metric"])
    keys = ["scenario", "size", "sample"]
    mine = base.samples[base.samples["metric"].isin(names)][keys + ["metric"]].sort_values(keys + ["metric"])
    theirs = part.samples[keys + ["metric"]].sort_values(keys + ["metric"])
    if not names or not mine.reset_index(drop=True).equals(theirs.reset_index(drop=True)):
        raise InputError("replace_metrics needs a study of some of base's metrics on the same scenarios, sizes "
                         "and samples")
    samples = pd.concat([base.samples[~base.samples["metric"].isin(names)], part.samples], ignore_index=True)
    full = base.full.copy()
    for m in part.full.columns:
        full[m] = part.full[m]
    return Robustness(samples, full, grids=dict(base.grids), tie_break=base.tie_break)


def geometric_readings(study, cutoff: int, *, floor: float | None = 1e-5, pool: str = "concat") -> dict:
    """Paper 000 §7.1's numbers under each reading of the geometric mean's zeros
    (:data:`recmetrics.metrics.aggregate.GEOMETRIC_READINGS`), GF1 per user (Eq. 3):

    * ``"tau"``: ``{reading: metrics × metrics τ among the geometric metrics}`` (Fig. 9);
    * ``"mean_tau"``: metrics × readings, each geometric metric's mean τ with the other ones;
    * ``"tau_arith_geo"``: metrics × readings, τ between a metric's arithmetic and geometric rankings;
    * ``"hit_only"``: one row per (reading, hit-only metric) with the system it ranks ``first``,
      that system's share of units with no hit (``no_hit_first``), its rank by that share
      (``no_hit_rank``, 1 = most units without a hit) and ``tau_no_hit``, τ between the metric's
      ranking and the ranking by the share of units with no hit (more first: +1 means the more
      users a system misses, the better it scores);
    * ``"no_hit"``: the share of units with no hit (P = 0) per system.

    Metric names are reduced to their base (``"infAP(unjudged=pooled)"`` → ``"infAP"``)."""
    from ..meta.agreement import agreement_matrix, kendall_tau
    from ..metrics.aggregate import GEOMETRIC_READINGS
    from .checks import base_name

    names = {m: base_name(m) for m in study.metrics}
    if "P" not in names.values():
        raise InputError("geometric_readings needs P in the study (the share of units with no hit is P = 0)")
    p_name = next(m for m, b in names.items() if b == "P")
    no_hit = pd.Series((study.score_matrix(p_name, cutoff, pool) == 0).mean(axis=1),
                       index=pd.Index(study.systems, name="system"), name="no_hit")
    arith = system_table(study, cutoff, method="arithmetic", pool=pool).rename(columns=names)
    mean_tau, tau_ag, taus, rows = {}, {}, {}, []
    for reading in GEOMETRIC_READINGS:
        geo = system_table(study, cutoff, method="geometric", floor=floor, pool=pool,
                           reading=reading).rename(columns=names)
        tau = taus[reading] = agreement_matrix(geo, "tau")
        mean_tau[reading] = pd.Series({m: float(np.nanmean([tau.loc[m, o] for o in tau.columns if o != m]))
                                       for m in tau.index})
        tau_ag[reading] = pd.Series({m: kendall_tau(arith[m].to_numpy(), geo[m].to_numpy()) for m in geo.columns})
        order = no_hit.rank(ascending=False, method="min")
        for m in hit_only_metrics(list(geo.columns)):
            first = str(geo[m].idxmax())
            rows.append({"reading": reading, "metric": m, "first": first, "no_hit_first": float(no_hit[first]),
                         "no_hit_rank": int(order[first]),
                         "tau_no_hit": kendall_tau(geo[m].to_numpy(), no_hit.to_numpy())})
    return {"tau": taus, "mean_tau": pd.DataFrame(mean_tau), "tau_arith_geo": pd.DataFrame(tau_ag),
            "hit_only": pd.DataFrame(rows), "no_hit": no_hit}


def _ordinal(n: int) -> str:
    return {1: "largest", 2: "second largest", 3: "third largest"}.get(n, f"{n}th largest")


def explain_readings(r: Mapping, paper_numbers: Mapping[str, float] | None = None) -> str:
    """Markdown, every number and every turn of it computed from ``r`` (:func:`geometric_readings`):
    GF1's and GMRR's mean τ with the other geometric metrics (GF1 and GMRR left out: "except with
    each other") against those metrics' mean τ among themselves, τ(arithmetic, geometric) under each
    reading of the zeros, which system each ranks first and how that follows the share of users
    without a hit, and whether §7's pattern (GF1 and GMRR apart from the rest) appears under
    rec_eval's reading only, under both, or under neither. ``paper_numbers``: ``{"tau(F1, GF1)":
    0.42, "tau(AP, GAP)": 0.92}`` to set the τ against."""
    tag = r["tau_arith_geo"]
    hit = r["hit_only"].set_index(["reading", "metric"])
    need = {"F1", "RR"}
    taus = r.get("tau", {})
    if not {"trec_eval", "rec_eval"} <= set(taus) or any(not need <= set(t.index) for t in taus.values()):
        raise InputError(f"explain_readings needs the τ matrices of F1 and RR under both readings, got readings "
                         f"{list(taus)}")
    rest = [m for m in taus["rec_eval"].index if m not in need]
    if len(rest) < 2:
        raise InputError(f"explain_readings needs at least two metrics besides F1 and RR, got {rest}")
    paper = dict(paper_numbers or {})
    # GF1's and GMRR's mean τ with the rest; each of the rest's mean τ with the other ones of the rest
    mt = {g: pd.Series({**{m: float(np.mean([t.loc[m, o] for o in rest])) for m in need},
                        **{m: float(np.mean([t.loc[m, o] for o in rest if o != m])) for m in rest}})
          for g, t in taus.items()}

    def apart(reading):   # GF1 and GMRR below every other metric's mean τ with the rest
        m = mt[reading]
        return max(m["F1"], m["RR"]) < m[rest].min()

    def cite(key):
        return f" (the paper: {paper[key]:g} on MovieLens 1M)" if key in paper else ""

    lines = []
    for reading in ("rec_eval", "trec_eval"):
        m = mt[reading]
        lines.append(f"* **{reading}'s reading** — mean τ with the other {len(rest)} geometric metrics: GF1 "
                     f"{m['F1']:.2f}, GMRR {m['RR']:.2f}; those {len(rest)} among themselves {m[rest].min():.2f} to "
                     f"{m[rest].max():.2f}; τ(F1, GF1) = {tag.loc['F1', reading]:.2f}{cite('tau(F1, GF1)')}, τ(RR, GMRR) = "
                     f"{tag.loc['RR', reading]:.2f}"
                     + (f", τ(AP, GAP) = {tag.loc['AP', reading]:.2f}{cite('tau(AP, GAP)')}" if "AP" in tag.index else "")
                     + ".")
        for m, label in (("F1", "GF1"), ("RR", "GMRR")):
            h = hit.loc[(reading, m)]
            lines.append(f"  {label} ranks {h['first']} first, the system with the {_ordinal(int(h['no_hit_rank']))} "
                         f"share of units without a hit ({h['no_hit_first']:.1%}); τ between {label} and the ranking "
                         f"by that share (more units without a hit first) is {h['tau_no_hit']:.2f}.")
    t = hit.loc[("rec_eval", "F1"), "tau_no_hit"]
    trend = ("the more users a system misses, the higher its GF1" if t > 0 else
             "yet GF1 does not reward the systems that miss more users here" if t < 0 else
             "GF1 is not ordered by the share of users without a hit here")
    if apart("rec_eval") and not apart("trec_eval"):
        verdict = (f"GF1 and GMRR stand apart from the other geometric metrics under rec_eval's reading and not under "
                   f"trec_eval's: §7's pattern follows from how the authors' tool counts a user without a hit — as "
                   f"log 1, the best score, in GF1 and GMRR only — and {trend} (τ {t:.2f}). The paper's explanation, "
                   "the metrics' reciprocal components, is not needed for it.")
    elif apart("rec_eval"):
        verdict = (f"GF1 and GMRR stand apart from the other geometric metrics under both readings, so here §7's "
                   f"pattern does not depend on how a user without a hit is counted (under rec_eval's reading {trend}, "
                   f"τ {t:.2f}).")
    elif apart("trec_eval"):
        verdict = ("GF1 and GMRR stand apart from the other geometric metrics under trec_eval's reading only, not "
                   "under rec_eval's, the paper's tool: the reading does not explain §7's pattern here.")
    else:
        verdict = (f"GF1 and GMRR do not both stand apart from the other geometric metrics under either reading here "
                   f"(under rec_eval's reading {trend}, τ {t:.2f}).")
    return "\n".join(lines) + "\n\n" + verdict
