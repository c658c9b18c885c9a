"""Runs of many systems: fit every system on every fold and keep the runs, cached.

:func:`run_systems` splits the ratings (:func:`~recmetrics.runs.folds.make_folds`, k-fold by
default), fits every system on every fold's training part and recommends the top ``n`` to the
fold's test users, with a progress bar, locally (``n_jobs``) or on a Dask cluster (``client``).
Each run is cached as a parquet file (:mod:`recmetrics.runs.cache`), so notebooks load runs
instead of retraining; a cached load returns an identical :class:`~recmetrics.data.run.Run`.
The result, :class:`Runs`, maps ``(system, fold)`` to runs and keeps the folds (for Qrels).
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import __version__
from ..cache import file_lock
from ..data.qrels import Qrels
from ..data.run import Run
from ..errors import InputError
from .cache import CacheError, cache_key, default_cache_dir, load_run, save_run, system_spec
from .folds import fold_qrels, make_folds
from .scoring import evaluate_systems

__all__ = ["Runs", "run_systems"]


@dataclass
class Runs(Mapping):
    """``(system, fold) -> Run`` plus the folds they were computed on.

    ``systems`` keeps the requested order; ``folds[f]`` is ``(train, test)``; ``params`` holds the
    split parameters, ``n`` and the cache directory; ``timings`` has one row per run
    (``system, fold, fit_s, recommend_s, cached``) - the times of the original fit for cached
    runs. Made by :func:`run_systems`; build one from your own runs with
    ``Runs({(system, fold): run, ...}, folds, systems)``.

    Examples
    --------
    >>> from recmetrics.data.simulate import simulate
    >>> from recmetrics.runs import run_systems
    >>> runs = run_systems(simulate(40, 60, 600, seed=0), ["Pop", "Random"], k=2, n=10, cache=False,
    ...                    progress=False)
    >>> runs
    Runs(systems=2, folds=2, runs=4)
    >>> list(runs)
    [('Pop', 0), ('Pop', 1), ('Random', 0), ('Random', 1)]
    >>> runs[("Pop", 0)], runs.n_folds
    (Run('Pop', users=40, depth=10), 2)
    """

    runs: dict
    folds: list
    systems: list
    params: dict = field(default_factory=dict)
    timings: pd.DataFrame | None = None

    def __getitem__(self, key) -> Run:
        return self.runs[key]

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        return f"Runs(systems={len(self.systems)}, folds={len(self.folds)}, runs={len(self.runs)})"

    @property
    def n_folds(self) -> int:
        """The number of folds."""
        return len(self.folds)

    def system(self, name: str) -> list[Run]:
        """The runs of one system, fold by fold (``[runs[(name, 0)], runs[(name, 1)], ...]``); an
        unknown name raises :class:`~recmetrics.errors.UnknownNameError` with the closest names.

        Example: ``runs.system("Pop")[1] is runs[("Pop", 1)]``.
        """
        if name not in self.systems:
            from ..errors import unknown_name

            raise unknown_name("system in these runs", name, self.systems)
        return [self.runs[(name, f)] for f in range(self.n_folds)]

    def qrels(self, fold: int, threshold: float = 4.0) -> Qrels:
        """The judgments of one fold: its test ratings as :class:`~recmetrics.data.qrels.Qrels`,
        relevant when ``rating >= threshold`` (default 4, on a 1-5 scale). A fold whose test part
        is already a ``Qrels`` (judgments read from a qrels file) is returned as is when its
        threshold is ``threshold``, else re-thresholded (its ``max_rating`` and its handling of
        negative labels kept).

        Example: ``runs.qrels(0).relevant_users`` are the users evaluated on fold 0.
        """
        return fold_qrels(self.folds[fold][1], threshold)

    def evaluate(self, metrics, threshold: float = 4.0, **kw) -> pd.DataFrame:
        """Shortcut for :func:`~recmetrics.runs.scoring.evaluate_systems` on these runs and their
        folds (long table ``system, fold, user, metric, value``).

        Example: ``runs.evaluate(["nDCG@10", "P@10"])``.
        """
        return evaluate_systems(self, self.folds, metrics, threshold=threshold, **kw)


def _fit_recommend(spec: str, fold: int, train: pd.DataFrame, users: np.ndarray, n: int, exclude_seen: bool):
    from ..recommenders import create

    rec = create(spec)
    t0 = time.perf_counter()
    rec.fit(train)
    t1 = time.perf_counter()
    run = rec.recommend(users, n=n, exclude_seen=exclude_seen)
    t2 = time.perf_counter()
    run.metadata.update({"system": rec.name, "fold": fold})
    return run, {"fit_s": t1 - t0, "recommend_s": t2 - t1}


def _cached_times(extra: Mapping) -> dict:
    """The timings row of a run loaded from the cache: its original fit's times (stored with it)."""
    return {"fit_s": extra.get("fit_s", np.nan), "recommend_s": extra.get("recommend_s", np.nan), "cached": True}


