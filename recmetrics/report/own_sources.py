"""The inputs of the own-runs book (:mod:`recmetrics.report.own_runs`): the ``source`` every
chapter receives (judgments and run files per fold, paths only, JSON) built from files or fold
templates (:func:`_source_from_files`), from in-memory judgments and runs (:func:`_export_inputs`)
or from a Study (:func:`export_study`); read back into a Study inside the notebooks
(:func:`load_study`); and four example runs written from the embedded data (:func:`example_source`).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError

_FOLD = "{fold}"
#: the metrics of the own-runs book: the nine of Valcarce et al. (IRJ 2020 §5)
METRICS = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"]


def _run_name(path: str) -> str:
    """A run's name: the file stem (as :func:`recmetrics.runs.load_runs` names it), with a
    ``{fold}`` field, a ``fold`` word just before it and the separator before them removed
    (``bm25.fold{fold}.trec`` and ``bm25_{fold}.trec`` are both ``bm25``)."""
    from ..runs.files import run_name

    name = run_name(Path(path))
    return re.sub(r"[._\-]?(?:fold[._\-]?)?\{fold\}", "", name, flags=re.IGNORECASE) or name


def _resolved(path: str, what: str, given: str) -> str:
    """``path`` made absolute with its links followed; a link that leads nowhere (a loop of
    symbolic links) is one :class:`InputError` naming ``given``, as a missing file is."""
    try:
        return str(Path(path).expanduser().resolve())
    except (RuntimeError, OSError):   # Python < 3.13 raises RuntimeError("Symlink loop ...")
        raise InputError(f"{what} {given!r} is a loop of symbolic links: it leads to no file") from None


def _expand(template: str, folds: Sequence | None, what: str) -> list[str]:
    path = _resolved(template, what, template) if _FOLD not in str(template) else str(template)
    if folds is None:
        if _FOLD in path:
            raise InputError(f"{what} {template!r} has a {{fold}} field but no folds were given (--folds)")
        return [path]
    if _FOLD not in path:
        raise InputError(f"{what} {template!r} has no {{fold}} field; with --folds every path names its fold, "
                         "e.g. run.{fold}.trec")
    return [_resolved(path.replace(_FOLD, str(f)), what, template) for f in folds]


def _source_from_files(qrels, runs, folds, name, threshold) -> dict:
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    runs = [str(r) for r in runs]
    if not runs:
        raise InputError("give at least 2 run files (--runs)")
    if folds is not None:
        folds = list(folds)
        if not folds:
            raise InputError("folds is an empty list; leave it out for one fold")
        if len(set(map(str, folds))) != len(folds):
            raise InputError(f"fold labels must be distinct, got {folds}")
    qrels_paths = _expand(str(qrels), folds, "qrels path")
    by_name: dict[str, list[str]] = {}
    origin: dict[str, str] = {}
    for r in runs:
        n = _run_name(r)
        if n in by_name:
            raise InputError(f"two run files are named {n!r}: {origin[n]!r} and {r!r}; rename one (the name comes "
                             "from the file stem)")
        by_name[n], origin[n] = _expand(r, folds, "run path"), r
    if len(by_name) < 2:
        raise InputError(f"a meta-evaluation compares at least 2 runs, got {len(by_name)} ({', '.join(by_name)})")
    for p in qrels_paths + [p for ps in by_name.values() for p in ps]:
        if not Path(p).is_file():
            raise InputError(f"file {p!r} does not exist (or is not a file)")
    label = name or (", ".join(by_name) if len(by_name) <= 4 else f"{len(by_name)} runs")
    return {"label": str(label), "qrels": qrels_paths, "runs": by_name,
            "folds": None if folds is None else [str(f) for f in folds],
            "threshold": None if threshold is None else float(threshold), "ratings": None, "format": "files"}


def export_study(study, directory: str | os.PathLike, name: str | None = None) -> dict:
    """Write a :class:`~recmetrics.study.Study`'s runs, judgments and ratings to ``directory``
    and return the ``source`` that :func:`load_study` reads back into an equal Study (same runs,
    judgments, threshold and user profiles; same cube).

    Runs go to ``<system>.fold<f>.parquet`` in :func:`~recmetrics.runs.save_run`'s verified format
    (exact ids, order and scores), judgments to ``qrels.fold<f>.parquet`` (``user, item, rating``)
    and the ratings (user profiles of the large-users scenario) to ``ratings.parquet``.
    """
    from ..runs.cache import save_run

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    qrels, runs = [], {}
    for f in range(study.n_folds):
        p = out / f"qrels.fold{f}.parquet"
        study.qrels[f].to_frame().to_parquet(p, index=False)
        qrels.append(str(p.resolve()))
    judgments = [{"max_rating": float(q.max_rating), "negative": q.negative} for q in study.qrels]
    for i, s in enumerate(study.systems):
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(s)) or "run"
        paths = []
        for f in range(study.n_folds):
            p = out / f"{i:02d}-{safe}.fold{f}.parquet"
            save_run(study.runs[(s, f)], p)
            paths.append(str(p.resolve()))
        runs[str(s)] = paths
    ratings = out / "ratings.parquet"
    study.ratings[[c for c in ("user", "item", "rating") if c in study.ratings.columns]].to_parquet(ratings, index=False)
    return {"label": str(name or study.dataset), "qrels": qrels, "runs": runs,
            "folds": [str(f) for f in range(study.n_folds)], "threshold": float(study.threshold),
            "ratings": str(ratings.resolve()), "format": "export", "judgments": judgments}


def _read_run(path: str, name: str):
    """A run file: recmetrics' own verified parquet (:func:`save_run`) or any tool's run file."""
    from ..data.io import read_run

    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        meta = pq.read_schema(path).metadata or {}
        if b"recmetrics" in meta:
            from ..runs.cache import load_run

            run, _ = load_run(path)
            run.name = name
            return run
    return read_run(path, name=name)


def _read_source(source: Mapping) -> tuple[dict, list, Any]:
    """``({name: [Run per fold]}, [Qrels per fold], ratings or None)`` from a ``source``."""
    qrels, ratings = _read_judgments(source)
    runs = {name: [_read_run(p, name) for p in paths] for name, paths in source["runs"].items()}
    return runs, qrels, ratings


def _read_judgments(source: Mapping) -> tuple[list, Any]:
    """``([Qrels per fold], ratings or None)`` from a ``source``."""
    import pandas as pd

    from ..data.io import read_qrels, read_table
    from ..data.qrels import Qrels

    if not isinstance(source, Mapping) or not {"qrels", "runs"} <= set(source):
        raise InputError("source must be a dict with 'qrels' and 'runs' (see recmetrics.report.own_runs.plan)")
    threshold = source.get("threshold")
    qrels = []
    for f, p in enumerate(source["qrels"]):
        if source.get("format") == "export":                 # judgments of a Study, exactly as it held them
            kw = (source.get("judgments") or [{}] * len(source["qrels"]))[f]
            qrels.append(Qrels(pd.read_parquet(p), threshold=threshold, **kw))
        else:
            qrels.append(read_qrels(p, threshold=threshold))
    ratings = source.get("ratings")
    if ratings is not None:
        ratings = pd.read_parquet(ratings) if str(ratings).endswith(".parquet") else read_table(ratings)
    return qrels, ratings


def load_study(source: Mapping | None, metrics: Sequence[str] = METRICS, cutoffs: Sequence[int] = (5, 10, 20), *,
               progress: bool = False):
    """The :class:`~recmetrics.study.Study` of a ``source`` (from :func:`plan`, :func:`export_study`
    or :func:`example_source`): runs and judgments read from its files, scored at every metric and
    cut-off (:meth:`Study.from_runs <recmetrics.study.Study.from_runs>`, labelled with the source's
    label). The judgments' threshold is the source's, else the file's (1 for TREC qrels, 4 for
    rating tables).

    Example: ``study = load_study(plan("qrels.txt", ["a.trec", "b.trec"]).source, ["nDCG"], [10])``.
    """
    from ..study import Study
    from .own_prepared import load

    if source is None:
        raise InputError("no source: build this book with recmetrics report --qrels FILE --runs FILE ..., or set "
                         "source = example_source(directory)")
    prepared = load(source, metrics, cutoffs)      # read and judged once per build (own_prepared)
    if prepared is not None:
        return prepared
    runs, qrels, ratings = _read_source(source)
    thr = source.get("threshold")
    return Study.from_runs(runs, qrels, list(metrics), list(cutoffs), ratings=ratings, threshold=thr,
                           progress=progress, dataset=str(source.get("label", "runs")))


def example_source(directory: str | os.PathLike, dataset: str = "movielens-small",
                   systems: Sequence[str] = ("Random", "Pop", "UserKNN", "PureSVD"), n: int = 100,
                   seed: int = 0, test_size: float = 0.2) -> dict:
    """Runs written from the embedded data, as another tool would hand them over: a per-user holdout
    split of ``dataset`` (``test_size``, ``seed``), each of ``systems`` fitted on the training part
    and written as a TREC run file (``<system>.trec``, top ``n``), the test ratings as a
    ``user,item,rating`` CSV (``qrels.csv``, relevant at rating >= 4). Returns their ``source``
    (what :func:`plan` returns for these files). Used by the book when no runs are given and by the
    end-to-end test.
    """
    from .. import recommenders
    from ..data import datasets, splits
    from ..data.io import write_trec_run

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    ratings = datasets.load(dataset).ratings
    train, test = splits.holdout(ratings, test_size=test_size, seed=seed)
    test[["user", "item", "rating"]].to_csv(out / "qrels.csv", index=False)
    users = test["user"].unique()
    paths = []
    for spec in systems:
        rec = recommenders.create(spec).fit(train)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", rec.name)
        paths.append(write_trec_run(rec.recommend(users, n=n), out / f"{safe}.trec", tag=safe))
    return _source_from_files(out / "qrels.csv", paths, None, f"{dataset} example runs", None)


def _run_files(directory: Path, exclude=None) -> list[str]:
    """The run files of a directory, as :func:`recmetrics.runs.load_runs` picks them, without the
    judgments file ``exclude`` when it lies there too."""
    from ..runs.files import RUN_SUFFIXES

    skip = Path(_resolved(str(exclude), "qrels path", str(exclude))) if exclude is not None else None
    named = [q for q in directory.iterdir() if not q.name.startswith(".") and q.name.lower().endswith(RUN_SUFFIXES)]
    for q in named:   # a run file that cannot be read is an error, never left out
        if q.is_symlink() and not q.exists():
            raise InputError(f"run file {str(q)!r} is a symbolic link that leads to no file (a loop, or its target "
                             f"is missing)")
    runs = sorted(str(q) for q in named if q.is_file() and q.resolve() != skip)
    if not runs:
        raise InputError(f"directory {str(directory)!r} holds no run file (looked for {', '.join(RUN_SUFFIXES)})")
    return runs


def _export_inputs(qrels, runs, directory: Path, name, threshold) -> dict:
    """In-memory judgments (a Qrels, a ratings DataFrame or a file) and runs (``{name: Run}`` or
    files) of one fold, written where the notebooks read them back exactly."""
    import pandas as pd

    from ..data.io import read_qrels
    from ..data.qrels import Qrels
    from ..data.run import Run
    from ..runs.cache import save_run

    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(qrels, pd.DataFrame):
        qrels = Qrels(qrels, threshold=4.0 if threshold is None else threshold)
    elif not isinstance(qrels, Qrels):
        qrels = read_qrels(str(qrels), threshold=threshold)
    threshold = qrels.threshold if threshold is None else float(threshold)
    qpath = directory / "qrels.parquet"
    qrels.to_frame().to_parquet(qpath, index=False)
    if isinstance(runs, Mapping):
        paths = {}
        for i, (n, run) in enumerate(runs.items()):
            if not isinstance(run, Run):
                raise InputError(f"run {n!r} is a {type(run).__name__}, not a Run (read files with rm.study.load_runs)")
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(n)) or "run"
            named = Run(run.users, run.items, run.lengths, run.scores, str(n), dict(run.metadata))
            paths[str(n)] = [str(save_run(named, directory / f"{i:02d}-{safe}.parquet").resolve())]
    else:
        files = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
        paths = _source_from_files(qpath, files, None, name, threshold)["runs"]
    if len(paths) < 2:
        raise InputError(f"a meta-evaluation compares at least 2 runs, got {len(paths)} ({', '.join(paths)})")
    label = name or (", ".join(paths) if len(paths) <= 4 else f"{len(paths)} runs")
    return {"label": str(label), "qrels": [str(qpath.resolve())], "runs": paths, "folds": None,
            "threshold": threshold, "ratings": None, "format": "export",
            "judgments": [{"max_rating": float(qrels.max_rating), "negative": qrels.negative}]}
