"""Issue 23 §5: ARP, APLT and ACLT are undefined (not 0) for a judged user without a list, so every
output format and user policy gives the mean over the users with a list (Elliot, RecBole, rectools);
an aspects table that matches none of the run's items warns as a run/qrels mismatch does; an
aspects row of one field is an error naming its line."""
import json
import math

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.cli import main
from recmetrics.errors import InputError


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "q.csv").write_text("user,item,rating\n1,a,5\n2,b,4\n3,c,5\n4,d,1\n")   # 3 and 4: no list
    (tmp_path / "r.csv").write_text("user,item,score\n1,a,2\n1,b,1\n2,c,1\n")
    (tmp_path / "t.csv").write_text("user,item,rating\n7,a,5\n8,a,4\n9,b,5\n")
    return tmp_path


def _summary(capsys, fmt, *args):
    assert main(["evaluate", "--format", fmt, *args]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        return {r["metric"]: r["value"] for r in json.loads(out) if r["user"] == "all"}
    if fmt == "csv":
        return {l.split(",")[1]: float(l.split(",")[3]) for l in out.splitlines()[1:] if l.split(",")[2] == "all"}
    return {l.split()[0]: float(l.split()[2]) for l in out.splitlines() if not l.startswith("#") and l.split()[1] == "all"}


def test_every_format_and_policy_gives_the_mean_over_the_users_with_a_list(files, capsys):
    args = ["-m", "ARP@2", "APLT@2", "ACLT@2", "--train", str(files / "t.csv"), str(files / "q.csv"), str(files / "r.csv")]
    # ARP@2: user 1 lists a (2 training users) and b (1): 1.5; user 2 lists c (0): 0 -> 0.75
    # (a and b hold the whole short head, c is cold: no long-tail item is listed)
    want = {"ARP@2": 0.75, "APLT@2": 0.0, "ACLT@2": 0.0}
    for fmt in ("table", "trec", "csv", "json"):
        for extra in ([], ["-c"], ["--users", "run"]):
            got = _summary(capsys, fmt, *extra, *args)
            assert got == pytest.approx(want), (fmt, extra, got)


def test_a_user_without_a_list_is_undefined_per_user(files, capsys):
    res = rm.evaluate(rm.io.read_run(files / "r.csv"), rm.io.read_qrels(files / "q.csv"), ["ARP@2", "P@2"],
                      users="all", train=pd.read_csv(files / "t.csv", dtype={"user": str, "item": str}))
    arp = res.per_user["ARP@2"]
    assert np.isnan(arp.loc["3"]) and np.isnan(arp.loc["4"]) and arp.loc["1"] == 1.5
    assert res.per_user["P@2"].loc["3"] == 0.0       # accuracy: a coverage shortfall still scores 0
    assert main(["evaluate", "--format", "json", "-q", "-c", "-m", "ARP@2", "--train", str(files / "t.csv"),
                 str(files / "q.csv"), str(files / "r.csv")]) == 0
    rows = {r["user"]: r["value"] for r in json.loads(capsys.readouterr().out)}
    assert rows["3"] is None and rows["all"] == 0.75   # valid JSON: null, not NaN


def test_compare_shows_an_undefined_description_untested(files):
    from recmetrics.meta.compare import compare

    qrels = rm.io.read_qrels(files / "q.csv")
    a, b = rm.io.read_run(files / "r.csv", name="a"), rm.io.read_run(files / "r.csv", name="b")
    train = pd.read_csv(files / "t.csv", dtype={"user": str, "item": str})
    with pytest.warns(UserWarning):
        c = compare(runs=[a, b], qrels=qrels, metrics=["ARP@2", "P@2"], train=train, n_permutations=100)
    assert "ARP@2" in c.per_run and c.means.loc["a", "ARP@2"] == 0.75


# ------------------------------------------------------------------ aspects
def test_aspects_that_match_no_ranked_item_warn(tmp_path):
    qrels = rm.Qrels.from_dict({"u": {"a": 5, "b": 4}})
    aspects = pd.Series({"x": ("Drama",), "y": ("Comedy",)})
    with pytest.warns(UserWarning, match=r"none of its ranked items is in the aspects table.*a-nDCG@2, S-Recall@2"):
        res = rm.evaluate({"u": ["a", "b"]}, qrels, ["a-nDCG@2", "S-Recall@2", "P@2"], aspects=aspects)
    assert res.aggregate["S-Recall@2"] == 0.0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one matching item: no warning
        rm.evaluate({"u": ["a", "b"]}, qrels, ["S-Recall@2"], aspects=pd.Series({"a": ("Drama",), "y": ("x",)}))


def test_aspects_warning_on_the_command_line(tmp_path, capsys):
    (tmp_path / "q").write_text("u 0 a 1\nu 0 b 1\n")
    (tmp_path / "r").write_text("u Q0 a 1 2 t\nu Q0 b 2 1 t\n")
    (tmp_path / "asp.csv").write_text("item,aspect\nx,Drama\n")
    assert main(["evaluate", "-m", "a-nDCG@2", "--aspects", str(tmp_path / "asp.csv"), str(tmp_path / "q"),
                 str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "none of its ranked items is in the aspects table" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text,line", [("item,aspect\na,Drama\nb\n", 3), ("item,aspects\na,Drama|War\nb\nc,\n", 3),
                                       ("item\ta\na\tx\nb\n", 3)])
def test_an_aspects_row_of_one_field_names_its_line(tmp_path, text, line):
    path = tmp_path / ("a.tsv" if "\t" in text else "a.csv")
    path.write_text(text.replace("item\ta", "item\taspect"))
    with pytest.raises(InputError, match=rf":{line}: one field \('b'\)"):
        rm.io.read_aspects(path)


def test_an_item_without_aspect_is_written_with_an_empty_field(tmp_path):
    (tmp_path / "a.csv").write_text("item,aspects\na,Drama|War\nc,\n")
    assert rm.io.read_aspects(tmp_path / "a.csv").to_dict() == {"a": ("Drama", "War"), "c": ()}
