"""TREC and tabular files for runs and judgments.

* run file: ``qid Q0 docno rank score tag [ignored...]`` (whitespace separated; trec_eval ignores
  the rank column and orders by score, ties by docno descending; so does :func:`read_trec_run`).
* qrels file: ``qid 0 docno rel``. ``rel`` is read as trec_eval reads it (``atol``): a fractional
  grade is truncated toward zero (with a warning); negative labels are kept and mean "in the pool
  but not judged" (trec_eval's ``RELVALUE_UNJUDGED``, see ``form_res_rels.c``).
* tables (CSV/TSV/parquet): ``user,item,score[,rank]`` for runs, ``user,item,rating`` for qrels.

Ids: **ids are strings**, as in trec_eval: ``"01"`` and ``"1"`` are different ids, in TREC files
and in CSV/TSV tables alike (parquet keeps its column types; a mixed-type id column is an error).
Python objects with integer ids on one side and strings on the other are compared as strings
(see :func:`recmetrics.judged.common_ids`).

Every text reader accepts ``#`` comment lines, blank lines, tabs or spaces, Windows line endings,
a UTF-8 byte-order mark, ``.gz``/``.bz2``/``.xz`` (stdlib) and ``.zst`` (pyarrow) compression
and ``-`` for standard input. Well-formed files take a vectorised path (pyarrow's multithreaded
CSV reader straight into integer codes); anything unusual falls back to a line-by-line reader,
which is the reference: every error names the file and the 1-based line.
"""
from __future__ import annotations

import io as _io
import warnings
from pathlib import Path

import numpy as np

from ..errors import FormatError, InputError
from .qrels import Qrels
from .run import Run

from .sources import (COMPRESSIONS, _bom, _decode, _fast_columns, _floats, _head, _name, _reject,  # noqa: F401
                      _release_arrow_memory, _slow_columns, _source, _suffixes, read_bytes)

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")
RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid 0 docno rel"


def _codes_of(values: list[str]):
    import pandas as pd

    codes, vocab = pd.factorize(np.asarray(values, dtype=object))
    return codes.astype(np.int64), np.asarray(vocab, dtype=object)


def _first_duplicate(ucodes, icodes, n_items) -> int:
    """Index (in input order) of the first repeated (user, item) pair, or -1."""
    keys = ucodes * np.int64(max(n_items, 1)) + icodes
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1])
    return -1 if not len(dup) else int(order[dup + 1].min())


def _check_not_table(path, what: str) -> None:
    _, fmt = _suffixes(path)
    if fmt in TABLE_SUFFIXES:
        raise InputError(f"{path}: a {what} named {fmt} is read as a table; expected TREC layout here")


def _slow_trec(raw, fname, ncols, layout, kind, value_col, value_name, duplicate):
    """The reference (line-by-line) reader of a TREC run or qrels file: columns, the checked
    numeric column ``value_col`` and the id codes; every problem names ``fname:line``. ``kind`` is
    ``"run"`` (extra fields allowed, as trec_eval 10) or ``"qrels"``; ``duplicate`` the message
    tail for a repeated (qid, docno), formatted with ``qid``."""
    lines, cols = _slow_columns(raw, fname, ncols, layout, extra_ok=kind == "run")
    if not len(lines):
        noun = "run" if kind == "run" else "judgment"
        raise InputError(f"{kind} file {fname!r} holds no {noun} line ({layout})")
    raw_values = cols[value_col]
    values = _floats(raw_values, fname, lines, value_name)
    _reject(~np.isfinite(values), fname, lines,
            lambda i: f"{value_name} {raw_values[i]!r} is not a finite number")
    qid, docno = cols[0], cols[2]
    ucodes, users = _codes_of(qid)
    icodes, vocab = _codes_of(docno)
    d = _first_duplicate(ucodes, icodes, len(vocab))
    if d >= 0:
        raise FormatError(f"{fname}:{lines[d]}: docno {docno[d]!r} " + duplicate.format(qid=qid[d]))
    return lines, cols, values, (ucodes, users, icodes, vocab)


