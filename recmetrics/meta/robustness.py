"""Robustness of metrics to incomplete judgments (paper 000 §4.2; paper 003 §4.2 for sparsity).

A metric is robust when the ranking of systems it gives on a reduced test set stays close (in
Kendall's τ) to the ranking on the full test set. Five scenarios reduce each fold's test set:

* ``ratings``: a random share of the test ratings is kept (000 §4.2.1, "rating sparsity");
* ``random-items``: a random share of the test *items* keeps all its ratings (000 §4.2.2);
* ``popular-items``: the most popular test items (by number of test ratings) are removed until
  the given share of items is left (000 §4.2.2);
* ``random-users``: a random share of the test users keeps all its ratings (000 §4.2.3);
* ``large-users``: the users with the largest profiles (ratings in the whole dataset) are removed
  until the given share of users is left (000 §4.2.3).

Sizes are shares of ratings, items or users (the paper's grid :data:`PAPER_SIZES`, 100% down to
1%), ``n_samples`` seeded samples each (50 in the paper). The deterministic scenarios
(popular-items, large-users) draw one sample per size: only ties are random.

Runs are fixed: each run is judged once (:meth:`recmetrics.study.Study.judged`) and a reduced
test set is a *mask over its judged positions* (``Judged.hits``) plus the per-user totals and
ideal DCG of the reduced judgments; recommenders are never re-run and lists never re-judged.
Users left without a relevant judgment drop out (the ``"relevant"`` user policy), for every
system alike, so systems stay paired. Folds are pooled as in ``Study.scores(pool="concat")``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import checks
from ..data.qrels import Qrels
from ..errors import InputError, unknown_name
from ..judged import Hits, Judged
from .agreement import kendall_tau

__all__ = ["SCENARIOS", "PAPER_SIZES", "QUICK_SIZES", "robustness_study", "cutoff_robustness", "Robustness",
           "mask_judged", "check_sizes"]

SCENARIOS = ("ratings", "random-items", "popular-items", "random-users", "large-users")
#: 100% down to 1% (000 §4.2: "test sizes starting from 100 to 1%"; the figures' x axes)
PAPER_SIZES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01)
QUICK_SIZES = (1.0, 0.5, 0.2, 0.05)
_DETERMINISTIC = {"popular-items", "large-users"}


def check_sizes(sizes) -> tuple[float, ...]:
    """Validate test sizes: shares in (0, 1]."""
    out = tuple(float(s) for s in np.atleast_1d(np.asarray(sizes, dtype=np.float64)))
    if not out:
        raise InputError("give at least one test size")
    bad = [s for s in out if not (0.0 < s <= 1.0)]
    if bad:
        raise InputError(f"test size {bad[0]!r} is outside (0, 1]; sizes are shares of the test set (1.0 = all)")
    return out


def _scenario(name: str) -> str:
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    if key not in SCENARIOS:
        raise unknown_name("incompleteness scenario", str(name), SCENARIOS)
    return key


class _Fold:
    """One fold's judgments in storage order, with what the scenarios sample from."""

    def __init__(self, qrels: Qrels, profile: pd.Series | None):
        self.qrels = qrels
        self.frame = qrels.to_frame()
        self.ucodes = qrels.user_index.get_indexer(self.frame["user"].to_numpy())
        self.icodes = qrels.item_index.get_indexer(self.frame["item"].to_numpy())
        self.keys = self.ucodes.astype(np.int64) * len(qrels.item_index) + self.icodes
        self.item_pop = np.bincount(self.icodes, minlength=len(qrels.item_index))
        users = qrels.user_index.to_numpy()
        prof = profile.reindex(users).fillna(0).to_numpy() if profile is not None else None
        self.user_size = prof if prof is not None else np.bincount(self.ucodes, minlength=len(users))

    def keep(self, scenario: str, size: float, rng: np.random.Generator) -> np.ndarray:
        n = len(self.frame)
        if scenario == "ratings":
            keep = np.zeros(n, dtype=bool)
            keep[rng.choice(n, size=max(1, int(round(size * n))), replace=False)] = True
            return keep
        by_item = scenario.endswith("items")
        codes, count = (self.icodes, len(self.item_pop)) if by_item else (self.ucodes, len(self.user_size))
        k = max(1, int(round(size * count)))
        if scenario.startswith("random"):
            chosen = rng.choice(count, size=k, replace=False)
        else:  # remove the largest first: keep the k smallest (random order among ties)
            weight = self.item_pop if by_item else self.user_size
            order = np.lexsort((rng.random(count), weight))
            chosen = order[:k]
        sel = np.zeros(count, dtype=bool)
        sel[chosen] = True
        return sel[codes]


