"""trec_eval's measures by their trec_eval names: parameters, summaries and output lines.

``recmetrics evaluate --format trec`` prints what ``trec_eval`` 10.0 prints. This module holds
what that takes besides the metric kernels: the catalogue of trec_eval's measures in the order it
prints them (``measures.c``), each with the recmetrics metric it is computed by, the form of its
``-m name.params`` parameters, its default parameters, its summary rule and whether it is printed
per query; the nicknames (``official``, ``set``, ``all_trec``); and the expansion of ``-m`` values
into output columns.

Parameter forms (trec_eval's ``meas_init.c``):

* ``long_cuts``: integer cut-offs, sorted, each its own line ``P_5``; duplicates are an error;
* ``double_cuts``: real cut-offs, sorted, printed ``%3.2f`` (``iprec_at_recall_0.10``);
* ``doubles``: real parameters of one value (``utility.1,-1,0,0``), printed ``utility_1,-1,0,0``;
* ``pairs``: ``name=value`` pairs (``rbp.p=0.8``, ``G.1=2,2=5``), printed ``rbp_p=0.8``.

As in trec_eval a measure is computed once: ``-m P.5 -m P.10`` prints only ``P_5`` (the first
parameters given for a measure win, even after ``all_trec``). Summaries: the mean over the
queries (added in qid order, as trec_eval adds them), the sum for the counts (``num_ret``,
``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``), the geometric mean of values floored at
1e-5 for ``gm_map`` and ``gm_bpref`` (summary only), none for ``relstring`` (per query only), the
run's tag (of the file's last line) for ``runid`` (summary only).
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import RecmetricsError

MIN_GEO_MEAN = 1e-5  # trec_eval's floor of gm_map / gm_bpref


class TrecSyntaxError(RecmetricsError):
    """A ``-m`` value that trec_eval's syntax does not allow (exit status 2 on the command line)."""


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure. ``metric`` is the recmetrics metric, with ``{}`` where each parameter
    goes (None: not a per-user metric: num_q, runid, relstring)."""

    name: str
    metric: str | None
    kind: str = "single"            # single | long_cuts | double_cuts | doubles | pairs
    default: tuple = ()
    summary: str = "mean"           # mean | sum | geometric | none | run
    per_query: bool = True
    integer: bool = False


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# in trec_eval's order (measures.c), which is the order of its output
CATALOGUE = (
    TrecMeasure("runid", None, summary="run", per_query=False),
    TrecMeasure("num_q", None, summary="count", per_query=False, integer=True),
    TrecMeasure("num_ret", "num_ret", summary="sum", integer=True),
    TrecMeasure("num_rel", "num_rel", summary="sum", integer=True),
    TrecMeasure("num_rel_ret", "num_rel_ret", summary="sum", integer=True),
    TrecMeasure("map", "AP"),
    TrecMeasure("gm_map", "AP", summary="geometric", per_query=False),
    TrecMeasure("Rprec", "Rprec"),
    TrecMeasure("bpref", "bpref"),
    TrecMeasure("recip_rank", "RR"),
    TrecMeasure("iprec_at_recall", "IPrec(recall={})", "double_cuts", _RECALL),
    TrecMeasure("P", "P@{}", "long_cuts", _CUTS),
    TrecMeasure("relstring", None, "doubles", (10,), summary="none"),
    TrecMeasure("recall", "Recall@{}", "long_cuts", _CUTS),
    TrecMeasure("infAP", "infAP"),
    TrecMeasure("gm_bpref", "bpref", summary="geometric", per_query=False),
    TrecMeasure("Rprec_mult", "Rprec_mult(mult={})", "double_cuts", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TrecMeasure("utility", "utility", "doubles", (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", "IPrec_avg", "doubles", _RECALL),
    TrecMeasure("binG", "binG"),
    TrecMeasure("G", "G", "pairs"),
    TrecMeasure("dcg", "DCG", "pairs"),
    TrecMeasure("ndcg", "nDCG", "pairs"),
    TrecMeasure("ndcg_rel", "nDCG_rel", "pairs"),
    TrecMeasure("Rndcg", "Rndcg", "pairs"),
    TrecMeasure("ndcg_cut", "nDCG@{}", "long_cuts", _CUTS),
    TrecMeasure("map_cut", "AP@{}", "long_cuts", _CUTS),
    TrecMeasure("relative_P", "relative_P@{}", "long_cuts", _CUTS),
    TrecMeasure("success", "success@{}", "long_cuts", (1, 5, 10)),
    TrecMeasure("set_P", "set_P"),
    TrecMeasure("set_relative_P", "set_relative_P"),
    TrecMeasure("set_recall", "set_recall"),
    TrecMeasure("set_map", "set_map"),
    TrecMeasure("set_F", "set_F", "doubles", (1.0,)),
    TrecMeasure("num_nonrel_judged_ret", "num_nonrel_judged_ret", summary="sum", integer=True),
    TrecMeasure("rbp", "RBP(p=0.9)", "pairs"),
    TrecMeasure("rbp_resid", "RBP_resid(p=0.9,zero_when_judged=true)", "pairs"),
    TrecMeasure("unj", "unj@{}", "long_cuts", (5, 10, 20)),
)
TREC_MEASURES = {m.name: m for m in CATALOGUE}
ORDER = {m.name: i for i, m in enumerate(CATALOGUE)}

# trec_eval's nicknames (measures.c); the output order is the catalogue's whatever the nickname's
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}


@dataclass(frozen=True)
class Column:
    """One output column: a recmetrics metric (None for num_q / runid / relstring) printed under
    ``trec`` (None: under its recmetrics name) with ``summary`` rule."""

    metric: str | None
    trec: str | None = None
    summary: str = "mean"
    per_query: bool = True
    integer: bool = False
    special: str | None = None      # num_q | runid | relstring
    arg: object = None              # relstring: its length; -c overrides: the measure's parameters
    order: int = len(CATALOGUE)     # position in trec_eval's output


def is_trec_token(word: str) -> bool:
    """Whether ``word`` is trec_eval's syntax (``P.5,10``, ``ndcg``, ``all_trec``); ranx's ``rbp.8``
    (persistence 0.8, gain = grade) is recmetrics' name, not trec_eval's ``rbp.p=0.8``."""
    import re

    base = word.partition(".")[0]
    if re.fullmatch(r"rbp\.\d+(@\d+)?", word, re.IGNORECASE):
        return False
    return (base in TREC_MEASURES or word in NICKNAMES) and "@" not in word and "(" not in word


LONG_MAX = 2**63 - 1  # trec_eval's cut-offs are C longs


def _long_cuts(word: str, text: str) -> tuple[int, ...]:
    try:
        cuts = sorted(int(c) for c in text.split(","))
    except ValueError:
        raise TrecSyntaxError(f"cut-offs in {word!r} must be integers, e.g. {word.partition('.')[0]}.5,10") from None
    if cuts[0] <= 0:
        raise TrecSyntaxError(f"cut-offs in {word!r} must be positive, got {cuts[0]}")
    if cuts[-1] > LONG_MAX:
        raise TrecSyntaxError(f"cut-off {cuts[-1]} in {word!r} is beyond trec_eval's largest (2^63 - 1 = {LONG_MAX})")
    if len(set(cuts)) < len(cuts):
        raise TrecSyntaxError(f"duplicate cut-offs in {word!r}")
    return tuple(cuts)


def _finite(word: str, text: str, value: float) -> float:
    import math

    if not math.isfinite(value):
        raise TrecSyntaxError(f"measure {word!r}: parameter {text.strip()!r} must be a finite number")
    return value


def _doubles(word: str, text: str, sort: bool) -> tuple[float, ...]:
    try:
        values = [_finite(word, c, float(c)) for c in text.split(",")]
    except ValueError:
        raise TrecSyntaxError(f"parameters in {word!r} must be numbers separated by ',' "
                              f"(e.g. {word.partition('.')[0]}.0.2,0.5)") from None
    if sort:
        values.sort()
        if len(set(values)) < len(values):
            raise TrecSyntaxError(f"duplicate cut-offs in {word!r}")
    return tuple(values)


def _in_range(word: str, what: str, values, low: float, high: float = float("inf"), low_open: bool = False) -> None:
    """Each of ``values`` within [low, high] (``low_open``: (low, high]), else one line naming the measure."""
    for v in values:
        if v < low or v > high or (low_open and v == low):
            bound = f"{'(' if low_open else '['}{_num(low)}, {_num(high) if high != float('inf') else 'inf'}]"
            raise TrecSyntaxError(f"measure {word!r}: {what} {_num(v)} is outside {bound}")


def _pairs(word: str, text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            eq = ""
        if not eq or not name.strip():
            raise TrecSyntaxError(f"parameters in {word!r} must be name=value pairs separated by ',' "
                                  f"(e.g. rbp.p=0.8, G.1=2,2=5)")
        _finite(word, part, number)
        if name.strip() in out:
            raise TrecSyntaxError(f"measure {word!r}: parameter {name.strip()!r} is given twice; give it once")
        out[name.strip()] = number
    return out


def _num(x: float) -> str:
    return repr(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def _gains_text(word: str, pairs: dict[str, float], allowed: tuple[str, ...] = ()) -> tuple[str, dict]:
    levels, other = [], {}
    for name, value in pairs.items():
        if name in allowed:
            other[name] = value
            continue
        try:
            level = int(name)
        except ValueError:
            raise TrecSyntaxError(f"unknown parameter {name!r} in {word!r}: expected "
                                  f"{' or '.join(repr(a) for a in allowed) + ' or ' if allowed else ''}"
                                  f"grade=gain pairs (e.g. 1=2,2=5)") from None
        if level < 0:
            raise TrecSyntaxError(f"grade {level} in {word!r}: gains are given for grades >= 0")
        levels.append(f"{level}={_num(value)}")
    return ";".join(levels), other


def _columns(m: TrecMeasure, word: str | None, params: str | None) -> list[Column]:
    """The output columns of measure ``m`` with its ``-m`` parameters (None: the defaults)."""
    common = dict(summary=m.summary, per_query=m.per_query, integer=m.integer, order=ORDER[m.name])
    if m.name in ("num_q", "runid"):
        if params is not None:
            raise TrecSyntaxError(f"measure {m.name!r} takes no parameter (got {word!r})")
        return [Column(None, m.name, special=m.name, **common)]
    if m.kind == "single":
        if params is not None:
            raise TrecSyntaxError(f"measure {m.name!r} takes no parameter (got {word!r})")
        return [Column(m.metric, m.name, **common)]
    if m.kind == "long_cuts":
        cuts = m.default if params is None else _long_cuts(word, params)
        return [Column(m.metric.format(c), f"{m.name}_{c}", **common) for c in cuts]
    if m.kind == "double_cuts":
        cuts = m.default if params is None else _doubles(word, params, sort=True)
        if m.name == "iprec_at_recall":
            _in_range(word, "recall level", cuts, 0.0, 1.0)
        else:
            _in_range(word, "multiple of R", cuts, 0.0, low_open=True)
        return [Column(m.metric.format(_num(c)), f"{m.name}_{c:3.2f}", **common) for c in cuts]
    name = m.name if params is None else f"{m.name}_{params}"
    if m.kind == "doubles":
        values = m.default if params is None else _doubles(word, params, sort=False)
        if m.name == "relstring":
            if len(values) != 1 or values[0] < 0 or values[0] != int(values[0]):
                raise TrecSyntaxError(f"measure {word!r}: relstring takes one length, an integer >= 0")
            return [Column(None, name, special="relstring", arg=int(values[0]), **common)]
        if m.name == "utility":
            if len(values) != 4:
                raise TrecSyntaxError(f"utility takes 4 coefficients (relevant retrieved, non-relevant "
                                      f"retrieved, relevant missed, non-relevant missed), got {word!r}")
            a, b, c, d = values
            metric = f"utility(rel_ret={_num(a)},nonrel_ret={_num(b)},rel_missed={_num(c)},nonrel_missed={_num(d)})"
            return [Column(metric, name, arg=values if params is not None else None, **common)]
        if m.name == "11pt_avg":
            _in_range(word, "recall level", values, 0.0, 1.0)
            pts = ";".join(_num(v) for v in values)
            return [Column(m.metric if params is None else f"IPrec_avg(points='{pts}')", name, **common)]
        if m.name == "set_F":
            if len(values) != 1:
                raise TrecSyntaxError(f"measure {word!r}: set_F takes one weight of recall (e.g. set_F.0.5)")
            _in_range(word, "weight of recall", values, 0.0)
            return [Column(f"set_F(weight={_num(values[0])})", name, **common)]
    # pairs
    pairs = {} if params is None else _pairs(word, params)
    if m.name in ("rbp", "rbp_resid"):
        gains, other = _gains_text(word, pairs, allowed=("p",))
        if gains:
            raise TrecSyntaxError(f"{word!r}: recmetrics' RBP takes p=..., not grade gains")
        p = other.get("p", 0.9)
        metric = f"RBP(p={_num(p)})" if m.name == "rbp" else f"RBP_resid(p={_num(p)},zero_when_judged=true)"
        return [Column(metric, name, arg=p if params is not None and m.name == "rbp_resid" else None, **common)]
    gains, _ = _gains_text(word, pairs)
    metric = m.metric if not gains else f"{m.metric}(gains='{gains}')"
    return [Column(metric, name, **common)]


def expand_measures(tokens: list[str]) -> list[tuple[str, str | None]]:
    """``-m`` values -> [(metric, trec_eval name or None)]: the metrics of :func:`expand` (num_q,
    runid and relstring appear as their own names)."""
    return [(c.metric or c.special, c.trec) for c in expand(tokens)]


def expand(tokens: list[str]) -> list[Column]:
    """``-m`` values -> output columns, duplicates dropped.

    trec_eval syntax (``P.5,10``, ``ndcg_cut.10``, ``rbp.p=0.8``, ``map``, ``all_trec``) and
    recmetrics names (``P@10``, ``nDCG@100``) may be mixed; several names may share one ``-m``
    separated by spaces. A trec_eval measure is computed once, with the first parameters given
    for it (trec_eval's rule)."""
    words = [w for t in tokens for w in t.split()]
    first_params: dict[str, tuple[str, str]] = {}
    for w in words:
        base, dot, params = w.partition(".")
        if dot and is_trec_token(w) and base not in first_params:
            if not params:
                raise TrecSyntaxError(f"measure {w!r}: parameters expected after the '.'")
            first_params[base] = (w, params)
    out: list[Column] = []
    done: set[str] = set()
    for w in words:
        if not is_trec_token(w):
            out.append(Column(w))
            continue
        names = NICKNAMES.get(w) or (w.partition(".")[0],)
        for name in names:
            if name in done:
                continue
            done.add(name)
            word, params = first_params.get(name, (name, None))
            out += _columns(TREC_MEASURES[name], word, params)
    seen, unique = set(), []
    for c in out:
        if c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def trec_name_of(spec) -> str | None:
    """The trec_eval output name of a recmetrics spec asked by its recmetrics name (``P@10`` ->
    ``P_10``), if trec_eval has that measure with default parameters."""
    text = str(spec)
    for m in CATALOGUE:
        if m.metric is None or m.summary == "geometric":
            continue
        if m.kind == "long_cuts" and spec.k is not None and text == m.metric.format(spec.k):
            return f"{m.name}_{spec.k}"
        if "{}" not in m.metric and text == m.metric:
            return m.name
    return None


def order_of(trec_name: str) -> int:
    """Position of an output name in trec_eval's order (unknown names last)."""
    if trec_name in ORDER:
        return ORDER[trec_name]
    for m in sorted(CATALOGUE, key=lambda m: len(m.name), reverse=True):
        if trec_name.startswith(m.name + "_"):
            return ORDER[m.name]
    return len(CATALOGUE)


# ---------------------------------------------------------------- output (--format trec)
def run_tag(path, fallback: str) -> str:
    """trec_eval's runid: the tag (6th field) of the run file's last line; ``fallback`` when the file
    cannot be read backwards (standard input, compressed)."""
    import os

    if str(path) == "-" or str(path).endswith((".gz", ".bz2", ".xz", ".zst")) or not os.path.isfile(path):
        return fallback
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - 65536))
        for line in reversed(fh.read().splitlines()):
            fields = line.split()
            if len(fields) >= 6 and not line.lstrip().startswith(b"#"):
                return fields[5].decode("utf-8", "replace")
    return fallback


