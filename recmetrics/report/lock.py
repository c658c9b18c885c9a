"""One build per book at a time: an exclusive lock on ``<book>/_build/.build.lock`` (:func:`book_lock`).

The lock is an ``flock`` on an open file, so the operating system releases it when the holder ends
in any way (exit, Ctrl-C, SIGKILL); nothing stale is left to clean up. A second build of the same
book fails at once with one line naming the build that holds it (its process id and start time,
written into the lock file), instead of writing over the chapters and the site the first one is
writing.
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


def lock_path(book_dir: str | os.PathLike) -> Path:
    """The lock file of the book in ``book_dir`` (in its ``_build/``, which the book never shows)."""
    return Path(book_dir) / "_build" / LOCK_NAME


@contextlib.contextmanager
def book_lock(book_dir: str | os.PathLike, what: str = "book") -> Iterator[Path]:
    """Hold the build lock of ``book_dir`` for the ``with`` block; :class:`ReportError` (one line)
    when another build holds it."""
    import fcntl

    path = lock_path(book_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise ReportError(f"another build of this {what} is running ({holder}); wait for it to finish, or build "
                              f"under another name or folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()}, started {now()}".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock
