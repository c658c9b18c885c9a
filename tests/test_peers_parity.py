"""Per-user parity of the peers' measures with ranx and ir_measures — every claim of
``rm.metrics.peers.PEER_CHECKS`` (the table the metric reference prints its "equals" rows from) —
RBP with any p against the trec_eval binary, and the peers' metric strings."""
import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.metrics import peers

CUTS = [1, 3, 10, 50]


def graded_case(seed=0, n_users=120, n_items=300):
    """Integer grades 0-4 and -1 ("in the pool, unjudged"), users without relevant items, users
    missing from the run, empty-ish and short lists, tied scores (rounded to one decimal)."""
    rng = np.random.default_rng(seed)
    q = []
    for u in range(n_users):
        items = rng.choice(n_items, size=int(rng.integers(1, 30)), replace=False)
        grades = rng.choice([-1, 0, 0, 1, 2, 3, 4], size=len(items)) if u % 6 else np.zeros(len(items), int)
        q += [(f"u{u}", f"d{i}", int(g)) for i, g in zip(items, grades)]
    qrels = pd.DataFrame(q, columns=["user", "item", "rating"])
    r = []
    for u in range(n_users):
        if u % 9 == 4:
            continue
        judged = qrels.item[qrels.user == f"u{u}"].to_numpy()
        pool = np.unique(np.concatenate([judged, [f"d{i}" for i in rng.choice(n_items, 40, replace=False)]]))
        size = int(rng.integers(1, 60)) if u % 5 else int(rng.integers(1, 4))
        chosen = rng.choice(pool, size=min(size, len(pool)), replace=False)
        r += [(f"u{u}", i, float(np.round(rng.random(), 1))) for i in chosen]
    return qrels, pd.DataFrame(r, columns=["user", "item", "score"])


@pytest.fixture(scope="module")
def case():
    qrels_df, run_df = graded_case()
    run = rm.Run.from_frame(run_df)
    qrels = rm.Qrels(qrels_df, threshold=1, negative="unjudged")
    # the peers break ties their own way: they get recmetrics' ranking (trec_eval's tie rule) as
    # distinct scores, so every tool ranks the same lists
    ranked = {str(u): {str(run.items[n, i]): float(run.lengths[n] - i) for i in range(run.lengths[n])}
              for n, u in enumerate(run.users)}
    judgments = {}
    for u, i, g in qrels_df.itertuples(index=False):
        judgments.setdefault(u, {})[i] = int(g)
    assert (run_df.duplicated(["user", "score"])).any()  # the case has ties
    return run, qrels, ranked, judgments


def ours(case, names):
    run, qrels, _, _ = case
    res = rm.evaluate(run, qrels, names, users="run")
    return {n: dict(zip(map(str, res.users), res.values[i])) for i, n in enumerate(names)}


def _expand(check, cuts=CUTS):
    """(ours, theirs) of a :class:`~recmetrics.metrics.peers.PeerCheck`, one per cut-off when it has ``{k}``."""
    if "{k}" not in check.ours:
        return [(check.ours, check.theirs)]
    return [(check.ours.format(k=k), check.theirs.format(k=k)) for k in cuts]


#: ranx's measures evaluated in a child process with numba's JIT off: the Python source numba
#: compiles, run as it is written (ranx's kernels use no fastmath). On this case the compiled kernels
#: gave 2,959 of the 3,120 values bit for bit and the rest within 1.1e-14 (summation order), far
#: inside the 1e-9 tolerance. Compiling them costs 40-80 s in every fresh environment (28 s for the
#: first measure alone: ranx's typed Qrels and Run), which the suite would pay for nothing it checks.
_RANX_CHILD = """
import json, sys
import ranx
qrels, run, metrics = json.load(sys.stdin)
rq = ranx.Qrels({u: {i: g for i, g in d.items() if g > 0} or {"__none__": 0} for u, d in qrels.items()})
rr = ranx.Run(run)
ranx.evaluate(rq, rr, metrics, make_comparable=True)
json.dump({m: dict(rr.scores[m]) for m in metrics}, sys.stdout)
"""


