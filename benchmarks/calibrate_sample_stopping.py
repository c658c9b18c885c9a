"""What stopping a robustness study's sampling at a target se costs in calibration, on real τ.

    python benchmarks/calibrate_sample_stopping.py [--dataset movielens-small] [--targets 0.01 0.005]
        [--min-samples 10 20] [--resamples 1000] [--no-save]
    python benchmarks/calibrate_sample_stopping.py --stored <run cache>/prepared/<key>-robustness-<hash>.npz

Runs chapter 7's robustness study at the paper's settings (paper 000's set-up: the 21 systems, 5
folds, every scenario and grid, 50 samples, cut-off 100, the arithmetic and geometric means). Each
(mean, scenario, size, metric) cell's 50 τ are then a population whose mean is the truth: sequences
of 50 are drawn from it with replacement, and the rule of :mod:`recmetrics.meta.sample_stopping`
is applied to each. Printed per target and ``min_samples``: the share of samples a size draws
(the most any of its metrics needs), and how often mean ± 2 se covers the truth under the rule
and with all 50 samples (the same sequences), overall and per scenario; the table is written to
``results/calibrate_sample_stopping.json`` (the Guide's performance page shows it).

``--stored FILE`` calibrates on another study's 50 samples instead: the own-runs book's robustness
study (chapter 3, the arithmetic mean, every cut-off of the book) as a build stored it in its run
cache (e.g. ``bench_scale.py --profile paper --keep``, whose builds keep their run cache; ``--about``
says what built it), written to ``results/calibrate_sample_stopping_own_runs.json``.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import recmetrics as rm
from recmetrics import papers
from recmetrics.meta import sample_stopping as ss
from recmetrics.meta.robustness import robustness_studies

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import save_table  # noqa: E402

N = 50


def study_samples(dataset: str) -> dict:
    """``{mean: samples table}`` of chapter 7's robustness study at paper settings, all 50 samples."""
    p = papers.notebook_parameters("paper")["07_arithmetic_vs_geometric"]
    metrics = ["infAP(unjudged=pooled)" if m == "infAP" else m for m in p["metrics"]]
    st = rm.study.Study(dataset, rm.recommenders.PAPER_SYSTEMS, metrics, [p["cutoff"]], split=p["split"],
                        k=p["folds"], seed=0, repeats=p["repeats"], progress=False)
    out = robustness_studies(st, ["arithmetic", "geometric"], None, p["robustness_sizes"], N, 0, progress=False)
    return {a: r.samples for a, r in out.items()}


def stored_samples(path: str) -> dict:
    """``{"arithmetic": samples table}`` of the robustness study an own-runs build stored at ``path``."""
    from recmetrics.report.own_prepared import read_robustness

    samples = read_robustness(path).samples
    counts = samples.groupby("scenario", sort=False)["sample"].nunique()
    sampled = counts[counts > 1]   # under tie_break='first' the two that remove the largest first draw one
    if not len(sampled) or (sampled != N).any():
        raise SystemExit(f"{path}: the study's random scenarios must hold {N} samples per size; got {sampled.to_dict()}")
    return {"arithmetic": samples[samples["scenario"].isin(sampled.index)]}


def resample(samples: dict, target: float, min_samples: int, resamples: int, seed: int = 0) -> pd.DataFrame:
    """One row per (mean, scenario, size, metric): the mean count kept, the coverage of mean ± 2 se
    under the rule and with all samples."""
    rng = np.random.default_rng(seed)
    points = ss.checkpoints(N, min_samples)
    rows = []
    for agg, s in samples.items():
        s = s[s["size"] < 1.0]
        for (sc, size, m), g in s.groupby(["scenario", "size", "metric"], sort=False):
            pop = g.sort_values("sample")["tau"].fillna(0.0).to_numpy()
            truth = pop.mean()
            x = rng.choice(pop, size=(resamples, N))
            stop = ss.stop_counts(x.T, target, points)
            n = np.where(stop == 0, N, stop)
            kept = np.arange(N)[None, :] < n[:, None]
            mean = (x * kept).sum(axis=1) / n
            se = np.sqrt((((x - mean[:, None]) ** 2) * kept).sum(axis=1) / (n - 1) / n)
            fixed_se = x.std(axis=1, ddof=1) / np.sqrt(N)
            tol = 1e-12   # a τ that never moves: the means of equal values differ from the truth by rounding only
            rows.append((agg, sc, size, m, n.mean(), np.mean(np.abs(mean - truth) <= 2 * se + tol),
                         np.mean(np.abs(x.mean(axis=1) - truth) <= 2 * fixed_se + tol)))
    return pd.DataFrame(rows, columns=["mean", "scenario", "size", "metric", "kept", "covered", "covered_all"])


