"""Text made safe for the book's Markdown: a table cell (:func:`markdown_cell`) and a table of text
(:func:`markdown_table`).

The verdict tables of :mod:`recmetrics.meta.findings` and the charts' text tables of
:mod:`recmetrics.viz` share these helpers, so they live below both (no third-party import).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["markdown_cell", "markdown_table"]


def markdown_cell(text) -> str:
    """``text`` made safe inside a Markdown table cell of the book (MyST, dollar math on).

    ``|`` never breaks the cell; outside `code spans` ``$`` does not open math, ``<`` does not
    open raw HTML and ``\\`` does not escape what follows; a newline becomes a space; ``None`` and
    NaN become an empty cell. Backticks keep their meaning (code).

    >>> markdown_cell("p(i|C) costs $2 < `a|b`")
    'p(i\\\\|C) costs \\\\$2 &lt; `a\\\\|b`'
    """
    if text is None or (isinstance(text, float) and text != text):
        return ""
    parts = str(text).replace("\r", " ").replace("\n", " ").split("`")
    # even parts lie outside code spans; with an unmatched backtick every part is treated as text
    for i in range(0, len(parts), 2 if len(parts) % 2 else 1):
        parts[i] = parts[i].replace("\\", "\\\\").replace("$", "\\$").replace("<", "&lt;")
    return "`".join(parts).replace("|", "\\|")


def markdown_table(df: "pd.DataFrame", *, index: bool = False) -> str:
    """A DataFrame as a Markdown table whose cells are :func:`markdown_cell`-escaped.

    For tables of text (descriptions with `code`, formulas written as text) shown with
    ``IPython.display.Markdown``: the book renders it as a table (``nb_render_markdown_format:
    myst``), and a ``|`` or ``$`` inside a cell prints as written. ``index=True`` adds the index as
    the first column.

    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"system": ["Pop"], "idea": ["rank by p(i|train)"]})))
    | system | idea |
    |---|---|
    | Pop | rank by p(i\\|train) |
    """
    frame = df.reset_index() if index else df
    header = "| " + " | ".join(markdown_cell(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(markdown_cell(v) for v in row) + " |"
            for row in frame.itertuples(index=False, name=None)]
    return "\n".join([header, rule, *rows])
