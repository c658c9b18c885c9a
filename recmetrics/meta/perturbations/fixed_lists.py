r"""αβ-nDCG of fixed ranked lists re-judged against many reduced test sets (Exp. 3's hot path).

Exp. 3 (:mod:`.incompleteness`) scores the same lists — ``n_systems`` shuffles of every user's
ideal list — against hundreds of reduced test sets, at several β. Everything that depends on the
lists alone is prepared once (:class:`FixedLists`): the (cell, aspect) pairs
(:func:`~recmetrics.metrics.diversity.lists.list_pairs`), the cascade's layout of them (each
(list, aspect) group's pairs rank by rank, :func:`~recmetrics.metrics.gains.seg_exclusive`'s
layout), the judgment each pair's item points to and the cell of γ each pair reads. A reduced set
then only decides which judgments are kept; the probability :math:`P(a_\phi|u,i)` of Eq. 5-6 takes
one of a handful of values (α, or :math:`\beta r/r_{max}` for each grade), so it and its ``log1p``
are looked up in a table per β.

Every value is bit-identical to :func:`~recmetrics.metrics.diversity.alphabeta.ab_gains` over all
the lists at once followed by ``cumsum(g * disc)`` along each list (tested with ``tobytes``): the
same floating-point operations on the same numbers in the same order — the ``log1p`` of each
pair's :math:`1 - P`, each group's running sum of them from zero, rank by rank, its ``exp``, the
noisy-or of each cell's pairs summed in the cell's aspect order, the row's running DCG. Only
what does not depend on the reduced set is done once instead of per set.
:func:`ideal_dcg` stacks the β values into one greedy ideal (each user's ideal is computed on its
own, so stacking changes nothing).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...arrays import places_in_runs
from ...errors import InputError
from ...metrics.diversity.ideal import greedy_ideal
from ...metrics.diversity.judgments import Judgments
from ...metrics.diversity.lists import _P_MAX, list_pairs
from ...metrics.gains import _columns, _running

__all__ = ["FixedLists", "ideal_dcg", "reduced_judgments"]

#: pairs per block of whole lists (about 0.5 MB per array of one β)
BLOCK_PAIRS = 1 << 16


class FixedLists:
    """The pairs of a fixed (rows, k) item matrix, ready to be scored against many judgments.

    items/valid: (rows, k) item ids and in-list mask (a prefix of each row); user_row: (rows,) the
    row of γ (the user) of each list; idx: the
    :class:`~recmetrics.metrics.diversity.aspects.AspectIndex`; at: (rows, k) position of each
    cell's judgment in the full test set (-1: unjudged); ratings: the full test set's ratings (by
    position); positions (optional): ``idx.positions(items)``, when the caller has them.
    :meth:`dcg` gives the DCG of αβ-nDCG's gains at given cut-offs.

    Layout: the lists are cut into blocks of whole lists (about ``block_pairs`` pairs, so a block's
    arrays stay in the cache). Within a block the pairs are kept twice: in the cascade's layout
    (``ab_gains``' order, by list, aspect and rank, laid out rank by rank within each (list, aspect)
    group, longest groups first, as :func:`~recmetrics.metrics.gains.seg_exclusive` lays them out) the
    running sums are contiguous slices; in the metric's cell order, laid out the same way per cell,
    each cell's noisy-or terms are summed in the cell's aspect order. The block's cells are stored
    rank by rank, each rank holding the lists still that long (longest first), so the DCG adds one
    rank at a time over the live lists only. Past its end a list's gains are ``-0.0``, which leaves a
    sum unchanged, so each row's running sum equals ``cumsum(g * disc)`` at every cut-off.

    Examples
    --------
    One user (γ = ½, ½), two lists of the same three items, ``b`` unjudged (P = α). First list,
    β = ½: a gains ½·5/5·½ = 0.25; b gains α·½·(1 − 0.5) = 0.00125 at rank 2; c gains ½·4/5·½ = 0.2
    at rank 3, so DCG@3 = 0.25 + 0.00125/log2(3) + 0.2/2 = 0.3508:

    >>> import numpy as np
    >>> from recmetrics.metrics import diversity as dv
    >>> idx = dv.aspect_index({"a": ("x",), "b": ("x",), "c": ("y",)})
    >>> items = np.array([["a", "b", "c"], ["c", "b", "a"]])
    >>> lists = FixedLists(items, np.ones((2, 3), bool), np.array([0, 0]), idx,
    ...                    at=np.array([[0, -1, 1], [1, -1, 0]]), ratings=np.array([5.0, 4.0]))
    >>> dcg = lists.dcg(np.array([True, True]), np.array([[0.5, 0.5]]), 0.005, [0.5], 5.0, [1, 3],
    ...                 dv.discount(3))
    >>> dcg[(1, 0.5)].round(4).tolist(), dcg[(3, 0.5)].round(4).tolist()
    ([0.25, 0.2], [0.3508, 0.326])
    """

    def __init__(self, items: np.ndarray, valid: np.ndarray, user_row: np.ndarray, idx, at: np.ndarray,
                 ratings: np.ndarray, positions: np.ndarray | None = None, block_pairs: int = BLOCK_PAIRS):
        rows, k = np.shape(items)
        valid = np.asarray(valid, dtype=bool)
        lengths = valid.sum(axis=1)
        if not np.array_equal(valid, np.arange(k)[None, :] < lengths[:, None]):
            bad = int(np.flatnonzero((valid != (np.arange(k)[None, :] < lengths[:, None])).any(axis=1))[0])
            raise InputError(f"valid must mark a prefix of every row (a list's cells, then padding); row {bad} is "
                             f"{valid[bad].astype(int).tolist()}")
        # the lists longest first (each list is scored on its own, so their order changes no value):
        # a block then holds lists of about one length, and its rank-by-rank loops stop at it
        self.row_order = np.argsort(-lengths, kind="stable")
        items, lengths = np.asarray(items)[self.row_order], lengths[self.row_order]
        valid, at = valid[self.row_order], np.asarray(at)[self.row_order]
        user_row = np.asarray(user_row)[self.row_order]
        if positions is not None:
            positions = np.asarray(positions)[self.row_order]
        pairs = list_pairs(items, valid, idx, positions=positions)
        flat = pairs.flat                                    # cell of each pair, in the metric's cell order
        n_pairs = len(flat)
        self.rows, self.k, self.n_pairs = rows, k, n_pairs
        row, rank = np.divmod(flat, max(k, 1))
        # each pair's place in its (list, aspect) group (cascade order) and in its cell (cell order)
        in_group = places_in_runs(pairs.group)
        in_cell = places_in_runs(flat)
        ratings = np.asarray(ratings, dtype=np.float64)
        self.grades = np.unique(ratings)                     # the table's rows; one more: unrated
        pos = np.asarray(at).ravel()[flat]
        pos = np.where(pos >= 0, pos, len(ratings))          # unjudged: the sentinel past the test set
        self.judgment_grade = np.searchsorted(self.grades, ratings)   # each judgment's row of the table
        gamma_at = np.asarray(user_row)[row] * idx.n_aspects + pairs.aspect
        # blocks of whole lists (a group and a cell never straddle two): pairs p0:p1 in both orders
        row_end = np.searchsorted(row, np.arange(1, rows + 1), side="left")
        cuts, self.blocks, slots = [0], [], []
        while cuts[-1] < rows:
            target = (int(row_end[cuts[-1] - 1]) if cuts[-1] else 0) + block_pairs
            cuts.append(min(max(int(np.searchsorted(row_end, target, side="right")), cuts[-1] + 1), rows))
        for r0, r1 in zip(cuts[:-1], cuts[1:]):
            p0 = int(row_end[r0 - 1]) if r0 else 0
            p1 = int(row_end[r1 - 1])
            if p1 == p0:                                      # no pair: every gain is -0.0
                continue
            perm, counts = _columns(in_group[p0:p1])          # the cascade, rank by rank within groups
            slot_pair = pairs.order[p0:p1][perm]              # the pair (cell order) of each slot
            slot_of = np.empty(p1 - p0, dtype=np.int64)
            slot_of[slot_pair - p0] = np.arange(p1 - p0)
            cperm, ccounts = _columns(in_cell[p0:p1])         # each cell's terms, aspect by aspect
            first = p0 + cperm[:ccounts[0]]                   # the first pair of every cell with pairs
            # the block's cells rank by rank over its rows (longest first)
            live = (lengths[r0:r1][None, :] > np.arange(int(lengths[r0]))[:, None]).sum(axis=1)
            offset = np.r_[0, np.cumsum(live)]
            self.blocks.append(_Block(p0, p1, counts, slot_of[cperm], ccounts, offset[rank[first]] + row[first] - r0,
                                      rank[first], r0, live, offset))
            slots.append(slot_pair)
        slot_pair = np.concatenate(slots) if slots else np.zeros(0, dtype=np.int64)
        self.pos, self.gamma_at = pos[slot_pair], gamma_at[slot_pair]

    def codes(self, keep: np.ndarray) -> np.ndarray:
        """Each pair's row of the probability table under the reduced set ``keep`` (a boolean mask
        over the full test set's positions): its grade if judged and kept, else the unrated row
        (per slot of the cascade's layout)."""
        unrated = len(self.grades)
        return np.take(np.r_[np.where(keep, self.judgment_grade, unrated), unrated], self.pos)

    def dcg(self, keep: np.ndarray, gamma: np.ndarray, alpha: float, betas, rmax: float, cutoffs,
            disc: np.ndarray) -> dict:
        """``{(k, β): (rows,) DCG@k}`` of αβ-nDCG's gains under the judgments ``keep`` keeps, aspect
        weights ``gamma`` (n_users, c) and ``alpha``, each β of ``betas``, ``rmax``; ``disc`` the
        (k,) discount. Bit-identical to ``cumsum(ab_gains(...) * disc, axis=1)[:, k - 1]``."""
        cutoffs = sorted({int(c) for c in cutoffs})
        if not cutoffs or min(cutoffs) < 1 or max(cutoffs) > self.k:
            raise InputError(f"cut-offs must lie in 1..{self.k} (the lists' depth), got {cutoffs}")
        betas = list(betas)
        code = self.codes(keep)
        w = np.ravel(gamma)[self.gamma_at][:, None]
        disc = np.asarray(disc, dtype=np.float64)
        # Eq. 5-6 as ab_item_probability, one column per β, and the log1p of 1 - P
        p_tab = np.stack([np.append(b * self.grades / rmax, alpha) for b in betas], axis=1)
        log_tab = np.log1p(-np.minimum(p_tab, _P_MAX))
        exp_tab = np.exp(log_tab)                                     # R after one pair
        neg_p = -p_tab                                                # -(p w R) = (-p) w R, exactly
        out = np.full((len(cutoffs), self.rows, len(betas)), -0.0)   # an empty list: the sum of -0.0
        _ROW = np.dtype((np.void, 8 * len(betas)))                    # a row of cells as one element
        for blk in self.blocks:
            c = code[blk.p0:blk.p1]
            y = np.take(log_tab, c, axis=0)                           # the cascade, as ab_gains runs it:
            before = np.empty_like(y)
            _running(y.T, blk.counts, before.T)                       # each group's sum before each pair
            x = np.take(neg_p, c, axis=0)                             # -(value * weight * R)
            x *= w[blk.p0:blk.p1]
            m0, m1 = int(blk.counts[0]), int(blk.counts[1]) if len(blk.counts) > 1 else 0
            x[m0:m0 + m1] *= np.take(exp_tab, c[:m1], axis=0)         # R = exp(0) = 1 first, then one pair's
            x[m0 + m1:] *= np.exp(before[m0 + m1:], out=before[m0 + m1:])
            term = np.log1p(np.maximum(x, -_P_MAX, out=x), out=x)    # log1p(-min(p w R, P_MAX))
            z = np.take(term, blk.to_cell, axis=0)                    # each cell's terms, aspect by aspect,
            s = z[:blk.ccounts[0]] + 0.0                              # summed from 0.0 (as bincount sums)
            end = 0
            for a in range(1, len(blk.ccounts)):
                end += int(blk.ccounts[a - 1])
                s[:blk.ccounts[a]] += z[end:end + blk.ccounts[a]]
            g = np.expm1(s, out=s)
            np.negative(g, out=g)
            g *= disc[blk.ranks][:, None]                             # g * disc
            cells = np.full((int(blk.offset[-1]), len(betas)), -0.0)  # cells without a pair gain -0.0
            cells.view(_ROW).reshape(-1)[blk.cells] = g.view(_ROW).reshape(-1)   # whole rows at once
            acc = cells[:blk.live[0]].copy()                          # the running DCG, rank by rank
            rows = self.row_order[blk.r0:blk.r0 + len(acc)]
            for ci, cut in enumerate(cutoffs):
                start = 1 if ci == 0 else cutoffs[ci - 1]
                for j in range(start, min(cut, len(blk.live))):
                    n_j = blk.live[j]
                    acc[:n_j] += cells[blk.offset[j]:blk.offset[j] + n_j]
                out[ci][rows] = acc
        return {(cut, b): np.ascontiguousarray(out[ci, :, i]) for i, b in enumerate(betas)
                for ci, cut in enumerate(cutoffs)}


@dataclass(frozen=True)
class _Block:
    """A block of whole lists of :class:`FixedLists`: its pairs ``p0:p1``; the cascade's layout
    (``counts``: slots per rank of the groups); ``to_cell``: the slot of each pair in the cells'
    layout (``ccounts``: pairs per aspect rank of the cells); ``cells``/``ranks``: the place (rank by
    rank) and the rank of every cell with a pair; ``r0``: its first row (of the lists sorted longest
    first); ``live``/``offset``: the rows still that long at each rank, and where each rank starts."""

    p0: int
    p1: int
    counts: np.ndarray
    to_cell: np.ndarray
    ccounts: np.ndarray
    cells: np.ndarray
    ranks: np.ndarray
    r0: int
    live: np.ndarray
    offset: np.ndarray


def reduced_judgments(full: Judgments, position: np.ndarray, keep: np.ndarray) -> Judgments:
    """The judgments of a reduced test set: ``full`` (from the full set) restricted to those whose
    test-set ``position`` is kept. Equal to ``judgments_from_qrels(qrels.mask(keep), users, idx)``:
    a user's judgments are ordered by item id alone, so a subset keeps its order."""
    k = keep[position]
    return Judgments(full.row[k], full.items[k], full.ratings[k], full.member[k], full.n_users)


def ideal_dcg(jd: Judgments, gamma: np.ndarray, betas, rmax: float, k: int, disc: np.ndarray) -> dict:
    """``{β: (n_users, k) cumsum of the greedy ideal gains × disc}`` — ``ab_ideal_gains`` for every
    β in one greedy pass (the users repeated once per β; each user's ideal is its own)."""
    betas = list(betas)
    n, nb = jd.n_users, len(betas)
    P = np.concatenate([jd.member * (b * jd.ratings / rmax)[:, None] for b in betas])
    row = np.concatenate([jd.row + i * n for i in range(nb)])
    gains = greedy_ideal(row, P, P, np.tile(gamma, (nb, 1)), n * nb, k, "noisy-or")
    return {b: np.cumsum(gains[i * n:(i + 1) * n] * disc, axis=1) for i, b in enumerate(betas)}
