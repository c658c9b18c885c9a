"""Runs as artefacts: run_systems (folds, cache, identity of cached loads), evaluate_systems,
summarise, load_runs on files written here."""
import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import study
from recmetrics.data.io import write_trec_run
from recmetrics.data.qrels import Qrels
from recmetrics.errors import InputError, UnknownNameError

from test_recommenders import synthetic

SYSTEMS = ["Random", "Pop", "ItemKNN(k=20)"]


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=3)


def assert_same_run(a, b):
    assert a.name == b.name and a.metadata == b.metadata
    assert a.users.dtype == b.users.dtype and np.array_equal(a.users, b.users)
    assert a.items.dtype == b.items.dtype and np.array_equal(a.items, b.items)
    assert np.array_equal(a.lengths, b.lengths)
    assert (a.scores is None) == (b.scores is None)
    if a.scores is not None:
        assert np.array_equal(a.scores, b.scores, equal_nan=True)


def test_run_systems_folds_and_cache(data, tmp_path, monkeypatch):
    runs = study.run_systems(data, SYSTEMS, k=3, seed=0, n=15, cache_dir=tmp_path, progress=False)
    assert runs.systems == ["Random", "Pop", "ItemKNN(k=20)"] and runs.n_folds == 3 and len(runs) == 9
    assert list(runs) == [(s, f) for s in runs.systems for f in range(3)]
    assert len(list(tmp_path.glob("*.parquet"))) == 9
    assert not runs.timings.cached.any() and (runs.timings.fit_s >= 0).all()
    # folds are those of rm.splits.kfold, and each run lists the fold's test users
    for f, (train, test) in enumerate(rm.splits.kfold(data, k=3, seed=0)):
        pd.testing.assert_frame_equal(runs.folds[f][1], test)
        run = runs[("Pop", f)]
        warm = set(test.user) & set(train.user)
        assert set(run.users) == warm and run.depth == 15
        assert run.metadata == {"system": "Pop", "fold": f}
    # second call: loaded, never refitted, identical
    monkeypatch.setattr("recmetrics.runs.systems._fit_recommend", lambda *a, **k: pytest.fail("refitted a cached run"))
    again = study.run_systems(data, SYSTEMS, k=3, seed=0, n=15, cache_dir=tmp_path, progress=False)
    assert again.timings.cached.all()
    np.testing.assert_allclose(again.timings.fit_s, runs.timings.fit_s)
    for key in runs:
        assert_same_run(runs[key], again[key])
    assert_same_run(runs.system("Pop")[1], runs[("Pop", 1)])
    with pytest.raises(UnknownNameError, match="Pop"):
        runs.system("Popp")


