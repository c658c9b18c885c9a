"""Sentences and tables of the own-runs book (:mod:`recmetrics.report.own_runs`), in words.

Pure functions over the chapters' results, so that what a chapter says is computed and tested:

* :func:`best_by_metric`: per metric, which system is best and whether significantly, by name
  (systems with identical means are tied first, never one of them "best on all metrics");
* :func:`headline`: the front page's answer: the best system on one metric, by how much, and
  whether significantly;
* :func:`range_sentence`: "from 3 (P@20) to 6 (nDCG@20) of 6", or one clause when every value
  is the same (never "from 6 (P) to 6 (P)");
* :func:`users_sentence`: distinct users, not user x fold units;
* :func:`fixed`: one number format per table (no ``0.1968`` beside ``2.3651e-01``).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

__all__ = ["marked_means", "pvalue_curves", "best_by_metric", "headline", "mean_table", "pairs_table", "candidates_table", "CANDIDATE_COLUMNS", "range_sentence", "users_sentence", "fixed", "names_list", "CORRECTIONS"]

#: the display name of each multiple-comparison correction
CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", None: "no", "none": "no"}


def names_list(names: Iterable[Any]) -> str:
    """``"A"``, ``"A and B"``, ``"A, B and C"``.

    >>> names_list(["Pop", "EASE", "SLIM"])
    'Pop, EASE and SLIM'
    """
    names = [str(n) for n in names]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def best_by_metric(comparison, digits: int = 4) -> str:
    """One Markdown bullet per metric of a :class:`~recmetrics.meta.compare.Comparison`: the best
    system by mean (the lowest for a metric where lower is better), and the systems it is, and is
    not, significantly better than (corrected p below alpha), by name.

    Example bullet: ``**nDCG@20**: best **EASE** (0.3123), significantly better than Pop and
    Random; not significantly better than PureSVD (0.3050).``
    """
    beats = comparison.beats()
    lines = []
    for metric in comparison.means.columns:
        if metric in getattr(comparison, "per_run", ()):
            continue
        col = comparison.means[metric].astype(float)
        if col.isna().all():
            lines.append(f"* **{metric}**: no system has a value.")
            continue
        lower = comparison.directions.get(metric) == "lower"
        best = col.idxmin() if lower else col.idxmax()
        top = col[col == col[best]].index.tolist()
        others = [s for s in col.index if s not in top]       # the systems tied first are not compared again
        won = [s for s in others if s in beats[(best, metric)]]
        level = [s for s in others if s not in won]
        if len(top) > 1:
            text = f"* **{metric}**: {names_list(f'**{s}**' for s in top)} tied first ({col[best]:.{digits}f}"
        else:
            text = f"* **{metric}**: best **{best}** ({col[best]:.{digits}f}"
        text += ", lower is better)" if lower else ")"
        if not others:
            lines.append(text + ".")
            continue
        if not level:
            text += f", significantly better than every other system ({names_list(others)})."
        elif not won:
            text += f", but not significantly better than any other system ({names_list(others)})."
        else:
            close = ", ".join(f"{s} ({col[s]:.{digits}f})" for s in level)
            text += f", significantly better than {names_list(won)}; not significantly better than {close}."
        lines.append(text)
    tops = {tuple(_first(comparison, m)) for m in comparison.means.columns
            if m not in getattr(comparison, "per_run", ()) and not comparison.means[m].isna().all()}
    if len(tops) == 1 and len(lines) > 1:
        top = tops.pop()
        if len(top) > 1:
            lines.insert(0, f"{names_list(f'**{s}**' for s in top)} are tied first on all {len(lines)} metrics "
                            "(identical means).\n")
        else:
            everywhere = all("every other system" in b and "not significantly" not in b for b in lines)
            lines.insert(0, f"**{top[0]}** is best on all {len(lines)} metrics"
                            + (", significantly better than every other system on each." if everywhere else ".") + "\n")
    corr = CORRECTIONS.get(comparison.correction, comparison.correction)
    lines.append("")
    lines.append(f"Significant: {comparison.test} test, {corr} correction, corrected p < {comparison.alpha:g}.")
    return "\n".join(lines)


def _first(comparison, metric) -> list:
    """The systems with the best mean on ``metric`` (several when tied), in the table's order."""
    col = comparison.means[metric].astype(float)
    best = col.min() if comparison.directions.get(metric) == "lower" else col.max()
    return [s for s in col.index if col[s] == best]


