"""Dataset statistics as in Table 2 of Valcarce et al. (RecSys 2018; IRJ 2020).

``dataset_stats`` reports users, items, ratings, density (ratings / (users * items), a fraction:
multiply by 100 for the papers' percentages), the Gini index of the number of ratings per user and
per item, and the rating mean / min / max.

Gini index (:func:`gini`): with ``x`` the counts sorted ascending, ``p_k = x_(k) / sum(x)`` and
``n = len(x)``::

    G = 1/(n - 1) * sum_{k=1..n} (2k - n - 1) * p_k

This is the (n-1)-normalised form common in the recommender-systems literature (e.g. for the
Gini index of item popularity or exposure) and matches the papers' reading of their "Gini
coefficient of the number of ratings over users and items" (1 = maximum inequality): it is 0 when every entity has the same count and exactly 1
when a single entity holds all of them (the classic ``1/n`` normalisation tops out at
``(n-1)/n``; pass ``corrected=False`` for it). Only users/items with at least one rating enter
(the ratings frame has no zero counts).
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["gini", "dataset_stats", "stats", "stats_table"]


def gini(counts: Any, *, corrected: bool = True) -> float:
    """Gini index of non-negative counts (0 = uniform, 1 = all mass on one element).

    ``G = 1/(n-1) * sum_k (2k - n - 1) p_(k)`` with ``p`` the shares sorted ascending
    (``corrected=True``, the default; the papers' definition). ``corrected=False`` divides by
    ``n`` instead (classic sample Gini, maximum ``(n-1)/n``). A single element gives 0.
    """
    x = np.asarray(counts, dtype=float).ravel() if not isinstance(counts, pd.Series) \
        else counts.to_numpy(dtype=float)
    if x.size == 0:
        raise InputError("gini needs at least one count, got an empty array")
    if not np.all(np.isfinite(x)):
        j = int(np.flatnonzero(~np.isfinite(x))[0])
        raise InputError(f"gini: count at position {j} is {x[j]} (expected finite counts)")
    if np.any(x < 0):
        j = int(np.flatnonzero(x < 0)[0])
        raise InputError(f"gini: count at position {j} is negative ({x[j]:g}); expected "
                         f"non-negative counts")
    total = x.sum()
    if total <= 0:
        raise InputError(f"gini: all {x.size} counts are zero, the index is undefined "
                         f"(expected at least one positive count)")
    n = x.size
    if n == 1:
        return 0.0
    p = np.sort(x) / total
    k = np.arange(1, n + 1, dtype=float)
    g = float(np.dot(2 * k - n - 1, p)) / ((n - 1) if corrected else n)
    return min(max(g, 0.0), 1.0)  # clip float round-off


def dataset_stats(ratings: pd.DataFrame) -> pd.Series:
    """Table 2 statistics of a ratings DataFrame (columns user, item[, rating]).

    Returns a Series with ``users, items, ratings`` (ints), ``density`` (fraction),
    ``user_gini`` (Gini of ratings per user), ``item_gini`` (Gini of ratings per item),
    ``rating_mean, rating_min, rating_max`` (NaN without a rating column).
    """
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"expected a ratings DataFrame or a Dataset, got "
                         f"{type(ratings).__name__}")
    missing = [c for c in ("user", "item") if c not in ratings.columns]
    if missing:
        raise InputError(f"ratings have no {', '.join(map(repr, missing))} column(s) (columns: "
                         f"{', '.join(map(str, ratings.columns))}); expected user, item, rating")
    if len(ratings) == 0:
        raise InputError("ratings are empty (expected at least one row)")
    per_user = ratings["user"].value_counts(sort=False).to_numpy()
    per_item = ratings["item"].value_counts(sort=False).to_numpy()
    n_users, n_items, n = len(per_user), len(per_item), len(ratings)
    if "rating" in ratings.columns:
        r = pd.to_numeric(ratings["rating"], errors="coerce")
        mean, lo, hi = float(r.mean()), float(r.min()), float(r.max())
    else:
        mean = lo = hi = float("nan")
    return pd.Series({
        "users": n_users,
        "items": n_items,
        "ratings": n,
        "density": n / (n_users * n_items),
        "user_gini": gini(per_user),
        "item_gini": gini(per_item),
        "rating_mean": mean,
        "rating_min": lo,
        "rating_max": hi,
    }, dtype=object)


def stats(data: Any) -> pd.Series:
    """:func:`dataset_stats` of a :class:`~recmetrics.data.datasets.Dataset` (Series named after
    it) or of a ratings DataFrame."""
    ratings = getattr(data, "ratings", data)
    out = dataset_stats(ratings)
    out.name = getattr(data, "name", None)
    return out


def stats_table(datasets: Iterable[Any]) -> pd.DataFrame:
    """One row of :func:`stats` per Dataset/DataFrame (rows named by dataset name) - Table 2."""
    rows = [stats(d) for d in datasets]
    if not rows:
        raise InputError("stats_table needs at least one dataset")
    table = pd.DataFrame(rows)
    for c in ("users", "items", "ratings"):
        table[c] = table[c].astype(np.int64)
    for c in ("density", "user_gini", "item_gini", "rating_mean", "rating_min", "rating_max"):
        table[c] = table[c].astype(float)
    return table
