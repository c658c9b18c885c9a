"""The claims of Parapar & Radlinski (RecSys 2021): moved to :mod:`recmetrics.papers.parapar2021`.

This module re-exports the names older code imports from here (``paper_claims``,
``ASPECT_WEIGHTED``, ``SUBTOPIC``); the paper's set-up, its claims and their checks live in the
paper's module.
"""
from __future__ import annotations

from ...papers.parapar2021 import ASPECT_WEIGHTED, SUBTOPIC, paper_claims  # noqa: F401

__all__ = ["ASPECT_WEIGHTED", "SUBTOPIC", "paper_claims"]
