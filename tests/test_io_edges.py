"""Readers never return a silent wrong number (issue 9 §1, §2, Bad input): each case fails on the old code."""
import bz2
import gzip
import lzma
import warnings

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import FormatError, InputError


def write(path, text, mode="w"):
    (path.write_bytes if "b" in mode else path.write_text)(text)
    return path


@pytest.fixture()
def clean(tmp_path):
    q = write(tmp_path / "q.txt", "1 0 10 5\n1 0 11 2\n2 0 10 4\n2 0 12 5\n")
    r = write(tmp_path / "r.txt", "1 Q0 11 1 2.0 sys\n1 Q0 10 2 1.0 sys\n2 Q0 10 1 1 sys\n2 Q0 12 2 1 sys\n")
    return q, r


def scores(q, r, metrics=("P@2", "RR", "nDCG@2", "AP")):
    return rm.evaluate(rm.io.read_run(r), rm.io.read_qrels(q, threshold=4), list(metrics), users="all").per_user


# ------------------------------------------------------------------ §1 ids: one rule, strings
def test_integer_looking_qrels_and_a_non_numeric_run_docno_still_match(tmp_path):
    q = write(tmp_path / "q.txt", "1 0 0345339681 1\n1 0 7 1\n1 0 8 0\n")
    r = write(tmp_path / "r.txt", "1 Q0 0345339681 1 3 s\n1 Q0 doc7 2 2 s\n1 Q0 7 3 1 s\n")
    res = rm.evaluate(rm.io.read_run(r), rm.io.read_qrels(q), ["P@3", "RR"], users="all").aggregate
    assert res["P@3"] == pytest.approx(2 / 3) and res["RR"] == 1.0


def test_leading_zeros_are_different_ids_in_trec_and_csv(tmp_path):
    q = write(tmp_path / "q.csv", "user,item,rating\n01,5,5\n1,5,5\n1,05,5\n")
    frame = rm.io.read_table(q)
    assert sorted(frame.user) == ["01", "1", "1"] and "05" in set(frame.item)
    qr = rm.io.read_qrels(q)
    assert len(qr.users) == 2  # "01" and "1" do not merge
    r = write(tmp_path / "r.txt", "1 Q0 05 1 1 s\n")
    res = rm.evaluate(rm.io.read_run(r), qr, ["P@1"], users="all").per_user
    assert res.loc["1", "P@1"] == 1.0 and res.loc["01", "P@1"] == 0.0


def test_python_api_int_run_str_qrels_compared_as_strings():
    q = rm.Qrels(pd.DataFrame({"user": ["1", "2"], "item": ["10", "20"], "rating": [5, 5]}))
    run = rm.Run.from_lists({1: [10], 2: [21, 20]})
    res = rm.evaluate(run, q, ["P@1", "RR"])
    assert res.aggregate["P@1"] == 0.5 and res.aggregate["RR"] == 0.75


def test_byte_order_mark_is_stripped(tmp_path, clean):
    q, r = clean
    base = scores(q, r)
    qb = write(tmp_path / "qb.txt", b"\xef\xbb\xbf" + q.read_bytes(), "wb")
    rb = write(tmp_path / "rb.txt", b"\xef\xbb\xbf" + r.read_bytes(), "wb")
    pd.testing.assert_frame_equal(scores(qb, rb), base)
    t = write(tmp_path / "t.csv", b"\xef\xbb\xbfuser,item,score\n1,11,2\n", "wb")
    assert list(rm.io.read_run(t).users) == ["1"]


def test_empty_runs_are_errors(tmp_path, clean):
    q, _ = clean
    with pytest.raises(InputError, match="has a header but no row"):
        rm.io.read_run(write(tmp_path / "e.csv", "user,item,score\n"))
    with pytest.raises(InputError, match="table is empty"):
        rm.io.read_run(write(tmp_path / "e2.csv", ""))
    with pytest.raises(InputError, match="holds no run line"):
        rm.io.read_run(write(tmp_path / "e.txt", "# only a comment\n\n"))
    with pytest.raises(InputError, match="is empty"):
        rm.evaluate(pd.DataFrame({"user": [], "item": [], "score": []}), rm.io.read_qrels(q), ["P@1"])


def test_run_matching_no_judged_item_warns(clean, tmp_path):
    q, _ = clean
    r = write(tmp_path / "r.txt", "1 Q0 010 1 2 s\n")
    with pytest.warns(UserWarning, match="none of its items is a judged item"):
        rm.evaluate(rm.io.read_run(r), rm.io.read_qrels(q), ["P@1"])


def test_train_test_overlap_is_detected():
    q = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": [10, 11], "rating": [5, 1]}))
    run = rm.Run.from_lists({1: [10, 12]})
    train = pd.DataFrame({"user": [1, 1], "item": [10, 13]})
    with pytest.raises(InputError, match=r"train/test overlap: test item 10 of user 1"):
        rm.evaluate(run, q, ["markedness@2"], train=train, catalog=np.arange(20))


