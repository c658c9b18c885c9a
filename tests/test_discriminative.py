"""Discriminative power: one sign matrix, one product for every pair and metric (000 §4.1, 003)."""
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.meta import discriminative as dpm


def _scores(n_sys=5, n_users=40, seed=0, discrete=False):
    rng = np.random.default_rng(seed)
    base = rng.random(n_users)
    x = base + rng.normal(0, 0.15, (n_sys, n_users)) + np.linspace(0, 0.1, n_sys)[:, None]
    if discrete:
        x = np.round(np.clip(x, 0, 1), 1)
    return pd.DataFrame(x, index=[f"s{i}" for i in range(n_sys)],
                        columns=[f"u{u}" for u in range(n_users)])


def _scipy_p(a, b, alternative="two-sided", n_resamples=9999, seed=0):
    res = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                 permutation_type="samples", alternative=alternative,
                                 n_resamples=n_resamples, vectorized=True, random_state=seed)
    return res.pvalue


def test_interface_and_pairs_in_input_order():
    s = _scores(4, 30)
    res = rm.meta.discriminative_power(s, n_permutations=2000, seed=1)
    assert isinstance(res, rm.meta.DiscriminativePower)
    assert list(res.pvalues.columns) == ["a", "b", "p"]
    assert list(zip(res.pvalues.a, res.pvalues.b)) == list(itertools.combinations(s.index, 2))
    p = res.pvalues.p.to_numpy()
    assert res.dp == pytest.approx(p.sum())
    np.testing.assert_array_equal(res.curve, np.sort(p))
    assert res.share_significant == pytest.approx(np.mean(p < 0.05))
    assert res.median_p == pytest.approx(np.median(p))
    assert np.all((p > 0) & (p <= 1)) and not res.exact


def test_equals_pairs_one_by_one_with_the_same_signs():
    s = _scores(5, 50, discrete=True)
    res = dpm.discriminative_power(s, n_permutations=3000, seed=7)
    x = s.to_numpy()
    for (i, j), p in zip(itertools.combinations(range(5), 2), res.pvalues.p):
        # brute force: the same sign vectors, applied to the pair's differences
        d = x[i] - x[j]
        signs = np.vstack(list(dpm.sign_blocks(50, 3000, seed=7))) * 2 - 1
        perm = signs @ d
        b = np.sum(np.abs(perm) >= abs(d.sum()) - 1e-9 * np.abs(x[[i, j]]).sum())
        assert p == (b + 1) / 3001
        assert p == dpm.sign_flip_pvalues(x[[i, j]], [0], [1], n_permutations=3000, seed=7)[0]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_enumeration_equals_scipy(alternative):
    s = _scores(3, 10, seed=3, discrete=True)
    res = dpm.discriminative_power(s, alternative=alternative)
    assert res.exact
    x = s.to_numpy()
    for (i, j), p in zip(itertools.combinations(range(3), 2), res.pvalues.p):
        ref = _scipy_p(x[i], x[j], alternative, n_resamples=np.inf)
        assert p == pytest.approx(ref, rel=1e-12)


def test_exact_by_hand_tiny_case():
    # differences (1, 2, 3): 8 sign vectors, |sum| >= 6 only for all + and all -  -> p = 2/8
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    assert dpm.sign_flip_pvalues(x, [0], [1])[0] == 0.25
    assert dpm.sign_flip_pvalues(x, [0], [1], alternative="greater")[0] == 0.125
    assert dpm.sign_flip_pvalues(x, [0], [1], alternative="less")[0] == 1.0


def test_monte_carlo_agrees_with_scipy_within_error():
    s = _scores(4, 60, seed=5)
    B = 20_000
    res = dpm.discriminative_power(s, n_permutations=B, seed=2)
    x = s.to_numpy()
    for (i, j), p in zip(itertools.combinations(range(4), 2), res.pvalues.p):
        ref = _scipy_p(x[i], x[j], n_resamples=B, seed=11)
        se = np.sqrt(max(ref, 1e-3) * (1 - ref) / B) * np.sqrt(2)
        assert abs(p - ref) <= 5 * se + 2 / B


def test_same_seed_same_pvalues_whatever_chunk_and_metric_set():
    m1, m2, m3 = _scores(4, 300, 1), _scores(4, 300, 2, discrete=True), _scores(4, 300, 3)
    together = dpm.discriminative_power({"A": m1, "B": m2, "C": m3}, n_permutations=1500, seed=9,
                                        chunk_size=256)
    alone = dpm.discriminative_power(m2, n_permutations=1500, seed=9, chunk_size=1024)
    pd.testing.assert_frame_equal(together["B"].pvalues, alone.pvalues)
    two = dpm.discriminative_power({"C": m3, "A": m1}, n_permutations=1500, seed=9, chunk_size=512)
    pd.testing.assert_frame_equal(two["A"].pvalues, together["A"].pvalues)
    other = dpm.discriminative_power(m2, n_permutations=1500, seed=10)
    assert not other.pvalues.p.equals(alone.pvalues.p)
    # sign matrix itself is chunk-independent
    a = np.vstack(list(dpm.sign_blocks(37, 700, 4, chunk_size=256)))
    b = np.vstack(list(dpm.sign_blocks(37, 700, 4, chunk_size=10_000)))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (700, 37)


