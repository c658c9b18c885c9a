"""One build at a time per book and per output folder: exclusive ``flock`` locks (:func:`book_lock`,
:func:`out_lock`).

A lock is an ``flock`` on an open file, so the operating system releases it when the holder ends
in any way (exit, Ctrl-C, SIGKILL); nothing stale is left to clean up. A second build of the same
book, or into the same output folder, fails at once with one line naming the build that holds it
(its process id and start time, written into the lock file), instead of writing over the chapters
and the site the first one is writing.

* The book's lock is ``<book>/_build/.build.lock`` (a folder the book never shows).
* An output folder's lock is ``.<name>.lock`` beside the folder (where its staging folders live,
  :mod:`.site`), never inside it: the site replaces the folder whole, and what is inside is
  published. It is removed when released; the holder checks after locking that the file it locked is
  still the one at that path, so a build that opened a file another removed locks again.

An output folder's lock is re-entrant within a process: a build holding it calls
:func:`~recmetrics.report.site.build_book`, which takes it too. A book's lock is not (a second
build from the same process is refused as any other).
"""
from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Iterator

from .paths import ReportError
from .state import now

LOCK_NAME = ".build.lock"
_HELD: dict[str, int] = {}   # lock files this process holds -> how many times (re-entrant)


def lock_path(book_dir: str | os.PathLike) -> Path:
    """The lock file of the book in ``book_dir`` (in its ``_build/``, which the book never shows)."""
    return Path(book_dir) / "_build" / LOCK_NAME


def out_lock_path(out: str | os.PathLike) -> Path:
    """The lock file of the output folder ``out``: ``.<name>.lock`` beside it (its real path, so two
    spellings or a symbolic link of one folder share one lock)."""
    real = Path(out).expanduser().resolve()
    return real.parent / f".{real.name}.lock"


@contextlib.contextmanager
def _hold(path: Path, busy: str, *, remove: bool = False, reentrant: bool = False) -> Iterator[Path]:
    """Hold the ``flock`` of ``path`` for the ``with`` block; :class:`ReportError` ``busy`` (with the
    holder's process id and start time) when another holds it (``reentrant``: another process; this
    one may take it again). ``remove``: delete the file on release, and the folders made for it when
    they are left empty (a refused build leaves no empty output folder behind)."""
    import fcntl

    key = str(path)
    if reentrant and key in _HELD:   # this process holds it already (a build calling build_book)
        _HELD[key] += 1
        try:
            yield path
        finally:
            _HELD[key] -= 1
        return
    made, parent = [], path.parent     # folders made for the lock file: removed again when left empty
    while not parent.exists():
        made.append(parent)
        parent = parent.parent
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            raise ReportError(f"{busy} ({holder}); wait for it to finish, or build under another name or "
                              f"folder") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)   # the holder before us removed the file we opened: lock the one at the path now
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()}, started {now()}".encode(), 0)
        if reentrant:
            _HELD[key] = 1
        yield path
    finally:
        if reentrant:
            _HELD.pop(key, None)
        if remove:
            with contextlib.suppress(OSError):
                os.unlink(path)
            for folder in made:       # innermost first; a folder the build wrote into is not empty
                with contextlib.suppress(OSError):
                    folder.rmdir()
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def book_lock(book_dir: str | os.PathLike, what: str = "book") -> Iterator[Path]:
    """Hold the build lock of ``book_dir`` for the ``with`` block; :class:`ReportError` (one line)
    when another build holds it."""
    with _hold(lock_path(book_dir), f"another build of this {what} is running") as path:
        yield path


@contextlib.contextmanager
def out_lock(out: str | os.PathLike) -> Iterator[Path]:
    """Hold the lock of the output folder ``out`` for the ``with`` block; :class:`ReportError` (one
    line, naming the folder and the holder's process id) when another build writes into it."""
    with _hold(out_lock_path(out), f"--out {out}: another build is writing into this folder", remove=True,
               reentrant=True) as path:
        yield path
