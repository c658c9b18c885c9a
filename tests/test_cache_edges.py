"""Issue 23 §5: a cache that cannot be written (a path that is a file, an unwritable folder, a full
disk) costs one warning and the work is done uncached, never a traceback; cache files follow the
umask, so a group-shared cache stays shared."""
import errno
import os
import stat
import warnings

import numpy as np
import pytest

import recmetrics as rm
from recmetrics import study
from recmetrics.data.simulate import simulate
from recmetrics.runs.cache import load_run, save_run


@pytest.fixture(scope="module")
def ratings():
    return simulate(40, 60, 900, seed=1)


def _uncached_warnings(caught):
    return [str(w.message) for w in caught if "cannot write the cache file" in str(w.message)]


def test_a_cache_path_that_is_a_file_runs_uncached_with_one_warning(ratings, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = study.run_systems(ratings, ["Pop", "Random"], k=2, n=10, cache_dir=blocker, progress=False)
    msgs = _uncached_warnings(caught)
    assert len(msgs) == 1, msgs                      # one warning, not one per run
    assert "a part of the path is a file, not a folder" in msgs[0] and "computed without the cache" in msgs[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        st = study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=blocker, progress=False)
    msgs = _uncached_warnings(caught)
    assert len(msgs) == 2 and "score cube is not cached" in msgs[1], msgs   # its runs, its cube
    assert len(runs.timings) == 4 and st.cube.shape[2] == 2 and blocker.read_text() == "not a folder"


@pytest.mark.parametrize("err,reason", [(errno.ENOSPC, "the disk is full"), (errno.EACCES, "permission denied"),
                                        (errno.EROFS, "read-only file system")])
def test_a_full_disk_or_an_unwritable_cache_runs_uncached_with_one_warning(ratings, tmp_path, monkeypatch, err, reason):
    import pyarrow.parquet as pq

    def fail(*args, **kwargs):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(pq, "write_table", fail)      # every run file write fails as the system would
    monkeypatch.setattr(np, "savez", fail)            # and the cube's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = study.run_systems(ratings, ["Pop", "Random"], k=2, n=10, cache_dir=tmp_path / "c", progress=False)
        st = study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=tmp_path / "d", progress=False)
    msgs = _uncached_warnings(caught)
    assert len(msgs) == 3 and all(reason in m for m in msgs), msgs   # the runs twice, the cube once
    assert len(runs.timings) == 4 and np.isfinite(st.cube).any()
    assert not [p for p in (tmp_path / "c").rglob("*") if p.is_file()]   # no temporary file left behind


@pytest.mark.parametrize("mask", [0o002, 0o022, 0o077])
def test_cache_files_follow_the_umask(tmp_path, mask):
    run = rm.Run.from_lists({"u": ["a", "b"]})
    old = os.umask(mask)
    try:
        path = save_run(run, tmp_path / "r.parquet")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert load_run(path)[0].items.tolist() == run.items.tolist()


def test_cube_files_follow_the_umask(ratings, tmp_path):
    old = os.umask(0o002)
    try:
        study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=tmp_path / "c", progress=False)
    finally:
        os.umask(old)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o664 for p in files), \
        [(p.name, oct(p.stat().st_mode)) for p in files]


def test_two_builds_needing_one_run_fit_it_once(ratings, tmp_path, monkeypatch):
    # chapters running side by side (recmetrics report --jobs 2) ask for the same runs: each run is
    # fitted under its cache file's lock, so the second caller fits another one meanwhile, then
    # waits and loads it, and no lock file is left in the cache
    import threading

    from recmetrics.runs import systems

    fitted, by, real = [], [], systems._fit_recommend

    def slow_fit(name, f, *args):
        fitted.append((name, f))
        by.append(threading.current_thread().name)
        import time
        time.sleep(0.3)            # both callers are inside run_systems while the first one fits
        return real(name, f, *args)

    monkeypatch.setattr(systems, "_fit_recommend", slow_fit)
    out = {}

    def build(i):
        out[i] = study.run_systems(ratings, ["Pop", "Random"], k=2, n=10, cache_dir=tmp_path, progress=False)

    threads = [threading.Thread(target=build, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(fitted) == [("Pop", 0), ("Pop", 1), ("Random", 0), ("Random", 1)]   # each once
    assert len(set(by)) == 2          # a run the other is fitting is left for last: they share the work
    cached = out[0].timings["cached"].to_numpy() | out[1].timings["cached"].to_numpy()
    assert cached.all() and (out[0].timings["cached"] ^ out[1].timings["cached"]).all()
    for key in out[0]:
        a, b = out[0][key], out[1][key]
        assert np.array_equal(a.items, b.items) and np.array_equal(a.scores, b.scores)
    assert not list(tmp_path.glob("*.lock"))
