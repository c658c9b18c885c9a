"""Agreement between rankings of systems: Kendall's τ (a thin wrapper of :mod:`scipy.stats`).

A metric ranks systems by their aggregated (by default mean) per-user score; two metrics, or a
metric and a known true order, agree when they rank the systems alike. ``kendall_tau`` compares
two score vectors; ``system_ranking_tau`` aggregates per-user score matrices first.

Conventions: τ-b (ties in either ranking are accounted for, as scipy's default); when one of the
two vectors is constant τ is undefined and NaN is returned.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import InputError
from ..metrics.aggregate import aggregate as _aggregate

__all__ = ["kendall_tau", "system_ranking_tau", "ranking_taus"]


def kendall_tau(x, y, variant: str = "b") -> float:
    """Kendall's τ between two paired vectors (scipy.stats.kendalltau; ``variant`` "b" or "c")."""
    from scipy import stats

    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise InputError(f"kendall_tau needs two vectors of the same length, got {x.size} and {y.size}")
    if x.size < 2:
        raise InputError("kendall_tau needs at least two systems")
    if np.isnan(x).any() or np.isnan(y).any():
        raise InputError("kendall_tau: NaN in the scores")
    if np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return float(stats.kendalltau(x, y, variant=variant).statistic)


def _system_scores(scores, aggregate: str) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 1:
        return s
    if s.ndim == 2:
        return np.asarray(_aggregate(s, aggregate, axis=1))
    raise InputError(f"system scores must be (n_systems,) or (n_systems, n_users), got shape {s.shape}")


def system_ranking_tau(scores, reference, *, aggregate: str = "arithmetic", variant: str = "b") -> float:
    """τ between the system ranking of ``scores`` and that of ``reference``.

    Each of them is either one aggregated value per system, shape (n_systems,), or per-user values,
    shape (n_systems, n_users), aggregated with ``aggregate`` (arithmetic mean by default). A true
    order is passed as values that increase with quality, e.g. ``-perturbation_level``.
    """
    a = _system_scores(scores, aggregate)
    b = _system_scores(reference, aggregate)
    return kendall_tau(a, b, variant)


def ranking_taus(cube, reference, *, aggregate: str = "arithmetic", variant: str = "b") -> np.ndarray:
    """τ of every metric's system ranking against ``reference``; cube: (n_metrics, n_systems[, n_users])."""
    c = np.asarray(cube, dtype=np.float64)
    if c.ndim not in (2, 3):
        raise InputError(f"cube must be (n_metrics, n_systems[, n_users]), got shape {c.shape}")
    return np.array([system_ranking_tau(m, reference, aggregate=aggregate, variant=variant) for m in c])
