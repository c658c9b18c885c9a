"""Per-user parity with trec_eval (through pytrec_eval) to 1e-9 on runs with the edge cases."""
import subprocess
from pathlib import Path

import numpy as np
import pytest

import recmetrics as rm

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = [1, 5, 10, 20, 50, 100, 150]


def oracle(qrels_df, run_df, threshold):
    """trec_eval wants integer relevance: half-star ratings are scaled by 2 (nDCG is scale-free)."""
    qrels = {}
    for u, i, r in qrels_df.itertuples(index=False):
        qrels.setdefault(str(u), {})[str(i)] = int(round(2 * r))
    run = {}
    for u, i, s in run_df.itertuples(index=False):
        run.setdefault(str(u), {})[str(i)] = float(s)
    cuts = ",".join(map(str, CUTOFFS))
    measures = {f"P.{cuts}", f"recall.{cuts}", f"map_cut.{cuts}", f"ndcg_cut.{cuts}",
                "recip_rank", "bpref", "infAP", "map", "ndcg", "Rprec", "success.1,5,10",
                "num_ret", "num_rel", "num_rel_ret"}
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=int(round(2 * threshold)))
    return ev.evaluate(run)


PAIRS = [(f"P@{k}", f"P_{k}") for k in CUTOFFS] + [(f"Recall@{k}", f"recall_{k}") for k in CUTOFFS] \
    + [(f"AP@{k}", f"map_cut_{k}") for k in CUTOFFS] + [(f"nDCG@{k}", f"ndcg_cut_{k}") for k in CUTOFFS] \
    + [("RR", "recip_rank"), ("bpref", "bpref"), ("infAP", "infAP"), ("AP", "map"), ("nDCG", "ndcg")] \
    + [("Rprec", "Rprec"), ("success@1", "success_1"), ("success@5", "success_5"), ("success@10", "success_10"),
       ("num_ret", "num_ret"), ("num_rel", "num_rel"), ("num_rel_ret", "num_rel_ret")]


@pytest.mark.parametrize("seed,threshold", [(0, 4.0), (1, 3.5), (2, 3.0)])
def test_per_user_parity(seed, threshold):
    from conftest import make_case

    qrels_df, run_df = make_case(seed)
    ours = rm.evaluate(rm.Run.from_frame(run_df), rm.Qrels(qrels_df, threshold=threshold),
                       [m for m, _ in PAIRS], users="all").per_user
    theirs = oracle(qrels_df, run_df, threshold)
    compared = 0
    for user, row in ours.iterrows():
        if str(user) not in theirs:
            # absent from the run (trec_eval has no line for it): coverage shortfall scores 0
            assert (row.drop("num_rel") == 0).all(), user
            continue
        for ours_name, trec_name in PAIRS:
            assert row[ours_name] == pytest.approx(theirs[str(user)][trec_name], abs=1e-9, rel=0), (user, ours_name)
            compared += 1
    assert compared > 250 * len(PAIRS)
    # the generated case really contains the edge cases it claims to
    q = rm.Qrels(qrels_df, threshold=threshold)
    assert (q.n_relevant == 0).any() and (q.n_nonrelevant == 0).any()
    assert ours.index.size > len(theirs)


def test_relevant_user_policy_drops_users_without_relevant_items(case):
    qrels_df, run_df = case
    q = rm.Qrels(qrels_df)
    res = rm.evaluate(rm.Run.from_frame(run_df), q, ["P@10"])
    assert set(res.per_user.index) == set(q.relevant_users)
    assert res.metadata["users_missing_from_run"] > 0


# ------------------------------------------------------------------ the trec_eval 10.0 binary
TREC_EVAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "tools" / "trec_eval"
if not TREC_EVAL.exists():
    TREC_EVAL = Path("/work/shared/tools/trec_eval")
