r"""Stopping a robustness study's sampling once its Monte Carlo error is small enough.

A robustness curve's point is the mean τ over a size's samples, and its Monte Carlo standard error
is :math:`s/\sqrt{n}` (:math:`s` the samples' standard deviation, ``n - 1`` in the denominator;
an undefined τ counts 0, as :meth:`~recmetrics.meta.robustness.Robustness.summary` counts it). A
size whose τ hardly moves from sample to sample (most sizes near 100%, the deterministic
scenarios' tie-breaks) needs few samples for the same precision as one whose τ swings.

**The rule** (``target_se``, ``min_samples``): the samples of a size are examined at the
checkpoints ``min_samples, 2·min_samples, …`` up to ``n_samples`` (:func:`checkpoints`); each
(metric, mean) keeps the samples up to the first checkpoint where its se is at most ``target_se``
(and above 0), or all ``n_samples`` if none is (:func:`stop_counts`). The samples are drawn in the order of their
seeds, so a stopped curve's samples are the first ones of the fixed design's, bit for bit, and
another metric or mean studied at the same time changes nothing of a metric's own (each keeps its
own count). A size stops drawing once every (metric, mean) studied has stopped.

What it costs. The rule reads the spread of the samples, never the τ they average nor a difference
between metrics, so it cannot stop *because* a comparison looks decided (the trap of testing until
significant); and it never stops on an se of 0, which samples cannot show to be exact (τ may yet
move). But the se it reads is estimated from as few as ``min_samples`` samples, and where τ is
skewed — near 1, but for a rare swap of two systems — a run of samples without the tail looks
precise, stops, and reports too small an se. Measured by resampling the 50 samples of chapter 7's
study (movielens-small, paper settings, arithmetic and geometric means; target 0.01;
``benchmarks/calibrate_sample_stopping.py``), mean ± 2 se covers the 50 samples' mean in 93.0% of
the 1,152 (mean, size, metric) cells' resamples under the rule with ``min_samples=20``, against
94.6% with all 50 samples (91.2% with ``min_samples=10``). Per scenario, under the rule (all 50):
ratings 93.7% (94.7%), random items 93.3% (94.7%), random users 93.6% (94.8%), large users 95.1%
(96.2%), popular items 91.0% (93.6%), the last with se of 0.0002-0.001. It draws 47% of the
ratings' samples and 69% of the random items' (64% of all).
``tests/test_sample_stopping.py`` checks the rule against the fixed design on simulated τ: no loss
where τ is symmetric, at most 4 points where it is skewed. Hence the default ``min_samples=20``;
the papers' chapters keep all their samples, and the studies that are no paper's experiment stop at
an se of 0.01 under the paper profile: the main book's explorers, and the own-runs book, whose own
study at ML-20M scale (10 runs of 138,000 users, every cut-off; ``calibrate_sample_stopping.py
--stored``) gives 97.1% coverage under the rule against 97.9% with all 50 samples (random items
93.6% against 94.5%), drawing 62% of the samples.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import checks
from ..errors import InputError

__all__ = ["checkpoints", "stop_counts", "check_rule", "truncate_samples", "rule_note"]


def check_rule(target_se, min_samples) -> tuple[float | None, int]:
    """``(target_se, min_samples)`` validated: ``target_se`` None (every sample) or a positive
    number, ``min_samples`` an integer ≥ 2 (an se needs two samples)."""
    min_samples = checks.positive_int(min_samples, "min_samples")
    if min_samples < 2:
        raise InputError(f"min_samples must be at least 2 (a standard error needs two samples), got {min_samples}")
    if target_se is None:
        return None, min_samples
    try:
        value = float(target_se)
    except (TypeError, ValueError):
        raise InputError(f"target_se must be a positive number or None, got {target_se!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise InputError(f"target_se must be a positive number or None, got {target_se!r}")
    return value, min_samples


def checkpoints(n_samples: int, min_samples: int) -> list[int]:
    """The sample counts at which the rule looks: every ``min_samples``, and ``n_samples`` last.

    >>> checkpoints(50, 10), checkpoints(25, 10), checkpoints(5, 10)
    ([10, 20, 30, 40, 50], [10, 20, 25], [5])
    """
    return [*range(min_samples, n_samples, min_samples), n_samples]


def stop_counts(taus: np.ndarray, target_se: float, points) -> np.ndarray:
    """Per column of ``taus`` (samples × columns, in sample order; NaN counts 0), the first
    checkpoint of ``points`` (at most ``len(taus)``) where the se of its mean is at most
    ``target_se`` and above 0 (an se of 0 from samples is unknown, not exact: τ may yet move); 0
    where none is yet.

    >>> taus = np.array([[0.5, 0.0, 1.0], [0.6, 1.0, 1.0], [0.5, 0.0, 1.0], [0.6, 1.0, 1.0]])
    >>> stop_counts(taus, 0.1, [2, 4]).tolist()
    [2, 0, 0]
    """
    taus = np.nan_to_num(np.asarray(taus, dtype=np.float64), nan=0.0)
    out = np.zeros(taus.shape[1], dtype=np.int64)
    for p in points:
        if p > len(taus):
            break
        if p < 2:
            continue
        x = taus[:p]
        se = x.std(axis=0, ddof=1) / np.sqrt(p)
        out = np.where((out == 0) & (se > 0) & (se <= target_se), p, out)
    return out


def truncate_samples(samples: pd.DataFrame, target_se: float | None, min_samples: int, n_samples: int,
                     replicate_samples: pd.DataFrame | None = None):
    """A robustness samples table (:attr:`~recmetrics.meta.robustness.Robustness.samples`, every
    size drawn ``n_samples`` times) cut by the rule: each (scenario, size, metric) keeps its samples
    below its stop count (:func:`stop_counts` over its τ in sample order). ``replicate_samples``
    (optional) is cut at the same counts. Returns ``(samples, replicate_samples)``, rows in order."""
    if target_se is None or not len(samples):
        return samples, replicate_samples
    points = checkpoints(n_samples, min_samples)
    keys = ["scenario", "size", "metric"]
    stop = {}
    for (sc, size), cell in samples.groupby(["scenario", "size"], sort=False):
        if size >= 1.0:
            continue
        wide = cell.pivot(index="sample", columns="metric", values="tau").sort_index()
        counts = stop_counts(wide.to_numpy(), target_se, points)
        for name, n in zip(wide.columns, counts):
            stop[(sc, size, name)] = int(n) if n else len(wide)
    limit = pd.MultiIndex.from_frame(samples[keys]).map(lambda k: stop.get(k, 1 << 62))
    kept = samples[samples["sample"].to_numpy() < np.asarray(limit)].reset_index(drop=True)
    if replicate_samples is not None and len(replicate_samples):
        rl = pd.MultiIndex.from_frame(replicate_samples[keys]).map(lambda k: stop.get(k, 1 << 62))
        replicate_samples = replicate_samples[replicate_samples["sample"].to_numpy() < np.asarray(rl)].reset_index(drop=True)
    return kept, replicate_samples


def rule_note(settings) -> str:
    """How many samples a size drew, in words, from a study's settings (``n_samples``, and
    ``target_se``/``min_samples`` when given; e.g. an explorer table's ``attrs["explorer"]``).

    >>> rule_note({"n_samples": 50}), rule_note({"n_samples": 50, "target_se": 0.01, "min_samples": 20})
    ('50 samples per size', 'up to 50 samples per size, each curve point stopping once its se is at most 0.01 (checked every 20 samples)')
    """
    n, target = settings.get("n_samples"), settings.get("target_se")
    if target is None:
        return f"{n} samples per size"
    return (f"up to {n} samples per size, each curve point stopping once its se is at most {target:g} "
            f"(checked every {int(settings.get('min_samples', 20))} samples)")
