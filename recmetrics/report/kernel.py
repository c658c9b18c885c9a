"""How the report starts, watches and ends each chapter's kernel (quiet, whole tables, no port, a time limit).

papermill starts one IPython kernel per notebook with :func:`kernel_arguments`:

* ``--IPKernelApp.log_level=CRITICAL``: the kernel's own start-up log (e.g. ipykernel's "Kernel is
  running over TCP without encryption", its "KeyboardInterrupt caught" at shut-down) is noise in
  the report's output; errors of the notebook's code still reach the cells and fail the build;
* ``--IPKernelApp.exec_lines``: :data:`DISPLAY_SETUP`, run before the first cell. pandas' defaults
  cut a DataFrame's HTML at 20 columns, 60 rows and 50 characters per cell ("..."), which in a
  static book hides what the reader came for (the metric descriptions, the guideline rules). The
  lines change how tables are displayed only, never a computed value; a notebook that sets its
  own ``pd.set_option`` keeps it.

Chapters that run at the same time (``recmetrics report --jobs 2``) each need their own
environment (their scratch folders, :mod:`.execute`): the process's ``os.environ`` is one for all,
so each chapter's kernel is started by a kernel manager of its own that adds the chapter's
variables to the kernel's environment and starts it in the chapter's folder (:func:`kernel_manager`;
the process's working folder is one for all too, and never changed) and tells who started it, so the
report can stop it on Ctrl-C (:func:`stop_kernel`). The manager forks the kernel from the build's
kernel server when it can (:mod:`.kernel_server`: the same kernel, its imports already done).

**No ports.** A kernel's manager draws five free TCP ports (bind to port 0, note the number,
close), writes them into the connection file, and the kernel binds them a moment later. Between the
two, another process may draw the same numbers: jupyter_client's ``LocalPortCache`` keeps the
kernels of *one* process apart, but several builds (and the own-runs books beside them) start
kernels at the same moments. Two kernels given one port do not share it: the second dies at start
(measured: ``ZMQError: Address already in use``) or, when the other port was taken by a client,
its client talks to another kernel, which ignores messages signed with another key. The chapters'
kernels therefore talk over Unix sockets (``transport="ipc"``) in a folder of their own
(:func:`kernel_manager`): no number is drawn, so nothing can be shared.

**Ending with the build.** The kernel's process group (the kernel, its loky workers and resource
trackers) is registered with the build's guard (:mod:`.processes`) when it starts, and killed when
the chapter ends, so nothing it started outlives the chapter or the build.

**No silent wait.** A :class:`Watchdog` watches each chapter's kernel: when the chapter runs past
its time limit (:func:`chapter_limit`, from its recorded time) or the kernel stops answering its
heartbeat (ipykernel answers it from a thread of its own, also while a cell computes), it kills
the kernel and says why; the chapter then fails naming itself, and the build exits 2.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Mapping

from ..parallel import ALLOCATOR_VARIABLES
from . import processes

#: pandas display options of the book: whole cells and columns, up to 1,000 rows
PANDAS_DISPLAY: dict[str, object] = {
    "display.max_colwidth": None,
    "display.max_columns": None,
    "display.max_rows": 1000,
}

#: Python run in each chapter's kernel before its first cell (one line; display settings only)
DISPLAY_SETUP = "import pandas as _rm_pd; " + "; ".join(
    f"_rm_pd.set_option({k!r}, {v!r})" for k, v in PANDAS_DISPLAY.items()) + "; del _rm_pd"


def kernel_arguments() -> list[str]:
    """The ``extra_arguments`` papermill gives the kernel of every chapter (see the module docstring).

    >>> kernel_arguments()[0]
    '--IPKernelApp.log_level=CRITICAL'
    """
    return ["--IPKernelApp.log_level=CRITICAL", f"--IPKernelApp.exec_lines={DISPLAY_SETUP}"]


#: the variables that size a kernel's BLAS and OpenMP thread pools
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def thread_env(jobs: int, cores: int | None = None) -> dict[str, str]:
    """The thread pools of each kernel when ``jobs`` chapters run at once: the cores shared among
    them, at least one each. Left at their defaults, every kernel's BLAS starts a thread per core,
    and side-by-side chapters then run more busy threads than there are cores, which wait on each
    other. A variable set in this process's environment (the user's) is left as it is; one chapter
    at a time keeps the libraries' defaults (an empty mapping)."""
    from .profiles import usable_cores

    cores = usable_cores() if cores is None else cores
    if jobs <= 1:
        return {}
    share = str(max(1, cores // jobs))
    return {v: share for v in THREAD_VARIABLES if v not in os.environ}


def allocator_env() -> dict[str, str]:
    """:data:`ALLOCATOR_VARIABLES` on Linux (where glibc reads them; other C libraries ignore them),
    unless the user set any ``MALLOC_`` variable: theirs are then left as they are, alone."""
    if sys.platform != "linux" or any(k.startswith("MALLOC_") for k in os.environ):
        return {}
    return dict(ALLOCATOR_VARIABLES)


def kernel_env(jobs: int, cores: int | None = None) -> dict[str, str]:
    """The variables the build sets for each kernel when ``jobs`` chapters run at once: the thread
    pools (:func:`thread_env`) and the allocator (:func:`allocator_env`)."""
    return {**thread_env(jobs, cores), **allocator_env()}


def kernel_manager(env: Mapping[str, str], started: Callable[[Any], None] | None = None,
                   cwd: str | os.PathLike | None = None, server: Any = None) -> type:
    """A jupyter_client kernel-manager class whose kernels get ``env`` on top of this process's
    environment and start in the folder ``cwd`` (when given); ``started(manager)`` is called once
    the kernel process runs. ``server``: a :class:`.kernel_server.KernelServer` that forks the
    kernels it can (the others start as jupyter_client starts them). papermill takes the class as
    ``kernel_manager_class``."""
    from jupyter_client.manager import AsyncKernelManager

    extra = {str(k): str(v) for k, v in env.items()}

    class ChapterKernelManager(AsyncKernelManager):
        socket_dir: str | None = None

        def use_own_sockets(self) -> None:
            """Unix sockets in a folder of the kernel's own: no port to share (before it starts)."""
            if self.socket_dir is None:
                self.socket_dir = _socket_dir()
                if self.socket_dir is not None:
                    processes.register_folder(self.socket_dir)   # removed even if the build is killed
                    self.transport = "ipc"
                    self.ip = os.path.join(self.socket_dir, "k")

        async def _async_start_kernel(self, **kw: Any) -> None:
            kw["env"] = {**(kw.get("env") or os.environ), **extra}
            if cwd is not None:
                kw["cwd"] = str(cwd)
            self.use_own_sockets()
            try:
                await super()._async_start_kernel(**kw)
            except BaseException:
                end_kernel(self)
                raise
            self._rm_pgid = kernel_group(self)   # the provisioner forgets it at shut-down
            processes.register(self._rm_pgid)
            if started is not None:
                started(self)

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            forked, env = None, kw.get("env") or os.environ
            if server is not None and server.serves(kernel_cmd, env):
                forked = server.spawn(kernel_cmd, env, kw.get("cwd") or os.getcwd())
            if forked is None:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            provisioner = self.provisioner
            provisioner.process, provisioner.pid, provisioner.pgid = forked, forked.pid, forked.pid
            provisioner.cwd = kw.get("cwd")
            self._reconcile_connection_info(provisioner.connection_info)

        start_kernel = _async_start_kernel

    return ChapterKernelManager


def _socket_dir() -> str | None:
    """A new private folder for a kernel's sockets (``None`` where Unix sockets cannot be used: no
    ``AF_UNIX``, or a temporary folder whose path leaves no room in a socket address)."""
    import socket

    if not hasattr(socket, "AF_UNIX"):
        return None
    base = tempfile.gettempdir()
    if len(base) > 70 and os.path.isdir("/tmp"):
        base = "/tmp"
    if len(base) > 70:
        return None
    return tempfile.mkdtemp(prefix="rm-kernel-", dir=base)


def kernel_group(manager: Any) -> int | None:
    """The process group of the kernel of ``manager`` (its own session: it, its workers, their trackers)."""
    provisioner = getattr(manager, "provisioner", None)
    return getattr(provisioner, "pgid", None) or getattr(provisioner, "pid", None)


def end_kernel(manager: Any) -> None:
    """After a chapter: kill what is left of its kernel's process group (loky workers, trackers),
    unregister it from the guard, and remove the kernel's socket folder."""
    pgid = getattr(manager, "_rm_pgid", None) or kernel_group(manager)
    processes.end_group(pgid)
    folder = getattr(manager, "socket_dir", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        processes.forget_folder(folder)


def stop_kernel(manager: Any) -> None:
    """Kill the kernel process group of ``manager`` (started by :func:`kernel_manager`), from any
    thread: the chapter running in it then fails at once. A kernel already gone is ignored."""
    provisioner = getattr(manager, "provisioner", None)
    pid, pgid = getattr(provisioner, "pid", None), getattr(provisioner, "pgid", None)
    try:
        if pgid and pgid != os.getpgid(0):   # the kernel's own session (jupyter_client starts one)
            os.killpg(pgid, signal.SIGKILL)
        elif pid:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


#: the shortest time limit of a chapter, seconds (``$RECMETRICS_CHAPTER_TIMEOUT`` when set)
LIMIT_FLOOR = 1800.0
#: a chapter may take this many times its recorded (or expected) time before it is stopped
LIMIT_FACTOR = 5.0
#: a kernel whose heartbeat goes unanswered this long, seconds, has stopped answering
#: (``$RECMETRICS_KERNEL_SILENCE`` when set)
SILENCE = 60.0
#: seconds between two heartbeat pings
PING_EVERY = 5.0
#: a kernel idle this long, seconds, while its chapter still waits for a reply has lost a message
#: (``$RECMETRICS_KERNEL_STALL`` when set)
STALL = 120.0


def _seconds_from_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        from ..errors import InputError

        raise InputError(f"${name}={raw!r}: expected a number of seconds > 0")
    return value


def chapter_limit(expected: float | None) -> float:
    """The time limit of a chapter expected to take ``expected`` seconds (its last recorded time
    under the same profile and dataset, else the profile's hint; ``None``: nothing known):
    :data:`LIMIT_FACTOR` times that, and never below the floor (:data:`LIMIT_FLOOR`, or
    ``$RECMETRICS_CHAPTER_TIMEOUT`` seconds), which a busy machine needs: a chapter of 10 s may
    take minutes beside other builds.

    >>> chapter_limit(None), chapter_limit(10.0), chapter_limit(1000.0)
    (1800.0, 1800.0, 5000.0)
    """
    floor = _seconds_from_env("RECMETRICS_CHAPTER_TIMEOUT", LIMIT_FLOOR)
    return max(floor, LIMIT_FACTOR * float(expected)) if expected else floor


def check_settings() -> None:
    """``$RECMETRICS_CHAPTER_TIMEOUT``, ``$RECMETRICS_KERNEL_SILENCE`` and ``$RECMETRICS_KERNEL_STALL``, when set, are numbers of
    seconds > 0 (:class:`~recmetrics.errors.InputError` naming the variable): checked when a build
    is planned, before anything runs."""
    _seconds_from_env("RECMETRICS_CHAPTER_TIMEOUT", LIMIT_FLOOR)
    _seconds_from_env("RECMETRICS_KERNEL_SILENCE", SILENCE)
    _seconds_from_env("RECMETRICS_KERNEL_STALL", STALL)


class _Status:
    """The kernel's last published execution state, read from its IOPub channel by a client of the
    watchdog's own: :meth:`idle_for` is how long it has been ``idle`` (``None`` while busy, unknown,
    or not yet subscribed). Between two cells of a chapter the kernel is idle only for the moment the
    client takes to send the next one, so an idle kernel under a running chapter lost a message."""

    def __init__(self):
        self.client: Any = None
        self.state: str | None = None
        self.since = 0.0

    def subscribe(self, manager: Any) -> None:
        """Listen to the kernel of ``manager`` (once it runs, before the chapter's first cell)."""
        try:
            from jupyter_client.blocking import BlockingKernelClient

            client = BlockingKernelClient()
            client.load_connection_info(manager.get_connection_info())
            client.start_channels(shell=False, iopub=True, stdin=False, hb=False, control=False)
            self.client = client
        except Exception:      # no connection yet: the heartbeat and the limit still watch the kernel
            self.client = None

    def idle_for(self) -> float | None:
        if self.client is None:
            return None
        try:
            while self.client.iopub_channel.msg_ready():      # what arrived, without waiting
                msg = self.client.iopub_channel.get_msg(timeout=0)
                if msg.get("msg_type") == "status":
                    self.state, self.since = msg["content"].get("execution_state"), time.monotonic()
        except Exception:      # a kernel gone or going: the heartbeat and the limit still watch it
            return None
        return time.monotonic() - self.since if self.state == "idle" else None

    def close(self) -> None:
        if self.client is not None:
            try:
                self.client.stop_channels()
            except Exception:
                pass


#: seconds between two looks at whether a chapter ended while a heartbeat ping waits for its answer
PING_SLICE = 0.05


def _answers(manager: Any, timeout: float, done: threading.Event | None = None) -> bool:
    """Whether the kernel of ``manager`` answers one heartbeat ping within ``timeout`` seconds (a
    socket of this thread's own, blocking: the manager's sockets belong to its event loop). Once
    ``done`` is set (the chapter ended, its kernel is going) the wait ends at once, as answered: a
    kernel shut down mid-ping never answers, and the chapter would wait out the whole ``timeout``."""
    import zmq

    try:
        url = manager._make_url("hb")
    except Exception:   # noqa: BLE001 - no connection information yet: nothing to ping
        return True
    sock = zmq.Context.instance().socket(zmq.REQ)
    try:
        sock.linger = 0
        sock.connect(url)
        sock.send(b"ping")
        deadline = time.monotonic() + timeout
        while not sock.poll(int(1000 * max(0.0, min(PING_SLICE, deadline - time.monotonic()))), zmq.POLLIN):
            if done is not None and done.is_set():
                return True
            if time.monotonic() >= deadline:
                return False
        return True
    except zmq.ZMQError:
        return False
    finally:
        sock.close(linger=0)


class Watchdog:
    """Watch one chapter's kernel from a thread of its own: when the chapter has run ``limit``
    seconds, or its kernel has not answered its heartbeat for ``silence`` seconds (default
    :data:`SILENCE`, or ``$RECMETRICS_KERNEL_SILENCE``), kill the kernel (its process group) and
    keep the reason in :attr:`reason` (``None`` while nothing happened).

    Use: ``dog = Watchdog(limit)``; pass :meth:`attach` as the kernel's ``started`` callback; ``with dog:``
    around the execution."""

    def __init__(self, limit: float | None, silence: float | None = None, every: float = PING_EVERY,
                 stall: float | None = None):
        self.limit = limit
        self.silence = silence if silence is not None else _seconds_from_env("RECMETRICS_KERNEL_SILENCE", SILENCE)
        self.stall = stall if stall is not None else _seconds_from_env("RECMETRICS_KERNEL_STALL", STALL)
        self.every = min(every, self.silence / 3, self.stall / 3)
        self.reason: str | None = None
        #: the kernel went idle and stayed so while the chapter waited for its reply (worth a second run)
        self.stalled = False
        self.status = _Status()
        self.manager: Any = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def attach(self, manager: Any) -> None:
        self.manager = manager
        self.status.subscribe(manager)    # before the first cell: its idle must not be missed
        if self.reason is not None:   # the limit passed while the kernel started
            stop_kernel(manager)

    def __enter__(self) -> "Watchdog":
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._watch, name="chapter-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        answered = time.monotonic()
        try:
            self._watch_loop(answered, self.status)
        finally:
            self.status.close()

    def _watch_loop(self, answered: float, status: "_Status") -> None:
        while not self._done.wait(self.every):
            now_ = time.monotonic()
            if self.limit is not None and now_ - self._t0 >= self.limit:
                self._stop(f"it ran past its time limit of {self.limit:.0f} s ({LIMIT_FACTOR:g} times its recorded "
                           f"time, at least $RECMETRICS_CHAPTER_TIMEOUT seconds, default {LIMIT_FLOOR:.0f})")
                return
            manager = self.manager
            if manager is None:
                answered = now_
                continue
            if _answers(manager, timeout=self.every, done=self._done):
                answered = time.monotonic()
            elif time.monotonic() - answered >= self.silence and not self._done.is_set():
                self._stop(f"its kernel stopped answering (no heartbeat for {self.silence:.0f} s; "
                           f"$RECMETRICS_KERNEL_SILENCE, default {SILENCE:.0f})")
                return
            idle = status.idle_for()
            if idle is not None and idle >= self.stall and not self._done.is_set():
                self.stalled = True
                self._stop(f"its kernel sat idle for {idle:.0f} s while the chapter waited for its reply (a "
                           f"message lost between them; $RECMETRICS_KERNEL_STALL, default {STALL:.0f})")
                return

    def _stop(self, reason: str) -> None:
        self.reason = reason
        if self.manager is not None:
            stop_kernel(self.manager)
