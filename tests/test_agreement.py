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