def _ranx_scores(judgments: dict, ranked: dict, metrics: list[str]) -> dict:
    """``{metric: {user: value}}`` from ranx (``evaluate`` with ``make_comparable``), interpreted."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("ranx")
    out = subprocess.run([sys.executable, "-c", _RANX_CHILD], input=json.dumps([judgments, ranked, metrics]),
                         capture_output=True, text=True, check=True, env={**os.environ, "NUMBA_DISABLE_JIT": "1"})
    return json.loads(out.stdout)


def test_ranx_parity(case):
    """Every ranx claim of the metric reference (rm.metrics.peers.PEER_CHECKS), per user."""
    _, _, ranked, judgments = case
    pairs = dict(p for c in peers.checks("ranx") for p in _expand(c))
    assert len(pairs) >= 8
    mine = ours(case, list(pairs))
    theirs = _ranx_scores(judgments, ranked, list(pairs.values()))
    compared = 0
    for name, metric in pairs.items():
        for q, v in mine[name].items():
            assert v == pytest.approx(theirs[metric][q], abs=1e-9), (name, q)
            compared += 1
    assert compared > 100 * len(pairs)
    # not a claim of the reference: binary RBP at grade >= 2 is ranx's rbp on qrels binarised there
    binary = {u: {i: 1 for i, g in d.items() if g >= 2} for u, d in judgments.items()}
    theirs = _ranx_scores(binary, ranked, ["rbp.95"])["rbp.95"]
    for q, v in ours(case, ["RBP(p=0.95,rel=2)"])["RBP(p=0.95,rel=2)"].items():
        assert v == pytest.approx(theirs[q], abs=1e-9), q


def test_ir_measures_parity(case):
    """Every ir_measures claim of the metric reference (rm.metrics.peers.PEER_CHECKS), per user."""
    irm = pytest.importorskip("ir_measures")
    _, _, ranked, judgments = case
    qrels = [irm.Qrel(u, i, g) for u, d in judgments.items() for i, g in d.items()]
    run = [irm.ScoredDoc(u, i, s) for u, d in ranked.items() for i, s in d.items()]
    pairs = {theirs: str(rm.metrics.parse(o)) for c in peers.checks("ir_measures") for o, theirs in _expand(c)}
    assert {"NumRet", "NumRel", "NumRelRet", "Bpref", "infAP", "Rprec", "R@10", "AP@10", "Success@10"} <= set(pairs)
    mine = ours(case, sorted(set(pairs.values())))
    got = {}
    for m in irm.iter_calc([irm.parse_measure(n) for n in pairs], qrels, run):
        if m.query_id not in mine["P@1"]:
            continue  # a judged user without a list: ir_measures' providers differ on it
        name = pairs[next(n for n in pairs if irm.parse_measure(n) == m.measure)]
        assert mine[name][m.query_id] == pytest.approx(m.value, abs=1e-9), m
        got[name] = got.get(name, 0) + 1
    assert set(got) == set(pairs.values()) and min(got.values()) > 90, got


@pytest.mark.parametrize("measure", ["RBP(rel=1,p=0.8)", "RBP(rel=2,p=0.5)"])
def test_ir_measures_rbp(case, measure):
    irm = pytest.importorskip("ir_measures")
    _, _, ranked, judgments = case
    qrels = [irm.Qrel(u, i, g) for u, d in judgments.items() for i, g in d.items()]
    run = [irm.ScoredDoc(u, i, s) for u, d in ranked.items() for i, s in d.items()]
    try:  # ir_measures' RBP needs a provider (cwl_eval, trectools) that is not a dependency here
        theirs = list(irm.iter_calc([irm.parse_measure(measure)], qrels, run))
    except ValueError as exc:
        pytest.skip(f"ir_measures' RBP provider is absent ({str(exc).splitlines()[0]}); RBP is checked against "
                    f"ranx and the trec_eval binary")
    mine = ours(case, [str(rm.metrics.parse(measure))])[str(rm.metrics.parse(measure))]
    for m in theirs:
        if m.query_id in mine:
            assert mine[m.query_id] == pytest.approx(m.value, abs=1e-9), m


def test_trec_eval_binary_rbp_any_p(tmp_path):
    """Graded RBP (grade over the user's top grade) with any p equals trec_eval's rbp.p=..."""
    import subprocess
    from pathlib import Path

    binary = Path(__file__).resolve().parents[1] / ".." / "shared" / "tools" / "trec_eval"
    binary = binary if binary.exists() else Path("/work/shared/tools/trec_eval")
    if not binary.exists():
        pytest.skip("trec_eval binary absent (../shared/tools/trec_eval)")
    qrels_df, run_df = graded_case(1)
    (tmp_path / "q").write_text("".join(f"{u} 0 {i} {g}\n" for u, i, g in qrels_df.itertuples(index=False)))
    (tmp_path / "r").write_text("".join(f"{u} Q0 {i} 0 {s} t\n" for u, i, s in run_df.itertuples(index=False)))
    run, qrels = rm.io.read_run(tmp_path / "r"), rm.io.read_qrels(tmp_path / "q")
    for p in (0.5, 0.8, 0.95):
        out = subprocess.run([str(binary), "-c", "-q", "-m", f"rbp.p={p}", "-m", f"rbp_resid.p={p}",
                              str(tmp_path / "q"), str(tmp_path / "r")], capture_output=True, text=True).stdout
        ref = {(l.split()[0], l.split()[1]): float(l.split()[2]) for l in out.splitlines()}
        res = rm.evaluate(run, qrels, [f"RBP(p={p})", f"RBP_resid(p={p},zero_when_judged=true)"], users="all")
        for n, u in enumerate(map(str, res.users)):
            assert res.values[0][n] == pytest.approx(ref[(f"rbp_p={p}", u)], abs=1e-12)
            if run.user_index.get_indexer(np.array([u]))[0] >= 0:  # -c scores a missing user on a bogus list
                assert res.values[1][n] == pytest.approx(ref[(f"rbp_resid_p={p}", u)], abs=1e-12)


def test_metric_strings_parse_and_round_trip():
    for text, canonical in [("nDCG(dcg='exp-log2')@10", "nDCG@10(dcg='exp-log2')"), ("RBP(rel=2,p=0.9)", "RBP(p=0.9,rel=2)"),
                            ("RBP(p=0.8)", "RBP"), ("RBP", "RBP"), ("Judged@10", "Judged@10"), ("Hits@5", "num_rel_ret@5"),
                            ("MRR@10", "RR@10"), ("DCG@20", "DCG@20"), ("RBP_resid(p=0.5)", "RBP_resid(p=0.5)"),
                            ("nDCG@5(dcg='exp-log2')", "nDCG@5(dcg='exp-log2')"),
                            ("ndcg_burges@10", "nDCG@10(dcg='exp-log2')"), ("rbp.8", "RBP(gain='grade')"),
                            ("rbp.95", "RBP(gain='grade',p=0.95)"), ("mrr@10", "RR@10"), ("hits@3", "num_rel_ret@3"),
                            ("dcg_burges@5", "DCG@5(dcg='exp-log2')")]:
        spec = rm.metrics.parse(text)
        assert str(spec) == canonical and rm.metrics.parse(str(spec)) == spec


@pytest.mark.parametrize("text,needle", [("RBP(p=1.5)", "persistence p must be in (0, 1), got p=1.5"),
                                         ("RBP(p=0)", "persistence p must be in (0, 1), got p=0"),
                                         ("RBP_resid(p=1)", "got p=1"),
                                         ("RBP(q=0.5)", "unknown parameter of RBP 'q'"),
                                         ("nDCG(dcg='exp-log2',judged_only=true)@10", "unknown parameter of nDCG 'judged_only'"),
                                         ("nDCG(dcg='exp')@10", "dcg must be one of")])
def test_bad_parameters_are_one_clear_line(tmp_path, capsys, text, needle):
    from recmetrics.cli import main

    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 t\n")
    assert main(["evaluate", "-m", text, str(tmp_path / "q"), str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1, err


def test_rbp_closed_form():
    """Grades [1, 0, 1] binary, p = 0.5: (1 - 0.5)(1 + 0.25) = 0.625; residual of a judged list of
    3: p^3 = 0.125; the first item unjudged: 0.125 + 0.5 * 1."""
    qrels = rm.Qrels.from_dict({"u": {"a": 1, "b": 0, "c": 1}})
    assert rm.evaluate({"u": ["a", "b", "c"]}, qrels, ["RBP(p=0.5,rel=1)"]).values[0][0] == 0.625
    res = rm.evaluate({"u": ["a", "b", "c"]}, qrels, ["RBP_resid(p=0.5)", "RBP_resid(p=0.5,zero_when_judged=true)"])
    assert res.values[:, 0].tolist() == [0.125, 0.0]
    assert rm.evaluate({"u": ["x", "b", "c"]}, qrels, ["RBP_resid(p=0.5)"]).values[0][0] == 0.625
