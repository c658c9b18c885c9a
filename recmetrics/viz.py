"""Altair chart builders for the notebooks and the book.

Every function here is a pure function: a pandas object goes in, an Altair chart (``alt.Chart``,
or a layered/faceted top-level chart) comes out.
No analysis logic lives here (no metric, no statistics beyond ranking rows for display); the
numbers are computed by the library and handed over as tidy DataFrames/Series.

The charts are plain Vega-Lite specs with interactivity expressed in the spec itself
(tooltips, hover/legend selections, a bound drop-down), so they keep working in the static
book, where ``recmetrics.report`` serves a vendored Vega bundle and no kernel is running.

Altair is imported lazily so that ``import recmetrics`` stays cheap.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

# the text tables live below recmetrics.meta (its verdict tables use them); re-exported here
from .markdown import markdown_cell, markdown_table  # noqa: F401

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt
    import pandas as pd

__all__ = ["bar_distribution", "long_tail", "metric_lines", "tau_heatmap", "pvalue_curves", "markdown_table",
           "markdown_cell"]

#: default width of a chart that spans the book's text column (pixels)
WIDTH = 560
#: default height of a chart
HEIGHT = 260


def _alt():
    import altair as alt

    return alt


def _require_columns(df: "pd.DataFrame", columns: Sequence[str], func: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{func}: column(s) {missing} not found in the DataFrame; it has {list(df.columns)}"
        )


def bar_distribution(
    df: "pd.DataFrame",
    x: str,
    y: str,
    *,
    title: str | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    share: bool = True,
    color: str = "#4c78a8",
    width: int = WIDTH,
    height: int = HEIGHT,
) -> "alt.Chart":
    """Bar chart of a (discrete) distribution, e.g. how many ratings have each value.

    ``df`` has one row per bar: ``x`` holds the category (shown in the order of ``df``) and
    ``y`` its count. The tooltip shows the category, the count and, when ``share`` is true,
    the share of the total (computed by Vega-Lite as a window transform, not here).
    Hovering highlights the bar under the pointer.
    """
    alt = _alt()
    _require_columns(df, [x, y], "bar_distribution")
    data = df[[x, y]].reset_index(drop=True)
    order = [str(v) for v in data[x].tolist()]
    data = data.assign(**{x: data[x].astype(str)})
    hover = alt.selection_point(name="hover", on="pointerover", clear="pointerout", fields=[x])
    tooltip = [alt.Tooltip(f"{x}:N", title=x_title or x), alt.Tooltip(f"{y}:Q", title=y_title or y, format=",")]
    chart = alt.Chart(data, title=title or alt.Undefined, width=width, height=height)
    if share:
        chart = chart.transform_joinaggregate(_total=f"sum({y})").transform_calculate(
            _share=f"datum['{y}'] / datum._total"
        )
        tooltip.append(alt.Tooltip("_share:Q", title="share", format=".1%"))
    return (
        chart.mark_bar(color=color)
        .encode(
            x=alt.X(f"{x}:N", sort=order, title=x_title or x, axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{y}:Q", title=y_title or y),
            opacity=alt.condition(hover, alt.value(1.0), alt.value(0.75)),
            tooltip=tooltip,
        )
        .add_params(hover)
    )


def long_tail(
    counts: "pd.Series",
    *,
    title: str | None = None,
    item_title: str = "item",
    count_title: str = "ratings",
    head_share: float = 0.2,
    log_y: bool = False,
    max_points: int | None = 1200,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> "alt.LayerChart":
    """Item popularity curve ("long tail"): items ranked by popularity against their count.

    ``counts`` maps item id -> number of interactions. Items are drawn in decreasing order of
    popularity; the first ``head_share`` of the items (the short head) are coloured apart from
    the tail. The tooltip shows the item, its rank, its count and the cumulative share of all
    interactions up to that rank (the point nearest the pointer is highlighted). With more than
    ``max_points`` items the curve is drawn through every head rank and evenly spaced tail
    ranks (the values shown stay exact), which keeps the embedded data small. Returns a
    layered chart (area + hover points).
    """
    alt = _alt()
    import numpy as np
    import pandas as pd

    if not isinstance(counts, pd.Series):
        raise TypeError(f"long_tail: expected a pandas Series item -> count, got {type(counts).__name__}")
    if not 0.0 <= head_share <= 1.0:
        raise ValueError(f"long_tail: head_share must be in [0, 1], got {head_share!r}")
    s = counts.sort_values(ascending=False, kind="mergesort")
    n = len(s)
    values = s.to_numpy(dtype=float)
    total = values.sum() if n else 1.0
    data = pd.DataFrame(
        {
            "item": s.index.astype(str),
            "rank": np.arange(1, n + 1),
            "count": values,
            "cumulative_share": np.cumsum(values) / (total or 1.0),
            "part": np.where(np.arange(n) < int(np.ceil(head_share * n)), "short head", "long tail"),
        }
    )
    if max_points and n > max_points:
        # keep the page light: every rank of the head, then evenly spaced ranks (and the last);
        # counts and cumulative shares shown are exact at the ranks kept
        head = min(n, max_points // 4)
        keep = np.unique(np.concatenate([
            np.arange(head), np.linspace(head, n - 1, max_points - head).round().astype(int)
        ]))
        data = data.iloc[keep]
    y_scale = alt.Scale(type="symlog") if log_y else alt.Scale()
    hover = alt.selection_point(name="nearest", on="pointerover", nearest=True, fields=["rank"], empty=False)
    base = alt.Chart(data, title=title or alt.Undefined, width=width, height=height)
    area = base.mark_area(opacity=0.75, interpolate="step-after").encode(
        x=alt.X("rank:Q", title=f"{item_title} rank (by popularity)", scale=alt.Scale(domain=[1, max(n, 1)])),
        y=alt.Y("count:Q", title=count_title, scale=y_scale),
        color=alt.Color(
            "part:N",
            title=None,
            scale=alt.Scale(domain=["short head", "long tail"], range=["#e45756", "#4c78a8"]),
        ),
    )
    points = base.mark_point(filled=True, size=40, color="black").encode(
        x="rank:Q",
        y=alt.Y("count:Q", scale=y_scale),
        opacity=alt.condition(hover, alt.value(1.0), alt.value(0.0)),
        tooltip=[
            alt.Tooltip("item:N", title=item_title),
            alt.Tooltip("rank:Q", format=","),
            alt.Tooltip("count:Q", title=count_title, format=","),
            alt.Tooltip("cumulative_share:Q", title="cumulative share", format=".1%"),
        ],
    ).add_params(hover)
    return alt.layer(area, points)


def metric_lines(
    df_long: "pd.DataFrame",
    *,
    x: str = "cutoff",
    y: str = "value",
    color: str = "system",
    metric: str | None = "metric",
    title: str | None = None,
    x_title: str = "cut-off k",
    y_title: str = "mean over users",
    select_metric: bool = True,
    log_x: bool = True,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> "alt.Chart | alt.FacetChart":
    """Lines of metric values against the cut-off, one line per system.

    ``df_long`` is tidy: one row per (``metric``, ``color``, ``x``) with the value in ``y``.
    With ``select_metric`` (and a ``metric`` column) a drop-down bound to a Vega-Lite parameter
    picks the metric shown (this works in the static book: it is part of the spec); otherwise
    the chart is faceted by metric. Clicking a legend entry highlights that system; the tooltip
    gives the exact values.
    """
    alt = _alt()
    cols = [x, y, color] + ([metric] if metric else [])
    _require_columns(df_long, cols, "metric_lines")
    data = df_long[cols].reset_index(drop=True)
    systems = alt.selection_point(name="system_pick", fields=[color], bind="legend")
    ticks = sorted(set(data[x].tolist()))
    domain = [ticks[0], ticks[-1]] if len(ticks) > 1 else alt.Undefined
    log_x = log_x and bool(ticks) and ticks[0] > 0  # a log axis cannot show k <= 0
    enc = dict(
        x=alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(values=ticks),
                scale=alt.Scale(type="log", domain=domain, nice=False) if log_x
                else alt.Scale(domain=domain, nice=False, zero=False)),
        y=alt.Y(f"{y}:Q", title=y_title),
        color=alt.Color(f"{color}:N", title=color),
        opacity=alt.condition(systems, alt.value(1.0), alt.value(0.15)),
        tooltip=[alt.Tooltip(f"{color}:N")]
        + ([alt.Tooltip(f"{metric}:N")] if metric else [])
        + [alt.Tooltip(f"{x}:Q", title=x_title), alt.Tooltip(f"{y}:Q", format=".4f")],
    )
    base = alt.Chart(data, width=width, height=height, title=title or alt.Undefined)
    params = [systems]
    if metric and select_metric:
        options = list(dict.fromkeys(data[metric].tolist()))
        pick = alt.param(
            name="metric_pick",
            value=options[0] if options else None,
            bind=alt.binding_select(options=options, name=f"{metric} "),
        )
        params.append(pick)
        base = base.transform_filter(alt.datum[metric] == pick)
    lines = base.mark_line(point=True).encode(**enc).add_params(*params)
    if metric and not select_metric:
        return lines.properties(width=max(width // 3, 160), height=max(height * 2 // 3, 160)).facet(
            column=alt.Column(f"{metric}:N", title=None)
        ).resolve_scale(y="independent")
    return lines


# --- diversity (notebook 03: Parapar & Radlinski 2021, Figs. 1-4)
__all__ += ["swap_decay", "tau_bars", "perturbation_pvalues", "robustness_lines"]


def swap_decay(level_means: "pd.DataFrame", *, title: str | None = None, width: int = WIDTH,
               height: int = HEIGHT) -> "alt.Chart":
    """Fig. 1: mean metric value against the number of bottom-to-top swaps, one line per ``beta``.

    ``level_means``: columns ``level, mean, beta`` (from ``perturbations.level_means``).
    """
    alt = _alt()
    _require_columns(level_means, ["level", "mean", "beta"], "swap_decay")
    return alt.Chart(level_means[["level", "mean", "beta"]]).mark_line(point=True).encode(
        x=alt.X("level:Q", title="bottom-to-top swaps"),
        y=alt.Y("mean:Q", title="mean αβ-nDCG@10", scale=alt.Scale(zero=False)),
        color=alt.Color("beta:N", title="β"),
        tooltip=["beta", "level", alt.Tooltip("mean:Q", format=".4f")],
    ).properties(width=width, height=height, title=title or alt.Undefined)


def tau_bars(tau: "pd.DataFrame", *, by: str = "tie_break", families: Sequence[str] | None = None,
             title: str | None = None, width: int = WIDTH) -> "alt.FacetChart":
    """Fig. 2: Kendall's τ of each metric with the true order, one panel per family, one bar per
    value of ``by`` (e.g. the ideal ordering's tie-break). ``tau``: columns ``family, metric, tau, by``."""
    alt = _alt()
    _require_columns(tau, ["family", "metric", "tau", by], "tau_bars")
    data = tau[["family", "metric", "tau", by]].dropna(subset=["tau"])
    n = len(families) if families else max(data.family.nunique(), 1)
    panel = max((width - 220) // n, 90)
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("tau:Q", title="Kendall's τ", scale=alt.Scale(domain=[-1, 1])),
        y=alt.Y("metric:N", title=None),
        yOffset=alt.YOffset(f"{by}:N"),
        color=alt.Color(f"{by}:N", title=by.replace("_", " "), legend=alt.Legend(orient="bottom")),
        tooltip=["family", "metric", by, alt.Tooltip("tau:Q", format=".3f")],
    ).properties(width=panel, height=260).facet(
        column=alt.Column("family:N", title=None, sort=list(families) if families else alt.Undefined)
    ).properties(title=title or alt.Undefined)


def perturbation_pvalues(pvalues: "pd.DataFrame", *, row: str = "tie_break", families: Sequence[str] | None = None,
                  floor: float = 1e-12, title: str | None = None, width: int = WIDTH) -> "alt.FacetChart":
    """Fig. 3: p-value (log scale, floored at ``floor`` for display) of the ideal against each
    level, one line per metric; panels: family (columns) x ``row``.
    ``pvalues``: columns ``family, metric, level, pvalue, row``."""
    alt = _alt()
    _require_columns(pvalues, ["family", "metric", "level", "pvalue", row], "perturbation_pvalues")
    data = pvalues[["family", "metric", "level", "pvalue", row]].copy()
    data["p (floored)"] = data.pvalue.clip(lower=floor)
    n = len(families) if families else max(data.family.nunique(), 1)
    panel = max((width - 60) // n - 20, 90)
    return alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=10)).encode(
        x=alt.X("level:Q", title="perturbation level"),
        y=alt.Y("p (floored):Q", scale=alt.Scale(type="log"), title="p-value (log)"),
        color=alt.Color("metric:N", legend=alt.Legend(orient="bottom", columns=3, labelLimit=220)),
        tooltip=["family", "metric", row, "level", alt.Tooltip("pvalue:Q", format=".2e")],
    ).properties(width=panel, height=170).facet(
        column=alt.Column("family:N", title=None, sort=list(families) if families else alt.Undefined),
        row=alt.Row(f"{row}:N", title=row.replace("_", " ")),
    ).properties(title=title or alt.Undefined)


