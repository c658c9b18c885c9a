"""The Sphinx build of a Jupyter Book folder into its site, staged and replaced whole (:func:`build_book`)."""
from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .paths import ReportError, _log_default, absolute, main_work_dir
from .repository import theme_options

_SPHINX_RUNNER = r"""
import json
import sys
from pathlib import Path
import myst_nb.sphinx_ext
from jupyter_book.sphinx import build_sphinx
line = sys.stdin.readline()   # the build's arguments, once its chapters are done (nothing: not needed)
if not line.strip():
    sys.exit(0)
args = json.loads(line)
src, out, doctrees = Path(args["src"]), args["out"], args["doctrees"]
# myst-nb writes the notebooks' image outputs to <out>/../jupyter_execute; an absolute name keeps that
# scratch folder inside the book's _build/ instead of beside the user's --out folder
myst_nb.sphinx_ext.OUTPUT_FOLDER = str(Path(doctrees).parent / "jupyter_execute")
result = build_sphinx(
    src, out, doctreedir=doctrees, noconfig=True, path_config=str(src / "_config.yml"),
    confoverrides={"external_toc_path": (src / "_toc.yml").as_posix(), "latex_individualpages": False,
                   "nb_execution_cache_path": str(Path(doctrees).parent / ".jupyter_cache"), **args["extra"]},
    builder="html", quiet=args["quiet"], keep_going=True,
)
if isinstance(result, BaseException):
    raise result
sys.exit(int(result or 0))
"""


def start_sphinx() -> subprocess.Popen:
    """Start the Sphinx child of :func:`build_book` ahead of it: the child imports Sphinx,
    jupyter-book and myst-nb (about a second and a half) and then waits for the build's arguments.
    A build that starts it while its last chapters execute (:class:`SphinxChild`) has those imports
    done by the time the site is built. It ends with the build, however the build ends
    (:func:`recmetrics.report.processes.start_child`)."""
    from .processes import start_child

    return start_child([sys.executable, "-c", _SPHINX_RUNNER])


