"""The judged label matrix: one run judged against one set of judgments.

``labels[u, j]`` is the test rating of the item at rank ``j + 1`` of user ``u``'s list (NaN when
unjudged or past the end of the list). Per-user totals (relevant, judged non-relevant, ideal
gains) come from the *full* judgments, never from the truncated list. Every ranking metric is a
pure numpy function of a :class:`Judged`.

Judging is done in the direction that is cheap: the run's lists are scattered into a
``(users, judged items) -> rank`` table (chunked over users), and each *judgment* looks up its
rank there. The result is the sparse set of judged positions (``hits``: row, rank, rating,
sorted by row then rank); the dense matrices are derived lazily for the metrics that want them.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .data.ids import Ids, id_kind as _id_kind
from .data.qrels import Qrels
from .data.run import Run
from .errors import InputError, show

USER_POLICIES = ("relevant", "all", "run")
_CHUNK_CELLS = 1 << 20  # cells of the reusable rank table (cache-sized)


@dataclass
class Hits:
    """The judged positions of a judged run, sorted by (row, col)."""

    rows: np.ndarray   # user row
    cols: np.ndarray   # 0-based rank
    vals: np.ndarray   # rating


@dataclass
class Judged:
    users: np.ndarray          # (n,) evaluated user ids
    hits: Hits                 # judged positions (sparse), sorted by row then rank
    lengths: np.ndarray        # (n,) list length (0 for users without a list)
    in_run: np.ndarray         # (n,) whether the run has a list for the user
    n_rel: np.ndarray          # (n,) relevant judgments of the user
    n_nonrel: np.ndarray       # (n,) judged non-relevant items of the user
    depth: int                 # width of the label matrix (>= every cut-off used)
    threshold: float
    max_rating: float
    qrels: Qrels
    run: Run | None            # None for stacked runs (see stack)
    run_rows: np.ndarray       # (n,) row of each user in the run (-1 if absent)
    metadata: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.users)

    def cut(self, k: int | None) -> int:
        """Resolve a cut-off: None means the full depth."""
        if k is None:
            return self.depth
        if k > self.depth:
            raise InputError(f"cut-off {k} exceeds the judged depth {self.depth}; judge with depth >= {k}")
        return int(k)

    # ---------------------------------------------------------------- sparse intermediates
    @cached_property
    def hit_rel(self) -> np.ndarray:
        return self.hits.vals >= self.threshold

    @cached_property
    def hit_offsets(self) -> np.ndarray:
        """``(n + 1,)``: row ``r``'s judged positions are ``hits[hit_offsets[r]:hit_offsets[r + 1]]``
        (counted per row: the hits are sorted by row, so this equals searching each row's start)."""
        out = np.zeros(len(self) + 1, dtype=np.intp)
        np.cumsum(np.bincount(self.hits.rows, minlength=len(self)), out=out[1:])
        return out

    @cached_property
    def _row_first(self) -> np.ndarray:
        """For each hit, the index of the first hit of its row (hits are sorted by row)."""
        starts = self.hit_offsets
        return np.repeat(starts[:-1], np.diff(starts))

    def before(self, x: np.ndarray) -> np.ndarray:
        """For each hit, the sum of ``x`` (counts: whole numbers) over the earlier hits of its row.

        A running sum over every row minus the row's start, exact for whole numbers, so a hit's
        value depends on its own row only; a sum of fractions would carry rounding from the rows
        before it (:func:`recmetrics.metrics.gains.seg_exclusive` sums those row by row). A boolean
        ``x`` (the hits to count) is counted in integers, converted once: the same whole numbers."""
        if x.dtype == bool:
            c = np.cumsum(x, dtype=np.int32 if len(x) < 2 ** 31 else np.int64)
            c -= x
            if len(c):
                c -= c[self._row_first]
            return c.astype(np.float64)
        c = np.cumsum(x, dtype=np.float64) - x
        return c - c[self._row_first] if len(c) else c

    @cached_property
    def rel_before(self) -> np.ndarray:
        """Relevant items ranked above each hit (same user)."""
        return self.before(self.hit_rel)

    @cached_property
    def hit_nonrel(self) -> np.ndarray:
        """Judged non-relevant hits (a negative label is "pooled but unjudged", not judged)."""
        return (self.hits.vals >= 0) & ~self.hit_rel

    @cached_property
    def nonrel_before(self) -> np.ndarray:
        """Judged non-relevant items ranked above each hit (same user)."""
        return self.before(self.hit_nonrel)

    @cached_property
    def unjudged_before(self) -> np.ndarray:
        """Pooled-but-unjudged items (negative labels, trec_eval's RELVALUE_UNJUDGED) above each hit."""
        pooled = self.hits.vals < 0
        return self.before(pooled) if pooled.any() else np.zeros(len(pooled))

    def rel_top(self, k: int) -> np.ndarray:
        """Mask of the relevant hits within the top ``k`` (memoised: several metrics share it; the
        ranking metrics' sums read the same hits through :meth:`top_sums`)."""
        memo = self.__dict__.setdefault("_rel_top", {})
        if k not in memo:
            memo[k] = self.hit_rel if k >= self.depth else self.hit_rel & (self.hits.cols < k)
        return memo[k]

    def n_rel_top(self, k: int) -> np.ndarray:
        """Relevant items in the top ``k`` per user (|L^k ∩ R|; memoised)."""
        memo = self.__dict__.setdefault("_n_rel_top", {})
        if k not in memo:
            memo[k] = self.top_sums("count", 1.0, self.hit_rel, k)
        return memo[k]

    def top_sums(self, key, weights, mask: np.ndarray | None, k: int) -> np.ndarray:
        """``per_user(weights, mask & (hits.cols < k))`` (``mask`` None: every hit), bit for bit.

        Memoised per ``key``, which names ``weights`` and ``mask`` (a metric's memo key): after the
        sums at one cut-off, a larger one continues them over the hits ranked in between
        (``numpy.add.at`` adds a user's hits one after another in rank order, as the sum from scratch
        does: the same additions in the same order), so the ascending cut-offs of a metric cost one
        pass over its hits instead of one per cut-off. The array returned is kept: do not modify it."""
        memo = self.__dict__.setdefault("_top_sums", {})
        last = memo.get(key)
        if last is not None and last[0] == k:
            return last[1]
        k0 = last[0] if last is not None and last[0] < k else 0
        idx, rows = self._band(mask, k0, k)
        w = np.asarray(weights, dtype=np.float64).take(idx) if np.ndim(weights) else None
        if k0:
            out = last[1].copy()
            np.add.at(out, rows, 1.0 if w is None else w)
        else:
            out = np.bincount(rows, weights=w, minlength=len(self)).astype(np.float64)
        memo[key] = (k, out)
        return out

    def _band(self, mask: np.ndarray | None, k0: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions and rows of the hits selected by ``mask`` (None: all) ranked in ``[k0, k)``;
        memoised for :attr:`hit_rel`, which P, Recall, AP, bpref and infAP share."""
        shared = mask is not None and mask is self.__dict__.get("hit_rel")
        memo = self.__dict__.setdefault("_rel_bands", {}) if shared else {}
        if (k0, k) not in memo:
            cols = self.hits.cols
            sel = cols < k if k < self.depth else None
            if k0:
                sel = cols >= k0 if sel is None else sel & (cols >= k0)
            if mask is not None:
                sel = mask if sel is None else sel & mask
            idx = np.flatnonzero(sel) if sel is not None else np.arange(len(cols))
            memo[(k0, k)] = (idx, self.hits.rows.take(idx))
        return memo[(k0, k)]

    def per_user(self, weights: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Sum ``weights`` (a scalar: count) of the hits selected by ``mask`` per user (the ranking
        metrics' sums at a cut-off go through :meth:`top_sums`, which shares the relevant hits' positions)."""
        idx = np.flatnonzero(mask)  # one pass; taking by index beats boolean indexing twice
        rows = self.hits.rows.take(idx)
        w = np.asarray(weights, dtype=np.float64).take(idx) if np.ndim(weights) else None
        return np.bincount(rows, weights=w, minlength=len(self)).astype(np.float64)

    def ideal_dcg(self, k: int | None, relevant_only: bool = False, exp: bool = False) -> np.ndarray:
        """DCG of the ideal ranking of all the user's judgments, truncated at ``k`` (None: all);
        ``exp``: gain 2^grade - 1."""
        rows = self.__dict__.get("_qrels_rows")
        if rows is None:  # the users' rows in the qrels, looked up once for every cut-off
            rows = self.__dict__["_qrels_rows"] = self.qrels.user_index.get_indexer(self.users)
        full = self.qrels.ideal_dcg(None, k, relevant_only, exp)
        return np.where(rows >= 0, full[np.maximum(rows, 0)], 0.0)

    # ---------------------------------------------------------------- dense views (lazy)
    @cached_property
    def labels(self) -> np.ndarray:
        out = np.full((len(self), self.depth), np.nan)
        out[self.hits.rows, self.hits.cols] = self.hits.vals
        return out

    @cached_property
    def items(self) -> np.ndarray:
        """(n, depth) item ids of the lists (meaningless past ``lengths``)."""
        run = self.run
        if run is None:
            raise InputError("this Judged stacks several runs (judged.stack): item ids are not kept; "
                             "metrics that need them (diversity, classification) take one judged run")
        take = min(self.depth, run.depth)
        out = np.zeros((len(self), self.depth), dtype=run.items.dtype)
        ok = self.in_run
        if take:
            out[ok, :take] = run.items[self.run_rows[ok], :take]
        return out

    @cached_property
    def rel(self) -> np.ndarray:
        return self.labels >= self.threshold  # NaN compares False


def judgment_index(j: Judged) -> np.ndarray:
    """For each judged position of ``j`` (``j.hits``), the index of its judgment in ``j.qrels``'
    storage order (the rows of :meth:`Qrels.to_frame`): what the robustness scenarios mask. Read
    from the run's item codes (one id look-up per distinct item, not per position); ``j`` must hold
    its run (not a :func:`stack`)."""
    if j.run is None:
        raise InputError("judgment_index needs one judged run (a stack does not keep its runs)")
    q, (codes, vocab) = j.qrels, j.run.codes
    rows, cols = j.hits.rows, j.hits.cols
    items = q.item_index.get_indexer(vocab)[codes[j.run_rows[rows], cols]]
    users = q.user_index.get_indexer(j.users)[rows]
    keys = users.astype(np.int64) * len(q.item_index) + items
    pos = np.searchsorted(q._keys, keys)
    if len(pos) and not (q._keys[np.minimum(pos, len(q._keys) - 1)] == keys).all():  # pragma: no cover
        raise InputError("a judged position has no judgment in the qrels (judged against other qrels?)")
    return pos


def stack(judged: list[Judged]) -> Judged:
    """Several runs judged against the same judgments as one :class:`Judged` whose rows are the
    runs' rows one after the other (users repeat), so one call of a ranking metric scores them all.

    For the metrics that need only judged positions and per-user totals (every ranking metric);
    ``items`` is not available (``run`` is None). Row ``r`` belongs to run ``numpy.searchsorted(
    offsets, r, "right") - 1`` with ``offsets`` in ``metadata["offsets"]``."""
    if not judged:
        raise InputError("stack needs at least one judged run")
    first = judged[0]
    for j in judged[1:]:
        if j.qrels is not first.qrels or j.depth != first.depth:
            raise InputError("stacked runs must be judged against the same Qrels object at the same depth")
    sizes = np.array([len(j) for j in judged])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    cat = lambda name: np.concatenate([getattr(j, name) for j in judged])  # noqa: E731
    hits = Hits(np.concatenate([j.hits.rows + o for j, o in zip(judged, offsets)]),
                np.concatenate([j.hits.cols for j in judged]), np.concatenate([j.hits.vals for j in judged]))
    return Judged(users=cat("users"), hits=hits, lengths=cat("lengths"), in_run=cat("in_run"), n_rel=cat("n_rel"),
                  n_nonrel=cat("n_nonrel"), depth=first.depth, threshold=first.threshold,
                  max_rating=first.max_rating, qrels=first.qrels, run=None, run_rows=cat("run_rows"),
                  metadata={"runs": [j.metadata.get("run") for j in judged], "offsets": offsets})


def common_ids(run: Run, qrels: Qrels) -> tuple[Run, Qrels]:
    """One id rule for both sides: when the run's and the judgments' ids differ in type (integers on
    one side, strings on the other), both are compared as strings, as trec_eval compares them
    (so ``"01"`` never equals ``1``, and ``"7"`` equals ``7``). Same types: unchanged."""
    codes, vocab = run.codes
    used = np.zeros(len(vocab), dtype=bool)
    used[codes[codes >= 0]] = True  # list padding may hold a placeholder of another type
    run_items = vocab[used]
    kinds = {"user": (run.user_index.kind, qrels.user_index.kind), "item": (_id_kind(run_items), qrels.item_index.kind)}
    fix_users, fix_items = (a != b for a, b in kinds.values())
    if not (fix_users or fix_items):
        return run, qrels
    for side, (a, b) in kinds.items():
        if "other" in (a, b) and a != b:
            raise InputError(f"{side} ids of run {run.name!r} and of the judgments have different types "
                             f"({a} vs {b}) that cannot be matched as strings; use int or str ids")
    new = Run(run.users.astype(str) if fix_users else run.users,
              vocab.astype(str)[np.maximum(codes, 0)] if fix_items else run.items,
              run.lengths, run.scores, run.name, dict(run.metadata))
    new.__dict__["codes"] = (codes, vocab.astype(str) if fix_items else vocab)
    frame = qrels.to_frame()
    if fix_users:  # only the side whose types differ (the run's other ids are kept as they are)
        frame["user"] = frame["user"].astype(str)
    if fix_items:
        frame["item"] = frame["item"].astype(str)
    q = Qrels(frame, qrels.threshold, qrels.max_rating, negative=qrels.negative)
    return new, q


def _ids_look_mismatched(run: Run, qrels: Qrels) -> bool:
    """No ranked item is a judged item, and either the ids would match once leading zeros are
    ignored, or the run has enough distinct items (>= 10) for that to be no accident."""
    codes, vocab = run.codes
    used = vocab[np.unique(codes[codes >= 0])]
    judged = qrels.item_index.to_numpy()
    if (Ids(judged).get_indexer(used) >= 0).any():
        return False
    canon = lambda a: {str(x).lstrip("0") or "0" for x in a[:100_000]}  # noqa: E731
    return len(used) >= 10 or bool(canon(used) & canon(judged))


def _eval_users(qrels: Qrels, users, run: Run | None = None) -> np.ndarray:
    if isinstance(users, str):
        if users not in USER_POLICIES:
            raise InputError(f"users policy must be one of {USER_POLICIES} or an array of ids, got {users!r}")
        if users == "run":  # trec_eval without -c: the judged users the run has a list for
            return qrels.users[run.user_index.get_indexer(qrels.users) >= 0]
        return qrels.relevant_users if users == "relevant" else qrels.users
    eval_users = np.asarray(users)
    if eval_users.ndim != 1:
        raise InputError(f"users must be a policy name {USER_POLICIES} or a list of user ids, got an array of "
                         f"shape {eval_users.shape}")
    import pandas as pd

    twice = pd.Index(eval_users).duplicated()
    if twice.any():  # a user listed twice would count twice in every mean
        raise InputError(f"user {show(eval_users[twice.argmax()])} is given more than once in users= (position "
                         f"{int(twice.argmax())}); give each user once")
    unknown = qrels.user_index.get_indexer(eval_users) < 0
    if unknown.any():
        raise InputError(f"user {show(eval_users[unknown][0])} has no judgments; cannot evaluate it")
    return eval_users


def _find_hits(run: Run, qrels: Qrels, eval_users: np.ndarray, run_rows: np.ndarray, lengths: np.ndarray) -> Hits:
    """Rank of every judgment of the evaluated users in their lists (vectorised, chunked).

    A chunk of users' lists is scattered into a small reusable ``(users, judged items + 1)`` table
    of rank + 1 (the extra column absorbs items nobody judged and list padding); each judgment of
    those users then reads its rank from the table, and the touched cells are reset.
    """
    codes, vocab = run.codes
    n_items = len(qrels.item_index)
    qmap = qrels.item_index.get_indexer(vocab)
    qmap = np.append(np.where(qmap < 0, n_items, qmap), n_items)  # unjudged item / padding -> dummy column
    ent_row, ent_item, ent_val = qrels.entries(eval_users)
    n = len(eval_users)
    depth = int(lengths.max()) if n else 0
    if depth == 0 or len(ent_row) == 0:
        return Hits(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    width = n_items + 1
    dtype = np.uint16 if depth < np.iinfo(np.uint16).max else np.int64
    chunk = max(1, _CHUNK_CELLS // width)
    buf = np.zeros(min(chunk, n) * width, dtype=dtype)
    ranks = np.arange(1, depth + 1, dtype=dtype)
    ptr = np.searchsorted(ent_row, np.arange(0, n + chunk, chunk).clip(max=n))
    rank1 = np.zeros(len(ent_row), dtype=dtype)
    for c, c0 in enumerate(range(0, n, chunk)):
        rr = run_rows[c0:c0 + chunk]
        local = np.flatnonzero(rr >= 0)
        e0, e1 = ptr[c], ptr[c + 1]
        if not len(local) or e0 == e1:
            continue
        sub = codes[rr[local], :depth]
        if (lengths[c0 + local] < sub.shape[1]).any():  # lists cut by a smaller depth
            sub = np.where(np.arange(sub.shape[1]) < lengths[c0 + local][:, None], sub, -1)
        flat = (local * width)[:, None] + qmap[sub]
        buf[flat] = ranks[: sub.shape[1]]
        ent_flat = (ent_row[e0:e1] - c0) * width + ent_item[e0:e1]
        rank1[e0:e1] = buf[ent_flat]
        buf[flat] = 0
    found = np.flatnonzero(rank1)
    rows, cols, vals = ent_row[found], rank1[found].astype(np.int64) - 1, ent_val[found]
    order = np.lexsort((cols, rows))
    return Hits(rows[order], cols[order], vals[order])


def judge(run: Run, qrels: Qrels, *, depth: int | None = None, users="relevant") -> Judged:
    """Judge ``run`` against ``qrels``.

    users:
        ``"relevant"`` (default): the judged users with at least one relevant item;
        ``"all"``: every judged user (trec_eval ``-c``); ``"run"``: the judged users the run has a
        list for (trec_eval without ``-c``); or an explicit array of user ids.
        Users without a list in the run get an empty list (every metric scores 0: coverage shortfall).
    depth:
        Width of the label matrix (default: the run's depth). Lists shorter than a cut-off are padded
        with unjudged positions, so a cut-off may exceed the list length.
    Run users absent from the qrels are ignored with a warning (counted in ``metadata``).
    """
    run, qrels = common_ids(run, qrels)
    eval_users = _eval_users(qrels, users, run)
    depth = run.depth if depth is None else int(depth)
    if depth < 0:
        raise InputError(f"depth must be >= 0, got {depth}")
    run_rows = run.user_index.get_indexer(eval_users)
    in_run = run_rows >= 0
    lengths = np.zeros(len(eval_users), dtype=np.int64)
    lengths[in_run] = np.minimum(run.lengths[run_rows[in_run]], depth)
    hits = _find_hits(run, qrels, eval_users, run_rows, lengths)

    ignored_mask = qrels.user_index.get_indexer(run.users) < 0
    ignored = int(ignored_mask.sum())
    if ignored and ignored == len(run.users):
        warnings.warn(
            f"run {run.name!r}: none of its {ignored} user(s) is judged, so it has no list for any evaluated user "
            f"and scores 0 for every one of them. Likely cause: the run's user ids do not match the judgments' "
            f"(run users e.g. {', '.join(show(u) for u in run.users[:3])}; judged users e.g. "
            f"{', '.join(show(u) for u in qrels.users[:3])}; ids are compared as strings: '01' != '1'), or the run "
            f"belongs to another dataset/split", stacklevel=2,
        )
    elif ignored:
        warnings.warn(
            f"run {run.name!r}: {ignored} user(s) have no judgments and are ignored "
            f"(e.g. {', '.join(show(u) for u in run.users[ignored_mask][:3])})", stacklevel=2,
        )
    if len(hits.rows) == 0 and lengths.sum() > 0 and _ids_look_mismatched(run, qrels):
        sample = run.codes[1][:3].tolist()
        warnings.warn(
            f"run {run.name!r}: none of its items is a judged item, so every score of its "
            f"{int(in_run.sum())} evaluated user(s) is 0. Likely cause: the run's item ids do not match the "
            f"judgments' (run items e.g. {sample}, judged items e.g. {qrels.item_index[:3].tolist()}; "
            f"ids are compared as strings: '01' != '1'), or the run belongs to another dataset/split",
            stacklevel=2,
        )
    return Judged(
        users=eval_users, hits=hits, lengths=lengths, in_run=in_run,
        n_rel=qrels.per_user(eval_users, qrels.n_relevant),
        n_nonrel=qrels.per_user(eval_users, qrels.n_nonrelevant),
        depth=depth, threshold=qrels.threshold, max_rating=qrels.max_rating,
        qrels=qrels, run=run, run_rows=run_rows,
        metadata={"run": run.name, "users_evaluated": len(eval_users),
                  "users_missing_from_run": int((~in_run).sum()), "run_users_ignored": ignored},
    )
