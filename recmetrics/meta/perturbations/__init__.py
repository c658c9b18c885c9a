r"""The perturbation experiments of Parapar & Radlinski (RecSys 2021, Sec. 5), one module per idea.

* :mod:`.ideal` — the ideal ordering of a user's judged items (Sec. 5.1): :func:`ideal_ordering`,
  :class:`IdealOrdering`, :data:`TIE_BREAKS`.
* :mod:`.families` — systems made from the ideal ordering: the perturbation families (level 0 is
  the ideal, larger levels are further from it; :data:`FAMILIES`) ``"swap"`` (Sec. 5.2.1),
  ``"redundancy"`` (Sec. 5.2.2) and ``"aspect"`` (Sec. 5.2.3) — :func:`perturb`,
  :func:`perturbed_runs` — and the random shuffles of Exp. 3 (:func:`shuffled_runs`, as positions in the
  ideal lists :func:`shuffled_order`).
* :mod:`.scoring` — scoring many runs with many metrics (:func:`score_runs`), the scores of every
  level (:func:`run_perturbations` → :class:`PerturbationScores`; :data:`PAPER_LEVELS`,
  :data:`DEFAULT_METRICS`) and Exps. 1-2 on them: :func:`level_means` (Fig. 1),
  :func:`rank_correlation` (Exp. 1: Kendall's τ between each metric's ranking of the levels and
  the true order, Fig. 2), :func:`significance_vs_ideal` (Exp. 2: one-sided Wilcoxon p-value of
  the ideal against each level, Fig. 3) and :func:`pvalue_summary` (the shape of those curves).
* :mod:`.incompleteness` — Exp. 3, robustness to incompleteness (Sec. 5.4):
  :func:`proportional_removal_order` (removal proportional by category), :func:`robustness`
  (αβ-nDCG's τ between the system rankings with the full and with reduced test sets),
  :func:`robustness_by_draw` (both ways of drawing the systems on common removals),
  :func:`robustness_summary` (Fig. 4).
* :mod:`.fixed_lists` — Exp. 3's hot path: the shuffled lists prepared once and scored against
  every reduced test set (``FixedLists``, ``ideal_dcg``), bit-identical to scoring them afresh.

The paper's claims (Table 1, Exps. 1-3) live with its set-up in :mod:`recmetrics.papers.parapar2021`
(``paper_claims``, ``ASPECT_WEIGHTED``, ``SUBTOPIC``): the paper module uses this machinery, never
the reverse.

Every public name is re-exported here (``rm.meta.perturbations.ideal_ordering``, ...), so code and
pickles that name ``recmetrics.meta.perturbations.X`` keep working. Every sampling function takes a
``seed`` (or a ``numpy.random.Generator``).
"""
from __future__ import annotations

from .families import FAMILIES, perturb, perturbed_runs, shuffled_order, shuffled_runs
from .ideal import TIE_BREAKS, IdealOrdering, ideal_ordering
from .incompleteness import SYSTEM_DRAWS, proportional_removal_order, robustness, robustness_by_draw, robustness_summary
from .scoring import (DEFAULT_METRICS, PAPER_LEVELS, PerturbationScores, level_means, pvalue_summary,
                      rank_correlation, run_perturbations, score_runs, significance_vs_ideal)

__all__ = ["FAMILIES", "TIE_BREAKS", "PAPER_LEVELS", "DEFAULT_METRICS", "IdealOrdering", "ideal_ordering",
           "perturb", "perturbed_runs", "shuffled_order", "score_runs", "PerturbationScores", "run_perturbations",
           "rank_correlation", "significance_vs_ideal", "pvalue_summary", "level_means", "shuffled_runs",
           "proportional_removal_order", "robustness", "robustness_by_draw", "robustness_summary", "SYSTEM_DRAWS"]
