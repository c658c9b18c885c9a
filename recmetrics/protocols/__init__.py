"""Evaluation designs and popularity bias (paper 004: Bellogín's thesis ch. 4, §4.3-4.6).

``parse`` designs (AI/TI × AR/1R × AN/NN, P1R, U1R, UAR, AI-UAR, head10), ``evaluate`` a fitted system
under one, the neutralising ``uniform_split``, the analytic expectations and bounds, and
(:mod:`~recmetrics.protocols.uncertainty`) the bootstrap over users that gives every result its
standard error. The thesis' set-up and claims live in :mod:`recmetrics.papers.bellogin2012`.
"""
from .designs import BASE_NAMES, DEFAULT_N, NAMES, POPULARITY, Design, parse
from .targets import (ProtocolResult, ShortPoolWarning, TargetSets, build_targets, candidates, evaluate, percentiles,
                      popularity, rank_sets, score_sets)
from .expectations import (eq42_bounds, expected_random_precision, random_precision_per_set,
                           random_precision_variance_per_set, sigma_delta, uniform_size, uniform_split)

__all__ = ["BASE_NAMES", "DEFAULT_N", "NAMES", "POPULARITY", "Design", "parse", "ProtocolResult", "ShortPoolWarning",
           "TargetSets",
           "build_targets", "candidates", "evaluate", "percentiles", "popularity", "rank_sets", "score_sets",
           "eq42_bounds", "expected_random_precision", "random_precision_per_set",
           "random_precision_variance_per_set", "sigma_delta", "uniform_size",
           "uniform_split"]
