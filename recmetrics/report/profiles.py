"""Report profiles and the parameters each notebook receives, shown under its title.

A notebook only receives the names its ``parameters`` cell declares (:func:`notebook_parameters`);
the values it actually ran with are shown as a table under the chapter title (:func:`show_parameters`).
"""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError, unknown_name
from . import schema


#: Parameters shared by every notebook, per profile. A notebook only receives the names that its
#: ``parameters`` cell declares, so adding a key here never breaks another notebook.
PROFILES: dict[str, dict[str, Any]] = {
    # small and fast: CI smoke runs and drafts (the whole report in minutes)
    "quick": {
        "seed": 0,
        "test_size": 0.2,
        "cutoffs": [5, 10, 20],
    },
    # the settings of the papers the notebooks reproduce
    "paper": {
        "seed": 0,
        "test_size": 0.2,
        "cutoffs": [5, 10, 20, 50, 100],
    },
}

#: One line per profile for ``recmetrics report --help``.
PROFILE_HELP: dict[str, str] = {
    "quick": "small settings (few systems, 2 folds, 5 samples, 2,000 permutations): a draft of the whole "
             "book, its verdicts provisional",
    "paper": "the papers' settings (5 folds, the 21 systems, 50 samples, 100,000 permutations); how "
             "long each profile takes: the Guide's page 'Performance and tests'",
}


def usable_cores() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs() -> int:
    """How many chapters run at once by default (``recmetrics report --jobs``): the cores this
    process may use, at most 4."""
    return max(1, min(usable_cores(), 4))


#: Per-notebook overrides: ``{profile: {notebook stem: {parameter: value}}}`` (applied after
#: :data:`PROFILES`). Notebooks added to ``notebooks/`` put their profile-specific settings here,
#: unless a paper module of :mod:`recmetrics.papers` runs the chapter (then its set-up gives them:
#: :func:`notebook_values`). Every value must be a parameter the notebook declares (checked by
#: :func:`recmetrics.report.plan.make_plan`: a value the notebook would not receive is an error).
NOTEBOOK_PARAMETERS: dict[str, dict[str, dict[str, Any]]] = {
    "quick": {
        "02_recommender_zoo": {"folds": 2, "systems": ["Random", "Pop", "UserKNN", "RM2", "HT", "EASE", "PureSVD", "WRMF"]},
        "03_unified_accuracy_diversity": {},   # the notebook's defaults are the quick settings
        "04_choosing_a_metric": {"svd": "SVD(factors=10,iterations=5)"},
    },
    "paper": {
        "02_recommender_zoo": {"folds": 5, "systems": None},
        # chapters 03-08 take their parameters from their paper's set-up (recmetrics.papers); the
        # explorers read chapter 7's robustness (late, when they run beside it), on one core each. The
        # explorers are no paper's experiment: their curves stop sampling a size at an se of 0.01
        # (recmetrics.meta.sample_stopping; benchmarks/calibrate_sample_stopping.py)
        "09_explorers": {"target_se": 0.01},
    },
}


# ---------------------------------------------------------------- what each chapter's parameters accept
def _metric_names(value) -> None:
    """Registered metric names (a name without a cut-off is read at 10)."""
    from ..metrics import parse

    for m in [value] if isinstance(value, str) else value:
        if not isinstance(m, str):
            raise InputError(f"{m!r} is no metric name")
        parse(m if "@" in m else f"{m}@10")


def _specs(value, names: Mapping[str, str] | None = None) -> None:
    """Recommender specs of the zoo (``names``: names read as the spec they stand for)."""
    from ..recommenders import create

    for s in [value] if isinstance(value, str) else value:
        if not isinstance(s, str):
            raise InputError(f"{s!r} is no recommender spec")
        create((names or {}).get(s, s))


def _thesis_specs(value) -> None:
    """Chapter 8's systems: the thesis' names (``bellogin2012.SYSTEMS``) or zoo specs."""
    from ..papers.bellogin2012 import SYSTEMS

    _specs(value, SYSTEMS)


def _designs(value) -> None:
    """Chapter 8's evaluation designs: names of ``THESIS_DESIGNS`` or design specs."""
    from ..protocols.chapter import THESIS_DESIGNS
    from ..protocols.designs import parse

    for d in value:
        if d not in THESIS_DESIGNS:
            parse(d)


def _split_method(value) -> str:
    """A split method :func:`recmetrics.data.splits.method_name` knows ('cv' is k-fold)."""
    from ..data.splits import method_name

    return method_name(value)


def _grids(value) -> None:
    """Robustness grids ``{scenario: shares kept}`` (:func:`recmetrics.meta.robustness.resolve_grids`)."""
    from ..meta.robustness import resolve_grids

    if not isinstance(value, dict) or not value:
        raise InputError("give a dict {scenario: [shares kept, ...]}")
    resolve_grids(value)