def robustness_lines(summary: "pd.DataFrame", *, title: str | None = None, width: int = WIDTH) -> "alt.FacetChart":
    """Fig. 4: mean τ (full vs reduced test set) against the share removed, one line per β, one
    panel per cut-off. ``summary``: columns ``cutoff, beta, fraction, tau, sd``."""
    alt = _alt()
    _require_columns(summary, ["cutoff", "beta", "fraction", "tau", "sd"], "robustness_lines")
    n = max(summary.cutoff.nunique(), 1)
    return alt.Chart(summary[["cutoff", "beta", "fraction", "tau", "sd"]]).mark_line(point=True).encode(
        x=alt.X("fraction:Q", title="share of test ratings removed"),
        y=alt.Y("tau:Q", title="mean Kendall's τ with the full test set"),
        color=alt.Color("beta:N", title="β"),
        tooltip=["cutoff", "beta", "fraction", alt.Tooltip("tau:Q", format=".3f"), alt.Tooltip("sd:Q", format=".3f")],
    ).properties(width=max((width - 80) // n - 20, 120), height=220).facet(
        column=alt.Column("cutoff:O", title="αβ-nDCG@k")
    ).properties(title=title or alt.Undefined)

# --- protocols
def design_bars(df: "pd.DataFrame", *, x: str = "system", y: str = "value", column: str = "design",
                expected: str | None = "random_expected", title: str | None = None,
                width: int = 160, height: int = 150, columns: int = 3) -> "alt.FacetChart":
    """Bars of one metric per system, one panel per evaluation design (paper 004 Fig. 4.7), with the
    analytic random expectation of each design as a dashed rule when ``expected`` is a column.
    The panels wrap after ``columns`` so that the chart fits the book's column unscaled."""
    alt = _alt()
    cols = [x, y, column] + ([expected] if expected else [])
    _require_columns(df, cols, "design_bars")
    data = df[cols].reset_index(drop=True)
    base = alt.Chart(data, width=width, height=height)
    bars = base.mark_bar().encode(
        x=alt.X(f"{x}:N", title=None, sort=None), y=alt.Y(f"{y}:Q", title="value"),
        color=alt.Color(f"{x}:N", legend=None),
        tooltip=[alt.Tooltip(f"{x}:N"), alt.Tooltip(f"{column}:N"), alt.Tooltip(f"{y}:Q", format=".4f")])
    layer = bars
    if expected:
        layer = bars + base.mark_rule(strokeDash=[4, 3], color="black").encode(
            y=alt.Y(f"mean({expected}):Q"), tooltip=[alt.Tooltip(f"mean({expected}):Q", title="random expected",
                                                            format=".4f")])
    return layer.facet(facet=alt.Facet(f"{column}:N", title=None, sort=None), columns=columns,
                       title=title or alt.Undefined).resolve_scale(y="independent")


def bound_band(df: "pd.DataFrame", *, x: str = "x", x_title: str = "x", title: str | None = None,
               width: int = 240, height: int = 200, columns: int = 2) -> "alt.FacetChart":
    """1R precision (``series == "1R"``) inside the band of its Eq. 4.2 bounds (``lower``/``upper``),
    one panel per system (paper 004 Fig. 4.2), wrapped after ``columns`` panels so that the chart
    fits the book's column unscaled; ``df`` is tidy: ``x, system, series, value``."""
    alt = _alt()
    _require_columns(df, [x, "system", "series", "value"], "bound_band")
    wide = df.pivot_table(index=[x, "system"], columns="series", values="value").reset_index()
    base = alt.Chart(wide, width=width, height=height)
    band = base.mark_area(opacity=0.25).encode(x=alt.X(f"{x}:Q", title=x_title), y=alt.Y("lower:Q", title="P@10"),
                                               y2="upper:Q")
    line = base.mark_line(point=True).encode(
        x=f"{x}:Q", y="1R:Q", tooltip=[alt.Tooltip(f"{x}:Q"), alt.Tooltip("lower:Q", format=".4f"),
                                       alt.Tooltip("1R:Q", format=".4f"), alt.Tooltip("upper:Q", format=".4f")])
    return (band + line).facet(facet=alt.Facet("system:N", title=None), columns=columns, title=title or alt.Undefined)


__all__ += ["design_bars", "bound_band"]


def positive_ratio_line(ratio: "pd.DataFrame", *, title: str | None = None, width: int = WIDTH,
                        height: int = HEIGHT) -> "alt.Chart":
    """Fig. 4.6 of paper 004: the positive share pr(i)/r(i) of an item's ratings against its popularity rank,
    one point per popularity segment. ``ratio``: columns ``segment, rank, ratio, popularity`` (from
    :func:`recmetrics.protocols.chapter.positive_ratio`)."""
    alt = _alt()
    _require_columns(ratio, ["segment", "rank", "ratio", "popularity"], "positive_ratio_line")
    data = ratio[["segment", "rank", "ratio", "popularity"]].reset_index(drop=True)
    return alt.Chart(data, width=width, height=height, title=title or alt.Undefined).mark_line(point=True).encode(
        x=alt.X("rank:Q", title="popularity rank (segment mean)"),
        y=alt.Y("ratio:Q", title="pr(i)/r(i)"),
        tooltip=["segment:Q", alt.Tooltip("rank:Q", format=".0f"), alt.Tooltip("ratio:Q", format=".3f"),
                 alt.Tooltip("popularity:Q", title="r(i) (segment mean)", format=".1f")])


def cumulative_share_lines(curves: "pd.DataFrame", *, color: str = "data", title: str | None = None,
                           y_title: str = "cumulative share of ratings", width: int = 210,
                           height: int = 200) -> "alt.Chart":
    """Fig. 4.4 (left / right) of paper 004: the cumulative share of ratings held by the items up to a
    popularity rank, the rank given as a share of the items so that data sets of any size share the
    axis; one line per ``color`` value. ``curves``: columns ``item_share, cumulative, rank, count`` and
    ``color`` (from :func:`recmetrics.protocols.chapter.popularity_curves`). Two of these side by side
    fit the text column."""
    alt = _alt()
    _require_columns(curves, ["item_share", "cumulative", "rank", "count", color], "cumulative_share_lines")
    data = curves[[color, "rank", "item_share", "count", "cumulative"]].reset_index(drop=True)
    return alt.Chart(data, width=width, height=height, title=title or alt.Undefined).mark_line().encode(
        x=alt.X("item_share:Q", title="items by popularity rank (share of items)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("cumulative:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
        color=alt.Color(f"{color}:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=[alt.Tooltip(f"{color}:N"), alt.Tooltip("rank:Q", format=","), alt.Tooltip("count:Q", format=","),
                 alt.Tooltip("cumulative:Q", format=".1%")],
    )


def cumulative_share_panels(panels: "Mapping[str, pd.DataFrame]", *, y_titles: "Mapping[str, str] | None" = None,
                            color: str = "data") -> "alt.HConcatChart":
    """Fig. 4.4's outer panels side by side: one :func:`cumulative_share_lines` per ``{title: curves}``,
    each with its own colour legend (the panels show different data sets)."""
    alt = _alt()
    if not panels:
        raise ValueError("cumulative_share_panels: no panel given")
    charts = [cumulative_share_lines(curves, color=color, title=title,
                                     **({"y_title": y_titles[title]} if y_titles and title in y_titles else {}))
              for title, curves in dict(panels).items()]
    return alt.hconcat(*charts).resolve_scale(color="independent")


__all__ += ["positive_ratio_line", "cumulative_share_lines", "cumulative_share_panels"]


# --- meta
def tau_heatmap(matrix: "pd.DataFrame", *, title: str | None = None, label: str = "τ",
                width: int = 320, height: int = 320) -> "alt.Chart":
    """Heatmap of a square agreement matrix (rows and columns: metrics or cut-offs), values printed.

    ``matrix`` is e.g. :func:`recmetrics.meta.agreement.agreement_matrix`'s result; the colour
    scale runs from -1 to 1 (the range of Kendall's τ and τ_ap)."""
    alt = _alt()
    names = [str(c) for c in matrix.columns]
    data = matrix.copy()
    data.index, data.columns = [str(i) for i in data.index], names
    long = data.rename_axis("row").reset_index().melt(id_vars="row", var_name="column", value_name="value")
    enc = dict(x=alt.X("column:N", sort=names, title=None), y=alt.Y("row:N", sort=[str(i) for i in data.index], title=None))
    base = alt.Chart(long, width=width, height=height, title=title or alt.Undefined).encode(**enc)
    cells = base.mark_rect().encode(
        color=alt.Color("value:Q", title=label, scale=alt.Scale(scheme="viridis", domain=[-1, 1])),
        tooltip=[alt.Tooltip("row:N"), alt.Tooltip("column:N"), alt.Tooltip("value:Q", format=".3f", title=label)])
    text = base.mark_text(fontSize=9).encode(
        text=alt.Text("value:Q", format=".2f"),
        color=alt.condition(alt.datum.value > 0.5, alt.value("black"), alt.value("white")))
    return cells + text


def pvalue_curves(curves: "pd.DataFrame", *, x: str = "pair", y: str = "p", color: str = "metric",
                  title: str | None = None, alpha: float | None = 0.05, width: int = WIDTH,
                  height: int = HEIGHT) -> "alt.Chart":
    """Sakai's p-value curves: each metric's p-values of every system pair sorted by decreasing
    value (``curves`` tidy: one row per metric and pair rank), with a rule at ``alpha``."""
    alt = _alt()
    _require_columns(curves, [x, y, color], "pvalue_curves")
    pick = alt.selection_point(fields=[color], bind="legend")
    lines = alt.Chart(curves, width=width, height=height, title=title or alt.Undefined).mark_line().encode(
        x=alt.X(f"{x}:Q", title="system pairs sorted by p-value"),
        y=alt.Y(f"{y}:Q", title="p-value"),
        color=alt.Color(f"{color}:N"),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
        tooltip=[alt.Tooltip(f"{color}:N"), alt.Tooltip(f"{x}:Q"), alt.Tooltip(f"{y}:Q", format=".4f")],
    ).add_params(pick)
    if alpha is None:
        return lines
    import pandas as pd

    rule = alt.Chart(pd.DataFrame({"alpha": [alpha]})).mark_rule(strokeDash=[4, 4], color="gray").encode(y="alpha:Q")
    return lines + rule


# --- zoo
__all__ += ["system_bars"]


def system_bars(mean: "pd.DataFrame", std: "pd.DataFrame", family: "Mapping[str, str]", *,
                title: str | None = None, width: int = WIDTH) -> "alt.FacetChart":
    """Horizontal bars of each system's mean (± the spread) per metric, coloured by family.

    ``mean``/``std``: system x metric tables (e.g. :func:`recmetrics.study.summarise`); systems are
    sorted by the first metric. One panel per metric, sized so the panels fit ``width``."""
    alt = _alt()
    metrics = list(mean.columns)
    long = mean.reset_index(names="system").melt(id_vars="system", var_name="metric", value_name="mean")
    long["sd"] = std.reindex(index=mean.index, columns=metrics).to_numpy().T.ravel()
    long["family"] = long.system.map(dict(family))
    long["low"], long["high"] = long["mean"] - long["sd"], long["mean"] + long["sd"]
    order = list(mean.sort_values(metrics[0], ascending=False).index)
    base = alt.Chart(long).encode(y=alt.Y("system:N", sort=order, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("mean:Q", title="mean over folds"),
        color=alt.Color("family:N", scale=alt.Scale(scheme="tableau20"),
                        legend=alt.Legend(title="family", orient="bottom", columns=2, labelLimit=260)),
        tooltip=["system", "family", "metric", alt.Tooltip("mean:Q", format=".4f"), alt.Tooltip("sd:Q", format=".4f")],
    )
    errors = base.mark_rule().encode(x="low:Q", x2="high:Q")
    panel = max((width - 140) // max(len(metrics), 1) - 20, 120)
    return (bars + errors).properties(width=panel, height=alt.Step(14)).facet(
        column=alt.Column("metric:N", title=None, sort=metrics)
    ).resolve_scale(x="independent").properties(title=title or alt.Undefined)


# --- choosing a metric (notebook 04: Schröder, Thiele & Lehner 2011, Figs. 1-5)
__all__ += ["metric_small_multiples", "roc_curves"]


def metric_small_multiples(df: "pd.DataFrame", x: str, x_title: str, *, color: str | None = None, columns: int = 3,
                           title: str | None = None, width: int = 150, height: int = 110) -> "alt.FacetChart":
    """One small panel per metric, the metric's value against ``x`` (Schröder et al.'s Figures 1-4), each
    panel with its own y scale; panels in the order the metrics first appear. ``df`` is tidy: columns
    ``metric, value, ranking`` and ``x`` (e.g. :func:`recmetrics.meta.guidelines.figure1`), plus ``color``
    (one line per value, e.g. the perfect and the inverse recommender of Figure 3) when given."""
    alt = _alt()
    _require_columns(df, ["metric", "value", "ranking", x] + ([color] if color else []), "metric_small_multiples")
    data = df[list(dict.fromkeys(["metric", "value", "ranking", x] + ([color] if color else [])))].reset_index(drop=True)
    enc = dict(
        x=alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("value:Q", title=None),
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip(f"{x}:Q", title=x_title), alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip("ranking:N")],
    )
    if color:   # the legend under the panels: beside them it would widen the chart past the column
        enc["color"] = alt.Color(f"{color}:N", title=color, legend=alt.Legend(orient="bottom"))
        enc["tooltip"] = [alt.Tooltip(f"{color}:N")] + enc["tooltip"]
    order = list(dict.fromkeys(data["metric"]))
    return (alt.Chart(data, width=width, height=height).mark_line(point=True).encode(**enc)
            .facet(facet=alt.Facet("metric:N", sort=order, title=None), columns=columns, title=title or alt.Undefined)
            .resolve_scale(y="independent"))


def roc_curves(roc: "pd.DataFrame", *, color: str = "curve", title: str | None = None, size: int = 300) -> "alt.Chart":
    """ROC curves (recall against fallout) drawn through their points in rank order, one line per ``color``
    value (e.g. the whole ranking's AUC curve and the LAUC@k curve: the first k items, then a straight line
    to (1, 1), Schröder et al.'s Figure 5). ``roc``: columns ``rank, fpr, tpr`` and ``color`` (from
    :func:`recmetrics.metrics.classification.roc_curve` with a ``curve`` label added)."""
    alt = _alt()
    _require_columns(roc, ["rank", "fpr", "tpr", color], "roc_curves")
    data = roc[[color, "rank", "fpr", "tpr"]].reset_index(drop=True)
    return alt.Chart(data, width=size, height=size, title=title or alt.Undefined).mark_line(point=True).encode(
        x=alt.X("fpr:Q", title="fallout (false positive rate)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("tpr:Q", title="recall (true positive rate)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color(f"{color}:N", title=None, legend=alt.Legend(orient="bottom")),
        strokeDash=f"{color}:N", order="rank:Q",
        tooltip=[f"{color}:N", "rank:Q", alt.Tooltip("fpr:Q", format=".3f"), alt.Tooltip("tpr:Q", format=".3f")])


def bias_scatter(df: "pd.DataFrame", *, x: str = "ARP", y: str = "value", column: str = "design",
                 label: str = "system", x_title: str | None = None, y_title: str = "P@10",
                 title: str | None = None, width: int = 150, height: int = 150, columns: int = 3) -> "alt.FacetChart":
    """One point per system (labelled), ``x`` (e.g. its lists' ARP) against ``y`` (its metric value),
    one panel per ``column`` (e.g. evaluation design), wrapped after ``columns`` panels so that the
    chart fits the book's column unscaled; tidy ``df`` as ``bias_beside_designs`` gives it."""
    alt = _alt()
    _require_columns(df, [x, y, column, label], "bias_scatter")
    data = df[[x, y, column, label]].reset_index(drop=True)
    base = alt.Chart(data, width=width, height=height).encode(
        x=alt.X(f"{x}:Q", title=x_title or x), y=alt.Y(f"{y}:Q", title=y_title),
        tooltip=[alt.Tooltip(f"{label}:N"), alt.Tooltip(f"{column}:N"), alt.Tooltip(f"{x}:Q", format=".2f"),
                 alt.Tooltip(f"{y}:Q", format=".4f")])
    points = base.mark_circle(size=60).encode(color=alt.Color(f"{label}:N", title=label,
                                                              legend=alt.Legend(orient="bottom")))
    text = base.mark_text(align="left", dx=6, fontSize=10).encode(text=f"{label}:N")
    return (points + text).facet(facet=alt.Facet(f"{column}:N", title=None, sort=None), columns=columns,
                                 title=title or alt.Undefined).resolve_scale(y="independent")


__all__ += ["bias_scatter"]