def headline(comparison, metric: str, cutoff: int, why: str = "", digits: int = 4) -> str:
    """The book's answer in one paragraph: which system is best on ``metric`` at ``cutoff`` (from a
    :class:`~recmetrics.meta.compare.Comparison` of that cut-off), by how much over the runner-up,
    and whether the difference is significant (its corrected p-value); systems with identical means
    are *tied first*. ``why`` says why this metric (e.g. "the metric chapter 5 recommends").

    >>> import pandas as pd, numpy as np
    >>> from recmetrics.meta.compare import compare
    >>> base = np.linspace(0, 1, 40)
    >>> cmp = compare({"nDCG": pd.DataFrame([base + 0.2, base, base], index=["A", "B", "C"])},
    ...               n_permutations=200, seed=0)
    >>> print(headline(cmp, "nDCG", 10))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    **A is the best system** on nDCG@10: 0.7000, 0.2000 (40.0 %) above the runner-up B (0.5000), a significant
    difference (permutation test, Holm correction, corrected p = ... < 0.05).
    >>> same = compare({"nDCG": pd.DataFrame([base, base, base / 2], index=["A", "B", "C"])}, n_permutations=200)
    >>> print(headline(same, "nDCG", 10))  # doctest: +NORMALIZE_WHITESPACE
    **A and B are tied first** on nDCG@10: both score 0.5000 (identical means). Next comes C (0.2500).
    """
    col = comparison.means[metric].astype(float)
    lower = comparison.directions.get(metric) == "lower"
    ordered = col.sort_values(ascending=lower, kind="stable")
    top = _first(comparison, metric)
    where = f"on {metric}@{cutoff}" + (f", {why}" if why else "")
    rest = [s for s in ordered.index if s not in top]
    if len(top) > 1:
        text = (f"**{names_list(top)} are tied first** {where}: {'both' if len(top) == 2 else 'all'} score "
                f"{col[top[0]]:.{digits}f} (identical means).")
        return text + (f" Next comes {rest[0]} ({col[rest[0]]:.{digits}f})." if rest else "")
    best, runner = top[0], rest[0]
    diff = abs(col[best] - col[runner])
    share = f" ({diff / abs(col[runner]):.1%})".replace("%", " %") if col[runner] else ""
    pair = comparison.pairs[(comparison.pairs["metric"] == metric)
                            & (comparison.pairs[["a", "b"]].isin([best, runner]).all(axis=1))]
    corr = CORRECTIONS.get(comparison.correction, comparison.correction)
    how = ""
    if len(pair):
        p_adj, sig = float(pair["p_adj"].iloc[0]), bool(pair["significant"].iloc[0])
        how = (f", {'a significant' if sig else 'not a significant'} difference ({comparison.test} test, {corr} "
               f"correction, corrected p = {p_adj:.2g} {'<' if sig else '≥'} {comparison.alpha:g})")
    return (f"**{best} is the best system** {where}: {col[best]:.{digits}f}, {diff:.{digits}f}{share} "
            f"{'below' if lower else 'above'} the runner-up {runner} ({col[runner]:.{digits}f}){how}.")


def range_sentence(values: Mapping[str, float] | pd.Series, of: int | None = None, fmt: str = "{:,}") -> str:
    """How a count (or value) varies over candidates: ``"from 3 (P@20) to 6 (nDCG@20, RR@20) of 6"``,
    or ``"6 of 6 for every metric"`` when it does not vary.

    >>> range_sentence({"P": 6, "AP": 6}, of=6)
    '6 of 6 for every metric'
    >>> range_sentence({"P": 3, "AP": 6, "RR": 6}, of=6)
    'from 3 (P) to 6 (AP, RR) of 6'
    """
    s = pd.Series(values)
    if s.empty:
        return "nothing to compare"
    lo, hi = s.min(), s.max()
    tail = f" of {of:,}" if of is not None else ""
    if lo == hi:
        return f"{fmt.format(lo)}{tail} for every metric"
    at = lambda v: ", ".join(str(k) for k in s.index[s == v])  # noqa: E731
    return f"from {fmt.format(lo)} ({at(lo)}) to {fmt.format(hi)} ({at(hi)}){tail}"


