"""Seeded splits (recmetrics.data.splits)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics.data import splits as sp
from recmetrics.errors import InputError, UnknownNameError


@pytest.fixture(scope="module")
def ratings():
    """200 users with 1..40 ratings each, random items and timestamps."""
    rng = np.random.default_rng(42)
    rows = []
    for u in range(200):
        n = int(rng.integers(1, 41))
        items = rng.choice(500, size=n, replace=False)
        for i in items:
            rows.append((u, int(i), float(rng.integers(1, 6)), int(rng.integers(0, 10**6))))
    return pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"])


def _key(frame):
    return set(zip(frame["user"], frame["item"]))


def _same(a, b):
    return a.reset_index(drop=True).equals(b.reset_index(drop=True))


# ------------------------------------------------------------------ holdout
@pytest.mark.parametrize("test_size", [0.2, 0.5, 0.1])
def test_holdout_per_user_sizes(ratings, test_size):
    train, test = sp.holdout(ratings, test_size=test_size, seed=1)
    n_u = ratings.groupby("user").size()
    got = test.groupby("user").size().reindex(n_u.index, fill_value=0)
    expected = np.floor(test_size * n_u + 0.5).astype(int)  # round half up
    assert (got == expected).all()
    assert len(train) + len(test) == len(ratings)


def test_holdout_disjoint_union_columns(ratings):
    train, test = sp.holdout(ratings, seed=3)
    assert not (_key(train) & _key(test))
    assert _key(train) | _key(test) == _key(ratings)
    assert list(train.columns) == list(ratings.columns) == list(test.columns)
    assert train.index.equals(pd.RangeIndex(len(train)))
    merged = pd.concat([train, test]).sort_values(["user", "item"]).reset_index(drop=True)
    assert merged.equals(ratings.sort_values(["user", "item"]).reset_index(drop=True))


def test_holdout_determinism(ratings):
    a = sp.holdout(ratings, seed=7)
    b = sp.holdout(ratings, seed=7)
    c = sp.holdout(ratings, seed=8)
    assert _same(a[0], b[0]) and _same(a[1], b[1])
    assert not _same(a[1], c[1])
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert _same(sp.holdout(ratings, seed=g1)[1], sp.holdout(ratings, seed=g2)[1])


def test_holdout_independent_of_row_order(ratings):
    shuffled = ratings.sample(frac=1.0, random_state=0)
    a = sp.holdout(ratings, seed=11)[1].sort_values(["user", "item"]).reset_index(drop=True)
    b = sp.holdout(shuffled, seed=11)[1].sort_values(["user", "item"]).reset_index(drop=True)
    assert a.equals(b)


def test_holdout_small_users_stay_in_train():
    r = pd.DataFrame({"user": [1, 2, 2, 3, 3, 3], "item": [1, 1, 2, 1, 2, 3],
                      "rating": [5.0] * 6})
    train, test = sp.holdout(r, test_size=0.2, seed=0)
    assert test["user"].tolist() == [3]  # round(0.2*3)=1, round(0.4)=0, round(0.2)=0
    _, test = sp.holdout(r, test_size=0.5, seed=0)
    assert sorted(test["user"].value_counts().to_dict().items()) == [(1, 1), (2, 1), (3, 2)]


def test_holdout_does_not_mutate_input(ratings):
    before = ratings.copy()
    train, _ = sp.holdout(ratings, seed=0)
    train.loc[0, "rating"] = -99
    assert ratings.equals(before)


# ------------------------------------------------------------------ k-fold
@pytest.mark.parametrize("per_user", [False, True])
def test_kfold_partition(ratings, per_user):
    folds = sp.kfold(ratings, k=5, seed=2, per_user=per_user)
    assert len(folds) == 5
    seen = []
    for train, test in folds:
        assert not (_key(train) & _key(test))
        assert _key(train) | _key(test) == _key(ratings)
        assert len(train) + len(test) == len(ratings)
        seen.extend(zip(test["user"], test["item"]))
    assert len(seen) == len(ratings) and set(seen) == _key(ratings)  # each in exactly one fold
    sizes = [len(t) for _, t in folds]
    if not per_user:
        assert max(sizes) - min(sizes) <= 1
    else:  # each user's ratings spread evenly
        per = pd.concat([t.assign(f=f) for f, (_, t) in enumerate(folds)])
        counts = per.groupby(["user", "f"]).size().unstack(fill_value=0)
        assert ((counts.max(axis=1) - counts.min(axis=1)) <= 1).all()


def test_kfold_determinism(ratings):
    a = sp.kfold(ratings, k=3, seed=4)
    b = sp.kfold(ratings, k=3, seed=4)
    c = sp.kfold(ratings, k=3, seed=5)
    assert all(_same(x[1], y[1]) for x, y in zip(a, b))
    assert not all(_same(x[1], y[1]) for x, y in zip(a, c))


def test_kfold_bad_k(ratings):
    for k in (1, 0, -3):
        with pytest.raises(InputError, match="k must be an integer >= 2"):
            sp.kfold(ratings, k=k)
    with pytest.raises(InputError, match="integer"):
        sp.kfold(ratings, k=2.5)
    with pytest.raises(InputError, match="at least 10 ratings"):
        sp.kfold(ratings.iloc[:3], k=10)


# ------------------------------------------------------------------ temporal
def test_temporal_cut(ratings):
    cut = 500_000
    train, test = sp.temporal(ratings, cut=cut)
    assert (train["timestamp"] < cut).all() and (test["timestamp"] >= cut).all()
    assert len(train) + len(test) == len(ratings)


def test_temporal_cut_quantile(ratings):
    train, test = sp.temporal(ratings, cut_quantile=0.8)
    assert abs(len(train) / len(ratings) - 0.8) < 0.01
    assert train["timestamp"].max() < test["timestamp"].min()


def test_temporal_date_cut():
    r = pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1], "rating": [1.0, 2.0, 3.0],
                      "timestamp": [946684799, 946684800, 946684801]})  # around 2000-01-01
    train, test = sp.temporal(r, cut="2000-01-01")
    assert train["timestamp"].tolist() == [946684799]
    assert test["timestamp"].tolist() == [946684800, 946684801]


def test_temporal_last_n(ratings):
    train, test = sp.temporal(ratings, last_n=2)
    n_u = ratings.groupby("user").size()
    got = test.groupby("user").size().reindex(n_u.index, fill_value=0)
    assert (got == np.minimum(n_u, 2)).all()
    latest_train = train.groupby("user")["timestamp"].max()
    earliest_test = test.groupby("user")["timestamp"].min()
    common = latest_train.index.intersection(earliest_test.index)
    assert (latest_train[common] <= earliest_test[common]).all()


def test_temporal_last_n_ties_by_item():
    r = pd.DataFrame({"user": [1, 1, 1], "item": [9, 3, 5], "rating": [1.0, 2.0, 3.0],
                      "timestamp": [10, 10, 5]})
    train, test = sp.temporal(r, last_n=1)
    assert test["item"].tolist() == [9]


def test_temporal_errors(ratings):
    no_ts = ratings.drop(columns="timestamp")
    with pytest.raises(InputError, match="no 'timestamp' column"):
        sp.temporal(no_ts, cut=5)
    with pytest.raises(InputError, match="exactly one of"):
        sp.temporal(ratings)
    with pytest.raises(InputError, match="exactly one of"):
        sp.temporal(ratings, cut=5, last_n=1)
    with pytest.raises(InputError, match="leaves the test set empty"):
        sp.temporal(ratings, cut=10**9)
    with pytest.raises(InputError, match="cut_quantile must be strictly between 0 and 1"):
        sp.temporal(ratings, cut_quantile=1.5)
    with pytest.raises(InputError, match="last_n must be an integer >= 1"):
        sp.temporal(ratings, last_n=0)


# ------------------------------------------------------------------ dispatcher and bad input
def test_split_dispatcher(ratings):
    a = sp.split(ratings, "holdout", test_size=0.3, seed=1)
    b = sp.holdout(ratings, test_size=0.3, seed=1)
    assert _same(a[1], b[1])
    assert len(sp.split(ratings, "kfold", k=3, seed=1)) == 3
    assert len(sp.split(ratings, "K-Fold", k=2, seed=1)) == 2
    train, test = sp.split(ratings, "temporal", last_n=1, seed=0)
    assert len(test) == ratings["user"].nunique()
    with pytest.raises(UnknownNameError, match="unknown split method 'holdot'.*'holdout'"):
        sp.split(ratings, "holdot")
    with pytest.raises(InputError, match="does not take argument.*k"):
        sp.split(ratings, "holdout", k=3)


@pytest.mark.parametrize("test_size", [0, 1, 1.5, -0.1, "0.2", True])
def test_holdout_bad_test_size(ratings, test_size):
    with pytest.raises(InputError, match="test_size must be a fraction strictly between 0 and 1"):
        sp.holdout(ratings, test_size=test_size)


def test_empty_and_malformed_input(ratings):
    empty = ratings.iloc[:0]
    for call in (lambda: sp.holdout(empty), lambda: sp.kfold(empty),
                 lambda: sp.temporal(empty, last_n=1)):
        with pytest.raises(InputError, match="ratings are empty"):
            call()
    with pytest.raises(InputError, match="expected a ratings DataFrame"):
        sp.holdout([(1, 2, 3.0)])
    with pytest.raises(InputError, match="no 'user' column"):
        sp.holdout(ratings.rename(columns={"user": "u"}))
    with pytest.raises(InputError, match="seed must be an int or a numpy.random.Generator"):
        sp.holdout(ratings, seed=None)
    with pytest.raises(InputError, match="seed must be"):
        sp.kfold(ratings, seed="1")


def test_accepts_dataset():
    from recmetrics.data.datasets import from_frame
    data = from_frame(pd.DataFrame({"user": [1] * 10, "item": range(10), "rating": [3.0] * 10}))
    train, test = sp.holdout(data, seed=0)
    assert len(test) == 2 and len(train) == 8
