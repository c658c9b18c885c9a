"""Metric registry, kernels and aggregation. ``rm.metrics.parse('nDCG@10')``."""
from .registry import MetricDef, MetricSpec, get, names, parse, register, spec, table
from .aggregate import METHODS as AGGREGATIONS, aggregate
from . import ranking  # noqa: F401  (registers the ranking metrics)

__all__ = ["MetricDef", "MetricSpec", "get", "names", "parse", "register", "spec", "table",
           "aggregate", "AGGREGATIONS"]
