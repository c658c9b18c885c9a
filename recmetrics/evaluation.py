"""``rm.evaluate(run, qrels, metrics)``: per-user scores and their aggregate."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import pandas as pd

from .data.qrels import Qrels
from .data.run import Run
from .errors import InputError
from .judged import judge
from .metrics import aggregate as _aggregate, parse
from .metrics.registry import MetricSpec


@dataclass
class Evaluation:
    """Result of :func:`evaluate`: ``per_user`` (index user, one column per metric) and ``aggregate``."""

    per_user: pd.DataFrame
    aggregate: pd.Series
    metadata: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Evaluation({self.metadata.get('run')!r}, users={len(self.per_user)})\n{self.aggregate.to_string()}"


def parse_metrics(metrics: "str | MetricSpec | Iterable[str | MetricSpec]") -> list[MetricSpec]:
    if isinstance(metrics, (str, MetricSpec)):
        metrics = [metrics]
    specs = [parse(m) for m in metrics]
    if not specs:
        raise InputError("no metric requested; pass names like ['P@10', 'nDCG@100']")
    return specs


def score_judged(judged, specs: list[MetricSpec], **context) -> np.ndarray:
    """(n_metrics, n_users) matrix of the metric values of one judged run."""
    return np.stack([s(judged, **context) for s in specs]) if len(judged) else np.zeros((len(specs), 0))


def evaluate(run: Run, qrels: Qrels, metrics, *, users="relevant", aggregate: str = "arithmetic",
             **context) -> Evaluation:
    """Evaluate one run.

    ``users``: ``"relevant"`` (test users with >= 1 relevant item; default), ``"all"`` (every test
    user) or an array of user ids. Users the run has no list for score 0 on every metric.
    ``aggregate``: arithmetic | geometric | harmonic | quadratic.
    """
    if not isinstance(run, Run):
        raise InputError(f"run must be a recmetrics Run, got {type(run).__name__}; see Run.from_frame / read_trec")
    if not isinstance(qrels, Qrels):
        raise InputError(f"qrels must be a recmetrics Qrels, got {type(qrels).__name__}")
    specs = parse_metrics(metrics)
    depth = max([run.depth] + [s.k for s in specs if s.k is not None])
    judged = judge(run, qrels, depth=depth, users=users)
    if len(judged) == 0:
        raise InputError(f"no user to evaluate under users={users!r} (no judged user has a relevant item?)")
    values = score_judged(judged, specs, **context)
    names = [str(s) for s in specs]
    per_user = pd.DataFrame(values.T, index=pd.Index(judged.users, name="user"), columns=names)
    agg = pd.Series(_aggregate(values, aggregate, axis=1), index=names, name=run.name)
    meta = dict(judged.metadata, aggregate=aggregate, users_policy=users if isinstance(users, str) else "given")
    return Evaluation(per_user, agg, meta)
