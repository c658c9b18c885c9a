"""The meta-evaluation book of *your own* runs: ``recmetrics report --qrels FILE --runs FILE ...``.

Runs from any tool (TREC run files or ``user,item,score[,rank]`` tables, read by
:func:`recmetrics.runs.load_runs`; a run is named after its file's stem) and their judgments (a
TREC qrels file or a ``user,item,rating`` table, :func:`recmetrics.data.io.read_qrels`) become a
small book of five chapters, the notebooks in ``notebooks/runs/``:

1. the systems compared, with paired significance tests and a multiple-comparison correction;
2. the discriminative power of every metric at every cut-off;
3. robustness to each incompleteness scenario;
4. agreement among metrics, among cut-offs, and between the arithmetic and geometric means;
5. which metric to report for these systems (:func:`recmetrics.meta.advice.advise`).

The chapters of the main report that fit recommenders on a dataset (the zoo, the evaluation
designs, ...) are left out, and the table of contents says so (a "Not in this book" part).

API (the ``report`` command line calls these):

* :func:`plan` validates the inputs (every file read once, before any notebook runs) and returns a
  :class:`Plan`: the notebooks directory, the parameters every notebook receives (``source``, the
  profile's settings), the intro page, the table of contents and the left-out page;
* :func:`build` executes the notebooks of a plan with papermill and builds the book, through the
  main report's machinery: each chapter has a content key (the inputs' content, parameters,
  package sources), is executed only when it changed, is staged and replaced atomically, and the
  book is refused when a chapter's key is not this build's; the book's folder comes from its name
  (confined, distinct per name) or from the inputs' content, and is locked while it builds
  (:mod:`.own_book`); ``rm.report.build(qrels=..., runs=...)`` and ``rm.report.build(study=...)`` call it.

Folds: ``folds=None`` is one fold (one qrels file; each run file is one system). Runs made on k
folds are given as path *templates* with a ``{fold}`` field and the fold labels, e.g.
``plan("qrels.{fold}.txt", ["bm25.fold{fold}.trec", "pop.fold{fold}.trec"], folds=[0, 1, 2])``; the
run name is the stem with the field (and a ``fold`` word and separator before it) removed (``bm25``).

Inside the notebooks, :func:`load_study` turns the ``source`` parameter (file names relative to
the folder the chapter runs in, and the inputs' content hash: JSON, shown under each chapter's
title; no path of the building machine) into a :class:`~recmetrics.study.Study` with
:meth:`~recmetrics.study.Study.from_runs`. A build reads and judges the runs once: :func:`plan`
stores their Study in the run cache and every chapter loads it (``source["prepared"]``, a key of
the files and settings; :mod:`recmetrics.report.own_prepared`), and chapter 5 reads the
discriminative power and robustness chapters 2 and 3 computed. A Study or in-memory runs given from Python are first
written to files (:func:`export_study`; runs in the verified format of :func:`~recmetrics.runs.save_run`).
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import InputError, unknown_name
from .own_depth import depth_cutoffs, depth_note
from .own_prose import marked_means, pvalue_curves  # noqa: F401  (the chapters call them from here)
from .own_sources import (METRICS, _export_inputs, _read_source, _run_files, _source_from_files,  # noqa: F401
                          example_source, export_study, load_study)
from .paths import ReportError, _log_default, absolute, default_book_dir, default_notebooks_dir
from . import profiles, schema
from .profiles import default_jobs

__all__ = ["Plan", "plan", "build", "front_answer", "load_study", "export_study", "example_source", "describe",
           "marked_means", "pvalue_curves", "OWN_PARAMETERS", "METRICS", "LEFT_OUT", "notebooks_dir"]


#: settings per report profile (on top of ``recmetrics.report.PROFILES``' ``seed`` and ``cutoffs``)
#: plus ``sizes``, a grid per robustness scenario: paper 000's (:data:`~recmetrics.meta.robustness.GRIDS_000`)
#: or their quick versions (:data:`~recmetrics.meta.robustness.QUICK_GRIDS`) — never the ratings'
#: 100% .. 1% applied to the popular items, whose paper grid stops at 80% (:func:`_grids`)
OWN_PARAMETERS: dict[str, dict[str, Any]] = {
    "quick": {"metrics": METRICS, "n_permutations": 2000, "n_samples": 5},
    # chapter 3's robustness study (up to 50 samples: the longest part of the build) on every core,
    # threads sharing them with the chapters; the quick profile keeps it on one (memory: its 8 GB at
    # ML-20M scale). Your runs are no paper's experiment: as the main book's explorers, a size stops
    # sampling once each curve point's se is at most 0.01 (recmetrics.meta.sample_stopping; calibrated
    # on this book's own study at ML-20M scale by benchmarks/calibrate_sample_stopping.py --stored);
    # -p target_se=None draws all 50
    "paper": {"metrics": METRICS, "n_permutations": 100_000, "n_samples": 50, "target_se": 0.01,
              "n_jobs": default_jobs()},
}


#: the cut-offs a build first judges the runs at when none are given: those of top-100 lists, the
#: usual depth (runs of another depth are judged again at theirs, :func:`~.own_depth.depth_cutoffs`)
FIRST_CUTOFFS = (5, 10, 20, 50, 100)


def _grids(profile: str) -> dict[str, list[float]]:
    """The robustness grid of each scenario under ``profile`` (imported late: ``report`` stays cheap)."""
    from ..meta import robustness as rb

    return {k: list(v) for k, v in (rb.GRIDS_000 if profile == "paper" else rb.QUICK_GRIDS).items()}

def _scenarios() -> list[str]:
    """The robustness scenarios of chapters 3 and 5: all five (their notebooks' default)."""
    from ..meta import robustness as rb

    return list(rb.SCENARIOS)


_S = schema
_SHARED = {"source": _S.by(lambda v: v if isinstance(v, dict) else _S.refuse(),
                            "the runs and judgments (set by --qrels and --runs)") | None,
           "profile": _S.choice(*OWN_PARAMETERS), "seed": profiles.SEED, "metrics": profiles.METRICS,
           "cutoffs": profiles.CUTOFFS, "pool": profiles.POOL}
_SIGNIFICANCE = {"alpha": profiles.SHARE, "n_permutations": profiles.COUNT,
                 "correction": _S.choice(of=_S.loaded("recmetrics.meta.significance", "CORRECTIONS")) | None}
_ROBUSTNESS = {"scenarios": _S.subset(of=_S.loaded("recmetrics.meta.robustness", "SCENARIOS")),
               "sizes": profiles.GRIDS, "n_samples": profiles.COUNT, "n_jobs": _S.n_jobs(),
               "target_se": _S.number(0, open_low=True) | None, "min_samples": _S.integer(2),
               "scheduler": _S.text("a Dask scheduler address") | None}
#: What every parameter of every own-runs chapter accepts, one schema per chapter (by notebook stem;
#: :mod:`recmetrics.report.schema`): checked at planning (:func:`plan`) for every value a chapter receives.
SCHEMAS: dict[str, dict[str, schema.Rule]] = {
    "01_systems": {**_SHARED, **_SIGNIFICANCE,
                   "test": _S.choice(of=_S.loaded("recmetrics.meta.significance", "PAIRWISE_TESTS"))},
    "02_discriminative_power": {**_SHARED, **_SIGNIFICANCE},
    "03_robustness": {**_SHARED, **_ROBUSTNESS},
    "04_agreement": dict(_SHARED),
    "05_which_metric": {**_SHARED, **_SIGNIFICANCE, **_ROBUSTNESS},
}


#: chapters of the main report that are not in the own-runs book, and why (by notebook stem)
LEFT_OUT: dict[str, str] = {
    "01_dataset_overview": "describes a ratings dataset (its users, items, concentration and splits) and fits two "
                           "baselines on it",
    "02_recommender_zoo": "fits the recommender zoo on a dataset's training folds",
    "03_unified_accuracy_diversity": "needs item aspects (genres) and systems fitted on the dataset",
    "04_choosing_a_metric": "fits systems on a dataset to walk through Schröder et al.'s metric-choice guide",
    "08_popularity_bias": "re-ranks target sets of items with fitted systems (the evaluation designs of paper 004)",
}
#: chapters of the main report whose analyses this book applies to your runs
APPLIED = ("05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric")


def notebooks_dir() -> Path:
    """``notebooks/runs/`` of the report's sources: the chapters of the own-runs book."""
    return default_notebooks_dir() / "runs"


# ------------------------------------------------------------------------------------ tables
def describe(study):
    """One row per system and fold: users with a list, evaluated users (with a relevant judgment),
    evaluated users without a list (they score 0: the coverage shortfall), list depth and mean list
    length.

    Example: ``describe(load_study(source))``.
    """
    import pandas as pd

    rows = []
    for s in study.systems:
        for f in range(study.n_folds):
            run, j = study.runs[(s, f)], study.judged(s, f)
            rows.append({"system": s, "fold": f, "users in run": len(run), "evaluated users": len(j),
                         "evaluated without a list": int((~j.in_run).sum()), "depth": run.depth,
                         "mean list length": float(run.lengths.mean()) if len(run) else 0.0})
    frame = pd.DataFrame(rows).set_index(["system", "fold"])
    return frame.droplevel("fold") if study.n_folds == 1 else frame


# ------------------------------------------------------------------------------------ plan
@dataclass
class Plan:
    """What :func:`build` executes: ``notebooks`` (paths, in execution order), ``parameters`` (the
    values every notebook may receive; each gets the names its ``parameters`` cell declares),
    ``source`` (the runs and judgments, paths only), ``profile``, ``label``, ``summary`` (what
    validation read: systems, folds, users, judgments) and the generated pages (:meth:`intro`,
    :meth:`toc`, :meth:`left_out`)."""

    notebooks: list
    parameters: dict
    source: dict
    profile: str
    label: str
    summary: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)   # the parameters given (``-p``), checked

    @property
    def notebooks_dir(self) -> Path:
        return Path(self.notebooks[0]).parent

    def notebook_parameters(self, notebook) -> dict:
        """The parameters ``notebook`` receives: those of :attr:`parameters` its ``parameters``
        cell declares."""
        import papermill

        declared = set(papermill.inspect_notebook(str(notebook)).keys())
        return {k: v for k, v in self.parameters.items() if k in declared}

    def intro(self, answer: str = "") -> str:
        """The book's root page: what was meta-evaluated, with which settings, the ``answer``
        (:func:`front_answer`, once the chapters ran) and the chapters."""
        from ..meta.sample_stopping import rule_note

        s, p = self.summary, self.parameters
        folds = s.get("folds", 1)
        runs = "\n".join(f"| `{name}` | {', '.join(f'`{Path(x).name}`' for x in paths)} | {s['users'].get(name, '')} | "
                         f"{s['depth'].get(name, '')} |" for name, paths in self.source["runs"].items())
        qrels = ", ".join(f"`{Path(q).name}`" for q in self.source["qrels"])
        return "\n".join([
            f"# Meta-evaluation of {self.label}",
            "",
            f"This book meta-evaluates **{len(self.source['runs'])} runs** against the judgments in {qrels} "
            f"({s.get('judgments', 0):,} judgments of {s.get('judged_users', 0):,} users, "
            f"{s.get('relevant_users', 0):,} of them with a relevant item; relevant when rating ≥ "
            f"{s.get('threshold', 0):g}; {folds} fold{'s' if folds != 1 else ''}). It was built with the "
            f"`{self.profile}` profile: cut-offs {p.get('cutoffs')}, {p.get('n_permutations', 0):,} permutations "
            f"per test, {rule_note(p)} of the robustness study, seed {p.get('seed')}.",
            *(["", note] if (note := depth_note(s.get("depth", {}), p.get("cutoffs") or [],
                                                 s.get("cutoffs_chosen", True))) else []),
            *(["", "## The answer", "", answer] if answer else []),
            "",
            "## The runs",
            "",
            "| run | file(s) | users with a list | depth |",
            "|---|---|---|---|",
            runs,
            "",
            "Chapters: **1** the systems compared, with paired significance tests and a multiple-comparison "
            "correction · **2** the discriminative power of every metric and cut-off · **3** robustness to each "
            "kind of incomplete judgments · **4** agreement among metrics, cut-offs and between the arithmetic "
            "and geometric means · **5** which metric to report for these systems. Every number is computed by "
            "`recmetrics` from the files above when the book is built.",
            "",
            "The chapters of the main report that fit recommenders on a dataset are not in this book "
            "(see *Not in this book* in the table of contents).",
            "",
        ])

    def left_out(self) -> str:
        """The "Not in this book" page: the main report's chapters left out, and why."""
        rows, applied = [], []
        main = default_notebooks_dir()
        for nb in sorted(main.glob("[0-9]*.ipynb")):
            title = _title(nb)
            if nb.stem in APPLIED:
                applied.append(title)
            else:
                rows.append(f"| {title} | {LEFT_OUT.get(nb.stem, 'needs a dataset to fit recommenders on')} |")
        parts = ["# Not in this book", "",
                 "The report on the embedded datasets has more chapters. These need a dataset to fit "
                 "recommenders on (or its item aspects), which runs made by another tool do not carry, so they "
                 "are left out here:", "", "| chapter | why it is left out |", "|---|---|", *rows, ""]
        if applied:
            parts += [f"The analyses of {', '.join(applied)} are applied to your runs in chapters 1-5 of this book; "
                      "their checks of the papers' claims are not, since those claims are about the papers' systems.",
                      ""]
        return "\n".join(parts)

    def toc(self) -> str:
        """The ``_toc.yml`` of the book: the chapters, then a *Not in this book* part."""
        return "\n".join([
            "# Generated by recmetrics.report.own_runs: the own-runs book",
            "format: jb-book",
            "root: intro",
            "parts:",
            "  - caption: Your runs",
            "    chapters:",
            *[f"      - file: generated/{Path(nb).stem}" for nb in self.notebooks],
            "  - caption: \"Not in this book: chapters that fit recommenders on a dataset\"",
            "    chapters:",
            "      - file: left_out",
            "",
        ])


