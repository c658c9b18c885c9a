"""Per-user parity with trec_eval (through pytrec_eval) to 1e-9 on runs with the edge cases."""
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
                "recip_rank", "bpref", "infAP", "map", "ndcg"}
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=int(round(2 * threshold)))
    return ev.evaluate(run)


PAIRS = [(f"P@{k}", f"P_{k}") for k in CUTOFFS] + [(f"Recall@{k}", f"recall_{k}") for k in CUTOFFS] \
    + [(f"AP@{k}", f"map_cut_{k}") for k in CUTOFFS] + [(f"nDCG@{k}", f"ndcg_cut_{k}") for k in CUTOFFS] \
    + [("RR", "recip_rank"), ("bpref", "bpref"), ("infAP", "infAP"), ("AP", "map"), ("nDCG", "ndcg")]


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
            assert (row == 0).all(), user
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
