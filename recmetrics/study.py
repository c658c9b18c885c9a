"""Runs as artefacts: fit systems on every fold, cache their runs, evaluate them, load outside runs.

* :func:`run_systems` splits the ratings (k-fold by default), fits every system on every fold's
  training part and recommends the top ``n`` for the fold's test users, with a progress bar.
  Each run is cached as a parquet file, keyed by a hash of (ratings content, split parameters,
  fold, system with all its hyper-parameters, ``n``, package version, and the source code of
  the system's module), so notebooks load runs instead of retraining; a cached load returns an
  identical :class:`~recmetrics.data.run.Run`.
  The result, :class:`Runs`, maps ``(system, fold)`` to runs and keeps the folds (for Qrels).
* :func:`evaluate_systems` scores every run against its fold's test judgments and returns one
  long table ``system, fold, user, metric, value`` (one row per evaluated user and metric);
  :func:`summarise` averages it (users within a fold, then folds) into a system x metric table.
* :func:`load_runs` reads runs produced by other tools (RecBole, Elliot, LensKit, trec_eval
  style files): TREC run files and ``user,item,score[,rank]`` CSV/TSV/parquet tables.

Cache location: ``cache_dir`` argument, else ``$RECMETRICS_CACHE``, else
``$XDG_CACHE_HOME/recmetrics/runs``, else ``~/.cache/recmetrics/runs``. Files are written
atomically, so concurrent notebooks may share a cache. Delete the directory to clear it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import __version__
from .cache import cache_dir
from .data.qrels import Qrels
from .data.run import Run
from .errors import InputError

__all__ = ["Runs", "run_systems", "evaluate_systems", "summarise", "load_runs", "default_cache_dir",
           "ratings_hash", "make_folds", "save_run", "load_run", "RUN_SUFFIXES", "Study", "per_user_scores", "POOLS",
           "AXES", "tail_folds", "evaluate_tail"]

#: file suffixes :func:`load_runs` picks up in a directory (TREC runs have many conventional names)
RUN_SUFFIXES = tuple(s + z for s in (".csv", ".tsv", ".parquet", ".trec", ".run", ".res", ".txt")
                     for z in ("", ".gz", ".bz2", ".xz", ".zst") if not (s == ".parquet" and z))
_FORMAT = 1


# ------------------------------------------------------------------------------------ cache
def default_cache_dir() -> Path:
    """``$RECMETRICS_CACHE``, else ``$XDG_CACHE_HOME/recmetrics/runs``, else ``~/.cache/recmetrics/runs``."""
    return cache_dir("runs", "RECMETRICS_CACHE")


def _frame_of(ratings: Any) -> pd.DataFrame:
    if isinstance(ratings, str):
        from .data import datasets

        ratings = datasets.load(ratings)
    if not isinstance(ratings, pd.DataFrame) and isinstance(getattr(ratings, "ratings", None), pd.DataFrame):
        ratings = ratings.ratings
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"expected a ratings DataFrame (user, item, rating[, timestamp]), a Dataset or a "
                         f"dataset name, got {type(ratings).__name__}")
    return ratings


def ratings_hash(ratings: pd.DataFrame) -> str:
    """Content hash of a ratings table (columns user, item, rating[, timestamp]; row order ignored)."""
    cols = [c for c in ("user", "item", "rating", "timestamp") if c in ratings.columns]
    frame = ratings[cols]
    if len(frame):
        frame = frame.sort_values(cols[:2], kind="stable")
    h = hashlib.sha256(",".join(cols).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


_CODE_HASHES: dict[str, str] = {}


def _code_hash(cls) -> str:
    """Hash of the source files a system's runs depend on (its module, the recommender base and
    helpers, and the Run construction), so editing an algorithm invalidates its cached runs."""
    import inspect
    import sys

    files = {inspect.getsourcefile(c) for c in cls.__mro__ if c is not object}
    files |= {inspect.getsourcefile(sys.modules[m]) for m in
              ("recmetrics.recommenders.base", "recmetrics.recommenders._util", "recmetrics.data.run")}
    h = hashlib.sha256()
    for f in sorted(x for x in files if x):
        if f not in _CODE_HASHES:
            _CODE_HASHES[f] = hashlib.sha256(Path(f).read_bytes()).hexdigest()
        h.update(_CODE_HASHES[f].encode())
    return h.hexdigest()[:16]


def _spec_of(rec) -> dict:
    from .recommenders.registry import defaults

    cls = type(rec)
    params = {k: getattr(rec, k, v) for k, v in defaults(cls).items()}
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "name": rec.name, "params": params,
            "code": _code_hash(cls)}


def _key(payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def save_run(run: Run, path, metadata: dict | None = None) -> Path:
    """Write a run (every cell of its ``(n_users, depth)`` matrices, so the load is identical) as
    parquet, atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n_users, depth = run.items.shape
    offsets = pa.array(np.arange(n_users + 1, dtype=np.int32) * depth)
    scores = run.scores if run.scores is not None else np.full((n_users, depth), np.nan)
    table = pa.table({
        "user": pa.array(run.users),
        "length": pa.array(run.lengths.astype(np.int64)),
        "items": pa.ListArray.from_arrays(offsets, pa.array(run.items.ravel())),
        "scores": pa.ListArray.from_arrays(offsets, pa.array(np.asarray(scores, dtype=np.float64).ravel())),
    })
    meta = {"format": _FORMAT, "name": run.name, "depth": depth, "has_scores": run.scores is not None,
            "user_dtype": run.users.dtype.str, "item_dtype": run.items.dtype.str,
            "run_metadata": run.metadata, "extra": metadata or {}}
    table = table.replace_schema_metadata({b"recmetrics": json.dumps(meta, default=str).encode()})
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".parquet")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _restore(values: np.ndarray, dtype_str: str) -> np.ndarray:
    dt = np.dtype(dtype_str)
    if dt.kind in "USO":
        return np.asarray(values.astype(str), dtype=dt) if dt.kind == "U" else values.astype(object)
    return values.astype(dt)


