"""Seeded, reproducible training/test splits of a ratings DataFrame.

Every function takes the ratings (a DataFrame with at least a ``user`` column, or a
:class:`~recmetrics.data.datasets.Dataset`) and returns new DataFrames (copies of the selected
rows, same columns, index reset, rows in input order):

* :func:`holdout` -> ``(train, test)``: per-user random holdout (Valcarce et al., RecSys 2018:
  80% of each user's ratings for training, 20% for test);
* :func:`kfold` -> ``[(train, test)] * k``: random k-fold cross-validation over ratings
  (Valcarce et al., IRJ 2020: 5 folds);
* :func:`temporal` -> ``(train, test)``: global time cut or per-user last-n;
* :func:`split` dispatches by name.

Randomness: ``seed`` is an int (a fresh ``numpy.random.default_rng(seed)`` is used, so the same
int always gives the same split) or a ``numpy.random.Generator`` (which is advanced). The random
draw is attached to each rating in (user, item) order, so the split depends only on the set of
ratings and the seed, not on the row order of the input.
"""
from __future__ import annotations

import inspect
import numbers
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..errors import InputError, unknown_name

__all__ = ["holdout", "kfold", "temporal", "split", "method_name", "METHODS"]

def _frame(ratings: Any, need: tuple[str, ...] = ("user",)) -> pd.DataFrame:
    if not isinstance(ratings, pd.DataFrame) and isinstance(getattr(ratings, "ratings", None),
                                                             pd.DataFrame):
        ratings = ratings.ratings  # a Dataset
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"expected a ratings DataFrame (columns user, item, rating[, timestamp])"
                         f" or a Dataset, got {type(ratings).__name__}")
    if len(ratings) == 0:
        raise InputError("ratings are empty (expected at least one row to split)")
    missing = [c for c in need if c not in ratings.columns]
    if missing:
        raise InputError(f"ratings have no {', '.join(map(repr, missing))} column(s) (columns: "
                         f"{', '.join(map(str, ratings.columns))}); expected user, item, "
                         f"rating[, timestamp]")
    return ratings


def _rng(seed: Any) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if int(seed) < 0:
            raise InputError(f"seed must be a non-negative integer or a numpy Generator, "
                             f"got {seed}")
        return np.random.default_rng(int(seed))
    raise InputError(f"seed must be an int or a numpy.random.Generator, got "
                     f"{type(seed).__name__} {seed!r} (splits are always seeded)")


def _codes(col: pd.Series) -> np.ndarray:
    try:
        codes, _ = pd.factorize(col, sort=True)
    except TypeError:  # unorderable mixed ids: order by their string form
        codes, _ = pd.factorize(col.astype(str), sort=True)
    return codes.astype(np.int64)