def relstrings(judged, length: int) -> list[str]:
    """trec_eval's relstring of each user: the grades of the first ``length`` items as characters
    (0-9; '>' above 9; '-' not judged; '.' in the pool but unjudged)."""
    import numpy as np

    n = len(judged)
    width = max(0, min(int(length), judged.depth))
    chars = np.full((n, width), ord("-"), dtype=np.uint8)
    h = judged.hits
    top = h.cols < width
    v = h.vals[top]
    code = np.where(v > 9, ord(">"), np.where(v >= 0, ord("0") + np.clip(v, 0, 9).astype(np.int64), ord(".")))
    chars[h.rows[top], h.cols[top]] = code
    lens = np.minimum(judged.lengths, width)
    return [chars[u, :lens[u]].tobytes().decode("ascii") for u in range(n)]


def complete_overrides(cols, values, judged):
    """With ``-c`` trec_eval scores a user missing from the run on a one-item list of an unjudged
    document, then zeroes num_ret, utility, relstring, unj_* and rbp_resid by name: under a
    parameterised name (``utility_2,-1,0,0``, ``rbp_resid_p=0.8``) the one-item list's value stays.
    Returns ``values`` with those values for the missing users."""
    import numpy as np

    missing = ~judged.in_run
    if not missing.any() or not any(c.arg is not None and c.special is None for _, c, _ in cols):
        return values
    values = values.copy()
    r = judged.n_rel[missing].astype(np.float64)
    for _, c, row in cols:
        if c.arg is None or c.special is not None:
            continue
        if c.trec.startswith("utility_"):
            a, b, cc, d = c.arg
            values[row, missing] = a * 0.0 + b * 1.0 + cc * r + d * (0.0 + 0.0 - 1.0 - r)
        elif c.trec.startswith("rbp_resid_"):
            p = float(c.arg)
            values[row, missing] = p + (1.0 - p) * 1.0
    return values


