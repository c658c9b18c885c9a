"""Execute the notebooks with papermill: only what changed, in dependency order, never over a good chapter.

:func:`execute_plan` walks a :class:`~recmetrics.report.plan.Plan` (chapters in dependency order,
each with its content key): a chapter whose executed copy in ``generated/`` carries the same key
is kept as it is; the others are executed by :func:`execute_notebook` into
``generated/.running/``, made offline (vendored ``vegaEmbed``), given their parameters table and
their record (:mod:`.state`), and only then moved into place. A chapter that fails is moved to
``generated/.failed/`` instead, so the last good chapter is never overwritten; the attempt is
logged for :func:`~recmetrics.report.state.stale_chapters`. A progress bar (tqdm, on stderr)
counts the chapters.

Independent chapters run side by side (``jobs``, default the cores: :func:`.profiles.default_jobs`), each
in a thread of this process with a kernel of its own; a chapter starts once the chapters it reads
completed. Each kernel gets, in its own environment (:func:`.kernel.kernel_manager`; this
process's ``os.environ`` is never changed), ``RECMETRICS_FINDINGS_DIR`` (where :func:`recmetrics.meta.findings.save`
writes the chapter's claims table, and :func:`recmetrics.report.results.save` its result tables
beside it) and ``RECMETRICS_META_RESULTS`` (the meta-evaluation tables, e.g. those chapter 4's
guide reads from chapters 5-7): scratch folders of the chapter (``generated/.running/<chapter>/``), committed under the chapter's key by
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
from typing import Any, Callable, Iterable, Mapping, Sequence

from .findings_page import write_findings_page
from .kernel import (Watchdog, chapter_limit, end_kernel, kernel_arguments, kernel_env, kernel_manager,
                     stop_kernel)
from . import kernel_server, outputs
from .offline import offline_outputs
from .paths import ReportError, _log_default, sources_root
from .profiles import default_jobs, hide_default_parameters, show_parameters
from .state import RECORD_KEY, STATE_FILE, now, read_record, record_attempt

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
    env: Mapping[str, str] | None = None,
    started: Callable[[Any], None] | None = None,
    limit: float | None = None,
    server: Any = None,
) -> Path:
    """Execute one notebook with papermill (widget state stored) and make its charts offline.

    The notebook runs into ``<target folder>/.running/`` and replaces ``target`` only when every
    cell succeeded. ``shown_parameters`` (every declared parameter with its executed value) is
    shown as a Markdown table under the chapter's title; ``record`` is stored in the notebook's
    metadata (``metadata.recmetrics``, with ``executed_at`` and ``seconds`` added).
    ``before_replace`` is called once the chapter completed, just before it replaces ``target``
    (the report commits the chapter's other outputs there, :mod:`.outputs`). ``env``: variables
    added to the kernel's environment and ``cwd`` its working folder (default ``target``'s folder, so what
    a notebook writes beside itself goes where its output was asked to, not beside its source; this
    process's environment and working folder are left alone, so chapters can run in threads beside
    each other); ``started(manager)`` is called with its kernel manager once the kernel runs
    (:func:`.kernel.kernel_manager`). A :class:`.kernel.Watchdog` stops the kernel when the notebook
    runs past ``limit`` seconds (``None``: no limit) or the kernel stops answering; what the kernel
    started ends with it. ``server``: a :class:`.kernel_server.KernelServer` that forks the kernel when it can.
    Raises :class:`ReportError` naming the failed cell (the partial notebook is kept in
    ``<target folder>/.failed/``; ``target`` is untouched); ``KeyboardInterrupt`` leaves ``target``
    untouched too. Tracebacks that a cell only *printed* (the cell still succeeded) are logged as
    warnings, naming the cell.
    """
    import nbformat
    import papermill

    source, target = Path(source).absolute(), Path(target).absolute()
    running = target.parent / ".running" / target.name
    running.parent.mkdir(parents=True, exist_ok=True)
    running.unlink(missing_ok=True)
    started_at, t0 = now(), time.perf_counter()
    for attempt in (1, 2):   # a kernel that went idle without replying (a lost message) is run once more
        dog, managers = Watchdog(limit), []

        def on_start(manager, dog=dog, managers=managers) -> None:
            managers.append(manager)
            dog.attach(manager)
            if started is not None:
                started(manager)

        # the kernel starts in `cwd` (its manager says so); papermill's own `cwd` would change this
        # process's working folder while the chapter runs, under every other thread of the build
        manager = {"kernel_manager_class": kernel_manager(env or {}, on_start,
                                                          cwd=Path(cwd or target.parent).absolute(), server=server)}
        try:
            with dog:
                papermill.execute_notebook(
                    str(source),
                    str(running),
                    parameters=dict(parameters),
                    kernel_name=kernel_name,
                    progress_bar=False,
                    log_output=False,
                    request_save_on_cell_execute=False,
                    execution_timeout=timeout,
                    store_widget_state=True,
                    # quiet kernel start-up; pandas shows whole tables in the book (see .kernel)
                    extra_arguments=kernel_arguments(),
                    **manager,
                )
            break
        except KeyboardInterrupt:
            running.unlink(missing_ok=True)
            raise
        except Exception as exc:
            stopped = dog.reason
            if stopped is None:
                _raise_failed(exc, source, running)
            if dog.stalled and attempt == 1:
                (log or (lambda msg: None))(f"WARNING {source.name} was stopped: {stopped}; executing it again")
                running.unlink(missing_ok=True)
                continue
            kept = _keep_failed(running)
            raise ReportError(f"notebook {source.name} was stopped: {stopped}" + (
                f"; the partially executed notebook is {kept}" if kept else "")) from None
        finally:
            for m in managers:
                end_kernel(m)
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
        nb.metadata[RECORD_KEY] = {**record, "executed_at": started_at, "seconds": round(seconds, 1)}
    relative_paths(nb, source, target)
    nbformat.write(nb, str(running))
    target.parent.mkdir(parents=True, exist_ok=True)
    if before_replace is not None:
        before_replace()
    os.replace(running, target)
    return target


def _raise_failed(exc: Exception, source: Path, running: Path) -> None:
    """The :class:`ReportError` of a notebook whose execution raised ``exc`` (``KeyboardInterrupt``
    when Ctrl-C reached the kernel first); the partial notebook is kept in ``.failed/``."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        if exc.ename == "KeyboardInterrupt":  # Ctrl-C reached the kernel first
            running.unlink(missing_ok=True)
            raise KeyboardInterrupt from None
        kept = _keep_failed(running)
        raise ReportError(f"notebook {source.name} failed in cell {exc.cell_index} (In [{exc.exec_count}]): "
                          f"{exc.ename}: {_one_line(exc.evalue)}; the partially executed notebook is {kept}"
                          ) from None
    kept = _keep_failed(running)   # kernel died, timeout of a cell, unreadable notebook, ...
    raise ReportError(f"notebook {source.name} could not be executed: {type(exc).__name__}: "
                      f"{_one_line(exc)}" + (f"; the partially executed notebook is {kept}" if kept else "")
                      ) from None