def sampled_pool_files(tmp_path, seed=0, every_query_in_run=True, max_len=90):
    """Qrels with -1 ("pooled, unjudged") and graded labels, ids that look like integers ("07", "7"),
    a run with ties, a query without relevant items, CRLF lines and a trailing field. Every query
    has 40 judgments; its list holds 1 to ``max_len - 1`` items, so many users have more judged
    (and relevant) items than their list is long — with ``max_len`` <= 40, every user of the run."""
    rng = np.random.default_rng(seed)
    q, r = [], []
    for u in range(30):
        qid = f"{u:02d}" if u % 5 == 0 else str(u)
        items = rng.choice(200, size=50, replace=False)
        labels = rng.choice([-1, 0, 0, 1, 2, 3], size=40, p=[.3, .3, .1, .15, .1, .05])
        if u == 4:
            labels = np.minimum(labels, 0)
        q += [f"{qid} 0 {it:03d} {lab}" if it % 3 else f"{qid} 0 {it} {lab}" for it, lab in zip(items[:40], labels)]
        if not every_query_in_run and u % 7 == 3:
            continue
        n = int(rng.integers(1, max_len))
        for k, it in enumerate(rng.choice(200, size=n, replace=False)):
            doc = f"{it:03d}" if it % 3 else str(it)
            r.append(f"{qid} Q0 {doc} {k + 1} {float(rng.integers(0, 8)) / 4} sys" + (" extra" if k == 0 else ""))
    (tmp_path / "qrels").write_text("\r\n".join(q) + "\r\n")
    (tmp_path / "run").write_text("\n".join(r) + "\n")
    return tmp_path / "qrels", tmp_path / "run"


def _same_lines(ours, theirs):
    """Line for line: the same names and qids in the same order, strings (runid, relstring) equal,
    numbers equal to 1e-12 (the C library's log2 may differ from numpy's in the last bit)."""
    assert len(ours) == len(theirs) > 0
    exact = 0
    for a, b in zip(ours, theirs):
        na, qa, va = a.split("\t")
        nb, qb, vb = b.split("\t")
        assert (na, qa) == (nb, qb), (a, b)
        try:
            fb = float(vb)
        except ValueError:
            assert va == vb, (a, b)
            continue
        assert float(va) == pytest.approx(fb, abs=1e-12, rel=0), (a, b)
        exact += va == vb
    return exact


TREC_FLAGS = [["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"], ["-m", "all_trec"], ["-c", "-m", "all_trec"],
              ["-c", "-l", "2", "-M", "20", "-m", "all_trec"], ["-q", "-c", "-l", "3", "-M", "7", "-m", "all_trec"],
              ["-q", "-n", "-m", "P.5,10,20", "-m", "infAP", "-m", "bpref"],
              ["-m", "ndcg_cut.3,100", "-m", "success.1,7", "-m", "Rprec"],
              [],  # no -m: trec_eval's "official" set
              ["-q", "-c", "-m", "official", "-m", "set"],
              ["-q", "-c", "-m", "all_trec", "-m", "P.20,5", "-m", "P.7", "-m", "rbp.p=0.5", "-m", "rbp_resid.p=0.8",
               "-m", "utility.2,-1,-0.5,0", "-m", "11pt_avg.0.2,.5,.8", "-m", "set_F.0.25", "-m", "relstring.4",
               "-m", "iprec_at_recall.0.25,.75", "-m", "Rprec_mult.1.5,0.5", "-m", "relative_P.3", "-m", "unj.2,30",
               "-m", "G.1=2,2=5", "-m", "ndcg.1=3,3=1", "-m", "ndcg_rel.0=1,2=4", "-m", "Rndcg.3=4.5"],
              ["-q", "-m", "dcg", "-m", "G", "-m", "ndcg_rel", "-m", "Rndcg"],
              # gain maps (the ideal from all judgments, not from the run's depth), -M shorter than the
              # judgments, -l with fractions (trec_eval's atol: 1.5 is 1, 2.7 is 2, 0.5 is 0)
              ["-q", "-c", "-M", "5", "-m", "ndcg.1=1,2=2,3=3", "-m", "G.2=4", "-m", "ndcg_rel.1=4", "-m", "Rndcg.3=6",
               "-m", "ndcg_cut.3,10", "-m", "map", "-m", "P.5,10"],  # depth 10 < 40 judgments
              ["-q", "-M", "4", "-m", "dcg.1=2,3=0.5", "-m", "ndcg_cut.10"],  # dcg.x with ndcg.x: trec_eval double-frees
              # fractional gains: trec_eval orders gains less than 1 apart as listed (an int comparator)
              ["-q", "-c", "-m", "ndcg.1=0.5", "-m", "G.2=2.5,3=1.5", "-m", "ndcg_rel.1=0.5", "-m", "Rndcg.2=3.25"],
              ["-q", "-M", "6", "-m", "ndcg.3=2.5,2=2.9", "-m", "G.0=0.5", "-m", "Rndcg.1=-0.5"],
              ["-q", "-l", "1.5", "-m", "all_trec", "-m", "ndcg.2=3"],
              ["-q", "-c", "-l", "2.7", "-M", "3", "-m", "all_trec"],
              ["-q", "-l", "0.5", "-m", "official", "-m", "ndcg", "-m", "ndcg.1=2", "-m", "set", "-m", "bpref",
               "-m", "infAP", "-m", "ndcg_cut.5,20"]]


