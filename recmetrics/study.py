"""The Study score cube: per-user scores of every system on every fold, ``[metric, cutoff, system,
fold, user]``, cached on disk, with the views the meta-evaluation reads (systems x users tables,
system scores, tidy long form); and :func:`per_user_scores`, which accepts a Study or plain
per-user scores from any tool.

The runs a Study is built on come from :mod:`recmetrics.runs` (fit, cache, evaluate, load outside
runs); :meth:`Study.from_runs` builds one from runs made anywhere and their judgments (a
``Qrels``, a test DataFrame or ``(train, test)`` folds).

The score cube is cached in ``<run cache>/studies/<key>.npz`` (no pickled object in it): the key
hashes the content of every run (:func:`~recmetrics.runs.cache.run_checksum`), the split, the
metrics, the threshold and the package version, and the file carries its key and a checksum of the
cube and user ids. A damaged, foreign or old-format file is recomputed and overwritten, never
trusted. For compatibility ``recmetrics.study`` re-exports that module's public names
(``rm.study.run_systems``, ``rm.study.Runs``, ``rm.study.load_runs``, ``rm.study.make_folds``,
``rm.study.evaluate_systems``, ``rm.study.summarise``, ``rm.study.tail_folds``,
``rm.study.evaluate_tail``, ``rm.study.save_run``, ``rm.study.load_run``, ...); they are defined
once, in :mod:`recmetrics.runs`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from .errors import InputError
from .runs import (RUN_SUFFIXES, Runs, default_cache_dir, evaluate_systems, evaluate_tail, load_run, load_runs,
                   make_folds, ratings_hash, run_systems, save_run, summarise, tail_folds)
from .runs.cache import array_checksum, cache_key, run_checksum
from .runs.folds import ratings_frame

__all__ = ["Study", "per_user_scores", "require_study", "POOLS", "AXES",
           # re-exported from recmetrics.runs (defined there)
           "Runs", "run_systems", "evaluate_systems", "summarise", "load_runs", "default_cache_dir",
           "ratings_hash", "make_folds", "save_run", "load_run", "RUN_SUFFIXES", "tail_folds", "evaluate_tail"]

POOLS = ("concat", "mean")
AXES = ("metric", "cutoff", "system", "fold", "user")
#: format of the cached score cubes (2: no pickle, key and checksum inside; 1 pickled its user ids)
CUBE_FORMAT = 2


def _check_axes(metrics, cutoffs) -> tuple[list[str], list[int]]:
    """The metric names (without cut-off) and the cut-offs (positive, distinct) of a Study."""
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
    return [str(m) for m in metrics], [int(c) for c in cutoffs]


def _split_metric(name: str) -> tuple[str, int | None]:
    base, _, cut = str(name).partition("@")
    return base, (int(cut) if cut else None)


class Study:
    """Per-user scores of every system on every fold: a cube ``[metric, cutoff, system, fold, user]``.

    ``Study(dataset, systems, metrics, cutoffs)`` runs (or loads from the run cache, see
    :func:`run_systems`) every system on every fold of ``split`` and scores every metric at every
    cut-off (``"nDCG"`` with ``cutoffs=(5, 10, 100)`` gives nDCG@5, nDCG@10, nDCG@100). The cube
    (:attr:`cube`, a float64 numpy array with axes :data:`AXES` and labels :attr:`coords`) holds
    NaN where a user is not evaluated in a fold; it is cached on disk (``studies`` inside the run
    cache) keyed by the content of the runs, the split, the metric names, the threshold and the
    package version, and verified against its checksum when loaded.

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
        cube is cached in ``<cache_dir>/studies`` (``cache_dir`` defaulting to
        :func:`~recmetrics.runs.default_cache_dir`, i.e. ``$RECMETRICS_CACHE``) unless
        ``cache=False``

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
        from .metrics.aggregate import aggregate_name

        self.metrics, self.cutoffs = _check_axes(metrics, cutoffs)
        self.aggregate = aggregate_name(aggregate)
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
        path = None
        if cache:
            root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
            path = root / "studies" / f"{self._cube_key()}.npz"
        self._build(path, progress, client, n_jobs)

    @classmethod
    def from_runs(cls, runs, folds=None, metrics=("P", "nDCG"), cutoffs=(100,), *, ratings=None,
                  aggregate: str = "arithmetic", threshold: float | None = None, progress: bool = True,
                  dataset: str = "runs") -> "Study":
        """A Study of runs made elsewhere (any tool) and their judgments. Not cached on disk.

        Parameters
        ----------
        runs : the runs, one per system and fold, as
            a :class:`~recmetrics.runs.Runs` (its folds are used when ``folds`` is omitted);
            a mapping ``{(system, fold): Run}``;
            a mapping ``{name: Run}`` (one fold; what :func:`~recmetrics.runs.load_runs` returns);
            a mapping ``{name: [Run of fold 0, Run of fold 1, ...]}``; or a list of runs (named by
            ``Run.name``, one fold).
        folds : the judgments the runs are scored against: a :class:`~recmetrics.data.qrels.Qrels`
            or a test-ratings DataFrame (one fold), or a list with one entry per fold, each a
            ``(train, test)`` pair or a test part alone (``Qrels`` or DataFrame). Given folds always
            win over ``runs.folds``.
        metrics, cutoffs, aggregate : as in :class:`Study`
        threshold : relevance ``rating >= threshold``; default the threshold of the given ``Qrels``
            (a qrels file's, 1 for TREC files) or 4 for ratings DataFrames. An explicit value
            re-thresholds ``Qrels`` too.
        ratings : the user profiles of the large-users robustness scenario (default: the first
            fold's training and test ratings together; with judgments alone, each user's number of
            judgments).

        Every system needs a run on every fold; an unknown fold, a value that is not a ``Run``, or a
        missing ``(system, fold)`` raises :class:`~recmetrics.errors.InputError` naming it.

        Examples
        --------
        >>> from recmetrics.data.simulate import simulate
        >>> from recmetrics.runs import run_systems
        >>> from recmetrics.study import Study
        >>> runs = run_systems(simulate(40, 60, 600, seed=0), ["Pop", "Random"], k=2, n=10, cache=False,
        ...                    progress=False)
        >>> Study.from_runs(dict(runs), runs.folds, ["P", "nDCG"], [5, 10], progress=False)
        Study('runs', systems=2, metrics=['P', 'nDCG'], cutoffs=[5, 10], folds=2, users=40)
        >>> one = {name: runs[(name, 0)] for name in runs.systems}    # {name: Run}, as load_runs gives
        >>> Study.from_runs(one, runs.qrels(0), ["P"], [10], progress=False).n_folds
        1
        """
        from .data.qrels import Qrels
        from .evaluation import parse_metrics
        from .metrics.aggregate import aggregate_name

        self = cls.__new__(cls)
        self.metrics, self.cutoffs = _check_axes(metrics, cutoffs)
        self.aggregate = aggregate_name(aggregate)
        self.specs = parse_metrics([f"{m}@{c}" for m in self.metrics for c in self.cutoffs])
        if folds is None:
            if not isinstance(runs, Runs):
                raise InputError("from_runs needs the judgments: a Qrels, a test-ratings DataFrame or a list of "
                                 "(train, test) folds")
            folds = runs.folds
        folds = _as_folds(folds)
        tests = [test for _, test in folds]
        if threshold is None:
            given = {q.threshold for q in tests if isinstance(q, Qrels)}
            if len(given) > 1:
                raise InputError(f"the folds' Qrels have different thresholds {sorted(given)}; pass threshold=")
            threshold = given.pop() if given else 4.0
        self.threshold = float(threshold)
        mapping, systems = as_run_mapping(runs, len(folds))
        if ratings is None:
            train, test = folds[0]
            parts = [train, test.to_frame() if isinstance(test, Qrels) else test]
            ratings = pd.concat([p for p in parts if len(p)] or parts[1:], ignore_index=True)
        self.ratings = ratings
        self.dataset = dataset
        self.runs = Runs(mapping, folds, systems)
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
        for f, q in enumerate(self.qrels):        # one id rule for every run of a fold (see _common_qrels)
            self.qrels[f] = _common_qrels(q, [self.runs[(s, f)] for s in self.systems])
            if self.qrels[f] is not q and self.ratings is not None and len(self.ratings):
                self.ratings = self.ratings.assign(user=self.ratings["user"].astype(str),
                                                   item=self.ratings["item"].astype(str))
        loaded = _load_cube(path, path.stem, self._cube_shape()) if path is not None else None
        if loaded is not None:
            self.cube, users = loaded
        else:
            self.cube, users = self._compute(progress)
            if path is not None:
                try:
                    _save_cube(path, path.stem, self.cube, users)
                except OSError as exc:  # a cache folder that is a file, unwritable, a full disk
                    import warnings

                    from .cache import unwritable

                    warnings.warn(f"{unwritable(path, exc)}; the score cube is not cached", stacklevel=2)
        self.users = np.asarray(users)
        self.coords = {"metric": self.metrics, "cutoff": self.cutoffs, "system": self.systems,
                       "fold": list(range(self.n_folds)), "user": self.users}

    # -------------------------------------------------------------- computing
    def _cube_key(self) -> str:
        """Cache key of the score cube: the runs' content, the split, the scored metrics, the
        threshold, the package version and the cube format."""
        return cache_key({"format": CUBE_FORMAT, "split": self.runs.params.get("split"), "systems": self.runs.systems,
                          "runs": [run_checksum(self.runs[k]) for k in self.runs],
                          "metrics": [str(s) for s in self.specs], "threshold": self.threshold,
                          "version": __version__})

    def _cube_shape(self) -> tuple[int, ...]:
        return (len(self.metrics), len(self.cutoffs), len(self.systems), self.n_folds)

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
            if (cols < 0).any():  # pragma: no cover - _common_qrels gives runs and judgments one id type
                raise InputError(f"user {j.users[cols < 0][0]!r} of run {system!r} (fold {fold}) is not among the "
                                 "judged users of the study")
            cube[:, :, self.systems.index(system), fold, cols] = values.reshape(
                len(self.metrics), len(self.cutoffs), -1)
        return cube, users.to_numpy()

    # -------------------------------------------------------------- views
    def __repr__(self) -> str:
        return (f"Study({self.dataset!r}, systems={len(self.systems)}, metrics={self.metrics}, "
                f"cutoffs={self.cutoffs}, folds={self.n_folds}, users={len(self.users)})")

    def locate(self, metric: str, cutoff: int | None) -> tuple[int, int]:
        """``(metric position, cut-off position)`` in the cube for ``metric`` (``"P@10"`` or ``"P"`` with
        ``cutoff``); a clear error for a metric or cut-off the study did not compute."""
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

        ``pool="concat"`` (default): columns are the ``(fold, user)`` pairs evaluated; ``pool="mean"``: the users, each
        the mean over the folds evaluating it. ``cutoff`` may be omitted when the metric or the study fixes it.

        Examples
        --------
        >>> from recmetrics.data.simulate import simulate
        >>> from recmetrics.study import Study
        >>> st = Study(simulate(40, 60, 600, seed=0), ["Pop", "Random"], ["P"], [5], k=2, cache=False, progress=False)
        >>> st.scores("P@5").shape, st.scores("P", pool="mean").shape    # 75 (fold, user) units, 40 users
        ((2, 75), (2, 40))
        """
        values, folds, units = self._pooled(metric, cutoff, pool)
        cols = (pd.MultiIndex.from_arrays([folds, self.users[units]], names=["fold", "user"]) if pool == "concat"
                else pd.Index(self.users[units], name="user"))
        return pd.DataFrame(values, index=pd.Index(self.systems, name="system"), columns=cols)

    def score_matrix(self, metric: str, cutoff: int | None = None, pool: str = "concat") -> np.ndarray:
        """The values of :meth:`scores`, the same order and memory layout, without the labels."""
        return self._pooled(metric, cutoff, pool)[0]

    def _pooled(self, metric: str, cutoff: int | None, pool: str) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """``(systems x units values, the units' folds (concat; None for mean), the units' user positions)``."""
        m, c = self.locate(metric, cutoff)
        block = self.cube[m, c]                                          # (system, fold, user)
        if pool == "concat":
            f_idx, u_idx = np.nonzero(~np.isnan(block[0]))               # same users for every system
            return block[:, f_idx, u_idx], f_idx, u_idx
        if pool == "mean":
            present = ~np.isnan(block[0]).all(axis=0)
            with np.errstate(invalid="ignore"):
                return np.nanmean(block[:, :, present], axis=1), None, present
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
        1e-5, trec_eval's gm_map; ``"geometric(rec_eval)"``: rec_eval's reading, a user without a
        hit enters GF1 and GMRR as log 1). The score cube does not record which zeros come from a
        user the run has no list for (rec_eval -c floors those): under rec_eval's reading every
        zero of GF1 and GMRR here is read as a listed user without a hit.

        Example: ``study.system_scores("AP", 100, aggregate="geometric")`` is GMAP@100 per system.
        """
        from .metrics.aggregate import aggregate as _agg

        s = self.scores(metric, cutoff, pool)
        return pd.Series(_agg(s.to_numpy(), aggregate or self.aggregate, axis=1, metric=metric), index=s.index,
                         name=metric)

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


