"""Input edges on both surfaces (Python API and command line): missing ids, negative grades,
symbolic-link loops, a run with no judged user."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import cli
from recmetrics.errors import InputError
from recmetrics.report import own_book

NAN = np.nan


def _qrels_frame():
    return pd.DataFrame({"user": [1, 1, 2, 2], "item": [10, 11, 12, 10], "rating": [5, 3, 4, 5]})


# ------------------------------------------------------------------------------------ missing ids
@pytest.mark.parametrize("column, values, shown", [
    ("user", [NAN, 1.0, 2.0, 2.0], "row 0 (nan)"),
    ("user", [1, None, 2, 2], "row 1"),
    ("user", pd.array([1, 1, pd.NA, 2], dtype="Int64"), "row 2 (<NA>)"),
    ("user", ["a", "a", " ", "b"], "row 2 (' ')"),
    ("item", [10, NAN, 12, 10], "row 1 (nan)"),
])
def test_a_missing_id_in_a_run_frame_is_one_error_naming_column_and_row(column, values, shown):
    run = pd.DataFrame({"user": [1, 1, 2, 2], "item": [10, 11, 12, 10], "score": [2.0, 1.0, 2.0, 1.0]})
    run[column] = values
    with pytest.raises(InputError, match=rf"run 'run': column '{column}' has no id at {__import__('re').escape(shown)}"):
        rm.evaluate(run, rm.Qrels(_qrels_frame(), threshold=4), ["P@2"])


@pytest.mark.parametrize("column, values, shown", [
    ("user", [1.0, NAN, 2.0, 2.0], "row 1 (nan)"),
    ("user", [None, 1, 2, 2], "row 0"),
    ("item", [10, 11, NAN, 10], "row 2 (nan)"),
    ("item", ["a", "", "b", "c"], "row 1 ('')"),
])
def test_a_missing_id_in_a_qrels_frame_is_one_error_not_a_dropped_row(column, values, shown):
    frame = _qrels_frame()
    frame[column] = values
    with pytest.raises(InputError, match=rf"qrels: column '{column}' has no id at {__import__('re').escape(shown)}"):
        rm.Qrels(frame, threshold=4)


def test_a_missing_id_in_a_table_read_from_a_file_names_the_line(tmp_path, capsys):
    q = tmp_path / "q.csv"
    q.write_text("user,item,rating\n1,10,5\n,11,4\n")
    r = tmp_path / "r.csv"
    r.write_text("user,item,score\n1,10,2\n1,,1\n")
    rc = cli.main(["evaluate", "-m", "P@2", str(q), str(r)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "q.csv" in err and ("line 3" in err or "q.csv:3" in err), err
    assert "user" in err, err


# ----------------------------------------------------------------------- negative grades: one rule
NEG_QRELS = "1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 0\n"
NEG_RUN = "1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n1 Q0 c 3 1 r\n"
#: trec_eval 10.0 on NEG_QRELS and NEG_RUN (-q -m bpref -m infAP -m map -m P.1): b, graded -1, is in
#: the pool but not judged, so it is not a judged non-relevant item above a (bpref 1, not 0)
TREC_EVAL = {"bpref": 1.0, "infAP": 0.75, "AP": 0.5, "P@1": 0.0}


def test_a_negative_grade_means_the_same_in_a_frame_a_table_and_a_trec_file(tmp_path, capsys):
    (tmp_path / "q.qrels").write_text(NEG_QRELS)
    (tmp_path / "r.trec").write_text(NEG_RUN)
    frame = pd.DataFrame([ln.split() for ln in NEG_QRELS.splitlines()], columns=["user", "x", "item", "rating"])
    frame = frame.drop(columns="x").astype({"rating": float})
    frame.to_csv(tmp_path / "q.csv", index=False)
    run = rm.io.read_run(tmp_path / "r.trec")
    metrics = ["bpref", "infAP", "AP", "P@1"]
    from_frame = rm.evaluate(run, rm.Qrels(frame, threshold=1), metrics).aggregate
    from_file = rm.evaluate(run, rm.io.read_qrels(tmp_path / "q.qrels"), metrics).aggregate
    assert from_frame.to_dict() == from_file.to_dict() == pytest.approx(TREC_EVAL)
    outs = []
    for q in ("q.qrels", "q.csv"):
        rc = cli.main(["evaluate", "-l", "1", "-m", "bpref", "-m", "infAP", "-m", "map", str(tmp_path / q),
                       str(tmp_path / "r.trec"), "--format", "trec"])
        out, err = capsys.readouterr()
        assert rc == 0 and not err, err
        outs.append(out)
    assert outs[0] == outs[1] and "bpref                 \tall\t1" in outs[0]
    with pytest.raises(InputError, match="rating -1.* is not a non-negative finite number"):
        rm.Qrels(frame, threshold=1, negative="error")


# -------------------------------------------------------------------------- symbolic-link loops
@pytest.fixture()
def own_files(tmp_path, monkeypatch):
    d = tmp_path / "files"
    d.mkdir()
    (d / "q.qrels").write_text("".join(f"{u} 0 {i} {(u + i) % 3}\n" for u in range(1, 21) for i in range(1, 13)))
    for s, shift in (("A", 0), ("B", 3)):
        (d / f"{s}.trec").write_text("".join(f"{u} Q0 {(i + shift) % 15 + 1} {i + 1} {20 - i} {s}\n"
                                             for u in range(1, 21) for i in range(12)))
    os.symlink(d / "loop2.trec", d / "loop1.trec")
    os.symlink(d / "loop1.trec", d / "loop2.trec")
    root = tmp_path / "book" / "_build" / "runs"
    monkeypatch.setattr(own_book, "runs_root", lambda: root)
    monkeypatch.setenv("RECMETRICS_CACHE", str(tmp_path / "cache"))
    return d, root


@pytest.mark.parametrize("args", [
    lambda d: ["--qrels", str(d / "q.qrels"), "--runs", str(d / "A.trec"), str(d / "B.trec"), str(d / "loop1.trec")],
    lambda d: ["--qrels", str(d / "loop1.trec"), "--runs", str(d / "A.trec"), str(d / "B.trec")],
    lambda d: ["--qrels", str(d / "q.qrels"), "--runs", str(d)],   # a directory holding the loop
])
def test_a_symlink_loop_among_report_inputs_is_one_line(capsys, own_files, args):
    d, root = own_files
    rc = cli.main(["report", *args(d), "--no-execute"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("recmetrics: error:"), err
    assert "loop" in err and "symbolic link" in err and "Traceback" not in err, err
    assert not root.exists()


def test_evaluate_says_a_symlink_loop_is_one(capsys, own_files):
    d, _ = own_files
    rc = cli.main(["evaluate", "-m", "P@5", str(d / "q.qrels"), str(d / "loop1.trec")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "is a symbolic link that leads to no file" in err, err


# ------------------------------------------------------------------------ a run with no judged user
def test_a_run_with_no_judged_user_is_one_warning_line_at_every_build(capsys, own_files):
    d, _ = own_files
    (d / "D.trec").write_text("".join(f"{u} Q0 {i} {i} {20 - i} D\n" for u in range(100, 131) for i in range(1, 11)))
    args = ["report", "--qrels", str(d / "q.qrels"), "--runs", str(d / "A.trec"), str(d / "B.trec"),
            str(d / "D.trec"), "--no-execute"]
    for build in ("first", "second (prepared Study cached)"):
        rc = cli.main(args)
        err = capsys.readouterr().err
        warned = [ln for ln in err.splitlines() if "warning" in ln.lower()]
        assert rc == 2 and len(warned) == 1, (build, err)   # exit 2: --no-execute has no executed chapter yet
        line = warned[0]
        assert line.startswith("recmetrics: warning: run 'D': none of its 31 user(s) is judged"), (build, line)
        assert "scores 0 for every one of them" in line and "UserWarning" not in err and ".py:" not in err, err
    with pytest.warns(UserWarning, match=r"run 'x': none of its 31 user\(s\) is judged"):
        run = rm.io.read_run(d / "D.trec")
        run.name = "x"
        rm.evaluate(run, rm.io.read_qrels(d / "q.qrels"), ["P@5"])
