"""The Study score cube: per-user scores of every system on every fold, ``[metric, cutoff, system,
fold, user]``, cached on disk, with the views the meta-evaluation reads (systems x users tables,
system scores, tidy long form); and :func:`per_user_scores`, which accepts a Study or plain
per-user scores from any tool.

The runs a Study is built on come from :mod:`recmetrics.runs` (fit, cache, evaluate, load outside
runs). For compatibility ``recmetrics.study`` re-exports that module's public names
(``rm.study.run_systems``, ``rm.study.Runs``, ``rm.study.load_runs``, ``rm.study.make_folds``,
``rm.study.evaluate_systems``, ``rm.study.summarise``, ``rm.study.tail_folds``,
``rm.study.evaluate_tail``, ``rm.study.save_run``, ``rm.study.load_run``, ...); they are defined
once, in :mod:`recmetrics.runs`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from .errors import InputError
from .runs import (RUN_SUFFIXES, Runs, default_cache_dir, evaluate_systems, evaluate_tail, load_run, load_runs,
                   make_folds, ratings_hash, run_systems, save_run, summarise, tail_folds)
from .runs.cache import cache_key, system_spec
from .runs.folds import ratings_frame

__all__ = ["Study", "per_user_scores", "POOLS", "AXES",
           # re-exported from recmetrics.runs (defined there)
           "Runs", "run_systems", "evaluate_systems", "summarise", "load_runs", "default_cache_dir",
           "ratings_hash", "make_folds", "save_run", "load_run", "RUN_SUFFIXES", "tail_folds", "evaluate_tail"]

POOLS = ("concat", "mean")
AXES = ("metric", "cutoff", "system", "fold", "user")


def _split_metric(name: str) -> tuple[str, int | None]:
    base, _, cut = str(name).partition("@")
    return base, (int(cut) if cut else None)


class Study:
    """Per-user scores of every system on every fold: a cube ``[metric, cutoff, system, fold, user]``.

    ``Study(dataset, systems, metrics, cutoffs)`` runs (or loads from the run cache, see
    :func:`run_systems`) every system on every fold of ``split`` and scores every metric at every
    cut-off (``"nDCG"`` with ``cutoffs=(5, 10, 100)`` gives nDCG@5, nDCG@10, nDCG@100). The cube
    (:attr:`cube`, a float64 numpy array with axes :data:`AXES` and labels :attr:`coords`) holds
    NaN where a user is not evaluated in a fold; it is cached on disk (``studies`` next to the run
    cache) keyed by the run cache keys, the metric names, the threshold and the package version.

    Pooling folds (``pool``): users are paired across systems *within* a fold. ``"concat"`` treats
    each ``(fold, user)`` as one unit (k-fold on ratings puts most users in every fold, so a user
    contributes once per fold); ``"mean"`` averages each user over the folds they are evaluated in
    (one unit per user). Paper 000 §5 evaluates 5-fold cross-validation but does not say how the
    folds' users are pooled for the tests; ``"concat"`` (the default) keeps every evaluated list.

    ``aggregate`` (arithmetic, geometric, ...) is the mean that turns units into a system score for
    rankings (:meth:`system_scores`); paper 000 §7 uses the geometric one.

    Parameters
    ----------
    dataset : DataFrame, Dataset or dataset name
    systems : spec strings; default :data:`recmetrics.recommenders.PAPER_SYSTEMS` (at least 2)
    metrics : base names without cut-off (default ``("P", "nDCG")``); cutoffs : positive,
        distinct integers (default ``(100,)``, the depth paper 000 §6 recommends); the runs are
        ``max(cutoffs)`` long
    split, k, seed, **split_kw : the folds, see :func:`recmetrics.runs.make_folds` (default 5-fold,
        seed 0, as paper 000 §5)
    aggregate : default ``"arithmetic"``; threshold : relevance ``rating >= threshold`` (default 4)
    cache_dir, cache, progress, n_jobs, client : see :func:`recmetrics.runs.run_systems`; the score
        cube is cached in ``<cache_dir>/../studies`` unless ``cache=False``

    Examples
    --------
    >>> from recmetrics.data.simulate import simulate
    >>> from recmetrics.study import Study
    >>> st = Study(simulate(40, 60, 600, seed=0), ["Pop", "Random"], ["P", "nDCG"], [5, 10], k=2,
    ...            cache=False, progress=False)
    >>> st
    Study('ratings', systems=2, metrics=['P', 'nDCG'], cutoffs=[5, 10], folds=2, users=40)
    >>> st.cube.shape                     # metric, cutoff, system, fold, user
    (2, 2, 2, 2, 40)
    >>> st.table(10).round(3)  # doctest: +NORMALIZE_WHITESPACE
                P   nDCG
    system
    Pop     0.156  0.432
    Random  0.053  0.136
    """

    def __init__(self, dataset, systems=None, metrics=("P", "nDCG"), cutoffs=(100,), split: Any = "kfold",
                 k: int = 5, seed: int = 0, aggregate: str = "arithmetic", threshold: float = 4.0,
                 *, cache_dir=None, cache: bool = True, progress: bool = True, n_jobs: int = 1, client=None,
                 **split_kw):
        from .evaluation import parse_metrics
        from .metrics.aggregate import method_name

        if isinstance(metrics, str):
            metrics = [metrics]
        cutoffs = [cutoffs] if isinstance(cutoffs, (int, np.integer)) else list(cutoffs)
        if not metrics:
            raise InputError("a Study needs at least one metric")
        if not cutoffs or any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c <= 0 for c in cutoffs):
            raise InputError(f"cutoffs must be positive integers, got {cutoffs!r}")
        if len(set(cutoffs)) != len(cutoffs):
            raise InputError(f"cutoffs must be distinct, got {cutoffs!r}")
        for m in metrics:
            if "@" in str(m):
                raise InputError(f"give metric {m!r} without its cut-off; cut-offs come from cutoffs={cutoffs!r}")
        self.metrics = [str(m) for m in metrics]
        self.cutoffs = [int(c) for c in cutoffs]
        self.aggregate = method_name(aggregate)
        self.threshold = float(threshold)
        self.specs = parse_metrics([f"{m}@{c}" for m in self.metrics for c in self.cutoffs])
        self.ratings = ratings_frame(dataset)
        self.dataset = dataset if isinstance(dataset, str) else "ratings"
        from . import recommenders

        if systems is None:
            systems = recommenders.PAPER_SYSTEMS
        self.runs = run_systems(self.ratings, systems, split, k=k, seed=seed, n=max(self.cutoffs),
                                cache_dir=cache_dir, cache=cache, progress=progress, n_jobs=n_jobs, client=client,
                                **split_kw)
        key = cache_key({"runs": self.runs.params["split"], "n": self.runs.params["n"],
                         "systems": [system_spec(recommenders.create(s)) for s in self.runs.systems],
                         "metrics": [str(s) for s in self.specs], "threshold": self.threshold,
                         "version": __version__})
        path = (Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()).parent / "studies" \
            / f"{key}.npz"
        self._build(path if cache else None, progress, client, n_jobs)

    @classmethod
    def from_runs(cls, runs, folds, metrics=("P", "nDCG"), cutoffs=(100,), *, ratings=None,
                  aggregate: str = "arithmetic", threshold: float = 4.0, progress: bool = True,
                  dataset: str = "runs") -> "Study":
        """A Study of runs made elsewhere: ``runs`` maps ``(system, fold)`` to a :class:`Run` (or is a
        :class:`Runs`), ``folds`` lists ``(train, test)``; ``ratings`` (default: the first fold's
        training and test ratings together) gives the user profiles of the large-users robustness
        scenario. Every system needs a run on every fold. Not cached on disk.

        Examples
        --------
        >>> from recmetrics.data.simulate import simulate
        >>> from recmetrics.runs import run_systems
        >>> from recmetrics.study import Study
        >>> runs = run_systems(simulate(40, 60, 600, seed=0), ["Pop", "Random"], k=2, n=10, cache=False,
        ...                    progress=False)
        >>> Study.from_runs(dict(runs), runs.folds, ["P", "nDCG"], [5, 10], progress=False)
        Study('runs', systems=2, metrics=['P', 'nDCG'], cutoffs=[5, 10], folds=2, users=40)
        """
        from .evaluation import parse_metrics
        from .metrics.aggregate import method_name

        self = cls.__new__(cls)
        self.metrics = [str(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
        self.cutoffs = [int(c) for c in ([cutoffs] if np.ndim(cutoffs) == 0 else cutoffs)]
        self.aggregate = method_name(aggregate)
        self.threshold = float(threshold)
        self.specs = parse_metrics([f"{m}@{c}" for m in self.metrics for c in self.cutoffs])
        if not folds:
            raise InputError("from_runs needs the folds (list of (train, test)) the runs were made on")
        self.ratings = ratings if ratings is not None else pd.concat(list(folds[0]), ignore_index=True)
        self.dataset = dataset
        systems = list(dict.fromkeys(s for s, _ in runs))
        bad = [(s, f) for s in systems for f in range(len(folds)) if (s, f) not in runs]
        if bad:
            raise InputError(f"no run for system {bad[0][0]!r} on fold {bad[0][1]}; every system needs every fold")
        self.runs = runs if isinstance(runs, Runs) else Runs(dict(runs), list(folds), systems)
        self._build(None, progress, None, 1)
        return self

    def _build(self, path, progress, client, n_jobs):
        self.systems = list(self.runs.systems)
        if len(self.systems) < 2:
            raise InputError(f"a Study needs at least 2 systems to compare, got {self.systems}")
        self.n_folds = self.runs.n_folds
        self._client = client
        self._n_jobs = n_jobs
        self._judged: dict = {}
        self.qrels = [self.runs.qrels(f, self.threshold) for f in range(self.n_folds)]
        if path is not None and path.exists():
            with np.load(path, allow_pickle=True) as z:
                self.cube, users = z["cube"], z["users"]
        else:
            self.cube, users = self._compute(progress)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
                os.close(fd)
                try:
                    np.savez(tmp, cube=self.cube, users=np.asarray(users, dtype=object))
                    os.replace(tmp, path)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
        self.users = np.asarray(users)
        self.coords = {"metric": self.metrics, "cutoff": self.cutoffs, "system": self.systems,
                       "fold": list(range(self.n_folds)), "user": self.users}

    # -------------------------------------------------------------- computing
    def judged(self, system: str, fold: int):
        """The :class:`~recmetrics.judged.Judged` of one run against its fold's judgments, to depth
        ``max(cutoffs)`` (judged once, kept in memory; the robustness scenarios mask it instead of
        judging again).

        Example: ``study.judged("Pop", 0).users`` are the users evaluated on fold 0.
        """
        from .judged import judge

        if (system, fold) not in self._judged:
            self._judged[(system, fold)] = judge(self.runs[(system, fold)], self.qrels[fold],
                                                 depth=max(self.cutoffs))
        return self._judged[(system, fold)]

    def _compute(self, progress: bool):
        from .evaluation import score_judged

        users = pd.Index(pd.unique(np.concatenate([q.relevant_users for q in self.qrels])))
        users = users.sort_values() if users.inferred_type != "mixed" else users
        cube = np.full((len(self.metrics), len(self.cutoffs), len(self.systems), self.n_folds, len(users)), np.nan)
        keys = [(s, f) for s in self.systems for f in range(self.n_folds)]
        if progress:
            from tqdm.auto import tqdm

            keys = tqdm(keys, desc="scoring", unit="run")
        for system, fold in keys:
            j = self.judged(system, fold)
            values = score_judged(j, self.specs)                       # (metrics*cutoffs, users)
            cols = users.get_indexer(j.users)
            cube[:, :, self.systems.index(system), fold, cols] = values.reshape(
                len(self.metrics), len(self.cutoffs), -1)
        return cube, users.to_numpy()

    # -------------------------------------------------------------- views
    def __repr__(self) -> str:
        return (f"Study({self.dataset!r}, systems={len(self.systems)}, metrics={self.metrics}, "
                f"cutoffs={self.cutoffs}, folds={self.n_folds}, users={len(self.users)})")

    def _index(self, metric: str, cutoff: int | None) -> tuple[int, int]:
        from .errors import unknown_name

        base, cut = _split_metric(metric)
        if cut is not None and cutoff is not None and cut != cutoff:
            raise InputError(f"metric {metric!r} names cut-off {cut} but cutoff={cutoff} was given")
        cut = cut if cut is not None else cutoff
        if cut is None:
            if len(self.cutoffs) > 1:
                raise InputError(f"say which cut-off of {base!r}: the study has {self.cutoffs}")
            cut = self.cutoffs[0]
        lower = [m.lower() for m in self.metrics]
        if base.lower() not in lower:
            raise unknown_name("metric in this study", base, self.metrics)
        if cut not in self.cutoffs:
            raise InputError(f"cut-off {cut} is not in the study (cut-offs: {self.cutoffs})")
        return lower.index(base.lower()), self.cutoffs.index(cut)

    def scores(self, metric: str, cutoff: int | None = None, pool: str = "concat") -> pd.DataFrame:
        """Systems x units DataFrame of one metric at one cut-off (``"nDCG@10"`` or ``("nDCG", 10)``).

        ``pool="concat"`` (default): columns are ``(fold, user)`` pairs evaluated in that fold;
        ``pool="mean"``: columns are users, each the mean over the folds that evaluate the user.
        ``cutoff`` may be omitted when the metric names it or the study has one cut-off.

        Examples
        --------
        >>> from recmetrics.data.simulate import simulate
        >>> from recmetrics.study import Study
        >>> st = Study(simulate(40, 60, 600, seed=0), ["Pop", "Random"], ["P"], [5], k=2, cache=False,
        ...            progress=False)
        >>> st.scores("P@5").shape, st.scores("P", pool="mean").shape    # 75 (fold, user) units, 40 users
        ((2, 75), (2, 40))
        """
        m, c = self._index(metric, cutoff)
        block = self.cube[m, c]                                          # (system, fold, user)
        if pool == "concat":
            present = ~np.isnan(block[0])                                # same users for every system
            f_idx, u_idx = np.nonzero(present)
            cols = pd.MultiIndex.from_arrays([f_idx, self.users[u_idx]], names=["fold", "user"])
            return pd.DataFrame(block[:, f_idx, u_idx], index=pd.Index(self.systems, name="system"), columns=cols)
        if pool == "mean":
            present = ~np.isnan(block[0]).all(axis=0)
            with np.errstate(invalid="ignore"):
                values = np.nanmean(block[:, :, present], axis=1)
            return pd.DataFrame(values, index=pd.Index(self.systems, name="system"),
                                columns=pd.Index(self.users[present], name="user"))
        raise InputError(f"pool must be one of {POOLS}, got {pool!r}")

    def all_scores(self, cutoff: int | None = None, pool: str = "concat") -> dict[str, pd.DataFrame]:
        """``{metric: systems x units}`` for every metric at one cut-off (for discriminative power):
        :meth:`scores` of each metric, same ``cutoff`` and ``pool``.

        Example: ``rm.meta.discriminative_power(study.all_scores(100))``.
        """
        return {m: self.scores(m, cutoff, pool) for m in self.metrics}

    def system_scores(self, metric: str, cutoff: int | None = None, pool: str = "concat",
                      aggregate: str | None = None) -> pd.Series:
        """One value per system: ``aggregate`` (default the study's) over the pooled units.

        ``score(s) = M(scores(metric, cutoff, pool).loc[s])`` with ``M`` the arithmetic mean by
        default, or the geometric / harmonic / quadratic mean of
        :func:`recmetrics.metrics.aggregate.aggregate` (geometric and harmonic floor values at
        1e-5, trec_eval's gm_map).

        Example: ``study.system_scores("AP", 100, aggregate="geometric")`` is GMAP@100 per system.
        """
        from .metrics.aggregate import aggregate as _agg

        s = self.scores(metric, cutoff, pool)
        return pd.Series(_agg(s.to_numpy(), aggregate or self.aggregate, axis=1), index=s.index, name=metric)

    def table(self, cutoff: int | None = None, pool: str = "concat", aggregate: str | None = None) -> pd.DataFrame:
        """Systems x metrics table of :meth:`system_scores` at one cut-off (same ``pool`` and
        ``aggregate`` for every metric). Example: see :class:`Study`."""
        return pd.concat([self.system_scores(m, cutoff, pool, aggregate) for m in self.metrics], axis=1)

    def long(self) -> pd.DataFrame:
        """Tidy view: one row per evaluated ``metric, cutoff, system, fold, user`` with its ``value``
        (the cube's non-NaN cells, in cube order).

        Example: ``study.long().query("metric == 'nDCG' and cutoff == 10")``.
        """
        idx = np.nonzero(~np.isnan(self.cube))
        out = {name: np.asarray(self.coords[name], dtype=object if name in ("user", "metric", "system") else None)[i]
               for name, i in zip(AXES, idx)}
        out["value"] = self.cube[idx]
        return pd.DataFrame(out)


def per_user_scores(scores, metric: str | None = None, cutoff: int | None = None, pool: str = "concat"):
    """Systems x units DataFrame from a :class:`Study` (with ``metric``) or plain scores (a DataFrame
    or a 2-D array, systems in rows); checks shape and NaN.

    This is how every meta-evaluation accepts per-user scores from any tool: at least 2 systems,
    and a value for every system on every unit (NaN raises
    :class:`~recmetrics.errors.InputError` naming the system and unit). A Study is read with
    :meth:`Study.scores` (``cutoff`` and ``pool`` as there).

    Examples
    --------
    >>> import numpy as np
    >>> from recmetrics.study import per_user_scores
    >>> per_user_scores(np.array([[0.5, 1.0, 0.0], [0.2, 0.4, 0.1]])).shape
    (2, 3)
    >>> per_user_scores(np.array([[0.5, np.nan], [0.2, 0.4]]))
    Traceback (most recent call last):
    ...
    recmetrics.errors.InputError: per-user scores contain NaN (system 0, unit 1); every system needs a value for every user
    """
    if isinstance(scores, Study):
        if metric is None:
            raise InputError("give the metric to take from the Study")
        return scores.scores(metric, cutoff, pool)
    frame = scores if isinstance(scores, pd.DataFrame) else pd.DataFrame(np.asarray(scores, dtype=np.float64))
    if frame.ndim != 2 or frame.shape[0] < 2:
        raise InputError(f"per-user scores need at least 2 systems (rows), got shape {frame.shape}")
    values = frame.to_numpy(dtype=np.float64)
    if np.isnan(values).any():
        r, c = np.argwhere(np.isnan(values))[0]
        raise InputError(f"per-user scores contain NaN (system {frame.index[r]!r}, unit {frame.columns[c]!r}); "
                         "every system needs a value for every user")
    return frame