# ------------------------------------------------------------------ inputs of Study.from_runs
def _as_folds(folds) -> list:
    """``[(train, test), ...]`` from a Qrels, a test DataFrame, or a list of pairs / test parts."""
    from .data.qrels import Qrels

    def empty_train():
        return pd.DataFrame({"user": pd.Series([], dtype=object), "item": pd.Series([], dtype=object),
                             "rating": pd.Series([], dtype=np.float64)})

    if isinstance(folds, (Qrels, pd.DataFrame)):
        folds = [folds]
    if not isinstance(folds, (list, tuple)) or not folds:
        raise InputError(f"folds must be a Qrels, a test-ratings DataFrame or a non-empty list of (train, test) "
                         f"folds, got {type(folds).__name__}")
    out = []
    for f, fold in enumerate(folds):
        if isinstance(fold, (Qrels, pd.DataFrame)):
            out.append((empty_train(), fold))
        elif (isinstance(fold, (list, tuple)) and len(fold) == 2 and isinstance(fold[0], pd.DataFrame)
              and isinstance(fold[1], (Qrels, pd.DataFrame))):
            out.append(tuple(fold))
        else:
            raise InputError(f"fold {f} must be a (train DataFrame, test DataFrame or Qrels) pair or a test part "
                             f"alone, got {type(fold).__name__}")
    return out