def load_run(path) -> tuple[Run, dict]:
    """Read a run written by :func:`save_run`; returns ``(run, extra metadata)``."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"recmetrics"])
    if meta.get("format") != _FORMAT:
        raise InputError(f"{path}: unsupported cached run format {meta.get('format')!r}")
    depth = int(meta["depth"])
    n_users = table.num_rows
    users = _restore(table.column("user").to_numpy(zero_copy_only=False), meta["user_dtype"])
    items = table.column("items").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    items = _restore(items, meta["item_dtype"]).reshape(n_users, depth)
    scores = None
    if meta["has_scores"]:
        scores = table.column("scores").combine_chunks().flatten().to_numpy().reshape(n_users, depth)
    run = Run(users, items, table.column("length").to_numpy(), scores, meta["name"], dict(meta["run_metadata"]))
    return run, meta.get("extra", {})


# ------------------------------------------------------------------------------------ folds
def make_folds(ratings, split: Any = "kfold", *, k: int = 5, seed: Any = 0, test_size: float = 0.2,
               **split_kw) -> tuple[list[tuple[pd.DataFrame, pd.DataFrame]], dict]:
    """The ``(train, test)`` folds and the parameters that identify them (for cache keys).

    ``split``: ``"kfold"`` (``k`` folds), ``"holdout"`` (one fold, ``test_size``), ``"temporal"``
    (one fold; pass ``cut=``/``cut_quantile=``/``last_n=``) or a ready list of ``(train, test)``.
    """
    from .data import splits

    if isinstance(split, (list, tuple)):
        folds = list(split)
        if not folds or not all(isinstance(f, (list, tuple)) and len(f) == 2 for f in folds):
            raise InputError("split given as folds must be a non-empty list of (train, test) DataFrames")
        params = {"method": "given", "folds": [[ratings_hash(tr), ratings_hash(te)] for tr, te in folds]}
        return folds, params
    if not isinstance(split, str):
        raise InputError(f"split must be 'kfold', 'holdout', 'temporal' or a list of (train, test) folds, "
                         f"got {type(split).__name__}")
    ratings = _frame_of(ratings)
    method = split.strip().lower().replace("_", "-")
    method = {"k-fold": "kfold", "cv": "kfold"}.get(method, method)
    if method == "kfold":
        params = {"k": k, "seed": seed, **split_kw}
    elif method == "holdout":
        params = {"test_size": test_size, "seed": seed, **split_kw}
    else:
        params = dict(split_kw)
    if isinstance(seed, np.random.Generator):
        raise InputError("run_systems needs an integer seed (a Generator cannot key the run cache)")
    out = splits.split(ratings, method, **params)
    folds = out if isinstance(out, list) else [out]
    return folds, {"method": method, **params, "data": ratings_hash(ratings)}


# ------------------------------------------------------------------------------------ runs
@dataclass
class Runs(Mapping):
    """``(system, fold) -> Run`` plus the folds they were computed on.

    ``systems`` keeps the requested order; ``folds[f]`` is ``(train, test)``; ``timings`` has one
    row per run (``system, fold, fit_s, recommend_s, cached``) - the times of the original fit
    for cached runs.
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
        return len(self.folds)

    def system(self, name: str) -> list[Run]:
        """The runs of one system, fold by fold."""
        if name not in self.systems:
            from .errors import unknown_name

            raise unknown_name("system in these runs", name, self.systems)
        return [self.runs[(name, f)] for f in range(self.n_folds)]

    def qrels(self, fold: int, threshold: float = 4.0) -> Qrels:
        """The judgments of one fold (its test ratings)."""
        return Qrels(self.folds[fold][1], threshold=threshold)

    def evaluate(self, metrics, threshold: float = 4.0, **kw) -> pd.DataFrame:
        """Shortcut for :func:`evaluate_systems` on these runs."""
        return evaluate_systems(self, self.folds, metrics, threshold=threshold, **kw)


