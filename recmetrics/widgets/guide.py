"""Guideline explorer: the paper's §6 questions as toggle buttons, its advice underneath.

No logic here: the questions, the decision rules, the reasons and the measured properties all
come from :mod:`recmetrics.meta.guidelines`; this module only lays them out as ipywidgets.

    from recmetrics.widgets.guide import guide
    guide(k=10)          # in a notebook

The answers are re-evaluated by a Python callback, so the advice follows the buttons in a live
kernel; in a static page the initial answers' advice is shown (see
``guidelines.decision_table()`` for every combination).
"""
from __future__ import annotations

import html
from typing import Any, Mapping

from ..meta import guidelines as _g


def _family_html(rec, k: int, properties) -> str:
    fam = _g.FAMILIES[rec.family]
    names = _g.family_metrics(rec.family, k)
    agg = "" if fam.aggregation == "arithmetic" else f" (also with the {fam.aggregation} mean over users)"
    rows = ""
    if properties is not None:
        have = [n for n in names if n in properties.index]
        if have and len(properties.columns):   # no measured column: no empty table
            rows = properties.loc[have].to_html(float_format=lambda v: f"{v:.3f}", border=0)
    return (f"<li><b>{html.escape(fam.title)}</b> &mdash; <code>{html.escape(', '.join(names))}</code>"
            f"{html.escape(agg)}<br>{html.escape(rec.reason)}{rows}</li>")


def render(answers: Mapping[str, Any] | None = None, k: int = 10, results=None) -> str:
    """HTML of the advice for ``answers`` (what the widget shows)."""
    recs = _g.recommend_metrics(answers)
    warn = _g.cautions(answers)
    props = _g.measured_properties([n for r in recs for n in _g.family_metrics(r.family, k)], results)
    parts = ["<h4>Recommended metric families</h4><ul>"]
    parts += [_family_html(r, k, props) for r in recs]
    parts.append("</ul>")
    if warn:
        parts.append("<h4>Be careful with</h4><ul>")
        parts += [f"<li><b>{html.escape(c.family)}</b>: {html.escape(c.reason)}</li>" for c in warn]
        parts.append("</ul>")
    if props is None:
        parts.append("<p><i>Measured robustness and discriminative power: not available yet "
                     "(no meta-evaluation table was found).</i></p>")
    return "".join(parts)


def guide(answers: Mapping[str, Any] | None = None, k: int = 10, results=None):
    """The explorer widget: one toggle row per question of :data:`recmetrics.meta.guidelines.QUESTIONS`."""
    import ipywidgets as widgets

    start = _g.normalise_answers(answers)
    buttons = {}
    rows = []
    for q in _g.QUESTIONS:
        b = widgets.ToggleButtons(options=list(q.options), value=start[q.key], tooltips=[q.help] * len(q.options),
                                  style={"button_width": "110px"})
        buttons[q.key] = b
        rows.append(widgets.VBox([widgets.HTML(f"<b>{html.escape(q.text)}</b>"), b]))
    out = widgets.HTML(render(start, k, results))

    def update(_change=None):
        out.value = render({key: b.value for key, b in buttons.items()}, k, results)

    for b in buttons.values():
        b.observe(update, names="value")
    box = widgets.VBox(rows + [out])
    box.answers = buttons  # for programmatic access (tests, notebooks)
    box.advice = out
    return box


__all__ = ["guide", "render"]
