"""No build hangs and no process outlives its build: kernels started at once by several builds, the
chapters' time limit, a kernel that stops answering, and builds killed (SIGKILL, SIGTERM) while a
chapter runs its loky workers and while Sphinx writes the site.

The builds run tiny throw-away chapters (:mod:`test_report_build`'s project); every process a
build starts inherits a tag in its environment, so the test finds the build's descendants in
``/proc`` even after they were re-parented.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from recmetrics import report
from recmetrics.report import kernel, state
from test_report_build import REPO, _notebook, _project, _run, _stream, checkout_pythonpath

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")


@pytest.fixture
def kernel_env(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", checkout_pythonpath())


def _tagged(tag: str) -> list[tuple[int, str]]:
    """``(pid, command line)`` of every live process whose environment carries ``tag``."""
    found = []
    needle = f"RECMETRICS_TEST_TAG={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            status = (entry / "status").read_text()
            if "\nState:\tZ" in status:   # a zombie has ended; its parent has not reaped it yet
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append((int(entry.name), cmd))
    return found


def _wait(cond, timeout: float = 180, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.2)


def _all_end(tag: str, within: float) -> None:
    """No process carrying ``tag`` is alive at some moment within ``within`` seconds, and none is
    half a second later (none started meanwhile)."""
    deadline = time.monotonic() + within
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _tagged(tag) == [], _tagged(tag)
    time.sleep(0.5)
    assert _tagged(tag) == [], _tagged(tag)


def _build(project: dict, tag: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    """``recmetrics report ARGS`` of ``project`` in a subprocess (not a session leader: a kill
    reaches the build alone, as ``kill PID`` does), its environment tagged with ``tag``."""
    script = project["root"] / "run.py"
    script.write_text("import pathlib, sys\nimport recmetrics.report.paths as P\n"
                      "P.repo_root = lambda: pathlib.Path(sys.argv[1])\n"
                      "from recmetrics import cli\nsys.exit(cli.main(['report', *sys.argv[2:]]))\n")
    # the project's own work folder (its books/main), as a checkout of its own would have: a build
    # killed here must not leave its records where another test's build reads them
    full = dict(os.environ, PYTHONPATH=str(REPO), RECMETRICS_TEST_TAG=tag,
                RECMETRICS_BOOKS=str(project["root"] / "books"), **(env or {}))
    return subprocess.Popen([sys.executable, str(script), str(project["root"]), *args], cwd=project["root"],
                            env=full, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _socket_folder(connection_file: Path) -> str:
    """The folder of a kernel's Unix sockets, from its connection file."""
    import json

    info = json.loads(connection_file.read_text())
    assert info.get("transport") == "ipc", info
    return str(Path(info["ip"]).parent)


