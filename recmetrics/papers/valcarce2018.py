"""Paper 003: Valcarce, Parapar, Bellogín, Castells. *On the Robustness and Discriminative Power of
Information Retrieval Metrics for Top-N Recommendation.* RecSys 2018. Its set-up and the claims of
its cut-off study (§6), which chapter ``05_cutoffs`` tests.

Chapter ``06_comparing_metrics`` also tests the claims of its §7 (:data:`METRIC_CLAIMS`: the
metrics compared at cut-off 100), restricted to its seven metrics, under paper 000's set-up.

Set-up (:data:`SETUP`), from §5: MovieLens 1M, LibraryThing, BeerAdvocate; 80 % of each user's
ratings for training (a per-user holdout); AllItems; the 21 systems of §5 (the same list as paper
000 §5.3, :data:`recmetrics.recommenders.PAPER_SYSTEMS`); relevance threshold 4; cut-offs 5 to 100
(Fig. 1: 5, 10, 20, …, 100); sparsity: 100 % → 5 % of the test ratings in 5 % steps, 50 samples
per size; popularity: the ratings of 100 % → 80 % of the items, the most popular removed first,
1 % steps; permutation test with 100,000 samples. The metrics P, Recall, AP, nDCG, RR, bpref and
infAP; infAP and bpref read every unrated item as unjudged (§3: "Those items that the target user
did not rate are considered unjudged"): ``options["infap"] = "pooled"``, i.e. the chapters compute
``infAP(unjudged=pooled)`` (Eq. 8 as printed), not trec_eval's infAP.

Claims (:data:`CLAIMS`), each with the paper's words; a check decides it through the verdict rule
of :mod:`recmetrics.meta.findings` with the uncertainty it has (:mod:`recmetrics.papers.checks`).
Results a check reads (a missing one makes the claim ``inconclusive``, naming it):

``cutoff_tau``               τ matrix among the cut-offs of the focus metric (Fig. 1)
``cutoff_robustness``        Series cut-off → mean τ over the sparsity grid (Fig. 2), ``_se`` its se
``cutoff_popularity``        Series cut-off → mean τ over the popularity grid (Fig. 3), ``_se`` its se
``cutoff_dp``                Series cut-off → DP (Fig. 4), ``cutoff_dp_se``, ``cutoff_dp_floor``
``dp``, ``dp_se``, ``dp_floor``  (§7) Series metric → DP at 100, its se, the DP at the floor
``robustness``               (§7) :class:`~recmetrics.meta.robustness.Robustness` at cut-off 100
``n_systems``                number of systems ranked

Example::

    >>> from recmetrics import papers
    >>> p = papers.get("003")
    >>> p.SETUP.robustness_sizes["popular-items"][:3], len(p.SETUP.robustness_sizes["popular-items"])
    ((1.0, 0.99, 0.98), 21)
"""
from __future__ import annotations

from ..meta.findings import Claim
from ..recommenders import PAPER_SYSTEMS
from .checks import deeper_better, dp_best, robustness_best
from .scenario_checks import STRONG_TAU, all_at_least, dp_worst, least_robust_words
from .setup import SetUp, grid

__all__ = ["PAPER", "SETUP", "QUICK", "CLAIMS", "CUTOFF_CLAIMS", "METRIC_CLAIMS", "CHAPTERS", "notebook_parameters"]

PAPER = "003"

SETUP = SetUp(
    paper=PAPER,
    citation="Valcarce, Parapar, Bellogín, Castells. On the Robustness and Discriminative Power of IR "
             "Metrics for Top-N Recommendation. RecSys 2018",
    datasets=("movielens-1m", "librarything", "beeradvocate"),
    systems=tuple(PAPER_SYSTEMS),  # §5's 21 techniques, the same list as paper 000 §5.3
    split="holdout",
    folds=1,
    test_size=0.2,
    cutoffs=(5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100),
    threshold=4.0,
    metrics=("P", "Recall", "AP", "nDCG", "RR", "bpref", "infAP"),
    robustness_sizes={"ratings": grid(1.0, 0.05, 0.05), "popular-items": grid(1.0, 0.80, 0.01)},
    n_samples=50,
    n_permutations=100_000,
    options={"pool": ("concat", "mean"), "infap": ("pooled",)},
    notes={
        "datasets": "§5 Datasets, Table 2",
        "systems": "§5 Recommender Systems (21 techniques)",
        "split": "§5: 80% of each user's ratings for training, the rest for test",
        "repeats": "§5: one split, drawn once",
        "cutoffs": "§6 and Fig. 1: 5, 10, 20, ..., 100",
        "threshold": "§5: τ = 4",
        "metrics": "§3: P, Recall, AP, nDCG, RR, bpref, infAP",
        "infap": "§3: unrated items are unjudged, so infAP(unjudged=pooled) = Eq. 8 as printed",
        "robustness_sizes": "§5 Evaluation methodology: sparsity 100% → 5% in 5% steps; popularity 100% → 80% "
                            "of the items in 1% steps",
        "n_samples": "§5: 50 samples of each test set size (sparsity); popularity is deterministic up to ties",
        "n_permutations": "§4 Discriminative Power: 100,000 Monte Carlo samples",
        "pool": "one holdout split: folds need no pooling (both readings give the same units)",
        "focus": "§6 shows nDCG as the representative metric (Figs. 1-4)",
    },
    extra={"focus": "nDCG", "scenarios": ("ratings", "popular-items")},
)

