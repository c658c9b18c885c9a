"""Issue 17, the study and cache surfaces: no silent wrong number, no raw traceback.

* ``Study.from_runs`` scores the folds it is given (a ``Runs`` object used to keep its own folds),
  takes ``{name: Run}`` (what ``load_runs`` returns), a ``Qrels`` and test DataFrames, and runs
  whose ids differ in type from the judgments';
* cached runs are verified (content checksum and key): bit flips and foreign files are recomputed;
* the score-cube cache lives inside ``RECMETRICS_CACHE``, is never unpickled, and a damaged or
  foreign cube is recomputed instead of crashing every later Study or being loaded as this one;
* robustness needs runs and judgments: a plain score table is a one-line error.
"""
import io
import shutil

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import study
from recmetrics.data.io import read_qrels, write_trec_qrels, write_trec_run
from recmetrics.data.simulate import simulate
from recmetrics.errors import InputError
from recmetrics.runs.cache import CacheError, load_run, run_checksum, save_run

SYSTEMS = ["Pop", "Random", "UserKNN(k=10)"]


@pytest.fixture(scope="module")
def ratings():
    return simulate(60, 80, 1500, seed=0)


@pytest.fixture(scope="module")
def runs(ratings):
    return study.run_systems(ratings, SYSTEMS, k=2, n=20, cache=False, progress=False)


def same_run(a, b) -> bool:
    return run_checksum(a) == run_checksum(b) and a.items.dtype == b.items.dtype and a.users.dtype == b.users.dtype


def long_values(st, metric, cutoff):
    return st.scores(metric, cutoff).stack(["fold", "user"]).sort_index()


# ----------------------------------------------------------------------- Study.from_runs: its inputs
def test_from_runs_scores_the_given_folds_of_a_runs_object(runs):
    """Issue 17 #3: the tail folds were ignored when ``runs`` was a Runs (full-fold values instead)."""
    tail = study.tail_folds(runs.folds)
    got = study.Study.from_runs(runs, tail, ["Recall"], [20], progress=False)
    want = study.evaluate_systems(dict(runs), tail, ["Recall@20"])
    want = want.groupby(["system", "fold"]).value.mean().groupby("system").mean()
    per_fold = got.scores("Recall", 20).T.groupby(level="fold").mean().mean()
    np.testing.assert_allclose(per_fold[list(want.index)], want, rtol=1e-12)
    full = study.Study.from_runs(runs, None, ["Recall"], [20], progress=False)   # its own folds
    assert not np.allclose(full.system_scores("Recall", 20), got.system_scores("Recall", 20))
    same = study.Study.from_runs(dict(runs), tail, ["Recall"], [20], progress=False)
    assert np.array_equal(same.cube, got.cube, equal_nan=True)


def test_from_runs_takes_load_runs_dicts_qrels_and_test_frames(runs, tmp_path):
    """Issue 17 traceback: ``Study.from_runs(load_runs(dir), folds)`` raised 'too many values to unpack'."""
    for s in runs.systems:
        write_trec_run(runs[(s, 0)], tmp_path / f"{s}.trec")
    loaded = study.load_runs(tmp_path)                                  # {name: Run}, string ids
    assert set(loaded) == set(runs.systems)
    ref = study.Study.from_runs({(s, 0): runs[(s, 0)] for s in runs.systems}, [runs.folds[0]], ["P", "AP"], [5, 10],
                                progress=False)
    for folds in (runs.qrels(0), runs.folds[0][1], [runs.folds[0]]):    # a Qrels, a test frame, (train, test)
        st = study.Study.from_runs(loaded, folds, ["P", "AP"], [5, 10], progress=False)
        assert st.n_folds == 1 and set(st.systems) == set(runs.systems)
        # TREC files give string ids, the judgments integers: compared as strings, same values
        for m, c in [("P", 5), ("AP", 10)]:
            np.testing.assert_allclose(st.system_scores(m, c)[ref.systems], ref.system_scores(m, c), rtol=1e-12)
            a, b = long_values(st, m, c), long_values(ref, m, c)
            assert len(a) == len(b) and np.allclose(np.sort(a.to_numpy()), np.sort(b.to_numpy()))
    # one evaluate() per run gives the same per-user means
    for s in runs.systems:
        want = rm.evaluate(loaded[s], runs.qrels(0), "P@5").aggregate.iloc[0]
        assert st.system_scores("P", 5)[s] == pytest.approx(want, rel=1e-12)