# ------------------------------------------------------------------ §2 what trec_eval reads
def test_comments_blank_lines_tabs_crlf_trailing_fields(tmp_path, clean):
    q, r = clean
    base = scores(q, r)
    q2 = write(tmp_path / "q2.txt", "# judgments\r\n\r\n1\t0\t10\t5\r\n1 0  11 2\r\n  2 0 10 4\r\n2 0 12 5")
    r2 = write(tmp_path / "r2.txt", "#c\n1 Q0 11 1 2.0 sys extra fields\n\n1\tQ0\t10\t2\t1.0\tsys\n"
                                    "2 Q0 10 1 1 sys\n2 Q0 12 x 1 sys\n")  # rank ignored, as trec_eval
    pd.testing.assert_frame_equal(scores(q2, r2), base)


def _zst_open(path, mode):
    import pyarrow as pa

    return pa.output_stream(str(path), compression="zstd")


@pytest.mark.parametrize("ext,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open),
                                        (".zst", _zst_open)])
def test_compressed_runs_qrels_and_tables(tmp_path, clean, ext, opener):
    q, r = clean
    base = scores(q, r)
    qz, rz = tmp_path / f"q.txt{ext}", tmp_path / f"r.run{ext}"
    with opener(qz, "wb") as fh:
        fh.write(q.read_bytes())
    with opener(rz, "wb") as fh:
        fh.write(r.read_bytes())
    pd.testing.assert_frame_equal(scores(qz, rz), base)
    tz = tmp_path / f"r.csv{ext}"
    with opener(tz, "wb") as fh:
        fh.write(b"user,item,score\n1,11,2\n1,10,1\n")
    assert rm.io.read_run(tz).items[0].tolist() == ["11", "10"]
    (tmp_path / "runs").mkdir()
    rz.rename(tmp_path / "runs" / rz.name)
    assert list(rm.study.load_runs(tmp_path / "runs")) == ["r"]


def test_negative_labels_are_pooled_unjudged(tmp_path):
    q = write(tmp_path / "q.txt", "1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d -2\n")
    r = write(tmp_path / "r.txt", "1 Q0 b 1 4 s\n1 Q0 d 2 3 s\n1 Q0 c 3 2 s\n1 Q0 a 4 1 s\n")
    qr = rm.io.read_qrels(q)
    assert qr.n_relevant.tolist() == [1] and qr.n_nonrelevant.tolist() == [1]
    res = rm.evaluate(rm.io.read_run(r), qr, ["P@4", "bpref", "nDCG", "AP"]).aggregate
    assert res["P@4"] == 0.25 and res["bpref"] == 0.0 and res["AP"] == 0.25
    # one rule on every surface: the same judgments as a data frame mean the same (trec_eval's reading)
    again = rm.Qrels(qr.to_frame(), threshold=1)
    assert again.n_relevant.tolist() == [1] and again.n_nonrelevant.tolist() == [1]
    assert rm.evaluate(rm.io.read_run(r), again, ["P@4", "bpref", "nDCG", "AP"]).aggregate.equals(res)
    with pytest.raises(InputError, match="non-negative"):
        rm.Qrels(qr.to_frame(), negative="error")  # refused only when asked


def test_fractional_grades_truncated_as_trec_eval(tmp_path):
    q = write(tmp_path / "q.txt", "1 0 a 1.7\n1 0 b 0.5\n")
    with pytest.warns(UserWarning, match=r"q.txt:1: fractional relevance 1.7 truncated to 1 as trec_eval"):
        qr = rm.io.read_qrels(q)
    assert qr.to_frame().rating.tolist() == [1.0, 0.0]


def test_fast_and_reference_readers_agree(tmp_path):
    rng = np.random.default_rng(1)
    lines = [f"{u} Q0 {i:04d} 1 {rng.integers(0, 5) / 2} t" for u in range(50) for i in rng.choice(500, 40, replace=False)]
    fast = write(tmp_path / "fast.txt", "\n".join(lines) + "\n")
    slow = write(tmp_path / "slow.txt", "# forces the reference path\n" + "\n".join(lines) + "\n")
    a, b = rm.io.read_run(fast), rm.io.read_run(slow)
    assert a.users.tolist() == b.users.tolist() and (a.items == b.items).all() and (a.lengths == b.lengths).all()
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    assert np.array_equal(a.codes[1][a.codes[0][a.codes[0] >= 0]], a.items[a.codes[0] >= 0])


