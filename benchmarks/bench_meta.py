"""Benchmark: discriminative power for every pair × metric from one sign matrix vs ranx and scipy.

    nice python benchmarks/bench_meta.py                      # 21 systems, 9 metrics, 6,040 users, B=100,000
    nice python benchmarks/bench_meta.py --permutations 10000 # quicker

Times (printed side by side in one run):
* recmetrics ``discriminative_power`` on a dict of 9 metrics (210 pairs each, 1,890 tests), sign
  generation included, float64;
* ranx's Fisher randomisation test (``ranx.statistical_tests.fisher_randomization_test``, numba,
  the function ``ranx.compare(stat_test="fisher")`` calls per pair and metric): a few pairs at
  fewer permutations, **scaled linearly** to 1,890 tests × B permutations (said in the output);
* ``scipy.stats.permutation_test`` (paired, ``permutation_type="samples"``, vectorised): one pair at
  fewer resamples, scaled likewise;
* float32 vs float64 p-values (one metric, same signs): the largest |Δp|.

Scores are generated (no data download): per-user difficulty + per-system level + noise, half of
the metrics rounded to a 0.1 grid like P@10 (ties), the rest continuous like nDCG.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from recmetrics.meta import discriminative as dpm  # noqa: E402


def generate(n_systems: int, n_users: int, n_metrics: int, seed: int = 0) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 5, n_users)
    level = np.linspace(-0.05, 0.05, n_systems)
    out = {}
    for k in range(n_metrics):
        x = np.clip(difficulty + level[:, None] * (1 + k / n_metrics) + rng.normal(0, 0.15, (n_systems, n_users)), 0, 1)
        if k % 2:
            x = np.round(x, 1)
        out[f"metric{k}"] = pd.DataFrame(x, index=[f"sys{i:02d}" for i in range(n_systems)])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=21)
    ap.add_argument("--users", type=int, default=6040)
    ap.add_argument("--metrics", type=int, default=9)
    ap.add_argument("--permutations", type=int, default=100_000)
    ap.add_argument("--ranx-pairs", type=int, default=3)
    ap.add_argument("--ranx-permutations", type=int, default=2_000)
    ap.add_argument("--scipy-resamples", type=int, default=5_000)
    ap.add_argument("--skip-float32", action="store_true")
    args = ap.parse_args(argv)

    scores = generate(args.systems, args.users, args.metrics)
    n_pairs = args.systems * (args.systems - 1) // 2
    n_tests = n_pairs * args.metrics
    B = args.permutations
    print(f"{args.systems} systems ({n_pairs} pairs) × {args.metrics} metrics = {n_tests} tests, "
          f"{args.users} users, B = {B:,} permutations")

    t0 = time.perf_counter()
    res = dpm.discriminative_power(scores, n_permutations=B, seed=0)
    t_rm = time.perf_counter() - t0
    flop = 2.0 * B * args.users * args.systems * args.metrics
    print(f"recmetrics discriminative_power (float64, signs included): {t_rm:8.2f} s "
          f"({flop / t_rm / 1e9:.1f} GFLOP/s in the product)")
    dps = {m: round(r.dp, 3) for m, r in res.items()}
    print(f"  DP (sum of p) per metric: {dps}")

    # ranx: a few pairs of one metric at fewer permutations, scaled
    t_ranx_scaled = np.nan
    try:
        from ranx.statistical_tests import fisher_randomization_test

        x = scores["metric0"].to_numpy()
        fisher_randomization_test(x[0], x[1], 10, 0.05, 42)  # numba compile / cache load
        t0 = time.perf_counter()
        for j in range(1, args.ranx_pairs + 1):
            fisher_randomization_test(x[0], x[j], args.ranx_permutations, 0.05, 42)
        per_test = (time.perf_counter() - t0) / args.ranx_pairs * (B / args.ranx_permutations)
        t_ranx_scaled = per_test * n_tests
        print(f"ranx fisher_randomization_test: {per_test:8.2f} s per pair per metric at B = {B:,} "
              f"(timed {args.ranx_pairs} pairs at {args.ranx_permutations:,} permutations, scaled ×"
              f"{B / args.ranx_permutations:g}); all {n_tests} tests ≈ {t_ranx_scaled:,.0f} s (scaled)")
    except ImportError:
        print("ranx not installed: skipped")

    # scipy: one pair, scaled
    from scipy import stats

    x = scores["metric0"].to_numpy()
    t0 = time.perf_counter()
    stats.permutation_test((x[0], x[1]), lambda a, b, axis: np.mean(a - b, axis=axis), vectorized=True,
                           permutation_type="samples", n_resamples=args.scipy_resamples, random_state=0)
    per_pair_scipy = (time.perf_counter() - t0) * (B / args.scipy_resamples)
    t_scipy_scaled = per_pair_scipy * n_tests
    print(f"scipy.stats.permutation_test: {per_pair_scipy:8.2f} s per pair per metric at B = {B:,} "
          f"(timed 1 pair at {args.scipy_resamples:,} resamples, scaled); all tests ≈ {t_scipy_scaled:,.0f} s (scaled)")

    print(f"ratio ranx / recmetrics:  {t_ranx_scaled / t_rm:10,.0f}×")
    print(f"ratio scipy / recmetrics: {t_scipy_scaled / t_rm:10,.0f}×")
    from record import save_table

    save_table("bench_meta", "Discriminative power: recmetrics vs ranx and scipy permutation tests",
               ["tool", f"seconds, all {n_tests} tests", "x recmetrics"],
               [["recmetrics discriminative_power", round(t_rm, 2), 1.0],
                ["ranx fisher_randomization_test (scaled)", *([None, None] if np.isnan(t_ranx_scaled) else
                                                              [round(t_ranx_scaled), round(t_ranx_scaled / t_rm)])],
                ["scipy.stats.permutation_test (scaled)", round(t_scipy_scaled), round(t_scipy_scaled / t_rm)]],
               [f"{args.systems} systems ({n_pairs} pairs) x {args.metrics} metrics, {args.users:,} users, "
                f"B = {B:,} permutations; recmetrics measured whole (signs included)",
                f"ranx: {args.ranx_pairs} pairs at {args.ranx_permutations:,} permutations timed, scaled to B and "
                f"to every test; scipy: 1 pair at {args.scipy_resamples:,} resamples, scaled"], argv=argv)

    if not args.skip_float32:
        m0 = scores["metric1"]  # a tied (0.1-grid) metric: the case where precision matters
        xm = m0.to_numpy()
        iu, ju = np.triu_indices(len(xm), k=1)
        t0 = time.perf_counter()
        p32 = dpm.sign_flip_pvalues(xm, iu, ju, n_permutations=B, seed=0, dtype=np.float32)
        t32 = time.perf_counter() - t0
        p64 = res["metric1"].pvalues.p.to_numpy()
        m2 = scores["metric0"].to_numpy()
        q32 = dpm.sign_flip_pvalues(m2, iu, ju, n_permutations=B, seed=0, dtype=np.float32)
        q64 = res["metric0"].pvalues.p.to_numpy()
        print(f"float32 vs float64 (same signs, one metric, {len(iu)} pairs): max |Δp| = "
              f"{np.abs(p32 - p64).max():.2e} on the 0.1-grid metric, {np.abs(q32 - q64).max():.2e} on the "
              f"continuous metric (float32 run {t32:.2f} s) — keep float64")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
