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
