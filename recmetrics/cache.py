"""Where recmetrics keeps its artefacts: caches (runs, vendored JavaScript) and the result tables a
chapter leaves for other pages (:func:`results_dir`)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str, env_var: str) -> Path:
    """``$env_var`` if set, else ``$XDG_CACHE_HOME/recmetrics/<kind>``, else ``~/.cache/recmetrics/<kind>``."""
    env = os.environ.get(env_var)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "recmetrics" / kind


def results_dir() -> Path:
    """``$RECMETRICS_FINDINGS_DIR/../results`` during a report build, else ``./results``.

    The folder of the tables a chapter computes for other pages (:mod:`recmetrics.report.results`,
    the explorers' tables of :mod:`recmetrics.explorers`), beside the findings the report gathers."""
    findings = os.environ.get("RECMETRICS_FINDINGS_DIR")
    return Path(findings).parent / "results" if findings else Path("results")
