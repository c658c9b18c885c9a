"""The own-runs book reads and judges its inputs once per build, and computes each analysis once.

:func:`prepare` (called by :func:`recmetrics.report.own_runs.plan`, which reads every file anyway to
check it) builds the :class:`~recmetrics.study.Study` of a ``source`` one run at a time
(:func:`recmetrics.prepared.study_from_files`: read, judge, score, drop the lists; on a Dask cluster
with ``scheduler``) and stores it in the run cache, ``<run cache>/prepared/<key>.npz``
(:func:`~recmetrics.prepared.save_prepared`). The ``key`` hashes the source (paths, threshold, folds,
label), each file's size, modification time and inode, the metrics and cut-offs, the file format and
the package version; it is written into the source as ``source["prepared"]``. Every chapter's
:func:`~recmetrics.report.own_sources.load_study` computes the key again from the files as they are
now and loads the stored Study only when it matches (a file changed since planning changes its size
or modification time: the chapter reads the files again) and the stored file verifies its checksum.
The folder keeps the :data:`KEEP` most recently used prepared Studies (older ones are deleted when a
new one is stored); deleting it any time only makes the next build read its files again.

:func:`discriminative_power` and :func:`robustness` are the chapters' two long computations, stored
under the prepared key and their parameters (``<key>-dp-<hash>.npz``, ``<key>-robustness-<hash>.npz``),
so chapter 5 (which metric to report) reads what chapters 2 and 3 computed instead of computing it again,
and chapter 1's permutation tests are chapter 2's discriminative power (:func:`comparisons`: the same
test, one sign matrix for every metric and cut-off); without a prepared key they compute (and store
nothing). Each is computed once per key: whoever computes it holds an ``flock`` on ``<result>.lock``
and the others wait for it, then read. A build starts the robustness of chapter 3 at once in a
background process (:func:`start_robustness`: one thread, or the cores under the paper profile at a
lower priority, :func:`recmetrics.parallel.lower_priority`) while chapters 1, 2 and 4 execute;
chapters 3 and 5 then read it. Values are those of :func:`recmetrics.meta.discriminative_power`
and :func:`recmetrics.meta.robustness.robustness_study`, bit for bit (tested).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..cache import file_lock

__all__ = ["prepare", "load", "source_key", "candidates", "comparisons", "discriminative_power", "robustness",
           "read_robustness", "advice", "start_robustness"]


def _folder() -> Path:
    from ..runs.cache import default_cache_dir

    return default_cache_dir() / "prepared"


def source_key(source: Mapping, metrics: Sequence[str], cutoffs: Sequence[int]) -> str:
    """The key of a source's prepared Study: its settings and files (name, size, modification time,
    inode) as they are now, the metrics, the cut-offs, the format and the package version."""
    from .. import __version__
    from ..prepared import PREPARED_FORMAT
    from ..runs.cache import cache_key

    paths = [*source["qrels"], *(p for ps in source["runs"].values() for p in ps)]
    if source.get("ratings"):
        paths.append(source["ratings"])
    files = []
    for p in paths:
        st = os.stat(p)
        # the file's name, not its path: the same files linked into a book's inputs folder
        # (report.own_book.stage_inputs) keep their key (a link has the target's size, time and inode)
        files.append([os.path.basename(str(p)), st.st_size, st.st_mtime_ns, st.st_ino])
    settings = {k: v for k, v in source.items() if k not in ("prepared", "content", "qrels", "runs", "ratings")}
    settings["runs"] = sorted(source["runs"])
    return cache_key({"source": settings, "files": files, "metrics": [str(m) for m in metrics],
                      "cutoffs": [int(c) for c in cutoffs], "format": PREPARED_FORMAT, "version": __version__})


def prepare(source: Mapping, metrics: Sequence[str], cutoffs: Sequence[int], *, read_judgments: Callable,
            read_run: Callable, scheduler: Any = None):
    """``(key, Study)``: the prepared Study of ``source`` (stored under ``key`` in the run cache; an
    earlier build's when its key matches), or ``(None, None)`` when it cannot be prepared (ids of
    different types in a run and its judgments, or of mixed types): the chapters then read the files.
    ``read_judgments(source)`` gives ``([Qrels per fold], ratings or None)`` and ``read_run(path, name)``
    a Run (:mod:`recmetrics.report.own_sources`' readers)."""
    from ..errors import InputError
    from ..prepared import load_prepared, save_prepared, study_from_files

    key = source_key(source, metrics, cutoffs)
    path = _folder() / f"{key}.npz"
    study = load_prepared(path, key)
    if study is not None:
        for text in _said(path):   # what judging the runs warned about, said again by every build
            warnings.warn(text, UserWarning, stacklevel=2)
    else:
        qrels, ratings = read_judgments(source)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study = study_from_files(source["runs"], qrels, list(metrics), list(cutoffs), reader=read_run,
                                     ratings=ratings, threshold=source.get("threshold"),
                                     dataset=str(source.get("label", "runs")), client=scheduler, n_jobs=N_JOBS)
        said = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UserWarning)))
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        if study is None:
            return None, None
        try:
            save_prepared(study, path, key)
        except InputError:                   # ids that cannot be stored without pickling: not shared
            return None, None
        _say(path, said)
        _prune(_folder(), KEEP)
    study.prepared_key = key
    return key, study