def as_run_mapping(runs, n_folds: int) -> tuple[dict, list]:
    """``({(system, fold): Run}, systems)`` from the forms :meth:`Study.from_runs` accepts, checked:
    every value a Run, every fold in range, every system on every fold."""
    from collections.abc import Mapping

    from .data.run import Run

    if isinstance(runs, Runs):
        mapping, systems = dict(runs.runs), list(runs.systems)
    elif isinstance(runs, Mapping):
        keys = list(runs)
        if not keys:
            raise InputError("no runs given")
        pairs = [isinstance(k, tuple) and len(k) == 2 for k in keys]
        if all(pairs):
            mapping = dict(runs)
        elif any(pairs):
            raise InputError("runs mix (system, fold) keys and system names; use one form")
        else:
            mapping = {}
            for name, value in runs.items():
                if isinstance(value, (list, tuple)):
                    mapping.update({(name, f): r for f, r in enumerate(value)})
                elif n_folds != 1:
                    raise InputError(f"run {name!r} is one Run but {n_folds} folds were given; pass a list of "
                                     "runs per fold ({name: [run_fold0, ...]}) or {(name, fold): Run}")
                else:
                    mapping[(name, 0)] = value
        systems = list(dict.fromkeys(s for s, _ in mapping))
    elif isinstance(runs, (list, tuple)) and all(isinstance(r, Run) for r in runs) and runs:
        if n_folds != 1:
            raise InputError(f"a list of runs is one fold; {n_folds} folds were given")
        names = [r.name for r in runs]
        dup = [n for n in names if names.count(n) > 1]
        if dup:
            raise InputError(f"two runs are named {dup[0]!r}; run names label the systems and must be distinct")
        mapping, systems = {(r.name, 0): r for r in runs}, names
    else:
        raise InputError(f"runs must be a Runs, a {{(system, fold): Run}} or {{name: Run}} mapping or a list of "
                         f"Run, got {type(runs).__name__}")
    for (system, fold), run in mapping.items():
        if not isinstance(run, Run):
            raise InputError(f"the run of system {system!r} on fold {fold!r} is a {type(run).__name__}, not a Run "
                             "(read files with rm.study.load_runs)")
        if isinstance(fold, bool) or not isinstance(fold, (int, np.integer)) or not 0 <= fold < n_folds:
            raise InputError(f"run of system {system!r} is for fold {fold!r}, but {n_folds} fold(s) were given")
    bad = [(s, f) for s in systems for f in range(n_folds) if (s, f) not in mapping]
    if bad:
        raise InputError(f"no run for system {bad[0][0]!r} on fold {bad[0][1]}; every system needs every fold")
    return {(s, f): mapping[(s, f)] for s in systems for f in range(n_folds)}, systems


