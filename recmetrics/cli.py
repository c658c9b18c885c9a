"""Command line: ``recmetrics evaluate | datasets | metrics | report``.

``recmetrics evaluate`` is a drop-in for ``trec_eval``: the same flags (``-q -c -l -M -m -n``) with
trec_eval's meanings, trec_eval's measure syntax (``-m P.5,10,20``, ``-m ndcg_cut.10``,
``-m all_trec`` for the measures recmetrics implements) and, with ``--format trec``, its output
layout (``%-22s\\t<qid|all>\\t<value>``, measures in trec_eval's order, values as the 10.0 binary
prints them). Every error exits with status 2 and one line on stderr. Heavy modules (numpy,
pandas, pyarrow) are imported only when a command needs them.
"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap

from .errors import RecmetricsError

DEFAULT_METRICS = ["P@10", "Recall@10", "AP@100", "nDCG@100", "RR", "bpref", "infAP"]

# trec_eval measure -> (recmetrics name, default cut-offs or None); listed in trec_eval's own
# order (measures.c), which is the order of its output
TREC_MEASURES = {
    "num_q": (None, None),
    "num_ret": ("num_ret", None),
    "num_rel": ("num_rel", None),
    "num_rel_ret": ("num_rel_ret", None),
    "map": ("AP", None),
    "Rprec": ("Rprec", None),
    "bpref": ("bpref", None),
    "recip_rank": ("RR", None),
    "P": ("P", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "recall": ("Recall", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "infAP": ("infAP", None),
    "ndcg": ("nDCG", None),
    "ndcg_cut": ("nDCG", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "map_cut": ("AP", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "success": ("success", (1, 5, 10)),
}
SUMMED = {"num_ret", "num_rel", "num_rel_ret"}  # trec_eval sums these over queries


class CliError(RecmetricsError):
    """A command-line usage error (exit status 2)."""


def _version() -> str:
    from . import __version__

    return __version__


def expand_measures(tokens: list[str]) -> list[tuple[str, str | None]]:
    """``-m`` values -> [(recmetrics metric name, trec_eval output name or None)], duplicates dropped.

    trec_eval syntax (``P.5,10``, ``ndcg_cut.10``, ``map``, ``all_trec``) and recmetrics names
    (``P@10``, ``nDCG@100``) may be mixed; several names may share one ``-m`` separated by spaces."""
    out: list[tuple[str, str | None]] = []
    for token in tokens:
        for word in token.split():
            base, dot, params = word.partition(".")
            if word == "all_trec":
                for m in TREC_MEASURES:
                    out += expand_measures([m])
            elif base in TREC_MEASURES and not ("@" in word or "(" in word):
                ours, cuts = TREC_MEASURES[base]
                if dot:
                    if cuts is None:
                        raise CliError(f"measure {base!r} takes no parameter (got {word!r})")
                    try:
                        cuts = tuple(int(c) for c in params.split(","))
                    except ValueError:
                        raise CliError(f"cut-offs in {word!r} must be integers, e.g. {base}.5,10") from None
                    if any(c <= 0 for c in cuts):
                        raise CliError(f"cut-offs in {word!r} must be positive")
                if ours is None:
                    out.append(("num_q", "num_q"))
                elif cuts is None:
                    out.append((ours, base))
                else:
                    out += [(f"{ours}@{c}", f"{base}_{c}") for c in cuts]
            else:
                out.append((word, None))
    seen, unique = set(), []
    for pair in out:
        if pair not in seen:
            seen.add(pair)
            unique.append(pair)
    return unique


def _trec_name(spec) -> str | None:
    """The trec_eval output name of a recmetrics spec, if it has one."""
    for base, (ours, cuts) in TREC_MEASURES.items():
        if ours != spec.name or spec.params and any(v != spec.definition.params.get(n) for n, v in spec.params):
            continue
        if cuts is None and spec.k is None:
            return base
        if cuts is not None and spec.k is not None:
            return f"{base}_{spec.k}"
    return None


def _resolve_metrics(tokens):
    """Parse every requested metric before any file is read (unknown names fail fast)."""
    from .metrics import parse

    pairs = expand_measures(tokens)
    specs, labels = [], []
    for name, trec in pairs:
        if name == "num_q":
            labels.append(("num_q", "num_q"))
            continue
        spec = parse(name)
        if str(spec) in [l for l, _ in labels]:
            continue  # asked twice (e.g. -m P@10 -m P.10)
        specs.append(spec)
        labels.append((str(spec), trec or _trec_name(spec)))
    return specs, labels


def _order_key(trec_name: str):
    base = trec_name
    for b in sorted(TREC_MEASURES, key=len, reverse=True):
        if trec_name == b or trec_name.startswith(b + "_") and trec_name[len(b) + 1:].isdigit():
            base = b
            break
    return list(TREC_MEASURES).index(base) if base in TREC_MEASURES else len(TREC_MEASURES)


def _fmt_trec(value: float, integer: bool) -> str:
    return str(int(round(value))) if integer else f"{value:.17g}"


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
        try:
            _resolve_metrics(metrics[-1:])
        except RecmetricsError as exc:
            raise CliError(f"{exc} (and no file {metrics[-1]!r} exists)") from None
    args.qrels, args.runs = files[0], files[1:]
    args.metrics = metrics or list(default_metrics or DEFAULT_METRICS)


# context a metric may need (MetricDef.needs) -> how the command line passes it
CLI_CONTEXT = {"train": "--train FILE (the training ratings: a user,item[,rating] table or TREC qrels)"}


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


def _evaluate(args) -> int:
    split_positionals(args, usage="recmetrics evaluate [options] QRELS RUN [RUN ...]")
    specs, labels = _resolve_metrics(args.metrics)  # before any file is read
    check_context(specs, {"train"} if args.train else set(), args.per_query)
    if args.users is not None:
        policy = args.users
    elif args.complete:
        policy = "all"
    else:
        policy = "run" if args.format == "trec" else "relevant"
    if args.complete and args.users not in (None, "all"):
        raise CliError(f"-c (every judged user) contradicts --users {args.users}")

    import warnings

    from .data.io import read_qrels, read_ratings, read_run
    from .evaluation import evaluate

    if sum(f == "-" for f in [args.qrels, *args.runs]) > 1:
        raise CliError("only one input can be read from standard input ('-')")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qrels = read_qrels(args.qrels, threshold=args.threshold)
    print_warnings(caught)
    context = {"train": read_ratings(args.train)} if args.train else {}
    several = len(args.runs) > 1
    out = sys.stdout
    rows = []  # (run, label, user, value) for csv/json
    for path in args.runs:
        run = read_run(path, max_docs=args.max_docs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if specs:
                res = evaluate(run, qrels, specs, users=policy, aggregate=args.aggregate, **context)
            else:  # only num_q: judge through one cheap metric
                res = evaluate(run, qrels, ["num_ret"], users=policy, aggregate=args.aggregate)
        print_warnings(caught)
        meta = res.metadata
        values = res.values  # metrics x users
        n_users = len(res.users)
        summary = {}
        if args.format == "trec":  # trec_eval adds per-query values in qid order, then divides
            qids = [str(u) for u in res.users.tolist()]
            order = sorted(range(n_users), key=qids.__getitem__)
        cols = {n: c for c, n in enumerate(res.names)}
        for label, trec in [l for l in labels if l[0] != "num_q"]:
            if label in res.run_values:  # a per-run metric: its value, no user aggregation
                summary[label] = res.run_values[label]
                continue
            col = cols[label]
            if args.format == "trec" and args.aggregate == "arithmetic":
                total = 0.0
                for v in values[col][order].tolist():
                    total += v
                summary[label] = total if trec in SUMMED else (total / n_users if n_users else 0.0)
                if trec == "num_rel" and args.complete:
                    # m_num_rel.c: with -c the summary counts rel > 0 over the whole qrels, ignoring -l
                    summary[label] = float((qrels.to_frame()["rating"] > 0).sum())
            else:
                summary[label] = float(res.means[col])
        per_user = {"users": res.users.tolist(), **{n: v.tolist() for n, v in zip(res.names, values)}}
        if args.format == "trec":
            _print_trec(out, run.name if several else None, labels, per_user, summary, n_users, args)
        elif args.format == "table":
            _print_table(out, run.name, labels, per_user, summary, meta, policy, qrels, args)
        else:
            for label, _ in labels:
                if label == "num_q":
                    continue
                if args.per_query:
                    rows += [(run.name, label, str(u), float(v)) for u, v in zip(per_user["users"], per_user[label])]
                if not args.no_summary:
                    rows.append((run.name, label, "all", summary[label]))
    if args.format in ("csv", "json"):
        import json

        if args.format == "csv":
            out.write("run,metric,user,value\n")
            for r in rows:
                out.write(",".join(_csv(x) for x in r[:3]) + f",{r[3]!r}\n")
        else:
            json.dump([dict(zip(("run", "metric", "user", "value"), r)) for r in rows], out, indent=1)
            out.write("\n")
    return 0


def _csv(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def print_warnings(caught) -> None:
    """Print caught warnings on stderr, one line each (``recmetrics: warning: ...``)."""
    for w in caught:
        print(f"recmetrics: warning: {' '.join(str(w.message).split())}", file=sys.stderr)


def _print_trec(out, prefix, labels, per_user, summary, n_users, args) -> None:
    """trec_eval's layout: per query (sorted by qid as strings), then ``all``; measures in its order.
    ``per_user``: ``{"users": [...], label: [value per user]}``."""
    named = [(label, trec or label) for label, trec in labels]
    named.sort(key=lambda lt: _order_key(lt[1]))
    pre = f"{prefix}\t" if prefix else ""
    integer = {label for label, trec in named if trec in SUMMED or trec == "num_q"}
    if args.per_query:
        qids = [str(u) for u in per_user["users"]]
        cols = per_user
        for n in sorted(range(len(qids)), key=qids.__getitem__):
            out.write("".join(f"{pre}{trec:<22}\t{qids[n]}\t{_fmt_trec(cols[label][n], label in integer)}\n"
                              for label, trec in named if label != "num_q"))
    if not args.no_summary:
        for label, trec in named:
            value = n_users if label == "num_q" else summary[label]
            out.write(f"{pre}{trec:<22}\tall\t{_fmt_trec(value, label in integer)}\n")


def _print_table(out, name, labels, per_user, summary, meta, policy, qrels, args) -> None:
    explain = {"relevant": "judged users with >= 1 relevant item",
               "all": "every judged user (trec_eval -c)",
               "run": "judged users the run has a list for (trec_eval without -c)"}
    out.write(f"# run {name}: relevant = rating >= {qrels.threshold:g}; users: {policy} "
              f"({explain.get(policy, policy)}); {meta['users_evaluated']} evaluated, "
              f"{meta['users_missing_from_run']} of them missing from the run (score 0), "
              f"{meta['run_users_ignored']} run users without judgments ignored; mean: {args.aggregate}\n")
    width = max([len(l) for l, _ in labels] + [6])
    for label, _ in labels:
        if label == "num_q":
            continue
        if args.per_query:
            for u, v in zip(per_user["users"], per_user[label]):
                out.write(f"{label:<{width}}\t{u}\t{v:.4f}\n")
        if not args.no_summary:
            out.write(f"{label:<{width}}\tall\t{summary[label]:.4f}\n")
    if any(l == "num_q" for l, _ in labels) and not args.no_summary:
        out.write(f"{'num_q':<{width}}\tall\t{len(per_user['users'])}\n")


def _fit(rows: list[tuple[str, ...]], width: int = 80) -> str:
    """Columns padded to their widest cell, the last one cut so that every line fits ``width``."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    lines = []
    for r in rows:
        head = "  ".join(cell.ljust(w) for cell, w in zip(r, widths))
        room = max(width - len(head) - 2, 10)
        last = r[-1] if len(r[-1]) <= room else r[-1][: room - 1] + "…"
        lines.append(f"{head}  {last}".rstrip())
    return "\n".join(lines)


