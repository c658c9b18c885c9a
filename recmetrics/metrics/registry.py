"""One registry of metrics, and parseable names that round-trip to typed specs.

Grammar: ``NAME[@K][(param=value, ...)]``, e.g. ``P@10``, ``nDCG@100``, ``RR``,
``ab-nDCG@10(alpha=0.005,beta=0.5)``; ir_measures' order ``NAME(param=value)@K`` is read too
(``nDCG(dcg='exp-log2')@10``, ``RBP(rel=2,p=0.9)``), and ranx's ``ndcg_burges@10``, ``rbp.8``. Names are case-insensitive and have aliases
(``MAP`` -> ``AP``, ``MRR`` -> ``RR``); trec_eval names with a cut-off suffix are accepted too
(``P_10``, ``ndcg_cut_10``, ``map_cut_100``, ``recall_5``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import InputError
from ..names import Registry, format_value, parse_params

CUTOFF_MODES = ("required", "optional", "none")
SCOPES = ("user", "run")
BETTER = ("higher", "lower", None)


@dataclass(frozen=True)
class MetricDef:
    """A registered metric: its kernel and what it declares (the fields are :func:`register`'s
    keywords). :func:`get` returns it; :class:`MetricSpec` fixes its cut-off and parameters.

    >>> d = get("nDCG")
    >>> d.cutoff, d.params["gain"], d.bounds, d.better, d.trec_eval
    ('optional', 'grade', (0.0, 1.0), 'higher', 'ndcg_cut_k')
    >>> get("RMSE").better, get("ARP").better
    ('lower', None)
    """

    name: str
    fn: Callable[..., np.ndarray]          # fn(judged, k, **params) -> (n_users,) array
    cutoff: str = "optional"               # "required" | "optional" | "none"
    params: dict = field(default_factory=dict)   # name -> default (its type is the param's type)
    bounds: tuple[float, float] = (0.0, 1.0)
    perfect: float | None = 1.0            # value of a perfect ranking (all judged items by rating, no
                                           # cut-off truncating the relevant ones), if the metric promises one
    description: str = ""
    family: str = "ranking"
    trec_eval: str | None = None           # the trec_eval measure it equals (parity-tested)
    needs: tuple[str, ...] = ()            # context the kernel needs besides the judged matrix, e.g.
                                           # ("aspects",): passed by evaluate(..., **context)
    optional: tuple[str, ...] = ()         # context passed when given (None otherwise); the kernel says
                                           # when its parameters make it necessary (e.g. profile=train)
    needs_any: tuple[str, ...] = ()        # at least one of these context values (each also in optional),
                                           # e.g. ("train", "catalog") for the catalogue of item coverage
    scope: str = "user"                    # "user": one value per user, aggregated over users; "run": one
                                           # value per run (fn returns a float): no per-user column, no
                                           # user aggregation (item coverage, Gini, ...)
    check: Callable[[dict], None] | None = None   # validates the parameters when a spec is parsed (an
                                           # InputError), so a bad value fails before any file is read
    list_only: bool = False                # a description of the list (ARP, APLT, ACLT): undefined (NaN) for
                                           # a user without a list, averaged over the users with one (Elliot,
                                           # RecBole, rectools); False: such a user scores 0 (coverage shortfall)
    better: str | None = "higher"          # which way is better: "higher", "lower" (errors, fallout, miss
                                           # rate, popularity-bias and concentration measures) or None (a
                                           # description: counts, ARP, the judged share); compare's letters
                                           # and winners follow it


@dataclass(frozen=True)
class MetricSpec:
    """A metric with its cut-off and parameters fixed: ``str(spec)`` parses back to ``spec``."""

    name: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def definition(self) -> MetricDef:
        """The registered :class:`MetricDef` of this spec's metric."""
        return _METRICS.entries[self.name.lower()]

    def __str__(self) -> str:
        text = self.name + (f"@{self.k}" if self.k is not None else "")
        defaults = self.definition.params
        shown = [(n, v) for n, v in self.params if v != defaults.get(n)]
        if shown:
            text += "(" + ",".join(f"{n}={format_value(v)}" for n, v in shown) + ")"
        return text

    def __call__(self, judged, **context) -> np.ndarray:
        """Per-user values on ``judged``; ``context`` supplies what the metric ``needs``."""
        d = self.definition
        missing = [n for n in d.needs if context.get(n) is None]
        if missing:
            raise InputError(f"metric {self} needs {', '.join(f'{n}=' for n in missing)} "
                             f"(pass it to evaluate(), e.g. evaluate(run, qrels, metrics, {missing[0]}=...))")
        if d.needs_any and all(context.get(n) is None for n in d.needs_any):
            raise InputError(f"metric {self} needs {' or '.join(f'{n}=' for n in d.needs_any)} "
                             f"(pass one to evaluate(), e.g. evaluate(run, qrels, metrics, {d.needs_any[0]}=...))")
        given = {n: context[n] for n in d.needs}
        given.update({n: context.get(n) for n in d.optional})
        return d.fn(judged, self.k, **dict(self.params), **given)

    @property
    def per_run(self) -> bool:
        """Whether the metric gives one value per run (no per-user values, no user aggregation)."""
        return self.definition.scope == "run"

    @property
    def kwargs(self) -> dict:
        """The parameters as a dict (every parameter, defaults included)."""
        return dict(self.params)


