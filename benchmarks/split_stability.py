"""Per-claim verdicts of books built at several split seeds, and issue 25 §1's three figures.

    python benchmarks/split_stability.py 0=DIR0/findings 1=DIR1/findings 2=DIR2/findings [3=... ...]

Each argument is ``seed=folder``: the ``findings`` folder of a build (``generated/findings`` of the
book's work folder, ``~/.cache/recmetrics/books/main`` or ``$RECMETRICS_BOOKS/main``, after
``recmetrics report -p seed=S``). Prints one line per claim row whose verdict is not the same
under every seed (``--all``: every row), then the figures: claim rows, rows that agree under one
seed and disagree under another, rows that change at all, rows decided under every seed. With more
than three seeds it also prints those figures averaged over every three of them
(:func:`recmetrics.report.stability.expected_stability`): one triple of seeds is one draw.
"""
import argparse

import pandas as pd

from recmetrics.report.stability import expected_stability, stability, verdicts_by_seed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", help="seed=findings folder")
    ap.add_argument("--all", action="store_true", help="print every claim row, not only those that change")
    args = ap.parse_args(argv)
    dirs = dict(a.split("=", 1) for a in args.folders)
    v = verdicts_by_seed(dirs)
    shown = v if args.all else v[v.nunique(axis=1) > 1]
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 60):
        print(shown.to_string() if len(shown) else "(no claim row changes verdict)")
    s = stability(v)
    print(f"\n{s['claims']} claim rows under every seed; agrees under one and disagrees under another: {s['opposite']}; "
          f"changed verdict: {s['changed']} ({s['changed_share']:.1%}); decided under every seed: "
          f"{s['decided_everywhere']} ({s['decided_share']:.1%})")
    if v.shape[1] > 3:
        e = expected_stability(v)
        print(f"averaged over the {e['subsets']} triples of these {v.shape[1]} seeds: agrees under one and disagrees "
              f"under another {e['opposite']:.2f}; changed verdict {e['changed']:.2f} ({e['changed_share']:.1%}); "
              f"decided under every seed {e['decided_everywhere']:.2f} ({e['decided_share']:.1%})")


if __name__ == "__main__":
    main()