def test_from_runs_uses_the_threshold_of_a_qrels_file(runs, tmp_path):
    write_trec_qrels(runs.qrels(0), tmp_path / "qrels.txt", scale=2)     # half stars -> integers
    qrels = read_qrels(tmp_path / "qrels.txt", threshold=8)             # >= 4 stars
    one = {s: runs[(s, 0)] for s in runs.systems}
    st = study.Study.from_runs(one, qrels, ["P"], [10], progress=False)
    assert st.threshold == 8.0
    ref = study.Study.from_runs(one, runs.folds[0][1], ["P"], [10], progress=False)     # threshold 4 on stars
    np.testing.assert_allclose(st.system_scores("P", 10), ref.system_scores("P", 10), rtol=1e-12)
    lower = study.Study.from_runs(one, qrels, ["P"], [10], threshold=2, progress=False)  # explicit wins
    assert lower.threshold == 2.0 and (lower.system_scores("P", 10) >= st.system_scores("P", 10)).all()


def test_from_runs_per_fold_lists_and_lists_of_runs(runs):
    per_fold = {s: runs.system(s) for s in runs.systems}
    a = study.Study.from_runs(per_fold, runs.folds, ["nDCG"], [10], progress=False)
    b = study.Study.from_runs(runs, runs.folds, ["nDCG"], [10], progress=False)
    assert np.array_equal(a.cube, b.cube, equal_nan=True)
    c = study.Study.from_runs([runs[(s, 1)] for s in runs.systems], [runs.folds[1]], ["nDCG"], [10], progress=False)
    assert c.systems == runs.systems and c.n_folds == 1


def test_from_runs_bad_inputs_are_one_line_errors(runs):
    one = {s: runs[(s, 0)] for s in runs.systems}
    with pytest.raises(InputError, match=r"run 'Pop' is one Run but 2 folds were given"):
        study.Study.from_runs(one, runs.folds, ["P"], [5], progress=False)
    with pytest.raises(InputError, match=r"needs the judgments"):
        study.Study.from_runs(one, None, ["P"], [5], progress=False)
    with pytest.raises(InputError, match=r"the run of system 'Pop' on fold 0 is a DataFrame, not a Run"):
        study.Study.from_runs({"Pop": runs[("Pop", 0)].to_frame(), "Random": runs[("Random", 0)]},
                              runs.qrels(0), ["P"], [5], progress=False)
    with pytest.raises(InputError, match=r"for fold 3, but 2 fold"):
        study.Study.from_runs({**dict(runs), ("Pop", 3): runs[("Pop", 0)]}, runs.folds, ["P"], [5], progress=False)
    with pytest.raises(InputError, match=r"no run for system 'Random' on fold 1"):
        study.Study.from_runs({("Pop", 0): runs[("Pop", 0)], ("Pop", 1): runs[("Pop", 1)],
                               ("Random", 0): runs[("Random", 0)]}, runs.folds, ["P"], [5], progress=False)
    with pytest.raises(InputError, match=r"fold 0 must be"):
        study.Study.from_runs(one, [("train", "test")], ["P"], [5], progress=False)
    with pytest.raises(InputError, match=r"positive integers"):
        study.Study.from_runs(one, runs.qrels(0), ["P"], [0], progress=False)
    with pytest.raises(InputError, match=r"without its cut-off"):
        study.Study.from_runs(one, runs.qrels(0), ["P@5"], [5], progress=False)
    with pytest.raises(InputError, match=r"mix"):
        study.Study.from_runs({"Pop": runs[("Pop", 0)], ("Random", 0): runs[("Random", 0)]}, runs.qrels(0),
                              ["P"], [5], progress=False)


# ----------------------------------------------------------------------- the run cache is verified
def _cached(ratings, root, systems=("Pop",)):
    return study.run_systems(ratings, list(systems), k=2, n=20, cache_dir=root, progress=False)


