"""Target sets, their batched scoring and ranking, and :func:`evaluate` (paper 004, §4.3, Eq. 4.1).

Scoring: every user's target sets are concatenated and scored with one
``system.score_targets`` call per batch of users (one matrix operation per batch), never one call
per target set. Ties are broken by one seeded random key per item, the same in every target set, so
the ranking of a subset agrees with the ranking of its superset (what the proof of Eq. 4.2 uses).

Sampling: a user's non-relevant sample N_u comes from a generator seeded with ``(seed, the user's
id)`` (:func:`user_rng`), so it does not depend on which other users are evaluated (``users=``) —
as the Random recommender seeds each user's scores.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.qrels import Qrels
from ..data.run import Run
from .. import checks
from ..errors import InputError, require_columns, show
from .designs import Design, parse


@dataclass
class TargetSets:
    """Flat target sets: set ``s`` holds ``items[starts[s]:starts[s+1]]`` for ``users[s]``;
    ``rel_item[s]`` is its relevant item (1R) or None (AR); ``group[s]`` its percentile (P1R, else 0)."""

    users: np.ndarray
    items: np.ndarray
    lengths: np.ndarray
    rel_item: np.ndarray | None
    group: np.ndarray
    qrels: pd.DataFrame  # set, item, rating
    metadata: dict = field(default_factory=dict)

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)])


@dataclass
class ProtocolResult:
    """``per_set``: one row per target set (user [, item, group]) and one column per metric;
    ``aggregate``: Eq. 4.1 (the mean over target sets; for P1R the mean of the m percentile means)."""

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


def build_targets(train: pd.DataFrame, test: pd.DataFrame, design: "str | Design", *, threshold: float = 4.0,
                  seed: int = 0, users=None) -> TargetSets:
    """Build the target sets of ``design`` (see :mod:`recmetrics.protocols.designs`).

    Raises :class:`InputError` when NN asks for more non-relevant items than a user has candidates
    (naming the user and the largest feasible n), when P1R's |T_u| = n + 1 exceeds |J|/m, and when a
    U design gets a test set whose items do not all have the same number of test ratings.
    ``users`` (ids) restricts the evaluated users; the candidates still come from the whole test set."""
    d = parse(design)
    seed = checks.seed(seed)
    train, test = _frames(train, test)
    if d.kind == "head10":
        head = _head(train, test)
        test = test[~test["item"].isin(head)]
    if d.kind in ("U1R", "UAR"):
        counts = test["item"].value_counts()
        if counts.nunique() != 1:
            raise InputError(f"design {d}: every test item must have the same number η of test ratings "
                             f"(got {counts.min()}..{counts.max()}); build the split with "
                             f"rm.protocols.uniform_split(ratings, sigma, eps)")
    C = candidates(train, test, d)
    rel = test[test["rating"] >= threshold]
    if users is not None:
        rel = rel[rel["user"].isin(np.asarray(users))]
    if len(rel) == 0:
        raise InputError(f"protocols: no test rating reaches the relevance threshold {threshold:g}")
    train_by_user = train.groupby("user")["item"].agg(lambda s: s.to_numpy())
    rel_by_user = rel.groupby("user", sort=True)
    test_by_user = test.groupby("user")
    groups_of = None
    if d.kind == "P1R":
        limit = len(C) // d.m
        if d.n + 1 > limit:
            raise InputError(f"design {d}: P1R needs |T_u| = n + 1 <= |J|/m = {len(C)}/{d.m} = {limit}; "
                             f"use n <= {limit - 1} or m <= {len(C) // (d.n + 1)}")
        pop = popularity(train).reindex(C).fillna(0).to_numpy()
        order = np.lexsort((C, -pop))
        groups_of = pd.Series(np.empty(len(C), dtype=np.int64), index=C)
        groups_of.iloc[order] = np.minimum(np.arange(len(C)) * d.m // len(C), d.m - 1)
    users, items, lengths, rel_items, grp, qrows = [], [], [], [], [], []
    n_set = 0
    for u, ru in rel_by_user:
        r_items = ru["item"].to_numpy()
        r_items = r_items[np.isin(r_items, C)]
        if len(r_items) == 0:
            continue
        seen = train_by_user.get(u, np.zeros(0, dtype=C.dtype))
        rng = user_rng(seed, u)
        pool_all = np.setdiff1d(C, np.concatenate([r_items, seen]), assume_unique=False)
        parts = [(pool_all, None)] if groups_of is None else \
            [(pool_all[groups_of.reindex(pool_all).to_numpy() == g], g) for g in range(d.m)]
        for pool, g in parts:
            rg = r_items if g is None else r_items[groups_of.reindex(r_items).to_numpy() == g]
            if len(rg) == 0:
                continue
            if d.sampled:
                if d.n > len(pool):
                    where = "" if g is None else f" in popularity percentile {g}"
                    raise InputError(f"design {d}: user {show(u)} has only {len(pool)} non-relevant candidate "
                                     f"items{where} but n={d.n} were requested; use n <= {len(pool)}")
                N = rng.choice(pool, d.n, replace=False)
            else:
                N = pool
            if d.relevant == "AR":
                tu = test_by_user.get_group(u)
                tset = np.concatenate([rg, N])
                users.append(u); items.append(tset); lengths.append(len(tset)); rel_items.append(None)
                grp.append(0 if g is None else g)
                keep = tu[tu["item"].isin(tset)]
                qrows.append(pd.DataFrame({"set": n_set, "item": keep["item"].to_numpy(),
                                           "rating": keep["rating"].to_numpy()}))
                n_set += 1
            else:
                ratings = ru.set_index("item")["rating"]
                for it in rg:
                    tset = np.concatenate([[it], N])
                    users.append(u); items.append(tset); lengths.append(len(tset)); rel_items.append(it)
                    grp.append(0 if g is None else g)
                    qrows.append((n_set, it, ratings[it]))
                    n_set += 1
    if n_set == 0:
        raise InputError(f"design {d}: no user has a relevant test item among the candidates")
    if d.relevant == "AR":
        q = pd.concat(qrows, ignore_index=True)
    else:
        q = pd.DataFrame(qrows, columns=["set", "item", "rating"])
    return TargetSets(np.asarray(users), np.concatenate(items), np.asarray(lengths, dtype=np.int64),
                      None if d.relevant == "AR" else np.asarray(rel_items), np.asarray(grp, dtype=np.int64), q,
                      {"design": str(d), "n_candidates": len(C), "threshold": threshold, "seed": seed})


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


def rank_sets(ts: TargetSets, scores: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(order, position): the flat permutation ranking each set by decreasing score (ties by one
    seeded random key per item) and each entry's 0-based rank within its set."""
    set_of = np.repeat(np.arange(len(ts.lengths)), ts.lengths)
    codes, _ = pd.factorize(ts.items, sort=True)
    tie = np.random.default_rng([seed, 7]).permutation(codes.max() + 1)[codes]
    s = np.where(np.isnan(scores), -np.inf, scores)
    order = np.lexsort((tie, -s, set_of))
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order)) - ts.starts[:-1][set_of[order]]
    return order, pos


def evaluate(system, train: pd.DataFrame, test: pd.DataFrame, design: "str | Design" = "TI-1R-NN(n=100)",
             metrics=("P@10",), *, seed: int = 0, threshold: float = 4.0, users=None, **context) -> ProtocolResult:
    """Evaluate a fitted ``system`` under ``design`` (paper 004 §4.3, Eq. 4.1).

    Builds the target sets, scores them in batches, ranks each set and hands the ranked sets to
    :func:`recmetrics.evaluate` (any registered metric; in 1R each target set is a pseudo-user whose
    only judged item is its relevant one). Returns per-set values and the Eq. 4.1 aggregate.
    ``users`` (ids) evaluates only those users (candidates still come from the whole test set)."""
    from ..evaluation import evaluate as rm_evaluate

    check_system(system)
    d = parse(design)
    ts = build_targets(train, test, d, threshold=threshold, seed=seed, users=users)
    scores = score_sets(system, ts)
    order, _ = rank_sets(ts, scores, seed)
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
