"""The folds runs are computed on: the ratings of a study, split into ``(train, test)`` folds, and
the parameters that identify the split in the run cache keys.

:func:`ratings_frame` accepts a ratings DataFrame, a :class:`~recmetrics.data.datasets.Dataset`
or a dataset name; :func:`make_folds` splits it with :func:`recmetrics.data.splits.split`
(k-fold by default) or takes ready-made folds, and returns the split parameters with the
:func:`~recmetrics.runs.cache.ratings_hash` of the data, so a cached run is found again only for
the same data, split method, parameters and seed.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .cache import ratings_hash

__all__ = ["ratings_frame", "make_folds", "fold_qrels", "repeat_seed"]


def ratings_frame(ratings: Any) -> pd.DataFrame:
    """The ratings DataFrame of ``ratings``: a DataFrame (returned as is), a
    :class:`~recmetrics.data.datasets.Dataset` (its ``.ratings``) or a dataset name (loaded with
    :func:`recmetrics.datasets.load <recmetrics.data.datasets.load>`). Anything else raises
    :class:`~recmetrics.errors.InputError`.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.runs.folds import ratings_frame
    >>> r = pd.DataFrame({"user": [1], "item": [2], "rating": [5.0]})
    >>> ratings_frame(r) is r
    True
    >>> ratings_frame(42)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    recmetrics.errors.InputError: expected a ratings DataFrame (user, item, rating[, timestamp]), ... got int
    """
    if isinstance(ratings, str):
        from ..data import datasets

        ratings = datasets.load(ratings)
    if not isinstance(ratings, pd.DataFrame) and isinstance(getattr(ratings, "ratings", None), pd.DataFrame):
        ratings = ratings.ratings
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"expected a ratings DataFrame (user, item, rating[, timestamp]), a Dataset or a "
                         f"dataset name, got {type(ratings).__name__}")
    return ratings


def repeat_seed(seed: int, repeat: int) -> int:
    """The split seed of repetition ``repeat`` of a repeated split: ``seed`` itself for the first
    (a split repeated once is the split), then a seed drawn from ``SeedSequence([seed, repeat])`` —
    independent of every other seed's repetitions, so the builds at seeds 0, 1 and 2 never share one.

    >>> repeat_seed(7, 0), repeat_seed(7, 1) == repeat_seed(7, 1), repeat_seed(7, 1) == repeat_seed(8, 0)
    (7, True, False)
    """
    if repeat == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(repeat)]).generate_state(1, np.uint32)[0])


def make_folds(ratings, split: Any = "kfold", *, k: int = 5, seed: Any = 0, test_size: float = 0.2,
               repeats: int = 1, **split_kw) -> tuple[list[tuple[pd.DataFrame, pd.DataFrame]], dict]:
    """The ``(train, test)`` folds and the parameters that identify them (for cache keys).

    Parameters
    ----------
    ratings : DataFrame, Dataset or dataset name (see :func:`ratings_frame`); ignored when
        ``split`` is a list of folds
    split : ``"kfold"`` (default; ``k`` folds, random over ratings, Valcarce et al. 2020 use 5),
        ``"holdout"`` (one fold, ``test_size`` of each user's ratings), ``"temporal"`` (one fold;
        pass ``cut=``/``cut_quantile=``/``last_n=``) or a ready list of ``(train, test)``
        DataFrames. ``"k-fold"``/``"cv"`` mean ``"kfold"``. See :mod:`recmetrics.data.splits`.
    k, seed, test_size, **split_kw : passed to the splitter. ``seed`` must be an integer (a
        ``numpy.random.Generator`` cannot key the run cache).
    repeats : how many independent partitions of the data the split is drawn as (repeated
        cross-validation or repeated holdout; Bouckaert & Frank 2004): the folds of every repetition
        follow one another (``repeats * k`` folds for k-fold), repetition ``r`` drawn with
        :func:`repeat_seed` ``(seed, r)``. A statistic then averages over several partitions, so
        less of its spread is which ratings one partition holds out. 1 (the default) is the plain split, with the same
        folds and cache keys as without the argument. A user's units in different repetitions share
        test ratings: a test that takes ``(fold, user)`` units as independent (discriminative power
        under ``pool="concat"``) gains power it does not have, so pool ``"mean"`` (one unit per
        user) with repetitions. Measured on the quick book of movielens-small at split seeds 0-5
        (chapters 5-7 drawn 3 times, ``benchmarks/split_stability.py``): 10.5 of 93 verdicts change
        between three seeds on average, against 10.8 with one draw (no steadier), and DP under
        ``concat`` sinks to the Monte Carlo floor; the profiles draw once, as the papers do.

    Returns
    -------
    ``(folds, params)``: ``params`` holds ``method``, the splitter's parameters and ``data``, the
    :func:`~recmetrics.runs.cache.ratings_hash` of the ratings; for given folds, ``method`` is
    ``"given"`` and ``folds`` the hashes of each fold's train and test parts.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.runs import make_folds
    >>> r = pd.DataFrame({"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 3, 1, 2, 4], "rating": 5.0})
    >>> folds, params = make_folds(r, k=3, seed=0)
    >>> len(folds), sum(len(test) for _, test in folds), params["method"], params["k"]
    (3, 6, 'kfold', 3)
    """
    from ..data import splits

    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise InputError(f"repeats must be a positive integer (how many partitions the split is drawn as), "
                         f"got {repeats!r}")
    if isinstance(split, (list, tuple)):
        if repeats != 1:
            raise InputError(f"repeats={repeats} draws the split again, but the folds are given: repeat them "
                             f"in the list instead")
        folds = list(split)
        if not folds or not all(isinstance(f, (list, tuple)) and len(f) == 2 for f in folds):
            raise InputError("split given as folds must be a non-empty list of (train, test) DataFrames")
        params = {"method": "given", "folds": [[ratings_hash(tr), ratings_hash(te)] for tr, te in folds]}
        return folds, params
    if not isinstance(split, str):
        raise InputError(f"split must be 'kfold', 'holdout', 'temporal' or a list of (train, test) folds, "
                         f"got {type(split).__name__}")
    ratings = ratings_frame(ratings)
    method = splits.method_name(split)
    if method == "kfold":
        params = {"k": k, "seed": seed, **split_kw}
    elif method == "holdout":
        params = {"test_size": test_size, "seed": seed, **split_kw}
    else:
        params = dict(split_kw)
    if isinstance(seed, np.random.Generator):
        raise InputError("run_systems needs an integer seed (a Generator cannot key the run cache)")
    if repeats > 1 and "seed" not in params:
        raise InputError(f"repeats={repeats}: a {method} split draws nothing, its repetitions would be the same folds")
    folds = []
    for r in range(int(repeats)):
        out = splits.split(ratings, method, **({**params, "seed": repeat_seed(seed, r)} if r else params))
        folds += out if isinstance(out, list) else [out]
    if repeats > 1:
        params["repeats"] = int(repeats)
    return folds, {"method": method, **params, "data": ratings_hash(ratings)}


def fold_qrels(test, threshold: float = 4.0):
    """The judgments of a fold's test part: a ratings DataFrame becomes a
    :class:`~recmetrics.data.qrels.Qrels` relevant at ``rating >= threshold``; a ``Qrels``
    (judgments read from a qrels file) is returned as is when it has that threshold, else
    re-thresholded with its ``max_rating`` and its handling of negative labels kept.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.runs.folds import fold_qrels
    >>> q = fold_qrels(pd.DataFrame({"user": [1, 1], "item": [5, 6], "rating": [4.0, 2.0]}), 4)
    >>> fold_qrels(q, 4) is q, fold_qrels(q, 2).n_relevant.tolist()
    (True, [2])
    """
    from ..data.qrels import Qrels

    if isinstance(test, Qrels):
        if test.threshold == float(threshold):
            return test
        return Qrels(test.to_frame(), threshold, test.max_rating, negative=test.negative)
    return Qrels(test, threshold=threshold)
