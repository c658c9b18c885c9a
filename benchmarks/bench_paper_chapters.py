"""Benchmark: the library calls of the paper profile's slowest chapters, timed part by part, with a
hash of every result (so a faster version can show it computes the same bits).

Chapter 03 (paper 002): the perturbation families of Exps. 1-2 under both tie-breaks, Fig. 1, the
bootstrap τ of Exp. 1, the p-values of Exp. 2, Exp. 3's robustness and the axioms of Table 1 (and of
the accuracy metrics). Chapter 09: the metric explorer's table (every metric, cut-off and mean:
rankings, p-value curves, robustness curves). The paper profile's settings are the defaults; the
options scale them down for a quick comparison on a loaded machine (CPU time is reported beside
wall time for that reason).

    python benchmarks/bench_paper_chapters.py                              # paper settings, ml-small
    python benchmarks/bench_paper_chapters.py --users 60 --removals 2 --examples 25 --samples 10 \\
        --permutations 10000 --systems Random Pop ItemKNN UserKNN PureSVD RP3beta     # a quick comparison
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_paper_chapters.py ...  # the same on other code

Every part prints ``part, wall s, cpu s, sha256[:16]``; equal hashes on two versions mean
bit-identical results. The table goes to ``benchmarks/results/bench_paper_chapters.json``.
"""
from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _digest(obj) -> str:
    import numpy as np
    import pandas as pd

    if isinstance(obj, pd.DataFrame):
        obj = [list(obj.columns), [obj[c].to_numpy() for c in obj.columns]]
    elif isinstance(obj, dict):
        obj = [(str(k), _digest(v)) for k, v in obj.items()]
    elif isinstance(obj, np.ndarray):
        obj = (obj.dtype.str, obj.shape, obj.tobytes())
    return hashlib.sha256(pickle.dumps(obj)).hexdigest()[:16]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="movielens-small")
    p.add_argument("--users", type=int, default=None, help="chapter 03's sampled users (paper: all)")
    p.add_argument("--removals", type=int, default=50, help="Exp. 3 removals (paper: 50)")
    p.add_argument("--examples", type=int, default=100, help="generated scenes per universal axiom (paper profile: 100)")
    p.add_argument("--samples", type=int, default=50, help="chapter 09's robustness samples (paper: 50)")
    p.add_argument("--permutations", type=int, default=100_000, help="chapter 09's sign vectors (paper: 100,000)")
    p.add_argument("--systems", nargs="*", default=None, help="chapter 09's systems (default: the paper's 21)")
    p.add_argument("--only", choices=["03", "09"], default=None)
    a = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import pandas as pd

    import recmetrics as rm
    from recmetrics.meta import axioms as ax
    from recmetrics.meta import perturbations as pt

    rows = []

    def part(name, fn, digest=True):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        rows.append((name, round(time.perf_counter() - w, 1), round(time.process_time() - c, 1),
                     _digest(out) if digest else "-"))
        print(*rows[-1], sep="\t", flush=True)
        return out

    if a.only in (None, "03"):
        ds = rm.datasets.load(a.dataset)
        _, test = rm.splits.holdout(ds.ratings, test_size=0.2, seed=0)
        qrels = rm.Qrels(test, threshold=4, max_rating=float(ds.rating_scale[1]))
        levels = {"swap": 50, "redundancy": 50, "aspect": 10}
        scores = part("03 Exps. 1-2 perturbations (2 tie-breaks)", lambda: {
            tb: pt.run_perturbations(qrels, ds.aspects, levels=levels, k=100, n_users=a.users, seed=0, tie_break=tb)
            for tb in ("more", "fewer")})
        part("03 Fig. 1", lambda: pt.level_means(pt.run_perturbations(
            qrels, ds.aspects, [f"ab-nDCG@10(beta={b},profile=test)" for b in (0.25, 0.5, 0.75, 1.0)],
            levels={"swap": 50}, k=10, n_users=a.users, seed=0)))
        part("03 Exp. 1 tau (200 bootstrap)", lambda: pd.concat(
            [pt.rank_correlation(s, n_bootstrap=200, seed=0) for s in scores.values()], ignore_index=True))
        part("03 Exp. 2 p-values", lambda: pd.concat([pt.significance_vs_ideal(s) for s in scores.values()],
                                                     ignore_index=True))
        part("03 Exp. 3 robustness (both draws of systems)", lambda: pt.robustness_by_draw(
            qrels, ds.aspects, cutoffs=(10, 100), betas=[0.25, 0.5, 0.75, 1.0], n_systems=50, n_removals=a.removals,
            fractions=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], n_users=a.users, seed=0))

        def axioms():
            out = {}
            for name, metrics in (("table1", list(ax.PAPER_METRICS) + ["RBU@10(norm=aspect)"]),
                                  ("accuracy", list(ax.ACCURACY_METRICS) + ["ERR-IA@10", "P-IA@10", "nDCG-IA@10"])):
                rep = ax.evaluate(metrics, max_examples=a.examples, seed=0)
                out[name] = pd.DataFrame([(str(k), str(v), repr([sorted(e.scores.items()) for e in v.counterexamples]))
                                          for k, v in rep.results.items()])
            return out
        part("03 axioms (Table 1, accuracy)", axioms)
    if a.only in (None, "09"):
        from recmetrics import explorers
        from recmetrics.papers import valcarce2020

        sizes = {k: list(v) for k, v in valcarce2020.SETUP.robustness_sizes.items()}
        metrics = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP(unjudged=pooled)"]
        study = part("09 study (runs cached after the first time)", lambda: rm.study.Study(
            a.dataset, a.systems or rm.recommenders.PAPER_SYSTEMS, metrics, [5, 10, 20, 50, 100], split="kfold", k=5,
            seed=0, aggregate="arithmetic", progress=False), digest=False)
        part("09 explorer table", lambda: explorers.explorer_table(
            study, aggregations=["arithmetic", "geometric"], n_permutations=a.permutations, sizes=sizes,
            n_samples=a.samples, seed=0, pool="concat", dataset=a.dataset))
    from record import save_table

    save_table("bench_paper_chapters", "Paper-profile chapters 03 and 09: library calls, part by part",
               ["part", "wall s", "cpu s", "result sha256[:16]"], rows,
               notes=[f"dataset {a.dataset}; users {a.users or 'all'}, removals {a.removals}, axiom scenes "
                     f"{a.examples}, samples {a.samples}, permutations {a.permutations}, systems "
                     f"{len(a.systems) if a.systems else 21}; recmetrics from {rm.__file__}"])


if __name__ == "__main__":
    main()
