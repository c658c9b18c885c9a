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

# the argument helpers `evaluate` and `compare` share live below both (recmetrics.arguments)
from .arguments import (CLI_CONTEXT, DEFAULT_METRICS, CliError, add_context_options, check_context,  # noqa: E402,F401
                        given_context, max_docs, print_warnings, read_context, relevance_level, split_positionals,
                        warnings_on_one_line)
from .arguments import _resolve_metrics  # noqa: E402
from .trec_measures import TREC_MEASURES, expand_measures  # noqa: E402,F401  (re-exported)


def _version() -> str:
    from . import __version__

    return __version__


def _evaluate(args) -> int:
    # no -m: trec_eval's default is its "official" set
    split_positionals(args, default_metrics=["official"] if args.format == "trec" else DEFAULT_METRICS,
                      usage="recmetrics evaluate [options] QRELS RUN [RUN ...]")
    specs, cols = _resolve_metrics(args.metrics)  # before any file is read
    check_context(specs, given_context(args), args.per_query)
    max_docs(args.max_docs)
    if args.users is not None:
        policy = args.users
    elif args.complete:
        policy = "all"
    else:
        policy = "run" if args.format == "trec" else "relevant"
    if args.complete and args.users not in (None, "all"):
        raise CliError(f"-c (every judged user) contradicts --users {args.users}")

    import warnings

    import numpy as np

    from .data.io import read_qrels, read_run
    from .evaluation import evaluate

    if sum(f == "-" for f in [args.qrels, *args.runs]) > 1:
        raise CliError("only one input can be read from standard input ('-')")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qrels = read_qrels(args.qrels, threshold=relevance_level(args.threshold, args.qrels))
        context = read_context(args)
    print_warnings(caught)
    several = len(args.runs) > 1
    out = sys.stdout
    rows = []  # (run, label, user, value) for csv/json
    for path in args.runs:
        run = read_run(path, max_docs=args.max_docs)
        # peak memory (a 13.8M-line run): the lists are sorted, so no measure here reads the scores,
        # and the ranking measures judge through the item codes, not the item ids
        run.scores = None
        if all(s.definition.family == "ranking" for s in specs):
            run.items = run.codes[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # only num_q / runid / relstring: judge through one cheap metric
            res = evaluate(run, qrels, specs or ["num_ret"], users=policy, aggregate=args.aggregate,
                           **(context if specs else {}))
        print_warnings(caught)
        values = res.values  # per-user metrics x users, in spec order when no metric is per-run
        if res.run_values:  # rows back in spec order; a per-run metric has no per-user row
            rows_of = {n: i for i, n in enumerate(res.names)}
            values = np.vstack([values[rows_of[str(s)]] if str(s) in rows_of else np.full(len(res.users), np.nan)
                                for s in specs])
        if args.format == "trec":
            from .trec_measures import complete_overrides, print_trec, run_tag

            if args.complete:
                values = complete_overrides(cols, values, res.judged)
            print_trec(out, run.name if several else None, cols, res, values, qrels, args,
                       run_tag(path, run.name))
            continue
        summary = _summaries(cols, res, values)
        per_user = {"users": res.users.tolist(), **{label: values[row].tolist() for label, _, row in cols
                                                     if row is not None}}
        if args.format == "table":
            _print_table(out, run.name, cols, per_user, summary, res.metadata, policy, qrels, args)
        else:
            for label, _, row in cols:
                if row is None:
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
            # an undefined value (a list-only metric of a user without a list) is null, as JSON has no NaN
            json.dump([dict(zip(("run", "metric", "user", "value"), r[:3] + (None if r[3] != r[3] else r[3],)))
                       for r in rows], out, indent=1, allow_nan=False)
            out.write("\n")
    return 0


def _summaries(cols, res, values) -> dict:
    """Summary of each column in the table/csv/json formats: the ``--aggregate`` mean, the
    geometric mean for trec_eval's gm_map / gm_bpref."""
    from .metrics import aggregate

    means = dict(zip(res.names, res.means.tolist()))
    out = {}
    for label, c, row in cols:
        if row is None:
            continue
        if label in res.run_values:  # a per-run metric: its value, no user aggregation
            out[label] = float(res.run_values[label])
        else:
            out[label] = float(aggregate(values[row], "geometric") if c.summary == "geometric" else means[label])
    return out


def _csv(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def _print_table(out, name, cols, per_user, summary, meta, policy, qrels, args) -> None:
    explain = {"relevant": "judged users with >= 1 relevant item",
               "all": "every judged user (trec_eval -c)",
               "run": "judged users the run has a list for (trec_eval without -c)"}
    out.write(f"# run {name}: relevant = rating >= {qrels.threshold:g}; users: {policy} "
              f"({explain.get(policy, policy)}); {meta['users_evaluated']} evaluated, "
              f"{meta['users_missing_from_run']} of them missing from the run (score 0), "
              f"{meta['run_users_ignored']} run users without judgments ignored; mean: {args.aggregate}\n")
    width = max([len(l) for l, _, _ in cols] + [6])
    for label, _, row in cols:
        if row is None:
            continue
        if args.per_query:
            for u, v in zip(per_user["users"], per_user[label]):
                out.write(f"{label:<{width}}\t{u}\t{v:.4f}\n")
        if not args.no_summary:
            out.write(f"{label:<{width}}\tall\t{summary[label]:.4f}\n")
    if any(c.special == "num_q" for _, c, _ in cols) and not args.no_summary:
        out.write(f"{'num_q':<{width}}\tall\t{len(per_user['users'])}\n")


def _fit(rows: list[tuple[str, ...]], width: int = 80) -> str:
    """Columns padded to their widest cell, the last one wrapped (whole, never cut) under itself so
    that every line fits ``width``."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    indent = sum(widths) + 2 * len(widths)
    room = max(width - indent, 20)
    lines = []
    for r in rows:
        head = "  ".join(cell.ljust(w) for cell, w in zip(r, widths))
        wrapped = textwrap.wrap(r[-1], room, break_on_hyphens=False) or [""]
        lines.append(f"{head}  {wrapped[0]}".rstrip())
        lines += [" " * indent + part for part in wrapped[1:]]
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
        if args.jobs is not None and args.jobs < 1:
            raise CliError(f"--jobs {args.jobs}: expected a number of chapters at once >= 1")
        own = _own_runs(args)
        from .report import build
        from .report.processes import terminate_as_interrupt

        with warnings_on_one_line(), terminate_as_interrupt():
            index = _build_report(build, args, own, dataset_args, overrides)
    except KeyboardInterrupt as exc:   # Ctrl-C, or SIGTERM (Terminated)
        from .report.processes import Terminated

        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"recmetrics: {how}: the chapters executed so far are kept, the one running was not saved",
              file=sys.stderr)
        return 143 if how == "terminated" else 130
    print(f"book built: {index}")
    return 0


def _build_report(build, args, own: dict, dataset_args: dict, overrides: dict):
    """``recmetrics report``'s build: the book of your own runs when ``own`` is given, else the main book."""
    if own:
        if args.seeds:
            raise CliError("--seeds replicates the chapters that draw a split of a dataset; the book of your own "
                           "runs reads the runs as given (build it once per fold set instead)")
        if args.dataset is not None or dataset_args:
            raise CliError("--qrels/--runs build the book of your own runs: --dataset and --dataset-arg "
                           "do not apply (the runs are given, nothing is fitted)")
        return build(profile=args.profile, out=args.out, overrides=overrides or None,
                     execute=not args.no_execute, scheduler=args.scheduler, jobs=args.jobs,
                     repository=args.repository, **own)
    return build(profile=args.profile, dataset=args.dataset, out=args.out,
                 dataset_args=dataset_args or None, overrides=overrides or None, scheduler=args.scheduler,
                 force=args.force, execute=not args.no_execute, progress=True, jobs=args.jobs, seeds=args.seeds,
                 repository=args.repository)


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

    lines = ["profiles:"] + ["  " + ln for ln in _fit([(name, PROFILE_HELP.get(name, "")) for name in PROFILES],
                                                      width=78).splitlines()]
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
        description="Execute the analysis notebooks (shipped with the package) with papermill under a profile and\n"
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
                   help="folder of the built site (relative: to the current folder), replaced whole when the build "
                        "succeeded (default ./recmetrics-book; own runs: ./recmetrics-runs/FOLDER, FOLDER from "
                        "--name). The executed chapters are kept in the cache (~/.cache/recmetrics/books, "
                        "$RECMETRICS_BOOKS), so an unchanged rebuild executes nothing")
    r.add_argument("--repository", default=None, metavar="URL",
                   help="web address of the book's source repository, linked from every page (default: "
                        "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY in GitHub Actions, else the origin remote of the "
                        "checkout recmetrics runs from; none known: no link)")
    r.add_argument("--seeds", nargs="+", type=int, default=None, metavar="S",
                   help="a replicated build: execute the chapters at each of these split seeds (at least two; the "
                        "book is the first seed's) and show every claim's verdict under each seed beside one "
                        "replicated verdict on the Findings page")
    r.add_argument("--force", action="store_true",
                   help="execute every chapter again, even those whose inputs did not change")
    r.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="chapters executed at once, each as soon as those it reads completed (default: the "
                        "cores, at most 4; own runs: 1, chapter 3's study runs beside it); results are identical")
    r.add_argument("--no-execute", action="store_true",
                   help="build the book from the chapters already executed (kept in the cache; refused, naming "
                        "them, when they did not all complete under one profile and dataset, or, for own runs, "
                        "under these inputs and parameters)")
    r.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the studies on this Dask scheduler (e.g. tcp://127.0.0.1:8786; default: locally); "
                        "results are identical")
    own = r.add_argument_group(
        "the book of your own runs",
        "instead of the chapters on a dataset: significance tests, discriminative power, robustness,\n"
        "agreement and which metric to report, for runs made by any tool (rm.report.own_runs; built\n"
        "into ./recmetrics-runs/FOLDER unless --out: FOLDER is the name made safe plus a hash of it,\n"
        "or runs-HASH of the inputs' content when unnamed; one build of a book at a time)")
    own.add_argument("--qrels", default=None, metavar="FILE",
                     help="judgments: TREC qrels or a user,item,rating table (a {fold} template with --folds)")
    own.add_argument("--runs", nargs="+", default=None, metavar="FILE",
                     help="run files (TREC or user,item,score tables; each one system named after its file's "
                          "stem), or one folder of them; {fold} templates with --folds")
    own.add_argument("--name", default=None, metavar="LABEL",
                     help="the book's label (default: the run names); names its folder, which it never leaves")
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
    e.add_argument("-l", "--threshold", default=None, metavar="N",
                   help="relevance threshold (trec_eval's -l, an integer level read as trec_eval reads it: -l 1.5 is "
                        "1; a rating table takes a real threshold such as 3.5; default 1 for TREC qrels, 4 for "
                        "rating tables)")
    e.add_argument("-M", "--max-docs", type=int, default=None, metavar="N",
                   help="keep the top N items of every list (trec_eval -M)")
    e.add_argument("--format", choices=["table", "trec", "csv", "json"], default="table",
                   help="trec: trec_eval's exact layout")
    e.add_argument("--users", choices=["relevant", "all", "run"], default=None,
                   help="users averaged over (default: relevant; 'all' with -c; 'run' with --format trec)")
    e.add_argument("--aggregate", default="arithmetic", help="arithmetic | geometric | harmonic | quadratic")
    add_context_options(e)
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
        msg = f"a needed package is missing: {exc} (pip install 'recmetrics-eval[data]')"
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
