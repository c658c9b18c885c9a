"""Diversity-metric sandbox: build a small ranking with aspects and ratings, swap items, watch the metrics.

``rm.widgets.sandbox.DiversitySandbox().widget`` (or :func:`sandbox`) shows

* the user's interest in each aspect (sliders: the weights w(u, a), normalised like Eq. 9),
* the ranking: per rank the item, its aspects (tags) and the user's test rating ("unrated" for
  a missing rating), with buttons to move an item up or down, and a "swap ranks" control,
* every selected metric's value for the current ranking, the previous one and the change.

The widget holds no analysis logic: every number comes from
:func:`recmetrics.metrics.diversity.score_lists`. It needs a live Jupyter kernel (in the static
book the controls render but do not recompute).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..metrics.diversity import score_lists

DEFAULT_METRICS = ("ab-nDCG@5", "a-nDCG@5", "NRBP", "S-Recall@5", "S-RR", "ERR-IA@5", "P-IA@5",
                   "nDCG-IA@5", "EU", "RBU@5", "nDCG@5", "P@5")
RATING_OPTIONS = ("unrated", "0", "1", "2", "3", "4", "5")

#: a small default scenario: (item, aspects, rating or None)
DEFAULT_ITEMS = (
    ("Alien", ("Horror", "Sci-Fi"), 5),
    ("Heat", ("Action", "Crime"), 4),
    ("Aliens", ("Action", "Sci-Fi"), 4),
    ("Fargo", ("Comedy", "Crime"), None),
    ("Clue", ("Comedy", "Crime"), 2),
    ("Gattaca", ("Drama", "Sci-Fi"), 0),
)
DEFAULT_WEIGHTS = {"Action": 0.2, "Comedy": 0.1, "Crime": 0.2, "Drama": 0.1, "Horror": 0.1, "Sci-Fi": 0.3}


@dataclass
class SandboxState:
    """The ranking being edited (pure data; the widget renders and edits it)."""

    items: list = field(default_factory=lambda: [i for i, _, _ in DEFAULT_ITEMS])
    aspects: dict = field(default_factory=lambda: {i: tuple(a) for i, a, _ in DEFAULT_ITEMS})
    ratings: dict = field(default_factory=lambda: {i: r for i, _, r in DEFAULT_ITEMS})
    weights: dict = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))

    def swap(self, a: int, b: int) -> None:
        self.items[a], self.items[b] = self.items[b], self.items[a]

    def judgments(self) -> dict:
        return {i: float(r) for i, r in self.ratings.items() if r is not None}

    def table(self) -> pd.DataFrame:
        """The ranking as the sandbox shows it: position, item, its aspects and the user's rating
        (``unrated`` when it has none); the static counterpart of the widget's rows.

        >>> SandboxState().table().loc[1].to_dict()
        {'item': 'Alien', 'aspects': 'Horror, Sci-Fi', 'rating': '5'}
        """
        return pd.DataFrame([(pos + 1, item, ", ".join(self.aspects[item]),
                              "unrated" if self.ratings[item] is None else f"{self.ratings[item]:g}")
                             for pos, item in enumerate(self.items)],
                            columns=["position", "item", "aspects", "rating"]).set_index("position")

    def scores(self, metrics) -> pd.Series:
        """The library's values of ``metrics`` for the current ranking (NaN if the user has no rating)."""
        if not self.judgments():
            return pd.Series(float("nan"), index=list(metrics))
        frame = score_lists([self.items], self.judgments(), self.aspects, list(metrics), profile=self.weights)
        return frame.iloc[0]


