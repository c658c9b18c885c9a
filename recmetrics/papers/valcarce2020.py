"""Paper 000: Valcarce, Bellogín, Parapar, Castells. *Assessing ranking metrics in top-N
recommendation.* Information Retrieval Journal 23(4), 2020. Its set-up and the claims of §6
(arithmetic mean: chapter ``06_comparing_metrics``) and §7 (geometric mean: chapter
``07_arithmetic_vs_geometric``).

Set-up (:data:`SETUP`), from §4-5: MovieLens 1M, LibraryThing, BeerAdvocate; 5-fold
cross-validation on random splits; AllItems; the 21 systems of §5.3
(:data:`recmetrics.recommenders.PAPER_SYSTEMS`); threshold 4; cut-off 100 (§6); nine metrics (§3.2)
with bpref and infAP reading unrated items as unjudged ("Bpref and InfAP ignore unjudged
documents", §6.3.1): ``options["infap"] = "pooled"``, ``infAP(unjudged=pooled)`` = Eq. 11 as printed; five incompleteness
scenarios (§4.2) from 100 % to 1 % of the test set with 50 samples per size (§4.2.1; the step is
not stated, the project reads 100, 90, …, 10, 5, 1 %) — except popular items, for which 000 states
no sizes and repeats 003's text: 003's grid, 100 % → 80 % of the items in 1 % steps; a permutation test with 100,000 samples
(§4.1). Open choices the paper leaves (``SETUP.options``): how the folds' users are pooled for
the tests (``pool``: the chapters run ``concat`` and ``mean``; a verdict that flips with it is
``inconclusive``), the floor of the geometric mean (``floor``: 1e-5, rec_eval's and trec_eval's
``MIN_GEO_MEAN``) and how GF1 is aggregated (``f1_reading``: Eq. 3 defines F1 per user, so
``per-user``; the other reading, F1 of the aggregated P and Recall, is run alongside). One setting
the paper takes from its tool (§3.2, footnote 2: rec_eval, the authors' fork of trec_eval):
which users' zeros count as what in the geometric mean (``geometric_reading``: rec_eval's, a user
without a hit enters GF1 and GMRR as log 1 = 0, the best score, while the other metrics floor at
1e-5; :mod:`recmetrics.metrics.aggregate`). Chapter 07 decides §7's claims under it and shows
trec_eval's reading alongside. The other measures the chapters take from rec_eval and where rec_eval
differs from trec_eval (ERR's r_max per user, F1 as set_F, GnDCG's ideal over all judgments, infAP
as infAP2 = ``infAP(unjudged=pooled)``) are listed in :mod:`recmetrics.metrics.aggregate`.

Claims (:data:`CLAIMS`), each with the paper's words. Results a check reads:

``dp``, ``dp_se``, ``dp_floor``   Series metric → DP at 100, its Monte Carlo se, the DP at the floor
``robustness``                   :class:`~recmetrics.meta.robustness.Robustness`, arithmetic mean
``robustness_geo``               the same with the geometric mean
``tau``                          τ matrix among the metrics' arithmetic orderings (Fig. 1, §6.1)
``tau_geo``                      τ matrix among the metrics' geometric orderings (Fig. 9)
``mean_tau``                     DataFrame with column ``tau``: τ(arithmetic, geometric) per metric (§7.1)
``f1_reading``                   ``"per-user"`` (default) or ``"aggregate"``: how GF1 was aggregated
``f1_aggregate_results``         the ``tau_geo``/``mean_tau`` of the other reading (optional)
``geometric_reading``            ``"rec_eval"`` (the chapter's) or ``"trec_eval"`` (the default of a
                                 check): which users' zeros count as what in the geometric mean
``other_reading_results``        ``tau_geo``/``mean_tau``/``robustness_geo`` under the other one (optional)
``n_systems``                    number of systems ranked

Example::

    >>> from recmetrics import papers
    >>> p = papers.get("000")
    >>> p.SETUP.folds, p.SETUP.n_permutations, sorted(p.SETUP.robustness_sizes)[:2]
    (5, 100000, ['large-users', 'popular-items'])
"""
from __future__ import annotations

from ..meta.findings import Claim
from ..recommenders import PAPER_SYSTEMS
from .agreement_checks import (geometric_beats_arithmetic, lowest_mean_correlation, lowest_values,
                               under_geometric_reading)
from .checks import dp_best, robustness_among_least, robustness_best, robustness_worst_everywhere
from ..meta.robustness import GRIDS_000, QUICK_GRIDS
from .scenario_checks import (STRONG_TAU, all_of, falls_slowly_linearly, robustness_among_most, robustness_tiers,
                              scenario_below, tau_at_size, tau_pair_at_least)
from .setup import SetUp

