"""Numbers the chapters computed that other pages reuse (the metric reference, the explorers).

A chapter saves a small table with :func:`save` — e.g. the discriminative power of each metric,
its robustness, the axioms it satisfies — as ``<RECMETRICS_FINDINGS_DIR>/../results/<kind>-<dataset>.json``
(beside the findings the report gathers); :func:`load` reads them back as ``{kind: {dataset:
{metric: value}}}``. Outside a report build (no ``RECMETRICS_FINDINGS_DIR``) the files go to
``./results``.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..cache import results_dir

__all__ = ["KINDS", "results_dir", "save", "load"]

#: what a chapter may save: ``dp`` (DP per metric), ``robustness`` (mean τ per metric),
#: ``axioms`` (per metric: {axiom: verdict}; dataset-free, saved under dataset "-")
KINDS = ("dp", "robustness", "axioms")


def save(kind: str, values: Mapping[str, Any], dataset: str = "-", *, directory: str | os.PathLike | None = None,
         context: Mapping[str, Any] | None = None) -> Path:
    """Save ``{metric: value}`` (a dict or a pandas Series) of ``kind`` computed on ``dataset``.

    ``context``: what a reader needs to interpret the values, shown beside them on the metric
    reference (:func:`recmetrics.report.reference_pages.context_text`): ``chapter`` (the notebook's
    stem), ``cutoff``, ``systems`` (a count), ``folds``, ``pool``, ``samples``, ``permutations``,
    ``scenarios`` (a count); the report profile is read from the chapter when the pages are written.

    Metric names lose their cut-off (``nDCG@100`` → ``nDCG``, as the reference page lists metrics by
    name) when that leaves every name distinct; otherwise (two cut-offs or two readings of one
    metric) the full names are kept. Non-finite numbers are dropped.
    """
    from ..errors import InputError

    if kind not in KINDS:
        raise InputError(f"results kind must be one of {KINDS}, got {kind!r}")
    items = dict(values.items()) if hasattr(values, "items") else dict(values)
    bases = {str(m): str(m).split("@")[0] for m in items}
    if len(set(bases.values())) < len(bases):  # two cut-offs or readings of one metric: keep full names
        bases = {m: m for m in bases}
    clean: dict[str, Any] = {}
    for metric, value in items.items():
        name = bases[str(metric)]
        if isinstance(value, Mapping):
            clean[name] = {str(k): str(v) for k, v in value.items()}
        elif value is not None and math.isfinite(float(value)):
            clean[name] = float(value)
    path = Path(directory) if directory is not None else results_dir()
    path.mkdir(parents=True, exist_ok=True)
    out = path / f"{kind}-{dataset}.json"
    record = {"kind": kind, "dataset": dataset, "values": clean}
    if context:
        record["context"] = {str(k): v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
                             for k, v in dict(context).items()}
    out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return out


def load(directory: str | os.PathLike | None = None, names: Iterable[str] | None = None) -> dict:
    """Every saved table as ``{kind: {dataset: {metric: value}}}`` (``axioms``: ``{metric: {axiom: verdict}}``),
    plus ``{"context": {kind: {dataset: context}}}`` for the tables saved with a ``context``;
    ``names``: only these files of ``directory`` (e.g. those one build's chapters committed)."""
    path = Path(directory) if directory is not None else results_dir()
    out: dict = {}
    files = sorted(path.glob("*.json")) if path.is_dir() else []
    if names is not None:
        files = [f for f in files if f.name in set(names)]
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        kind, dataset = data.get("kind"), data.get("dataset", "-")
        if kind == "axioms":
            out.setdefault("axioms", {}).update(data.get("values", {}))
        elif kind in KINDS:
            out.setdefault(kind, {})[dataset] = data.get("values", {})
        if kind in KINDS and data.get("context"):
            out.setdefault("context", {}).setdefault(kind, {})[dataset] = data["context"]
    return out
