r"""αβ-nDCG of fixed ranked lists re-judged against many reduced test sets (Exp. 3's hot path).

Exp. 3 (:mod:`.incompleteness`) scores the same lists — ``n_systems`` shuffles of every user's
ideal list — against hundreds of reduced test sets, at several β. Everything that depends on the
lists alone is prepared once (:class:`FixedLists`): the (cell, aspect) pairs in the cascade's order
(:func:`~recmetrics.metrics.diversity.lists.list_pairs`), the judgment each pair's item points to,
the cell of γ each pair reads. A reduced set then only decides which judgments are kept; the
probability :math:`P(a_\phi|u,i)` of Eq. 5-6 takes one of a handful of values (α, or
:math:`\beta r/r_{max}` for each grade), so it and its ``log1p`` are looked up in a table per β.
The cascade runs over blocks of whole lists (cache-sized), carrying the running sum from block to
block.

Every value equals :func:`~recmetrics.metrics.diversity.alphabeta.ab_gains` over all the lists
at once followed by ``cumsum(g * discount)`` up to rounding (relative 1e-11, the tests' bound):
the same operations on the same numbers, except that the cascade's running sum of logs here is one
``cumsum`` over the whole sorted pair array (a block's sum starts from the previous block's last
value; a log is up to -36 at β = 1, so the sum reaches 1e6 and a group's share of it keeps ~1e-12
of relative rounding), where the metric sums each (user, aspect) from zero so that a user's value
depends on its own list alone. The one ``cumsum`` keeps Exp. 3 at its speed (a per-group sum costs
a pass per rank); Exp. 3 compares means over hundreds of users between shuffled systems, which
rounding at 1e-12 does not reorder unless two means tie exactly. The values are bit-identical to
those of the builds before the metric changed. Each cell's noisy-or adds its
aspects in ascending order as ``bincount`` does over the unsorted pairs, and the DCG is the row's
``cumsum``.
:func:`ideal_dcg` stacks the β values into one greedy ideal (each user's ideal is computed on its
own, so stacking changes nothing).
"""
from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...metrics.diversity.ideal import greedy_ideal
from ...metrics.diversity.judgments import Judgments
from ...metrics.diversity.lists import _P_MAX, list_pairs

__all__ = ["FixedLists", "ideal_dcg", "reduced_judgments"]

#: pairs per block of the cascade (whole lists; about 0.5 MB per float array)
BLOCK_PAIRS = 1 << 16


