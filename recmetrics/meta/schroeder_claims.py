"""Claims of paper 001 (Schröder, Thiele & Lehner 2011): moved to :mod:`recmetrics.papers.schroeder2011`.

This module re-exports the names chapter 04 and older code import from here; the paper's set-up,
its claims and their checks live in the paper's module.
"""
from __future__ import annotations

from ..papers.schroeder2011 import (CATALOGUE_CLAIMS, CLAIMS, CORRELATION_THRESHOLD, IDENTITIES,  # noqa: F401
                                    IDENTITY_TOLERANCE, PAPER, TOY_CLAIMS, figure_series)

__all__ = ["PAPER", "IDENTITY_TOLERANCE", "CORRELATION_THRESHOLD", "TOY_CLAIMS", "CATALOGUE_CLAIMS", "CLAIMS",
           "IDENTITIES", "figure_series"]
