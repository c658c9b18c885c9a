"""The book's reproducibility appendix and the intro's "built with" line, written by every build.

:func:`write_appendix` writes ``generated/appendix.md`` (listed last in ``book/_toc.yml``) from
the records the executed chapters carry (:mod:`.state`) — so a ``--no-execute`` build describes the
chapters it actually shows — and from what the machine has now:

* the build: date, the ``recmetrics report`` command that reproduces it, the git commit of the
  checkout (and whether it had uncommitted changes), the package hash, Python and platform;
* the data: every dataset a chapter used, with its arguments, size and fingerprint;
* every chapter: when it was executed, its run time, its seeds, the chapters it read, and the
  parameters it ran with;
* the versions of Python and of every runtime dependency the chapters were executed with, and of
  the JavaScript vendored into the site;
* a pointer to the benchmark tables (``benchmarks/results/*.json``), which the Guide's performance
  page shows (:mod:`.performance`): timings are stated in one place.

:func:`built_with` is the sentence the introduction shows through the MyST substitution
``{{ built_with }}``.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping

from .paths import DISTRIBUTION, checkout
from .performance import _num, _table, benchmark_tables
from .state import BOOK_LEVEL, RECORD_KEY, book_settings, describe_settings, now, read_record, settings_of

APPENDIX = "appendix"  # generated/appendix.md


def git_commit(repo: str | os.PathLike | None = None) -> str:
    """``<sha>`` of the HEAD of ``repo`` (default: the checkout the package runs from), ``<sha> with
    uncommitted changes`` when tracked files differ, or ``not a git checkout`` (always so when the
    package runs installed: its version says what ran)."""
    repo = repo or checkout()
    if repo is None:
        return "not a git checkout (installed package)"
    repo = str(repo)
    try:
        sha = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        if not sha:
            return "not a git checkout"
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout (git not found)"
    return f"{sha} with uncommitted changes" if dirty else sha


def command_line(settings: Mapping[str, Any]) -> str:
    """The ``recmetrics report`` command that asks for ``settings``.

    >>> command_line({"profile": "quick", "dataset": "movielens-1m", "dataset_args": {"path": "/d"},
    ...               "overrides": {"folds": 3}})
    'recmetrics report --profile quick --dataset movielens-1m --dataset-arg path=/d -p folds=3'
    """
    parts = ["recmetrics report", f"--profile {settings.get('profile')}", f"--dataset {settings.get('dataset')}"]
    for k, v in (settings.get("dataset_args") or {}).items():
        parts.append(f"--dataset-arg {k}={_arg(v)}")
    for k, v in (settings.get("overrides") or {}).items():
        parts.append(f"-p {k}={_arg(v)}")
    return " ".join(parts)


def _arg(v) -> str:
    text = v if isinstance(v, str) else repr(v)
    return text if text and all(c.isalnum() or c in "/._-@:" for c in text) else "'" + text.replace("'", "'\\''") + "'"


def built_with(settings: Mapping[str, Any] | None, seeds: Iterable[Any] = ()) -> str:
    """The introduction's sentence naming the profile, dataset and ``seeds`` of the chapters.

    >>> built_with({"profile": "quick", "dataset": "insteval"}, seeds=[0, 0])
    'This copy of the book was built with the **quick** profile on the dataset **insteval**, seed 0; the [reproducibility appendix](generated/appendix) lists everything it ran with.'
    """
    if not settings:
        return "This copy of the book was built without executed chapters."
    text = (f"This copy of the book was built with the **{settings.get('profile')}** profile on the dataset "
            f"**{settings.get('dataset')}**")
    if settings.get("dataset_args"):
        text += " (" + ", ".join(f"`{k}={v!r}`" for k, v in settings["dataset_args"].items()) + ")"
    if settings.get("overrides"):
        text += ", with " + ", ".join(f"`{k} = {v!r}`" for k, v in settings["overrides"].items())
    seeds = sorted(set(seeds), key=repr)
    if seeds:
        text += (", seed " if len(seeds) == 1 else ", seeds ") + ", ".join(f"{s!r}" for s in seeds)
    return text + "; the [reproducibility appendix](generated/appendix) lists everything it ran with."


def chapter_seeds(records: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The values of every ``*seed*`` parameter the chapters ran with (each value once)."""
    seen: list[Any] = []
    for r in records:
        for k, v in (r.get("parameters") or {}).items():
            if "seed" in k and v not in seen:
                seen.append(v)
    return seen


def _commits(now_: str, executed: set[str]) -> str:
    if executed == {now_}:
        return f"`{now_}` (the chapters were executed and this page built there)"
    return f"`{now_}` when this page was built; the chapters were executed at " + \
        ", ".join(f"`{c}`" for c in sorted(executed))


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def chapter_records(generated_dir: str | os.PathLike, stems: Iterable[str] | None = None) -> dict[str, dict]:
    """``{stem: record}`` of the executed chapters in ``generated_dir``, in file-name (table of
    contents) order."""
    generated = Path(generated_dir)
    paths = sorted(generated / f"{s}.ipynb" for s in stems) if stems is not None else sorted(generated.glob("*.ipynb"))
    out = {}
    for p in paths:
        r = read_record(p)
        if r is not None:
            out[p.stem] = r
    return out


