"""The papers recmetrics reproduces: one module per paper, holding its experimental set-up and its claims.

Each paper module (registered in :data:`PAPERS`, loaded on first use) defines

* ``PAPER`` — the paper's id (the file prefix in the project's ``papers/`` folder, e.g. ``"000"``);
* ``SETUP`` — a :class:`~recmetrics.papers.setup.SetUp`: datasets, systems, split, cut-offs,
  threshold, metrics, the test-size grid of each robustness scenario (``robustness_sizes``),
  samples, permutations, designs, and ``notes`` saying where each value comes from;
* ``QUICK`` — the same set-up shrunk for the quick profile (optional);
* ``CLAIMS`` — its claims as :class:`~recmetrics.meta.findings.Claim` data, and ``CHAPTERS``
  (``{notebook stem: claims}``) — which chapter tests which;
* ``notebook_parameters(profile) -> {notebook stem: {parameter: value}}`` — what the chapters that
  run this paper receive under a report profile, derived from ``SETUP`` / ``QUICK``.

A new paper is a new module plus one line in :data:`PAPERS`. The package-level
:func:`notebook_parameters` gathers every paper's chapters (the report's ``paper`` profile takes
its per-notebook parameters from it); :func:`deviations` names where a run differs from a set-up
(the chapters pass it to :func:`recmetrics.meta.findings.assess`), and :func:`row_deviations`
writes per-claim deviations on the rows (paper 004's ``deviations(ran)`` gives them per claim); :func:`assess_choices`
assesses claims under every reading of an open choice (fold pooling) and makes a verdict that
flips with it ``inconclusive``.

Example::

    >>> from recmetrics import papers
    >>> sorted(papers.PAPERS)
    ['000', '001', '002', '003', '004']
    >>> papers.get("003").SETUP.robustness_sizes["ratings"][-1]
    0.05
    >>> papers.notebook_parameters("paper")["05_cutoffs"]["n_permutations"]
    100000
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

#: paper id -> module holding its set-up and claims (loaded on first use). Add one line per paper.
PAPERS: dict[str, str] = {
    "000": "recmetrics.papers.valcarce2020",   # Valcarce et al., IRJ 2020 (chapters 06, 07)
    "003": "recmetrics.papers.valcarce2018",   # Valcarce et al., RecSys 2018 (chapter 05)
    "002": "recmetrics.papers.parapar2021",    # Parapar & Radlinski, RecSys 2021 (chapter 03)
    "001": "recmetrics.papers.schroeder2011",  # Schröder et al., UCERSTI 2011 (chapter 04)
    "004": "recmetrics.papers.bellogin2012",   # Bellogín, PhD thesis ch. 4 (chapter 08)
}

#: report profiles a paper module answers for
PROFILES = ("quick", "paper")

_LAZY = {"SetUp": "setup", "deviations": "setup", "row_deviations": "setup", "grid": "setup", "describe_grid": "setup",
         "assess_choices": "choices"}

__all__ = ["PAPERS", "PROFILES", "get", "notebook_parameters", "claims", *sorted(_LAZY)]


def get(paper: str) -> ModuleType:
    """The module of ``paper`` (an id of :data:`PAPERS`, e.g. ``"000"``): ``.SETUP``, ``.CLAIMS``, ..."""
    from ..errors import unknown_name

    key = str(paper).strip()
    if key not in PAPERS:
        raise unknown_name("paper", key, list(PAPERS))
    return importlib.import_module(PAPERS[key])


def claims(paper: str | None = None) -> list:
    """The claims of one paper, or of every paper in :data:`PAPERS` (in id order)."""
    ids = sorted(PAPERS) if paper is None else [paper]
    return [c for p in ids for c in get(p).CLAIMS]


def _profile(profile: str, paper_setup, quick_setup):
    """The set-up a paper module uses under a report ``profile`` (``paper`` or ``quick``)."""
    from ..errors import unknown_name

    if profile not in PROFILES:
        raise unknown_name("report profile", str(profile), PROFILES)
    return paper_setup if profile == "paper" or quick_setup is None else quick_setup


def notebook_parameters(profile: str) -> dict[str, dict[str, Any]]:
    """``{notebook stem: {parameter: value}}`` for every chapter a paper module runs, under
    ``profile`` (``"paper"``: the papers' set-ups; ``"quick"``: their quick versions, which equal
    the notebooks' own defaults). Two papers claiming the same notebook is an error."""
    from ..errors import InputError, unknown_name

    if profile not in PROFILES:
        raise unknown_name("report profile", str(profile), PROFILES)
    out: dict[str, dict[str, Any]] = {}
    for paper in sorted(PAPERS):
        module = get(paper)
        fn = getattr(module, "notebook_parameters", None)
        if fn is None:
            continue
        for stem, params in fn(profile).items():
            if stem in out:
                raise InputError(f"notebook {stem!r} gets parameters from two papers (one is {paper})")
            out[stem] = dict(params)
    return out


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
