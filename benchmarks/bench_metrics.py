"""Time rm.evaluate against pytrec_eval, ranx and ir_measures on an ML-1M-scale workload.

Workload (generated, seeded): 6,040 users, 3,700 items, ~200k test ratings 1-5 (20% of a
1M-rating matrix with a popularity skew), 21 runs of depth 100 with score ties.
Metrics: P@100, Recall@100, AP@100, nDCG@100, RR, bpref, infAP (threshold 4).

``--cutoffs 5,10,20,100`` times P, Recall, AP and nDCG at every cut-off given (plus RR, bpref and
infAP), each tool computing every cut-off in one pass (recmetrics shares each kernel's per-hit terms
across cut-offs); its table is saved as ``bench_metrics_cutoffs``.

Each tool gets its native inputs built once outside the timed region (recmetrics: Run/Qrels
objects; pytrec_eval: dicts + RelevanceEvaluator; ranx: Qrels/Run objects, warmed up once so
numba compilation is not counted; ir_measures: dicts). Values are compared per user with
pytrec_eval (max |diff| printed). Usage: python benchmarks/bench_metrics.py [--runs 21] [--quick] [--cutoffs 100]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import recmetrics as rm

TRECK = {"P": "P", "Recall": "recall", "AP": "map_cut", "nDCG": "ndcg_cut"}
RANXK = {"P": "precision", "Recall": "recall", "AP": "map", "nDCG": "ndcg"}


def workload(n_users=6040, n_items=3700, n_ratings=1_000_000, n_runs=21, depth=100, seed=0):
    rng = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, n_items + 1) ** 0.9  # long-tailed item popularity
    pop = rng.permutation(pop / pop.sum())
    activity = rng.lognormal(0, 1, n_users)
    activity /= activity.sum()
    u = rng.choice(n_users, n_ratings, p=activity)
    i = rng.choice(n_items, n_ratings, p=pop)
    ratings = pd.DataFrame({"user": u, "item": i}).drop_duplicates()
    ratings["rating"] = rng.integers(1, 6, len(ratings)).astype(float)
    test = ratings.sample(frac=0.2, random_state=seed)
    runs = []
    users = np.unique(test.user)
    for r in range(n_runs):
        noise = rng.random((len(users), n_items)) + (r / n_runs) * np.log(pop)[None, :] * 0.1
        scores = np.round(noise, 2)  # ties
        runs.append(rm.Run.from_scores(scores, users, np.arange(n_items), n=depth, name=f"sys{r}"))
    return test, runs


def timed(fn, repeat=1):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--quick", action="store_true", help="1,000 users (smoke run)")
    ap.add_argument("--cutoffs", default="100", help="cut-offs of P, Recall, AP and nDCG, e.g. 5,10,20,100")
    args = ap.parse_args()
    cutoffs = [int(k) for k in args.cutoffs.split(",")]
    cut = [(m, k) for m in ("P", "Recall", "AP", "nDCG") for k in cutoffs]
    metrics = [f"{m}@{k}" for m, k in cut] + ["RR", "bpref", "infAP"]
    trec = {**{f"{m}@{k}": f"{TRECK[m]}_{k}" for m, k in cut}, "RR": "recip_rank", "bpref": "bpref", "infAP": "infAP"}
    ranx_names = [f"{RANXK[m]}@{k}" + ("" if m == "nDCG" else "-l4") for m, k in cut] + ["mrr-l4", "bpref-l4"]
    one = ",".join(map(str, cutoffs))
    n_users = 1000 if args.quick else 6040
    t0 = time.perf_counter()
    test, runs = workload(n_users=n_users, n_ratings=int(1_000_000 * n_users / 6040), n_runs=args.runs)
    print(f"workload: {test.user.nunique()} users, {len(test)} test ratings, {len(runs)} runs x depth 100 "
          f"(built in {time.perf_counter() - t0:.1f}s)")
    qrels = rm.Qrels(test, threshold=4)
    results = {}

    # recmetrics (one pass, like the peers; its per-qrels memos are filled inside the timed region)
    t, ours = timed(lambda: [rm.evaluate(r, qrels, metrics, users="all").per_user for r in runs])
    results["recmetrics"] = t

    # pytrec_eval
    import pytrec_eval

    qd = {}
    for uu, ii, rr in test.itertuples(index=False):
        qd.setdefault(str(uu), {})[str(ii)] = int(rr)
    run_dicts = []
    for r in runs:
        f = r.to_frame()
        d = {}
        for uu, ii, ss in zip(f.user.tolist(), f.item.tolist(), f.score.tolist()):
            d.setdefault(str(uu), {})[str(ii)] = ss
        run_dicts.append(d)
    measures = {f"P.{one}", f"recall.{one}", f"map_cut.{one}", f"ndcg_cut.{one}", "recip_rank", "bpref", "infAP"}
    t_build, ev = timed(lambda: pytrec_eval.RelevanceEvaluator(qd, measures, relevance_level=4))
    t, theirs = timed(lambda: [ev.evaluate(d) for d in run_dicts])
    results["pytrec_eval"] = t
    worst = 0.0
    for per_user, res in zip(ours, theirs):
        for m in metrics:
            a = per_user[m].to_numpy()
            b = np.array([res[str(uu)][trec[m]] for uu in per_user.index])
            worst = max(worst, float(np.abs(a - b).max()))
    print(f"parity with pytrec_eval: max |diff| over {len(runs)} runs x {len(ours[0])} users x "
          f"{len(metrics)} metrics = {worst:.2e}")

    # ranx (numba; no infAP)
    try:
        import ranx

        rq = ranx.Qrels(qd)
        rruns = [ranx.Run(d) for d in run_dicts]
        ranx.evaluate(rq, rruns[0], ranx_names)  # warm-up: numba compilation
        t, _ = timed(lambda: [ranx.evaluate(rq, r, ranx_names, save_results_in_run=False) for r in rruns])
        results[f"ranx ({len(ranx_names)} metrics, no infAP)"] = t
    except Exception as exc:  # pragma: no cover - peer library issue
        print(f"ranx skipped: {exc}")

    # ir_measures
    try:
        import ir_measures
        from ir_measures import AP, P, R, RR, Bpref, infAP, nDCG

        ms = [*(M @ k for M in (P(rel=4), R(rel=4), AP(rel=4), nDCG) for k in cutoffs), RR(rel=4), Bpref(rel=4),
              infAP(rel=4)]
        t, _ = timed(lambda: [list(ir_measures.iter_calc(ms, qd, d)) for d in run_dicts])
        results["ir_measures"] = t
    except Exception as exc:  # pragma: no cover
        print(f"ir_measures skipped: {exc}")

    print(f"\n{'tool':<28}{'seconds':>10}{'x recmetrics':>14}")
    base = results["recmetrics"]
    for name, t in results.items():
        print(f"{name:<28}{t:>10.3f}{t / base:>14.1f}")
    print(f"(pytrec_eval RelevanceEvaluator construction, not counted above: {t_build:.3f}s)")
    from record import save_table

    save_table("bench_metrics" if cutoffs == [100] else "bench_metrics_cutoffs",
               "Metrics: recmetrics vs pytrec_eval, ranx, ir_measures" + ("" if cutoffs == [100] else f" at cut-offs {one}"),
               ["tool", "seconds", "x recmetrics"], [[n, round(t, 3), round(t / base, 1)] for n, t in results.items()],
               [f"{test.user.nunique():,} users, {len(test):,} test ratings, {len(runs)} runs of depth 100 with ties; "
                f"{', '.join(metrics)}; one pass over the runs per tool",
                f"max per-user |difference| to pytrec_eval: {worst:.2e}",
                f"pytrec_eval's RelevanceEvaluator construction, not counted: {t_build:.3f} s"], script="bench_metrics")


if __name__ == "__main__":
    main()
