"""The paper's toy cases (Figures 1-4) as closed-form checks, the §6 guidelines, and the widget."""
import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.meta import guidelines as g
from recmetrics.errors import InputError


def wide(df, index):
    return df.pivot_table(index=index, columns="metric", values="value", sort=False)


@pytest.fixture(scope="module")
def figs():
    return {1: wide(g.figure1(), "k"), 2: wide(g.figure2(), "position"),
            3: wide(g.figure3(), ["recommender", "n_relevant"]), 4: wide(g.figure4(), "position")}


# ------------------------------------------------------------------------------ Figure 1
def test_figure1_varying_k(figs):
    f = figs[1]
    rel = np.array(g.FIGURE1_RANKING)
    hits = np.cumsum(rel)
    k = np.arange(1, 11)
    assert np.allclose(f["precision"], hits / k) and np.allclose(f["recall"], hits / 4)
    assert np.allclose(f["fallout"], (k - hits) / 6) and np.allclose(f["miss rate"], 1 - hits / 4)
    # precision and recall move in opposite directions as the list grows
    assert f["recall"].is_monotonic_increasing and f["precision"].iloc[-1] < f["precision"].iloc[0]
    # recommending all ten items carries no information: markedness = informedness = MCC = 0
    assert f.loc[10, ["markedness", "informedness", "MCC"]].eq(0).all()
    # informedness = recall - fallout; MCC² = informedness · markedness
    assert np.allclose(f["informedness"], f["recall"] - f["fallout"])
    assert np.allclose(f["MCC"] ** 2, f["informedness"] * f["markedness"])
    # AUC of the ranking: relevant at 1, 2, 4, 7 have 0, 0, 1, 3 irrelevant items above -> 1 - 4/24
    assert np.allclose(f["AUC"], 5 / 6) and np.isclose(f.loc[10, "LAUC"], 5 / 6)
    assert np.isclose(f.loc[10, "BKTau@k"], f.loc[10, "BKTau"])
    # the list length that best separates relevant from irrelevant items (the paper's use of Fig. 1)
    assert f["informedness"].idxmax() == 4 and f["MCC"].idxmax() == 2


# ------------------------------------------------------------------------------ Figure 2
def test_figure2_single_relevant_item(figs):
    f = figs[2]
    p = np.arange(1, 11)
    inside = p <= 4
    # precision@4 does not see where the item is inside the list; MAP does
    assert np.allclose(f["precision"], np.where(inside, 0.25, 0))
    assert np.allclose(f["MAP"], 1 / p)
    assert f.loc[1:4, "precision"].nunique() == 1 and f.loc[1:4, "MAP"].nunique() == 4
    # AUC falls linearly: a swap at the top or the bottom changes it equally (1/9)
    assert np.allclose(f["AUC"], 1 - (p - 1) / 9) and np.allclose(np.diff(f["AUC"]), -1 / 9)
    # MAP emphasises the top: the first swap costs more than the last
    assert (f["MAP"].iloc[0] - f["MAP"].iloc[1]) > 10 * (f["MAP"].iloc[-2] - f["MAP"].iloc[-1])
    # LAUC: the AUC inside the list, constant (4 irrelevant of 9, then a straight line) beyond it
    assert np.allclose(f["LAUC"], np.where(inside, 1 - (p - 1) / 9, (1 - 4 / 9) / 2))
    # the boolean Kendall's taus are exact linear functions of AUC and LAUC (highly correlated)
    assert np.allclose(np.corrcoef(f["BKTau"], f["AUC"])[0, 1], 1)
    assert np.allclose(np.corrcoef(f["BKTau@k"], f["LAUC"])[0, 1], 1)
    assert np.isclose(f.loc[1, "BKTau"], np.sqrt(9 / 45))  # tau-b of a perfect ranking: sqrt(R(N-R)/C(N,2))


