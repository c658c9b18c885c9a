"""compare(): ranx-style table with paired tests, renderers and the ``compare`` sub-command."""
import argparse
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.meta import compare as cmp, significance as sig


def _scores(seed=0):
    rng = np.random.default_rng(seed)
    base = rng.random(80)
    idx = ["bm25", "als", "pop"]
    a = pd.DataFrame(base + rng.normal(0, 0.05, (3, 80)) + np.array([0.0, 0.1, -0.01])[:, None], index=idx)
    b = pd.DataFrame(np.round(np.clip(base + rng.normal(0, 0.2, (3, 80)), 0, 1), 1), index=idx)
    return {"nDCG@10": a, "P@10": b}


def test_compare_scores_table():
    res = cmp.compare(_scores(), test="t", correction="holm")
    assert list(res.means.index) == ["bm25", "als", "pop"] and list(res.means.columns) == ["nDCG@10", "P@10"]
    assert res.means.loc["als", "nDCG@10"] == pytest.approx(_scores()["nDCG@10"].loc["als"].mean())
    nd = res.pairs[res.pairs.metric == "nDCG@10"]
    assert len(nd) == 3 and len(res.pairs) == 6
    ref = sig.pairwise(_scores()["nDCG@10"], test="t", correction="holm")
    np.testing.assert_allclose(nd.p_adj, ref.p_adj)
    x = _scores()["nDCG@10"].to_numpy()
    assert nd.p.iloc[0] == pytest.approx(stats.ttest_rel(x[0], x[1]).pvalue)
    # als beats both on nDCG@10: its cell carries the letters a (bm25) and c (pop)
    assert set(res.beats()[("als", "nDCG@10")]) == {"bm25", "pop"}
    text = res.to_text()
    assert "^ac" in text and "holm" in text
    assert "$^{ac}$" in res.to_latex() and res.to_latex().startswith("\\begin{tabular}")
    rows = pd.read_csv(__import__("io").StringIO(res.to_csv()))
    assert list(rows.columns) == ["metric", "a", "b", "mean_a", "mean_b", "diff", "p", "p_adj", "significant",
                                  "winner", "d_z"]
    js = json.loads(res.to_json())
    assert js["means"]["nDCG@10"]["als"] == pytest.approx(res.means.loc["als", "nDCG@10"])
    assert len(js["pairs"]) == 6


def test_lower_is_better_metrics_mark_the_lower_mean_and_descriptions_mark_none():
    """RMSE's winner has the lower error; ARP (a description) has no winner and no letters; a
    table's own metric name takes its direction from ``better=``."""
    s = _scores()["nDCG@10"]                       # als highest, significantly (see above)
    res = cmp.compare({"RMSE": s, "ARP@10": s, "mine": s}, test="t", correction="holm", better={"mine": "lower"})
    assert res.directions == {"RMSE": "lower", "ARP@10": None, "mine": "lower"}
    assert set(res.beats()[("als", "RMSE")]) == set() and "als" in res.beats()[("bm25", "RMSE")]
    assert res.beats()[("bm25", "mine")] == res.beats()[("bm25", "RMSE")]
    assert not any(res.beats()[(x, "ARP@10")] for x in s.index)
    arp = res.pairs[res.pairs.metric == "ARP@10"]
    assert arp.significant.any() and arp.winner.isna().all()
    text = res.to_text()
    assert "lower is better: RMSE, mine" in text and "no better direction (descriptions, no letters): ARP@10" in text
    assert json.loads(res.to_json())["better"] == {"RMSE": "lower", "ARP@10": None, "mine": "lower"}
    with pytest.raises(InputError, match="better"):
        cmp.compare({"mine": s}, test="t", better={"mine": "down"})


def test_compare_baseline_and_tests():
    for test in sig.PAIRWISE_TESTS:
        res = cmp.compare(_scores(), test=test, baseline="bm25", n_permutations=300, correction="bh")
        assert set(res.pairs.a) == {"bm25"} and len(res.pairs) == 4
    none = cmp.compare(_scores(), correction=None, n_permutations=500)
    np.testing.assert_array_equal(none.pairs.p, none.pairs.p_adj)


