"""End-to-end command line: ``recmetrics evaluate`` vs the trec_eval 10.0 binary, whole process.

Workload (generated, seeded, cached in a temp folder): a TREC run of 1,000,000 lines (10,000 users
x 100 items drawn from 20,000, scores with ties, each list written best first as retrieval
systems write them; ties in file order, not in trec_eval's order, so the reader must sort those) and a 300,000-line qrels (30 judgments per user,
grades 0-3, some -1 "pooled, unjudged"). Both tools are run as a user runs them, as subprocesses,
with the same measures:

    python -m recmetrics.cli evaluate --format trec -c -m P.10 -m ndcg_cut.100 -m map -m recip_rank QRELS RUN
    trec_eval                                        -c -m P.10 -m ndcg_cut.100 -m map -m recip_rank QRELS RUN

The package's bytecode is compiled first (as pip does on install). Wall time (best of ``--repeat``) and peak RSS (``ru_maxrss`` of a fresh wrapper's only child) are
printed with their ratios, and the summary values of the two tools are compared (|diff| <= 1e-9).
The trec_eval row is skipped with a message where the binary is absent.

``--all-trec`` measures ``-c -m all_trec`` instead (every line of the two outputs is compared);
``--scale ml20m`` generates an ML-20M-sized workload: 138,000 users x 100 = 13.8M run lines and
28 judgments per user (3.9M qrels lines, 27,000 items), written in chunks of users.
Usage: python benchmarks/bench_cli.py [--repeat 3] [--users 10000] [--scale ml20m] [--all-trec] [--trec-eval PATH]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["-c", "-m", "P.10", "-m", "ndcg_cut.100", "-m", "map", "-m", "recip_rank"]
_WRAP = ("import json, resource, subprocess, sys, time\n"
         "t = time.perf_counter()\n"
         "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)\n"
         "wall = time.perf_counter() - t\n"
         "print(json.dumps({'wall': wall, 'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,"
         " 'rc': p.returncode, 'out': p.stdout, 'err': p.stderr[-500:]}))\n")


SCALES = {"1m": dict(n_users=10_000, depth=100, n_items=20_000, n_judged=30),
          "ml20m": dict(n_users=138_000, depth=100, n_items=27_000, n_judged=28)}


def workload(folder: Path, n_users=10_000, depth=100, n_items=20_000, n_judged=30, seed=0, chunk=10_000):
    """Generated files, cached; users are generated ``chunk`` at a time (the default 1M-line
    workload is one chunk, as before)."""
    tag = f"{n_users}_v2" if (n_items, n_judged) == (20_000, 30) else f"{n_users}_{n_items}_{n_judged}_v3"
    run, qrels = folder / f"run_{tag}.txt", folder / f"qrels_{tag}.txt"
    if run.exists() and qrels.exists():
        return qrels, run
    rng = np.random.default_rng(seed)
    with open(run, "w") as fr, open(qrels, "w") as fq:
        for u0 in range(0, n_users, chunk):
            m = min(chunk, n_users - u0)
            items = np.argsort(rng.random((m, n_items)), axis=1)[:, :depth]  # distinct per user
            scores = -np.sort(-np.round(rng.random((m, depth)) * 50) / 50, axis=1)  # ties; best first, as runs are written
            users = np.repeat(np.arange(u0, u0 + m), depth)
            fr.writelines(f"u{u} Q0 d{i} {r % depth + 1} {s:g} bench\n"
                          for r, (u, i, s) in enumerate(zip(users, items.ravel(), scores.ravel())))
            judged = np.concatenate([items[:, : n_judged // 2],                        # half judged from the run
                                     np.argsort(rng.random((m, n_items)), axis=1)[:, n_items - n_judged // 2:]], axis=1)
            grades = rng.choice([-1, 0, 0, 1, 2, 3], size=judged.shape, p=[.1, .4, .2, .15, .1, .05])
            for u in range(m):
                seen = set()
                for i, g in zip(judged[u], grades[u]):
                    if i not in seen:
                        seen.add(i)
                        fq.write(f"u{u0 + u} 0 d{i} {g}\n")
    return qrels, run


def measure(cmd, repeat):
    best = None
    for _ in range(repeat):
        res = json.loads(subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True,
                                        cwd=ROOT).stdout)
        if res["rc"] != 0:
            raise SystemExit(f"{cmd[0]} failed ({res['rc']}): {res['err']}")
        if best is None or res["wall"] < best["wall"]:
            best = res
    return best


def summary(out: str) -> dict:
    rows = [line.split("\t") for line in out.splitlines()]
    return {r[0].strip(): float(r[2]) for r in rows if r[1:2] == ["all"] and r[0].strip() != "runid"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--users", type=int, default=None, help="users of the 1m workload (default 10,000)")
    ap.add_argument("--scale", choices=sorted(SCALES), default="1m")
    ap.add_argument("--all-trec", action="store_true", help="-c -m all_trec instead of the four measures")
    ap.add_argument("--trec-eval", default=str(ROOT.parent / "shared" / "tools" / "trec_eval"))
    args = ap.parse_args(argv)
    folder = Path(tempfile.gettempdir()) / "recmetrics_bench_cli"
    folder.mkdir(exist_ok=True)
    size = dict(SCALES[args.scale])
    if args.users:
        size["n_users"] = args.users
    qrels, run = workload(folder, **size)
    measures = ["-c", "-m", "all_trec"] if args.all_trec else MEASURES
    n_run = sum(1 for _ in open(run))
    n_q = sum(1 for _ in open(qrels))
    print(f"workload: run {n_run:,} lines, qrels {n_q:,} lines ({folder})")
    # an installed package has its bytecode compiled (pip does it); an editable checkout under
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every run
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "recmetrics")], check=True)
    ours = measure([sys.executable, "-m", "recmetrics.cli", "evaluate", "--format", "trec", *measures,
                    str(qrels), str(run)], args.repeat)
    print(f"recmetrics evaluate : {ours['wall']:6.2f} s wall, {ours['rss_mb']:6.0f} MB peak")
    te = Path(args.trec_eval)
    if not te.exists():
        te = Path("/work/shared/tools/trec_eval")
    if not te.exists():
        print(f"trec_eval           : skipped (binary not found at {args.trec_eval})")
        return
    ref = measure([str(te), *measures, str(qrels), str(run)], args.repeat)
    print(f"trec_eval 10.0      : {ref['wall']:6.2f} s wall, {ref['rss_mb']:6.0f} MB peak")
    print(f"ratio (recmetrics / trec_eval): wall {ours['wall'] / ref['wall']:.2f}x, "
          f"memory {ours['rss_mb'] / ref['rss_mb']:.2f}x  (goals: wall <= 0.5x; memory <= 2x at 1M lines, <= 1x at ML-20M scale)")
    if args.all_trec:
        same = sum(x == y for x, y in zip(ours["out"].splitlines(), ref["out"].splitlines()))
        print(f"output: {same} of {len(ref['out'].splitlines())} lines identical"
              f"{'' if len(ours['out'].splitlines()) == len(ref['out'].splitlines()) else ' (line counts differ)'}")
    a, b = summary(ours["out"]), summary(ref["out"])
    common = sorted(set(a) & set(b))
    diff = max(abs(a[m] - b[m]) for m in common)
    print(f"values: {len(common)} summary measures compared ({', '.join(common)}), max |diff| = {diff:.2e}")
    if diff > 1e-9 or set(a) != set(b):
        raise SystemExit(f"values differ: {a} vs {b}")
    from record import save_table

    save_table("bench_cli", "Command line: recmetrics evaluate vs trec_eval 10.0 (whole process)",
               ["tool", "wall s (best)", "peak MB", "x trec_eval (wall)"],
               [["recmetrics evaluate", round(ours["wall"], 2), round(ours["rss_mb"]), round(ours["wall"] / ref["wall"], 2)],
                ["trec_eval 10.0", round(ref["wall"], 2), round(ref["rss_mb"]), 1.0]],
               [f"run {n_run:,} lines, qrels {n_q:,} lines; measures {' '.join(MEASURES)}; best of {args.repeat}",
                f"{len(common)} summary measures compared, max |difference| = {diff:.2e}"], argv=argv)


if __name__ == "__main__":
    main()