def _datasets(args) -> int:
    from .data import datasets

    if args.name:
        ds = datasets.load(args.name)
        print(datasets.describe(args.name))
        print(datasets.stats(ds).to_string())
    else:
        table = datasets.list()
        rows = [("name", "description")] + [(r.name, r.description) for r in table.itertuples(index=False)]
        print(_fit(rows))
    return 0


def _metrics(args) -> int:
    from . import metrics

    if args.name:
        from .metrics.reference import describe

        texts = [describe(name) for name in args.name]  # every name checked before anything prints
        print("\n\n".join(texts))
        return 0
    t = metrics.table()
    rows = [("metric", "cut-off", "trec_eval", "description")] + [
        (r.metric, r.cutoff, r.trec_eval or "-", r.description) for r in t.itertuples(index=False)]
    print(_fit(rows))
    return 0


def _assignments(items, flag: str) -> dict:
    """``KEY=VALUE`` arguments of a repeatable flag -> dict (a key given twice is an error)."""
    from .report.plan import parse_assignment

    out: dict = {}
    for text in items or []:
        key, value = parse_assignment(text, flag)
        if key in out:
            raise CliError(f"{flag} {key}=... given twice ({out[key]!r} and {value!r})")
        out[key] = value
    return out


def _report(args) -> int:
    try:
        if args.no_execute and (args.force or args.scheduler):
            raise CliError("--no-execute builds the book from the chapters already executed: "
                           "it takes no --force or --scheduler")
        dataset_args = _assignments(args.dataset_arg, "--dataset-arg")
        overrides = _assignments(args.param, "-p")
        if dataset_args and args.dataset is None:
            raise CliError("--dataset-arg needs --dataset NAME (the dataset the arguments are for)")
        own = _own_runs(args)
        from .report import build

        if own:
            if args.dataset is not None or dataset_args or args.scheduler:
                raise CliError("--qrels/--runs build the book of your own runs: --dataset, --dataset-arg and "
                               "--scheduler do not apply (the runs are given, nothing is fitted)")
            index = build(profile=args.profile, out=args.out, overrides=overrides or None,
                          execute=not args.no_execute, **own)
        else:
            index = build(profile=args.profile, dataset=args.dataset, out=args.out,
                          dataset_args=dataset_args or None, overrides=overrides or None, scheduler=args.scheduler,
                          force=args.force, execute=not args.no_execute, progress=True)
    except KeyboardInterrupt:
        print("recmetrics: interrupted: the chapters executed so far are kept, the one running was not saved",
              file=sys.stderr)
        return 130
    print(f"book built: {index}")
    return 0


