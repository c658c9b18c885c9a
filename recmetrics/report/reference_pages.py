"""The book's metric reference: one page per metric family, generated from the registry.

Each page (``generated/9N_metrics_<family>.md``) renders :func:`recmetrics.metrics.reference.markdown`
with the numbers the chapters saved (:mod:`.results`): the axioms each metric satisfies and its
discriminative power and robustness on the datasets the book was built with.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

__all__ = ["write_reference_pages", "context_text"]

#: the context entries a saved result may carry, in the order shown: (key, singular, plural)
_COUNTS = (("systems", "system", "systems"), ("folds", "fold", "folds"), ("samples", "sample", "samples"),
           ("permutations", "permutation", "permutations"), ("scenarios", "scenario", "scenarios"))


def context_text(context, generated_dir: str | os.PathLike | None = None) -> str:
    """What a saved DP or robustness value was computed with, in words: cut-off, counts, pooling,
    profile and the chapter (linked) — the profile and title read from the executed chapter in
    ``generated_dir`` when the context names one.

    >>> context_text({"cutoff": 100, "systems": 6, "folds": 1, "pool": "concat"})
    'cut-off 100, 6 systems, 1 fold, `concat` pooling'
    """
    if not isinstance(context, dict):
        return ""
    parts = []
    if context.get("cutoff") is not None:
        parts.append(f"cut-off {context['cutoff']}")
    for key, one, many in _COUNTS:
        n = context.get(key)
        if isinstance(n, int) and not isinstance(n, bool):
            parts.append(f"{n:,} {one if n == 1 else many}")
    repeats = context.get("repeats")
    if isinstance(repeats, int) and not isinstance(repeats, bool) and repeats > 1:
        parts.append(f"split drawn {repeats} times")
    if context.get("pool"):
        parts.append(f"`{context['pool']}` pooling")
    chapter = context.get("chapter")
    if chapter:
        from .findings_page import chapter_info

        info = chapter_info(Path(generated_dir) / f"{chapter}.ipynb") if generated_dir is not None else {}
        profile = context.get("profile") or (info.get("parameters") or {}).get("profile")
        if profile:
            parts.append(f"{profile} profile")
        parts.append(f"[{info.get('title') or chapter}]({chapter})")
    return ", ".join(parts)


def write_reference_pages(generated_dir: str | os.PathLike, keys: Mapping[str, str | None] | None = None
                          ) -> list[Path]:
    """Write one Markdown page per metric family into ``generated_dir``; return their paths. With
    ``keys`` (``{chapter: content key}`` of a build's book) the pages show only the results those
    chapters committed under those keys (:func:`recmetrics.report.outputs.committed`)."""
    from ..metrics import reference
    from . import results
    from .outputs import committed

    generated = Path(generated_dir)
    for stale in generated.glob("9[0-8]_metrics_*.md"):
        stale.unlink()
    saved = results.load(generated / "results", None if keys is None else committed(generated, keys, "results"))
    saved["context"] = {kind: {ds: context_text(ctx, generated) for ds, ctx in per.items()}
                        for kind, per in saved.get("context", {}).items()}
    pages = []
    for i, family in enumerate(reference.families()):
        page = generated / f"{90 + i}_metrics_{family}.md"
        text = reference.markdown(family, saved).replace(f"# {family.capitalize()} metrics",
                                                          f"# Metric reference: {family}", 1)
        page.write_text(text + "\n", encoding="utf-8")
        pages.append(page)
    return pages
