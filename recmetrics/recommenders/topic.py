"""Probabilistic latent-topic recommenders: ``s(u, i) = p(i|u) = sum_z p(z|u) p(i|z)``.

* :class:`PLSA`: Hofmann's aspect model ("Latent semantic models for collaborative filtering",
  ACM TOIS 22(1), 2004; used by Bellogín's thesis, ch. 4) fitted by (tempered) EM on the
  observed pairs only: the E-step is one ``(nnz x K)`` array, the M-step two sparse products, so
  no loop over users or ratings. Each pair counts with its rating as weight (``weighted=True``,
  default) or 1.
* :class:`LDA`: Blei, Ng & Jordan (JMLR 2003), users as documents and items as words, via
  scikit-learn's variational-Bayes ``LatentDirichletAllocation`` (batch, seeded). A user's
  document holds each rated item ``r(u,i)`` times (``weighted=True``, default) or once;
  ``p(z|u)`` is the normalised document-topic posterior and ``p(i|z) = n(i,z) / n(z)`` the
  expected topic-item counts (the variational parameters minus the topic-word prior).

Checked against RankSys (``RankSys/RankSys``, the recommender library of the Universidad Autónoma
de Madrid group, two of whose members co-authored paper 000), read for this:

* ``RankSys-mf/.../mf/plsa/PLSAFactorizer.java`` fits the *symmetric* aspect model
  ``p(u,i) = sum_z p(z) p(u|z) p(i|z)``: E-step ``q(z|u,i) ∝ p(u|z) p(z) p(i|z)``, M-step
  ``p(u|z) ∝ sum_i v(u,i) q`` (normalised over users) and ``p(i,z) ∝ sum_u v(u,i) q`` (normalised
  over all item-topic pairs), with ``v(u,i)`` the preference value (the rating on rating data),
  and scores ``p(u,i)``. With ``p(z|u) ∝ p(z) p(u|z)`` this is the same EM, iterate by iterate,
  as the asymmetric form here (tested on a toy matrix), and ``p(u,i)`` ranks a user's items as
  ``p(i|u)`` does. Before this check the pairs counted 1 by default (``weighted=False``);
  RankSys weights them by the rating. Measured (movielens-small holdout, test 20 %, seed 0):
  P@10 0.154 -> 0.167, nDCG@100 0.305 -> 0.310. Tempering (``beta`` < 1, Hofmann's tempered EM)
  is an option RankSys does not have; its random initialisation differs from ours.
* ``RankSys-lda/.../LDAModelEstimator.java`` / ``LDARecommender.java``: Mallet's Gibbs sampler on
  documents that repeat each item ``(int) r(u,i)`` times, scored
  ``sum_z p(z|u) n(i,z) / n(z)``. Before this check the documents held each item once and
  ``p(i|z)`` included the topic-word prior. Measured (same split): P@10 0.154 -> 0.167,
  nDCG@100 0.296 -> 0.304 (the prior alone changes nDCG@100 by < 0.002). Not reproduced: Mallet's
  Gibbs sampling (scikit-learn's variational Bayes instead) and whatever ``alpha``/``beta`` and
  iteration counts paper 000 used (not stated in the paper).
Whether paper 000 ran RankSys's implementations is not stated; Hofmann's and Blei et al.'s own
code was not found here.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._util import binary, check_float, check_int
from .base import Recommender
from .registry import register


def plsa_em(R: sp.spmatrix, p_zu: np.ndarray, p_iz: np.ndarray, iterations: int, beta: float = 1.0,
            weighted: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``iterations`` (tempered) EM steps of the aspect model ``p(i|u) = sum_z p(z|u) p(i|z)`` on
    the observed pairs of ``R`` (each weighted by its value, or by 1), from ``p(z|u)`` (rows sum
    to 1, shape ``(n_users, K)``) and ``p(i|z)`` (columns sum to 1, shape ``(n_items, K)``).

    E-step ``q(z|u,i) ∝ (p(z|u) p(i|z))^beta``; M-step ``p(z|u) ∝ sum_i n(u,i) q(z|u,i)``,
    ``p(i|z) ∝ sum_u n(u,i) q(z|u,i)`` (the aspect model's EM, with Hofmann's tempering;
    equation numbers of Hofmann 2004 not checked here: its full text was not retrievable)."""
    R = sp.coo_matrix(R)
    m, n = R.shape
    rows, cols = R.row, R.col
    w = R.data.astype(np.float64) if weighted else np.ones(R.nnz)
    idx = np.arange(R.nnz)
    Eu = sp.csr_matrix((w, (rows, idx)), shape=(m, R.nnz))  # weighted incidence: user x pair
    Ei = sp.csr_matrix((w, (cols, idx)), shape=(n, R.nnz))
    # each pair's q(z|u,i) and its p(i|z), written in place at every step (no fresh arrays per step)
    q = np.empty((R.nnz, p_zu.shape[1]), dtype=np.result_type(p_zu, p_iz))
    gathered = np.empty_like(q)
    for _ in range(iterations):
        np.take(p_zu, rows, axis=0, out=q, mode="clip")  # E-step: q(z|u,i) ∝ p(z|u) p(i|z)
        q *= np.take(p_iz, cols, axis=0, out=gathered, mode="clip")   # (indices valid: no checked copy)
        if beta != 1.0:
            q **= beta
        q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
        nz_u = np.asarray(Eu @ q)                       # M-step: sum_i n(u,i) q(z|u,i)
        nz_i = np.asarray(Ei @ q)
        p_zu = nz_u / np.maximum(nz_u.sum(axis=1, keepdims=True), 1e-300)
        p_iz = nz_i / np.maximum(nz_i.sum(axis=0, keepdims=True), 1e-300)
    return p_zu, p_iz


