import os

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.data.run import top_columns, top_n, trec_tie_order


def test_spec_round_trip_and_aliases():
    for text, canon in [("P@10", "P@10"), ("ndcg@100", "nDCG@100"), ("MAP@100", "AP@100"), ("mrr", "RR"),
                        ("ndcg_cut_10", "nDCG@10"), ("P_5", "P@5"), ("recall_20", "Recall@20"),
                        ("ERR@20(max_rating=5)", "ERR@20(max_rating=5)"), ("ERR@20(max_rating=0)", "ERR@20"),
                        ("infAP@100", "infAP@100"), ("F1@10", "F1@10"), ("bpref", "bpref")]:
        spec = rm.metrics.parse(text)
        assert str(spec) == canon
        assert rm.metrics.parse(str(spec)) == spec
    spec = rm.metrics.parse("ERR@20(max_rating=5)")
    assert spec.k == 20 and spec.kwargs == {"max_rating": 5.0} and isinstance(spec.kwargs["max_rating"], float)
    assert rm.metrics.spec("nDCG", 10) == rm.metrics.parse("nDCG@10")


def test_trec_tie_order_is_docno_descending_as_strings():
    items = np.array([9, 10, 100, 2])
    # strings sorted descending: "9" > "2" > "100" > "10"
    assert list(items[np.argsort(trec_tie_order(items))]) == [9, 2, 100, 10]


def test_top_n_matches_full_stable_sort_with_ties():
    rng = np.random.default_rng(3)
    s = np.round(rng.random((50, 40)), 1)
    s[25:] = rng.random((25, 40))          # rows without ties: the n-th value is taken alone
    s[rng.random(s.shape) < 0.1] = -np.inf
    s[3] = -np.inf                          # a row with nothing to recommend
    s[4, 2:] = -np.inf                      # and one shorter than n
    s[5, :] = 0.5                           # every entry tied
    for n in (1, 5, 17, 39, 40):
        idx, lengths = top_n(s, n)
        full = np.argsort(-s, axis=1, kind="stable")[:, :n]
        finite = np.take_along_axis(s, full, 1) > -np.inf
        assert (lengths == finite.sum(1)).all()
        assert (np.where(finite, full, -1) == idx).all()


def _edge_rows(rng, kind, shape):
    if kind == 0:
        return rng.integers(-3, 4, shape).astype(float)                  # ties everywhere
    if kind == 1:
        return 1.0 + rng.integers(0, 3, shape) * 1e-12                   # equal in float32 only
    if kind == 2:
        s = rng.normal(size=shape)
        for value, share in ((np.nan, 0.3), (-np.inf, 0.2), (np.inf, 0.1)):
            s[rng.random(shape) < share] = value
        return s
    return rng.choice([0.0, -0.0, 1e300, -1e300, 3e38, 4e38, 1e-320, 5e-324, 1e-46], shape)  # past float32


@pytest.mark.parametrize("kind", range(4))
def test_top_columns_are_the_stable_sorts_first_n(kind):
    """The n best columns of a row, ties to the lower column, NaN below -inf: the first n of a
    full stable sort, also where float32 ties what float64 tells apart (the fast preselection)."""
    rng = np.random.default_rng(kind)
    for _ in range(60):
        shape = (int(rng.integers(1, 40)), int(rng.integers(1, 70)))
        s = _edge_rows(rng, kind, shape)
        n = int(rng.integers(1, shape[1] + 1))
        full = np.sort(np.argsort(-s, axis=1, kind="stable")[:, :n], axis=1)
        assert (top_columns(s, n) == full).all(), (s, n)


