"""Parameter checks shared by the aspect-aware kernels.

Every check raises :class:`~recmetrics.errors.InputError` naming the metric and the parameter:
``alpha`` and ``beta`` (αβ-nDCG, α-nDCG, NRBP, EU) must lie in (0, 1], a persistence ``p``
(EU, RBU) in (0, 1), an effort ``e`` >= 0 and ``profile`` must be one of :data:`PROFILES`. (The
top rating :math:`r_{max}` is checked against the users' grades in :mod:`.judgments`.)
"""
from __future__ import annotations

import math

from ...errors import InputError

#: the sources of the aspect weights γ (:func:`~recmetrics.metrics.diversity.weights.profile_weights`)
PROFILES = ("train", "test", "uniform")


def check_unit(name: str, value: float, metric: str, *, open_right: bool = False) -> float:
    """``value`` as a float in (0, 1] (or (0, 1) with ``open_right``), else an error naming ``metric``'s parameter."""
    v = float(value)
    ok = 0.0 < v < 1.0 if open_right else 0.0 < v <= 1.0
    if not math.isfinite(v) or not ok:
        rng = "(0, 1)" if open_right else "(0, 1]"
        raise InputError(f"{metric}: parameter {name}={value!r} must lie in {rng}")
    return v


def checker(metric: str, open_p: bool = True):
    """The registry's ``check`` for a diversity metric: the rules its kernel applies, at parse time
    (``alpha``, ``beta`` in (0, 1]; ``p`` in (0, 1) (``open_p``); ``e`` >= 0; ``profile`` known)."""

    def check(params: dict) -> None:
        for name in ("alpha", "beta"):
            if name in params:
                check_unit(name, params[name], metric)
        if "p" in params:
            check_unit("p", params["p"], metric, open_right=open_p)
        if "e" in params:
            _check_nonneg("e", params["e"], metric)
        if "profile" in params:
            _check_profile(params["profile"], metric)
    return check


def _check_nonneg(name: str, value: float, metric: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{metric}: parameter {name}={value!r} must be a finite number >= 0")
    return v


def _check_profile(profile: str, metric: str) -> str:
    p = str(profile).lower()
    if p not in PROFILES:
        raise InputError(f"{metric}: profile={profile!r} must be one of {PROFILES}")
    return p
