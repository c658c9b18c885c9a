r"""The users' aspect weights γ (Eq. 9 of Parapar & Radlinski, RecSys 2021).

The user's interest in aspect :math:`a_\phi` is the maximum-likelihood estimate over a profile
:math:`I_u`: the rating mass of the items showing the aspect over the rating mass of all aspects,

.. math::
   \gamma^u_\phi = \frac{\sum_{i\in I_u,\, a_\phi\in i} r_{u,i}}
                        {\sum_\varphi \sum_{i\in I_u,\, a_\varphi\in i} r_{u,i}}.

Conventions (documented and tested):

* **Profile** (``profile=``): ``"train"`` (default: Eq. 9 over the training ratings, the user
  profile :math:`I_u` of the paper's Sec. 3), ``"test"`` (Eq. 9 over the user's test ratings,
  the ground truth used in the paper's Sec. 5 experiments) or ``"uniform"`` (equal weight on
  every aspect of the user's relevant test items, ndeval's convention for intent-aware metrics).
  ``train=`` is an optional context of the registry: it is read only under ``profile="train"``,
  which raises :class:`~recmetrics.errors.InputError` without it.
* **Users with no rated aspect** in their profile (no training rating on an item with an aspect,
  or only zero ratings): :math:`\gamma` is undefined; it falls back to the uniform
  :math:`1/|\mathcal A|` over every aspect label of ``aspects`` (Clarke et al.'s constant
  :math:`\gamma`) and a :class:`UserWarning` names the users.
"""
from __future__ import annotations

import warnings

import numpy as np

from ...errors import InputError, require_columns, show
from .aspects import aspect_index
from .cache import _LRU
from .judgments import Judgments, aspects_rated_at_least, judgments_of
from .params import _check_profile

_TEST_WEIGHTS = _LRU(16)


def mle_weights(rows: np.ndarray, ratings: np.ndarray, member: np.ndarray, n: int) -> np.ndarray:
    """Eq. 9: per-row rating mass of each aspect, normalised over aspects (NaN when undefined)."""
    c = member.shape[1]
    sums = np.zeros((n, c))
    if len(rows):
        for a in range(c):  # c is small (genres): one bincount per aspect
            sel = member[:, a]
            if sel.any():
                sums[:, a] = np.bincount(rows[sel], weights=ratings[sel], minlength=n)
    total = sums.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(total > 0, sums / np.where(total > 0, total, 1.0), np.nan)
    return w


def _test_weights(judgments: Judgments, n: int) -> np.ndarray:
    """Eq. 9 over the judgments (NaN rows: no rated aspect), shared by every run whose judgments are
    the same object (:func:`~.judgments.judgments_of` hands one to every run judged against one Qrels
    for one set of users); :func:`_fallback` copies before filling a NaN row, so it stays as computed."""
    key = (id(judgments), int(n))
    hit = _TEST_WEIGHTS.get(key)
    if hit is None:
        hit = _TEST_WEIGHTS.put(key, judgments, mle_weights(judgments.row, judgments.ratings, judgments.member, n))
    return hit


def _fallback(w: np.ndarray, users, where: str) -> np.ndarray:
    bad = np.isnan(w).any(axis=1)
    if bad.any():
        c = w.shape[1]
        example = ", ".join(show(u) for u in np.asarray(users)[bad][:3])
        warnings.warn(
            f"{int(bad.sum())} user(s) have no rated item with an aspect in their {where} "
            f"(e.g. {example}); their aspect weights gamma fall back to the uniform 1/{c} "
            f"over every aspect", UserWarning, stacklevel=4)
        w = w.copy()
        w[bad] = 1.0 / c if c else 0.0
    return w


def profile_weights(users, aspects, profile: str = "train", *, train=None,
                    judgments: Judgments | None = None, threshold: float | None = None) -> np.ndarray:
    r"""Aspect weights :math:`\gamma^u_\phi` (Eq. 9) of ``users``, shape ``(n_users, n_aspects)``.

    ``profile="train"`` (default) reads ``train`` (DataFrame ``user, item, rating``); ``"test"``
    and ``"uniform"`` read ``judgments`` (``"uniform"``: equal weights on the aspects of the
    user's judged items rated >= ``threshold``). Users whose profile has no rated aspect fall
    back to uniform weights over all aspects, with a :class:`UserWarning`. Columns follow
    ``aspect_index(aspects).labels``.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [3.0, 1.0]})
    >>> profile_weights([1], {"a": ("x",), "b": ("x", "y")}, train=train).tolist()   # x: 4/5, y: 1/5
    [[0.8, 0.2]]
    """
    import pandas as pd

    profile = _check_profile(profile, "aspect weights")
    idx = aspect_index(aspects)
    n, c = len(users), idx.n_aspects
    if c == 0:
        return np.zeros((n, 0))
    if profile == "train":
        if not isinstance(train, pd.DataFrame):
            raise InputError(f"profile='train' (the default: aspect weights from each user's training ratings, "
                             f"Eq. 9) needs the training ratings as a DataFrame (user, item, rating), got "
                             f"{type(train).__name__}: pass train= (the command line: --train FILE), or choose "
                             f"profile='test' or 'uniform'")
        require_columns(train, ("user", "item", "rating"), "train")
        rows = pd.Index(users).get_indexer(train["user"].to_numpy())
        keep = rows >= 0
        ratings = pd.to_numeric(train["rating"], errors="coerce").to_numpy(dtype=np.float64)[keep]
        if np.isnan(ratings).any() or (ratings < 0).any():
            raise InputError("train: ratings must be non-negative numbers")
        member = idx.lookup(train["item"].to_numpy()[keep]).reshape(-1, c)
        return _fallback(mle_weights(rows[keep], ratings, member, n), users, "training profile")
    if judgments is None:
        raise InputError(f"profile={profile!r} needs the users' judgments")
    if profile == "test":
        return _fallback(_test_weights(judgments, n), users, "test judgments")
    rel = aspects_rated_at_least(judgments, threshold).astype(np.float64)
    cnt = rel.sum(axis=1, keepdims=True)
    w = np.where(cnt > 0, rel / np.where(cnt > 0, cnt, 1.0), np.nan)
    return _fallback(w, users, "relevant test items")


def aspect_weights(judged, aspects, train=None, profile: str = "train") -> np.ndarray:
    """:func:`profile_weights` of ``judged.users`` (cached on the Judged).

    ``profile`` as in :func:`profile_weights` (default ``"train"``, which reads ``train``); the
    test and uniform profiles read the judgments attached to ``judged``.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b", "c"], "rating": [5.0, 2.0, 4.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("y",), "c": ("x", "y")}
    >>> aspect_weights(j, aspects, profile="test").tolist()      # x: (5+4)/15, y: (2+4)/15
    [[0.6, 0.4]]
    >>> aspect_weights(j, aspects, profile="uniform").tolist()   # relevant items a, c show x and y
    [[0.5, 0.5]]
    """
    profile = _check_profile(profile, "aspect weights")
    idx = aspect_index(aspects)
    cache = judged.__dict__.setdefault("_diversity_cache", {})
    key = ("weights", id(idx), profile, id(train) if profile == "train" else None)
    if key in cache:
        return cache[key][1]
    jd = judgments_of(judged, idx) if profile != "train" else None
    w = profile_weights(judged.users, idx, profile, train=train, judgments=jd, threshold=judged.threshold)
    cache[key] = ((idx, train), w)
    return w
