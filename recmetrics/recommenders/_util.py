"""Shared helpers of the recommender zoo: hyper-parameter validation and sparse kNN graphs.

Everything here works on whole matrices (or chunks of rows): no loop per user-item pair.
"""
from __future__ import annotations

import numbers
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..data.run import top_columns
from ..errors import InputError

#: dense floats materialised at once by the chunked helpers (bounds memory to ~160 MB of float64)
CHUNK_CELLS = 20_000_000


# ---------------------------------------------------------------------------------- validation
def check_int(owner: str, name: str, value, lo: int = 1) -> int:
    """``value`` as an int >= ``lo``, else an :class:`InputError` naming the hyper-parameter."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{owner}: hyper-parameter {name} must be an integer >= {lo}, "
                         f"got {type(value).__name__} {value!r}")
    if value < lo:
        raise InputError(f"{owner}: hyper-parameter {name} must be an integer >= {lo}, got {value}")
    return int(value)


def check_float(owner: str, name: str, value, lo: float = 0.0, hi: float | None = None, *,
                lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a finite float in the interval, else an :class:`InputError` naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise InputError(f"{owner}: hyper-parameter {name} must be a finite number, got {value!r}")
    v = float(value)
    bad_lo = v <= lo if lo_open else v < lo
    bad_hi = hi is not None and (v >= hi if hi_open else v > hi)
    if bad_lo or bad_hi:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        rng = f"{left}{lo:g}, {'inf' if hi is None else format(hi, 'g')}{right}"
        raise InputError(f"{owner}: hyper-parameter {name} must lie in {rng}, got {value!r}")
    return v


def check_choice(owner: str, name: str, value, choices) -> str:
    if value not in choices:
        raise InputError(f"{owner}: hyper-parameter {name} must be one of {list(choices)}, got {value!r}")
    return value


def single_thread_blas():
    """Context limiting BLAS to one thread (``threadpoolctl``; a no-op when it is missing).

    Used around loops of small matrix products, where BLAS threads only add overhead, and around
    ``implicit``, which asks for it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn/implicit
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, "blas")


def binary(R: sp.csr_matrix, dtype=np.float64) -> sp.csr_matrix:
    """The 0/1 pattern of ``R`` (explicit zeros removed)."""
    B = R.copy().astype(dtype)
    B.eliminate_zeros()
    B.data[:] = 1.0
    return B


def row_normalise(X: sp.spmatrix, order: int = 1) -> sp.csr_matrix:
    """Rows scaled to unit L1 (``order=1``) or L2 (``order=2``) norm (empty rows stay zero)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if order == 1:
        norms = np.asarray(abs(X).sum(axis=1)).ravel()
    else:
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(inv) @ X)


def rows_per_chunk(width: int, cells: int = CHUNK_CELLS) -> int:
    return max(1, cells // max(int(width), 1))


# ---------------------------------------------------------------------------------- kNN graphs
def topk_rows(S: np.ndarray, k: int, *, positive: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` largest entries of every row of a dense matrix as COO triplets (rows, cols, vals).

    ``-inf`` entries are never kept; with ``positive`` only entries > 0 are kept, otherwise only
    non-zero ones. Ties at the k-th value go to the lower column (:func:`~recmetrics.data.run.top_columns`,
    the rule of every top-n list), so a graph is the same on every machine.
    """
    n_rows, n_cols = S.shape
    k = min(k, n_cols)
    if k <= 0 or n_rows == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0)
    if k < n_cols:
        cols = top_columns(S, k)
    else:
        cols = np.broadcast_to(np.arange(n_cols), (n_rows, n_cols))
    vals = np.take_along_axis(S, cols, axis=1)
    keep = (vals > 0) if positive else ((vals != 0) & np.isfinite(vals))
    rows = np.broadcast_to(np.arange(n_rows)[:, None], cols.shape)
    return rows[keep], cols[keep], vals[keep]


