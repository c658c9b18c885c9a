"""TREC and tabular files for runs and judgments.

* run file: ``qid Q0 docno rank score tag`` (whitespace separated; trec_eval ignores the rank
  column and orders by score, ties by docno descending; so does :func:`read_trec_run`).
* qrels file: ``qid 0 docno rel``.
* tables (CSV/TSV/parquet): ``user,item,score[,rank]`` for runs, ``user,item,rating`` for qrels.

Ids: with ``ids="auto"`` (default) user and item ids are converted to integers when every one
of them is a canonical integer literal (``"42"``, not ``"042"``), so that files and DataFrames
with integer ids match; ``ids="str"`` keeps them as strings.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FormatError, InputError
from .qrels import Qrels
from .run import Run


def _ids(values: list[str], mode: str) -> np.ndarray:
    arr = np.asarray(values, dtype=object)
    if mode == "str":
        return arr.astype(str)
    if mode != "auto":
        raise InputError(f"ids must be 'auto' or 'str', got {mode!r}")
    try:
        as_int = np.asarray([int(v) for v in values], dtype=np.int64)
    except ValueError:
        return arr.astype(str)
    if all(str(i) == v for i, v in zip(as_int.tolist(), values)):
        return as_int
    return arr.astype(str)


def _read_lines(path, n_fields: int, what: str, layout: str):
    path = Path(path)
    if not path.exists():
        raise InputError(f"{what} file {str(path)!r} does not exist")
    fields: list[list[str]] = [[] for _ in range(n_fields)]
    linenos: list[int] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            linenos.append(lineno)
            if len(parts) != n_fields:
                raise FormatError(f"{path}:{lineno}: expected {n_fields} fields ({layout}), "
                                  f"found {len(parts)}: {line.rstrip()!r}")
            for col, value in zip(fields, parts):
                col.append(value)
    if not fields[0]:
        raise InputError(f"{what} file {str(path)!r} holds no line")
    return path, np.asarray(linenos), fields


def _reject(bad: np.ndarray, path, linenos: np.ndarray, message) -> None:
    """Raise a FormatError at the first True of ``bad``: ``message(i)`` describes entry ``i``."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{path}:{linenos[i]}: {message(i)}")


def _floats(values: list[str], path, linenos: np.ndarray, what: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except ValueError:
        bad = np.array([not _is_float(v) for v in values])
        _reject(bad, path, linenos, lambda i: f"{what} {values[i]!r} is not a number")
        raise


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_trec_run(path, *, ids: str = "auto", name: str | None = None) -> Run:
    """Read a TREC run file (``qid Q0 docno rank score tag``) into a :class:`Run`."""
    path, lines, (qid, _, docno, _rank, score, tag) = _read_lines(path, 6, "run", "qid Q0 docno rank score tag")
    scores = _floats(score, path, lines, "score")
    _reject(~np.isfinite(scores), path, lines, lambda i: f"score {score[i]!r} is not finite")
    frame = pd.DataFrame({"user": _ids(qid, ids), "item": _ids(docno, ids), "score": scores})
    _reject(frame.duplicated(["user", "item"]).to_numpy(), path, lines,
            lambda i: f"docno {docno[i]!r} appears twice for qid {qid[i]!r}")
    return Run.from_frame(frame, name=name or tag[0])


def write_trec_run(run: Run, path, tag: str | None = None) -> Path:
    """Write a :class:`Run` as a TREC run file (scores descending; rank = position)."""
    frame = run.to_frame()
    tag = tag or run.name or "recmetrics"
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        for u, i, r, s in zip(frame.user.tolist(), frame.item.tolist(), frame["rank"].tolist(), frame.score.tolist()):
            fh.write(f"{u} Q0 {i} {r} {s!r} {tag}\n")
    return path


def read_trec_qrels(path, *, threshold: float = 1.0, max_rating: float | None = None, ids: str = "auto") -> Qrels:
    """Read a TREC qrels file (``qid 0 docno rel``). The default threshold 1 is trec_eval's."""
    path, lines, (qid, _, docno, rel) = _read_lines(path, 4, "qrels", "qid 0 docno rel")
    rels = _floats(rel, path, lines, "relevance")
    _reject((rels < 0) | ~np.isfinite(rels), path, lines,
            lambda i: f"relevance {rel[i]!r} must be a non-negative number")
    frame = pd.DataFrame({"user": _ids(qid, ids), "item": _ids(docno, ids), "rating": rels})
    _reject(frame.duplicated(["user", "item"]).to_numpy(), path, lines,
            lambda i: f"docno {docno[i]!r} is judged twice for qid {qid[i]!r}")
    return Qrels(frame, threshold=threshold, max_rating=max_rating)


def write_trec_qrels(qrels: Qrels, path, *, scale: float = 1.0) -> Path:
    """Write judgments as a TREC qrels file; ``scale`` multiplies ratings (trec_eval wants integers:
    use ``scale=2`` for half-star ratings)."""
    frame = qrels.to_frame()
    rel = frame.rating.to_numpy() * scale
    if not np.allclose(rel, np.round(rel)):
        raise InputError(f"ratings times scale={scale} are not integers; trec_eval needs integer relevance "
                         "(use scale=2 for half stars)")
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        for u, i, r in zip(frame.user.tolist(), frame.item.tolist(), np.round(rel).astype(int).tolist()):
            fh.write(f"{u} 0 {i} {r}\n")
    return path


def read_table(path, **kw) -> pd.DataFrame:
    """CSV/TSV/parquet by extension (``sep`` may be given for text files)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"file {str(path)!r} does not exist")
    suffix = "".join(path.suffixes[-2:]).lower()
    if suffix.endswith(".parquet"):
        return pd.read_parquet(path)
    sep = kw.pop("sep", "\t" if ".tsv" in suffix else ",")
    return pd.read_csv(path, sep=sep, **kw)


def read_run(path, *, name: str | None = None, **kw) -> Run:
    """Read a run from a TREC file or a ``user,item,score[,rank]`` table (by extension: .csv,
    .tsv, .parquet; anything else is read as TREC)."""
    path = Path(path)
    if path.suffix.lower() not in (".csv", ".tsv", ".parquet"):
        return read_trec_run(path, name=name, **kw)
    frame = read_table(path, **kw)
    rank_col = "rank" if "rank" in frame.columns else None
    return Run.from_frame(frame, rank_col=rank_col, name=name or path.stem)


def read_qrels(path, *, threshold: float | None = None, **kw) -> Qrels:
    """Read judgments from a TREC qrels file or a ``user,item,rating`` table."""
    path = Path(path)
    if path.suffix.lower() not in (".csv", ".tsv", ".parquet"):
        return read_trec_qrels(path, threshold=1.0 if threshold is None else threshold, **kw)
    return Qrels(read_table(path), threshold=4.0 if threshold is None else threshold)