S = schema
SEED = S.integer(0)
COUNT = S.integer(1)
CUTOFFS = S.list_of(COUNT, "a non-empty list of cut-offs, integers >= 1")
SHARE = S.share()
SHARES = S.list_of(SHARE)
UNIT = S.number(0, 1)                        # a weight or a share where both ends are allowed
THRESHOLD = S.number()
METRICS = S.by(lambda v: _metric_names(v) if isinstance(v, list) and v else S.refuse(),
               "a non-empty list of metric names, e.g. ['P', 'nDCG']")
METRIC = S.by(lambda v: _metric_names(v) if isinstance(v, str) else S.refuse(), "a metric name, e.g. 'nDCG'")
SYSTEMS = S.by(lambda v: _specs(v) if isinstance(v, list) and v else S.refuse(),
               "a non-empty list of recommender specs, e.g. ['Pop', 'PureSVD(k=20)']") | None
GRIDS = S.by(_grids, "a dict {scenario: [shares kept, each in (0, 1]]}")
DATASETS = S.list_of(S.text("a dataset name"), empty=True)
SPLIT = S.by(lambda v: _split_method(S.as_text(v)), "a split method: 'kfold', 'holdout' or 'temporal'",
             keep=False)   # the chapter receives the canonical name ('cv' -> 'kfold')
INFAP = S.choice(of=S.loaded("recmetrics.metrics.ranking", "INFAP_UNJUDGED"))
POOL = S.choice(of=S.loaded("recmetrics.study", "POOLS"))
POOLS = S.subset(of=S.loaded("recmetrics.study", "POOLS"))
#: what the report sets itself (``--profile``, ``--dataset``, ``--dataset-arg``, ``--scheduler``)
SET_BY_REPORT = {"profile": S.choice(*PROFILES), "dataset": S.text("a dataset name"),
                 "dataset_args": S.arguments(), "scheduler": S.text("a Dask scheduler address") | None}
#: the split and study of chapters 5, 6, 7 and 9 (paper 000's set-up)
STUDY = {**SET_BY_REPORT, "seed": SEED, "systems": SYSTEMS, "split": SPLIT, "folds": COUNT, "repeats": COUNT,
         "metrics": METRICS, "infap": INFAP, "robustness_sizes": GRIDS, "n_samples": COUNT, "n_jobs": S.n_jobs()}

#: What every parameter of every chapter of the main book accepts, one schema per chapter
#: (:mod:`recmetrics.report.schema`); the defaults are in the notebook's ``parameters`` cell and the
#: profiles' values above. Checked at planning for every value a chapter receives.
SCHEMAS: dict[str, dict[str, schema.Rule]] = {
    "01_dataset_overview": {**SET_BY_REPORT, "seed": SEED, "cutoffs": CUTOFFS, "test_size": SHARE,
                            "threshold": THRESHOLD, "head_share": SHARE},
    "02_recommender_zoo": {**SET_BY_REPORT, "folds": S.integer(2), "seed": SEED, "n": COUNT, "systems": SYSTEMS},
    "03_unified_accuracy_diversity": {
        **SET_BY_REPORT, "seed": SEED, "test_size": SHARE, "n_users": COUNT | None, "swap_levels": COUNT,
        "redundancy_levels": COUNT, "aspect_levels": COUNT, "cutoff": COUNT, "n_systems": COUNT,
        "n_removals": COUNT, "system_draws": S.subset(of=S.loaded("recmetrics.meta.perturbations.incompleteness",
                                                                  "SYSTEM_DRAWS")),
        "removal_fractions": SHARES, "betas": S.list_of(S.number(0, 1, open_low=True)), "axiom_examples": COUNT,
        "tie_breaks": S.subset(of=S.loaded("recmetrics.meta.perturbations", "TIE_BREAKS")), "n_bootstrap": COUNT},
    "04_choosing_a_metric": {**SET_BY_REPORT, "seed": SEED, "test_size": SHARE, "cutoffs": CUTOFFS,
                             "threshold": THRESHOLD, "guide_k": COUNT,
                             "svd": S.by(lambda v: _specs(S.as_text(v)), "a recommender spec, e.g. 'SVD'")},
    "05_cutoffs": {**STUDY, "test_size": SHARE, "cutoff_grid": CUTOFFS, "focus": METRIC,
                   "n_permutations": COUNT, "pools": POOLS, "replicates": SEED},
    "06_comparing_metrics": {**STUDY, "cutoff": COUNT, "n_permutations": COUNT, "pools": POOLS, "replicates": SEED},
    "07_arithmetic_vs_geometric": {
        **STUDY, "cutoff": COUNT, "pools": POOLS, "replicates": SEED, "floor": SHARE, "gf1_floors": SHARES,
        "f1_reading": S.choice(of=S.loaded("recmetrics.metrics.aggregate", "F1_READINGS")),
        "geometric_reading": S.choice(of=S.loaded("recmetrics.metrics.aggregate", "GEOMETRIC_READINGS"))},
    "08_popularity_bias": {
        **SET_BY_REPORT, "seed": SEED, "test_size": SHARE, "threshold": THRESHOLD,
        "systems": S.by(_thesis_specs, "a non-empty list of the thesis' systems or zoo specs"),
        "designs": S.by(lambda v: _designs(v) if isinstance(v, list) and v else S.refuse(),
                        "a non-empty list of the thesis' designs (e.g. '1R', 'UAR') or design specs"),
        "users": COUNT | None, "sigma": SHARE, "eps": SHARE,
        "removed": S.list_of(S.number(0, 1, open_high=True)), "sizes": S.list_of(COUNT),
        "alphas": S.list_of(S.number(0)), "sweep_systems": S.by(_thesis_specs, "a list of the thesis' systems"),
        "bounds_systems": S.by(_thesis_specs, "a list of the thesis' systems"), "n_bootstrap": COUNT,
        "real_datasets": DATASETS},
    "09_explorers": {
        **STUDY, "cutoffs": CUTOFFS, "depth": COUNT, "pool": POOL, "confidence": SHARE, "alpha": SHARE,
        "aggregations": S.subset(of=S.loaded("recmetrics.explorers", "AGGREGATIONS")), "n_permutations": COUNT,
        "extra_datasets": DATASETS, "sandbox_weights": S.list_of(UNIT), "guide_k": COUNT,
        "target_se": S.number(0, open_low=True) | None, "min_samples": S.integer(2)},
}


