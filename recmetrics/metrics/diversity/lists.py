r"""The ranked lists as arrays, and the per-aspect cascade every aspect-aware gain is built on.

A kernel cuts the judged lists at ``k`` (:func:`_run_arrays`: the in-list mask and the ratings,
NaN where unrated or past the end of a list), turns the (rows, k) cells into sparse
(cell, aspect) pairs sorted by row, aspect and rank (:class:`ListPairs`, :func:`list_pairs`) and
runs :func:`_cascade` over them: an aspect's state before rank :math:`k` is
:math:`\prod_{j<k}(1 - d_{j\phi})` over the earlier items of the list showing it (``d`` the
metric's per-pair decay), combined per cell as a noisy-or (αβ-nDCG) or a sum (α-nDCG, NRBP,
ERR-IA, EU, RBU). Products are sums of ``log1p`` (exact to rounding, vectorised over all users).

**Cut-off larger than a list**: positions past the end of a list contribute nothing (as in
trec_eval); the ideal still has ``k`` ranks when the user has enough judged items. A cut-off
deeper than the judged matrix raises :class:`~recmetrics.errors.InputError` (``evaluate`` judges
deep enough automatically).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..gains import seg_exclusive
from .aspects import aspect_index
from .params import _check_profile
from .weights import aspect_weights

_P_MAX = 1.0 - 1e-15  # keeps log1p(-p) finite; a factor 1e-15 stands for an exhausted aspect


def discount(n: int) -> np.ndarray:
    r""":math:`1/\log_2(1+j)` for ranks :math:`j = 1..n` (the DCG discount of αβ-nDCG, α-nDCG, nDCG-IA).

    >>> discount(3).round(4).tolist()
    [1.0, 0.6309, 0.5]
    """
    return 1.0 / np.log2(np.arange(2, n + 2))


def row_dot(m: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``m @ w`` of a (rows, k) matrix and a (k,) vector, each row summed on its own: a user's value
    then depends on its own list only (BLAS's matrix-vector product may sum a row in another order
    depending on how many rows there are, moving a value by 1e-16 with the other users).

    >>> row_dot(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, 0.25])).tolist()
    [1.0, 2.5]
    """
    return np.multiply(m, w).sum(axis=1)


def _run_arrays(j, k):
    """Cut-off, in-list mask and labels (NaN past the end of a list) of the top k."""
    k = j.cut(k)
    valid = np.arange(k)[None, :] < np.minimum(j.lengths, k)[:, None]
    labels = np.where(valid, j.labels[:, :k], np.nan)
    return k, valid, labels


def _run_member(j, k, valid, idx):
    """Dense (rows, k, c) aspect membership of the top k (False past the end of a list)."""
    return idx.lookup(j.items[:, :k]) & valid[..., None]


def _profiled_lists(j, k, profile, aspects, train, name):
    """What the profile-weighted kernels share: the checked profile, the aspect index, the judged
    lists cut at ``k`` (``k, valid, labels``) and the users' aspect weights γ."""
    profile = _check_profile(profile, name)
    idx = aspect_index(aspects)
    k, valid, labels = _run_arrays(j, k)
    return profile, idx, k, valid, labels, aspect_weights(j, idx, train, profile)