_METRICS = Registry("metric")  # lower-cased name or alias -> MetricDef
# trec_eval measure names that take a "_K" cut-off suffix
_TREC_CUT = {"p": "P", "recall": "Recall", "ndcg_cut": "nDCG", "map_cut": "AP", "f": "F1",
             "infap": "infAP", "bpref": "bpref", "recip_rank": "RR", "success": "success",
             "relative_p": "relative_P", "unj": "unj"}


def register(name: str, *, aliases: tuple[str, ...] = (), **kw) -> Callable:
    """Decorator registering a metric kernel ``fn(judged, k, **params)`` under ``name``.

    ``aliases`` are other names for it; names are case-insensitive and registered once (a taken
    name or alias raises ``ValueError``). The keywords are the :class:`MetricDef` fields:
    ``cutoff`` (``"required"``, ``"optional"`` — the default — or ``"none"``), ``params`` (name ->
    default, whose type is the parameter's type), ``bounds`` (default (0, 1)), ``perfect`` (the
    value of a perfect ranking, default 1), ``family``, ``trec_eval``, ``needs``, ``optional``,
    ``better`` (``"higher"`` — the default —, ``"lower"`` or None for a description), ``check`` (a
    function of the parameters dict raising :class:`~recmetrics.errors.InputError`, run when a spec
    is parsed) and ``description`` (default: the first line of the kernel's docstring).

    >>> import recmetrics as rm
    >>> @register("hits-example", cutoff="required", perfect=None, bounds=(0.0, float("inf")),
    ...           description="Relevant items in the top k.")
    ... def hits(judged, k):
    ...     return judged.n_rel_top(judged.cut(k)).astype(float)
    >>> str(rm.metrics.parse("HITS-example@5")), rm.metrics.get("hits-example").description
    ('hits-example@5', 'Relevant items in the top k.')
    >>> _ = _METRICS.entries.pop("hits-example")  # (keep the registry as it was)
    """

    def deco(fn):
        if kw.get("cutoff", "optional") not in CUTOFF_MODES:
            raise ValueError(f"cutoff must be one of {CUTOFF_MODES}")
        if kw.get("scope", "user") not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}")
        if kw.get("better", "higher") not in BETTER:
            raise ValueError(f"better must be one of {BETTER}")
        description = kw.pop("description", None) or (fn.__doc__ or "").strip().split("\n")[0]
        _METRICS.add(name, MetricDef(name=name, fn=fn, description=description, **kw), aliases)
        return fn

    return deco


def names() -> list[str]:
    """The registered metric names (not their aliases), in registration order.

    >>> import recmetrics as rm
    >>> rm.metrics.names()[:2], "AP" in rm.metrics.names(), "MAP" in rm.metrics.names()
    (['P', 'Recall'], True, False)
    """
    return _METRICS.names()


def get(name: str) -> MetricDef:
    """The :class:`MetricDef` of ``name`` or one of its aliases (case-insensitive).

    An unknown name raises :class:`~recmetrics.errors.UnknownNameError` suggesting the closest.

    >>> import recmetrics as rm
    >>> rm.metrics.get("map").name, rm.metrics.get("MRR").trec_eval
    ('AP', 'recip_rank')
    """
    return _METRICS.get(name)


# ir_measures writes the parameters before the cut-off: nDCG(dcg='exp-log2')@10
_PARAMS_FIRST_RE = re.compile(r"^\s*(?P<name>[A-Za-z][\w\-\.]*?)\s*\((?P<params>.*)\)\s*@(?P<k>[^()\s]+)\s*$")
_SPEC_RE = re.compile(r"^\s*(?P<name>[A-Za-z][\w\-\.]*?)(?:@(?P<k>[^()\s]+))?\s*(?:\((?P<params>.*)\))?\s*$")
# the parameters may also come before the cut-off, ``infAP(unjudged=pooled)@100``: a Study appends
# ``@k`` to the metric names it is given (``str(spec)`` writes them after the cut-off)


