"""Agreement among system orderings: Kendall's τ and τ_ap (Yilmaz et al. 2008)."""
import itertools

import numpy as np
import pandas as pd
import pytest

from recmetrics.errors import InputError
from recmetrics.meta import agreement as ag


def tau_ap_loop(x, y):
    """τ_ap by its definition (Yilmaz, Aslam & Robertson 2008, Eq. 3), no ties."""
    order = sorted(range(len(x)), key=lambda i: -x[i])
    n = len(x)
    total = 0.0
    for pos in range(1, n):
        i = order[pos]
        total += sum(y[order[p]] > y[i] for p in range(pos)) / pos
    return 2.0 / (n - 1) * total - 1.0


def test_tau_ap_definition_and_extremes():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, y = rng.permutation(8).astype(float), rng.permutation(8).astype(float)
        assert ag.tau_ap(x, y) == pytest.approx(tau_ap_loop(x, y))
    x = np.arange(6.0)
    assert ag.tau_ap(x, x) == 1.0 and ag.tau_ap(x, -x) == -1.0
    # an error at the top costs more than the same error at the bottom; τ is blind to it
    ref = np.arange(6.0)[::-1]
    top, bottom = ref.copy(), ref.copy()
    top[[0, 1]] = top[[1, 0]]
    bottom[[4, 5]] = bottom[[5, 4]]
    assert ag.kendall_tau(top, ref) == ag.kendall_tau(bottom, ref)
    assert ag.tau_ap(top, ref) < ag.tau_ap(bottom, ref)


def test_agreement_matrix():
    frame = pd.DataFrame({"a": [1, 2, 3, 4.0], "b": [1, 2, 4, 3.0], "c": [4, 3, 2, 1.0]})
    tau = ag.agreement_matrix(frame)
    assert np.allclose(tau.to_numpy(), tau.to_numpy().T) and tau.loc["a", "c"] == -1.0
    tap = ag.agreement_matrix(frame, "tau_ap")
    assert tap.loc["a", "b"] == pytest.approx(ag.tau_ap(frame.a, frame.b))
    with pytest.raises(InputError, match="method"):
        ag.agreement_matrix(frame, "rho")
    with pytest.raises(InputError, match="same length"):
        ag.tau_ap([1, 2], [1, 2, 3])
    with pytest.raises(InputError, match="NaN"):
        ag.tau_ap([1, np.nan], [1, 2])


def test_plain_scores_and_study_agree(tmp_path):
    from test_recommenders import synthetic

    from recmetrics import study

    st = study.Study(synthetic(seed=3), ["Random", "Pop", "ItemKNN(k=20)"], ["P", "nDCG", "RR"], [5, 10], k=2,
                     cache_dir=tmp_path, progress=False)
    plain = {m: st.scores(m, 10) for m in st.metrics}
    assert ag.metric_agreement(st, 10).equals(ag.metric_agreement(plain))
    assert ag.mean_agreement(st, 10).equals(ag.mean_agreement(plain))
    by_cut = {c: st.scores("nDCG", c) for c in st.cutoffs}
    assert np.allclose(ag.cutoff_agreement(st, "nDCG").to_numpy(), ag.cutoff_agreement(by_cut).to_numpy())
    with pytest.raises(InputError, match="NaN"):
        ag.metric_agreement({"P": pd.DataFrame([[np.nan, 1.0], [0.0, 1.0]])})


def test_tau_b_equals_kendall_tau():
    import numpy as np
    from recmetrics.meta.agreement import kendall_tau, tau_b

    rng = np.random.default_rng(0)
    for n in (2, 3, 6, 21):
        for _ in range(50):
            x = rng.integers(0, 4, n).astype(float)     # many ties
            y = rng.normal(size=n) if n > 3 else rng.integers(0, 3, n).astype(float)
            a, b = kendall_tau(x, y), tau_b(x, y)
            assert (np.isnan(a) and np.isnan(b)) or abs(a - b) < 1e-12