def _end_all(tag: str) -> None:
    for pid, _ in _tagged(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# ------------------------------------------------------------------- kernels started at once
_RACE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from jupyter_client import connect

    # every build draws the same "free" ports: the race between builds, forced
    ports = iter(range(47011, 47111))
    connect.LocalPortCache.find_available_port = lambda self, ip: next(ports)
    from recmetrics.report.execute import execute_notebook
    go = float(sys.argv[3])
    time.sleep(max(0.0, go - time.time()))
    execute_notebook(sys.argv[1], sys.argv[2], {}, log=None)
""")


@pytest.mark.slow
def test_kernels_of_several_builds_started_at_once_each_answer(tmp_path, kernel_env):
    """Three builds start a chapter's kernel at the same moment, each having drawn the same port
    numbers (what two processes picking free ports at once can get): every chapter runs in its own
    kernel. Over TCP the kernels after the first died at start ("Address already in use")."""
    nb = _notebook(tmp_path / "pid.ipynb", "x = 0", "import os\nprint('kernel', os.getpid())")
    script = tmp_path / "race.py"
    script.write_text(_RACE)
    go = time.time() + 6
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, str(script), str(nb), str(tmp_path / f"out{i}.ipynb"), str(go)],
                              env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(3)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err[-2000:]
    pids = {_stream(tmp_path / f"out{i}.ipynb").split()[-1] for i in range(3)}
    assert len(pids) == 3, pids   # three kernels, each answered its own build


def test_a_kernel_talks_over_its_own_unix_sockets():
    manager = kernel.kernel_manager({})()
    try:
        manager.use_own_sockets()
        assert manager.transport == "ipc" and Path(manager.ip).parent.name.startswith("rm-kernel-")
        other = kernel.kernel_manager({})()
        other.use_own_sockets()
        assert Path(other.ip).parent != Path(manager.ip).parent
        kernel.end_kernel(other)
        assert not Path(other.ip).parent.exists()
    finally:
        kernel.end_kernel(manager)


class _Unanswered:
    """A kernel manager whose heartbeat socket takes pings and never answers (a kernel shutting down)."""

    def __init__(self, tmp_path):
        import zmq

        self.url = f"ipc://{tmp_path}/hb"
        self.sock = zmq.Context.instance().socket(zmq.REP)
        self.sock.bind(self.url)

    def _make_url(self, channel):
        return self.url

    def get_connection_info(self):
        raise RuntimeError("no IOPub to listen to")


def test_a_ping_to_a_kernel_going_away_ends_with_its_chapter(tmp_path):
    """The watchdog's heartbeat ping waits for its answer, but not once the chapter ended: a kernel
    shut down mid-ping never answers, and the chapter used to wait out the whole ping (5 s)."""
    import threading

    gone = _Unanswered(tmp_path)
    try:
        t0 = time.monotonic()
        assert not kernel._answers(gone, timeout=0.3)            # unanswered: not answering
        assert 0.25 <= time.monotonic() - t0 < 3
        done = threading.Event()
        threading.Timer(0.2, done.set).start()
        t0 = time.monotonic()
        assert kernel._answers(gone, timeout=30, done=done)      # the chapter ended: no verdict, no wait
        assert time.monotonic() - t0 < 3
        dog = kernel.Watchdog(None, silence=60, every=2, stall=600)
        with dog:
            dog.attach(gone)
            time.sleep(2.3)                                      # the first ping is out, unanswered
            t0 = time.monotonic()
        assert time.monotonic() - t0 < 1.0 and dog.reason is None
    finally:
        gone.sock.close(linger=0)


# ------------------------------------------------------------------------------- no silent wait
@pytest.mark.slow
def test_a_chapter_past_its_time_limit_fails_naming_it(tmp_path, kernel_env, monkeypatch):
    project = _project(tmp_path, sleep=40)
    monkeypatch.setenv("RECMETRICS_CHAPTER_TIMEOUT", "4")
    t0 = time.monotonic()
    with pytest.raises(report.ReportError, match=r"notebook 01_a.ipynb was stopped: it ran past its time limit "
                                                 r"of 4 s"):
        _run(project, only=["01_a"])
    assert time.monotonic() - t0 < 35
    assert state.read_state(project["generated"])["attempts"]["01_a"]["status"] == "failed"


def test_the_limit_follows_the_recorded_time(monkeypatch):
    monkeypatch.delenv("RECMETRICS_CHAPTER_TIMEOUT", raising=False)
    assert kernel.chapter_limit(None) == kernel.LIMIT_FLOOR
    assert kernel.chapter_limit(1000.0) == 5000.0
    monkeypatch.setenv("RECMETRICS_CHAPTER_TIMEOUT", "2")
    assert kernel.chapter_limit(1.0) == 5.0 and kernel.chapter_limit(None) == 2.0
    for bad in ("0", "-1", "soon", "inf", "nan"):
        monkeypatch.setenv("RECMETRICS_CHAPTER_TIMEOUT", bad)
        with pytest.raises(ValueError, match="RECMETRICS_CHAPTER_TIMEOUT"):
            kernel.chapter_limit(None)


@pytest.mark.parametrize("var", ["RECMETRICS_CHAPTER_TIMEOUT", "RECMETRICS_KERNEL_SILENCE"])
def test_a_bad_limit_is_refused_at_planning(monkeypatch, capsys, var):
    from recmetrics import cli

    def refuse(*a, **k):
        raise AssertionError("the report went past planning")

    monkeypatch.setattr("recmetrics.report.book.make_plan", refuse)
    monkeypatch.setenv(var, "ten minutes")
    assert cli.main(["report"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"recmetrics: error: ${var}='ten minutes': expected a number of seconds > 0", err


@pytest.mark.slow
def test_the_limit_comes_from_the_chapters_record(tmp_path, kernel_env, monkeypatch):
    """A chapter that took ~3 s is stopped at 5x that when its next run hangs (the floor set low)."""
    project = _project(tmp_path, sleep=3)
    _run(project, only=["01_a"])
    plan = report.make_plan("quick", "movielens-small", notebooks_dir=project["notebooks"],
                            generated_dir=project["generated"])
    from recmetrics.report.execute import expected_seconds

    seconds = expected_seconds(plan, {"01_a": state.read_record(project["generated"] / "01_a.ipynb")})
    assert 3 <= seconds["01_a"] < 15
    monkeypatch.setenv("RECMETRICS_CHAPTER_TIMEOUT", "1")
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              "import time\ntime.sleep(300)")
    t0 = time.monotonic()
    with pytest.raises(report.ReportError, match=rf"past its time limit of {5 * seconds['01_a']:.0f} s"):
        _run(project, only=["01_a"])
    assert time.monotonic() - t0 < 5 * seconds["01_a"] + 60


@pytest.mark.slow
def test_a_kernel_that_stops_answering_is_detected(tmp_path, kernel_env, monkeypatch):
    """The kernel stops (SIGSTOP: alive, silent, as a kernel that no longer answers): the chapter
    fails naming it within seconds, instead of a wait without end."""
    project = _project(tmp_path)
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)")
    monkeypatch.setenv("RECMETRICS_KERNEL_SILENCE", "3")
    box: dict = {}

    def go():
        try:
            _run(project, only=["01_a"])
        except Exception as exc:   # noqa: BLE001 - handed to the test
            box["exc"] = exc

    import threading

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(90)
    assert not t.is_alive(), "the build still waits for the silent kernel"
    assert isinstance(box.get("exc"), report.ReportError), box
    assert "01_a.ipynb was stopped: its kernel stopped answering (no heartbeat for 3 s;" in str(box["exc"])


_DROP_REPLY = """import os, pathlib
marker = pathlib.Path(os.environ["TEST_DROP_MARKER"])
if not marker.exists():      # the first run loses this cell's reply: the kernel goes idle, the client waits
    marker.touch()
    kernel = get_ipython().kernel
    send = kernel.session.send

    def lossy(stream, msg_or_type, *a, **k):
        kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("header", {}).get("msg_type")
        if kind == "execute_reply":
            kernel.session.send = send
            return None
        return send(stream, msg_or_type, *a, **k)

    kernel.session.send = lossy
print("ran")"""


def test_a_kernel_idle_while_its_chapter_waits_is_run_again(tmp_path, kernel_env, monkeypatch):
    """The kernel runs the cell but its reply is lost (as when a message goes missing between the
    client and the kernel): the kernel sits idle, the client would wait without end. The watchdog
    sees the kernel idle under a running chapter, stops it, and the chapter is executed once more."""
    project = _project(tmp_path)
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              _DROP_REPLY)
    monkeypatch.setenv("RECMETRICS_KERNEL_STALL", "3")
    monkeypatch.setenv("TEST_DROP_MARKER", str(tmp_path / "dropped"))
    log: list[str] = []
    t0 = time.monotonic()
    records = _run(project, only=["01_a"], log=log.append)
    assert time.monotonic() - t0 < 90 and "01_a" in records
    assert (tmp_path / "dropped").exists()
    assert any("01_a.ipynb was stopped: its kernel sat idle for" in m and "executing it again" in m for m in log), log
    assert "ran" in _stream(project["generated"] / "01_a.ipynb")


def test_a_stall_setting_that_is_not_seconds_is_refused(monkeypatch):
    from recmetrics.errors import InputError

    monkeypatch.setenv("RECMETRICS_KERNEL_STALL", "soon")
    with pytest.raises(InputError, match="RECMETRICS_KERNEL_STALL"):
        kernel.check_settings()


# ------------------------------------------------------------ nothing outlives a killed build
def test_a_child_run_for_the_build_ends_with_it(tmp_path):
    """What the build runs to its end (the Sphinx build, ``npm pack``), and what that child started,
    ends when the build is killed (SIGKILL: nothing of the build can clean up)."""
    tag = uuid.uuid4().hex
    script = ("import sys\nfrom recmetrics.report.processes import run_child\n"
              "run_child(['sh', '-c', 'sleep 300 & sleep 300'])\n")
    proc = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(REPO),
                                                                     RECMETRICS_TEST_TAG=tag))
    try:
        _wait(lambda: sum("sleep 300" in cmd for _, cmd in _tagged(tag)) >= 2, 60, "the child and its child run")
        proc.kill()
        proc.wait(timeout=30)
        _all_end(tag, within=5)
    finally:
        _end_all(tag)
        if proc.poll() is None:
            proc.kill()


_LOKY = ("import os, pathlib, time\nfrom joblib import Parallel, delayed\nfrom ipykernel import get_connection_file\n"
         "print(sorted(set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(8)))))\n"
         "marker = pathlib.Path(os.environ['TEST_STARTED_MARKER'])\nmarker.with_suffix('.tmp').write_text(get_connection_file())\n"
         "marker.with_suffix('.tmp').replace(marker)\ntime.sleep(300)")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_build_killed_while_a_chapter_runs_leaves_no_process(tmp_path, sig):
    """Killed while a chapter's kernel runs two loky workers (and loky's resource tracker): 5 s
    later no process the build started is alive."""
    project = _project(tmp_path)
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              _LOKY)
    tag, marker = uuid.uuid4().hex, tmp_path / "started"
    proc = _build(project, tag, "--out", str(tmp_path / "site"), env={"TEST_STARTED_MARKER": str(marker)})
    try:
        _wait(lambda: marker.exists() or proc.poll() is not None, what="the chapter started its workers")
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        before = _tagged(tag)
        # the kernel: started by jupyter_client (ipykernel_launcher) or forked by the build's kernel server
        assert sum("loky" in cmd for _, cmd in before) >= 2, before
        assert any("ipykernel" in cmd or "kernel_server" in cmd for _, cmd in before), before
        sockets = {_socket_folder(Path(marker.read_text()))}
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        time.sleep(5)
        assert _tagged(tag) == [], _tagged(tag)
        assert sockets and not [s for s in sockets if Path(s).exists()], sockets   # the kernels' socket folders
        if sig == signal.SIGTERM:
            err = proc.stderr.read()
            assert proc.returncode == 143 and err.strip().splitlines()[-1].startswith("recmetrics: terminated"), err
    finally:
        _end_all(tag)
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """A project whose chapters are executed (a ``--no-execute`` build goes straight to Sphinx)."""
    root = tmp_path_factory.mktemp("executed")
    project = _project(root)
    project["generated"] = root / "books" / "main" / "generated"   # where the CLI's build (_build) reads them
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = checkout_pythonpath()
    try:
        _run(project)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    return project


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_build_killed_while_sphinx_writes_leaves_no_process(executed, tmp_path, sig):
    """Killed while Sphinx builds the site: 5 s later no process of the build is alive (the Sphinx
    child used to go on writing into the staging folder); after SIGTERM no staging folder is left, and
    the next build removes the one a SIGKILL left."""
    tag = uuid.uuid4().hex
    site = tmp_path / "site"
    proc = _build(executed, tag, "--no-execute", "--out", str(site))
    try:
        _wait(lambda: any("build_sphinx" in cmd for _, cmd in _tagged(tag)) or proc.poll() is not None,
              what="Sphinx started")
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(1)
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        time.sleep(5)
        assert _tagged(tag) == [], _tagged(tag)
        left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site"))
        if sig == signal.SIGTERM:
            assert proc.returncode == 143 and left == [], (proc.returncode, left)
            assert not site.exists()
        else:
            assert [n for n in left if n.startswith(".site.staging")], left   # SIGKILL: nothing could clean up
            again = _build(executed, tag, "--no-execute", "--out", str(site))
            out, err = again.communicate(timeout=600)
            assert again.returncode == 0, err[-3000:]
            assert sorted(p.name for p in tmp_path.iterdir()) == ["site"], list(tmp_path.iterdir())
    finally:
        _end_all(tag)
        if proc.poll() is None:
            proc.kill()


def test_side_by_side_kernels_share_the_cores_and_the_users_setting_wins(tmp_path, kernel_env, monkeypatch):
    """Chapters run two at a time on two cores get one BLAS/OpenMP thread each (left at the default
    of a thread per core, they run more busy threads than cores); one chapter at a time keeps the
    libraries' defaults, and a variable the user set reaches every kernel as it is."""
    from recmetrics.report import execute, profiles

    assert kernel.thread_env(1, cores=2) == {}
    for v in kernel.THREAD_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    assert kernel.thread_env(2, cores=2) == kernel.thread_env(4, cores=2) == dict.fromkeys(kernel.THREAD_VARIABLES, "1")
    assert kernel.thread_env(2, cores=5) == dict.fromkeys(kernel.THREAD_VARIABLES, "2")
    monkeypatch.setattr(profiles, "usable_cores", lambda: 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    seen: dict[str, dict] = {}
    real = execute.execute_notebook

    def spy(source, out, *args, env=None, **kw):
        seen[Path(source).stem] = {v: (env or {}).get(v) for v in kernel.THREAD_VARIABLES}
        return real(source, out, *args, env=env, **kw)

    monkeypatch.setattr(execute, "execute_notebook", spy)
    project = _project(tmp_path / "p")
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              "import os\nprint('threads', os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('OMP_NUM_THREADS'))")
    _run(project, jobs=2)
    assert seen == dict.fromkeys(["01_a", "02_b", "03_c"],
                                 {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": None, "MKL_NUM_THREADS": "1"})
    assert "threads 1 3" in _stream(project["generated"] / "01_a.ipynb")   # what the kernel itself sees
    seen.clear()
    _run(project, jobs=1, force=True)
    assert seen == dict.fromkeys(["01_a", "02_b", "03_c"], dict.fromkeys(kernel.THREAD_VARIABLES))
    assert "threads None 3" in _stream(project["generated"] / "01_a.ipynb")


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's allocator variables are set on Linux only")
def test_kernels_get_the_allocator_settings_unless_the_user_set_any(tmp_path, kernel_env, monkeypatch):
    """Every kernel runs with the build's allocator settings (one chapter at a time or several); a
    ``MALLOC_`` variable the user set means none of them is set, and the user's reaches the kernel."""
    for name in [k for k in os.environ if k.startswith("MALLOC_")]:
        monkeypatch.delenv(name)
    assert kernel.allocator_env() == kernel.ALLOCATOR_VARIABLES
    assert kernel.kernel_env(1) == kernel.ALLOCATOR_VARIABLES
    project = _project(tmp_path / "p")
    probe = "import os\nprint('malloc', *(os.environ.get(v) for v in ('MALLOC_MMAP_MAX_', " \
            "'MALLOC_TRIM_THRESHOLD_', 'MALLOC_ARENA_MAX')))"
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False', probe)
    for jobs in (1, 2):
        _run(project, jobs=jobs, force=True)
        assert f"malloc 0 {1 << 40} None" in _stream(project["generated"] / "01_a.ipynb"), jobs
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    assert kernel.allocator_env() == {}
    _run(project, jobs=1, force=True)
    assert "malloc None None 2" in _stream(project["generated"] / "01_a.ipynb")


# ------------------------------------------------------------ children started ahead of their work
def test_a_child_started_ahead_reads_what_it_is_sent_or_is_ended_unused():
    """``start_child``: the command runs at once and reads what ``finish_child`` sends it later; a
    child never finished is ended, with what it started, by ``stop_child`` (twice: nothing more)."""
    from recmetrics.report import processes

    proc = processes.start_child([sys.executable, "-c", "import sys; print('got', sys.stdin.readline().strip())"])
    done = processes.finish_child(proc, "the arguments\n")
    assert (done.returncode, done.stdout, done.args[0]) == (0, "got the arguments\n", sys.executable)
    tag = uuid.uuid4().hex
    proc = processes.start_child(["sh", "-c", "sleep 300 & sleep 300"], env=dict(os.environ, RECMETRICS_TEST_TAG=tag))
    try:
        _wait(lambda: sum("sleep 300" in cmd for _, cmd in _tagged(tag)) >= 2, 60, "the child and its child run")
        processes.stop_child(proc)
        assert proc.returncode is not None
        _all_end(tag, within=5)
        processes.stop_child(proc)
    finally:
        _end_all(tag)


def test_the_sphinx_child_waits_for_its_build_and_ends_with_it_unused(monkeypatch):
    """The build's Sphinx child (started when a core is free, ``execute_plan``'s ``spare``) imports
    and waits for its arguments; a build that stops before its site ends it at the block's end; closed
    without arguments it ends without building."""
    from recmetrics.report import processes, site

    tag = uuid.uuid4().hex
    monkeypatch.setenv("RECMETRICS_TEST_TAG", tag)
    try:
        with site.sphinx_child() as child:
            assert child.proc is None
            child.start()
            first = child.proc
            child.start()
            assert child.proc is first
            _wait(lambda: any("build_sphinx" in cmd for _, cmd in _tagged(tag)), 60, "the Sphinx child runs")
            time.sleep(3)
            assert first.poll() is None, first.communicate()
        assert first.returncode is not None
        _all_end(tag, within=5)
    finally:
        _end_all(tag)
    done = processes.finish_child(site.start_sphinx(), "")
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


@pytest.mark.slow
def test_spare_is_called_once_every_chapter_started(tmp_path, kernel_env):
    """``execute_plan(spare=...)`` calls it once, after the last chapter started (two at a time, and
    one at a time)."""
    project = _project(tmp_path)
    for jobs in (2, 1):
        log: list[str] = []
        calls: list[list[str]] = []
        p = report.make_plan("quick", "movielens-small", notebooks_dir=project["notebooks"],
                             generated_dir=project["generated"])
        report.execute_plan(p, log=log.append, jobs=jobs, force=True, spare=lambda: calls.append(list(log)))
        started = [m for m in log if m.startswith("executing ")]
        assert len(started) == 3 and len(calls) == 1, (jobs, calls, log)
        assert [m for m in calls[0] if m.startswith("executing ")] == started, (jobs, calls[0])