class FixedLists:
    """The pairs of a fixed (rows, k) item matrix, ready to be scored against many judgments.

    items/valid: (rows, k) item ids and in-list mask (a prefix of each row); user_row: (rows,) the
    row of γ (the user) of each list; idx: the
    :class:`~recmetrics.metrics.diversity.aspects.AspectIndex`; at: (rows, k) position of each
    cell's judgment in the full test set (-1: unjudged); ratings: the full test set's ratings (by
    position). :meth:`dcg` gives the DCG of αβ-nDCG's gains at given cut-offs.

    Layout: the pairs keep the cascade's order (row, aspect, rank), cut into blocks of whole lists;
    the cells are stored rank by rank, each rank holding the lists still that long (the rows
    sorted by length, longest first), so the DCG adds one rank at a time over the live lists only.
    Past its end a list's gains are ``-0.0``, which leaves a sum unchanged, so each row's running
    sum equals ``cumsum(g * disc)`` at every cut-off.

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
                 ratings: np.ndarray, block_pairs: int = BLOCK_PAIRS):
        rows, k = np.shape(items)
        valid = np.asarray(valid, dtype=bool)
        lengths = valid.sum(axis=1)
        if not np.array_equal(valid, np.arange(k)[None, :] < lengths[:, None]):
            bad = int(np.flatnonzero((valid != (np.arange(k)[None, :] < lengths[:, None])).any(axis=1))[0])
            raise InputError(f"valid must mark a prefix of every row (a list's cells, then padding); row {bad} is "
                             f"{valid[bad].astype(int).tolist()}")
        pairs = list_pairs(items, valid, idx)
        flat = pairs.flat[pairs.order]                       # cell of each pair, in cascade order
        self.rows, self.k = rows, k
        self.n_pairs = len(flat)
        self.gamma_at = np.asarray(user_row)[flat // max(k, 1)] * idx.n_aspects + pairs.aspect[pairs.order]
        ratings = np.asarray(ratings, dtype=np.float64)
        self.grades = np.unique(ratings)                     # the table's rows; one more: unrated
        pos = np.asarray(at).ravel()[flat]
        self.pos = np.where(pos >= 0, pos, len(ratings))     # unjudged: the sentinel past the test set
        self.grade = np.r_[np.searchsorted(self.grades, ratings), len(self.grades)][self.pos]
        # cells rank-major over the rows sorted by length (longest first): rank j holds live[j] rows
        self.row_order = np.argsort(-lengths, kind="stable")
        rank_of_row = np.empty(rows, dtype=np.int64)
        rank_of_row[self.row_order] = np.arange(rows)
        self.live = (lengths[None, :] > np.arange(k)[:, None]).sum(axis=1)
        self.offset = np.r_[0, np.cumsum(self.live)]
        r, j = np.divmod(flat, max(k, 1))
        self.cell = self.offset[j] + rank_of_row[r]
        self.cell_rank = np.repeat(np.arange(k), self.live)    # the rank of each cell
        self.n_cells = int(self.offset[-1])
        # blocks of whole lists (the cascade's groups never straddle two)
        row_end = np.searchsorted(flat // max(k, 1), np.arange(1, rows + 1), side="left")
        cuts = [0]
        while cuts[-1] < rows:
            target = (int(row_end[cuts[-1] - 1]) if cuts[-1] else 0) + block_pairs
            cuts.append(min(max(int(np.searchsorted(row_end, target, side="left")) + 1, cuts[-1] + 1), rows))
        group = pairs.group
        self.blocks = []
        for r0, r1 in zip(cuts[:-1], cuts[1:]):
            p0 = int(row_end[r0 - 1]) if r0 else 0
            p1 = int(row_end[r1 - 1]) if r1 else 0
            if p1 == p0:
                continue
            g = group[p0:p1]
            starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
            first = np.repeat(starts, np.diff(np.r_[starts, p1 - p0]))   # each pair's group start
            self.blocks.append((p0, p1, first))

    def codes(self, keep: np.ndarray) -> np.ndarray:
        """Each pair's row of the probability table under the reduced set ``keep`` (a boolean mask
        over the full test set's positions): its grade if judged and kept, else the unrated row."""
        kept = np.r_[np.asarray(keep, dtype=bool), False][self.pos]
        return np.where(kept, self.grade, len(self.grades))

    def dcg(self, keep: np.ndarray, gamma: np.ndarray, alpha: float, betas, rmax: float, cutoffs,
            disc: np.ndarray) -> dict:
        """``{(k, β): (rows,) DCG@k}`` of αβ-nDCG's gains under the judgments ``keep`` keeps, aspect
        weights ``gamma`` (n_users, c) and ``alpha``, each β of ``betas``, ``rmax``; ``disc`` the
        (k,) discount. ``cumsum(ab_gains(...) * disc, axis=1)[:, k - 1]`` up to rounding (module docstring)."""
        cutoffs = [int(c) for c in cutoffs]
        if not cutoffs or min(cutoffs) < 1 or max(cutoffs) > self.k:
            raise InputError(f"cut-offs must lie in 1..{self.k} (the lists' depth), got {cutoffs}")
        code = self.codes(keep)
        w = np.ravel(gamma)[self.gamma_at]
        neg_disc = -np.asarray(disc, dtype=np.float64)[self.cell_rank]
        term = np.empty(self.n_pairs)
        size = max([p1 - p0 for p0, p1, _ in self.blocks] + [0])
        logs = np.empty(size + 1)
        inc = np.empty(size + 1)
        out = {}
        for b in betas:
            p_tab = np.append(b * self.grades / rmax, alpha)          # Eq. 5-6, as ab_item_probability
            log_tab = np.log1p(-np.minimum(p_tab, _P_MAX))
            neg_p = -p_tab
            carry = 0.0
            for p0, p1, first in self.blocks:
                n = p1 - p0
                cb = code[p0:p1]
                lg = logs[:n + 1]
                lg[0] = carry
                np.take(log_tab, cb, out=lg[1:], mode="clip")          # codes index the table by construction
                ic = np.cumsum(lg, out=inc[:n + 1])                   # the running sum over every pair
                carry = ic[n]
                ex = ic[1:] - lg[1:]                                  # log R: this group's earlier pairs
                ex -= ex[first]
                np.exp(ex, out=ex)
                t = np.take(neg_p, cb, out=term[p0:p1], mode="clip")  # -(p w R) = (-p) w R, exactly
                t *= w[p0:p1]
                t *= ex
                np.maximum(t, -_P_MAX, out=t)
                np.log1p(t, out=t)
            cells = np.bincount(self.cell, weights=term, minlength=self.n_cells)
            np.expm1(cells, out=cells)
            cells *= neg_disc                                         # g * disc, g = -expm1(...)
            acc = cells[:self.live[0]].copy()
            if 1 in cutoffs:
                self._put(out, (1, b), acc)
            for j in range(1, max(cutoffs)):
                n_j = self.live[j]
                if n_j == 0:
                    break
                acc[:n_j] += cells[self.offset[j]:self.offset[j] + n_j]
                if j + 1 in cutoffs:
                    self._put(out, (j + 1, b), acc)
            for c in cutoffs:
                if (c, b) not in out:
                    self._put(out, (c, b), acc)
        return {key: out[key] for key in ((c, b) for b in betas for c in cutoffs)}

    def _put(self, out: dict, key, acc: np.ndarray) -> None:
        full = np.full(self.rows, -0.0)                              # an empty list: cumsum of -0.0
        full[self.row_order[:len(acc)]] = acc
        out[key] = full


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
