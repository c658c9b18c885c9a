"""``rm.evaluate(run, qrels, metrics)``: per-user scores and their aggregate."""
from __future__ import annotations

import sys
import warnings
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import numpy as np

from .data.qrels import Qrels
from .data.run import Run
from .errors import InputError, show
from .judged import judge
from .metrics import aggregate as _aggregate, parse
from .metrics.aggregate import MIN_GEO_MEAN
from .metrics.registry import MetricSpec

if TYPE_CHECKING:
    import pandas as pd


class Evaluation:
    """Result of :func:`evaluate`: ``per_user`` (index user, one column per per-user metric) and
    ``aggregate`` (every metric, in the order asked).

    The numbers are kept as numpy (``values``: per-user metrics x users, ``means``); the pandas views
    are built on first use, so the command line never imports pandas. Per-run metrics (item
    coverage, Gini, ...; ``rm.metrics.table()`` column ``scope``) have one value for the whole run:
    ``run_values`` (name -> value), no column in ``per_user`` and no user aggregation (``aggregate``
    shows the value itself)."""

    def __init__(self, values: np.ndarray, users: np.ndarray, names: list[str], means: np.ndarray,
                 metadata: dict | None = None, run_values: dict | None = None, order: list[str] | None = None):
        self.values, self.users, self.names, self.means = values, users, list(names), means
        self.metadata = metadata or {}
        self.run_values = dict(run_values or {})
        self.order = list(order) if order is not None else self.names + list(self.run_values)
        self.judged = None  # the Judged the values were computed from (set by evaluate)

    @cached_property
    def per_user(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.values.T, index=pd.Index(self.users, name="user"), columns=self.names)

    @cached_property
    def aggregate(self) -> pd.Series:
        import pandas as pd

        return pd.Series(self.summary(), index=self.order, name=self.metadata.get("run"), dtype=np.float64)

    def summary(self) -> list[float]:
        """The value of every metric in ``order``: the users' aggregate of a per-user metric, the
        value of a per-run metric."""
        mean = dict(zip(self.names, self.means.tolist()))
        return [self.run_values[n] if n in self.run_values else mean[n] for n in self.order]

    def __repr__(self) -> str:
        return f"Evaluation({self.metadata.get('run')!r}, users={len(self.users)})\n{self.aggregate.to_string()}"


def parse_metrics(metrics: "str | MetricSpec | Iterable[str | MetricSpec]") -> list[MetricSpec]:
    if isinstance(metrics, (str, MetricSpec)):
        metrics = [metrics]
    specs = [parse(m) for m in metrics]
    if not specs:
        raise InputError("no metric requested; pass names like ['P@10', 'nDCG@100']")
    return specs


def score_judged(judged, specs: list[MetricSpec], **context) -> np.ndarray:
    """(n_metrics, n_users) matrix of the metric values of one judged run (per-user metrics only)."""
    per_run = [str(s) for s in specs if s.per_run]
    if per_run:
        raise InputError(f"metric {per_run[0]} is per-run (one value for the whole run, no per-user values); "
                         f"ask it through rm.evaluate(...).run_values, not in a per-user score table")
    if not specs or not len(judged):
        return np.zeros((len(specs), len(judged)))
    values = np.empty((len(specs), len(judged)))
    for row, s in enumerate(specs):   # row by row into one array (np.stack would copy them all again)
        v = s(judged, **context)
        if np.shape(v) != (len(judged),):  # pragma: no cover - a kernel's contract, checked rather than broadcast
            raise InputError(f"metric {s} gave values of shape {np.shape(v)} for {len(judged)} users")
        values[row] = v
        if s.definition.list_only:  # a description of a list that does not exist is undefined, not 0
            values[row, judged.lengths == 0] = np.nan
    return values


def aggregate_users(values: np.ndarray, specs, method: str = "arithmetic", floor=MIN_GEO_MEAN,
                    listed: np.ndarray | None = None) -> np.ndarray:
    """The mean of each metric over the users (rows of ``values``): over the users with a list for a
    list-only metric (ARP, APLT, ACLT; NaN when no user has one), over every user otherwise.
    ``listed`` (boolean per user, optional): False for the users the run has no list for, which the
    rec_eval reading of the geometric mean floors whatever the metric
    (:func:`recmetrics.metrics.aggregate.aggregate`)."""
    out = np.empty(len(specs))
    for row, s in enumerate(specs):
        v, on_list = values[row], listed
        if s.definition.list_only:
            keep = ~np.isnan(v)
            v, on_list = v[keep], (None if listed is None else listed[keep])
            if not len(v):
                out[row] = np.nan
                continue
        out[row] = _aggregate(v, method, floor=floor, metric=s, listed=on_list)
    return out