class DiversitySandbox:
    """The interactive sandbox (ipywidgets). ``.widget`` is the top-level widget to display."""

    def __init__(self, state: SandboxState | None = None, metrics=DEFAULT_METRICS):
        import ipywidgets as w

        self.w = w
        self.state = state or SandboxState()
        self.metrics = list(metrics)
        self.previous: pd.Series | None = None
        labels = sorted({a for t in self.state.aspects.values() for a in t} | set(self.state.weights))
        self.labels = labels
        self.sliders = {a: w.FloatSlider(value=float(self.state.weights.get(a, 0.0)), min=0.0, max=1.0,
                                         step=0.05, description=a, continuous_update=False,
                                         layout=w.Layout(width="300px")) for a in labels}
        for a, s in self.sliders.items():
            s.observe(self._on_weight(a), names="value")
        self.rows = w.VBox()
        self.swap_a = w.Dropdown(description="swap rank", layout=w.Layout(width="170px"))
        self.swap_b = w.Dropdown(description="with", layout=w.Layout(width="150px"))
        button = w.Button(description="swap", button_style="info")
        button.on_click(lambda _: self._swap(self.swap_a.value, self.swap_b.value))
        self.output = w.HTML()
        self.widget = w.VBox([
            w.HTML("<b>User's interest in each aspect</b> (w(u, a); normalised over aspects)"),
            w.GridBox(list(self.sliders.values()), layout=w.Layout(grid_template_columns="repeat(3, 310px)")),
            w.HTML("<b>Ranking</b> (aspects as tags; rating 'unrated' = missing)"),
            self.rows,
            w.HBox([self.swap_a, self.swap_b, button]),
            self.output,
        ])
        self._render_rows()
        self._refresh()

    # ----------------------------------------------------------------- rendering
    def _render_rows(self) -> None:
        w = self.w
        rows = []
        for pos, item in enumerate(self.state.items):
            tags = w.TagsInput(value=list(self.state.aspects.get(item, ())), allowed_tags=self.labels,
                               allow_duplicates=False, layout=w.Layout(width="330px"))
            tags.observe(self._on_aspects(item), names="value")
            r = self.state.ratings.get(item)
            rating = w.Dropdown(options=RATING_OPTIONS, value="unrated" if r is None else str(int(r)),
                                layout=w.Layout(width="100px"))
            rating.observe(self._on_rating(item), names="value")
            up = w.Button(description="↑", layout=w.Layout(width="36px"), disabled=pos == 0)
            down = w.Button(description="↓", layout=w.Layout(width="36px"),
                            disabled=pos == len(self.state.items) - 1)
            up.on_click(lambda _, p=pos: self._swap(p, p - 1))
            down.on_click(lambda _, p=pos: self._swap(p, p + 1))
            rows.append(w.HBox([w.Label(f"{pos + 1}.", layout=w.Layout(width="24px")),
                                w.Label(str(item), layout=w.Layout(width="90px")), tags, rating, up, down]))
        self.rows.children = rows
        options = [(str(p + 1), p) for p in range(len(self.state.items))]
        self.swap_a.options = options
        self.swap_b.options = options
        if len(options) > 1:
            self.swap_b.value = 1

    def _refresh(self) -> None:
        current = self.state.scores(self.metrics)
        table = pd.DataFrame({"value": current})
        if self.previous is not None:
            table["before"] = self.previous
            table["change"] = current - self.previous
        self.previous = current
        self.output.value = ("<b>Metrics</b> (computed by recmetrics.metrics.diversity.score_lists)" +
                             table.style.format("{:.4f}", na_rep="–").to_html())

    # ----------------------------------------------------------------- events
    def _swap(self, a, b) -> None:
        if a is None or b is None or a == b:
            return
        self.state.swap(int(a), int(b))
        self._render_rows()
        self._refresh()

    def _on_weight(self, aspect):
        def handler(change):
            self.state.weights[aspect] = float(change["new"])
            self._refresh()
        return handler

    def _on_aspects(self, item):
        def handler(change):
            self.state.aspects[item] = tuple(change["new"])
            self._refresh()
        return handler

    def _on_rating(self, item):
        def handler(change):
            value = change["new"]
            self.state.ratings[item] = None if value == "unrated" else float(value)
            self._refresh()
        return handler


def sandbox(metrics=DEFAULT_METRICS, state: SandboxState | None = None):
    """Build the sandbox and return its top-level widget."""
    return DiversitySandbox(state, metrics).widget