# ------------------------------------------------------------------------------ Figure 3
def test_figure3_skewed_ratio_of_relevant_items(figs):
    f = figs[3]
    perfect, inverse = f.loc["perfect"], f.loc["inverse"]
    r = np.arange(1, 10)
    # precision and recall are bounded by the ratio: the perfect recommender has precision min(R,4)/4
    assert np.allclose(perfect["precision"], np.minimum(r, 4) / 4)
    assert np.allclose(perfect["recall"], np.minimum(r, 4) / r)
    # ... and can mislead: the inverse recommender with 9 relevant items beats the perfect one with 2
    assert inverse.loc[9, "precision"] > perfect.loc[2, "precision"]
    assert inverse.loc[9, "F1"] > perfect.loc[1, "F1"]
    # markedness and informedness keep their meaning for every ratio: >0 perfect, <0 inverse
    for m in ("markedness", "informedness", "MCC"):
        assert (perfect[m] > 0).all() and (inverse[m] < 0).all(), m
    assert perfect.loc[4, "MCC"] == 1 and inverse.loc[6, "MCC"] == -1
    # LAUC = 1 when every relevant item is retrieved (first) inside the top 4; else (1 + 4/R)/2
    assert np.allclose(perfect["LAUC"], np.where(r <= 4, 1.0, (1 + 4 / r) / 2))
    assert (inverse["LAUC"] <= perfect["LAUC"]).all() and (perfect["AUC"] == 1).all() and (inverse["AUC"] == 0).all()


# ------------------------------------------------------------------------------ Figure 4
def test_figure4_block_of_three_relevant_items(figs):
    f = figs[4]
    s = np.arange(1, 9)
    # AUC: each step down the list costs the same 3 swaps of 21 pairs (swap at top == swap at bottom)
    assert np.allclose(f["AUC"], 1 - (s - 1) / 7)
    # MAP reacts strongly at the top, weakly at the bottom
    d = -np.diff(f["MAP"].to_numpy())
    assert np.all(np.diff(d) < 0)
    # LAUC ignores the order beyond the top 4: constant once the block has left the list
    assert np.allclose(f.loc[5:, "LAUC"], (1 - 4 / 7) / 2)
    assert f.loc[1, "LAUC"] == 1 and f["LAUC"].is_monotonic_decreasing
    # the classification metrics only count the relevant items inside the list
    assert np.allclose(f["precision"], [3, 3, 2, 1, 0, 0, 0, 0] / np.array(4))


def test_toy_case_validation_and_metric_selection():
    with pytest.raises(InputError, match="patterns"):
        g.toy_case([])
    out = g.toy_scores(g.toy_case([[1, 0, 0], [0, 1, 0]]), ["P@{k}", ("area", "AUC")], k=2)
    assert out.metric.tolist() == ["P@{k}", "P@{k}", "area", "area"] and out.name.iloc[0] == "P@2"
    assert np.allclose(out.value, [0.5, 0.5, 1.0, 0.5])


# ------------------------------------------------------------------------------ guidelines
def test_recommendations_follow_the_papers_rules():
    fam = lambda a: [r.family for r in g.recommend_metrics(a)]  # noqa: E731
    assert fam({"interest": "predictions", "limited_list": "no"}) == ["predictive accuracy"]
    # implicit ratings: no unrated item to predict -> a classification/ranking task instead
    assert "predictive accuracy" not in fam({"rated_unrated": False, "interest": "predictions"})
    assert fam({"scale": "binary", "interest": "predictions", "ordered": "no"}) == ["classification accuracy"]
    assert fam({"ordered": "no"}) == ["classification accuracy"]
    assert fam({"ordered": "yes", "decay": "fast"}) == ["top-weighted ranking"]
    assert fam({"ordered": "yes", "decay": "slow"}) == ["limited ranking"]
    assert fam({"limited_list": "no", "ordered": "yes", "decay": "slow"}) == ["full ranking"]
    mixed = g.recommend_metrics({"interest": "predictions", "limited_list": True, "ordered": False})
    assert [r.family for r in mixed] == ["predictive accuracy", "classification accuracy"]
    assert "limited list" in mixed[0].reason
    # reasons cite the paper
    assert all("§" in r.reason for r in g.recommend_metrics({"ordered": "no"}))
    caution = [c.family for c in g.cautions({"ordered": "yes", "decay": "fast", "scale": "unary"})]
    assert {"AUC, Kendall's tau", "unordered set metrics alone", "unary judgments"} <= set(caution)


