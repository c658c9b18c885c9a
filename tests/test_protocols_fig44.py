"""Fig. 4.4's outer panels and Fig. 4.6 of paper 004 (Bellogín's thesis ch. 4, §4.5.2 and §4.6.2):
the library computations (recmetrics.protocols.chapter), the claim they feed and the viz functions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics import viz
from recmetrics.errors import InputError
from recmetrics.meta import findings
from recmetrics.papers import bellogin2012 as claims
from recmetrics.protocols import chapter


def ratings(rows):
    return pd.DataFrame(rows, columns=["user", "item", "rating"])


# item a: 3 ratings (2 positive), b: 2 ratings (2 positive), c: 1 rating (0 positive)
TOY = ratings([(1, "a", 5), (2, "a", 4), (3, "a", 1), (1, "b", 5), (2, "b", 4), (3, "c", 2)])


def test_cumulative_popularity_all_ratings_by_hand():
    c = chapter.cumulative_popularity(TOY)
    assert c["rank"].tolist() == [1, 2, 3]
    assert c["count"].tolist() == [3, 2, 1]
    np.testing.assert_allclose(c["cumulative"], [3 / 6, 5 / 6, 1.0])
    np.testing.assert_allclose(c["item_share"], [1 / 3, 2 / 3, 1.0])


def test_cumulative_popularity_positive_only_drops_items_without_a_positive():
    c = chapter.cumulative_popularity(TOY, threshold=4)
    assert c["count"].tolist() == [2, 2]           # c has no positive rating: not ranked
    np.testing.assert_allclose(c["cumulative"], [0.5, 1.0])
    np.testing.assert_allclose(c["item_share"], [0.5, 1.0])


def test_cumulative_popularity_thinning_keeps_exact_values():
    rng = np.random.default_rng(0)
    r = ratings([(int(u), int(i), 5) for u, i in zip(rng.integers(0, 50, 3000), rng.zipf(1.5, 3000) % 700)])
    full = chapter.cumulative_popularity(r, points=None)
    thin = chapter.cumulative_popularity(r, points=100)
    assert len(thin) <= 100 and thin["rank"].iloc[0] == 1 and thin["rank"].iloc[-1] == len(full)
    assert thin["cumulative"].iloc[-1] == pytest.approx(1.0)
    merged = thin.merge(full, on="rank", suffixes=("", "_full"))
    np.testing.assert_allclose(merged["cumulative"], merged["cumulative_full"])
    assert (np.diff(thin["cumulative"]) >= 0).all()


def test_cumulative_popularity_without_positive_ratings_is_an_error():
    with pytest.raises(InputError, match="threshold 6"):
        chapter.cumulative_popularity(TOY, threshold=6)


def test_positive_concentration_by_hand():
    s = chapter.positive_concentration(TOY, threshold=4, head=0.5)
    assert s["items"] == 2 and s["single_share"] == 0.0
    assert s["top_share_users"] == pytest.approx(2 / 3)    # item a liked by users 1, 2 of 3
    assert s["head_share"] == pytest.approx(0.5)


def test_fig44_side_panels_on_embedded_data():
    out = chapter.fig44_side_panels("movielens-small", alphas=(0.0, 2.0), datasets=("movielens-small",), points=50)
    left, right, pos = out["left"], out["right"], out["positive"]
    assert set(left["data"]) == {"α = 0", "α = 2"} and set(right["data"]) == {"movielens-small"}
    # the steeper the power law, the more of the ratings the head holds
    at = left[left["rank"] == 10].set_index("data")["cumulative"]
    assert at["α = 2"] > at["α = 0"]
    assert pos.loc[0, "top_share_users"] > 0.2         # the thesis: 32.7% on MovieLens 1M


def test_positive_long_tail_claim_agrees_and_disagrees():
    claim = {c.id: c for c in claims.CLAIMS}["positive-long-tail"]
    skewed = pd.DataFrame([{"data": "x", "items": 100, "single_share": 0.3, "top_share_users": 0.4, "head": 0.1,
                            "head_share": 0.6}])
    flat = skewed.assign(single_share=0.9, top_share_users=0.02)
    assert claim.check({"positive": skewed}).verdict == "agrees"
    ev = claim.check({"positive": flat})
    assert ev.verdict == "disagrees" and ev.value == pytest.approx(0.02)
    table = findings.assess([claim], {})
    assert table.verdict.iloc[0] == "inconclusive"


def test_positive_ratio_line_chart():
    ratio = chapter.positive_ratio(TOY, segments=3, threshold=4)
    chart = viz.positive_ratio_line(ratio, title="Fig. 4.6")
    spec = chart.to_dict()
    assert spec["mark"]["type"] == "line"
    assert spec["encoding"]["x"]["field"] == "rank" and spec["encoding"]["y"]["field"] == "ratio"
    values = next(iter(spec["datasets"].values()))
    assert len(values) == len(ratio) and {"segment", "rank", "ratio", "popularity"} <= set(values[0])
    with pytest.raises(ValueError, match="ratio"):
        viz.positive_ratio_line(ratio.drop(columns="ratio"))


def test_cumulative_share_lines_chart():
    curves = chapter.popularity_curves({"all": TOY, "again": TOY})
    chart = viz.cumulative_share_lines(curves, title="Fig. 4.4 (left)")
    spec = chart.to_dict()
    assert spec["mark"]["type"] == "line"
    enc = spec["encoding"]
    assert enc["x"]["field"] == "item_share" and enc["y"]["field"] == "cumulative"
    assert enc["color"]["field"] == "data"
    assert enc["x"]["scale"]["domain"] == [0, 1] and enc["y"]["scale"]["domain"] == [0, 1]
    values = next(iter(spec["datasets"].values()))
    assert len(values) == len(curves) == 6
    with pytest.raises(ValueError, match="data"):
        viz.cumulative_share_lines(curves.drop(columns="data"))


def test_cumulative_share_panels_side_by_side_with_own_legends():
    left = chapter.popularity_curves({"α = 0": TOY})
    right = chapter.popularity_curves({"toy": TOY}, threshold=4)
    chart = viz.cumulative_share_panels({"left": left, "right": right}, y_titles={"right": "positive share"})
    spec = chart.to_dict()
    assert len(spec["hconcat"]) == 2
    assert spec["resolve"]["scale"]["color"] == "independent"
    assert [c["title"] for c in spec["hconcat"]] == ["left", "right"]
    assert spec["hconcat"][1]["encoding"]["y"]["title"] == "positive share"
    with pytest.raises(ValueError):
        viz.cumulative_share_panels({})