#: the quick profile: the same design with few systems, one holdout split and thin grids
QUICK = SETUP.replace(
    systems=("Random", "Pop", "ItemKNN", "UserKNN", "PureSVD", "RP3beta"),
    cutoffs=(5, 10, 20, 50, 100),
    robustness_sizes={"ratings": (1.0, 0.5, 0.2, 0.05), "popular-items": (1.0, 0.95, 0.9, 0.85, 0.8)},
    n_samples=5,
    n_permutations=2000,
)


def _above_50(index):
    return [c for c in index if int(c) > 50]


CUTOFF_CLAIMS = [
    Claim("cutoffs-correlate", PAPER, "Every two cut-offs of nDCG from 5 to 100 rank the systems with τ ≥ 0.9",
          "§6: 'We find high correlations between rankings when studying cut-offs from 5 to 100'; Fig. 1 (nDCG, "
          "MovieLens 1M): every entry ≥ 0.90 (lowest 0.90, @5 vs @80-@100)",
          all_at_least("cutoff_tau", STRONG_TAU, "τ between two cut-offs of nDCG")),
    Claim("deeper-cutoffs-robust", PAPER, "Deeper cut-offs are more robust to sparsity",
          "§6, Fig. 2: 'robustness increases as we use deeper cut-offs' (nDCG, test ratings 100% → 5%)",
          deeper_better("cutoff_robustness", "mean τ under rating removal", larger_better=True, metric="nDCG")),
    Claim("deeper-cutoffs-robust-popularity", PAPER, "Deeper cut-offs are more robust to popularity bias",
          "§6, Fig. 3: 'robustness increases as we use deeper cut-offs' (nDCG, most popular items removed, "
          "100% → 80% of the items)",
          deeper_better("cutoff_popularity", "mean τ under popular-item removal", larger_better=True,
                        metric="nDCG")),
    Claim("deeper-cutoffs-dp", PAPER, "Deeper cut-offs (above 50) are more discriminative than shallower ones",
          "§6, Fig. 4: 'deeper cut-offs (above 50) consistently provide better figures of DP than shallower "
          "cut-offs'",
          dp_best(_above_50, "cutoff_dp", metrics=False, what="DP of nDCG per cut-off")),
]

#: 003 §7 compares its seven metrics at cut-off 100; chapter 06 runs that comparison (under paper
#: 000's set-up, which extends 003's: its deviations from 003's set-up are listed with each row)
_METRICS = ("P", "Recall", "AP", "nDCG", "RR", "bpref", "infAP")

METRIC_CLAIMS = [
    Claim("p-most-robust-003", PAPER, "Precision is the most robust metric, to sparsity and to popularity",
          "§7: 'In contrast, precision is the most robust metric'; §8: 'precision ... is very robust to sparsity "
          "and popularity biases' (Figs. 6-7)",
          robustness_best(["P"], ["ratings", "popular-items"], among=_METRICS)),
    Claim("mrr-least-robust-003", PAPER, "MRR is the least robust metric to popularity and, with bpref (the worst) "
          "and infAP, among the least robust to sparsity",
          "§7: 'bpref, and to a lesser extent infAP and MRR, show poor robustness to sparsity' (Fig. 6); 'precision "
          "is the best metric in terms of robustness to popularity whereas MRR is the worst one' (Fig. 7); 'We can "
          "claim that MRR is the least robust metric. This utility-based metric suffers heavily from sparsity and "
          "popularity biases'",
          least_robust_words("RR", "bpref", ["bpref", "infAP", "RR"], among=_METRICS)),
    Claim("dp-ndcg-p-top-003", PAPER, "nDCG and precision, in this order, are the most discriminative metrics",
          "§7, Table 3: 'nDCG and precision (in this order) present the highest discriminative power on the test "
          "collections with great difference to the rest of the metrics'",
          dp_best(["nDCG", "P"], among=_METRICS, in_order=True)),
    Claim("dp-bpref-infap-low-003", PAPER, "bpref, and to a lesser extent infAP, have low discriminative power",
          "§7, Table 3: 'We see that bpref, and to a lesser extent infAP, presents low discriminative power across "
          "all datasets' (bpref's DP the highest on all three)",
          dp_worst(["bpref", "infAP"], among=_METRICS, in_order=True)),
]

CLAIMS = CUTOFF_CLAIMS + METRIC_CLAIMS
#: the claims each chapter tests
CHAPTERS = {"05_cutoffs": CUTOFF_CLAIMS, "06_comparing_metrics": METRIC_CLAIMS}


def notebook_parameters(profile: str) -> dict[str, dict]:
    """``{notebook stem: {parameter: value}}`` of the chapters that run this paper, under ``profile``
    (``"paper"``: :data:`SETUP`; ``"quick"``: :data:`QUICK`, the notebooks' own defaults)."""
    from . import _profile

    s = _profile(profile, SETUP, QUICK)
    return {"05_cutoffs": {
        "systems": None if s.systems == SETUP.systems else list(s.systems),
        "split": s.split, "folds": s.folds, "repeats": s.repeats, "test_size": s.test_size,
        "metrics": list(s.metrics), "infap": s.options["infap"][0], "cutoff_grid": list(s.cutoffs), "focus": s.extra["focus"],
        "robustness_sizes": {k: list(v) for k, v in s.robustness_sizes.items()},
        "n_samples": s.n_samples, "n_permutations": s.n_permutations, "pools": list(s.options["pool"]),
    }}
