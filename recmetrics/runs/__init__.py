"""Runs as artefacts: fit systems on every fold, cache their runs, evaluate them, load outside runs.

``rm.runs.run_systems(ratings, systems, split="kfold", k=5)`` fits every system on every fold and
returns :class:`Runs` (``(system, fold) -> Run`` plus the folds); ``rm.runs.evaluate_systems``
scores them into one long table, ``rm.runs.summarise`` into a system x metric table,
``rm.runs.load_runs`` reads runs made by other tools. The Study score cube built on these runs is
:class:`recmetrics.study.Study` (``recmetrics.study`` also re-exports every name below).

Modules:

* :mod:`~recmetrics.runs.cache` — the run cache: location, keys (ratings hash, system spec with a
  hash of its source), parquet :func:`save_run` / :func:`load_run`;
* :mod:`~recmetrics.runs.folds` — :func:`make_folds`: the ``(train, test)`` folds and the split
  parameters that key the cache;
* :mod:`~recmetrics.runs.systems` — :class:`Runs` and :func:`run_systems` (fit, recommend, cache;
  joblib or Dask);
* :mod:`~recmetrics.runs.scoring` — :func:`evaluate_systems`, :func:`tail_folds`,
  :func:`evaluate_tail`, :func:`summarise`;
* :mod:`~recmetrics.runs.files` — :func:`load_runs` and :data:`RUN_SUFFIXES` (TREC / CSV / TSV /
  parquet run files of other tools).
"""
from __future__ import annotations

from .cache import default_cache_dir, load_run, ratings_hash, save_run
from .files import RUN_SUFFIXES, load_runs
from .folds import make_folds
from .scoring import evaluate_systems, evaluate_tail, summarise, tail_folds
from .systems import Runs, run_systems

__all__ = ["Runs", "run_systems", "evaluate_systems", "summarise", "load_runs", "default_cache_dir",
           "ratings_hash", "make_folds", "save_run", "load_run", "RUN_SUFFIXES", "tail_folds", "evaluate_tail"]
