"""Discriminative power of a metric: paired randomisation (sign-flip) tests for every pair of systems.

Papers: 000 §4.1 (discriminative power over the 210 pairs of 21 recommenders) and 003 (Sakai's
discriminative power: the p-values of all system pairs, sorted, form the *p-value curve*; a metric
whose curve lies lower tells more pairs apart).

Machinery (:func:`sign_flip_pvalues`)
-------------------------------------
Fisher's randomisation test of a paired difference in means flips the sign of each user's
difference ``x_a[u] - x_b[u]`` at random. With one sign vector ``s`` the permuted statistic of pair
``(a, b)`` is ``sum_u s_u (x_a[u] - x_b[u]) = (s @ x_a) - (s @ x_b)``: the difference of two
*systems'* permuted sums. So one float64 matrix product ``signs @ scores.T`` per chunk of
permutations gives every system's permuted sum (21 columns, not 210 pair columns), and every pair's
permuted difference is the difference of two columns. All metrics' columns are stacked in the same
product, so every metric and every pair sees the same sign vectors.

* The sign matrix depends on the seed only: permutations come in fixed blocks of
  :data:`BLOCK` rows, block ``k`` drawn from ``numpy.random.default_rng([seed, k])`` (one random
  bit per user, ``1`` = keep, ``0`` = flip). A chunk is a whole number of blocks, so p-values do
  not depend on the chunk size nor on which metrics/systems are tested together.
* Using 0/1 bits ``t`` instead of ±1 signs: ``s = 2t - 1`` so ``s @ x = 2 (t @ x) - sum(x)``.
  The observed statistic (all signs +1) is ``sum(x_a) - sum(x_b)``.
* Ties: a permuted difference counts as "at least as extreme" when
  ``|perm| >= |obs| - tol`` with ``tol = 1e-9 * (sum|x_a| + sum|x_b|)`` (one-sided: ``perm >= obs -
  tol`` / ``perm <= obs + tol``). Rounding of a float64 sum over n users is below
  ``n * 2.2e-16`` of that scale (1.3e-12 at 6,040 users), so exact ties — frequent with discrete
  scores such as P@10 — are never lost to rounding, while genuinely different sums are never merged.
  scipy's ``permutation_test`` uses the same idea (a relative ``eps`` tolerance).
* Monte Carlo: ``p = (b + 1) / (B + 1)`` with ``b`` the number of the ``B`` random sign vectors at
  least as extreme (Phipson & Smyth; the same estimator as scipy's ``permutation_test``).
  Exact: with ≤ ``exact_max_users`` (20) users, all ``2**n`` sign vectors are enumerated and
  ``p = b / 2**n`` (the identity is one of them, so ``p > 0``).

Checked against ``scipy.stats.permutation_test(..., permutation_type="samples")`` with the mean
difference as statistic: equal on exact enumeration, within Monte Carlo error otherwise
(``tests/test_discriminative.py``).

Uncertainty of DP (:attr:`DiscriminativePower.dp_se`, :attr:`~DiscriminativePower.at_floor`)
------------------------------------------------------------------------------------------
A Monte Carlo p-value has variance ``p (1 − p) / B``, so DP = Σ p has the standard error
``sqrt(Σ p (1 − p) / B)`` (pairs taken as independent; they share the sign vectors, so this is a
reading, not a bound). A pair whose observed difference no sign vector reaches gets the smallest
p the test can give, ``1 / (B + 1)``: when every pair of a metric is there, its DP is the *Monte
Carlo floor* ``n_pairs / (B + 1)`` and says only "at least this discriminative" — two metrics at
the floor cannot be ordered (2,000 permutations × 15 pairs floor DP at 0.0075). Exact enumeration
has no Monte Carlo error (``dp_se = 0``).

Pooling folds (an open choice)
------------------------------
With k-fold cross-validation a user is tested in several folds. :meth:`Study.scores
<recmetrics.study.Study.scores>` offers ``pool="concat"`` (each (fold, user) is a unit: about k
times as many paired units; the default) and ``pool="mean"`` (each user's scores averaged over the
folds: one unit per user). Paper 000 (§4.1, §5) runs 5-fold cross-validation but does not say which
it used. The choice moves DP a lot — ``concat`` roughly doubles the number of paired units (F1's DP
0.072 with ``concat``, 0.126 with ``mean``: chapter 06's quick profile, movielens-small, 6 systems,
2 folds, 2,000 permutations) — so the chapters run both, and a claim whose verdict flips with it is
``inconclusive`` (:func:`recmetrics.papers.assess_choices`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from .. import checks
from ..checks import finite
from ..errors import InputError, unknown_name

__all__ = ["DiscriminativePower", "discriminative_power", "sign_flip_pvalues", "sign_blocks", "BLOCK",
           "EXACT_MAX_USERS", "TIE_RTOL"]

BLOCK = 256               # permutations per seeded block (the unit of reproducibility)
EXACT_MAX_USERS = 20      # exact enumeration (2**n sign vectors) up to this many users
TIE_RTOL = 1e-9           # relative tolerance for float ties, see the module docstring
ALTERNATIVES = ("two-sided", "greater", "less")
_CHUNK_BYTES = 48 * 2**20  # float64 sign chunk budget


def _block_bits(seed: int, k: int, n_users: int) -> np.ndarray:
    """Block ``k`` of the random 0/1 sign matrix: (BLOCK, n_users) uint8, from the seed only."""
    rng = np.random.default_rng([int(seed), int(k)])
    row_bytes = (n_users + 7) // 8
    raw = np.frombuffer(rng.bytes(BLOCK * row_bytes), dtype=np.uint8).reshape(BLOCK, row_bytes)
    return np.unpackbits(raw, axis=1, count=n_users)


def sign_blocks(n_users: int, n_permutations: int, seed: int = 0, chunk_size: int | None = None,
                dtype=np.float64, *, reuse: bool = False, block_range: tuple[int, int] | None = None):
    """Yield the 0/1 sign matrix (1 = keep the user's difference, 0 = flip it) in chunks of rows.

    Monte Carlo only. The concatenation of the chunks is the same for every ``chunk_size`` (rounded
    up to a multiple of :data:`BLOCK`): it depends on ``seed``, ``n_users`` and ``n_permutations``.
    ``reuse=True`` yields views of one buffer overwritten at each step (the fast path: no fresh
    pages per chunk); copy a chunk if you keep it. ``block_range=(first, stop)`` yields only blocks
    ``first..stop-1`` (a worker's share; shares concatenate to the whole matrix).
    """
    if chunk_size is None:
        chunk_size = max(BLOCK, _CHUNK_BYTES // (8 * max(n_users, 1)))
    blocks_per_chunk = max(1, -(-int(chunk_size) // BLOCK))
    n_blocks = -(-n_permutations // BLOCK)
    first, stop = (0, n_blocks) if block_range is None else (int(block_range[0]), min(int(block_range[1]), n_blocks))
    buf = np.empty((blocks_per_chunk * BLOCK, n_users), dtype=dtype)
    for start in range(first, stop, blocks_per_chunk):
        if not reuse and start:
            buf = np.empty_like(buf)
        ks = range(start, min(start + blocks_per_chunk, stop))
        for r, k in enumerate(ks):
            buf[r * BLOCK:(r + 1) * BLOCK] = _block_bits(seed, k, n_users)
        yield buf[:min(n_permutations - ks[0] * BLOCK, len(ks) * BLOCK)]


def _exact_blocks(n_users: int, chunk_size: int, dtype=np.float64, row_range: tuple[int, int] | None = None):
    """All ``2**n_users`` 0/1 sign vectors, in chunks (row ``i`` = binary digits of ``i``)."""
    first, stop = (0, 1 << n_users) if row_range is None else row_range
    shifts = np.arange(n_users, dtype=np.int64)
    for start in range(first, stop, chunk_size):
        idx = np.arange(start, min(start + chunk_size, stop), dtype=np.int64)
        yield ((idx[:, None] >> shifts) & 1).astype(dtype)


def _check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise unknown_name("alternative", str(alternative), ALTERNATIVES)
    return alternative


def _check_matrix(x, what: str = "scores") -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"{what} must be a (n_systems, n_users) matrix, got shape {x.shape}")
    if x.shape[1] < 1:
        raise InputError(f"{what} need at least one user")
    finite(x, what, row_name="system row", col_name="user column")
    return x


def sign_flip_pvalues(x, ia, ib, *, n_permutations: int = 100_000, seed: int = 0,
                      alternative: str = "two-sided", exact: bool | None = None,
                      chunk_size: int | None = None, dtype=np.float64, n_jobs: int | None = 1) -> np.ndarray:
    """Paired randomisation-test p-values of ``mean(x[ia] - x[ib])`` for many pairs at once.

    ``x``: (n_columns, n_users) scores (systems of one or several metrics stacked as rows);
    ``ia``, ``ib``: row indices of each pair. One product ``signs @ x.T`` per chunk serves all
    pairs. ``exact=None`` enumerates all ``2**n`` sign vectors when n ≤ 20 users. ``dtype``
    exists for the float32-vs-float64 benchmark only; keep float64. ``n_jobs``: split the sign
    matrix into contiguous shares counted by joblib workers (threads by default; inside
    ``joblib.parallel_backend("dask")`` they run on a Dask cluster) — counts add up, so the
    p-values are identical for any ``n_jobs``. BLAS already uses every core for one product, so
    ``n_jobs > 1`` helps only with more machines/cores than one product can use.
    """
    alternative = _check_alternative(alternative)
    x = _check_matrix(x)
    ia = np.asarray(ia, dtype=np.intp)
    ib = np.asarray(ib, dtype=np.intp)
    if ia.shape != ib.shape or ia.ndim != 1:
        raise InputError("ia and ib must be 1-d index arrays of the same length")
    for what, idx in (("ia", ia), ("ib", ib)):
        if len(idx) and (idx.min() < 0 or idx.max() >= x.shape[0]):
            raise InputError(f"{what} holds a row index outside 0..{x.shape[0] - 1} (the rows of the scores)")
    n_perm = checks.positive_int(n_permutations, "n_permutations")
    seed = checks.seed(seed)
    n_jobs = checks.n_jobs(n_jobs)
    if chunk_size is not None:
        chunk_size = checks.positive_int(chunk_size, "chunk_size")
    n_users = x.shape[1]
    if exact is None:
        exact = n_users <= EXACT_MAX_USERS
    if exact and n_users > 30:
        raise InputError(f"exact enumeration of 2**{n_users} sign vectors is infeasible; use Monte Carlo")
    xt = np.ascontiguousarray(x.T, dtype=dtype)                # (n_users, n_columns)
    total = x.sum(axis=1)                                       # float64 sums (= observed, s = +1)
    obs = total[ia] - total[ib]
    absx = np.abs(x).sum(axis=1)
    tol = TIE_RTOL * (absx[ia] + absx[ib])
    if alternative == "two-sided":
        thr = (np.abs(obs) - tol)[:, None]
    elif alternative == "greater":
        thr = (obs - tol)[:, None]
    else:
        thr = (obs + tol)[:, None]
    total_d = total.astype(dtype)[:, None]
    if chunk_size is None:  # sign chunk and the two (pairs × chunk) work buffers within ~48 MB each
        chunk_size = max(BLOCK, min(_CHUNK_BYTES // (8 * n_users), _CHUNK_BYTES // (8 * max(len(ia), 1))))
    if n_jobs == 1:
        counts = _count(xt, ia, ib, thr, total_d, alternative, exact, n_users, n_perm, seed, chunk_size, dtype, None)
    else:  # contiguous shares of the sign matrix, one per task; counts add up to the 1-worker counts
        try:
            from joblib import Parallel, delayed
        except ImportError:  # pragma: no cover - joblib ships with the [models] extra
            raise InputError("n_jobs != 1 needs joblib (pip install 'recmetrics-eval[models]')") from None

        n_units = (1 << n_users) if exact else -(-n_perm // BLOCK)
        n_tasks = max(1, min(abs(n_jobs) if n_jobs > 0 else 8, n_units))
        edges = np.linspace(0, n_units, n_tasks + 1).astype(np.int64)
        parts = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_count)(xt, ia, ib, thr, total_d, alternative, exact, n_users, n_perm, seed, chunk_size,
                            dtype, (int(lo), int(hi))) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo)
        counts = np.sum(parts, axis=0)
    if exact:
        return counts / float(1 << n_users)
    return (counts + 1.0) / (n_perm + 1.0)


def _count(xt, ia, ib, thr, total_d, alternative, exact, n_users, n_perm, seed, chunk_size, dtype, share):
    """Count, for each pair, the sign vectors of ``share`` (rows when exact, blocks otherwise; None =
    all) whose permuted difference is at least as extreme as the observed one."""
    counts = np.zeros(len(ia), dtype=np.int64)
    if exact:
        blocks = _exact_blocks(n_users, int(chunk_size), dtype, share)
    else:
        blocks = sign_blocks(n_users, n_perm, seed, chunk_size, dtype, reuse=True, block_range=share)
    bufs = {}
    for bits in blocks:
        k = bits.shape[0]
        if bufs.get("k") != k:  # (re)allocate the work buffers once per chunk shape
            bufs = {"k": k, "p": np.empty((k, xt.shape[1]), dtype), "s": np.empty((xt.shape[1], k), dtype),
                    "a": np.empty((len(ia), k), dtype), "b": np.empty((len(ia), k), dtype),
                    "hit": np.empty((len(ia), k), bool)}
        prod, sums, da, db, hit = bufs["p"], bufs["s"], bufs["a"], bufs["b"], bufs["hit"]
        np.matmul(bits, xt, out=prod)                           # (chunk, n_columns): THE product
        sums[...] = prod.T                                      # system-major for the pair gathers
        sums *= 2
        sums -= total_d                                         # s @ x with s = 2 t - 1
        np.take(sums, ia, axis=0, out=da, mode="clip")           # indices checked by the caller;
        np.take(sums, ib, axis=0, out=db, mode="clip")           # "raise" with out= copies twice
        np.subtract(da, db, out=da)                             # permuted pair differences
        if alternative == "two-sided":
            np.abs(da, out=da)
            np.greater_equal(da, thr, out=hit)
        elif alternative == "greater":
            np.greater_equal(da, thr, out=hit)
        else:
            np.less_equal(da, thr, out=hit)
        counts += np.count_nonzero(hit, axis=1)
    return counts


@dataclass(frozen=True)
class DiscriminativePower:
    """Result of :func:`discriminative_power` for one metric.

    ``pvalues``: DataFrame ``a, b, p`` (one row per unordered pair, ``a`` before ``b`` in the input
    order); ``dp``: sum of the p-values = area under the p-value curve (Sakai; lower = more
    discriminative); ``curve``: the sorted p-values; ``share_significant``: share of pairs with
    ``p < alpha``; ``median_p``; ``n_permutations``: sign vectors used (``2**n_users`` when exact).
    ``dp_se``, ``floor``, ``dp_floor`` and ``at_floor``: the Monte Carlo uncertainty of ``dp``
    (module docstring).
    """

    pvalues: pd.DataFrame
    dp: float
    curve: np.ndarray = field(repr=False)
    share_significant: float
    median_p: float
    alpha: float
    n_permutations: int
    exact: bool
    alternative: str
    seed: int

    @property
    def n_pairs(self) -> int:
        return len(self.pvalues)

    @property
    def dp_se(self) -> float:
        """Monte Carlo standard error of :attr:`dp`: ``sqrt(Σ p (1 − p) / B)`` (0 when exact)."""
        if self.exact:
            return 0.0
        p = np.asarray(self.pvalues["p"], dtype=np.float64)
        return float(np.sqrt(np.sum(p * (1.0 - p)) / self.n_permutations))

    @property
    def floor(self) -> float:
        """The smallest p-value the test can give: ``1 / (B + 1)`` (Monte Carlo), ``1 / 2**n`` (exact)."""
        return 1.0 / self.n_permutations if self.exact else 1.0 / (self.n_permutations + 1.0)

    @property
    def dp_floor(self) -> float:
        """The smallest DP the test can give: every pair at :attr:`floor`."""
        return self.n_pairs * self.floor

    @property
    def at_floor(self) -> bool:
        """Whether every pair's p-value is at :attr:`floor` (DP then only bounds the metric's power).

        >>> import pandas as pd
        >>> r = DiscriminativePower(pd.DataFrame({"a": [0, 0], "b": [1, 2], "p": [1 / 2001, 1 / 2001]}),
        ...                         2 / 2001, None, 1.0, 1 / 2001, 0.05, 2000, False, "two-sided", 0)
        >>> r.at_floor, round(r.dp_se, 6)
        (True, 0.000707)
        """
        p = np.asarray(self.pvalues["p"], dtype=np.float64)
        return bool(len(p)) and bool(np.all(p <= self.floor * (1 + 1e-9)))


def _as_frame(scores, what: str) -> pd.DataFrame:
    """A validated systems × users frame (:func:`recmetrics.checks.score_table`)."""
    return checks.score_table(scores, what)[0]


def discriminative_power(scores, n_permutations: int = 100_000, seed: int = 0,
                         alternative: str = "two-sided", alpha: float = 0.05, *,
                         exact: bool | None = None, chunk_size: int | None = None, n_jobs: int | None = 1,
                         metric: str | None = None, cutoff: int | None = None, pool: str = "concat"):
    """Sakai's discriminative power from paired randomisation tests of every pair of systems.

    ``scores``: systems × users DataFrame (index = system names; users paired by column), or a dict
    ``{metric: DataFrame}`` with the same systems and users (columns are aligned by label), which
    returns ``{metric: DiscriminativePower}`` computed from the *same* sign vectors in one stacked
    product. Exact enumeration when ≤ 20 users (``exact=None``), else ``n_permutations`` Monte
    Carlo sign vectors, ``p = (b+1)/(B+1)``. Same ``seed`` ⇒ identical p-values whatever the
    ``chunk_size``, the number of workers ``n_jobs`` and whichever metrics are computed together.

    ``scores`` may also be a :class:`~recmetrics.study.Study`: with ``metric`` (e.g. ``"nDCG@100"``,
    or ``metric="nDCG", cutoff=100``) its systems × users scores of that metric, else every metric
    of the study at ``cutoff`` (the study's only cut-off when it has one) as a dict; ``pool`` says
    how folds are pooled (:meth:`Study.scores`: ``"concat"`` pairs (fold, user) units, the default;
    ``"mean"`` averages each user over its folds). Paper 000 does not say which it used: it is an
    open choice that moves DP (module docstring, "Pooling folds").
    """
    if hasattr(scores, "all_scores") and hasattr(scores, "cube"):  # a Study
        study = scores  # it reports a metric or cut-off it does not have
        scores = study.scores(metric, cutoff, pool) if metric is not None else study.all_scores(cutoff, pool)
    elif metric is not None or cutoff is not None:
        raise InputError("metric= and cutoff= select from a Study; with a DataFrame or dict pass the scores themselves")
    alternative = _check_alternative(alternative)
    if not 0 < float(alpha) < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    single = not isinstance(scores, Mapping)
    by_metric = {None: scores} if single else dict(scores)
    if not by_metric:
        raise InputError("no metrics given (empty dict of scores)")
    frames = {m: _as_frame(f, "scores" if m is None else f"metric {m!r}") for m, f in by_metric.items()}
    first_name, first = next(iter(frames.items()))
    for m, f in frames.items():
        if f.index.equals(first.index) and f.columns.equals(first.columns):
            continue                          # the same labels in the same order (a Study's scores): nothing to align
        if set(f.index) != set(first.index):
            raise InputError(f"metric {m!r} has systems {sorted(map(str, f.index))}, expected the same "
                             f"systems as {first_name!r}: {sorted(map(str, first.index))}")
        if len(f.columns) != len(first.columns) or set(f.columns) != set(first.columns):
            missing = sorted(map(str, set(first.columns) - set(f.columns)))[:5]
            raise InputError(f"metric {m!r} does not have the same users as {first_name!r} "
                             f"(missing e.g. {missing}); users must be paired across metrics")
    systems = list(first.index)
    users = list(first.columns)
    blocks = [(f if f.index.equals(first.index) and f.columns.equals(first.columns) else f.loc[systems, users])
              .to_numpy(dtype=np.float64) for f in frames.values()]
    for m, b in zip(frames, blocks):
        _check_matrix(b, "scores" if m is None else f"scores of metric {m!r}")
    x = np.vstack(blocks)
    n_sys = len(systems)
    iu, ju = np.triu_indices(n_sys, k=1)
    offsets = np.arange(len(blocks)) * n_sys
    ia = (offsets[:, None] + iu[None, :]).ravel()
    ib = (offsets[:, None] + ju[None, :]).ravel()
    is_exact = (len(users) <= EXACT_MAX_USERS) if exact is None else bool(exact)
    p = sign_flip_pvalues(x, ia, ib, n_permutations=n_permutations, seed=seed, alternative=alternative,
                          exact=is_exact, chunk_size=chunk_size, n_jobs=n_jobs).reshape(len(blocks), len(iu))
    names_a = [systems[i] for i in iu]
    names_b = [systems[j] for j in ju]
    out = {}
    for m, pm in zip(frames, p):
        curve = np.sort(pm)
        out[m] = DiscriminativePower(
            pvalues=pd.DataFrame({"a": names_a, "b": names_b, "p": pm}),
            dp=float(pm.sum()), curve=curve, share_significant=float(np.mean(pm < alpha)),
            median_p=float(np.median(pm)), alpha=float(alpha),
            n_permutations=(1 << len(users)) if is_exact else int(n_permutations),
            exact=is_exact, alternative=alternative, seed=int(seed))
    return out[None] if single else out