def _path_of(root, name, fold, ratings):
    """The cache file of (name, fold): the file whose stored run is that run."""
    for p in root.glob("*.parquet"):
        run, _ = load_run(p)
        if run.metadata == {"system": name, "fold": fold}:
            return p
    raise AssertionError(f"no cached run of {name} fold {fold}")


def test_bit_flips_in_a_cached_run_never_load_a_different_run(ratings, tmp_path):
    """Issue 17 #6: 180 of 300 single-bit flips used to load a different run. Each flip now loads
    the identical run or is detected and recomputed (identical again)."""
    first = _cached(ratings, tmp_path)
    path = _path_of(tmp_path, "Pop", 0, ratings)
    blob = path.read_bytes()
    rng = np.random.default_rng(17)
    positions = rng.choice(len(blob) * 8, size=300, replace=False)
    detected = 0
    for bit in positions:
        flipped = bytearray(blob)
        flipped[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(flipped))
        again = _cached(ratings, tmp_path)
        assert same_run(again[("Pop", 0)], first[("Pop", 0)]), f"bit {bit} loaded a different run"
        detected += not again.timings.cached.iloc[0]
    assert detected > 150           # most flips hit data or metadata: detected and refitted
    assert same_run(load_run(path, key=path.stem)[0], first[("Pop", 0)])   # the last repair verifies


def test_a_valid_run_of_another_system_under_a_key_is_not_loaded(ratings, tmp_path):
    first = _cached(ratings, tmp_path, ("Pop", "Random"))
    pop, rnd = _path_of(tmp_path, "Pop", 0, ratings), _path_of(tmp_path, "Random", 0, ratings)
    shutil.copyfile(rnd, pop)                        # a valid parquet of another run, under Pop's key
    again = _cached(ratings, tmp_path, ("Pop", "Random"))
    assert same_run(again[("Pop", 0)], first[("Pop", 0)])
    row = again.timings[(again.timings.system == "Pop") & (again.timings.fold == 0)]
    assert not row.cached.iloc[0]                    # refitted, and the file repaired
    assert load_run(pop)[0].metadata == {"system": "Pop", "fold": 0}
    with pytest.raises(CacheError, match="key"):
        load_run(rnd, key=pop.stem)


def test_old_unverified_cache_files_are_recomputed(ratings, tmp_path):
    """Format-1 files (no checksum) still load when read directly, but the cache refits them."""
    import json

    import pyarrow.parquet as pq

    first = _cached(ratings, tmp_path)
    path = _path_of(tmp_path, "Pop", 0, ratings)
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"recmetrics"])
    meta = {k: v for k, v in meta.items() if k not in ("key", "checksum")} | {"format": 1}
    meta["name"] = "not Pop"                          # an old file we cannot verify: never trusted
    pq.write_table(table.replace_schema_metadata({b"recmetrics": json.dumps(meta).encode()}), path)
    assert load_run(path)[0].name == "not Pop"        # direct reads of old files still work
    with pytest.raises(CacheError, match="format 1"):
        load_run(path, key=path.stem)
    again = _cached(ratings, tmp_path)
    assert same_run(again[("Pop", 0)], first[("Pop", 0)]) and not again.timings.cached.iloc[0]


def test_save_load_roundtrip_keeps_the_checksum(tmp_path):
    run = rm.Run(np.array(["u1", "u22"]), np.array([["a", "bb"], ["c", ""]]), np.array([2, 1]), None, "x", {"k": 1})
    save_run(run, tmp_path / "r.parquet", {"fit_s": 0.5}, key="abc")
    back, extra = load_run(tmp_path / "r.parquet", key="abc")
    assert same_run(back, run) and extra == {"fit_s": 0.5}
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(CacheError, match="junk.parquet"):
        load_run(tmp_path / "junk.parquet")