def test_every_combination_gets_advice_and_names_registered_metrics():
    table = g.decision_table()
    assert len(table) == np.prod([len(q.options) for q in g.QUESTIONS]) and (table.recommended != "").all()
    for family in g.FAMILIES:
        for name in g.family_metrics(family, k=10):
            rm.metrics.parse(name)
    assert set(g.rules_table().kind) == {"recommend", "caution"}


def test_bad_answers():
    with pytest.raises(InputError, match="must be one of"):
        g.recommend_metrics({"scale": "ordinal"})
    with pytest.raises(InputError, match="unknown guideline question 'orderd'.*'ordered'"):
        g.recommend_metrics({"orderd": "yes"})
    with pytest.raises(InputError, match="unknown metric family"):
        g.family_metrics("ranking")


def test_measured_properties_hook(tmp_path, monkeypatch):
    monkeypatch.delenv(g.META_RESULTS_ENV, raising=False)
    assert g.measured_properties(["MCC@10"], tmp_path) is None  # not computed yet
    pd.DataFrame({"dataset": ["ml", "ml", "ml"], "metric": ["MCC@10", "map@10", "P@10"],
                  "value": [0.8, 0.9, 0.7]}).to_csv(tmp_path / "discriminative_power.csv", index=False)
    pd.DataFrame({"dataset": ["ml"], "metric": ["MCC@10"], "value": [0.6]}).to_csv(tmp_path / "robustness.csv",
                                                                                   index=False)
    monkeypatch.setenv(g.META_RESULTS_ENV, str(tmp_path))
    t = g.measured_properties(["MCC@10", "AP@10"])
    assert t.loc["MCC@10", ("discriminative power", "ml")] == 0.8
    assert t.loc["AP@10", ("discriminative power", "ml")] == 0.9  # matched through the parser (map = AP)
    assert t.loc["MCC@10", ("robustness", "ml")] == 0.6
    pd.DataFrame({"metric": ["x"]}).to_csv(tmp_path / "robustness.csv", index=False)
    with pytest.raises(InputError, match="lacks column"):
        g.measured_properties(["MCC@10"])


def test_guide_widget_shows_the_library_advice(tmp_path):
    pytest.importorskip("ipywidgets")
    from recmetrics.widgets.guide import guide, render

    w = guide({"ordered": "no"}, k=5, results=tmp_path)
    assert "markedness@5" in w.advice.value and "not available yet" in w.advice.value
    w.answers["ordered"].value = "yes"
    w.answers["decay"].value = "slow"
    assert "LAUC@5" in w.advice.value
    assert render({"limited_list": "no", "decay": "slow"}, k=3, results=tmp_path).count("<li>") >= 2


def test_catalogue_identities_hold_at_catalogue_scale_and_fail_on_judged_items():
    import recmetrics as rm

    rng = np.random.default_rng(0)
    n_users, n_items = 40, 2000
    rows = [(u, int(i), float(rng.integers(1, 6))) for u in range(n_users)
            for i in rng.choice(n_items, size=30, replace=False)]
    ratings = pd.DataFrame(rows, columns=["user", "item", "rating"])
    train, test = rm.splits.holdout(ratings, test_size=0.5, seed=0)
    qrels = rm.Qrels(test, threshold=4)
    run = rm.recommenders.create("Pop").fit(train).recommend(qrels.users, n=10)
    table = g.catalogue_identities(run, qrels, 10, train=train, catalog=np.arange(n_items))
    at = table.set_index(["universe", "identity"])["max |difference|"]
    for identity in ["informedness ≈ recall", "markedness ≈ precision", "LAUC ≈ (1 + informedness)/2"]:
        assert at[("all", identity)] < 0.02, identity
    assert at[("judged", "informedness ≈ recall")] > 0.05
    # the standard error of each mean |difference| over users, which a claim about the mean must clear
    se = table.set_index(["universe", "identity"])["se"]
    assert (se >= 0).all() and (table["users"] == table["users"].iloc[0]).all()
    per_user = rm.evaluate(run, qrels, ["informedness@10(universe=judged)", "Recall@10"], train=train,
                           catalog=np.arange(n_items)).per_user
    diff = (per_user.iloc[:, 0] - per_user.iloc[:, 1]).abs()
    assert se[("judged", "informedness ≈ recall")] == pytest.approx(diff.std(ddof=1) / np.sqrt(len(diff)))