#: Seconds a chapter is expected to take, per profile: only to start the longest chains of chapters
#: first when several run at once (:func:`recmetrics.report.execute.start_order`); a chapter's own
#: last record in ``generated/`` replaces its value. Measured on two cores from an empty run cache
#: (``python benchmarks/bench_book.py --profile P``, movielens-small, 2026-11-28: chapter 7 fits the
#: runs, chapter 9 starts after it; the appendix of a build lists its own).
EXPECTED_SECONDS: dict[str, dict[str, float]] = {
    "quick": {"01_dataset_overview": 4, "02_recommender_zoo": 11, "03_unified_accuracy_diversity": 22,
              "04_choosing_a_metric": 6, "05_cutoffs": 12, "06_comparing_metrics": 12,
              "07_arithmetic_vs_geometric": 18, "08_popularity_bias": 22, "09_explorers": 10},
    "paper": {"01_dataset_overview": 3, "02_recommender_zoo": 35, "03_unified_accuracy_diversity": 171,
              "04_choosing_a_metric": 7, "05_cutoffs": 63, "06_comparing_metrics": 34,
              "07_arithmetic_vs_geometric": 217, "08_popularity_bias": 43, "09_explorers": 131},
}


def _paper_values(profile: str) -> dict[str, dict[str, Any]]:
    """The chapters' parameters derived from the papers' set-ups (:func:`recmetrics.papers.notebook_parameters`)."""
    if profile not in _PAPER_VALUES:
        from .. import papers

        _PAPER_VALUES[profile] = papers.notebook_parameters(profile)
    return _PAPER_VALUES[profile]


_PAPER_VALUES: dict[str, dict[str, dict[str, Any]]] = {}


def notebook_values(profile: str, stem: str) -> dict[str, Any]:
    """The per-notebook values of ``profile`` for notebook ``stem`` (a copy): the papers' set-ups
    for the chapters a paper module runs (:mod:`recmetrics.papers`), else :data:`NOTEBOOK_PARAMETERS`.
    A chapter set by both is an error (one definition per value)."""
    if profile not in PROFILES:
        raise unknown_name("report profile", profile, PROFILES)
    from_papers = _paper_values(profile).get(stem, {})
    typed = NOTEBOOK_PARAMETERS.get(profile, {}).get(stem, {})
    both = sorted(set(from_papers) & set(typed))
    if both:
        from .paths import ReportError

        raise ReportError(f"profile {profile!r} sets {stem}'s {', '.join(both)} twice: in NOTEBOOK_PARAMETERS and "
                          f"in recmetrics.papers; keep one")
    return copy.deepcopy({**from_papers, **typed})


