"""Benchmark: the full robustness study of paper 000 §4.2 at MovieLens-1M scale.

5 scenarios x each scenario's grid (paper 000's, ``rb.GRIDS_000``: ratings, random items, random
users and large users 100% .. 1% in 12 sizes; popular items 100% .. 80% in 1% steps, 21 sizes) x 50 samples (for popular-items / large-users: 50 seeded tie-breaks) x 21 systems x 9
metrics at cut-off 100, 5 folds, on a generated data set with ML-1M's shape (6,040 users, 3,706
items, ~1M ratings, long-tailed popularity). The 21 systems are generated runs of graded quality
(a popularity prior, noise, and a varying share of each user's test items boosted), so
recommenders are not fitted here: the benchmark times what the study times, masking judged
positions and re-scoring.

    python benchmarks/bench_robustness.py                 # time --fraction of the samples, scale
    python benchmarks/bench_robustness.py --fraction 1    # the whole study, measured whole
    python benchmarks/bench_robustness.py --grids 003     # paper 003's two scenarios and grids
    python benchmarks/bench_robustness.py --fraction 1 --scenarios popular-items large-users

With ``--fraction < 1`` each scenario is timed on that share of its samples and scaled linearly
(the tie-break samples of one size share work, so scaling them overstates their cost). The first
run generates the data and runs (~100-300 s) and caches them in the temporary directory.

Goal: the whole study in <= 10 minutes on the 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))   # time this checkout's recmetrics

from recmetrics import study as st  # noqa: E402
from recmetrics.data.run import Run  # noqa: E402
from recmetrics.meta import robustness as rb  # noqa: E402

METRICS = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"]


def ml1m_like(seed: int = 0, n_users: int = 6040, n_items: int = 3706, n_ratings: int = 1_000_209) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    item_p = 1.0 / np.arange(1, n_items + 1) ** 0.9
    item_p /= item_p.sum()
    user_n = np.maximum(20, rng.lognormal(4.6, 1.0, n_users)).astype(int)
    user_n = np.minimum(user_n, n_items // 2)
    user_n = (user_n * n_ratings / user_n.sum()).astype(int).clip(20, n_items // 2)
    users, items = [], []
    for u, k in enumerate(user_n):
        chosen = rng.choice(n_items, size=k, replace=False, p=item_p)
        users.append(np.full(k, u))
        items.append(chosen)
    users, items = np.concatenate(users), np.concatenate(items)
    ratings = np.clip(np.round(rng.normal(3.6, 1.1, len(users))), 1, 5)
    return pd.DataFrame({"user": users, "item": items, "rating": ratings})


def synthetic_runs(folds, n_systems: int = 21, n: int = 100, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    runs = {}
    n_items = int(max(f[0]["item"].max() for f in folds)) + 1
    for f, (train, test) in enumerate(folds):
        users = np.sort(test["user"].unique())
        uidx = pd.Index(users)
        pop = np.log1p(np.bincount(train["item"], minlength=n_items))
        seen = np.zeros((len(users), n_items), dtype=bool)
        tr = train[train["user"].isin(users)]
        seen[uidx.get_indexer(tr["user"]), tr["item"]] = True
        target = np.zeros((len(users), n_items), dtype=np.float32)
        target[uidx.get_indexer(test["user"]), test["item"]] = 1.0
        for s in range(n_systems):
            w_pop, boost = rng.uniform(0.2, 1.5), s / n_systems * 3.0
            score = (w_pop * pop)[None, :] + rng.standard_normal((len(users), n_items), dtype=np.float32) \
                + boost * target * (rng.random(target.shape, dtype=np.float32) < 0.5)
            score[seen] = -np.inf
            top = np.argpartition(-score, n, axis=1)[:, :n]
            order = np.take_along_axis(top, np.argsort(-np.take_along_axis(score, top, 1), axis=1), 1)
            runs[(f"S{s:02d}", f)] = Run(users, order, np.full(len(users), n), name=f"S{s:02d}")
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fraction", type=float, default=0.02, help="share of the samples to time (1 = all)")
    ap.add_argument("--grids", choices=["000", "003"], default="000", help="whose grids (and scenarios)")
    ap.add_argument("--tie-break", choices=list(rb.TIE_BREAKS), default="sample")
    ap.add_argument("--scenarios", nargs="+", choices=list(rb.SCENARIOS), default=None,
                    help="time only these scenarios (default: every scenario of the grids)")
    ap.add_argument("--systems", type=int, default=21)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--prefer", choices=["threads", "processes"], default="threads",
                    help="joblib workers for --n-jobs > 1")
    args = ap.parse_args()

    t0 = time.perf_counter()
    cache = Path(tempfile.gettempdir()) / f"recmetrics-bench-robustness-{args.systems}-{args.folds}.pkl"
    if cache.exists():  # the generated data and runs
        ratings, folds, runs = pickle.loads(cache.read_bytes())
    else:
        ratings = ml1m_like()
        folds = st.make_folds(ratings, "kfold", k=args.folds, seed=0)[0]
        runs = synthetic_runs(folds, args.systems)
        cache.write_bytes(pickle.dumps((ratings, folds, runs)))
    t1 = time.perf_counter()
    study = st.Study.from_runs(runs, folds, METRICS, [100], ratings=ratings, progress=False)
    t2 = time.perf_counter()
    grids = rb.GRIDS_000 if args.grids == "000" else rb.GRIDS_003
    grids = rb.resolve_grids(grids, args.scenarios)
    n_samples = max(1, int(round(50 * args.fraction)))
    print(f"data {len(ratings):,} ratings, {ratings.user.nunique():,} users; {args.systems} systems x {args.folds} "
          f"folds ready in {t1 - t0:.1f} s; cube (judge + score 9 metrics) {t2 - t1:.1f} s; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    total, cpu_total, n_sets, areas, ses, rows = 0.0, 0.0, 0, [], [], []
    for scenario, grid in grids.items():   # timed one by one: their costs differ, so each is scaled on its own
        reduced = sum(1 for x in grid if x < 1.0)
        det = scenario in ("popular-items", "large-users")
        reps = 1 if det and args.tie_break == "first" else n_samples
        full_reps = 1 if det and args.tie_break == "first" else 50
        t, c = time.perf_counter(), time.process_time()
        rb.robustness_study(study, [scenario], (1.0,), progress=False)   # fixed set-up (hit sources, full scores)
        setup, setup_cpu = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        res = rb.robustness_study(study, [scenario], grid, n_samples=n_samples, seed=0, n_jobs=args.n_jobs,
                                  prefer=args.prefer, progress=False, tie_break=args.tie_break)
        dt, dc = time.perf_counter() - t, time.process_time() - c
        scaled = setup + (dt - setup) * full_reps / reps
        scaled_cpu = setup_cpu + (dc - setup_cpu) * full_reps / reps
        total += scaled
        cpu_total += scaled_cpu
        n_sets += reduced * full_reps
        areas.append(res.area())
        ses.append(res.area_se())
        rows.append([scenario, reduced * reps, round(dt, 1), reduced * full_reps, round(scaled, 1),
                     "measured" if reps == full_reps else "scaled"])
        print(f"{scenario:>14}: {reduced * reps:5d} reduced test sets in {dt:6.1f} s (cpu {dc:6.1f} s) -> "
              f"{reduced * full_reps:5d} in {scaled:6.1f} s (cpu {scaled_cpu:6.1f} s; "
              f"{'measured' if reps == full_reps else 'scaled'}; set-up {setup:.1f} s); load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    print(f"full study ({len(grids)} scenarios x paper {args.grids}'s grids = {n_sets:,} reduced test sets; "
          f"{args.folds} folds x {args.systems} systems x 9 metrics; tie_break={args.tie_break}; n_jobs={args.n_jobs}): "
          f"{total:.0f} s = {total / 60:.1f} min wall, {cpu_total:.0f} s = {cpu_total / 60:.1f} min cpu of this "
          f"process (goal <= 10 min){'' if n_samples == 50 else f'; timed {n_samples} of 50 samples and scaled'}"
          f"; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("mean tau over each grid (area), and its Monte Carlo se:")
    print(pd.concat(areas).unstack("scenario").round(3))
    print(pd.concat(ses).unstack("scenario").round(4))
    from record import save_table

    save_table("bench_robustness", "Robustness study: the five scenarios on the papers' grids",
               ["scenario", "reduced sets timed", "seconds", "reduced sets (full study)", "seconds (full study)", ""],
               rows + [["all", "", "", n_sets, round(total, 1), f"{total / 60:.1f} min"]],
               [f"{len(ratings):,} ratings, {ratings.user.nunique():,} users (ML-1M-shaped, generated); "
                f"{args.systems} systems x {args.folds} folds x 9 metrics; grids of paper {args.grids}; "
                f"tie_break={args.tie_break}; n_jobs={args.n_jobs}"])


if __name__ == "__main__":
    main()
