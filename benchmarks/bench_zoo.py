"""Time the recommender zoo: fit + top-100 runs of every system on every fold.

Workload: ``rm.recommenders.ZOO`` (25 systems; the 21 of paper 000 are ``PAPER_SYSTEMS``) on movielens-small (671 users, 9,066 items,
100k ratings), 5-fold cross-validation (seed 0), AllItems top-100 lists for every test user.
The cache is bypassed (``cache=False``), so every run is fitted. Goal: the whole zoo in at most
10 minutes on a 2-core machine.

Usage: python benchmarks/bench_zoo.py [--dataset movielens-small] [--folds 5] [--n 100]
                                      [--systems Pop EASE ...] [--n-jobs 1]
Prints, per system, the fit and recommend seconds summed over the folds and the sanity table
(nDCG@100 and P@10, users averaged per fold, then folds averaged; ``*`` = in PAPER_SYSTEMS), then
the total wall time.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import recmetrics as rm
from recmetrics import study


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dataset", default="movielens-small")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--systems", nargs="*", default=None, help="spec strings (default: the whole ZOO)")
    p.add_argument("--n-jobs", type=int, default=1, help="joblib workers (one job = one system on one fold)")
    args = p.parse_args(argv)

    systems = args.systems or rm.recommenders.ZOO
    ratings = rm.datasets.load(args.dataset).ratings
    print(f"recmetrics {rm.__version__} | {platform.python_implementation()} {platform.python_version()} | "
          f"{os.cpu_count()} CPUs | dataset {args.dataset}: {ratings.user.nunique()} users, "
          f"{ratings.item.nunique()} items, {len(ratings)} ratings | {args.folds} folds | top-{args.n} | "
          f"{len(systems)} systems | n_jobs={args.n_jobs}")
    t0 = time.perf_counter()
    runs = study.run_systems(ratings, systems, k=args.folds, seed=args.seed, n=args.n, cache=False,
                             progress=False, n_jobs=args.n_jobs)
    wall = time.perf_counter() - t0
    t = runs.timings.groupby("system", sort=False)[["fit_s", "recommend_s"]].sum()
    t["total_s"] = t.fit_s + t.recommend_s
    t["per_fold_s"] = t.total_s / args.folds
    t.insert(0, "family", [rm.recommenders.FAMILIES.get(s, "") for s in t.index])
    quality = study.summarise(study.evaluate_systems(runs, metrics=("nDCG@100", "P@10")))
    t = t.join(quality)
    t.index = [f"{s}{' *' if s in rm.recommenders.PAPER_SYSTEMS else ''}" for s in t.index]
    print(t.round({"fit_s": 2, "recommend_s": 2, "total_s": 2, "per_fold_s": 2, "nDCG@100": 3, "P@10": 3}).to_string())
    from record import save_table

    save_table("bench_zoo", f"Recommender zoo: fit + top-{args.n} on {args.dataset}, {args.folds} folds",
               ["system", "family", "fit s", "recommend s", "nDCG@100", "P@10"],
               [[s, r.family, round(r.fit_s, 2), round(r.recommend_s, 2), round(r["nDCG@100"], 3), round(r["P@10"], 3)]
                for s, r in t.iterrows()],
               [f"* = in PAPER_SYSTEMS; wall time incl. splitting {wall:.1f} s, n_jobs={args.n_jobs}"], argv=argv)
    print(f"\nsum of fit+recommend: {t.total_s.sum():.1f} s; wall time incl. splitting: {wall:.1f} s "
          f"({wall / 60:.2f} min; goal <= 10 min)")


if __name__ == "__main__":
    main()
