"""Tables one chapter computes and a later chapter reads instead of computing them again.

A chapter that others read declares nothing itself: the reader lists it in
:data:`recmetrics.report.profiles.DEPENDS`, so the report runs it first (or, listed in
:data:`~recmetrics.report.profiles.READS_LATE` too, beside the reader, whose :func:`shared` then
waits for the table) and gives the reader a content key that includes the producer's (a producer
executed again makes the reader execute again). During a build each kernel knows its own key and its dependencies' keys
(``RECMETRICS_CHAPTER``, ``RECMETRICS_CHAPTER_KEY``, ``RECMETRICS_DEPENDS``, set by
:func:`recmetrics.report.execute.execute_plan`):

* :func:`share` (in the producer) writes ``<stem>--<name>.parquet`` into the chapter's scratch
  results folder, with the chapter's key and the ``settings`` the table was computed under; the
  report moves it into ``generated/results/`` only when the chapter completed (atomically, with the
  chapter's other results);
* :func:`shared` (in the reader) returns that table only when the file carries the key the plan
  gave the producer *and* the reader's ``settings`` (what the reader would compute it with) are
  the producer's, else ``None``: the reader then computes the table itself. Outside a build both
  do nothing (a notebook run by hand computes everything).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Mapping

from ..cache import results_dir

__all__ = ["share", "shared", "canonical", "robustness_settings", "robustness_name", "share_robustness",
           "shared_robustness", "share_study", "shared_study"]

#: metadata key of a shared table's parquet file
META = b"recmetrics-shared"


def canonical(settings: Mapping[str, Any]) -> str:
    """``settings`` as canonical JSON (sorted keys; tuples as lists), the form both sides compare."""
    return json.dumps(settings, sort_keys=True, default=str)


def _name(stem: str, name: str) -> str:
    for part, what in ((stem, "chapter"), (name, "table name")):
        if not part or not all(ch.isalnum() or ch in "-_" for ch in part):
            from ..errors import InputError

            raise InputError(f"shared {what} {part!r}: use letters, digits, '-' and '_' only")
    return f"{stem}--{name}.parquet"


def share(name: str, table, settings: Mapping[str, Any]) -> Path | None:
    """Leave ``table`` (a DataFrame) for the chapters that read this one; ``None`` outside a build."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stem, key = os.environ.get("RECMETRICS_CHAPTER"), os.environ.get("RECMETRICS_CHAPTER_KEY")
    if not stem or not key:
        return None
    folder = results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / _name(stem, name)
    arrow = pa.Table.from_pandas(table, preserve_index=True)
    meta = {**(arrow.schema.metadata or {}), META: json.dumps({"key": key, "settings": canonical(settings)}).encode()}
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(arrow.replace_schema_metadata(meta), tmp)
    os.replace(tmp, out)
    return out


def shared(stem: str, name: str, settings: Mapping[str, Any], *, poll: float = 2.0):
    """The table chapter ``stem`` shared as ``name`` in this build, if its key and ``settings`` match; else None.

    When this chapter reads ``stem`` late (:data:`recmetrics.report.profiles.READS_LATE`) and ``stem``
    is still executing beside it, this waits (checking every ``poll`` seconds) until ``stem`` has
    committed a table under the planned key, or has ended without one (failed, interrupted, or it
    shared none under these settings), or the build that started this kernel is gone."""
    file = _name(stem, name)
    folder = os.environ.get("RECMETRICS_RESULTS_DIR")
    try:
        expected = json.loads(os.environ.get("RECMETRICS_DEPENDS") or "{}").get(stem)
        late = stem in json.loads(os.environ.get("RECMETRICS_READS_LATE") or "[]")
    except ValueError:
        return None
    if not folder or not expected:
        return None
    path = Path(folder) / file
    while True:
        found, table = _read_shared(path, expected, settings)
        if found or not late or not _still_executing(stem, expected):
            # a producer that ended committed its table before saying so: a last read settles it
            return table if found else _read_shared(path, expected, settings)[1]
        time.sleep(poll)