def drawn_share(samples: dict, target: float, min_samples: int) -> pd.Series:
    """Per scenario, the share of its samples a study with the rule draws (the study's own 50 τ, in order)."""
    points = ss.checkpoints(N, min_samples)
    drawn = {}
    first = next(iter(samples.values()))
    for (sc, size), _ in first[first["size"] < 1.0].groupby(["scenario", "size"], sort=False):
        n = 0
        for s in samples.values():
            wide = s[(s["scenario"] == sc) & (s["size"] == size)].pivot(index="sample", columns="metric", values="tau")
            stop = ss.stop_counts(wide.to_numpy(), target, points)
            n = max(n, int(np.where(stop == 0, N, stop).max()))
        drawn.setdefault(sc, []).append(n / N)
    return pd.Series({sc: float(np.mean(v)) for sc, v in drawn.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="movielens-small")
    ap.add_argument("--targets", type=float, nargs="+", default=[0.01])
    ap.add_argument("--min-samples", type=int, nargs="+", default=[10, 20])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--stored", default=None, help="an own-runs build's stored robustness study (.npz) to calibrate on")
    ap.add_argument("--about", default="", help="what built the stored study (its workload), for the record")
    ap.add_argument("--no-save", action="store_true", help="do not write results/calibrate_sample_stopping.json")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.stored:
        samples = stored_samples(a.stored)
        source = "the own-runs book's study" + (f" ({a.about})" if a.about else "")
        what = "the arithmetic mean, every cut-off of the book"
    else:
        samples = study_samples(a.dataset)
        source = f"chapter 7's study ({a.dataset})"
        what = "arithmetic and geometric means, cut-off 100, paper settings"
    study_s = time.perf_counter() - t0
    print(f"{source}, 50 samples: {study_s:.0f} s")
    rows = []
    for target in a.targets:
        for m in a.min_samples:
            r = resample(samples, target, m, a.resamples)
            share = drawn_share(samples, target, m)
            per = r.groupby("scenario", sort=False)[["covered", "covered_all"]].mean()
            print(f"\ntarget {target}, min_samples {m}: samples drawn {share.mean():.1%} of 50 per size "
                  f"({', '.join(f'{k} {v:.0%}' for k, v in share.items())}); mean ± 2 se covers "
                  f"{r['covered'].mean():.1%} under the rule, {r['covered_all'].mean():.1%} with all 50 "
                  f"({len(r)} cells)")
            print(per.map(lambda v: f"{v:.1%}").to_string())
            lead = [m] if len(a.targets) == 1 else [target, m]   # one target: said once, in the title
            for sc, row in per.iterrows():
                rows.append([*lead, sc, f"{share[sc]:.0%}", f"{row['covered']:.1%}", f"{row['covered_all']:.1%}"])
            rows.append([*lead, "all", f"{share.mean():.0%}", f"{r['covered'].mean():.1%}",
                         f"{r['covered_all'].mean():.1%}"])
    if not a.no_save:
        one = len(a.targets) == 1
        save_table("calibrate_sample_stopping_own_runs" if a.stored else "calibrate_sample_stopping",
                   "Stopping robustness samples at " + (f"se {a.targets[0]:g}" if one else "a target se")
                   + f": calibration on {source}",
                   [*([] if one else ["target se"]), "min_samples", "scenario", "samples drawn (of 50)",
                    "mean ± 2 se covers: rule", "… with all 50"], rows,
                   notes=[f"{a.resamples} resamples of 50 from each (mean, scenario, size, metric) cell's own 50 τ "
                          f"({what}); the truth is the 50 τ's mean",
                          *([] if a.stored else [f"chapter 7's study at 50 samples took {study_s:.0f} s"])],
                   script="calibrate_sample_stopping")

if __name__ == "__main__":
    main()
