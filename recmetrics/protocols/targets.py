"""Target sets, their batched scoring and ranking, and :func:`evaluate` (paper 004, §4.3, Eq. 4.1).

Building (:func:`build_targets`) is vectorised over users: the candidates C are columns, each
user's excluded items (training items and relevant test items) a row of a boolean mask, and NN
samples the ``n`` candidates with the smallest random keys among the allowed ones. A user's keys
come from a generator seeded with ``(seed, the user's id)`` (:func:`user_rng`), so N_u does not
depend on which other users are evaluated (``users=``) — as the Random recommender seeds each
user's scores. P1R samples within each popularity percentile.

**Short pools.** A user may have fewer allowed candidates than the ``n`` requested (a heavy rater
in a P1R percentile: 23 of 10,015 P1R sets on movielens-small). By default (``strict=False``) the
set then takes the whole pool, a warning says how many sets were short, and the metadata records
them (``short_sets``, ``short_users``); the random expectation
(:func:`~recmetrics.protocols.expectations.expected_random_precision`) is computed from the actual
set sizes, so it stays exact. ``strict=True`` raises instead, naming the user and the largest
feasible ``n``.

Scoring: every user's target sets are concatenated and scored with one ``system.score_targets``
call per batch of users (one matrix operation per batch), never one call per target set. Ties are
broken by one seeded random key per item, the same in every target set, so the ranking of a subset
agrees with the ranking of its superset (what the proof of Eq. 4.2 uses).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..arrays import ranges
from ..data.qrels import Qrels
from ..data.run import Run
from .. import checks
from ..errors import InputError, require_columns, show
from .designs import Design, parse


class ShortPoolWarning(UserWarning):
    """Some target sets took a pool shorter than the design's n (recorded in ``metadata['short_sets']``;
    the random expectation uses the actual set sizes). ``strict=True`` makes it an error instead."""

#: keys drawn per chunk of users when sampling N_u (rows x candidates)
_CHUNK_CELLS = 4_000_000


@dataclass
class TargetSets:
    """Flat target sets: set ``s`` holds ``items[starts[s]:starts[s+1]]`` for ``users[s]``;
    ``rel_item[s]`` is its relevant item (1R, always first in its set) or None (AR); ``group[s]`` its
    percentile (P1R, else 0); ``short[s]`` is True when its non-relevant pool had fewer than ``n`` items."""

    users: np.ndarray
    items: np.ndarray
    lengths: np.ndarray
    rel_item: np.ndarray | None
    group: np.ndarray
    qrels: pd.DataFrame  # set, item, rating
    metadata: dict = field(default_factory=dict)
    short: np.ndarray | None = None

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)])


@dataclass
class ProtocolResult:
    """``per_set``: one row per target set (user [, item, percentile]) and one column per metric;
    ``aggregate``: Eq. 4.1 (the mean over target sets; for P1R the mean of the m percentile means).
    :func:`recmetrics.protocols.uncertainty.standard_errors` gives the standard error of each
    aggregate (bootstrap over users)."""

    per_set: pd.DataFrame
    aggregate: pd.Series
    metadata: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"ProtocolResult({self.metadata.get('design')}, sets={len(self.per_set)})\n{self.aggregate.to_string()}"


def _frames(train, test):
    for name, f in (("training", train), ("test", test)):
        require_columns(f, ("user", "item", "rating"), f"protocols: {name} table")
    if len(test) == 0:
        raise InputError("protocols: the test table is empty; nothing to evaluate")
    return train, test


def user_rng(seed: int, user) -> np.random.Generator:
    """The generator of ``user``'s sample: seeded with ``seed`` and the bytes of ``str(user)``
    (the id itself, not its position), so it is the same whichever other users are evaluated.

    >>> bool(user_rng(0, "u7").random() == user_rng(0, "u7").random() != user_rng(1, "u7").random())
    True
    """
    b = str(user).encode("utf-8")
    return np.random.default_rng([int(seed), len(b), int.from_bytes(b, "little")])


def check_system(system, what: str = "protocols.evaluate"):
    """Raise :class:`InputError` unless ``system`` can score target sets (a fitted zoo system)."""
    if not callable(getattr(system, "score_targets", None)):
        hint = (f"rm.recommenders.create({system!r}).fit(train)" if isinstance(system, str)
                else "rm.recommenders.create('Pop').fit(train)")
        raise InputError(f"{what} needs a fitted system with score_targets(users, targets), got "
                         f"{type(system).__name__} {system!r}; pass e.g. {hint}")
    return system


def popularity(train: pd.DataFrame, test: pd.DataFrame | None = None) -> pd.Series:
    """r(i): number of ratings per item (train [+ test]), sorted by decreasing popularity (ties by id)."""
    frame = train if test is None else pd.concat([train[["user", "item"]], test[["user", "item"]]])
    counts = frame["item"].value_counts()
    order = np.lexsort((counts.index.to_numpy(), -counts.to_numpy()))
    return counts.iloc[order]


def _head(train, test, share=0.10):
    pop = popularity(train, test)
    return set(pop.index[: int(np.ceil(share * len(pop)))])


def candidates(train: pd.DataFrame, test: pd.DataFrame, design: "str | Design") -> np.ndarray:
    """The candidate items C of ``design``: AI = every item of train or test; TI = the test items
    (for head10, minus the 10% most popular items). Items without a training rating are left out:
    no system can score them (they would get -inf and sink below every scored item, which biases
    even a random ranking against Eq. 4.5's 1/t); relevant test items among them get no target set."""
    d = parse(design)
    if d.candidates == "AI":
        items = pd.unique(pd.concat([train["item"], test["item"]]))
    else:
        items = pd.unique(test["item"])
    if d.kind == "head10":
        head = _head(train, test)
        items = np.array([i for i in items if i not in head])
    items = np.asarray(items)
    return np.sort(items[np.isin(items, train["item"].unique())])


def percentiles(train: pd.DataFrame, test: pd.DataFrame, C: np.ndarray, m: int, popularity_counts: str = "full"
                ) -> np.ndarray:
    """P1R's percentile (0 = most popular) of every candidate in ``C`` (§4.6.1): the candidates sorted
    by decreasing popularity (ties by id) and cut into ``m`` parts of equal size. ``popularity_counts``
    is ``"full"`` (train + test ratings, the thesis' r(i)) or ``"train"`` (r_train(i))."""
    pop = popularity(train, test if popularity_counts == "full" else None)
    counts = pop.reindex(C).fillna(0).to_numpy()
    order = np.lexsort((C, -counts))
    group = np.empty(len(C), dtype=np.int64)
    group[order] = np.minimum(np.arange(len(C)) * m // len(C), m - 1)
    return group


def _codes(values: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Positions of ``values`` in the sorted array ``sorted_ids`` (-1 when absent)."""
    pos = np.searchsorted(sorted_ids, values)
    pos = np.minimum(pos, max(len(sorted_ids) - 1, 0))
    ok = (len(sorted_ids) > 0) & (sorted_ids[pos] == values) if len(sorted_ids) else np.zeros(len(values), bool)
    return np.where(ok, pos, -1)


def build_targets(train: pd.DataFrame, test: pd.DataFrame, design: "str | Design", *, threshold: float = 4.0,
                  seed: int = 0, users=None, strict: bool = False) -> TargetSets:
    """Build the target sets of ``design`` (see :mod:`recmetrics.protocols.designs`).

    Parameters
    ----------
    threshold : ratings ``>= threshold`` are relevant (the thesis uses 5 on MovieLens, §4.3.3).
    seed : seeds the NN samples (one key stream per user, see the module docstring).
    users : ids; restricts the evaluated users (the candidates still come from the whole test set).
    strict : when an NN pool is shorter than ``n``: ``False`` (default) takes the whole pool, warns and
        records the short sets in ``metadata``; ``True`` raises :class:`InputError` naming the user.

    Raises :class:`InputError` when P1R's |T_u| = n + 1 exceeds |C|/m (§4.6.1's limit), when a U design
    gets a test set whose items do not all have the same number of test ratings, and when no user has
    a relevant test item among the candidates.

    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [1, 2, 2, 3], "item": [10, 10, 12, 11], "rating": [5.0] * 4})
    >>> test = pd.DataFrame({"user": [1, 2, 3, 3], "item": [12, 11, 10, 12], "rating": [5.0, 2, 5, 1]})
    >>> ts = build_targets(train, test, "TI-1R-NN(n=1)", threshold=5)
    >>> [ts.items[a:b].tolist() for a, b in zip(ts.starts[:-1], ts.starts[1:])]  # [relevant, sampled]
    [[12, 11], [10, 12]]
    """
    d = parse(design)
    seed = checks.seed(seed)
    train, test = _frames(train, test)
    if d.kind == "head10":
        head = _head(train, test)
        test = test[~test["item"].isin(head)]
    if d.uniform:
        counts = test["item"].value_counts()
        if counts.nunique() != 1:
            raise InputError(f"design {d}: every test item must have the same number η of test ratings "
                             f"(got {counts.min()}..{counts.max()}); build the split with "
                             f"rm.protocols.uniform_split(ratings, sigma, eps)")
    C = candidates(train, test, d)
    rel = test[test["rating"] >= threshold]
    if users is not None:
        rel = rel[rel["user"].isin(np.asarray(users))]
    rel_col = _codes(rel["item"].to_numpy(), C)
    rel = rel.assign(_col=rel_col)[rel_col >= 0]
    if len(rel) == 0:
        if (test["rating"] >= threshold).any():
            raise InputError(f"design {d}: no user has a relevant test item among the candidates")
        raise InputError(f"protocols: no test rating reaches the relevance threshold {threshold:g}")
    rel = rel.sort_values(["user", "_col"], kind="stable")
    U = pd.unique(rel["user"].to_numpy())
    n_c = len(C)
    groups = np.zeros(n_c, dtype=np.int64)
    n_groups = 1
    if d.kind == "P1R":
        limit = n_c // d.m
        if d.n + 1 > limit:
            raise InputError(f"design {d}: P1R needs |T_u| = n + 1 <= |C|/m = {n_c}/{d.m} = {limit} "
                             f"(§4.6.1: |T_u| <= |J|/m); use n <= {limit - 1} or m <= {n_c // (d.n + 1)}")
        groups = percentiles(train, test, C, d.m, d.popularity)
        n_groups = d.m
    # columns sorted by group: each percentile is a contiguous block
    col_order = np.argsort(groups, kind="stable")
    block_bounds = np.searchsorted(groups[col_order], np.arange(n_groups + 1))
    # excluded cells: training items and relevant test items of each evaluated user
    u_code = pd.Index(U)                  # each evaluated user's row (every user below is one of U)
    tr = train[train["user"].isin(U)]
    tr_rows = u_code.get_indexer(tr["user"].to_numpy()).astype(np.int64)
    tr_cols = _codes(tr["item"].to_numpy(), C)
    rel_rows = u_code.get_indexer(rel["user"].to_numpy()).astype(np.int64)
    rel_cols = rel["_col"].to_numpy()
    ex_rows = np.concatenate([tr_rows[tr_cols >= 0], rel_rows])
    ex_cols = np.concatenate([tr_cols[tr_cols >= 0], rel_cols])
    ex_order = np.lexsort((ex_cols, ex_rows))
    ex_rows, ex_cols = ex_rows[ex_order], ex_cols[ex_order]
    ex_start = np.searchsorted(ex_rows, np.arange(len(U) + 1))
    # N_{u,g}: flat column codes per (user, group) block
    n_blocks = len(U) * n_groups
    block_cols: list[np.ndarray] = []
    block_len = np.zeros(n_blocks, dtype=np.int64)
    block_pool = np.zeros(n_blocks, dtype=np.int64)
    chunk = max(1, _CHUNK_CELLS // max(n_c, 1))
    for a in range(0, len(U), chunk):
        b = min(a + chunk, len(U))
        rows = b - a
        if d.sampled:
            keys = np.vstack([user_rng(seed, u).random(n_c) for u in U[a:b]])
        else:
            keys = np.zeros((rows, n_c))
        lo, hi = ex_start[a], ex_start[b]
        keys[ex_rows[lo:hi] - a, ex_cols[lo:hi]] = np.inf
        keys = keys[:, col_order]
        for g in range(n_groups):
            sub = keys[:, block_bounds[g]:block_bounds[g + 1]]
            width = sub.shape[1]
            allowed = np.isfinite(sub)
            pool = allowed.sum(axis=1)
            if d.sampled and d.n < width:
                part = np.argpartition(sub, d.n - 1, axis=1)[:, :d.n]
                take = np.zeros_like(allowed)
                np.put_along_axis(take, part, True, axis=1)
                take &= allowed
            else:
                take = allowed
            r_idx, c_idx = np.nonzero(take)
            cols = col_order[block_bounds[g] + c_idx]
            counts = np.bincount(r_idx, minlength=rows)
            ids = (np.arange(a, b) * n_groups + g)
            block_len[ids] = counts
            block_pool[ids] = pool
            block_cols.extend(np.split(cols, np.cumsum(counts)[:-1]))
    # block_cols was filled chunk by chunk, group by group: reorder to (user, group) order
    fill_order = np.concatenate([np.arange(a, min(a + chunk, len(U)))[None, :] * n_groups + np.arange(n_groups)[:, None]
                                 for a in range(0, len(U), chunk)], axis=None) if len(U) else np.zeros(0, np.int64)
    ordered = [None] * n_blocks
    for pos, blk in enumerate(fill_order.ravel()):
        ordered[blk] = block_cols[pos]
    N_flat = np.concatenate(ordered) if ordered else np.zeros(0, np.int64)
    N_start = np.concatenate([[0], np.cumsum(block_len)])
    # relevant items by (user, group)
    rel_group = groups[rel_cols]
    rel_block = rel_rows * n_groups + rel_group
    rel_sort = np.argsort(rel_block, kind="stable")
    rel_block, rel_cols_s = rel_block[rel_sort], rel_cols[rel_sort]
    rel_ratings = rel["rating"].to_numpy()[rel_sort]
    if d.relevant == "1R":
        set_block = rel_block
        lengths = 1 + block_len[set_block]
        starts = np.concatenate([[0], np.cumsum(lengths)])
        flat = np.empty(int(starts[-1]), dtype=np.int64)
        flat[starts[:-1]] = rel_cols_s
        body = np.ones(len(flat), dtype=bool)
        body[starts[:-1]] = False
        flat[body] = N_flat[ranges(N_start[set_block], block_len[set_block])]
        rel_item = C[rel_cols_s]
        qrels = pd.DataFrame({"set": np.arange(len(set_block)), "item": rel_item, "rating": rel_ratings})
    else:
        set_block, first = np.unique(rel_block, return_index=True)
        n_rel = np.diff(np.concatenate([first, [len(rel_block)]]))
        lengths = n_rel + block_len[set_block]
        starts = np.concatenate([[0], np.cumsum(lengths)])
        flat = np.empty(int(starts[-1]), dtype=np.int64)
        rel_pos = ranges(starts[:-1], n_rel)
        flat[rel_pos] = rel_cols_s
        body = np.ones(len(flat), dtype=bool)
        body[rel_pos] = False
        flat[body] = N_flat[ranges(N_start[set_block], block_len[set_block])]
        rel_item = None
        # judgments: every test rating of the set's user whose item is in the set
        set_of_user = np.full(len(U), -1, dtype=np.int64)
        set_of_user[set_block // n_groups] = np.arange(len(set_block))
        te = test[test["user"].isin(U)]
        te_cols = _codes(te["item"].to_numpy(), C)
        te_sets = set_of_user[u_code.get_indexer(te["user"].to_numpy())]
        entry_set = np.repeat(np.arange(len(set_block)), lengths)
        in_set = np.isin(te_sets * n_c + te_cols, entry_set * n_c + flat) & (te_cols >= 0) & (te_sets >= 0)
        qrels = pd.DataFrame({"set": te_sets[in_set], "item": te["item"].to_numpy()[in_set],
                              "rating": te["rating"].to_numpy()[in_set]}).sort_values(["set", "item"],
                                                                                    ignore_index=True)
    set_users = U[set_block // n_groups]
    group = set_block % n_groups
    short = d.sampled & (block_len[set_block] < d.n)
    meta = {"design": str(d), "n_candidates": n_c, "threshold": threshold, "seed": seed,
            "short_sets": int(short.sum()), "short_users": int(pd.unique(set_users[short]).size),
            "min_pool": int(block_pool[set_block].min()) if len(set_block) else 0}
    if short.any():
        s0 = int(np.flatnonzero(short)[0])
        where = "" if d.kind != "P1R" else f" in popularity percentile {int(group[s0])}"
        text = (f"design {d}: user {show(set_users[s0])} has only {int(block_len[set_block][s0])} non-relevant "
                f"candidate items{where} but n={d.n} were requested")
        if strict:
            raise InputError(f"{text}; use n <= {int(block_len[set_block][short].min())} or strict=False "
                             "(the whole pool, recorded as a short set)")
        warnings.warn(f"{text}: {meta['short_sets']} of {len(set_block)} target sets ({meta['short_users']} "
                      "users) take their whole, shorter pool (metadata['short_sets']; the random expectation "
                      "uses the actual set sizes)", ShortPoolWarning, stacklevel=2)
    return TargetSets(np.asarray(set_users), C[flat], lengths.astype(np.int64), rel_item, group.astype(np.int64),
                      qrels, meta, short)


def score_sets(system, ts: TargetSets, batch: int = 512) -> np.ndarray:
    """Scores of every target-set entry (flat, aligned with ``ts.items``): the sets of a batch of
    users are concatenated per user and scored with one ``score_targets`` call per batch."""
    codes, uniq = pd.factorize(ts.users, sort=False)
    owner = np.repeat(codes, ts.lengths)
    order = np.argsort(owner, kind="stable")
    per_user = np.split(ts.items[order], np.cumsum(np.bincount(owner, minlength=len(uniq)))[:-1])
    out = np.empty(len(ts.items))
    flat = []
    for start in range(0, len(uniq), batch):
        flat.extend(system.score_targets(uniq[start:start + batch], per_user[start:start + batch]))
    out[order] = np.concatenate(flat) if flat else np.zeros(0)
    return out


def _tie_keys(ts: TargetSets, seed: int) -> np.ndarray:
    """One seeded random key per item (the same in every set of ``ts``), kept on ``ts`` per seed:
    every system ranked on the same sets breaks its ties with them."""
    cache = ts.__dict__.setdefault("_tie_keys", {})
    if seed not in cache:
        codes, _ = pd.factorize(ts.items, sort=True)
        cache[seed] = np.random.default_rng([seed, 7]).permutation(codes.max() + 1)[codes]
    return cache[seed]


def rank_sets(ts: TargetSets, scores: np.ndarray, seed: int = 0, depth: int | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """(order, position): the flat permutation ranking each set by decreasing score (ties by one
    seeded random key per item) and each entry's 0-based rank within its set.

    ``depth``: only the first ``depth`` ranks of each set are wanted; ``order`` then lists those
    alone (set by set, the same entries in the same order as the first ``depth`` of the full
    ranking) and every entry ranked below them gets the position ``depth``. Only the entries
    scoring at least a set's ``depth``-th score are sorted.

    >>> ts = TargetSets(np.array([1, 2]), np.array([10, 11, 12, 10, 12]), np.array([3, 2]), None,
    ...                 np.zeros(2, np.int64), pd.DataFrame())
    >>> order, pos = rank_sets(ts, np.array([0.1, 0.9, 0.5, 0.3, 0.3]))
    >>> order.tolist(), pos.tolist()          # the tie of set 2 goes to item 12's key
    ([1, 2, 0, 4, 3], [2, 0, 1, 1, 0])
    >>> order, pos = rank_sets(ts, np.array([0.1, 0.9, 0.5, 0.3, 0.3]), depth=1)
    >>> order.tolist(), pos.tolist()
    ([1, 4], [1, 0, 1, 1, 0])
    """
    set_of = np.repeat(np.arange(len(ts.lengths)), ts.lengths)
    tie = _tie_keys(ts, seed)
    s = np.where(np.isnan(scores), -np.inf, scores)
    picked = _top_entries(ts, s, depth)
    if picked is None:
        within = np.lexsort((tie, -s))                     # one global order by score, ties by item key
        order = within[np.argsort(set_of[within], kind="stable")]  # then grouped by set, keeping that order
        pos = np.empty(len(order), dtype=np.int64)
        pos[order] = np.arange(len(order)) - ts.starts[:-1][set_of[order]]
        return order, pos
    order = picked[np.lexsort((tie[picked], -s[picked], set_of[picked]))]   # by set, score, item key
    first = np.searchsorted(set_of[order], np.arange(len(ts.lengths)))
    rank = np.arange(len(order)) - first[set_of[order]]
    order = order[rank < depth]
    pos = np.full(len(s), int(depth), dtype=np.int64)
    pos[order] = rank[rank < depth]
    return order, pos


def _top_entries(ts: TargetSets, s: np.ndarray, depth: int | None) -> np.ndarray | None:
    """Entries (ascending) among which every set's first ``depth`` ranks lie: those scoring at
    least the set's ``depth``-th largest score (all of a set no longer than ``depth``). None when
    every entry is wanted, or when the sets' lengths are too uneven to lay them out as a matrix."""
    lengths = np.asarray(ts.lengths, dtype=np.int64)
    if depth is None or not len(lengths) or depth >= lengths.max():
        return None
    width = int(lengths.max())
    if len(lengths) * width > 4 * len(s) + (1 << 20):
        return None
    set_of = np.repeat(np.arange(len(lengths)), lengths)
    col = np.arange(len(s)) - ts.starts[:-1][set_of]
    neg = np.full((len(lengths), width), np.inf)        # -score, padded past each set's end
    neg[set_of, col] = -s
    kth = np.partition(neg, int(depth) - 1, axis=1)[:, int(depth) - 1]
    return np.flatnonzero((-s <= kth[set_of]) | (lengths[set_of] <= depth))


