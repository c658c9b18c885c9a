"""Where the report lives (checkout, book, notebooks, JS cache), its error type and its log."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import RecmetricsError


class ReportError(RecmetricsError, RuntimeError):
    """A step of the report build failed (the message names the notebook or the tool)."""


def repo_root() -> Path:
    """The checkout holding ``notebooks/`` and ``book/`` (the parent of the package folder)."""
    return Path(__file__).resolve().parent.parent.parent


def default_book_dir() -> Path:
    return repo_root() / "book"


def default_notebooks_dir() -> Path:
    return repo_root() / "notebooks"


def js_cache_dir() -> Path:
    """Where npm tarballs are cached (``$RECMETRICS_JS_CACHE`` or the XDG cache)."""
    from ..cache import cache_dir

    return cache_dir("js", "RECMETRICS_JS_CACHE")


def _log_default(msg: str) -> None:
    print(f"[recmetrics report] {msg}", file=sys.stderr, flush=True)
