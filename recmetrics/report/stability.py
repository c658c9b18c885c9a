"""Do the verdicts survive another split? Findings of books built at several split seeds, side by side,
and whether each verdict's firmness told the truth about it.

A book built at split seed S (``recmetrics report --out DIR -p seed=S``) reads each claim on one split
of the data; another seed reads it on another. :func:`verdicts_by_seed` lines the rows of several
builds up (chapter, claim id and its occurrence in the chapter, for claims with one row per reading),
:func:`firmness_by_seed` does the same for their firmness (:mod:`recmetrics.meta.firmness`), and:

* :func:`stability` — how many rows change verdict at all between the seeds, how many agree under
  one and disagree under another (which the verdict rule is built never to do), how many are decided
  under every seed; :func:`expected_stability` averages those over every ``k`` of the seeds (one
  triple of seeds is one draw of which rows on the edge of their decision move);
* :func:`honesty` — the test of the firmness figures themselves: of the rows firm under one seed,
  the share that read the same under each other seed; the share of rows firm on average; and, per
  pair of seeds, the rows that change against the number the firmness figures predict (a row whose
  firmness is ``f`` under each of two seeds changes between them with a chance of about
  ``1 − f``, :func:`predicted_changes`). A row whose standard error misses part of the split's
  variability shows up as observed above predicted.

Why rows change at all: a claim whose effect is about the size of its noise on the data at hand sits
on the decision line under any calibrated rule, and no sizing of the quick profile empties that
line (on movielens-small: 10.8 of 93 rows changed per triple of seeds 0-5 as built, 10.0-11.0 with
more samples, repeated splits, more systems, every user, or the rule at 2.5 se; the paper profile
10 of 93 at seeds 0-2). Firmness tells a reader which rows those are.
"""
from __future__ import annotations

import os
from itertools import combinations, permutations
from typing import Mapping

import numpy as np

from ..errors import InputError

__all__ = ["verdicts_by_seed", "firmness_by_seed", "stability", "expected_stability", "predicted_changes",
           "honesty", "check_seeds", "replicated_verdict", "DECIDED"]

DECIDED = ("agrees", "disagrees")


def _by_seed(dirs: Mapping[str, str | os.PathLike], column: str):
    import pandas as pd

    from ..meta.findings import collect

    cols = {}
    for label, path in dirs.items():
        table = collect(path)
        if table.empty:
            raise InputError(f"no findings in {os.fspath(path)!r} (seed {label}): give the findings folder of a build")
        occurrence = table.groupby(["chapter", "id"]).cumcount()
        cols[label] = pd.Series(table[column].to_numpy(),
                                index=pd.MultiIndex.from_arrays([table["chapter"], table["id"], occurrence],
                                                                names=["chapter", "id", "occurrence"]))
    return pd.DataFrame(cols)


def verdicts_by_seed(dirs: Mapping[str, str | os.PathLike]):
    """One row per claim row (index chapter, id, occurrence), one column of verdicts per seed label;
    ``dirs``: ``{seed label: findings folder}`` (the ``findings`` folder of a build's generated chapters)."""

    return _by_seed(dirs, "verdict")


def firmness_by_seed(dirs: Mapping[str, str | os.PathLike]):
    """:func:`verdicts_by_seed` for the rows' firmness (NaN where a build did not compute it)."""
    return _by_seed(dirs, "firmness").astype(np.float64)


def stability(verdicts) -> dict:
    """Over the claim rows every seed has: ``claims``, ``opposite`` (rows that agree under one seed and
    disagree under another), ``changed`` (rows whose verdict differs between seeds),
    ``decided_everywhere`` (rows decided under every seed), and the shares."""
    import pandas as pd

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
    import pandas as pd

    v = pd.DataFrame(verdicts).dropna()
    if v.shape[1] < k:
        raise InputError(f"expected_stability over {k} seeds needs at least {k} seeds, got {v.shape[1]}")
    runs = [stability(v[list(cols)]) for cols in combinations(v.columns, k)]
    out = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
    out["claims"], out["subsets"] = runs[0]["claims"], len(runs)
    return out