def knn_graph(sim_rows: Callable[[np.ndarray], np.ndarray], n: int, k: int, *, positive: bool = True,
              exclude_self: bool = True, n_cols: int | None = None) -> sp.csr_matrix:
    """Sparse ``(n, n_cols)`` matrix keeping, per row, the ``k`` most similar columns.

    ``sim_rows(rows)`` returns the dense similarity rows of the given row indices (shape
    ``(len(rows), n_cols)``). Rows are processed in chunks so memory stays bounded.
    """
    n_cols = n if n_cols is None else n_cols
    step = rows_per_chunk(n_cols)
    R, C, V = [], [], []
    for start in range(0, n, step):
        rows = np.arange(start, min(n, start + step))
        S = np.asarray(sim_rows(rows), dtype=np.float64)
        if exclude_self:
            S[np.arange(len(rows)), rows] = -np.inf
        r, c, v = topk_rows(S, k, positive=positive)
        R.append(r + start)
        C.append(c)
        V.append(v)
    return sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(n, n_cols))


#: largest right-hand operand (cells) :func:`product_rows` densifies (sparse x dense is much
#: faster than sparse x sparse when the product is dense-ish, as item-item similarities are)
DENSE_RHS_CELLS = 30_000_000


#: cells of one column block of a densified right-hand operand (2 MB of float64): each stored entry
#: of a row adds a row of the block, which stays in the cache, instead of a row of the whole operand
#: read from memory
RHS_BLOCK_CELLS = 1 << 18


def product_rows(A: sp.spmatrix, B: sp.spmatrix) -> Callable[[np.ndarray], np.ndarray]:
    """``rows -> (A[rows] @ B)`` as a dense array, with ``B`` densified once when it is small, in
    column blocks of :data:`RHS_BLOCK_CELLS`. Each entry of the product is the same sum in the same
    order whatever the block (the row's stored entries, in order), so the blocks change no bit."""
    A = sp.csr_matrix(A)
    if B.shape[0] * B.shape[1] > DENSE_RHS_CELLS:
        rhs = sp.csc_matrix(B)
        return lambda rows: (A[rows] @ rhs).toarray()
    dense = B.toarray()
    width = max(1, RHS_BLOCK_CELLS // max(dense.shape[0], 1))
    if width >= dense.shape[1]:
        return lambda rows: np.asarray(A[rows] @ dense)
    n_cols, dtype = dense.shape[1], np.result_type(A.dtype, dense.dtype)
    blocks = [(c, np.ascontiguousarray(dense[:, c:c + width])) for c in range(0, n_cols, width)]

    def rows_product(rows: np.ndarray) -> np.ndarray:
        part = A[rows]
        out = np.empty((part.shape[0], n_cols), dtype=dtype)
        for c, block in blocks:
            out[:, c:c + block.shape[1]] = part @ block
        return out

    return rows_product


def cosine_rows(X: sp.spmatrix) -> Callable[[np.ndarray], np.ndarray]:
    """``sim_rows`` for :func:`knn_graph`: cosine similarity between the rows of ``X``."""
    Xn = row_normalise(X, order=2)
    return product_rows(Xn, Xn.T)


def neighbourhoods(X: sp.spmatrix, k: int) -> sp.csr_matrix:
    """The cosine kNN graph of the rows of ``X`` (weights = cosine similarity, self excluded)."""
    return knn_graph(cosine_rows(X), X.shape[0], k)


def below_candidates(scores: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Keep ``scores`` on ``candidates``; put every other item just below the user's worst candidate.

    Used by the pseudo-relevance-feedback models, whose candidate items are those rated in the
    user's neighbourhood: the rest still fill the list (AllItems), after all candidates.
    """
    s = np.where(candidates, scores, np.inf)
    low = np.min(s, axis=1, keepdims=True)
    low = np.where(np.isfinite(low), low, 0.0)
    return np.where(candidates, scores, low - 1.0)