def _locked_in_turn(todo, fit_locked) -> list:
    """The runs of ``todo``, in its order, each fitted under its lock: those another process is
    fitting (a chapter running beside this one) are left for last and then waited for, so two
    chapters that need the same runs share the fitting instead of one waiting at every run."""
    out = [fit_locked(*task, wait=False) for task in todo]
    return [fit_locked(*task) if got is None else got for task, got in zip(todo, out)]


def run_systems(ratings, systems: Sequence[str] | None = None, split: Any = "kfold", k: int = 5, seed: int = 0,
                n: int = 100, cache_dir=None, progress: bool = True, *, test_size: float = 0.2,
                exclude_seen: bool = True, cache: bool = True, n_jobs: int = 1, client=None, **split_kw) -> Runs:
    """Fit every system on every fold's training data and recommend ``n`` items to the fold's test
    users (AllItems: every item not rated by the user in training is a candidate).

    Parameters
    ----------
    ratings : DataFrame, Dataset or dataset name
    systems : spec strings (``"PureSVD(k=20)"``); default :data:`recmetrics.recommenders.ZOO`
    split, k, seed, test_size, **split_kw : see :func:`make_folds`
    n : list length
    cache_dir : where runs are cached (default :func:`default_cache_dir`); ``cache=False`` disables
        reading and writing the cache
    progress : show a tqdm progress bar (one step per system and fold)
    n_jobs : fit runs in parallel with joblib (each job is one system on one fold)
    client : a ``dask.distributed.Client`` or scheduler address: fit the runs on that Dask cluster
        instead (through :func:`recmetrics.parallel.map_tasks`, the same code path as joblib)

    Returns
    -------
    :class:`Runs`: ``runs[(system, fold)]`` (``system`` is the canonical name, e.g. ``"Pop"`` or
    ``"UserKNN(k=100)"``), ``runs.folds``, ``runs.timings``.

    Each run is cached under a key of the split parameters (with the data's hash), the fold, the
    system with all its hyper-parameters and a hash of its source, ``n``, ``exclude_seen`` and the
    package version (:mod:`recmetrics.runs.cache`); a second call loads the runs instead of
    refitting (``timings.cached``). A cached file is verified before it is used (its content
    checksum and the key it was written under, :func:`~recmetrics.runs.cache.load_run`): one that
    is damaged, unreadable, of the old unverified format or another run's file is refitted and
    overwritten.

    Examples
    --------
    >>> from recmetrics.data.simulate import simulate
    >>> from recmetrics.runs import run_systems
    >>> ratings = simulate(40, 60, 600, seed=0)
    >>> runs = run_systems(ratings, ["Pop", "UserKNN(k=10)"], k=2, n=10, cache=False, progress=False)
    >>> runs.systems, runs.n_folds, runs[("UserKNN(k=10)", 1)].depth
    (['Pop', 'UserKNN(k=10)'], 2, 10)
    >>> runs.timings.columns.tolist()
    ['system', 'fold', 'fit_s', 'recommend_s', 'cached']
    """
    from ..checks import n_jobs as check_n_jobs
    from ..recommenders import ZOO, create

    n_jobs = check_n_jobs(n_jobs)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise InputError(f"n must be a positive integer list length, got {n!r}")
    specs = list(ZOO if systems is None else ([systems] if isinstance(systems, str) else systems))
    if not specs:
        raise InputError("no system to run; pass spec strings such as ['Pop', 'PureSVD(k=50)']")
    recs = [create(s) for s in specs]                     # validates names and hyper-parameters early
    names = [r.name for r in recs]
    dup = pd.Index(names)[pd.Index(names).duplicated()]
    if len(dup):
        raise InputError(f"system {dup[0]!r} is listed twice in systems")
    folds, split_params = make_folds(ratings, split, k=k, seed=seed, test_size=test_size, **split_kw)
    if split_params.get("method") == "given":
        split_params["data"] = "given"
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    tasks, runs, rows = [], {}, []
    for rec in recs:
        spec = system_spec(rec)
        for f in range(len(folds)):
            key = cache_key({"split": split_params, "fold": f, "system": spec, "n": int(n),
                             "exclude_seen": bool(exclude_seen), "version": __version__})
            path = root / f"{key}.parquet"
            tasks.append((rec.name, f, path, key))

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc="runs", unit="run")
    todo = []
    for name, f, path, key in tasks:
        if cache and path.exists():
            try:
                run, extra = load_run(path, key=key)   # verified: checksum and key
            except (CacheError, OSError):  # damaged, foreign or unverifiable (format 1): recompute it
                todo.append((name, f, path, key))
                continue
            runs[(name, f)] = run
            rows.append({"system": name, "fold": f, **_cached_times(extra)})
            if bar is not None:
                bar.update(1)
        else:
            todo.append((name, f, path, key))

    def job(name, f):
        train, test = folds[f]
        users = pd.unique(test["user"].to_numpy())
        return _fit_recommend(name, f, train, users, int(n), exclude_seen)

    writable = cache

    def save(run, path, name, f, key, times) -> None:
        nonlocal writable
        if not writable:
            return
        try:
            save_run(run, path, metadata={**times, "system": name, "fold": f}, key=key)
        except OSError as exc:  # a cache folder that is a file, unwritable, a full disk: go on uncached
            import warnings

            from ..cache import unwritable

            warnings.warn(f"{unwritable(path, exc)}; the runs are computed without the cache", stacklevel=4)
            writable = False

    def fit_locked(name, f, path, key, wait=True):
        """One run fitted under its cache file's lock (:func:`recmetrics.cache.file_lock`): a
        chapter running beside this one (``recmetrics report --jobs``) that needs the same run
        waits for it, then loads it instead of fitting it again. ``wait=False``: ``None`` at once
        when another process holds the lock (it is fitting the run)."""
        with contextlib.ExitStack() as stack:
            if writable:
                held = True
                with contextlib.suppress(OSError):   # an unwritable cache: fitted without it (save warns)
                    held = stack.enter_context(file_lock(path, remove=True, wait=wait))
                if not held:
                    return None
                if path.exists():
                    with contextlib.suppress(CacheError, OSError):
                        run, extra = load_run(path, key=key)
                        return run, _cached_times(extra)
            run, times = job(name, f)
            save(run, path, name, f, key, times)
        return run, {**times, "cached": False}

    def saved(results):   # runs fitted elsewhere (joblib, Dask) are saved here, as they arrive
        for (name, f, path, key), (run, times) in zip(todo, results):
            save(run, path, name, f, key, times)
            yield run, {**times, "cached": False}

    if client is not None and todo:
        from ..parallel import map_tasks

        results = saved(map_tasks(job, [(name, f) for name, f, _, _ in todo], client=client))
    elif n_jobs == 1 or len(todo) <= 1:
        results = _locked_in_turn(todo, fit_locked)
    else:
        from joblib import Parallel, delayed

        results = saved(Parallel(n_jobs=n_jobs, return_as="generator")(delayed(job)(name, f) for name, f, _, _ in todo))
    for (name, f, _, _), (run, times) in zip(todo, results):
        runs[(name, f)] = run
        rows.append({"system": name, "fold": f, **times})
        if bar is not None:
            bar.set_postfix_str(f"{name} fold {f}")
            bar.update(1)
    if bar is not None:
        bar.close()
    ordered = {(name, f): runs[(name, f)] for name, f, _, _ in tasks}
    timings = pd.DataFrame(rows, columns=["system", "fold", "fit_s", "recommend_s", "cached"])
    order = {name: i for i, name in enumerate(names)}
    timings = timings.sort_values(["system", "fold"], key=lambda c: c.map(order) if c.name == "system" else c)
    return Runs(ordered, folds, names, {"split": split_params, "n": int(n), "cache_dir": str(root)},
                timings.reset_index(drop=True))
