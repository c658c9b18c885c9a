"""Recommender zoo: ``rm.recommenders.create("Pop").fit(train).recommend(users, n=100)``."""
from .registry import create, get, names, register, table
from .base import Recommender
from . import baseline  # noqa: F401  (registers Random, Pop)

__all__ = ["Recommender", "create", "get", "names", "register", "table"]
