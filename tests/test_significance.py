"""Permutation, bootstrap and Tukey HSD tests, corrections and effect sizes (recmetrics.meta.significance)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.meta import discriminative as dpm, significance as sig


def _pair(n=60, shift=0.05, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, a - shift + rng.normal(0, 0.1, n)


def _scipy_perm(a, b, alternative, n_resamples, seed=0):
    return stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                  permutation_type="samples", alternative=alternative,
                                  n_resamples=n_resamples, vectorized=True, random_state=seed).pvalue


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_exact_equals_scipy(alternative):
    a, b = _pair(14, 0.03, seed=1)
    res = sig.permutation_test(a, b, alternative)
    assert res.test == "permutation" and res.statistic == pytest.approx(np.mean(a - b))
    assert res.pvalue == pytest.approx(_scipy_perm(a, b, alternative, np.inf), rel=1e-12)
    # exact forced off: Monte Carlo estimate close to the exact value
    mc = sig.permutation_test(a, b, alternative, exact=False, n_permutations=20_000, seed=3).pvalue
    assert abs(mc - res.pvalue) < 5 * np.sqrt(res.pvalue * (1 - res.pvalue) / 20_000) + 1e-4


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_monte_carlo_within_error_of_scipy(alternative):
    a, b = _pair(80, 0.02, seed=2)
    B = 20_000
    p = sig.permutation_test(a, b, alternative, n_permutations=B, seed=5).pvalue
    ref = _scipy_perm(a, b, alternative, B, seed=6)
    se = np.sqrt(max(ref, 1e-3) * (1 - min(ref, 0.999)) / B) * np.sqrt(2)
    assert abs(p - ref) <= 5 * se + 2 / B


def test_permutation_is_the_discriminative_power_pair():
    a, b = _pair(100, 0.01, seed=3)
    frame = pd.DataFrame([a, b], index=["x", "y"])
    dp = dpm.discriminative_power(frame, n_permutations=5000, seed=4)
    assert sig.permutation_test(a, b, n_permutations=5000, seed=4).pvalue == dp.pvalues.p.iloc[0]
    # default B: p = (b + 1) / (B + 1) on the grid
    p = sig.permutation_test(a, b, n_permutations=999, seed=0).pvalue
    assert (p * 1000) == pytest.approx(round(p * 1000))


def test_paired_bootstrap_close_to_t_and_reproducible():
    a, b = _pair(200, 0.02, seed=4)
    res = sig.paired_bootstrap(a, b, n_bootstrap=20_000, seed=1)
    t = stats.ttest_rel(a, b)
    assert res.statistic == pytest.approx(t.statistic)
    assert abs(res.pvalue - t.pvalue) < 0.02
    assert sig.paired_bootstrap(a, b, n_bootstrap=2000, seed=1).pvalue == \
        sig.paired_bootstrap(a, b, n_bootstrap=2000, seed=1).pvalue
    g = sig.paired_bootstrap(a, b, "greater", n_bootstrap=20_000, seed=1).pvalue
    l = sig.paired_bootstrap(a, b, "less", n_bootstrap=20_000, seed=1).pvalue
    assert g == pytest.approx(stats.ttest_rel(a, b, alternative="greater").pvalue, abs=0.02)
    assert g < 0.5 < l
    assert sig.paired_bootstrap(a, a).pvalue == 1.0
    assert sig.paired_bootstrap(a + 1, a, n_bootstrap=99).pvalue == 0.01


def test_paired_bootstrap_matches_brute_force():
    a, b = _pair(30, 0.03, seed=5)
    z = a - b
    B = 500
    W = np.random.default_rng(9).multinomial(30, np.full(30, 1 / 30), size=B)
    w = z - z.mean()
    t_obs = z.mean() / (z.std(ddof=1) / np.sqrt(30))
    ts = []
    for row in W:
        s = np.repeat(w, row)
        ts.append(s.mean() / (s.std(ddof=1) / np.sqrt(30)))
    expected = (np.sum(np.abs(ts) >= abs(t_obs)) + 1) / (B + 1)
    assert sig.paired_bootstrap(a, b, n_bootstrap=B, seed=9).pvalue == pytest.approx(expected)


def test_tukey_hsd_matches_a_loop_and_is_conservative():
    rng = np.random.default_rng(0)
    x = rng.random(40) + rng.normal(0, 0.1, (4, 40)) + np.array([0, 0.02, 0.05, 0.1])[:, None]
    frame = pd.DataFrame(x, index=list("ABCD"))
    B = 4000
    res = sig.tukey_hsd(frame, n_permutations=B, seed=1)
    assert list(zip(res.a, res.b)) == [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]
    # independent loop implementation
    loop_rng = np.random.default_rng(77)
    ranges = []
    for _ in range(B):
        perm = np.array([loop_rng.permutation(col) for col in x.T]).T
        m = perm.mean(axis=1)
        ranges.append(m.max() - m.min())
    ranges = np.array(ranges)
    means = x.mean(axis=1)
    for a, b, p in zip(res.a, res.b, res.p):
        obs = abs(means["ABCD".index(a)] - means["ABCD".index(b)])
        ref = (np.sum(ranges >= obs) + 1) / (B + 1)
        assert abs(p - ref) <= 5 * np.sqrt(max(ref, 1e-3) * (1 - ref) / B) * np.sqrt(2) + 2 / B
    # HSD controls the family-wise error: never below the pair's own permutation p (up to MC noise)
    pp = sig.pairwise(frame, test="permutation", correction=None, n_permutations=B)
    assert np.all(res.p.to_numpy() >= pp.p.to_numpy() - 0.02)
    pd.testing.assert_frame_equal(res, sig.tukey_hsd(frame, n_permutations=B, seed=1))


def test_corrections():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5])
    np.testing.assert_allclose(sig.correct(p, "bonferroni"), np.minimum(p * 5, 1))
    # Holm by hand: sorted 0.005*5, 0.01*4, 0.03*3, 0.04*2, 0.5*1 with running max
    np.testing.assert_allclose(sig.correct(p, "holm"), [0.04, 0.09, 0.09, 0.025, 0.5])
    np.testing.assert_allclose(sig.correct(p, "bh"), stats.false_discovery_control(p, method="bh"))
    rng = np.random.default_rng(1)
    q = rng.random((4, 25)) ** 3
    np.testing.assert_allclose(sig.correct(q, "bh"), stats.false_discovery_control(q.ravel()).reshape(4, 25))
    np.testing.assert_array_equal(sig.correct(p, None), p)
    assert np.all(sig.correct(q, "holm") >= q) and np.all(sig.correct(q, "holm") <= sig.correct(q, "bonferroni"))
    with pytest.raises(InputError):
        sig.correct(p, "sidak")
    with pytest.raises(InputError):
        sig.correct([0.1, 1.2])


def test_effect_size():
    a, b = _pair(500, 0.05, seed=6)
    d = a - b
    es = sig.effect_size(a, b, n_bootstrap=5000, seed=2)
    assert list(es.columns) == ["mean_diff", "ci_low", "ci_high", "d_z"]
    row = es.iloc[0]
    assert row.mean_diff == pytest.approx(d.mean())
    assert row.d_z == pytest.approx(d.mean() / d.std(ddof=1))
    se = d.std(ddof=1) / np.sqrt(len(d))
    assert row.ci_low == pytest.approx(d.mean() - 1.96 * se, abs=0.3 * se)
    assert row.ci_high == pytest.approx(d.mean() + 1.96 * se, abs=0.3 * se)
    assert sig.effect_size(a, a).d_z.iloc[0] == 0.0


def test_pairwise_all_tests_and_baseline():
    rng = np.random.default_rng(3)
    x = rng.random(50) + rng.normal(0, 0.1, (3, 50)) + np.array([0, 0.05, 0.1])[:, None]
    frame = pd.DataFrame(x, index=["bm25", "als", "pop"])
    for test in sig.PAIRWISE_TESTS:
        out = sig.pairwise(frame, test=test, n_permutations=500)
        assert list(out.columns) == ["a", "b", "mean_a", "mean_b", "diff", "p", "p_adj", "d_z"]
        assert len(out) == 3 and np.all((out.p > 0) & (out.p <= 1)) and np.all(out.p_adj >= out.p - 1e-15)
    t = sig.pairwise(frame, test="t", correction=None)
    assert t.p.iloc[0] == pytest.approx(stats.ttest_rel(x[0], x[1]).pvalue)
    base = sig.pairwise(frame, test="wilcoxon", baseline="pop", correction="bonferroni")
    assert list(base.a) == ["pop", "pop"] and list(base.b) == ["bm25", "als"]
    assert base.p_adj.iloc[0] == pytest.approx(min(1, 2 * stats.wilcoxon(x[2], x[0]).pvalue))
    with pytest.raises(InputError):
        sig.pairwise(frame, baseline="nope")
    with pytest.raises(InputError):
        sig.pairwise(frame, test="anova")
    assert rm.meta.pairwise is sig.pairwise


def test_bad_input():
    a, b = _pair(30)
    for f in (sig.permutation_test, sig.paired_bootstrap, sig.effect_size):
        with pytest.raises(InputError, match="same length"):
            f(a, b[:-1])
        with pytest.raises(InputError, match="NaN"):
            f(np.r_[a[:-1], np.nan], b)
    with pytest.raises(InputError, match=">= 1"):
        sig.permutation_test(a, b, n_permutations=0)
    with pytest.raises(InputError, match=">= 1"):
        sig.paired_bootstrap(a, b, n_bootstrap=0)
    with pytest.raises(InputError, match=">= 1"):
        sig.tukey_hsd(np.vstack([a, b]), n_permutations=0)
    with pytest.raises(InputError, match="at least 2 systems"):
        sig.tukey_hsd(a[None, :])
    with pytest.raises(InputError, match="at least 2 systems"):
        sig.pairwise(pd.DataFrame([a]))
    with pytest.raises(InputError):
        sig.permutation_test(a, b, alternative="bigger")
