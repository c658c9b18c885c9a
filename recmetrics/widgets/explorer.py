"""Metric explorer (live): pick dataset, metric, cut-off and aggregation; see the ranking, the p-value
curve and the robustness curves.

    from recmetrics.widgets.explorer import MetricExplorer
    MetricExplorer({"movielens-small": study}).widget          # in a notebook

No analysis logic here: the rows of a selection come from a precomputed
:func:`recmetrics.explorers.explorer_table` when it has them, else
:func:`~recmetrics.explorers.explorer_table` is called on that dataset's
:class:`~recmetrics.study.Study` for the one metric, cut-off and aggregation (the study's cube is
cached on disk, so nothing is refitted; a selection is computed once per session). With the same
settings the rows equal those of a table computed for every metric at once (the p-values and τ do
not depend on which metrics are computed together). The chart is
:func:`recmetrics.viz_explorers.metric_explorer_chart` — the same chart the static book shows with
its own drop-downs. It needs a live kernel; the book's chapter 9 has the static counterpart.
"""
from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from ..errors import InputError, unknown_name


class MetricExplorer:
    """The explorer widget: ``.widget`` is the top-level ipywidget, ``.rows(...)`` the data of one selection.

    ``studies``: a :class:`~recmetrics.study.Study` or ``{dataset label: Study}``; ``table``: an
    :func:`~recmetrics.explorers.explorer_table` (or several concatenated) to read first; at least
    one of them. ``explorer_kw`` go to :func:`~recmetrics.explorers.explorer_table` for the
    selections the table lacks (``n_permutations``, ``sizes``, ``n_samples``, ``seed``, ...;
    default: the table's own settings when it has them, so computed rows match the table's).
    """

    def __init__(self, studies=None, table: pd.DataFrame | None = None, **explorer_kw: Any):
        from ..explorers import AGGREGATIONS, COLUMNS

        if studies is not None and not isinstance(studies, Mapping):
            studies = {str(getattr(studies, "dataset", "study")): studies}
        self.studies = dict(studies or {})
        if table is not None:
            missing = [c for c in COLUMNS if c not in table.columns]
            if missing:
                raise InputError(f"not an explorer table: column(s) {missing} missing")
        if not self.studies and (table is None or not len(table)):
            raise InputError("give the studies to explore, or an explorer table")
        self.table = table if table is not None else pd.DataFrame(columns=list(COLUMNS))
        settings = dict(self.table.attrs.get("explorer", {}) or {})
        if settings and all(isinstance(v, Mapping) for v in settings.values()):  # load_tables: {dataset: settings}
            settings = next(iter(settings.values()), {})
        keys = ("n_permutations", "n_samples", "target_se", "min_samples", "seed", "pool", "confidence", "alpha")
        defaults = {k: settings[k] for k in keys if k in settings}
        if "sizes" in settings:
            defaults["sizes"] = settings["sizes"]
        self.explorer_kw = {**defaults, **explorer_kw}
        self.aggregations = list(AGGREGATIONS)
        self._cache: dict[tuple, pd.DataFrame] = {}
        self._widget = None

    # ------------------------------------------------------------------ data
    def datasets(self) -> list[str]:
        return list(dict.fromkeys([*map(str, self.table["dataset"].unique()), *self.studies]))

    def choices(self, dataset: str) -> dict[str, list]:
        """The metrics and cut-offs offered for ``dataset``: its study's, else its table's."""
        if dataset in self.studies:
            st = self.studies[dataset]
            return {"metric": list(st.metrics), "cutoff": list(st.cutoffs)}
        t = self.table[self.table["dataset"] == dataset]
        if not len(t):
            raise unknown_name("dataset of the explorer", str(dataset), self.datasets())
        return {"metric": list(dict.fromkeys(t["metric"])),
                "cutoff": sorted(dict.fromkeys(int(c) for c in t["cutoff"]))}

    def rows(self, dataset: str, metric: str, cutoff: int, aggregation: str) -> pd.DataFrame:
        """The explorer rows of one selection (from the table, else computed once from the study)."""
        from ..explorers import explorer_table

        key = (str(dataset), str(metric), int(cutoff), str(aggregation))
        if key in self._cache:
            return self._cache[key]
        t = self.table
        sel = t[(t["dataset"] == key[0]) & (t["metric"] == key[1]) & (t["cutoff"].astype(int) == key[2])
                & (t["aggregation"] == key[3])]
        if not len(sel):
            if key[0] not in self.studies:
                raise InputError(f"no rows for {metric}@{cutoff} ({aggregation}) on {dataset!r} and no study to "
                                 f"compute them (studies: {list(self.studies)})")
            sel = explorer_table(self.studies[key[0]], [key[1]], [key[2]], [key[3]], dataset=key[0], **self.explorer_kw)
        self._cache[key] = sel.reset_index(drop=True)
        return self._cache[key]

    def chart(self, dataset: str, metric: str, cutoff: int, aggregation: str):
        """The chart of one selection (:func:`~recmetrics.viz_explorers.metric_explorer_chart`, no controls)."""
        from ..viz_explorers import metric_explorer_chart

        return metric_explorer_chart(self.rows(dataset, metric, cutoff, aggregation), controls=False)

    # ------------------------------------------------------------------ widget
    @property
    def widget(self):
        if self._widget is None:
            self._widget = self._build()
        return self._widget

    def _build(self):
        import ipywidgets as w
        from IPython.display import display

        datasets = self.datasets()
        first = self.choices(datasets[0])
        self.dataset = w.Dropdown(options=datasets, value=datasets[0], description="dataset")
        self.metric = w.Dropdown(options=first["metric"], value=first["metric"][0], description="metric")
        self.cutoff = w.Dropdown(options=first["cutoff"], value=first["cutoff"][0], description="cut-off")
        self.aggregation = w.ToggleButtons(options=self.aggregations, value=self.aggregations[0], description="mean")
        self.status = w.HTML()
        self.output = w.Output()
        busy = {"on": False}

        def show(_change=None):
            if busy["on"]:
                return
            sel = (self.dataset.value, self.metric.value, self.cutoff.value, self.aggregation.value)
            self.status.value = f"<i>computing {sel[1]}@{sel[2]} ({sel[3]}) on {sel[0]}…</i>"
            try:
                chart = self.chart(*sel)
                self.status.value = ""
            except InputError as exc:
                chart, self.status.value = None, f"<b>{exc}</b>"
            self.output.clear_output(wait=True)
            with self.output:
                if chart is not None:
                    display(chart)

        def on_dataset(change):
            opts = self.choices(change["new"])
            busy["on"] = True
            try:
                self.metric.options = opts["metric"]
                if self.metric.value not in opts["metric"]:
                    self.metric.value = opts["metric"][0]
                self.cutoff.options = opts["cutoff"]
                if self.cutoff.value not in opts["cutoff"]:
                    self.cutoff.value = opts["cutoff"][0]
            finally:
                busy["on"] = False
            show()

        self.dataset.observe(on_dataset, names="value")
        for control in (self.metric, self.cutoff, self.aggregation):
            control.observe(show, names="value")
        show()
        return w.VBox([w.HBox([self.dataset, self.metric]), w.HBox([self.cutoff, self.aggregation]), self.status,
                       self.output])


def metric_explorer(studies=None, table: pd.DataFrame | None = None, **explorer_kw):
    """Build the explorer and return its top-level widget (see :class:`MetricExplorer`)."""
    return MetricExplorer(studies, table, **explorer_kw).widget


__all__ = ["MetricExplorer", "metric_explorer"]
