"""Whether two builds of the main book computed the same values: every findings table (verdicts, values,
evidence, firmness), every result and meta table, and every output of every executed chapter (text,
HTML, Markdown, streams) compared exactly, only what names a time, a memory address or a content key
left out (run times, the zoo's fit timings, pandas Styler ids, build dates).

    python benchmarks/compare_builds.py BOOKS_BEFORE BOOKS_AFTER     # two $RECMETRICS_BOOKS folders

Prints each difference and their count; meant for a change that must leave every value bit-identical
(build the book before and after it, each with its own RECMETRICS_BOOKS, same profile and dataset)."""
import re
import sys
from pathlib import Path

import nbformat
import pandas as pd

a, b = (Path(p) / "main" / "generated" for p in sys.argv[1:3])
bad = 0
TIMING = re.compile(r"( at 0x[0-9a-f]+|T_[0-9a-f]{5}|\"key\": \"[0-9a-f]{64}\"|ran in \d+(\.\d+)? s|in \d+(\.\d+)?\s?s\b|\d+\.\d+ s\b|computed['\"]?: ?['\"][^'\"]*['\"]|\b20\d\d-\d\d-\d\dT[\d:.]+Z?)")

def report(what, detail=""):
    global bad
    bad += 1
    print("DIFFERS:", what, detail[:400])

# findings tables
for f in sorted((a / "findings").glob("*.json")):
    g = b / "findings" / f.name
    if not g.exists():
        report(f"findings/{f.name} missing after"); continue
    ta, tb = pd.read_json(f), pd.read_json(g)
    if f.read_bytes() == g.read_bytes():
        continue
    if not ta.equals(tb):
        cols = [c for c in ta.columns if c in tb and not ta[c].equals(tb[c])]
        for c in cols:
            for i in range(min(len(ta), len(tb))):
                if not (ta[c].iloc[i] == tb[c].iloc[i] or (pd.isna(ta[c].iloc[i]) and pd.isna(tb[c].iloc[i]))):
                    report(f"findings/{f.name} row {ta['id'].iloc[i] if 'id' in ta else i} column {c}",
                           f"{ta[c].iloc[i]!r} -> {tb[c].iloc[i]!r}")
# result and meta tables
for sub in ("results", "meta"):
    for f in sorted((a / sub).rglob("*")) if (a / sub).exists() else []:
        if f.is_dir():
            continue
        g = b / sub / f.relative_to(a / sub)
        if not g.exists():
            report(f"{sub}/{f.name} missing after"); continue
        if f.suffix == ".parquet":
            x, y = pd.read_parquet(f), pd.read_parquet(g)
            if not x.equals(y):
                report(f"{sub}/{f.name}", str(x.compare(y) if x.shape == y.shape else (x.shape, y.shape)))
        elif f.read_bytes() != g.read_bytes():
            ta, tb = TIMING.sub("", f.read_text(errors="replace")), TIMING.sub("", g.read_text(errors="replace"))
            if ta != tb:
                report(f"{sub}/{f.name}", "")
# executed chapters: every output of every code cell
for f in sorted(a.glob("*.ipynb")):
    g = b / f.name
    na, nb_ = nbformat.read(f, 4), nbformat.read(g, 4)
    ca = [c for c in na.cells if c.cell_type == "code"]
    cb = [c for c in nb_.cells if c.cell_type == "code"]
    if len(ca) != len(cb):
        report(f"{f.name}: cell count"); continue
    for i, (x, y) in enumerate(zip(ca, cb)):
        def texts(c):
            out = []
            for o in c.get("outputs", []):
                for k in ("text/plain", "text/html", "text/markdown"):
                    v = o.get("data", {}).get(k) if "data" in o else None
                    if v is not None:
                        out.append(TIMING.sub("", v if isinstance(v, str) else "".join(v)))
                if o.get("output_type") == "stream":
                    out.append(TIMING.sub("", o.get("text", "")))
            return out
        tx, ty = texts(x), texts(y)
        if f.name.startswith("02_") and any("fit_s" in t for t in tx):   # the zoo's fit and list timings
            tx, ty = [re.sub(r"\s+", " ", re.sub(r"\d+\.\d+", "#", t)) for t in tx], [re.sub(r"\s+", " ", re.sub(r"\d+\.\d+", "#", t)) for t in ty]
        if tx != ty:
            diff = next(((p, q) for p, q in zip(tx, ty) if p != q), (len(tx), len(ty)))
            report(f"{f.name} cell {i}", repr(diff)[:400])
print(f"{bad} difference(s)")
