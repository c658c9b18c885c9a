"""Chapter kernels forked from one process that has already imported what every chapter imports.

Starting an IPython kernel is a new interpreter importing ipykernel (IPython, zmq, tornado,
jupyter_client), then the chapter importing numpy, pandas, altair and recmetrics, and ending it
takes the interpreter's module teardown: a one-cell notebook of those imports took 1.55 s through
papermill, 1.2 s of it the kernel's CPU, for every chapter of every build (0.62 s forked). A build that
executes chapters therefore starts one **kernel server** (:class:`KernelServer`): a process that
imports those modules once (:data:`PRELOAD`) and then forks one child per chapter kernel. The child
becomes the kernel the ordinary way (``ipykernel_launcher``'s ``launch_new_instance`` with the
command line jupyter_client wrote), so it talks the same protocol over the same sockets; only the
imports were already done.

What a kernel started this way keeps, exactly as a kernel started by jupyter_client:

* **its environment and folder**: the child sets the chapter's environment (the server's own with the
  chapter's variables) and changes to the chapter's folder before the kernel starts. The server is
  started with the environment of the build's kernels; a chapter whose environment differs in any
  variable other than the report's own (``RECMETRICS_*``, read when a cell runs) and jupyter_client's
  (``JPY_*``, which the child sets itself) — a thread pool sized otherwise, another ``PYTHONPATH`` —
  is started by jupyter_client instead (:meth:`KernelServer.serves`), as is a kernel of another
  Python or another kernel spec, or whose ``PYTHONPATH`` holds a relative or empty entry (the
  folder the process starts in, which for the server was the build's). (Only ``/proc/PID/environ``, what the process started with, still
  shows the server's environment; the kernel's ``os.environ`` and its children's are the chapter's.)
* **its own session and process group** (``setsid``), registered with the build's guard
  (:mod:`.processes`) and killed with its chapter, like any kernel;
* **its randomness**: Python's ``random`` is reseeded in every child by Python itself, numpy's
  global generator by the child (``numpy.random.seed()``); the report's own draws are seeded;
* **its end**: when the kernel returns, its exit handlers run (IPython's, loky's, the notebook's)
  and its streams are flushed, then the process exits without the module teardown
  (:func:`_run_kernel`); its parent is the server, which reaps it and tells the build its exit
  status, and it exits by itself if the server goes away (ipykernel's parent poller).

The server ends with the build: it reads its requests from a pipe whose other end is the build's,
kills its children's groups and exits when that pipe closes (the build ended in any way); it is
registered with the guard too. A server that failed to start (an import error in :data:`PRELOAD`
is only skipped) means jupyter_client starts the kernels, as before. Kernels are forked on Linux
only (on macOS a process that loaded Accelerate or the Objective-C runtime cannot safely fork), and
not when ``$RECMETRICS_KERNEL_SERVER`` is ``0``.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Iterator, Mapping, Sequence

from . import processes

#: what the server imports before it forks the first kernel: ipykernel and what chapters import
PRELOAD = ("ipykernel.kernelapp", "numpy", "pandas", "scipy.stats", "altair", "ipywidgets",
           "recmetrics", "recmetrics.meta", "recmetrics.papers", "recmetrics.report", "recmetrics.viz")

#: variables a kernel reads only after it started (so the server's may differ from the chapter's)
LATE_VARIABLES = ("RECMETRICS_", "JPY_")

#: the server's program (``sys.path[0]``, the folder it was started in, removed as ``ipykernel_launcher``
#: does): a child leaves :func:`_serve` with the command line of its kernel and runs the kernel
_MAIN = ("import sys; del sys.path[0]; from recmetrics.report.kernel_server import _serve, _run_kernel; "
         "_run_kernel(_serve(int(sys.argv[1]), int(sys.argv[2])))")


def start(env: Mapping[str, str]) -> "KernelServer | None":
    """A :class:`KernelServer` started with ``env`` (the environment of the build's kernels), or
    ``None`` where kernels are not forked (see the module docstring)."""
    if sys.platform != "linux" or os.environ.get("RECMETRICS_KERNEL_SERVER", "1").strip() == "0":
        return None
    try:
        return KernelServer(env)
    except OSError:
        return None


@contextlib.contextmanager
def running(env: Mapping[str, str] | None) -> Iterator["KernelServer | None"]:
    """The block with a server started with ``env`` (:func:`start`; none when ``env`` is ``None``),
    closed when the block ends, however it ends."""
    server = start(env) if env is not None else None
    try:
        yield server
    finally:
        if server is not None:
            server.close()


def _serve(requests: int, replies: int) -> list[str]:
    """The server's loop: fork a kernel per request (a JSON line: ``argv``, ``env``, ``cwd``), answer
    ``pid N``; on a child's end answer ``exit N STATUS``. Returns (in a child only) the kernel's
    command-line arguments; the server itself exits when ``requests`` reaches its end."""
    import importlib
    import select

    for s in (signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:   # a module a chapter would fail to import fails there, not here
            pass
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    children: set[int] = set()
    pending = b""

    def reply(line: str) -> None:
        os.write(replies, line.encode())

    while True:
        ready, _, _ = select.select([requests, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        while children:   # every child that ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            reply(f"exit {pid} {os.waitstatus_to_exitcode(status)}\n")
        if requests not in ready:
            continue
        data = os.read(requests, 65536)
        if not data:   # the build ended: so do its kernels and this server
            for pid in children:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            os._exit(0)
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                for fd in (requests, replies, wake_r, wake_w):
                    os.close(fd)
                return _become_kernel(request)
            children.add(pid)
            reply(f"pid {pid}\n")


def _become_kernel(request: Mapping[str, Any]) -> list[str]:
    """In a forked child: the process a kernel's launch would make (own session, empty input, the
    chapter's folder and environment, default signals, a fresh numpy seed); returns the kernel's
    command-line arguments."""
    signal.set_wakeup_fd(-1)
    for s in (signal.SIGCHLD, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["JPY_PARENT_PID"] = str(os.getppid())
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    # the kernel ends when the server does (ipykernel read JPY_PARENT_PID when the server imported it)
    argv = [*request["argv"], f"--IPKernelApp.parent_handle={os.getppid()}"]
    import importlib.util

    launcher = importlib.util.find_spec("ipykernel_launcher")
    sys.argv = [launcher.origin if launcher is not None else "ipykernel_launcher", *argv]
    return argv


def _run_kernel(args: list[str]) -> None:
    """Run the kernel of command line ``args`` (in a forked child) to its end, then exit as an
    interpreter does, without taking apart the modules it holds: the exit handlers (IPython's,
    which releases the notebook's variables, loky's, the notebook's own) run and the standard
    streams are flushed; the module teardown, some 0.4 s of CPU in a process that imported pandas
    and altair, is left to the operating system, as :mod:`multiprocessing`'s forked workers do."""
    import atexit

    from ipykernel import kernelapp

    kernelapp.launch_new_instance(argv=args)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(0)


class ForkedKernel:
    """The part of :class:`subprocess.Popen` jupyter_client's local provisioner uses, for a kernel the
    server forked: its exit status arrives from the server."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, server: "KernelServer"):
        self.pid, self.returncode, self._server = pid, None, server

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_status(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.poll() is None:
            if not self._server.wait_exit(self.pid, timeout):
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
        return self.poll()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class KernelServer:
    """A server forking the chapter kernels of one build (see the module docstring), started with
    ``env`` (the environment of the build's kernels); close it when the build's chapters ended.
    :meth:`spawn` returns ``None`` when the server is gone (the kernel is then started the usual way)."""

    def __init__(self, env: Mapping[str, str]):
        import queue

        self.env = {str(k): str(v) for k, v in env.items()}
        self._lock = threading.Lock()          # one request and its answer at a time
        self._pids: queue.Queue = queue.Queue()   # the answers: a kernel's pid, None once the server is gone
        self._exits: dict[int, int] = {}
        self._gone = self._closed = self._asked = False
        self._changed = threading.Condition()
        req_r, self._requests = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", _MAIN, str(req_r), str(rep_w)],
                                          pass_fds=(req_r, rep_w), env=self.env, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
        finally:
            os.close(req_r)
            os.close(rep_w)
        processes.register(self._proc.pid)
        self._replies = os.fdopen(rep_r, "rb")
        self._reader = threading.Thread(target=self._read, daemon=True, name="kernel-server")
        self._reader.start()

    def _read(self) -> None:
        for line in self._replies:
            kind, _, rest = line.decode().strip().partition(" ")
            if kind == "pid":
                self._pids.put(int(rest))
            elif kind == "exit":
                pid, status = (int(x) for x in rest.split())
                with self._changed:
                    self._exits[pid] = status
                    self._changed.notify_all()
        with self._changed:   # the server is gone: so are the kernels it forked
            self._gone = True
            self._changed.notify_all()
        self._pids.put(None)

    def serves(self, cmd: Sequence[str], env: Mapping[str, str]) -> bool:
        """Whether a kernel of command line ``cmd`` and environment ``env`` is one this server can fork:
        this Python's ``ipykernel_launcher``, and the same environment but for variables read late."""
        if self._gone or list(cmd[:3]) != [sys.executable, "-m", "ipykernel_launcher"]:
            return False
        # a relative (or empty) PYTHONPATH entry names the folder a process starts in: the chapter's
        # for a kernel jupyter_client starts, but the build's for the server that imported for it
        path = env.get("PYTHONPATH", "")
        if path and not all(os.path.isabs(p) for p in path.split(os.pathsep)):
            return False
        return self.has_env(env)

    def has_env(self, env: Mapping[str, str]) -> bool:
        """Whether this server was started with ``env`` but for the variables kernels read late."""
        def early(e: Mapping[str, str]) -> dict[str, str]:
            return {str(k): str(v) for k, v in e.items() if not str(k).startswith(LATE_VARIABLES)}

        return not self._gone and early(env) == early(self.env)

    def spawn(self, cmd: Sequence[str], env: Mapping[str, str], cwd: str) -> ForkedKernel | None:
        """Fork the kernel of command line ``cmd`` (see :meth:`serves`) in ``cwd`` with ``env``."""
        request = json.dumps({"argv": list(cmd[3:]), "env": dict(env), "cwd": str(cwd)}) + "\n"
        with self._lock:
            self._asked = True
            try:
                os.write(self._requests, request.encode())
            except OSError:
                return None
            pid = self._pids.get()
        return None if pid is None else ForkedKernel(pid, self)

    def exit_status(self, pid: int) -> int | None:
        with self._changed:
            if pid in self._exits:
                return self._exits[pid]
            return -signal.SIGKILL if self._gone else None

    def wait_exit(self, pid: int, timeout: float | None) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: pid in self._exits or self._gone, timeout)

    def close(self) -> None:
        """End the server (its kernels with it) and wait for it; closing it again does nothing. A
        server never asked for a kernel (a build that failed at its plan) is killed at once, in the
        middle of its imports if need be, instead of being waited for."""
        if self._closed:
            return
        self._closed = True
        try:
            os.close(self._requests)
        except OSError:
            pass
        with self._lock:
            if not self._asked:   # no kernel of its own to end
                self._proc.kill()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        processes.unregister(self._proc.pid)
        self._reader.join(timeout=10)