def _is_frame(obj) -> bool:
    """Whether ``obj`` is a pandas DataFrame (without importing pandas: if it is not imported, it is not one)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def as_run(run) -> Run:
    """A :class:`Run` from a Run, a ``user, item, score[, rank]`` DataFrame, ``{user: {item: score}}``,
    ``{user: [item, ...]}`` (best first) or a file path (TREC run or table)."""
    if isinstance(run, Run):
        return run
    if _is_frame(run):
        from .data.io import check_id_columns

        check_id_columns(run, "run table")
        return Run.from_frame(run, rank_col="rank" if "rank" in run.columns and "score" not in run.columns else None)
    if isinstance(run, dict):
        if all(isinstance(v, dict) for v in run.values()):
            return Run.from_dict(run)
        if all(isinstance(v, (list, tuple, np.ndarray)) for v in run.values()):
            return Run.from_lists(run)
    if isinstance(run, (str, Path)):
        from .data.io import read_run

        return read_run(run)
    raise InputError(f"run must be a recmetrics Run, a DataFrame (user, item, score), a dict {{user: {{item: score}}}} "
                     f"or a file path; got {type(run).__name__}")


def as_qrels(qrels, threshold: float | None = None) -> Qrels:
    """A :class:`Qrels` from a Qrels, a ``user, item, rating`` DataFrame (threshold default 4),
    ``{user: {item: rating}}`` (default 1, as pytrec_eval) or a file path."""
    if isinstance(qrels, Qrels):
        if threshold is not None and threshold != qrels.threshold:
            raise InputError(f"threshold={threshold} given with a Qrels whose threshold is {qrels.threshold}")
        return qrels
    if _is_frame(qrels):
        from .data.io import check_id_columns

        check_id_columns(qrels, "qrels table")
        return Qrels(qrels, threshold=4.0 if threshold is None else threshold)
    if isinstance(qrels, dict):
        return Qrels.from_dict(qrels, threshold=1.0 if threshold is None else threshold)
    if isinstance(qrels, (str, Path)):
        from .data.io import read_qrels

        return read_qrels(qrels, threshold=threshold)
    raise InputError(f"qrels must be a Qrels, a DataFrame (user, item, rating), a dict {{user: {{item: rating}}}} "
                     f"or a file path; got {type(qrels).__name__}")


def check_train_test_overlap(qrels: Qrels, train: pd.DataFrame, users: np.ndarray) -> None:
    """Raise :class:`InputError` when a judged test item of an evaluated user is also one of that user's
    training items: the AllItems universe (catalog minus training items) would then count it wrong
    (a relevant item outside the universe). Ids are compared as strings when the types differ."""
    if not _is_frame(train) or not {"user", "item"} <= set(train.columns) or not len(train):
        return  # the classification kernel reports a malformed train= itself
    test = qrels.to_frame()
    test = test[test.user.isin(users) & (test.rating >= 0)]
    tr = train[["user", "item"]]
    if test.user.dtype != tr.user.dtype or test.item.dtype != tr.item.dtype:
        test = test.astype({"user": str, "item": str})
        tr = tr.astype({"user": str, "item": str})
    both = test.merge(tr.drop_duplicates(), on=["user", "item"])
    if len(both):
        raise InputError(
            f"train/test overlap: test item {show(both['item'].iloc[0])} of user {show(both['user'].iloc[0])} "
            f"(rating {both['rating'].iloc[0]:g}) is also one of the user's training items ({len(both)} such pair(s)); the "
            f"AllItems universe excludes training items, so it would be counted wrong. Split so that no "
            f"(user, item) pair is in both, or use universe=judged")


def _check_aspects_match(judged, aspects, specs) -> None:
    """Warn, as for a run whose items are not judged, when none of the ranked items of the evaluated
    users is in the aspects table: every aspect-based score would be 0 without a word."""
    if not specs or not judged.lengths.sum():
        return
    from .metrics.diversity.aspects import aspect_index

    idx = aspect_index(aspects)
    ranked = judged.items[np.arange(judged.depth) < judged.lengths[:, None]]
    if idx.covered(ranked).any():
        return
    warnings.warn(
        f"run {judged.metadata.get('run')!r}: none of its ranked items is in the aspects table, so "
        f"{', '.join(str(s) for s in specs)} score 0 for every user. Likely cause: the aspects' item ids do not "
        f"match the run's (run items e.g. {_sample(ranked[:3])}, aspect items e.g. {_sample(idx.items[:3])}), "
        f"or the aspects belong to another dataset", stacklevel=3)


def _sample(values) -> list:
    """A few ids as plain Python values (for a message)."""
    return [v.item() if hasattr(v, "item") else v for v in list(values)]


def evaluate(run, qrels, metrics, *, users=None, aggregate: str = "arithmetic",
             threshold: float | None = None, floor: float | None = MIN_GEO_MEAN, **context) -> Evaluation:
    """Evaluate one run.

    ``run``/``qrels``: :class:`Run`/:class:`Qrels`, DataFrames, nested dicts ``{user: {item: value}}``
    (pytrec_eval's layout) or file paths (see :func:`as_run`, :func:`as_qrels`; ``threshold`` applies
    to the last three). Ids are compared as strings when their types differ on the two sides.
    ``users``: ``"relevant"`` (test users with >= 1 relevant item; default), ``"all"`` (every test
    user; trec_eval -c), ``"run"`` (judged users the run has a list for; trec_eval without -c) or an
    array of user ids. Users the run has no list for score 0 on every metric. Unset: ``"relevant"``,
    or ``"all"`` when every metric is an error metric (a rating predictor is judged on every user).
    ``aggregate``: arithmetic | geometric | harmonic | quadratic, or ``geometric(rec_eval)`` (rec_eval's
    reading: a user without a hit enters GF1 and GMRR as log 1, :mod:`recmetrics.metrics.aggregate`);
    ``floor``: the value the geometric and harmonic means raise smaller values to (1e-5, trec_eval's
    gm_map; ``None``: the plain means).
    An empty run is an error; a run none of whose items is judged gets a warning naming the likely cause.
    """
    specs = parse_metrics(metrics)
    if floor is not None and not (isinstance(floor, (int, float, np.number)) and 0 < floor < np.inf):
        raise InputError(f"floor must be a positive finite number or None (the value the geometric and harmonic "
                         f"means raise smaller values to), got floor={floor!r}")
    error = [s.definition.family == "error" for s in specs]
    if users is None:
        users = "all" if all(error) else "relevant"
        if any(error) and not all(error):
            warnings.warn("error metrics evaluated with the ranking metrics' default users='relevant' leave out "
                          "the users without a relevant test item; pass users='all' (or evaluate them apart)",
                          stacklevel=2)
    run = as_run(run)
    qrels = as_qrels(qrels, threshold)
    if len(run) == 0:
        raise InputError(f"run {run.name!r} is empty: it has no user (an empty table or file?)")
    depth = max([run.depth] + [s.k for s in specs if s.k is not None])
    judged = judge(run, qrels, depth=depth, users=users)
    if len(judged) == 0:
        raise InputError(f"no user to evaluate under users={users!r} (no judged user has a relevant item?)")
    if context.get("train") is not None and any(  # the AllItems universe excludes training items
            "train" in s.definition.needs + s.definition.optional and dict(s.params).get("universe", "all") == "all"
            and s.definition.family not in ("coverage", "exposure", "popularity", "novelty") for s in specs):
        check_train_test_overlap(judged.qrels, context["train"], judged.users)
    if context.get("aspects") is not None:
        _check_aspects_match(judged, context["aspects"], [s for s in specs if "aspects" in s.definition.needs
                                                          + s.definition.needs_any])
    per_user = [s for s in specs if not s.per_run]
    values = score_judged(judged, per_user, **context)
    run_values = {str(s): float(s(judged, **context)) for s in specs if s.per_run}
    meta = dict(judged.metadata, aggregate=aggregate, floor=floor, users_policy=users if isinstance(users, str) else "given")
    # listed: rec_eval's reading of the geometric mean floors the users the run has no list for, whatever the metric
    means = aggregate_users(values, per_user, aggregate, floor, listed=judged.lengths > 0) if per_user else np.zeros(0)
    res = Evaluation(values, judged.users, [str(s) for s in per_user], means, meta, run_values,
                     order=[str(s) for s in specs])
    res.judged = judged
    return res