def test_compare_bad_input():
    s = _scores()
    with pytest.raises(InputError):
        cmp.compare(s, test="anova")
    with pytest.raises(InputError):
        cmp.compare(s, correction="sidak")
    with pytest.raises(InputError):
        cmp.compare(s, baseline="nope", n_permutations=10)
    with pytest.raises(InputError):
        cmp.compare({})
    with pytest.raises(InputError, match="at least 2"):
        cmp.compare({"m": s["P@10"].iloc[:1]})
    with pytest.raises(InputError):
        cmp.compare(s, test="t").render("xml")


@pytest.fixture()
def trec_files(tmp_path):
    rng = np.random.default_rng(0)
    q = tmp_path / "qrels.txt"
    lines = [f"{u} 0 {i} 1" for u in range(1, 31) for i in rng.choice(50, 5, replace=False)]
    q.write_text("\n".join(lines) + "\n")
    paths = []
    for name, quality in (("good", 0.8), ("mid", 0.5), ("bad", 0.0)):
        rows = []
        rel = {}
        for l in lines:
            u, _, i, _ = l.split()
            rel.setdefault(u, []).append(int(i))
        for u in rel:
            hits = [i for i in rel[u] if rng.random() < quality]
            others = [i for i in rng.permutation(50) if i not in rel[u]]
            ranked = hits + others[:10 - len(hits)]
            rows += [f"{u} Q0 {i} {r + 1} {10 - r} {name}" for r, i in enumerate(ranked)]
        p = tmp_path / f"{name}.txt"
        p.write_text("\n".join(rows) + "\n")
        paths.append(str(p))
    return str(q), paths


def _cli(argv):
    parser = argparse.ArgumentParser(prog="recmetrics")
    sub = parser.add_subparsers(dest="command", required=True)
    cmp.add_parser(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_compare(trec_files, capsys):
    q, runs = trec_files
    assert _cli(["compare", q, *runs, "-m", "nDCG@10", "P@10", "--test", "t", "--baseline", "bad"]) == 0
    out = capsys.readouterr().out
    assert "good" in out and "nDCG@10" in out and "^c" in out  # good beats bad (letter c)
    assert _cli(["compare", q, *runs, "-m", "P@10", "--format", "json", "--permutations", "500",
                 "--correction", "none"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["correction"] is None and len(js["pairs"]) == 3
    # same numbers as the library on the same runs
    qrels = rm.io.read_qrels(q)
    res = cmp.compare(runs=[rm.io.read_run(p) for p in runs], qrels=qrels, metrics=["P@10"],
                      correction=None, n_permutations=500)
    np.testing.assert_allclose([p["p"] for p in js["pairs"]], res.pairs.p)
    assert _cli(["compare", q, *runs, "-m", "P@10", "--format", "latex", "--test", "wilcoxon"]) == 0
    assert "\\begin{tabular}" in capsys.readouterr().out


def test_compare_is_a_cli_subcommand(tmp_path, capsys):
    from recmetrics import cli

    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n3 0 e 1\n")
    (tmp_path / "r1.txt").write_text("1 Q0 a 1 2 r1\n1 Q0 b 2 1 r1\n2 Q0 c 1 2 r1\n2 Q0 d 2 1 r1\n3 Q0 e 1 1 r1\n")
    (tmp_path / "r2.txt").write_text("1 Q0 b 1 2 r2\n1 Q0 a 2 1 r2\n2 Q0 x 1 2 r2\n2 Q0 c 2 1 r2\n3 Q0 e 1 1 r2\n")
    assert cli.main(["compare", str(tmp_path / "q.txt"), str(tmp_path / "r1.txt"), str(tmp_path / "r2.txt"),
                     "-m", "P@1", "nDCG@2", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "r1" in out and "r2" in out and "P@1" in out
