"""``compare``: a ranx-style comparison table of systems over metrics, with paired significance tests.

``compare(scores_by_metric)`` or ``compare(runs=..., qrels=..., metrics=...)`` returns a
:class:`Comparison`: ``means`` (systems × metrics), ``pairs`` (one row per tested pair and metric:
means, difference, raw and corrected p-values, significance, Cohen's d_z) and renderers
``to_text`` / ``to_csv`` / ``to_json`` / ``to_latex``. In the text and LaTeX tables each system gets
a letter; a mean carries the letters of the systems it beats significantly (corrected p < alpha and
a higher mean), as in ranx's ``compare`` report.

Tests come from :func:`recmetrics.meta.significance.pairwise` (permutation = one sign-flip product
for all pairs; t; Wilcoxon; Sakai's bootstrap; randomised Tukey HSD). ``baseline`` restricts the
tests to baseline-vs-each-system. A per-run metric (item coverage, Gini, ...: one value per system,
``rm.metrics.table()`` column ``scope``) is shown in ``means`` but has no per-user scores to test:
it has no row in ``pairs`` and no letters. The command line (``recmetrics compare``) is :func:`add_parser`.
"""
from __future__ import annotations

import json
import string
import sys
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import InputError, unknown_name
from .significance import CORRECTIONS, PAIRWISE_TESTS, pairwise

__all__ = ["Comparison", "compare", "add_parser", "run_compare", "FORMATS"]

