"""Execute the notebooks with papermill: only what changed, in dependency order, never over a good chapter.

:func:`execute_plan` walks a :class:`~recmetrics.report.plan.Plan` (chapters in dependency order,
each with its content key): a chapter whose executed copy in ``generated/`` carries the same key
is kept as it is; the others are executed by :func:`execute_notebook` into
``generated/.running/``, made offline (vendored ``vegaEmbed``), given their parameters table and
their record (:mod:`.state`), and only then moved into place. A chapter that fails is moved to
``generated/.failed/`` instead, so the last good chapter is never overwritten; the attempt is
logged for :func:`~recmetrics.report.state.stale_chapters`. A progress bar (tqdm, on stderr)
counts the chapters.

Each kernel inherits ``RECMETRICS_FINDINGS_DIR`` (where :func:`recmetrics.meta.findings.save`
writes the chapter's claims table, and :func:`recmetrics.report.results.save` its result tables
beside it) and ``RECMETRICS_META_RESULTS`` (the meta-evaluation tables, e.g. those chapter 4's
guide reads from chapters 5-7): scratch folders, committed under the chapter's key by
:mod:`.outputs` just before the executed notebook replaces the old one. Before a chapter runs its
attempt is logged as ``running``, so a build killed in any way (SIGKILL included) leaves a record
that :func:`~recmetrics.report.state.stale_chapters` refuses, never a chapter shown as fresh.

The executed notebooks carry no path of the building machine: papermill's ``input_path`` and
``output_path`` are stored relative to the notebook folders (:func:`relative_paths`).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from .findings_page import write_findings_page
from .kernel import kernel_arguments
from . import outputs
from .offline import offline_outputs
from .paths import ReportError, _log_default, repo_root
from .profiles import hide_default_parameters, show_parameters
from .state import RECORD_KEY, now, read_record, record_attempt

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _one_line(text: Any, limit: int = 300) -> str:
    text = " ".join(_ANSI.sub("", str(text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def execute_notebook(
    source: str | os.PathLike,
    target: str | os.PathLike,
    parameters: Mapping[str, Any],
    *,
    kernel_name: str | None = None,
    timeout: float | None = None,
    cwd: str | os.PathLike | None = None,
    offline: bool = True,
    shown_parameters: Mapping[str, Any] | None = None,
    record: Mapping[str, Any] | None = None,
    log: Callable[[str], None] | None = _log_default,
    before_replace: Callable[[], None] | None = None,
) -> Path:
    """Execute one notebook with papermill (widget state stored) and make its charts offline.

    The notebook runs into ``<target folder>/.running/`` and replaces ``target`` only when every
    cell succeeded. ``shown_parameters`` (every declared parameter with its executed value) is
    shown as a Markdown table under the chapter's title; ``record`` is stored in the notebook's
    metadata (``metadata.recmetrics``, with ``executed_at`` and ``seconds`` added).
    ``before_replace`` is called once the chapter completed, just before it replaces ``target``
    (the report commits the chapter's other outputs there, :mod:`.outputs`).
    Raises :class:`ReportError` naming the failed cell (the partial notebook is kept in
    ``<target folder>/.failed/``; ``target`` is untouched); ``KeyboardInterrupt`` leaves ``target``
    untouched too. Tracebacks that a cell only *printed* (the cell still succeeded) are logged as
    warnings, naming the cell.
    """
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    source, target = Path(source), Path(target)
    running = target.parent / ".running" / target.name
    running.parent.mkdir(parents=True, exist_ok=True)
    running.unlink(missing_ok=True)
    started, t0 = now(), time.perf_counter()
    try:
        papermill.execute_notebook(
            str(source),
            str(running),
            parameters=dict(parameters),
            kernel_name=kernel_name,
            cwd=str(cwd or source.parent),
            progress_bar=False,
            log_output=False,
            request_save_on_cell_execute=False,
            execution_timeout=timeout,
            store_widget_state=True,
            # quiet kernel start-up; pandas shows whole tables in the book (see .kernel)
            extra_arguments=kernel_arguments(),
        )
    except KeyboardInterrupt:
        running.unlink(missing_ok=True)
        raise
    except PapermillExecutionError as exc:
        if exc.ename == "KeyboardInterrupt":  # Ctrl-C reached the kernel first
            running.unlink(missing_ok=True)
            raise KeyboardInterrupt from None
        kept = _keep_failed(running)
        raise ReportError(f"notebook {source.name} failed in cell {exc.cell_index} (In [{exc.exec_count}]): "
                          f"{exc.ename}: {_one_line(exc.evalue)}; the partially executed notebook is {kept}"
                          ) from None
    except Exception as exc:  # kernel died, timeout, unreadable notebook, ...
        kept = _keep_failed(running)
        raise ReportError(f"notebook {source.name} could not be executed: {type(exc).__name__}: "
                          f"{_one_line(exc)}" + (f"; the partially executed notebook is {kept}" if kept else "")
                          ) from None
    seconds = time.perf_counter() - t0
    nb = nbformat.read(str(running), as_version=4)
    for warning in printed_tracebacks(nb):
        (log or (lambda msg: None))(f"WARNING {source.name}: {warning}")
    if offline:
        offline_outputs(nb)
        hide_default_parameters(nb)
    if shown_parameters is not None:
        show_parameters(nb, shown_parameters)
    if record is not None:
        nb.metadata[RECORD_KEY] = {**record, "executed_at": started, "seconds": round(seconds, 1)}
    relative_paths(nb, source, target)
    nbformat.write(nb, str(running))
    target.parent.mkdir(parents=True, exist_ok=True)
    if before_replace is not None:
        before_replace()
    os.replace(running, target)
    return target


def relative_paths(nb, source: Path, target: Path) -> None:
    """papermill's ``input_path`` and ``output_path`` (absolute paths of the building machine,
    published in the book's downloadable notebooks) made relative: the source notebook relative
    to the checkout (``notebooks/runs/01_systems.ipynb``) or its name, the output its name."""
    meta = nb.metadata.get("papermill")
    if not isinstance(meta, dict):
        return
    try:
        src = Path(source).resolve().relative_to(repo_root()).as_posix()
    except ValueError:
        src = Path(source).name
    meta["input_path"], meta["output_path"] = src, Path(target).name


def _keep_failed(running: Path) -> Path | None:
    if not running.exists():
        return None
    failed = running.parent.parent / ".failed" / running.name
    failed.parent.mkdir(parents=True, exist_ok=True)
    os.replace(running, failed)
    return failed


def printed_tracebacks(nb) -> list[str]:
    """Cells of an executed notebook whose outputs show a Python traceback (one line each)."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            if not text and out.get("output_type") in ("display_data", "execute_result"):
                text = out.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            if "Traceback (most recent call last)" in text or (
                out.get("output_type") == "error"
            ):
                last = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines() if ln.strip()]
                found.append(f"cell {i} printed a traceback: {last[-1] if last else out.get('ename', '?')}")
                break
    return found


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    """Set environment variables (inherited by the kernels started inside), restored afterwards."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def remove_orphans(generated: Path, stems: set[str]) -> None:
    """Executed notebooks, findings and outputs whose source notebook is gone (the book never shows them)."""
    for stale in generated.glob("*.ipynb"):
        if stale.stem not in stems:
            stale.unlink()
    for stale in (generated / "findings").glob("*.json"):
        if stale.stem not in stems:
            stale.unlink()
    outputs.remove_orphans(generated, stems)


def execute_plan(
    plan,
    *,
    force: bool = False,
    kernel_name: str | None = None,
    timeout: float | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = _log_default,
    findings_page: bool = True,
) -> list[Path]:
    """Execute the chapters of ``plan`` that changed (all with ``force``); return every chapter's path.

    Stops at the first failure (:class:`ReportError`, after logging the attempt); chapters already
    executed in this call stay in place. ``progress``: a tqdm bar over the chapters on stderr.
    """
    log = log or (lambda msg: None)
    out_dir = plan.generated_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    findings_dir = out_dir / "findings"
    findings_dir.mkdir(exist_ok=True)
    # the running chapter's findings, results (recmetrics.report.results) and meta tables go to
    # scratch folders, committed into generated/ under its key only when it completed (.outputs)
    scratch = out_dir / ".running" / "findings"
    scratch_results = scratch.parent / "results"
    scratch_meta = scratch.parent / "meta"
    remove_orphans(out_dir, set(plan.keys) or {c.stem for c in plan.chapters})
    outputs.remove_unkeyed(out_dir)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        # disable=None: no bar when stderr is not a terminal (a log file gets the lines only)
        bar = tqdm(total=len(plan.chapters), desc="chapters", unit="notebook", file=sys.stderr, leave=True,
                   disable=None)
        say = log

        def log(msg: str, _say=say) -> None:  # noqa: F811 - messages above the bar, not through it
            with tqdm.external_write_mode(file=sys.stderr):
                _say(msg)
    done: list[Path] = []
    current = None
    commit = None
    try:
        for chapter in plan.chapters:
            current = chapter
            target = out_dir / f"{chapter.stem}.ipynb"
            if bar is not None:
                bar.set_postfix_str(chapter.stem)
            old = read_record(target) if target.exists() else None
            if (not force and old is not None and old.get("key") == chapter.key
                    and outputs.outputs_key(out_dir, chapter.stem) == chapter.key):
                log(f"{chapter.source.name}: unchanged (notebook, parameters, data and package), kept")
                record_attempt(out_dir, chapter.stem, "ok", key=chapter.key, settings=plan.settings)
                done.append(target)
                if bar is not None:
                    bar.update(1)
                continue
            shown = {k: v for k, v in chapter.parameters.items() if k != "scheduler"}
            log(f"executing {chapter.source.name} with {shown}" + (
                f" on the Dask cluster {plan.scheduler}" if plan.scheduler and "scheduler" in chapter.parameters else ""))
            if commit is None:
                from .appendix import git_commit

                commit = git_commit()
            for folder in (scratch, scratch_results, scratch_meta):
                if folder.exists():
                    shutil.rmtree(folder)
            scratch.mkdir(parents=True)
            reads = {d: plan.keys.get(d) for d in chapter.depends}
            foreign = [d for d, k in reads.items() if outputs.outputs_key(out_dir, d) != k]
            if foreign:
                raise ReportError(f"chapter {chapter.stem} reads the outputs of {', '.join(foreign)}, and those in "
                                  f"{out_dir.name}/ are not this build's; build without `only` (or include them)")
            seeded = outputs.seed_inputs(out_dir, reads, scratch_meta)
            settings = {**plan.settings, "overrides": dict(chapter.overrides)}
            record = {"key": chapter.key, "settings": settings, "parameters": chapter.shown,
                      "depends": {d: plan.keys.get(d) for d in chapter.depends},
                      "datasets": {n: fp for n, fp in plan.fingerprints.items()
                                   if n == plan.dataset or n in _named(chapter.shown)},
                      "package": plan.package, "versions": plan.versions, "commit": commit,
                      "scheduler": plan.scheduler if "scheduler" in chapter.parameters else None}
            def commit_outputs(stem=chapter.stem, key=chapter.key, seeded=seeded):
                (findings_dir / f"{stem}.json").unlink(missing_ok=True)
                outputs.commit(out_dir, stem, key, meta=scratch_meta, findings=scratch, results=scratch_results,
                               seeded=seeded)

            record_attempt(out_dir, chapter.stem, "running", key=chapter.key, settings=plan.settings)
            # the chapter's key and its dependencies' keys: tables shared between chapters
            # (recmetrics.report.shared) are read only under the keys of this plan
            with _environ(RECMETRICS_FINDINGS_DIR=str(scratch.resolve()),
                          RECMETRICS_META_RESULTS=str(scratch_meta.resolve()),
                          RECMETRICS_RESULTS_DIR=str((out_dir / "results").resolve()),
                          RECMETRICS_CHAPTER=chapter.stem, RECMETRICS_CHAPTER_KEY=chapter.key,
                          RECMETRICS_DEPENDS=json.dumps(reads)):
                try:
                    path = execute_notebook(chapter.source, target, chapter.parameters, kernel_name=kernel_name,
                                            timeout=timeout, shown_parameters=chapter.shown, record=record, log=log,
                                            cwd=chapter.cwd, before_replace=commit_outputs)
                except ReportError as exc:
                    record_attempt(out_dir, chapter.stem, "failed", key=chapter.key, message=_one_line(exc, 200),
                                   settings=plan.settings)
                    raise
            record_attempt(out_dir, chapter.stem, "ok", key=chapter.key, settings=plan.settings)
            seconds = read_record(path).get("seconds", 0.0)
            log(f"executed {chapter.source.name} in {seconds:.1f}s")
            done.append(path)
            if bar is not None:
                bar.update(1)
        current = None
    except KeyboardInterrupt:
        if current is not None:
            record_attempt(out_dir, current.stem, "interrupted", key=current.key, settings=plan.settings)
        raise
    finally:
        if bar is not None:
            bar.close()
        for folder in (scratch, scratch_results, scratch_meta):
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            scratch.parent.rmdir()  # .running/, when nothing else is in it
    if findings_page:
        write_findings_page(out_dir)
    return done


def _named(shown: Mapping[str, Any]) -> set[str]:
    from .plan import dataset_names

    return set(dataset_names(shown))


def execute_notebooks(
    profile: str = "quick",
    dataset: str = "movielens-small",
    *,
    notebooks_dir: str | os.PathLike | None = None,
    generated_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    kernel_name: str | None = None,
    timeout: float | None = None,
    dataset_args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = False,
    log: Callable[[str], None] | None = _log_default,
) -> list[Path]:
    """Execute the notebooks of ``notebooks_dir`` into ``generated_dir`` (default
    ``book/generated``); return their paths. Arguments as :func:`recmetrics.report.plan.make_plan`
    (validated before anything runs) and :func:`execute_plan`. ``only``: notebook stems (or file
    names) to run. Executed notebooks that no longer have a source are removed from
    ``generated_dir`` so the book never shows a stale chapter.
    """
    from .plan import make_plan

    plan = make_plan(profile, dataset, dataset_args=dataset_args, overrides=overrides, scheduler=scheduler,
                     notebooks_dir=notebooks_dir, generated_dir=generated_dir, only=only, kernel_name=kernel_name)
    return execute_plan(plan, force=force, kernel_name=kernel_name, timeout=timeout, progress=progress, log=log)