def _subset_qrels(qrels: Qrels, keep: np.ndarray) -> Qrels:
    """The judgments of ``qrels`` where ``keep`` (storage order, as :meth:`Qrels.to_frame`), without
    re-validating or re-sorting: a subset of sorted storage stays sorted, and the user/item indices
    are kept (a user left without judgments has zero counts). Equal, metric for metric, to
    ``Qrels(qrels.to_frame()[keep], ...)`` (tested); ~10x cheaper at ML-1M scale."""
    out = Qrels.__new__(Qrels)
    out.threshold, out.max_rating = qrels.threshold, qrels.max_rating
    out.user_index, out.item_index = qrels.user_index, qrels.item_index
    out._ucodes, out._icodes = qrels._ucodes[keep], qrels._icodes[keep]
    out._ratings, out._keys = qrels._ratings[keep], qrels._keys[keep]
    order = qrels._desc_order  # the parent's within-user descending order, restricted to the subset
    out.__dict__["_desc"] = qrels._ratings[order[keep[order]]]
    return out


def _hit_sources(j: Judged, fold: _Fold) -> np.ndarray:
    """Index (in ``fold.frame``) of the judgment behind each judged position of ``j``."""
    rows, cols = j.hits.rows, j.hits.cols
    items = j.run.items[j.run_rows[rows], cols]
    u = fold.qrels.user_index.get_indexer(j.users[rows])
    i = fold.qrels.item_index.get_indexer(items)
    keys = u.astype(np.int64) * len(fold.qrels.item_index) + i
    pos = np.searchsorted(fold.keys, keys)
    if len(pos) and not (fold.keys[np.minimum(pos, len(fold.keys) - 1)] == keys).all():  # pragma: no cover
        raise InputError("a judged position has no judgment in the fold's qrels (judged against other qrels?)")
    return pos


def mask_judged(j: Judged, hit_keep: np.ndarray, qrels: Qrels, users: np.ndarray | None = None) -> Judged:
    """``j`` re-judged against ``qrels`` (a subset of its judgments): keep the judged positions where
    ``hit_keep``, restrict to ``users`` (rows of ``j``; default: users with a relevant judgment left)
    and take per-user totals from ``qrels``. No list is looked up again."""
    u = qrels.user_index.get_indexer(j.users)  # once: the totals below are looked up by code
    known = u >= 0
    n_rel = np.where(known, qrels.n_relevant[u], 0)
    n_nonrel = np.where(known, qrels.n_nonrelevant[u], 0)
    rows_kept = np.flatnonzero(n_rel > 0) if users is None else np.asarray(users)
    new_row = np.full(len(j), -1)
    new_row[rows_kept] = np.arange(len(rows_kept))
    sel = np.flatnonzero(hit_keep & (new_row[j.hits.rows] >= 0))
    hits = Hits(new_row.take(j.hits.rows.take(sel)), j.hits.cols.take(sel), j.hits.vals.take(sel))
    users_kept = j.users[rows_kept]
    return Judged(users=users_kept, hits=hits, lengths=j.lengths[rows_kept], in_run=j.in_run[rows_kept],
                  n_rel=n_rel[rows_kept], n_nonrel=n_nonrel[rows_kept],
                  depth=j.depth, threshold=j.threshold, max_rating=j.max_rating, qrels=qrels, run=j.run,
                  run_rows=j.run_rows[rows_kept], metadata={**j.metadata, "masked": True})


