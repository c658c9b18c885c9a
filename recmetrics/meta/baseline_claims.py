"""Claims checked by the first two chapters: the dataset against the papers' Table 2, and the baselines' orderings.

Chapter 01 (dataset overview) and chapter 02 (the recommender zoo) test these as
:class:`~recmetrics.meta.findings.Claim` data, like the later chapters test the papers' claims, so
their verdicts reach the book's Findings page:

* ``table2-statistics`` (paper 003, Table 2): the dataset's users, items, ratings, density and
  item Gini equal the paper's row for it, to the precision the paper prints. Only MovieLens 1M,
  LibraryThing and BeerAdvocate have a row (:data:`TABLE2`); on another dataset the claim is
  ``not testable``.
* ``pop-beats-random`` (paper 004, §4.5.1): in a random rating split the items with many
  training ratings also have many positive test ratings, so recommending by popularity beats
  random recommendation on every metric and cut-off computed.
* ``personalised-beat-pop`` (the zoo's sanity check, no paper claim): PureSVD, EASE and WRMF,
  where they were run, beat popularity.

Comparisons of two systems are paired over the evaluation units (users, or (fold, user) pairs):
the mean difference is decided by :func:`recmetrics.meta.findings.order` against its standard
error ``sd(d) / sqrt(n)`` (:func:`paired_difference`).

Example::

    >>> import pandas as pd
    >>> a, b = pd.Series([0.2, 0.4, 0.3, 0.5]), pd.Series([0.1, 0.1, 0.2, 0.1])
    >>> d = paired_difference(a, b)
    >>> round(d["difference"], 3), round(d["se"], 3), d["n"]
    (0.225, 0.075, 4)
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ..errors import InputError
from .findings import Claim, Evidence, Verdict, compare, family, holds, jointly, not_testable

__all__ = ["TABLE2", "TABLE2_PRECISION", "paired_difference", "system_pairs", "ordering_evidence", "DATASET_CLAIMS",
           "ZOO_CLAIMS", "PERSONALISED"]

#: Valcarce et al. (RecSys 2018, paper 003), Table 2, keyed by recmetrics' dataset names.
#: density is a fraction (the paper prints a percentage with three decimals); gini is the item Gini.
TABLE2: dict[str, dict[str, float]] = {
    "movielens-1m": {"users": 6040, "items": 3706, "ratings": 1000209, "density": 0.04468, "item_gini": 0.634},
    "librarything": {"users": 7279, "items": 37232, "ratings": 749401, "density": 0.00277, "item_gini": 0.581},
    "beeradvocate": {"users": 33388, "items": 66055, "ratings": 1571808, "density": 0.00071, "item_gini": 0.865},
}
#: the unit of the last digit the paper prints for each statistic (a match is within half of it)
TABLE2_PRECISION: dict[str, float] = {"users": 1, "items": 1, "ratings": 1, "density": 1e-5, "item_gini": 1e-3}

#: the personalised systems the zoo's sanity check expects above popularity
PERSONALISED = ("PureSVD", "EASE", "WRMF")


def paired_difference(a, b) -> dict[str, float]:
    """Mean of ``a - b`` over the units both Series hold (aligned on their index), with its standard error.

    Returns ``{"mean_a", "mean_b", "difference", "se", "n"}``; ``se = sd(a - b) / sqrt(n)``
    (``ddof=1``; 0 when ``n == 1``). Units missing from either side are left out; NaN scores
    are an error (a score must be computed for every unit compared).
    """
    import numpy as np
    import pandas as pd

    a, b = pd.Series(a), pd.Series(b)
    if a.index.has_duplicates or b.index.has_duplicates:
        raise InputError("paired_difference: each unit (index label) must appear once per system")
    common = a.index.intersection(b.index)
    if len(common) == 0:
        raise InputError("paired_difference: the two systems share no evaluation unit")
    x, y = a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)
    if np.isnan(x).any() or np.isnan(y).any():
        raise InputError("paired_difference: NaN score for some unit; expected a score for every unit")
    d = x - y
    se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0
    return {"mean_a": float(x.mean()), "mean_b": float(y.mean()), "difference": float(d.mean()), "se": se,
            "n": int(len(d))}


def system_pairs(scores, better: str, worse: str) -> dict[str, dict[str, float]]:
    """:func:`paired_difference` of ``better`` minus ``worse`` per metric, paired over the units.

    ``scores``: either the long table of :func:`recmetrics.runs.evaluate_systems` (``system, fold,
    user, metric, value``; units are (fold, user) pairs) or ``{system: per-user DataFrame}`` (one
    column per metric, e.g. ``Evaluation.per_user``; units are users). Returns ``{metric: ...}``;
    ``KeyError`` when either system is absent (the claim is then reported as not computed).
    """
    import pandas as pd

    if isinstance(scores, pd.DataFrame):
        wide = scores.pivot_table(index=["fold", "user"], columns=["system", "metric"], values="value",
                                  aggfunc="first", sort=False)
        systems = set(wide.columns.get_level_values("system"))
        for s in (better, worse):
            if s not in systems:
                raise KeyError(s)
        metrics = list(dict.fromkeys(wide[better].columns))
        return {m: paired_difference(wide[(better, m)].dropna(), wide[(worse, m)].dropna()) for m in metrics}
    a, b = scores[better], scores[worse]
    return {m: paired_difference(a[m], b[m]) for m in a.columns if m in b.columns}


def ordering_evidence(pairs: Mapping[str, Mapping[str, float]], better: str, worse: str) -> Evidence:
    """Verdict of "``better`` beats ``worse`` on every entry" from :func:`paired_difference` results.

    ``pairs``: ``{label: paired_difference(better's scores, worse's scores)}``. ``agrees`` when
    every difference is positive beyond two standard errors, ``disagrees`` when Holm's step-down over
    the entries finds one negative (:func:`~recmetrics.meta.findings.family`), ``inconclusive``
    otherwise; the detail lists each entry's means and the difference ± se with its z. The value is
    the smallest difference.
    """
    if not pairs:
        raise KeyError(f"{better} vs {worse}")
    comps, parts = {}, []
    for label, p in pairs.items():
        comps[label] = compare(p["difference"], 0.0, p["se"], 0.0, label=label)
        parts.append(f"{label}: {p['mean_a']:.4f} vs {p['mean_b']:.4f} (difference {comps[label].margin()}, "
                     f"n = {p['n']:,})")
    verdict, held, rev, und = family(comps.values())
    verdict = Verdict(verdict, comps.values())
    lost = [k for k, c in comps.items() if c in rev]
    open_ = [k for k, c in comps.items() if c in und]
    if lost:
        head = f"{worse} beats {better} on {', '.join(lost)} (Holm over the {len(comps)} entries)"
    elif open_:
        head = f"within two standard errors on {', '.join(open_)}"
    else:
        head = f"{better} above {worse} beyond two standard errors on all {len(comps)}"
    smallest = min(p["difference"] for p in pairs.values())
    return Evidence(verdict, smallest, head + "; " + "; ".join(parts))


def _table2(results: Mapping[str, Any]) -> Evidence:
    name, stats = results["dataset"], results["stats"]
    row = TABLE2.get(str(name))
    if row is None:
        return not_testable(f"Table 2 has rows for {', '.join(TABLE2)} only, not {name}")
    misses, shown = [], []
    for key, paper in row.items():
        ours = float(stats[key])
        verdict = holds(abs(ours - paper), "<=", TABLE2_PRECISION[key] / 2)
        shown.append(f"{key} {ours:.6g} (paper {paper:.6g})")
        if verdict != "agrees":
            misses.append(key)
    detail = "; ".join(shown)
    if misses:
        return Evidence("disagrees", None, f"differs on {', '.join(misses)}: {detail}")
    return Evidence("agrees", None, f"equal to the printed precision: {detail}")


def _pop_random(results: Mapping[str, Any]) -> Evidence:
    return ordering_evidence(results["pop_vs_random"], "Pop", "Random")


def _personalised(results: Mapping[str, Any]) -> Evidence:
    per_system = results["personalised_vs_pop"]  # {system: {label: paired_difference}}
    if not per_system:
        raise KeyError("none of " + ", ".join(PERSONALISED) + " was run")
    evidences = {s: ordering_evidence(pairs, s, "Pop") for s, pairs in per_system.items()}
    verdict = jointly(e.verdict for e in evidences.values())
    detail = " | ".join(f"{s}: {e.verdict} ({e.detail})" for s, e in evidences.items())
    missing = [s for s in PERSONALISED if s not in per_system]
    if missing:
        detail += f" | not run here: {', '.join(missing)}"
    return Evidence(verdict, None, detail)


#: chapter 01: the dataset and the two baselines on one random hold-out split
DATASET_CLAIMS = [
    Claim("table2-statistics", "003",
          "The dataset's statistics are those of the paper's Table 2 (users, items, ratings, density, item Gini).",
          "Table 2: MovieLens 1M 6,040 users, 3,706 items, 1,000,209 ratings, density 4.468%, Gini 0.634 "
          "(LibraryThing and BeerAdvocate likewise)",
          check=_table2),
    Claim("pop-beats-random", "004",
          "In a random rating split, recommending by popularity beats random recommendation.",
          "§4.5.1: E[pr_test(i)] ∝ r_train(i), so items with many training ratings have many positive test "
          "ratings, which makes popularity the optimum non-personalised recommender (§4.6.2); it falls to "
          "random's level (P@10 0.0077 vs 0.0100) only when popularity is uniform (Fig. 4.4)",
          check=_pop_random),
]

#: chapter 02: the zoo's k-fold AllItems runs
ZOO_CLAIMS = [
    Claim("pop-beats-random", "004",
          "In a random rating split, recommending by popularity beats random recommendation.",
          "§4.5.1: E[pr_test(i)] ∝ r_train(i), which makes popularity the optimum non-personalised "
          "recommender (§4.6.2)",
          check=_pop_random),
    Claim("personalised-beat-pop", "zoo",
          "Personalised models (PureSVD, EASE, WRMF) beat popularity under AllItems.",
          "the zoo's sanity expectation before finer comparisons are trusted (not a claim of the five papers)",
          check=_personalised),
]
