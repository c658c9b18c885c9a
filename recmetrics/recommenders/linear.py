"""Linear item-item models: ``s(u, .) = x_u W`` with a learnt item-item matrix ``W`` (zero diagonal).

* :class:`EASE` (Steck, WWW 2019), closed form: ``P = (X'X + lambda I)^-1``,
  ``W = I - P diag(1/diag(P))``. When there are fewer users than items the inverse is taken in
  user space through the Woodbury identity, ``P = (I - X' (lambda I + X X')^-1 X) / lambda``,
  and ``W`` is never materialised (scores are ``x_u - (x_u P) / diag(P)``).
* :class:`SLIM` (Ning & Karypis, ICDM 2011), the feature-selection variant fsSLIM: for every item
  ``j``, ``min_w 1/2 ||x_j - X_{N(j)} w||^2 + l1 |w|_1 + l2/2 ||w||^2`` s.t. ``w >= 0``, over
  the ``k`` items ``N(j)`` most cosine-similar to ``j``. All items are solved at once by
  coordinate descent on stacked ``k x k`` Gram matrices (a chunk of items at a time).

Both use the binary interaction matrix by default (``binary=True``), as in the papers.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ._util import binary, check_float, check_int, knn_graph, single_thread_blas
from .base import Recommender
from .registry import register


@register("EASE", aliases=("EASE^R", "ease-r"))
class EASE(Recommender):
    """Embarrassingly shallow autoencoder (closed form, ridge penalty ``lam``)."""

    family = "linear item-item (sparse/shallow)"
    source = "numpy.linalg (closed form)"
    reference = "Steck 2019"

    def __init__(self, lam: float = 100.0, binary: bool = True):
        self.lam = check_float(type(self).name, "lam", lam, 0.0, lo_open=True)
        self.binary = bool(binary)

    def _fit(self):
        # one BLAS thread: LAPACK's inverse differs in the last bits with the number of threads, and
        # a near-tie then ranks two items apart on a machine with more cores (or beside another chapter)
        with single_thread_blas():
            self._closed_form()

    def _closed_form(self):
        X = binary(self.R_) if self.binary else sp.csr_matrix(self.R_, dtype=np.float64)
        self.X_ = X
        m, n = X.shape
        lam = self.lam
        if n <= m:
            G = (X.T @ X).toarray()
            G[np.diag_indices(n)] += lam
            P = np.linalg.inv(G)
            W = -P / np.diag(P)[None, :]
            W[np.diag_indices(n)] = 0.0
            self.W_ = W
            self.dual_ = False
        else:
            K = (X @ X.T).toarray()
            K[np.diag_indices(m)] += lam
            Kinv = np.linalg.inv(K)
            Xd = X.toarray()
            KX = Kinv @ Xd                                    # (m, n)
            diagP = (1.0 - np.einsum("ui,ui->i", Xd, KX)) / lam  # diag of (I - X'K^-1 X) / lam
            self.KX_ = KX
            self.diagP_ = diagP
            self.dual_ = True

    def _score(self, uidx):
        Xu = self.X_[uidx]
        if not self.dual_:
            return np.asarray(Xu @ self.W_)
        Xud = Xu.toarray()
        XuP = (Xud - (Xu @ self.X_.T).toarray() @ self.KX_) / self.lam
        return Xud - XuP / self.diagP_[None, :]


#: largest item-item Gram (cells) SLIM densifies (float32) to gather the per-item systems quickly
DENSE_GRAM_CELLS = 100_000_000


@register("SLIM", aliases=("fsSLIM",))
class SLIM(Recommender):
    """Sparse linear method with feature selection (non-negative elastic net per item)."""

    family = "linear item-item (sparse/shallow)"
    source = "numpy (batched coordinate descent)"
    reference = "Ning & Karypis 2011"

    def __init__(self, k: int = 50, l1: float = 1.0, l2: float = 5.0, iterations: int = 30,
                 tol: float = 1e-4, binary: bool = True):
        owner = type(self).name
        self.k = check_int(owner, "k", k)
        self.l1 = check_float(owner, "l1", l1, 0.0)
        self.l2 = check_float(owner, "l2", l2, 0.0)
        self.iterations = check_int(owner, "iterations", iterations)
        self.tol = check_float(owner, "tol", tol, 0.0)
        self.binary = bool(binary)
        if self.l1 == 0 and self.l2 == 0:
            raise InputError(f"{owner}: hyper-parameters l1 and l2 cannot both be 0")

    def _fit(self):
        X = binary(self.R_) if self.binary else sp.csr_matrix(self.R_, dtype=np.float64)
        n = X.shape[1]
        gram = sp.csr_matrix(X.T @ X)                         # item-item Gram (sparse)
        gram.sort_indices()
        # gathering the k x k Grams: from a dense float32 copy when it fits, else sparse lookups
        dense = gram.astype(np.float32).toarray() if n * n <= DENSE_GRAM_CELLS else None
        norms = np.sqrt(gram.diagonal())
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        # candidate regressors: the k most cosine-similar items, padded with -1
        def cosine(rows):
            sim = gram[rows].toarray()
            sim *= inv[rows, None]
            sim *= inv[None, :]
            return sim

        S = knn_graph(cosine, n, self.k)
        counts = np.diff(S.indptr)
        k = max(1, int(counts.max(initial=0)))
        nbr = np.full((n, k), -1, dtype=np.int64)
        rows = np.repeat(np.arange(n), counts)
        pos = np.arange(S.nnz) - np.repeat(S.indptr[:-1], counts)
        nbr[rows, pos] = S.indices
        Wr, Wc, Wv = [], [], []
        step = max(1, 4_000_000 // (k * k))
        for start in range(0, n, step):
            tgt = np.arange(start, min(n, start + step))
            cols = nbr[tgt]                                   # (b, k)
            valid = cols >= 0
            safe = np.maximum(cols, 0)
            a = np.broadcast_to(safe[:, :, None], (len(tgt), k, k)).ravel()
            b = np.broadcast_to(safe[:, None, :], (len(tgt), k, k)).ravel()
            at = safe.ravel(), np.repeat(tgt, k)
            if dense is not None:
                G = dense[a, b].astype(np.float64).reshape(len(tgt), k, k)
                c = dense[at].astype(np.float64).reshape(len(tgt), k)
            else:
                G = np.asarray(gram[a, b]).reshape(len(tgt), k, k)  # Gram of each target's candidates
                c = np.asarray(gram[at]).reshape(len(tgt), k)
            G *= valid[:, :, None] & valid[:, None, :]
            c *= valid
            w = self._coordinate_descent(G, c)
            r, q = np.nonzero((w > 0) & valid)
            Wr.append(cols[r, q])
            Wc.append(tgt[r])
            Wv.append(w[r, q])
        self.W_ = sp.csr_matrix((np.concatenate(Wv), (np.concatenate(Wr), np.concatenate(Wc))), shape=(n, n))
        self.X_ = X

    def _coordinate_descent(self, G, c):
        """Cyclic coordinate descent for all targets of a chunk at once (``G`` symmetric)."""
        b, k, _ = G.shape
        w = np.zeros((b, k))
        g = np.zeros((b, k))                                  # G @ w
        gdiag = np.einsum("bkk->bk", G).copy()
        denom = gdiag + self.l2
        denom[denom <= 0] = 1.0
        cols = [np.ascontiguousarray(G[:, l, :]) for l in range(k)]
        for _ in range(self.iterations):
            biggest = 0.0
            for l in range(k):
                wl = w[:, l]
                new = c[:, l] - g[:, l] + gdiag[:, l] * wl
                new -= self.l1
                np.maximum(new, 0.0, out=new)
                new /= denom[:, l]
                delta = new - wl
                moved = np.abs(delta).max()
                if moved == 0.0:
                    continue
                w[:, l] = new
                g += cols[l] * delta[:, None]
                biggest = max(biggest, moved)
            if biggest < self.tol:
                break
        return w

    def _score(self, uidx):
        return np.asarray((self.X_[uidx] @ self.W_).toarray())