@pytest.mark.skipif(not TREC_EVAL.exists(), reason="trec_eval binary absent (../shared/tools/trec_eval)")
@pytest.mark.parametrize("flags", TREC_FLAGS, ids=lambda f: " ".join(f) or "official")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cli_trec_format_matches_the_trec_eval_binary(tmp_path, capsys, flags, seed):
    """``--format trec`` prints what the trec_eval 10.0 binary prints for ``-m all_trec`` and the
    other measures, line for line (layout %-22s\tqid\tvalue, measures in its order, summaries
    summed in its order), on qrels with graded and -1 labels, a query without relevant items and
    runs with ties, short lists and (with -c) queries missing from the run."""
    from recmetrics.cli import main

    # seed 2: every list shorter than the 40 judgments of its query (the run's depth too)
    qrels, run = sampled_pool_files(tmp_path, seed=seed, every_query_in_run="-c" not in flags,
                                    max_len=12 if seed == 2 else 90)
    ref = subprocess.run([str(TREC_EVAL), *flags, str(qrels), str(run)], capture_output=True, text=True)
    assert ref.returncode == 0, ref.stderr
    assert main(["evaluate", "--format", "trec", *flags, str(qrels), str(run)]) == 0
    ours = capsys.readouterr().out.splitlines()
    _same_lines(ours, ref.stdout.splitlines())  # first the readable difference, if any
    assert ours == ref.stdout.splitlines()  # then to the last digit


@pytest.mark.skipif(not TREC_EVAL.exists(), reason="trec_eval binary absent")
def test_infap_with_pooled_unjudged_labels_matches_trec_eval(tmp_path):
    """-1 labels (sampled pool) enter infAP's pooled fraction: dropping them would move infAP."""
    qrels = tmp_path / "q"
    run = tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 1\n1 0 e -1\n1 0 f 1\n")
    run.write_text("".join(f"1 Q0 {d} {k} {10 - k} s\n" for k, d in enumerate("xbcaedgf", 1)))
    ref = subprocess.run([str(TREC_EVAL), "-m", "infAP", "-m", "bpref", str(qrels), str(run)],
                         capture_output=True, text=True).stdout.split()
    expected = dict(zip(ref[0::3], map(float, ref[2::3])))
    res = rm.evaluate(rm.io.read_run(run), rm.io.read_qrels(qrels), ["infAP", "bpref"], users="all")
    assert res.aggregate["infAP"] == pytest.approx(expected["infAP"], abs=1e-12)
    assert res.aggregate["bpref"] == pytest.approx(expected["bpref"], abs=1e-12)
    dropped = rm.io.read_qrels(qrels).to_frame().query("rating >= 0")
    other = rm.evaluate(rm.io.read_run(run), rm.Qrels(dropped, threshold=1), ["infAP"], users="all")
    assert other.aggregate["infAP"] != pytest.approx(expected["infAP"], abs=1e-6)


# ------------------------------------------------------------------ the rest of all_trec, per user
MULTS = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
# iprec_at_recall and 11pt_avg: trec_eval 10 rounds recall * R (lround) where 9 (pytrec_eval's) added 0.9
# and truncated; the binary test above checks them against 10.0
ALL_TREC_PAIRS = [(f"Rprec_mult(mult={m})", f"Rprec_mult_{m:.2f}") for m in MULTS] \
    + [(f"relative_P@{k}", f"relative_P_{k}") for k in CUTOFFS] \
    + [("utility", "utility"), ("binG", "binG"), ("G", "G"), ("nDCG_rel", "ndcg_rel"),
       ("Rndcg", "Rndcg"), ("set_P", "set_P"), ("set_relative_P", "set_relative_P"), ("set_recall", "set_recall"),
       ("set_map", "set_map"), ("set_F", "set_F"), ("num_nonrel_judged_ret", "num_nonrel_judged_ret")]


