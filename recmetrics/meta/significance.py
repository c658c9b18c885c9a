"""Paired significance tests over per-user score arrays.

Wilcoxon and t are thin wrappers of :mod:`scipy.stats`; the randomisation (permutation) test, Sakai's
paired bootstrap, the randomised Tukey HSD, the Holm/Bonferroni/BH corrections and effect sizes
are implemented here (vectorised, seeded).

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
* Scores are checked by :mod:`recmetrics.checks`: NaN, ±inf, a cell that is not a number, a
  repeated system name or user label raise :class:`~recmetrics.errors.InputError` naming the
  system and user (an infinite score would make every pair holding it "significant").
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .. import checks
from ..errors import InputError, unknown_name
from ..resampling import bootstrap_weights

ALTERNATIVES = ("two-sided", "greater", "less")
TESTS = ("wilcoxon", "t")

__all__ = ["TestResult", "wilcoxon", "paired_t", "paired_test", "paired_pvalues", "permutation_test", "permutation_pvalues",
           "paired_bootstrap", "tukey_hsd", "correct", "effect_size", "pairwise", "ALTERNATIVES", "TESTS",
           "CORRECTIONS", "PAIRWISE_TESTS"]


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
    a, b = checks.paired(a, b, "paired scores")  # labelled inputs pair by user label
    a = checks.numbers(a, "scores a (first system)")
    b = checks.numbers(b, "scores b (second system)")
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise InputError(f"paired scores must have the same shape, got {a.shape} and {b.shape}") from None
    if a.ndim == 0 or a.shape[axis] == 0:
        raise InputError("paired tests need at least one user")
    checks.finite(a, "scores a (first system)", row_name="row")
    checks.finite(b, "scores b (second system)", row_name="row")
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
    s = checks.score_table(scores, min_systems=1)[1]
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


# ------------------------------------------------------------------------------------------
# Randomisation (permutation), bootstrap and Tukey HSD tests; corrections; effect sizes
# ------------------------------------------------------------------------------------------
CORRECTIONS = ("holm", "bonferroni", "bh")


def _pair_1d(a, b) -> np.ndarray:
    """Paired differences ``a - b`` of two 1-d per-user score arrays (validated; two Series pair
    by user label)."""
    a, b = checks.paired(a, b, "paired scores")
    a = checks.numbers(a, "scores a (first system)")
    b = checks.numbers(b, "scores b (second system)")
    if a.ndim != 1 or b.ndim != 1:
        raise InputError(f"paired scores must be 1-d arrays (one value per user), got shapes {a.shape} and {b.shape}")
    if a.shape != b.shape:
        raise InputError(f"paired scores must have the same length (one value per user), got {len(a)} and {len(b)}")
    _pair(a, b)  # NaN and empty checks
    return a - b


def _check_b(n, what: str = "n_permutations") -> int:
    return checks.positive_int(n, what)


def permutation_test(a, b, alternative: str = "two-sided", *, n_permutations: int = 100_000, seed: int = 0,
                     exact: bool | None = None) -> TestResult:
    """Fisher's randomisation test of the paired difference in means ``mean(a - b)``.

    Exact enumeration of all ``2**n`` sign flips when n ≤ 20 users (``exact=None``), Monte Carlo
    with ``n_permutations`` seeded sign vectors otherwise, ``p = (b+1)/(B+1)``. Same machinery
    and same sign vectors as :func:`recmetrics.meta.discriminative.discriminative_power`
    (:func:`~recmetrics.meta.discriminative.sign_flip_pvalues`), so a pair tested here gets exactly
    the p-value it gets there. Checked against ``scipy.stats.permutation_test`` (paired,
    ``permutation_type="samples"``). The statistic is the mean difference.
    """
    from .discriminative import sign_flip_pvalues

    alternative = _alternative(alternative)
    d = _pair_1d(a, b)
    n_permutations = _check_b(n_permutations)
    seed = checks.seed(seed)
    x = np.vstack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)])
    p = sign_flip_pvalues(x, [0], [1], n_permutations=n_permutations, seed=seed,
                          alternative=alternative, exact=exact)[0]
    return TestResult(float(d.mean()), float(p), "permutation", alternative)


def paired_bootstrap(a, b, alternative: str = "two-sided", *, n_bootstrap: int = 10_000,
                     seed: int = 0) -> TestResult:
    """Sakai's paired bootstrap test (Sakai 2006, SIGIR; paper 003 ref. [32]).

    ``z = a - b``; the observed studentised statistic ``t(z) = mean(z) / (sd(z)/sqrt(n))``; the
    null is imposed by shifting ``w = z - mean(z)``; bootstrap samples ``w*`` (users drawn with
    replacement, ``n_bootstrap`` times, seeded) give ``t(w*)``; the achieved significance level
    counts ``|t(w*)| >= |t(z)|`` (one-sided: ``t(w*) >= t(z)`` / ``<=``). Reported as
    ``p = (b+1)/(B+1)`` (Sakai reports ``b/B``; the +1 keeps p > 0 like the randomisation test).
    Resamples with zero variance get ``t = 0``. All-zero differences give p = 1.
    """
    alternative = _alternative(alternative)
    z = _pair_1d(a, b)
    n_bootstrap = _check_b(n_bootstrap, "n_bootstrap")
    seed = checks.seed(seed)
    n = len(z)
    if not np.any(z) or n < 2:
        return TestResult(0.0, 1.0, "bootstrap", alternative)
    if not np.any(z != z[0]):  # constant non-zero differences: t = ±inf, every null resample has t = 0
        t_inf = float(np.sign(z[0]) * np.inf)
        hit = alternative == "two-sided" or (alternative == "greater") == (z[0] > 0)
        return TestResult(t_inf, 1.0 / (n_bootstrap + 1) if hit else 1.0, "bootstrap", alternative)
    sd = z.std(ddof=1)
    t_obs = z.mean() / (sd / np.sqrt(n))
    w = z - z.mean()
    count = 0
    chunk = max(1, int(4e6 // n))
    for W in bootstrap_weights(n, n_bootstrap, seed, chunk):
        m = W @ w / n
        var = (W @ (w * w) - n * m * m) / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(var > 0, m / np.sqrt(np.maximum(var, 0) / n), 0.0)
        if alternative == "two-sided":
            count += int(np.sum(np.abs(t) >= abs(t_obs) * (1 - 1e-12)))
        elif alternative == "greater":
            count += int(np.sum(t >= t_obs - 1e-12 * abs(t_obs)))
        else:
            count += int(np.sum(t <= t_obs + 1e-12 * abs(t_obs)))
    return TestResult(float(t_obs), float((count + 1) / (n_bootstrap + 1)), "bootstrap", alternative)


def _systems_frame(scores, what: str = "scores"):
    """(frame, float64 values) of a validated systems × users table (:func:`recmetrics.checks.score_table`)."""
    return checks.score_table(scores, what)


def tukey_hsd(scores, *, n_permutations: int = 10_000, seed: int = 0):
    """Randomised Tukey HSD over all systems at once (Carterette 2012, TOIS; Sakai 2014).

    ``scores``: systems × users (DataFrame or array). Each permutation shuffles, independently for
    every user, the user's scores among the systems, and records ``max - min`` of the permuted
    system means; pair ``(i, j)`` gets ``p = (#{max - min >= |mean_i - mean_j|} + 1) / (B + 1)``,
    which controls the family-wise error over all pairs. Returns a DataFrame ``a, b, diff, p``
    (``diff = mean_a - mean_b``; one row per unordered pair, ``a`` before ``b`` in input order).
    """
    import pandas as pd

    frame, x = _systems_frame(scores)
    n_permutations = _check_b(n_permutations)
    seed = checks.seed(seed)
    m, n = x.shape
    means = x.mean(axis=1)
    xt = np.ascontiguousarray(x.T)                                # (n_users, m)
    rng = np.random.default_rng(seed)
    chunk = max(1, int(4e6 // (n * m)))
    ranges = []
    done = 0
    while done < n_permutations:
        k = min(chunk, n_permutations - done)
        perm = rng.permuted(np.broadcast_to(xt, (k, n, m)), axis=2)   # per-user shuffle of systems
        pm = perm.mean(axis=1)                                         # (k, m) permuted means
        ranges.append(pm.max(axis=1) - pm.min(axis=1))
        done += k
    ranges = np.sort(np.concatenate(ranges))
    iu, ju = np.triu_indices(m, k=1)
    obs = np.abs(means[iu] - means[ju])
    tol = 1e-12 * np.maximum(np.abs(means).max(), 1e-300)
    b = len(ranges) - np.searchsorted(ranges, obs - tol, side="left")
    return pd.DataFrame({"a": frame.index[iu], "b": frame.index[ju], "diff": means[iu] - means[ju],
                         "p": (b + 1.0) / (n_permutations + 1.0)})


def correct(pvalues, method: str | None = "holm") -> np.ndarray:
    """Multiple-comparison adjusted p-values: ``"bonferroni"``, ``"holm"`` (step-down, FWER) or
    ``"bh"`` (Benjamini-Hochberg step-up, FDR); ``None`` returns the p-values unchanged.

    Same values as ``scipy.stats.false_discovery_control(p, method="bh")`` and statsmodels'
    ``multipletests`` (``holm``, ``bonferroni``, ``fdr_bh``); adjusted values are capped at 1.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    shape = p.shape
    p = p.ravel()
    if np.isnan(p).any() or np.any((p < 0) | (p > 1)):
        raise InputError("p-values must be in [0, 1] without NaN")
    if method is None:
        return p.reshape(shape).copy()
    if method not in CORRECTIONS:
        raise unknown_name("correction", str(method), CORRECTIONS)
    m = len(p)
    if m == 0:
        return p.reshape(shape)
    if method == "bonferroni":
        return np.minimum(p * m, 1.0).reshape(shape)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    ranks = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(ps * (m - ranks + 1), 1.0))
    else:  # bh
        adj = np.minimum.accumulate((ps * m / ranks)[::-1])[::-1]
        adj = np.minimum(adj, 1.0)
    out = np.empty(m)
    out[order] = adj
    return out.reshape(shape)


