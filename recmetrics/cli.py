"""Command line: ``recmetrics evaluate | datasets | metrics | report``."""
from __future__ import annotations

import argparse
import json
import sys
import warnings

from .errors import RecmetricsError

DEFAULT_METRICS = ["P@10", "Recall@10", "AP@100", "nDCG@100", "RR", "bpref", "infAP"]


def _evaluate(args) -> int:
    import pandas as pd

    from .data.io import read_qrels, read_run
    from .evaluation import evaluate

    qrels = read_qrels(args.qrels, threshold=args.threshold)
    frames = []
    for path in args.runs:
        run = read_run(path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = evaluate(run, qrels, args.metrics, users=args.users, aggregate=args.aggregate)
        for w in caught:
            print(f"recmetrics: warning: {w.message}", file=sys.stderr)
        if args.per_user:
            long = res.per_user.reset_index().melt(id_vars="user", var_name="metric", value_name="value")
            long["user"] = long["user"].astype(str)
            frames.append(long.assign(run=run.name))
        frames.append(pd.DataFrame({"run": run.name, "metric": res.aggregate.index, "user": "all",
                                    "value": res.aggregate.to_numpy()}))
    out = pd.concat(frames, ignore_index=True)[["run", "metric", "user", "value"]]
    if args.format == "csv":
        out.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        json.dump(out.to_dict(orient="records"), sys.stdout, indent=1)
        print()
    else:  # trec_eval style: measure, user|all, value (run name first when several runs)
        several = len(args.runs) > 1
        for r in out.itertuples(index=False):
            prefix = f"{r.run}\t" if several else ""
            print(f"{prefix}{r.metric:<14}\t{r.user}\t{r.value:.4f}")
    return 0


def _datasets(args) -> int:
    from .data import datasets

    if args.name:
        ds = datasets.load(args.name)
        print(datasets.describe(args.name))
        print(datasets.stats(ds).to_string())
    else:
        print(datasets.list().to_string(index=False))
    return 0


def _metrics(args) -> int:
    from . import metrics

    print(metrics.table()[["metric", "cutoff", "trec_eval", "description"]].to_string(index=False))
    return 0


def _report(args) -> int:
    from .report import build

    index = build(profile=args.profile, dataset=args.dataset, out=args.out, execute=not args.no_execute)
    print(f"book built: {index}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="recmetrics", description="Evaluate top-N recommenders and their metrics.")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("evaluate", help="evaluate runs against judgments (trec_eval style)")
    e.add_argument("qrels", help="TREC qrels file (qid 0 docno rel) or user,item,rating CSV/TSV/parquet")
    e.add_argument("runs", nargs="+", help="TREC run file(s) or user,item,score[,rank] tables")
    e.add_argument("-m", "--metrics", nargs="+", default=DEFAULT_METRICS, help="e.g. P@10 nDCG@100 bpref")
    e.add_argument("--per-user", action="store_true", help="print one line per user too")
    e.add_argument("--format", choices=["table", "csv", "json"], default="table")
    e.add_argument("--threshold", type=float, default=None,
                   help="relevance threshold (default 1 for TREC qrels as trec_eval, 4 for rating tables)")
    e.add_argument("--users", choices=["relevant", "all"], default="relevant",
                   help="evaluate users with >= 1 relevant item (default) or every judged user")
    e.add_argument("--aggregate", default="arithmetic", help="arithmetic | geometric | harmonic | quadratic")
    e.set_defaults(func=_evaluate)

    d = sub.add_parser("datasets", help="list the registered datasets, or describe one")
    d.add_argument("name", nargs="?")
    d.set_defaults(func=_datasets)

    m = sub.add_parser("metrics", help="list the registered metrics")
    m.set_defaults(func=_metrics)

    r = sub.add_parser("report", help="run every analysis notebook and build the book")
    r.add_argument("--profile", choices=["quick", "paper"], default="quick")
    r.add_argument("--dataset", default="movielens-small")
    r.add_argument("--out", default=None, help="folder of the built site (default book/_build/html)")
    r.add_argument("--no-execute", action="store_true",
                   help="rebuild the book from the notebooks already executed in book/generated/")
    r.set_defaults(func=_report)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except RecmetricsError as exc:
        print(f"recmetrics: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