@pytest.mark.parametrize("seed,threshold", [(0, 8), (3, 5)])
def test_per_user_parity_of_the_rest_of_all_trec(seed, threshold):
    """The measures all_trec adds to the Valcarce set equal pytrec_eval's per user (integer grades
    1-10, so the gain measures see the same gains; ties, short and empty lists, users without
    relevant or without non-relevant items, users missing from the run)."""
    from conftest import make_case

    qrels_df, run_df = make_case(seed)
    qrels_df = qrels_df.assign(rating=(2 * qrels_df.rating).round().astype(int))
    ours = rm.evaluate(rm.Run.from_frame(run_df), rm.Qrels(qrels_df, threshold=threshold),
                       [m for m, _ in ALL_TREC_PAIRS], users="all").per_user
    qrels = {}
    for u, i, r in qrels_df.itertuples(index=False):
        qrels.setdefault(str(u), {})[str(i)] = int(r)
    run = {}
    for u, i, s in run_df.itertuples(index=False):
        run.setdefault(str(u), {})[str(i)] = float(s)
    measures = {"Rprec_mult", f"relative_P.{','.join(map(str, CUTOFFS))}", "utility",
                "binG", "G", "ndcg_rel", "Rndcg", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                "num_nonrel_judged_ret"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold).evaluate(run)
    compared = 0
    for user, row in ours.iterrows():
        if str(user) not in theirs:
            assert (row.drop("utility") == 0).all(), user  # utility of an empty list: 0
            continue
        for ours_name, trec_name in ALL_TREC_PAIRS:
            value = row[str(rm.metrics.parse(ours_name))]
            assert value == pytest.approx(theirs[str(user)][trec_name], abs=1e-12, rel=0), (user, ours_name)
            compared += 1
    assert compared > 250 * len(ALL_TREC_PAIRS)


def test_every_trec_eval_claim_of_the_reference_is_compared_here():
    """The metric reference prints "equals trec_eval X" only from rm.metrics.peers.PEER_CHECKS; each
    such check is a pair this file compares (per user through pytrec_eval, or line for line
    against the binary), with the same recmetrics spec."""
    from recmetrics.metrics import peers
    from recmetrics.trec_measures import expand

    def spec(text):
        return str(rm.metrics.parse(text))

    compared = {
        "test_per_user_parity": {(spec(o), t) for o, t in PAIRS},
        "test_per_user_parity_of_the_rest_of_all_trec": {(spec(o), t) for o, t in ALL_TREC_PAIRS},
        # the binary test: every column of the measures its flags name
        "test_cli_trec_format_matches_the_trec_eval_binary": {
            (spec(c.metric), c.trec) for f in TREC_FLAGS for c in expand([f[i + 1] for i, x in enumerate(f) if x == "-m"]
                                                                         or ["official"]) if c.metric},
    }
    for c in peers.checks("trec_eval"):
        test = c.test.split("::")[1]
        assert c.test.startswith("tests/test_parity_trec_eval.py::") and test in compared, c
        values = {"P_{k}": CUTOFFS, "Rprec_mult_{k}": MULTS, "iprec_at_recall_{k}": [0.25, 0.75]}.get(c.theirs, CUTOFFS)
        want = [(c.ours.format(k=k), c.theirs.format(k=f"{k:.2f}" if "mult" in c.ours or "recall" in c.ours else k))
                for k in values] if "{k}" in c.ours else [(c.ours, c.theirs)]
        hits = [w for w in want if (spec(w[0]), w[1]) in compared[test]]
        assert hits, (c, want[:2])
    for name in rm.metrics.names():  # the registry's trec_eval name is a checked claim too
        if rm.metrics.get(name).trec_eval:
            assert peers.checks("trec_eval", name), name
