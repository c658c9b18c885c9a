"""The book's metric reference: one page per metric family, generated from the registry.

Each page (``generated/9N_metrics_<family>.md``) renders :func:`recmetrics.metrics.reference.markdown`
with the numbers the chapters saved (:mod:`.results`): the axioms each metric satisfies and its
discriminative power and robustness on the datasets the book was built with.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_reference_pages"]


def write_reference_pages(generated_dir: str | os.PathLike) -> list[Path]:
    """Write one Markdown page per metric family into ``generated_dir``; return their paths."""
    from ..metrics import reference
    from . import results

    generated = Path(generated_dir)
    for stale in generated.glob("9[0-8]_metrics_*.md"):
        stale.unlink()
    saved = results.load(generated / "results")
    pages = []
    for i, family in enumerate(reference.families()):
        page = generated / f"{90 + i}_metrics_{family}.md"
        text = reference.markdown(family, saved).replace(f"# {family.capitalize()} metrics",
                                                          f"# Metric reference: {family}", 1)
        page.write_text(text + "\n", encoding="utf-8")
        pages.append(page)
    return pages