def front_answer(p: Plan) -> str:
    """The front page's answer, from what the chapters computed (read from the build's store): the
    best system on the metric chapter 5 recommends, by how much and whether significantly
    (:func:`~recmetrics.report.own_prose.headline`), and, when AP and infAP are the same measure on
    these judgments, why. Empty when the plan lacks chapter 1 or 5."""
    from ..meta.advice import INFAP_WHY, infap_is_ap
    from . import own_prepared, own_prose
    from .own_book import ANSWER_FROM
    from .profiles import executed_parameters

    nbs = {Path(nb).stem: nb for nb in p.notebooks}
    if not set(ANSWER_FROM) <= set(nbs):
        return ""
    one, five = (executed_parameters(nbs[s], p.notebook_parameters(nbs[s])) for s in ANSWER_FROM)
    study = load_study(p.source, p.parameters["metrics"], p.parameters["cutoffs"])
    adv = own_prepared.advice(study, **{k: five[k] for k in ("pool", "n_permutations", "seed", "alpha", "correction",
                                                            "scenarios", "sizes", "n_samples", "n_jobs", "scheduler")},
                              **{k: five[k] for k in ("target_se", "min_samples") if k in five})
    parts = []
    if adv.recommended:
        metric, cut = adv.table.loc[adv.recommended, "metric"], int(adv.table.loc[adv.recommended, "cutoff"])
        cmp = own_prepared.comparisons(study, one["pool"], test=one["test"], correction=one["correction"],
                                       alpha=one["alpha"], n_permutations=one["n_permutations"], seed=one["seed"])[cut]
        parts.append(own_prose.headline(cmp, metric, cut, "the metric chapter 5 recommends for these runs")
                     + " Chapter 1 compares every metric and cut-off; chapter 5 says why this one.")
    if infap_is_ap(study):
        parts.append(f"AP and infAP have the same value throughout this book. {INFAP_WHY} Chapter 5 leaves infAP "
                     "out of its advice.")
    return "\n\n".join(parts)


