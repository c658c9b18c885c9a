"""parallel.map_tasks: joblib and Dask through one code path, same results for the same seed."""
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


def test_dask_tasks_run_on_the_cluster_workers():
    """The tasks run on the cluster's workers, not in the caller (joblib would fall back to running
    them in order here if it saw n_jobs=1)."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        where = parallel.map_tasks(_worker, [(i,) for i in range(8)], client=client)
        assert set(where) <= set(client.scheduler_info()["workers"]) and len(where) == 8


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
