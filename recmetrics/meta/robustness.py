"""Robustness of metrics to incomplete judgments (paper 000 §4.2; paper 003 §4-5).

A metric is robust when the ranking of systems it gives on a reduced test set stays close (in
Kendall's τ) to the ranking on the full test set. Five scenarios reduce each fold's test set:

* ``ratings``: a random share of the test ratings is kept (000 §4.2.1, 003 §4 "sparsity bias");
* ``random-items``: a random share of the test *items* keeps all its ratings (000 §4.2.2);
* ``popular-items``: the most popular test items (by number of test ratings in the fold) are
  removed until the given share of items is left (000 §4.2.2, 003 §4 "popularity bias");
* ``random-users``: a random share of the test users keeps all its ratings (000 §4.2.3);
* ``large-users``: the users with the largest profiles (ratings in the whole dataset) are removed
  until the given share of users is left (000 §4.2.3).

**Grids, per scenario.** Sizes are shares of ratings, items or users, and each paper has its own
grid per scenario (``sizes={scenario: grid}``; one list is used for every scenario):

* 003 §5: sparsity "from samples with 100% of the ratings ... to samples with 5% ... in steps of
  5%" (:data:`SPARSITY_003`); popularity "from using the ratings of 100% of items to using only the
  ratings of the 80% least popular items in steps of 1%" (:data:`POPULARITY_003`). 003 runs only
  these two scenarios: :data:`GRIDS_003`.
* 000 §4.2.1: "test sizes starting from 100 to 1%" for ratings, and "again" for random items and
  random users. The text gives the end points only; the points between are this package's choice
  (:data:`PAPER_SIZES`: 10% steps, then 5% and 1%). 000 gives no grid for popular items (its text
  repeats 003's "the correlations quickly drop after removing a small percentage of the most
  popular items"): they use 003's popularity grid, 100% to 80% in 1% steps. Nor does it give one
  for large users; they use the random users' 100% to 1%: 000 §6.3.3 finds that "most metrics fall
  short in robustness" there, and on 003's 100% to 80% grid no metric can (the full study of
  ``benchmarks/bench_robustness.py``: mean τ 0.97-1.00 for all nine metrics). These are
  :data:`GRIDS_000`, the default (:data:`DEFAULT_GRIDS`), and paper 000's set-up
  (:data:`recmetrics.papers.valcarce2020.SETUP`); any other grid is one ``sizes=`` away. The grid matters: on movielens-small (5 folds) keeping the 80% least
  popular test items keeps 37% of a fold's test ratings, keeping 50% keeps 14%, so the rating grid
  applied to item shares mostly measures noise.

**Samples.** ``n_samples`` seeded samples per size (50 in both papers). The "deterministic"
scenarios (popular-items, large-users) remove items or users by count, and counts tie (most test
items have one or two test ratings; most users share a profile size with others): with
``tie_break="sample"`` (default) every sample is a seeded random order among equal counts, so the
spread over tie-breaks enters :meth:`Robustness.area_se` like the spread of the random scenarios;
``tie_break="first"`` draws one order per size (the first of those samples; the results of earlier
versions, which drew one) and leaves their standard error undefined (NaN). With ``target_se`` a
size stops drawing once its Monte Carlo error is small enough (:mod:`.sample_stopping`); the papers
draw all 50.

**Comparing curves.** The papers read their τ curves by eye: "we say that a metric is more robust
than another if it stands at a higher average correlation with itself as the test set is reduced"
(000 §4.2.1); no summary number or test is given. :meth:`Robustness.area` summarises a curve by
the mean τ over the grid's reduced sizes (every grid point weighs the same: on 003's evenly spaced
grids this is the normalised area under the curve; on :data:`PAPER_SIZES` the 5% and 1% points weigh
as much as a 10% step) and :meth:`Robustness.area_se` gives its Monte Carlo standard error, the
uncertainty a verdict passes to :mod:`recmetrics.meta.findings`.

Runs are fixed: each run is judged once (:meth:`recmetrics.study.Study.judged`) and a reduced
test set is a *mask over its judged positions* (``Judged.hits``) plus the per-user totals and
ideal DCG of the reduced judgments (:mod:`recmetrics.meta.reduced_sets`); recommenders are never
re-run and lists never re-judged.
Users left without a relevant judgment drop out (the ``"relevant"`` user policy), for every
system alike, so systems stay paired. Folds are pooled as in ``Study.scores(pool="concat")``.
Every sample has its own seed derived from ``seed``, the scenario and the size, so the same seed
gives bit-identical results for any ``n_jobs`` or back-end.

Example::

    r = robustness_study(study, sizes=GRIDS_003, n_samples=50, seed=0)   # 003's two scenarios
    r.area("popular-items"), r.area_se("popular-items")                  # mean τ per metric, its se
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import checks
from ..errors import InputError, unknown_name
from .agreement import kendall_tau, tau_rows
from .firmness import replay_cached
from .reduced_sets import mask_judged  # noqa: F401 (public here too)
from .sample_context import StoredContext, run_samples, shared_context
from .sample_stopping import check_rule, checkpoints, stop_counts, truncate_samples

__all__ = ["SCENARIOS", "PAPER_SIZES", "QUICK_SIZES", "SPARSITY_003", "POPULARITY_003", "GRIDS_003", "GRIDS_000",
           "DEFAULT_GRIDS", "QUICK_GRIDS", "TIE_BREAKS", "robustness_study", "robustness_studies", "cutoff_robustness", "Robustness",
           "mask_judged", "check_sizes", "resolve_grids"]

SCENARIOS = ("ratings", "random-items", "popular-items", "random-users", "large-users")
#: tie-break rules of the deterministic scenarios (see the module docstring)
TIE_BREAKS = ("sample", "first")


def _grid(start: int, stop: int, step: int) -> tuple[float, ...]:
    """Percentages ``start, start - step, ..., stop`` as shares (exact decimals: 0.95, not 0.9500000001)."""
    return tuple(round(p / 100, 4) for p in range(start, stop - 1, -step))


#: 000 §4.2.1 "from 100 to 1%": the end points are the paper's, the points between this package's
PAPER_SIZES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01)
#: 003 §5, sparsity: 100% to 5% of the test ratings in steps of 5% (20 sizes)
SPARSITY_003 = _grid(100, 5, 5)
#: 003 §5, popularity: the ratings of 100% down to the 80% least popular items, in steps of 1% (21 sizes)
POPULARITY_003 = _grid(100, 80, 1)
#: paper 003's grids: its two scenarios
GRIDS_003 = MappingProxyType({"ratings": SPARSITY_003, "popular-items": POPULARITY_003})
#: paper 000's grids (popular-items: 003's popularity grid; large-users: the random users'; see the module docstring)
GRIDS_000 = MappingProxyType({"ratings": PAPER_SIZES, "random-items": PAPER_SIZES, "popular-items": POPULARITY_003,
                              "random-users": PAPER_SIZES, "large-users": PAPER_SIZES})
#: the default of :func:`robustness_study`: 000's grids (the only paper with all five scenarios)
DEFAULT_GRIDS = GRIDS_000
#: a coarse grid for quick runs, and the quick grids per scenario (same end points as 000's; the
#: quick profile of paper 000's set-up and of the own-runs book)
QUICK_SIZES = (1.0, 0.5, 0.2, 0.1, 0.05, 0.01)
QUICK_GRIDS = MappingProxyType({"ratings": QUICK_SIZES, "random-items": QUICK_SIZES,
                                "popular-items": (1.0, 0.95, 0.9, 0.85, 0.8), "random-users": QUICK_SIZES,
                                "large-users": QUICK_SIZES})
_DETERMINISTIC = {"popular-items", "large-users"}


def check_sizes(sizes) -> tuple[float, ...]:
    """Validate test sizes: shares in (0, 1]."""
    out = tuple(float(s) for s in np.atleast_1d(np.asarray(sizes, dtype=np.float64)))
    if not out:
        raise InputError("give at least one test size")
    bad = [s for s in out if not (0.0 < s <= 1.0)]
    if bad:
        raise InputError(f"test size {bad[0]!r} is outside (0, 1]; sizes are shares of the test set (1.0 = all)")
    return out


def resolve_grids(sizes, scenarios: Sequence[str] | str | None = None) -> dict[str, tuple[float, ...]]:
    """``{scenario: grid}`` for the scenarios asked, from ``sizes``.

    ``sizes``: ``None`` (:data:`DEFAULT_GRIDS`), one sequence of shares (the same grid for every
    scenario) or a mapping ``{scenario: grid}`` (e.g. :data:`GRIDS_003`). ``scenarios``: default
    the mapping's scenarios when ``sizes`` is a mapping, else all five. A scenario asked but
    missing from the mapping is an error.

    >>> resolve_grids(GRIDS_003)["popular-items"][-1]
    0.8
    >>> resolve_grids([1.0, 0.5], "ratings")
    {'ratings': (1.0, 0.5)}
    """
    if sizes is None:
        sizes = DEFAULT_GRIDS
    if scenarios is not None:
        scenarios = [_scenario(s) for s in ([scenarios] if isinstance(scenarios, str) else scenarios)]
        if not scenarios:
            raise InputError("give at least one scenario")
    if isinstance(sizes, Mapping):
        grids = {}
        for key, grid in sizes.items():
            name = _scenario(key)
            if name in grids:
                raise InputError(f"scenario {name!r} is given two grids in sizes")
            try:
                grids[name] = check_sizes(grid)
            except InputError as exc:
                raise InputError(f"sizes[{key!r}]: {exc}") from None
        if scenarios is None:
            return {s: grids[s] for s in SCENARIOS if s in grids}  # the mapping's scenarios, in paper order
        missing = [s for s in scenarios if s not in grids]
        if missing:
            raise InputError(f"sizes has no grid for scenario {missing[0]!r} (it has {', '.join(grids) or 'none'}); "
                             "add one, or pass one list of sizes for every scenario")
        return {s: grids[s] for s in scenarios}
    if isinstance(sizes, str):
        raise InputError(f"sizes must be shares of the test set or {{scenario: shares}}, got {sizes!r}")
    grid = check_sizes(sizes)
    return {s: grid for s in (scenarios if scenarios is not None else SCENARIOS)}


def _scenario(name: str) -> str:
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    if key not in SCENARIOS:
        raise unknown_name("incompleteness scenario", str(name), SCENARIOS)
    return key


@dataclass
class Robustness:
    """Result of :func:`robustness_study`: ``samples`` (one row per scenario, size, sample, metric:
    ``tau`` against the full test set and ``mean_value``, the mean over systems of the aggregated
    metric), ``full`` (systems x metrics on the full test sets), the ``grids`` used per scenario and
    the ``tie_break`` rule; :meth:`summary` gives the mean and spread over samples, :meth:`area` and
    :meth:`area_se` one robustness score per metric and its Monte Carlo standard error."""

    samples: pd.DataFrame
    full: pd.DataFrame     # systems x metrics on the full test sets
    grids: dict = field(default_factory=dict)   # {scenario: sizes} as run
    tie_break: str = "sample"
    #: τ of every sample on each data-split replicate (``replicate`` column; its own full test set as
    #: reference), when the study ran with ``replicates`` (:mod:`recmetrics.meta.replicates`)
    replicate_samples: pd.DataFrame | None = None

    def select(self, metrics: Sequence[str]) -> "Robustness":
        """The same study restricted to ``metrics`` (names as in :attr:`samples`, e.g. ``"RR@100"``):
        their rows, in order, and their full-set columns. Each metric's values do not depend on the
        others scored with it, so this is the study of those metrics alone (same seeds, same reduced
        test sets). A name the study does not have is an error."""
        names = [metrics] if isinstance(metrics, str) else list(metrics)
        missing = [m for m in names if m not in set(self.full.columns)]
        if missing or not names:
            raise InputError(f"the robustness study has no metric {missing[0]!r} (it has {list(self.full.columns)})"
                             if missing else "select at least one metric")
        reps = self.replicate_samples
        return Robustness(self.samples[self.samples["metric"].isin(names)].reset_index(drop=True), self.full[names],
                          grids=dict(self.grids), tie_break=self.tie_break,
                          replicate_samples=None if reps is None else
                          reps[reps["metric"].isin(names)].reset_index(drop=True))

    @replay_cached
    def summary(self) -> pd.DataFrame:
        """Per scenario, size and metric: mean τ over the samples, its std and minimum, the mean
        metric value, the number of samples and of ``undefined`` ones.

        An undefined τ (NaN: the metric ties every system on the reduced set, so it ranks nothing)
        counts as τ = 0 — no agreement with the full ranking — so a metric that collapses at small
        sizes does not look more robust by dropping those samples; ``undefined`` says how many."""
        return _summary(self.samples)

    @replay_cached
    def curve(self, scenario: str, value: str = "tau") -> pd.DataFrame:
        """Sizes x metrics table of the mean ``tau`` (or ``mean_value``) of one scenario."""
        s = self.summary()
        s = s[s["scenario"] == _scenario(scenario)]
        return s.pivot(index="size", columns="metric", values=value).sort_index(ascending=False)

    @replay_cached
    def area(self, scenario: str | None = None) -> pd.Series:
        """Mean τ over the scenario's grid below 100% per metric (per scenario and metric when
        ``scenario`` is None): one robustness score per metric, larger is more robust.

        This is how the curves are compared: 000 §4.2.1 calls a metric "more robust than another if
        it stands at a higher average correlation with itself as the test set is reduced", and both
        papers read the curves by eye. Every size of the grid weighs the same (on an evenly spaced
        grid, e.g. 003's, this is the area under the τ curve divided by its width), each size's τ
        being the mean over its samples; :meth:`area_se` is its Monte Carlo standard error, which a
        comparison must clear (:func:`recmetrics.meta.findings.best_of`)."""
        s = self.summary()
        s = s[s["size"] < 1.0]
        if scenario is not None:
            return s[s["scenario"] == _scenario(scenario)].groupby("metric", sort=False)["tau"].mean()
        return s.groupby(["scenario", "metric"], sort=False)["tau"].mean()

    @replay_cached
    def area_se(self, scenario: str | None = None) -> pd.Series:
        """Monte Carlo standard error of :meth:`area`: ``sqrt(sum_sizes std² / samples) / n_sizes``
        (``std`` over a size's samples; samples are independent across sizes). The deterministic
        scenarios' samples are tie-breaks, so their spread is this se too; with ``tie_break="first"``
        (one sample per size) it is NaN: not estimated."""
        s = self.summary()
        s = s[s["size"] < 1.0].assign(var=lambda d: d["tau_std"] ** 2 / d["samples"])
        keys = ["metric"] if scenario is not None else ["scenario", "metric"]
        if scenario is not None:
            s = s[s["scenario"] == _scenario(scenario)]
        g = s.groupby(keys, sort=False)
        return np.sqrt(g["var"].sum(min_count=1)) / g["var"].size()


    @replay_cached
    def area_diff_se(self, scenario: str) -> pd.DataFrame:
        """Metrics x metrics: the Monte Carlo se of the *difference* of two metrics' :meth:`area`.

        Every metric is scored on the same reduced test sets, so their τ move together from sample
        to sample; the se of a difference is that of the per-sample differences (paired), not
        ``sqrt(se_a² + se_b²)``: ``sqrt(Σ_sizes var_s(τ_a − τ_b) / n) / n_sizes``. NaN where a size
        has one sample. An undefined τ counts 0, as in :meth:`summary`. When the metrics kept
        different numbers of a size's samples (``target_se``), a pair's differences are those of the
        samples both kept (the first ones of each)."""
        s = self.samples
        s = s[(s["size"] < 1.0) & (s["scenario"] == _scenario(scenario))].assign(tau=lambda d: d["tau"].fillna(0.0))
        wide = s.pivot_table(index=["size", "sample"], columns="metric", values="tau", sort=False)
        names = list(wide.columns)
        total, n_sizes = np.zeros((len(names), len(names))), 0
        for _, block in wide.groupby(level="size", sort=False):
            x = block.to_numpy()
            d = x[:, :, None] - x[:, None, :]
            if np.isnan(x).any():   # samples some metrics did not keep: each pair over those both kept
                n = (~np.isnan(d)).sum(axis=0)
                with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
                    warnings.simplefilter("ignore", RuntimeWarning)   # a pair with fewer than 2: NaN
                    total = total + np.where(n > 1, np.nanvar(d, axis=0, ddof=1) / n, np.nan)
            else:
                total = total + (d.var(axis=0, ddof=1) / len(x) if len(x) > 1 else np.nan)
            n_sizes += 1
        return pd.DataFrame(np.sqrt(total) / max(n_sizes, 1), index=names, columns=names)

    def area_n(self, scenario: str) -> int:
        """The fewest samples behind a size of ``scenario``'s :meth:`area` (the se's sample count)."""
        s = self.summary()
        s = s[(s["size"] < 1.0) & (s["scenario"] == _scenario(scenario))]
        return int(s["samples"].min()) if len(s) else 0

    def area_replicates(self, scenario: str, sizes=None) -> pd.DataFrame | None:
        """Replicates x metrics: :meth:`area` computed on each data-split replicate alone (None when
        the study ran without replicates), over the scenario's reduced sizes or only over ``sizes``.
        An undefined τ counts 0, as in :meth:`summary`."""
        if self.replicate_samples is None:
            return None
        s = self.replicate_samples
        keep = (s["size"] < 1.0) if sizes is None else s["size"].isin(list(sizes))
        s = s[keep & (s["scenario"] == _scenario(scenario))].assign(tau=lambda d: d["tau"].fillna(0.0))
        per_size = s.groupby(["replicate", "size", "metric"], sort=False)["tau"].mean()
        return per_size.groupby(["replicate", "metric"], sort=False).mean().unstack("metric")


def robustness_study(study, scenarios: Sequence[str] | str | None = None,
                     sizes: Sequence[float] | Mapping[str, Sequence[float]] | None = None,
                     n_samples: int = 50, seed: int = 0, metrics: Sequence[str] | None = None,
                     cutoffs: Sequence[int] | int | None = None, aggregate: str | None = None,
                     n_jobs: int = 1, client: Any = None, progress: bool = True,
                     prefer: str | None = "threads", tie_break: str = "sample", replicates=None,
                     target_se: float | None = None, min_samples: int = 20) -> Robustness:
    """Kendall's τ between each metric's system ranking on reduced test sets and on the full one.

    For each scenario and each size of its grid, ``n_samples`` reduced test sets are drawn; each
    gives every metric a ranking of the systems and its τ to the full test set's ranking. The τ
    averaged over a size's samples is the curve; averaged over the grid, the metric's robustness
    (:meth:`Robustness.area`, with :meth:`Robustness.area_se`).

    Parameters
    ----------
    study : :class:`~recmetrics.study.Study`
        Its judged runs are reused (never re-run nor re-judged).
    scenarios : str or sequence of str, optional
        Among :data:`SCENARIOS`. Default: the scenarios of ``sizes`` when it is a mapping, else all five.
    sizes : sequence of float or {scenario: sequence of float}, optional
        Shares of the test set kept, in (0, 1]; one list for every scenario or a grid per scenario.
        Default :data:`DEFAULT_GRIDS` (paper 000's: ratings, random items and random users 100% .. 1%,
        popular items and large users 100% .. 80% in 1% steps); :data:`GRIDS_003` runs paper 003's
        two scenarios on its grids. Size 1.0 adds the τ = 1 point of the curve.
    n_samples : int
        Samples per size (the papers: 50): random draws, and for popular-items / large-users
        random tie-breaks among equal counts (``tie_break="sample"``).
    seed : int
        Every sample's seed derives from it, the scenario and the size: the same seed gives
        bit-identical results for any ``n_jobs``, ``prefer`` or Dask ``client``.
    metrics, cutoffs
        Select from the study (default: all metrics at every cut-off; a metric is named
        ``"nDCG@100"`` in the result).
    aggregate : str, optional
        The mean over users; defaults to the study's.
    n_jobs, client, prefer, progress
        Work runs through :func:`recmetrics.parallel.map_tasks` (joblib ``n_jobs``, threads by
        default since every sample shares the judged runs; ``prefer="fork"``: processes forked from
        this one, which inherit the judged runs and run side by side where threads mostly take
        turns on the GIL; or a Dask ``client``; the study's client is used when none is given).
    tie_break : {"sample", "first"}
        ``"sample"``: each of the ``n_samples`` samples of popular-items / large-users orders equal
        counts by its own seeded random key, and the spread enters ``area_se``. ``"first"``: one
        such order per size (the first sample; what earlier versions computed), ``area_se`` NaN.
    replicates : array (n_folds, n_users) of int, optional
        The data-split replicate of every (fold, user) unit (:func:`recmetrics.meta.replicates.unit_labels`):
        every sample is also aggregated per replicate, at no extra scoring, and its τ against that
        replicate's full test set is kept (:attr:`Robustness.replicate_samples`, :meth:`Robustness.area_replicates`).
    target_se, min_samples
        ``target_se`` None (default): every size draws ``n_samples`` samples. A number: each
        (metric, mean) of a size keeps its samples up to the first multiple of ``min_samples`` at
        which the Monte Carlo se of its mean τ is at most ``target_se``, and a size stops drawing
        once all have (:mod:`recmetrics.meta.sample_stopping`); the samples kept are the first ones
        of the fixed design's, bit for bit, and ``summary()["samples"]`` says how many.

    Examples
    --------
    >>> r = robustness_study(study, sizes=GRIDS_003, n_samples=50)            # doctest: +SKIP
    >>> r.area("popular-items"), r.area_se("popular-items")                    # doctest: +SKIP
    """
    from ..study import require_study

    aggregate = aggregate or require_study(study, "robustness_study").aggregate
    return robustness_studies(study, [aggregate], scenarios, sizes, n_samples, seed, metrics, cutoffs, n_jobs=n_jobs,
                              client=client, progress=progress, prefer=prefer, tie_break=tie_break,
                              replicates=replicates, target_se=target_se, min_samples=min_samples)[aggregate]


def robustness_studies(study, aggregates: Sequence[str], scenarios: Sequence[str] | str | None = None,
                       sizes: Sequence[float] | Mapping[str, Sequence[float]] | None = None,
                       n_samples: int = 50, seed: int = 0, metrics: Sequence[str] | None = None,
                       cutoffs: Sequence[int] | int | None = None, *, n_jobs: int = 1, client: Any = None,
                       progress: bool = True, prefer: str | None = "threads",
                       tie_break: str = "sample", replicates=None, target_se: float | None = None,
                       min_samples: int = 20) -> dict[str, Robustness]:
    """:func:`robustness_study` under several means over users at once: ``{aggregate: Robustness}``.

    The reduced test sets are drawn and scored once; each mean ranks the systems from the same
    per-user values, so every result is bit-identical to :func:`robustness_study` with that
    ``aggregate`` alone (tested), at the cost of one study instead of ``len(aggregates)``.
    """
    from ..evaluation import parse_metrics
    from ..parallel import map_tasks, task_seeds
    from ..study import require_study

    study = require_study(study, "robustness_study")  # runs and judgments, not per-user scores

    grids = resolve_grids(sizes, scenarios)
    if tie_break not in TIE_BREAKS:
        raise InputError(f"tie_break must be one of {', '.join(map(repr, TIE_BREAKS))}, got {tie_break!r}")
    n_samples = checks.positive_int(n_samples, "n_samples")
    target_se, min_samples = check_rule(target_se, min_samples)
    seed = checks.seed(seed)
    n_jobs = checks.n_jobs(n_jobs)
    metrics = list(study.metrics) if metrics is None else ([metrics] if isinstance(metrics, str) else list(metrics))
    cutoffs = list(study.cutoffs) if cutoffs is None else ([cutoffs] if np.ndim(cutoffs) == 0 else list(cutoffs))
    names = []
    for m in metrics:
        for c in cutoffs:
            mi, ci = study.locate(m, c)                     # validates metric and cut-off
            names.append(f"{study.metrics[mi]}@{study.cutoffs[ci]}")
    if len(study.systems) < 2:
        raise InputError("robustness needs at least 2 systems to rank")
    aggregates = tuple(dict.fromkeys(aggregates))
    if not aggregates:
        raise InputError("give at least one aggregate (the mean over users), e.g. ['arithmetic']")
    for a in aggregates:
        if not isinstance(a, str):
            raise InputError(f"aggregates must be names of means, got {a!r}")
    client = client if client is not None else getattr(study, "_client", None)
    ctx = shared_context(study, names, replicates, client)   # on a cluster: maybe the file it was loaded from
    # size 1: the full test sets' scores, per mean (with replicates: the pooled value, then one per replicate);
    # where the workers build the context, one of them computes it with the first samples
    full_task = (ctx, "random-users", 1.0, [0], aggregates)
    fulls = None if isinstance(ctx, StoredContext) else run_samples(*full_task)[0]

    def pooled(fulls):   # per mean: (specs, systems)
        return [f[0] if replicates is not None else f for f in fulls]

    pooled_fulls = None if fulls is None else pooled(fulls)
    cells = []   # (scenario, size, seeds) of every reduced size, in grid order
    for sc, grid in grids.items():
        reps = 1 if sc in _DETERMINISTIC and tie_break == "first" else n_samples
        cells += [(sc, size, task_seeds(_mix(seed, sc, size), reps)) for size in grid if size < 1.0]
    drawn = [[] for _ in cells]   # per cell, per sample drawn: its per-mean values
    taus = [[] for _ in cells]    # per cell, per sample drawn: τ of every (mean, metric)
    points = [checkpoints(len(seeds), min_samples) if target_se is not None else [len(seeds)]
              for _, _, seeds in cells]
    pending = list(range(len(cells)))
    for step in range(max(max((len(p) for p in points), default=0), int(fulls is None))):
        tasks, owners = [] if fulls is not None else [full_task], []
        for i in pending:
            sc, size, seeds = cells[i]
            todo = seeds[len(drawn[i]):points[i][step]]
            # the tie-breaks of one size share most of their work (see _Context.samples): one task
            for batch in ([todo] if sc in _DETERMINISTIC else [[s] for s in todo]):
                tasks.append((ctx, sc, size, batch, aggregates))
                owners.append(i)
        results = map_tasks(run_samples, tasks, n_jobs=n_jobs, client=client, progress=progress, desc="robustness",
                            prefer=prefer, scatter=[ctx])
        if fulls is None:
            fulls, results = results[0][0], results[1:]
            pooled_fulls = pooled(fulls)
        for i, batch in zip(owners, results):
            drawn[i] += batch
            taus[i] += [np.concatenate([_pooled_taus(per_mean[a][0] if replicates is not None else per_mean[a], full)
                                        for a, full in enumerate(pooled_fulls)]) for per_mean in batch]
        # a size goes on while a (mean, metric) of it has not reached the target (sample_stopping)
        pending = [i for i in pending if step + 1 < len(points[i])
                   and not stop_counts(np.array(taus[i]), target_se, points[i][:step + 1]).all()]
    out = {}
    for a_i, aggregate in enumerate(aggregates):
        full = pooled_fulls[a_i]   # with replicates, fulls[a_i] is (1 + R, specs, systems): pooled, then each
        full_reps = fulls[a_i][1:] if replicates is not None else None
        rows, rep_rows = [], []
        for sc, grid in grids.items():
            if 1.0 in grid:
                for m, name in enumerate(names):
                    rows.append((sc, 1.0, 0, name, 1.0, float(np.mean(full[m]))))
        for (sc, size, _), batch, cell_taus in zip(cells, drawn, taus):
            for r, per_mean in enumerate(batch):
                values = per_mean[a_i]
                if full_reps is not None:   # τ-b on each replicate, over the systems both sides rank
                    values, per_rep = values[0], values[1:]
                    rep_taus = tau_rows(per_rep.reshape(-1, per_rep.shape[-1]), full_reps.reshape(-1, per_rep.shape[-1]),
                                        "tau_b").reshape(per_rep.shape[:2])
                    rep_rows.append((sc, size, r, rep_taus))
                sample_taus = cell_taus[r][a_i * len(names):(a_i + 1) * len(names)]
                for m, name in enumerate(names):
                    v = values[m]
                    rows.append((sc, size, r, name, float(sample_taus[m]),
                                 float(np.nanmean(v)) if (~np.isnan(v)).any() else float("nan")))
        samples = pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"])
        rep_samples = None if full_reps is None else _replicate_frame(rep_rows, names)
        samples, rep_samples = truncate_samples(samples, target_se, min_samples, n_samples, rep_samples)
        out[aggregate] = Robustness(samples, pd.DataFrame(full.T, index=pd.Index(study.systems, name="system"),
                                                          columns=names), grids=grids, tie_break=tie_break,
                                    replicate_samples=rep_samples)
    return out


def _replicate_frame(parts: list, names: list) -> pd.DataFrame:
    """:attr:`Robustness.replicate_samples` from ``(scenario, size, sample, taus)`` per sample
    (``taus``: replicates × metrics): a row per (sample, replicate, metric) in that order, built
    column by column (the same table, dtypes included, as from one tuple per row)."""
    columns = ["scenario", "size", "sample", "replicate", "metric", "tau"]
    n_reps, n_metrics = parts[0][3].shape if parts else (0, 0)
    each = n_reps * n_metrics
    if not each:
        return pd.DataFrame([], columns=columns)
    return pd.DataFrame({
        "scenario": np.repeat(np.array([p[0] for p in parts], dtype=object), each),
        "size": np.repeat(np.array([p[1] for p in parts], dtype=np.float64), each),
        "sample": np.repeat(np.array([p[2] for p in parts], dtype=np.int64), each),
        "replicate": np.tile(np.repeat(np.arange(n_reps, dtype=np.int64), n_metrics), len(parts)),
        "metric": np.tile(np.array(names, dtype=object), len(parts) * n_reps),
        "tau": np.concatenate([np.asarray(p[3], dtype=np.float64).ravel() for p in parts]),
    }, columns=columns)


def _summary(samples: pd.DataFrame) -> pd.DataFrame:
    """:meth:`Robustness.summary` of ``samples``: one row per (scenario, size, metric) in order of first
    appearance. Each group's values are summed in their row order from the group's own rows only
    (sorted stably by group, ``reduceat``), so a group's mean, std (n − 1) and minimum do not depend
    on the other rows of the table — a study of some metrics summarises as those metrics' rows of a
    larger one, bit for bit (pandas' grouped mean differed in the last bit with the table's size)."""
    keys = ["scenario", "size", "metric"]
    columns = [*keys, "tau", "tau_std", "tau_min", "mean_value", "samples", "undefined"]
    if not len(samples):
        return pd.DataFrame(columns=columns)
    codes, uniques = pd.MultiIndex.from_frame(samples[keys]).factorize()
    order = np.argsort(codes, kind="stable")
    n = np.bincount(codes, minlength=len(uniques))
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    raw = samples["tau"].to_numpy(dtype=np.float64)[order]
    undefined = np.isnan(raw)
    tau = np.where(undefined, 0.0, raw)
    mean = np.add.reduceat(tau, starts) / n
    dev = tau - np.repeat(mean, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.sqrt(np.where(n > 1, np.add.reduceat(dev * dev, starts) / (n - 1), np.nan))
        values = samples["mean_value"].to_numpy(dtype=np.float64)[order]
        known = ~np.isnan(values)
        counted = np.add.reduceat(known.astype(np.int64), starts)
        mean_value = np.where(counted > 0, np.add.reduceat(np.where(known, values, 0.0), starts) / counted, np.nan)
    out = uniques.to_frame(index=False)
    out.columns = keys
    return out.assign(tau=mean, tau_std=std, tau_min=np.minimum.reduceat(tau, starts), mean_value=mean_value,
                      samples=n.astype(np.int64), undefined=np.add.reduceat(undefined.astype(np.int64), starts))[columns]


def _pooled_taus(values: np.ndarray, full: np.ndarray) -> np.ndarray:
    """Per metric (row), Kendall's τ between a sample's ranking (``values``: NaN for a system left
    without users) and the full test set's, over the systems the sample ranks: ``kendall_tau`` row
    by row, vectorised (:func:`~recmetrics.meta.agreement.tau_rows`, bit-identical). A full-set
    value that is not finite is refused by ``kendall_tau`` itself, as it always was."""
    ranked = ~np.isnan(values)
    if not np.isfinite(full[ranked]).all():
        return np.array([kendall_tau(v[ok], f[ok]) if ok.sum() >= 2 else float("nan")
                         for v, f, ok in zip(values, full, ranked)])
    return tau_rows(values, np.where(ranked, full, np.nan))


def _mix(seed: int, scenario: str, size: float) -> int:
    """A seed for one (scenario, size) cell, stable across runs and platforms."""
    import zlib

    return int(np.random.SeedSequence([int(seed), zlib.crc32(scenario.encode()), int(round(size * 1e6))])
               .generate_state(1)[0])


def cutoff_robustness(study, metric: str, sizes: Sequence[float] | Mapping[str, Sequence[float]] | None = None,
                      n_samples: int = 50, seed: int = 0, scenario: str | Sequence[str] = "ratings",
                      **kw) -> Robustness:
    """003's cut-off study: the robustness of one metric at every cut-off of the study (metric names
    ``"nDCG@5"``, ``"nDCG@10"``, ...), under ``scenario`` (003 runs ``"ratings"`` and
    ``"popular-items"``; pass both). ``sizes`` default: 003's grids (:data:`GRIDS_003`) for its
    scenarios, 000's for the others."""
    scenarios = [scenario] if isinstance(scenario, str) else list(scenario)
    if sizes is None:
        sizes = {**DEFAULT_GRIDS, **GRIDS_003}
    return robustness_study(study, scenarios, sizes, n_samples, seed, metrics=[metric], cutoffs=None, **kw)