def _canonical_order(r: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(user codes, permutation sorting rows by (user, item), stable for repeated pairs)."""
    users = _codes(r["user"])
    if "item" in r.columns:
        order = np.lexsort((_codes(r["item"]), users))
    else:
        order = np.argsort(users, kind="stable")
    return users, order


def _per_row_keys(rng: np.random.Generator, order: np.ndarray) -> np.ndarray:
    """Uniform random keys, drawn in canonical (user, item) order and scattered back to rows."""
    keys = np.empty(len(order))
    keys[order] = rng.random(len(order))
    return keys


def _rank_within_user(users: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """0-based rank of each row among its user's rows by ascending key, and per-row user size."""
    idx = np.lexsort((keys, users))
    counts = np.bincount(users)
    starts = np.cumsum(counts) - counts
    rank = np.empty(len(users), dtype=np.int64)
    rank[idx] = np.arange(len(users)) - starts[users[idx]]
    return rank, counts[users]


def _take(r: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    return r.loc[mask].reset_index(drop=True).copy()


def _check_int(name: str, value: Any, lo: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise InputError(f"{name} must be an integer >= {lo}, got {type(value).__name__} "
                         f"{value!r}")
    if value < lo:
        raise InputError(f"{name} must be an integer >= {lo}, got {value}")
    return int(value)


def holdout(ratings: pd.DataFrame, test_size: float = 0.2, seed: Any = 0
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-user random holdout.

    For every user with ``n_u`` ratings, ``round(test_size * n_u)`` of them, chosen uniformly at
    random, go to the test set and the rest to training. Rounding is half up
    (``floor(test_size * n_u + 0.5)``), so with the default 0.2 a user needs at least 3 ratings
    to have one in test and users with 1-2 ratings stay entirely in training. Vectorised: one
    random key per rating, ranked within each user.
    """
    r = _frame(ratings)
    if not isinstance(test_size, numbers.Real) or isinstance(test_size, bool) or \
            not (0.0 < float(test_size) < 1.0):
        raise InputError(f"test_size must be a fraction strictly between 0 and 1, got "
                         f"{test_size!r}")
    rng = _rng(seed)
    users, order = _canonical_order(r)
    keys = _per_row_keys(rng, order)
    rank, n_u = _rank_within_user(users, keys)
    n_test = np.floor(float(test_size) * n_u + 0.5 + 1e-9).astype(np.int64)
    test = rank < n_test
    return _take(r, ~test), _take(r, test)


def kfold(ratings: pd.DataFrame, k: int = 5, seed: Any = 0, *, per_user: bool = False
          ) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """Random k-fold cross-validation over ratings.

    The ratings are randomly permuted and dealt to folds ``0..k-1`` in turn, so fold sizes differ
    by at most one and every rating is in exactly one test fold; fold ``f`` is returned as
    ``(all other ratings, ratings of fold f)``. With ``per_user=True`` each user's ratings are
    dealt separately (starting at a random fold), so every user's ratings are spread evenly over
    the folds (stratified by user).
    """
    r = _frame(ratings)
    k = _check_int("k", k, 2)
    if k > len(r):
        raise InputError(f"k={k} folds need at least {k} ratings, got {len(r)} "
                         f"(some test folds would be empty)")
    rng = _rng(seed)
    users, order = _canonical_order(r)
    if per_user:
        keys = _per_row_keys(rng, order)
        rank, _ = _rank_within_user(users, keys)
        offset = rng.integers(0, k, size=int(users.max()) + 1)
        fold = (rank + offset[users]) % k
    else:
        fold = np.empty(len(r), dtype=np.int64)
        fold[order] = rng.permutation(len(r)) % k
    return [(_take(r, fold != f), _take(r, fold == f)) for f in range(k)]


def _as_time(value: Any, ts: pd.Series, name: str) -> Any:
    """Convert a date-like cut to the unit of a numeric timestamp column (Unix seconds)."""
    if pd.api.types.is_datetime64_any_dtype(ts):
        try:
            return pd.Timestamp(value)
        except (TypeError, ValueError):
            raise InputError(f"{name}={value!r} is not a date (the timestamp column holds "
                             f"dates)") from None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    try:
        t = pd.Timestamp(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}={value!r} is neither a number nor a date (expected Unix "
                         f"seconds like the timestamp column, or a date string)") from None
    if t.tzinfo is not None:
        t = t.tz_convert("UTC").tz_localize(None)
    return (t - pd.Timestamp("1970-01-01")) / pd.Timedelta(seconds=1)


def temporal(ratings: pd.DataFrame, cut: Any = None, last_n: int | None = None, *,
             cut_quantile: float | None = None, seed: Any = None
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Temporal split on the ``timestamp`` column; give exactly one of:

    * ``cut``: global cut; ratings with ``timestamp < cut`` train, ``>= cut`` test. A date
      string / Timestamp is converted to Unix seconds for a numeric timestamp column.
    * ``cut_quantile``: global cut at this quantile of all timestamps (``numpy.quantile``,
      linear), e.g. 0.8 puts about the oldest 80% in training (ties at the cut go to test).
    * ``last_n``: per user, the ``last_n`` most recent ratings go to test (all of them if the
      user has no more than ``last_n``); equal timestamps are ordered by item id.

    Deterministic; ``seed`` is accepted (and ignored) so that :func:`split` can pass it to every
    method. A cut that leaves training or test empty raises :class:`InputError`.
    """
    r = _frame(ratings, need=("user", "timestamp"))
    given = [n for n, v in (("cut", cut), ("cut_quantile", cut_quantile), ("last_n", last_n))
             if v is not None]
    if len(given) != 1:
        raise InputError(f"temporal split needs exactly one of cut=, cut_quantile=, last_n= "
                         f"(got {', '.join(given) if given else 'none'})")
    ts = r["timestamp"]
    if ts.isna().any():
        j = int(np.flatnonzero(ts.isna().to_numpy())[0])
        raise InputError(f"row {j} (user {r['user'].iat[j]}): missing timestamp (temporal "
                         f"splits need a timestamp on every rating)")
    if last_n is not None:
        n = _check_int("last_n", last_n, 1)
        users, order = _canonical_order(r)
        # position in canonical (user, item) order breaks timestamp ties by item id
        tiebreak = np.empty(len(r), dtype=np.int64)
        tiebreak[order] = np.arange(len(r))
        tvals = ts.to_numpy()
        if pd.api.types.is_datetime64_any_dtype(ts):
            tvals = tvals.astype("datetime64[ns]").astype(np.int64)
        idx = np.lexsort((tiebreak, tvals, users))
        counts = np.bincount(users)
        starts = np.cumsum(counts) - counts
        rank = np.empty(len(r), dtype=np.int64)
        rank[idx] = np.arange(len(r)) - starts[users[idx]]
        from_end = counts[users] - 1 - rank
        test = from_end < n
        return _take(r, ~test), _take(r, test)

    if cut_quantile is not None:
        if not isinstance(cut_quantile, numbers.Real) or isinstance(cut_quantile, bool) or \
                not (0.0 < float(cut_quantile) < 1.0):
            raise InputError(f"cut_quantile must be strictly between 0 and 1, got "
                             f"{cut_quantile!r}")
        if pd.api.types.is_datetime64_any_dtype(ts):
            cut_value = ts.quantile(float(cut_quantile))
        else:
            cut_value = float(np.quantile(ts.to_numpy(dtype=float), float(cut_quantile)))
        label = f"cut_quantile={cut_quantile} (timestamp {cut_value})"
    else:
        cut_value = _as_time(cut, ts, "cut")
        label = f"cut={cut!r}"
    test = (ts >= cut_value).to_numpy()
    if test.all() or not test.any():
        side = "training" if test.all() else "test"
        raise InputError(f"{label} leaves the {side} set empty (timestamps range from "
                         f"{ts.min()} to {ts.max()})")
    return _take(r, ~test), _take(r, test)


METHODS: dict[str, Callable[..., Any]] = {
    "holdout": holdout,
    "kfold": kfold,
    "temporal": temporal,
}


def method_name(method: str) -> str:
    """The canonical name of a split method: ``"holdout"``, ``"kfold"`` or ``"temporal"``
    (case-insensitive; ``"k-fold"``/``"cv"`` are k-fold, ``"random-holdout"`` the holdout);
    :class:`~recmetrics.errors.InputError` for anything else.

    >>> method_name("CV"), method_name("random_holdout")
    ('kfold', 'holdout')
    """
    if not isinstance(method, str):
        raise InputError(f"split method must be a name, got {type(method).__name__} {method!r}")
    key = method.strip().lower().replace("_", "-")
    key = {"k-fold": "kfold", "cv": "kfold", "random-holdout": "holdout"}.get(key, key)
    if key not in METHODS:
        raise unknown_name("split method", method, METHODS)
    return key


def split(ratings: pd.DataFrame, method: str = "holdout", **kw: Any) -> Any:
    """Split by method name (:func:`method_name`: ``"holdout"``, ``"kfold"``, ``"temporal"``,
    case-insensitive, ``"k-fold"``/``"cv"`` also accepted for k-fold); keyword arguments go to the
    method. Returns what the method returns: ``(train, test)`` or a list of them for k-fold."""
    key = method_name(method)
    fn = METHODS[key]
    bad = sorted(set(kw) - set(inspect.signature(fn).parameters))
    if bad:
        params = [p for p in inspect.signature(fn).parameters if p != "ratings"]
        raise InputError(f"split method {key!r} does not take argument(s) {', '.join(bad)} "
                         f"(it takes: {', '.join(params)})")
    return fn(ratings, **kw)
