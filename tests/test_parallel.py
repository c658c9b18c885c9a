"""parallel.map_tasks: joblib and Dask through one code path, same results for the same seed."""
import os
import subprocess
import sys

import numpy as np
import pytest

from recmetrics import parallel
from recmetrics.errors import InputError


def draw(seed, n):
    return np.random.default_rng(seed).random(n).sum()


def test_local_and_joblib_equal():
    tasks = [(s, 50) for s in parallel.task_seeds(7, 6)]
    serial = parallel.map_tasks(draw, tasks)
    assert serial == parallel.map_tasks(draw, tasks, n_jobs=2)
    assert parallel.task_seeds(7, 6) == parallel.task_seeds(7, 6) != parallel.task_seeds(8, 6)


def _pid(i):
    import os

    return os.getpid()


def _fails_at(i):
    if i == 2:
        raise ValueError("task 2 fails")
    return i


@pytest.mark.parametrize("prefer", [None, "processes"])
def test_local_worker_processes_are_kept_for_the_next_call_until_released(prefer):
    """joblib's worker processes serve the next call too (no second start-up); release_workers ends
    them; threads start none."""
    import os

    import psutil

    def workers():   # processes started since the test began (loky's resource trackers stay: small, shared)
        return {p.pid for p in psutil.Process().children(recursive=True)
                if "resource_tracker" not in " ".join(p.cmdline())} - before

    parallel.release_workers()      # workers an earlier test's joblib call left
    before = set()
    before = workers()              # processes of this test session's fixtures
    pids = parallel.map_tasks(_pid, [(i,) for i in range(6)], n_jobs=2, prefer=prefer)
    assert os.getpid() not in pids and set(pids) <= workers()
    assert set(parallel.map_tasks(_pid, [(i,) for i in range(6)], n_jobs=2, prefer=prefer)) <= set(workers())
    with pytest.raises(ValueError, match="task 2 fails"):
        parallel.map_tasks(_fails_at, [(i,) for i in range(6)], n_jobs=2, prefer=prefer)
    parallel.release_workers()
    assert not workers()
    assert parallel.map_tasks(_pid, [(i,) for i in range(4)], n_jobs=2, prefer="threads") == [os.getpid()] * 4
    assert not workers()


def test_releasing_workers_that_were_never_started_starts_no_process():
    """A build that read nothing on joblib's processes (its Study stored, a Dask cluster) still calls
    release_workers: no executor, and no resource tracker, is started to be ended."""
    code = ("import psutil\nfrom recmetrics.parallel import release_workers\nrelease_workers()\n"
            "print(len(psutil.Process().children(recursive=True)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0"], out


