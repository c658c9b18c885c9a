"""Every process a build starts ends with it: chapter kernels and their workers, the Sphinx child,
background studies (:func:`register`, :func:`start_child`, :func:`run_child`).

A chapter's kernel leads a session of its own (jupyter_client starts it so), and what it starts —
joblib's loky workers, its resource trackers — stays in that process group; the Sphinx child and
the own-runs book's background study are started in groups of their own too. None of them is in
the build's group, so a build killed by SIGKILL, or by a SIGTERM it does not handle, used to leave
them running (loky's workers and tracker for ~15 minutes, the Sphinx child writing into the build's
staging folder).

The build therefore *registers* each such group with a **guard**: a small process, started on the
first registration, in a session of its own (a signal sent to the build's group does not reach
it), that reads the registrations from a pipe. The build's end of the pipe closes when the build
ends in any way — a normal exit, an exception, SIGTERM, SIGKILL — and the guard then sends
SIGTERM, and a second later SIGKILL, to every group still registered, and exits. A group that
ended normally is unregistered first (:func:`unregister`). Scratch folders the build's children
use (a kernel's socket folder) are registered too (:func:`register_folder`) and removed then.
Where there are no process groups (Windows) nothing is registered.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import Iterator, Sequence

#: the guard: reads "+ PGID" / "- PGID" (groups) and "d+ PATH" / "d- PATH" (scratch folders) lines until
#: the build's end of the pipe closes, then removes the folders and ends the groups
_GUARD = r"""
import os, shutil, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
groups, folders = set(), set()
for line in sys.stdin:
    op, _, arg = line.rstrip("\n").partition(" ")
    if op in "+-" and arg.isdigit():
        (groups.add if op == "+" else groups.discard)(int(arg))
    elif op in ("d+", "d-") and arg:
        (folders.add if op == "d+" else folders.discard)(arg)
for folder in folders:
    shutil.rmtree(folder, ignore_errors=True)
for sig in (signal.SIGTERM, signal.SIGKILL):
    alive = False
    for g in groups:
        try:
            os.killpg(g, sig)
            alive = True
        except OSError:
            pass
    if not alive:
        break
    if sig == signal.SIGTERM:
        time.sleep(1.0)
"""

_guard: subprocess.Popen | None = None
_guard_lock = threading.Lock()


def _send(line: str) -> None:
    global _guard
    with _guard_lock:
        if _guard is None or _guard.poll() is not None:
            _guard = subprocess.Popen([sys.executable, "-c", _GUARD], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True, close_fds=True)
        try:
            _guard.stdin.write(line.encode())
            _guard.stdin.flush()
        except (BrokenPipeError, OSError):   # the guard is gone (killed by hand): start another next time
            _guard = None


def guard_pid() -> int | None:
    """The process id of this process's guard (``None`` before the first registration)."""
    return _guard.pid if _guard is not None and _guard.poll() is None else None


def register(pgid: int | None) -> None:
    """End process group ``pgid`` with this process (see the module docstring)."""
    if pgid and hasattr(os, "killpg") and pgid != os.getpgid(0):
        _send(f"+ {int(pgid)}\n")


def unregister(pgid: int | None) -> None:
    """``pgid`` ended (or was ended): the guard forgets it."""
    if pgid and hasattr(os, "killpg") and _guard is not None:
        _send(f"- {int(pgid)}\n")


def register_folder(path: str) -> None:
    """Remove scratch folder ``path`` (e.g. a kernel's sockets) when this process ends, however it ends."""
    if "\n" not in str(path):
        _send(f"d+ {path}\n")


def forget_folder(path: str) -> None:
    """``path`` was removed (or is kept): the guard forgets it."""
    if _guard is not None and "\n" not in str(path):
        _send(f"d- {path}\n")


def end_group(pgid: int | None, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to what is left of group ``pgid`` (never this process's group) and unregister it."""
    if not pgid or not hasattr(os, "killpg") or pgid == os.getpgid(0):
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    unregister(pgid)


#: what :func:`start_child` starts where there are process groups: a shell that runs the command only
#: once a line arrives on its standard input, which start_child writes after registering the group.
#: A build killed between starting the child and registering it (the guard not yet told) closes
#: that input first: the shell then ends without starting the command, instead of the command
#: running on unguarded.
_GATE = 'read -r _ && exec "$@"'


def start_child(cmd: Sequence[str], **kw) -> subprocess.Popen:
    """Start ``cmd`` in a process group of its own that ends with the build (registered before it
    starts); its output is captured as text and its standard input stays open: the command may read
    what :func:`finish_child` sends it. End it with :func:`finish_child` or :func:`stop_child`."""
    cmd = list(cmd)
    gated = hasattr(os, "killpg")
    proc = subprocess.Popen(["sh", "-c", _GATE, "sh", *cmd] if gated else cmd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kw)
    register(proc.pid)
    if gated:
        try:
            proc.stdin.write("go\n")   # registered: the command may start
            proc.stdin.flush()
        except BaseException:
            stop_child(proc)
            raise
    return proc


def finish_child(proc: subprocess.Popen, data: str = "") -> subprocess.CompletedProcess:
    """Send ``data`` to a child of :func:`start_child`, close its input and wait for its end
    (killed at once when this call is interrupted: Ctrl-C, SIGTERM, an exception), then end what
    it left behind. Returns the :class:`subprocess.CompletedProcess` of the command."""
    try:
        out, err = proc.communicate(data)
    except BaseException:
        stop_child(proc)
        raise
    end_group(proc.pid)   # anything it left behind
    return subprocess.CompletedProcess(_command(proc), proc.returncode, out, err)


def stop_child(proc: subprocess.Popen) -> None:
    """End a child of :func:`start_child` (and its group) unless :func:`finish_child` has: a build
    that stops before it needs the child ends it."""
    if proc.returncode is not None:
        return
    end_group(proc.pid)
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _command(proc: subprocess.Popen) -> list:
    args = list(proc.args)
    return args[4:] if args[:3] == ["sh", "-c", _GATE] else args


def run_child(cmd: Sequence[str], **kw) -> subprocess.CompletedProcess:
    """Run ``cmd`` to its end (:func:`start_child`, :func:`finish_child`), its standard input empty."""
    return finish_child(start_child(cmd, **kw))


class Terminated(KeyboardInterrupt):
    """SIGTERM received: raised in the main thread (:func:`terminate_as_interrupt`) so that a build
    ends as on Ctrl-C — its kernels stopped, its chapters logged as interrupted, its staging folder
    removed — instead of vanishing with its children still running."""


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: nothing changes)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
