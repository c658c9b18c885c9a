"""Table 2 statistics and the Gini index (recmetrics.data.stats)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics.data import datasets as ds
from recmetrics.data import stats as st
from recmetrics.errors import InputError


# ------------------------------------------------------------------ Gini closed forms
@pytest.mark.parametrize("counts, expected", [
    ([1, 1, 1, 1], 0.0),
    ([5, 5], 0.0),
    ([0, 0, 0, 1], 1.0),          # full concentration -> exactly 1 with the (n-1) form
    ([0, 1], 1.0),
    ([1, 3], 0.5),                # (-1*0.25 + 1*0.75) / 1
    ([1, 2, 3, 4], 1 / 3),        # (-3*.1 - .2 + .3 + 3*.4) / 3
    ([4, 3, 2, 1], 1 / 3),        # order does not matter
    ([7], 0.0),                   # a single entity
])
def test_gini_closed_forms(counts, expected):
    assert st.gini(counts) == pytest.approx(expected, abs=1e-12)


def test_gini_uncorrected_variant():
    assert st.gini([0, 0, 0, 1], corrected=False) == pytest.approx(0.75)
    assert st.gini([1, 2, 3, 4], corrected=False) == pytest.approx(0.25)


def test_gini_scale_invariance_and_bounds():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 100, size=1000)
    g = st.gini(x)
    assert 0.0 <= g <= 1.0
    assert st.gini(x * 7) == pytest.approx(g)
    assert st.gini(pd.Series(x)) == pytest.approx(g)
    # against the mean-absolute-difference definition: G = sum|xi-xj| / (2 n^2 mean) * n/(n-1)
    n = x.size
    mad = np.abs(x[:, None] - x[None, :]).sum() / (2 * n * n * x.mean())
    assert g == pytest.approx(mad * n / (n - 1))


@pytest.mark.parametrize("counts, msg", [
    ([], "empty"),
    ([1, -1], "position 1 is negative"),
    ([0, 0], "all 2 counts are zero"),
    ([1, np.nan], "position 1 is nan"),
])
def test_gini_bad_input(counts, msg):
    with pytest.raises(InputError, match=msg):
        st.gini(counts)


# ------------------------------------------------------------------ dataset statistics
def test_dataset_stats_small_example():
    r = pd.DataFrame({"user": [1, 1, 1, 2], "item": [10, 11, 12, 10],
                      "rating": [1.0, 2.0, 3.0, 5.0]})
    s = st.dataset_stats(r)
    assert s["users"] == 2 and s["items"] == 3 and s["ratings"] == 4
    assert s["density"] == pytest.approx(4 / 6)
    assert s["user_gini"] == pytest.approx(st.gini([3, 1]))
    assert s["item_gini"] == pytest.approx(st.gini([2, 1, 1]))
    assert (s["rating_mean"], s["rating_min"], s["rating_max"]) == (2.75, 1.0, 5.0)
    assert list(s.index) == ["users", "items", "ratings", "density", "user_gini", "item_gini",
                             "rating_mean", "rating_min", "rating_max"]


def test_dataset_stats_without_rating_column():
    s = st.dataset_stats(pd.DataFrame({"user": [1, 2], "item": [1, 1]}))
    assert s["ratings"] == 2 and np.isnan(s["rating_mean"])


def test_dataset_stats_bad_input():
    with pytest.raises(InputError, match="no 'item' column"):
        st.dataset_stats(pd.DataFrame({"user": [1]}))
    with pytest.raises(InputError, match="empty"):
        st.dataset_stats(pd.DataFrame({"user": [], "item": []}))
    with pytest.raises(InputError, match="expected a ratings DataFrame"):
        st.stats([1, 2])
    with pytest.raises(InputError, match="at least one dataset"):
        st.stats_table([])


def test_table2_embedded_datasets():
    ml, ie = ds.load("movielens-small"), ds.load("insteval")
    s = st.stats(ml)
    assert s.name == "movielens-small"
    assert (s["users"], s["items"], s["ratings"]) == (671, 9066, 100_004)
    assert s["density"] == pytest.approx(100_004 / (671 * 9066))
    assert s["user_gini"] == pytest.approx(0.5808, abs=1e-4)
    assert s["item_gini"] == pytest.approx(0.7187, abs=1e-4)
    assert (s["rating_min"], s["rating_max"]) == (0.5, 5.0)
    table = st.stats_table([ml, ie.ratings])
    assert table.loc["movielens-small", "users"] == 671
    assert table.iloc[1]["ratings"] == 73_421 and table.iloc[1]["items"] == 1_128
    assert table.iloc[1]["users"] == 2_972
    assert table["users"].dtype == np.int64 and table["density"].dtype == float
    assert table.iloc[1]["user_gini"] == pytest.approx(0.3340, abs=1e-4)
    assert table.iloc[1]["item_gini"] == pytest.approx(0.5441, abs=1e-4)