def samples_sentence(summary: pd.DataFrame, settings: Mapping[str, Any]) -> str:
    """How many samples each reduced size of a robustness study drew: the rule (``settings``:
    ``n_samples``, and ``target_se``/``min_samples`` when the sampling stops early,
    :func:`~recmetrics.meta.sample_stopping.rule_note`), then per scenario the fewest and most a
    size drew (the most any metric needed) and the samples in all, from a
    :meth:`~recmetrics.meta.robustness.Robustness.summary`.

    >>> summary = pd.DataFrame({"scenario": ["ratings"] * 4 + ["large-users"] * 2,
    ...                         "size": [1.0, 0.5, 0.5, 0.1, 1.0, 0.5], "metric": ["P", "P", "AP", "P", "P", "P"],
    ...                         "samples": [1, 20, 40, 50, 1, 1]})
    >>> samples_sentence(summary, {"n_samples": 50, "target_se": 0.01, "min_samples": 20})
    'Samples: up to 50 samples per size, each curve point stopping once its se is at most 0.01 (checked every 20 samples). Drawn per reduced size: ratings 40 to 50, large-users 1; 91 in all.'
    """
    from ..meta.sample_stopping import rule_note

    reduced = summary[summary["size"] < 1.0]
    per_size = reduced.groupby(["scenario", "size"], sort=False)["samples"].max()
    spans = []
    for scenario, drawn in per_size.groupby(level="scenario", sort=False):
        lo, hi = int(drawn.min()), int(drawn.max())
        spans.append(f"{scenario} {lo}" + (f" to {hi}" if hi > lo else ""))
    return (f"Samples: {rule_note(settings)}. Drawn per reduced size: {', '.join(spans)}; "
            f"{int(per_size.sum()):,} in all.")


def users_sentence(study) -> str:
    """How many distinct users a :class:`~recmetrics.study.Study` evaluates (a user in several
    folds' test sets counts once) and the relevance threshold; with several folds, how many
    user x fold units the per-user tables pool (``pool="concat"``)."""
    per_fold = [set(map(str, q.relevant_users)) for q in study.qrels]
    distinct = len(set().union(*per_fold)) if per_fold else 0
    units = sum(len(u) for u in per_fold)
    text = f"{distinct:,} users with a relevant judgment (rating ≥ {study.threshold:g})"
    if study.n_folds > 1:
        text += (f", scored once per fold whose test set holds them: {units:,} user × fold units over the "
                 f"{study.n_folds} folds")
    return text


def mean_table(study, pool: str = "concat") -> pd.DataFrame:
    """The mean of every metric (columns) for every cut-off and system (rows, grouped by cut-off):
    nine metric columns fit the book's text column where metrics × cut-offs (45 for five cut-offs)
    would not."""
    return pd.concat({c: study.table(c, pool=pool) for c in study.cutoffs}, names=["cut-off", "system"])


def pairs_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """Chapter 1's tested pairs (:attr:`recmetrics.meta.compare.Comparison.pairs`) as shown: one row
    per metric and pair, short headers (the table fits the text column), no winner column (the
    difference's sign says it)."""
    out = pairs.drop(columns=[c for c in ("winner",) if c in pairs.columns]).set_index(["metric", "a", "b"])
    return out.rename(columns={"mean_a": "mean a", "mean_b": "mean b", "p_adj": "p adj.", "significant": "sig."})


#: the candidates table's columns as chapter 5 shows them (short headers: the table fits the column)
CANDIDATE_COLUMNS = {"dp": "DP", "dp_se": "± se", "significant": "pairs sig.", "robustness": "robust. τ",
                     "robustness_se": "± se ", "agreement": "agree. τ", "tau_geometric": "τ arith./geom.",
                     "dominated_by": "dominated by"}


