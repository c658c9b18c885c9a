"""Recommender zoo: ``rm.recommenders.create("Pop").fit(train).recommend(users, n=100)``.

:data:`ZOO` lists every system (the 21 recommenders of paper 000, §5.3, in
:data:`PAPER_SYSTEMS`, plus the common references UserKNN, ItemKNN, EASE and RP3beta), :data:`FAMILIES` maps each to its algorithm family and
:func:`zoo` tabulates them with their implementation source and reference.

Modules by family: :mod:`.baseline` (Random, Pop), :mod:`.neighbourhood` (kNN, NNCosNgbr,
LM-WSR), :mod:`.relevance` (Rocchio/RSV/CHI2/KLD, RM1/RM2, UIR-Item), :mod:`.linear` (EASE, SLIM),
:mod:`.graph` (HT, RP3beta), :mod:`.factorization` (SVD, PureSVD, WRMF, BPRMF), :mod:`.topic`
(pLSA, LDA). Heavy back-ends (``implicit``, ``scikit-learn``) are imported when a model is fitted.
"""
import re

from .registry import create, get, names, register, table
from .base import Recommender
from . import baseline  # noqa: F401  (registers Random, Pop)
from . import neighbourhood, relevance, linear, graph, factorization, topic  # noqa: F401  (register the zoo)

__all__ = ["Recommender", "create", "get", "names", "register", "table", "ZOO", "PAPER_SYSTEMS", "FAMILIES", "zoo"]

#: The systems compared by the analyses (spec strings for :func:`create`), in display order.
ZOO: list[str] = [
    "Random",
    "Pop",
    "UserKNN",
    "ItemKNN",
    "NNCosNgbr-UB",
    "NNCosNgbr-IB",
    "LM-WSR-UB",
    "LM-WSR-IB",
    "Rocchio",
    "RSV",
    "CHI2",
    "KLD",
    "RM1",
    "RM2",
    "EASE",
    "SLIM",
    "HT",
    "RP3beta",
    "SVD",
    "PureSVD",
    "WRMF",
    "BPRMF",
    "pLSA",
    "LDA",
    "UIR-Item",
]

#: The 21 systems of paper 000 (Valcarce et al., IRJ 2020, §5.3), in the paper's order, as the
#: meta-evaluation studies use them (the zoo's extra references UserKNN, ItemKNN, EASE and
#: RP3beta are not among them).
PAPER_SYSTEMS: list[str] = [
    "Random", "Pop",
    "CHI2", "KLD", "RSV", "Rocchio",
    "RM1", "RM2",
    "LM-WSR-UB", "LM-WSR-IB",
    "NNCosNgbr-UB", "NNCosNgbr-IB",
    "SLIM", "HT",
    "SVD", "PureSVD", "BPRMF", "WRMF",
    "LDA", "pLSA", "UIR-Item",
]

_NON_PERSONALISED = {"Random": "non-personalised (random)", "Pop": "non-personalised (popularity)"}


def _family(spec: str) -> str:
    rec = create(spec)
    return _NON_PERSONALISED.get(type(rec).name, getattr(rec, "family", "other"))


#: Zoo system name -> algorithm family.
FAMILIES: dict[str, str] = {spec: _family(spec) for spec in ZOO}


def rst_to_markdown(text: str) -> str:
    """Inline reStructuredText of a docstring as Markdown: ````x```` -> ```x```, ``:meth:`f``` -> ```f()```,
    other roles (``:class:`C```) -> ```C```; the zoo table shows docstrings and must not show raw RST."""
    text = re.sub(r":meth:`~?([^`]+)`", r"`\1()`", text)
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def zoo(systems=None):
    """The zoo (or the given specs) as a table: system, family, source (library or closed form),
    reference, description."""
    import pandas as pd

    rows = []
    for spec in (ZOO if systems is None else systems):
        rec = create(spec)
        cls = type(rec)
        rows.append({
            "system": rec.name,
            "family": _NON_PERSONALISED.get(cls.name, getattr(cls, "family", "other")),
            "source": getattr(cls, "source", "numpy"),
            "reference": getattr(cls, "reference", ""),
            "description": rst_to_markdown(" ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())),
        })
    return pd.DataFrame(rows)
