"""A Study built once from run files and stored for every reader: the judged runs and the score cube,
without the ranked lists.

Every chapter of an own-runs book (:mod:`recmetrics.report.own_runs`) starts from the same Study of the
same files. At MovieLens-20M size (138,000 users, ten runs of top-100 lists: 13.8M lines each) reading
and judging the runs is most of a chapter's work and the item-id matrices most of its memory, while
everything a chapter computes afterwards needs only what judging produced: per run and fold, the
judged positions (row, rank, rating), the per-user totals and the judgment behind each judged position
(what the robustness scenarios mask), and the per-user scores. So:

* :func:`study_from_files` builds a :class:`~recmetrics.study.Study` one run at a time — read, judge
  (:func:`~recmetrics.judged.judge`), score (:func:`~recmetrics.evaluation.score_judged`), keep the
  judged positions, drop the lists — locally or on a Dask cluster (:func:`recmetrics.parallel.map_tasks`),
  so peak memory holds one run per worker, not all of them. The Study equals
  :meth:`Study.from_runs <recmetrics.study.Study.from_runs>` of the same files value for value (cube,
  judged positions, judgments; tested); its runs are :class:`RunInfo` (name, list lengths, depth), whose
  item ids are not kept. When a run's ids differ in type from the judgments' (integers on one side,
  strings on the other), :meth:`Study.from_runs` re-types the fold's judgments; that case returns
  ``None`` and the caller takes the ordinary path.
* :func:`save_prepared` writes such a Study (or any Study of ranking metrics) to one ``.npz`` file
  (no pickle), atomically, with its key and a checksum of every array; :func:`load_prepared` reads it
  back when the key matches and the checksum verifies, else returns ``None`` (the caller recomputes).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import __version__
from .errors import InputError

__all__ = ["RunInfo", "study_from_files", "save_prepared", "load_prepared", "write_arrays", "read_arrays",
           "PREPARED_FORMAT"]

#: format of the prepared-study files (part of their key)
PREPARED_FORMAT = 1


class RunInfo:
    """A run's shape without its lists: ``name``, ``lengths`` (list length per user, in the run's
    user order), ``depth`` and ``metadata``; ``len()`` is its number of users. What a Study built by
    :func:`study_from_files` keeps of each run (the ranked item ids are judged, then dropped)."""

    def __init__(self, name: str, lengths: np.ndarray, depth: int, metadata: dict | None = None):
        self.name, self.lengths, self.depth = str(name), np.asarray(lengths, dtype=np.int64), int(depth)
        self.metadata = dict(metadata or {})

    @classmethod
    def of(cls, run) -> "RunInfo":
        return cls(run.name, run.lengths, run.depth, run.metadata)

    def __len__(self) -> int:
        return len(self.lengths)

    def __repr__(self) -> str:
        return f"RunInfo({self.name!r}, users={len(self)}, depth={self.depth})"

    def __getattr__(self, name: str):
        if name in ("items", "scores", "users", "codes", "user_index"):
            raise InputError(f"run {self.__dict__.get('name')!r} was judged and its lists dropped (a Study of "
                             f"recmetrics.prepared): its {name} are not kept; read the run file for them")
        raise AttributeError(name)


# ------------------------------------------------------------------------------------ building
def _judged_arrays(j, sources: np.ndarray) -> dict:
    """What a Study keeps of one judged run (everything but the lists and the judgments object)."""
    return {"users": j.users, "rows": j.hits.rows, "cols": j.hits.cols, "vals": j.hits.vals, "lengths": j.lengths,
            "in_run": j.in_run, "n_rel": j.n_rel, "n_nonrel": j.n_nonrel, "run_rows": j.run_rows,
            "sources": sources, "depth": j.depth, "threshold": j.threshold, "max_rating": j.max_rating,
            "metadata": dict(j.metadata)}


def _as_judged(a: Mapping, qrels, run: RunInfo):
    from .judged import Hits, Judged

    meta = {**a["metadata"], "sources": a["sources"]}
    return Judged(users=a["users"], hits=Hits(a["rows"], a["cols"], a["vals"]), lengths=a["lengths"],
                  in_run=a["in_run"], n_rel=a["n_rel"], n_nonrel=a["n_nonrel"], depth=int(a["depth"]),
                  threshold=float(a["threshold"]), max_rating=float(a["max_rating"]), qrels=qrels, run=run,
                  run_rows=a["run_rows"], metadata=meta)


def _judge_file(reader: Callable, path: str, name: str, fold: int, qrels, specs, depth: int):
    """Read one run file, judge and score it; ``None`` when its ids differ in type from the judgments'."""
    import warnings

    from .evaluation import score_judged
    from .judged import common_ids, judge, judgment_index

    run = reader(path, name)
    if not len(run):  # pragma: no cover - the readers reject empty files
        raise InputError(f"run {name!r} (fold {fold}) holds no list")
    if common_ids(run, qrels)[1] is not qrels:
        return None
    with warnings.catch_warnings(record=True) as caught:   # shown by the caller, once, in run order
        warnings.simplefilter("always")
        j = judge(run, qrels, depth=depth)
    return (RunInfo.of(run), _judged_arrays(j, judgment_index(j)), score_judged(j, specs),
            [(str(w.message), w.category) for w in caught])