def candidates_table(table: pd.DataFrame, names: int = 1) -> pd.DataFrame:
    """Chapter 5's candidates (:attr:`recmetrics.meta.advice.Advice.table`) as shown: the front
    first, then by DP; short headers (:data:`CANDIDATE_COLUMNS`); *dominated by* as a count and the
    first ``names`` candidates (the whole list would make every row several lines tall).

    >>> t = pd.DataFrame({"metric": ["P", "RR"], "cutoff": [5, 5], "dp": [0.1, 0.3], "dp_se": 0.01,
    ...                   "significant": [1.0, 0.5], "robustness": [0.9, 0.8], "robustness_se": 0.01,
    ...                   "agreement": [0.9, 0.9], "tau_geometric": [1.0, 1.0], "dominated_by": ["", "P@5, a, b"],
    ...                   "on_front": [True, False]}, index=["P@5", "RR@5"])
    >>> candidates_table(t)["dominated by"].tolist()
    ['— (front)', '3: P@5 and 2 more']
    """
    def short(text) -> str:
        who = [w for w in str(text or "").split(", ") if w]
        if not who:
            return "— (front)"
        more = len(who) - names
        return f"{len(who)}: " + ", ".join(who[:names]) + (f" and {more} more" if more > 0 else "")

    out = table.sort_values(["on_front", "dp"], ascending=[False, True], kind="stable")
    out = out[[c for c in CANDIDATE_COLUMNS if c in out.columns]].copy()
    if "dominated_by" in out:
        out["dominated_by"] = out["dominated_by"].map(short)
    return out.rename(columns=CANDIDATE_COLUMNS).rename_axis("candidate")


def fixed(frame: pd.DataFrame, digits: int = 4):
    """``frame`` with every float shown in one fixed-point format (``digits`` decimals), integers
    with thousands separators: a pandas Styler, rendered as an HTML table in the book."""
    def fmt(v):
        if isinstance(v, (bool, np.bool_)) or v is None:
            return str(v)
        if isinstance(v, (int, np.integer)):
            return f"{int(v):,}"
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else f"{float(v):.{digits}f}"
        return str(v)

    # a little room between the columns (numbers of adjacent columns would otherwise touch)
    return frame.style.format(fmt).set_table_styles([{"selector": "td, th", "props": [("padding", "0.1em 0.3em")]}])


def marked_means(comparison, digits: int = 4):
    """A :class:`~recmetrics.meta.compare.Comparison`'s means with, in each cell, the letters of
    the systems that system beats significantly on that metric (corrected p < alpha and a higher
    mean), as in ranx's report: ``"0.2100 > b, c"``; column ``#`` gives each system's letter."""
    import pandas as pd

    letters, beats = comparison.letters, comparison.beats()
    order = list(comparison.means.index)
    cells = {}
    for m in comparison.means.columns:
        col = []
        for s in order:
            won = sorted(beats[(s, m)], key=order.index)
            col.append(f"{comparison.means.loc[s, m]:.{digits}f}" + (f" > {', '.join(letters[x] for x in won)}"
                                                                      if won else ""))
        cells[m] = col
    table = pd.DataFrame(cells, index=comparison.means.index)
    table.insert(0, "#", [letters[s] for s in order])
    return table


def pvalue_curves(dp_results: Mapping[str, Any], max_points: int = 250):
    """Tidy p-value curves of ``{candidate: DiscriminativePower}``: ``metric, pair, p`` with each
    candidate's p-values sorted decreasing (Sakai's curves, for :func:`recmetrics.viz.pvalue_curves`).
    With more than ``max_points`` pairs (50 runs have 1,225) each curve keeps ``max_points`` of its
    points, evenly spaced over the pair ranks, first and last included (``pair`` stays the rank): the
    chart draws the distribution of the p-values, not one mark per pair."""
    import numpy as np
    import pandas as pd

    parts = []
    for m, r in dp_results.items():
        p = np.sort(np.asarray(r.pvalues["p"], dtype=float))[::-1]
        ranks = np.arange(len(p))
        if len(p) > max_points:
            ranks = np.unique(np.rint(np.linspace(0, len(p) - 1, max_points)).astype(int))
        parts.append(pd.DataFrame({"metric": m, "pair": ranks + 1, "p": p[ranks]}))
    return pd.concat(parts, ignore_index=True)
