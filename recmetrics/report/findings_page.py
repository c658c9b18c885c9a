"""The book's Findings page, gathered from the JSON every chapter wrote."""
from __future__ import annotations

import os
from pathlib import Path


def write_findings_page(generated_dir: str | os.PathLike) -> Path | None:
    """Gather every chapter's saved findings (``generated/findings/*.json``, written by the
    notebooks through :func:`recmetrics.meta.findings.save`) into the book page
    ``generated/99_findings.md``; removes a stale page when there are none."""
    from ..meta import findings

    generated = Path(generated_dir)
    page = generated / "99_findings.md"
    table = findings.collect(generated / "findings")
    if table.empty:
        page.unlink(missing_ok=True)
        return None
    counts = table.verdict.value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in findings.VERDICTS)
    parts = ["# Findings: the papers' claims, tested", "",
             f"Every claim of the papers that a chapter tests, with the paper's evidence, the evidence "
             f"computed by that chapter for the dataset and profile it ran with, and the verdict its code "
             f"gave ({len(table)} claims: {summary}). Nothing on this page is typed by hand: it is "
             f"gathered from the JSON files the chapters wrote.", ""]
    for chapter, group in table.groupby("chapter", sort=True):
        where = ", ".join(f"{c} `{group[c].iloc[0]}`" for c in ("dataset", "profile") if c in group)
        parts += [f"## {chapter}" + (f" ({where})" if where else ""), "", findings.to_markdown(group), ""]
    page.write_text("\n".join(parts), encoding="utf-8")
    return page
