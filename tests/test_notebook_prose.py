"""Chapters 01, 04 and 08 type no measured number and no verdict in their Markdown (issue 8 §4): numbers and
"agrees / disagrees" come from code (generated Markdown, findings tables), and charts from recmetrics.viz."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = ["01_dataset_overview", "04_choosing_a_metric", "08_popularity_bias"]


def _cells(stem, kind):
    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def _prose(text):
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)     # formulas are definitions, not measurements
    text = re.sub(r"\$[^$]*\$", "", text)
    text = re.sub(r"(Eqs?|Figs?|Figures?|Tables?|Sec)\.?\s*[\d.]+(\s*[,–-]\s*[\d.]+)*", "", text)  # references
    text = re.sub(r"§\s*[\d.]+", "", text)
    return re.sub(r"`[^`]*`", "", text)                    # code names


@pytest.mark.parametrize("stem", CHAPTERS)
def test_markdown_types_no_measured_number_or_verdict(stem):
    for cell in _cells(stem, "markdown"):
        prose = _prose(cell)
        assert not re.search(r"\d+\.\d+", prose), cell          # decimals are measured values
        assert not re.search(r"\b(agrees?|disagrees?)\b", prose, re.I), cell
        assert "≥ 4" not in prose and "1–5 scale" not in prose, cell


@pytest.mark.parametrize("stem", CHAPTERS)
def test_charts_are_built_by_viz(stem):
    for cell in _cells(stem, "code"):
        assert "alt.Chart(" not in cell and ".mark_" not in cell, cell
