"""recmetrics: evaluate top-N recommenders and meta-evaluate the metrics.

``import recmetrics as rm`` is cheap: submodules (and numpy/pandas) load on first use.
"""
from __future__ import annotations

import importlib

#: the version (pyproject.toml reads it from here) and the day it was set: CITATION.cff repeats
#: both (tests/test_installed.py checks it); change them together
__version__ = "0.1.0"
__date__ = "2026-11-28"

# public name -> "module" or "module:attribute"
_LAZY = {
    "datasets": "recmetrics.data.datasets",
    "splits": "recmetrics.data.splits",
    "io": "recmetrics.data.io",
    "metrics": "recmetrics.metrics",
    "recommenders": "recmetrics.recommenders",
    "axioms": "recmetrics.meta.axioms",
    "guidelines": "recmetrics.meta.guidelines",
    "runs": "recmetrics.runs",
    "study": "recmetrics.study",
    "parallel": "recmetrics.parallel",
    "Study": "recmetrics.study:Study",
    "widgets": "recmetrics.widgets",
    "meta": "recmetrics.meta",
    "protocols": "recmetrics.protocols",
    "papers": "recmetrics.papers",
    "viz": "recmetrics.viz",
    "report": "recmetrics.report",
    "Run": "recmetrics.data.run:Run",
    "Qrels": "recmetrics.data.qrels:Qrels",
    "Dataset": "recmetrics.data.datasets:Dataset",
    "judge": "recmetrics.judged:judge",
    "Judged": "recmetrics.judged:Judged",
    "evaluate": "recmetrics.evaluation:evaluate",
    "Evaluation": "recmetrics.evaluation:Evaluation",
}

__all__ = sorted(_LAZY) + ["__version__", "__date__"]


def __getattr__(name: str):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'recmetrics' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = importlib.import_module(module)
    if attr:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
