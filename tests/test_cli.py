import json

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
    lines = [l.split("\t") for l in capsys.readouterr().out.strip().splitlines()]
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
