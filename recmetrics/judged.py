"""The judged label matrix: one run judged against one set of judgments.

``labels[u, j]`` is the test rating of the item at rank ``j + 1`` of user ``u``'s list (NaN when
unjudged or past the end of the list). Per-user totals (relevant, judged non-relevant, ideal
gains) come from the *full* judgments, never from the truncated list. Every ranking metric is a
pure numpy function of a :class:`Judged`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .data.qrels import Qrels
from .data.run import Run
from .errors import show, InputError

USER_POLICIES = ("relevant", "all")


@dataclass
class Judged:
    users: np.ndarray          # (n,) evaluated user ids
    labels: np.ndarray         # (n, depth) ratings, NaN = unjudged / no item
    items: np.ndarray          # (n, depth) item ids (padding where lengths end)
    lengths: np.ndarray        # (n,) list length (0 for users without a list)
    in_run: np.ndarray         # (n,) whether the run has a list for the user
    n_rel: np.ndarray          # (n,) relevant judgments of the user
    n_nonrel: np.ndarray       # (n,) judged non-relevant items of the user
    ideal: np.ndarray          # (n, m) the user's judged ratings sorted descending (0-padded)
    threshold: float
    max_rating: float
    metadata: dict = field(default_factory=dict)

    @property
    def depth(self) -> int:
        return int(self.labels.shape[1])

    def __len__(self) -> int:
        return len(self.users)

    # cached intermediates shared by the metric kernels
    @cached_property
    def rel(self) -> np.ndarray:
        return self.labels >= self.threshold  # NaN compares False

    @cached_property
    def nonrel(self) -> np.ndarray:
        return self.labels < self.threshold

    @cached_property
    def cum_rel(self) -> np.ndarray:
        return np.cumsum(self.rel, axis=1)

    @cached_property
    def cum_nonrel(self) -> np.ndarray:
        return np.cumsum(self.nonrel, axis=1)

    @cached_property
    def gains(self) -> np.ndarray:
        return np.nan_to_num(self.labels, nan=0.0)

    def cut(self, k: int | None) -> int:
        """Resolve a cut-off: None means the full depth."""
        if k is None:
            return self.depth
        if k > self.depth:
            raise InputError(f"cut-off {k} exceeds the judged depth {self.depth}; judge with depth >= {k}")
        return int(k)


def judge(run: Run, qrels: Qrels, *, depth: int | None = None, users="relevant") -> Judged:
    """Judge ``run`` against ``qrels``.

    users:
        ``"relevant"`` (default): the judged users with at least one relevant item;
        ``"all"``: every judged user; or an explicit array of user ids.
        Users without a list in the run get an empty list (every metric scores 0: coverage shortfall).
    depth:
        Width of the label matrix (default: the run's depth). Lists shorter than a cut-off are padded
        with unjudged positions, so a cut-off may exceed the list length.
    Run users absent from the qrels are ignored with a warning (counted in ``metadata``).
    """
    if isinstance(users, str):
        if users not in USER_POLICIES:
            raise InputError(f"users policy must be one of {USER_POLICIES} or an array of ids, got {users!r}")
        eval_users = qrels.relevant_users if users == "relevant" else qrels.users
    else:
        eval_users = np.asarray(users)
        unknown = qrels.user_index.get_indexer(eval_users) < 0
        if unknown.any():
            raise InputError(f"user {show(eval_users[unknown][0])} has no judgments; cannot evaluate it")
    depth = run.depth if depth is None else int(depth)
    if depth < 0:
        raise InputError(f"depth must be >= 0, got {depth}")

    row = pd.Index(run.users).get_indexer(eval_users)
    in_run = row >= 0
    n = len(eval_users)
    take = min(depth, run.depth)
    items = np.zeros((n, depth), dtype=run.items.dtype)
    lengths = np.zeros(n, dtype=np.int64)
    if take:
        items[in_run, :take] = run.items[row[in_run], :take]
    lengths[in_run] = np.minimum(run.lengths[row[in_run]], depth)
    present = np.arange(depth)[None, :] < lengths[:, None]
    labels = np.full((n, depth), np.nan)
    if present.any():
        looked = qrels.lookup(eval_users, items)
        labels = np.where(present, looked, np.nan)

    extra = pd.Index(run.users).get_indexer(qrels.users)
    ignored = int(len(run.users) - (extra >= 0).sum())
    if ignored:
        missing = np.setdiff1d(run.users, qrels.users)
        warnings.warn(
            f"run {run.name!r}: {ignored} user(s) have no judgments and are ignored "
            f"(e.g. {missing[:3].tolist()})", stacklevel=2,
        )
    return Judged(
        users=eval_users,
        labels=labels,
        items=items,
        lengths=lengths,
        in_run=in_run,
        n_rel=qrels.per_user(eval_users, qrels.n_relevant),
        n_nonrel=qrels.per_user(eval_users, qrels.n_nonrelevant),
        ideal=qrels.ideal_gains(eval_users),
        threshold=qrels.threshold,
        max_rating=qrels.max_rating,
        metadata={"run": run.name, "users_evaluated": n, "users_missing_from_run": int((~in_run).sum()),
                  "run_users_ignored": ignored},
    )

