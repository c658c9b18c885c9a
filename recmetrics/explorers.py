"""The data behind the explorers: long tables a chart (or a widget) only filters.

Three explorers have a static counterpart in the book, where no kernel runs: their inputs become
Vega-Lite parameters bound to drop-downs, radio buttons and sliders, and the chart filters a table
precomputed here over a small grid of those inputs (:mod:`recmetrics.viz_explorers` draws them).

* :func:`explorer_table` — the **metric explorer**: for every metric, cut-off and aggregation of a
  :class:`~recmetrics.study.Study`, the system ranking (means with confidence intervals), the
  p-value curve of discriminative power (:func:`recmetrics.meta.discriminative_power`) and the
  robustness curves (:func:`recmetrics.meta.robustness.robustness_study`: τ against the full test
  set per scenario and test size). :func:`save_table` / :func:`load_tables` keep one table per
  dataset beside the report's other results, so the book's explorer offers every dataset the
  build has results for.
* :func:`sandbox_grid` — chapter 3's diversity sandbox (:mod:`recmetrics.widgets.sandbox`): every
  metric of the default scenario for every swap of two ranks and every weight of one aspect.
* :func:`guide_grid` — chapter 4's guideline explorer (:mod:`recmetrics.widgets.guide`): the advice
  of :mod:`recmetrics.meta.guidelines` for every combination of answers, as lines of text.

Every number comes from the library functions named above; this module only arranges them.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import textwrap
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from . import checks
from .errors import InputError, unknown_name
from .meta.sample_stopping import check_rule, truncate_samples

__all__ = ["AGGREGATIONS", "VIEWS", "COLUMNS", "explorer_table", "join_tables", "save_table", "load_tables", "leaders",
           "sandbox_grid", "guide_grid", "ranking_rows", "pvalue_rows"]

#: the aggregations the metric explorer offers: the mean the ranking, the tests and the robustness use
AGGREGATIONS = ("arithmetic", "geometric")
#: the parts of the metric explorer's table (column ``view``)
VIEWS = ("ranking", "pvalue", "robustness", "summary")
#: the columns of :func:`explorer_table`
COLUMNS = ("dataset", "metric", "cutoff", "aggregation", "view", "label", "x", "value", "lo", "hi", "se")


def _aggregations(aggregations) -> list[str]:
    from .metrics.aggregate import method_name

    names = [aggregations] if isinstance(aggregations, str) else list(aggregations)
    if not names:
        raise InputError(f"give at least one aggregation of {AGGREGATIONS}")
    out = []
    for a in names:
        m = method_name(a)
        if m not in AGGREGATIONS:
            raise unknown_name("explorer aggregation", str(a), AGGREGATIONS)
        if m not in out:
            out.append(m)
    return out


def _transform(values: np.ndarray, aggregation: str, floor: float) -> np.ndarray:
    """The scale the aggregation averages on: the values (arithmetic) or log max(x, floor) (geometric)."""
    return values if aggregation == "arithmetic" else np.log(np.maximum(values, floor))


def ranking_rows(scores: pd.DataFrame, aggregation: str = "arithmetic", confidence: float = 0.95,
                 floor: float | None = None) -> pd.DataFrame:
    """One row per system: its aggregated score with a confidence interval, ranked (1 = best).

    The arithmetic mean ``m = mean_u x_u`` has the t interval ``m ± t_{(1+c)/2, n-1} s / sqrt(n)``
    (``s`` the standard deviation over the ``n`` units); the geometric mean ``exp(mean_u log
    max(x_u, floor))`` has the same interval taken on the log scale and exponentiated, so it is not
    symmetric. ``floor`` defaults to trec_eval's ``MIN_GEO_MEAN`` (1e-5), the floor of
    :func:`recmetrics.metrics.aggregate.aggregate`. The units are treated as independent (with
    ``Study.scores(pool="concat")`` a user tested in several folds counts once per fold).
    ``se`` is the standard error on the scale the mean is taken (log scale for the geometric mean).
    Ties share the best rank.

    >>> import pandas as pd
    >>> s = pd.DataFrame([[0.1, 0.3, 0.2], [0.4, 0.5, 0.6]], index=["A", "B"])
    >>> ranking_rows(s)[["label", "x", "value"]].round(3).values.tolist()
    [['B', 1, 0.5], ['A', 2, 0.2]]
    """
    from scipy import special   # stdtrit(df, q): scipy.stats' t.ppf(q, df), without importing scipy.stats

    from .metrics.aggregate import MIN_GEO_MEAN, method_name

    aggregation = method_name(aggregation)
    if aggregation not in AGGREGATIONS:
        raise unknown_name("explorer aggregation", aggregation, AGGREGATIONS)
    if not 0 < float(confidence) < 1:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    floor = MIN_GEO_MEAN if floor is None else float(floor)
    if not floor > 0:
        raise InputError(f"floor must be positive (the logarithm of 0 is -inf), got {floor!r}")
    frame, x = checks.score_table(scores, "scores", min_systems=1)
    if aggregation == "geometric" and (x < 0).any():
        r, c = np.argwhere(x < 0)[0]
        raise InputError(f"the geometric mean needs non-negative values: system {frame.index[r]!r}, unit "
                         f"{frame.columns[c]!r} has {x[r, c]:g}; use the metric's unit=true variant")
    t = _transform(x, aggregation, floor)
    n = t.shape[1]
    mean = t.mean(axis=1)
    se = t.std(axis=1, ddof=1) / math.sqrt(n) if n > 1 else np.full(len(t), np.nan)
    half = special.stdtrit(n - 1, (1 + float(confidence)) / 2) * se if n > 1 else np.full(len(t), np.nan)
    back = (lambda v: v) if aggregation == "arithmetic" else np.exp
    value, lo, hi = back(mean), back(mean - half), back(mean + half)
    rank = pd.Series(value).rank(ascending=False, method="min").astype(int).to_numpy()
    out = pd.DataFrame({"label": [str(s) for s in frame.index], "x": rank, "value": value, "lo": lo, "hi": hi,
                        "se": se})
    return out.sort_values(["x", "label"], kind="stable").reset_index(drop=True)


def pvalue_rows(result) -> pd.DataFrame:
    """One row per system pair of a :class:`~recmetrics.meta.discriminative.DiscriminativePower`: the
    p-value curve (``x`` = position of the pair when sorted by increasing p, ``value`` = p) with the
    Monte Carlo standard error ``sqrt(p (1 - p) / B)`` of each p (0 when enumerated exactly)."""
    pv = result.pvalues
    p = pv["p"].to_numpy(dtype=np.float64)
    order = np.argsort(p, kind="stable")
    se = np.zeros_like(p) if result.exact else np.sqrt(p * (1 - p) / result.n_permutations)
    return pd.DataFrame({"label": [f"{pv['a'].iloc[i]} – {pv['b'].iloc[i]}" for i in order],
                         "x": np.arange(1, len(p) + 1), "value": p[order], "lo": np.nan, "hi": np.nan,
                         "se": se[order]})


def _robustness_sizes(sizes, scenarios) -> dict[str, tuple[float, ...]]:
    from .meta.robustness import SCENARIOS, _scenario, check_sizes

    if isinstance(sizes, Mapping):
        grid = {_scenario(s): check_sizes(v) for s, v in sizes.items()}
    else:
        names = SCENARIOS if scenarios is None else ([scenarios] if isinstance(scenarios, str) else list(scenarios))
        grid = {_scenario(s): check_sizes(sizes) for s in names}
    if not grid:
        raise InputError("give at least one robustness scenario")
    return grid


def explorer_table(study, metrics: Sequence[str] | None = None, cutoffs: Sequence[int] | int | None = None,
                   aggregations: Sequence[str] = AGGREGATIONS, *, n_permutations: int = 2000,
                   sizes: Sequence[float] | Mapping[str, Sequence[float]] = (1.0, 0.5, 0.2, 0.05),
                   n_samples: int = 5, scenarios: Sequence[str] | None = None, seed: int = 0,
                   pool: str = "concat", confidence: float = 0.95, alpha: float = 0.05,
                   dataset: str | None = None, n_jobs: int = 1, progress: bool = False,
                   known_robustness: Mapping[str, pd.DataFrame] | None = None, target_se: float | None = None,
                   min_samples: int = 20) -> pd.DataFrame:
    """The metric explorer's long table: ranking, p-value curve and robustness of every metric,
    cut-off and aggregation of ``study``.

    One row per drawn element, columns :data:`COLUMNS`; ``view`` says which part it belongs to:

    * ``ranking`` — one row per system (``label``): its aggregated score ``value`` over the pooled
      units with a ``confidence`` interval ``lo``–``hi`` and its rank ``x`` (:func:`ranking_rows`);
    * ``pvalue`` — one row per system pair (``label`` "A – B"): the p-value of the paired
      randomisation test, ``x`` its position in the curve sorted by increasing p, ``se`` its
      Monte Carlo standard error (:func:`pvalue_rows`);
    * ``robustness`` — one row per scenario (``label``) and test size ``x`` (share kept): the mean
      Kendall τ over ``n_samples`` samples between the ranking on the reduced test set and on the
      full one, ``se`` its Monte Carlo standard error (sample std / √samples; NaN for the
      deterministic scenarios, one sample each), ``lo``/``hi`` = value ∓ ``NOISE_SE``·se (clipped to
      τ's range [-1, 1]), the band inside which :func:`recmetrics.meta.findings.order` calls two
      curves tied;
    * ``summary`` — ``DP`` (sum of the p-values, ``se`` = ``dp_se``, ``x`` = number of pairs),
      ``significant`` (share of pairs with p < ``alpha``, ``x`` = alpha) and one
      ``robustness:<scenario>`` row each (mean τ over the sizes below 1, ``se`` = ``area_se``).

    Open choices and defaults
    -------------------------
    * **Aggregation** (``aggregations``, default both): ``arithmetic`` ranks by the mean of the
      per-unit values, ``geometric`` by the geometric mean with trec_eval's floor 1e-5 (GMAP's).
      The robustness study ranks with the same mean. The p-values test the difference of the
      *quantity the ranking uses*: the values themselves for the arithmetic mean, log max(x, 1e-5)
      for the geometric one (the log of a geometric mean is the arithmetic mean of the logs, so
      this is the sign-flip test of the difference in log geometric means). Paper 000 §7 instead
      keeps the arithmetic tests for the geometric metrics ("the averaging function does not affect
      paired difference tests"); its curve is the ``arithmetic`` one.
    * **Pooling** (``pool``, default ``"concat"``): how the ranking and the tests pool folds
      (:meth:`Study.scores <recmetrics.study.Study.scores>`). The robustness study always pools
      ``(fold, user)`` units (its module's rule).
    * **Budget**: ``n_permutations`` sign vectors (paper: 100,000; p-values of pairs no vector
      reaches sit at the floor 1/(B+1)), robustness ``sizes`` (one grid for every scenario of
      ``scenarios`` — default all five — or ``{scenario: sizes}``) and ``n_samples`` samples per
      size (paper: 50). The same ``seed`` gives the same p-values and τ whichever metrics are
      computed together, so a table of one metric equals the matching rows of a larger one; with
      ``target_se`` each point stops sampling early (:mod:`recmetrics.meta.sample_stopping`).
    * ``dataset``: the label of the rows (default ``study.dataset``).
    * ``known_robustness``: ``{aggregation: samples}`` of a robustness study run on this study with
      the same ``seed``, ``n_samples`` and grids (e.g. chapters 6 and 7's, :mod:`recmetrics.report.shared`):
      the cells (metric, cut-off) it holds for every scenario are read from it (cut by ``target_se``),
      not computed again; a sample's seed derives from the seed, scenario and size alone, so the rows
      are those this function computes. A table whose sizes or sample counts differ is an error.

    The settings are kept in ``table.attrs["explorer"]``.

    Examples
    --------
    >>> from recmetrics.data.simulate import simulate
    >>> from recmetrics.study import Study
    >>> st = Study(simulate(40, 60, 600, seed=0), ["Pop", "Random", "ItemKNN"], ["P", "nDCG"], [5, 10], k=2,
    ...            cache=False, progress=False)
    >>> t = explorer_table(st, n_permutations=200, sizes=[1.0, 0.5], n_samples=2, scenarios=["ratings"])
    >>> t.groupby("view").size().to_dict()          # 2 metrics x 2 cut-offs x 2 aggregations = 8 panels
    {'pvalue': 24, 'ranking': 24, 'robustness': 16, 'summary': 24}
    >>> ranking = t.query("view == 'ranking' and aggregation == 'arithmetic'")
    >>> ranking.query("metric == 'nDCG' and cutoff == 10").label.tolist()
    ['Pop', 'ItemKNN', 'Random']
    """
    from .meta.discriminative import discriminative_power
    from .meta.findings import NOISE_SE
    from .meta.robustness import robustness_studies
    from .metrics.aggregate import MIN_GEO_MEAN
    from .study import require_study

    study = require_study(study, "explorer_table")
    aggs = _aggregations(aggregations)
    metrics = list(study.metrics) if metrics is None else ([metrics] if isinstance(metrics, str) else list(metrics))
    cutoffs = list(study.cutoffs) if cutoffs is None else ([cutoffs] if np.ndim(cutoffs) == 0 else list(cutoffs))
    if not metrics or not cutoffs:
        raise InputError("give at least one metric and one cut-off of the study")
    cells = []
    for m in metrics:
        for c in cutoffs:
            mi, ci = study.locate(m, c)                   # validates the metric and the cut-off
            cells.append((study.metrics[mi], study.cutoffs[ci]))
    cells = list(dict.fromkeys(cells))
    n_permutations = checks.positive_int(n_permutations, "n_permutations")
    target_se, min_samples = check_rule(target_se, min_samples)
    n_samples = checks.positive_int(n_samples, "n_samples")
    seed = checks.seed(seed)
    if not 0 < float(alpha) < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    grid = _robustness_sizes(sizes, scenarios)
    label = str(study.dataset if dataset is None else dataset)

    scores = {cell: study.scores(cell[0], cell[1], pool) for cell in cells}
    if "geometric" in aggs:
        for (m, c), s in scores.items():
            low = float(np.nanmin(s.to_numpy())) if s.size else 0.0
            if low < 0:
                raise InputError(f"metric {m}@{c} has negative values (min {low:g}): the geometric mean needs "
                                 "non-negative values; use its unit=true variant or aggregations=('arithmetic',)")
    rows = []

    def add(m, c, agg, view, frame):
        rows.append(frame.assign(dataset=label, metric=m, cutoff=c, aggregation=agg, view=view))

    # ranking with confidence intervals
    for (m, c), s in scores.items():
        for agg in aggs:
            add(m, c, agg, "ranking", ranking_rows(s, agg, confidence, MIN_GEO_MEAN))
    # p-value curves: every metric, cut-off and aggregation from the same sign vectors
    frames = {(m, c, agg): pd.DataFrame(_transform(s.to_numpy(dtype=np.float64), agg, MIN_GEO_MEAN),
                                        index=s.index, columns=s.columns)
              for (m, c), s in scores.items() for agg in aggs}
    dp = discriminative_power({f"{m}@{c}|{agg}": f for (m, c, agg), f in frames.items()},
                              n_permutations=n_permutations, seed=seed, alpha=alpha)
    for (m, c, agg) in frames:
        r = dp[f"{m}@{c}|{agg}"]
        add(m, c, agg, "pvalue", pvalue_rows(r))
        add(m, c, agg, "summary", pd.DataFrame({
            "label": ["DP", "significant"], "x": [float(r.n_pairs), float(alpha)],
            "value": [r.dp, r.share_significant], "lo": np.nan, "hi": np.nan, "se": [r.dp_se, np.nan]}))
    # robustness curves: one study per aggregation (the ranking mean changes the τ) and per grid of sizes
    names = {f"{m}@{c}": (m, c) for m, c in cells}
    by_grid: dict[tuple, list[str]] = {}
    for sc, sz in grid.items():
        by_grid.setdefault(tuple(sz), []).append(sc)
    known = _known_samples(known_robustness, aggs, grid, n_samples, list(names), (target_se, min_samples))
    todo = [(m, c) for m, c in cells if f"{m}@{c}" not in known]
    # every mean from the same reduced test sets, drawn and scored once per grid
    studies = {sz: robustness_studies(study, aggs, scs, list(sz), n_samples, seed,
                                      metrics=list(dict.fromkeys(m for m, _ in todo)),
                                      cutoffs=list(dict.fromkeys(c for _, c in todo)), n_jobs=n_jobs,
                                      progress=progress, target_se=target_se, min_samples=min_samples) if todo else None
               for sz, scs in by_grid.items()}
    for agg in aggs:
        summaries, areas = {}, {}
        for sz, scs in by_grid.items():
            part = _with_known(studies[sz], agg, known, scs)
            summary = part.summary()
            for sc in scs:
                summaries[sc] = summary[summary["scenario"] == sc]
                areas[sc] = (part.area(sc), part.area_se(sc))
        for sc in grid:
            summary, (area, area_se) = summaries[sc], areas[sc]
            for name, (m, c) in names.items():
                s = summary[summary["metric"] == name].sort_values("size", ascending=False)
                se = (s["tau_std"] / np.sqrt(s["samples"])).where(s["samples"] > 1).to_numpy(dtype=np.float64)
                tau = s["tau"].to_numpy(dtype=np.float64)
                band = NOISE_SE * np.nan_to_num(se)
                add(m, c, agg, "robustness", pd.DataFrame({
                    "label": sc, "x": s["size"].to_numpy(dtype=np.float64), "value": tau,
                    "lo": np.clip(tau - band, -1.0, 1.0), "hi": np.clip(tau + band, -1.0, 1.0), "se": se}))
                add(m, c, agg, "summary", pd.DataFrame({
                    "label": [f"robustness:{sc}"], "x": [np.nan], "value": [area.get(name, np.nan)],
                    "lo": np.nan, "hi": np.nan, "se": [area_se.get(name, np.nan)]}))
    table = pd.concat(rows, ignore_index=True)[list(COLUMNS)]
    table["cutoff"] = table["cutoff"].astype(int)
    table["x"] = table["x"].astype(float)
    table.attrs["explorer"] = {
        "dataset": label, "systems": list(map(str, study.systems)), "folds": int(study.n_folds),
        "metrics": list(dict.fromkeys(m for m, _ in cells)), "cutoffs": list(dict.fromkeys(c for _, c in cells)),
        "aggregations": aggs, "n_permutations": n_permutations, "sizes": {k: list(v) for k, v in grid.items()},
        "n_samples": n_samples, "target_se": target_se, "min_samples": min_samples, "seed": seed, "pool": pool, "confidence": float(confidence), "alpha": float(alpha),
        "floor": MIN_GEO_MEAN}
    return table


def join_tables(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """:func:`explorer_table` results for disjoint cells (metric, cut-off) of one study under the same
    settings, as one table: the rows one part after the other, ``attrs["explorer"]`` listing every
    part's metrics and cut-offs. (Chapter 9 computes its other cut-offs first, then the one chapter 7
    may still be computing beside it.) A cell in two parts or another setting is an error."""
    tables = list(tables)
    if not tables:
        raise InputError("join_tables needs at least one explorer table")
    infos = [t.attrs.get("explorer", {}) for t in tables]
    rest = [{k: v for k, v in i.items() if k not in ("metrics", "cutoffs")} for i in infos]
    if any(r != rest[0] for r in rest):
        raise InputError("join_tables: the tables were computed under different settings (or datasets)")
    seen: set = set()
    for t in tables:
        cells = set(zip(t["metric"], t["cutoff"]))
        if seen & cells:
            m, c = sorted(seen & cells)[0]
            raise InputError(f"join_tables: {m}@{c} is in two of the tables")
        seen |= cells
    out = pd.concat(tables, ignore_index=True)
    out.attrs["explorer"] = {**infos[0], **{k: list(dict.fromkeys(v for i in infos for v in i.get(k, [])))
                                            for k in ("metrics", "cutoffs")}}
    return out


def _known_samples(known, aggs, grid, n_samples, names, rule=(None, 20)) -> dict[str, dict[str, pd.DataFrame]]:
    """``{metric name: {aggregation: its sample rows}}`` of ``known`` covering every aggregation and
    scenario of ``grid`` (sizes and sample counts checked), cut by ``rule`` (target_se, min_samples)."""
    if not known:
        return {}
    per_agg = {}
    for agg in aggs:
        table = known.get(agg)
        if table is None:
            return {}
        missing = [c for c in ("scenario", "size", "sample", "metric", "tau", "mean_value") if c not in table]
        if missing:
            raise InputError(f"known_robustness[{agg!r}]: not a robustness samples table (missing {missing})")
        per_agg[agg] = table
    out: dict[str, dict[str, pd.DataFrame]] = {}
    for name in names:
        rows = {}
        for agg, table in per_agg.items():
            mine = table[(table["metric"] == name) & table["scenario"].isin(list(grid))]
            if set(mine["scenario"]) != set(grid):
                break
            for sc, sizes in grid.items():
                got = mine[mine["scenario"] == sc].groupby("size")["sample"].size()
                want = {float(z): (1 if z >= 1.0 else n_samples) for z in sizes}
                if {float(z): int(n) for z, n in got.items()} != want:
                    raise InputError(f"known_robustness[{agg!r}]: {name} under {sc} has samples per size "
                                     f"{dict(got)}, expected {want} (another grid or n_samples)")
            rows[agg] = truncate_samples(mine, *rule, n_samples)[0]
        else:
            out[name] = rows
    return out


def _with_known(computed, agg: str, known: Mapping[str, Mapping[str, pd.DataFrame]], scenarios):
    """The robustness of ``computed[agg]`` (None: nothing computed) with the known metrics' rows added."""
    from .meta.robustness import Robustness

    extra = [rows[agg][rows[agg]["scenario"].isin(list(scenarios))] for rows in known.values()]
    if computed is None:
        return Robustness(pd.concat(extra, ignore_index=True), pd.DataFrame())
    part = computed[agg]
    if not extra:
        return part
    return Robustness(pd.concat([part.samples, *extra], ignore_index=True), part.full, grids=part.grids,
                      tie_break=part.tie_break)


def leaders(table: pd.DataFrame, dataset: str, cutoff: int, aggregation: str) -> dict[str, dict[str, Any]]:
    """Which metrics of one (dataset, cut-off, aggregation) of an :func:`explorer_table` lead and trail.

    For ``"dp"`` (discriminative power, lower is better) and ``"robustness"`` (the mean over the
    scenarios of each scenario's mean τ below full size, higher is better; its standard error
    ``sqrt(Σ se²) / n_scenarios``, the deterministic scenarios counting as exact): ``values``,
    ``se`` (Series by metric), ``best`` and ``worst`` — every metric tied with the best (worst) one
    under the verdict rule :func:`recmetrics.meta.findings.order` (within ``NOISE_SE`` standard
    errors of the difference), so a tie is never reported as a winner.

    >>> import pandas as pd
    >>> rows = [("summary", "DP", m, v, se) for m, v, se in [("P", 0.5, 0.01), ("AP", 0.1, 0.01), ("RR", 0.11, 0.01)]]
    >>> t = pd.DataFrame([dict(dataset="d", metric=m, cutoff=10, aggregation="arithmetic", view=v, label=l, x=0.0,
    ...                        value=x, lo=None, hi=None, se=e) for v, l, m, x, e in rows])
    >>> leaders(t, "d", 10, "arithmetic")["dp"]["best"]          # AP and RR within the noise
    ['AP', 'RR']
    """
    from .meta.findings import order

    panel = table[(table["dataset"] == dataset) & (table["cutoff"].astype(int) == int(cutoff))
                  & (table["aggregation"] == aggregation) & (table["view"] == "summary")]
    if not len(panel):
        raise InputError(f"no summary rows for {dataset!r} at cut-off {cutoff} ({aggregation}) in the explorer table")
    out: dict[str, dict[str, Any]] = {}
    dp = panel[panel["label"] == "DP"].set_index("metric")
    rob = panel[panel["label"].str.startswith("robustness:")]
    parts = {"dp": (dp["value"].astype(float), dp["se"].astype(float).fillna(0.0), False)}
    if len(rob):
        g = rob.groupby("metric", sort=False)
        se = g["se"].apply(lambda x: float(np.sqrt(np.nansum(np.square(x.astype(float)))) / len(x)))
        parts["robustness"] = (g["value"].mean(), se, True)
    for key, (values, se, higher) in parts.items():
        values = values.dropna()
        if not len(values):
            continue
        se = se.reindex(values.index).fillna(0.0)
        top = values.idxmax() if higher else values.idxmin()
        bottom = values.idxmin() if higher else values.idxmax()
        best = [m for m in values.index if order(values[m], values[top], se[m], se[top]) == 0]
        worst = [m for m in values.index if order(values[m], values[bottom], se[m], se[bottom]) == 0]
        out[key] = {"values": values, "se": se, "best": best, "worst": worst}
    return out


# ---------------------------------------------------------------------------------------------- files
def _default_dir() -> Path:
    from .cache import results_dir

    return results_dir()


def _file_stem(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(text))


def save_table(table: pd.DataFrame, *, profile: str | None = None, directory: str | os.PathLike | None = None) -> Path:
    """Save an :func:`explorer_table` as ``explorer-<dataset>.json`` in ``directory`` (default: the
    report's results folder, :func:`recmetrics.cache.results_dir`), with its settings,
    the report ``profile`` and the package version, so that :func:`load_tables` can gather the
    tables of every dataset a build computed. One file per dataset (saving again replaces it)."""
    from . import __version__

    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"not an explorer table: column(s) {missing} missing (expected {list(COLUMNS)})")
    datasets = table["dataset"].unique().tolist()
    if len(datasets) != 1:
        raise InputError(f"save one dataset's table at a time, got datasets {datasets}")
    meta = {**table.attrs.get("explorer", {}), "dataset": str(datasets[0]), "profile": profile, "version": __version__,
            "computed": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    records = table[list(COLUMNS)].astype(object).where(table[list(COLUMNS)].notna(), None).to_dict("records")
    path = Path(directory) if directory is not None else _default_dir()
    path.mkdir(parents=True, exist_ok=True)
    out = path / f"explorer-{_file_stem(datasets[0])}.json"
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "rows": records}, default=float), encoding="utf-8")
    os.replace(tmp, out)
    return out


