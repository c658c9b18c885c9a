"""The smallest settings every chapter of the main book accepts (quick profile otherwise).

They reach every code path the quick profile's defaults reach: every chapter runs every section, and
the book keeps the same claims, each making the same kinds of comparisons (only fewer replicates,
permutations, samples and bootstrap draws behind each number).
"""
from __future__ import annotations

#: ``-p`` overrides of the quick profile (``recmetrics report -p NAME=VALUE``)
SMALL_OVERRIDES = {"replicates": 3, "n_permutations": 500, "n_samples": 2, "n_bootstrap": 50}
#: the same, as command-line arguments
SMALL = [arg for name, value in SMALL_OVERRIDES.items() for arg in ("-p", f"{name}={value}")]
#: of the own-runs book
SMALL_RUNS = ["-p", "n_permutations=200", "-p", "n_samples=2"]
