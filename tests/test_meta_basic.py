"""Meta-evaluation helpers (significance, agreement) and the perturbation experiments."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.meta import agreement, perturbations as pt, significance


# ------------------------------------------------------------------------------------------
# significance
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def paired():
    rng = np.random.default_rng(0)
    a = rng.random(60)
    return a, a - 0.05 + rng.normal(0, 0.1, 60), rng


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_wraps_scipy(paired, alternative):
    a, b, _ = paired
    res = significance.wilcoxon(a, b, alternative)
    ref = stats.wilcoxon(a, b, alternative=alternative)
    assert res.pvalue == pytest.approx(ref.pvalue) and res.statistic == pytest.approx(ref.statistic)
    stat, p = res
    assert p == res.pvalue
    t = significance.paired_t(a, b, alternative)
    assert t.pvalue == pytest.approx(stats.ttest_rel(a, b, alternative=alternative).pvalue)


def test_all_zero_differences_give_p_one_and_bad_input(paired):
    a, _, _ = paired
    assert significance.wilcoxon(a, a).pvalue == 1.0
    assert significance.paired_t(a, a, "greater").pvalue == 1.0
    with pytest.raises(InputError):
        significance.wilcoxon(a, a[:-1])
    with pytest.raises(InputError):
        significance.wilcoxon(np.r_[a[:-1], np.nan], a)
    with pytest.raises(InputError):
        significance.wilcoxon(a, a, alternative="bigger")
    with pytest.raises(InputError):
        significance.paired_test(a, a, test="anova")


def test_paired_pvalues_vectorised_equals_loop(paired):
    a, b, rng = paired
    scores = np.vstack([a, b, a + rng.normal(0, 0.01, 60), a * 0.9, np.round(a, 1)])
    base = significance.paired_pvalues(scores, baseline=0, alternative="greater")
    assert base[0] == 1.0
    for i in range(1, 5):
        assert base[i] == pytest.approx(stats.wilcoxon(scores[0], scores[i], alternative="greater").pvalue)
    full = significance.paired_pvalues(scores, test="t")
    assert full.shape == (5, 5) and np.all(np.diag(full) == 1)
    assert full[1, 3] == pytest.approx(stats.ttest_rel(scores[1], scores[3]).pvalue)
    with pytest.raises(InputError):
        significance.paired_pvalues(a)
    assert rm.meta.paired_pvalues is significance.paired_pvalues


# ------------------------------------------------------------------------------------------
# agreement
# ------------------------------------------------------------------------------------------
def test_kendall_tau_wraps_scipy():
    x, y = [1, 2, 3, 4, 5], [2, 1, 3, 5, 4]
    assert agreement.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    assert agreement.kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(stats.kendalltau([1, 1, 2], [1, 2, 3]).statistic)
    assert np.isnan(agreement.kendall_tau([1, 1, 1], [1, 2, 3]))
    with pytest.raises(InputError):
        agreement.kendall_tau([1, 2], [1, 2, 3])
    with pytest.raises(InputError):
        agreement.kendall_tau([1], [1])


def test_system_ranking_tau_aggregates_users():
    scores = np.array([[1.0, 1.0, 1.0], [0.5, 0.6, 0.7], [0.1, 0.2, 0.0]])
    assert agreement.system_ranking_tau(scores, -np.arange(3)) == pytest.approx(1.0)
    assert agreement.system_ranking_tau(scores, scores[::-1].mean(axis=1)) == pytest.approx(-1.0)
    cube = np.stack([scores, scores[::-1]])
    np.testing.assert_allclose(agreement.ranking_taus(cube, -np.arange(3)), [1.0, -1.0])


# ------------------------------------------------------------------------------------------
# ideal ordering and perturbations on a hand-made user
# ------------------------------------------------------------------------------------------
ASP = {"a1": ("A",), "a2": ("A",), "a3": ("A",), "b1": ("B",), "b2": ("B",), "c1": ("C",), "ab": ("A", "B"),
       "n0": ()}


def toy_test():
    rows = [("u", "a1", 5.0), ("u", "a2", 4.0), ("u", "a3", 2.0), ("u", "b1", 4.0), ("u", "b2", 1.0),
            ("u", "c1", 3.0), ("u", "ab", 5.0), ("u", "n0", 4.0)]
    return pd.DataFrame(rows, columns=["user", "item", "rating"])


def test_ideal_ordering_follows_section_5_1():
    ideal = pt.ideal_ordering(toy_test(), ASP)
    order = list(ideal.items[0, : ideal.lengths[0]])
    # w(u): A = (5+4+2+5)/29 = .552, B = (4+1+5)/29 = .345, C = 3/29 = .103
    # 1: deficit = w(u) -> A; A's list: ab (5, two aspects) before a1 (5, one aspect) -> ab
    #    list weights A = B = .5 -> deficits A .052, B -.155, C .103
    # 2: C -> c1; list A = B = 5/13, C = 3/13 -> deficits A .167 -> 3: A -> a1
    #    list A 10/18, B 5/18, C 3/18 -> deficits A -.004, B .067 -> 4: B -> b1
    #    list A 10/22, B 9/22 -> deficit A .097 -> 5: A -> a2; the aspect-less n0 comes last
    assert order[:5] == ["ab", "c1", "a1", "b1", "a2"]
    assert order[-1] == "n0" and sorted(order) == sorted(ASP)
    labels = list(ideal.labels)
    assert [labels[a] for a in ideal.aspect[0, :5]] == ["A", "C", "A", "B", "A"]
    assert ideal.aspect[0, ideal.lengths[0] - 1] == -1
    np.testing.assert_allclose(ideal.weights[0], np.array([16, 10, 3]) / 29)


def test_perturbation_families():
    ideal = pt.ideal_ordering(toy_test(), ASP)
    order = list(ideal.items[0, : ideal.lengths[0]])
    n = len(order)
    assert list(pt.perturb(ideal, "swap", 0)[0]) == order
    s1 = list(pt.perturb(ideal, "swap", 1)[0])
    assert s1[0] == order[-1] and s1[-1] == order[0] and s1[1:-1] == order[1:-1]
    s2 = list(pt.perturb(ideal, "swap", 2)[0])
    assert s2[:2] == [order[-1], order[-2]]
    assert list(pt.perturb(ideal, "swap", 50)[0]) == order[::-1]          # saturates: fully reversed
    assert list(pt.perturb(ideal, "swap", 1, size=4)[0]) == [order[3], order[1], order[2], order[0]]
    # redundancy: the ideal changes aspect first at rank 2 (A then C): ranks 2, 3, ... get A items
    r1 = list(pt.perturb(ideal, "redundancy", 1)[0])
    assert r1[:3] == ["ab", "a1", "c1"] and sorted(r1) == sorted(order)
    r3 = list(pt.perturb(ideal, "redundancy", 3)[0])
    assert r3[:4] == ["ab", "a1", "a2", "a3"]
    assert list(pt.perturb(ideal, "redundancy", 9)[0])[:4] == r3[:4]     # A runs out: saturates
    # aspect: the first item shows A and B; the most liked aspect it does not show is C -> c1 first
    a1 = list(pt.perturb(ideal, "aspect", 1)[0])
    assert a1[:2] == ["c1", "ab"] and sorted(a1) == sorted(order)
    assert list(pt.perturb(ideal, "aspect", 5)[0]) == a1                 # no further aspect: saturates
    with pytest.raises(InputError):
        pt.perturb(ideal, "shuffle", 1)
    with pytest.raises(InputError):
        pt.perturb(ideal, "swap", -1)
    assert len(order) == n


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(5)
    items = [f"m{t}" for t in range(80)]
    aspects = pd.Series({i: tuple(g for g in "ABCDE" if rng.random() < 0.3) for i in items})
    rows = [(u, i, float(rng.choice([1, 2, 3, 3.5, 4, 4.5, 5]))) for u in range(25)
            for i in rng.choice(items, rng.integers(8, 30), replace=False)]
    return pd.DataFrame(rows, columns=["user", "item", "rating"]), aspects


def test_run_perturbations_experiments_1_and_2(synthetic):
    test, aspects = synthetic
    res = pt.run_perturbations(test, aspects, ["ab-nDCG@10(profile=test)", "S-Recall@10", "EU(profile=test)"],
                               levels={"swap": 4, "redundancy": 3, "aspect": 2}, k=10, n_users=20, seed=1)
    assert set(res.scores) == {"swap", "redundancy", "aspect"}
    assert res.scores["swap"].shape == (3, 5, 20)
    taus = pt.rank_correlation(res)
    assert list(taus.columns) == ["family", "metric", "tau", "n_systems", "tau_se"]
    assert taus.tau_se.isna().all()                             # no bootstrap asked: no se
    boot = pt.rank_correlation(res, n_bootstrap=40, seed=3)
    np.testing.assert_array_equal(boot.tau, taus.tau)
    defined = boot[boot.tau.notna()]
    assert (defined.tau_se.dropna() >= 0).all() and defined.tau_se.notna().any()
    pd.testing.assert_frame_equal(boot, pt.rank_correlation(res, n_bootstrap=40, seed=3))   # seeded
    with pytest.raises(rm.errors.InputError):
        pt.rank_correlation(res, n_bootstrap=1)
    ab = taus[taus.metric == "ab-nDCG@10(profile='test')"].set_index("family").tau
    assert ab["swap"] > 0.5
    p = pt.significance_vs_ideal(res)
    assert len(p) == 3 * (4 + 3 + 2) and p.pvalue.between(0, 1).all()
    means = pt.level_means(res)
    first = means[(means.family == "swap") & (means.metric == "ab-nDCG@10(profile='test')")]
    assert first["mean"].iloc[0] >= first["mean"].iloc[-1]
    again = pt.run_perturbations(test, aspects, ["S-Recall@10"], levels={"swap": 2}, k=10, n_users=20, seed=1)
    np.testing.assert_array_equal(again.users, res.users)


def test_pvalue_summary():
    df = pd.DataFrame({"family": "swap", "metric": ["m"] * 4 + ["n"] * 4, "level": [1, 2, 3, 4] * 2,
                       "pvalue": [0.5, 0.004, 1e-5, 1e-6, 1e-8, 1e-6, 1e-9, 1e-10]})
    s = pt.pvalue_summary(df).set_index("metric")
    assert s.loc["m", "monotone"] and s.loc["m", "first_significant"] == 2 and s.loc["m", "p_level1"] == 0.5
    assert not s.loc["n", "monotone"] and s.loc["n", "largest_rise"] == pytest.approx(2.0)


def test_proportional_removal_is_nested_and_proportional(synthetic):
    test, aspects = synthetic
    rank = pt.proportional_removal_order(test, aspects, seed=3)
    assert sorted(rank) == list(range(len(test)))
    assert (pt.proportional_removal_order(test, aspects, seed=3) == rank).all()
    member = rm.metrics.diversity.aspect_index(aspects).lookup(test["item"].to_numpy())
    removed = rank < len(test) // 2
    share = member[removed].sum(axis=0) / np.maximum(member.sum(axis=0), 1)
    assert np.all(np.abs(share - 0.5) < 0.2)


def test_robustness_experiment_3(synthetic):
    test, aspects = synthetic
    df = pt.robustness(test, aspects, cutoffs=(5, 10), betas=(0.5, 1.0), n_systems=8, n_removals=2,
                       fractions=(0.1, 0.6), n_users=20, seed=2)
    assert list(df.columns) == ["cutoff", "beta", "fraction", "removal", "tau"]
    assert len(df) == 2 * 2 * 2 * 2
    summary = pt.robustness_summary(df)
    assert len(summary) == 8 and summary.tau.between(-1, 1).all()
    assert (summary.n == 2).all() and np.allclose(summary.se, summary.sd / np.sqrt(2), equal_nan=True)
    again = pt.robustness(test, aspects, cutoffs=(5, 10), betas=(0.5, 1.0), n_systems=8, n_removals=2,
                          fractions=(0.1, 0.6), n_users=20, seed=2)
    pd.testing.assert_frame_equal(df, again)
    with pytest.raises(InputError):
        pt.robustness(test, aspects, fractions=(1.0,), n_systems=2, n_removals=1)
    with pytest.raises(InputError):
        pt.robustness(test, aspects, betas=(0.0,), n_systems=2, n_removals=1)


def test_shuffled_runs_keep_each_users_items():
    ideal = pt.ideal_ordering(toy_test(), ASP)
    stacks = pt.shuffled_runs(ideal, 3, size=8, seed=0)
    for s in range(3):
        assert sorted(stacks[s, 0]) == sorted(ideal.items[0, :8])
    shared = pt.shuffled_runs(ideal, 2, size=8, seed=0, shared=True)
    assert shared.shape == (2, 1, 8)
