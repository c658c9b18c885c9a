r"""The greedy ideal rankings of αβ-nDCG and α-nDCG, and their cache.

**Ideal (greedy)**: candidates are the user's judged test items; at each rank the item with the
highest gain given the ranks above it is taken; ties go to the item trec_eval/ndeval rank first
(the largest item id compared as strings). The greedy ideal is an approximation (the exact
problem is NP-complete), so a ranking can, rarely, score above 1; αβ-nDCG can also exceed 1 when
unjudged items (gain from ``alpha``) take ranks where the ideal, built from judged items only, has
smaller gains (e.g. items rated 0, or no judged item left).

The ideal gains depend only on the qrels, the users and the parameters, so they are cached
(:func:`_cached_ideal`) and shared by every run judged against the same Qrels.
"""
from __future__ import annotations

import numpy as np

from .cache import _LRU
from .judgments import _qrels_of
from .lists import _P_MAX

_IDEAL_CACHE = _LRU(64)


def greedy_ideal(row: np.ndarray, value: np.ndarray, decay: np.ndarray, weights: np.ndarray | None,
                 n_rows: int, k: int, combine: str) -> np.ndarray:
    r"""Greedy ideal gains for candidates grouped by ``row`` (contiguous, in tie order).

    ``value``/``decay``: (N, c) per candidate and aspect. At each rank every still-unused
    candidate's gain is computed given the aspect state ``R`` of its row (``R`` starts at 1 and is
    multiplied by ``1 - decay`` of each chosen item); the candidate with the highest gain is taken
    (ties: the first in its group). ``combine``: ``"noisy-or"`` (αβ-nDCG,
    :math:`1-\prod_\phi(1-v_\phi w_\phi R_\phi)`, ``weights`` the (n_rows, c) γ) or ``"sum"``
    (α-nDCG, :math:`\sum_\phi v_\phi R_\phi`, ``weights`` None). Vectorised over rows (and sparse
    over aspects); sequential over ranks. Returns ``(n_rows, k)`` gains (0 once a row runs out of
    candidates).

    Examples
    --------
    One user, two candidates over aspects (x, y); the second covers both and goes first, then the
    first's x is discounted by ``1 - 0.4``:

    >>> import numpy as np
    >>> v = np.array([[0.5, 0.0], [0.4, 0.4]])
    >>> greedy_ideal(np.array([0, 0]), v, v, None, n_rows=1, k=3, combine="sum").round(4).tolist()
    [[0.8, 0.3, 0.0]]
    """
    out = np.zeros((n_rows, k))
    N = len(row)
    if N == 0 or k == 0:
        return out
    c = value.shape[1]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    sizes = np.diff(np.r_[starts, N])
    # segments (users) largest first, candidates kept in their order inside each: at a step s the
    # segments still holding a candidate (size > s) are a prefix, and so are their candidates and
    # pairs, so each step works on those alone (every row's arithmetic is unchanged)
    by_size = np.argsort(-sizes, kind="stable")
    sizes = sizes[by_size]
    new_starts = np.r_[0, np.cumsum(sizes)[:-1]]
    perm = np.arange(N) + np.repeat(starts[by_size] - new_starts, sizes)
    row, value, decay = row[perm], value[perm], decay[perm]
    starts = new_starts
    seg_rows = row[starts]
    seg_of = np.repeat(np.arange(len(starts)), sizes)
    cand, asp = np.nonzero(value)              # sparse pairs, by candidate then aspect
    v = value[cand, asp]
    pair_row = row[cand]
    R = np.ones((n_rows, c))
    at = pair_row * c + asp                    # each pair's cell of R
    vw = v * weights[pair_row, asp] if weights is not None else v
    avail = np.ones(N, dtype=bool)
    pos = np.arange(N)
    live_segs = np.searchsorted(-sizes, -np.arange(min(k, int(sizes[0]))), side="left")  # segments with size > s
    cand_end = np.r_[starts, N]
    for step, n_seg in enumerate(live_segs):
        n_c = int(cand_end[n_seg])
        n_p = int(np.searchsorted(cand, n_c))
        Rp = R.ravel()[at[:n_p]]
        if combine == "noisy-or":
            term = np.log1p(-np.minimum(vw[:n_p] * Rp, _P_MAX))
            g = -np.expm1(np.bincount(cand[:n_p], weights=term, minlength=n_c))
        else:
            g = np.bincount(cand[:n_p], weights=vw[:n_p] * Rp, minlength=n_c)
        live = avail[:n_c]
        g = np.where(live, g, -np.inf)
        best = np.maximum.reduceat(g, starts[:n_seg])
        ok = best > -np.inf
        hit = live & (g == best[seg_of[:n_c]])
        first = np.minimum.reduceat(np.where(hit, pos[:n_c], N), starts[:n_seg])
        sel = first[ok]
        out[seg_rows[:n_seg][ok], step] = best[ok]
        R[row[sel]] *= 1.0 - decay[sel]
        avail[sel] = False
    return out


def _cached_ideal(j, kind: str, params: tuple, k: int, compute, keep: tuple = ()):
    """Ideal gains shared by every run judged against the same Qrels for the same users."""
    qrels = _qrels_of(j)
    users = np.asarray(j.users)
    key = (kind, id(qrels), params, k, users.dtype.str, hash(users.tobytes()) if users.dtype != object
           else hash(tuple(users.tolist())))
    hit = _IDEAL_CACHE.get(key)
    if hit is not None and hit.shape[0] == len(users):
        return hit
    return _IDEAL_CACHE.put(key, (qrels, keep), compute())