# ranx's names whose parameters are part of the name: ndcg_burges@10, rbp.8 (gain = the raw grade)
_RANX_NAMES = {"ndcg_burges": "nDCG(dcg='exp-log2')", "dcg_burges": "DCG(dcg='exp-log2')"}
_RANX_RE = re.compile(r"^\s*(?P<name>ndcg_burges|dcg_burges|rbp\.(?P<p>\d+))(?:@(?P<k>\d+))?\s*$", re.IGNORECASE)


def _ranx_form(text: str) -> str:
    m = _RANX_RE.match(text)
    if not m:
        return text
    name = m.group("name").lower()
    base = f"RBP(p=0.{m.group('p')},gain='grade')" if m.group("p") else _RANX_NAMES[name]
    return base + (f"@{m.group('k')}" if m.group("k") else "")


def parse(text: "str | MetricSpec") -> MetricSpec:
    """Parse ``'nDCG@10'`` (or return a :class:`MetricSpec` unchanged).

    Grammar ``NAME[@K][(param=value,...)]``; names and aliases are case-insensitive, trec_eval
    names with a cut-off suffix are read too (``ndcg_cut_10`` = ``nDCG@10``). The cut-off must be
    a positive integer, required or refused as the metric declares; parameters not written take
    their defaults, and ``str(spec)`` shows only those that differ, so it parses back to ``spec``.

    >>> import recmetrics as rm
    >>> s = rm.metrics.parse("err@20(max_rating=5)")
    >>> str(s), s.k, s.kwargs
    ('ERR@20(max_rating=5)', 20, {'max_rating': 5.0})
    >>> str(rm.metrics.parse("map_cut_100")), rm.metrics.parse(str(s)) == s
    ('AP@100', True)
    """
    if isinstance(text, MetricSpec):
        return text
    if not isinstance(text, str):
        raise InputError(f"a metric name must be a string like 'P@10', got {text!r}")
    text = _ranx_form(text)
    m = _SPEC_RE.match(_PARAMS_FIRST_RE.sub(r"\g<name>@\g<k>(\g<params>)", text))
    if not m:
        raise InputError(f"cannot parse metric {text!r}; expected NAME[@K][(param=value,...)], e.g. 'nDCG@10'")
    name, k_text, ptext = m.group("name"), m.group("k"), m.group("params")
    if k_text is None:
        trec = re.match(r"^(.*?)_(\d+)$", name)
        if trec and trec.group(1).lower() in _TREC_CUT:
            name, k_text = _TREC_CUT[trec.group(1).lower()], trec.group(2)
    d = get(name)
    k = None
    if k_text is not None:
        if d.cutoff == "none":
            raise InputError(f"metric {d.name} takes no cut-off, got {text!r}")
        try:
            k = int(k_text)
        except ValueError:
            raise InputError(f"cut-off in {text!r} must be a positive integer, got {k_text!r}") from None
        if k <= 0:
            raise InputError(f"cut-off in {text!r} must be a positive integer, got {k}")
    elif d.cutoff == "required":
        raise InputError(f"metric {d.name} needs a cut-off, e.g. '{d.name}@10' (got {text!r})")
    params = dict(d.params)
    params.update(parse_params(ptext, d.params, text, d.name))
    if d.check is not None:
        d.check(params)
    return MetricSpec(d.name, k, tuple(sorted(params.items())))


def spec(name: str, k: int | None = None, **params) -> MetricSpec:
    """Build a spec programmatically: ``spec('nDCG', 10)`` (the same checks as :func:`parse`).

    >>> import recmetrics as rm
    >>> str(rm.metrics.spec("nDCG", 10, gain="relevant"))
    "nDCG@10(gain='relevant')"
    """
    text = name + (f"@{k}" if k is not None else "")
    if params:
        text += "(" + ",".join(f"{n}={v}" for n, v in params.items()) + ")"
    return parse(text)


def table():
    """The registered metrics as a DataFrame (name, family, scope, cut-off, parameters, range, trec_eval name, description).

    Columns ``metric, family, scope, cutoff, params, range, better, trec_eval, description``, one row
    per metric in registration order; ``scope`` is ``user`` (one value per user, aggregated over users)
    or ``run`` (one value per run: no per-user column, no user aggregation); ``better`` is
    ``higher``, ``lower`` or empty (a description, no better direction).

    >>> import recmetrics as rm
    >>> t = rm.metrics.table()
    >>> t.loc[t["metric"] == "nDCG", ["cutoff", "trec_eval"]].values.tolist()
    [['optional', 'ndcg_cut_k']]
    """
    return _METRICS.table(lambda d: {
        "metric": d.name, "family": d.family, "scope": d.scope, "cutoff": d.cutoff, "params": d.params or "",
        "range": d.bounds, "better": d.better or "", "trec_eval": d.trec_eval or "", "description": d.description})