__all__ = ["PAPER", "SETUP", "QUICK", "CLAIMS", "METRIC_CLAIMS", "GEOMETRIC_CLAIMS", "CHAPTERS",
           "SCENARIOS", "PAPER_NUMBERS", "notebook_parameters"]

PAPER = "000"
SCENARIOS = ("ratings", "random-items", "popular-items", "random-users", "large-users")

SETUP = SetUp(
    paper=PAPER,
    citation="Valcarce, Bellogín, Parapar, Castells. Assessing ranking metrics in top-N recommendation. "
             "Information Retrieval Journal 23(4), 2020",
    datasets=("movielens-1m", "librarything", "beeradvocate"),
    systems=tuple(PAPER_SYSTEMS),
    split="kfold",
    folds=5,
    cutoffs=(100,),
    threshold=4.0,
    metrics=("P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"),
    robustness_sizes=dict(GRIDS_000),   # one definition: the robustness module's, whose docstring argues it
    n_samples=50,
    n_permutations=100_000,
    aggregates=("arithmetic", "geometric"),
    options={"pool": ("concat", "mean"), "infap": ("pooled",), "floor": (1e-5,), "f1_reading": ("per-user",),
             "geometric_reading": ("rec_eval",)},
    notes={
        "datasets": "§5.1, Table 2",
        "systems": "§5.3: 21 recommenders",
        "split": "§5.1: standard 5-fold cross-validation, random splits",
        "repeats": "§5.1: one cross-validation, drawn once",
        "cutoffs": "§6: 'in the following experiments we use cut-offs of n=100'",
        "threshold": "§3.2: τ = 4",
        "metrics": "§3.2: P, Recall, F1, AP, NDCG, RR, ERR, Bpref, InfAP",
        "infap": "§3.2 and §6.3.1 ('Bpref and InfAP ignore unjudged documents'): infAP(unjudged=pooled), Eq. 11 "
                 "as printed",
        "robustness_sizes": "§4.2.1: 'test sizes starting from 100 to 1%', the same for random items and random "
                            "users (§4.2.2-4.2.3); the step is not stated — the project reads 100, 90, ..., 10, 5, 1%. "
                            "Popular items: no sizes stated; §6.3.2 repeats 003 §7, whose grid is 100% → 80% of the "
                            "items in 1% steps (003 §5), used here. Large users: no sizes stated; 100% → 1% as the "
                            "random users: §6.3.3 finds that 'most metrics fall short in robustness' there, which 003's 100% → 80% grid "
                            "cannot show (mean τ 0.97-1.00 for all nine metrics in benchmarks/bench_robustness.py)",
        "n_samples": "§4.2.1-4.2.2: 50 random samples of each size",
        "n_permutations": "§4.1: 100,000 samples",
        "pool": "not stated: the chapters run concat and mean; a verdict that flips with it is inconclusive",
        "floor": "not stated in the paper; its tool, rec_eval (a trec_eval fork, §3.2 footnote 2), floors at "
                 "MIN_GEO_MEAN = 1e-5 (trec_eval.h)",
        "geometric_reading": "the paper's tool: rec_eval's m_gm_set_F.c and m_gm_recip_rank.c write a value only when "
                             "the user has a hit and trec_eval.c zeroes every measure per user, so a user without a "
                             "hit enters GF1 and GMRR as log 1 = 0; gm_map, gm_set_P, gm_set_recall, gm_ndcg, gm_err, "
                             "gm_bpref and gm_infAP2 floor at 1e-5",
        "f1_reading": "Eq. 3 defines F1 per user and §3.2 averages per-user values: per-user",
    },
    extra={"cutoff": 100},
)

#: numbers the paper reports that the chapters set theirs against (§7.1, MovieLens 1M)
PAPER_NUMBERS = {"tau(F1, GF1)": 0.42, "tau(AP, GAP)": 0.92}

#: the quick profile: the same design with few systems, two folds and thin grids
QUICK = SETUP.replace(
    systems=("Random", "Pop", "ItemKNN", "UserKNN", "PureSVD", "RP3beta"),
    folds=2,
    robustness_sizes=dict(QUICK_GRIDS),
    n_samples=5,
    n_permutations=2000,
)