def appendix_markdown(records: Mapping[str, Mapping[str, Any]], *, vendored: Mapping[str, Any] | None = None,
                      benchmarks: list[dict] | None = None, built_at: str | None = None,
                      commit: str | None = None) -> str:
    """The appendix page (MyST Markdown) for the chapters' ``records``."""
    built_at = built_at or now()
    commit = commit or git_commit()
    first = book_settings(records.values()) or {}
    packages = sorted({r.get("package", "?") for r in records.values()})
    lines = ["# Reproducibility", "",
             "Everything below was recorded by `recmetrics report` while it executed the chapters "
             "(and when it built this page); nothing is typed by hand.", "",
             "## Build", ""]
    from .. import __version__

    rows = [("built (UTC)", built_at),
            ("reproduce with", f"`{command_line(first)}`" if first else "—"),
            ("chapters executed with", describe_settings(first) if first else "—"),
            ("recmetrics", f"`{DISTRIBUTION}` {__version__} (import package `recmetrics`); package hash "
                           f"(every `*.py` under `recmetrics/`) "
                           + ", ".join(f"`{p[:16]}`" for p in packages)),
            ("git commit of the checkout", _commits(commit, {str(r.get("commit", "?")) for r in records.values()})),
            ("Python / platform", f"{platform.python_version()} ({platform.python_implementation()}), "
                                  f"{platform.platform(terse=True)}, {os.cpu_count()} CPUs"),
            ("Dask scheduler", ", ".join(sorted({str(r.get('scheduler')) for r in records.values()
                                                 if r.get("scheduler")})) or "none (local joblib)")]
    lines += [f"* **{name}**: {value}" for name, value in rows] + [""]
    if len({json.dumps({k: settings_of(r).get(k) for k in BOOK_LEVEL}, sort_keys=True, default=str)
            for r in records.values()}) > 1:
        lines += ["```{warning}", "The chapters were not all executed with the same settings.", "```", ""]

    datasets: dict[str, dict] = {}
    for r in records.values():
        datasets.update(r.get("datasets") or {})
    lines += ["## Data", "", "The fingerprint is a SHA-256 of the ratings (rows in any order) and the item "
              "aspects as loaded; two builds with the same fingerprint ran on the same data.", ""]
    for n, fp in datasets.items():
        args = ", ".join(f"{k}={_cell(v)}" for k, v in (fp.get("args") or {}).items())
        lines.append(f"* `{n}` ({'arguments ' + args if args else 'no arguments'}): {_num(fp.get('users'))} users, "
                     f"{_num(fp.get('items'))} items, {_num(fp.get('ratings'))} ratings; fingerprint `{fp.get('hash')}`")
    lines.append("")

    lines += ["## Chapters", "", "Run time is the notebook's execution by papermill; a chapter executed before "
              "this build was kept because nothing it depends on changed (its notebook, parameters, data, "
              "the package or the dependency versions).", ""]
    rows = []
    several = len(packages) > 1  # chapters executed under different package sources: say which
    for stem, r in records.items():
        params = r.get("parameters") or {}
        seeds = ", ".join(f"{k}={v!r}" for k, v in params.items() if "seed" in k) or "—"
        when = str(r.get("executed_at", "?")).replace("T", " ").rstrip("Z")[:16]
        row = [stem, when, f"{_num(r.get('seconds'))} s", seeds,
               ", ".join(d.split("_")[0] for d in r.get("depends") or {}) or "—"]
        rows.append(row + ([f"`{str(r.get('package', '?'))[:12]}`"] if several else []))
    lines += _table(["chapter", "executed (UTC)", "run time", "seeds", "reads"] + (["package"] if several else []),
                    rows)
    total = sum(float(r.get("seconds") or 0) for r in records.values())
    lines += [f"Total execution time of the chapters: {total:,.0f} s.", ""]
    for stem, r in records.items():
        lines += [f"### {stem}", ""]
        lines += _table(["parameter", "value"], [(f"`{k}`", _cell(v)) for k, v in (r.get("parameters") or {}).items()])

    versions: dict[str, set] = {}
    for r in records.values():
        for name, v in (r.get("versions") or {}).items():
            versions.setdefault(name, set()).add(v)
    lines += ["## Software", "", "Versions the chapters were executed with (every runtime dependency "
              "recmetrics declares; from the installed packages' metadata).", ""]
    lines += _table(["package", "version"], [(n, ", ".join(sorted(v))) for n, v in
                                            sorted(versions.items(), key=lambda kv: (kv[0] != "python", kv[0].lower()))])
    if vendored and vendored.get("versions"):
        lines += ["JavaScript vendored into this site (so it renders offline):", ""]
        lines += _table(["package", "version"], sorted(vendored["versions"].items()))

    lines += ["## Benchmarks", "",
              f"The timings of the benchmarks ({len(benchmarks or [])} recorded tables: the book's builds, the "
              "metrics against pytrec_eval, ranx, ir_measures and trec_eval, the meta-evaluation) are on the "
              "Guide's [performance page](../guide/performance), with the machine each ran on.", ""]
    return "\n".join(lines)


def write_appendix(generated_dir: str | os.PathLike, stems: Iterable[str] | None = None, *,
                   vendored: Mapping[str, Any] | None = None,
                   benchmarks_dir: str | os.PathLike | None = None) -> Path:
    """Write ``generated/appendix.md`` for the executed chapters ``stems`` (default: all there)."""
    generated = Path(generated_dir)
    page = generated / f"{APPENDIX}.md"
    text = appendix_markdown(chapter_records(generated, stems), vendored=vendored,
                             benchmarks=benchmark_tables(benchmarks_dir))
    page.write_text(text, encoding="utf-8")
    return page


__all__ = ["APPENDIX", "RECORD_KEY", "appendix_markdown", "benchmark_tables", "built_with", "chapter_records",
           "command_line", "git_commit", "write_appendix"]
