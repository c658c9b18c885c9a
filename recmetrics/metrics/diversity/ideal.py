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
#: candidates from which greedy_ideal evaluates lazily
_LAZY_FROM = 256


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
    same = decay is value
    row, value = row[perm], np.take(value, perm, axis=0)
    decay = value if same else np.take(decay, perm, axis=0)
    starts = new_starts
    seg_rows = row[starts]
    seg_of = np.repeat(np.arange(len(starts)), sizes)
    cand, asp = _nonzero(value)                # sparse pairs, by candidate then aspect
    v = value[cand, asp]
    pair_row = row[cand]
    R = np.ones((n_rows, c))
    at = pair_row * c + asp                    # each pair's cell of R
    vw = v * weights[pair_row, asp] if weights is not None else v
    first_pair = np.searchsorted(cand, np.arange(N + 1))   # pairs of candidate i: first_pair[i]:first_pair[i + 1]
    if same:                                   # the aspects a pick decays (R * (1 - 0) = R elsewhere)
        d_cand, d_at, d_keep, first_decay = cand, at, 1.0 - v, first_pair
    else:
        d_cand, d_asp = _nonzero(decay)
        d_at, d_keep = row[d_cand] * c + d_asp, 1.0 - decay[d_cand, d_asp]
        first_decay = np.searchsorted(d_cand, np.arange(N + 1))
    noisy = combine == "noisy-or"

    def gains(n_c: int, subset: np.ndarray | None = None) -> np.ndarray:
        """Gains under the current R of the first n_c candidates, or of ``subset`` (each candidate's
        aspects summed in the same order either way, so a gain has the same bits both ways)."""
        if subset is None:
            n_p = int(first_pair[n_c])
            sel, owner, n_out = slice(0, n_p), cand[:n_p], n_c
        else:
            counts = first_pair[subset + 1] - first_pair[subset]
            total = int(counts.sum())
            sel = np.arange(total) + np.repeat(first_pair[subset] - (np.cumsum(counts) - counts), counts)
            owner, n_out = np.repeat(np.arange(len(subset)), counts), len(subset)
        x = vw[sel] * R.ravel()[at[sel]]
        if noisy:
            return -np.expm1(np.bincount(owner, weights=np.log1p(-np.minimum(x, _P_MAX)), minlength=n_out))
        return np.bincount(owner, weights=x, minlength=n_out)

    # Lazy evaluation: R only shrinks (decay in [0, 1]), so a gain computed at an earlier rank bounds
    # it from above. At each rank the true gain g1 of every row's best bound is computed, then the
    # true gains of the candidates whose bound reaches g1 (less a margin far above rounding); the
    # others cannot reach the best and keep their bound, so the pick — the largest true gain, the
    # first such candidate on ties — is among those recomputed. Used candidates hold -inf.
    # (a few hundred candidates — a hand-made case — are cheaper to recompute whole every rank)
    lazy = bool(N > _LAZY_FROM and np.isfinite(vw).all() and (vw >= 0).all()        # (a zero decay is in range)
                and np.isfinite(d_keep).all() and ((d_keep >= 0) & (d_keep <= 1)).all())
    avail = np.ones(N, dtype=bool)
    pos = np.arange(N)
    live_segs = np.searchsorted(-sizes, -np.arange(min(k, int(sizes[0]))), side="left")  # segments with size > s
    cand_end = np.r_[starts, N]
    g = np.empty(N)
    for step, n_seg in enumerate(live_segs):
        n_c = int(cand_end[n_seg])
        seg = seg_of[:n_c]
        gv = g[:n_c]
        pool = None
        if step == 0 or not lazy:
            gv[:] = np.where(avail[:n_c], gains(n_c), -np.inf)
        else:
            top = np.maximum.reduceat(gv, starts[:n_seg])
            has = top > -np.inf
            c1 = np.minimum.reduceat(np.where(gv == top[seg], pos[:n_c], N), starts[:n_seg])[has]
            g[c1] = gains(n_c, c1)
            reach = np.full(n_seg, np.inf)
            reach[has] = g[c1] - 1e-9 * np.maximum(1.0, np.abs(g[c1]))
            pool = np.flatnonzero(gv >= reach[seg])              # by position: grouped by segment
            if len(pool) == 0:
                break
            g[pool] = gains(n_c, pool)
        if pool is None:                                         # the pick among every candidate
            best = np.maximum.reduceat(gv, starts[:n_seg])
            first = np.minimum.reduceat(np.where(gv == best[seg], pos[:n_c], N), starts[:n_seg])
            segs = np.arange(n_seg)
        else:                                                    # ... among the recomputed ones
            ps = seg[pool]
            sub = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
            gp = g[pool]
            best = np.maximum.reduceat(gp, sub)
            first = np.minimum.reduceat(np.where(gp == np.repeat(best, np.diff(np.r_[sub, len(pool)])), pool, N), sub)
            segs = ps[sub]
        ok = best > -np.inf
        sel = first[ok]
        out[seg_rows[segs[ok]], step] = best[ok]
        counts = first_decay[sel + 1] - first_decay[sel]       # R[row[sel]] *= 1.0 - decay[sel], where it changes
        dp = np.arange(int(counts.sum())) + np.repeat(first_decay[sel] - (np.cumsum(counts) - counts), counts)
        R.ravel()[d_at[dp]] *= d_keep[dp]
        avail[sel] = False
        g[sel] = -np.inf
    return out


def _nonzero(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a 2-D array (rows, then columns, in order), from its flat positions (faster)."""
    return np.divmod(np.flatnonzero(m != 0), m.shape[1])


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