def _fit_recommend(spec: str, fold: int, train: pd.DataFrame, users: np.ndarray, n: int, exclude_seen: bool):
    from .recommenders import create

    rec = create(spec)
    t0 = time.perf_counter()
    rec.fit(train)
    t1 = time.perf_counter()
    run = rec.recommend(users, n=n, exclude_seen=exclude_seen)
    t2 = time.perf_counter()
    run.metadata.update({"system": rec.name, "fold": fold})
    return run, {"fit_s": t1 - t0, "recommend_s": t2 - t1}


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
    """
    from .recommenders import ZOO, create

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
        spec = _spec_of(rec)
        for f in range(len(folds)):
            key = _key({"split": split_params, "fold": f, "system": spec, "n": int(n),
                        "exclude_seen": bool(exclude_seen), "version": __version__})
            path = root / f"{key}.parquet"
            tasks.append((rec.name, f, path))

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc="runs", unit="run")
    todo = []
    for name, f, path in tasks:
        if cache and path.exists():
            try:
                run, extra = load_run(path)
            except Exception:  # a corrupt/foreign file: recompute it
                todo.append((name, f, path))
                continue
            runs[(name, f)] = run
            rows.append({"system": name, "fold": f, "fit_s": extra.get("fit_s", np.nan),
                         "recommend_s": extra.get("recommend_s", np.nan), "cached": True})
            if bar is not None:
                bar.update(1)
        else:
            todo.append((name, f, path))

    def job(name, f):
        train, test = folds[f]
        users = pd.unique(test["user"].to_numpy())
        return _fit_recommend(name, f, train, users, int(n), exclude_seen)

    if client is not None and todo:
        from .parallel import map_tasks

        results = map_tasks(job, [(name, f) for name, f, _ in todo], client=client)
    elif n_jobs == 1 or len(todo) <= 1:
        results = (job(name, f) for name, f, _ in todo)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(job)(name, f) for name, f, _ in todo)
    for (name, f, path), (run, times) in zip(todo, results):
        if cache:
            save_run(run, path, metadata={**times, "system": name, "fold": f})
        runs[(name, f)] = run
        rows.append({"system": name, "fold": f, **times, "cached": False})
        if bar is not None:
            bar.set_postfix_str(f"{name} fold {f}")
            bar.update(1)
    if bar is not None:
        bar.close()
    ordered = {(name, f): runs[(name, f)] for name, f, _ in tasks}
    timings = pd.DataFrame(rows, columns=["system", "fold", "fit_s", "recommend_s", "cached"])
    order = {name: i for i, name in enumerate(names)}
    timings = timings.sort_values(["system", "fold"], key=lambda c: c.map(order) if c.name == "system" else c)
    return Runs(ordered, folds, names, {"split": split_params, "n": int(n), "cache_dir": str(root)},
                timings.reset_index(drop=True))


# ------------------------------------------------------------------------------------ evaluation
def evaluate_systems(runs, folds=None, metrics=("nDCG@100", "P@100"), threshold: float = 4.0,
                     users: Any = "relevant", **context) -> pd.DataFrame:
    """Per-user scores of every run: a long DataFrame ``system, fold, user, metric, value``.

    ``runs`` is a :class:`Runs` or a mapping ``(system, fold) -> Run``; ``folds`` the list of
    ``(train, test)`` (taken from ``runs.folds`` when omitted). Each fold's judgments are its test
    ratings with relevance ``rating >= threshold``. Users follow :func:`recmetrics.evaluate`'s
    policy (default: test users with a relevant item; a user without a list scores 0).
    """
    from .evaluation import evaluate, parse_metrics

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
            qrels[fold] = Qrels(folds[fold][1], threshold=threshold)
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
    hitting-time ranking favours rare items, Yin et al. 2012)."""
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
    is not raised here."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"run .*: none of its items is a judged item")
        return evaluate_systems(runs, tail_folds(runs.folds, head_share), metrics, **kw)