def load_tables(*, profile: str | None = None, directory: str | os.PathLike | None = None,
                same_version: bool = True) -> pd.DataFrame:
    """Every table :func:`save_table` left in ``directory``, concatenated (``attrs["explorer"]``:
    ``{dataset: settings}``). Only tables saved under ``profile`` (when given) and, with
    ``same_version``, by this package version are read: a book never mixes budgets or versions.
    Empty (with the :data:`COLUMNS`) when there is none."""
    from . import __version__

    path = Path(directory) if directory is not None else _default_dir()
    parts, meta = [], {}
    for file in sorted(path.glob("explorer-*.json")) if path.is_dir() else []:
        data = json.loads(file.read_text(encoding="utf-8"))
        info = data.get("meta", {})
        if profile is not None and info.get("profile") != profile:
            continue
        if same_version and info.get("version") != __version__:
            continue
        frame = pd.DataFrame(data.get("rows", []), columns=list(COLUMNS))
        meta[str(info.get("dataset", file.stem))] = info
        parts.append(frame)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(COLUMNS))
    for col in ("x", "value", "lo", "hi", "se"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    if len(out):
        out["cutoff"] = out["cutoff"].astype(int)
    out.attrs["explorer"] = meta
    return out


# ---------------------------------------------------------------------------------------------- sandbox
def sandbox_grid(state=None, metrics: Sequence[str] | None = None,
                 weights: Sequence[float] = tuple(np.round(np.linspace(0, 1, 11), 2)),
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Chapter 3's diversity sandbox over a grid of its inputs: ``(values, rankings)``.

    Starting from ``state`` (default: the sandbox's scenario,
    :class:`recmetrics.widgets.sandbox.SandboxState`), each grid point swaps two ranks ``a`` and
    ``b`` (1-based, ``a < b``; ``a = b = 0`` is the ranking as given) and sets the user's interest
    in one ``aspect`` to ``weight`` (the other aspects keep their weights; the metrics normalise
    them, Eq. 9). ``values`` has one row per grid point (columns ``a, b, aspect, weight``) and one
    column per metric (:func:`recmetrics.metrics.diversity.score_lists`, exactly what the widget
    shows); ``rankings`` one row per swap and rank: ``a, b, rank, item, aspects, rating``.
    The item tags and ratings stay those of ``state`` (the widget also edits them).

    >>> values, rankings = sandbox_grid(metrics=["a-nDCG@5", "P@5"], weights=[0.0, 1.0])
    >>> values.shape, rankings.shape           # (15 swaps + as given) x 6 aspects x 2 weights
    ((192, 6), (96, 6))
    """
    from .metrics.diversity import score_lists
    from .widgets.sandbox import DEFAULT_METRICS, SandboxState

    state = state or SandboxState()
    metrics = list(DEFAULT_METRICS if metrics is None else ([metrics] if isinstance(metrics, str) else metrics))
    if not metrics:
        raise InputError("give at least one metric for the sandbox grid")
    weights = [float(w) for w in np.atleast_1d(np.asarray(weights, dtype=np.float64))]
    bad = [w for w in weights if not (0.0 <= w <= 1.0)]
    if bad or not weights:
        raise InputError(f"aspect weights must be in [0, 1] (the sandbox's sliders), got {bad or weights}")
    items = list(state.items)
    judgments = state.judgments()
    if not judgments:
        raise InputError("the sandbox state has no rated item: every metric would be undefined")
    swaps = [(0, 0)] + [(a, b) for a in range(1, len(items) + 1) for b in range(a + 1, len(items) + 1)]
    lists = []
    for a, b in swaps:
        ranking = list(items)
        if a:
            ranking[a - 1], ranking[b - 1] = ranking[b - 1], ranking[a - 1]
        lists.append(ranking)
    aspects = sorted({x for t in state.aspects.values() for x in t} | set(state.weights))
    parts = []
    for aspect in aspects:
        for w in weights:
            profile = {**state.weights, aspect: w}
            frame = score_lists(lists, judgments, state.aspects, metrics, profile=profile)
            frame = frame.reset_index(drop=True)
            frame.insert(0, "weight", w)
            frame.insert(0, "aspect", aspect)
            frame.insert(0, "b", [b for _, b in swaps])
            frame.insert(0, "a", [a for a, _ in swaps])
            parts.append(frame)
    values = pd.concat(parts, ignore_index=True)
    values.attrs["weights"] = {str(k): float(v) for k, v in state.weights.items()}
    ranks = []
    for (a, b), ranking in zip(swaps, lists):
        for pos, item in enumerate(ranking, start=1):
            r = state.ratings.get(item)
            ranks.append({"a": a, "b": b, "rank": pos, "item": str(item),
                          "aspects": ", ".join(state.aspects.get(item, ())),
                          "rating": "unrated" if r is None else f"{float(r):g}"})
    return values, pd.DataFrame(ranks)


# ---------------------------------------------------------------------------------------------- guide
def guide_grid(k: int = 10, width: int = 88) -> pd.DataFrame:
    """Chapter 4's guideline explorer over every combination of answers: one row per line of advice.

    For each combination of answers to :data:`recmetrics.meta.guidelines.QUESTIONS` (one column per
    question key), the lines the widget shows (:func:`recmetrics.widgets.guide.render` without the
    measured properties): the recommended families with their metrics at list length ``k`` and
    reasons, then the cautions — wrapped at ``width`` characters. Columns: the question keys,
    ``line`` (0-based, in reading order), ``kind`` (``heading``, ``family``, ``text``) and ``text``.

    >>> g = guide_grid()
    >>> len(g.drop_duplicates(["rated_unrated", "scale", "interest", "limited_list", "ordered", "decay"]))
    96
    """
    import itertools

    from .meta import guidelines as gl

    k = checks.positive_int(k, "k")
    width = checks.positive_int(width, "width")
    keys = [q.key for q in gl.QUESTIONS]
    rows = []
    for combo in itertools.product(*(q.options for q in gl.QUESTIONS)):
        answers = dict(zip(keys, combo))
        lines: list[tuple[str, str]] = [("heading", "Recommended metric families")]
        for rec in gl.recommend_metrics(answers):
            fam = gl.FAMILIES[rec.family]
            agg = "" if fam.aggregation == "arithmetic" else f" (also with the {fam.aggregation} mean over users)"
            title = f"{fam.title} — {', '.join(gl.family_metrics(rec.family, k))}{agg}"
            lines += [("family", t) for t in textwrap.wrap(title, width)]
            lines += [("text", t) for t in textwrap.wrap(rec.reason, width)]
        warn = gl.cautions(answers)
        if warn:
            lines.append(("heading", "Be careful with"))
            for c in warn:
                lines += [("family", t) for t in textwrap.wrap(c.family, width)]
                lines += [("text", t) for t in textwrap.wrap(c.reason, width)]
        for i, (kind, text) in enumerate(lines):
            rows.append({**answers, "line": i, "kind": kind, "text": text})
    return pd.DataFrame(rows)