def _common_qrels(qrels, runs):
    """The fold's judgments with ids of the runs' type: when some run's user or item ids differ in
    type from the judgments' (integers on one side, strings on the other: runs read from TREC
    files against a ratings DataFrame), the judgments' ids become strings, as
    :func:`recmetrics.judged.common_ids` compares them, so every run of the fold, the cube's user
    labels and the robustness masks use the same ids."""
    from .judged import common_ids

    for run in runs:
        _, q = common_ids(run, qrels)
        if q is not qrels:
            return q
    return qrels


# ------------------------------------------------------------------ the cube cache
def _users_storable(users: np.ndarray) -> np.ndarray | None:
    """User ids as an array np.load reads without pickle (numbers or text), or None."""
    if users.dtype.kind in "iuf":
        return users
    if users.dtype.kind == "U" or (users.dtype.kind == "O" and all(isinstance(u, str) for u in users)):
        return users.astype(str)
    return None


def _save_cube(path: Path, key: str, cube: np.ndarray, users: np.ndarray) -> None:
    """Write the cube, its user ids, key and checksum atomically; skip ids that need pickling."""
    import json

    stored = _users_storable(np.asarray(users))
    if stored is None:
        return
    meta = json.dumps({"format": CUBE_FORMAT, "key": key, "users_dtype": np.asarray(users).dtype.str,
                       "checksum": array_checksum(cube, stored, key)})
    from .cache import write_atomic

    write_atomic(path, lambda tmp: np.savez(tmp, cube=cube, users=stored, meta=np.array(meta)), ".npz")