#: metrics whose value at a cut-off k reads the first k ranks of a list and the judgments alone
#: (not the list's length or its lower ranks), so ranking a set below the deepest cut-off changes nothing
_TOP_K_ONLY = ("P", "nDCG")


def _ranks_read(metrics) -> int | None:
    """The deepest cut-off of ``metrics`` when each is one of :data:`_TOP_K_ONLY` with a cut-off
    and no other parameter (then only that many ranks of each set are needed), else None."""
    from ..metrics.registry import parse as parse_metric

    specs = [parse_metric(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    if not specs or any(sp.name not in _TOP_K_ONLY or sp.k is None or dict(sp.params) != sp.definition.params
                        for sp in specs):
        return None
    return max(int(sp.k) for sp in specs)


def evaluate(system, train: pd.DataFrame, test: pd.DataFrame, design: "str | Design" = "TI-1R-NN(n=99)",
             metrics=("P@10",), *, seed: int = 0, threshold: float = 4.0, users=None, strict: bool = False,
             targets: TargetSets | None = None, **context) -> ProtocolResult:
    """Evaluate a fitted ``system`` under ``design`` (paper 004 §4.3, Eq. 4.1).

    Builds the target sets (or takes ``targets`` from :func:`build_targets` with the same design, so
    several systems share one build), scores them in batches, ranks each set and hands the ranked
    sets to :func:`recmetrics.evaluate` (any registered metric; in 1R each target set is a
    pseudo-user whose only judged item is its relevant one). Returns per-set values and the Eq. 4.1
    aggregate. ``users`` (ids) evaluates only those users (candidates still come from the whole test
    set); ``strict`` is :func:`build_targets`' (short NN pools).

    >>> import recmetrics as rm
    >>> train, test = rm.splits.holdout(rm.datasets.load("movielens-small").ratings, 0.2, seed=0)
    >>> pop = rm.recommenders.create("Pop").fit(train)
    >>> r = evaluate(pop, train, test, "TI-1R-NN(n=99)", ["P@10"], threshold=5)
    >>> round(float(r.aggregate["P@10"]), 4), round(r.metadata["t"], 6)
    (0.0579, 100.0)
    """
    from ..evaluation import evaluate as rm_evaluate

    check_system(system)
    d = parse(design)
    if targets is None:
        ts = build_targets(train, test, d, threshold=threshold, seed=seed, users=users, strict=strict)
    else:
        ts = targets
        if ts.metadata.get("design") != str(d):
            raise InputError(f"targets were built for design {ts.metadata.get('design')}, not {d}")
        threshold = ts.metadata.get("threshold", threshold)
    scores = score_sets(system, ts)
    order, _ = rank_sets(ts, scores, seed, _ranks_read(metrics))
    set_of = np.repeat(np.arange(len(ts.lengths)), ts.lengths)
    run = Run._from_sorted(np.arange(len(ts.lengths)), set_of[order], ts.items[order], None,
                           getattr(system, "name", "system"))
    qrels = Qrels(ts.qrels.rename(columns={"set": "user"}), threshold=threshold,
                  max_rating=float(max(train["rating"].max(), test["rating"].max())))
    ev = rm_evaluate(run, qrels, metrics, users=np.arange(len(ts.lengths)), **context)
    per = ev.per_user.reset_index(drop=True)
    per.insert(0, "user", ts.users)
    if ts.rel_item is not None:
        per.insert(1, "item", ts.rel_item)
    names = list(ev.per_user.columns)
    if d.kind == "P1R":
        per.insert(2, "percentile", ts.group)
        agg = per.groupby("percentile")[names].mean().mean()
    else:
        agg = per[names].mean()
    agg.name = getattr(system, "name", "system")
    t = float(1.0 / np.mean(1.0 / ts.lengths))
    return ProtocolResult(per, agg, dict(ts.metadata, n_sets=len(ts.lengths), t=t,
                                         n_users=int(pd.unique(ts.users).size)))