@register("pLSA", aliases=("PLSA", "aspect-model"))
class PLSA(Recommender):
    """Probabilistic latent semantic analysis (EM on the rating-weighted sparse matrix, as RankSys)."""

    family = "probabilistic latent semantic (pLSA)"
    source = "numpy/scipy (vectorised EM)"
    reference = "Hofmann 2004"

    def __init__(self, factors: int = 20, iterations: int = 50, beta: float = 1.0, weighted: bool = True,
                 seed: int = 0):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.iterations = check_int(owner, "iterations", iterations)
        self.beta = check_float(owner, "beta", beta, 0.0, 1.0, lo_open=True)
        self.weighted = bool(weighted)
        self.seed = check_int(owner, "seed", seed, lo=0)

    def _init(self, n_users: int, n_items: int) -> tuple[np.ndarray, np.ndarray]:
        """Random starting ``p(z|u)`` (rows sum to 1) and ``p(i|z)`` (columns sum to 1)."""
        rng = np.random.default_rng(self.seed)
        p_zu = rng.random((n_users, self.factors))
        p_zu /= p_zu.sum(axis=1, keepdims=True)
        p_iz = rng.random((n_items, self.factors))
        p_iz /= p_iz.sum(axis=0, keepdims=True)
        return p_zu, p_iz

    def _fit(self):
        p_zu, p_iz = self._init(*self.R_.shape)
        self.p_zu_, self.p_iz_ = plsa_em(self.R_, p_zu, p_iz, self.iterations, self.beta, self.weighted)

    def _score(self, uidx):
        return self.p_zu_[uidx] @ self.p_iz_.T


@register("LDA")
class LDA(Recommender):
    """Latent Dirichlet allocation over users' rating-weighted item documents (scikit-learn,
    batch variational Bayes), scored ``sum_z p(z|u) n(i,z)/n(z)`` as RankSys's LDARecommender."""

    family = "topic model (LDA)"
    source = "scikit-learn (LatentDirichletAllocation)"
    reference = "Blei, Ng & Jordan 2003"

    def __init__(self, factors: int = 20, iterations: int = 10, weighted: bool = True, seed: int = 0):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.iterations = check_int(owner, "iterations", iterations)
        self.weighted = bool(weighted)
        self.seed = check_int(owner, "seed", seed, lo=0)

    def _documents(self) -> sp.csr_matrix:
        """The user-item count matrix the topic model reads: ``floor(r(u,i))`` copies of each rated
        item (RankSys: ``range(0, (int) pref.v2)``, so a 0.5-star rating adds no token) or one copy."""
        if not self.weighted:
            return binary(self.R_)
        X = sp.csr_matrix(self.R_, dtype=np.float64, copy=True)
        X.data = np.floor(X.data)
        X.eliminate_zeros()
        return X

    def _fit(self):
        from sklearn.decomposition import LatentDirichletAllocation

        lda = LatentDirichletAllocation(n_components=self.factors, max_iter=self.iterations,
                                        learning_method="batch", random_state=self.seed, n_jobs=1)
        theta = lda.fit_transform(self._documents())
        self.theta_ = theta / np.maximum(theta.sum(axis=1, keepdims=True), 1e-300)
        counts = np.maximum(lda.components_ - lda.topic_word_prior_, 0.0)   # expected n(i, z)
        self.phi_ = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1e-300)

    def _score(self, uidx):
        return self.theta_[uidx] @ self.phi_