# ----------------------------------------------------------------------- the score-cube cache
class _Trap:
    """Unpickling this object would create a file: proof that a cache file was unpickled."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _cube_files(root):
    return sorted(root.rglob("*.npz"))


def test_cube_cache_lives_inside_recmetrics_cache(ratings, tmp_path, monkeypatch):
    """Issue 17 #6: the cube went to the *parent* of $RECMETRICS_CACHE."""
    monkeypatch.setenv("RECMETRICS_CACHE", str(tmp_path / "cache"))
    study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, progress=False)
    files = _cube_files(tmp_path)
    assert files and all((tmp_path / "cache") in f.parents for f in files)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "empty"])
def test_a_damaged_cube_is_recomputed_not_a_crash(ratings, tmp_path, damage):
    """Issue 17 #6: a damaged cube crashed every later Study with BadZipFile / EOFError."""
    root = tmp_path / "runs"
    st = study.Study(ratings, ["Pop", "Random"], ["P", "nDCG"], [5], k=2, cache_dir=root, progress=False)
    (cube,) = _cube_files(tmp_path)
    blob = cube.read_bytes()
    bad = {"truncate": blob[: len(blob) // 2], "garbage": b"\x00" * 64, "empty": b"",
           "flip": blob[:200] + bytes([blob[200] ^ 0x10]) + blob[201:]}[damage]
    cube.write_bytes(bad)
    again = study.Study(ratings, ["Pop", "Random"], ["P", "nDCG"], [5], k=2, cache_dir=root, progress=False)
    assert np.array_equal(again.cube, st.cube, equal_nan=True) and np.array_equal(again.users, st.users)
    third = study.Study(ratings, ["Pop", "Random"], ["P", "nDCG"], [5], k=2, cache_dir=root, progress=False)
    assert np.array_equal(third.cube, st.cube, equal_nan=True)        # the repaired file loads


def test_a_cube_cache_file_is_never_unpickled(ratings, tmp_path):
    """Old cubes stored user ids as pickled objects and were loaded with allow_pickle=True."""
    root = tmp_path / "runs"
    st = study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=root, progress=False)
    (cube,) = _cube_files(tmp_path)
    trap = tmp_path / "unpickled"
    users = np.empty(len(st.users), dtype=object)
    users[:] = [_Trap(trap)] * len(st.users)
    buf = io.BytesIO()
    np.savez(buf, cube=st.cube, users=users)
    cube.write_bytes(buf.getvalue())
    again = study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=root, progress=False)
    assert not trap.exists()
    assert np.array_equal(again.cube, st.cube, equal_nan=True)


def test_a_cube_of_another_study_is_not_loaded_under_this_key(ratings, tmp_path):
    root = tmp_path / "runs"
    p = study.Study(ratings, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=root, progress=False)
    (p_file,) = _cube_files(tmp_path)
    n = study.Study(ratings, ["Pop", "Random"], ["nDCG"], [5], k=2, cache_dir=root, progress=False)
    (n_file,) = [f for f in _cube_files(tmp_path) if f != p_file]
    shutil.copyfile(p_file, n_file)                                  # same shape, another metric
    again = study.Study(ratings, ["Pop", "Random"], ["nDCG"], [5], k=2, cache_dir=root, progress=False)
    assert np.array_equal(again.cube, n.cube, equal_nan=True)
    assert not np.array_equal(again.cube, p.cube, equal_nan=True)


def test_cube_cache_keeps_string_user_ids(tmp_path):
    r = simulate(40, 60, 600, seed=1)
    r = r.assign(user="u" + r.user.astype(str), item="i" + r.item.astype(str))
    a = study.Study(r, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=tmp_path, progress=False)
    b = study.Study(r, ["Pop", "Random"], ["P"], [5], k=2, cache_dir=tmp_path, progress=False)
    assert a.users.dtype == b.users.dtype and list(a.users) == list(b.users)
    pd.testing.assert_frame_equal(a.scores("P@5"), b.scores("P@5"))


# ----------------------------------------------------------------------- robustness needs runs
def test_robustness_needs_a_study_not_scores(runs):
    scores = pd.DataFrame(np.random.default_rng(0).random((3, 10)), index=SYSTEMS)
    with pytest.raises(InputError, match=r"robustness_study needs the runs and their judgments .*got DataFrame"):
        study.require_study(scores, "robustness_study")
    st = study.Study.from_runs(runs, None, ["P"], [5], progress=False)
    assert study.require_study(st) is st
