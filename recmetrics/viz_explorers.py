"""Altair charts of the explorers: the widgets' inputs as Vega-Lite parameters over precomputed tables.

In the static book no kernel runs, so an ipywidget shows its saved state and clicking changes
nothing. These charts carry the interaction in the spec instead: each input of an explorer is a
Vega-Lite parameter bound to a drop-down, radio buttons or a slider, and the chart filters a table
that :mod:`recmetrics.explorers` precomputed over a grid of those inputs. They work offline (the
report serves a vendored Vega bundle) and inside the book's text column.

* :func:`metric_explorer_chart` — dataset, metric, cut-off and aggregation → the system ranking
  (means with confidence intervals), the p-value curve and the robustness curves
  (:func:`recmetrics.explorers.explorer_table`);
* :func:`sandbox_chart` — chapter 3's diversity sandbox: swap two ranks, set one aspect's weight
  (:func:`recmetrics.explorers.sandbox_grid`);
* :func:`guide_chart` — chapter 4's guideline explorer: answer the six questions
  (:func:`recmetrics.explorers.guide_grid`).

Pure functions (a table in, a chart out); Altair is imported on call. The data are embedded once
per chart (``alt.InlineData``, so tables above Altair's 5,000-row guard are accepted) with short
field names and rounded numbers, to keep the page light; :func:`spec_bytes` measures a chart.
"""
from __future__ import annotations

import functools
import json
import math
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt
    import pandas as pd

from .errors import InputError, require_columns

__all__ = ["metric_explorer_chart", "sandbox_chart", "guide_chart", "spec_bytes", "WIDTH"]

#: the book's text column (pixels): every explorer fits inside it
WIDTH = 560
_VIEW_CODES = {"ranking": "r", "pvalue": "p", "robustness": "b", "summary": "s"}


def _alt():
    import altair as alt

    return alt


def _round(value, digits: int = 5):
    """``value`` rounded to ``digits`` significant digits (None for NaN), for a compact spec."""
    if value is None:
        return None
    v = float(value)
    if not math.isfinite(v):
        return None
    if v == 0:
        return 0.0
    return float(f"{v:.{digits}g}")


def _records(frame: "pd.DataFrame", numeric: Sequence[str] = ()) -> list[dict]:
    """Rows as dicts without null fields, numbers of ``numeric`` rounded (:func:`_round`)."""
    out = []
    num = set(numeric)
    for row in frame.to_dict("records"):
        rec = {}
        for k, v in row.items():
            if k in num:
                v = _round(v)
            elif hasattr(v, "item"):
                v = v.item()
            if v is None or (isinstance(v, float) and not math.isfinite(v)):
                continue
            rec[k] = v
        out.append(rec)
    return out


def _validated_once(build: Callable) -> Callable:
    """Build the chart with Altair's debug mode off. In debug mode Altair validates every schema
    object as it is made, and with it the inline data row by row, again for each object that holds
    them: most of an explorer's cost. The chart is still validated, once and whole, when it is drawn
    or saved (``to_dict``); the spec is the same."""
    @functools.wraps(build)
    def built(*args, **kwargs):
        from altair.utils.schemapi import debug_mode

        with debug_mode(False):
            return build(*args, **kwargs)

    return built


def spec_bytes(chart) -> int:
    """Size in bytes of the chart's Vega-Lite spec as JSON (what the book embeds)."""
    return len(json.dumps(chart.to_dict(), separators=(",", ":")).encode("utf-8"))


def _options(values) -> list:
    return [v.item() if hasattr(v, "item") else v for v in dict.fromkeys(values)]


