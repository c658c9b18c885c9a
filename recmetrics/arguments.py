"""Command-line argument helpers shared by ``recmetrics evaluate`` and ``recmetrics compare``.

They sit below both commands (:mod:`recmetrics.cli` and :mod:`recmetrics.meta.compare` import them;
this module imports neither): trec_eval-style positionals after ``-m``, the metrics resolved before
any file is read, the context files (``--train``, ``--aspects``), trec_eval's ``-l`` and ``-M``
values, and warnings printed one line each. Heavy modules load only inside the functions.
"""
from __future__ import annotations

import contextlib
import os
import sys

from .errors import RecmetricsError


class CliError(RecmetricsError):
    """A command-line usage error (exit status 2)."""


DEFAULT_METRICS = ["P@10", "Recall@10", "AP@100", "nDCG@100", "RR", "bpref", "infAP"]

def _resolve_metrics(tokens):
    """Parse every requested metric before any file is read (unknown names fail fast).

    Returns the distinct specs to compute and the output columns ``(label, Column, spec index or
    None)``; several columns may share a spec (``map`` and ``gm_map`` both are AP)."""
    from dataclasses import replace

    from .metrics import parse
    from .trec_measures import expand, order_of, trec_name_of

    specs, index, cols, seen = [], {}, [], set()
    for c in expand(tokens):
        row = None
        label = c.trec
        if c.metric is not None:
            spec = parse(c.metric)
            key = str(spec)
            if key not in index:
                index[key] = len(specs)
                specs.append(spec)
            row = index[key]
            if c.trec is None:
                trec = trec_name_of(spec)
                c = replace(c, trec=trec, order=order_of(trec) if trec else c.order)
            label = key if c.summary != "geometric" else c.trec
        if label in seen:
            continue  # asked twice (e.g. -m P@10 -m P.10)
        seen.add(label)
        cols.append((label, c, row))
    return specs, cols


def _is_metric(token: str) -> bool:
    try:
        _resolve_metrics([token])
    except RecmetricsError:
        return False
    return True


def _is_file_arg(token: str, have: int, need: int) -> bool:
    """Whether a trailing ``-m`` value is a file name. A token is a file when it is ``-``, names an
    existing path that is not a metric name (or fewer than ``need`` files have been found), or
    looks like a path; while fewer than ``need`` files are known, anything that is not a metric name
    is one too (a missing file is then reported by the reader)."""
    if token == "-" or os.sep in token:
        return True
    if os.path.exists(token):
        return have < need or not _is_metric(token)
    return have < need and not _is_metric(token)


def split_positionals(args, min_files: int = 2, default_metrics=None, usage: str = "") -> None:
    """trec_eval puts the flags first: ``-m P.10 qrels run1 run2``; ``-m`` takes several values, so
    the file names it swallowed (every trailing one that is a file, see :func:`_is_file_arg`) are
    moved back to the positionals. Sets ``args.qrels``, ``args.runs`` and ``args.metrics``."""
    metrics = args.metrics or []
    files = list(args.files)
    while metrics and _is_file_arg(metrics[-1], len(files), min_files):
        files.insert(0, metrics.pop())
    if len(files) < min_files:
        runs = "a qrels file and at least one run file" if min_files == 2 else \
            f"a qrels file and at least {min_files - 1} run files"
        raise CliError(f"{args.command} needs {runs}; got {len(files)} file name(s) in all ({usage})")
    if metrics and "." in metrics[-1] and not _is_metric(metrics[-1]):  # a file name that is not there?
        from .trec_measures import is_trec_token

        try:
            _resolve_metrics(metrics[-1:])
        except RecmetricsError as exc:
            if is_trec_token(metrics[-1]):  # a trec_eval measure with bad parameters, not a file name
                raise
            raise CliError(f"{exc} (and no file {metrics[-1]!r} exists)") from None
    args.qrels, args.runs = files[0], files[1:]
    args.metrics = metrics or list(default_metrics or DEFAULT_METRICS)


# context a metric may need (MetricDef.needs) -> how the command line passes it
CLI_CONTEXT = {"train": "--train FILE (the training ratings: a user,item[,rating] table or TREC qrels)",
               "aspects": "--aspects FILE (the items' aspects, e.g. genres: an item,aspect table, one row per "
                          "pair, or item,aspects with labels joined by '|')"}


