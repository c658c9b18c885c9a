"""`Run`: ranked item lists per user (a top-N recommendation output).

Ordering conventions
--------------------
* Lists given with a rank (or as ordered lists) keep their order.
* Lists given with scores are sorted by score descending; ties are broken the way
  trec_eval does it (``form_res_rels``: ``strcmp(docno2, docno1)``), i.e. by the item id's
  *string* descending. So ``trec_eval``, ``pytrec_eval`` and recmetrics rank a tied run alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np

from ..arrays import places_in_runs
from ..errors import InputError, require_ids, show, where
from .ids import Ids

if TYPE_CHECKING:
    import pandas as pd


def trec_tie_order(items: np.ndarray) -> np.ndarray:
    """Position of each item in trec_eval's tie order (0 = first among equal scores).

    trec_eval breaks score ties by docno in *descending* string order.
    """
    as_str = np.asarray(items).astype(str)
    order = np.argsort(as_str, kind="stable")[::-1]
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))
    return pos


def _check_finite(scores: np.ndarray, describe, *, neginf: bool = False) -> None:
    """Refuse NaN and infinite scores (``-inf`` too, unless ``neginf``: an excluded entry)."""
    bad = ~(scores < np.inf) if neginf else ~np.isfinite(scores)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise InputError(
            f"score of {describe(where)} is {show(scores[tuple(where)])}; scores must be finite numbers"
        )


#: the preselection by block maxima (:func:`_top_columns_bounded`): blocks per wanted column, and the
#: most candidates per wanted column it sorts (a row with more, e.g. long ties, takes the partition)
BLOCKS_PER_COLUMN, CANDIDATES_PER_COLUMN = 4, 16


def top_columns(scores: np.ndarray, n: int) -> np.ndarray:
    """Columns of the ``n`` largest entries of every row, ascending (an ``(n_rows, n)`` array).

    Ties at the ``n``-th value go to the lower column index; NaN ranks below every number (``-inf``
    too). Exact on the values, whatever the machine (``numpy.argpartition`` picks among tied entries
    by the CPU's SIMD path). Rows of floats much wider than ``n`` are found through a lower bound of
    their ``n``-th value (:func:`_top_columns_bounded`), the others by a partition
    (:func:`_top_columns_partition`); both give the first ``n`` of a stable sort. ``1 <= n <= n_cols``.
    """
    s = np.asarray(scores)
    if len(s) and np.issubdtype(s.dtype, np.floating) and s.shape[1] >= 4 * BLOCKS_PER_COLUMN * n:
        return _top_columns_bounded(s, n)
    return _top_columns_partition(s, n)


def _top_columns_bounded(s: np.ndarray, n: int) -> np.ndarray:
    """:func:`top_columns` of a wide float matrix by two passes over its entries (the groups' maxima,
    then the comparison with a bound) instead of a partition.

    The columns are dealt into ``m = BLOCKS_PER_COLUMN * n`` groups (column ``j`` into group ``j mod m``,
    the last ``n_cols mod m`` columns each a group alone); the ``n``-th largest of the groups' maxima is
    at most the row's ``n``-th value, since ``n`` different entries reach it. So the row's ``n`` best
    are among the entries above that bound (when at least ``n`` are; else at or above it), and only
    these candidates are sorted, by value descending, then column. A row whose bound is NaN (fewer
    than ``n`` numbers among the maxima) or that keeps more than ``CANDIDATES_PER_COLUMN * n``
    candidates (long ties, a row mostly ``-inf``) takes the partition instead."""
    n_rows, n_cols = s.shape
    m = BLOCKS_PER_COLUMN * n
    w = n_cols // m
    maxima = np.empty((n_rows, m + n_cols - w * m), dtype=s.dtype)
    np.max(s[:, : w * m].reshape(n_rows, w, m), axis=1, out=maxima[:, :m])   # NaN spreads to its group
    maxima[:, m:] = s[:, w * m :]
    bound = -np.partition(-maxima, n - 1, axis=1)[:, n - 1 : n]                # NaN sorts last
    with np.errstate(invalid="ignore"):
        candidate = s > bound
        counts = np.count_nonzero(candidate, axis=1)
        few = np.flatnonzero(counts < n)                                     # ties at the bound: take them too
        candidate[few] = s[few] >= bound[few]
        counts[few] = np.count_nonzero(candidate[few], axis=1)
    sorted_here = (counts >= n) & (counts <= CANDIDATES_PER_COLUMN * n)
    rest = np.flatnonzero(~sorted_here)
    candidate[rest] = False
    r, c = np.nonzero(candidate)                                             # columns ascending in each row
    order = np.lexsort((-s[r, c], r))                                        # stable: ties keep the lower column
    r, c = r[order], c[order]
    out = np.empty((n_rows, n), dtype=np.int64)
    out[sorted_here] = np.sort(c[places_in_runs(r) < n].reshape(-1, n), axis=1)
    if len(rest):
        out[rest] = _top_columns_partition(s[rest], n)
    return out


def _top_columns_partition(s: np.ndarray, n: int) -> np.ndarray:
    """:func:`top_columns` by a partition. Found fast: rounding to float32 keeps the order (never
    reverses it), so the row's ``n`` best lie among the entries whose float32 value reaches the row's
    ``n``-th float32 value; where exactly ``n`` do, they are the answer, and only the rows with a
    float32 tie across the ``n``-th place are ordered by float64 value, then column."""
    n_rows = len(s)
    with np.errstate(over="ignore"):           # past float32's range: +-inf, still in order
        neg = -s.astype(np.float32)           # NaN stays NaN: partition puts it last
    kth = np.partition(neg, n - 1, axis=1)[:, n - 1 : n]
    candidate = neg <= kth
    candidate[np.isnan(kth[:, 0])] = True     # fewer than n numbers: the NaN are in too
    exact = candidate.sum(axis=1) == n
    if exact.all():
        return np.nonzero(candidate)[1].reshape(n_rows, n)
    out = np.empty((n_rows, n), dtype=np.int64)
    out[exact] = np.nonzero(candidate[exact])[1].reshape(-1, n)
    tied = np.flatnonzero(~exact)
    chosen = neg[tied] < kth[tied]             # strictly better than the n-th in float32: in
    r, c = np.nonzero(candidate[tied] & ~chosen)  # the tie across the n-th place, row by row
    v = -s[tied[r], c]
    unsorted = np.flatnonzero((r[1:] == r[:-1]) & ~(v[1:] >= v[:-1]))   # not by value within its row
    if len(unsorted):                          # those rows by value descending (NaN last), then column
        redo = np.flatnonzero(np.isin(r, r[unsorted]))
        order = np.arange(len(r))
        order[redo] = redo[np.lexsort((c[redo], v[redo], r[redo]))]
        r, c = r[order], c[order]
    need = n - chosen.sum(axis=1)
    take = places_in_runs(r) < need[r]
    chosen[r[take], c[take]] = True
    out[tied] = np.nonzero(chosen)[1].reshape(len(tied), n)
    return out


def top_n(scores: np.ndarray, n: int, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``n`` highest scores per row, best first; ties go to the lower column index.

    ``-inf`` marks excluded entries: they are never returned (the row's list is then shorter;
    the returned index is -1 there). The ``n`` best are found by :func:`top_columns` in
    O(n_items) per row, then ordered in O(n log n). Returns ``(indices, lengths)``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n_rows, n_cols = scores.shape
    n = min(n, n_cols)
    out = np.full((n_rows, n), -1, dtype=np.int64)
    for start in range(0, n_rows, chunk):
        s = scores[start : start + chunk]
        if n == n_cols:
            idx = np.argsort(-s, axis=1, kind="stable")
        else:
            cols = top_columns(s, n)
            vals = np.take_along_axis(s, cols, axis=1)
            order = np.argsort(-vals, axis=1, kind="stable")  # cols ascending within ties
            idx = np.take_along_axis(cols, order, axis=1)
        out[start : start + chunk] = idx
    valid = np.take_along_axis(scores, np.maximum(out, 0), axis=1) > -np.inf
    out[~valid] = -1
    return out, valid.sum(axis=1)


@dataclass
class Run:
    """Ranked item lists of one system: ``items[u, :lengths[u]]`` is user ``users[u]``'s list.

    Positions past a list's length are padding (their content is meaningless).
    """

    users: np.ndarray
    items: np.ndarray
    lengths: np.ndarray
    scores: np.ndarray | None = None
    name: str = "run"
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        self.users = np.asarray(self.users)
        self.items = np.asarray(self.items)
        self.lengths = np.asarray(self.lengths, dtype=np.int64)
        if self.items.ndim != 2 or len(self.items) != len(self.users):
            raise InputError(
                f"Run items must be a (n_users, depth) matrix with one row per user; "
                f"got shape {self.items.shape} for {len(self.users)} users"
            )
        dups = self.user_index.duplicated()  # the index is cached: judging looks users up through it
        if dups.any():
            dup = self.users[dups][0]
            raise InputError(f"user {show(dup)} appears twice in run {self.name!r}; one list per user expected")

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "user_index"}  # derived: rebuilt on use

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update({k: v for k, v in state.items() if k != "user_index"})  # older pickles hold one

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        user_col: str = "user",
        item_col: str = "item",
        score_col: str | None = "score",
        rank_col: str | None = None,
        name: str = "run",
    ) -> "Run":
        """Build from a long table ``user, item, score[, rank]``.

        With ``rank_col`` the given ranks define the order; otherwise scores do (descending, ties by
        trec_eval's rule). A duplicate (user, item) or a NaN/inf score raises :class:`InputError`.
        """
        import pandas as pd

        missing = [c for c in (user_col, item_col) if c not in frame.columns]
        if rank_col is None and (score_col is None or score_col not in frame.columns):
            if "rank" in frame.columns:
                rank_col = "rank"
            else:
                missing.append(score_col or "score")
        if missing:
            raise InputError(f"run table lacks column(s) {missing}; has {list(frame.columns)}")
        if frame.empty:
            raise InputError(f"run {name!r} is empty: at least one (user, item, score) line is needed")
        require_ids(frame, (user_col, item_col), f"run {name!r}")
        users = frame[user_col].to_numpy()
        items = frame[item_col].to_numpy()
        dup = frame.duplicated([user_col, item_col]).to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise InputError(
                f"run {name!r}: item {show(items[i])} appears more than once in the list of user {show(users[i])} "
                f"({where(frame, i)}); each item may be ranked once per user"
            )
        scores = None
        if score_col is not None and score_col in frame.columns:
            try:
                scores = frame[score_col].to_numpy(dtype=np.float64)
            except (TypeError, ValueError) as exc:
                col = frame[score_col]
                bad = (pd.to_numeric(col, errors="coerce").isna() & col.notna()).to_numpy()
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise InputError(f"run {name!r}: {score_col} {show(col.iloc[i])} of user {show(users[i])} item "
                                     f"{show(items[i])} ({where(frame, i)}) is not a number") from None
                raise InputError(f"run {name!r}: column {score_col!r} must be numeric ({exc})") from None
            _check_finite(scores, lambda w: f"user {show(users[w[0]])} item {show(items[w[0]])} ({where(frame, w[0])})")
        ucodes, uniq_users = pd.factorize(users, sort=False)
        if rank_col is not None:
            ranks = frame[rank_col].to_numpy()
            if not np.issubdtype(ranks.dtype, np.number) or not np.isfinite(ranks).all():
                num = pd.to_numeric(frame[rank_col], errors="coerce").to_numpy(dtype=np.float64)
                bad = int(np.flatnonzero(~np.isfinite(num))[0]) if (~np.isfinite(num)).any() else 0
                raise InputError(f"run {name!r}: rank {show(frame[rank_col].iloc[bad])} ({where(frame, bad)}) "
                                 f"is not a number; column {rank_col!r} must hold finite numbers")
            order = np.lexsort((ranks, ucodes))
        else:
            tie = trec_tie_order(items)
            order = np.lexsort((tie, -scores, ucodes))
        return cls._from_sorted(np.asarray(uniq_users), ucodes[order], items[order],
                                None if scores is None else scores[order], name)

    @classmethod
    def from_codes(cls, ucodes, users, icodes, vocab, scores, *, name: str = "run",
                   max_docs: int | None = None, owned: bool = False) -> "Run":
        """Build from integer codes (``users[ucodes[n]]`` ranks ``vocab[icodes[n]]`` with ``scores[n]``),
        the readers' vectorised path: sorted by score descending, ties by trec_eval's rule, without
        a per-line Python step. (user, item) pairs must be unique (the readers check it).
        ``owned``: the arrays are the caller's to give away and may be reordered in place (the
        readers' peak memory)."""
        # int32 codes (the readers') stay int32: peak memory of a 13.8M-line run
        small = len(users) < 2**31 and len(vocab) < 2**31
        ucodes = np.asarray(ucodes, dtype=np.int32 if small else np.int64)
        icodes = np.asarray(icodes, dtype=np.int32 if small else np.int64)
        vocab = np.asarray(vocab)
        if not len(ucodes):
            raise InputError(f"run {name!r} is empty: at least one (user, item, score) line is needed")
        tie = trec_tie_order(vocab).astype(ucodes.dtype)[icodes]
        scores = np.asarray(scores, dtype=np.float64)
        same = ucodes[1:] == ucodes[:-1]
        grouped = bool((ucodes[1:] >= ucodes[:-1]).all())
        in_order = grouped and bool(
            (~same | (scores[1:] < scores[:-1]) | ((scores[1:] == scores[:-1]) & (tie[1:] > tie[:-1]))).all())
        # runs are usually written grouped by user, best first: then no sort is needed, or only
        # within runs of tied scores (one int64 argsort instead of a three-key lexsort)
        if in_order:
            order = None
        elif grouped and bool((~same | (scores[1:] <= scores[:-1])).all()):
            same &= scores[1:] == scores[:-1]
            group = np.zeros(len(ucodes), dtype=np.int64)
            np.cumsum(~same, out=group[1:])
            del same
            group *= np.int64(len(vocab))
            group += tie
            del tie
            order = np.argsort(group, kind="stable")
            del group
        else:
            order = np.lexsort((tie, -scores, ucodes))
        if order is not None:
            if owned:  # one temporary at a time instead of three sorted copies beside the originals
                for a in (ucodes, icodes, scores):
                    a[:] = a[order]
            else:
                ucodes, icodes, scores = ucodes[order], icodes[order], np.asarray(scores)[order]
            del order
        run = cls._from_sorted(np.asarray(users), ucodes, icodes, scores, name)
        codes = run.items
        run.items = vocab[codes]
        pad = np.arange(run.depth)[None, :] >= run.lengths[:, None]
        codes[pad] = -1
        run.__dict__["codes"] = (codes, vocab)
        if max_docs is not None:
            run = run.head(int(max_docs))
        return run

    @classmethod
    def _from_sorted(cls, uniq_users, ucodes, items, scores, name) -> "Run":
        n_users = len(uniq_users)
        lengths = np.bincount(ucodes, minlength=n_users)
        depth = int(lengths.max()) if n_users else 0
        if n_users and (lengths == depth).all():  # every list as long (a top-N run): rows are blocks
            return cls(uniq_users, np.asarray(items).reshape(n_users, depth), lengths,
                       None if scores is None else np.asarray(scores, dtype=np.float64).reshape(n_users, depth), name)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        flat = ucodes.astype(np.int64) * depth + (np.arange(len(ucodes)) - starts[ucodes])  # row-major cell of each entry
        item_mat = np.zeros(n_users * depth, dtype=items.dtype)
        item_mat[flat] = items
        score_mat = None
        if scores is not None:
            score_mat = np.full(n_users * depth, np.nan)
            score_mat[flat] = scores
            score_mat = score_mat.reshape(n_users, depth)
        return cls(uniq_users, item_mat.reshape(n_users, depth), lengths, score_mat, name)

    @classmethod
    def from_dict(cls, scores: Mapping[Any, Mapping[Any, float]], name: str = "run") -> "Run":
        """Build from ``{user: {item: score}}`` (pytrec_eval / ranx / ir_measures' run layout)."""
        rows = [(u, i, s) for u, d in scores.items() for i, s in d.items()]
        import pandas as pd

        frame = pd.DataFrame(rows, columns=["user", "item", "score"])
        return cls.from_frame(frame, name=name)

    @classmethod
    def from_lists(cls, lists: Mapping[Any, Iterable[Any]], name: str = "run") -> "Run":
        """Build from ``{user: [item, item, ...]}`` (best first)."""
        import pandas as pd

        rows = [(u, it, r) for u, items in lists.items() for r, it in enumerate(items, start=1)]
        frame = pd.DataFrame(rows, columns=["user", "item", "rank"])
        if frame.empty:
            return cls(np.array(list(lists)), np.zeros((len(lists), 0), dtype=np.int64),
                       np.zeros(len(lists), dtype=np.int64), name=name)
        run = cls.from_frame(frame, score_col=None, rank_col="rank", name=name)
        return run

    @classmethod
    def from_scores(
        cls,
        scores: np.ndarray,
        users: Iterable[Any],
        items: Iterable[Any],
        n: int,
        *,
        exclude: np.ndarray | None = None,
        name: str = "run",
    ) -> "Run":
        """Top-``n`` lists from a dense ``(n_users, n_items)`` score matrix.

        ``exclude`` is a boolean matrix (or scipy sparse matrix) of the same shape whose True entries
        are never recommended (e.g. the user's training items). Ties follow trec_eval's rule.
        """
        if n <= 0:
            raise InputError(f"list length n must be a positive integer, got {n!r}")
        users = np.asarray(list(users) if not isinstance(users, np.ndarray) else users)
        items = np.asarray(list(items) if not isinstance(items, np.ndarray) else items)
        scores = np.asarray(scores, dtype=np.float64)
        dups = Ids(items).duplicated()
        if dups.any():
            raise InputError(f"item {show(items[dups][0])} labels two score columns; "
                             "item ids must be unique")
        if scores.shape != (len(users), len(items)):
            raise InputError(f"score matrix has shape {scores.shape}; expected ({len(users)}, {len(items)})")
        _check_finite(scores, lambda w: f"user {show(users[w[0]])} item {show(items[w[1]])}", neginf=True)
        perm = np.argsort(trec_tie_order(items))  # columns in trec tie order
        s = scores[:, perm]
        if exclude is not None:
            ex = exclude.toarray() if hasattr(exclude, "toarray") else np.asarray(exclude, dtype=bool)
            s = np.where(ex[:, perm], -np.inf, s)
        idx, lengths = top_n(s, n)
        safe = np.maximum(idx, 0)
        item_mat = items[perm][safe]
        score_mat = np.take_along_axis(s, safe, axis=1)
        score_mat[idx < 0] = np.nan
        run = cls(users, item_mat, lengths, score_mat, name)
        run.__dict__["codes"] = (np.where(idx < 0, -1, perm[safe]), items)  # free: no factorize needed
        return run

    # ----------------------------------------------------------------- views
    @cached_property
    def user_index(self) -> Ids:
        return Ids(self.users)

    @cached_property
    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, vocab)``: ``items == vocab[codes]`` on every list, ``codes == -1`` past its end."""
        import pandas as pd

        codes, vocab = pd.factorize(self.items.ravel())
        codes = codes.reshape(self.items.shape)
        codes[np.arange(self.depth)[None, :] >= self.lengths[:, None]] = -1
        return codes, np.asarray(vocab)

    @property
    def depth(self) -> int:
        return int(self.items.shape[1])

    def __len__(self) -> int:
        return len(self.users)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, users={len(self)}, depth={self.depth})"

    def head(self, n: int) -> "Run":
        """The same run truncated to the top ``n`` of every list."""
        scores = None if self.scores is None else self.scores[:, :n]
        out = Run(self.users, self.items[:, :n], np.minimum(self.lengths, n), scores, self.name)
        if "codes" in self.__dict__:
            codes, vocab = self.codes
            out.__dict__["codes"] = (codes[:, :n], vocab)
        return out

    def to_frame(self) -> pd.DataFrame:
        """Long table ``user, item, rank, score`` (rank starts at 1)."""
        import pandas as pd

        mask = np.arange(self.depth)[None, :] < self.lengths[:, None]
        rows, cols = np.nonzero(mask)
        frame = pd.DataFrame({"user": self.users[rows], "item": self.items[rows, cols], "rank": cols + 1})
        frame["score"] = (self.scores[rows, cols] if self.scores is not None
                          else (self.depth - cols).astype(np.float64))
        return frame
