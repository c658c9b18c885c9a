"""Meta-evaluation: one module per question.

``significance`` (paired tests, corrections, effect sizes), ``discriminative`` (discriminative
power from one shared sign matrix), ``compare`` (ranx-style comparison tables), ``agreement``
(Kendall's τ, τ_ap), ``robustness`` (incompleteness scenarios), ``perturbations`` (the diversity
experiments), ``axioms`` (executable axioms of diversity metrics), ``guidelines`` (Schröder et
al.'s toy cases and metric-choice rules), ``findings`` (the one verdict rule every paper's claims go
through). The papers' claims live with their set-ups in :mod:`recmetrics.papers` (a paper module
uses this machinery, never the reverse).
Submodules load on first use; the common helpers are re-exported here.
"""
from __future__ import annotations

import importlib

_LAZY = {
    "wilcoxon": "significance", "paired_t": "significance", "paired_test": "significance",
    "paired_pvalues": "significance", "kendall_tau": "agreement",
    "system_ranking_tau": "agreement", "ranking_taus": "agreement", "tau_ap": "agreement",
    "agreement_matrix": "agreement",
    "discriminative_power": "discriminative", "DiscriminativePower": "discriminative",
    "sign_flip_pvalues": "discriminative",
    "permutation_test": "significance", "paired_bootstrap": "significance", "tukey_hsd": "significance",
    "correct": "significance", "effect_size": "significance", "pairwise": "significance",
    "Comparison": "compare",
}
_SUBMODULES = ("significance", "discriminative", "compare", "agreement", "robustness", "perturbations",
               "axioms", "guidelines", "findings", "firmness", "advice")
# rm.meta.compare is the module (importing a submodule rebinds the package attribute, so a function of
# the same name could not stay exported): call rm.meta.compare.compare(...)

__all__ = sorted(_LAZY) + list(_SUBMODULES)


def __getattr__(name: str):
    if name in _SUBMODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
