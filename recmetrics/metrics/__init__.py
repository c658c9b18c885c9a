"""Metric registry, kernels and aggregation. ``rm.metrics.parse('nDCG@10')``."""
from .registry import MetricDef, MetricSpec, get, names, parse, register, spec, table
from .aggregate import METHODS as AGGREGATIONS, aggregate
from . import ranking, classification, error, diversity, exposure, popularity, ild  # noqa: F401  (each registers its metrics)
from . import trec, rbp  # noqa: F401

__all__ = ["MetricDef", "MetricSpec", "get", "names", "parse", "register", "spec", "table",
           "aggregate", "AGGREGATIONS"]
