"""File-reading helpers shared by the file loaders (:mod:`.movielens`, :mod:`.files`).

Every helper turns reader failures into :class:`~recmetrics.errors.InputError` /
:class:`~recmetrics.errors.FormatError` naming the file: a missing file or a directory, an empty
file, a malformed line, undecodable text. Text is read as UTF-8 when it decodes, else latin-1
(the MovieLens 100K/1M encoding), unless an encoding is given. CSV reading keeps blank lines so
that row ``i`` of a frame maps to a known physical line (``_line_where``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from ...errors import FormatError, InputError


def _need_file(path: Path, what: str) -> Path:
    if not path.exists():
        raise InputError(f"{what}: file {str(path)!r} does not exist")
    if path.is_dir():
        raise InputError(f"{what}: {str(path)!r} is a directory (expected a file)")
    return path


def _long_row(path: Path, sep: str | None, encoding: str | None) -> str:
    """Where the first data row with more fields than the header is (``path:line``, n fields)."""
    import csv
    import io

    text = _read_text(path, encoding) if path.suffix not in (".gz", ".bz2", ".xz", ".zip", ".zst") else ""
    rows = csv.reader(io.StringIO(text), delimiter=sep if sep and len(sep) == 1 else ",")
    width = None
    for number, row in enumerate(rows, start=1):
        if not row:
            continue
        if width is None:
            width = len(row)
        elif len(row) > width:
            return f"{path}:{number}: {len(row)} fields under a header of {width} names"
    return f"{path}: a row has more fields than the header"


def _read_csv(path: Path, **kw: Any) -> pd.DataFrame:
    """pd.read_csv with blank lines kept (so row i <-> a known line) and errors re-raised as
    FormatError naming the file.

    With a header, a data row with more fields than the header has names is an error naming its
    line: pandas would otherwise take the first field as an index and shift every column
    (``user,item,rating`` over ``1,10,4,2`` read as user 10, item 4, rating 2).
    """
    import warnings

    kw.setdefault("skip_blank_lines", False)
    if "sep" in kw and isinstance(kw["sep"], str) and len(kw["sep"]) > 1 and kw["sep"] != r"\s+":
        kw.setdefault("engine", "python")
    if kw.get("header") == 0:
        kw.setdefault("index_col", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(path, **kw)
    except pd.errors.ParserWarning:
        raise FormatError(_long_row(path, kw.get("sep"), kw.get("encoding")) + " (expected one field per "
                          "header name; a missing header name would shift every column)") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: file is empty (expected ratings)") from None
    except (OSError, EOFError) as e:  # gzip.BadGzipFile, a truncated .bz2/.xz, ...: the suffix promised a codec
        if path.suffix.lower() not in (".gz", ".bz2", ".xz", ".zip", ".zst"):
            raise
        raise FormatError(f"{path}: cannot decompress ({e}); the file name ends in {path.suffix!r} but the "
                          f"content is not in that format (rename it, or recompress it)") from None
    except pd.errors.ParserError as e:
        msg = str(e).replace("Error tokenizing data. C error: ", "").strip()
        raise FormatError(f"{path}: malformed line: {msg}") from None
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: cannot decode text as {kw.get('encoding') or 'utf-8'} ({e}); "
                          f"pass encoding=") from None


def _read_text(path: Path, encoding: str | None) -> str:
    data = path.read_bytes()
    if encoding:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as e:
            raise FormatError(f"{path}: cannot decode text as {encoding} ({e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _guess_encoding(path: Path) -> str:
    """'utf-8' when the file decodes as UTF-8, else 'latin-1' (the MovieLens 100K/1M encoding)."""
    try:
        path.read_bytes().decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "latin-1"


def _line_where(path: Path, first_line: int) -> Callable[[int], str]:
    return lambda i: f"{path}, line {i + first_line}"


def _read_double_colon(path: Path, names: Iterable[str]) -> pd.DataFrame:
    """Read a ``a::b::c::d`` file fast: split on ':' with the C parser and check that the odd
    fields (between the two colons) are empty."""
    names = list(names)
    n = len(names)
    raw = _read_csv(path, sep=":", header=None, names=list(range(2 * n - 1)),
                    quoting=3)
    sep_cols = raw.iloc[:, 1::2]
    blank = raw.isna().all(axis=1).to_numpy()
    bad = (sep_cols.notna().any(axis=1).to_numpy() | raw.iloc[:, ::2].isna().any(axis=1).to_numpy()) & ~blank
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{path}, line {j + 1}: malformed line (expected "
                          f"{'::'.join(names)}; {int(bad.sum())} such line(s))")
    out = raw.iloc[:, ::2]
    out.columns = names
    return out
