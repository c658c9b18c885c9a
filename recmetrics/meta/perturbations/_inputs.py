"""Input coercion shared by the perturbation modules: seeds, the ground truth, user samples."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...data.qrels import Qrels
from ...errors import InputError


def _rng(seed) -> np.random.Generator:
    """The generator itself, or a fresh ``numpy.random.default_rng(seed)`` for an integer seed.

    ``None`` is refused: OS entropy would make the perturbations, and every verdict on them,
    unrepeatable."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer or a numpy Generator, not {seed!r}: the perturbations are "
                         "drawn at random and must be repeatable")
    return np.random.default_rng(int(seed))


def _as_qrels(test, threshold: float, max_rating: float | None) -> Qrels:
    """The ground truth as Qrels (a DataFrame ``user, item, rating`` is read with ``threshold``, ``max_rating``)."""
    if isinstance(test, Qrels):
        return test
    if isinstance(test, pd.DataFrame):
        return Qrels(test, threshold=threshold, max_rating=max_rating)
    raise InputError(f"test must be a Qrels or a DataFrame (user, item, rating), got {type(test).__name__}")


def _sample_users(qrels: Qrels, users, n_users, seed) -> np.ndarray:
    """``users`` (default: the users with a relevant item), or a seeded sorted sample of ``n_users`` of them."""
    pool = qrels.relevant_users if users is None else np.asarray(users)
    if n_users is not None and n_users < len(pool):
        pool = np.sort(_rng(seed).choice(pool, size=int(n_users), replace=False))
    return pool
