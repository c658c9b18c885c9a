"""Where the report's sources are, where a build writes, its error type and its log.

The book's sources (``book/``: configuration, table of contents, introduction, Guide, static
files), the chapters (``notebooks/``) and the benchmark tables (``benchmarks/results/``) are read
from :func:`sources_root`: the copy shipped inside the installed package (``recmetrics/_bundle/``,
mapped from the repository's top-level folders by ``setup.py``: one copy in the repository), or,
when the package runs from a checkout, the checkout itself. They are only ever read.

A build writes in two places only: the site (``--out``; default :func:`default_out`, a folder of
the current folder) and the cache (:func:`books_root`: each book's work folder, with its executed
chapters, scratch and Sphinx's doctrees; and the run cache). Every relative path a caller gives is
made absolute against the folder the command was run from as soon as it is read (:func:`absolute`),
so nothing depends on the working folder later.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import RecmetricsError


class ReportError(RecmetricsError, RuntimeError):
    """A step of the report build failed (the message names the notebook or the tool)."""


#: The distribution name on the package index (the import package is ``recmetrics``; PyPI's
#: ``recmetrics`` is another project)
DISTRIBUTION = "recmetrics-eval"

#: The folder of the package that holds the bundled sources in an installed package
BUNDLE = "_bundle"

#: Default site folders, in the folder a build is run from
DEFAULT_OUT = "recmetrics-book"
DEFAULT_RUNS_OUT = "recmetrics-runs"


def package_dir() -> Path:
    """The ``recmetrics/`` package folder."""
    return Path(__file__).resolve().parent.parent


def repo_root() -> Path:
    """The parent of the package folder: the checkout when the package runs from one."""
    return package_dir().parent


def bundled() -> bool:
    """Whether the package runs installed (its sources shipped inside it), not from a checkout."""
    return (package_dir() / BUNDLE).is_dir()


def sources_root() -> Path:
    """The folder holding ``book/``, ``notebooks/`` and ``benchmarks/results/``: the package's
    bundle when installed, else the checkout it runs from."""
    return package_dir() / BUNDLE if bundled() else repo_root()


def checkout() -> Path | None:
    """The checkout the package runs from (``None`` when it runs installed)."""
    return None if bundled() else repo_root()


def default_book_dir() -> Path:
    """The sources of the main book (read only: a build copies them into its work folder)."""
    return sources_root() / "book"


def default_notebooks_dir() -> Path:
    """The chapters of the main book (``notebooks/``; the own-runs book's are in ``runs/``)."""
    return sources_root() / "notebooks"


def benchmarks_results_dir() -> Path:
    """The benchmark tables the appendix shows (``benchmarks/results/*.json``)."""
    return sources_root() / "benchmarks" / "results"


def books_root() -> Path:
    """Where each book's work folder lives: ``$RECMETRICS_BOOKS``, else ``books/`` of the recmetrics
    cache (``$XDG_CACHE_HOME/recmetrics/books`` or ``~/.cache/recmetrics/books``)."""
    from ..cache import cache_dir

    return absolute(cache_dir("books", "RECMETRICS_BOOKS"))


def main_work_dir() -> Path:
    """The work folder of the main book: its sources (copied from :func:`default_book_dir`), its
    executed chapters (``generated/``) and Sphinx's scratch (``_build/``). One per cache, as the
    book's folder was one per checkout: a build re-executes only what changed since the last."""
    return books_root() / "main"


def absolute(path: str | os.PathLike) -> Path:
    """``path`` with ``~`` expanded, made absolute against the current folder (not resolved: a
    link the caller named stays that link)."""
    return Path(os.path.abspath(Path(path).expanduser()))


def default_out() -> Path:
    """The main book's site when no ``--out`` is given: ``./recmetrics-book`` of the current folder."""
    return absolute(DEFAULT_OUT)


def js_cache_dir() -> Path:
    """Where npm tarballs are cached (``$RECMETRICS_JS_CACHE`` or the XDG cache)."""
    from ..cache import cache_dir

    return cache_dir("js", "RECMETRICS_JS_CACHE")


def _log_default(msg: str) -> None:
    print(f"[recmetrics report] {msg}", file=sys.stderr, flush=True)