def _fmt(value: float, integer: bool) -> str:
    return str(int(value)) if integer else f"{value:.17g}"


def summaries(cols, res, values, qrels, args) -> dict:
    """trec_eval's summary of each column: added over the queries in qid order, then averaged
    (``--aggregate`` other than arithmetic: that mean), summed or geometric."""
    import math

    import numpy as np

    n = len(res.users)
    qids = [str(u) for u in res.users.tolist()]
    order = sorted(range(n), key=qids.__getitem__)
    out = {}
    means = dict(zip(res.names, res.means.tolist()))
    for label, c, row in cols:
        if row is None:
            continue
        if label in res.run_values:  # a per-run metric (not trec_eval's): its one value
            out[label] = float(res.run_values[label])
        elif np.isnan(values[row]).any():  # a list-only metric (not trec_eval's): over the users with a list
            out[label] = float(means[label])
        elif c.summary == "geometric":
            total = 0.0
            for v in values[row][order].tolist():
                total += math.log(max(v, MIN_GEO_MEAN))
            out[label] = math.exp(total / n) if n else 0.0
        elif args.aggregate != "arithmetic" and c.summary == "mean":
            out[label] = float(means[label])
        else:
            total = float(np.cumsum(values[row][order])[-1]) if n else 0.0  # added one by one, in qid order
            out[label] = total if c.summary == "sum" else (total / n if n else 0.0)
            if c.trec == "num_rel" and args.complete:
                # m_num_rel.c: with -c the summary counts rel > 0 over the whole qrels, ignoring -l
                out[label] = float((qrels._ratings > 0).sum())
    return out


