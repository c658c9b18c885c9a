"""Beyond-accuracy metrics: what each costs on top of judging, and that the per-run metrics share one pass.

Workload (generated, seeded): ``--users`` users (default 20,000) with a top-100 list each over 20,000
items (popularity-skewed), 1,000,000 training interactions and 30 judgments per user. Timed (best of
``--repeat``), each set of metrics in a fresh ``rm.evaluate`` call (judging included):

* ``P@100`` alone (the judging baseline);
* ``ItemCoverage@100`` alone (judging + the one scatter of the lists into the catalogue);
* coverage + Gini + Entropy + ARP + APLT (the same scatter, one count vector, per-user gathers);
* the same set at four cut-offs (10, 20, 50, 100: one count vector per cut-off, still one scatter);
* EPC, EFD, PopRSP, PopREO (@100) and ILD@10 (aspects: 20 random genres).

Usage: python benchmarks/bench_beyond.py [--users 20000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import recmetrics as rm


def workload(n_users: int, n_items: int = 20_000, depth: int = 100, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_items + 1) ** 0.8
    p /= p.sum()
    users = np.repeat(np.arange(n_users), depth)
    items = np.concatenate([rng.choice(n_items, depth, replace=False, p=p) for _ in range(n_users)])
    run = rm.Run.from_frame(pd.DataFrame({"user": users, "item": items, "score": np.tile(np.arange(depth, 0, -1),
                                                                                         n_users)}))
    tu = rng.integers(0, n_users, 1_000_000)
    ti = rng.choice(n_items, 1_000_000, p=p)
    train = pd.DataFrame({"user": tu, "item": ti, "rating": 4.0}).drop_duplicates(["user", "item"])
    qu = np.repeat(np.arange(n_users), 30)
    qi = rng.integers(0, n_items, len(qu))
    test = pd.DataFrame({"user": qu, "item": qi, "rating": rng.integers(1, 6, len(qu)).astype(float)})
    test = test.drop_duplicates(["user", "item"])
    aspects = pd.Series({i: tuple(f"g{g}" for g in rng.choice(20, rng.integers(1, 4), replace=False))
                         for i in range(n_items)})
    return run, rm.Qrels(test), train, aspects


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    run, qrels, train, aspects = workload(args.users)
    print(f"{args.users:,} users x 100 ranked items, {len(train):,} training pairs, {len(qrels):,} judgments")
    exposure = ["ItemCoverage", "Gini", "Entropy", "ARP", "APLT"]
    sets = {
        "P@100": ["P@100"],
        "ItemCoverage@100": ["ItemCoverage@100"],
        "coverage+Gini+Entropy+ARP+APLT @100": [f"{m}@100" for m in exposure],
        "the same at @10,20,50,100 (20 metrics)": [f"{m}@{k}" for k in (10, 20, 50, 100) for m in exposure],
        "EPC, EFD, PopRSP, PopREO @100": ["EPC@100", "EFD@100", "PopRSP@100", "PopREO@100"],
        "ILD@10": ["ILD@10"],
    }
    rows = []
    for label, metrics in sets.items():
        t = best(lambda: rm.evaluate(run, qrels, metrics, users="all", train=train, aspects=aspects), args.repeat)
        print(f"{label:<42} {t:7.3f} s")
        rows.append([label, round(t, 3)])
    from record import save_table

    save_table("bench_beyond", "Beyond-accuracy metrics: rm.evaluate time", ["metrics", "seconds (best)"], rows,
               [f"{args.users:,} users x 100 ranked items, {len(train):,} training pairs, {len(qrels):,} judgments; "
                f"best of {args.repeat}; judging included"])


if __name__ == "__main__":
    main()