def test_agreement_se_is_a_bootstrap_over_users():
    from recmetrics.errors import InputError
    from recmetrics.meta.agreement import agreement_se

    rng = np.random.default_rng(0)
    users = [f"u{i}" for i in range(400)]
    systems = ["a", "b", "c", "d"]
    base = rng.random((4, 400))
    clear = pd.DataFrame(base + np.arange(4)[:, None], index=systems, columns=users)   # far apart
    close = pd.DataFrame(base * 0.1 + 0.001 * np.arange(4)[:, None] + rng.random((4, 400)), index=systems,
                         columns=users)                                            # within the noise
    se = agreement_se({"x": clear, "y": clear + 0.5})
    assert se.loc["x", "y"] == 0 and se.loc["x", "x"] == 0          # the same order in every resample
    se = agreement_se({"x": close, "y": clear}, seed=1)
    assert 0.2 < se.loc["x", "y"] < 1.0 and se.loc["x", "y"] == se.loc["y", "x"]
    assert agreement_se({"x": close, "y": clear}, seed=1).equals(se)               # seeded: reproducible
    # hand check of one resample: the draw is the seed's integers, τ-b of the resampled means
    one = agreement_se({"x": close, "y": clear, "z": close * 2}, n_bootstrap=2, seed=3)
    draws = np.random.default_rng(3)
    taus = []
    for _ in range(2):
        d = draws.integers(0, 400, 400)
        taus.append(ag.kendall_tau(close.to_numpy()[:, d].mean(axis=1), clear.to_numpy()[:, d].mean(axis=1)))
    assert one.loc["x", "y"] == pytest.approx(np.std(taus, ddof=1))
    geo = agreement_se({"x": close, "y": clear}, aggregate="geometric", seed=1)
    assert np.isfinite(geo.loc["x", "y"])
    with pytest.raises(InputError, match="'y'.*systems and units"):
        agreement_se({"x": close, "y": clear.iloc[:, :10]})
    with pytest.raises(InputError, match="'y'.*NaN"):
        agreement_se({"x": close, "y": clear.where(clear > 0.01)})
    with pytest.raises(InputError, match="at least two names"):
        agreement_se({"x": close})
    with pytest.raises(InputError, match="n_bootstrap"):
        agreement_se({"x": close, "y": clear}, n_bootstrap=1)


def _scipy_tau(x, y):
    import warnings

    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return float(stats.kendalltau(x, y, variant="b").statistic)


@pytest.mark.parametrize("kind", ["continuous", "few levels", "one constant", "tiny offsets", "two systems"])
def test_fast_tau_equals_scipy_and_the_pair_loop_bit_for_bit(kind):
    """kendall_tau's pair counts and agreement_matrix's one call over every ordered pair give scipy's
    τ-b to the last bit, ties, constant columns (NaN) and two systems included."""
    rng = np.random.default_rng(len(kind))
    for _ in range(60):
        n = 2 if kind == "two systems" else int(rng.integers(3, 40))
        x = rng.random((n, 6))
        if kind == "few levels":
            x = rng.integers(0, 3, (n, 6)).astype(float)
        elif kind == "one constant":
            x[:, 2] = 0.25
        elif kind == "tiny offsets":
            x = np.floor(x * 3) + 1e-12 * rng.integers(0, 2, (n, 6))
        frame = pd.DataFrame(x, columns=list("abcdef"))
        fast = ag.agreement_matrix(frame).to_numpy()
        for i, a in enumerate(frame.columns):
            for j, b in enumerate(frame.columns):
                if i == j:
                    assert fast[i, j] == 1.0
                    continue
                xa, xb = frame[a].to_numpy(), frame[b].to_numpy()
                ref = np.nan if np.all(xa == xa[0]) or np.all(xb == xb[0]) else _scipy_tau(xa, xb)
                assert np.array_equal(fast[i, j], ref, equal_nan=True)
                assert np.array_equal(ag.kendall_tau(xa, xb), ref, equal_nan=True)


def test_agreement_matrix_falls_back_to_the_pair_loop():
    """τ-c, repeated labels or a non-finite value take the pair loop (which says what is wrong)."""
    frame = pd.DataFrame({"a": [1, 2, 3, 4.0], "b": [1, 2, 4, 3.0], "c": [4, 3, 2, 1.0]})
    assert ag.agreement_matrix(frame, variant="c").loc["a", "b"] == _scipy_tau_c(frame.a, frame.b)
    with pytest.raises(InputError, match="NaN"):
        ag.agreement_matrix(frame.assign(c=[1, np.nan, 2, 3]))


def _scipy_tau_c(x, y):
    from scipy import stats

    return float(stats.kendalltau(x, y, variant="c").statistic)


def test_long_vectors_still_go_to_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, 600).astype(float), rng.random(600)
    assert ag.kendall_tau(x, y) == _scipy_tau(x, y)