class _Context:
    """What a sample needs (picklable): folds, and per fold every system's judged run stacked into
    one :class:`Judged` (:func:`recmetrics.judged.stack`) with the judgment behind each judged
    position, so one mask and one scoring call per fold serve all systems."""

    def __init__(self, study, specs, profile):
        from ..judged import stack

        self.systems = list(study.systems)
        self.specs = specs
        self.folds = [_Fold(q, profile) for q in study.qrels]
        self.stacked, self.sources, self.row_system, self.row_ucodes = [], [], [], []
        for f, fold in enumerate(self.folds):
            judged = [study.judged(s, f) for s in self.systems]
            self.stacked.append(stack(judged))
            self.sources.append(np.concatenate([_hit_sources(j, fold) for j in judged]))
            self.row_system.append(np.repeat(np.arange(len(judged)), [len(j) for j in judged]))
            self.row_ucodes.append(fold.qrels.user_index.get_indexer(self.stacked[-1].users))
        self.users_shortcut = True
        self._full: list | None = None

    @property
    def full_scores(self) -> list:
        """Per fold, the ``(n_specs, stacked rows)`` scores on the full test set (computed once)."""
        from ..evaluation import score_judged

        if self._full is None:
            self._full = [score_judged(j, self.specs) for j in self.stacked]
        return self._full

    def sample(self, scenario: str, size: float, seed: int, aggregate: str) -> np.ndarray:
        """(n_specs, n_systems) aggregated values on one reduced test set (NaN if nobody is left)."""
        from ..evaluation import score_judged
        from ..metrics.aggregate import aggregate as _agg

        rng = np.random.default_rng(seed)
        values, systems = [], []
        for f, fold in enumerate(self.folds):
            keep = np.ones(len(fold.frame), dtype=bool) if size >= 1.0 else fold.keep(scenario, size, rng)
            if not keep.any():
                continue
            if (size >= 1.0 or scenario.endswith("users")) and self.users_shortcut:
                # removing a user's judgments changes no other user's scores: take the kept users'
                # full-test-set scores (equal to re-scoring the mask; tested)
                rows = np.isin(self.row_ucodes[f], np.unique(fold.ucodes[keep]))
                values.append(self.full_scores[f][:, rows])
                systems.append(self.row_system[f][rows])
                continue
            q = _subset_qrels(fold.qrels, keep)
            j = self.stacked[f]
            rows = np.flatnonzero(q.n_relevant[self.row_ucodes[f]] > 0)  # q shares the fold's user codes
            values.append(score_judged(mask_judged(j, keep[self.sources[f]], q, rows), self.specs))
            systems.append(self.row_system[f][rows])
        out = np.full((len(self.specs), len(self.systems)), np.nan)
        if values:
            values, systems = np.concatenate(values, axis=1), np.concatenate(systems)
            order = np.argsort(systems, kind="stable")
            bounds = np.searchsorted(systems[order], np.arange(len(self.systems) + 1))
            for c in range(len(self.systems)):
                if bounds[c + 1] > bounds[c]:
                    out[:, c] = _agg(values[:, order[bounds[c]:bounds[c + 1]]], aggregate, axis=1)
        return out


def _task(ctx: _Context, scenario: str, size: float, seed: int, aggregate: str) -> np.ndarray:
    return ctx.sample(scenario, size, seed, aggregate)


@dataclass
class Robustness:
    """Result of :func:`robustness_study`: ``samples`` (one row per scenario, size, sample, metric:
    ``tau`` against the full test set and ``mean_value``, the mean over systems of the aggregated
    metric) and :meth:`summary` (mean and spread over samples)."""

    samples: pd.DataFrame
    full: pd.DataFrame     # systems x metrics on the full test sets

    def summary(self) -> pd.DataFrame:
        g = self.samples.groupby(["scenario", "size", "metric"], sort=False)
        out = g.agg(tau=("tau", "mean"), tau_std=("tau", "std"), tau_min=("tau", "min"),
                    mean_value=("mean_value", "mean"), samples=("tau", "size"))
        return out.reset_index()

    def curve(self, scenario: str, value: str = "tau") -> pd.DataFrame:
        """Sizes x metrics table of the mean ``tau`` (or ``mean_value``) of one scenario."""
        s = self.summary()
        s = s[s["scenario"] == _scenario(scenario)]
        return s.pivot(index="size", columns="metric", values=value).sort_index(ascending=False)

    def area(self, scenario: str | None = None) -> pd.Series:
        """Mean τ over the sizes (below 100%) per metric (per scenario when ``scenario`` is None): one
        robustness score per metric, larger is more robust."""
        s = self.summary()
        s = s[s["size"] < 1.0]
        if scenario is not None:
            return s[s["scenario"] == _scenario(scenario)].groupby("metric", sort=False)["tau"].mean()
        return s.groupby(["scenario", "metric"], sort=False)["tau"].mean()

    def area_se(self, scenario: str | None = None) -> pd.Series:
        """Monte Carlo standard error of :meth:`area`: ``sqrt(sum_sizes std² / samples) / n_sizes``
        (samples are independent across sizes). NaN for the deterministic scenarios (one sample)."""
        s = self.summary()
        s = s[s["size"] < 1.0].assign(var=lambda d: d["tau_std"] ** 2 / d["samples"])
        keys = ["metric"] if scenario is not None else ["scenario", "metric"]
        if scenario is not None:
            s = s[s["scenario"] == _scenario(scenario)]
        g = s.groupby(keys, sort=False)
        return np.sqrt(g["var"].sum(min_count=1)) / g["var"].size()


