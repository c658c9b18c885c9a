"""Aggregation of per-user values: arithmetic, geometric, harmonic and quadratic means.

The geometric and harmonic means floor values at ``1e-5`` (trec_eval's ``MIN_GEO_MEAN``, as in
gm_map) so that a single zero does not collapse the mean to 0 (geometric) or make it undefined
(harmonic); Schröder et al. call them GMAP, HMAP and QMAP when applied to AP.
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


def aggregate(values, method: str = "arithmetic", axis: int = -1, floor: float = MIN_GEO_MEAN):
    """Aggregate per-user ``values`` along ``axis`` with the named mean."""
    x = np.asarray(values, dtype=np.float64)
    m = method_name(method)
    if x.shape[axis] == 0:
        raise InputError("cannot aggregate an empty set of users")
    if np.isnan(x).any():
        raise InputError("per-user values contain NaN; every evaluated user needs a value")
    if m == "arithmetic":
        return x.mean(axis=axis)
    if m == "quadratic":
        return np.sqrt((x * x).mean(axis=axis))
    if (x < 0).any():
        raise InputError(f"the {m} mean needs non-negative values")
    x = np.maximum(x, floor)
    if m == "geometric":
        return np.exp(np.log(x).mean(axis=axis))
    return 1.0 / (1.0 / x).mean(axis=axis)
