"""Chapter kernels forked by the build's kernel server are the kernels jupyter_client would start:
the chapter's folder and environment, a session of their own, fresh randomness, the same outputs;
kernels it cannot start the same way are left to jupyter_client; its kernels end with it."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from recmetrics import report
from recmetrics.report import kernel, kernel_server
from recmetrics.report.execute import execute_notebook
from test_report_build import _notebook, _stream, checkout_pythonpath

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="kernels are forked on Linux only")

_PROBE = ("import os, sys, numpy, random\n"
          "print('folder:', os.getcwd())\n"
          "print('variable:', os.environ.get('RECMETRICS_PROBE'))\n"
          "print('session leader:', os.getsid(0) == os.getpid() == os.getpgid(0))\n"
          "print('launcher:', os.path.basename(sys.argv[0]))\n"
          "print('path head:', repr(sys.path[0]))\n"
          "print('interrupt handler:', __import__('signal').getsignal(__import__('signal').SIGINT) is not None)\n"
          "print('parent:', os.getppid())\n"
          "print('draws:', numpy.random.random(), random.random())")


@pytest.fixture
def server(monkeypatch):
    """A server started in the test itself (pytest's ``PYTEST_CURRENT_TEST`` differs between a
    fixture's set-up and the test, and a kernel's environment must be the server's)."""
    monkeypatch.setenv("PYTHONPATH", checkout_pythonpath())
    monkeypatch.delenv("RECMETRICS_KERNEL_SERVER", raising=False)
    servers = []

    def start():
        servers.append(kernel_server.start(dict(os.environ)))
        assert servers[-1] is not None
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _lines(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines())


def test_a_forked_kernel_runs_a_notebook_as_a_started_one_does(tmp_path, server):
    """The same notebook, executed by a kernel jupyter_client starts and by two forked ones: the same
    folder, variable, session, launcher and import path; only the forked kernels' parent is the
    server, and each draws its own random numbers."""
    server = server()
    nb = _notebook(tmp_path / "probe.ipynb", "x = 1", _PROBE)
    folder = tmp_path / "chapter"
    folder.mkdir()
    seen = {}
    for name, srv in (("started", None), ("forked", server), ("forked again", server)):
        out = execute_notebook(nb, tmp_path / f"{name}.ipynb", {}, kernel_name="python3", cwd=folder,
                               env={"RECMETRICS_PROBE": name}, log=None, server=srv)
        seen[name] = _lines(_stream(out))
    for name, lines in seen.items():
        assert lines["folder"] == str(folder) and lines["variable"] == name, lines
        same = {k: v for k, v in lines.items() if k not in ("variable", "parent", "draws")}
        assert same == {k: v for k, v in seen["started"].items() if k not in ("variable", "parent", "draws")}
    assert seen["started"]["session leader"] == "True" and seen["started"]["launcher"] == "ipykernel_launcher.py"
    assert seen["started"]["parent"] == str(os.getpid())
    assert seen["forked"]["parent"] == seen["forked again"]["parent"] == str(server._proc.pid)
    assert len({lines["draws"] for lines in seen.values()}) == 3, seen


def test_only_kernels_of_this_python_and_environment_are_forked(server):
    """A kernel of another Python or kernel spec, or whose environment differs in a variable read at
    start-up (a thread pool, an import path), is started by jupyter_client; the report's own
    variables may differ."""
    server = server()
    cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "k.json"]
    env = dict(server.env)
    assert server.serves(cmd, {**env, "RECMETRICS_CHAPTER": "01_x", "JPY_SESSION_NAME": "s"})
    assert not server.serves(["/usr/bin/python3", *cmd[1:]], env)
    assert not server.serves([sys.executable, "-m", "other_kernel", "-f", "k.json"], env)
    assert not server.serves(cmd, {**env, "OPENBLAS_NUM_THREADS": "7"})
    assert not server.serves(cmd, {**env, "PYTHONPATH": "/elsewhere"})
    for relative in ("", "lib", "/abs" + os.pathsep, os.pathsep + "/abs"):   # the folder a process starts in
        assert not server.serves(cmd, {**env, "PYTHONPATH": relative})
    assert not server.serves(cmd, {k: v for k, v in env.items() if k != "PATH"})


def test_no_server_where_it_is_switched_off(monkeypatch):
    monkeypatch.setenv("RECMETRICS_KERNEL_SERVER", "0")
    assert kernel_server.start(dict(os.environ)) is None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


def _kernels(server, n: int) -> list:
    async def start():
        manager = kernel.kernel_manager({}, server=server)(kernel_name="python3")
        await manager.start_kernel(extra_arguments=kernel.kernel_arguments())
        return manager

    managers = [asyncio.run(start()) for _ in range(n)]
    assert all(isinstance(m.provisioner.process, kernel_server.ForkedKernel) for m in managers)
    assert all(_alive(m.provisioner.pid) for m in managers)
    return managers


