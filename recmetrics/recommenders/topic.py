"""Probabilistic latent-topic recommenders: ``s(u, i) = p(i|u) = sum_z p(z|u) p(i|z)``.

* :class:`PLSA`: Hofmann's aspect model (ACM TOIS 2004; used by Bellogín's thesis, ch. 4) fitted
  by (tempered) EM on the observed pairs only: the E-step is one ``(nnz x K)`` array,
  the M-step two sparse products, so no loop over users or ratings. Pairs are weighted by the
  rating (``weighted=True``) or count 1.
* :class:`LDA`: Blei, Ng & Jordan (JMLR 2003), users as documents and items as words, via
  scikit-learn's variational-Bayes ``LatentDirichletAllocation`` (batch, seeded);
  ``p(z|u)`` is the normalised document-topic posterior, ``p(i|z)`` the normalised topic-word
  parameters.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._util import binary, check_float, check_int
from .base import Recommender
from .registry import register


@register("pLSA", aliases=("PLSA", "aspect-model"))
class PLSA(Recommender):
    """Probabilistic latent semantic analysis (EM on the sparse rating matrix)."""

    family = "probabilistic latent semantic (pLSA)"
    source = "numpy/scipy (vectorised EM)"
    reference = "Hofmann 2004"

    def __init__(self, factors: int = 20, iterations: int = 50, beta: float = 1.0, weighted: bool = False,
                 seed: int = 0):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.iterations = check_int(owner, "iterations", iterations)
        self.beta = check_float(owner, "beta", beta, 0.0, 1.0, lo_open=True)
        self.weighted = bool(weighted)
        self.seed = check_int(owner, "seed", seed, lo=0)

    def _fit(self):
        R = self.R_.tocoo()
        m, n = self.R_.shape
        K = self.factors
        rows, cols = R.row, R.col
        w = R.data.astype(np.float64) if self.weighted else np.ones(R.nnz)
        nnz = R.nnz
        idx = np.arange(nnz)
        Eu = sp.csr_matrix((w, (rows, idx)), shape=(m, nnz))  # weighted incidence: user x pair
        Ei = sp.csr_matrix((w, (cols, idx)), shape=(n, nnz))
        rng = np.random.default_rng(self.seed)
        p_zu = rng.random((m, K))
        p_zu /= p_zu.sum(axis=1, keepdims=True)            # p(z|u), rows sum to 1
        p_iz = rng.random((n, K))
        p_iz /= p_iz.sum(axis=0, keepdims=True)            # p(i|z), columns sum to 1
        for _ in range(self.iterations):
            q = p_zu[rows] * p_iz[cols]                     # E-step: q(z|u,i) ∝ p(z|u) p(i|z)
            if self.beta != 1.0:
                q **= self.beta
            q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
            nz_u = np.asarray(Eu @ q)                       # M-step: sum_i n(u,i) q(z|u,i)
            nz_i = np.asarray(Ei @ q)
            p_zu = nz_u / np.maximum(nz_u.sum(axis=1, keepdims=True), 1e-300)
            p_iz = nz_i / np.maximum(nz_i.sum(axis=0, keepdims=True), 1e-300)
        self.p_zu_, self.p_iz_ = p_zu, p_iz

    def _score(self, uidx):
        return self.p_zu_[uidx] @ self.p_iz_.T


@register("LDA")
class LDA(Recommender):
    """Latent Dirichlet allocation over users' item sets (scikit-learn, batch variational Bayes)."""

    family = "topic model (LDA)"
    source = "scikit-learn (LatentDirichletAllocation)"
    reference = "Blei, Ng & Jordan 2003"

    def __init__(self, factors: int = 20, iterations: int = 10, seed: int = 0):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.iterations = check_int(owner, "iterations", iterations)
        self.seed = check_int(owner, "seed", seed, lo=0)

    def _fit(self):
        from sklearn.decomposition import LatentDirichletAllocation

        X = binary(self.R_)
        lda = LatentDirichletAllocation(n_components=self.factors, max_iter=self.iterations,
                                        learning_method="batch", random_state=self.seed, n_jobs=1)
        theta = lda.fit_transform(X)
        self.theta_ = theta / np.maximum(theta.sum(axis=1, keepdims=True), 1e-300)
        phi = lda.components_
        self.phi_ = phi / phi.sum(axis=1, keepdims=True)

    def _score(self, uidx):
        return self.theta_[uidx] @ self.phi_