# --------------------------------------------------------------------------- runs
def read_trec_run(path, *, name: str | None = None, max_docs: int | None = None, ids: str = "str") -> Run:
    """Read a TREC run file (``qid Q0 docno rank score tag``; further fields are ignored, as
    trec_eval 10 does) into a :class:`Run`. ``max_docs``: keep the top ``max_docs`` of every list
    after sorting (trec_eval's ``-M``). Ids are strings (``ids`` is kept for compatibility)."""
    raw = _source(path, "run")
    fname = _name(path)
    fast = _fast_columns(raw, 6, {0: "str", 2: "str", 4: "float"})
    if fast is not None:
        (ucodes, users), (icodes, vocab), scores = fast[0], fast[2], fast[4]
        del fast
        _release_arrow_memory()
        tag = _head(raw).decode("utf-8", "replace").split()[5]
        if str(path) != "-":
            del raw  # peak memory: the reference reader re-reads the file if it is needed
        if np.isfinite(scores).all():
            run = Run.from_codes(ucodes, users, icodes, vocab, scores, name=name or tag, owned=True)
            del ucodes, icodes, scores
            _release_arrow_memory()
            if not _has_repeats(run.codes[0]):
                return run if max_docs is None else run.head(int(max_docs))
        raw = _source(path, "run") if str(path) != "-" else raw  # the reference reader reports the line
    lines, cols, scores, (ucodes, users, icodes, vocab) = _slow_trec(
        raw, fname, 6, RUN_LAYOUT, "run", 4, "score", "appears twice for qid {qid!r}")
    return Run.from_codes(ucodes, users, icodes, vocab, scores, name=name or cols[5][0], max_docs=max_docs)


def _has_repeats(codes: np.ndarray) -> bool:
    """Whether a row of a (users x depth) code matrix (-1 = padding) holds an item twice."""
    s = np.sort(codes, axis=1)
    return bool(((s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)).any())


def write_trec_run(run: Run, path, tag: str | None = None) -> Path:
    """Write a :class:`Run` as a TREC run file (scores descending; rank = position)."""
    frame = run.to_frame()
    tag = tag or run.name or "recmetrics"
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        for u, i, r, s in zip(frame.user.tolist(), frame.item.tolist(), frame["rank"].tolist(), frame.score.tolist()):
            fh.write(f"{u} Q0 {i} {r} {s!r} {tag}\n")
    return path


# --------------------------------------------------------------------------- qrels
def read_trec_qrels(path, *, threshold: float = 1.0, max_rating: float | None = None, ids: str = "str") -> Qrels:
    """Read a TREC qrels file (``qid 0 docno rel``). The default threshold 1 is trec_eval's.

    ``rel`` is truncated toward zero like trec_eval's ``atol`` (a warning names the first
    fractional grade); negative labels are kept ("in the pool but unjudged": ignored by every
    measure except infAP and bpref, which count them as trec_eval does)."""
    raw = _source(path, "qrels")
    fname = _name(path)
    fast = _fast_columns(raw, 4, {0: "str", 2: "str", 3: "float"})
    lines = None
    if fast is not None:
        (ucodes, users), (icodes, vocab), rels = fast[0], fast[2], fast[3]
        fast = "ok"
        _release_arrow_memory()
        if not np.isfinite(rels).all() or _first_duplicate(ucodes, icodes, len(vocab)) >= 0:
            fast = None
    if fast is None:
        lines, _, rels, (ucodes, users, icodes, vocab) = _slow_trec(
            raw, fname, 4, QRELS_LAYOUT, "qrels", 3, "relevance",
            "is judged twice for qid {qid!r}; one judgment per (qid, docno) expected")
    frac = rels != np.trunc(rels)
    if frac.any():
        i = int(np.flatnonzero(frac)[0])
        if lines is None:  # rare: find the line numbers with the reference reader
            lines = _slow_columns(raw, fname, 4, QRELS_LAYOUT, extra_ok=False)[0]
        where = f"{fname}:{lines[i]}" if lines is not None else fname
        warnings.warn(f"{where}: fractional relevance {rels[i]:g} truncated to {np.trunc(rels[i]):g} "
                      f"as trec_eval does ({int(frac.sum())} such line(s)); scale grades to integers to keep them",
                      stacklevel=2)
        rels = np.trunc(rels)
    qrels = Qrels.from_codes(ucodes, users, icodes, vocab, rels, threshold, max_rating, negative="unjudged")
    del ucodes, icodes, rels
    _release_arrow_memory()  # the sort's temporaries: the run is read next, on top of what stays
    return qrels


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


# --------------------------------------------------------------------------- tables
def check_id_columns(frame, fname: str, id_columns=("user", "item")) -> None:
    """Raise :class:`FormatError` when an id column mixes Python types (e.g. int and str), which
    would match nothing on one side; the message names the first row of the minority type."""
    for c in id_columns:
        if c in frame.columns and frame[c].dtype == object:
            types = frame[c].map(type)
            kinds = list(dict.fromkeys(types))
            if len(kinds) > 1:
                row = int(np.flatnonzero(types.to_numpy() != kinds[0])[0])
                raise FormatError(f"{fname}: column {c!r} mixes {', '.join(k.__name__ for k in kinds)} ids "
                                  f"(row {row + 1} is {frame[c].iloc[row]!r}); one id type per column expected")


