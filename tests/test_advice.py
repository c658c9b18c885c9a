"""recmetrics.meta.advice: which metric to report, decided from DP, robustness and agreement with
the one verdict rule of meta.findings (differences within two standard errors decide nothing)."""
import numpy as np
import pandas as pd
import pytest

from recmetrics import study as st_mod
from recmetrics.data.simulate import simulate
from recmetrics.errors import InputError
from recmetrics.meta import advice, robustness
from recmetrics.meta.discriminative import discriminative_power


def table(**rows):
    """Candidates table from name=(dp, dp_se, robustness, robustness_se[, cutoff])."""
    cols = ["dp", "dp_se", "robustness", "robustness_se", "cutoff"]
    data = {k: (list(v) + [None])[:5] for k, v in rows.items()}
    t = pd.DataFrame.from_dict(data, orient="index", columns=cols)
    return t.drop(columns="cutoff") if t["cutoff"].isna().all() else t


def test_a_candidate_better_on_one_property_and_not_worse_on_the_other_dominates():
    t = table(A=(0.10, 0.01, 0.90, 0.01), B=(0.50, 0.01, 0.90, 0.01), C=(0.10, 0.01, 0.60, 0.01))
    front, best, by = advice.decide(t)
    assert front == ["A"] and best == "A"
    assert by["B"] == ["A"] and by["C"] == ["A"]


def test_a_trade_off_keeps_both_on_the_front():
    t = table(A=(0.10, 0.01, 0.70, 0.01), B=(0.40, 0.01, 0.95, 0.01), C=(0.45, 0.01, 0.65, 0.01))
    front, best, by = advice.decide(t)
    assert front == ["A", "B"] and set(by["C"]) == {"A", "B"}
    assert best == "A"                               # equal rank sums (1 + 2): the lower DP


def test_differences_within_two_standard_errors_decide_nothing():
    # 0.50 vs 0.48 with se 0.01 each: the difference (0.02) is within 2 * sqrt(2) * 0.01
    t = table(A=(0.10, 0.01, 0.50, 0.01), B=(0.10, 0.01, 0.48, 0.01))
    front, _, by = advice.decide(t)
    assert front == ["A", "B"] and by == {"A": [], "B": []}
    exact = table(A=(0.10, 0.0, 0.50, 0.0), B=(0.10, 0.0, 0.48, 0.0))   # exact numbers: decided
    assert advice.decide(exact)[0] == ["A"]
    noise = table(A=(0.10, 0.0, 0.5, 0.0), B=(0.10, 0.0, 0.5 + 1e-15, 0.0))  # float noise is a tie
    assert advice.decide(noise)[0] == ["A", "B"]


def test_nan_robustness_compares_on_dp_alone_and_ties_go_to_the_deeper_cutoff():
    t = table(A=(0.10, 0.0, np.nan, np.nan), B=(0.30, 0.0, 0.9, 0.0))
    front, best, by = advice.decide(t)
    assert by["B"] == ["A"] and front == ["A"] and best == "A"
    same = table(**{"nDCG@10": (0.1, 0.0, 0.9, 0.0, 10), "nDCG@100": (0.1, 0.0, 0.9, 0.0, 100)})
    assert advice.decide(same)[1] == "nDCG@100"


def test_decide_rejects_bad_tables():
    with pytest.raises(InputError, match="needs columns"):
        advice.decide(pd.DataFrame({"dp": [0.1]}, index=["A"]))
    t = table(A=(0.1, 0.0, 0.9, 0.0))
    with pytest.raises(InputError, match="appears twice"):
        advice.decide(pd.concat([t, t]))


def test_ties_with_best_and_dp_se():
    best, ties = advice.ties_with_best(pd.Series({"a": 0.30, "b": 0.31, "c": 0.9}),
                                       pd.Series({"a": 0.01, "b": 0.01, "c": 0.01}), higher=False)
    assert best == "a" and ties == ["b"]
    with pytest.raises(InputError, match="no finite"):
        advice.ties_with_best({"a": np.nan})


@pytest.fixture(scope="module")
def small_study():
    r = simulate(120, 150, 4000, seed=2)
    return st_mod.Study(r, ["Random", "Pop", "UserKNN(k=20)", "PureSVD(k=8)"], ["P", "nDCG", "RR"], [5, 20], k=2,
                        cache=False, progress=False)


def test_advise_numbers_are_the_meta_evaluation_numbers(small_study):
    st = small_study
    kw = dict(n_permutations=500, n_samples=3, sizes=[1.0, 0.5, 0.1], seed=1)
    adv = advice.advise(st, **kw)
    names = [f"{m}@{c}" for m in st.metrics for c in st.cutoffs]
    assert list(adv.table.index) == names
    dp = discriminative_power({n: st.scores(n) for n in names}, n_permutations=500, seed=1)
    np.testing.assert_allclose(adv.table["dp"], [dp[n].dp for n in names])
    rob = robustness.robustness_study(st, n_samples=3, sizes=[1.0, 0.5, 0.1], seed=1, aggregate="arithmetic",
                                      progress=False)
    np.testing.assert_allclose(adv.table["robustness"], rob.area().unstack("scenario").reindex(names).mean(axis=1))
    for n in names:                                   # each dominated candidate names who dominates it
        assert adv.table.loc[n, "on_front"] == (adv.table.loc[n, "dominated_by"] == "")
    assert adv.recommended in adv.front and adv.table.loc[adv.recommended, "on_front"]
    # the same from results computed beforehand
    again = advice.advise(st, dp=dp, robustness=rob, seed=1)
    pd.testing.assert_frame_equal(again.table, adv.table)
    text = adv.to_markdown()
    assert text.startswith(f"**Report {adv.recommended}.**") and "only 4 systems" in text


