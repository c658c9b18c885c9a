"""A paper's experimental set-up as data, and where a run deviates from it.

:class:`SetUp` holds what a paper says it ran — datasets, systems, split, cut-offs, relevance
threshold, metrics, the test-size grid of every robustness scenario, the number of random samples
and permutations, designs — plus ``notes`` saying where each value comes from (section, or "not
stated; the project's reading"). Each paper module of :mod:`recmetrics.papers` defines one
(``SETUP``) and the ``paper`` report profile runs the chapter under it.

:func:`deviations` compares a run's settings (a plain mapping, e.g. the chapter's parameters)
with a set-up and names every difference in one line each; the chapters pass the list to
:func:`recmetrics.meta.findings.assess`, whose rows carry it in their ``deviations`` column.

Example::

    >>> s = SetUp(paper="003", citation="Valcarce et al. 2018", datasets=("movielens-1m",),
    ...           systems=("Random", "Pop", "PureSVD"), split="holdout", test_size=0.2,
    ...           robustness_sizes={"ratings": grid(1.0, 0.05, 0.05)}, n_samples=50)
    >>> deviations(s, {"dataset": "movielens-small", "systems": ["Random", "Pop"], "n_samples": 50,
    ...                "robustness_sizes": {"ratings": [1.0, 0.5, 0.05]}})  # doctest: +NORMALIZE_WHITESPACE
    ["dataset: movielens-small (the paper's: movielens-1m)",
     "systems: 2 of the paper's 3 (missing: PureSVD)",
     'ratings grid: 1 → 0.05, 3 sizes (the paper: 1 → 0.05 in steps of 0.05, 20 sizes)']
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import InputError

__all__ = ["SetUp", "deviations", "row_deviations", "grid", "describe_grid"]


def grid(start: float, stop: float, step: float) -> tuple[float, ...]:
    """The shares ``start, start − step, …, stop`` (both ends included), rounded to 1e-10.

    >>> grid(1.0, 0.8, 0.05)
    (1.0, 0.95, 0.9, 0.85, 0.8)
    """
    if not (step > 0 and 0 < stop <= start <= 1):
        raise InputError(f"a grid needs 1 >= start >= stop > 0 and step > 0, got {start}, {stop}, {step}")
    n = int(round((start - stop) / step))
    if not math.isclose(start - n * step, stop, abs_tol=1e-9):
        raise InputError(f"step {step} does not lead from {start} to {stop}")
    return tuple(round(start - i * step, 10) for i in range(n + 1))


def describe_grid(sizes: Sequence[float]) -> str:
    """``"1 → 0.8 in steps of 0.01, 21 sizes"`` for an even grid, else its ends and length."""
    s = [float(x) for x in sizes]
    if not s:
        return "no sizes"
    if len(s) == 1:
        return f"{s[0]:g} only"
    steps = {round(a - b, 10) for a, b in zip(s, s[1:])}
    if len(steps) == 1:
        return f"{s[0]:g} → {s[-1]:g} in steps of {steps.pop():g}, {len(s)} sizes"
    return f"{s[0]:g} → {s[-1]:g}, {len(s)} sizes"


def _same_grid(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(math.isclose(float(x), float(y), abs_tol=1e-9) for x, y in zip(a, b))


@dataclass(frozen=True)
class SetUp:
    """What a paper ran. ``None`` means the paper does not say (nothing to compare against).

    Fields: ``paper`` (id, as in ``/papers``), ``citation``; ``datasets`` (project dataset names
    of the paper's collections); ``systems`` (spec strings); ``split`` (``"holdout"`` or
    ``"kfold"``), ``folds``, ``test_size``, ``repeats`` (how many independent partitions the split
    is drawn as, :func:`recmetrics.runs.make_folds`; the papers draw theirs once); ``cutoffs``;
    ``threshold`` (ratings ≥ it are relevant);
    ``metrics`` (metric names as the project's Study takes them); ``robustness_sizes`` (``{scenario: grid of shares}``, 1.0 =
    the full test set); ``n_samples`` (random samples per size), ``n_permutations`` (permutation
    test); ``aggregates`` (means the paper reports); ``designs`` (evaluation designs, e.g. the
    thesis' ``"TI-1R-NN(n=100)"``); ``options`` (the project's readings where the paper leaves a
    choice open or that the paper settles in words, e.g. ``{"pool": ("concat", "mean"), "infap":
    ("pooled",)}``: a run whose value is not listed deviates); ``notes`` (``{field: where it comes from}``);
    ``extra`` (anything else a paper needs).
    """

    paper: str
    citation: str
    datasets: tuple[str, ...] = ()
    systems: tuple[str, ...] | None = None
    split: str | None = None
    folds: int | None = None
    test_size: float | None = None
    repeats: int | None = 1
    cutoffs: tuple[int, ...] | None = None
    threshold: float | None = None
    metrics: tuple[str, ...] | None = None
    robustness_sizes: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    n_samples: int | None = None
    n_permutations: int | None = None
    aggregates: tuple[str, ...] = ("arithmetic",)
    designs: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for scenario, sizes in self.robustness_sizes.items():
            bad = [s for s in sizes if not 0 < float(s) <= 1]
            if bad:
                raise InputError(f"set-up of paper {self.paper}: {scenario} size {bad[0]!r} is outside (0, 1]")

    def replace(self, **changes) -> "SetUp":
        """A copy with ``changes`` (e.g. the quick profile's smaller settings)."""
        return dataclasses.replace(self, **changes)


def _names(systems) -> list[str]:
    return [str(s) for s in systems]


def deviations(setup: SetUp, ran: Mapping[str, Any]) -> list[str]:
    """Where a run's settings ``ran`` differ from the paper's ``setup``, one line each.

    ``ran`` may hold any of ``dataset``, ``systems``, ``split``, ``folds``, ``test_size``, ``repeats``,
    ``cutoffs``, ``threshold``, ``metrics``, ``robustness_sizes`` (``{scenario: sizes}``),
    ``n_samples``, ``n_permutations``, ``designs`` and the keys of ``setup.options``; a key missing
    from ``ran``, or that the paper does not state (``None``), is not compared. An empty list means
    the run follows the paper on every compared setting.
    """
    if not isinstance(ran, Mapping):
        raise InputError(f"ran must be a mapping of settings (dataset=..., systems=...), got {type(ran).__name__}")
    out: list[str] = []

    def has(key):
        return key in ran and ran[key] is not None

    if has("dataset") and setup.datasets and str(ran["dataset"]) not in setup.datasets:
        out.append(f"dataset: {ran['dataset']} (the paper's: {', '.join(setup.datasets)})")
    if has("systems") and setup.systems is not None:
        mine, theirs = _names(ran["systems"]), _names(setup.systems)
        missing = [s for s in theirs if s not in mine]
        extra = [s for s in mine if s not in theirs]
        if missing or extra:
            text = f"systems: {len(mine) - len(extra)} of the paper's {len(theirs)}"
            parts = ([f"missing: {', '.join(missing)}"] if missing else []) + \
                    ([f"not in the paper: {', '.join(extra)}"] if extra else [])
            out.append(text + " (" + "; ".join(parts) + ")")
    if has("split") and setup.split is not None and str(ran["split"]) != setup.split:
        out.append(f"split: {ran['split']} (the paper: {setup.split})")
    if has("folds") and setup.folds is not None and int(ran["folds"]) != setup.folds:
        out.append(f"folds: {ran['folds']} (the paper: {setup.folds})")
    if has("test_size") and setup.test_size is not None and setup.split == ran.get("split", setup.split) \
            and not math.isclose(float(ran["test_size"]), setup.test_size):
        out.append(f"test size: {ran['test_size']} (the paper: {setup.test_size})")
    if has("repeats") and setup.repeats is not None and int(ran["repeats"]) != setup.repeats:
        out.append(f"split drawn {int(ran['repeats'])} times (the paper: {setup.repeats})")
    if has("cutoffs") and setup.cutoffs is not None:
        mine = [int(c) for c in ([ran["cutoffs"]] if isinstance(ran["cutoffs"], int) else ran["cutoffs"])]
        if mine != list(setup.cutoffs):
            out.append(f"cut-offs: {mine} (the paper: {list(setup.cutoffs)})")
    if has("threshold") and setup.threshold is not None and float(ran["threshold"]) != setup.threshold:
        out.append(f"relevance threshold: {ran['threshold']:g} (the paper: {setup.threshold:g})")
    if has("metrics") and setup.metrics is not None:
        mine, theirs = _names(ran["metrics"]), _names(setup.metrics)
        if mine != theirs:
            missing = [m for m in theirs if m not in mine]
            extra = [m for m in mine if m not in theirs]
            parts = ([f"missing: {', '.join(missing)}"] if missing else []) + \
                    ([f"not the paper's: {', '.join(extra)}"] if extra else [])
            out.append("metrics: " + ("; ".join(parts) if parts else "another order"))
    if has("robustness_sizes") and setup.robustness_sizes:
        mine = dict(ran["robustness_sizes"])
        for scenario, sizes in mine.items():
            theirs = setup.robustness_sizes.get(scenario)
            if theirs is None:
                out.append(f"{scenario}: a scenario the paper did not run")
            elif not _same_grid(sizes, theirs):
                out.append(f"{scenario} grid: {describe_grid(sizes)} (the paper: {describe_grid(theirs)})")
        skipped = [sc for sc in setup.robustness_sizes if sc not in mine]
        if skipped:
            out.append(f"scenarios not run: {', '.join(skipped)}")
    for key, label in (("n_samples", "random samples per size"), ("n_permutations", "permutations")):
        theirs = getattr(setup, key)
        if has(key) and theirs is not None and int(ran[key]) != theirs:
            out.append(f"{label}: {int(ran[key]):,} (the paper: {theirs:,})")
    if has("designs") and setup.designs:
        mine = _names(ran["designs"])
        missing = [d for d in setup.designs if d not in mine]
        if missing:
            out.append(f"designs not run: {', '.join(missing)}")
    for key, theirs in setup.options.items():
        if not has(key):
            continue
        allowed = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
        mine = ran[key] if isinstance(ran[key], (tuple, list)) else (ran[key],)
        off = [m for m in mine if m not in allowed]
        if off:
            out.append(f"{key}: {', '.join(map(str, off))} (the set-up: {', '.join(map(str, allowed))})")
    return out


def row_deviations(table, by_claim: Mapping[str, Sequence[str]]):
    """A copy of a findings table (:func:`recmetrics.meta.findings.assess`) whose ``deviations``
    column says, per row, where the run differs from the set-up for that claim
    (``by_claim``: ``{claim id: [deviation, ...]}``, e.g. paper 004's ``deviations``); a row whose id
    is not in ``by_claim`` is an error (every row states its set-up)."""
    missing = sorted(set(table["id"]) - set(by_claim))
    if missing:
        raise InputError(f"no deviations given for claim {missing[0]!r}")
    out = table.copy()
    out["deviations"] = ["; ".join(str(d) for d in by_claim[i]) for i in out["id"]]
    return out