def read_table(path, *, id_columns=("user", "item"), **kw):
    """CSV/TSV/parquet by extension (compressed too; ``sep`` may be given for text files).

    Id columns of text tables are read as strings (``"01"`` stays ``"01"``). Raises with the
    file name for an empty table, a TREC file named .tsv, or a mixed-type parquet id column."""
    import pandas as pd

    fname = _name(path)
    _, fmt = _suffixes(path)
    if fmt == ".parquet":
        if str(path) == "-" or not Path(path).is_file():
            read_bytes(path, "table")  # raises the right error
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many types
            raise InputError(f"{fname}: cannot read parquet ({type(exc).__name__}: {exc})") from None
        frame.attrs["source"] = fname
        check_id_columns(frame, fname, id_columns)
        return frame
    raw = read_bytes(path, "table")
    text = _decode(raw, fname)
    if "\ufeff" in text:
        _bom(fname, text.count("\n", 0, text.index("\ufeff")) + 1)
    first = next((l for l in text.splitlines() if l.strip()), "")
    if not first:
        raise InputError(f"{fname}: the table is empty (expected a header line such as user,item,score)")
    sep = kw.pop("sep", "\t" if fmt == ".tsv" else ",")
    if sep not in first:
        raise FormatError(f"{fname}:1: no {sep!r} separator in the header {first!r}; "
                          + ("a TREC file? name it .txt/.run/.qrels" if len(first.split()) in (4, 6)
                             else f"expected columns separated by {sep!r}"))
    header = [h.strip() for h in first.split(sep)]
    dtype = {c: str for c in id_columns if c in header}
    kw.setdefault("index_col", False)  # a row longer than the header is an error, never an inferred index
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(_io.StringIO(text), sep=sep, dtype=dtype, comment=None, **kw)
    except pd.errors.ParserError as exc:
        _long_row(text, sep, fname, header)
        raise FormatError(f"{fname}: {exc}") from None
    for w in caught:
        if issubclass(w.category, pd.errors.ParserWarning):
            _long_row(text, sep, fname, header)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if frame.empty:
        raise InputError(f"{fname}: the table has a header but no row")
    frame.attrs["source"] = fname
    return frame


def _long_row(text: str, sep: str, fname: str, header: list[str]) -> None:
    """Raise :class:`FormatError` at the first row with more fields than the header (pandas would
    take the extra leading fields as an index and shift every column, or fail without a line)."""
    import csv

    reader = csv.reader(_io.StringIO(text), delimiter=sep)
    for row in reader:
        if row:
            break  # the header
    for row in reader:
        if len(row) > len(header):
            raise FormatError(f"{fname}:{reader.line_num}: {len(row)} fields but the header names {len(header)} "
                              f"({sep.join(header)}): {sep.join(row)!r}; every row needs one field per header name")


def _one_field_row(path, fname: str, sep: str) -> None:
    """Raise :class:`FormatError` at the first row of one field (an item without its aspect column:
    pandas would read it as an item with no aspect; an item with none is written ``item,``)."""
    import csv

    reader = csv.reader(_io.StringIO(_decode(read_bytes(path, "table"), fname)), delimiter=sep)
    next(reader, None)  # the header
    for row in reader:
        if len(row) == 1 and row[0].strip():
            raise FormatError(f"{fname}:{reader.line_num}: one field ({row[0]!r}); every row needs the item and its "
                              f"aspect(s) (an item without aspect: '{row[0]}{sep}')")


def read_run(path, *, name: str | None = None, max_docs: int | None = None, **kw) -> Run:
    """Read a run from a TREC file or a ``user,item,score[,rank]`` table (by extension: .csv,
    .tsv, .parquet, possibly compressed; anything else is read as TREC)."""
    _, fmt = _suffixes(path)
    if fmt not in TABLE_SUFFIXES:
        return read_trec_run(path, name=name, max_docs=max_docs, **kw)
    kw.pop("ids", None)  # ids of text tables are strings; parquet keeps its types
    frame = read_table(path, **kw)
    rank_col = "rank" if "rank" in frame.columns else None
    stem = Path(str(path)).name.split(".")[0]
    run = Run.from_frame(frame, rank_col=rank_col, name=name or stem)
    return run.head(max_docs) if max_docs else run