def summarise(scores: pd.DataFrame, statistic: str = "mean") -> pd.DataFrame:
    """System x metric table from :func:`evaluate_systems`' long table: the per-fold mean over
    users, then the mean over folds (``statistic="std"`` gives the spread over folds). Systems
    keep their order of appearance."""
    if statistic not in ("mean", "std"):
        raise InputError(f"statistic must be 'mean' or 'std', got {statistic!r}")
    per_fold = scores.groupby(["system", "fold", "metric"], sort=False)["value"].mean()
    table = per_fold.groupby(["system", "metric"], sort=False).agg(statistic).unstack("metric")
    metrics = list(dict.fromkeys(scores["metric"]))
    return table.reindex(index=list(dict.fromkeys(scores["system"])), columns=metrics)


# ------------------------------------------------------------------------------------ outside runs
def _stem(path: Path) -> str:
    name = path.name
    for suffix in sorted(RUN_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def load_runs(paths_or_dir, **kw) -> dict[str, Run]:
    """Read runs produced by other tools: ``{name: Run}`` with the name taken from the file stem.

    ``paths_or_dir`` is a directory (every non-hidden file ending in one of :data:`RUN_SUFFIXES`,
    sorted by name), one path, or a list of paths. ``.csv``/``.tsv``/``.parquet`` files are
    ``user,item,score[,rank]`` tables (a ``rank`` column keeps the given order), anything else is
    a TREC run file (``qid Q0 docno rank score tag``); see :func:`recmetrics.data.io.read_run`.
    Compressed files (``.gz``, ``.bz2``, ``.xz``, ``.zst``) are read too; ids are strings.
    Keyword arguments go to the reader (e.g. ``max_docs=100``).
    """
    from .data.io import read_run

    if isinstance(paths_or_dir, (str, os.PathLike)):
        p = Path(paths_or_dir).expanduser()
        if p.is_dir():
            paths = sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith(".")
                           and q.name.lower().endswith(RUN_SUFFIXES))
            if not paths:
                raise InputError(f"directory {str(p)!r} holds no run file (looked for {', '.join(RUN_SUFFIXES)})")
        else:
            paths = [p]
    else:
        paths = [Path(q).expanduser() for q in paths_or_dir]
        if not paths:
            raise InputError("load_runs got an empty list of paths")
    out: dict[str, Run] = {}
    origin: dict[str, Path] = {}
    for path in paths:
        if not path.exists():
            raise InputError(f"run file {str(path)!r} does not exist")
        name = _stem(path)
        if name in out:
            raise InputError(f"two run files are named {name!r}: {str(origin[name])!r} and {str(path)!r}; "
                             "rename one (the name comes from the file stem)")
        run = read_run(path, name=name, **kw)
        run.metadata.setdefault("path", str(path))
        out[name] = run
        origin[name] = path
    return out