def _exclusive_log_cascade(group: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """Within consecutive runs of equal ``group``, the sum of ``logs`` of the earlier elements.

    Each run is summed from zero (:func:`~recmetrics.metrics.gains.seg_cumsum`), so a user's value
    depends on its own list only: a running sum over all users minus the run's start would carry
    rounding (1e-16-1e-15) from every earlier user's list."""
    if len(logs) == 0:
        return logs
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    pos = np.arange(len(logs)) - np.repeat(starts, np.diff(np.r_[starts, len(logs)]))
    return seg_exclusive(logs, pos)


@dataclass(frozen=True)
class ListPairs:
    """Sparse (cell, aspect) pairs of ranked lists, sorted for the per-aspect cascade.

    Depends only on the items and the in-list mask, so it can be reused for any ratings and
    parameters (e.g. across re-judged qrels).
    """

    flat: np.ndarray       # (P,) row * k + rank of each pair
    aspect: np.ndarray     # (P,) aspect index
    order: np.ndarray      # pairs sorted by (row, aspect, rank)
    group: np.ndarray      # (P,) group id of the sorted pairs (row, aspect)
    n_rows: int
    k: int


def list_pairs(items: np.ndarray, valid: np.ndarray, aspects, positions: np.ndarray | None = None) -> ListPairs:
    """Build the :class:`ListPairs` of a (rows, k) item matrix.

    ``valid``: (rows, k) in-list mask (cells where it is False make no pair); ``aspects``: the
    item -> aspects mapping or its :class:`~recmetrics.metrics.diversity.aspects.AspectIndex`;
    ``positions``: the index's rows of ``items`` (``AspectIndex.positions(items)``), when known.

    Examples
    --------
    >>> import numpy as np
    >>> items = np.array([["b", "a", "c"]])
    >>> p = list_pairs(items, np.array([[True, True, False]]), {"a": ("x",), "b": ("x", "y"), "c": ("y",)})
    >>> p.flat.tolist(), p.aspect.tolist()        # cell (row * k + rank) and aspect of each pair
    ([0, 0, 1], [0, 1, 0])
    >>> p.order.tolist(), p.group.tolist()        # sorted by (row, aspect, rank)
    ([0, 2, 1], [0, 0, 1])
    """
    idx = aspect_index(aspects)
    rows, k = np.shape(items)
    flat, aspect = idx.pairs(items, valid, positions=positions)
    # the pairs come by cell (flat ascending): a stable sort by (row, aspect) keeps the ranks in order
    key = flat // max(k, 1) * (idx.n_aspects + 1) + aspect
    order = np.argsort(key, kind="stable")
    return ListPairs(flat, aspect, order, key[order], rows, k)


def judged_pairs(j, k: int, valid: np.ndarray, idx) -> ListPairs:
    """:func:`list_pairs` of the judged lists ``j.items[:, :k]`` under the mask ``valid``, cached on
    ``j`` (every diversity metric of one run at one cut-off builds the same pairs; the items' rows of
    the index are looked up once for every cut-off and mask)."""
    cache = j.__dict__.setdefault("_diversity_cache", {})
    entries = cache.setdefault(("pairs", id(idx), int(k)), (idx, []))[1]
    for mask, pairs in entries:
        if mask.shape == valid.shape and np.array_equal(mask, valid):
            return pairs
    rows = cache.get(("positions", id(idx)))
    if rows is None:
        rows = cache[("positions", id(idx))] = (idx, idx.positions(j.items))
    pairs = list_pairs(j.items[:, :k], valid, idx, positions=rows[1][:, :k])
    entries.append((np.array(valid, copy=True), pairs))
    return pairs


def _cascade(pairs: ListPairs, value: np.ndarray, decay: np.ndarray, weight: np.ndarray | None,
             combine: str) -> np.ndarray:
    r"""Gains of the (rows, k) cells of ``pairs``.

    ``value``/``decay``/``weight`` are per pair; an aspect's state before a cell is
    :math:`\prod (1 - decay)` over the earlier pairs of the same row and aspect.
    ``combine``: ``"noisy-or"`` gives :math:`1-\prod(1 - value\cdot weight\cdot R)`,
    ``"sum"`` gives :math:`\sum value\cdot R`.
    """
    n_cells = pairs.n_rows * pairs.k
    if len(pairs.flat) == 0:
        return np.zeros((pairs.n_rows, pairs.k))
    logs = np.log1p(-np.minimum(decay[pairs.order], _P_MAX))
    R = np.empty(len(pairs.flat))
    R[pairs.order] = np.exp(_exclusive_log_cascade(pairs.group, logs))
    if combine == "noisy-or":
        term = np.log1p(-np.minimum(value * weight * R, _P_MAX))
        out = -np.expm1(np.bincount(pairs.flat, weights=term, minlength=n_cells))
    else:
        out = np.bincount(pairs.flat, weights=value * R, minlength=n_cells)
    return out.reshape(pairs.n_rows, pairs.k)