def _wide_rows(rng, kind, n):
    """Rows wide enough for the preselection by block maxima, with rows it must hand on."""
    shape = (int(rng.integers(1, 30)), int(rng.integers(16 * n, 40 * n + 50)))
    if kind < 4:
        return _edge_rows(rng, kind, shape)
    s = rng.normal(size=shape)                       # distinct values: found by the bound alone
    rows = rng.permutation(shape[0])
    s[rows[:3]] = np.nan
    s[rows[:3], : n - 1] = 1.0                        # fewer than n numbers: NaN in the top n
    s[rows[3:6]] = -np.inf
    s[rows[3:6], :: max(1, shape[1] // n)] = 2.0      # n numbers or so, the rest -inf
    s[rows[6:9]] = np.round(s[rows[6:9]], 1)          # long ties at the bound
    return s


@pytest.mark.parametrize("kind", range(5))
def test_top_columns_of_wide_rows_by_either_path_are_the_stable_sorts_first_n(kind, monkeypatch):
    """Wide float rows are found through a lower bound of the n-th value, and rows it cannot settle
    (NaN in the top n, long ties, mostly -inf) by the partition: both are the stable sort's first n."""
    from recmetrics.data import run as run_module

    handed_on = []
    partition = run_module._top_columns_partition
    monkeypatch.setattr(run_module, "_top_columns_partition", lambda s, n: handed_on.append(len(s)) or partition(s, n))
    rng = np.random.default_rng(10 + kind)
    rows = 0
    for _ in range(40):
        n = int(rng.integers(1, 12))
        s = _wide_rows(rng, kind, n)
        rows += len(s)
        full = np.sort(np.argsort(-s, axis=1, kind="stable")[:, :n], axis=1)
        assert (top_columns(s, n) == full).all(), (s, n)
        assert (partition(s, n) == full).all(), (s, n)
        with np.errstate(over="ignore"):                  # past float32's range: +-inf
            s32 = s.astype(np.float32)
        assert (top_columns(s32, n) == np.sort(np.argsort(-s32, axis=1, kind="stable")[:, :n], axis=1)).all()
    if kind == 4:                                        # the rows made to go on do, the others not
        assert 0 < sum(handed_on) < rows, (sum(handed_on), rows)


def test_knn_graph_ties_go_to_the_lower_column_on_every_machine():
    """Which of several equally similar neighbours a kNN graph keeps is the rule of every top-n list
    (the lower column), not the CPU's: numpy's argpartition chooses among ties by its SIMD path."""
    import subprocess
    import sys

    from recmetrics.recommenders._util import topk_rows

    s = np.array([[0.0, 2.0, 1.0, 1.0, 1.0, 3.0], [1.0, 1.0, 1.0, 1.0, 0.0, -1.0]])
    r, c, v = topk_rows(s, 3)
    assert sorted(zip(r.tolist(), c.tolist())) == [(0, 1), (0, 2), (0, 5), (1, 0), (1, 1), (1, 2)]
    code = ("import hashlib, numpy as np; from recmetrics.recommenders._util import topk_rows; "
            "s = np.random.default_rng(0).integers(0, 20, (300, 2000)).astype(float); "
            "r, c, v = topk_rows(s, 50); print(hashlib.md5(np.lexsort((c, r)).tobytes() + c.tobytes()).hexdigest())")
    digests = set()
    for disabled in ("", "X86_V4 AVX512_ICL AVX512_SPR", "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"):
        env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if out.returncode and "baseline" in out.stderr:   # a numpy built for these features needs them
            continue
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_from_scores_equals_from_frame():
    rng = np.random.default_rng(0)
    scores = np.round(rng.random((20, 30)), 1)
    users, items = np.arange(100, 120), np.arange(30) * 7
    a = rm.Run.from_scores(scores, users, items, n=10)
    frame = pd.DataFrame({"user": np.repeat(users, 30), "item": np.tile(items, 20), "score": scores.ravel()})
    b = rm.Run.from_frame(frame).head(10)
    assert (a.items == b.items).all() and (a.users == b.users).all()


def test_exclude_and_short_lists():
    run = rm.Run.from_scores(np.array([[3.0, 2.0, 1.0]]), [1], [10, 11, 12], n=3,
                             exclude=np.array([[False, True, True]]))
    assert run.lengths.tolist() == [1] and run.items[0, 0] == 10


def test_trec_files_round_trip(tmp_path):
    run = rm.Run.from_lists({1: [10, 11, 12], 2: [12]}, name="sys")
    path = rm.io.write_trec_run(run, tmp_path / "run.txt")
    back = rm.io.read_trec_run(path)
    as_str = {"user": str, "item": str}  # ids read from files are strings (issue 9)
    assert back.name == "sys" and back.to_frame()[["user", "item", "rank"]].equals(
        run.to_frame()[["user", "item", "rank"]].astype(as_str))
    q = rm.Qrels(pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 12], "rating": [4.5, 2.0, 5.0]}))
    qpath = rm.io.write_trec_qrels(q, tmp_path / "qrels.txt", scale=2)
    assert qpath.read_text().splitlines()[0] == "1 0 10 9"
    with pytest.raises(InputError, match="not integers"):
        rm.io.write_trec_qrels(q, tmp_path / "bad.txt")
    q2 = rm.io.read_trec_qrels(qpath, threshold=8)
    assert q2.relevant_users.tolist() == ["1", "2"]
    csv = tmp_path / "run.csv"
    run.to_frame().to_csv(csv, index=False)
    assert rm.io.read_run(csv).to_frame()[["user", "item", "rank"]].equals(
        run.to_frame()[["user", "item", "rank"]].astype(as_str))