# ------------------------------------------------------------------------------------ the score cube
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
        self.ratings = _frame_of(dataset)
        self.dataset = dataset if isinstance(dataset, str) else "ratings"
        from . import recommenders

        if systems is None:
            systems = recommenders.PAPER_SYSTEMS
        self.runs = run_systems(self.ratings, systems, split, k=k, seed=seed, n=max(self.cutoffs),
                                cache_dir=cache_dir, cache=cache, progress=progress, n_jobs=n_jobs, client=client,
                                **split_kw)
        key = _key({"runs": self.runs.params["split"], "n": self.runs.params["n"],
                    "systems": [_spec_of(recommenders.create(s)) for s in self.runs.systems],
                    "metrics": [str(s) for s in self.specs], "threshold": self.threshold, "version": __version__})
        path = (Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()).parent / "studies" \
            / f"{key}.npz"
        self._build(path if cache else None, progress, client, n_jobs)

    @classmethod
    def from_runs(cls, runs, folds, metrics=("P", "nDCG"), cutoffs=(100,), *, ratings=None,
                  aggregate: str = "arithmetic", threshold: float = 4.0, progress: bool = True,
                  dataset: str = "runs") -> "Study":
        """A Study of runs made elsewhere: ``runs`` maps ``(system, fold)`` to a :class:`Run` (or is a
        :class:`Runs`), ``folds`` lists ``(train, test)``; ``ratings`` (default: all folds' ratings)
        gives the user profiles of the large-users robustness scenario. Not cached on disk."""
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
        """The :class:`~recmetrics.judged.Judged` of one run (judged once, kept in memory)."""
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

        ``pool="concat"``: columns are ``(fold, user)`` pairs evaluated in that fold;
        ``pool="mean"``: columns are users, each the mean over the folds that evaluate the user.
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
        """``{metric: systems x units}`` for every metric at one cut-off (for discriminative power)."""
        return {m: self.scores(m, cutoff, pool) for m in self.metrics}

    def system_scores(self, metric: str, cutoff: int | None = None, pool: str = "concat",
                      aggregate: str | None = None) -> pd.Series:
        """One value per system: ``aggregate`` (default the study's) over the pooled units."""
        from .metrics.aggregate import aggregate as _agg

        s = self.scores(metric, cutoff, pool)
        return pd.Series(_agg(s.to_numpy(), aggregate or self.aggregate, axis=1), index=s.index, name=metric)

    def table(self, cutoff: int | None = None, pool: str = "concat", aggregate: str | None = None) -> pd.DataFrame:
        """Systems x metrics table of :meth:`system_scores` at one cut-off."""
        return pd.concat([self.system_scores(m, cutoff, pool, aggregate) for m in self.metrics], axis=1)

    def long(self) -> pd.DataFrame:
        """Tidy view: one row per evaluated ``metric, cutoff, system, fold, user`` with its ``value``."""
        idx = np.nonzero(~np.isnan(self.cube))
        out = {name: np.asarray(self.coords[name], dtype=object if name in ("user", "metric", "system") else None)[i]
               for name, i in zip(AXES, idx)}
        out["value"] = self.cube[idx]
        return pd.DataFrame(out)


def per_user_scores(scores, metric: str | None = None, cutoff: int | None = None, pool: str = "concat"):
    """Systems x units DataFrame from a :class:`Study` (with ``metric``) or plain scores (a DataFrame
    or a 2-D array, systems in rows); checks shape and NaN."""
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
