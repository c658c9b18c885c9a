"""Table 1 of Parapar & Radlinski (RecSys 2021): every axiom on every metric, and the paper's table.

:func:`evaluate` checks every axiom on every metric and returns an :class:`AxiomReport` (every
result with its example; ``.table`` the satisfaction matrix, ``.symbols()`` in the paper's ● / ○ (with (●) where a search
found no counterexample, which is not a proof), ``.bases()`` what each verdict rests on,
``.compare()`` the cells that disagree with the paper); :func:`table` is the matrix alone.
``PAPER_TABLE1`` is the paper's Table 1 keyed by our registry names, ``PAPER_METRICS`` its metrics
with the paper's settings, ``ACCURACY_METRICS`` plain accuracy metrics checked for the record.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import pandas as pd

from ...metrics.registry import MetricSpec
from .checkers import AxiomResult, scoring_together
from .definitions import AXIOMS, _axiom_name, _spec, check

#: the paper's Table 1 (True = satisfied), keyed by our registry names
PAPER_TABLE1 = {
    "a-nDCG": dict(Pri=True, Deep=True, NonPriSatAsp=True, TopHeav=True, TopHeavComp=True,
                   AspRel=False, MoreAsp=False, MissOverNon=False),
    "S-Recall": {a: False for a in AXIOMS},
    "S-RR": {a: False for a in AXIOMS},
    "NRBP": dict(Pri=True, Deep=True, NonPriSatAsp=True, TopHeav=True, TopHeavComp=True,
                 AspRel=False, MoreAsp=False, MissOverNon=False),
    "EU": dict({a: True for a in AXIOMS}, MissOverNon=False),
    "RBU": dict({a: True for a in AXIOMS}, MissOverNon=False),
    "ab-nDCG": {a: True for a in AXIOMS},
}
#: the symbol of each basis of a verdict (:attr:`AxiomResult.basis`) in :meth:`AxiomReport.symbols`
SYMBOLS = {"counterexample": "○", "witness": "●", "search": "(●)", "not applicable": "–"}
#: the metrics of Table 1 with the paper's settings (cut-off 10 where the paper writes @k)
PAPER_METRICS = ("a-nDCG@10", "S-Recall@10", "S-RR", "NRBP", "EU", "RBU@10", "ab-nDCG@10")
#: plain accuracy metrics, checked "for the record"
ACCURACY_METRICS = ("P@10", "nDCG@10", "AP@10", "RR@10", "ERR@10")

__all__ = ["PAPER_TABLE1", "SYMBOLS", "PAPER_METRICS", "ACCURACY_METRICS", "AxiomReport", "evaluate", "table"]


@dataclass
class AxiomReport:
    """Every (metric, axiom) result; ``table`` is the satisfaction matrix.

    ``results``: (metric, axiom) -> :class:`AxiomResult` (metric as the canonical spec string);
    ``metrics`` and ``axioms``: the rows and columns, in the order asked.

    >>> rep = evaluate(["ab-nDCG@10", "S-RR"], ["TopHeav", "TopHeavComp"])
    >>> rep.symbols()  # doctest: +NORMALIZE_WHITESPACE
               TopHeav TopHeavComp
    metric
    ab-nDCG@10       ●           ●
    S-RR             ○           ○
    >>> rep.result("s-rr", "topheav").satisfied
    False
    """

    results: dict = field(default_factory=dict)     # (metric, axiom) -> AxiomResult
    metrics: list = field(default_factory=list)
    axioms: list = field(default_factory=list)

    @property
    def table(self) -> pd.DataFrame:
        """Metrics x axioms: True (satisfied), False (violated), None (not applicable)."""
        data = [[self.results[(m, a)].satisfied for a in self.axioms] for m in self.metrics]
        return pd.DataFrame(data, index=pd.Index(self.metrics, name="metric"), columns=self.axioms, dtype=object)

    def bases(self) -> pd.DataFrame:
        """Metrics x axioms: what each verdict rests on (:attr:`AxiomResult.basis`: ``counterexample``,
        ``witness``, ``search`` or ``not applicable``)."""
        data = [[self.results[(m, a)].basis for a in self.axioms] for m in self.metrics]
        return pd.DataFrame(data, index=pd.Index(self.metrics, name="metric"), columns=self.axioms)

    def symbols(self) -> pd.DataFrame:
        """The table in the paper's symbols: ○ violated (a counterexample), ● satisfied (a witness of
        an existential axiom), (●) no counterexample found by the search of a universal axiom (not a
        proof; see :data:`SYMBOLS`), – not applicable."""
        return self.bases().map(SYMBOLS.get)

    def result(self, metric, axiom: str) -> AxiomResult:
        """The :class:`AxiomResult` of one cell (any spelling of the metric; axiom case-insensitive)."""
        return self.results[(str(_spec(metric)), _axiom_name(axiom))]

    def examples(self) -> pd.DataFrame:
        """One row per (metric, axiom): outcome, its basis and wording, expectation, scores and the example's note."""
        rows = []
        for (m, a), r in self.results.items():
            ex = r.example
            rows.append({"metric": m, "axiom": a, "satisfied": r.satisfied, "basis": r.basis, "verdict": r.verdict,
                         "quantifier": r.quantifier,
                         "cases": r.cases, "expectation": ex.expectation if ex else "",
                         "scores": ({k: round(v, 6) for k, v in ex.scores.items()} if ex else {}),
                         "example": ex.note if ex else r.message})
        return pd.DataFrame(rows)

    def compare(self, paper: Mapping = PAPER_TABLE1) -> pd.DataFrame:
        """(metric, axiom) cells where our result and the paper's Table 1 disagree.

        ``paper``: metric name (without parameters) -> axiom -> bool, default
        :data:`PAPER_TABLE1`; metrics it does not list and checks that do not apply are skipped.
        Columns: metric, axiom, paper, measured, example (the full counterexample or witness).
        """
        rows = []
        for (m, a), r in self.results.items():
            name = _spec(m).name
            if name in paper and a in paper[name] and r.satisfied is not None and paper[name][a] != r.satisfied:
                rows.append({"metric": m, "axiom": a, "paper": paper[name][a], "measured": r.satisfied,
                             "example": str(r.example) if r.example else r.message})
        return pd.DataFrame(rows, columns=["metric", "axiom", "paper", "measured", "example"])


