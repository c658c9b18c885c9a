"""Whether two builds of the main book computed the same values: every findings table (verdicts, values,
evidence, firmness), every result and meta table, and every output of every executed chapter (text,
HTML, Markdown, streams) compared exactly, only what names a time, a memory address or a content key
left out (run times, the zoo's fit timings, pandas Styler ids, build dates).

    python benchmarks/compare_builds.py BOOKS_BEFORE BOOKS_AFTER     # two $RECMETRICS_BOOKS folders

Prints each difference and their count (exit 1 when there is one); meant for a change that must leave
every value bit-identical (build the book before and after it, each with its own RECMETRICS_BOOKS, same
profile and dataset). ``bench_book.py --against REV`` runs it on the two builds it times.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

#: what names a time, an address, a content key or a date (left out of the comparison)
TIMING = re.compile(r"( at 0x[0-9a-f]+|T_[0-9a-f]{5}|\"key\": \"[0-9a-f]{64}\"|ran in \d+(\.\d+)? s|in \d+(\.\d+)?\s?s\b"
                    r"|\d+\.\d+ s\b|computed['\"]?: ?['\"][^'\"]*['\"]|\b20\d\d-\d\d-\d\dT[\d:.]+Z?)")


def _same(x, y) -> bool:
    import pandas as pd

    return bool(x == y) or bool(pd.isna(x) and pd.isna(y))


def _findings(a: Path, b: Path) -> list[str]:
    import pandas as pd

    out = []
    for f in sorted((a / "findings").glob("*.json")):
        g = b / "findings" / f.name
        if not g.exists():
            out.append(f"findings/{f.name}: missing after")
            continue
        if f.read_bytes() == g.read_bytes():
            continue
        ta, tb = pd.read_json(f), pd.read_json(g)
        if len(ta) != len(tb):
            out.append(f"findings/{f.name}: {len(ta)} rows -> {len(tb)}")
            continue
        for c in (c for c in ta.columns if c in tb and not ta[c].equals(tb[c])):
            out += [f"findings/{f.name} row {_row_id(ta, c, i)} {_change(c, ta[c].iloc[i], tb[c].iloc[i])}"
                    for i in range(len(ta)) if not _same(ta[c].iloc[i], tb[c].iloc[i])]
    return out


def _row_id(table, column: str, i: int):
    cell = table[column].iloc[i]
    return table["id"].iloc[i] if "id" in table else cell.get("id", i) if isinstance(cell, dict) else i


def _change(column: str, a, b) -> str:
    """``column: a -> b``; for two records, only the fields that differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return "; ".join(f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in dict.fromkeys([*a, *b])
                         if not _same(a.get(k), b.get(k)))
    return f"column {column}: {a!r} -> {b!r}"


def _tables(a: Path, b: Path) -> list[str]:
    import pandas as pd

    out = []
    for sub in ("results", "meta"):
        for f in sorted(p for p in (a / sub).rglob("*") if p.is_file()) if (a / sub).exists() else []:
            g = b / sub / f.relative_to(a / sub)
            if not g.exists():
                out.append(f"{sub}/{f.relative_to(a / sub)}: missing after")
            elif f.suffix == ".parquet":
                x, y = pd.read_parquet(f), pd.read_parquet(g)
                if not x.equals(y):
                    out.append(f"{sub}/{f.name}: {x.compare(y) if x.shape == y.shape else (x.shape, y.shape)}")
            elif f.read_bytes() != g.read_bytes() and (TIMING.sub("", f.read_text(errors="replace"))
                                                       != TIMING.sub("", g.read_text(errors="replace"))):
                out.append(f"{sub}/{f.relative_to(a / sub)}: differs")
    return out


def _texts(cell, zoo: bool) -> list[str]:
    out = []
    for o in cell.get("outputs", []):
        for k in ("text/plain", "text/html", "text/markdown"):
            v = o.get("data", {}).get(k)
            if v is not None:
                out.append(TIMING.sub("", v if isinstance(v, str) else "".join(v)))
        if o.get("output_type") == "stream":
            out.append(TIMING.sub("", o.get("text", "")))
    if zoo and any("fit_s" in t for t in out):     # the zoo's fit and list timings
        out = [re.sub(r"\s+", " ", re.sub(r"\d+\.\d+", "#", t)) for t in out]
    return out


def _chapters(a: Path, b: Path) -> list[str]:
    import nbformat

    out = []
    for f in sorted(a.glob("*.ipynb")):
        if not (b / f.name).exists():
            out.append(f"{f.name}: missing after")
            continue
        ca, cb = ([c for c in nbformat.read(p, 4).cells if c.cell_type == "code"] for p in (f, b / f.name))
        if len(ca) != len(cb):
            out.append(f"{f.name}: {len(ca)} code cells -> {len(cb)}")
            continue
        for i, (x, y) in enumerate(zip(ca, cb)):
            tx, ty = _texts(x, f.name.startswith("02_")), _texts(y, f.name.startswith("02_"))
            if tx != ty:
                first = next(((p, q) for p, q in zip(tx, ty) if p != q), (len(tx), len(ty)))
                out.append(f"{f.name} cell {i}: {first!r}"[:400])
    return out


def differences(before: Path, after: Path) -> list[str]:
    """Every difference between two builds' ``generated`` folders (empty: the same values)."""
    before, after = Path(before), Path(after)
    return _findings(before, after) + _tables(before, after) + _chapters(before, after)


def main(argv=None) -> int:
    books = (argv if argv is not None else sys.argv[1:])
    if len(books) != 2:
        raise SystemExit(__doc__)
    found = differences(*(Path(p) / "main" / "generated" for p in books))
    for line in found:
        print("DIFFERS:", line)
    print(f"{len(found)} difference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
