"""Do the verdicts survive another split? Findings of books built at several split seeds, side by side.

Issue 25 §1's acceptance reads the Findings of the quick book built at seeds 0, 1 and 2
(``recmetrics report --out DIR -p seed=S``): no claim may ``agrees`` under one seed and ``disagrees``
under another, at most 5 % of the claims may change verdict at all, and at least 40 % must be
decided (``agrees`` or ``disagrees``) under every seed. :func:`verdicts_by_seed` lines the rows up
(chapter, claim id and its occurrence in the chapter, for claims with one row per reading) and
:func:`stability` gives the three figures; ``benchmarks/split_stability.py`` prints both.

Three seeds are one draw: whether a row on the edge of its decision moves under seeds 0-2 is luck,
so comparing two designs on one triple compares noise (a count of 10 against 13 changed rows is
within it). With more seeds built, :func:`expected_stability` averages the figures over every
triple of them (a U-statistic: the figures three independent seeds give, on average).

What moves that average on the quick book of movielens-small (seeds 0-5; each variant re-ran the
chapters it touches, the others' findings kept): 10.8 of 93 rows change as built; 10.9 with 20 samples
per robustness size instead of 5; 10.5 with the split of chapters 5-7 drawn 3 times
(:func:`recmetrics.runs.make_folds` ``repeats``); 10.3 with 10 systems instead of 6 in chapters 5-7;
10.0 with chapter 8 on all 610 users instead of 300; 11.0 with the whole book's rule at 2.5 standard
errors instead of 2 (:data:`recmetrics.meta.findings.NOISE_SE`, a level that still keeps issue 25 §2's
error rates: in ``tests/test_findings.py``'s draws a null ``disagrees`` in 0.55 %, a group 4 se ahead
``agrees`` in 53.6 %). Each variant moves *which* rows change more than how many: the rows on the edge
of the decision are the claims whose effect is about the size of its noise on 610 users, and none of
these knobs shrinks that noise enough (halving it needs about four times the users). The paper
profile, every knob at the papers' size (21 systems, 5 folds, 50 samples, 100,000 permutations,
chapter 8 on every user), changes 10 of 93 rows at seeds 0-2 too.
"""
from __future__ import annotations

import os
from itertools import combinations
from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["verdicts_by_seed", "stability", "expected_stability", "DECIDED"]

DECIDED = ("agrees", "disagrees")


def verdicts_by_seed(dirs: Mapping[str, str | os.PathLike]):
    """One row per claim row (index chapter, id, occurrence), one column of verdicts per seed label;
    ``dirs``: ``{seed label: findings folder}`` (the ``findings`` folder of a build's generated chapters)."""
    from ..meta.findings import collect

    cols = {}
    for label, path in dirs.items():
        table = collect(path)
        if table.empty:
            raise InputError(f"no findings in {os.fspath(path)!r} (seed {label}): give the findings folder of a build")
        occurrence = table.groupby(["chapter", "id"]).cumcount()
        cols[label] = pd.Series(table["verdict"].to_numpy(),
                                index=pd.MultiIndex.from_arrays([table["chapter"], table["id"], occurrence],
                                                                names=["chapter", "id", "occurrence"]))
    return pd.DataFrame(cols)


def stability(verdicts) -> dict:
    """The three figures of issue 25 §1 over the claim rows every seed has: ``claims``, ``opposite``
    (rows that agree under one seed and disagree under another), ``changed`` (rows whose verdict
    differs between seeds), ``decided_everywhere`` (rows decided under every seed), and the shares."""
    v = pd.DataFrame(verdicts).dropna()
    n = len(v)
    if not n:
        raise InputError("no claim row is present under every seed")
    opposite = int((v.eq("agrees").any(axis=1) & v.eq("disagrees").any(axis=1)).sum())
    changed = int((v.nunique(axis=1) > 1).sum())
    decided = int(v.isin(DECIDED).all(axis=1).sum())
    return {"claims": n, "opposite": opposite, "changed": changed, "changed_share": changed / n,
            "decided_everywhere": decided, "decided_share": decided / n}


def expected_stability(verdicts, k: int = 3) -> dict:
    """:func:`stability`'s counts and shares averaged over every ``k`` of the seeds (columns) of
    ``verdicts``, with ``subsets``: how many were averaged. With exactly ``k`` seeds it is
    :func:`stability` itself."""
    v = pd.DataFrame(verdicts).dropna()
    if v.shape[1] < k:
        raise InputError(f"expected_stability over {k} seeds needs at least {k} seeds, got {v.shape[1]}")
    runs = [stability(v[list(cols)]) for cols in combinations(v.columns, k)]
    out = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
    out["claims"], out["subsets"] = runs[0]["claims"], len(runs)
    return out