FORMATS = ("text", "csv", "json", "latex")


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare`; ``pairs`` columns: metric, a, b, mean_a, mean_b, diff, p, p_adj,
    significant, winner, d_z."""

    means: pd.DataFrame
    pairs: pd.DataFrame
    test: str
    correction: str | None
    alpha: float
    baseline: object = None
    per_run: tuple = ()   # metrics with one value per system (no test)

    @property
    def letters(self) -> dict:
        letters = list(string.ascii_lowercase) + [f"s{i}" for i in range(26, 1000)]
        return {s: letters[i] for i, s in enumerate(self.means.index)}

    def beats(self) -> dict:
        """``{(system, metric): [systems it significantly beats]}``."""
        out = {(s, m): [] for s in self.means.index for m in self.means.columns}
        for r in self.pairs.itertuples(index=False):
            if r.significant:
                loser = r.b if r.winner == r.a else r.a
                out[(r.winner, r.metric)].append(loser)
        return out

    def _marked(self, fmt) -> pd.DataFrame:
        import pandas as pd

        beats, letters = self.beats(), self.letters
        cells = {m: [fmt(self.means.loc[s, m], "".join(letters[x] for x in sorted(beats[(s, m)], key=list(self.means.index).index)))
                     for s in self.means.index] for m in self.means.columns}
        table = pd.DataFrame(cells, index=self.means.index)
        table.insert(0, "#", [letters[s] for s in self.means.index])
        return table

    def to_text(self, digits: int = 4) -> str:
        table = self._marked(lambda v, sup: f"{v:.{digits}f}" + (f" ^{sup}" if sup else ""))
        corr = self.correction or "no"
        what = f"vs baseline {self.baseline!r}" if self.baseline is not None else "all pairs"
        note = (f"\n^x: significantly better than system x ({self.test} test, {what}, {corr} correction, "
                f"alpha={self.alpha:g})")
        if self.per_run:
            note += f"\nper-run metrics (one value per system, not tested): {', '.join(map(str, self.per_run))}"
        return table.to_string() + note

    def to_latex(self, digits: int = 4) -> str:
        table = self._marked(lambda v, sup: f"{v:.{digits}f}" + (f"$^{{{sup}}}$" if sup else ""))
        body = [" & ".join(["\\#", "System"] + [str(c).replace("_", "\\_").replace("@", "@") for c in self.means.columns])
                + " \\\\", "\\midrule"]
        for s, row in table.iterrows():
            body.append(" & ".join([row["#"], str(s).replace("_", "\\_")] + [row[m] for m in self.means.columns]) + " \\\\")
        cols = "cl" + "r" * len(self.means.columns)
        return "\n".join([f"\\begin{{tabular}}{{{cols}}}", "\\toprule", *body, "\\bottomrule", "\\end{tabular}"])

    def to_csv(self) -> str:
        return self.pairs.to_csv(index=False)

    def to_json(self) -> str:
        return json.dumps({"test": self.test, "correction": self.correction, "alpha": self.alpha,
                           "baseline": None if self.baseline is None else str(self.baseline),
                           "means": {str(m): {str(s): float(v) for s, v in col.items()} for m, col in self.means.items()},
                           "pairs": json.loads(self.pairs.astype({"a": str, "b": str, "winner": str}).to_json(orient="records"))},
                          indent=1)

    def render(self, fmt: str = "text") -> str:
        if fmt not in FORMATS:
            raise unknown_name("format", str(fmt), FORMATS)
        return {"text": self.to_text, "csv": self.to_csv, "json": self.to_json, "latex": self.to_latex}[fmt]()


def _scores_from_runs(runs, qrels, metrics, users="relevant", **context) -> dict:
    import pandas as pd

    from ..evaluation import evaluate

    if qrels is None or metrics is None:
        raise InputError("compare(runs=...) needs qrels and metrics too")
    runs = list(runs)
    if len(runs) < 2:
        raise InputError(f"compare needs at least 2 runs, got {len(runs)}")
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        raise InputError(f"run names must be distinct to label systems, got {names}")
    evals = {r.name: evaluate(r, qrels, metrics, users=users, **context) for r in runs}
    per_user = {name: e.per_user for name, e in evals.items()}
    first = next(iter(per_user.values()))
    for name, frame in per_user.items():
        if not frame.index.equals(first.index):
            raise InputError(f"run {name!r} was evaluated on different users than {names[0]!r}")
    ref = next(iter(evals.values()))  # every run is asked the same metrics
    return {m: pd.Series({name: e.run_values[m] for name, e in evals.items()}, name=m, dtype=float)
            if m in ref.run_values else pd.DataFrame({name: frame[m] for name, frame in per_user.items()}).T
            for m in ref.order}


def compare(scores_by_metric: Mapping | None = None, *, runs=None, qrels=None, metrics=None,
            test: str = "permutation", correction: str | None = "holm", baseline=None, alpha: float = 0.05,
            n_permutations: int = 100_000, seed: int = 0, users="relevant", **context) -> Comparison:
    """Compare systems over metrics: ``scores_by_metric`` = ``{metric: systems × users DataFrame}``
    (users paired; a Series ``system -> value`` is a per-run metric, shown untested), or ``runs``
    (recmetrics ``Run`` objects, distinct names) + ``qrels`` + ``metrics`` evaluated with
    :func:`recmetrics.evaluate` (``context``: what the metrics need, e.g. ``train=``). ``correction``
    is applied per metric over the tested pairs (``None`` for none); ``baseline`` = a system name to
    test baseline-vs-each only."""
    import pandas as pd

    if test not in PAIRWISE_TESTS:
        raise unknown_name("test", str(test), PAIRWISE_TESTS)
    if correction is not None and correction not in CORRECTIONS:
        raise unknown_name("correction", str(correction), CORRECTIONS)
    if not 0 < float(alpha) < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    if scores_by_metric is None:
        scores_by_metric = _scores_from_runs(runs, qrels, metrics, users, **context)
    elif runs is not None:
        raise InputError("give either scores_by_metric or runs + qrels + metrics, not both")
    if not isinstance(scores_by_metric, Mapping) or not scores_by_metric:
        raise InputError("scores_by_metric must be a non-empty dict {metric: systems × users DataFrame}")
    frames, tables, per_run = {}, [], []
    for m, f in scores_by_metric.items():
        if isinstance(f, pd.Series):  # per-run: one value per system, nothing to test
            frames[m] = f
            per_run.append(m)
            continue
        f = f if isinstance(f, pd.DataFrame) else pd.DataFrame(np.asarray(f, dtype=np.float64))
        frames[m] = f
        t = pairwise(f, test=test, correction=correction, baseline=baseline, n_permutations=n_permutations, seed=seed)
        tables.append(t.assign(metric=m))
    systems = list(next(iter(frames.values())).index)
    for m, f in frames.items():
        if list(f.index) != systems:
            raise InputError(f"metric {m!r} has systems {list(f.index)}, expected {systems}")
    means = pd.DataFrame({m: f if m in per_run else f.mean(axis=1) for m, f in frames.items()}).loc[systems]
    columns = ["metric", "a", "b", "mean_a", "mean_b", "diff", "p", "p_adj", "d_z"]
    pairs = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=columns)
    pairs["significant"] = (pairs.p_adj < alpha) & (pairs["diff"] != 0)
    pairs["winner"] = np.where(pairs["diff"] > 0, pairs.a, np.where(pairs["diff"] < 0, pairs.b, None))
    pairs = pairs[["metric", "a", "b", "mean_a", "mean_b", "diff", "p", "p_adj", "significant", "winner", "d_z"]]
    return Comparison(means, pairs, test, correction, float(alpha), baseline, tuple(per_run))


# ------------------------------------------------------------------------------------------
# command line: recmetrics compare QRELS RUN1 RUN2 ... -m nDCG@10 P@10
# ------------------------------------------------------------------------------------------
def run_compare(args) -> int:
    """Handler of ``recmetrics compare``."""
    from ..data.io import read_qrels, read_run
    from pathlib import Path

    from ..cli import check_context
    from ..data.io import read_ratings
    from ..evaluation import parse_metrics

    check_context(parse_metrics(args.metrics), {"train"} if args.train else set())
    qrels = read_qrels(args.qrels, threshold=args.threshold)
    context = {"train": read_ratings(args.train)} if args.train else {}
    runs = [read_run(p) for p in args.runs]
    if len({r.name for r in runs}) < len(runs):  # same run tag in several files: label by file name
        runs = [read_run(p, name=Path(p).stem) for p in args.runs]
    correction = None if args.correction == "none" else args.correction
    result = compare(runs=runs, qrels=qrels, metrics=args.metrics, test=args.test, correction=correction,
                     baseline=args.baseline, alpha=args.alpha, n_permutations=args.permutations, seed=args.seed,
                     users=args.users, **context)
    out = result.render(args.format)
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return 0


def add_parser(subparsers):
    """Add the ``compare`` sub-command to an ``argparse`` sub-parsers object; returns the parser."""
    c = subparsers.add_parser("compare", help="compare runs with paired significance tests (ranx-style table)")
    c.add_argument("qrels", help="TREC qrels file or user,item,rating CSV/TSV/parquet")
    c.add_argument("runs", nargs="+", help="two or more TREC run files or user,item,score[,rank] tables")
    c.add_argument("-m", "--metrics", nargs="+", default=["nDCG@10", "P@10"], help="e.g. nDCG@10 P@10")
    c.add_argument("--test", choices=list(PAIRWISE_TESTS), default="permutation")
    c.add_argument("--correction", choices=list(CORRECTIONS) + ["none"], default="holm")
    c.add_argument("--baseline", default=None, help="run name to compare every other run against")
    c.add_argument("--format", choices=list(FORMATS), default="text")
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--permutations", type=int, default=100_000, help="permutations / bootstrap samples")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--threshold", type=float, default=None,
                   help="relevance threshold (default 1 for TREC qrels, 4 for rating tables)")
    c.add_argument("--users", choices=["relevant", "all"], default="relevant")
    c.add_argument("--train", default=None, metavar="FILE",
                   help="training ratings (user,item[,rating] table or TREC qrels) for ARP, ItemCoverage, Gini, ...")
    c.set_defaults(func=run_compare)
    return c
