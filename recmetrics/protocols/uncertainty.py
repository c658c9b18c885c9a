"""Uncertainty of design results: a bootstrap over users (paper 004's claims, decided with it).

The unit of a design's sampling is the user: a user's 1R sets share N_u (the lemma of Eq. 4.2) and
her relevant items, so sets of one user are not independent, while users are. :func:`replicates`
draws users with replacement (the same draw for every system and design given together, so paired
comparisons keep their pairing) and recomputes each aggregate the way the design computes it —
Eq. 4.1, the mean over target sets; P1R, the mean of the percentile means. Any statistic of the
aggregates (a difference, a ratio to the random expectation, a lead over random relative to the
best system's) then has the standard deviation of its replicates as its standard error, which the
verdict rule (:mod:`recmetrics.meta.findings`) takes as ``se``.

Choices: ``n_bootstrap = 1000`` replicates (the se itself is then known to about ±2.2 %, which
moves no verdict at the rule's 2 standard errors); the percentile strata are kept fixed (a
replicate mean of a stratum no drawn user reaches is left out of that replicate's mean).

Example::

    >>> import pandas as pd
    >>> a = pd.DataFrame({"user": [1, 1, 2, 3], "value": [1.0, 0.0, 0.0, 1.0]})
    >>> b = pd.DataFrame({"user": [1, 2, 3], "value": [0.0, 0.0, 1.0]})
    >>> reps = replicates({"A": a, "B": b}, n_bootstrap=200, seed=1)
    >>> reps.shape, point({"A": a, "B": b}).round(3).tolist()
    ((200, 2), [0.5, 0.333])
    >>> bool((reps["A"] - reps["B"]).std() < reps["A"].std() + reps["B"].std())  # paired draws
    True
"""
from __future__ import annotations

from typing import Hashable, Mapping

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["N_BOOTSTRAP", "replicates", "point", "standard_errors", "per_user_means"]

#: default number of bootstrap replicates
N_BOOTSTRAP = 1000


def _tables(frames: Mapping[Hashable, pd.DataFrame], value: str):
    if not frames:
        raise InputError("uncertainty: no result tables given")
    for key, f in frames.items():
        if "user" not in f.columns or value not in f.columns:
            raise InputError(f"uncertainty: table {key!r} needs columns 'user' and {value!r} "
                             f"(has {list(f.columns)})")
        if f[value].isna().any():
            raise InputError(f"uncertainty: table {key!r} has NaN in {value!r}")
    users = pd.Index(pd.unique(np.concatenate([f["user"].to_numpy() for f in frames.values()])))
    out = []
    for f in frames.values():
        codes = users.get_indexer(f["user"].to_numpy())
        g = f["percentile"].to_numpy(dtype=np.int64) if "percentile" in f.columns else np.zeros(len(f), np.int64)
        m = int(g.max()) + 1 if len(g) else 1
        flat = codes * m + g
        S = np.bincount(flat, weights=f[value].to_numpy(dtype=np.float64), minlength=len(users) * m)
        C = np.bincount(flat, minlength=len(users) * m).astype(np.float64)
        out.append((S.reshape(len(users), m), C.reshape(len(users), m)))
    return users, out


def _aggregate(W: np.ndarray, S: np.ndarray, C: np.ndarray) -> np.ndarray:
    sums, counts = W @ S, W @ C
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
    present = counts > 0
    return np.where(present.any(axis=1), np.nansum(means, axis=1) / np.maximum(present.sum(axis=1), 1), np.nan)


def point(frames: Mapping[Hashable, pd.DataFrame], value: str = "value") -> pd.Series:
    """The aggregate of each table as its design computes it (Eq. 4.1; P1R: mean of the percentile
    means, when the table has a ``percentile`` column) — equal to ``ProtocolResult.aggregate``."""
    users, parts = _tables(frames, value)
    W = np.ones((1, len(users)))
    return pd.Series([_aggregate(W, S, C)[0] for S, C in parts], index=list(frames))


def replicates(frames: Mapping[Hashable, pd.DataFrame], value: str = "value", *, n_bootstrap: int = N_BOOTSTRAP,
               seed: int = 0) -> pd.DataFrame:
    """Bootstrap replicates (rows) of each table's aggregate (columns, keyed like ``frames``).

    ``frames``: ``{key: per-set table}`` with columns ``user``, ``value`` (the metric of each target
    set) and optionally ``percentile`` (P1R strata). Users are drawn with replacement from the union
    of the tables' users, one draw per replicate shared by every table (seeded, deterministic)."""
    from ..resampling import bootstrap_weights

    if int(n_bootstrap) < 2:
        raise InputError(f"uncertainty: n_bootstrap must be at least 2, got {n_bootstrap}")
    users, parts = _tables(frames, value)
    n = len(users)
    blocks = []
    for W in bootstrap_weights(n, int(n_bootstrap), seed, max(1, int(4e6 // max(n, 1)))):
        blocks.append(np.column_stack([_aggregate(W, S, C) for S, C in parts]))
    return pd.DataFrame(np.vstack(blocks), columns=pd.Index(list(frames)) if not any(
        isinstance(k, tuple) for k in frames) else pd.MultiIndex.from_tuples(list(frames)))


def standard_errors(frames: Mapping[Hashable, pd.DataFrame], value: str = "value", *,
                    n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.Series:
    """The bootstrap standard error of each table's aggregate (:func:`replicates`)."""
    return replicates(frames, value, n_bootstrap=n_bootstrap, seed=seed).std(ddof=1)


def per_user_means(per_set: pd.DataFrame, value: str) -> pd.Series:
    """Each user's mean over her target sets (the unit of the paired significance tests)."""
    return per_set.groupby("user", sort=True)[value].mean()
