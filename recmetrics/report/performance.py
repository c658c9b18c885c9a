"""The Guide's performance page: every timing the project states, in one place, generated from the
benchmark results.

Each script of ``benchmarks/`` writes its table to ``benchmarks/results/<name>.json`` (title, the
command that measured it, when, on which machine — CPUs, Python, platform, load — the recmetrics
version and commit, the table and notes). :func:`benchmark_tables` reads them; :func:`performance_markdown`
renders them as the MyST substitution ``{{ benchmarks }}`` of ``book/guide/performance.md``. The
README, ``recmetrics report --help``, the rest of the Guide, the reproducibility appendix and the
Pages workflow point to that page instead of restating numbers, so a timing is measured once and
shown once, beside the machine it ran on.
"""
from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable

from .paths import benchmarks_results_dir

__all__ = ["benchmark_tables", "performance_markdown", "ORDER"]

#: the tables shown first, in this order (whole builds first: what a reader asks); the rest by name
ORDER = ("bench_book_quick_movielens-small", "bench_book_quick_movielens-small_seeds",
         "bench_book_paper_movielens-small", "bench_book_paper_insteval", "bench_scale", "bench_scale_paper",
         "bench_scale_dask", "bench_scale_50runs_dask", "bench_suite", "bench_metrics", "bench_metrics_cutoffs",
         "bench_cli", "bench_meta", "bench_robustness")


def benchmark_tables(results_dir: str | os.PathLike | None = None) -> list[dict]:
    """The benchmark results the scripts of ``benchmarks/`` wrote (``results/*.json``), whole builds
    first (:data:`ORDER`), then by name; unreadable files and files without a table are skipped."""
    folder = Path(results_dir) if results_dir else benchmarks_results_dir()
    tables = []
    for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            t = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(t, dict) and isinstance(t.get("columns"), list) and isinstance(t.get("rows"), list):
            tables.append({"name": f.stem, **t})
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(tables, key=lambda t: (rank.get(t["name"], len(ORDER)), t["name"]))


def _options(text: str) -> str:
    """Command-line options (``--force``) as code, so the book's typography does not turn their
    ``--`` into a dash."""
    return re.sub(r"(?<![`\w-])(--[A-Za-z][\w-]*)", r"`\1`", str(text))


def _num(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value).replace("|", "\\|")


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    """A Markdown table of cells already formatted."""
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines + [""]


def performance_markdown(tables: list[dict], level: int = 2) -> str:
    """Every benchmark table as MyST Markdown: a heading (``level``) per table with its title, then
    when, with which command, on which machine and at which version it was measured, the table and
    its notes.

    >>> print(performance_markdown([{"name": "bench_x", "title": "X", "command": "python benchmarks/bench_x.py",
    ...     "measured_at": "2026-01-01T00:00:00Z", "machine": {"CPUs": 2, "Python": "3.11.7"},
    ...     "recmetrics": "0.1.0", "commit": "0123456789abcdef", "columns": ["tool", "seconds"],
    ...     "rows": [["recmetrics", 0.5]], "notes": ["one pass, --force"]}]))
    ## X
    <BLANKLINE>
    Measured 2026-01-01 00:00 UTC with `python benchmarks/bench_x.py` on CPUs 2, Python 3.11.7 (recmetrics 0.1.0 at `0123456789ab`).
    <BLANKLINE>
    | tool | seconds |
    |---|---|
    | recmetrics | 0.5 |
    <BLANKLINE>
    * one pass, `--force`
    <BLANKLINE>
    """
    if not tables:
        return ("No benchmark has been recorded (`benchmarks/results/*.json`): run a script of `benchmarks/` to "
                "write one.")
    lines: list[str] = []
    for b in tables:
        machine = ", ".join(f"{k} {v}" for k, v in (b.get("machine") or {}).items())
        when = str(b.get("measured_at", "?")).replace("T", " ").rstrip("Z")[:16] + " UTC"
        version = f"recmetrics {b.get('recmetrics', '?')}" + (f" at `{str(b['commit'])[:12]}`" if b.get("commit") else "")
        lines += [f"{'#' * level} {_options(b.get('title') or b['name'])}", "",
                  f"Measured {when} with `{b.get('command', 'python benchmarks/' + b['name'] + '.py')}`"
                  + (f" on {machine}" if machine else "") + f" ({version}).", ""]
        lines += _table([_options(c) for c in b["columns"]], [[_options(_num(c)) for c in row] for row in b["rows"]])
        lines += [f"* {_options(html.escape(str(note), quote=False))}" for note in b.get("notes") or []]
        lines += [""]
    return "\n".join(lines)
