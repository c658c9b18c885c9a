"""Aggregation of per-user values: arithmetic, geometric, harmonic and quadratic means.

The geometric and harmonic means floor values at ``1e-5`` (trec_eval's ``MIN_GEO_MEAN``, as in
gm_map) so that a single zero does not collapse the mean to 0 (geometric) or make it undefined
(harmonic); Schröder et al. call them GMAP, HMAP and QMAP when applied to AP.

The floor matters for the harmonic mean: with a share z of users scoring 0, HMAP ≈ 1e-5 / z (the
zeros dominate the sum of reciprocals), so it measures how many users score 0 more than how well
the others are served. ``floor=None`` gives the plain means instead: the harmonic and the
geometric mean are then 0 as soon as one user scores 0.

The geometric, harmonic and quadratic means reject negative values (MCC, markedness,
informedness and boolean τ can be negative): the quadratic mean would drop their sign (a perfect
and an inverted ranking would score alike). Use those metrics' ``unit=true`` variant, which maps
x to (1 + x)/2.

F1 aggregated (paper 000 §7, GF1) has two readings, :data:`F1_READINGS`: ``per-user`` — the mean
of the per-user F1 values of Eq. 3, what ``aggregate(f1_values, ...)`` gives — and ``aggregate`` —
F1 of the aggregated precision and recall, 2·M(P)·M(R)/(M(P) + M(R)) (:func:`f1_of_means`). Per
user, F1@n = P@n · 2n/(n + |R_u|): the factor does not depend on the system, so under the
per-user reading the geometric mean GF1 is GP times a constant on every user with a hit, and GF1,
GP and GRecall (Recall@n = P@n · n/|R_u|) differ only through which users have no hit at all
(floored to the same value in all three).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, unknown_name

MIN_GEO_MEAN = 1e-5

_ALIASES = {"arithmetic": "arithmetic", "mean": "arithmetic", "a": "arithmetic", "am": "arithmetic",
            "geometric": "geometric", "gm": "geometric", "g": "geometric", "gmean": "geometric",
            "harmonic": "harmonic", "hm": "harmonic", "h": "harmonic", "hmean": "harmonic",
            "quadratic": "quadratic", "qm": "quadratic", "q": "quadratic", "rms": "quadratic"}
METHODS = ("arithmetic", "geometric", "harmonic", "quadratic")
#: how an aggregated F1 is read: the mean of per-user F1 (Eq. 3 per user, then the mean) or the F1
#: of the aggregated precision and recall
F1_READINGS = ("per-user", "aggregate")


def method_name(method: str) -> str:
    key = _ALIASES.get(str(method).lower())
    if key is None:
        raise unknown_name("aggregation", str(method), METHODS)
    return key


def aggregate(values, method: str = "arithmetic", axis: int = -1, floor: float | None = MIN_GEO_MEAN):
    """Aggregate per-user ``values`` along ``axis`` with the named mean.

    ``floor`` (geometric and harmonic means only): values below it are raised to it first
    (default 1e-5, trec_eval's ``MIN_GEO_MEAN``); ``None`` uses the values as they are."""
    x = np.asarray(values, dtype=np.float64)
    m = method_name(method)
    if x.shape[axis] == 0:
        raise InputError("cannot aggregate an empty set of users")
    if np.isnan(x).any():
        raise InputError("per-user values contain NaN; every evaluated user needs a value")
    if m == "arithmetic":
        return x.mean(axis=axis)
    if (x < 0).any():
        raise InputError(f"the {m} mean needs non-negative values (got {x.min():g}); for a metric that "
                         "can be negative (MCC, markedness, informedness, BKTau) use its unit=true variant, "
                         "which maps x to (1 + x)/2")
    if m == "quadratic":
        return np.sqrt((x * x).mean(axis=axis))
    if floor is not None:
        if not floor > 0:
            raise InputError(f"floor must be positive or None, got {floor!r}")
        x = np.maximum(x, floor)
    with np.errstate(divide="ignore"):
        if m == "geometric":
            return np.exp(np.log(x).mean(axis=axis))
        return 1.0 / (1.0 / x).mean(axis=axis)


def f1_of_means(precision, recall, method: str = "arithmetic", axis: int = -1,
                floor: float | None = MIN_GEO_MEAN) -> np.ndarray:
    """F1 of the aggregated precision and recall: ``2·M(P)·M(R) / (M(P) + M(R))`` (0 when both are 0).

    ``precision``, ``recall``: per-user values (same shape), aggregated along ``axis`` with the named
    mean ``M`` (and ``floor``, as :func:`aggregate`). This is the ``aggregate`` reading of an
    aggregated F1 (:data:`F1_READINGS`); the ``per-user`` reading is ``aggregate(f1_values, method)``.
    Paper 000 (Eq. 3) defines F1 per user and averages it, and does not say which reading its
    geometric GF1 (§7) used; under the per-user reading GF1 can differ from GP only through the
    users with no hit (module docstring). Chapter 07 runs both readings.

    >>> import numpy as np
    >>> p = np.array([[0.1, 0.0, 0.2]]); r = np.array([[0.5, 0.0, 0.4]])
    >>> round(float(f1_of_means(p, r)[0]), 4)  # 2 · 0.1 · 0.3 / 0.4
    0.15
    """
    p = aggregate(precision, method, axis=axis, floor=floor)
    r = aggregate(recall, method, axis=axis, floor=floor)
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    if p.shape != r.shape:
        raise InputError(f"precision and recall must have the same shape, got {np.shape(precision)} and "
                         f"{np.shape(recall)}")
    den = p + r
    return np.divide(2 * p * r, den, out=np.zeros(np.broadcast(p, r).shape), where=den > 0)