def relative_paths(nb, source: Path, target: Path) -> None:
    """papermill's ``input_path`` and ``output_path`` (absolute paths of the building machine,
    published in the book's downloadable notebooks) made relative: the source notebook relative
    to the folder of the report's sources (``notebooks/runs/01_systems.ipynb``) or its name, the
    output its name."""
    meta = nb.metadata.get("papermill")
    if not isinstance(meta, dict):
        return
    try:
        src = Path(source).resolve().relative_to(sources_root().resolve()).as_posix()
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


def remove_orphans(generated: Path, stems: set[str]) -> None:
    """Executed notebooks, findings and outputs whose source notebook is gone (the book never shows them)."""
    for stale in generated.glob("*.ipynb"):
        if stale.stem not in stems:
            stale.unlink()
    for stale in (generated / "findings").glob("*.json"):
        if stale.stem not in stems:
            stale.unlink()
    outputs.remove_orphans(generated, stems)


def expected_seconds(plan, old: Mapping[str, Mapping[str, Any] | None]) -> dict[str, float]:
    """``{stem: seconds}`` a chapter of ``plan`` is expected to take: its last record in ``old``
    (``{stem: record}``) when it ran under this profile and dataset, else
    :data:`~.profiles.EXPECTED_SECONDS` of the profile; chapters with neither are left out."""
    from .profiles import EXPECTED_SECONDS

    hints = EXPECTED_SECONDS.get(plan.profile, {})
    out = {}
    for c in plan.chapters:
        rec = old.get(c.stem) or {}
        same = all((rec.get("settings") or {}).get(k) == plan.settings.get(k) for k in ("profile", "dataset"))
        seconds = rec.get("seconds") if same else None
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
            out[c.stem] = float(seconds)
        elif c.stem in hints:
            out[c.stem] = float(hints[c.stem])
    return out