def study_from_files(runs: Mapping[str, Sequence[str]], qrels: Sequence, metrics: Sequence[str],
                     cutoffs: Sequence[int], *, reader: Callable, ratings: pd.DataFrame | None = None,
                     threshold: float | None = None, aggregate: str = "arithmetic", dataset: str = "runs",
                     client: Any = None, n_jobs: int = 1, progress: bool = False):
    """The :class:`~recmetrics.study.Study` of run files, built one run at a time (module docstring).

    ``runs``: ``{name: [path of fold 0, path of fold 1, ...]}``; ``qrels``: one
    :class:`~recmetrics.data.qrels.Qrels` (or test-ratings DataFrame) per fold; ``reader(path, name)``
    returns a :class:`~recmetrics.data.run.Run` (a module-level function when ``client`` is a Dask
    cluster); the rest as :meth:`Study.from_runs <recmetrics.study.Study.from_runs>`. Runs are read,
    judged and scored by :func:`recmetrics.parallel.map_tasks` (``n_jobs`` processes or the Dask
    ``client``; the judgments are sent to each worker once). Returns ``None`` when some run's ids differ
    in type from its judgments' (use :meth:`Study.from_runs` then).
    """
    import warnings

    from .data.qrels import Qrels
    from .evaluation import parse_metrics
    from .metrics.aggregate import method_name
    from .parallel import map_tasks
    from .runs import Runs
    from .runs.folds import fold_qrels
    from .study import Study, _as_folds, _check_axes

    study = Study.__new__(Study)
    study.metrics, study.cutoffs = _check_axes(metrics, cutoffs)
    study.aggregate = method_name(aggregate)
    study.specs = parse_metrics([f"{m}@{c}" for m in study.metrics for c in study.cutoffs])
    folds = _as_folds(list(qrels))
    if threshold is None:                                     # as Study.from_runs resolves it
        given = {q.threshold for _, q in folds if isinstance(q, Qrels)}
        if len(given) > 1:
            raise InputError(f"the folds' Qrels have different thresholds {sorted(given)}; pass threshold=")
        threshold = given.pop() if given else 4.0
    study.threshold = float(threshold)
    if ratings is None:
        train, test = folds[0]
        parts = [train, test.to_frame() if isinstance(test, Qrels) else test]
        ratings = pd.concat([p for p in parts if len(p)] or parts[1:], ignore_index=True)
    study.ratings, study.dataset = ratings, dataset
    study.qrels = [fold_qrels(test, study.threshold) for _, test in folds]
    systems = list(runs)
    if len(systems) < 2:
        raise InputError(f"a Study needs at least 2 systems to compare, got {systems}")
    for name in systems:
        if len(runs[name]) != len(folds):
            raise InputError(f"run {name!r} has {len(runs[name])} file(s) for {len(folds)} fold(s)")
    depth = max(study.cutoffs)
    tasks = [(reader, str(runs[s][f]), s, f, study.qrels[f], study.specs, depth)
             for s in systems for f in range(len(folds))]
    results = map_tasks(_judge_file, tasks, n_jobs=n_jobs, client=client, progress=progress, desc="judging",
                        prefer="processes", scatter=study.qrels)
    if any(r is None for r in results):
        return None
    infos, judged = {}, {}
    for (_, _, s, f, *_), (info, arrays, values, caught) in zip(tasks, results):
        for message, category in caught:
            warnings.warn(message, category, stacklevel=2)
        infos[(s, f)] = info
        judged[(s, f)] = (arrays, values)
    study.runs = Runs(infos, folds, systems)
    return _assemble(study, judged)


