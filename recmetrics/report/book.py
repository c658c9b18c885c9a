"""Build the Jupyter Book site (Sphinx in a subprocess) and the whole report (:func:`build`)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

from ..errors import unknown_name
from .execute import execute_notebooks
from .findings_page import write_findings_page
from .offline import external_assets
from .paths import ReportError, _log_default, default_book_dir
from .profiles import PROFILES
from .vendor import vendor_js

_SPHINX_RUNNER = r"""
import sys
from pathlib import Path
from jupyter_book.sphinx import build_sphinx
src, out, doctrees, quiet = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
result = build_sphinx(
    src, out, doctreedir=doctrees, noconfig=True, path_config=str(src / "_config.yml"),
    confoverrides={"external_toc_path": (src / "_toc.yml").as_posix(), "latex_individualpages": False},
    builder="html", quiet=quiet, keep_going=True,
)
if isinstance(result, BaseException):
    raise result
sys.exit(int(result or 0))
"""


def build_book(
    book_dir: str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    *,
    quiet: bool = True,
    log: Callable[[str], None] | None = _log_default,
) -> Path:
    """Build the HTML site of ``book_dir`` into ``out`` (default ``book_dir/_build/html``).

    Runs jupyter-book's Sphinx build in a subprocess (a clean docutils state each time) with the
    notebooks' execution off; returns the path of ``index.html``.
    """
    log = log or (lambda msg: None)
    book_dir = Path(book_dir) if book_dir else default_book_dir()
    out = Path(out) if out else book_dir / "_build" / "html"
    doctrees = book_dir / "_build" / ".doctrees"  # kept outside the site, whatever `out` is
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _SPHINX_RUNNER, str(book_dir.resolve()), str(out.resolve()),
         str(doctrees.resolve()), "1" if quiet else "0"],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise ReportError(
            f"the book build failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    warnings = [ln for ln in proc.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    for ln in warnings[:20]:
        log(ln)
    index = out / "index.html"
    if not index.exists():
        raise ReportError(f"the book build produced no {index}:\n{proc.stderr[-4000:]}")
    log(f"built the book into {out} in {time.perf_counter() - t0:.1f}s")
    return index


def build(
    profile: str = "quick",
    dataset: str = "movielens-small",
    out: str | os.PathLike | None = None,
    *,
    book_dir: str | os.PathLike | None = None,
    notebooks_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    execute: bool = True,
    kernel_name: str | None = None,
    timeout: float | None = None,
    js_cache: str | os.PathLike | None = None,
    check_offline: bool = True,
    quiet: bool = True,
    log: Callable[[str], None] | None = _log_default,
    qrels=None,
    runs=None,
    study=None,
    name: str | None = None,
    folds=None,
    threshold: float | None = None,
) -> Path:
    """Run the notebooks with ``profile``'s parameters on ``dataset`` and build the book.

    With ``qrels`` and ``runs`` (files, or a ``Qrels`` and ``{name: Run}``), or a ``study``, it
    builds the meta-evaluation book of those runs instead (:func:`recmetrics.report.own_runs.build`:
    ``name``, ``folds``, ``threshold`` as there; ``book_dir`` is that book's source folder;
    ``dataset``, ``notebooks_dir`` and ``only`` do not apply).

    ``out``: directory of the HTML site (default ``book/_build/html``). ``book_dir`` and
    ``notebooks_dir`` default to the checkout's ``book/`` and ``notebooks/``; the executed
    notebooks go to ``book_dir/generated/`` and the vendored JavaScript to
    ``book_dir/generated/_vendor/``. ``execute=False`` rebuilds the book from the notebooks
    already in ``generated/``. With ``check_offline`` (default) the build fails when a page or
    stylesheet still loads something from another host (:func:`external_assets`). Returns the
    path of the site's ``index.html``.
    """
    if qrels is not None or runs is not None or study is not None:   # the own-runs book
        from .own_runs import build as build_own_runs

        return build_own_runs(qrels, runs, out, study=study, name=name, folds=folds, threshold=threshold,
                              profile=profile, book_dir=book_dir, kernel_name=kernel_name, timeout=timeout,
                              js_cache=js_cache, check_offline=check_offline, quiet=quiet, execute=execute, log=log)
    if profile not in PROFILES:
        raise unknown_name("report profile", profile, PROFILES)
    log = log or (lambda msg: None)
    book = Path(book_dir) if book_dir else default_book_dir()
    if not (book / "_config.yml").is_file() or not (book / "_toc.yml").is_file():
        raise ReportError(f"{book} is not a Jupyter Book folder (need _config.yml and _toc.yml)")
    generated = book / "generated"
    if execute:
        execute_notebooks(profile, dataset, notebooks_dir=notebooks_dir, generated_dir=generated,
                          only=only, kernel_name=kernel_name, timeout=timeout, log=log)
    elif not any(generated.glob("*.ipynb")):
        raise ReportError(f"no executed notebook in {generated}; run with execute=True first")
    else:
        write_findings_page(generated)
    vendor_js(generated / "_vendor", cache=js_cache, log=log)
    index = build_book(book, out, quiet=quiet, log=log)
    leaks = external_assets(index.parent) if check_offline else {}
    if leaks:
        raise ReportError(
            "the built pages load assets from other hosts (they would not render offline): "
            + "; ".join(f"{p}: {', '.join(u)}" for p, u in leaks.items())
        )
    return index