def robustness_study(study, scenarios: Sequence[str] = SCENARIOS, sizes: Sequence[float] = PAPER_SIZES,
                     n_samples: int = 50, seed: int = 0, metrics: Sequence[str] | None = None,
                     cutoffs: Sequence[int] | int | None = None, aggregate: str | None = None,
                     n_jobs: int = 1, client: Any = None, progress: bool = True,
                     prefer: str | None = "threads") -> Robustness:
    """Kendall's τ between each metric's system ranking on reduced test sets and on the full one.

    ``study``: a :class:`~recmetrics.study.Study` (its judged runs are reused). ``metrics`` and
    ``cutoffs`` select from the study (default: all metrics at every cut-off; a metric is named
    ``"nDCG@100"`` in the result). ``aggregate`` defaults to the study's. Work runs through
    :func:`recmetrics.parallel.map_tasks` (joblib ``n_jobs``, threads by default since every sample
    shares the judged runs, or a Dask ``client``); each sample has
    its own seed derived from ``seed``, so results do not depend on the back-end (the study's client is
    used when none is given).
    """
    from ..evaluation import parse_metrics
    from ..parallel import map_tasks, task_seeds
    from ..study import require_study

    study = require_study(study, "robustness_study")  # runs and judgments, not per-user scores

    scenarios = [_scenario(s) for s in ([scenarios] if isinstance(scenarios, str) else scenarios)]
    sizes = check_sizes(sizes)
    n_samples = checks.positive_int(n_samples, "n_samples")
    seed = checks.seed(seed)
    n_jobs = checks.n_jobs(n_jobs)
    metrics = list(study.metrics) if metrics is None else ([metrics] if isinstance(metrics, str) else list(metrics))
    cutoffs = list(study.cutoffs) if cutoffs is None else ([cutoffs] if np.ndim(cutoffs) == 0 else list(cutoffs))
    names = []
    for m in metrics:
        for c in cutoffs:
            mi, ci = study._index(m, c)                     # validates metric and cut-off
            names.append(f"{study.metrics[mi]}@{study.cutoffs[ci]}")
    if len(study.systems) < 2:
        raise InputError("robustness needs at least 2 systems to rank")
    aggregate = aggregate or study.aggregate
    specs = parse_metrics(names)
    profile = study.ratings.groupby("user").size()
    ctx = _Context(study, specs, profile)
    full = ctx.sample("random-users", 1.0, 0, aggregate)       # size 1: the full test sets' scores
    tasks, labels = [], []
    for sc in scenarios:
        reps = 1 if sc in _DETERMINISTIC else n_samples
        for size in sizes:
            if size >= 1.0:
                continue
            for r, s in enumerate(task_seeds(_mix(seed, sc, size), reps)):
                tasks.append((ctx, sc, size, s, aggregate))
                labels.append((sc, size, r))
    client = client if client is not None else getattr(study, "_client", None)
    results = map_tasks(_task, tasks, n_jobs=n_jobs, client=client, progress=progress, desc="robustness",
                        prefer=prefer, scatter=[ctx])
    rows = []
    for sc in scenarios:
        if 1.0 in sizes:
            for m, name in enumerate(names):
                rows.append((sc, 1.0, 0, name, 1.0, float(np.mean(full[m]))))
    for (sc, size, r), values in zip(labels, results):
        for m, name in enumerate(names):
            v = values[m]
            ok = ~np.isnan(v)
            tau = kendall_tau(v[ok], full[m][ok]) if ok.sum() >= 2 else float("nan")
            rows.append((sc, size, r, name, tau, float(np.nanmean(v)) if ok.any() else float("nan")))
    samples = pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"])
    return Robustness(samples, pd.DataFrame(full.T, index=pd.Index(study.systems, name="system"), columns=names))


def _mix(seed: int, scenario: str, size: float) -> int:
    """A seed for one (scenario, size) cell, stable across runs and platforms."""
    import zlib

    return int(np.random.SeedSequence([int(seed), zlib.crc32(scenario.encode()), int(round(size * 1e6))])
               .generate_state(1)[0])


def cutoff_robustness(study, metric: str, sizes: Sequence[float] = PAPER_SIZES, n_samples: int = 50,
                      seed: int = 0, scenario: str = "ratings", **kw) -> Robustness:
    """003's cut-off study: the robustness of one metric at every cut-off of the study (metric names
    ``"nDCG@5"``, ``"nDCG@10"``, ...)."""
    return robustness_study(study, [scenario], sizes, n_samples, seed, metrics=[metric], cutoffs=None, **kw)