def test_advise_reports_the_pairs_other_metrics_swap():
    a = pd.Series({"A": 0.3, "B": 0.2, "C": 0.1})
    b = pd.Series({"A": 0.1, "B": 0.2, "C": 0.3})
    assert advice._pairs_swapped(a, b) == [("A", "B", False), ("A", "C", False), ("B", "C", False)]
    # decided only where both metrics find the pair significantly different
    sig_a, sig_b = {frozenset("AC"), frozenset("AB")}, {frozenset("AC"), frozenset("BC")}
    assert advice._pairs_swapped(a, b, sig_a, sig_b) == [("A", "B", False), ("A", "C", True), ("B", "C", False)]
    assert advice._pairs_swapped(a, a * 2) == []
    assert advice._pairs_swapped(a, pd.Series({"A": 0.3, "B": 0.3, "C": 0.1})) == []    # a tie is no swap


def test_advise_needs_a_study():
    with pytest.raises(InputError, match="advise needs the runs and their judgments"):
        advice.advise(pd.DataFrame(np.ones((3, 4))))


def test_the_advice_says_whether_a_swap_changes_a_significant_conclusion():
    """A swap of two systems that one metric cannot tell apart is no change of conclusion."""
    from types import SimpleNamespace

    table = pd.DataFrame({"dp": [0.1, 0.2], "dp_se": [0.0, 0.0], "significant": [0.5, 0.5],
                          "robustness": [0.9, 0.8], "robustness_se": [0.0, 0.0]}, index=["P@10", "RR@10"])
    adv = advice.Advice(table, pd.DataFrame(), "P@10", ["P@10"], {"RR@10": [("A", "B", False)]}, [], 3)
    assert "None reverses a pair that both find significantly different" in adv.to_markdown()
    adv = advice.Advice(table, pd.DataFrame(), "P@10", ["P@10"], {"RR@10": [("A", "B", True)]}, [], 3)
    text = adv.to_markdown()
    assert "A / B (significant under both)" in text and "1 of them reverse" in text
    pv = SimpleNamespace(pvalues=pd.DataFrame({"a": ["A", "A"], "b": ["B", "C"], "p": [0.001, 0.04]}))
    assert advice._significant_pairs(pv, "bonferroni", 0.05) == {frozenset("AB")}    # 0.04 · 2 = 0.08
    assert advice._significant_pairs(pv, None, 0.05) == {frozenset("AB"), frozenset("AC")}


def test_the_advice_says_how_it_depends_on_the_cutoff(small_study):
    """Beside the recommendation over every metric and cut-off, the one among each cut-off's own
    candidates (what to report when the cut-off is fixed), said in words."""
    adv = advice.advise(small_study, n_permutations=500, n_samples=3, sizes=[1.0, 0.5, 0.1], seed=1)
    assert list(adv.by_cutoff) == [5, 20]
    for c, best in adv.by_cutoff.items():
        rows = adv.table[adv.table["cutoff"] == c]
        assert best == advice.decide(rows[["dp", "dp_se", "robustness", "robustness_se", "cutoff"]])[1]
        assert best.endswith(f"@{c}")
    text = adv.to_markdown()
    line = next(ln for ln in text.splitlines() if "depends on the cut-off" in ln)
    assert f"{adv.by_cutoff[5]} at 5" in line and f"{adv.by_cutoff[20]} at 20" in line


def test_infap_is_left_out_of_the_advice_when_it_is_ap():
    """Judgments without a pooled-but-unjudged label make trec_eval's infAP equal AP on every
    user: the advice leaves it out and says why; with such labels it stays a candidate."""
    import recmetrics as rm
    from types import SimpleNamespace

    r = simulate(120, 150, 4000, seed=2)
    st = st_mod.Study(r, ["Random", "Pop", "UserKNN(k=20)"], ["AP", "infAP", "P"], [5, 20], k=2, cache=False,
                      progress=False)
    for c in st.cutoffs:                                   # the identity the advice relies on
        np.testing.assert_allclose(st.scores("infAP", c), st.scores("AP", c), atol=1e-4)
    assert advice.infap_is_ap(st)
    adv = advice.advise(st, n_permutations=300, n_samples=2, sizes=[1.0, 0.5], seed=0)
    assert not [n for n in adv.table.index if n.startswith("infAP")]
    assert set(adv.left_out) == {"infAP"} and advice.INFAP_IS_AP in adv.to_markdown()
    pooled = rm.Qrels(pd.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rating": [5, 1, -1]}),
                      negative="unjudged")
    assert not advice.infap_is_ap(SimpleNamespace(metrics=["AP", "infAP"], qrels=[pooled]))
    assert not advice.infap_is_ap(SimpleNamespace(metrics=["AP", "P"], qrels=[pooled]))
