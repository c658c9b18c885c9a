"""A book's work folder: the book's sources copied out of the package, beside its executed chapters.

The sources a book is built from (:func:`~recmetrics.report.paths.default_book_dir`) are only
read: in an installed package they are package data, in a checkout they are the repository's.
Jupyter Book builds a folder holding the sources *and* the executed chapters (``generated/``), so a
build copies the sources into the book's work folder (:func:`~recmetrics.report.paths.main_work_dir`,
in the cache) with :func:`sync_sources`, under the book's lock, and builds there.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterable

#: Entries of a work folder that are the build's own, never sources: the executed chapters and
#: Sphinx's scratch (with the book's lock)
BUILD_ENTRIES = ("generated", "_build")


def sync_sources(src: str | os.PathLike, work: str | os.PathLike, keep: Iterable[str] = BUILD_ENTRIES) -> Path:
    """Make ``work`` hold the sources of ``src``: every file of ``src`` (hidden files and the
    ``keep`` entries excepted) is copied when its bytes differ from ``work``'s copy, and every
    other file of ``work`` outside ``keep`` is removed. A file that did not change keeps its time
    stamp, so Sphinx rebuilds only the pages whose source changed. Returns ``work``.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     src, work = pathlib.Path(d, "src"), pathlib.Path(d, "work")
    ...     (src / "guide").mkdir(parents=True); _ = (src / "guide" / "a.md").write_text("a")
    ...     (work / "generated").mkdir(parents=True); _ = (work / "old.md").write_text("x")
    ...     _ = sync_sources(src, work)
    ...     sorted(p.relative_to(work).as_posix() for p in work.rglob("*"))
    ['generated', 'guide', 'guide/a.md']
    """
    src, work = Path(src), Path(work)
    keep = set(keep)
    wanted: set[Path] = set()
    for path in sorted(_files(src, keep)):
        rel = path.relative_to(src)
        wanted.add(rel)
        target = work / rel
        if target.is_file() and not target.is_symlink() and _same(path, target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.tmp"
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)
    for path in sorted(_files(work, keep), reverse=True):
        if path.relative_to(work) not in wanted:
            path.unlink()
    for folder in sorted((p for p in work.rglob("*") if p.is_dir() and p.relative_to(work).parts[0] not in keep),
                         reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return work


def _files(root: Path, keep: set[str]) -> Iterable[Path]:
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not (rel == Path(".") and d in keep)]
        for name in filenames:
            if not name.startswith("."):
                yield Path(dirpath) / name


def _same(a: Path, b: Path) -> bool:
    return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
