"""Paper 000 §7 under the two readings of the geometric mean's zeros (issue 25 §3).

trec_eval's reading floors every zero at 1e-5; rec_eval's (the authors' tool) enters a user with a
list but no hit as log 1 = 0 in GF1 and GMRR (``recmetrics.metrics.aggregate``). This script runs
paper 000's nine metrics at cut-off 100 on ``--systems`` of ``--dataset`` (5-fold split, seed
``--seed``) and prints, per reading: τ(F1, GF1) and τ(AP, GAP) (the paper: 0.42 and 0.92 on
MovieLens 1M), each geometric metric's mean τ with the other eight (Fig. 9), and the system each
of GF1 and GMRR ranks first.

With ``--rec-eval PATH`` (a rec_eval binary built from github.com/dvalcarce/rec_eval: ``make``),
each fold's runs and judgments are written as TREC files (ratings times 2, threshold 8: rec_eval
reads integer grades; scores from the ranks, so rec_eval keeps the runs' order) and
``rec_eval -c -M 100 -l 8`` is run on them: its gm_set_F, gm_recip_rank, gm_set_P and gm_map per
system and fold are set against this package's ``geometric(rec_eval)`` of F1@100, RR@100, P@100 and
AP@100 over the same users (rec_eval prints 4 decimals).

    python benchmarks/bench_rec_eval_reading.py                       # 10 systems, movielens-small
    python benchmarks/bench_rec_eval_reading.py --systems Random Pop PureSVD --folds 2
    python benchmarks/bench_rec_eval_reading.py --rec-eval /tmp/rec_eval_src/rec_eval
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import recmetrics as rm
from recmetrics.meta.agreement import agreement_matrix, kendall_tau
from recmetrics.metrics.aggregate import GEOMETRIC_READINGS
from recmetrics.papers import experiments

SYSTEMS = ["Random", "Pop", "RM1", "LM-WSR-UB", "NNCosNgbr-UB", "NNCosNgbr-IB", "PureSVD", "WRMF", "SLIM", "pLSA"]
METRICS = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP(unjudged=pooled)"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="movielens-small")
    ap.add_argument("--systems", nargs="+", default=SYSTEMS)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool", default="concat", choices=["concat", "mean"])
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--rec-eval", default=None, help="path of a rec_eval binary to check the readings against")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    study = rm.study.Study(args.dataset, args.systems, METRICS, [100], k=args.folds, seed=args.seed,
                           n_jobs=args.n_jobs, progress=False)
    print(f"{len(study.systems)} systems, {study.n_folds} folds, {len(study.users):,} users of {args.dataset} "
          f"(study {time.perf_counter() - t0:.0f} s)")
    short = {m: m.split("(")[0] for m in study.metrics}
    arith = experiments.system_table(study, 100, pool=args.pool).rename(columns=short)
    no_hit = (study.scores("P", 100, args.pool).to_numpy() == 0).mean(axis=1)
    print("share of units with no hit:", ", ".join(f"{s} {v:.3f}" for s, v in zip(study.systems, no_hit)))
    for reading in GEOMETRIC_READINGS:
        geo = experiments.system_table(study, 100, method="geometric", pool=args.pool,
                                       reading=reading).rename(columns=short)
        tau = agreement_matrix(geo, "tau")
        mean_tau = {m: float(np.mean([tau.loc[m, o] for o in tau.columns if o != m])) for m in tau.index}
        print(f"\n== {reading} reading ({args.pool})")
        print(f"tau(F1, GF1) = {kendall_tau(arith['F1'].to_numpy(), geo['F1'].to_numpy()):.3f} (paper 0.42); "
              f"tau(AP, GAP) = {kendall_tau(arith['AP'].to_numpy(), geo['AP'].to_numpy()):.3f} (paper 0.92); "
              f"tau(RR, GRR) = {kendall_tau(arith['RR'].to_numpy(), geo['RR'].to_numpy()):.3f}")
        print("mean tau with the other geometric metrics: "
              + ", ".join(f"G{m} {v:.3f}" for m, v in mean_tau.items()))
        rest = [m for m in tau.index if m not in ("F1", "RR")]
        among = {m: float(np.mean([tau.loc[m, o] for o in rest if o != m])) for m in rest}
        print("the seven others' mean tau among themselves (GF1, GMRR left out): "
              f"{min(among.values()):.3f} to {max(among.values()):.3f}; GF1 with those seven "
              f"{np.mean([tau.loc['F1', o] for o in rest]):.3f}, GMRR {np.mean([tau.loc['RR', o] for o in rest]):.3f}")
        print(f"first by GF1: {geo['F1'].idxmax()}; by GMRR: {geo['RR'].idxmax()}; by GP: {geo['P'].idxmax()}")
        print(pd.DataFrame({"GF1": geo["F1"], "GMRR": geo["RR"], "GP": geo["P"]}).round(5).to_string())
    if args.rec_eval:
        check_against_rec_eval(study, args.rec_eval)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


#: rec_eval measure -> (this package's metric, mean): the geometric ones under rec_eval's reading
MEASURES = {"gm_set_F": ("F1", "geometric(rec_eval)"), "gm_recip_rank": ("RR", "geometric(rec_eval)"),
            "gm_set_P": ("P", "geometric(rec_eval)"), "gm_map": ("AP", "geometric(rec_eval)"),
            "gm_bpref": ("bpref", "geometric(rec_eval)"), "gm_infAP2": ("infAP(unjudged=pooled)", "geometric(rec_eval)"),
            "gm_ndcg": ("nDCG", "geometric(rec_eval)"),
            "set_F": ("F1", "arithmetic"), "recip_rank": ("RR", "arithmetic"), "map": ("AP", "arithmetic"),
            "bpref": ("bpref", "arithmetic"), "infAP2": ("infAP(unjudged=pooled)", "arithmetic"),
            "ndcg_cut.100": ("nDCG", "arithmetic"), "ndcg": ("nDCG", "arithmetic")}


def check_against_rec_eval(study, binary: str) -> None:
    """Per fold and system: rec_eval's measures (:data:`MEASURES`) vs this package's means of the
    same users. ``gm_ndcg`` and ``ndcg`` (no cut-off; the list cut at 100 by ``-M``) take their ideal
    DCG over all of a user's judgments, nDCG@100 over the best 100: they differ for users with more
    than 100 judged test items, and the script says by how much."""
    from recmetrics.metrics.aggregate import aggregate

    measures = {k: v for k, v in MEASURES.items() if v[0] in study.metrics}
    worst = {}
    with tempfile.TemporaryDirectory() as tmp:
        for f in range(study.n_folds):
            scores = {m: study.scores(m, 100) for m, _ in measures.values()}
            users = scores["P"].xs(f, axis=1, level="fold").columns
            qrels = study.qrels[f].to_frame()
            qrels = qrels[qrels.user.astype(str).isin(set(map(str, users)))]
            qpath = Path(tmp, f"qrels{f}")
            with open(qpath, "w") as fh:
                for u, i, r in zip(qrels.user, qrels.item, qrels.rating):
                    fh.write(f"{u} 0 {i} {int(round(2 * r))}\n")
            for s in study.systems:
                run = study.runs[(s, f)].to_frame()
                run = run[run.user.astype(str).isin(set(map(str, users)))]
                rpath = Path(tmp, f"run{f}")
                with open(rpath, "w") as fh:
                    for u, i, r in zip(run.user, run.item, run["rank"]):
                        fh.write(f"{u} Q0 {i} {r} {1000 - r} x\n")
                out = subprocess.run([binary, "-c", "-M", "100", "-l", "8"] + sum((["-m", m] for m in measures), [])
                                     + [str(qpath), str(rpath)], capture_output=True, text=True, check=True).stdout
                theirs = {}
                for line in out.splitlines():
                    if line.strip():
                        name, _, value = line.split()
                        theirs[name.replace("ndcg_cut_100", "ndcg_cut.100")] = float(value)
                for g, (m, mean) in measures.items():
                    ours = float(aggregate(scores[m].loc[s].xs(f, level="fold").to_numpy(), mean, metric=m))
                    worst[g] = max(worst.get(g, 0.0), abs(ours - theirs[g]))
    print("\n== rec_eval (binary, -c -M 100 -l 8) vs this package over the same users, "
          f"{study.n_folds} folds x {len(study.systems)} systems: largest |difference| per measure")
    for g, (m, mean) in measures.items():
        print(f"{g:>14} vs {mean} {m}@100: {worst[g]:.2e}" + ("" if worst[g] <= 5e-5 else "   <-- beyond the 4 printed decimals"))
    print("(rec_eval prints 4 decimals: agreement means <= 5e-05)")


if __name__ == "__main__":
    main()
