"""The own-runs book at scale: the runs read and judged once per build (recmetrics.prepared,
recmetrics.report.own_prepared) give the values the chapters computed from the files, bit for bit;
analyses stored by one chapter are read back identical by another; the permutation tests of several
metrics share one sign matrix with unchanged p-values; and the workload of benchmarks/bench_scale.py
(a small version, generated in a second)."""
import importlib.util
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmetrics import prepared
from recmetrics.cache import file_lock
from recmetrics.errors import InputError
from recmetrics.meta import robustness as rob
from recmetrics.meta.discriminative import discriminative_power
from recmetrics.report import own_prepared, own_runs
from recmetrics.report.own_sources import _read_run, _read_source, load_study
from recmetrics.study import Study

METRICS = ["P", "Recall", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"]
CUTOFFS = [5, 10]
GRIDS = {"ratings": [1.0, 0.5, 0.1], "random-items": [1.0, 0.5], "popular-items": [1.0, 0.9],
         "random-users": [1.0, 0.5], "large-users": [1.0, 0.5]}


def _bench():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scale.py"
    spec = importlib.util.spec_from_file_location("bench_scale", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    """Qrels of 300 users on 400 popularity-skewed items and three runs of top-20 lists (different
    quality), written as files by the benchmark's generator."""
    qrels, runs = _bench().workload(tmp_path_factory.mktemp("scale"), n_users=300, n_runs=3, n_items=400,
                                    n_judged=12, depth=20, seed=3, chunk=128, log=lambda *_: None)
    return qrels, runs


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RECMETRICS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _source(workload):
    from recmetrics.report.own_sources import _source_from_files

    qrels, runs = workload
    return _source_from_files(qrels, [str(r) for r in runs], None, None, None)


def _same_judged(a, b):
    for key in a.runs:
        ja, jb = a.judged(*key), b.judged(*key)
        for name in ("users", "lengths", "in_run", "n_rel", "n_nonrel", "run_rows"):
            x, y = getattr(ja, name), getattr(jb, name)
            assert np.array_equal(x, y) and x.dtype == y.dtype, (key, name)
        for name in ("rows", "cols", "vals"):
            x, y = getattr(ja.hits, name), getattr(jb.hits, name)
            assert np.array_equal(x, y) and x.dtype == y.dtype, (key, name)
        assert (ja.depth, ja.threshold, ja.max_rating) == (jb.depth, jb.threshold, jb.max_rating)
        assert len(a.runs[key]) == len(b.runs[key]) and a.runs[key].depth == b.runs[key].depth


def test_workload_is_skewed_and_runs_differ_in_quality(workload):
    qrels, runs = workload
    q = pd.read_csv(qrels)
    assert list(q.columns) == ["user", "item", "rating"] and q["rating"].between(1, 5).all()
    pop = q["item"].value_counts()
    assert pop.iloc[0] > 5 * pop.median()                       # popularity-skewed items
    assert not q.duplicated(["user", "item"]).any()
    src = _source(workload)
    study = Study.from_runs(*_read_source(src)[:2], ["nDCG"], [20], progress=False)
    means = study.table(20)["nDCG"]
    assert means.iloc[-1] > means.iloc[0] + 0.05                # the last run knows the judgments best
    assert sum(1 for _ in open(runs[0])) == 300 * 20            # full top-20 lists, one line per item


def test_a_study_built_one_run_at_a_time_equals_from_runs(workload):
    src = _source(workload)
    runs, qrels, _ = _read_source(src)
    old = Study.from_runs(runs, qrels, METRICS, CUTOFFS, progress=False, dataset="x")
    new = prepared.study_from_files(src["runs"], qrels, METRICS, CUTOFFS, reader=_read_run, dataset="x")
    assert np.array_equal(old.cube, new.cube, equal_nan=True) and np.array_equal(old.users, new.users)
    two = prepared.study_from_files(src["runs"], qrels, METRICS, CUTOFFS, reader=_read_run, dataset="x", n_jobs=2)
    assert np.array_equal(two.cube, new.cube, equal_nan=True)
    _same_judged(two, new)
    assert set(vars(old)) == set(vars(new))
    assert old.threshold == new.threshold and old.ratings.equals(new.ratings)
    _same_judged(old, new)
    assert isinstance(new.runs[("run00", 0)], prepared.RunInfo)
    with pytest.raises(InputError, match="run00.*lists dropped.*items"):
        new.runs[("run00", 0)].items


def test_a_stored_study_gives_the_same_analyses(workload, tmp_path):
    src = _source(workload)
    runs, qrels, _ = _read_source(src)
    old = Study.from_runs(runs, qrels, METRICS, CUTOFFS, progress=False)
    path = prepared.save_prepared(prepared.study_from_files(src["runs"], qrels, METRICS, CUTOFFS, reader=_read_run),
                                  tmp_path / "s.npz", "k")
    new = prepared.load_prepared(path, "k")
    assert np.array_equal(old.cube, new.cube, equal_nan=True) and old.users.dtype == new.users.dtype
    assert old.ratings.equals(new.ratings) and old.qrels[0].to_frame().equals(new.qrels[0].to_frame())
    _same_judged(old, new)
    # robustness masks the judged positions of each run: identical samples, from the file as from the runs
    a = rob.robustness_study(old, None, GRIDS, 3, 7, progress=False)
    b = rob.robustness_study(new, None, GRIDS, 3, 7, progress=False)
    assert a.samples.equals(b.samples) and a.full.equals(b.full)
    scores = lambda s: {f"{m}@10": s.scores(m, 10) for m in s.metrics}  # noqa: E731
    da, db = discriminative_power(scores(old), 500, seed=2), discriminative_power(scores(new), 500, seed=2)
    assert all(da[m].pvalues.equals(db[m].pvalues) for m in da)
    # another key, a damaged file: not trusted (None: the caller reads the files again)
    assert prepared.load_prepared(path, "other") is None
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "bad.npz").write_bytes(bytes(raw))
    assert prepared.load_prepared(tmp_path / "bad.npz", "k") is None
    assert prepared.load_prepared(tmp_path / "missing.npz", "k") is None


def test_the_plan_prepares_once_and_every_chapter_loads_it(workload, cache):
    qrels, runs = workload
    p = own_runs.plan(qrels, runs, parameters={"metrics": METRICS, "cutoffs": CUTOFFS})
    key = p.source["prepared"]
    assert (cache / "prepared" / f"{key}.npz").exists() and p.summary["users"] == {f"run0{i}": 300 for i in range(3)}
    loaded = load_study(p.source, METRICS, CUTOFFS)
    assert getattr(loaded, "prepared_key", None) == key
    plain = load_study({k: v for k, v in p.source.items() if k != "prepared"}, METRICS, CUTOFFS)
    assert not hasattr(plain, "prepared_key")
    assert np.array_equal(loaded.cube, plain.cube, equal_nan=True)
    # other metrics, or a file changed since the plan: the chapter reads the files
    assert not hasattr(load_study(p.source, ["P"], CUTOFFS), "prepared_key")
    st = os.stat(runs[1])
    os.utime(runs[1], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    try:
        assert not hasattr(load_study(p.source, METRICS, CUTOFFS), "prepared_key")
        assert own_runs.plan(qrels, runs, parameters={"metrics": METRICS, "cutoffs": CUTOFFS}).source["prepared"] != key
    finally:
        os.utime(runs[1], ns=(st.st_atime_ns, st.st_mtime_ns))


def test_analyses_are_stored_once_and_read_back_identical(workload, cache, monkeypatch):
    qrels, runs = workload
    p = own_runs.plan(qrels, runs, parameters={"metrics": METRICS, "cutoffs": CUTOFFS})
    study = load_study(p.source, METRICS, CUTOFFS)
    cands = [f"{m}@{c}" for m in METRICS for c in CUTOFFS]
    direct = discriminative_power({c: study.scores(c) for c in cands}, n_permutations=600, seed=1, alpha=0.05)
    first = own_prepared.discriminative_power(study, cands, "concat", n_permutations=600, seed=1, alpha=0.05)
    stored = sorted((cache / "prepared").glob("*-dp-*.npz"))
    import recmetrics.meta.discriminative as disc

    with monkeypatch.context() as mp:   # read back, not computed again
        mp.setattr(disc, "discriminative_power", lambda *a, **k: pytest.fail("recomputed"))
        again = own_prepared.discriminative_power(study, cands, "concat", n_permutations=600, seed=1, alpha=0.05)
    assert len(stored) == 1
    for c in cands:
        for r in (first[c], again[c]):
            assert r.pvalues.equals(direct[c].pvalues) and r.dp == direct[c].dp
            assert np.array_equal(r.curve, direct[c].curve) and r.n_permutations == direct[c].n_permutations
    robust = rob.robustness_study(study, list(GRIDS), GRIDS, 2, 5, aggregate="arithmetic", progress=False)
    for i in range(2):
        r = own_prepared.robustness(study, list(GRIDS), GRIDS, 2, 5, aggregate="arithmetic", progress=False, n_jobs=1)
        assert r.samples.equals(robust.samples) and r.full.equals(robust.full)
        assert r.grids == robust.grids and r.tie_break == robust.tie_break
        assert r.area().equals(robust.area()) and r.area_se().equals(robust.area_se())
        if i == 0:   # the second call reads what the first stored: it computes nothing
            monkeypatch.setattr(rob, "robustness_study", lambda *a, **k: pytest.fail("recomputed"))
    assert len(list((cache / "prepared").glob("*-robustness-*.npz"))) == 1
    # another seed is another result
    other = own_prepared.discriminative_power(study, cands, "concat", n_permutations=600, seed=2, alpha=0.05)
    assert len(list((cache / "prepared").glob("*-dp-*.npz"))) == 2 and other["P@5"].seed == 2


def test_permutation_tests_of_several_metrics_share_one_sign_matrix():
    from recmetrics.meta import compare as cmp
    from recmetrics.meta.significance import pairwise, permutation_pvalues

    rng = np.random.default_rng(1)
    frames = {m: pd.DataFrame(rng.random((4, 300)).round(1), index=list("abcd")) for m in ("P@10", "AP@10", "RR@10")}
    for baseline in (None, "b"):
        alone = pd.concat([pairwise(f, n_permutations=900, seed=3, baseline=baseline).assign(metric=m)
                           for m, f in frames.items()], ignore_index=True)
        pairs = cmp.compare(frames, n_permutations=900, seed=3, baseline=baseline).pairs
        assert np.array_equal(pairs["p"].to_numpy(), alone["p"].to_numpy())
        assert np.array_equal(pairs["p_adj"].to_numpy(), alone["p_adj"].to_numpy())
    # frames whose users differ cannot share the sign vectors: each is tested alone
    assert permutation_pvalues([frames["P@10"], frames["AP@10"].iloc[:, :-1]]) is None


def test_runs_read_and_judged_on_a_dask_cluster_are_identical(workload, cache):
    distributed = pytest.importorskip("dask.distributed")
    src = _source(workload)
    runs, qrels, _ = _read_source(src)
    local = prepared.study_from_files(src["runs"], qrels, METRICS, CUTOFFS, reader=_read_run)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        remote = prepared.study_from_files(src["runs"], qrels, METRICS, CUTOFFS, reader=_read_run,
                                           client=cluster.scheduler_address)
        p = own_runs.plan(*workload, parameters={"metrics": METRICS, "cutoffs": CUTOFFS},
                          scheduler=cluster.scheduler_address)
        assert p.parameters["scheduler"] == cluster.scheduler_address
        assert "scheduler" in p.notebook_parameters(next(n for n in p.notebooks if "03_" in n))
        on_cluster = load_study(p.source, METRICS, CUTOFFS)
        r_remote = own_prepared.robustness(on_cluster, list(GRIDS), GRIDS, 2, 5, client=cluster.scheduler_address,
                                           progress=False)
    assert np.array_equal(local.cube, remote.cube, equal_nan=True)
    _same_judged(local, remote)
    assert np.array_equal(on_cluster.cube, local.cube, equal_nan=True)
    r_local = rob.robustness_study(local, list(GRIDS), GRIDS, 2, 5, progress=False)
    assert r_remote.samples.equals(r_local.samples)


def test_p_value_curves_of_many_pairs_keep_a_bounded_number_of_points():
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    many = {f"m{i}@10": SimpleNamespace(pvalues=pd.DataFrame({"p": rng.random(1225)})) for i in range(9)}
    curves = own_runs.pvalue_curves(many)
    assert len(curves) == 9 * 250 < 5000                      # under Altair's row limit for one chart
    one = curves[curves["metric"] == "m0@10"]
    p = np.sort(many["m0@10"].pvalues["p"].to_numpy())[::-1]
    assert one["pair"].iloc[0] == 1 and one["pair"].iloc[-1] == 1225
    assert np.array_equal(one["p"].to_numpy(), p[one["pair"].to_numpy() - 1])   # points of the exact curve
    few = {"a@5": SimpleNamespace(pvalues=pd.DataFrame({"p": [0.2, 0.01, 0.5]}))}
    assert own_runs.pvalue_curves(few)["p"].tolist() == [0.5, 0.2, 0.01]       # every pair when few


def test_the_prepared_folder_keeps_the_most_recently_used(tmp_path):
    import time

    for i, k in enumerate("abcdef"):
        for suffix in ("", "-dp-x"):
            f = tmp_path / f"{k * 40}{suffix}.npz"
            f.write_bytes(b"x")
            os.utime(f, (time.time() + i, time.time() + i))
    own_prepared._prune(tmp_path, 4)
    assert sorted({f.name[0] for f in tmp_path.glob("*.npz")}) == list("cdef")
    assert len(list(tmp_path.glob("*.npz"))) == 8


def _int_run(path, name):
    """A reader whose runs have integer ids (the judgments' are text): the ordinary path re-types them."""
    import recmetrics as rm

    return rm.Run.from_lists({1: [10, 11], 2: [11, 12]}, name=name)


def test_runs_whose_ids_differ_in_type_take_the_ordinary_path_and_bad_folds_are_named(tmp_path):
    from recmetrics.data.qrels import Qrels

    q = Qrels(pd.DataFrame({"user": ["1", "2"], "item": ["10", "12"], "rating": [5.0, 4.0]}))
    assert prepared.study_from_files({"a": ["x"], "b": ["y"]}, [q], ["P"], [2], reader=_int_run) is None
    with pytest.raises(InputError, match="run 'b' has 2 file"):
        prepared.study_from_files({"a": ["x"], "b": ["y", "z"]}, [q], ["P"], [2], reader=_int_run)
    with pytest.raises(InputError, match="at least 2 systems"):
        prepared.study_from_files({"a": ["x"]}, [q], ["P"], [2], reader=_int_run)


def test_the_plan_stores_the_prepared_study_once(workload, cache, monkeypatch):
    """A qrels file without -l: its threshold is known from its name (a table: 4; a TREC qrels file:
    1), so the prepared Study is keyed and written once (it was written a second time under the
    resolved threshold), and the source names the threshold actually used."""
    from recmetrics.data.io import default_threshold

    assert default_threshold("q.csv") == default_threshold("q.tsv.gz") == 4.0
    assert default_threshold("qrels.txt") == default_threshold("qrels") == 1.0
    saved = []
    real = prepared.save_prepared
    monkeypatch.setattr(prepared, "save_prepared", lambda *a, **k: saved.append(a[2]) or real(*a, **k))
    qrels, runs = workload
    p = own_runs.plan(qrels, runs, parameters={"metrics": METRICS, "cutoffs": CUTOFFS})
    assert saved == [p.source["prepared"]] and p.source["threshold"] == 4.0 == p.summary["threshold"]
    assert list((cache / "prepared").glob("*.npz")) == [cache / "prepared" / f"{saved[0]}.npz"]
    assert getattr(load_study(p.source, METRICS, CUTOFFS), "prepared_key", None) == saved[0]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_robustness_computed_in_the_background_is_what_the_chapter_computes(workload, cache, monkeypatch, n_jobs):
    """start_robustness: chapter 3's study in another process, stored where chapters 3 and 5 read it
    (the same key as the chapters' call), values bit-identical to robustness_study in the chapter;
    nothing started when it is stored already or there is no prepared Study. ``n_jobs`` 2 (the paper
    profile's): on forked workers, niced below the chapters, in a session (scheduling group) of its own."""
    qrels, runs = workload
    params = {"metrics": METRICS, "cutoffs": CUTOFFS, "sizes": GRIDS, "n_samples": 2, "n_jobs": n_jobs}
    p = own_runs.plan(qrels, runs, parameters=params)
    assert p.parameters["scenarios"] == list(rob.SCENARIOS)
    proc = own_prepared.start_robustness(p.parameters)
    assert proc is not None and os.getsid(proc.pid) == proc.pid    # leads its session: may lower its group
    assert proc.wait(timeout=300) == 0
    assert len(list((cache / "prepared").glob("*-robustness-*.npz"))) == 1
    study = load_study(p.source, METRICS, CUTOFFS)
    direct = rob.robustness_study(study, p.parameters["scenarios"], GRIDS, 2, p.parameters["seed"],
                                  aggregate="arithmetic", progress=False)
    monkeypatch.setattr(rob, "robustness_study", lambda *a, **k: pytest.fail("recomputed"))
    got = own_prepared.robustness(study, p.parameters["scenarios"], GRIDS, 2, p.parameters["seed"],
                                  aggregate="arithmetic", n_jobs=1, client=None, progress=False)
    assert got.samples.equals(direct.samples) and got.full.equals(direct.full)
    assert got.area().equals(direct.area()) and got.area_se().equals(direct.area_se())
    assert own_prepared.start_robustness(p.parameters) is None          # stored: nothing to do
    assert own_prepared.start_robustness({**p.parameters, "source": {k: v for k, v in p.source.items()
                                                                       if k != "prepared"}}) is None


def test_the_background_study_follows_the_stopping_rule_and_its_key(workload, cache, monkeypatch):
    """``-p target_se=...`` of the own-runs book (chapters 3 and 5): the background study stops its
    samples by the rule, under the key the chapters read with it; without it the key is the one the
    book always used."""
    qrels, runs = workload
    rule = {"target_se": 0.2, "min_samples": 2}
    params = {"metrics": METRICS, "cutoffs": CUTOFFS, "sizes": GRIDS, "n_samples": 4, "n_jobs": 1, **rule}
    p = own_runs.plan(qrels, runs, parameters=params)
    assert own_prepared.rule_kw(p.parameters) == rule and own_prepared.rule_kw({"target_se": None}) == {}
    key, sc, seed = p.source["prepared"], p.parameters["scenarios"], p.parameters["seed"]
    plain = own_prepared._robustness_path(key, sc, GRIDS, 4, seed, {"aggregate": "arithmetic"})
    assert own_prepared._robustness_path(key, sc, GRIDS, 4, seed, {"aggregate": "arithmetic", "target_se": None,
                                                                     "min_samples": 20}) == plain
    ruled = own_prepared._robustness_path(key, sc, GRIDS, 4, seed, {"aggregate": "arithmetic", **rule})
    assert ruled != plain
    assert own_prepared._robustness_path(key, sc, GRIDS, 4, seed, {"aggregate": "arithmetic", "target_se": 0.2}) == \
        own_prepared._robustness_path(key, sc, GRIDS, 4, seed, {"aggregate": "arithmetic", "target_se": 0.2,
                                                                 "min_samples": 20})   # the default, in one form
    proc = own_prepared.start_robustness(p.parameters)
    assert proc is not None and proc.wait(timeout=300) == 0
    study = load_study(p.source, METRICS, CUTOFFS)
    direct = rob.robustness_study(study, sc, GRIDS, 4, seed, aggregate="arithmetic", progress=False, **rule)
    assert direct.summary()["samples"].nunique() > 1        # some sizes stopped at 2 samples, some did not
    monkeypatch.setattr(rob, "robustness_study", lambda *a, **k: pytest.fail("recomputed"))
    got = own_prepared.robustness(study, sc, GRIDS, 4, seed, aggregate="arithmetic", n_jobs=1, client=None,
                                  progress=False, **rule)
    assert got.samples.equals(direct.samples) and got.full.equals(direct.full)


def test_a_chapter_waits_for_the_robustness_another_process_computes(workload, cache, monkeypatch):
    """While the result's lock is held (by the background process), the chapter's call waits, then
    reads what was stored instead of computing it again."""
    import threading

    qrels, runs = workload
    p = own_runs.plan(qrels, runs, parameters={"metrics": METRICS, "cutoffs": CUTOFFS})
    study = load_study(p.source, METRICS, CUTOFFS)
    args = (study, list(GRIDS), GRIDS, 2, 5)
    path = own_prepared._robustness_path(study, list(GRIDS), GRIDS, 2, 5, {"aggregate": "arithmetic"})
    direct = rob.robustness_study(*args, aggregate="arithmetic", progress=False)
    real, got = rob.robustness_study, {}
    refuse = lambda *a, **k: got.setdefault("recomputed", True)  # noqa: E731
    with file_lock(path):                                          # the other process computing
        reader = threading.Thread(target=lambda: got.update(r=own_prepared.robustness(
            *args, aggregate="arithmetic", progress=False)))
        monkeypatch.setattr(rob, "robustness_study", refuse)
        reader.start()
        reader.join(timeout=1.0)
        assert reader.is_alive()                                      # waiting for the lock
        monkeypatch.setattr(rob, "robustness_study", real)
        own_prepared._robustness_stored(*args, path, aggregate="arithmetic", progress=False)
        monkeypatch.setattr(rob, "robustness_study", refuse)
    reader.join(timeout=60)
    assert "recomputed" not in got
    assert got["r"].samples.equals(direct.samples) and got["r"].full.equals(direct.full)


def test_chapters_reading_the_robustness_study_execute_last():
    """The book's order is the notebooks'; the execution order puts chapters 3 and 5 (they declare
    n_samples) after 1, 2 and 4, so the background study has the time of those three."""
    from types import SimpleNamespace

    from recmetrics.report import own_book

    nbs = sorted(str(p) for p in own_runs.notebooks_dir().glob("[0-9]*.ipynb"))
    own = SimpleNamespace(parameters={"n_samples": 2, "metrics": ["P"], "seed": 0}, notebooks=nbs, profile="quick",
                          overrides={}, label="x", notebooks_dir=Path(nbs[0]).parent)
    plan = own_book.report_plan(own, {"content": "sha256:0", "qrels": [], "runs": {}}, Path("/nonexistent/generated"),
                                Path("."))
    assert [c.stem for c in plan.chapters] == ["01_systems", "02_discriminative_power", "04_agreement",
                                               "03_robustness", "05_which_metric"]
    assert list(plan.keys) == sorted(plan.keys)


def test_chapter_outputs_ignore_styler_ids_and_addresses(tmp_path):
    import json

    def nb(html):
        return {"cells": [{"cell_type": "code", "outputs": [{"data": {"text/html": html,
                                                                      "text/plain": "<Styler at 0x7f00ab>"}}]}]}

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.ipynb").write_text(json.dumps(nb('<table id="T_7c4af"><td id="T_7c4af_row0">0.5</td>')))
    (tmp_path / "b" / "x.ipynb").write_text(json.dumps(nb('<table id="T_86480"><td id="T_86480_row0">0.5</td>')))
    outputs = _bench().chapter_outputs
    assert outputs(tmp_path / "a") == outputs(tmp_path / "b")
    (tmp_path / "b" / "x.ipynb").write_text(json.dumps(nb('<table id="T_86480"><td id="T_86480_row0">0.6</td>')))
    assert outputs(tmp_path / "a") != outputs(tmp_path / "b")


def test_background_study_ends_with_its_killed_build(tmp_path):
    """The background process of chapter 3's study (parallel.exit_with_parent) ends when the
    build that started it is killed, instead of computing on with gigabytes in memory."""
    import signal
    import subprocess
    import sys
    import time

    marker = tmp_path / "child.pid"
    child = ("import os, time; from recmetrics.parallel import exit_with_parent; "
             f"exit_with_parent(os.getppid(), every=0.05); open({str(marker)!r}, 'w').write(str(os.getpid())); "
             "time.sleep(120)")
    parent = subprocess.Popen([sys.executable, "-c", f"import subprocess, sys, time; "
                               f"subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(120)"])
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    pid = int(marker.read_text())
    os.kill(pid, 0)                                   # running while its parent lives
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break                                     # gone (reaped by init)
        if _zombie(pid):
            break
        assert time.monotonic() < deadline, "the background process outlived its killed parent"
        time.sleep(0.05)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_chapter_1_comparisons_read_chapter_2s_pvalues_and_equal_its_own_tests(workload, cache, monkeypatch):
    """own_prepared.comparisons: the permutation tests of chapter 1 are the stored discriminative power
    of chapter 2 (one sign matrix for every metric and cut-off), and equal compare() per cut-off, bit
    for bit; compare's pvalues= fails loudly on p-values that do not fit."""
    from recmetrics.meta.compare import compare

    qrels, runs = workload
    p = own_runs.plan(qrels, runs, parameters={"metrics": METRICS, "cutoffs": CUTOFFS})
    study = load_study(p.source, METRICS, CUTOFFS)
    got = own_prepared.comparisons(study, "concat", n_permutations=700, seed=4)
    for c in CUTOFFS:
        scores = {m: study.scores(m, c) for m in METRICS}
        alone = compare(scores, n_permutations=700, seed=4)
        assert got[c].pairs.equals(alone.pairs) and got[c].means.equals(alone.means)
    assert len(sorted((cache / "prepared").glob("*-dp-*.npz"))) == 1
    import recmetrics.meta.discriminative as disc

    monkeypatch.setattr(disc, "discriminative_power", lambda *a, **k: pytest.fail("recomputed"))
    dp = own_prepared.discriminative_power(study, own_prepared.candidates(study), "concat", n_permutations=700,
                                           seed=4, alpha=0.05)            # chapter 2 reads what chapter 1 stored
    assert np.array_equal(dp["nDCG@10"].pvalues["p"], got[10].pairs.query("metric == 'nDCG'")["p"])
    other = own_prepared.comparisons(study, "concat", test="t")              # another test: its own p-values
    assert not other[10].pairs["p"].equals(got[10].pairs["p"])
    scores = {m: study.scores(m, 10) for m in ["P", "nDCG"]}
    good = {m: got[10].pairs.query("metric == @m")["p"].to_numpy() for m in scores}
    with pytest.raises(InputError, match="each tested metric"):
        compare(scores, n_permutations=700, seed=4, pvalues={"P": good["P"]})
    with pytest.raises(InputError, match="permutation test's"):
        compare(scores, test="t", pvalues=good)
    with pytest.raises(InputError, match=r"3 p-values in \(0, 1\]"):
        compare(scores, n_permutations=700, seed=4, pvalues={**good, "P": good["P"][:2]})
    with pytest.raises(InputError, match=r"in \(0, 1\]"):
        compare(scores, n_permutations=700, seed=4, pvalues={**good, "P": good["P"] * 0})
