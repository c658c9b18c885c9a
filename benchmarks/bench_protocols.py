"""Time 1R with |T_u| = 101 (|N_u| = 100 sampled non-relevant items + the relevant one, TI-1R-NN(n=100),
paper 004 §4.3) over ALL relevant test ratings of movielens-small (holdout 20%, threshold 4), per system.

Each system is fitted once (fit time reported apart); the timed part is
``rm.protocols.evaluate(system, train, test, "TI-1R-NN(n=100)", ["P@10", "nDCG@10"])``: target-set
building, batched scoring (one score_targets call per batch of users), ranking and rm.evaluate.
Usage: python benchmarks/bench_protocols.py [--systems Random Pop ...] [--all]  (--all: the whole zoo)

Recorded 2026-11-23 (2 shared cores, `nice`): 10,015 target sets of 101 items per system; evaluation
1.2-2.7 s per system (RM2 slowest, 2.7 s; most 1.3-1.6 s); `--all` (24 systems) 35.2 s of evaluation,
plus fitting (SLIM 4.8 s, NNCosNgbr-IB 4.1 s, others < 3 s).
"""
from __future__ import annotations

import argparse
import time

import recmetrics as rm

DEFAULT = ["Random", "Pop", "UserKNN", "ItemKNN", "PureSVD", "pLSA", "EASE", "RP3beta"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", nargs="*", default=DEFAULT)
    ap.add_argument("--all", action="store_true", help="every registered recommender")
    ap.add_argument("--design", default="TI-1R-NN(n=100)")
    args = ap.parse_args()
    systems = rm.recommenders.names() if args.all else args.systems
    data = rm.datasets.load("movielens-small")
    train, test = rm.splits.holdout(data.ratings, 0.2, seed=0)
    print(f"{data!r}; design {args.design}")
    total = 0.0
    rows = []
    print(f"{'system':<14}{'fit s':>8}{'eval s':>8}{'sets':>8}{'P@10':>8}{'nDCG@10':>9}")
    for name in systems:
        t0 = time.perf_counter()
        try:
            s = rm.recommenders.create(name).fit(train)
        except Exception as exc:  # report and go on: one broken system must not hide the others
            print(f"{name:<14} failed to fit: {exc}")
            continue
        t1 = time.perf_counter()
        r = rm.protocols.evaluate(s, train, test, args.design, ["P@10", "nDCG@10"], seed=0)
        t2 = time.perf_counter()
        total += t2 - t1
        print(f"{name:<14}{t1 - t0:8.2f}{t2 - t1:8.2f}{r.metadata['n_sets']:8d}"
              f"{r.aggregate['P@10']:8.4f}{r.aggregate['nDCG@10']:9.4f}", flush=True)
        rows.append([name, round(t1 - t0, 2), round(t2 - t1, 2), int(r.metadata["n_sets"]),
                     round(float(r.aggregate["P@10"]), 4), round(float(r.aggregate["nDCG@10"]), 4)])
    print(f"total evaluation time {total:.1f} s over {len(systems)} systems")
    from record import save_table

    save_table("bench_protocols", f"Evaluation designs: {args.design} on movielens-small",
               ["system", "fit s", "evaluate s", "target sets", "P@10", "nDCG@10"], rows,
               [f"holdout 20 %, seed 0; total evaluation time {total:.1f} s over {len(rows)} systems"])


if __name__ == "__main__":
    main()