#: Chapters that read other chapters' results: ``{notebook stem: stems it reads}``. The report
#: executes a chapter after the ones it reads (file-name order otherwise) and again whenever one of
#: them was executed again. Chapter 4's metric guide reads the discriminative power and robustness
#: tables that chapters 5-7 write (``recmetrics.meta.guidelines.meta_results_dir``). A notebook
#: can also declare its own in its metadata: ``{"recmetrics": {"depends_on": ["05_cutoffs"]}}``.
DEPENDS: dict[str, tuple[str, ...]] = {
    "04_choosing_a_metric": ("05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric"),
    # chapter 6 reads the arithmetic robustness study chapter 7 runs beside its geometric ones
    "06_comparing_metrics": ("07_arithmetic_vs_geometric",),
    # the explorer reads chapter 7's robustness studies at its cut-off, arithmetic and geometric
    # (recmetrics.report.shared), instead of computing them again
    "09_explorers": ("07_arithmetic_vs_geometric",),
}

#: Of :data:`DEPENDS`, the chapters a reader may start beside rather than after: it needs their
#: tables only late, after work of its own. The reader may start once they have started, when no
#: other chapter is ready (waiting holds a core); when it asks for a table
#: (:func:`recmetrics.report.shared.shared`) one of them has not committed yet, it waits
#: for that chapter to complete, and computes the table itself if the chapter failed or shared none.
#: The explorer computes its other cut-offs first, then reads chapter 7's cut-off.
READS_LATE: dict[str, tuple[str, ...]] = {
    "09_explorers": ("07_arithmetic_vs_geometric",),
}


def notebook_parameters(
    profile: str, dataset: str, notebook: str | os.PathLike, declared: Iterable[str] | None = None
) -> dict[str, Any]:
    """The parameters given to ``notebook`` (a path or a stem) under ``profile``.

    Only names in ``declared`` (the notebook's ``parameters`` cell; read from the file when
    ``None``) are returned, so profile keys meant for other notebooks are not injected.
    """
    if profile not in PROFILES:
        raise unknown_name("report profile", profile, PROFILES)
    if not isinstance(dataset, str) or not dataset:
        raise ValueError(f"dataset must be a non-empty dataset name, got {dataset!r}")
    stem = Path(notebook).stem
    from ..papers import notebook_parameters as papers_parameters

    params: dict[str, Any] = copy.deepcopy(PROFILES[profile])
    params.update(notebook_values(profile, stem))
    params["dataset"] = dataset
    params["profile"] = profile
    if declared is None:
        path = Path(notebook)
        if not path.suffix:
            return params
        import papermill

        declared = papermill.inspect_notebook(str(path)).keys()
    declared = set(declared)
    return {k: v for k, v in params.items() if k in declared}


def parameters_markdown(values: Mapping[str, Any]) -> str:
    """A Markdown table of the parameter values a notebook ran with (name, value)."""
    rows = "\n".join(f"| `{name}` | `{value!r}` |" for name, value in values.items())
    return "**This chapter was computed with these parameters:**\n\n| parameter | value |\n|---|---|\n" + rows


def show_parameters(nb, values: Mapping[str, Any]) -> None:
    """Insert a Markdown cell listing ``values`` after the notebook's title cell (or at the top).

    The chapter then shows its parameters once, in that table: the code cells holding the same
    values (papermill's injected ``parameters`` and the notebook's own) are tagged ``remove-cell``.
    Replaces a previous such cell, so re-processing a notebook does not stack tables."""
    import nbformat

    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if cell.get("cell_type") == "code" and {"injected-parameters", "parameters"} & set(tags) \
                and "remove-cell" not in tags:
            tags.append("remove-cell")
    cells = [c for c in nb.cells if "recmetrics-parameters" not in c.get("metadata", {}).get("tags", [])]
    cell = nbformat.v4.new_markdown_cell(parameters_markdown(values))
    cell.metadata["tags"] = ["recmetrics-parameters"]
    at = 1 if cells and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("#") else 0
    cells.insert(at, cell)
    nb.cells = cells


def executed_parameters(
    notebook: str | os.PathLike, given: Mapping[str, Any], profile: str | None = None
) -> dict[str, Any]:
    """Every parameter the notebook declares with the value it runs with: ``given`` where given,
    else the default written in its ``parameters`` cell (evaluated when it is a literal); led by
    the report ``profile`` when one is given (a notebook need not declare it to show it)."""
    import ast

    import papermill

    values: dict[str, Any] = {} if profile is None else {"profile": profile}
    for name, spec in papermill.inspect_notebook(str(notebook)).items():
        if name in given:
            values[name] = given[name]
            continue
        try:
            values[name] = ast.literal_eval(spec["default"])
        except (ValueError, SyntaxError):
            values[name] = spec["default"]
    return values


def hide_default_parameters(nb) -> bool:
    """Tag the notebook's own ``parameters`` cell ``remove-cell`` when papermill injected the
    values actually used (so the book shows one parameter cell, the right one)."""
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    if not any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in cells):
        return False
    changed = False
    for cell in cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
            changed = True
    return changed
