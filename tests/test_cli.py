import json
from pathlib import Path

import pytest

from recmetrics.cli import main


@pytest.fixture()
def files(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("1 0 10 5\n1 0 11 2\n2 0 10 4\n2 0 12 5\n")
    r = tmp_path / "run.txt"
    r.write_text("1 Q0 11 1 2.0 sys\n1 Q0 10 2 1.0 sys\n2 Q0 10 1 1 sys\n2 Q0 12 2 1 sys\n")
    return q, r


def test_evaluate_trec_eval_style(files, capsys):
    q, r = files
    assert main(["evaluate", str(q), str(r), "-m", "P@1", "RR", "ndcg_cut_2", "--threshold", "4", "--per-user"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# run sys: relevant = rating >= 4; users: relevant") and "2 evaluated, 0 of them missing" in out
    lines = [l.split("\t") for l in out.strip().splitlines() if not l.startswith("#")]
    table = {(m.strip(), u): float(v) for m, u, v in lines}
    assert table[("P@1", "1")] == 0.0 and table[("RR", "1")] == 0.5
    # ties on user 2 (score 1 and 1): docno descending puts 12 first
    assert table[("RR", "2")] == 1.0
    assert table[("RR", "all")] == 0.75
    assert ("nDCG@2", "all") in table


def test_evaluate_json_and_csv(files, capsys):
    q, r = files
    assert main(["evaluate", str(q), str(r), "-m", "P@2", "--format", "json", "--threshold", "4"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"run": "sys", "metric": "P@2", "user": "all", "value": 0.75}]
    assert main(["evaluate", str(q), str(r), "-m", "P@2", "--format", "csv", "--threshold", "4"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "run,metric,user,value"


def test_errors_exit_2_with_message(files, capsys, tmp_path):
    q, r = files
    assert main(["evaluate", str(q), str(r), "-m", "nDGC@10"]) == 2
    assert "did you mean 'nDCG'" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 11 1 2.0\n")
    assert main(["evaluate", str(q), str(bad)]) == 2
    assert "bad.txt:1: expected 6 fields" in capsys.readouterr().err


def test_datasets_and_metrics_listing(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "movielens-small" in out and "insteval" in out
    assert main(["datasets", "insteval"]) == 0
    assert "2972" in capsys.readouterr().out.replace(",", "")
    assert main(["metrics"]) == 0
    assert "ndcg_cut_k" in capsys.readouterr().out


def _run(tmp_path, *argv, stdin=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "recmetrics.cli", *argv], capture_output=True, text=True,
                          input=stdin, cwd=Path(__file__).resolve().parents[1])


def test_m_accumulates_and_trec_syntax(files, capsys):
    q, r = files
    assert main(["evaluate", "-m", "P@1", "-m", "RR", "-m", "P.1,2", "-m", "ndcg_cut.2", str(q), str(r)]) == 0
    metrics = [l.split("\t")[0].strip() for l in capsys.readouterr().out.splitlines() if not l.startswith("#")]
    assert metrics == ["P@1", "RR", "P@2", "nDCG@2"]  # P.1 is P@1: asked twice, printed once


def test_unknown_metric_reported_before_any_file_is_read(tmp_path, capsys):
    assert main(["evaluate", "-m", "nDGC@10", str(tmp_path / "missing_qrels"), str(tmp_path / "missing_run")]) == 2
    err = capsys.readouterr().err
    assert "unknown metric 'nDGC'" in err and "does not exist" not in err
    assert len(err.strip().splitlines()) == 1


def test_flags_c_q_n_l_M(files, capsys):
    q, r = files
    q.write_text(q.read_text() + "3 0 99 5\n")  # a judged user the run misses
    assert main(["evaluate", "--format", "trec", "-l", "4", "-m", "P.2", "-m", "num_q", str(q), str(r)]) == 0
    assert capsys.readouterr().out.splitlines() == ["num_q                 \tall\t2",
                                                    "P_2                   \tall\t0.75"]
    assert main(["evaluate", "--format", "trec", "-c", "-m", "P.2", "-m", "num_q", str(q), str(r)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("\tall\t3")
    assert main(["evaluate", "--format", "trec", "-q", "-n", "-M", "1", "-l", "5", "-m", "P.1", str(q), str(r)]) == 0
    # -l 5: user 1's rank-1 item 11 (grade 2) is not relevant; user 2's tie puts 12 (grade 5) first
    assert capsys.readouterr().out.splitlines() == ["P_1                   \t1\t0", "P_1                   \t2\t1"]


def test_listings_print_descriptions_whole(capsys):
    """`recmetrics datasets`, `recmetrics metrics` and `report --help` wrap a long description under
    itself instead of cutting it with an ellipsis."""
    from recmetrics.data import datasets
    from recmetrics.metrics import table

    for cmd, descriptions in ((["datasets"], datasets.list()["description"]),
                              (["metrics"], table()["description"])):
        assert main(cmd) == 0
        out = capsys.readouterr().out
        assert "…" not in out, cmd
        flat = " ".join(out.split())
        for text in descriptions:
            assert " ".join(str(text).split()) in flat, (cmd, text)
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    flat = " ".join(capsys.readouterr().out.split())
    for text in datasets.list()["description"]:
        assert " ".join(str(text).split()) in flat, text


def test_version_and_listings_fit_80_columns(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("recmetrics ")
    for cmd in (["metrics"], ["datasets"]):
        assert main(cmd) == 0
        assert max(len(l) for l in capsys.readouterr().out.splitlines()) <= 80


@pytest.mark.parametrize("case", ["empty_csv", "directory", "bad_bytes", "missing", "header_only"])
def test_every_error_is_one_line_with_status_2(tmp_path, case):
    q = tmp_path / "qrels.txt"
    q.write_text("1 0 10 1\n")
    run = {"empty_csv": "run.csv", "directory": "d", "bad_bytes": "run.txt", "missing": "nope.txt",
           "header_only": "h.csv"}[case]
    path = tmp_path / run
    if case == "empty_csv":
        path.write_text("")
    elif case == "directory":
        path.mkdir()
    elif case == "bad_bytes":
        path.write_bytes(b"1 Q0 10 1 1.0 sys\n1 Q0 \xff\xfe 2 0.5 sys\n")
    elif case == "header_only":
        path.write_text("user,item,score\n")
    res = _run(tmp_path, "evaluate", str(q), str(path))
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith("recmetrics: error: ")
    if case == "bad_bytes":
        assert "run.txt:2" in res.stderr and "UTF-8" in res.stderr


def test_stdin_and_closed_pipe(tmp_path, files):
    q, r = files
    res = _run(tmp_path, "evaluate", "--format", "trec", "-l", "4", "-m", "P.2", str(q), "-", stdin=r.read_text())
    assert res.returncode == 0 and res.stdout.strip().endswith("0.75"), res.stderr
    import subprocess
    import sys

    big = tmp_path / "big.txt"
    big.write_text("".join(f"{u} Q0 {i} {i} {1.0 / (i + 1)} s\n" for u in range(300) for i in range(30)))
    qb = tmp_path / "qb.txt"
    qb.write_text("".join(f"{u} 0 1 1\n" for u in range(300)))
    p1 = subprocess.Popen([sys.executable, "-m", "recmetrics.cli", "evaluate", "-q", "--format", "trec", "-m", "P.5",
                           str(qb), str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=Path(__file__).resolve().parents[1])
    p1.stdout.readline()
    p1.stdout.close()
    err = p1.stderr.read().decode()
    assert p1.wait() in (0, 2) and "Traceback" not in err


def test_no_judged_item_is_a_loud_warning(tmp_path, capsys):
    q = tmp_path / "q.txt"
    q.write_text("1 0 01 1\n1 0 02 1\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 1 1 2 s\n1 Q0 2 2 1 s\n")
    assert main(["evaluate", "-m", "P.2", str(q), str(r)]) == 0
    err = capsys.readouterr().err
    assert "none of its items is a judged item" in err and "'01' != '1'" in err


def test_diversity_metrics_from_the_command_line_read_aspects(tmp_path, capsys):
    """--aspects FILE (item,aspect rows or item,genres joined by '|') gives the diversity metrics the
    same values as rm.evaluate with the aspects Series; without it the error names the flag."""
    import pandas as pd

    import recmetrics as rm
    from recmetrics.data.io import read_aspects, read_qrels, read_run
    from recmetrics.errors import InputError

    q, r, a, a2, t = (tmp_path / n for n in ("q.csv", "r.csv", "asp.csv", "pairs.tsv", "train.csv"))
    q.write_text("user,item,rating\n1,a,5\n1,b,4\n2,c,5\n2,b,4\n")
    r.write_text("user,item,score\n1,a,3\n1,c,2\n1,b,1\n2,c,3\n2,a,2\n2,b,1\n")
    a.write_text("item,title,genres\na,A,x|y\nb,B,y\nc,C,z|(no genres listed)\n")
    a2.write_text("item\taspect\na\tx\na\ty\nb\ty\nc\tz\n")
    t.write_text("user,item,rating\n1,c,5\n2,a,4\n")
    aspects = read_aspects(a)
    assert aspects.to_dict() == {"a": ("x", "y"), "b": ("y",), "c": ("z",)} == read_aspects(a2).to_dict()
    metrics = ["a-nDCG@3", "S-Recall@3", "ERR-IA@3(profile=uniform)"]
    assert main(["evaluate", str(q), str(r), "-m", *metrics, "--aspects", str(a), "--train", str(t),
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = rm.evaluate(read_run(str(r)), read_qrels(str(q)), metrics, aspects=aspects,
                       train=pd.read_csv(t, dtype={"user": str, "item": str})).aggregate
    assert {g["metric"]: g["value"] for g in got} == pytest.approx(want.to_dict(), abs=0)
    assert main(["evaluate", str(q), str(r), "-m", "a-nDCG@3"]) == 2
    assert "--aspects FILE" in capsys.readouterr().err
    r2 = tmp_path / "r2.csv"
    r2.write_text("user,item,score\n1,b,3\n1,c,2\n1,a,1\n2,b,3\n2,a,2\n2,c,1\n")
    assert main(["compare", str(q), str(r), str(r2), "-m", "S-Recall@3", "--aspects", str(a2), "--test", "t"]) == 0
    assert "S-Recall@3" in capsys.readouterr().out
    for body, message in (("item,aspect\na,x\na,x\n", "twice"), ("item,genres\na,x\na,y\n", "appears twice"),
                          ("item,foo\na,x\n", "expected item,aspect"), ("item,aspect\n,x\n", "empty item id")):
        bad = tmp_path / "bad.csv"
        bad.write_text(body)
        with pytest.raises(InputError, match=message):
            read_aspects(bad)


@pytest.mark.parametrize("metric, message", [("RBP(p=1.5)", "persistence p must be in"),
                                             ("a-nDCG@10(alpha=0)", "alpha=0.0 must lie in"),
                                             ("ERR-IA@5(profile=foo)", "profile='foo' must be one of"),
                                             ("APLT@10(head=2)", "head=2.0 must lie in")])
def test_a_bad_metric_parameter_fails_before_any_file_is_read(tmp_path, capsys, metric, message):
    """The registry's check runs when the metric is parsed: the files (missing here) are never opened."""
    import recmetrics as rm
    from recmetrics.errors import InputError

    with pytest.raises(InputError, match=message):
        rm.metrics.parse(metric)
    assert main(["evaluate", str(tmp_path / "no-qrels"), str(tmp_path / "no-run"), "-m", metric]) == 2
    err = capsys.readouterr().err
    assert message in err and "does not exist" not in err