def print_trec(out, prefix, cols, res, values, qrels, args, tag: str) -> None:
    """trec_eval's layout: per query (sorted by qid as strings) when ``args.per_query``, then the
    summary ``all`` lines; measures in its order, ``%-22s\\t<qid>\\t<value>``."""
    named = sorted(cols, key=lambda lc: lc[1].order)
    pre = f"{prefix}\t" if prefix else ""
    summary = summaries(cols, res, values, qrels, args)
    if args.per_query:
        qids = [str(u) for u in res.users.tolist()]
        strings = {}
        for label, c, _ in named:
            if c.special == "relstring":
                strings[label] = relstrings(res.judged, c.arg)
                if args.complete and c.trec != "relstring":  # see complete_overrides
                    missing = (~res.judged.in_run).tolist()
                    strings[label] = ["-" * min(c.arg, 1) if m else s for s, m in zip(strings[label], missing)]
        rows = [(label, c, row) for label, c, row in named if c.per_query]
        lists = {label: values[row].tolist() for label, _, row in rows if row is not None}
        for n in sorted(range(len(qids)), key=qids.__getitem__):
            q = qids[n]
            out.write("".join(
                f"{pre}{c.trec:<22}\t{q}\t'{strings[label][n]}'\n" if c.special == "relstring"
                else f"{pre}{(c.trec or label):<22}\t{q}\t{_fmt(lists[label][n], c.integer)}\n"
                for label, c, row in rows))
    if not args.no_summary:
        for label, c, row in named:
            if c.special == "num_q":
                out.write(f"{pre}{'num_q':<22}\tall\t{len(res.users)}\n")
            elif c.special == "runid":
                out.write(f"{pre}{'runid':<22}\tall\t{tag}\n")
            elif row is not None:
                out.write(f"{pre}{(c.trec or label):<22}\tall\t{_fmt(summary[label], c.integer)}\n")
