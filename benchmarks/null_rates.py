"""The rule's error rate for every claim that makes several comparisons: each check replayed with all
its uncertain comparisons at their null (:func:`recmetrics.meta.firmness.null_rate`).

    RECMETRICS_REPLAY_DIR=/tmp/replay recmetrics report --out /tmp/site     # keeps each chapter's claims
    python benchmarks/null_rates.py /tmp/replay [--draws 2000] [--json FILE]

Prints, for every check that made at least two uncertain comparisons, how many it made and the share of
null replays that read ``disagrees`` (the family rule keeps it at most at the rule's level, 4.55 %,
however many comparisons; one-sided claims about half that), with its binomial se; and the seconds
the replays took.
"""
import argparse
import json
import math
import pickle
import time
from pathlib import Path

from recmetrics.meta.comparisons import NOISE_SE
from recmetrics.meta.firmness import null_rate
from recmetrics.papers.choices import joint_check

LEVEL = math.erfc(NOISE_SE / math.sqrt(2.0))


def replayable(claim, kept):
    """``(check, results)`` that replay ``claim`` as its chapter decided it: under every reading of an
    open choice at once when the chapter kept one (:func:`recmetrics.papers.choices.joint_check`)."""
    if kept.get("choice"):
        return joint_check(claim, kept["results"]), {}
    return claim.check, kept["results"]


def rates(folder, draws: int = 2000):
    """``[{chapter, id, comparisons, null_disagrees, se, seconds}]`` for every kept claim."""
    out = []
    for path in sorted(Path(folder).glob("*.pkl")):
        with open(path, "rb") as fh:
            kept = pickle.load(fh)
        for claim in kept["claims"]:
            t0 = time.perf_counter()
            check, results = replayable(claim, kept)
            rate, size = null_rate(check, results, key=claim.id, draws=draws)
            out.append({"chapter": path.stem.rsplit("-", 1)[0], "id": claim.id, "comparisons": size,
                        "null_disagrees": rate, "se": math.sqrt(max(rate * (1 - rate), 1e-12) / draws)
                        if size else math.nan, "seconds": time.perf_counter() - t0})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="the $RECMETRICS_REPLAY_DIR of a build")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    rows = rates(args.folder, args.draws)
    multi = [r for r in rows if r["comparisons"] >= 2]
    for r in multi:
        print(f"{r['chapter']:32} {r['id']:38} {r['comparisons']:4d} comparisons  null disagrees "
              f"{r['null_disagrees']:6.2%} ± {r['se']:.2%}  ({r['seconds']:.1f} s)")
    worst = max(multi, key=lambda r: r["null_disagrees"]) if multi else None
    print(f"\n{len(multi)} checks make several comparisons (of {len(rows)} kept); level {LEVEL:.2%}; highest "
          + (f"{worst['null_disagrees']:.2%} ({worst['id']})" if worst else "n/a")
          + f"; {args.draws} draws each, {sum(r['seconds'] for r in rows):.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"draws": args.draws, "level": LEVEL, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
