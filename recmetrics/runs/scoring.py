"""Scoring many runs: per-user scores of every ``(system, fold)`` run in one long table, the
long-tail variant of it, and its summary table.

* :func:`evaluate_systems` scores every run against its fold's test judgments and returns one
  long table ``system, fold, user, metric, value`` (one row per evaluated user and metric);
* :func:`tail_folds` / :func:`evaluate_tail` do the same on judgments restricted to long-tail
  items (long-tail recall);
* :func:`summarise` averages the long table (users within a fold, then folds) into a
  system x metric table.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.qrels import Qrels
from ..errors import InputError
from .folds import fold_qrels

__all__ = ["evaluate_systems", "tail_folds", "evaluate_tail", "summarise"]


def evaluate_systems(runs, folds=None, metrics=("nDCG@100", "P@100"), threshold: float = 4.0,
                     users: Any = "relevant", **context) -> pd.DataFrame:
    """Per-user scores of every run: a long DataFrame ``system, fold, user, metric, value``.

    ``runs`` is a :class:`Runs` or a mapping ``(system, fold) -> Run``; ``folds`` the list of
    ``(train, test)`` (taken from ``runs.folds`` when omitted). Each fold's judgments are its test
    ratings with relevance ``rating >= threshold`` (default 4). Users follow
    :func:`recmetrics.evaluate`'s policy (``users="relevant"``, the default: test users with a
    relevant item; a user without a list scores 0); ``**context`` (``aspects=``, ``train=``, ...)
    goes to :func:`recmetrics.evaluate` for the metrics that need it. ``metrics`` are names such as
    ``"nDCG@100"`` (see :func:`recmetrics.metrics.parse`).

    Examples
    --------
    >>> from recmetrics.data.simulate import simulate
    >>> from recmetrics.runs import evaluate_systems, run_systems
    >>> runs = run_systems(simulate(40, 60, 600, seed=0), ["Pop", "Random"], k=2, n=10, cache=False,
    ...                    progress=False)
    >>> scores = evaluate_systems(runs, metrics=["P@10", "nDCG@10"])
    >>> scores.columns.tolist()
    ['system', 'fold', 'user', 'metric', 'value']
    >>> sorted(set(scores.metric)), sorted(set(scores.fold))
    (['P@10', 'nDCG@10'], [0, 1])
    """
    from ..evaluation import evaluate, parse_metrics

    if folds is None:
        folds = getattr(runs, "folds", None)
        if folds is None:
            raise InputError("evaluate_systems needs the folds (list of (train, test)) the runs were made on")
    specs = parse_metrics(metrics)
    qrels: dict[int, Qrels] = {}
    parts = []
    for (system, fold), run in runs.items():
        if not (isinstance(fold, (int, np.integer)) and 0 <= fold < len(folds)):
            raise InputError(f"run of {system!r} is for fold {fold!r}, but only {len(folds)} folds were given")
        if fold not in qrels:
            qrels[fold] = fold_qrels(folds[fold][1], threshold)
        per_user = evaluate(run, qrels[fold], specs, users=users, **context).per_user
        long = per_user.reset_index().melt(id_vars="user", var_name="metric", value_name="value")
        long.insert(0, "fold", int(fold))
        long.insert(0, "system", system)
        parts.append(long)
    if not parts:
        return pd.DataFrame(columns=["system", "fold", "user", "metric", "value"])
    return pd.concat(parts, ignore_index=True)


def tail_folds(folds, head_share: float = 0.2) -> list:
    """The folds with each test set restricted to long-tail items: the items outside the
    ``head_share`` most rated items of the fold's training data (ties at the boundary stay in
    the head). Recall on these judgments is a system's long-tail recall (e.g. HT, whose
    hitting-time ranking favours rare items, Yin et al. 2012, one of the 21 systems of
    Valcarce et al. 2020 §5).

    The head of a fold is ``{i : count(i) >= count(i_h)}`` where items are sorted by their number
    of training ratings and ``i_h`` is the ``ceil(head_share * n_items)``-th; the training parts
    are returned unchanged. ``head_share`` is in (0, 1), default 0.2.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.runs import tail_folds
    >>> train = pd.DataFrame({"user": [0, 1, 2, 0, 1, 3], "item": [1, 1, 1, 2, 2, 3], "rating": 5.0})
    >>> test = pd.DataFrame({"user": [3, 2, 0], "item": [1, 2, 3], "rating": 5.0})
    >>> (tr, te), = tail_folds([(train, test)], head_share=0.2)   # 3 items: item 1 is the head
    >>> te.item.tolist()
    [2, 3]
    """
    if not 0 < head_share < 1:
        raise InputError(f"head_share must be in (0, 1), got {head_share!r}")
    out = []
    for train, test in folds:
        counts = train.groupby("item").size().sort_values(ascending=False, kind="stable")
        n_head = int(np.ceil(head_share * len(counts)))
        head = set(counts.index[counts >= counts.iloc[n_head - 1]]) if n_head else set()
        out.append((train, test[~test.item.isin(head)]))
    return out


def evaluate_tail(runs, head_share: float = 0.2, metrics=("Recall@100",), **kw) -> pd.DataFrame:
    """:func:`evaluate_systems` on :func:`tail_folds`: each system's long-tail scores. A system that
    recommends only head items judges nothing on a tail fold; that is the measurement (it scores 0),
    not the mismatched ids the "none of its items is a judged item" warning is for, so that warning
    is not raised here; nor is "user(s) have no judgments and are ignored" (or "none of its users is judged"): the users whose test
    items are all head items have no tail judgment, and tail recall is undefined for them.
    ``runs`` must be a :class:`~recmetrics.runs.systems.Runs` (it needs ``runs.folds``);
    ``metrics`` default ``("Recall@100",)``; ``**kw`` go to :func:`evaluate_systems`.

    Examples
    --------
    >>> from recmetrics.data.simulate import simulate
    >>> from recmetrics.runs import evaluate_tail, run_systems, summarise
    >>> runs = run_systems(simulate(40, 60, 600, seed=0), ["Pop", "Random"], k=2, n=10, cache=False,
    ...                    progress=False)
    >>> summarise(evaluate_tail(runs, 0.2, ["Recall@10"])).round(3)  # doctest: +NORMALIZE_WHITESPACE
    metric  Recall@10
    system
    Pop         0.093
    Random      0.196
    """
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"run .*: none of its items is a judged item")
        warnings.filterwarnings("ignore", message=r"run .*: \d+ user\(s\) have no judgments and are ignored")
        warnings.filterwarnings("ignore", message=r"run .*: none of its \d+ user\(s\) is judged")
        return evaluate_systems(runs, tail_folds(runs.folds, head_share), metrics, **kw)


def summarise(scores: pd.DataFrame, statistic: str = "mean") -> pd.DataFrame:
    """System x metric table from :func:`evaluate_systems`' long table: the per-fold mean over
    users, then the mean over folds (``statistic="std"`` gives the spread over folds). Systems
    keep their order of appearance.

    ``table[s, m] = mean_f mean_{u in fold f} value(s, f, u, m)``: every fold weighs the same
    whatever its number of users (the usual report of k-fold cross-validation, Valcarce et al.
    2020 §5); the standard deviation over folds is pandas' (``ddof=1``). ``statistic`` is
    ``"mean"`` (default) or ``"std"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.runs import summarise
    >>> scores = pd.DataFrame({"system": ["A"] * 3 + ["B"] * 3, "fold": [0, 0, 1] * 2, "user": [1, 2, 1] * 2,
    ...                        "metric": "P@10", "value": [0.2, 0.4, 0.6, 0.1, 0.1, 0.3]})
    >>> summarise(scores).round(3)  # doctest: +NORMALIZE_WHITESPACE
    metric  P@10
    system
    A       0.45
    B       0.20
    """
    if statistic not in ("mean", "std"):
        raise InputError(f"statistic must be 'mean' or 'std', got {statistic!r}")
    per_fold = scores.groupby(["system", "fold", "metric"], sort=False)["value"].mean()
    table = per_fold.groupby(["system", "metric"], sort=False).agg(statistic).unstack("metric")
    metrics = list(dict.fromkeys(scores["metric"]))
    return table.reindex(index=list(dict.fromkeys(scores["system"])), columns=metrics)