def _said_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}-warnings.json")


def _say(path: Path, said: Sequence[str]) -> None:
    """Keep the warnings of preparing the Study stored at ``path`` beside it (:func:`_said`)."""
    import json

    tmp = _said_path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(list(said)), encoding="utf-8")
    os.replace(tmp, _said_path(path))


def _said(path: Path) -> list[str]:
    """The warnings preparing the Study at ``path`` gave (none when they were not kept)."""
    import json

    try:
        return [str(t) for t in json.loads(_said_path(path).read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError):
        return []


def rekey(study, source: Mapping, metrics: Sequence[str], cutoffs: Sequence[int]) -> str:
    """Store the prepared ``study`` again under the key of ``source`` (e.g. once its threshold is
    resolved); returns the key."""
    from ..prepared import save_prepared

    key = source_key(source, metrics, cutoffs)
    path = _folder() / f"{key}.npz"
    save_prepared(study, path, key)
    if getattr(study, "prepared_key", None):
        _say(path, _said(_folder() / f"{study.prepared_key}.npz"))
    study.prepared_key = key
    return key


#: runs read and judged at once without a Dask cluster (each holds one run's lists, ~1.5 GB at ML-20M size)
N_JOBS = min(2, os.cpu_count() or 1)
#: prepared Studies kept in the run cache (with their stored analyses): the most recently used ones
KEEP = 4


def _prune(folder: Path, keep: int) -> None:
    """Delete the prepared Studies (and their stored analyses) beyond the ``keep`` most recently
    used (modification time: :func:`load` touches the file it reads). A build still using a deleted
    one finds nothing and reads its files again, with the same values."""
    groups: dict[str, float] = {}
    for f in folder.glob("*.npz"):
        k = f.name[:40]
        try:
            groups[k] = max(groups.get(k, 0.0), f.stat().st_mtime)
        except OSError:
            continue
    for k in sorted(groups, key=groups.get, reverse=True)[keep:]:
        for f in [*folder.glob(f"{k}*.npz"), *folder.glob(f"{k}*.lock"), *folder.glob(f"{k}*-warnings.json")]:
            f.unlink(missing_ok=True)


def load(source: Mapping | None, metrics: Sequence[str], cutoffs: Sequence[int]):
    """The prepared Study of ``source`` when its key (``source["prepared"]``) matches the files as
    they are now and the stored file verifies, else ``None``."""
    from ..prepared import load_prepared

    key = (source or {}).get("prepared")
    if not key:
        return None
    try:
        if source_key(source, metrics, cutoffs) != key:
            return None
    except OSError:
        return None
    path = _folder() / f"{key}.npz"
    study = load_prepared(path, key)
    if study is not None:
        study.prepared_key = key
        try:
            os.utime(path)                   # recently used: kept by _prune
        except OSError:
            pass
    return study


def _result_path(study, what: str, params: Mapping) -> Path | None:
    from ..runs.cache import cache_key

    key = study if isinstance(study, str) else getattr(study, "prepared_key", None)
    if not key:
        return None
    return _folder() / f"{key}-{what}-{cache_key(dict(params))}.npz"


def _robustness_path(key, scenarios: Sequence[str], sizes, n_samples: int, seed: int, kw: Mapping) -> Path | None:
    """Where :func:`robustness` stores its result for the prepared Study ``key`` (a key or a Study)."""
    from ..meta import robustness as rob

    grids = rob.resolve_grids(sizes, list(scenarios))
    settings = {k: v for k, v in kw.items() if k not in ("client", "n_jobs", "progress", "prefer")}
    settings.pop("target_se", None)
    settings.pop("min_samples", None)
    settings.update(rule_kw(kw))   # the stopping rule, in one form (none: the key it always had)
    return _result_path(key, "robustness", {"scenarios": list(scenarios),
                                            "grids": {k: list(v) for k, v in grids.items()},
                                            "n_samples": int(n_samples), "seed": int(seed), **settings})


def _load(path: Path | None):
    from ..prepared import read_arrays

    return None if path is None or not path.exists() else read_arrays(path)


def discriminative_power(study, candidates: Sequence[str], pool: str = "concat", **kw) -> dict:
    """``{candidate: DiscriminativePower}`` of ``candidates`` (``"nDCG@10"``, ...) of ``study``, as
    :func:`recmetrics.meta.discriminative_power` of ``{c: study.scores(c, pool=pool)}`` with ``kw``;
    read from the build's store when an earlier chapter computed it."""
    import pandas as pd

    from ..meta.discriminative import DiscriminativePower, discriminative_power as _dp
    from ..prepared import write_arrays

    candidates = [str(c) for c in candidates]
    path = _result_path(study, "dp", {"candidates": candidates, "pool": pool, **kw})
    got = _load(path)
    if got is not None:
        meta, arrays = got
        out = {}
        for i, (c, m) in enumerate(zip(candidates, meta["results"])):
            p = arrays[f"p{i}"]
            out[c] = DiscriminativePower(pvalues=pd.DataFrame({"a": m["a"], "b": m["b"], "p": p}), dp=m["dp"],
                                         curve=arrays[f"curve{i}"], share_significant=m["share_significant"],
                                         median_p=m["median_p"], alpha=m["alpha"], n_permutations=m["n_permutations"],
                                         exact=m["exact"], alternative=m["alternative"], seed=m["seed"])
        return out
    out = _dp({c: study.scores(c, pool=pool) for c in candidates}, **kw)
    if path is not None:
        results, arrays = [], {}
        for i, c in enumerate(candidates):
            r = out[c]
            arrays[f"p{i}"], arrays[f"curve{i}"] = np.asarray(r.pvalues["p"], dtype=np.float64), np.asarray(r.curve)
            results.append({"a": [str(x) for x in r.pvalues["a"]], "b": [str(x) for x in r.pvalues["b"]],
                            "dp": r.dp, "share_significant": r.share_significant, "median_p": r.median_p,
                            "alpha": r.alpha, "n_permutations": r.n_permutations, "exact": r.exact,
                            "alternative": r.alternative, "seed": r.seed})
        write_arrays(path, {"results": results}, arrays)
    return out


def candidates(study) -> list[str]:
    """Every metric at every cut-off of ``study`` (``"nDCG@10"``, ...): what chapter 2's
    discriminative power tests, and so the stored result chapter 1's comparisons read."""
    return [f"{m}@{c}" for m in study.metrics for c in study.cutoffs]


def comparisons(study, pool: str = "concat", *, test: str = "permutation", correction: str | None = "holm",
                alpha: float = 0.05, n_permutations: int = 100_000, seed: int = 0) -> dict:
    """``{cut-off: Comparison}``: :func:`recmetrics.meta.compare.compare` of every metric of ``study``
    at each cut-off. The permutation test's p-values are those of :func:`discriminative_power` over
    :func:`candidates` (the same paired randomisation test with the same sign vectors: the same
    p-values, bit for bit; tested), so chapters 1 and 2 compute the sign matrix once per build, for
    every metric and cut-off together."""
    from ..meta.compare import compare

    stored = None
    if test == "permutation":
        stored = discriminative_power(study, candidates(study), pool, n_permutations=n_permutations, seed=seed,
                                      alpha=alpha)
    out = {}
    for c in study.cutoffs:
        scores = {m: study.scores(m, c, pool) for m in study.metrics}
        pvalues = None
        if stored is not None:
            names = [str(s) for s in next(iter(scores.values())).index]
            ia, ib = np.triu_indices(len(names), k=1)
            pairs = ([names[i] for i in ia], [names[j] for j in ib])
            found = {m: stored[f"{m}@{c}"].pvalues for m in study.metrics}
            if all((list(map(str, t["a"])), list(map(str, t["b"]))) == pairs for t in found.values()):
                pvalues = {m: t["p"].to_numpy() for m, t in found.items()}
        out[c] = compare(scores, test=test, correction=correction, alpha=alpha, n_permutations=n_permutations,
                         seed=seed, pvalues=pvalues)
    return out


def advice(study, *, pool: str, n_permutations: int, seed: int, alpha: float, correction: str | None,
           scenarios: Sequence[str], sizes, n_samples: int, n_jobs: int = 1, scheduler: Any = None,
           target_se: float | None = None, min_samples: int = 20):
    """Chapter 5's answer (:func:`recmetrics.meta.advice.advise`) from the discriminative power and
    robustness chapters 2 and 3 stored with these settings (read, not recomputed): what the chapter
    shows and what the book's front page summarises. ``target_se``, ``min_samples``: the robustness
    samples' stopping rule (:mod:`recmetrics.meta.sample_stopping`; None: every sample)."""
    from ..meta.advice import advise

    dp = discriminative_power(study, candidates(study), pool, n_permutations=n_permutations, seed=seed, alpha=alpha)
    robust = robustness(study, scenarios, sizes, n_samples, seed, aggregate="arithmetic", n_jobs=n_jobs,
                        client=scheduler, progress=False, target_se=target_se, min_samples=min_samples)
    return advise(study, n_permutations=n_permutations, n_samples=n_samples, sizes=sizes, scenarios=scenarios,
                  seed=seed, pool=pool, alpha=alpha, correction=correction, n_jobs=n_jobs, dp=dp, robustness=robust)


def robustness(study, scenarios: Sequence[str], sizes, n_samples: int, seed: int, **kw):
    """:func:`recmetrics.meta.robustness.robustness_study` of ``study`` (same arguments; ``client``,
    ``n_jobs``, ``progress`` and ``prefer`` change no value and are not part of the stored key), read
    from the build's store when an earlier chapter computed it."""
    scenarios = list(scenarios)
    path = _robustness_path(study, scenarios, sizes, n_samples, seed, kw)
    got = _load(path)
    if got is None and path is not None:
        with file_lock(path):                 # a background process may be computing it: wait, then read
            got = _load(path)
            if got is None:
                return _robustness_stored(study, scenarios, sizes, n_samples, seed, path, **kw)
    if got is not None:
        return _as_robustness(got)
    return _robustness_stored(study, scenarios, sizes, n_samples, seed, None, **kw)


def read_robustness(path):
    """The robustness study stored at ``path`` (a ``<key>-robustness-<hash>.npz`` of the run cache's
    ``prepared`` folder, as :func:`robustness` stores it), e.g. to examine a build's samples."""
    from ..prepared import read_arrays

    return _as_robustness(read_arrays(Path(path)))


def _as_robustness(stored: tuple):
    """The :class:`~recmetrics.meta.robustness.Robustness` of a stored ``(meta, arrays)`` (:func:`_robustness_stored`)."""
    import pandas as pd

    from ..meta import robustness as rob

    meta, arrays = stored
    samples = pd.DataFrame({c: arrays[f"s_{c}"] for c in meta["samples"]})
    for c, dt in meta["dtypes"].items():
        if str(samples[c].dtype) != dt:
            samples[c] = samples[c].astype(dt)
    full = pd.DataFrame(arrays["full"], index=pd.Index(meta["systems"], name="system"), columns=meta["names"])
    return rob.Robustness(samples, full, grids={k: tuple(v) for k, v in meta["grids"].items()},
                          tie_break=meta["tie_break"])


def _robustness_stored(study, scenarios, sizes, n_samples, seed, path, **kw):
    """:func:`~recmetrics.meta.robustness.robustness_study`, stored at ``path`` (``None``: not stored)."""
    from ..meta import robustness as rob
    from ..prepared import write_arrays

    r = rob.robustness_study(study, scenarios, sizes, n_samples, seed, **kw)
    if path is not None:
        arrays = {f"s_{c}": r.samples[c].to_numpy() for c in r.samples.columns}
        arrays = {k: a.astype(str) if a.dtype.kind == "O" else a for k, a in arrays.items()}   # no pickle
        arrays["full"] = r.full.to_numpy()
        write_arrays(path, {"samples": list(r.samples.columns), "systems": [str(s) for s in r.full.index],
                            "dtypes": {c: str(r.samples[c].dtype) for c in r.samples.columns},
                     "names": [str(c) for c in r.full.columns], "grids": {k: list(v) for k, v in r.grids.items()},
                     "tie_break": r.tie_break}, arrays)
    return r


# ------------------------------------------------------------------------------------ background
#: the background study's niceness (its own and its session's scheduling group's,
#: :func:`recmetrics.parallel.lower_priority`) when it runs on every core (``n_jobs`` ≠ 1, the paper
#: profile): the chapters' kernels (chapter 1's permutation tests: BLAS products on both cores) run
#: first, so neither waits on the other's threads; with one worker the study is the build's longest
#: line of work and keeps its priority
BACKGROUND_NICE = 10


def start_robustness(parameters: Mapping):
    """Start the robustness study of chapter 3 (``parameters``: the own-runs plan's, with
    ``source["prepared"]``, ``metrics``, ``cutoffs``, ``scenarios``, ``sizes``, ``n_samples``, ``seed``;
    the arithmetic mean; ``n_jobs``, default 1: its worker processes, forked) in a background
    process that stores it where :func:`robustness` reads it; returns the process, or ``None`` when
    there is nothing to start (no prepared Study, a Dask ``scheduler`` given, or the result already
    stored). The chapters run meanwhile; the one that needs the result waits for it
    (:func:`recmetrics.cache.file_lock`). Values as computed in the chapter (the same function,
    arguments and stored form); a failed or stopped background process leaves the chapter to
    compute it. It runs with the kernels' allocator settings (:func:`.kernel.allocator_env`)."""
    import json
    import subprocess
    import sys

    from .kernel import allocator_env

    key = (parameters.get("source") or {}).get("prepared")
    if not key or parameters.get("scheduler") or "scenarios" not in parameters:
        return None
    args = {k: parameters[k] for k in ("source", "metrics", "cutoffs", "scenarios", "sizes", "n_samples", "seed")}
    args["n_jobs"] = int(parameters.get("n_jobs", 1))
    args["rule"] = rule_kw(parameters)
    path = _robustness_path(key, args["scenarios"], args["sizes"], args["n_samples"], args["seed"],
                            {**_CHAPTER_KW, **args["rule"]})
    if path is None or path.exists():
        return None
    proc = subprocess.Popen([sys.executable, "-m", "recmetrics.report.own_prepared"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **allocator_env()},
                            start_new_session=True)   # its own scheduling group, which it may lower
    from .processes import register

    register(proc.pid)   # its group (it and its forked workers) ends with the build
    proc.stdin.write(json.dumps(args).encode())
    proc.stdin.close()
    return proc


def stop(proc) -> None:
    """End a process of :func:`start_robustness` (at the end of a build: it is done, or no chapter needs it)."""
    if proc is None:
        return
    from .processes import end_group

    if proc.poll() is None:
        proc.terminate()
    proc.wait()
    end_group(proc.pid)   # its forked workers, if any outlived it


#: the settings chapters 3 and 5 pass to :func:`robustness` that enter its stored key
_CHAPTER_KW = {"aggregate": "arithmetic"}


def rule_kw(parameters: Mapping) -> dict:
    """The stopping rule of the robustness samples among a chapter's ``parameters`` (``target_se``,
    ``min_samples``; :mod:`recmetrics.meta.sample_stopping`), as :func:`robustness`' keywords: none
    when ``target_se`` is None, so a study without the rule keeps its stored key."""
    if parameters.get("target_se") is None:
        return {}
    return {"target_se": float(parameters["target_se"]), "min_samples": int(parameters.get("min_samples", 20))}


def _background(args: Mapping) -> None:
    """The body of :func:`start_robustness`'s process: hold the result's lock, then load the
    prepared Study and compute (nothing when it is stored or the Study cannot be loaded)."""
    kw = {**_CHAPTER_KW, **args.get("rule", {})}
    path = _robustness_path(args["source"]["prepared"], args["scenarios"], args["sizes"], args["n_samples"],
                            args["seed"], kw)
    with file_lock(path):                     # taken first: a chapter asking meanwhile waits for it
        if _load(path) is not None:
            return
        study = load(args["source"], args["metrics"], args["cutoffs"])
        if study is not None:
            n_jobs = int(args.get("n_jobs", 1))
            if n_jobs != 1:   # on every core: the chapters come first, the study takes what they leave
                from ..parallel import lower_priority

                lower_priority(BACKGROUND_NICE)
            _robustness_stored(study, list(args["scenarios"]), args["sizes"], args["n_samples"], args["seed"],
                               path, n_jobs=n_jobs, prefer="fork", progress=False, **kw)


if __name__ == "__main__":
    import json
    import sys

    from ..parallel import exit_with_parent

    exit_with_parent(os.getppid())
    _background(json.loads(sys.stdin.read()))