def _assemble(study, judged: Mapping, stored: tuple | None = None) -> Any:
    """Fill a Study's remaining attributes from ``{(system, fold): (judged arrays, scores)}``: the cube
    laid out as :meth:`Study._compute` lays it out, or ``stored`` ``(cube, users)``."""
    study.systems = list(study.runs.systems)
    study.n_folds = study.runs.n_folds
    study._client, study._n_jobs = None, 1
    study._judged = {(s, f): _as_judged(arrays, study.qrels[f], study.runs[(s, f)])
                     for (s, f), (arrays, _) in judged.items()}
    if stored is not None:
        study.cube, study.users = stored
    else:
        users = pd.Index(pd.unique(np.concatenate([q.relevant_users for q in study.qrels])))
        users = users.sort_values() if users.inferred_type != "mixed" else users
        n_m, n_c = len(study.metrics), len(study.cutoffs)
        cube = np.full((n_m, n_c, len(study.systems), study.n_folds, len(users)), np.nan)
        for (s, f), (_, values) in judged.items():
            j = study._judged[(s, f)]
            cols = users.get_indexer(j.users)
            if (cols < 0).any():  # pragma: no cover - the users come from these judgments
                raise InputError(f"user {j.users[cols < 0][0]!r} of run {s!r} (fold {f}) is not a judged user")
            cube[:, :, study.systems.index(s), f, cols] = np.asarray(values).reshape(n_m, n_c, -1)
        study.cube, study.users = cube, users.to_numpy()
    study.coords = {"metric": study.metrics, "cutoff": study.cutoffs, "system": study.systems,
                    "fold": list(range(study.n_folds)), "user": study.users}
    return study


# ------------------------------------------------------------------------------------ storing
_JUDGED = ("users", "rows", "cols", "vals", "lengths", "in_run", "n_rel", "n_nonrel", "run_rows", "sources")


