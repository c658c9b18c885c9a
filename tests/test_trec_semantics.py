"""trec_eval's semantics everywhere (issue 23 §3) and the input edges of §5 that the readers and
``rm.evaluate`` own: gain maps' ideal from all judgments, ``-l`` read with atol, measure parameters
checked before any file is read, ``-M``, ranx's ``rbp.8`` on the command line, users given twice,
``floor``, byte-order marks inside a file, ``1_000`` numbers and compressed files read as streams."""
import gzip
import math
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.cli import main
from recmetrics.errors import InputError

TREC_EVAL = Path("/work/shared/tools/trec_eval")


def _files(tmp_path, qrels="q1 0 a 1\nq1 0 b 1\nq1 0 c 1\n", run="q1 Q0 a 1 1 t\n"):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return str(tmp_path / "q"), str(tmp_path / "r")


def _trec(capsys, *args):
    rc = main(["evaluate", "--format", "trec", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


# ------------------------------------------------------------------ gain maps: the ideal from all judgments
def test_gain_map_ideal_ranks_every_judgment_not_the_runs_depth(tmp_path, capsys):
    """q1: a b c relevant, run `a`: nDCG = 1 / (1 + 1/log2 3 + 1/log2 4) = 0.4693 (trec_eval), not 1."""
    q, r = _files(tmp_path)
    expected = 1.0 / (1.0 + 1.0 / math.log2(3) + 1.0 / math.log2(4))
    for measure in ("ndcg.1=1", "ndcg.1=2"):
        rc, out, _ = _trec(capsys, "-m", measure, q, r)
        assert rc == 0 and float(out.split()[-1]) == pytest.approx(expected, abs=1e-15)
    res = rm.evaluate(rm.io.read_run(r), rm.io.read_qrels(q), ["nDCG(gains='1=1')", "nDCG(gains='1=5')", "nDCG"])
    assert res.values[:, 0] == pytest.approx([expected] * 3, abs=1e-15)


def test_identity_gain_map_equals_plain_ndcg_on_short_lists():
    from conftest import make_case

    qrels_df, run_df = make_case(0, max_len=6)   # every list shorter than many users' judgments
    qrels_df = qrels_df.assign(rating=(2 * qrels_df.rating).round().astype(int))
    identity = ";".join(f"{g}={g}" for g in range(1, 11))
    res = rm.evaluate(rm.Run.from_frame(run_df), rm.Qrels(qrels_df, threshold=8), ["nDCG", f"nDCG(gains='{identity}')"],
                      users="all")
    assert res.judged.depth < int(res.judged.n_rel.max())
    assert np.array_equal(res.values[0], res.values[1])


# ------------------------------------------------------------------ -l: C's atol for TREC qrels
@pytest.mark.skipif(not TREC_EVAL.exists(), reason="trec_eval binary absent")
@pytest.mark.parametrize("level", ["1.5", "0", "0.9", "2.7", "1e0"])
def test_level_is_read_as_trec_eval_reads_it(tmp_path, capsys, level):
    q, r = _files(tmp_path, "1 0 a 0\n1 0 b 1\n1 0 c 2\n1 0 d -1\n2 0 a 3\n",
                  "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 d 3 1 t\n2 Q0 x 1 1 t\n")
    measures = ["-m", "P.1,2,3", "-m", "map", "-m", "num_rel", "-m", "bpref", "-m", "ndcg"]
    ref = subprocess.run([str(TREC_EVAL), "-q", "-l", level, *measures, q, r], capture_output=True, text=True)
    rc, out, err = _trec(capsys, "-q", "-l", level, *measures, q, r)
    assert rc == 0 and out == ref.stdout
    same_number = level in ("0", "1e0")  # atol reads the number written: no warning
    assert ("read as relevance level" in err) != same_number


@pytest.mark.parametrize("level,needle", [("-1", "expected a relevance level >= 0"), ("abc", "expected a number"),
                                          ("nan", "expected a number"), ("inf", "expected a number")])
def test_bad_levels_fail_in_one_line_before_reading(capsys, level, needle):
    rc = main(["evaluate", "-l", level, "-m", "P.1", "/nonexistent/q", "/nonexistent/r"])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_a_rating_table_keeps_a_real_threshold(tmp_path, capsys):
    (tmp_path / "q.csv").write_text("user,item,rating\n1,a,3.5\n1,b,3\n")
    (tmp_path / "r.csv").write_text("user,item,score\n1,b,2\n1,a,1\n")
    assert main(["evaluate", "-l", "3.5", "-m", "P@1", str(tmp_path / "q.csv"), str(tmp_path / "r.csv")]) == 0
    out = capsys.readouterr()
    assert "rating >= 3.5" in out.out and "P@1" in out.out and out.out.split()[-1] == "0.0000" and out.err == ""


# ------------------------------------------------------------------ measure parameters, -M
BAD_MEASURES = [("set_F.nan", "set_F.nan", "nan"), ("Rprec_mult.nan", "Rprec_mult.nan", "nan"),
                ("G.1=nan", "G.1=nan", "1=nan"), ("utility.nan,-1,0,0", "utility.nan,-1,0,0", "nan"),
                ("ndcg.1=inf", "ndcg.1=inf", "1=inf"), ("11pt_avg.-1", "11pt_avg.-1", "-1"),
                ("11pt_avg.0.5,1.5", "11pt_avg.0.5,1.5", "1.5"), ("relstring.-3", "relstring.-3", "integer >= 0"),
                ("G.1=2,1=3", "G.1=2,1=3", "'1' is given twice"), ("P.9223372036854775808", "P.9223372036854775808", "2^63"),
                ("iprec_at_recall.1.5", "iprec_at_recall.1.5", "1.5"), ("Rprec_mult.-2", "Rprec_mult.-2", "-2"),
                ("set_F.-1", "set_F.-1", "-1"), ("rbp.p=nan", "rbp.p=nan", "p=nan"),
                ("nDCG(gains='1=2;1=3')", "nDCG", "grade 1 is given a gain twice"),
                ("G(gains='1=inf')", "G", "finite"), ("IPrec(recall=nan)", "IPrec", "recall"),
                ("Rprec_mult(mult=nan)", "Rprec_mult", "mult"), ("set_F(weight=inf)", "set_F", "weight"),
                ("utility(rel_ret=nan)", "utility", "rel_ret"), ("IPrec_avg(points='0.5;2')", "IPrec_avg", "points")]


@pytest.mark.parametrize("measure,name,param", BAD_MEASURES, ids=[m for m, _, _ in BAD_MEASURES])
def test_bad_measure_parameters_are_one_line_before_any_file_is_read(capsys, measure, name, param):
    rc = main(["evaluate", "--format", "trec", "-m", measure, "/nonexistent/q", "/nonexistent/r"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert name in err and param in err and "nonexistent" not in err and "Traceback" not in err, err


def test_python_api_checks_the_same_parameters_when_parsing():
    for text in ("nDCG(gains='1=nan')", "Rprec_mult(mult=nan)", "IPrec(recall=-0.1)", "set_F(weight=nan)",
                 "IPrec_avg(points='-1')", "DCG(gains='2=1;2=1')"):
        with pytest.raises(InputError):
            rm.metrics.parse(text)


def test_largest_cutoff_trec_eval_takes_works(tmp_path, capsys):
    q, r = _files(tmp_path)
    rc, out, _ = _trec(capsys, "-m", "P.9223372036854775807", q, r)
    assert rc == 0 and float(out.split()[-1]) == pytest.approx(1 / 9223372036854775807, rel=1e-12)


def test_max_docs(tmp_path, capsys):
    q, r = _files(tmp_path, run="q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n")
    assert main(["evaluate", "-M", "-1", "-m", "P.1", q, r]) == 2
    err = capsys.readouterr().err
    assert "-M/--max-docs -1" in err and len(err.strip().splitlines()) == 1
    rc, out, _ = _trec(capsys, "-M", "0", "-m", "num_ret", "-m", "P.1", q, r)
    assert rc == 0 and out.split() == ["num_ret", "all", "0", "P_1", "all", "0"]


def test_ranx_rbp_name_works_on_the_command_line_as_in_python(tmp_path, capsys):
    q, r = _files(tmp_path, "u 0 a 2\nu 0 b 1\n", "u Q0 a 1 2 t\nu Q0 b 2 1 t\n")
    assert main(["evaluate", "--format", "csv", "-m", "rbp.8", q, r]) == 0
    value = float(capsys.readouterr().out.splitlines()[-1].split(",")[-1])
    py = rm.evaluate(rm.io.read_run(r), rm.io.read_qrels(q), ["rbp.8"]).values[0][0]
    assert value == py == pytest.approx((1 - 0.8) * (2 + 1 * 0.8))


# ------------------------------------------------------------------ rm.evaluate's users and floor
def test_a_user_given_twice_is_an_error_not_counted_twice():
    qrels = rm.Qrels.from_dict({"u1": {"a": 5}, "u2": {"b": 5}})
    run = {"u1": ["a"], "u2": ["x"]}
    assert rm.evaluate(run, qrels, ["P@1"], users=["u1", "u2"]).aggregate["P@1"] == 0.5
    with pytest.raises(InputError, match="'u1' is given more than once"):
        rm.evaluate(run, qrels, ["P@1"], users=["u1", "u2", "u1"])


@pytest.mark.parametrize("floor", [math.inf, math.nan, 0.0, -1.0])
def test_floor_must_be_positive_and_finite(floor):
    qrels = rm.Qrels.from_dict({"u1": {"a": 5}})
    with pytest.raises(InputError, match="floor"):
        rm.evaluate({"u1": ["a"]}, qrels, ["P@1"], aggregate="geometric", floor=floor)


# ------------------------------------------------------------------ byte-order marks inside, 1_000, streams
@pytest.mark.parametrize("kind", ["run", "qrels", "csv"])
def test_a_byte_order_mark_inside_a_file_names_its_line(tmp_path, kind):
    bom = "\ufeff"
    if kind == "run":
        path = tmp_path / "r.txt"
        path.write_text(f"u0 Q0 a 1 1 t\n{bom}u1 Q0 a 1 1 t\n", encoding="utf-8")
        reader = rm.io.read_run
    elif kind == "qrels":
        path = tmp_path / "q.txt"
        path.write_text(f"{bom}u0 0 a 1\nu0 0 b 1\n{bom}u1 0 a 1\n", encoding="utf-8")  # the first one is fine
        reader = rm.io.read_qrels
    else:
        path = tmp_path / "q.csv"
        path.write_text(f"user,item,rating\nu0,a,5\n{bom}user,item,rating\nu1,a,5\n", encoding="utf-8")
        reader = rm.io.read_qrels
    with pytest.raises(InputError, match=r":3: a byte-order mark" if kind != "run" else r":2: a byte-order mark"):
        reader(path)


@pytest.mark.parametrize("value", ["1_000", "١", "0x10"])
def test_numbers_are_read_as_c_reads_them_or_the_line_is_named(tmp_path, value):
    (tmp_path / "r").write_text(f"u Q0 a 1 2 t\nu Q0 b 2 {value} t\n")
    with pytest.raises(InputError, match=r"r:2: score .* is not a number"):
        rm.io.read_run(tmp_path / "r")
    (tmp_path / "q").write_text(f"u 0 a 1\nu 0 b {value}\n")
    with pytest.raises(InputError, match=r"q:2: relevance .* is not a number"):
        rm.io.read_qrels(tmp_path / "q")


def test_a_gzip_stream_fails_at_its_first_bad_line_with_bounded_memory(tmp_path):
    """87 KB of gzip inflating to 45 MB, line 2 bad: the error names line 2 without inflating the file."""
    path = tmp_path / "bad.run.gz"
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(b"1 Q0 d1 1 1.0 t\n1 Q0 d2 2\n" + b"1 Q0 dx 3 0.5 t\n" * 2_800_000)
    assert path.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"bad.run.gz:2: expected 6 fields"):
            rm.io.read_run(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12_000_000, peak   # a block or two, not the 45 MB file


def test_compressed_files_read_as_streams_equal_the_plain_file(tmp_path):
    from conftest import make_case

    _, run_df = make_case(1, n_users=50)
    plain = tmp_path / "r.txt"
    rm.io.write_trec_run(rm.Run.from_frame(run_df), plain, tag="t")
    text = plain.read_bytes()
    for suffix, module in ((".gz", gzip), (".bz2", __import__("bz2")), (".xz", __import__("lzma"))):
        path = tmp_path / f"r.txt{suffix}"
        path.write_bytes(module.compress(text))
        a, b = rm.io.read_run(plain), rm.io.read_run(path)
        assert a.users.tolist() == b.users.tolist() and np.array_equal(a.items, b.items)
    # the reference (line-by-line) reader streams too: a CRLF, commented file gives the same run
    odd = tmp_path / "odd.txt.gz"
    odd.write_bytes(gzip.compress(b"# comment\r\n" + text.replace(b"\n", b"\r\n")))
    c = rm.io.read_run(odd)
    assert c.users.tolist() == a.users.tolist() and np.array_equal(c.items, a.items)
    pd.testing.assert_frame_equal(c.to_frame(), a.to_frame())