def predicted_changes(firmness_a, firmness_b) -> float:
    """The number of rows expected to change verdict between two seeds whose rows have these
    firmness figures: ``Σ (1 − (f_a + f_b) / 2)`` (each seed's figure estimates the chance that another
    split reads its verdict; their mean, the chance the two read the same)."""
    a, b = np.asarray(firmness_a, dtype=np.float64), np.asarray(firmness_b, dtype=np.float64)
    if a.shape != b.shape:
        raise InputError(f"predicted_changes: {a.size} and {b.size} rows")
    if np.isnan(a).any() or np.isnan(b).any():
        raise InputError("predicted_changes: a row has no firmness (build the books with firmness computed)")
    return float(np.sum(1.0 - (a + b) / 2.0))


def honesty(verdicts, firmness, firm: float | None = None) -> dict:
    """The firmness figures tested against the builds: over the rows every seed has,

    * ``firm_share`` — the share of rows firm (firmness ≥ ``firm``, default
      :data:`recmetrics.meta.firmness.FIRM`), averaged over the seeds;
    * ``firm_kept`` — of the rows firm under one seed, the share with the same verdict under another
      (every ordered pair of seeds), and ``firm_rows`` how many such (row, pair) there were;
    * ``pairs`` — per pair of seeds, the rows that changed and the number predicted
      (:func:`predicted_changes`), and ``observed`` / ``predicted`` summed over the pairs, ``ratio``,
      over the rows whose firmness both seeds computed; a row whose firmness is unknown under either
      seed (:data:`recmetrics.meta.firmness.UNKNOWN`, NaN) predicts nothing: ``unknown`` counts such
      (row, pair) and ``unknown_changed`` those that changed;
    * ``opposite`` — rows that agree under one seed and disagree under another."""
    import pandas as pd

    from ..meta.firmness import FIRM

    firm = FIRM if firm is None else float(firm)
    v = pd.DataFrame(verdicts).dropna()
    f = pd.DataFrame(firmness).reindex(index=v.index, columns=v.columns)
    if v.shape[1] < 2:
        raise InputError(f"honesty needs at least two seeds, got {v.shape[1]}")
    pairs, unknown, unknown_changed = [], 0, 0
    for a, b in combinations(v.columns, 2):
        known = f[a].notna() & f[b].notna()
        changed = v[a] != v[b]
        unknown += int((~known).sum())
        unknown_changed += int((changed & ~known).sum())
        pairs.append({"seeds": (a, b), "observed": int(changed[known].sum()),
                      "predicted": predicted_changes(f[a][known], f[b][known])})
    kept = [(v[a] == v[b])[f[a] >= firm] for a, b in permutations(v.columns, 2)]
    kept_all = pd.concat(kept) if kept else pd.Series(dtype=bool)
    observed, predicted = sum(p["observed"] for p in pairs), sum(p["predicted"] for p in pairs)
    return {"claims": len(v), "seeds": list(v.columns), "firm_share": float((f >= firm).mean().mean()),
            "firm_kept": float(kept_all.mean()) if len(kept_all) else float("nan"), "firm_rows": int(len(kept_all)),
            "pairs": pairs, "observed": observed, "predicted": predicted,
            "ratio": observed / predicted if predicted > 0 else float("nan"),
            "unknown": unknown, "unknown_changed": unknown_changed,
            "opposite": stability(v)["opposite"]}


def check_seeds(seeds, overrides=None) -> list[int]:
    """The split seeds of a replicated build, checked: at least two distinct integers >= 0, not given
    beside a ``seed`` override (the first of ``seeds`` is the book's own); ``[]`` for ``None``."""
    if seeds is None:
        return []
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise InputError(f"seeds must be a list of split seeds, e.g. [0, 1, 2], got {seeds!r}")
    out = list(seeds)
    bad = [s for s in out if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0]
    if bad:
        raise InputError(f"seeds must be integers >= 0, got {bad[0]!r}")
    if len(out) < 2 or len(set(out)) != len(out):
        raise InputError(f"seeds must name at least two distinct split seeds, got {out}")
    if overrides and "seed" in overrides:
        raise InputError("give the split seed once: seeds (a replicated build, the first is the book's) or "
                         "-p seed=S, not both")
    return [int(s) for s in out]


def replicated_verdict(verdicts) -> str:
    """One verdict over the seeds of a replicated build: the verdict every seed reads (decided or not),
    else ``"borderline"`` (another split may read it differently)."""
    vs = {str(v) for v in verdicts}
    if not vs:
        raise InputError("replicated_verdict needs the verdict of at least one seed")
    return vs.pop() if len(vs) == 1 else "borderline"