def effect_size(a, b, *, n_bootstrap: int = 10_000, confidence: float = 0.95, seed: int = 0):
    """Effect size of ``a`` over ``b``: mean difference with a percentile-bootstrap CI (users drawn
    with replacement, seeded) and Cohen's ``d_z = mean(d) / sd(d)`` (paired, ``ddof=1``; 0 when
    every difference is 0, ±inf when they are all equal and non-zero). One-row DataFrame with
    columns ``mean_diff, ci_low, ci_high, d_z``."""
    import pandas as pd

    d = _pair_1d(a, b)
    n_bootstrap = _check_b(n_bootstrap, "n_bootstrap")
    seed = checks.seed(seed)
    if not 0 < float(confidence) < 1:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")
    n = len(d)
    means = np.concatenate([W @ d / n for W in bootstrap_weights(n, n_bootstrap, seed, max(1, int(4e6 // n)))])
    lo, hi = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    sd = d.std(ddof=1) if n > 1 else 0.0
    mean = d.mean()
    dz = 0.0 if mean == 0 else (float(np.sign(mean) * np.inf) if sd == 0 else mean / sd)
    return pd.DataFrame({"mean_diff": [mean], "ci_low": [lo], "ci_high": [hi], "d_z": [dz]})


PAIRWISE_TESTS = ("permutation", "t", "wilcoxon", "bootstrap", "tukey")


def pairwise(scores, *, test: str = "permutation", correction: str | None = "holm", baseline=None,
             alternative: str = "two-sided", n_permutations: int = 100_000, seed: int = 0, pvalues=None):
    """Test pairs of systems of one metric; ``scores`` systems × users (DataFrame).

    ``baseline=None``: all unordered pairs (``a`` before ``b`` in input order); else the baseline
    (an index label) against every other system (``a`` = baseline). Returns a DataFrame ``a, b,
    mean_a, mean_b, diff, p, p_adj, d_z``. ``test``: ``"permutation"`` (one product for all pairs,
    :func:`~recmetrics.meta.discriminative.sign_flip_pvalues`), ``"t"``, ``"wilcoxon"``,
    ``"bootstrap"`` (Sakai, B = ``n_permutations``) or ``"tukey"`` (randomised HSD; already
    family-wise, so ``p_adj = p`` whatever the correction). ``correction`` over the tested pairs.
    ``pvalues``: the permutation test's p-values of these pairs, already computed (with these
    ``n_permutations``, ``seed`` and ``alternative``: :func:`permutation_pvalues` of several metrics at once).
    """
    import pandas as pd

    from .discriminative import sign_flip_pvalues

    if test not in PAIRWISE_TESTS:
        raise unknown_name("test", str(test), PAIRWISE_TESTS)
    if correction is not None and correction not in CORRECTIONS:
        raise unknown_name("correction", str(correction), CORRECTIONS)
    alternative = _alternative(alternative)
    frame, x = _systems_frame(scores)
    n_permutations = _check_b(n_permutations)
    seed = checks.seed(seed)
    names = list(frame.index)
    if baseline is None:
        ia, ib = np.triu_indices(len(names), k=1)
    else:
        if baseline not in names:
            raise unknown_name("baseline system", str(baseline), map(str, names))
        i0 = names.index(baseline)
        ib = np.array([j for j in range(len(names)) if j != i0], dtype=np.intp)
        ia = np.full(len(ib), i0, dtype=np.intp)
    if test == "permutation":
        p = sign_flip_pvalues(x, ia, ib, n_permutations=n_permutations, seed=seed, alternative=alternative) \
            if pvalues is None else np.asarray(pvalues, dtype=np.float64)
        if p.shape != ia.shape or not np.all((p > 0) & (p <= 1)):
            raise InputError(f"pvalues must be {len(ia)} p-values in (0, 1], one per tested pair of {names}; "
                             f"got shape {p.shape}")
    elif test in ("t", "wilcoxon"):
        p = np.atleast_1d(paired_test(x[ia], x[ib], test, alternative).pvalue).astype(np.float64)
    elif test == "bootstrap":
        p = np.array([paired_bootstrap(x[i], x[j], alternative, n_bootstrap=n_permutations, seed=seed).pvalue
                      for i, j in zip(ia, ib)])
    else:
        if alternative != "two-sided":
            raise InputError("the randomised Tukey HSD test is two-sided only")
        hsd = tukey_hsd(frame, n_permutations=n_permutations, seed=seed)
        lookup = {(a, b): p for a, b, p in zip(hsd.a, hsd.b, hsd.p)}
        p = np.array([lookup.get((names[i], names[j]), lookup.get((names[j], names[i])))
                      for i, j in zip(ia, ib)])
    d = x[ia] - x[ib]
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1) if x.shape[1] > 1 else np.zeros(len(ia))
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(mean == 0, 0.0, mean / sd)
    means = x.mean(axis=1)
    p_adj = p.copy() if test == "tukey" else correct(p, correction)
    return pd.DataFrame({"a": [names[i] for i in ia], "b": [names[j] for j in ib], "mean_a": means[ia],
                         "mean_b": means[ib], "diff": mean, "p": p, "p_adj": p_adj, "d_z": dz})


def permutation_pvalues(frames: list, baseline=None, *, alternative: str = "two-sided", n_permutations: int = 100_000,
                        seed: int = 0) -> list | None:
    """The permutation test's p-values of the pairs :func:`pairwise` tests, for several systems × users
    frames at once (one metric each): one stacked :func:`~recmetrics.meta.discriminative.sign_flip_pvalues`
    whose sign vectors every frame shares, so each frame's p-values are those :func:`pairwise` computes
    alone, bit for bit, for one sign matrix instead of one per frame. ``None`` when the frames do not have
    the same systems and users in the same order (then each is tested alone)."""
    from .discriminative import sign_flip_pvalues

    parts = [_systems_frame(f) for f in frames]
    if not parts:
        return []
    first = parts[0][0]
    if any(not f.index.equals(first.index) or not f.columns.equals(first.columns) for f, _ in parts):
        return None
    names = list(first.index)
    if baseline is None:
        ia, ib = np.triu_indices(len(names), k=1)
    else:
        i0 = names.index(baseline)
        ib = np.array([j for j in range(len(names)) if j != i0], dtype=np.intp)
        ia = np.full(len(ib), i0, dtype=np.intp)
    offsets = np.arange(len(parts)) * len(names)
    p = sign_flip_pvalues(np.vstack([x for _, x in parts]), (offsets[:, None] + ia).ravel(),
                          (offsets[:, None] + ib).ravel(), n_permutations=_check_b(n_permutations),
                          seed=checks.seed(seed), alternative=_alternative(alternative))
    return list(p.reshape(len(parts), len(ia)))
