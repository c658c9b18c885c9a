"""Experiments run the way a paper's set-up says: per-scenario robustness grids, the readings of GF1.

* :func:`robustness` — :func:`recmetrics.meta.robustness.robustness_study` over each scenario's own
  grid of test sizes (``SETUP.robustness_sizes``: 003 removes popular items only down to 80 % of
  the items, its sparsity grid goes to 5 %), gathered in one
  :class:`~recmetrics.meta.robustness.Robustness`.
* :func:`system_table` — systems × metrics aggregated with a given mean and geometric floor.
* :func:`gf1_readings` — paper 000 §7's GF1 under both readings of an aggregated F1 (the mean of
  per-user F1, or F1 of the aggregated P and Recall) and several floors: τ(F1, GF1) (the paper:
  0.42 on MovieLens 1M), τ(GF1, GP), τ(GF1, GRecall), and τ between GF1 and the ranking by the
  share of users with no hit, which the floor makes dominant.
* :func:`geometric_agreement` — the τ matrix among geometric metrics and τ(arithmetic, geometric)
  per metric under one reading of GF1 and one floor (the results the §7.1 claims read).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["robustness", "robustness_by_mean", "system_table", "gf1_readings", "geometric_agreement"]


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
                 floor: float | None = 1e-5, pool: str = "concat", f1_reading: str = "per-user") -> pd.DataFrame:
    """Systems × metrics: each metric's per-unit scores aggregated with ``method`` and ``floor``
    (:func:`recmetrics.metrics.aggregate.aggregate`). ``f1_reading="aggregate"`` replaces the F1
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
            p = study.scores(names["P"], cutoff, pool).to_numpy()
            r = study.scores(names["Recall"], cutoff, pool).to_numpy()
            out[m] = f1_of_means(p, r, method, axis=1, floor=floor)
        else:
            out[m] = aggregate(study.scores(m, cutoff, pool).to_numpy(), method, axis=1, floor=floor)
    return pd.DataFrame(out, index=pd.Index(study.systems, name="system"))


def gf1_readings(study, cutoff: int, floors: Sequence[float | None] = (1e-5,), *, pool: str = "concat") -> pd.DataFrame:
    """GF1 under both readings of an aggregated F1 and each geometric ``floor``: one row per
    (reading, floor) with τ(F1, GF1) (F1: arithmetic mean of per-user F1, the paper's §6),
    τ(GF1, GP), τ(GF1, GRecall), τ(GF1, no-hit) — τ with the ranking by the share of units whose
    P is 0 (fewer is better) — and the spread of log GF1 − log GP over systems (0: GF1 is GP times
    a constant). A floor of ``None`` uses the plain geometric mean (0 as soon as one unit is 0)."""
    from ..meta.agreement import kendall_tau
    from ..metrics.aggregate import F1_READINGS, aggregate

    names = {m.split("(")[0]: m for m in study.metrics}
    missing = [m for m in ("P", "Recall", "F1") if m not in names]
    if missing:
        raise InputError(f"gf1_readings needs P, Recall and F1 in the study (missing {', '.join(missing)})")
    f1_arith = aggregate(study.scores(names["F1"], cutoff, pool).to_numpy(), "arithmetic", axis=1)
    no_hit = -(study.scores(names["P"], cutoff, pool).to_numpy() == 0).mean(axis=1)
    rows = []
    for reading in F1_READINGS:
        for floor in floors:
            t = system_table(study, cutoff, [names["P"], names["Recall"], names["F1"]], method="geometric",
                             floor=floor, pool=pool, f1_reading=reading)
            gp, gr, gf1 = (t[names[m]].to_numpy() for m in ("P", "Recall", "F1"))
            with np.errstate(divide="ignore", invalid="ignore"):
                spread = np.log(gf1) - np.log(gp)
            spread = float(np.ptp(spread)) if np.isfinite(spread).all() else float("nan")
            rows.append({"reading": reading, "floor": floor,
                         "tau(F1, GF1)": kendall_tau(f1_arith, gf1), "tau(GF1, GP)": kendall_tau(gf1, gp),
                         "tau(GF1, GRecall)": kendall_tau(gf1, gr), "tau(GF1, no-hit)": kendall_tau(gf1, no_hit),
                         "spread log GF1/GP": spread})
    return pd.DataFrame(rows)


def geometric_agreement(study, cutoff: int, *, floor: float | None = 1e-5, pool: str = "concat",
                        f1_reading: str = "per-user") -> dict:
    """``{"tau_geo": τ among the geometric metrics, "mean_tau": DataFrame with column tau = τ between
    each metric's arithmetic and geometric ranking}`` under one reading of GF1 and one floor (the
    results paper 000's §7.1 claims read; metric names as in the study)."""
    from ..meta.agreement import agreement_matrix, kendall_tau

    arith = system_table(study, cutoff, method="arithmetic", pool=pool)
    geo = system_table(study, cutoff, method="geometric", floor=floor, pool=pool, f1_reading=f1_reading)
    mean_tau = pd.DataFrame({"tau": {m: kendall_tau(geo[m].to_numpy(), arith[m].to_numpy()) for m in geo.columns}})
    return {"tau_geo": agreement_matrix(geo, "tau"), "mean_tau": mean_tau}