def default_threshold(path) -> float:
    """The relevance threshold :func:`read_qrels` applies to ``path`` when none is given, from its
    name alone: 1 for a TREC qrels file (trec_eval's), 4 for a ``user,item,rating`` table."""
    return 4.0 if _suffixes(path)[1] in TABLE_SUFFIXES else 1.0


def read_qrels(path, *, threshold: float | None = None, **kw) -> Qrels:
    """Read judgments from a TREC qrels file or a ``user,item,rating`` table (relevant at rating >=
    ``threshold``; default :func:`default_threshold`)."""
    threshold = default_threshold(path) if threshold is None else threshold
    if _suffixes(path)[1] not in TABLE_SUFFIXES:
        return read_trec_qrels(path, threshold=threshold, **kw)
    return Qrels(read_table(path), threshold=threshold)


def read_ratings(path):
    """Read training ratings (what the popularity and coverage metrics need as ``train=``): a
    ``user,item[,rating]`` table (CSV/TSV/parquet) or a TREC qrels-style file ``user 0 item rating``.
    Returns a DataFrame with columns ``user, item`` (and ``rating`` when the file has it)."""
    from ..errors import require_columns

    _, fmt = _suffixes(path)
    if fmt not in TABLE_SUFFIXES:
        return read_trec_qrels(path).to_frame()
    frame = read_table(path)
    require_columns(frame, ("user", "item"), f"training ratings {_name(path)}")
    return frame


def read_aspects(path):
    """Read item aspects (what the diversity metrics need as ``aspects=``) from a table
    (CSV/TSV/parquet): either ``item,aspect`` with one row per item and aspect, or ``item,aspects``
    (or ``item,genres``) with the labels of an item joined by ``|`` (MovieLens' ``movies.csv``, whose
    "(no genres listed)" is no aspect).
    Item ids and labels of text tables are strings, as the run's ids are from files (a parquet file
    keeps its id type). Returns a Series
    item -> tuple of labels (an empty tuple: an item listed without an aspect).

    Raises :class:`~recmetrics.errors.InputError` naming the file and line of an empty item id, a
    repeated item (``item,aspects`` form) or a repeated item and aspect pair (``item,aspect``
    form), and the columns it expected when neither form is found.
    """
    import pandas as pd

    from ..errors import where

    fname = _name(path)
    frame = read_table(path, id_columns=("item", "aspect", "aspects", "genres"))
    if _suffixes(path)[1] != ".parquet":
        _one_field_row(path, fname, "\t" if _suffixes(path)[1] == ".tsv" else ",")
    if "item" not in frame.columns or not {"aspect", "aspects", "genres"} & set(frame.columns):
        raise InputError(f"aspects table {fname} has columns {list(frame.columns)}; expected item,aspect (one "
                         "row per item and aspect) or item,aspects with labels joined by '|'")
    items = frame["item"]
    text_ids = items.dtype == object           # text tables: strings; a parquet file keeps its id type
    blank = items.isna() | ((items.astype(str).str.strip() == "") if text_ids else False)
    if blank.any():
        raise InputError(f"{where(frame, int(blank.to_numpy().argmax()))}: empty item id in the aspects table")
    if text_ids:
        items = items.astype(str).str.strip()
    if "aspect" in frame.columns:
        labels = frame["aspect"].astype(object).where(frame["aspect"].notna(), "").astype(str).str.strip()
        twice = pd.Series(list(zip(items, labels))).duplicated().to_numpy()
        if twice.any():
            i = int(twice.argmax())
            raise InputError(f"{where(frame, i)}: item {items.iloc[i]!r} has aspect {labels.iloc[i]!r} twice")
        grouped = pd.DataFrame({"item": items, "label": labels}).groupby("item", sort=False)["label"]
        return grouped.agg(lambda x: tuple(sorted(v for v in x if v))).rename("aspects").rename_axis(None)
    column = "aspects" if "aspects" in frame.columns else "genres"
    twice = items.duplicated().to_numpy()
    if twice.any():
        i = int(twice.argmax())
        raise InputError(f"{where(frame, i)}: item {items.iloc[i]!r} appears twice (one row per item in the "
                         f"item,{column} form; use item,aspect for one row per pair)")
    text = frame[column].astype(object).where(frame[column].notna(), "").astype(str)
    none = {"(no genres listed)"} if column == "genres" else set()   # MovieLens' word for no genre
    values = [tuple(sorted({p.strip() for p in t.split("|") if p.strip()} - none)) for t in text]
    return pd.Series(values, index=items.to_numpy(), dtype=object, name="aspects")