def _ends(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_a_forked_kernels_end_is_seen_and_its_kernels_end_with_the_server(server):
    """A forked kernel killed reports its signal as a started one does (``poll`` gives ``-9``); one
    still running when the server closes (the build ended) ends with it, and one whose server was
    killed ends by itself."""
    first, second = _kernels(server(), 2)
    assert first.provisioner.process.poll() is None
    assert kernel.kernel_group(first) == first.provisioner.pid   # its own group, registered with the guard
    os.kill(first.provisioner.pid, signal.SIGKILL)
    assert first.provisioner.process.wait(timeout=10) == -signal.SIGKILL
    closed = first.provisioner.process._server
    closed.close()
    assert _ends(second.provisioner.pid)
    assert not closed.serves([sys.executable, "-m", "ipykernel_launcher"], closed.env)

    killed = server()
    (third,) = _kernels(killed, 1)
    os.kill(killed._proc.pid, signal.SIGKILL)
    assert _ends(third.provisioner.pid)
    assert third.provisioner.process.wait(timeout=10) is not None
    for m in (first, second, third):
        kernel.end_kernel(m)


_SCAN = ("import os, sys, types\n"
         "needle = os.environ['RECMETRICS_PROBE']\n"
         "control = types.ModuleType('control'); control.planted = [needle + '/x']; sys.modules['control'] = control\n"
         "def holds(v, depth=0):\n"
         "    if isinstance(v, (str, os.PathLike)):\n"
         "        return needle in str(v)\n"
         "    if depth < 2 and isinstance(v, (list, tuple, set, frozenset)):\n"
         "        return any(holds(x, depth + 1) for x in list(v)[:1000])\n"
         "    if depth < 2 and isinstance(v, dict):\n"
         "        return any(holds(x, depth + 1) for x in list(v.values())[:1000])\n"
         "    return False\n"
         "hits = sorted(f'{n}.{k}' for n, m in list(sys.modules.items()) if n != '__main__'\n"
         "              for k, v in list(getattr(m, '__dict__', {}).items()) if holds(v))\n"
         "print('hits:', hits)")


def test_the_servers_imports_keep_no_trace_of_the_folder_it_started_in(tmp_path, server, monkeypatch):
    """The server imports :data:`PRELOAD` in the build's folder, once for every kernel; a module that
    kept its folder at import (hypothesis keeps ``cwd/.hypothesis`` as its default storage) would
    make every forked kernel write there, not in its chapter's folder. No preloaded module keeps it
    (the scan finds a planted one)."""
    build = tmp_path / "the_builds_own_folder"
    build.mkdir()
    monkeypatch.chdir(build)
    srv = server()
    nb = _notebook(tmp_path / "scan.ipynb", "x = 1", _SCAN)
    folder = tmp_path / "chapter"
    folder.mkdir()
    out = execute_notebook(nb, tmp_path / "scanned.ipynb", {}, kernel_name="python3", cwd=folder,
                           env={"RECMETRICS_PROBE": build.name}, log=None, server=srv)
    assert _lines(_stream(out)) == {"hits": "['control.planted']"}
    assert "hypothesis" not in kernel_server.PRELOAD


def test_a_build_that_executes_every_chapter_starts_its_server_before_the_plan(tmp_path, monkeypatch):
    """A forced build (and the first build of a work folder) starts one server before it makes its plan
    and its chapters' kernels are forked by it; the server is closed before the site is built. A build
    with nothing to execute starts none; one with a changed chapter starts its own after the plan."""
    from recmetrics.report import book as book_mod
    from recmetrics.report.site import mark_site
    from test_report_build import _project

    monkeypatch.setenv("PYTHONPATH", checkout_pythonpath())
    monkeypatch.delenv("RECMETRICS_KERNEL_SERVER", raising=False)
    project = _project(tmp_path)
    events: list[str] = []
    servers: list = []
    real_start, real_plan = kernel_server.start, book_mod.make_plan

    def start(env):
        servers.append(real_start(env))
        events.append("server")
        return servers[-1]

    def plan(*a, **kw):
        events.append("plan")
        return real_plan(*a, **kw)

    def site(book, out, **kw):   # the Sphinx build is not what this test is about
        events.append("site: server closed" if all(s._closed for s in servers) else "site: server open")
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text("<html></html>")
        mark_site(out)
        return out / "index.html"

    forked: list[bool] = []
    real_spawn = kernel_server.KernelServer.spawn

    def spawn(self, *a, **kw):
        kernel = real_spawn(self, *a, **kw)
        forked.append(kernel is not None)
        return kernel

    monkeypatch.setattr(kernel_server, "start", start)
    monkeypatch.setattr(book_mod, "make_plan", plan)
    monkeypatch.setattr(book_mod, "build_book", site)
    monkeypatch.setattr(kernel_server.KernelServer, "spawn", spawn)

    def build(**kw):
        events.clear()
        forked.clear()
        report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], out=tmp_path / "site",
                     log=None, check_offline=False, jobs=2, **kw)
        return list(events)

    assert build() == ["server", "plan", "site: server closed"]   # a new work folder: every chapter runs
    assert forked == [True, True, True]
    assert build() == ["plan", "site: server closed"]            # nothing changed: no server
    assert build(force=True) == ["server", "plan", "site: server closed"]
    assert forked == [True, True, True]
    _notebook(project["notebooks"] / "02_b.ipynb", "seed = 0", "print('B changed')", depends_on=["03_c"])
    assert build() == ["plan", "server", "site: server closed"]  # one chapter changed: after the plan
    assert forked == [True]
    assert all(s._closed for s in servers) and len(servers) == 3
    # a build that fails at its plan kills the server it started, in the middle of its imports
    with pytest.raises(Exception, match="bogus"):
        build(force=True, overrides={"bogus": 1})
    assert len(servers) == 4 and servers[-1]._proc.returncode == -signal.SIGKILL