def _load_cube(path: Path, key: str, shape: tuple[int, ...]):
    """``(cube, users)`` from a cached file when it is intact and is this key's cube, else None
    (unreadable, truncated, pickled, foreign or damaged files are recomputed, never trusted)."""
    import json

    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"][()]))
            cube, users = z["cube"], z["users"]
        ok = (isinstance(meta, dict) and meta.get("format") == CUBE_FORMAT and meta.get("key") == key
              and cube.dtype == np.float64 and cube.ndim == 5 and cube.shape[:4] == tuple(shape)
              and users.ndim == 1 and len(users) == cube.shape[4]
              and meta.get("checksum") == array_checksum(cube, users, key))
    except Exception:  # BadZipFile, EOFError, ValueError (pickled arrays), KeyError, JSON errors, ...
        return None
    if not ok:
        return None
    return cube, (users.astype(object) if meta.get("users_dtype") == "|O" else users)


def require_study(study, what: str = "this analysis"):
    """``study`` when it is a :class:`Study`, else an :class:`~recmetrics.errors.InputError` saying
    why: analyses that mask judgments and re-score the runs (robustness to incompleteness) need
    the runs and their judgments, not per-user scores.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.study import require_study
    >>> require_study(pd.DataFrame([[0.1, 0.2], [0.3, 0.4]]), "robustness_study")
    Traceback (most recent call last):
    ...
    recmetrics.errors.InputError: robustness_study needs the runs and their judgments (a Study: rm.study.Study(dataset, systems, ...) or rm.study.Study.from_runs(runs, qrels)), not per-user scores: it removes judgments and re-scores the runs; got DataFrame
    """
    if isinstance(study, Study):
        return study
    raise InputError(f"{what} needs the runs and their judgments (a Study: rm.study.Study(dataset, systems, ...) or "
                     "rm.study.Study.from_runs(runs, qrels)), not per-user scores: it removes judgments and re-scores "
                     f"the runs; got {type(study).__name__}")


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