def start_order(plan, old: Mapping[str, Mapping[str, Any] | None]) -> Callable[[Any], tuple]:
    """The sort key of ready chapters when several run at once: the longest *critical path* first —
    a chapter's expected seconds plus the longest chain of chapters that read it, after it — then
    ``plan``'s order. Expected seconds: the chapter's last record in ``old`` (``{stem: record}``)
    when it ran under this profile and dataset, else :data:`~.profiles.EXPECTED_SECONDS` of the
    profile, else 60. A reader that may start beside a chapter (``Chapter.late``) adds nothing to its
    chain but ends after it: the chapter's path is at least the reader's. (:func:`execute_plan`
    starts such a reader beside the chapter once it would not wait for it, or when no other chapter
    is ready: :func:`ready_chapters`.)"""
    known = expected_seconds(plan, old)

    def expected(stem: str) -> float:
        return known.get(stem, 60.0)

    readers = {c.stem: [r for r in plan.chapters if c.stem in r.depends] for c in plan.chapters}
    chain: dict[str, float] = {}
    for c in reversed(plan.chapters):            # readers come later in plan order
        after = [chain[r.stem] for r in readers[c.stem] if c.stem not in getattr(r, "late", ())]
        beside = [chain[r.stem] for r in readers[c.stem] if c.stem in getattr(r, "late", ())]   # with it, ending after
        chain[c.stem] = max(expected(c.stem) + max(after, default=0.0), max(beside, default=0.0))
    index = {c.stem: i for i, c in enumerate(plan.chapters)}
    return lambda chapter: (-chain[chapter.stem], index[chapter.stem])


def ready_chapters(pending: Sequence, done, started, planned, left: Mapping[str, float] | None = None,
                   expected: Mapping[str, float] | None = None) -> list:
    """The chapters of ``pending`` (in start order) that may start now: after the chapters they read
    (``depends``, those of ``planned``) are ``done``, or beside those they read late (``late``) once
    these ``started``. One started beside a chapter it reads late works on what it can compute alone,
    then holds its core while it waits for the tables: it would wait when the chapter it reads has
    more seconds ``left`` (expected, of each running chapter) than the reader is ``expected`` to run
    in all (default 60 s), and always when these are not given. Such a reader comes after every
    chapter that can start without waiting; the start order is kept otherwise — so a long reader
    starts beside its producer's last stretch instead of after it, alone on one core."""
    ready = [c for c in pending
             if all(d in done or (d in c.late and d in started) for d in c.depends if d in planned)]

    def would_wait(c) -> bool:
        ahead = [d for d in c.depends if d in planned and d not in done]
        if left is None or expected is None:
            return bool(ahead)
        return any(left.get(d, float("inf")) > expected.get(c.stem, 60.0) for d in ahead)

    return sorted(ready, key=would_wait)


def kernels_env(jobs: int, chapters: int) -> dict[str, str]:
    """The environment of the kernels when ``chapters`` chapters are to run ``jobs`` at once: this
    process's with the variables the build sets for them (:func:`.kernel.kernel_env`)."""
    return {**os.environ, **kernel_env(min(jobs, chapters))}


