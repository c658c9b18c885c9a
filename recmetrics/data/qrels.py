"""`Qrels`: the test judgments (user, item, rating) with a relevance threshold.

Ratings ``>= threshold`` are relevant, judged ratings below it are non-relevant, and items a
user did not rate are unjudged. Graded metrics use the rating itself as the gain.
"""
from __future__ import annotations

from functools import cached_property

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, require_columns, require_ids, show, where
from .ids import Ids

if TYPE_CHECKING:
    import pandas as pd


def _validate_ratings(frame: pd.DataFrame, what: str, negative_ok: bool = False, source=None) -> np.ndarray:
    """Return the ``rating`` column as float64, or raise naming the first offending row."""
    import pandas as pd

    col = frame["rating"]
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(values) | np.isinf(values)
    if not negative_ok:
        bad |= values < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{what}: rating {show(col.iloc[i])} of user {show(frame['user'].iloc[i])} item "
            f"{show(frame['item'].iloc[i])} ({where(source if source is not None else frame, i)}) "
            f"is not a {'' if negative_ok else 'non-negative '}finite number"
        )
    return values


class Qrels:
    """Judgments of the evaluated users.

    Parameters
    ----------
    ratings:
        DataFrame with columns ``user, item, rating`` (other columns are ignored).
    threshold:
        Ratings ``>= threshold`` are relevant (default 4, on a 1-5 scale).
    max_rating:
        Top of the rating scale (ERR's ``r_max``); defaults to the largest rating present.
    negative:
        What a negative grade means. ``"unjudged"`` (default, on every surface: data frames,
        rating tables and TREC qrels files alike): trec_eval's reading (``form_res_rels.c``: "in
        pool, but unjudged (eg, infAP uses a sample of pool)"): the item is neither relevant nor
        judged non-relevant; only infAP (``m_infap.c``) and bpref (``m_bpref.c``) see it, as pooled
        but unjudged. Ratings themselves are never negative (the dataset readers refuse them), so a
        negative value in judgments can only be such a label. ``"error"``: refuse negative grades.
    """

    NEGATIVE = ("error", "unjudged")

    def __init__(self, ratings: pd.DataFrame, threshold: float = 4.0, max_rating: float | None = None,
                 *, user_col: str = "user", item_col: str = "item", rating_col: str = "rating",
                 negative: str = "unjudged"):
        if negative not in self.NEGATIVE:
            raise InputError(f"negative must be one of {self.NEGATIVE}, got {negative!r}")
        self.negative = negative
        require_columns(ratings, (user_col, item_col, rating_col), "qrels table")
        frame = ratings[[user_col, item_col, rating_col]]
        frame.columns = ["user", "item", "rating"]
        if frame.empty:
            raise InputError("qrels are empty: at least one (user, item, rating) judgment is needed")
        require_ids(ratings, (user_col, item_col), "qrels")
        values = _validate_ratings(frame, "qrels", negative == "unjudged", ratings)
        dup = frame.duplicated(["user", "item"]).to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise InputError(
                f"qrels: user {show(frame['user'].iloc[i])} item {show(frame['item'].iloc[i])} is judged more than once "
                f"({where(ratings, i)}); one judgment per (user, item) expected"
            )
        if not np.isfinite(threshold) or threshold < 0:
            raise InputError(f"relevance threshold must be a number >= 0 (0: every judged grade is relevant, as "
                             f"trec_eval's -l 0), got {threshold!r}")
        self.threshold = float(threshold)
        self.max_rating = float(max(values.max(), 0.0) if max_rating is None else max_rating)
        if self.max_rating < values.max():
            raise InputError(f"max_rating={max_rating} is below the largest rating {values.max()}")
        # canonical storage: sorted by user code then item code
        import pandas as pd

        ucodes, users = pd.factorize(frame["user"].to_numpy(), sort=True)
        icodes, items = pd.factorize(frame["item"].to_numpy(), sort=True)
        self._store(ucodes, users, icodes, items, values)

    def _store(self, ucodes, users, icodes, items, values, is_sorted: bool = False) -> None:
        """Keep the judgments sorted by (user code, item code); ``users``/``items`` are sorted
        (``is_sorted``: in :meth:`Ids.order`, which lets lookups skip sorting them again)."""
        self.user_index = Ids(users, is_sorted=is_sorted)
        self.item_index = Ids(items, is_sorted=is_sorted)
        keys = np.asarray(ucodes, dtype=np.int64) * len(items) + np.asarray(icodes, dtype=np.int64)
        order = np.argsort(keys, kind="stable")  # int64 radix sort: one key instead of a lexsort
        self._keys = keys[order]
        ucodes = self._keys // max(len(items), 1)
        icodes = self._keys - ucodes * len(items)
        small = len(users) < 2**31 and len(items) < 2**31  # int32 codes: memory of large qrels
        self._ucodes = ucodes.astype(np.int32) if small else ucodes
        self._icodes = icodes.astype(np.int32) if small else icodes
        self._ratings = values[order]

    @classmethod
    def from_codes(cls, ucodes, users, icodes, items, ratings, threshold: float = 1.0,
                   max_rating: float | None = None, negative: str = "unjudged") -> "Qrels":
        """The readers' vectorised path: ``users[ucodes[n]]`` rated ``items[icodes[n]]`` with
        ``ratings[n]``; (user, item) pairs must be unique and ratings finite (the readers check)."""
        ratings = np.asarray(ratings, dtype=np.float64)
        if not len(ratings):
            raise InputError("qrels are empty: at least one (user, item, rating) judgment is needed")
        if negative == "error" and (ratings < 0).any():
            raise InputError("qrels hold a negative rating; pass negative='unjudged' for trec_eval's semantics")
        if not np.isfinite(threshold) or threshold < 0:
            raise InputError(f"relevance threshold must be a number >= 0 (0: every judged grade is relevant, as "
                             f"trec_eval's -l 0), got {threshold!r}")
        self = cls.__new__(cls)
        self.negative = negative
        self.threshold = float(threshold)
        top = float(max(ratings.max(), 0.0))
        self.max_rating = top if max_rating is None else float(max_rating)
        if self.max_rating < top:
            raise InputError(f"max_rating={max_rating} is below the largest rating {top}")
        users, items = np.asarray(users), np.asarray(items)
        uperm, iperm = Ids(users).order(), Ids(items).order()
        urank, irank = np.empty_like(uperm), np.empty_like(iperm)
        urank[uperm] = np.arange(len(uperm))
        irank[iperm] = np.arange(len(iperm))
        self._store(urank[ucodes], users[uperm], irank[icodes], items[iperm], ratings, is_sorted=True)
        return self

    # ------------------------------------------------------------------ basic views
    @classmethod
    def from_dict(cls, judgments, threshold: float = 1.0, **kw) -> "Qrels":
        """Build from ``{user: {item: rating}}`` (pytrec_eval / ranx / ir_measures' qrels layout;
        the default threshold 1 is theirs)."""
        import pandas as pd

        rows = [(u, i, r) for u, d in judgments.items() for i, r in d.items()]
        return cls(pd.DataFrame(rows, columns=["user", "item", "rating"]), threshold, **kw)

    @classmethod
    def _from_codes(cls, parent: "Qrels", keep: np.ndarray) -> "Qrels":
        frame = parent.to_frame()[keep]
        return cls(frame, parent.threshold, parent.max_rating, negative=parent.negative)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({
            "user": self.user_index.to_numpy()[self._ucodes],
            "item": self.item_index.to_numpy()[self._icodes],
            "rating": self._ratings,
        })

    def __len__(self) -> int:
        return len(self._ratings)

    def __repr__(self) -> str:
        return (f"Qrels(users={len(self.user_index)}, judgments={len(self)}, "
                f"threshold={self.threshold:g}, max_rating={self.max_rating:g})")

    @property
    def users(self) -> np.ndarray:
        """Every judged user."""
        return self.user_index.to_numpy()

    @cached_property
    def n_relevant(self) -> np.ndarray:
        """Number of relevant judgments per user (aligned with :attr:`users`)."""
        return np.bincount(self._ucodes, weights=self._ratings >= self.threshold,
                           minlength=len(self.user_index)).astype(np.int64)

    @cached_property
    def n_nonrelevant(self) -> np.ndarray:
        """Number of judged non-relevant items per user (aligned with :attr:`users`)."""
        judged = self._ratings >= 0  # negative: in the pool but unjudged (trec_eval)
        return np.bincount(self._ucodes, weights=judged, minlength=len(self.user_index)).astype(np.int64) \
            - self.n_relevant

    @property
    def relevant_users(self) -> np.ndarray:
        """Users with at least one relevant judgment (the default evaluated users)."""
        return self.users[self.n_relevant > 0]

    def mask(self, keep: np.ndarray) -> "Qrels":
        """A new Qrels keeping only the judgments where ``keep`` (aligned with :meth:`to_frame`) is True."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self),):
            raise InputError(f"mask must be a boolean vector of length {len(self)}, got shape {keep.shape}")
        return Qrels._from_codes(self, keep)

    # ------------------------------------------------------------------ lookups for judging
    def lookup(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Ratings of the ``(users[i], items[i, j])`` pairs; NaN where unjudged.

        ``users`` has shape (n,), ``items`` (n, depth); vectorised through sorted int64 keys.
        """
        pos = self.positions(users, items)
        return np.where(pos >= 0, self._ratings[pos], np.nan)

    def positions(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Row (in :meth:`to_frame` and :meth:`mask` order) of the judgment of each
        ``(users[i], items[i, j])`` pair; -1 where unjudged. A judgment kept by ``mask(keep)`` is the
        one at a position ``p`` with ``keep[p]``, so lists looked up once serve every reduced set."""
        u = self.user_index.get_indexer(users)
        flat = np.asarray(items).ravel()
        i = self.item_index.get_indexer(flat).reshape(np.shape(items))
        keys = u[:, None].astype(np.int64) * len(self.item_index) + i
        pos = np.searchsorted(self._keys, keys)
        pos = np.minimum(pos, len(self._keys) - 1)
        hit = (self._keys[pos] == keys) & (i >= 0) & (u[:, None] >= 0)
        return np.where(hit, pos, -1)

    @cached_property
    def _offsets(self) -> tuple[np.ndarray, np.ndarray]:
        counts = np.bincount(self._ucodes, minlength=len(self.user_index))
        return counts, np.concatenate([[0], np.cumsum(counts)[:-1]])

    @cached_property
    def _desc_order(self) -> np.ndarray:
        """Storage positions sorted by user, then rating descending."""
        return np.lexsort((-self._ratings, self._ucodes))

    @cached_property
    def _desc(self) -> np.ndarray:
        """Ratings sorted descending within each user (aligned with the storage order)."""
        return self._ratings[self._desc_order]

    def _gather(self, users: np.ndarray, width: int | None):
        """Row index, offset within user and storage index of the first ``width`` entries of each user."""
        u = self.user_index.get_indexer(users)
        counts, starts = self._offsets
        n = np.where(u >= 0, counts[np.maximum(u, 0)], 0)
        if width is not None:
            n = np.minimum(n, width)
        rows = np.repeat(np.arange(len(users)), n)
        offs = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        return rows, offs, np.repeat(starts[np.maximum(u, 0)], n) + offs, n

    def entries(self, users: np.ndarray):
        """All judgments of ``users`` as (row in ``users``, item code, rating), sorted by row.

        The last answer is memoised (runs of one study are judged against the same users)."""
        key = (users.dtype.str, users.tobytes()) if users.dtype != object else None
        cached = self.__dict__.get("_entries_memo")
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        rows, _, src, _ = self._gather(users, None)
        out = (rows, self._icodes[src], self._ratings[src])
        self.__dict__["_entries_memo"] = (key, out)
        return out

    def ideal_dcg(self, users: np.ndarray, k: int | None = None, relevant_only: bool = False,
                  exp: bool = False) -> np.ndarray:
        """DCG of each user's ideal ranking (all judgments, rating as gain) truncated at ``k``.

        Positive grades are gains (trec_eval); ``relevant_only``: only grades >= the threshold;
        ``exp``: the gain is 2^grade - 1 (Burges et al.) instead of the grade. ``users=None``: every
        judged user, aligned with :attr:`users`."""
        memo = self.__dict__.setdefault("_idcg_memo", {})
        key = (k, relevant_only, exp)
        if key not in memo:  # computed once per cut-off for every judged user
            terms = memo.get((relevant_only, exp))
            if terms is None:  # every judgment's discounted gain in the ideal order, shared by the cut-offs
                # _desc is grouped by user like the storage: a judgment's user is its _ucodes entry
                rows = self._ucodes
                offs = np.arange(len(rows)) - self._offsets[1][rows]  # position in the user's ideal ranking
                gains = self._desc
                keep = gains >= self.threshold if relevant_only else gains > 0
                w = np.where(keep, gains, 0.0)
                if exp:
                    w = np.where(keep, np.exp2(w) - 1.0, 0.0)
                w /= np.log2(offs + 2.0)
                small = np.int32 if len(offs) < 2**31 else np.int64  # kept: compact (memory of large qrels)
                terms = memo[(relevant_only, exp)] = (rows, offs.astype(small), w)
            rows, offs, w = terms
            if k is not None:
                sel = offs < k
                rows, w = rows[sel], w[sel]
            memo[key] = np.bincount(rows, weights=w, minlength=len(self.users))
        return memo[key] if users is None else self.per_user(users, memo[key])

    def per_user(self, users: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Align a per-qrels-user vector (e.g. :attr:`n_relevant`) to ``users`` (0 where unknown)."""
        u = self.user_index.get_indexer(users)
        return np.where(u >= 0, values[np.maximum(u, 0)], 0)