def _own_runs(args) -> dict:
    """The own-runs book's arguments (``--qrels``, ``--runs``, ``--name``, ``--folds``, ``-l``), or
    ``{}`` when neither ``--qrels`` nor ``--runs`` is given."""
    if args.qrels is None and not args.runs:
        for flag, value in (("--name", args.name), ("--folds", args.folds), ("-l/--threshold", args.threshold)):
            if value is not None:
                raise CliError(f"{flag} belongs to the book of your own runs: give --qrels FILE --runs FILE ...")
        return {}
    if args.qrels is None or not args.runs:
        raise CliError("the book of your own runs needs both --qrels FILE and --runs FILE [FILE ...]")
    runs = args.runs[0] if len(args.runs) == 1 and os.path.isdir(args.runs[0]) else list(args.runs)
    return {"qrels": args.qrels, "runs": runs, "name": args.name, "folds": args.folds, "threshold": args.threshold}


class _Once(argparse.Action):
    """An option that may be given once (a second value would silently replace the first)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest) is not None:
            parser.error(f"{option_string} given twice ({getattr(namespace, self.dest)!r} and {values!r}); "
                         f"a book is built on one {self.metavar.lower()}")
        setattr(namespace, self.dest, values)


_REPORT_EPILOG = "\0recmetrics-report-epilog"


def _report_epilog() -> str:
    """The profiles, datasets and notebook parameters ``report --help`` lists (loaded on demand)."""
    from .data import datasets
    from .report.profiles import PROFILE_HELP, PROFILES

    lines = ["profiles:"] + [f"  {name:<8} {PROFILE_HELP.get(name, '')}" for name in PROFILES]
    table = datasets.list()
    lines += ["", "datasets (--dataset NAME; `recmetrics datasets NAME` describes one and its arguments):"]
    lines += ["  " + ln for ln in _fit([(r.name, r.description) for r in table.itertuples(index=False)],
                                       width=78).splitlines()]
    try:
        import papermill

        from .report.paths import default_notebooks_dir

        names = sorted({n for nb in sorted(default_notebooks_dir().glob("*.ipynb"))
                        for n in papermill.inspect_notebook(str(nb))} - {"dataset", "profile"})
        lines += ["", "parameters the notebooks declare (-p KEY=VALUE):",
                  textwrap.fill(", ".join(names), 78, initial_indent="  ", subsequent_indent="  ")]
    except (ImportError, OSError):  # no notebooks next to the package: nothing to list
        pass
    lines += ["", textwrap.fill(
        "A chapter is executed again only when its notebook, its parameters, the data, the package or the "
        "dependency versions changed (--force: every chapter); an unchanged build takes seconds. Every "
        "error is one line on stderr with exit status 2; Ctrl-C exits with 130.", 78)]
    return "\n".join(lines)


class _ReportHelp(argparse.RawDescriptionHelpFormatter):
    """Help of ``report``: its epilog (datasets, parameters) is computed only when help is shown."""

    def add_text(self, text):
        super().add_text(_report_epilog() if text == _REPORT_EPILOG else text)


def add_report(sub) -> None:
    r = sub.add_parser(
        "report", help="run every analysis notebook and build the book", formatter_class=_ReportHelp,
        description="Execute the analysis notebooks (notebooks/*.ipynb) with papermill under a profile and\n"
                    "a dataset, then build the Jupyter Book site, which renders offline. Every argument is\n"
                    "checked before any notebook runs.",
        epilog=_REPORT_EPILOG)
    r.add_argument("--profile", default=None, metavar="NAME",
                   help="parameter profile of every chapter (default quick; listed below)")
    r.add_argument("--dataset", default=None, metavar="NAME", action=_Once,
                   help="registered dataset the chapters run on (default movielens-small; listed below)")
    r.add_argument("--dataset-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="repeatable; an argument of the dataset's loader, e.g. --dataset movielens-1m "
                        "--dataset-arg path=DIR (passed to the notebooks as dataset_args)")
    r.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="repeatable; set a parameter of every notebook that declares it (a Python literal, or a "
                        "bare word as a string), e.g. -p folds=3 -p \"systems=['Pop','Random']\"; checked against "
                        "the type of the notebook's default")
    r.add_argument("--out", default=None, metavar="DIR",
                   help="folder of the built site (default book/_build/html; own runs: book/_build/runs/NAME/html)")
    r.add_argument("--force", action="store_true",
                   help="execute every chapter again, even those whose inputs did not change")
    r.add_argument("--no-execute", action="store_true",
                   help="build the book from the chapters already executed in book/generated/ (refused, naming "
                        "them, when they did not all complete under one profile and dataset)")
    r.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the studies on this Dask scheduler (e.g. tcp://127.0.0.1:8786; default: locally); "
                        "results are identical")
    own = r.add_argument_group(
        "the book of your own runs",
        "instead of the chapters on a dataset: significance tests, discriminative power, robustness,\n"
        "agreement and which metric to report, for runs made by any tool (rm.report.own_runs; built\n"
        "into book/_build/runs/NAME/html unless --out)")
    own.add_argument("--qrels", default=None, metavar="FILE",
                     help="judgments: TREC qrels or a user,item,rating table (a {fold} template with --folds)")
    own.add_argument("--runs", nargs="+", default=None, metavar="FILE",
                     help="run files (TREC or user,item,score tables; each one system named after its file's "
                          "stem), or one folder of them; {fold} templates with --folds")
    own.add_argument("--name", default=None, metavar="LABEL", help="the book's label (default: the run names)")
    own.add_argument("--folds", nargs="+", default=None, metavar="LABEL",
                     help="fold labels substituted into the {fold} field of --qrels and --runs (default: one fold)")
    own.add_argument("-l", "--threshold", type=float, default=None, metavar="N",
                     help="relevance threshold (default 1 for TREC qrels, 4 for rating tables)")
    r.set_defaults(func=_report)


def add_evaluate(sub) -> None:
    e = sub.add_parser("evaluate", help="evaluate runs against judgments (a trec_eval drop-in)",
                       description="Evaluate runs; flags as trec_eval's. Files: TREC (.gz/.bz2/.xz/.zst, "
                                   "'-' = stdin) or user,item,score / user,item,rating CSV/TSV/parquet tables.")
    e.add_argument("files", nargs="*", metavar="QRELS RUN", help="judgments, then one or more runs")
    e.add_argument("-m", "--metrics", nargs="+", action="extend", default=None, metavar="MEASURE",
                   help="repeatable; e.g. -m P@10 nDCG@100, or trec_eval's -m P.5,10 -m ndcg_cut.10 -m all_trec")
    e.add_argument("-q", "--per-query", "--per-user", dest="per_query", action="store_true",
                   help="one line per user (query) before the summary")
    e.add_argument("-n", "--no-summary", action="store_true", help="no summary line (with -q: per-user only)")
    e.add_argument("-c", "--complete", action="store_true",
                   help="average over every judged user; users missing from the run score 0 (trec_eval -c)")
    e.add_argument("-l", "--threshold", type=float, default=None, metavar="N",
                   help="relevance threshold (trec_eval's -l; default 1 for TREC qrels, 4 for rating tables)")
    e.add_argument("-M", "--max-docs", type=int, default=None, metavar="N",
                   help="keep the top N items of every list (trec_eval -M)")
    e.add_argument("--format", choices=["table", "trec", "csv", "json"], default="table",
                   help="trec: trec_eval's exact layout")
    e.add_argument("--users", choices=["relevant", "all", "run"], default=None,
                   help="users averaged over (default: relevant; 'all' with -c; 'run' with --format trec)")
    e.add_argument("--aggregate", default="arithmetic", help="arithmetic | geometric | harmonic | quadratic")
    e.add_argument("--train", default=None, metavar="FILE",
                   help="training ratings (user,item[,rating] table or TREC qrels) for the popularity, novelty "
                        "and coverage metrics (ARP, APLT, EPC, ItemCoverage, Gini, ...)")
    e.set_defaults(func=_evaluate)


def add_commands(sub) -> None:
    """Every sub-command; a new one is one ``add_<name>(sub)`` function called here."""
    add_evaluate(sub)
    d = sub.add_parser("datasets", help="list the registered datasets, or describe one")
    d.add_argument("name", nargs="?")
    d.set_defaults(func=_datasets)

    m = sub.add_parser("metrics", help="list the registered metrics, or describe some (formula, citation, "
                                       "parameters, range, the peer measure each equals)")
    m.add_argument("name", nargs="*", help="metric names to describe (e.g. nDCG ERR-IA); none: list them all")
    m.set_defaults(func=_metrics)

    add_report(sub)

    from .meta.compare import add_parser as add_compare  # argparse set-up only; the analysis loads on use

    add_compare(sub)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="recmetrics", description="Evaluate top-N recommenders and their metrics.")
    p.add_argument("--version", action="version", version=f"recmetrics {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    add_commands(sub)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)  # usage errors: argparse exits with status 2
    try:
        if sys.stdout is None:  # started with standard output closed (`>&-`)
            raise CliError("standard output is closed; redirect it to a file (or /dev/null) instead")
        rc = args.func(args)
        if args.command == "evaluate":
            sys.stdout.flush()  # a closed pipe is reported here, not at exit
        return rc
    except RecmetricsError as exc:
        msg = str(exc)
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): no traceback at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        msg = "output pipe closed before everything was written"
    except ImportError as exc:
        msg = f"a needed package is missing: {exc} (pip install 'recmetrics[data]')"
    except MemoryError:
        msg = "out of memory"
    except OSError as exc:
        msg = f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
    if sys.stderr is not None:
        print(f"recmetrics: error: {' '.join(msg.split())}", file=sys.stderr)
    return 2


def run() -> None:
    """The console entry point: :func:`main`. After ``evaluate`` (no worker pools, no temporary
    files, no exit handlers) the process ends as soon as the output is flushed: tearing the
    interpreter down (freeing every array and module) is ~40 ms of a 0.5 s evaluation of a
    million-line run. Other commands exit normally. ``evaluate`` does no matrix products, so
    OpenBLAS starts with one thread (its thread pool is ~50 ms of numpy's import); a user's own
    ``OPENBLAS_NUM_THREADS`` wins."""
    if sys.argv[1:2] == ["evaluate"]:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    rc = main()
    if sys.argv[1:2] != ["evaluate"]:
        sys.exit(rc)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (BrokenPipeError, ValueError):
        rc = rc or 2
    os._exit(rc)


if __name__ == "__main__":  # pragma: no cover
    run()