def test_dict_aligns_users_and_systems_by_label():
    m1 = _scores(3, 25, 1)
    shuffled = m1.loc[["s2", "s0", "s1"], list(m1.columns[::-1])]
    res = dpm.discriminative_power({"x": m1, "y": shuffled}, n_permutations=500, seed=0)
    np.testing.assert_array_equal(res["x"].pvalues.p, res["y"].pvalues.p)


def test_more_different_systems_get_lower_dp():
    rng = np.random.default_rng(0)
    base = rng.random(200)
    close = pd.DataFrame([base + rng.normal(0, 0.3, 200) for _ in range(4)])
    apart = pd.DataFrame([base + k * 0.1 + rng.normal(0, 0.3, 200) for k in range(4)])
    r = dpm.discriminative_power({"close": close, "apart": apart}, n_permutations=2000)
    assert r["apart"].dp < r["close"].dp
    assert r["apart"].share_significant > r["close"].share_significant


def test_tied_discrete_scores_are_counted_as_ties():
    # identical systems: every permuted difference is 0 = observed -> p = 1 exactly
    s = pd.DataFrame([[0.1, 0.3, 0.7] * 10] * 2, index=["a", "b"])
    assert dpm.discriminative_power(s, n_permutations=100).pvalues.p.iloc[0] == 1.0
    # differences 0.1 (not exact in binary) on every user: only the identity/all-flip reach it
    x = np.array([[0.3] * 12, [0.2] * 12])
    assert dpm.sign_flip_pvalues(x, [0], [1])[0] == pytest.approx(2 / 2**12)


def test_bad_input():
    s = _scores(3, 30)
    with pytest.raises(InputError, match="at least 2 systems"):
        dpm.discriminative_power(s.iloc[:1])
    with pytest.raises(InputError, match="NaN"):
        bad = s.copy()
        bad.iloc[1, 4] = np.nan
        dpm.discriminative_power(bad, n_permutations=10)
    with pytest.raises(InputError, match="n_permutations"):
        dpm.discriminative_power(s, n_permutations=0)
    with pytest.raises(InputError):
        dpm.discriminative_power(s, alternative="bigger")
    with pytest.raises(InputError, match="alpha"):
        dpm.discriminative_power(s, alpha=1.5)
    with pytest.raises(InputError, match="same users"):
        dpm.discriminative_power({"a": s, "b": s.iloc[:, :-1]}, n_permutations=10)
    with pytest.raises(InputError, match="systems"):
        dpm.discriminative_power({"a": s, "b": s.rename(index={"s0": "zz"})}, n_permutations=10)
    with pytest.raises(InputError):
        dpm.discriminative_power({})


def test_agrees_with_ranx_fisher_within_monte_carlo_error():
    ranx_tests = pytest.importorskip("ranx.statistical_tests")
    s = _scores(3, 200, seed=8)
    B = 10_000
    res = dpm.discriminative_power(s, n_permutations=B, seed=0)
    x = s.to_numpy()
    for (i, j), p in zip(itertools.combinations(range(3), 2), res.pvalues.p):
        ref, _ = ranx_tests.fisher_randomization_test(x[i], x[j], B, 0.05, 42)
        se = np.sqrt(max(ref, 1e-3) * (1 - ref) / B) * np.sqrt(2)
        assert abs(p - ref) <= 5 * se + 2 / B


def test_exact_result_reports_enumerated_sign_vectors():
    res = dpm.discriminative_power(_scores(3, 8), n_permutations=123)
    assert res.exact and res.n_permutations == 2**8


def test_same_pvalues_whatever_the_number_of_workers():
    s = {"A": _scores(5, 300, 1), "B": _scores(5, 300, 2, discrete=True)}
    one = dpm.discriminative_power(s, n_permutations=2000, seed=3)
    for n_jobs in (2, 3):
        many = dpm.discriminative_power(s, n_permutations=2000, seed=3, n_jobs=n_jobs, chunk_size=256)
        for m in s:
            pd.testing.assert_frame_equal(one[m].pvalues, many[m].pvalues)
    small = _scores(3, 12, 4)
    pd.testing.assert_frame_equal(dpm.discriminative_power(small).pvalues,
                                  dpm.discriminative_power(small, n_jobs=2, chunk_size=300).pvalues)


def test_pair_indices_outside_the_rows_raise():
    # the pair gathers skip numpy's per-element bounds check (mode="clip"), so the indices are
    # checked up front: a row that does not exist is an error, never a clipped, wrong pair
    x = np.random.default_rng(0).random((3, 40))
    for ia, ib in (([0], [3]), ([-1], [0]), ([0, 5], [1, 2])):
        with pytest.raises(InputError, match="row index outside 0..2"):
            dpm.sign_flip_pvalues(x, ia, ib, n_permutations=100)
    assert np.array_equal(dpm.sign_flip_pvalues(x, [0, 1], [2, 2], n_permutations=500),
                          [dpm.sign_flip_pvalues(x[[0, 2]], [0], [1], n_permutations=500)[0],
                           dpm.sign_flip_pvalues(x[[1, 2]], [0], [1], n_permutations=500)[0]])
