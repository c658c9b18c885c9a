"""``compare``: a ranx-style comparison table of systems over metrics, with paired significance tests.

``compare(scores_by_metric)`` or ``compare(runs=..., qrels=..., metrics=...)`` returns a
:class:`Comparison`: ``means`` (systems × metrics), ``pairs`` (one row per tested pair and metric:
means, difference, raw and corrected p-values, significance, Cohen's d_z) and renderers
``to_text`` / ``to_csv`` / ``to_json`` / ``to_latex``. In the text and LaTeX tables each system gets
a letter; a mean carries the letters of the systems it beats significantly (corrected p < alpha and
a better mean), as in ranx's ``compare`` report. Better is the metric's registered direction
(``rm.metrics.get(name).better``): higher for accuracy, lower for errors (RMSE, MAE), fallout,
miss rate, Gini and the popularity-bias measures, none for descriptions (counts, ARP, the judged
share: no winner, no letters); ``better={metric: "lower"}`` sets it for a table's own names.

Tests come from :func:`recmetrics.meta.significance.pairwise` (permutation = one sign-flip product
for all pairs; t; Wilcoxon; Sakai's bootstrap; randomised Tukey HSD). ``baseline`` restricts the
tests to baseline-vs-each-system. A per-run metric (item coverage, Gini, ...: one value per system,
``rm.metrics.table()`` column ``scope``) is shown in ``means`` but has no per-user scores to test:
it has no row in ``pairs`` and no letters. The command line (``recmetrics compare``) is :func:`add_parser`.

Every systems × users table is checked by :func:`recmetrics.checks.score_table` (unique system
names and user labels, finite numbers). From runs, the users are those of
:func:`recmetrics.evaluate`'s ``users`` policy (default: judged users with a relevant item); a
user a run has no list for scores 0 — the text, LaTeX and JSON outputs state the policy and how
many users each run misses. A warning says when the number of permutations (or bootstrap
samples) is too small for any corrected p-value to reach ``alpha``.
"""
from __future__ import annotations

import json
import math
import string
import sys
import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .. import checks
from ..checks import score_table
from ..errors import InputError, unknown_name
from .significance import CORRECTIONS, PAIRWISE_TESTS, pairwise, permutation_pvalues

__all__ = ["Comparison", "compare", "add_parser", "run_compare", "FORMATS", "letter", "tex_escape"]

FORMATS = ("text", "csv", "json", "latex")
USER_POLICIES = {"relevant": "judged users with >= 1 relevant item", "all": "every judged user (trec_eval -c)"}
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def letter(i: int) -> str:
    """The label of the ``i``-th system (0-based): a … z, then aa, ab, … (spreadsheet columns).

    >>> [letter(i) for i in (0, 25, 26, 27, 702)]
    ['a', 'z', 'aa', 'ab', 'aaa']
    """
    out = ""
    i = int(i) + 1
    while i:
        i, r = divmod(i - 1, 26)
        out = string.ascii_lowercase[r] + out
    return out