def test_string_ids_are_kept():
    q = rm.Qrels(pd.DataFrame({"user": ["a", "a"], "item": ["x", "y"], "rating": [5, 1]}))
    run = rm.Run.from_lists({"a": ["y", "x"]})
    res = rm.evaluate(run, q, ["P@1", "RR"])
    assert res.per_user.loc["a", "RR"] == 0.5


def test_aggregations():
    x = np.array([1.0, 0.25, 0.0])
    agg = rm.metrics.aggregate
    assert agg(x, "arithmetic") == pytest.approx(1.25 / 3)
    assert agg(x, "geometric") == pytest.approx((1 * 0.25 * 1e-5) ** (1 / 3))
    assert agg(x, "harmonic") == pytest.approx(3 / (1 + 4 + 1e5))
    assert agg(x, "quadratic") == pytest.approx(np.sqrt((1 + 0.0625) / 3))
    assert agg(x, "gm") == agg(x, "geometric")


def test_geometric_matches_trec_eval_gm_map():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1}, "3": {"d": 1, "e": 1}}
    run = {"1": {"b": 2.0, "a": 1.0}, "2": {"x": 1.0}, "3": {"d": 1.0, "z": 2.0, "e": 0.5}}
    gm = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map", "map"})
    per = gm.evaluate(run)
    gm_map = pytrec_eval.compute_aggregated_measure("gm_map", [v["gm_map"] for v in per.values()])
    q = rm.Qrels(pd.DataFrame([(u, i, r) for u, d in qrels.items() for i, r in d.items()],
                              columns=["user", "item", "rating"]), threshold=1)
    r = rm.Run.from_frame(pd.DataFrame([(u, i, s) for u, d in run.items() for i, s in d.items()],
                                       columns=["user", "item", "score"]))
    ours = rm.evaluate(r, q, ["AP"], aggregate="geometric").aggregate["AP"]
    assert ours == pytest.approx(gm_map, abs=1e-12)


def test_recommenders_baselines_and_cold_users():
    train = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [10, 11, 10, 12, 13], "rating": [5, 3, 4, 2, 5]})
    pop = rm.recommenders.create("Pop").fit(train)
    run = pop.recommend([1, 2, 99], n=2)
    assert list(run.users) == [1, 2]          # cold user 99 gets no list
    assert 10 not in run.items[0, :run.lengths[0]]  # seen items excluded
    assert (pop.score([1], items=[10, 555])[0] == [2.0, -np.inf]).all()
    r1 = rm.recommenders.create("Random(seed=4)").fit(train).recommend([1, 2, 3], n=3)
    r2 = rm.recommenders.create("Random", seed=4).fit(train).recommend([3, 1], n=3)
    assert (r1.items[0] == r2.items[1]).all()  # a user's list does not depend on the others
    with pytest.raises(UnknownNameError, match="did you mean 'Pop'"):
        rm.recommenders.create("Popp")
    with pytest.raises(Exception, match="training set is empty"):
        rm.recommenders.create("Pop").fit(train.iloc[:0])


def test_missing_user_scores_zero_everywhere(case):
    qrels_df, run_df = case
    q = rm.Qrels(qrels_df)
    names = [str(s) for s in map(rm.metrics.parse, ["P@10", "Recall@10", "F1@10", "AP@100", "nDCG@100", "RR",
                                                      "ERR@10", "bpref", "infAP"])]
    res = rm.evaluate(rm.Run.from_frame(run_df), q, names)
    missing = set(q.relevant_users) - set(run_df.user)
    assert missing and (res.per_user.loc[sorted(missing)] == 0).all().all()


def test_product_rows_in_column_blocks_equals_the_whole_product_to_the_byte(monkeypatch):
    """The rows of a sparse x dense product computed column block by column block (each block of
    the densified operand stays in the cache) are the whole product's, byte for byte: ragged last
    block, rows asked out of order, a sparse operand too large to densify."""
    import scipy.sparse as sp

    from recmetrics.recommenders import _util

    A = sp.random(40, 30, density=0.3, random_state=1, format="csr")
    B = sp.random(30, 57, density=0.5, random_state=2, format="csr")
    rows = np.array([7, 3, 3, 39, 0])
    whole = np.asarray(A[rows] @ B.toarray())
    for cells in (30 * 57, 30 * 8, 30):          # one block; 8 columns a block (57 = 7 x 8 + 1); one each
        monkeypatch.setattr(_util, "RHS_BLOCK_CELLS", cells)
        got = _util.product_rows(A, B)(rows)
        assert got.dtype == whole.dtype and got.tobytes() == whole.tobytes()
    monkeypatch.setattr(_util, "DENSE_RHS_CELLS", 10)   # kept sparse
    assert _util.product_rows(A, B)(rows).tobytes() == whole.tobytes()
