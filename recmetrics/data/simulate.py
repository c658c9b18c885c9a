"""Power-law rating simulator of paper 004 §4.5.2 (Fig. 4.4).

Item popularity follows the shifted power law r(i_k) = c1 + β (c2 + k)^-α (k = popularity rank,
α = 0 uniform ... 2 very steep; MovieLens 1M ≈ 1.4); β is set so the counts sum to the reference's
number of ratings (the thesis "enforces these constraints by adjusting β"). Every item's raters are
drawn uniformly at random (no preference structure, as in the thesis), and rating values are drawn
from the reference's rating distribution. c1 is a parameter (default 1); c2 is fitted once to the reference (top item count at α = 1.4).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError


def power_law_counts(n_items: int, n_ratings: int, n_users: int, alpha: float, c1: float = 1.0,
                     c2: float = 10.0) -> np.ndarray:
    """Integer ratings per item, most popular first: r(i_k) = c1 + β(c2 + k)^-α, Σ = n_ratings,
    each count <= n_users (the excess of capped items is spread over the others)."""
    if not (np.isfinite(alpha) and alpha >= 0):
        raise InputError(f"power-law simulator: alpha must be a finite number >= 0, got {alpha!r}")
    if n_ratings > n_items * n_users:
        raise InputError(f"power-law simulator: {n_ratings} ratings do not fit in {n_users} users x {n_items} items")
    if c1 < 0 or c2 < 0 or c1 * n_items > n_ratings:
        raise InputError(f"power-law simulator: need c1 >= 0, c2 >= 0 and c1 * n_items <= n_ratings "
                         f"(got c1={c1}, c2={c2}, {n_items} items, {n_ratings} ratings)")
    k = np.arange(1, n_items + 1, dtype=np.float64)
    shape = (c2 + k) ** -float(alpha)
    beta = (n_ratings - c1 * n_items) / shape.sum()
    r = c1 + beta * shape
    for _ in range(100):  # cap at n_users, hand the excess to the uncapped items proportionally
        over = r > n_users
        if not over.any():
            break
        excess = (r[over] - n_users).sum()
        r[over] = n_users
        free = ~over & (r < n_users)
        r[free] += excess * r[free] / r[free].sum()
    base = np.floor(r).astype(np.int64)
    short = n_ratings - base.sum()  # largest remainders get the missing units
    room = np.flatnonzero(base < n_users)
    extra = room[np.argsort(-(r - base)[room], kind="stable")[:short]]
    base[extra] += 1
    return base


def simulate(n_users: int, n_items: int, n_ratings: int, alpha: float = 1.4, *, rating_values=(1, 2, 3, 4, 5),
             rating_probs=None, c1: float = 1.0, c2: float = 10.0, seed: int = 0) -> pd.DataFrame:
    """A ``user, item, rating`` table with item popularity ~ the shifted power law (see module doc)."""
    rng = np.random.default_rng(seed)
    counts = power_law_counts(n_items, n_ratings, n_users, alpha, c1, c2)
    item_ids = rng.permutation(n_items)  # popularity rank is not the item id
    users = np.concatenate([rng.choice(n_users, c, replace=False) for c in counts if c > 0])
    items = np.repeat(item_ids, counts)
    values = np.asarray(rating_values, dtype=np.float64)
    ratings = rng.choice(values, len(users), p=rating_probs)
    return pd.DataFrame({"user": users.astype(np.int64), "item": items.astype(np.int64), "rating": ratings})


def fit_c2(counts: np.ndarray, c1: float = 1.0, alpha: float = 1.4) -> float:
    """c2 such that the power law at ``alpha`` (MovieLens 1M's ≈ 1.4) gives the reference's largest
    item count (bisection on log c2); the α sweep then keeps this c2, as the thesis fits c1, c2 once."""
    counts = np.sort(np.asarray(counts))[::-1]
    n_items, n_ratings, top = len(counts), int(counts.sum()), counts[0]
    k = np.arange(1, n_items + 1, dtype=np.float64)
    lo, hi = -3.0, 6.0
    for _ in range(60):
        mid = (lo + hi) / 2
        shape = (10 ** mid + k) ** -alpha
        first = c1 + (n_ratings - c1 * n_items) / shape.sum() * shape[0]
        lo, hi = (mid, hi) if first > top else (lo, mid)
    return float(10 ** ((lo + hi) / 2))


def like(reference, alpha: float = 1.4, *, c1: float = 1.0, c2: float | None = None, seed: int = 0) -> pd.DataFrame:
    """Simulated ratings with the same numbers of users, items and ratings and the same rating-value
    distribution as ``reference`` (a :class:`~recmetrics.data.datasets.Dataset` or ratings table);
    ``c2=None`` fits c2 to the reference (:func:`fit_c2`)."""
    frame = getattr(reference, "ratings", reference)
    if c2 is None:
        c2 = fit_c2(frame["item"].value_counts().to_numpy(), c1)
    dist = frame["rating"].value_counts(normalize=True).sort_index()
    return simulate(int(frame["user"].nunique()), int(frame["item"].nunique()), len(frame), alpha,
                    rating_values=dist.index.to_numpy(), rating_probs=dist.to_numpy(), c1=c1, c2=c2, seed=seed)