METRIC_CLAIMS = [
    Claim("mrr-err-differ", PAPER, "MRR and ERR differ noticeably from the rest of the metrics",
          "§6.1, Fig. 1: 'MRR and ERR differ noticeably from the rest of the metrics, especially on MovieLens 1M "
          "and LibraryThing'", lowest_mean_correlation("tau", ["RR", "ERR"], prefix="")),
    Claim("map-ndcg-strong", PAPER, "MAP is strongly correlated with NDCG",
          "§6.1, Fig. 1: 'MAP is strongly correlated with NDCG on the three datasets'",
          tau_pair_at_least("tau", "AP", "nDCG", STRONG_TAU)),
    Claim("dp-ndcg-top", PAPER, "NDCG shows the highest discriminative power",
          "§6.2, Table 3: 'Overall, NDCG shows the highest discriminative power' (first on MovieLens and "
          "LibraryThing, fifth on BeerAdvocate)", dp_best(["nDCG"])),
    Claim("p-most-robust-ratings", PAPER, "Precision, F1 and NDCG show the best robustness to rating sparsity",
          "§6.3.1, Fig. 3: 'Precision, F1, and NDCG show the best robustness trends on the three datasets'",
          robustness_best(["P", "F1", "nDCG"], "ratings")),
    Claim("ratings-half-above-09", PAPER, "Every metric keeps τ above 0.9 with half of the test ratings removed",
          "§6.3.1, Fig. 3: 'all the metrics are fairly robust to random rating sparsity since the correlation is "
          "above 0.9 even when removing half of the test set'", tau_at_size("ratings", 0.5, STRONG_TAU)),
    Claim("p-falls-slowly-linearly", PAPER, "The value of Precision falls slowly and linearly as ratings are removed",
          "§6.3.1, Fig. 4: 'the absolute value of Precision decreases quite slowly and linearly with the amount of "
          "removed ratings, whereas other metrics decrease much faster, and in a sublinear fashion'",
          falls_slowly_linearly(["P"], "ratings")),
    Claim("mrr-err-least-robust", PAPER, "MRR and ERR rank among the least robust metrics",
          "§6.3.1, Fig. 3: 'MRR and ERR are found to rank among the least robust metrics (except in "
          "LibraryThing)'", robustness_among_least(["RR", "ERR"], "ratings")),
    Claim("p-most-robust-popular", PAPER, "Precision is the most robust to removing popular items",
          "§6.3.2, Fig. 6: 'Overall, Precision is the best metric in terms of robustness to popularity'",
          robustness_best(["P"], "popular-items")),
    Claim("mrr-err-worst-popular", PAPER, "MRR and ERR are the least robust to removing popular items",
          "§6.3.2, Fig. 6: '... whereas MRR and ERR are the worst'",
          robustness_worst_everywhere(["RR", "ERR"], ["popular-items"])),
    Claim("items-hurt-more", PAPER, "Removing whole items lowers τ more than removing individual ratings",
          "§6.3.2, Fig. 5 vs Fig. 3: 'the drop in correlation is more pronounced when removing whole items instead "
          "of individual ratings from the test set'", scenario_below("random-items", "ratings")),
    Claim("random-users-smoother", PAPER, "Removing random users lowers τ less than removing ratings or items",
          "§6.3.3, Fig. 7: 'similar results to those obtained when removing random ratings (Fig. 3) and random "
          "items (Fig. 5), but with a much smoother decrease in correlation'",
          all_of(scenario_below("ratings", "random-users"), scenario_below("random-items", "random-users"))),
    Claim("large-users-utility-best", PAPER,
          "When the largest users are removed, MRR and ERR and, to a lesser degree, InfAP and Bpref are the most robust",
          "§6.3.3, Fig. 8: 'MRR, ERR and, to a lesser degree, InfAP and Bpref show the best robustness. In "
          "contrast, metrics such as Precision, F1 or NDCG ... present now lower robustness'",
          robustness_tiers([["RR", "ERR"], ["infAP", "bpref"]], "large-users")),
]

#: §7's metrics but one: a claim's half about GF1 leaves GMRR out of the comparison and vice versa
#: ("... except with each other")
_WITHOUT_RR = tuple(m for m in SETUP.metrics if m != "RR")
_WITHOUT_F1 = tuple(m for m in SETUP.metrics if m != "F1")
_FIG9 = ("§7.1, Fig. 9: 'all the (geometric) metrics are strongly correlated between each other except for GF1 and GMRR, "
         "which tend to obtain low values with respect to any other metric except with each other'")
_TAU71 = ("§7.1: 'most of the metrics show a strong correlation between their arithmetic and geometric variations (... "
          "MAP and GMAP 0.92 in MovieLens) this is not true for GF1 and GMRR (... F1 and GF1 is only 0.42 in MovieLens)'")
_FIGS10_14 = "§7.2, Figs. 10-14: 'In all the scenarios, GF1 and GMRR are now the least robust metrics'"
_TAU_WHAT = "τ between a metric's arithmetic and geometric rankings"