# ------------------------------------------------------------------------------------------ metric explorer
@_validated_once
def metric_explorer_chart(table: "pd.DataFrame", *, controls: bool = True, start: dict | None = None,
                          alpha: float | None = None, width: int = WIDTH) -> "alt.VConcatChart":
    """The metric explorer as one Vega-Lite chart over :func:`recmetrics.explorers.explorer_table`'s rows.

    Four parameters — ``dataset``, ``metric``, ``cut-off`` (drop-downs) and ``aggregation`` (radio
    buttons) — pick one panel of ``table``; the chart shows, for it, the systems ranked by their
    aggregated score with the confidence interval of each (left), the p-value curve of every system
    pair with the DP and the share of pairs below ``alpha`` (right; ``alpha`` defaults to the one
    the table was computed with) and the mean Kendall τ against the full test set per scenario and
    test size, with the band of ±2 Monte Carlo standard errors (below). ``controls=False`` leaves
    the parameters unbound (the live widget draws its own controls). ``start``: the initial
    selection, e.g. ``{"metric": "nDCG", "cutoff": 10}`` (default: the first of each).
    """
    alt = _alt()
    import pandas as pd

    from .explorers import COLUMNS

    require_columns(table, list(COLUMNS), "explorer table")
    if not len(table):
        raise InputError("the explorer table is empty: nothing to draw")
    t = table[list(COLUMNS)].copy()
    t["cutoff"] = t["cutoff"].astype(int)
    choices = {"dataset": _options(t["dataset"]), "metric": _options(t["metric"]),
               "cutoff": sorted(_options(t["cutoff"])), "aggregation": _options(t["aggregation"])}
    first = {k: v[0] for k, v in choices.items()}
    for key, value in (start or {}).items():
        if key not in choices:
            raise InputError(f"start: unknown explorer input {key!r} (inputs: {list(choices)})")
        if value not in choices[key]:
            raise InputError(f"start: {key} {value!r} is not in the table (has {choices[key]})")
        first[key] = value
    keys = t["dataset"].astype(str) + "|" + t["metric"].astype(str) + "|" + t["cutoff"].astype(str) + "|" \
        + t["aggregation"].astype(str)
    panels = list(dict.fromkeys(keys))
    data = pd.DataFrame({"p": keys.map({k: i for i, k in enumerate(panels)}).astype(int),
                         "v": t["view"].map(_VIEW_CODES), "l": t["label"].astype(str),
                         "x": t["x"], "y": t["value"], "lo": t["lo"], "hi": t["hi"], "se": t["se"]})
    if data["v"].isna().any():
        bad = t.loc[data["v"].isna(), "view"].iloc[0]
        raise InputError(f"explorer table: unknown view {bad!r} (views: {list(_VIEW_CODES)})")
    if alpha is None:
        sig = t[(t["view"] == "summary") & (t["label"] == "significant")]["x"]
        alpha = float(sig.iloc[0]) if len(sig) else 0.05
    inline = alt.InlineData(values=_records(data, ["x", "y", "lo", "hi", "se"]))

    labels = {"dataset": "dataset ", "metric": "metric ", "cutoff": "cut-off ", "aggregation": "mean "}
    params = {}
    for key, opts in choices.items():
        bind = alt.Undefined
        if controls:
            bind = (alt.binding_radio(options=opts, name=labels[key]) if key == "aggregation"
                    else alt.binding_select(options=opts, name=labels[key]))
        params[key] = alt.param(name=f"pick_{key}", value=first[key], bind=bind)
    key_expr = " + '|' + ".join(f"pick_{k}" for k in ("dataset", "metric", "cutoff", "aggregation"))
    panel = f"datum.p == indexof({json.dumps(panels, ensure_ascii=False)}, {key_expr})"

    def part(code: str):
        return alt.Chart().transform_filter(panel).transform_filter(f"datum.v == '{code}'")

    left = max(160, width // 2 - 130)
    right = max(180, width - left - 170)
    rank_base = part("r").encode(y=alt.Y("l:N", title=None, sort=alt.EncodingSortField("y", order="descending"),
                                         axis=alt.Axis(labelLimit=110)))
    tip_rank = [alt.Tooltip("l:N", title="system"), alt.Tooltip("x:Q", title="rank"),
                alt.Tooltip("y:Q", title="score", format=".4f"), alt.Tooltip("lo:Q", title="CI low", format=".4f"),
                alt.Tooltip("hi:Q", title="CI high", format=".4f")]
    ranking = alt.layer(
        rank_base.mark_rule(color="#4c78a8").encode(x=alt.X("lo:Q", title="aggregated score (CI)",
                                                            scale=alt.Scale(zero=False)), x2="hi:Q",
                                                    tooltip=tip_rank),
        rank_base.mark_point(filled=True, size=50, color="#4c78a8").encode(x="y:Q", tooltip=tip_rank),
    ).properties(width=left, height=alt.Step(16), title="System ranking")

    pv = part("p").encode(
        x=alt.X("x:Q", title="system pairs sorted by p-value", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("y:Q", title="p-value", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("l:N", title="pair"), alt.Tooltip("y:Q", title="p", format=".4g"),
                 alt.Tooltip("se:Q", title="Monte Carlo se", format=".2g")])
    rule = alt.Chart().mark_rule(strokeDash=[4, 3], color="gray").encode(y=alt.datum(float(alpha)))
    dp_text = part("s").transform_filter("datum.l == 'DP'").transform_calculate(
        text="'DP = ' + format(datum.y, '.4g') + (isValid(datum.se) && datum.se > 0 ? ' ± ' + "
             "format(datum.se, '.2g') : '') + ' over ' + datum.x + ' pairs'"
    ).mark_text(align="left", baseline="top", dx=4, dy=4, fontSize=11).encode(
        text="text:N", x=alt.value(0), y=alt.value(0))
    sig_text = part("s").transform_filter("datum.l == 'significant'").transform_calculate(
        text="format(datum.y, '.0%') + ' of pairs with p < ' + datum.x"
    ).mark_text(align="left", baseline="top", dx=4, dy=18, fontSize=11).encode(
        text="text:N", x=alt.value(0), y=alt.value(0))
    curve = alt.layer(pv.mark_line(point=True), rule, dp_text, sig_text).properties(
        width=right, height=200, title="p-value curve (discriminative power)")

    rob = part("b")
    x_rob = alt.X("x:Q", title="share of the test set kept (ratings, items or users, by scenario)",
                  scale=alt.Scale(type="log", reverse=True, nice=False), axis=alt.Axis(format="~%"))
    scen = alt.Color("l:N", title="scenario", legend=alt.Legend(orient="right"))
    tip_rob = [alt.Tooltip("l:N", title="scenario"), alt.Tooltip("x:Q", title="kept", format=".0%"),
               alt.Tooltip("y:Q", title="mean τ", format=".3f"), alt.Tooltip("se:Q", title="Monte Carlo se",
                                                                              format=".2g")]
    robustness = alt.layer(
        rob.mark_area(opacity=0.15).encode(x=x_rob, y=alt.Y("lo:Q"), y2="hi:Q", fill=alt.Fill("l:N", legend=None)),
        rob.mark_line(point=True).encode(x=x_rob, y=alt.Y("y:Q", title="mean Kendall τ vs full test set"),
                                         color=scen, tooltip=tip_rob),
    ).properties(width=width - 150, height=200, title="Robustness to incomplete judgments")

    title = alt.Title(text=alt.expr("pick_metric + '@' + pick_cutoff + ' (' + pick_aggregation + ' mean) on ' "
                                    "+ pick_dataset"), anchor="start")
    return alt.vconcat(alt.hconcat(ranking, curve, spacing=20), robustness, data=inline, title=title) \
        .add_params(*params.values()).resolve_scale(color="independent")


# ------------------------------------------------------------------------------------------ sandbox
@_validated_once
def sandbox_chart(values: "pd.DataFrame", rankings: "pd.DataFrame", *, start_aspect: str | None = None,
                  start_weight: float | None = None, width: int = WIDTH) -> "alt.VConcatChart":
    """Chapter 3's diversity sandbox without a kernel, over :func:`recmetrics.explorers.sandbox_grid`.

    Parameters ``swap rank`` / ``with`` (drop-downs; the same rank twice = the ranking as given),
    ``aspect`` (drop-down) and ``weight`` (a slider over the grid's weights) pick a grid point; the
    chart shows the ranking after the swap (swapped ranks highlighted) and every metric's value as
    a bar, with a tick at its value for the ranking as given under the same weights (the widget's
    "before"), and the change in the tooltip. ``start_aspect``/``start_weight``: the initial
    selection (default: the first aspect, at its weight in the scenario when the grid has it —
    ``values.attrs["weights"]``, set by :func:`~recmetrics.explorers.sandbox_grid` — else the
    first grid weight).
    """
    alt = _alt()
    import numpy as np

    require_columns(values, ["a", "b", "aspect", "weight"], "sandbox values")
    require_columns(rankings, ["a", "b", "rank", "item", "aspects", "rating"], "sandbox rankings")
    metrics = [c for c in values.columns if c not in ("a", "b", "aspect", "weight")]
    if not metrics:
        raise InputError("sandbox values have no metric column")
    aspects = _options(values["aspect"])
    weights = sorted(float(w) for w in dict.fromkeys(values["weight"]))
    aspect = aspects[0] if start_aspect is None else start_aspect
    if aspect not in aspects:
        raise InputError(f"start_aspect {aspect!r} is not in the grid (aspects: {aspects})")
    given = values.attrs.get("weights", {}).get(aspect)
    if start_weight is None:
        start_weight = given if given is not None and any(abs(given - w) < 1e-9 for w in weights) else weights[0]
    weight = float(start_weight)
    if not any(abs(weight - w) < 1e-9 for w in weights):
        raise InputError(f"start_weight {weight!r} is not a weight of the grid ({weights})")
    step = float(np.min(np.diff(weights))) if len(weights) > 1 else 1.0
    n = int(rankings["rank"].max())
    ranks = list(range(1, n + 1))
    p_a = alt.param(name="swap_a", value=1, bind=alt.binding_select(options=ranks, name="swap rank "))
    p_b = alt.param(name="swap_b", value=1, bind=alt.binding_select(options=ranks, name="with rank "))
    p_asp = alt.param(name="aspect", value=aspect, bind=alt.binding_select(options=aspects, name="interest in "))
    p_w = alt.param(name="weight", value=weight,
                    bind=alt.binding_range(min=weights[0], max=weights[-1], step=step, name="weight w(u, a) "))
    swap = ("(swap_a == swap_b ? datum.a == 0 : "
            "(datum.a == min(swap_a, swap_b) && datum.b == max(swap_a, swap_b)))")
    point = "datum.aspect == aspect && abs(datum.weight - weight) < 1e-9"

    rk = rankings.assign(text=[f"{r}. {i}   [{a}]   rating: {g}" for r, i, a, g in
                               zip(rankings["rank"], rankings["item"], rankings["aspects"], rankings["rating"])])
    rank_data = alt.InlineData(values=_records(rk[["a", "b", "rank", "text"]]))
    ranking = alt.Chart(rank_data).transform_filter(swap).transform_calculate(
        moved="swap_a != swap_b && (datum.rank == swap_a || datum.rank == swap_b)"
    ).mark_text(align="left", fontSize=12).encode(
        y=alt.Y("rank:O", axis=None), x=alt.value(4), text="text:N",
        color=alt.condition("datum.moved", alt.value("#e45756"), alt.value("black")),
    ).properties(width=width - 40, height=alt.Step(18), title="Ranking (after the swap)")

    vals = alt.InlineData(values=_records(values[["a", "b", "aspect", "weight"] + metrics], metrics))
    base = alt.Chart(vals).transform_filter(point).transform_fold(metrics, as_=["metric", "value"]) \
        .transform_calculate(before="datum.a == 0 ? datum.value : null") \
        .transform_joinaggregate(before="max(before)", groupby=["metric"]) \
        .transform_filter(swap).transform_calculate(change="datum.value - datum.before")
    y = alt.Y("metric:N", sort=metrics, title=None)
    tip = [alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".4f"),
           alt.Tooltip("before:Q", title="as given", format=".4f"), alt.Tooltip("change:Q", format="+.4f")]
    bars = base.mark_bar(color="#4c78a8").encode(y=y, x=alt.X("value:Q", title="metric value",
                                                              scale=alt.Scale(domain=[0, 1])), tooltip=tip)
    ticks = base.mark_tick(color="black", thickness=2).encode(y=y, x="before:Q", tooltip=tip)
    metrics_view = alt.layer(bars, ticks).properties(
        width=width - 150, height=alt.Step(16), title="Metrics (bar: after the swap; tick: as given)")
    return alt.vconcat(ranking, metrics_view).add_params(p_a, p_b, p_asp, p_w)


# ------------------------------------------------------------------------------------------ guide
@_validated_once
def guide_chart(grid: "pd.DataFrame", *, start: dict | None = None, width: int = WIDTH) -> "alt.Chart":
    """Chapter 4's guideline explorer without a kernel, over :func:`recmetrics.explorers.guide_grid`:
    one radio-button parameter per question of :data:`recmetrics.meta.guidelines.QUESTIONS` (named
    by its text), and the advice of the chosen answers as text. ``start``: initial answers (default
    :data:`~recmetrics.meta.guidelines.DEFAULT_ANSWERS`, the widget's)."""
    alt = _alt()
    from .meta import guidelines as gl

    keys = [q.key for q in gl.QUESTIONS]
    require_columns(grid, keys + ["line", "kind", "text"], "guide grid")
    answers = gl.normalise_answers(start)
    params = [alt.param(name=f"q_{q.key}", value=answers[q.key],
                        bind=alt.binding_radio(options=list(q.options), name=f"{q.text} "))
              for q in gl.QUESTIONS]
    chosen = " && ".join(f"datum.{k} == q_{k}" for k in keys)
    n_lines = int(grid.groupby(keys)["line"].max().max()) + 1
    data = alt.InlineData(values=_records(grid[keys + ["line", "kind", "text"]]))
    base = alt.Chart().transform_filter(chosen).encode(
        y=alt.Y("line:O", axis=None, scale=alt.Scale(domain=list(range(n_lines)))), x=alt.value(0))
    heads = base.transform_filter("datum.kind != 'text'").mark_text(
        align="left", baseline="middle", fontWeight="bold").encode(
        text="text:N", size=alt.condition("datum.kind == 'heading'", alt.value(13), alt.value(11)))
    body = base.transform_filter("datum.kind == 'text'").mark_text(
        align="left", baseline="middle", fontSize=11, dx=12).encode(text="text:N")
    return alt.layer(heads, body, data=data).properties(width=width - 20, height=alt.Step(15)) \
        .add_params(*params).configure_view(stroke=None)