def test_dask_local_cluster_equals_local():
    distributed = pytest.importorskip("dask.distributed")
    tasks = [(s, 50) for s in parallel.task_seeds(3, 5)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert parallel.map_tasks(draw, tasks, client=client) == parallel.map_tasks(draw, tasks)
        assert parallel.map_tasks(draw, tasks, client=cluster.scheduler_address) == parallel.map_tasks(draw, tasks)


def _worker(i):
    from dask.distributed import get_worker

    return get_worker().address         # raises ValueError outside a Dask worker


@pytest.mark.parametrize("workers,processes", [(2, False), (1, True)])
def test_dask_tasks_run_on_the_cluster_workers(workers, processes):
    """The tasks run on the cluster's workers, not in the caller, also on a cluster of a single
    one-thread worker (which joblib's dask back-end counts as one job, and runs in the caller)."""
    distributed = pytest.importorskip("dask.distributed")
    cluster = parallel.local_cluster(workers) if processes else \
        distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        where = parallel.map_tasks(_worker, [(i,) for i in range(8)], client=client)
        assert set(where) <= set(client.scheduler_info()["workers"]) and len(where) == 8
        shared = np.arange(5.0)
        got = parallel.map_tasks(_use_shared_elsewhere, [(shared, i) for i in range(5)],
                                 client=cluster.scheduler_address, scatter=[shared])
        assert [v for v, _ in got] == list(shared)
        if processes:
            assert os.getpid() not in {pid for _, pid in got}


def _variables(names):
    return {k: os.environ.get(k) for k in names}


def test_a_local_cluster_starts_its_workers_with_the_allocator_settings_and_leaves_ours_alone(monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.setenv("RECMETRICS_PROBE", "kept")
    before = dict(os.environ)
    with parallel.local_cluster(1) as cluster:
        assert dict(os.environ) == before        # Dask's nanny wrote its variables here to start the worker
        got = cluster.get_client().run(_variables, [*parallel.WORKER_VARIABLES, "OMP_NUM_THREADS", "RECMETRICS_PROBE"])
    (worker,) = got.values()
    assert worker == {**parallel.WORKER_VARIABLES, "OMP_NUM_THREADS": "1", "RECMETRICS_PROBE": "kept"}


def _rss_mb():
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _allocate(shared, mb):
    block = np.ones(mb * 2**17) + shared[0]      # mb MB of float64, freed when the task ends
    return float(block[-1])


def test_dask_workers_give_back_what_a_call_freed():
    """Started with the allocator settings, a worker keeps the heap it freed; at the end of a call it
    hands back what the call's tasks and shared data held (here 3 x 200 MB of tasks and 200 MB shared)."""
    pytest.importorskip("dask.distributed")
    with parallel.local_cluster(1) as cluster, cluster.get_client() as client:
        (before,) = client.run(_rss_mb).values()
        shared = np.zeros(200 * 2**17)
        assert parallel.map_tasks(_allocate, [(shared, 200)] * 3, client=client, scatter=[shared]) == [1.0] * 3
        (after,) = client.run(_rss_mb).values()
    assert after - before < 100, (before, after)


def test_unreachable_client():
    pytest.importorskip("dask.distributed")
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        parallel.map_tasks(draw, [(1, 2), (2, 2)], client="tcp://127.0.0.1:1", )
    with pytest.raises(InputError, match="Client or a scheduler address"):
        parallel.get_client(42)


def test_study_and_robustness_on_dask_equal_local(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    from test_recommenders import synthetic

    from recmetrics import study
    from recmetrics.meta import robustness as rb

    data = synthetic(seed=5)
    local = study.Study(data, ["Random", "Pop", "ItemKNN(k=20)"], ["P", "nDCG"], [10], k=2, seed=0,
                        cache_dir=tmp_path / "a", progress=False)
    r_local = rb.robustness_study(local, ["ratings", "random-users"], (1.0, 0.3), n_samples=3, seed=4, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = study.Study(data, ["Random", "Pop", "ItemKNN(k=20)"], ["P", "nDCG"], [10], k=2, seed=0,
                             cache_dir=tmp_path / "b", progress=False, client=client)
        r_remote = rb.robustness_study(remote, ["ratings", "random-users"], (1.0, 0.3), n_samples=3, seed=4,
                                       progress=False)
    assert np.array_equal(local.cube, remote.cube, equal_nan=True)
    assert r_local.samples.equals(r_remote.samples)


class _Big:
    """A shared argument that refuses to be pickled: forked workers must inherit it."""

    def __init__(self, values):
        self.values = values

    def __reduce__(self):
        raise AssertionError("the shared argument was pickled")


def _use_shared(big, i):
    import os

    return float(big.values[i]), os.getpid()


def _use_shared_elsewhere(values, i):
    from dask.distributed import get_worker

    get_worker()                        # raises ValueError outside a Dask worker
    return float(values[i]), os.getpid()


def _fails(i):
    if i == 3:
        raise InputError("task 3 fails")
    return i


def _dies(i):
    import os

    if i == 2:
        os._exit(9)     # a worker killed (out of memory, say)
    return i


needs_fork = pytest.mark.skipif(not parallel._can_fork(), reason="fork is not available on this platform")


@needs_fork
def test_forked_workers_inherit_the_shared_argument():
    """prefer="fork": the scatter argument is inherited, never pickled; results in task order and equal
    to the serial ones; the work runs in other processes (2 of them)."""
    import os

    big = _Big(np.arange(40.0) ** 2)
    tasks = [(big, i) for i in range(40)]
    got = parallel.map_tasks(_use_shared, tasks, n_jobs=2, prefer="fork", scatter=[big])
    assert [v for v, _ in got] == [v for v, _ in parallel.map_tasks(_use_shared, tasks)]
    pids = {p for _, p in got}
    assert os.getpid() not in pids and len(pids) <= 2
    assert parallel._INHERITED == []                  # released after the call
    with pytest.raises(AssertionError, match="pickled"):  # the guard works: without scatter it is sent
        parallel.map_tasks(_use_shared, tasks[:2], n_jobs=2, prefer="fork")


@needs_fork
def test_forked_workers_fail_loudly():
    """A task's error reaches the caller as that error; a worker that dies fails the call instead of
    hanging it; -1 means every core."""
    from concurrent.futures.process import BrokenProcessPool

    with pytest.raises(InputError, match="task 3 fails"):
        parallel.map_tasks(_fails, [(i,) for i in range(6)], n_jobs=2, prefer="fork")
    with pytest.raises(BrokenProcessPool):
        parallel.map_tasks(_dies, [(i,) for i in range(6)], n_jobs=2, prefer="fork")
    assert parallel.map_tasks(_fails, [(i,) for i in range(3)], n_jobs=-1, prefer="fork") == [0, 1, 2]
    with pytest.raises(InputError, match="'threads', 'processes' or 'fork'"):
        parallel.map_tasks(_fails, [(0,), (1,)], n_jobs=2, prefer="spawn")


@needs_fork
def test_robustness_on_forked_workers_equals_serial(tmp_path):
    """The robustness study on 2 forked workers: the same samples, bit for bit, as on one."""
    from test_recommenders import synthetic

    from recmetrics import study
    from recmetrics.meta import robustness as rb

    s = study.Study(synthetic(seed=5), ["Random", "Pop", "ItemKNN(k=20)"], ["P", "nDCG", "ERR"], [5, 10], k=2,
                    seed=0, cache_dir=tmp_path, progress=False)
    kw = dict(scenarios=["ratings", "popular-items", "random-users"], sizes=(1.0, 0.9, 0.4), n_samples=3, seed=4,
              progress=False)
    serial = rb.robustness_study(s, **kw)
    forked = rb.robustness_study(s, n_jobs=2, prefer="fork", **kw)
    assert serial.samples.equals(forked.samples)


@pytest.mark.parametrize("own_session", [True, False])
def test_lower_priority_lowers_the_session_group_only_of_a_session_leader(own_session):
    """lower_priority: the process's nice rises by the amount asked, and (where Linux has autogroups)
    the nice of its session's scheduling group too, but only when it leads that session: a niced
    process in another session's group otherwise still takes its group's fair share from a chapter's
    kernel (2.8x slower permutation tests, measured), and the group of the terminal it was started
    from must not be touched."""
    import json
    import os
    import subprocess
    import sys

    script = ("import json, os; from recmetrics import parallel; before = os.nice(0); "
              "group = parallel.lower_priority(7); "
              "print(json.dumps([before, os.nice(0), group, open(parallel.AUTOGROUP).read() "
              "if os.path.exists(parallel.AUTOGROUP) else None]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         start_new_session=own_session, check=True).stdout
    before, after, group, text = json.loads(out)
    assert after == before + 7
    if not own_session:
        assert group is None                            # the caller's group: left alone
        if text is not None:
            with open(parallel.AUTOGROUP) as f:
                assert f.read() == text                 # the same group as this test's, unchanged
    elif text is None:
        pytest.skip("no autogroups on this system (kernel.sched_autogroup_enabled)")
    else:
        assert group == 7 and text.split()[-1] == "7"
        with open(parallel.AUTOGROUP) as f:
            assert f.read() != text                     # the child's own group, not this test's


def test_lower_priority_does_nothing_where_processes_have_no_nice(monkeypatch):
    """Where ``os.nice`` does not exist (Windows), lower_priority changes nothing and does not fail."""
    import os

    monkeypatch.delattr(os, "nice")
    monkeypatch.setattr(os, "getsid", lambda pid: pytest.fail("looked at the session"), raising=False)
    assert parallel.lower_priority(10) is None
