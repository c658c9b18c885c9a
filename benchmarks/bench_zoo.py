"""Time the recommender zoo: fit + top-100 runs of every system on every fold.

Workload: ``rm.recommenders.ZOO`` (25 systems; the 21 of paper 000 are ``PAPER_SYSTEMS``) on movielens-small (671 users, 9,066 items,
100k ratings), 5-fold cross-validation (seed 0), AllItems top-100 lists for every test user.
The cache is bypassed (``cache=False``), so every run is fitted. Goal: the whole zoo in at most
10 minutes on a 2-core machine.

Usage: python benchmarks/bench_zoo.py [--dataset movielens-small] [--folds 5] [--n 100]
                                      [--systems Pop EASE ...] [--n-jobs 1] [--against REV]
Prints, per system, the fit and recommend seconds summed over the folds and the sanity table
(nDCG@100 and P@10, users averaged per fold, then folds averaged; ``*`` = in PAPER_SYSTEMS), then
the total wall time. With ``--against REV`` the whole measurement runs twice, each in a process of
its own: first with the code of commit ``REV`` (a git worktree of it), then with this checkout's;
the table gives both commits' seconds side by side and whether each system's runs (every user's
list on every fold, scores included) are the same bytes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    p.add_argument("--against", metavar="REV", help="first measure the zoo with the code of this commit (a git "
                   "worktree of it), then with this checkout's, each in a process of its own")
    p.add_argument("--measure-to", metavar="FILE", help=argparse.SUPPRESS)   # a side of --against
    args = p.parse_args(argv)
    if args.against:
        return against(args, argv or sys.argv[1:])

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
    if args.measure_to:
        digest = {s: hashlib.sha256(b"".join(_run_bytes(runs[(s, f)]) for f in range(runs.n_folds))).hexdigest()
                  for s in t.index}
        Path(args.measure_to).write_text(json.dumps({"times": t[["fit_s", "recommend_s"]].to_dict("index"),
                                                     "ndcg": t["nDCG@100"].to_dict(), "digest": digest}))
        return
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


def _run_bytes(run) -> bytes:
    """Everything a run holds that a metric reads: its users, lists, lengths and scores."""
    parts = [run.users.astype(str), run.items.astype(str), run.lengths]
    return b"".join(a.tobytes() for a in parts + ([run.scores] if run.scores is not None else []))


def against(args, argv: list[str]) -> None:
    """The zoo measured with commit ``args.against``'s code, then this checkout's, each a whole process."""
    from record import compiled, pythonpath, save_table, worktree

    here = Path(__file__).resolve()
    rest = [a for i, a in enumerate(argv) if a != "--against" and (i == 0 or argv[i - 1] != "--against")
            and not a.startswith("--against=")]
    sides = {}
    with tempfile.TemporaryDirectory(prefix="bench-zoo-") as tmp:
        tmp = Path(tmp)
        code = tmp / "old-code"
        with worktree(args.against, code) as old:
            for name, root in ((old, code), ("this commit", compiled(here.parent.parent))):
                out = tmp / f"{len(sides)}.json"
                t0 = time.perf_counter()
                subprocess.run([sys.executable, str(here), *rest, "--measure-to", str(out)], check=True,
                               env=dict(os.environ, PYTHONPATH=pythonpath(root)), cwd=tmp)
                sides[name] = {**json.loads(out.read_text()), "process": time.perf_counter() - t0}
    a, b = sides[old], sides["this commit"]
    rows = [[s + (" *" if s in rm.recommenders.PAPER_SYSTEMS else ""), round(a["times"][s]["fit_s"], 2),
             round(b["times"][s]["fit_s"], 2), round(a["times"][s]["recommend_s"], 2),
             round(b["times"][s]["recommend_s"], 2), round(b["ndcg"][s], 3),
             "yes" if a["digest"].get(s) == b["digest"][s] else "NO"] for s in b["times"]]
    for r in rows:
        print(" | ".join(map(str, r)))
    fit = [sum(side["times"][s]["fit_s"] for s in b["times"]) for side in (a, b)]
    both = [sum(side["times"][s]["fit_s"] + side["times"][s]["recommend_s"] for s in b["times"]) for side in (a, b)]
    notes = [f"* = in PAPER_SYSTEMS; the two processes run one after the other in this command; n_jobs={args.n_jobs}",
             f"fits summed: {fit[0]:.1f} s ({old}) -> {fit[1]:.1f} s (this commit), {fit[0] / fit[1]:.2f}x; fit + "
             f"recommend: {both[0]:.1f} s -> {both[1]:.1f} s, {both[0] / both[1]:.2f}x; whole processes "
             f"{a['process']:.1f} s -> {b['process']:.1f} s",
             f"runs identical (every user's list and scores, every fold): "
             f"{sum(r[-1] == 'yes' for r in rows)} of {len(rows)} systems"]
    print("\n".join(notes))
    save_table("bench_zoo", f"Recommender zoo: fit + top-{args.n} on {args.dataset}, {args.folds} folds, commit {old} "
               "(old) beside this one", ["system", "fit s, old", "fit s", "top-n s, old", "top-n s", "nDCG@100",
                                         "same runs"], rows, notes, argv=argv)


if __name__ == "__main__":
    main()
