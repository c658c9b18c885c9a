"""The recommender interface: ``fit(train) -> self``, ``score(users, items=None)``, ``recommend(users, n)``.

Conventions
-----------
* ``fit`` takes a ratings DataFrame ``user, item, rating`` and builds the user/item indices and
  the sparse user-item matrix ``R_`` (CSR, ratings as values).
* ``score`` returns a dense ``(len(users), n_items)`` float matrix over :attr:`items_` (or over
  the given ``items``). Items unseen in training get ``-inf`` (the lowest score); cold users
  (unseen in training) get a row of ``-inf``.
* ``recommend`` returns a :class:`~recmetrics.data.run.Run`; cold users get no list (and
  therefore score 0 on every metric: coverage shortfall). By default the user's training items are
  excluded (the AllItems design: every item not rated by the user in training is a candidate).
* Everything random takes ``seed``; the same seed gives the same run whatever the chunking.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..arrays import ranges
from ..data.run import Run
from ..errors import show, InputError, require_columns


class Recommender:
    """Base class. Subclasses implement ``_fit(self)`` (using ``self.R_``) and ``_score(self, uidx)``
    returning a dense ``(len(uidx), n_items)`` matrix for the given training user indices."""

    name: str = "Recommender"
    chunk: int = 1024  # users scored at once (bounds memory at chunk * n_items floats)

    def fit(self, train: pd.DataFrame) -> "Recommender":
        require_columns(train, ("user", "item", "rating"), f"{self.name}: training table")
        if len(train) == 0:
            raise InputError(f"{self.name}: the training set is empty; nothing to fit")
        ucodes, users = pd.factorize(train["user"].to_numpy(), sort=True)
        icodes, items = pd.factorize(train["item"].to_numpy(), sort=True)
        ratings = pd.to_numeric(train["rating"], errors="coerce").to_numpy(dtype=np.float64)
        if np.isnan(ratings).any():
            i = int(np.flatnonzero(np.isnan(ratings))[0])
            raise InputError(f"{self.name}: rating {show(train['rating'].iloc[i])} of user {show(train['user'].iloc[i])} "
                             f"item {show(train['item'].iloc[i])} is not a number")
        self.users_ = pd.Index(users)
        self.items_ = pd.Index(items)
        self.R_ = sp.csr_matrix((ratings, (ucodes, icodes)), shape=(len(users), len(items)))
        self.R_.sum_duplicates()
        self._fit()
        return self

    def _fit(self) -> None:
        pass

    def _score(self, uidx: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_fitted(self):
        if not hasattr(self, "R_"):
            raise InputError(f"{self.name} is not fitted; call fit(train) first")

    def score(self, users: Iterable[Any], items: Iterable[Any] | None = None) -> np.ndarray:
        """Scores of ``users`` over all training items (or over ``items``, -inf for unseen items)."""
        self._check_fitted()
        users = np.asarray(list(users) if not isinstance(users, np.ndarray) else users)
        uidx = self.users_.get_indexer(users)
        out = np.full((len(users), len(self.items_)), -np.inf)
        warm = uidx >= 0
        if warm.any():
            rows = np.flatnonzero(warm)
            for start in range(0, len(rows), self.chunk):
                sel = rows[start:start + self.chunk]
                out[sel] = self._score(uidx[sel])
        if items is None:
            return out
        items = np.asarray(list(items) if not isinstance(items, np.ndarray) else items)
        iidx = self.items_.get_indexer(items)
        res = np.where(iidx[None, :] >= 0, out[:, np.maximum(iidx, 0)], -np.inf)
        return res

    def score_targets(self, users: Iterable[Any], targets) -> list[np.ndarray]:
        """Scores of each user's own target items: ``targets[k]`` (an array of item ids) is scored
        for ``users[k]``. Returns one float array per user, aligned with its targets; items unseen
        in training and every target of a cold user score ``-inf`` (the lowest score).
        Users are scored in chunks over all items, so this costs what :meth:`score` costs."""
        self._check_fitted()
        users = np.asarray(list(users) if not isinstance(users, np.ndarray) else users)
        targets = [np.asarray(t) for t in targets]
        if len(targets) != len(users):
            raise InputError(f"{self.name}: score_targets needs one target array per user; got "
                             f"{len(targets)} target arrays for {len(users)} users")
        lens = np.array([len(t) for t in targets], dtype=np.int64)
        flat = np.concatenate(targets) if len(targets) else np.zeros(0)
        starts = np.r_[0, np.cumsum(lens)]          # user k's targets are flat[starts[k]:starts[k + 1]]
        iidx = self.items_.get_indexer(flat) if len(flat) else np.zeros(0, dtype=np.int64)
        uidx = self.users_.get_indexer(users)
        values = np.full(len(flat), -np.inf)
        warm = np.flatnonzero(uidx >= 0)
        for start in range(0, len(warm), self.chunk):
            rows = warm[start:start + self.chunk]
            scores = self._score(uidx[rows])
            pos = ranges(starts[rows], lens[rows])   # the chunk's targets, user by user
            row = np.repeat(np.arange(len(rows)), lens[rows])
            known = iidx[pos] >= 0
            values[pos[known]] = scores[row[known], iidx[pos[known]]]
        return np.split(values, starts[1:-1]) if len(lens) else []

    def recommend(self, users: Iterable[Any], n: int = 100, *, exclude_seen: bool = True,
                  name: str | None = None) -> Run:
        """Top-``n`` lists for the warm ``users`` (cold users get no list)."""
        self._check_fitted()
        if not isinstance(n, (int, np.integer)) or n <= 0:
            raise InputError(f"{self.name}: n must be a positive integer, got {n!r}")
        users = np.asarray(list(users) if not isinstance(users, np.ndarray) else users)
        uidx = self.users_.get_indexer(users)
        warm_users, warm_idx = users[uidx >= 0], uidx[uidx >= 0]
        parts = []
        for start in range(0, len(warm_idx), self.chunk):
            sel = warm_idx[start:start + self.chunk]
            scores = np.array(self._score(sel), dtype=np.float64)  # own writable copy
            if exclude_seen:  # the user's training items get -inf (never recommended)
                seen = self.R_[sel]
                scores[np.repeat(np.arange(len(sel)), np.diff(seen.indptr)), seen.indices] = -np.inf
            parts.append(Run.from_scores(scores, warm_users[start:start + self.chunk], self.items_.to_numpy(), n,
                                         name=name or self.name))
        if not parts:
            return Run(np.asarray([], dtype=users.dtype), np.zeros((0, 0), dtype=self.items_.dtype),
                       np.zeros(0, dtype=np.int64), name=name or self.name)
        depth = max(p.depth for p in parts)
        items = np.concatenate([np.pad(p.items, ((0, 0), (0, depth - p.depth))) for p in parts])
        scores = np.concatenate([np.pad(p.scores, ((0, 0), (0, depth - p.depth)), constant_values=np.nan)
                                 for p in parts])
        return Run(warm_users, items, np.concatenate([p.lengths for p in parts]), scores, name or self.name)

    def __repr__(self) -> str:
        return self.name