def tex_escape(text) -> str:
    """``text`` with LaTeX's special characters escaped (``&`` ``%`` ``$`` ``#`` ``_`` ``{`` ``}``
    ``~`` ``^`` ``\\``), so system and metric names print as written.

    >>> print(tex_escape("BM25 & RM3 (50%)"))
    BM25 \\& RM3 (50\\%)
    """
    return "".join(_TEX.get(c, c) for c in str(text))


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
    metadata: dict = field(default_factory=dict)
    per_run: tuple = ()   # metrics with one value per system (no test)
    directions: dict = field(default_factory=dict)   # metric -> "higher" | "lower" | None (which way is better)

    @property
    def letters(self) -> dict:
        return {s: letter(i) for i, s in enumerate(self.means.index)}

    def notes(self) -> list[str]:
        """Lines describing the evaluated users (from runs: threshold, user policy, users evaluated,
        users each run misses, which score 0); empty for tables of scores given directly."""
        m = self.metadata
        if "users_policy" not in m:
            return []
        policy = m["users_policy"]
        missing = ", ".join(f"{name} {k}" for name, k in m["users_missing_from_run"].items())
        ignored = sum(m.get("run_users_ignored", {}).values())
        return [f"relevant = rating >= {m['threshold']:g}; users: {policy} ({USER_POLICIES.get(policy, policy)}); "
                f"{m['users_evaluated']} evaluated",
                f"users missing from each run (they score 0): {missing}"
                + (f"; {ignored} run user lists without judgments ignored" if ignored else "")]

    def beats(self) -> dict:
        """``{(system, metric): [systems it significantly beats]}`` (by each metric's direction)."""
        import pandas as pd

        out = {(s, m): [] for s in self.means.index for m in self.means.columns}
        for r in self.pairs.itertuples(index=False):
            if r.significant and not pd.isna(r.winner):   # a description has no winner
                loser = r.b if r.winner == r.a else r.a
                out[(r.winner, r.metric)].append(loser)
        return out

    def _marked(self, fmt) -> pd.DataFrame:
        import pandas as pd

        beats, letters = self.beats(), self.letters
        sep = "" if len(letters) <= 26 else ","  # two-letter labels from the 27th system: a,ab stays readable
        cells = {m: [fmt(self.means.loc[s, m], sep.join(letters[x] for x in sorted(beats[(s, m)], key=list(self.means.index).index)))
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
        lower = [m for m, d in self.directions.items() if d == "lower"]
        neutral = [m for m, d in self.directions.items() if d is None]
        if lower:
            note += f"\nlower is better: {', '.join(map(str, lower))}"
        if neutral:
            note += f"\nno better direction (descriptions, no letters): {', '.join(map(str, neutral))}"
        if self.per_run:
            note += f"\nper-run metrics (one value per system, not tested): {', '.join(map(str, self.per_run))}"
        head = "".join(f"# {line}\n" for line in self.notes())
        return head + table.to_string() + note

    def to_latex(self, digits: int = 4) -> str:
        table = self._marked(lambda v, sup: f"{v:.{digits}f}" + (f"$^{{{sup}}}$" if sup else ""))
        body = [" & ".join(["\\#", "System"] + [tex_escape(c) for c in self.means.columns]) + " \\\\", "\\midrule"]
        for s, row in table.iterrows():
            body.append(" & ".join([row["#"], tex_escape(s)] + [row[m] for m in self.means.columns]) + " \\\\")
        cols = "cl" + "r" * len(self.means.columns)
        head = [f"% {line}" for line in self.notes()]
        return "\n".join([*head, f"\\begin{{tabular}}{{{cols}}}", "\\toprule", *body, "\\bottomrule",
                          "\\end{tabular}"])

    def to_csv(self) -> str:
        return self.pairs.to_csv(index=False)

    def to_json(self) -> str:
        return json.dumps({"test": self.test, "correction": self.correction, "alpha": self.alpha,
                           "baseline": None if self.baseline is None else str(self.baseline),
                           **({"users": self.metadata} if self.metadata else {}),
                           "means": {str(m): {str(s): float(v) for s, v in col.items()} for m, col in self.means.items()},
                           "better": {str(m): d for m, d in self.directions.items()},
                           "pairs": json.loads(self.pairs.astype({"a": str, "b": str, "winner": str}).to_json(orient="records"))},
                          indent=1)

    def render(self, fmt: str = "text") -> str:
        if fmt not in FORMATS:
            raise unknown_name("format", str(fmt), FORMATS)
        return {"text": self.to_text, "csv": self.to_csv, "json": self.to_json, "latex": self.to_latex}[fmt]()


def _scores_from_runs(runs, qrels, metrics, users="relevant", **context) -> tuple[dict, dict]:
    """``({metric: systems × users}, metadata)``: the runs evaluated on the same users."""
    import pandas as pd

    from ..evaluation import as_qrels, evaluate

    if qrels is None or metrics is None:
        raise InputError("compare(runs=...) needs qrels and metrics too")
    runs = list(runs)
    if len(runs) < 2:
        raise InputError(f"compare needs at least 2 runs, got {len(runs)}")
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        raise InputError(f"run names must be distinct to label systems, got {names}")
    if not (isinstance(users, str) and users in USER_POLICIES):
        raise InputError(f"compare: users must be one of {sorted(USER_POLICIES)} (every run is scored on the "
                         f"same users, so that they are paired), got {users!r}")
    qrels = as_qrels(qrels)
    results = {r.name: evaluate(r, qrels, metrics, users=users, **context) for r in runs}
    per_user = {name: res.per_user for name, res in results.items()}
    first = next(iter(per_user.values()))
    for name, frame in per_user.items():
        if not frame.index.equals(first.index):
            raise InputError(f"run {name!r} was evaluated on different users than {names[0]!r}")
    meta = {"threshold": float(qrels.threshold), "users_policy": users, "users_evaluated": len(first),
            "users_missing_from_run": {n: int(res.metadata.get("users_missing_from_run", 0)) for n, res in results.items()},
            "run_users_ignored": {n: int(res.metadata.get("run_users_ignored", 0)) for n, res in results.items()}}
    ref = next(iter(results.values()))  # every run is asked the same metrics
    out = {}
    for m in ref.order:
        if m in ref.run_values:
            out[m] = pd.Series({name: res.run_values[m] for name, res in results.items()}, name=m, dtype=float)
            continue
        table = pd.DataFrame({name: frame[m] for name, frame in per_user.items()}).T
        if table.isna().to_numpy().any():  # a list-only metric (ARP, ...) of users some run has no list for:
            # undefined there, so not paired: shown as each run's mean over its users with a list, untested
            table = pd.Series({name: float(res.aggregate[m]) for name, res in results.items()}, name=m, dtype=float)
        out[m] = table
    return out, meta


def _resolution_warning(test, correction, n_pairs, n_users, n_permutations, alpha, alternative="two-sided"):
    """Warn when no corrected p-value can fall below ``alpha``: a Monte Carlo p-value is at least
    1/(B+1) (exact enumeration: 2/2**n two-sided), and Holm/Bonferroni multiply the smallest by the
    number of pairs tested."""
    if test not in ("permutation", "bootstrap", "tukey") or n_pairs == 0:
        return
    exact = test == "permutation" and n_users <= 20
    p_min = (2.0 if alternative == "two-sided" else 1.0) / 2.0 ** n_users if exact else 1.0 / (n_permutations + 1)
    factor = n_pairs if test != "tukey" and correction in ("holm", "bonferroni") else 1
    if p_min * factor < alpha:
        return
    source = (f"exact enumeration over {n_users} users gives p >= {p_min:.3g}" if exact else
              f"with {n_permutations:,} {'bootstrap samples' if test == 'bootstrap' else 'permutations'} a p-value "
              f"is at least 1/(B+1) = {p_min:.3g}")
    fix = "" if exact else f"; use at least {math.ceil(factor / alpha):,} (--permutations)"
    corr = f", and {correction} over {n_pairs} pairs multiplies it by {n_pairs} ({p_min * factor:.3g})" if factor > 1 else ""
    warnings.warn(f"no pair can be significant at alpha={alpha:g}: {source}{corr}{fix}", stacklevel=3)


def compare(scores_by_metric: Mapping | None = None, *, runs=None, qrels=None, metrics=None,
            test: str = "permutation", correction: str | None = "holm", baseline=None, alpha: float = 0.05,
            n_permutations: int = 100_000, seed: int = 0, users="relevant", better: Mapping | None = None,
            pvalues: Mapping | None = None, **context) -> Comparison:
    """Compare systems over metrics: ``scores_by_metric`` = ``{metric: systems × users DataFrame}``
    (users paired; a Series ``system -> value`` is a per-run metric, shown untested), or ``runs``
    (recmetrics ``Run`` objects, distinct names) + ``qrels`` + ``metrics`` evaluated with
    :func:`recmetrics.evaluate` (``context``: what the metrics need, e.g. ``train=``). ``correction``
    is applied per metric over the tested pairs (``None`` for none); ``baseline`` = a system name to
    test baseline-vs-each only. ``better``: ``{metric: "higher" | "lower" | None}`` for the names of
    ``scores_by_metric`` (default: the registered direction of a metric name, "higher" for a name
    the registry does not know); the winner of a pair is the system better in that direction.
    ``pvalues``: ``{metric: p-values of its pairs}`` of the permutation test, already computed with
    these ``n_permutations`` and ``seed`` (e.g. a stored discriminative power of the same scores:
    the same paired randomisation test, hence the same p-values), in the order the pairs are listed;
    only with ``test="permutation"``, one entry per tested metric."""
    import pandas as pd

    if test not in PAIRWISE_TESTS:
        raise unknown_name("test", str(test), PAIRWISE_TESTS)
    if correction is not None and correction not in CORRECTIONS:
        raise unknown_name("correction", str(correction), CORRECTIONS)
    if not 0 < float(alpha) < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    meta = {}
    if scores_by_metric is None:
        scores_by_metric, meta = _scores_from_runs(runs, qrels, metrics, users, **context)
    elif runs is not None:
        raise InputError("give either scores_by_metric or runs + qrels + metrics, not both")
    if not isinstance(scores_by_metric, Mapping) or not scores_by_metric:
        raise InputError("scores_by_metric must be a non-empty dict {metric: systems × users DataFrame}")
    frames, tables, per_run = {}, [], []
    for m, f in scores_by_metric.items():
        if isinstance(f, pd.Series):  # per-run: one value per system, nothing to test
            frames[m] = checks.system_values(f, f"metric {m!r}")
            per_run.append(m)
            continue
        frames[m] = score_table(f, f"metric {m!r}")[0]
    systems = list(next(iter(frames.values())).index)
    for m, f in frames.items():
        if list(f.index) != systems:
            raise InputError(f"metric {m!r} has systems {list(f.index)}, expected {systems}")
    tested = {m: f for m, f in frames.items() if m not in per_run}
    shared = None   # the permutation test of every metric from one sign matrix (the same p-values, once)
    if pvalues is not None:
        if test != "permutation":
            raise InputError(f"pvalues are the permutation test's; test={test!r} computes its own")
        if not isinstance(pvalues, Mapping) or set(pvalues) != set(tested):
            raise InputError(f"pvalues must map each tested metric {sorted(map(str, tested))} to its p-values, got "
                             f"{sorted(map(str, pvalues)) if isinstance(pvalues, Mapping) else type(pvalues).__name__}")
        shared = [pvalues[m] for m in tested]
    elif test == "permutation" and len(tested) > 1 and (baseline is None or baseline in systems):
        shared = permutation_pvalues(list(tested.values()), baseline, n_permutations=n_permutations, seed=seed)
    for i, (m, f) in enumerate(tested.items()):
        t = pairwise(f, test=test, correction=correction, baseline=baseline, n_permutations=n_permutations, seed=seed,
                     pvalues=None if shared is None else shared[i])
        tables.append(t.assign(metric=m))
    if tables:
        _resolution_warning(test, correction, len(tables[0]), next(iter(tested.values())).shape[1],
                            checks.positive_int(n_permutations, "n_permutations"), float(alpha))
    means = pd.DataFrame({m: f if m in per_run else f.mean(axis=1) for m, f in frames.items()}).loc[systems]
    columns = ["metric", "a", "b", "mean_a", "mean_b", "diff", "p", "p_adj", "d_z"]
    pairs = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=columns)
    directions = {m: _direction(m, better) for m in frames}
    pairs["significant"] = (pairs.p_adj < alpha) & (pairs["diff"] != 0)
    sign = pairs["metric"].map({m: {"higher": 1.0, "lower": -1.0, None: 0.0}[d] for m, d in directions.items()})
    oriented = pairs["diff"] * sign.astype(float) if len(pairs) else pairs["diff"]
    pairs["winner"] = np.where(oriented > 0, pairs.a, np.where(oriented < 0, pairs.b, None))
    pairs = pairs[["metric", "a", "b", "mean_a", "mean_b", "diff", "p", "p_adj", "significant", "winner", "d_z"]]
    return Comparison(means, pairs, test, correction, float(alpha), baseline, meta, tuple(per_run), directions)


def _direction(metric, better: Mapping | None) -> str | None:
    """Which way ``metric`` is better: ``better[metric]`` when given, else the registered metric's
    (``"higher"`` for a name the registry does not parse)."""
    from ..metrics.registry import BETTER, parse

    if better is not None and metric in better:
        d = better[metric]
        if d not in BETTER:
            raise InputError(f"better[{metric!r}] must be one of {BETTER}, got {d!r}")
        return d
    try:
        return parse(str(metric)).definition.better
    except (InputError, ValueError, KeyError):
        return "higher"


# ------------------------------------------------------------------------------------------
# command line: recmetrics compare QRELS RUN1 RUN2 ... -m nDCG@10 P@10
# ------------------------------------------------------------------------------------------
def run_compare(args) -> int:
    """Handler of ``recmetrics compare``: the files may follow ``-m`` (``compare -m P@10 nDCG@10
    QRELS RUN RUN``, as ``evaluate`` takes them); warnings print as one line each on stderr."""
    from pathlib import Path

    from ..arguments import check_context, given_context, print_warnings, read_context, relevance_level, split_positionals
    from ..data.io import read_qrels, read_run
    from ..evaluation import parse_metrics

    split_positionals(args, min_files=3, default_metrics=DEFAULT_METRICS,
                      usage="recmetrics compare [options] QRELS RUN RUN [RUN ...]")
    check_context(parse_metrics(args.metrics), given_context(args))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qrels = read_qrels(args.qrels, threshold=relevance_level(args.threshold, args.qrels))
        context = read_context(args)
        runs = [read_run(p) for p in args.runs]
        if len({r.name for r in runs}) < len(runs):  # same run tag in several files: label by file name
            runs = [read_run(p, name=Path(p).stem) for p in args.runs]
        correction = None if args.correction == "none" else args.correction
        result = compare(runs=runs, qrels=qrels, metrics=args.metrics, test=args.test, correction=correction,
                         baseline=args.baseline, alpha=args.alpha, n_permutations=args.permutations, seed=args.seed,
                         users=args.users, **context)
    print_warnings(caught)
    out = result.render(args.format)
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return 0


DEFAULT_METRICS = ["nDCG@10", "P@10"]


def add_parser(subparsers):
    """Add the ``compare`` sub-command to an ``argparse`` sub-parsers object; returns the parser."""
    c = subparsers.add_parser("compare", help="compare runs with paired significance tests (ranx-style table)",
                              description="Compare runs with paired significance tests. Files: QRELS (TREC qrels "
                                          "or user,item,rating table), then two or more runs; they may come "
                                          "before or after the options.")
    c.add_argument("files", nargs="*", metavar="QRELS RUN RUN",
                   help="judgments (TREC qrels or user,item,rating CSV/TSV/parquet), then two or more runs")
    c.add_argument("-m", "--metrics", nargs="+", action="extend", default=None, metavar="MEASURE",
                   help=f"repeatable; e.g. -m nDCG@10 P@10 (default: {' '.join(DEFAULT_METRICS)})")
    c.add_argument("--test", choices=list(PAIRWISE_TESTS), default="permutation")
    c.add_argument("--correction", choices=list(CORRECTIONS) + ["none"], default="holm")
    c.add_argument("--baseline", default=None, help="run name to compare every other run against")
    c.add_argument("--format", choices=list(FORMATS), default="text")
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--permutations", type=int, default=100_000, help="permutations / bootstrap samples")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("-l", "--threshold", default=None, metavar="N",
                   help="relevance threshold (trec_eval's -l: an integer level for TREC qrels, -l 1.5 is 1; a real "
                        "threshold for rating tables; default 1 for TREC qrels, 4 for rating tables)")
    c.add_argument("--users", choices=list(USER_POLICIES), default="relevant",
                   help="users compared (every run on the same users; a user a run misses scores 0): "
                        + "; ".join(f"{k}: {v}" for k, v in USER_POLICIES.items()))
    from ..arguments import add_context_options

    add_context_options(c)
    c.set_defaults(func=run_compare)
    return c
