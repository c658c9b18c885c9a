"""How far another split's estimates lie: the firmness figures recomputed for several split factors on
books built at several seeds, the factor chosen on some seeds and checked on others.

    RECMETRICS_REPLAY_DIR=/tmp/replay/sS recmetrics report -p seed=S --out /tmp/site-S   # for each seed S
    python benchmarks/firmness_calibration.py --fit 0=/tmp/replay/s0 1=/tmp/replay/s1 2=/tmp/replay/s2 \\
        --check 6=/tmp/replay/s6 7=/tmp/replay/s7 8=/tmp/replay/s8 [--factors 1 1.5 2 2.5] [--json FILE]

For every kept claim (:func:`recmetrics.meta.findings.keep_for_replay`) it reads the verdict the
chapter read and computes its firmness (:func:`recmetrics.meta.firmness.firmness`, seeded as the book
seeds it) at each factor. On the ``--fit`` seeds it picks the smallest factor at which the rows read
firm keep their verdict under another seed in at least 97 % of the cases and the rows that change per
pair of seeds are within 0.65-1.5 times the predicted number; on the ``--check`` seeds, which took no
part in the choice, it prints the figures :func:`recmetrics.report.stability.honesty` gives at every
factor: the share of rows firm, how many of the rows firm under one seed read the same under another,
and observed against predicted changes. The chosen factor is what
:data:`recmetrics.meta.firmness.SPLIT_FACTOR` should be.
"""
import argparse
import itertools
import json
import math
import pickle
import time
from pathlib import Path

import numpy as np
import pandas as pd

from recmetrics.meta.firmness import DRAWS, firmness
from recmetrics.papers.choices import joint_check
from recmetrics.report.stability import honesty

#: what a firm verdict must do on other seeds: keep its verdict in this share of the (row, pair of seeds),
#: and the rows that change per pair stay within these multiples of the predicted number
KEPT, RATIO = 0.97, (0.65, 1.5)
#: the figures of :func:`recmetrics.report.stability.honesty` the calibration records
FIGURES = ("firm_share", "firm_kept", "firm_rows", "observed", "predicted", "ratio", "opposite")


def _rows(folder):
    """``[(chapter, id, occurrence, check, results, seed)]`` for every claim kept in ``folder``."""
    out = []
    for path in sorted(Path(folder).glob("*.pkl")):
        with open(path, "rb") as fh:
            kept = pickle.load(fh)
        chapter = path.stem            # the chapter and its claims (one file per assess)
        seed = int(kept["context"].get("seed") or 0)
        seen = {}
        for claim in kept["claims"]:
            occ = seen.get(claim.id, 0)
            seen[claim.id] = occ + 1
            check = joint_check(claim, kept["results"]) if kept.get("choice") else claim.check
            results = {} if kept.get("choice") else kept["results"]
            out.append((chapter, claim.id, occ, check, results, seed))
    return out


def tables(folders, factors, draws=DRAWS):
    """Verdicts (rows x seeds) and ``{factor: firmness (rows x seeds)}`` for ``{seed: replay folder}``."""
    verdicts, firm = {}, {f: {} for f in factors}
    for label, folder in folders.items():
        t0 = time.perf_counter()
        for chapter, cid, occ, check, results, seed in _rows(folder):
            key = (chapter, cid, occ)
            try:
                v = str(check(results).verdict)
            except KeyError:
                v = "inconclusive"
            verdicts.setdefault(label, {})[key] = v
            for f in factors:
                value = 1.0 if v == "not testable" else firmness(check, results, v, key=cid, seed=seed, draws=draws,
                                                                  factor=f)[0]
                firm[f].setdefault(label, {})[key] = value
        print(f"seed {label}: {len(verdicts[label])} rows, {time.perf_counter() - t0:.0f} s", flush=True)
    return pd.DataFrame(verdicts), {f: pd.DataFrame(v) for f, v in firm.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="+", required=True, help="seed=replay folder: the seeds the factor is chosen on")
    ap.add_argument("--check", nargs="+", default=[], help="seed=replay folder: the seeds it is checked on")
    ap.add_argument("--factors", nargs="+", type=float, default=[1.0, 1.5, 2.0, 2.5])
    ap.add_argument("--draws", type=int, default=DRAWS)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    fit = dict(a.split("=", 1) for a in args.fit)
    chk = dict(a.split("=", 1) for a in args.check)
    out = {"factors": args.factors, "draws": args.draws, "fit": {}, "check": {}}
    v, f = tables({**fit, **chk}, args.factors, args.draws)
    for part, seeds in (("fit", list(fit)), ("check", list(chk))):
        if not seeds:
            continue
        for factor in args.factors:
            h = honesty(v[seeds], f[factor][seeds])
            out[part][str(factor)] = {k: h[k] for k in FIGURES}
            print(f"{part} seeds {', '.join(seeds)}, factor {factor:g}: observed {h['observed']} / predicted "
                  f"{h['predicted']:.1f} = {h['ratio']:.2f}; firm {h['firm_share']:.1%}; firm rows kept "
                  f"{h['firm_kept']:.1%}; opposite {h['opposite']}")
    # the smallest factor at which, on the fit seeds, the rows read firm keep their verdict under another
    # seed (at least KEPT of the row-pairs) and the changes are within RATIO of those predicted; else the
    # factor whose ratio is nearest 1
    ok = [k for k in args.factors if out["fit"][str(k)]["firm_kept"] >= KEPT
          and RATIO[0] <= out["fit"][str(k)]["ratio"] <= RATIO[1]]
    best = min(ok) if ok else min(args.factors, key=lambda k: abs(math.log(out["fit"][str(k)]["ratio"])))
    out["chosen"] = best
    print(f"chosen on the fit seeds: factor {best:g}" + (f"; on the check seeds: {out['check'][str(best)]}"
                                                         if chk else ""))
    seeds = list({**fit, **chk})
    if len(seeds) > 3:    # one triple is one draw: the spread over every triple of the seeds, and all pooled
        out["triples"] = {}
        for factor in args.factors:
            hs = [honesty(v[list(t)], f[factor][list(t)]) for t in itertools.combinations(seeds, 3)]
            pooled = honesty(v[seeds], f[factor][seeds])
            spread = {k: [float(np.min([h[k] for h in hs])), float(np.median([h[k] for h in hs])),
                          float(np.max([h[k] for h in hs]))] for k in ("ratio", "firm_kept", "firm_share")}
            short = {"ratio": sum(h["ratio"] < RATIO[0] or h["ratio"] > RATIO[1] for h in hs),
                     "firm_kept": sum(h["firm_kept"] < KEPT for h in hs)}
            out["triples"][str(factor)] = {"pooled": {k: pooled[k] for k in FIGURES}, "min_median_max": spread, "triples_outside": short, "triples": len(hs)}
            print(f"all {len(seeds)} seeds pooled, factor {factor:g}: observed {pooled['observed']} / predicted "
                  f"{pooled['predicted']:.1f} = {pooled['ratio']:.2f}; firm {pooled['firm_share']:.1%}; firm rows "
                  f"kept {pooled['firm_kept']:.1%}; over the {len(hs)} triples (min / median / max): ratio "
                  + " / ".join(f"{x:.2f}" for x in spread["ratio"]) + ", firm rows kept "
                  + " / ".join(f"{x:.1%}" for x in spread["firm_kept"])
                  + f"; triples outside the bounds: ratio {short['ratio']}, kept {short['firm_kept']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float))


if __name__ == "__main__":
    main()