def execute_plan(
    plan,
    *,
    force: bool = False,
    kernel_name: str | None = None,
    timeout: float | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = _log_default,
    findings_page: bool = True,
    jobs: int | None = None,
    server: Any = None,
    spare: Callable[[], None] | None = None,
) -> list[Path]:
    """Execute the chapters of ``plan`` that changed (all with ``force``); return every chapter's path.

    ``jobs`` chapters run at once (default :func:`.profiles.default_jobs`), each as soon as the chapters it
    reads completed (``plan``'s dependencies), the longest critical path first (:func:`start_order`); each has its own
    scratch folders and kernel environment, so what a chapter computes does not depend on what runs
    beside it. On the first failure no chapter is started any more; those running finish, then the
    :class:`ReportError` is raised (after logging the attempt); chapters already executed stay in
    place. Ctrl-C stops every running kernel, logs those chapters as interrupted and re-raises. Each
    chapter runs under a time limit derived from its recorded time (:func:`.kernel.chapter_limit`), and
    a kernel that stops answering is stopped (:class:`.kernel.Watchdog`): the chapter then fails
    naming itself and why, never a silent wait.
    ``progress``: a tqdm bar over the chapters on stderr. ``server``: a
    :class:`.kernel_server.KernelServer` the caller started earlier (and closes), used when it has the
    kernels' environment (:func:`kernels_env`); otherwise the build starts one of its own. ``spare``:
    called once, as soon as every chapter has started and a slot is free (the chapters' tail, where a
    core is free: the build starts its Sphinx child there, :class:`.site.SphinxChild`), or else when
    the chapters have all succeeded.
    """
    import threading
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ReportError(f"jobs must be a whole number of chapters at once, at least 1; got {jobs!r}")
    log = log or (lambda msg: None)
    out_dir = plan.generated_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    findings_dir = out_dir / "findings"
    findings_dir.mkdir(exist_ok=True)
    running_dir = out_dir / ".running"
    remove_orphans(out_dir, set(plan.keys) or {c.stem for c in plan.chapters})
    outputs.remove_unkeyed(out_dir)
    guard = threading.RLock()   # the state file, the log and the bar: one writer at a time
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

    def note(stem: str, status: str, key: str | None, message: str = "") -> None:
        with guard:
            record_attempt(out_dir, stem, status, key=key, message=message, settings=plan.settings)

    def said(msg: str) -> None:
        with guard:
            log(msg)

    def finished(path: Path) -> None:
        with guard:
            done[path.stem] = path
            if bar is not None:
                bar.update(1)

    done: dict[str, Path] = {}
    todo = []
    records = {}
    for chapter in plan.chapters:
        target = out_dir / f"{chapter.stem}.ipynb"
        old = records[chapter.stem] = read_record(target) if target.exists() else None
        if (not force and old is not None and old.get("key") == chapter.key
                and outputs.outputs_key(out_dir, chapter.stem) == chapter.key):
            said(f"{chapter.source.name}: unchanged (notebook, parameters, data and package), kept")
            note(chapter.stem, "ok", chapter.key)
            finished(target)
        else:
            todo.append(chapter)
    commit = None
    if todo:
        from .appendix import git_commit

        commit = git_commit()
    kernels: dict[str, Any] = {}
    stopping = threading.Event()

    def kernel_started(manager, stem: str) -> None:   # a kernel started after Ctrl-C is stopped at once
        kernels[stem] = manager
        if stopping.is_set():
            stop_kernel(manager)

    def starting(chapter) -> None:   # in this thread, so the log's order is the plan's
        shown = {k: v for k, v in chapter.parameters.items() if k != "scheduler"}
        said(f"executing {chapter.source.name} with {shown}" + (
            f" on the Dask cluster {plan.scheduler}" if plan.scheduler and "scheduler" in chapter.parameters else ""))

    expected = expected_seconds(plan, records)
    limits = {stem: chapter_limit(t) for stem, t in expected.items()}
    kernel_vars = kernel_env(min(jobs, len(todo)))   # the cores shared among the kernels at once; the allocator
    own, environ = None, kernels_env(jobs, len(todo))   # a server of this build's own when the caller's does not fit
    if todo and (server is None or not server.has_env(environ)):
        server = own = kernel_server.start(environ)

    def run(chapter) -> Path:
        limit = limits.get(chapter.stem) or chapter_limit(None)
        path = _execute_chapter(plan, chapter, running_dir / chapter.stem, commit=commit, kernel_name=kernel_name,
                                timeout=timeout, log=said, note=note, limit=limit, kernel_vars=kernel_vars, server=server,
                                started=lambda manager, stem=chapter.stem: kernel_started(manager, stem),
                                late=[d for d in chapter.late if d in executing])
        finished(path)
        return path

    planned = {c.stem for c in plan.chapters}
    started: set[str] = set()
    began: dict[str, float] = {}   # when each running chapter started (time.monotonic)
    executing = {c.stem for c in todo}   # a late read waits only for these (the others committed already)
    pending = sorted(todo, key=start_order(plan, records)) if jobs > 1 else list(todo)
    active: dict[Any, Any] = {}
    failure: BaseException | None = None
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="chapter") if jobs > 1 and len(todo) > 1 else None
    try:
        while pending or active:
            if spare is not None and pool is not None and not pending and len(active) < jobs:
                spare()   # every chapter started and a slot free
                spare = None
            # a chapter starts after the chapters it reads, or beside those it reads late once they started
            now = time.monotonic()
            left = {c.stem: max(0.0, expected.get(c.stem, 60.0) - (now - began[c.stem]))
                    for c in active.values() if c.stem in began}
            ready = ready_chapters(pending, done, started, planned, left, expected) if failure is None else []
            if pool is None:   # one at a time, in this thread (Ctrl-C reaches papermill directly)
                if not ready:
                    break
                chapter = ready[0]
                pending.remove(chapter)
                active[None] = chapter
                starting(chapter)
                run(chapter)
                active.pop(None)
                continue
            if ready and len(active) < jobs:   # one at a time: a chapter reading this one late may be next
                chapter = ready[0]
                pending.remove(chapter)
                starting(chapter)
                started.add(chapter.stem)
                began[chapter.stem] = time.monotonic()
                active[pool.submit(run, chapter)] = chapter
                continue
            if not active:
                break
            finished_now, _ = wait(list(active), return_when=FIRST_COMPLETED)
            for future in finished_now:
                active.pop(future)
                exc = future.exception()
                if exc is not None and failure is None:
                    failure = exc
        if failure is not None:
            raise failure
        if spare is not None:   # no slot was free before the chapters ended (or one at a time)
            spare()
    except KeyboardInterrupt:
        if pool is not None:   # the kernels of the other threads, which Ctrl-C does not reach
            stopping.set()
            for chapter in active.values():
                if chapter.stem in kernels:
                    stop_kernel(kernels[chapter.stem])
            wait(list(active))
        for chapter in active.values():
            if chapter.stem not in done:
                note(chapter.stem, "interrupted", chapter.key)
                (running_dir / f"{chapter.stem}.ipynb").unlink(missing_ok=True)
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if own is not None:
            own.close()
        if bar is not None:
            bar.close()
        if running_dir.is_dir():
            for chapter in todo:
                shutil.rmtree(running_dir / chapter.stem, ignore_errors=True)
            with contextlib.suppress(OSError):
                running_dir.rmdir()  # .running/, when nothing else is in it
    if findings_page:
        write_findings_page(out_dir, plan.keys or {c.stem: c.key for c in plan.chapters})
    return [done[c.stem] for c in plan.chapters if c.stem in done]