def add_context_options(parser) -> None:
    """``--train`` and ``--aspects``: the files behind :data:`CLI_CONTEXT` (evaluate and compare)."""
    parser.add_argument("--train", default=None, metavar="FILE",
                        help="training ratings (user,item[,rating] table or TREC qrels) for the popularity, "
                             "novelty and coverage metrics (ARP, APLT, EPC, ItemCoverage, Gini, ...)")
    parser.add_argument("--aspects", default=None, metavar="FILE",
                        help="item aspects (item,aspect rows, or item,aspects|genres joined by '|') for the "
                             "diversity metrics (a-nDCG, ab-nDCG, S-Recall, ERR-IA, NRBP, EU, RBU, ILD, ...)")


def given_context(args) -> set:
    """The context names whose files the command line was given."""
    return {n for n in CLI_CONTEXT if getattr(args, n, None)}


def read_context(args) -> dict:
    """``{name: value}`` read from the context files given (``--train``, ``--aspects``)."""
    from .data.io import read_aspects, read_ratings

    readers = {"train": read_ratings, "aspects": read_aspects}
    return {n: readers[n](getattr(args, n)) for n in sorted(given_context(args))}


def check_context(specs, given: set, per_user: bool = False) -> None:
    """One line per problem, before any file is read: a per-run metric asked per user (``-q``), or a
    metric whose context (``train``, ``aspects``, ...) the command line was not given or cannot pass."""
    for s in specs:
        d = s.definition
        if per_user and s.per_run:
            raise CliError(f"metric {s} is per-run (one value for the whole run): it has no per-user lines; "
                           f"drop -q/--per-user or evaluate {s} apart")
        missing = [n for n in d.needs if n not in given]
        if d.needs_any and not given & set(d.needs_any):
            missing.append(next((n for n in d.needs_any if n in CLI_CONTEXT), d.needs_any[0]))
        for n in missing:
            if n in CLI_CONTEXT:
                raise CliError(f"metric {s} needs {n}=: pass {CLI_CONTEXT[n]}")
            raise CliError(f"metric {s} needs {n}=, which the command line does not read; "
                           f"use rm.evaluate(run, qrels, metrics, {n}=...) from Python")


def warning_line(message) -> str:
    """A warning as the command line prints it: one line, in its own words, no source path."""
    return f"recmetrics: warning: {' '.join(str(message).split())}"


def print_warnings(caught) -> None:
    """Print caught warnings on stderr, one line each (``recmetrics: warning: ...``)."""
    for w in caught:
        print(warning_line(w.message), file=sys.stderr)


@contextlib.contextmanager
def warnings_on_one_line():
    """Within the block, every warning is printed on stderr as it happens, one line each
    (:func:`warning_line`) instead of Python's two lines naming a source file of the package, and
    each once: a build that reads the same run twice (its cut-offs first, then its depth's) says so once."""
    import warnings

    said: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = warning_line(message)
        if text not in said:
            said.add(text)
            print(text, file=sys.stderr if file is None else file, flush=True)

    saved = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = saved


def relevance_level(text, qrels_path) -> float | None:
    """trec_eval's ``-l``: read with C's ``atol`` for TREC qrels (``-l 1.5`` is level 1, ``-l 0`` level
    0; a warning says when the integer part differs from the number written); a rating table
    (CSV/TSV/parquet, not trec_eval's format) takes a real threshold such as 3.5. Not a number:
    one line naming the flag. None: the reader's default (1 for TREC qrels, 4 for rating tables)."""
    import math
    import re
    import warnings

    from .data.io import TABLE_SUFFIXES, _suffixes

    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise CliError(f"-l/--threshold {text!r}: expected a number (trec_eval's relevance level, e.g. -l 2)")
    if value < 0:
        raise CliError(f"-l/--threshold {text}: expected a relevance level >= 0 (a negative level would make "
                       "unjudged items relevant in trec_eval)")
    if _suffixes(qrels_path)[1] in TABLE_SUFFIXES:
        return value
    digits = re.match(r"\s*([+-]?\d+)", str(text))
    level = float(int(digits.group(1))) if digits else 0.0
    if level != value:
        warnings.warn(f"-l {text} is read as relevance level {level:g}, as trec_eval reads it (C's atol: the "
                      f"integer part); judgments >= {level:g} are relevant", stacklevel=2)
    return level


def max_docs(value) -> int | None:
    """trec_eval's ``-M``: at most this many items of each list (0: empty lists); negative values are
    an error (trec_eval 10.0 crashes on ``-M -1``)."""
    if value is not None and value < 0:
        raise CliError(f"-M/--max-docs {value}: expected a number of items >= 0 (the top N of every list)")
    return value
