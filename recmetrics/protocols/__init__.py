"""Evaluation designs and popularity bias (paper 004: Bellogín's thesis ch. 4, §4.3-4.6).

``parse`` designs (AI/TI × AR/1R × AN/NN, P1R, U1R, UAR, head10), ``evaluate`` a fitted system under
one, the neutralising ``uniform_split``, and the analytic expectations and bounds.
"""
from .designs import BASE_NAMES, NAMES, Design, parse
from .targets import ProtocolResult, TargetSets, build_targets, candidates, evaluate, popularity, rank_sets, score_sets
from .expectations import eq42_bounds, expected_random_precision, sigma_delta, uniform_split

__all__ = ["BASE_NAMES", "NAMES", "Design", "parse", "ProtocolResult", "TargetSets", "build_targets", "candidates",
           "evaluate", "popularity", "rank_sets", "score_sets", "eq42_bounds", "expected_random_precision",
           "sigma_delta", "uniform_split"]