def _execute_chapter(plan, chapter, scratch_root: Path, *, commit, kernel_name, timeout, log, note, started,
                     late=(), limit: float | None = None, kernel_vars: Mapping[str, str] | None = None,
                     server=None) -> Path:
    """Execute one chapter of ``plan`` into ``generated/`` (see :func:`execute_plan`): its findings,
    results and meta tables go to scratch folders under ``scratch_root``, committed under its key
    (:mod:`.outputs`) just before the executed notebook replaces the old one. ``late``: the chapters
    it reads that are still executing beside it (it reads their shared tables when they complete,
    :func:`recmetrics.report.shared.shared`)."""
    out_dir = plan.generated_dir
    scratch, scratch_results, scratch_meta = (scratch_root / kind for kind in ("findings", "results", "meta"))
    reads = {d: plan.keys.get(d) for d in chapter.depends}
    now_done = {d: k for d, k in reads.items() if d not in late}
    settings = {**plan.settings, "overrides": dict(chapter.overrides)}
    record = {"key": chapter.key, "settings": settings, "parameters": chapter.shown,
              "depends": {d: plan.keys.get(d) for d in chapter.depends},
              "datasets": {n: fp for n, fp in plan.fingerprints.items()
                           if n == plan.dataset or n in _named(chapter.shown)},
              "package": plan.package, "versions": plan.versions, "commit": commit,
              "scheduler": plan.scheduler if "scheduler" in chapter.parameters else None}
    # the chapter's key and its dependencies' keys: tables shared between chapters
    # (recmetrics.report.shared) are read only under the keys of this plan
    env = {"RECMETRICS_FINDINGS_DIR": str(scratch.resolve()), "RECMETRICS_META_RESULTS": str(scratch_meta.resolve()),
           "RECMETRICS_RESULTS_DIR": str((out_dir / "results").resolve()), "RECMETRICS_CHAPTER": chapter.stem,
           "RECMETRICS_CHAPTER_KEY": chapter.key, "RECMETRICS_DEPENDS": json.dumps(reads),
           "RECMETRICS_READS_LATE": json.dumps(list(late)), "RECMETRICS_STATE": str((out_dir / STATE_FILE).resolve()),
           "RECMETRICS_BUILD_PID": str(os.getpid()), **(kernel_vars or {})}
    # every end of the attempt is logged, from the first step on: a chapter reading this one late stops waiting
    try:
        if scratch_root.exists():
            shutil.rmtree(scratch_root)
        scratch.mkdir(parents=True)
        foreign = [d for d, k in now_done.items() if outputs.outputs_key(out_dir, d) != k]
        if foreign:
            raise ReportError(f"chapter {chapter.stem} reads the outputs of {', '.join(foreign)}, and those in "
                              f"{out_dir.name}/ are not this build's; build without `only` (or include them)")
        seeded = outputs.seed_inputs(out_dir, now_done, scratch_meta)

        def commit_outputs() -> None:
            (out_dir / "findings" / f"{chapter.stem}.json").unlink(missing_ok=True)
            outputs.commit(out_dir, chapter.stem, chapter.key, meta=scratch_meta, findings=scratch,
                           results=scratch_results, seeded=seeded)

        note(chapter.stem, "running", chapter.key)
        path = execute_notebook(chapter.source, out_dir / f"{chapter.stem}.ipynb", chapter.parameters,
                                kernel_name=kernel_name, timeout=timeout, shown_parameters=chapter.shown,
                                record=record, log=log, cwd=chapter.cwd or scratch_root, before_replace=commit_outputs,
                                env=env, started=started, limit=limit, server=server)
    except KeyboardInterrupt:
        note(chapter.stem, "interrupted", chapter.key)
        raise
    except BaseException as exc:
        note(chapter.stem, "failed", chapter.key, _one_line(exc, 200))
        raise
    note(chapter.stem, "ok", chapter.key)
    log(f"executed {chapter.source.name} in {read_record(path).get('seconds', 0.0):.1f}s")
    return path


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
    jobs: int | None = None,
) -> list[Path]:
    """Execute the notebooks of ``notebooks_dir`` into ``generated_dir`` (default ``generated/`` of
    the main book's work folder); return their paths. Arguments as
    :func:`recmetrics.report.plan.make_plan` (validated before anything runs) and :func:`execute_plan` (``jobs``). ``only``: notebook stems (or file
    names) to run. Executed notebooks that no longer have a source are removed from
    ``generated_dir`` so the book never shows a stale chapter.
    """
    from .plan import make_plan

    plan = make_plan(profile, dataset, dataset_args=dataset_args, overrides=overrides, scheduler=scheduler,
                     notebooks_dir=notebooks_dir, generated_dir=generated_dir, only=only, kernel_name=kernel_name)
    return execute_plan(plan, force=force, kernel_name=kernel_name, timeout=timeout, progress=progress, log=log,
                        jobs=jobs)
