"""The whole report (:func:`build`): plan, execute the chapters that changed, build the site
(:func:`~recmetrics.report.site.build_book`), holding the book's lock (:mod:`.lock`) throughout."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import InputError, unknown_name
from .appendix import built_with, chapter_seeds, write_appendix
from . import kernel_server
from .execute import execute_plan, kernels_env, remove_orphans
from .findings_page import findings_glance, write_findings_page
from .kernel import check_settings
from .lock import book_lock, out_lock
from .performance import benchmark_tables, performance_markdown
from .outputs import committed
from .stability import check_seeds
from .offline import external_assets
from .reference_pages import write_reference_pages
from .repository import repository_url
from .site import build_book, sphinx_child
from .paths import (ReportError, _log_default, absolute, default_book_dir, default_notebooks_dir, default_out,
                    main_work_dir)
from .plan import check_dataset, check_out, make_plan
from .profiles import PROFILES, default_jobs
from .state import book_settings, read_record, stale_chapters, stale_message
from .vendor import vendor_js
from .workspace import sync_sources

def build(
    profile: str | None = None,
    dataset: str | None = None,
    out: str | os.PathLike | None = None,
    *,
    dataset_args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    scheduler: str | None = None,
    force: bool = False,
    book_dir: str | os.PathLike | None = None,
    notebooks_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    execute: bool = True,
    kernel_name: str | None = None,
    timeout: float | None = None,
    js_cache: str | os.PathLike | None = None,
    benchmarks_dir: str | os.PathLike | None = None,
    check_offline: bool = True,
    quiet: bool = True,
    progress: bool = False,
    log: Callable[[str], None] | None = _log_default,
    qrels=None,
    runs=None,
    study=None,
    name: str | None = None,
    folds=None,
    threshold: float | None = None,
    jobs: int | None = None,
    seeds: Iterable[int] | None = None,
    repository: str | None = None,
) -> Path:
    """Run the notebooks with ``profile``'s parameters on ``dataset`` and build the book.

    Every argument is checked before any notebook runs (:func:`recmetrics.report.plan.make_plan`:
    profile, dataset and its ``dataset_args``, ``-p`` ``overrides``, ``out``, ``scheduler``).
    A chapter is executed again only when its notebook, parameters, data, the package or the
    dependency versions changed (its content key, :mod:`.cache`), or with ``force``; chapters that
    read others' results run after them (:data:`~recmetrics.report.profiles.DEPENDS`). The book is
    built only when every chapter completed under the same settings
    (:func:`~recmetrics.report.state.stale_chapters`); otherwise :class:`ReportError` names the
    stale chapters. ``execute=False`` builds from the notebooks already in ``generated/``, under
    that same rule (``profile``, ``dataset``, ... when given must match theirs).

    With ``qrels`` and ``runs`` (files, or a ``Qrels`` and ``{name: Run}``), or a ``study``, it
    builds the meta-evaluation book of those runs instead (:func:`recmetrics.report.own_runs.build`:
    ``name``, ``folds``, ``threshold`` as there; ``book_dir`` is that book's source folder;
    ``dataset``, ``notebooks_dir`` and ``only`` do not apply; ``overrides`` are its notebooks'
    ``parameters``).

    ``out``: directory of the HTML site (default ``./recmetrics-book``). Relative paths (``out``,
    ``book_dir``, ``notebooks_dir``, ``js_cache``, ``benchmarks_dir``) mean the current folder's, read
    once here. ``notebooks_dir`` defaults to the package's chapters
    (:func:`~recmetrics.report.paths.default_notebooks_dir`), read only. ``book_dir`` is the folder
    the book is built in: its sources, the executed notebooks (``book_dir/generated/``), the vendored
    JavaScript (``generated/_vendor/``), the reproducibility appendix (``generated/appendix.md``, with
    the benchmark tables of ``benchmarks_dir``, default the package's ``benchmarks/results``) and
    Sphinx's scratch (``_build/``), and with ``seeds`` the other seeds' executed chapters
    (``generated/.seeds/``); by default the main book's work folder in the cache
    (:func:`~recmetrics.report.paths.main_work_dir`), into which the package's book sources are copied
    first: nothing is written into the package or a checkout. ``scheduler``: a Dask scheduler
    address passed to the notebooks that declare ``scheduler``. ``seeds``: a replicated build
    (:func:`~recmetrics.report.stability.check_seeds`): the chapters are executed at each split seed,
    the first being the book's and each other in a work folder of its own that is kept (so an unchanged
    rebuild executes nothing), and the Findings page gives each finding's verdict at every seed and
    over them (:func:`~recmetrics.report.stability.replicated_verdict`). ``jobs``: chapters executed at once (:func:`~recmetrics.report.execute.execute_plan`;
    default the cores, at most 4, and 1 for the own-runs book, whose chapter 3 study runs beside it). ``progress``: a progress bar over the notebooks (stderr). With
    ``check_offline`` (default) the build fails when a page or stylesheet still loads something
    from another host (:func:`external_assets`). ``repository``: the web address every page's
    repository button links to (default: GitHub Actions' repository, else the ``origin`` remote of the
    checkout the package runs from, else no button: :func:`~recmetrics.report.repository.repository_url`).
    Returns the path of the site's ``index.html``.
    """
    if qrels is not None or runs is not None or study is not None:   # the own-runs book
        from .own_runs import build as build_own_runs

        for given, what in ((dataset, "dataset"), (dataset_args, "dataset_args"),
                            (notebooks_dir, "notebooks_dir"), (only, "only"), (seeds, "seeds")):
            if given:
                raise InputError(f"{what} does not apply to the book of your own runs (qrels=/runs=/study=)")
        check_out(out, book_dir)
        return build_own_runs(qrels, runs, out, study=study, name=name, folds=folds, threshold=threshold,
                              profile=profile or "quick", book_dir=book_dir, parameters=overrides,
                              kernel_name=kernel_name, timeout=timeout, js_cache=js_cache,
                              check_offline=check_offline, quiet=quiet, execute=execute, scheduler=scheduler,
                              log=log, jobs=1 if jobs is None else jobs, repository=repository)
    log = log or (lambda msg: None)
    repository = repository_url(repository)
    out, notebooks_dir, js_cache, benchmarks_dir = (absolute(p) if p is not None and str(p) != "" else p
                                                    for p in (out, notebooks_dir, js_cache, benchmarks_dir))
    out = default_out() if out is None else out
    sources = absolute(book_dir) if book_dir else default_book_dir()
    if not (sources / "_config.yml").is_file() or not (sources / "_toc.yml").is_file():
        raise ReportError(f"{sources} is not a Jupyter Book folder (need _config.yml and _toc.yml)")
    book = sources if book_dir else main_work_dir()
    generated = book / "generated"
    seeds = check_seeds(seeds, overrides)
    if seeds and not execute:
        raise InputError("seeds builds the chapters at every seed: it needs the chapters executed (no --no-execute)")
    # a build that executes every chapter starts its kernel server first: its imports overlap the planning
    with kernel_server.running(_early_kernels_env(execute, force, generated, jobs, only)) as server, \
            sphinx_child() as sphinx:
        if execute:  # every argument checked before the lock is taken and anything is written
            check_settings()
            plans = [make_plan(profile or "quick", dataset if dataset is not None else "movielens-small",
                               dataset_args=dataset_args, overrides=dict(overrides or {}, **({} if s is None else {"seed": s})),
                               scheduler=scheduler, notebooks_dir=notebooks_dir, only=only, out=out, book_dir=book,
                               kernel_name=kernel_name,
                               # each further seed executes in a work folder of its own, kept for the next rebuild
                               generated_dir=generated if s is None or s == seeds[0] else generated / ".seeds" / f"seed-{s}")
                     for s in (seeds[1:] + seeds[:1] if seeds else [None])]
            plan = plans[-1]
        else:
            check_out(out, book)
        with book_lock(book, "report"), out_lock(out):
            if not book_dir:
                sync_sources(sources, book)
            replicated = generated / "replicated"
            shutil.rmtree(replicated, ignore_errors=True)   # a replicated build's seeds belong to that build only
            for s, other in zip(seeds[1:], plans[:-1] if seeds else []):
                log(f"replicated build: the chapters at split seed {s}")
                execute_plan(other, force=force, kernel_name=kernel_name, timeout=timeout, progress=progress, log=log,
                             jobs=jobs, server=server)
                (replicated / f"seed-{s}").mkdir(parents=True)
                for name in committed(other.generated_dir, other.keys, "findings"):     # that seed's findings only
                    shutil.copy2(other.generated_dir / "findings" / name, replicated / f"seed-{s}" / name)
            if execute:
                vendored = vendor_js(generated / "_vendor", cache=js_cache, log=log)  # before the notebooks: fails fast
                execute_plan(plan, force=force, kernel_name=kernel_name, timeout=timeout, progress=progress, log=log,
                             jobs=jobs, server=server, spare=sphinx.start)
                if server is not None:   # the chapters ran: the site is built without it
                    server.close()
                stems, expected, keys = list(plan.keys), plan.settings, plan.keys
            else:
                keys = None
                if profile is not None and profile not in PROFILES:
                    raise unknown_name("report profile", str(profile), PROFILES)
                if dataset is not None:
                    dataset = check_dataset(dataset)
                nb_dir = Path(notebooks_dir) if notebooks_dir else default_notebooks_dir()
                stems = sorted(p.stem for p in nb_dir.glob("*.ipynb") if not p.name.startswith((".", "_")))
                if not any(generated.glob("*.ipynb")):
                    raise ReportError(f"no executed notebook in {generated}; run the report without --no-execute first")
                expected = {"profile": profile, "dataset": dataset, "dataset_args": dataset_args, "overrides": overrides}
                stale = stale_chapters(generated, stems, expected)
                if stale:
                    raise ReportError(stale_message(stale))
                remove_orphans(generated, set(stems))
                vendored = vendor_js(generated / "_vendor", cache=js_cache, log=log)
            if execute:
                stale = stale_chapters(generated, stems, expected, keys)
                if stale:  # e.g. a chapter left out by `only` that was executed with other inputs
                    raise ReportError(stale_message(stale))
            recorded = {s: read_record(generated / f"{s}.ipynb") for s in stems}
            records = [r for r in recorded.values() if r]
            built = {s: r["key"] for s, r in recorded.items() if r}
            write_findings_page(generated, built)   # the findings of this book's chapters, under their keys only
            write_reference_pages(generated, built)
            settings = book_settings(records)
            write_appendix(generated, stems, vendored=vendored, benchmarks_dir=benchmarks_dir)
            front = {"built_with": built_with(settings, chapter_seeds(records)),
                     "findings_glance": findings_glance(generated, built),
                     "benchmarks": performance_markdown(benchmark_tables(benchmarks_dir), level=3)}
            index = build_book(book, out, quiet=quiet, log=log, substitutions=front, repository=repository,
                               sphinx=sphinx.proc)
    leaks = external_assets(index.parent) if check_offline else {}
    if leaks:
        raise ReportError(
            "the built pages load assets from other hosts (they would not render offline): "
            + "; ".join(f"{p}: {', '.join(u)}" for p, u in leaks.items())
        )
    return index


def _early_kernels_env(execute: bool, force: bool, generated: Path, jobs: Any,
                       only: Iterable[str] | None) -> dict[str, str] | None:
    """The environment of the kernel server a build starts before making its plan, when it will execute
    every chapter (``force``, or a work folder without an executed chapter); ``None`` otherwise (the
    build then starts one only when a chapter changed, :func:`.execute.execute_plan`). Its kernels'
    thread pools are sized for ``jobs`` chapters at once (fewer with ``only``); a plan that runs fewer
    starts a server of its own."""
    jobs = default_jobs() if jobs is None else jobs
    if not execute or isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        return None
    if not force and any(generated.glob("*.ipynb")):
        return None
    return kernels_env(jobs, len(set(only)) if only else jobs)
