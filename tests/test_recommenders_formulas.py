"""Recommender formulas checked against their reference implementations or papers (issue 8 §1).

Each reference is re-implemented here independently (dense numpy, tiny matrices, loops where
they make the formula plain), from the reference's own definition, not from recmetrics' code."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from recmetrics.recommenders import create
from recmetrics.recommenders.topic import PLSA


def ratings(seed=3, n_users=12, n_items=15, density=0.4):
    rng = np.random.default_rng(seed)
    rows = [(u, i, float(rng.integers(1, 6))) for u in range(n_users) for i in range(n_items)
            if rng.random() < density]
    df = pd.DataFrame(rows, columns=["user", "item", "rating"])
    assert df.user.nunique() == n_users and df.item.nunique() == n_items
    return df


# ------------------------------------------------------------------------------------------ pLSA
def ranksys_plsa(V, P_uz, J_iz, iterations):
    """RankSys's PLSAFactorizer (symmetric aspect model), dense: ``P_uz = p(u|z)`` (columns sum to
    1), ``J_iz = p(i, z)`` (sums to 1 overall); preference values ``V`` weight the pairs.
    Returns the scores ``p(u, i) = sum_z p(u|z) p(i, z)``."""
    obs = V > 0
    for _ in range(iterations):
        Q = P_uz[:, None, :] * J_iz[None, :, :]                # q(z|u,i) ∝ p(u|z) p(i,z)
        Q = Q / Q.sum(axis=2, keepdims=True)
        Q = Q * obs[:, :, None]
        W = V[:, :, None] * Q
        P_uz = W.sum(axis=1)
        P_uz = P_uz / P_uz.sum(axis=0, keepdims=True)          # normalise over users, per z
        J_iz = W.sum(axis=0)
        J_iz = J_iz / J_iz.sum()                               # normalise over all (i, z)
    return P_uz @ J_iz.T


def test_plsa_is_ranksys_em_iterate_by_iterate():
    df = ratings()
    rng = np.random.default_rng(7)
    K = 3
    P_uz = rng.random((12, K))
    P_uz /= P_uz.sum(axis=0, keepdims=True)
    J_iz = rng.random((15, K))
    J_iz /= J_iz.sum()
    p_z = J_iz.sum(axis=0)
    start_zu = P_uz * p_z                                       # p(z|u) ∝ p(u|z) p(z)
    start_zu /= start_zu.sum(axis=1, keepdims=True)
    start_iz = J_iz / p_z                                       # p(i|z) = p(i, z) / p(z)

    class Seeded(PLSA):
        def _init(self, n_users, n_items):
            return start_zu.copy(), start_iz.copy()

    rec = Seeded(factors=K, iterations=25).fit(df)              # default hyper-parameters otherwise
    V = np.zeros((12, 15))
    V[df.user, df.item] = df.rating
    joint = ranksys_plsa(V, P_uz, J_iz, 25)
    want = joint / joint.sum(axis=1, keepdims=True)             # p(i|u) = p(u, i) / p(u)
    got = rec.score(np.arange(12))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_plsa_unweighted_option_counts_each_pair_once():
    df = ratings()
    ones = df.assign(rating=1.0)
    a = create("pLSA(factors=3,iterations=10,weighted=False)").fit(df)
    b = create("pLSA(factors=3,iterations=10)").fit(ones)
    np.testing.assert_allclose(a.score(np.arange(12)), b.score(np.arange(12)), rtol=1e-12)


# ------------------------------------------------------------------------------------------- LDA
def test_lda_reads_rating_weighted_documents_and_scores_with_topic_counts():
    """RankSys's LDAModelEstimator puts ``(int) rating`` copies of each item in the user's document
    and LDARecommender scores ``sum_z p(z|u) n(i,z) / n(z)``."""
    from sklearn.decomposition import LatentDirichletAllocation

    df = ratings()
    df.loc[0, "rating"] = 0.5                                   # (int) 0.5 = 0 copies
    docs = np.zeros((12, 15))
    for u, i, r in df.itertuples(index=False):
        docs[u, i] = int(r)
    lda = LatentDirichletAllocation(n_components=4, max_iter=5, learning_method="batch", random_state=0, n_jobs=1)
    theta = lda.fit_transform(sp.csr_matrix(docs))
    theta = theta / theta.sum(axis=1, keepdims=True)
    n_iz = lda.components_ - lda.topic_word_prior_              # expected topic-item counts
    want = theta @ (n_iz / n_iz.sum(axis=1, keepdims=True))
    got = create("LDA(factors=4,iterations=5)").fit(df).score(np.arange(12))
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-12)


# ---------------------------------------------------------------------------------------- LM-WSR
def lm_wsr_brute_force(X, k, mu):
    """Valcarce et al. (ECIR 2016): rows of ``X`` are the queries and documents; the neighbourhood
    of row ``a`` is the ``k`` other rows ``b`` with the highest Dirichlet query likelihood
    ``sum_j x_aj log((x_bj + mu p(j|C)) / (|b| + mu))``; the Weighted Sum Recommender then
    scores ``sum_{b in V_a} cos(a, b) x_b``."""
    p_c = X.sum(axis=0) / X.sum()
    lengths = X.sum(axis=1)
    n = X.shape[0]
    W = np.zeros((n, n))
    for a in range(n):
        ll = np.array([np.sum(X[a] * np.log((X[b] + mu * p_c) / (lengths[b] + mu))) if b != a else -np.inf
                       for b in range(n)])
        for b in np.argsort(-ll)[:k]:
            W[a, b] = X[a] @ X[b] / np.linalg.norm(X[a]) / np.linalg.norm(X[b])
    return W


@pytest.mark.parametrize("spec,user_based", [("LM-WSR-UB", True), ("LM-WSR-IB", False)])
def test_lm_wsr_matches_query_likelihood_neighbourhoods(spec, user_based):
    df = ratings(seed=5, density=0.5)
    df["rating"] = df.rating + np.random.default_rng(0).random(len(df)) / 10  # no ties in the likelihoods
    R = np.zeros((12, 15))
    R[df.user, df.item] = df.rating
    k, mu = 4, 20.0
    if user_based:
        want = lm_wsr_brute_force(R, k, mu) @ R                   # sum_v cos(u, v) r(v, i)
    else:
        want = R @ lm_wsr_brute_force(R.T, k, mu).T               # sum_j cos(i, j) r(u, j), j in J_i
    got = create(f"{spec}(k={k},mu={mu:g})").fit(df).score(np.arange(12))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