def _read_shared(path: Path, expected: str, settings: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(committed under the key, table if the settings match too)``."""
    import pyarrow.parquet as pq

    try:
        arrow = pq.read_table(path)
        meta = json.loads((arrow.schema.metadata or {}).get(META, b"{}"))
    except (OSError, ValueError):
        return False, None
    if meta.get("key") != expected:
        return False, None
    return True, (arrow.to_pandas() if meta.get("settings") == canonical(settings) else None)


def _still_executing(stem: str, key: str) -> bool:
    """Whether chapter ``stem`` of this build may still commit under ``key``: the build is alive and the
    attempts log (:mod:`recmetrics.report.state`) has no end of that attempt (ok, failed, interrupted)."""
    from .state import read_state

    try:
        os.kill(int(os.environ.get("RECMETRICS_BUILD_PID") or 0) or os.getpid(), 0)
    except (OSError, ValueError):
        return False   # the build is gone: nobody will commit it
    state_file = os.environ.get("RECMETRICS_STATE")
    if not state_file:
        return False
    attempt = read_state(Path(state_file).parent).get("attempts", {}).get(stem) or {}
    return not (attempt.get("key") == key and attempt.get("status") in ("ok", "failed", "interrupted"))


def robustness_settings(study, *, seed: int, sizes: Mapping[str, Any], n_samples: int, aggregate: str) -> dict:
    """What a robustness study's sample rows depend on, beyond the package (the chapter keys cover
    it): the study — its split, the content of every run (:func:`recmetrics.runs.cache.run_checksum`),
    the metrics and the relevance threshold — and the robustness study's seed, grids, samples per
    size and mean. Chapter 7 shares its robustness studies under it and chapter 9 reads them under
    its own: any difference means computing again. ``aggregate`` is compared as given: pass the
    canonical name (:func:`recmetrics.metrics.aggregate.aggregate_name`; :func:`share_robustness` and
    :func:`shared_robustness` do)."""
    from ..runs.cache import run_checksum

    return {"split": study.runs.params.get("split"), "systems": [str(s) for s in study.systems],
            "runs": [run_checksum(study.runs[k]) for k in study.runs], "metrics": [str(m) for m in study.metrics],
            "threshold": float(study.threshold), "seed": int(seed),
            "sizes": {str(k): [float(v) for v in vs] for k, vs in dict(sizes).items()},
            "n_samples": int(n_samples), "aggregate": str(aggregate), "tie_break": "sample"}


def robustness_name(aggregate: str) -> str:
    """The name a robustness study under the mean ``aggregate`` is shared as: one table per mean, so a
    chapter can share several (chapter 7 both readings of the geometric mean's zeros). The mean is
    canonical (:func:`recmetrics.metrics.aggregate.aggregate_name`): ``"gm"`` and
    ``"geometric(trec_eval)"`` are ``"geometric"`` and share one name; ``"geometric(rec_eval)"`` is
    another table (its GF1 and GMRR differ).

    >>> robustness_name("arithmetic"), robustness_name("geometric(trec_eval)"), robustness_name("geometric(rec_eval)")
    ('robustness-arithmetic', 'robustness-geometric', 'robustness-geometric-rec_eval')
    """
    from ..metrics.aggregate import aggregate_name

    return "robustness-" + aggregate_name(aggregate).replace("(", "-").replace(")", "")


def share_robustness(samples, study, *, seed: int, sizes: Mapping[str, Any], n_samples: int,
                     aggregate: str) -> Path | None:
    """Leave the ``samples`` of a robustness study of ``study`` under the mean ``aggregate`` (and these
    settings, :func:`robustness_settings`) for the chapters that read this one; ``None`` outside a build."""
    from ..metrics.aggregate import aggregate_name

    aggregate = aggregate_name(aggregate)
    return share(robustness_name(aggregate), samples, robustness_settings(study, seed=seed, sizes=sizes,
                                                                          n_samples=n_samples, aggregate=aggregate))


def shared_robustness(study, sources: Mapping[str, str], *, seed: int, sizes: Mapping[str, Any],
                      n_samples: int) -> dict:
    """``{aggregate: samples}`` of the robustness studies the chapters of ``sources`` (``{aggregate:
    chapter stem}``) shared (:func:`share_robustness`) for this ``study`` and these settings
    (:func:`robustness_settings`); an aggregate whose table is missing or differs is left out. The
    aggregates are read as :func:`share_robustness` names them: ``"geometric"`` is trec_eval's
    reading of the zeros, not rec_eval's."""
    from ..metrics.aggregate import aggregate_name

    out = {}
    for aggregate, stem in sources.items():
        canon = aggregate_name(aggregate)
        table = shared(stem, robustness_name(canon), robustness_settings(study, seed=seed, sizes=sizes,
                                                                         n_samples=n_samples, aggregate=canon))
        if table is not None:
            out[aggregate] = table
    return out


def _whole(base: Mapping[str, Any], grids: Mapping[str, Any], replicates: int) -> dict:
    """The settings of a whole study's full-set and replicate tables: its samples' settings
    (:func:`robustness_settings`), the replicate count and the grids as run."""
    return {**base, "replicates": int(replicates or 0), "grids": {str(k): [float(v) for v in g] for k, g in grids.items()}}


def share_study(robust, study, *, seed: int, sizes: Mapping[str, Any], n_samples: int, aggregate: str,
                replicates: int = 0) -> Path | None:
    """Leave a whole robustness study of ``study`` (:class:`~recmetrics.meta.robustness.Robustness`:
    its samples, as :func:`share_robustness` does, its full-set scores and, run with ``replicates``
    groups of the split, its replicate samples) for a chapter that reads it whole
    (:func:`shared_study`); ``None`` outside a build. Chapter 7 runs the arithmetic study chapter 6
    reports beside its geometric ones, from the same reduced test sets."""
    from ..metrics.aggregate import aggregate_name

    aggregate = aggregate_name(aggregate)
    base = robustness_settings(study, seed=seed, sizes=sizes, n_samples=n_samples, aggregate=aggregate)
    out = share(robustness_name(aggregate), robust.samples, base)
    whole = _whole(base, robust.grids, replicates)
    share(robustness_name(aggregate) + "-full", robust.full, whole)
    if robust.replicate_samples is not None:
        share(robustness_name(aggregate) + "-replicates", robust.replicate_samples, whole)
    return out


def shared_study(study, stem: str, *, seed: int, sizes: Mapping[str, Any], n_samples: int, aggregate: str,
                 replicates: int = 0):
    """The robustness study chapter ``stem`` shared whole (:func:`share_study`) for this ``study`` and
    these settings, as the :class:`~recmetrics.meta.robustness.Robustness` it computed (equal, frame
    for frame, to computing it here: tested); ``None`` when it did not (then compute it)."""
    from ..meta.robustness import Robustness, resolve_grids
    from ..metrics.aggregate import aggregate_name

    aggregate = aggregate_name(aggregate)
    base = robustness_settings(study, seed=seed, sizes=sizes, n_samples=n_samples, aggregate=aggregate)
    samples = shared(stem, robustness_name(aggregate), base)
    if samples is None:
        return None
    grids = {sc: tuple(g) for sc, g in resolve_grids(dict(sizes)).items()}
    whole = _whole(base, grids, replicates)
    full = shared(stem, robustness_name(aggregate) + "-full", whole)
    reps = shared(stem, robustness_name(aggregate) + "-replicates", whole) if replicates else None
    if full is None or (replicates and reps is None):
        return None
    return Robustness(samples, full, grids=grids, tie_break="sample", replicate_samples=reps)