def test_cache_key_depends_on_inputs(data, tmp_path):
    study.run_systems(data, ["Pop"], k=2, n=5, cache_dir=tmp_path, progress=False)
    study.run_systems(data, ["Pop"], k=2, n=6, cache_dir=tmp_path, progress=False)            # n
    study.run_systems(data, ["Pop"], k=2, seed=1, n=5, cache_dir=tmp_path, progress=False)    # split seed
    study.run_systems(data, ["Pop(relevant_only=True)"], k=2, n=5, cache_dir=tmp_path, progress=False)
    changed = data.assign(rating=data.rating.where(data.index != 0, 1.0 + (data.rating.iloc[0] == 1.0)))
    study.run_systems(changed, ["Pop"], k=2, n=5, cache_dir=tmp_path, progress=False)         # data
    assert len(list(tmp_path.glob("*.parquet"))) == 5 * 2
    # row order does not change the content hash
    study.run_systems(data.iloc[::-1], ["Pop"], k=2, n=5, cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.parquet"))) == 5 * 2


def test_cache_dir_from_environment_and_disabled(data, tmp_path, monkeypatch):
    monkeypatch.setenv("RECMETRICS_CACHE", str(tmp_path / "env"))
    assert study.default_cache_dir() == tmp_path / "env"
    study.run_systems(data, ["Pop"], k=2, n=5, progress=False)
    assert len(list((tmp_path / "env").glob("*.parquet"))) == 2
    runs = study.run_systems(data, ["Pop"], k=2, n=5, progress=False, cache=False, cache_dir=tmp_path / "off")
    assert not (tmp_path / "off").exists() and not runs.timings.cached.any()


def test_given_folds_holdout_and_parallel(data, tmp_path):
    folds = rm.splits.kfold(data, k=2, seed=5)
    a = study.run_systems(None, ["Pop", "UserKNN(k=10)"], split=folds, n=5, cache_dir=tmp_path, progress=False)
    assert a.n_folds == 2 and a.folds[0][0] is folds[0][0]
    b = study.run_systems(data, ["Pop", "UserKNN(k=10)"], split="holdout", test_size=0.3, n=5, cache=False,
                          progress=False, n_jobs=2)
    assert b.n_folds == 1
    c = study.run_systems(data, ["Pop", "UserKNN(k=10)"], split="holdout", test_size=0.3, n=5, cache=False,
                          progress=False)
    for key in b:
        assert_same_run(b[key], c[key])


def test_save_load_run_string_ids_and_no_scores(tmp_path):
    run = rm.Run(np.array(["u1", "u22"]), np.array([["a", "bb"], ["c", ""]]), np.array([2, 1]), None, "x",
                 {"k": 1})
    study.save_run(run, tmp_path / "r.parquet", metadata={"fit_s": 1.5})
    back, extra = study.load_run(tmp_path / "r.parquet")
    assert_same_run(run, back)
    assert extra == {"fit_s": 1.5}
    empty = rm.Run(np.array([7, 8]), np.zeros((2, 0), dtype=np.int64), np.array([0, 0]), np.zeros((2, 0)), "e")
    study.save_run(empty, tmp_path / "e.parquet")
    assert_same_run(empty, study.load_run(tmp_path / "e.parquet")[0])


def test_evaluate_systems_and_summarise(data, tmp_path):
    runs = study.run_systems(data, SYSTEMS, k=3, n=15, cache_dir=tmp_path, progress=False)
    scores = study.evaluate_systems(runs, runs.folds, ["nDCG@10", "P@5"])
    assert list(scores.columns) == ["system", "fold", "user", "metric", "value"]
    assert set(scores.metric) == {"nDCG@10", "P@5"} and set(scores.fold) == {0, 1, 2}
    for (system, fold), run in runs.items():
        want = rm.evaluate(run, Qrels(runs.folds[fold][1], threshold=4), ["nDCG@10", "P@5"]).per_user
        got = scores[(scores.system == system) & (scores.fold == fold)].pivot(index="user", columns="metric",
                                                                               values="value")
        pd.testing.assert_frame_equal(got[want.columns], want, check_names=False)
    table = study.summarise(scores)
    assert list(table.index) == runs.systems and list(table.columns) == ["nDCG@10", "P@5"]
    per_fold = scores[scores.metric == "P@5"].groupby(["system", "fold"]).value.mean()
    assert table.loc["Pop", "P@5"] == pytest.approx(per_fold["Pop"].mean())
    assert table.loc["Pop", "P@5"] > table.loc["Random", "P@5"]
    assert study.summarise(scores, "std").shape == table.shape
    assert runs.evaluate("P@5").equals(study.evaluate_systems(runs, runs.folds, "P@5"))
    with pytest.raises(InputError, match="folds"):
        study.evaluate_systems(dict(runs), None, "P@5")


def test_bad_input(data, tmp_path):
    with pytest.raises(UnknownNameError, match="PureSVD"):
        study.run_systems(data, ["PureSDV"], k=2, cache_dir=tmp_path, progress=False)
    with pytest.raises(InputError, match=r"\bk\b"):
        study.run_systems(data, ["UserKNN(k=0)"], k=2, cache_dir=tmp_path, progress=False)
    with pytest.raises(InputError, match="twice"):
        study.run_systems(data, ["Pop", "popularity"], k=2, cache_dir=tmp_path, progress=False)
    with pytest.raises(InputError, match="n must be"):
        study.run_systems(data, ["Pop"], k=2, n=0, cache_dir=tmp_path, progress=False)
    with pytest.raises(InputError, match="ratings"):
        study.run_systems(data.iloc[:0], ["Pop"], k=2, cache_dir=tmp_path, progress=False)
    assert not list(tmp_path.glob("*.parquet"))


def test_load_runs_from_other_tools(data, tmp_path):
    rec = rm.recommenders.create("Pop").fit(data)
    run = rec.recommend([0, 1, 2], n=5)
    d = tmp_path / "runs"
    d.mkdir()
    write_trec_run(run, d / "lenskit.trec", tag="lenskit")
    frame = run.to_frame()
    frame[["user", "item", "score"]].to_csv(d / "recbole.csv", index=False)
    frame[["user", "item", "rank"]].to_csv(d / "elliot.tsv", sep="\t", index=False)
    frame.to_parquet(d / "mine.parquet")
    (d / "README.md").write_text("not a run")
    (d / ".hidden.csv").write_text("junk")
    runs = study.load_runs(d)
    assert list(runs) == ["elliot", "lenskit", "mine", "recbole"]
    for name, r in runs.items():
        assert r.name == name
        # ids read from text files are strings (issue 9: one id rule, as trec_eval)
        assert np.array_equal(r.users.astype(str), run.users.astype(str)), name
        assert np.array_equal(r.items.astype(str), run.items.astype(str)), name
    one = study.load_runs([d / "recbole.csv", str(d / "lenskit.trec")])
    assert list(one) == ["recbole", "lenskit"]
    assert list(study.load_runs(d / "mine.parquet")) == ["mine"]
    # they evaluate like any run
    ev = rm.evaluate(runs["elliot"], Qrels(data), "P@5")
    assert ev.per_user.shape == (len(set(data.user[data.rating >= 4])), 1)


def test_load_runs_bad_input(tmp_path):
    (tmp_path / "a.csv").write_text("user,item,score\n1,2,0.5\n")
    (tmp_path / "a.trec").write_text("1 Q0 2 1 0.5 x\n")
    with pytest.raises(InputError, match="two run files are named 'a'"):
        study.load_runs(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        study.load_runs([tmp_path / "missing.csv"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no run file"):
        study.load_runs(empty)
    (tmp_path / "b.trec").write_text("1 Q0 2 1\n")
    with pytest.raises(InputError, match="b.trec:1"):
        study.load_runs([tmp_path / "b.trec"])


# ------------------------------------------------------------------------------------ Study cube
@pytest.fixture(scope="module")
def small_study(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    return study.Study(data, SYSTEMS, ["P", "nDCG", "RR"], [5, 15], k=3, seed=0, cache_dir=root / "runs",
                       progress=False), root


def test_study_cube_matches_evaluate_systems(small_study):
    st, _ = small_study
    assert st.cube.shape == (3, 2, 3, 3, len(st.users))
    long = study.evaluate_systems(st.runs, metrics=["nDCG@15", "P@5"])
    for name, (m, c) in {"nDCG@15": ("nDCG", 15), "P@5": ("P", 5)}.items():
        want = long[long.metric == name].set_index(["system", "fold", "user"])["value"]
        got = st.scores(m, c).stack(["fold", "user"]).reindex(want.index)
        assert np.allclose(got.to_numpy(), want.to_numpy())
    tidy = st.long()
    assert len(tidy) == np.isfinite(st.cube).sum() and set(tidy.columns) == {*study.AXES, "value"}


def test_study_pooling_and_cache(small_study, data):
    st, root = small_study
    concat, mean = st.scores("nDCG@5"), st.scores("nDCG", 5, pool="mean")
    assert concat.columns.names == ["fold", "user"] and mean.shape[1] <= concat.shape[1]
    u = mean.columns[0]
    assert np.allclose(mean[u], concat.xs(u, axis=1, level="user").mean(axis=1))
    assert np.allclose(st.system_scores("nDCG", 5), concat.mean(axis=1))
    again = study.Study(data, SYSTEMS, ["P", "nDCG", "RR"], [5, 15], k=3, seed=0, cache_dir=root / "runs",
                        progress=False)
    assert np.array_equal(again.cube, st.cube, equal_nan=True)
    assert len(list((root / "runs" / "studies").glob("*.npz"))) == 1


def test_study_bad_input(small_study, data):
    st, _ = small_study
    with pytest.raises(InputError, match="cut-off 10 is not in the study"):
        st.scores("nDCG", 10)
    with pytest.raises(UnknownNameError):
        st.scores("MAP", 5)
    with pytest.raises(InputError, match="say which cut-off"):
        st.scores("nDCG")
    with pytest.raises(InputError, match="pool"):
        st.scores("nDCG@5", pool="sum")
    with pytest.raises(InputError, match="without its cut-off"):
        study.Study(data, SYSTEMS, ["nDCG@10"], [5], progress=False)
    with pytest.raises(InputError, match="positive integers"):
        study.Study(data, SYSTEMS, ["nDCG"], [0], progress=False)
    with pytest.raises(InputError, match="NaN"):
        study.per_user_scores(pd.DataFrame([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(InputError, match="2 systems"):
        study.per_user_scores(np.zeros((1, 4)))


def test_study_needs_two_systems(data, tmp_path):
    with pytest.raises(InputError, match="at least 2 systems"):
        study.Study(data, ["Pop"], ["P"], [5], k=2, cache_dir=tmp_path, progress=False)


def test_study_from_runs_equals_study(small_study):
    st, _ = small_study
    again = study.Study.from_runs(dict(st.runs.runs), st.runs.folds, ["P", "nDCG", "RR"], [5, 15], progress=False)
    assert np.array_equal(again.cube, st.cube, equal_nan=True)
    with pytest.raises(InputError, match="no run for system"):
        study.Study.from_runs({("Pop", 0): st.runs[("Pop", 0)], ("Random", 1): st.runs[("Random", 1)]},
                              st.runs.folds[:2], ["P"], [5], progress=False)


def test_tail_folds_keep_only_long_tail_test_items():
    import pandas as pd

    from recmetrics import study

    train = pd.DataFrame({"user": [0, 1, 2, 0, 1, 0, 3, 3, 2, 3], "item": [1, 1, 1, 2, 2, 3, 4, 5, 6, 7],
                          "rating": 5.0})
    test = pd.DataFrame({"user": [2, 3, 0, 1], "item": [2, 1, 7, 6], "rating": 5.0})
    (tr, te), = study.tail_folds([(train, test)], head_share=0.2)  # 7 items: the 2 most rated are the head
    assert tr is train and sorted(te.item) == [6, 7]
    with pytest.raises(ValueError, match="head_share"):
        study.tail_folds([(train, test)], head_share=1.0)


def test_evaluate_tail_scores_head_only_systems_zero_without_the_mismatch_warning(small_study):
    import warnings

    st = small_study[0]

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*none of its items is a judged item")  # head-only systems
        tail = study.evaluate_tail(st.runs, 0.2, ["Recall@10"])
    assert set(tail.system) == set(st.systems) and tail.value.between(0, 1).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = study.evaluate_systems(st.runs, study.tail_folds(st.runs.folds, 0.2), ["Recall@10"])
    assert tail.equals(want)


# ------------------------------------------------------------------------------------ module layout
def test_study_reexports_the_runs_module_and_old_pickles_load(small_study):
    import pickle

    from recmetrics import runs

    assert rm.runs is runs
    for name in runs.__all__:                       # one definition, two import paths
        assert getattr(study, name) is getattr(runs, name), name
    # a Runs pickled before the split names its class recmetrics.study.Runs
    blob = pickle.dumps(small_study[0].runs, protocol=2)
    old = blob.replace(b"crecmetrics.runs.systems\nRuns\n", b"crecmetrics.study\nRuns\n")
    assert old != blob
    back = pickle.loads(old)
    assert isinstance(back, runs.Runs) and list(back) == list(small_study[0].runs)


def test_repeated_splits_draw_independent_partitions_and_key_the_cache(data, tmp_path):
    from recmetrics.runs import make_folds
    from recmetrics.runs.folds import repeat_seed

    once, p1 = make_folds(data, k=2, seed=4)
    thrice, p3 = make_folds(data, k=2, seed=4, repeats=3)
    assert "repeats" not in p1 and p3["repeats"] == 3 and len(thrice) == 6
    for (tr_a, te_a), (tr_b, te_b) in zip(once, thrice[:2]):        # repetition 0 is the plain split
        assert tr_a.equals(tr_b) and te_a.equals(te_b)
    keys = [frozenset(zip(te.user, te.item)) for _, te in thrice]
    for r in range(3):                                               # each repetition covers every rating once
        assert len(keys[2 * r] | keys[2 * r + 1]) == len(data) and not keys[2 * r] & keys[2 * r + 1]
    assert keys[0] != keys[2] and keys[2] != keys[4]                 # and is another partition
    seeds = {repeat_seed(s, r) for s in range(3) for r in range(3)}
    assert len(seeds) == 9                                           # seeds 0-2 share no repetition
    hold, _ = make_folds(data, "holdout", test_size=0.3, seed=1, repeats=2)
    assert len(hold) == 2 and not hold[0][1].equals(hold[1][1])
    runs = study.run_systems(data, ["Pop"], k=2, seed=4, repeats=3, n=5, cache_dir=tmp_path, progress=False)
    assert runs.n_folds == 6 and runs.params["split"]["repeats"] == 3
    st = study.Study(data, ["Pop", "Random"], ["P"], [5], k=2, seed=4, repeats=2, cache_dir=tmp_path, progress=False)
    assert st.n_folds == 4 and st._cube_key() != study.Study(data, ["Pop", "Random"], ["P"], [5], k=2, seed=4,
                                                               cache_dir=tmp_path, progress=False)._cube_key()


@pytest.mark.parametrize("kw, words", [
    ({"repeats": 0}, "repeats must be a positive integer"),
    ({"repeats": 1.5}, "repeats must be a positive integer"),
    ({"repeats": True}, "repeats must be a positive integer"),
    ({"split": "temporal", "cut_quantile": 0.8, "repeats": 2}, "draws nothing"),
])
def test_repeated_split_bad_input(data, kw, words):
    from recmetrics.runs import make_folds

    with pytest.raises(InputError, match=words):
        make_folds(data.assign(timestamp=np.arange(len(data))), **kw)


def test_repeats_of_given_folds_are_refused(data):
    from recmetrics.runs import make_folds

    with pytest.raises(InputError, match="folds are given"):
        make_folds(None, rm.splits.kfold(data, k=2, seed=0), repeats=2)
