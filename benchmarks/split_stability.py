"""Per-claim verdicts of books built at several split seeds, and whether their firmness told the truth.

    python benchmarks/split_stability.py 6=DIR6/findings 7=DIR7/findings 8=DIR8/findings [9=... ...]

Each argument is ``seed=folder``: the ``findings`` folder of a build (``generated/findings`` of the
book's work folder, ``~/.cache/recmetrics/books/main`` or ``$RECMETRICS_BOOKS/main``, after
``recmetrics report -p seed=S``; copy it before the next build).
Prints one line per claim row whose verdict is not the same under every seed (``--all``: every row)
with its firmness under each seed, then: claim rows, rows that agree under one seed and disagree under
another, rows that change at all, rows decided under every seed (averaged over every triple when more
than three seeds are given), and the firmness figures against the builds
(:func:`recmetrics.report.stability.honesty`): the share of rows firm, how many of the rows firm under
one seed read the same under another, and per pair of seeds the rows that changed beside the number
the firmness figures predict. ``--json FILE`` writes the figures.
"""
import argparse
import json

import pandas as pd

from recmetrics.report.stability import expected_stability, firmness_by_seed, honesty, stability, verdicts_by_seed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", help="seed=findings folder")
    ap.add_argument("--all", action="store_true", help="print every claim row, not only those that change")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    dirs = dict(a.split("=", 1) for a in args.folders)
    v, f = verdicts_by_seed(dirs), firmness_by_seed(dirs)
    shown = v if args.all else v[v.nunique(axis=1) > 1]
    table = shown.astype(str) + f.reindex_like(shown).map(lambda x: f" ({x:.2f})")
    with pd.option_context("display.max_rows", None, "display.width", 250, "display.max_colwidth", 60):
        print(table.to_string() if len(shown) else "(no claim row changes verdict)")
    s = stability(v)
    print(f"\n{s['claims']} claim rows under every seed; agrees under one and disagrees under another: {s['opposite']}; "
          f"changed verdict: {s['changed']} ({s['changed_share']:.1%}); decided under every seed: "
          f"{s['decided_everywhere']} ({s['decided_share']:.1%})")
    out = {"stability": s}
    if v.shape[1] > 3:
        e = expected_stability(v)
        out["expected_stability"] = e
        print(f"averaged over the {e['subsets']} triples of these {v.shape[1]} seeds: agrees under one and disagrees "
              f"under another {e['opposite']:.2f}; changed verdict {e['changed']:.2f} ({e['changed_share']:.1%}); "
              f"decided under every seed {e['decided_everywhere']:.2f} ({e['decided_share']:.1%})")
    if f.notna().any().all():    # every build computed firmness (NaN rows: uncertainty unknown)
        h = honesty(v, f)
        out["honesty"] = h
        print(f"firm (≥ 0.9) on average: {h['firm_share']:.1%} of the rows; of the rows firm under one seed, "
              f"{h['firm_kept']:.1%} read the same under another ({h['firm_rows']} row-pairs)")
        for p in h["pairs"]:
            print(f"  seeds {p['seeds'][0]} / {p['seeds'][1]}: {p['observed']} rows changed, "
                  f"{p['predicted']:.1f} predicted")
        print(f"over the {len(h['pairs'])} pairs: {h['observed']} changed, {h['predicted']:.1f} predicted "
              f"(observed / predicted {h['ratio']:.2f}); rows of unknown firmness under a seed of the pair: "
              f"{h['unknown']} (row, pair), of which {h['unknown_changed']} changed")
    else:
        print("(some builds carry no firmness: built before it was computed)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