def _title(notebook: Path) -> str:
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return notebook.stem
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            text = "".join(cell.get("source", []))
            for line in text.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook.stem


def _give_back_memory() -> None:
    """The planning process keeps no Study while the chapters (and the background robustness study)
    run: its freed pages go back to the system, not into the build's peak memory."""
    import gc

    from ..data.sources import _release_arrow_memory

    gc.collect()
    _release_arrow_memory()


def _summary(source: Mapping, study) -> dict:
    """What the book will compare, from the Study of ``source`` (every file read once, so bad input
    fails before any notebook runs)."""
    folds = study.n_folds
    for f, q in enumerate(study.qrels):
        if not len(q.relevant_users):
            where = f" of fold {source['folds'][f]}" if source.get("folds") else ""
            raise InputError(f"no user has a relevant judgment in the qrels{where} at threshold {q.threshold:g} "
                             f"(-l/threshold): nothing to evaluate; give a lower threshold")
    return {"systems": list(study.systems), "folds": folds, "judgments": sum(len(q) for q in study.qrels),
            "judged_users": sum(len(q.users) for q in study.qrels),
            "relevant_users": sum(len(q.relevant_users) for q in study.qrels),
            "threshold": min(q.threshold for q in study.qrels),
            "users": {s: sum(len(study.runs[(s, f)]) for f in range(folds)) for s in study.systems},
            "depth": {s: max(study.runs[(s, f)].depth for f in range(folds)) for s in study.systems}}


