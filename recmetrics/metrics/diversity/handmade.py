"""Scoring hand-made rankings of one hypothetical user with any registered metric.

:func:`score_lists` turns toy cases — a few rankings, the user's ratings, the items' aspects and
the user's interest per aspect — into a Run, Qrels and training profile and scores them through
the registry, so the executable axioms (:mod:`recmetrics.meta.axioms`), the sandbox widget and
the tests score toy cases exactly as ``rm.evaluate`` scores real runs.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ...errors import InputError
from .judgments import attach_judgments

if TYPE_CHECKING:
    import pandas as pd

#: item-id prefix of the synthetic training items that realise a profile given as aspect weights
PROFILE_PREFIX = "__profile__:"


def _profile_frame(profile, user) -> tuple[pd.DataFrame, dict]:
    """Training ratings realising ``profile``: a mapping aspect -> weight, or (item, rating) pairs."""
    import pandas as pd

    if profile is None:
        return pd.DataFrame({"user": [], "item": [], "rating": []}), {}
    if isinstance(profile, pd.DataFrame):
        f = profile[["item", "rating"]].copy()
        f.insert(0, "user", user)
        return f, {}
    if isinstance(profile, Mapping):
        rows, extra = [], {}
        for label, weight in profile.items():
            w = float(weight)
            if not math.isfinite(w) or w < 0:
                raise InputError(f"profile weight of aspect {label!r} must be >= 0, got {weight!r}")
            if w > 0:
                item = f"{PROFILE_PREFIX}{label}"
                rows.append((user, item, w))
                extra[item] = (label,)
        return pd.DataFrame(rows, columns=["user", "item", "rating"]), extra
    raise InputError(f"profile must be a mapping aspect -> weight or a DataFrame (item, rating), "
                     f"got {type(profile).__name__}")


def score_lists(lists: Sequence[Sequence[Any]], judgments, aspects: Mapping, metrics,
                *, profile=None, threshold: float = 4.0, max_rating: float = 5.0) -> pd.DataFrame:
    """Score hand-made rankings of one (hypothetical) user with any registered metrics.

    lists: the rankings (item ids, best first); judgments: the user's test ratings as a mapping
    item -> rating (unrated items are absent), or one mapping per list; aspects: mapping item ->
    labels; profile: the user's interest, as a mapping aspect -> weight (realised as training
    ratings, so Eq. 9 returns exactly these weights normalised), a DataFrame ``item, rating`` of
    training ratings, None (default), or one of those per list; threshold (4) and max_rating (5):
    those of the Qrels. Each list is scored as a separate user with its own copy of the
    judgments. Returns a DataFrame (one row per list, one column per metric).

    Examples
    --------
    >>> aspects = {"a": ("x",), "b": ("x",), "c": ("y",)}
    >>> score_lists([["a", "b", "c"], ["a", "c", "b"]], {"a": 5, "b": 5, "c": 4}, aspects,
    ...             ["S-Recall@2", "ab-nDCG@3"], profile={"x": 1, "y": 1}).round(4).to_dict("list")
    {'S-Recall@2': [0.5, 1.0], 'ab-nDCG@3': [0.9776, 1.0]}
    """
    import pandas as pd

    from ...data.qrels import Qrels
    from ...data.run import Run
    from ...judged import judge
    from ..registry import parse

    lists = [list(x) for x in lists]
    if not lists:
        raise InputError("score_lists needs at least one ranking")
    n = len(lists)
    per_j = list(judgments) if isinstance(judgments, (list, tuple)) else [judgments] * n
    per_p = list(profile) if isinstance(profile, (list, tuple)) else [profile] * n
    if len(per_j) != n or len(per_p) != n:
        raise InputError("give one judgments mapping (and profile) per list, or a single one for all")
    specs = [parse(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    q_rows = [(u, item, float(rating)) for u in range(n) for item, rating in per_j[u].items()
              if not (rating is None or (isinstance(rating, float) and math.isnan(rating)))]
    if not q_rows:
        raise InputError("the user needs at least one judged (rated) item")
    for row in lists:
        if len(set(row)) != len(row):
            raise InputError(f"ranking {row!r} lists an item twice")
    made = _made_directly(lists, q_rows, per_p, threshold, max_rating)
    if made is None:
        t_frames, extra = [], {}
        for u in range(n):
            f, ex = _profile_frame(per_p[u], u)
            t_frames.append(f)
            extra.update(ex)
        qrels = Qrels(pd.DataFrame(q_rows, columns=["user", "item", "rating"]), threshold=threshold,
                      max_rating=max_rating)
        run = Run.from_lists({u: lists[u] for u in range(n)}, name="hand-made")
        train = pd.concat(t_frames, ignore_index=True) if t_frames else None
    else:
        qrels, run, train, extra = made
    depth = max([len(x) for x in lists] + [s.k or 0 for s in specs] + [1])
    j = attach_judgments(judge(run, qrels, depth=depth, users=np.arange(n)), qrels)
    asp = dict(aspects)
    asp.update(extra)
    asp_series = pd.Series(list(asp.values()), index=list(asp.keys()), dtype=object)
    out = {str(s): s(j, aspects=asp_series, train=train) for s in specs}
    return pd.DataFrame(out, index=pd.RangeIndex(n, name="list"))


def _made_directly(lists, q_rows, profiles, threshold: float, max_rating: float):
    """The Qrels, Run, training profile and profile aspects :func:`score_lists` builds from its
    tables, made from arrays (no table to build, check and sort per toy case; the same objects):
    for string item ids, non-empty lists, finite non-negative ratings and profiles given as aspect
    weights with at least one positive weight each. None otherwise (the tables are built)."""
    import pandas as pd

    from ...data.qrels import Qrels
    from ...data.run import Run

    if not all(x for x in lists) or not all(isinstance(p, Mapping) for p in profiles):
        return None
    items = [i for x in lists for i in x] + [i for _, i, _ in q_rows]
    ratings = np.array([r for _, _, r in q_rows])
    if not all(isinstance(i, str) for i in items) or not (np.isfinite(ratings).all() and (ratings >= 0).all()):
        return None
    t_rows, extra = [], {}
    for u, profile in enumerate(profiles):
        try:
            weights = {label: float(w) for label, w in profile.items()}
        except (TypeError, ValueError):
            return None
        if not all(math.isfinite(w) and w >= 0 for w in weights.values()) or not any(weights.values()):
            return None
        for label, w in weights.items():
            if w > 0:
                t_rows.append((u, f"{PROFILE_PREFIX}{label}", w))
                extra[f"{PROFILE_PREFIX}{label}"] = (label,)
    judged_users = np.array([u for u, _, _ in q_rows])
    users = np.unique(judged_users)
    judged_items = np.array([i for _, i, _ in q_rows], dtype=object)
    uniq = np.unique(judged_items)
    qrels = Qrels.from_codes(np.searchsorted(users, judged_users), users, np.searchsorted(uniq, judged_items), uniq,
                             ratings, threshold=threshold, max_rating=max_rating)
    lengths = np.array([len(x) for x in lists])
    flat = np.empty(int(lengths.sum()), dtype=object)
    flat[:] = [i for x in lists for i in x]
    run = Run._from_sorted(np.arange(len(lists)), np.repeat(np.arange(len(lists)), lengths), flat, None, "hand-made")
    return qrels, run, pd.DataFrame(t_rows, columns=["user", "item", "rating"]), extra