def _storable(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind == "O":
        if not all(isinstance(x, str) for x in a.ravel().tolist()):
            raise InputError(f"{what}: ids of mixed types cannot be stored without pickling")
        return a.astype(str)
    return a


def _small(a: np.ndarray) -> np.ndarray:
    """A lossless narrower dtype for the large integer/float arrays (restored on load)."""
    if a.dtype.kind in "iu" and a.size:
        lo, hi = int(a.min()), int(a.max())
        for dt in (np.int16, np.int32):
            if np.iinfo(dt).min <= lo and hi <= np.iinfo(dt).max:
                return a.astype(dt)
    if a.dtype == np.float64 and a.size:
        b = a.astype(np.float32)
        if np.array_equal(b.astype(np.float64), a, equal_nan=True):
            return b
    return a


def _digest(meta: dict, arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 (32 hex digits) of ``meta`` (JSON) and every array's name, dtype, shape and bytes."""
    import hashlib

    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"|{name}|{a.dtype.str}|{a.shape}|".encode())
        if a.size:   # (a view with a zero in its shape cannot be cast)
            h.update(memoryview(a).cast("B"))
    return h.hexdigest()[:32]


def save_prepared(study, path, key: str) -> Path:
    """Write ``study`` (its cube, judgments, ratings and every judged run, no lists) to ``path`` (one
    ``.npz``, no pickle) under ``key``, atomically. Returns the path."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {"cube": study.cube, "users": study.users}
    dtypes: dict[str, str] = {}
    qmeta = []
    for f, q in enumerate(study.qrels):
        arrays.update({f"q{f}_ucodes": q._ucodes, f"q{f}_users": q.user_index.to_numpy(), f"q{f}_icodes": q._icodes,
                       f"q{f}_items": q.item_index.to_numpy(), f"q{f}_ratings": q._ratings})
        qmeta.append({"threshold": q.threshold, "max_rating": q.max_rating, "negative": q.negative})
    rcols = [c for c in study.ratings.columns]
    first = study.qrels[0].to_frame()
    same = rcols == list(first.columns) and len(first) == len(study.ratings) and all(   # judgments alone
        np.array_equal(study.ratings[c].to_numpy(), first[c].to_numpy()) for c in rcols)
    for c in ([] if same else rcols):
        arrays[f"ratings_{c}"] = study.ratings[c].to_numpy()
    runs, judged = [], []
    for k, (s, f) in enumerate((s, f) for s in study.systems for f in range(study.n_folds)):
        run, j = study.runs[(s, f)], study.judged(s, f)
        sources = j.metadata.get("sources")
        if sources is None:
            from .judged import judgment_index

            sources = judgment_index(j)
        arrays[f"r{k}_lengths"] = run.lengths
        runs.append({"system": s, "fold": f, "name": run.name, "depth": run.depth,
                     "metadata": json.loads(json.dumps(run.metadata, default=str))})
        a = _judged_arrays(j, sources)
        shared = f"f{f}_users"
        if shared not in arrays:
            arrays[shared] = a["users"]
        for name in _JUDGED:
            if name != "users" or not np.array_equal(a["users"], arrays[shared]):   # every run's users: shared
                arrays[f"j{k}_{name}"] = a[name]
        judged.append({"depth": a["depth"], "threshold": a["threshold"], "max_rating": a["max_rating"],
                       "metadata": json.loads(json.dumps({m: v for m, v in a["metadata"].items() if m != "sources"},
                                                         default=str))})
    for name, a in list(arrays.items()):
        kept = _storable(a, name)                                   # text ids: unicode, restored as objects
        small = _small(kept) if name != "cube" else kept
        if small.dtype != a.dtype:
            dtypes[name], arrays[name] = a.dtype.str, small
    meta = {"format": PREPARED_FORMAT, "key": key, "version": __version__, "systems": list(study.systems),
            "metrics": list(study.metrics), "cutoffs": list(study.cutoffs), "threshold": study.threshold,
            "aggregate": study.aggregate, "dataset": study.dataset, "n_folds": study.n_folds, "qrels": qmeta,
            "ratings": rcols, "ratings_dtypes": {c: str(study.ratings[c].dtype) for c in rcols},
            "ratings_are_judgments": same, "runs": runs, "judged": judged, "dtypes": dtypes}
    return write_arrays(path, meta, arrays)


def write_arrays(path, meta: dict, arrays: Mapping[str, np.ndarray]) -> Path:
    """One ``.npz`` of ``arrays`` (no object arrays) and ``meta`` (JSON) with the checksum of both,
    written to a temporary file and renamed into place (readers never see half a file)."""
    path = Path(path)
    if any(np.asarray(a).dtype.kind == "O" for a in arrays.values()):
        raise InputError("write_arrays stores numbers and text only (an object array would need pickling)")
    meta = {**meta, "checksum": _digest(meta, arrays)}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
    os.close(fd)
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, allow_pickle=False, __meta__=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def read_arrays(path) -> tuple[dict, dict] | None:
    """``(meta, arrays)`` of a file of :func:`write_arrays`, or ``None`` when it is missing, damaged or
    fails its checksum."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            arrays = {n: z[n] for n in z.files if n != "__meta__"}
    except Exception:  # any damage (zip, header, JSON, missing entry): not trusted
        return None
    expected = meta.pop("checksum", None)
    return (meta, arrays) if _digest(meta, arrays) == expected else None


def load_prepared(path, key: str):
    """The Study stored at ``path`` under ``key`` by :func:`save_prepared`, or ``None`` when the file is
    missing, unreadable, of another format, key or package version, or fails its checksum (the caller
    recomputes). The Study's ``origin`` is ``(absolute path, key)``: a Dask worker that can read the
    file loads it there instead of receiving it (:mod:`recmetrics.meta.sample_context`)."""
    got = read_arrays(path)
    if got is None:
        return None
    meta, arrays = got
    if meta.get("format") != PREPARED_FORMAT or meta.get("key") != key or meta.get("version") != __version__:
        return None
    for name, dt in meta["dtypes"].items():
        arrays[name] = arrays[name].astype(np.dtype(dt))
    study = _rebuild(meta, arrays)
    study.origin = (str(Path(path).resolve()), key)   # where another process can load the same Study
    return study


def _rebuild(meta: dict, arrays: dict):
    from .data.qrels import Qrels
    from .evaluation import parse_metrics
    from .runs import Runs
    from .study import Study, _as_folds

    study = Study.__new__(Study)
    study.metrics, study.cutoffs = list(meta["metrics"]), [int(c) for c in meta["cutoffs"]]
    study.aggregate, study.threshold, study.dataset = meta["aggregate"], float(meta["threshold"]), meta["dataset"]
    study.specs = parse_metrics([f"{m}@{c}" for m in study.metrics for c in study.cutoffs])
    study.qrels = []
    for f, q in enumerate(meta["qrels"]):
        qr = Qrels.__new__(Qrels)
        qr.negative, qr.threshold, qr.max_rating = q["negative"], float(q["threshold"]), float(q["max_rating"])
        qr._store(arrays[f"q{f}_ucodes"], arrays[f"q{f}_users"], arrays[f"q{f}_icodes"], arrays[f"q{f}_items"],
                  arrays[f"q{f}_ratings"])
        study.qrels.append(qr)
    if meta["ratings_are_judgments"]:
        study.ratings = study.qrels[0].to_frame()
        for c, dt in meta["ratings_dtypes"].items():
            if str(study.ratings[c].dtype) != dt:
                study.ratings[c] = study.ratings[c].astype(dt)
    else:
        study.ratings = pd.DataFrame({c: arrays[f"ratings_{c}"] for c in meta["ratings"]})
    infos, judged = {}, {}
    for k, (r, jm) in enumerate(zip(meta["runs"], meta["judged"])):
        key = (r["system"], int(r["fold"]))
        infos[key] = RunInfo(r["name"], arrays[f"r{k}_lengths"], r["depth"], r["metadata"])
        a = {name: arrays.get(f"j{k}_{name}", arrays[f"f{key[1]}_users"] if name == "users" else None)
             for name in _JUDGED}
        a.update(jm)
        judged[key] = (a, None)
    study.runs = Runs(infos, _as_folds(study.qrels), list(meta["systems"]))
    return _assemble(study, judged, (arrays["cube"], arrays["users"]))