def evaluate(metrics: Iterable = PAPER_METRICS, axioms: Iterable[str] = AXIOMS, *, max_examples: int = 100,
             seed: int = 0, zero_weights: bool = False, progress: Callable | None = None,
             r_quantifier: str = "exists", n_counterexamples: int = 5) -> AxiomReport:
    """Check every axiom on every metric (Parapar & Radlinski 2021, Table 1).

    ``metrics``: names or specs (one name alone is allowed), default :data:`PAPER_METRICS`;
    ``axioms``: names of :data:`AXIOMS` (case-insensitive), default all eight. The other options
    go to :func:`check` (``max_examples=100``, ``seed=0``, ``zero_weights=False``,
    ``r_quantifier="exists"``, ``n_counterexamples=5``); ``progress(metric, axiom)`` is called
    before each check. Unknown names raise :class:`~recmetrics.errors.UnknownNameError`.

    >>> rep = evaluate("NRBP", ["TopHeav", "Pri"], max_examples=20)
    >>> rep.table  # doctest: +NORMALIZE_WHITESPACE
           TopHeav   Pri
    metric
    NRBP      True  True
    """
    specs = [_spec(m) for m in ([metrics] if isinstance(metrics, (str, MetricSpec)) else metrics)]
    names = [_axiom_name(a) for a in axioms]
    report = AxiomReport(metrics=[str(s) for s in specs], axioms=names)
    with scoring_together(specs):   # a scene is scored once for every metric (the same values)
        for s in specs:
            for a in names:
                if progress is not None:
                    progress(str(s), a)
                report.results[(str(s), a)] = check(a, s, max_examples=max_examples, seed=seed,
                                                    zero_weights=zero_weights, r_quantifier=r_quantifier,
                                                    n_counterexamples=n_counterexamples)
    return report


def table(metrics: Iterable = PAPER_METRICS, axioms: Iterable[str] = AXIOMS, **kw) -> pd.DataFrame:
    """The satisfaction matrix (metrics x axioms, True/False/None); see :func:`evaluate`.

    The paper's Table 1 with our checks: ``table()`` checks :data:`PAPER_METRICS` on all eight
    axioms; keyword arguments go to :func:`evaluate`.

    >>> table(["ab-nDCG@10", "S-RR"], ["TopHeav"])  # doctest: +NORMALIZE_WHITESPACE
               TopHeav
    metric
    ab-nDCG@10    True
    S-RR         False
    """
    return evaluate(metrics, axioms, **kw).table
