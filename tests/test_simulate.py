"""Power-law simulator of paper 004 §4.5.2 (recmetrics.data.simulate)."""
import numpy as np
import pytest

import recmetrics as rm
from recmetrics.data import simulate
from recmetrics.errors import InputError


def test_counts_follow_the_power_law_and_sum():
    c = simulate.power_law_counts(1000, 20000, 500, alpha=1.0, c1=1.0, c2=10.0)
    assert c.sum() == 20000 and (c <= 500).all() and (np.diff(c) <= 1).all()
    u = simulate.power_law_counts(1000, 20000, 500, alpha=0.0)
    assert u.max() - u.min() <= 1  # alpha = 0 is uniform


def test_like_reference_sizes_and_distribution():
    ref = rm.datasets.load("movielens-small")
    ds = rm.datasets.load("powerlaw", alpha=1.4, like="movielens-small", seed=1)
    assert (ds.n_users, ds.n_items, len(ds)) == (ref.n_users, ref.n_items, len(ref))
    assert not ds.ratings.duplicated(["user", "item"]).any()
    p_ref = ref.ratings["rating"].value_counts(normalize=True).sort_index()
    p_sim = ds.ratings["rating"].value_counts(normalize=True).reindex(p_ref.index, fill_value=0)
    assert np.abs(p_ref - p_sim).max() < 0.01
    top_ref = ref.ratings["item"].value_counts().iloc[0]
    assert ds.ratings["item"].value_counts().iloc[0] == pytest.approx(top_ref, rel=0.05)  # c2 fit at alpha 1.4


def test_seeded():
    a = rm.datasets.load("powerlaw", alpha=1.0, seed=3).ratings
    b = rm.datasets.load("powerlaw", alpha=1.0, seed=3).ratings
    assert a.equals(b)


def test_skew_grows_with_alpha():
    tops = [rm.datasets.load("powerlaw", alpha=a).ratings["item"].value_counts().iloc[:100].sum() for a in (0, 1, 2)]
    assert tops[0] < tops[1] < tops[2]


def test_fig44_popularity_rises_with_alpha():
    vals = {}
    for a in (0.0, 2.0):
        ds = rm.datasets.load("powerlaw", alpha=a)
        train, test = rm.splits.holdout(ds.ratings, 0.2, seed=0)
        pop = rm.recommenders.create("Pop").fit(train)
        vals[a] = rm.protocols.evaluate(pop, train, test, "TI-1R-NN(n=100)", "P@10").aggregate["P@10"]
    assert vals[0.0] < 1 / 101 * 1.2 and vals[2.0] > 3 / 101


def test_bad_input():
    with pytest.raises(InputError, match="alpha"):
        simulate.power_law_counts(10, 50, 10, alpha=-1)
    with pytest.raises(InputError, match="do not fit"):
        simulate.power_law_counts(10, 500, 10, alpha=1)
    with pytest.raises(InputError, match="c1"):
        simulate.power_law_counts(10, 50, 10, alpha=1, c1=10)