# ------------------------------------------------------------------ bad input: file and 1-based line
@pytest.mark.parametrize("text,match", [
    ("1 Q0 a 1 1 s\n1 Q0 b 2 nan s\n", r"r.txt:2: score 'nan' is not a finite number"),
    ("1 Q0 a 1 1 s\n\n1 Q0 b 2 inf s\n", r"r.txt:3: score 'inf' is not a finite number"),
    ("1 Q0 a 1 1 s\n1 Q0 a 2 0.5 s\n", r"r.txt:2: docno 'a' appears twice for qid '1'"),
    ("1 Q0 a 1 high s\n", r"r.txt:1: score 'high' is not a number"),
    ("1,a,1\n", r"r.txt:1: expected 6 fields .*\(a CSV table\? name it .csv\)"),
])
def test_bad_run_lines(tmp_path, text, match):
    with pytest.raises(FormatError, match=match):
        rm.io.read_run(write(tmp_path / "r.txt", text))


def test_bad_qrels_and_tables(tmp_path):
    with pytest.raises(FormatError, match=r"q.txt:3: docno 'a' is judged twice for qid '1'"):
        rm.io.read_qrels(write(tmp_path / "q.txt", "1 0 a 1\n1 0 b 0\n1 0 a 2\n"))
    with pytest.raises(InputError, match=r"q.csv:3\)"):
        rm.io.read_qrels(write(tmp_path / "q.csv", "user,item,rating\n1,a,4\n1,a,5\n"))
    with pytest.raises(InputError, match=r"r.csv:3\)"):
        rm.io.read_run(write(tmp_path / "r.csv", "user,item,score\n1,a,4\n1,b,nan\n"))
    with pytest.raises(InputError, match=r"rank 'x' \(.*r2.csv:2\)"):
        rm.io.read_run(write(tmp_path / "r2.csv", "user,item,rank\n1,a,x\n"))
    with pytest.raises(FormatError, match=r"t.tsv:1: .*a TREC file\?"):
        rm.io.read_run(write(tmp_path / "t.tsv", "1 Q0 a 1 1 s\n"))
    with pytest.raises(InputError, match="is a directory"):
        rm.io.read_run(tmp_path)
    with pytest.raises(FormatError, match=r"u.txt:2: bytes .* are not UTF-8"):
        rm.io.read_run(write(tmp_path / "u.txt", b"1 Q0 a 1 1 s\n1 Q0 \xe9t\xe9 2 0 s\n", "wb"))
    pq = tmp_path / "m.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pqt

    # a parquet written by another tool with ids as text in one file and ints elsewhere cannot be
    # typed by pandas; an object column mixing types can come from a pickle-like writer: build one
    frame = pd.DataFrame({"user": pd.Series([1, "u2"], dtype=object), "item": ["a", "b"], "score": [1.0, 2.0]})
    table = pa.table({"user": pa.array([1, 2]), "item": ["a", "b"], "score": [1.0, 2.0]})
    pqt.write_table(table, pq)
    assert rm.io.read_run(pq).users.tolist() == [1, 2]  # typed parquet ids keep their type
    with pytest.raises(FormatError, match=r"column 'user' mixes int, str ids"):
        rm.io.check_id_columns(frame, "m.parquet")



def test_from_dict_and_python_inputs(tmp_path, clean):
    q, r = clean
    qd = {"1": {"10": 5, "11": 2}, "2": {"10": 4, "12": 5}}
    rd = {"1": {"11": 2.0, "10": 1.0}, "2": {"10": 1.0, "12": 1.0}}
    base = rm.evaluate(rm.io.read_run(r), rm.io.read_qrels(q, threshold=4), ["P@1", "RR"]).aggregate
    for run in (rd, rm.Run.from_dict(rd), str(r), rm.io.read_run(r).to_frame()[["user", "item", "score"]]):
        got = rm.evaluate(run, rm.Qrels.from_dict(qd, threshold=4), ["P@1", "RR"]).aggregate
        pd.testing.assert_series_equal(got, base, check_names=False)
    got = rm.evaluate(rd, qd, ["P@1", "RR"], threshold=4).aggregate
    pd.testing.assert_series_equal(got, base, check_names=False)
    got = rm.evaluate(str(r), str(q), ["P@1", "RR"], threshold=4).aggregate
    pd.testing.assert_series_equal(got, base, check_names=False)


def test_mixed_type_id_column_in_a_dataframe_is_an_error():
    run = pd.DataFrame({"user": [1, "1"], "item": [10, 11], "score": [1.0, 0.5]})
    q = pd.DataFrame({"user": [1], "item": [10], "rating": [5]})
    with pytest.raises(FormatError, match=r"run table: column 'user' mixes int, str ids \(row 2 is '1'\)"):
        rm.evaluate(run, q, ["P@1"])


@pytest.mark.parametrize("ext", [".gz", ".bz2", ".xz", ".zst"])
def test_corrupt_compressed_file_is_a_clear_error(tmp_path, ext):
    bad = write(tmp_path / f"r.txt{ext}", b"this is not compressed data at all", "wb")
    with pytest.raises(InputError, match=rf"r.txt{ext}: cannot read run"):
        rm.io.read_run(bad)
