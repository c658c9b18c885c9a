"""Paired significance tests over per-user score arrays (thin wrappers of :mod:`scipy.stats`).

Scores are paired by user: ``a[u]`` and ``b[u]`` are two systems' values for the same user.
These are the building blocks of the meta-evaluation (discriminative power, power curves):
``paired_pvalues`` runs one test for many systems at once, vectorised over systems through
scipy's ``axis`` support.

Conventions
-----------
* ``alternative="greater"`` tests H1: ``a`` scores higher than ``b`` (scipy's convention on
  ``a - b``); "less" and "two-sided" likewise.
* When every paired difference is zero the test has no evidence either way: the p-value is 1
  (scipy's Wilcoxon would otherwise warn and return NaN or raise).
* NaN scores raise :class:`~recmetrics.errors.InputError` (every user needs a value).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, unknown_name

ALTERNATIVES = ("two-sided", "greater", "less")
TESTS = ("wilcoxon", "t")

__all__ = ["TestResult", "wilcoxon", "paired_t", "paired_test", "paired_pvalues", "ALTERNATIVES", "TESTS"]


@dataclass(frozen=True)
class TestResult:
    """Statistic and p-value of a paired test (arrays when several pairs were tested at once)."""

    statistic: float | np.ndarray
    pvalue: float | np.ndarray
    test: str
    alternative: str

    def __iter__(self):  # allows ``stat, p = wilcoxon(a, b)``
        return iter((self.statistic, self.pvalue))


def _pair(a, b, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise InputError(f"paired scores must have the same shape, got {a.shape} and {b.shape}") from None
    if a.ndim == 0 or a.shape[axis] == 0:
        raise InputError("paired tests need at least one user")
    if np.isnan(a).any() or np.isnan(b).any():
        raise InputError("per-user scores contain NaN; every user needs a value in both systems")
    return a, b


def _alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise unknown_name("alternative", str(alternative), ALTERNATIVES)
    return alternative


def _paired(a, b, axis: int, name: str, alternative: str, compute) -> TestResult:
    """Run ``compute(d) -> (statistic, pvalue)`` on the rows of paired differences ``a - b`` taken
    along ``axis``; rows whose differences are all zero get statistic 0 and p = 1."""
    a, b = _pair(a, b, axis)
    d = np.moveaxis(a - b, axis, -1)
    flat = d.reshape(-1, d.shape[-1])
    informative = np.any(flat != 0, axis=1)
    stat = np.zeros(len(flat))
    p = np.ones(len(flat))
    if informative.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=RuntimeWarning)
            warnings.simplefilter("ignore", category=UserWarning)
            stat[informative], pvalue = compute(flat[informative])
        p[informative] = np.nan_to_num(pvalue, nan=1.0)
    shape = d.shape[:-1]
    if shape == ():
        return TestResult(float(stat[0]), float(p[0]), name, alternative)
    return TestResult(stat.reshape(shape), p.reshape(shape), name, alternative)


def wilcoxon(a, b, alternative: str = "two-sided", *, zero_method: str = "wilcox", axis: int = -1) -> TestResult:
    """Wilcoxon signed-rank test on the paired differences ``a - b`` (scipy.stats.wilcoxon).

    ``zero_method="wilcox"`` drops zero differences (scipy's default); pairs whose differences are
    all zero get p = 1. With ``a``/``b`` of shape (..., n_users) the test runs along ``axis`` for
    every leading index at once.
    """
    from scipy import stats

    alternative = _alternative(alternative)

    def compute(d):
        res = stats.wilcoxon(d, zero_method=zero_method, alternative=alternative, axis=1)
        return res.statistic, res.pvalue

    return _paired(a, b, axis, "wilcoxon", alternative, compute)


def paired_t(a, b, alternative: str = "two-sided", *, axis: int = -1) -> TestResult:
    """Paired Student t-test on ``a - b`` (scipy.stats.ttest_rel); all-zero differences give p = 1."""
    from scipy import stats

    alternative = _alternative(alternative)

    def compute(d):
        res = stats.ttest_1samp(d, 0.0, alternative=alternative, axis=1)
        return res.statistic, res.pvalue

    return _paired(a, b, axis, "t", alternative, compute)


def paired_test(a, b, test: str = "wilcoxon", alternative: str = "two-sided", **kw) -> TestResult:
    """Dispatch to :func:`wilcoxon` (``"wilcoxon"``) or :func:`paired_t` (``"t"``)."""
    if test == "wilcoxon":
        return wilcoxon(a, b, alternative, **kw)
    if test == "t":
        return paired_t(a, b, alternative, **kw)
    raise unknown_name("paired test", str(test), TESTS)


def paired_pvalues(scores, baseline: int | None = None, *, test: str = "wilcoxon",
                   alternative: str = "two-sided") -> np.ndarray:
    """p-values of paired tests between systems; ``scores`` has shape (n_systems, n_users).

    ``baseline=i``: one p-value per system for ``test(baseline, system)`` (the baseline's own entry
    is 1), e.g. ``alternative="greater"`` asks whether the baseline beats each system.
    ``baseline=None``: the (n_systems, n_systems) matrix ``P[i, j] = test(scores[i], scores[j])``
    (diagonal 1).
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2:
        raise InputError(f"scores must be a (n_systems, n_users) matrix, got shape {s.shape}")
    n = s.shape[0]
    if baseline is not None:
        if not -n <= int(baseline) < n:
            raise InputError(f"baseline {baseline} is not a system index (0..{n - 1})")
        p = paired_test(np.broadcast_to(s[baseline], s.shape), s, test, alternative).pvalue
        p = np.atleast_1d(np.asarray(p, dtype=np.float64)).copy()
        p[int(baseline) % n] = 1.0
        return p
    out = np.ones((n, n))
    for i in range(n):
        p = paired_test(np.broadcast_to(s[i], s.shape), s, test, alternative).pvalue
        out[i] = p
        out[i, i] = 1.0
    return out
