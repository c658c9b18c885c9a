"""The chart builders of chapter 04 (Schröder et al.'s Figures 1-5): expected data and encodings."""
from __future__ import annotations

import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import viz
from recmetrics.meta import guidelines
from recmetrics.metrics import classification


def _values(spec):
    return next(iter(spec["datasets"].values()))


def test_metric_small_multiples_one_panel_per_metric_in_order():
    fig1 = guidelines.figure1()
    spec = viz.metric_small_multiples(fig1, "k", "list length k", title="Figure 1").to_dict()
    assert spec["facet"]["field"] == "metric"
    assert spec["facet"]["sort"] == list(dict.fromkeys(fig1["metric"]))
    assert spec["resolve"]["scale"]["y"] == "independent" and spec["columns"] == 3   # 4 panels a row: scaled to 0.8
    enc = spec["spec"]["encoding"]
    assert enc["x"]["field"] == "k" and enc["y"]["field"] == "value" and "color" not in enc
    assert len(_values(spec)) == len(fig1)


def test_metric_small_multiples_colour_and_missing_column():
    fig3 = guidelines.figure3()
    spec = viz.metric_small_multiples(fig3, "n_relevant", "relevant items", color="recommender").to_dict()
    assert spec["spec"]["encoding"]["color"]["field"] == "recommender"
    assert {"perfect", "inverse"} == {v["recommender"] for v in _values(spec)}
    with pytest.raises(ValueError, match="n_relevant"):
        viz.metric_small_multiples(fig3.drop(columns="n_relevant"), "n_relevant", "x")


def test_roc_curves_draws_points_in_rank_order():
    toy = guidelines.toy_case([guidelines.FIGURE1_RANKING])
    judged = rm.judge(toy.run, toy.qrels, users="all")
    roc = pd.concat([classification.roc_curve(judged, None, **toy.context).assign(curve="AUC"),
                     classification.roc_curve(judged, 4, **toy.context).assign(curve="LAUC@4")])
    spec = viz.roc_curves(roc, title="ROC").to_dict()
    enc = spec["encoding"]
    assert enc["x"]["field"] == "fpr" and enc["y"]["field"] == "tpr" and enc["order"]["field"] == "rank"
    assert enc["x"]["scale"]["domain"] == [0, 1] and enc["color"]["field"] == "curve"
    assert len(_values(spec)) == len(roc)
    with pytest.raises(ValueError, match="tpr"):
        viz.roc_curves(roc.drop(columns="tpr"))


def test_guide_advice_has_no_empty_measured_table():
    """The static advice of chapter 4's explorer showed an empty "metric" table when the measured
    properties had no column; it shows a table only when there is a measured value."""
    import pandas as pd

    from recmetrics.widgets.guide import _family_html

    rec = guidelines.recommend_metrics(None)[0]
    name = guidelines.family_metrics(rec.family, 10)[0]
    assert "<table" not in _family_html(rec, 10, pd.DataFrame(index=[name]))
    assert "<table" in _family_html(rec, 10, pd.DataFrame({"dp": [0.1]}, index=[name]))