def plan(qrels=None, runs=None, *, study=None, name: str | None = None, folds: Sequence | None = None,
         threshold: float | None = None, profile: str = "quick", work_dir: str | os.PathLike | None = None,
         parameters: Mapping[str, Any] | None = None, scheduler: str | None = None) -> Plan:
    """Validate the inputs of an own-runs book and say what to execute.

    Parameters
    ----------
    qrels : the judgments: a path (TREC qrels, or a ``user,item,rating`` CSV/TSV/parquet table), a
        path template with ``{fold}`` (with ``folds``), or a :class:`~recmetrics.data.qrels.Qrels` /
        test-ratings DataFrame (written to ``work_dir``)
    runs : run files (TREC or ``user,item,score[,rank]``; one system each, named after the stem), a
        directory of them (the qrels file excepted), templates with ``{fold}``, or ``{name: Run}``
        (written to ``work_dir``)
    study : instead of ``qrels`` and ``runs``, a :class:`~recmetrics.study.Study` (exported with
        :func:`export_study` to ``work_dir``; the book uses its metrics and cut-offs)
    name : the label of the book, a text that is not blank (default: the run names)
    folds : fold labels substituted into ``{fold}`` (default: one fold)
    threshold : relevance threshold (default: 1 for TREC qrels, 4 for rating tables; a Study's own)
    profile : ``"quick"`` or ``"paper"`` (:data:`OWN_PARAMETERS`, with ``seed`` and ``cutoffs`` of
        ``recmetrics.report.PROFILES``)
    work_dir : where in-memory inputs are written (required for them)
    parameters : overrides of the notebooks' parameters (e.g. ``{"cutoffs": [10, 100]}``); an
        unknown name raises :class:`~recmetrics.errors.UnknownNameError`
    scheduler : a Dask scheduler address: the runs are read and judged there, and the notebooks that
        declare ``scheduler`` run their studies there (identical results)

    Returns a :class:`Plan`. Every file is read once here: a missing file, a malformed line
    (:class:`~recmetrics.errors.FormatError` with ``path:line``), two runs with one name, fewer than
    2 runs or a run missing on a fold fail before any notebook runs. The runs are judged and scored
    here too, once for every chapter: the Study is stored in the run cache under a key of the files
    and settings (:mod:`recmetrics.report.own_prepared`; ``source["prepared"]``).
    """
    import copy

    import pandas as pd

    from ..data.qrels import Qrels
    from .profiles import PROFILES

    if profile not in PROFILES or profile not in OWN_PARAMETERS:
        raise unknown_name("report profile", str(profile), set(PROFILES) & set(OWN_PARAMETERS))
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise InputError(f"--name {name!r}: give the book a label (its title, and its folder's name), or leave "
                         f"--name out to name it after its runs")
    if study is not None:
        if qrels is not None or runs is not None:
            raise InputError("give either study= or qrels= and runs=, not both")
        if work_dir is None:
            raise InputError("a Study is written to files for the notebooks: give work_dir=")
        source = export_study(study, Path(work_dir) / "source", name)
    else:
        if qrels is None or runs is None:
            raise InputError("the own-runs book needs the judgments (qrels=) and at least 2 runs (runs=)")
        in_memory = isinstance(qrels, (Qrels, pd.DataFrame)) or isinstance(runs, Mapping)
        if in_memory:
            if work_dir is None:
                raise InputError("in-memory qrels or runs are written to files for the notebooks: give work_dir=")
            if folds is not None:
                raise InputError("in-memory qrels and runs are one fold; give files with {fold} for several folds")
            source = _export_inputs(qrels, runs, Path(work_dir) / "source", name, threshold)
        else:
            if isinstance(runs, (str, os.PathLike)) and Path(runs).expanduser().is_dir():
                runs = _run_files(Path(runs).expanduser(), exclude=qrels)
            source = _source_from_files(qrels, runs, folds, name, threshold)
    params: dict[str, Any] = {k: copy.deepcopy(PROFILES[profile][k]) for k in ("seed", "cutoffs") if k in PROFILES[profile]}
    params.update(copy.deepcopy(OWN_PARAMETERS[profile]))
    params["sizes"] = _grids(profile)
    params["scenarios"] = _scenarios()
    params["profile"] = profile
    if study is not None:                   # the Study's own metrics and cut-offs (its runs are that deep)
        params["metrics"], params["cutoffs"] = list(study.metrics), list(study.cutoffs)
    nbs = sorted(p for p in notebooks_dir().glob("[0-9]*.ipynb"))
    if not nbs:
        raise ReportError(f"no own-runs notebook in {notebooks_dir()}")
    from .own_book import check_parameters

    given = check_parameters(parameters or {}, params, [str(nb) for nb in nbs], profile, SCHEMAS)
    params.update(copy.deepcopy(given))
    if scheduler is not None:
        from .plan import check_scheduler

        params["scheduler"] = check_scheduler(scheduler)
    from .own_prepared import prepare, rekey
    from .own_sources import _read_judgments, _read_run

    source = {k: v for k, v in source.items() if k != "prepared"}
    if source.get("threshold") is None and source.get("format") == "files":
        # the threshold the judgments will be read at, known from the file names: the prepared Study
        # is keyed (and stored) once under it, not stored again under the resolved source
        from ..data.io import default_threshold

        defaults = {default_threshold(q) for q in source["qrels"]}
        if len(defaults) == 1:
            source["threshold"] = defaults.pop()
    chosen = study is not None or "cutoffs" in given    # else the cut-offs follow the runs' depth (.own_depth)
    if not chosen:
        params["cutoffs"] = list(FIRST_CUTOFFS)
    key, study = prepare(source, params["metrics"], params["cutoffs"], read_judgments=_read_judgments,
                         read_run=_read_run, scheduler=params.get("scheduler"))
    summary = _summary(source, study if study is not None else load_study(source, params["metrics"], params["cutoffs"]))
    if not chosen and depth_cutoffs(summary["depth"].values()) != params["cutoffs"]:
        # runs of another depth than top-100: judged and scored again at their own cut-offs
        del study
        params["cutoffs"] = depth_cutoffs(summary["depth"].values())
        key, study = prepare(source, params["metrics"], params["cutoffs"], read_judgments=_read_judgments,
                             read_run=_read_run, scheduler=params.get("scheduler"))
    summary["cutoffs_chosen"] = chosen
    if source.get("threshold") is None:     # show the threshold actually used, not None (the file type's default)
        source["threshold"] = float(summary["threshold"])
        if key is not None:
            key = rekey(study, source, params["metrics"], params["cutoffs"])
    del study
    _give_back_memory()
    if key is not None:
        source["prepared"] = key
    params["source"] = source
    return Plan([str(p) for p in nbs], params, source, profile, source["label"], summary, given)


