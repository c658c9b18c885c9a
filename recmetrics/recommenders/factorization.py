"""Matrix factorisation.

* :class:`BiasedMF` (``SVD``): the regularised biased MF rating predictor of Takács, Pilászy,
  Németh & Tikk (JMLR 2009, "BRISMF") / Koren's SVD, ``r_ui ~ mu + b_u + b_i + p_u . q_i``.
  Trained by alternating least squares, vectorised: each half-step solves all users (items)
  at once as a stack of ``(f+1) x (f+1)`` ridge systems whose Gram matrices come from one
  sparse product with the stacked outer products of the fixed side. The factors have
  weighted-lambda regularisation (Zhou et al. 2008: ``reg * n_u``); the biases a constant
  shrinkage independent of the counts (as Koren's baseline estimates; ``reg_item_bias``,
  ``reg_user_bias``), so an item with a single 5-star rating is pulled towards ``mu`` instead of
  topping every list (count-proportional bias regularisation ranked like Random: P@10 0.002).
  Defaults (``reg=0.5``, ``reg_item_bias=100``) are tuned for ranking on a movielens-small holdout
  (seed 0): P@10 0.104, nDCG@100 0.161, test RMSE 0.928; ``reg=0.1, reg_item_bias=25`` gives the
  better RMSE 0.890 but P@10 0.024. A rating predictor stays below Popularity in top-N ranking
  (Pop: P@10 0.112), as Cremonesi, Koren & Turrin (2010) found for rating-oriented models. :meth:`BiasedMF.predict` gives the
  predicted rating of (user, item) pairs for MAE/RMSE; top-N lists rank by predicted rating.
* :class:`PureSVD`: Cremonesi, Koren & Turrin (RecSys 2010): truncated SVD of the rating matrix
  (missing = 0), ``s(u, .) = r_u Q Q'`` (``scipy.sparse.linalg.svds``, seeded start vector).
* :class:`WRMF`: Hu, Koren & Volinsky (ICDM 2008) implicit-feedback ALS via the ``implicit``
  library (confidence ``alpha * r``, implicit's convention).
* :class:`BPRMF`: Rendle et al. (UAI 2009) Bayesian personalised ranking MF via ``implicit``
  (single thread, so that the SGD is deterministic for a seed).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ._util import binary, check_float, check_int, single_thread_blas
from .base import Recommender
from .registry import register


def _ridge_solve(M: sp.csr_matrix, Y: sp.csr_matrix, F: np.ndarray, reg: np.ndarray,
                 chunk_cells: int = 16_000_000) -> np.ndarray:
    """For every row ``t`` of the pattern ``M``: ``argmin_x sum_o M_to (Y_to - f_o.x)^2 + x' diag(reg_t) x``.

    ``F`` holds the features of the other side (``n_other x d``); ``reg`` is ``(n_targets, d)``.
    All systems are built with sparse products and solved with one batched ``numpy.linalg.solve``.
    A system's matrix is symmetric to the bit (``f_k f_l`` and ``f_l f_k`` are the same product, and
    both are summed over the row's entries in column order), so only its upper triangle is summed,
    row by row of ``M`` (CSR, sorted columns), and then mirrored.
    """
    n_t, n_o = M.shape
    d = F.shape[1]
    rhs = np.asarray(Y @ F)
    out = np.empty((n_t, d))
    upper_k, upper_l = np.triu_indices(d)
    place = np.empty((d, d), dtype=np.intp)               # each cell's column among the upper triangle's
    place[upper_k, upper_l] = place[upper_l, upper_k] = np.arange(len(upper_k))
    o_step = t_step = max(1, chunk_cells // (d * d))
    diag = np.arange(d)
    M = sp.csr_matrix(M)
    if not M.has_sorted_indices:
        M = M.sorted_indices()
    for t0 in range(0, n_t, t_step):
        Mt = M[t0:t0 + t_step]
        U = np.zeros((Mt.shape[0], len(upper_k)))
        for o0 in range(0, n_o, o_step):
            sub = Mt[:, o0:o0 + o_step] if o_step < n_o else Mt
            if sub.nnz:
                U += sub @ _upper_products(F[o0:o0 + o_step])
        A = U.take(place.ravel(), axis=1).reshape(-1, d, d)
        A[:, diag, diag] += reg[t0:t0 + t_step]
        out[t0:t0 + t_step] = np.linalg.solve(A, rhs[t0:t0 + t_step, :, None])[:, :, 0]
    return out


def _upper_products(F: np.ndarray) -> np.ndarray:
    """``(n, d (d + 1) / 2)``: each row's products ``f_k f_l`` for ``k <= l``, in ``numpy.triu_indices`` order."""
    n, d = F.shape
    out = np.empty((n, d * (d + 1) // 2))
    at = 0
    for k in range(d):
        np.multiply(F[:, k:k + 1], F[:, k:], out=out[:, at:at + d - k])
        at += d - k
    return out


@register("SVD", aliases=("BiasedMF", "FunkSVD", "BRISMF"))
class BiasedMF(Recommender):
    """Biased matrix factorisation rating predictor (ALS); also :meth:`predict` for error metrics."""

    family = "matrix factorisation (rating prediction)"
    source = "numpy (vectorised ALS)"
    reference = "Takács et al. 2009; Koren et al. 2009"

    def __init__(self, factors: int = 20, reg: float = 0.5, iterations: int = 10, seed: int = 0,
                 clip: bool = True, reg_item_bias: float = 100.0, reg_user_bias: float = 10.0):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.reg = check_float(owner, "reg", reg, 0.0, lo_open=True)
        self.reg_item_bias = check_float(owner, "reg_item_bias", reg_item_bias, 0.0, lo_open=True)
        self.reg_user_bias = check_float(owner, "reg_user_bias", reg_user_bias, 0.0, lo_open=True)
        self.iterations = check_int(owner, "iterations", iterations)
        self.seed = check_int(owner, "seed", seed, lo=0)
        self.clip = bool(clip)

    def _fit(self):
        with single_thread_blas():  # batched small (f+1) x (f+1) solves
            self._als()

    def _als(self):
        R = self.R_
        m, n = R.shape
        f = self.factors
        coo = R.tocoo()
        self.mu_ = float(coo.data.mean())
        self.range_ = (float(coo.data.min()), float(coo.data.max()))
        M = binary(R)
        MT = sp.csr_matrix(M.T)
        n_u = np.asarray(M.sum(axis=1)).ravel()
        n_i = np.asarray(M.sum(axis=0)).ravel()
        rng = np.random.default_rng(self.seed)
        P = rng.normal(0.0, 0.1, (m, f))
        Q = rng.normal(0.0, 0.1, (n, f))
        b_u = np.zeros(m)
        b_i = np.zeros(n)
        reg_u = np.repeat((self.reg * np.maximum(n_u, 1))[:, None], f + 1, axis=1)
        reg_i = np.repeat((self.reg * np.maximum(n_i, 1))[:, None], f + 1, axis=1)
        reg_u[:, 0], reg_i[:, 0] = self.reg_user_bias, self.reg_item_bias  # biases: count-independent
        for _ in range(self.iterations):
            # users: features [1, q_i], targets r - mu - b_i
            Y = sp.csr_matrix((coo.data - self.mu_ - b_i[coo.col], (coo.row, coo.col)), shape=(m, n))
            x = _ridge_solve(M, Y, np.hstack([np.ones((n, 1)), Q]), reg_u)
            b_u, P = x[:, 0], x[:, 1:]
            # items: features [1, p_u], targets r - mu - b_u
            Y = sp.csr_matrix((coo.data - self.mu_ - b_u[coo.row], (coo.col, coo.row)), shape=(n, m))
            x = _ridge_solve(MT, Y, np.hstack([np.ones((m, 1)), P]), reg_i)
            b_i, Q = x[:, 0], x[:, 1:]
        self.b_u_, self.b_i_, self.P_, self.Q_ = b_u, b_i, P, Q

    def _score(self, uidx):
        return self.mu_ + self.b_u_[uidx][:, None] + self.b_i_[None, :] + self.P_[uidx] @ self.Q_.T

    def predict(self, users, items) -> np.ndarray:
        """Predicted ratings of the pairs ``(users[k], items[k])`` (vectorised).

        Unknown users/items fall back to the parts of the model that are known (an unknown user
        gets ``mu + b_i``, an unknown item ``mu + b_u``, both unknown ``mu``). Clipped to the
        training rating range when ``clip``.
        """
        self._check_fitted()
        users = np.asarray(users)
        items = np.asarray(items)
        if users.shape != items.shape or users.ndim != 1:
            raise InputError(f"{self.name}.predict: users and items must be 1-d arrays of equal length "
                             f"(pairs), got shapes {users.shape} and {items.shape}")
        u = self.users_.get_indexer(users)
        i = self.items_.get_indexer(items)
        ku, ki = u >= 0, i >= 0
        us, is_ = np.maximum(u, 0), np.maximum(i, 0)
        pred = (self.mu_ + np.where(ku, self.b_u_[us], 0.0) + np.where(ki, self.b_i_[is_], 0.0)
                + np.where(ku & ki, np.einsum("kf,kf->k", self.P_[us], self.Q_[is_]), 0.0))
        if self.clip:
            pred = np.clip(pred, *self.range_)
        return pred


@register("PureSVD")
class PureSVD(Recommender):
    """Truncated SVD of the (zero-filled) rating matrix; scores ``r_u Q Q'``."""

    family = "matrix factorisation (truncated SVD)"
    source = "scipy.sparse.linalg.svds"
    reference = "Cremonesi, Koren & Turrin 2010"

    def __init__(self, k: int = 50, seed: int = 0):
        self.k = check_int(type(self).name, "k", k)
        self.seed = check_int(type(self).name, "seed", seed, lo=0)

    def _fit(self):
        from scipy.sparse.linalg import svds

        R = sp.csr_matrix(self.R_, dtype=np.float64)
        if self.k >= min(R.shape):
            raise InputError(f"{self.name}: hyper-parameter k={self.k} must be smaller than min(n_users, "
                             f"n_items) = {min(R.shape)} of the training matrix")
        v0 = np.random.default_rng(self.seed).uniform(-1.0, 1.0, min(R.shape))
        with single_thread_blas():  # Lanczos: sparse products and small dense steps
            _, _, vt = svds(R, k=self.k, v0=v0, solver="arpack")
        self.Q_ = vt.T

    def _score(self, uidx):
        return np.asarray(self.R_[uidx] @ self.Q_) @ self.Q_.T


@register("WRMF", aliases=("iALS", "ALS", "WMF"))
class WRMF(Recommender):
    """Weighted regularised MF for implicit feedback (``implicit.cpu.als``)."""

    family = "matrix factorisation (implicit feedback)"
    source = "implicit (AlternatingLeastSquares)"
    reference = "Hu, Koren & Volinsky 2008"

    def __init__(self, factors: int = 50, reg: float = 0.1, alpha: float = 1.0, iterations: int = 15,
                 binary: bool = False, seed: int = 0, threads: int = 1):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.reg = check_float(owner, "reg", reg, 0.0)
        self.alpha = check_float(owner, "alpha", alpha, 0.0, lo_open=True)
        self.iterations = check_int(owner, "iterations", iterations)
        self.binary = bool(binary)
        self.seed = check_int(owner, "seed", seed, lo=0)
        self.threads = check_int(owner, "threads", threads)

    def _fit(self):
        from implicit.cpu.als import AlternatingLeastSquares

        C = binary(self.R_, np.float32) if self.binary else sp.csr_matrix(self.R_, dtype=np.float32)
        with single_thread_blas():  # implicit warns (and slows down) when BLAS is multi-threaded
            model = AlternatingLeastSquares(factors=self.factors, regularization=self.reg, alpha=self.alpha,
                                            iterations=self.iterations, num_threads=self.threads,
                                            random_state=self.seed)
            model.fit(C, show_progress=False)
        self.U_ = np.asarray(model.user_factors, dtype=np.float64)
        self.V_ = np.asarray(model.item_factors, dtype=np.float64)

    def _score(self, uidx):
        return self.U_[uidx] @ self.V_.T


@register("BPRMF", aliases=("BPR", "BPR-MF"))
class BPRMF(Recommender):
    """Bayesian personalised ranking MF (``implicit.cpu.bpr``; one thread for determinism).

    Defaults tuned on a movielens-small holdout (test 20 %, seed 0; nDCG@100 / P@10):
    ``learning_rate=0.005, iterations=200`` 0.281 / 0.129; implicit-style 0.01 / 100: 0.274 / 0.122;
    0.01 / 50: 0.265 / 0.132; 0.05 / 50: 0.225 / 0.083."""

    family = "matrix factorisation (pairwise ranking)"
    source = "implicit (BayesianPersonalizedRanking)"
    reference = "Rendle et al. 2009"

    def __init__(self, factors: int = 50, learning_rate: float = 0.005, reg: float = 0.01,
                 iterations: int = 200, seed: int = 0):
        owner = type(self).name
        self.factors = check_int(owner, "factors", factors)
        self.learning_rate = check_float(owner, "learning_rate", learning_rate, 0.0, lo_open=True)
        self.reg = check_float(owner, "reg", reg, 0.0)
        self.iterations = check_int(owner, "iterations", iterations)
        self.seed = check_int(owner, "seed", seed, lo=0)

    def _fit(self):
        from implicit.cpu.bpr import BayesianPersonalizedRanking

        with single_thread_blas():
            model = BayesianPersonalizedRanking(factors=self.factors, learning_rate=self.learning_rate,
                                                regularization=self.reg, iterations=self.iterations,
                                                num_threads=1, random_state=self.seed)
            model.fit(binary(self.R_, np.float32), show_progress=False)
        self.U_ = np.asarray(model.user_factors, dtype=np.float64)
        self.V_ = np.asarray(model.item_factors, dtype=np.float64)

    def _score(self, uidx):
        return self.U_[uidx] @ self.V_.T
