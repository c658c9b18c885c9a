"""Moved: the claims of papers 003 and 000 live in :mod:`recmetrics.papers` (one module per paper,
beside its experimental set-up). This module re-exports them under their old names.

* ``CUTOFF_CLAIMS`` — :data:`recmetrics.papers.valcarce2018.CUTOFF_CLAIMS` (paper 003, chapter 05)
* ``METRIC_CLAIMS``, ``GEOMETRIC_CLAIMS`` — :mod:`recmetrics.papers.valcarce2020` (paper 000,
  chapters 06 and 07)
* ``dp_summary``, ``robustness_scores`` — :mod:`recmetrics.papers.tables`
* ``MIN_SYSTEMS`` — :data:`recmetrics.papers.checks.MIN_SYSTEMS`
"""
from __future__ import annotations

from ..papers.checks import MIN_SYSTEMS
from ..papers.tables import dp_summary, robustness_scores
from ..papers.valcarce2018 import CUTOFF_CLAIMS
from ..papers.valcarce2020 import GEOMETRIC_CLAIMS, METRIC_CLAIMS

__all__ = ["MIN_SYSTEMS", "CUTOFF_CLAIMS", "METRIC_CLAIMS", "GEOMETRIC_CLAIMS", "robustness_scores", "dp_summary"]