class SphinxChild:
    """The Sphinx child of one build, started by :meth:`start` (:func:`start_sphinx`) when the build
    has a core to spare (:func:`recmetrics.report.execute.execute_plan`'s ``spare``): its imports then
    overlap the last chapters instead of delaying the site. :attr:`proc` is ``None`` until started
    (:func:`build_book` then starts one itself)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        if self.proc is None:
            self.proc = start_sphinx()


@contextlib.contextmanager
def sphinx_child() -> Iterator[SphinxChild]:
    """A :class:`SphinxChild` for the block's build, ended at the block's end if :func:`build_book`
    did not use it (the build stopped before its site)."""
    from .processes import stop_child

    child = SphinxChild()
    try:
        yield child
    finally:
        if child.proc is not None:
            stop_child(child.proc)


def build_book(
    book_dir: str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    *,
    quiet: bool = True,
    substitutions: Mapping[str, str] | None = None,
    repository: str | None = None,
    log: Callable[[str], None] | None = _log_default,
    sphinx: subprocess.Popen | None = None,
) -> Path:
    """Build the HTML site of ``book_dir`` (default the main book's work folder) into ``out``
    (default ``book_dir/_build/html``).

    Runs jupyter-book's Sphinx build in a subprocess (a clean docutils state each time) with the
    notebooks' execution off; returns the path of ``index.html``. ``substitutions``: MyST
    substitutions (``{{ name }}`` in the pages), e.g. the introduction's ``built_with``. Sphinx's
    scratch folders (doctrees, myst-nb's ``jupyter_execute``) stay in ``book_dir/_build/``,
    whatever ``out`` is. The pages' copyright line is the build year; every page links to
    ``repository`` (a web address, :func:`~recmetrics.report.repository.repository_url`) with the
    theme's repository button, and has no button without it; the site gets a ``.nojekyll`` file,
    so GitHub Pages serves ``_static/`` as it is.

    The site is built into a staging folder of this build's own beside ``out`` (a copy of the last
    site, so Sphinx writes only the pages that changed) that replaces ``out`` only when the build
    succeeded: a failed or killed build never leaves a site that mixes two builds, and a failure
    leaves no staging folder (one a killed build left is removed by the next). The build holds the
    lock of ``out`` (:func:`recmetrics.report.lock.out_lock`) throughout. The site carries the
    marker :data:`SITE_MARKER`. ``sphinx``: a Sphinx child started earlier (:func:`start_sphinx`),
    else one is started now; it ends with the build (:func:`recmetrics.report.processes.start_child`).
    """
    log = log or (lambda msg: None)
    book_dir = absolute(book_dir) if book_dir else main_work_dir()
    out = absolute(out) if out else book_dir / "_build" / "html"
    if out.is_symlink():   # a link to the site's folder: the folder is replaced, the link stays
        out = out.resolve()
    doctrees = book_dir / "_build" / ".doctrees"  # kept outside the site, whatever `out` is
    # the copyright line of every page: the build year (the configuration's value is only a default)
    extra: dict[str, Any] = {"copyright": time.strftime("%Y")}
    if substitutions:
        extra["myst_substitutions"] = dict(substitutions)
    extra.update(theme_options(repository))
    from .lock import out_lock

    with out_lock(out):
        remove_leftovers(out)   # of builds killed before they could clean up (none runs: we hold the lock)
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{staging_dir(out).name}-", dir=out.parent))
        try:
            return _build_into(book_dir, out, staging, doctrees, extra, quiet, log, sphinx)
        finally:
            _clear(staging)   # moved into place on success; removed on any failure (Ctrl-C and SIGTERM too)


def _build_into(book_dir: Path, out: Path, staging: Path, doctrees: Path, extra: dict, quiet: bool,
                log: Callable[[str], None], sphinx: subprocess.Popen | None) -> Path:
    staging.rmdir()
    if out.is_dir():  # Sphinx then writes only the pages that changed (mtimes are kept)
        shutil.copytree(out, staging, symlinks=True)
    else:
        staging.mkdir()
    t0 = time.perf_counter()
    proc = _run_sphinx(sphinx, {"src": str(book_dir.resolve()), "out": str(staging.resolve()),
                                "doctrees": str(doctrees.resolve()), "quiet": bool(quiet), "extra": extra})
    if proc.returncode != 0:
        raise ReportError(
            f"the book build failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    warnings = [ln for ln in proc.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    for ln in warnings[:20]:
        log(ln)
    if not (staging / "index.html").exists():
        raise ReportError(f"the book build produced no index.html:\n{proc.stderr[-4000:]}")
    # GitHub Pages (branch deployments) runs Jekyll unless told not to; Jekyll drops `_static/`
    (staging / ".nojekyll").touch()
    mark_site(staging)
    replace_dir(staging, out)
    log(f"built the book into {out} in {time.perf_counter() - t0:.1f}s")
    return out / "index.html"


def _run_sphinx(sphinx: subprocess.Popen | None, args: dict) -> subprocess.CompletedProcess:
    """The Sphinx child's build of ``args`` (``out``: the staging folder), in ``sphinx`` or a child started now."""
    from .processes import finish_child

    return finish_child(sphinx if sphinx is not None else start_sphinx(), json.dumps(args) + "\n")


#: The file that marks a folder as a site recmetrics built (a later build may replace such a folder)
SITE_MARKER = ".recmetrics-site"


def mark_site(folder: Path) -> None:
    """Mark ``folder`` as a site this project built (:data:`SITE_MARKER`)."""
    (Path(folder) / SITE_MARKER).write_text("A site built by `recmetrics report`; a later build replaces this "
                                            "folder whole.\n", encoding="utf-8")


def is_site(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a site this project built (it carries :data:`SITE_MARKER`)."""
    return (Path(folder) / SITE_MARKER).is_file()


def staging_dir(out: Path) -> Path:
    """The prefix of the staging folders of ``out`` (beside it, hidden): each build stages its site
    in a folder of its own, ``.<name>.staging-<random>``."""
    return out.parent / f".{out.name}.staging"


def remove_leftovers(out: Path) -> None:
    """Staging and old folders of ``out`` that builds killed mid-way left beside it (call holding
    ``out``'s lock, :func:`recmetrics.report.lock.out_lock`: no other build uses them)."""
    if not out.parent.is_dir():
        return
    for left in out.parent.glob(f".{glob.escape(out.name)}.staging*"):
        _clear(left)
    _clear(_old_dir(out))


def _old_dir(path: Path) -> Path:
    return path.parent / f".{path.name}.old"


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def replace_dir(new: Path, target: Path) -> None:
    """Put folder ``new`` in the place of ``target`` (two renames on one file system; a process
    killed between them leaves no ``target``, never a mix of the two)."""
    old = _old_dir(target)
    _clear(old)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    _clear(old)