# §7's three GF1/GMRR observations, each split into its GF1 half and its GMRR half. They are decided
# under the reading of the geometric mean the paper's tool, rec_eval, has (SETUP.options
# "geometric_reading"; recmetrics.metrics.aggregate): a user without a hit enters GF1 and GMRR as
# log 1. The GF1 halves are not testable under trec_eval's reading with per-user F1 (GF1 is then GP
# times a constant on every user with a hit); the GMRR halves are testable under either reading.
GEOMETRIC_CLAIMS = [
    Claim("gf1-poor-correlation", PAPER, "GF1 correlates poorly with the other geometric metrics (but GMRR)", _FIG9,
          under_geometric_reading(lowest_mean_correlation("tau_geo", ["F1"], partner=["RR"]), f1=True)),
    Claim("gmrr-poor-correlation", PAPER, "GMRR correlates poorly with the other geometric metrics (but GF1)", _FIG9,
          under_geometric_reading(lowest_mean_correlation("tau_geo", ["RR"], partner=["F1"]))),
    Claim("arith-geo-f1", PAPER, "F1 ranks systems unlike GF1, where the other metrics (but MRR) agree with their "
          "geometric version", _TAU71,
          under_geometric_reading(lowest_values("mean_tau", "tau", ["F1"], _TAU_WHAT, exclude=["RR"]), f1=True)),
    Claim("arith-geo-rr", PAPER, "MRR ranks systems unlike GMRR, where the other metrics (but F1) agree with their "
          "geometric version", _TAU71,
          under_geometric_reading(lowest_values("mean_tau", "tau", ["RR"], _TAU_WHAT, exclude=["F1"]))),
    Claim("gf1-least-robust", PAPER, "GF1 is among the two least robust geometric metrics (with GMRR) in every scenario",
          _FIGS10_14,
          under_geometric_reading(robustness_worst_everywhere(["F1"], SCENARIOS, key="robustness_geo",
                                                              among=_WITHOUT_RR), f1=True)),
    Claim("gmrr-least-robust", PAPER, "GMRR is among the two least robust geometric metrics (with GF1) in every "
          "scenario", _FIGS10_14,
          under_geometric_reading(robustness_worst_everywhere(["RR"], SCENARIOS, key="robustness_geo",
                                                              among=_WITHOUT_F1))),
    Claim("gp-gndcg-robust", PAPER, "GP and GNDCG exhibit good robustness in every scenario but the largest users",
          "§7.2, Figs. 10-13: 'Overall, we can see similar trends in missing ratings, items missing at random and users "
          "missing at random. When removing the most popular items, the correlations quickly drop. Geometric "
          "Precision and GNDCG exhibit good robustness in all those cases'",
          robustness_among_most(["P", "nDCG"], ("ratings", "random-items", "random-users", "popular-items"),
                                key="robustness_geo", label="G")),
    Claim("gp-gndcg-large-users", PAPER, "GP and GNDCG are more robust than P and NDCG when large users are removed",
          "§7.2, Fig. 14 vs Fig. 8: 'GP and GNDCG are more robust than P and NDCG when removing the users with "
          "large user profiles'", geometric_beats_arithmetic(["P", "nDCG"], "large-users")),
]

CLAIMS = METRIC_CLAIMS + GEOMETRIC_CLAIMS
#: the claims each chapter tests
CHAPTERS = {"06_comparing_metrics": METRIC_CLAIMS, "07_arithmetic_vs_geometric": GEOMETRIC_CLAIMS}


def notebook_parameters(profile: str) -> dict[str, dict]:
    """``{notebook stem: {parameter: value}}`` of chapters 06, 07 and 09 (the explorers, on 06's design)
    under ``profile`` (``"paper"``: :data:`SETUP`; ``"quick"``: :data:`QUICK`, the notebooks' own defaults)."""
    from . import _profile

    s = _profile(profile, SETUP, QUICK)
    common = {
        "systems": None if s.systems == SETUP.systems else list(s.systems),
        "split": s.split, "folds": s.folds, "repeats": s.repeats, "metrics": list(s.metrics), "infap": s.options["infap"][0], "cutoff": s.extra["cutoff"],
        "robustness_sizes": {k: list(v) for k, v in s.robustness_sizes.items()},
        "n_samples": s.n_samples, "n_permutations": s.n_permutations, "pools": list(s.options["pool"]),
    }
    geometric = {**common, "floor": s.options["floor"][0], "f1_reading": s.options["f1_reading"][0],
                 "geometric_reading": s.options["geometric_reading"][0]}
    geometric.pop("n_permutations")  # chapter 07 runs no test: DP does not depend on the mean (§7)
    # chapter 09's explorers run chapter 06's design at every cut-off they offer (one fold pooling, chosen there)
    explorers = {k: v for k, v in common.items() if k not in ("cutoff", "pools")}
    return {"06_comparing_metrics": common, "07_arithmetic_vs_geometric": geometric, "09_explorers": explorers}