# ------------------------------------------------------------------------------------ build
def build(qrels=None, runs=None, out: str | os.PathLike | None = None, *, study=None, name: str | None = None,
          folds: Sequence | None = None, threshold: float | None = None, profile: str = "quick",
          book_dir: str | os.PathLike | None = None, parameters: Mapping[str, Any] | None = None,
          kernel_name: str | None = None, timeout: float | None = None, js_cache: str | os.PathLike | None = None,
          check_offline: bool = True, quiet: bool = True, execute: bool = True, scheduler: str | None = None,
          log: Callable[[str], None] | None = _log_default, jobs: int = 1, repository: str | None = None) -> Path:
    """Build the own-runs book: :func:`plan`, execute its notebooks, build the site; returns the
    path of ``index.html``.

    The book's folder name comes from ``name`` (:func:`recmetrics.report.own_book.folder_name`:
    confined, distinct for distinct names; unnamed, from the inputs' content). ``book_dir`` (default
    ``<folder>/src`` under ``runs/`` of the books' cache, :func:`recmetrics.report.own_book.runs_root`)
    receives the book's sources: the configuration of the main book with this book's title, the
    generated intro, table of contents and *Not in this book* page, and the executed notebooks in
    ``generated/``; the inputs are linked into ``book_dir/_build/inputs/`` (in-memory inputs are
    written there). ``out`` (default ``./recmetrics-runs/<folder>`` of the current folder) is the
    site, replaced whole when the build succeeded. Relative paths mean the current folder's, read
    once here.

    Every chapter has a content key (its notebook, parameters, the inputs' content, the package
    sources and dependency versions) and is executed only when it changed, staged and replaced
    atomically, as in the main report (:func:`recmetrics.report.execute.execute_plan`); the book is
    built only from chapters whose key is this build's, so ``execute=False`` with other inputs or
    parameters, or after a killed build, is refused naming the chapters (:class:`ReportError`). A
    second build of the same book while one runs fails at once (:mod:`.lock`). Other arguments
    as :func:`plan` (``scheduler``: a Dask scheduler address for reading the runs and for the
    notebooks that declare ``scheduler``) and :func:`recmetrics.report.build`. ``jobs``: chapters at
    once (default 1: chapter 3's robustness study already runs beside them in a process of its own).
    ``repository``: the web address of the pages' repository button (none: no button).
    """
    import tempfile

    from . import own_book
    from .execute import execute_plan, remove_orphans
    from .lock import book_lock, out_lock
    from .offline import external_assets
    from .repository import repository_url
    from .site import build_book, sphinx_child
    from .state import stale_chapters, stale_message
    from .vendor import vendor_js

    from .plan import check_out

    log = log or (lambda msg: None)
    out, book_dir, js_cache = (absolute(p) if p else None for p in (out, book_dir, js_cache))
    check_out(out, book_dir)
    repository = repository_url(repository)
    if execute:
        from .kernel import check_settings

        check_settings()
    in_memory = study is not None or _in_memory(qrels, runs)
    incoming = None
    if in_memory:  # written to a private folder first, moved into the book's once it is locked
        scratch_root = book_dir / "_build" if book_dir else own_book.runs_root()
        scratch_root.mkdir(parents=True, exist_ok=True)
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=scratch_root))
    try:
        p = plan(qrels, runs, study=study, name=name, folds=folds, threshold=threshold, profile=profile,
                 work_dir=incoming, parameters=parameters, scheduler=scheduler)
        content = own_book.content_hash(p.source)
        book = book_dir or own_book.book_folder(name, content) / "src"
        out_dir = out or own_book.default_out(name, content)
        with book_lock(book, "own-runs book"), out_lock(out_dir), sphinx_child() as sphinx:
            inputs = book / "_build" / "inputs"
            source = own_book.stage_inputs(p.source, inputs, move=in_memory)
            generated = book / "generated"
            generated.mkdir(parents=True, exist_ok=True)
            rplan = own_book.report_plan(p, source, generated, inputs, kernel_name)
            remove_orphans(generated, set(rplan.keys))
            if execute:
                from ..parallel import release_workers
                from .own_prepared import start_robustness, stop

                release_workers()   # the planning's readers would idle through the chapters, holding what they read
                background = start_robustness(p.parameters)   # chapter 3's study, beside the chapters
                try:
                    execute_plan(rplan, kernel_name=kernel_name, timeout=timeout, log=log, findings_page=False,
                                 jobs=jobs, spare=sphinx.start)
                finally:
                    stop(background)
            stale = stale_chapters(generated, list(rplan.keys), rplan.settings, rplan.keys)
            if stale:
                raise ReportError(stale_message(stale))
            _write_book_sources(book, p, own_book.front_page_answer(generated, rplan.keys, lambda: front_answer(p)))
            vendor_js(generated / "_vendor", cache=js_cache, log=log)
            index = build_book(book, out_dir, quiet=quiet, log=log, repository=repository, sphinx=sphinx.proc)
    finally:
        if incoming is not None:
            shutil.rmtree(incoming, ignore_errors=True)
    leaks = external_assets(index.parent) if check_offline else {}
    if leaks:
        raise ReportError("the built pages load assets from other hosts (they would not render offline): "
                          + "; ".join(f"{k}: {', '.join(v)}" for k, v in leaks.items()))
    return index


def _in_memory(qrels, runs) -> bool:
    import pandas as pd

    from ..data.qrels import Qrels

    return isinstance(qrels, (Qrels, pd.DataFrame)) or isinstance(runs, Mapping)


def _write_book_sources(book: Path, p: Plan, answer: str = "") -> None:
    """The book folder: the main book's configuration (title changed) and static files, and the
    generated intro, table of contents and *Not in this book* page (each file replaced whole)."""
    import yaml

    from .own_book import write_text

    main = default_book_dir()
    book.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((main / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"recmetrics: meta-evaluation of {p.label}"
    config.setdefault("latex", {}).setdefault("latex_documents", {})["targetname"] = "recmetrics-runs.tex"
    write_text(book / "_config.yml", "# Generated by recmetrics.report.own_runs from book/_config.yml\n"
               + yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    if (main / "static").is_dir():
        shutil.copytree(main / "static", book / "static", dirs_exist_ok=True)
    write_text(book / "_toc.yml", p.toc())
    write_text(book / "intro.md", p.intro(answer))
    write_text(book / "left_out.md", p.left_out())
