"""Where recmetrics keeps its artefacts: caches (runs, vendored JavaScript) and the result tables a
chapter leaves for other pages (:func:`results_dir`)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def cache_dir(kind: str, env_var: str) -> Path:
    """``$env_var`` if set, else ``$XDG_CACHE_HOME/recmetrics/<kind>``, else ``~/.cache/recmetrics/<kind>``."""
    env = os.environ.get(env_var)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "recmetrics" / kind


def results_dir() -> Path:
    """``$RECMETRICS_FINDINGS_DIR/../results`` during a report build, else ``./results``.

    The folder of the tables a chapter computes for other pages (:mod:`recmetrics.report.results`,
    the explorers' tables of :mod:`recmetrics.explorers`), beside the findings the report gathers."""
    findings = os.environ.get("RECMETRICS_FINDINGS_DIR")
    return Path(findings).parent / "results" if findings else Path("results")


def umask() -> int:
    """The process's file-creation mask (read without changing it where the system allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it back at once
    os.umask(mask)
    return mask


def write_atomic(path, write, suffix: str = "") -> Path:
    """Write ``path`` through ``write(temporary path)`` in its own folder, then rename it over
    ``path``: readers see the old file or the whole new one. The file gets the mode a plain
    ``open()`` would give it (``0o666`` less the umask), so a group-shared cache stays shared
    (a temporary file is private until then). The parent folder is created; the temporary file is
    removed on any error, which propagates (an ``OSError`` for a folder that is a file, an
    unwritable folder or a full disk)."""
    import tempfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=suffix)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def unwritable(path, exc: OSError) -> str:
    """One line saying why a cache file cannot be written (for the warning of an uncached run)."""
    reason = {28: "the disk is full", 13: "permission denied", 30: "read-only file system",
              20: "a part of the path is a file, not a folder", 17: "a part of the path is a file, not a folder",
              122: "disk quota exceeded"}.get(exc.errno, exc.strerror or str(exc))
    return f"cannot write the cache file {path} ({reason})"


@contextmanager
def file_lock(path, *, remove: bool = False, wait: bool = True) -> Iterator[bool]:
    """Hold the lock of the artefact ``path`` (``<path>.lock``, an ``flock`` the system releases
    when its holder ends in any way) for the ``with`` block; blocks while another process (or
    another open of it in this process) holds it. Where there is no ``flock`` each goes on alone.

    ``remove``: delete the lock file before releasing it, so a cache is left without them. Right
    only when the holder checks for the artefact before making it: a process that waited on the
    removed file, or locks a new one, then finds the artefact made and reads it.

    Yields whether the lock is held: always ``True`` when ``wait``; with ``wait=False`` the block
    runs at once and gets ``False`` when another holds the lock (e.g. to do other work first)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock here
        yield True
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o666 & ~umask())
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
        if remove:
            path.with_suffix(".lock").unlink(missing_ok=True)
    finally:
        os.close(fd)
