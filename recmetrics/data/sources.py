"""Text sources of the TREC and table readers: raw bytes, streamed paths, lines and columns.

:func:`read_bytes` gives a file's decompressed bytes (standard input, ``.gz``/``.bz2``/``.xz``/
``.zst``, a leading byte-order mark removed); :func:`_source` avoids holding them when it can: a
plain file is streamed from disk and a ``.gz``/``.bz2``/``.zst`` file decompressed block by block,
so a file that fails early fails at its first bad line with memory bounded by a block.
:func:`_fast_columns` is the vectorised pyarrow path, :func:`_slow_columns` the line-by-line
reference reader whose every error names the file and 1-based line. Numbers are read as C's
``strtod`` reads all of a field (``1_000`` and non-ASCII digits are errors naming the line, not
1000), and a byte-order mark inside a file (files joined with ``cat``) is an error naming its line.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from ..errors import FormatError, InputError

COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma", ".zst": "pyarrow"}


# --------------------------------------------------------------------------- raw bytes
def _name(path) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def _suffixes(path) -> tuple[str, str]:
    """(compression suffix or '', format suffix) of a path, lower case."""
    sfx = [s.lower() for s in Path(str(path)).suffixes]
    comp = sfx[-1] if sfx and sfx[-1] in COMPRESSIONS else ""
    rest = sfx[:-1] if comp else sfx
    return comp, (rest[-1] if rest else "")


def _lzma_error():
    import lzma

    return lzma.LZMAError


def read_bytes(path, what: str = "input") -> bytes:
    """The decompressed bytes of ``path`` (``-``: standard input), BOM removed.

    Raises :class:`InputError` for a missing file, a directory, or a corrupt compressed file."""
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
    else:
        p = Path(path)
        if p.is_dir():
            raise InputError(f"{what} {str(p)!r} is a directory; expected a file")
        if not p.exists():
            if p.is_symlink():
                raise InputError(f"{what} file {str(p)!r} is a symbolic link that leads to no file (a loop, or its "
                                 f"target is missing)")
            raise InputError(f"{what} file {str(p)!r} does not exist")
        comp, _ = _suffixes(p)
        try:
            if comp == ".zst":  # pyarrow (already the fast reader) decompresses zstd
                try:
                    import pyarrow as pa
                except ImportError:
                    raise InputError(f"{p}: reading .zst needs pyarrow (pip install 'recmetrics-eval[data]')") from None
                try:
                    with pa.input_stream(str(p), compression="zstd") as fh:
                        raw = fh.read()
                except (pa.ArrowException, OSError) as exc:
                    raise InputError(f"{p}: cannot read {what} ({exc})") from None
            elif comp:
                import importlib

                with importlib.import_module(COMPRESSIONS[comp]).open(p, "rb") as fh:
                    raw = fh.read()
            else:
                raw = p.read_bytes()
        except (OSError, EOFError, ValueError, _lzma_error()) as exc:  # corrupt compressed data
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{p}: cannot read {what} ({exc})") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw


class _Plain(str):
    """The path of a plain (uncompressed, BOM-free) file that the fast reader streams from disk
    instead of holding its bytes (peak memory: a 13.8M-line run is 420 MB of text)."""

    head: bytes = b""
    compression: str = ""


class _Stream(_Plain):
    """The path of a compressed file (``.gz``, ``.bz2``, ``.zst``) read as a stream: the fast
    reader decompresses it block by block and the reference reader line by line, so a file that
    fails at an early line fails there, its memory bounded by a block (an 87 KB gzip file
    inflating to 45 MB with a bad line 2 no longer inflates whole first)."""


_STREAMED = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}   # pyarrow's names of the codecs


def _open(src):
    """A binary file object over a :class:`_Plain` or :class:`_Stream` path (decompressing)."""
    if not isinstance(src, _Stream):
        return open(str(src), "rb")
    if src.compression == "zstd":
        import pyarrow as pa

        return pa.input_stream(str(src), compression="zstd")
    import importlib

    return importlib.import_module(src.compression).open(str(src), "rb")


def _source(path, what: str):
    """``path`` as a :class:`_Plain` path when it is an existing uncompressed file without a BOM, as
    a :class:`_Stream` when it is a readable compressed one without a BOM (either with its first
    line in ``.head``), else its bytes (:func:`read_bytes`, which also explains every error)."""
    comp = _suffixes(path)[0] if str(path) != "-" else None
    if comp is not None and (not comp or comp in _STREAMED):
        p = Path(path)
        if p.is_file():
            src = _Stream(str(p)) if comp else _Plain(str(p))
            src.compression = _STREAMED.get(comp, "")
            try:
                with _open(src) as fh:
                    start = fh.read(1 << 16)
            except Exception:  # noqa: BLE001  (a corrupt or unreadable file: read_bytes names the problem)
                start = None
            if start is not None and not start.startswith(b"\xef\xbb\xbf"):
                src.head = start[: start.find(b"\n")] if b"\n" in start else start
                return src
    return read_bytes(path, what)


def _head(src) -> bytes:
    """First line of a source of :func:`_source`."""
    if isinstance(src, _Plain):
        return src.head
    return src[: src.find(b"\n")] if b"\n" in src else src


def _lines(src, name: str, block: int = 1 << 20):
    """``(line number, text)`` of every line of a source of :func:`_source` (bytes, or a path read
    as a stream ``block`` bytes at a time), as ``str.splitlines`` splits them; bytes that are not
    UTF-8 name their line."""
    if not isinstance(src, _Plain):
        yield from enumerate(_decode(src, name).splitlines(), start=1)
        return
    lineno, newlines, rest = 0, 0, b""
    try:
        with _open(src) as fh:
            while True:
                chunk = fh.read(block)
                data = rest + chunk
                cut = data.rfind(b"\n") + 1 if chunk else len(data)  # whole lines only, but all at the end
                data, rest = data[:cut], data[cut:]
                if data:
                    for part in _decode(data, name, newlines).splitlines():
                        lineno += 1
                        yield lineno, part
                    newlines += data.count(b"\n")
                if not chunk:
                    return
    except (OSError, EOFError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{name}: cannot read past line {lineno} ({exc})") from None


def _decode(raw: bytes, name: str, before: int = 0) -> str:
    """``raw`` as UTF-8; else an error naming the line (``before``: lines read before ``raw``)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = before + raw.count(b"\n", 0, exc.start) + 1
        raise FormatError(f"{name}:{line}: bytes {raw[exc.start:exc.end + 3]!r} are not UTF-8 "
                          "(save the file as UTF-8)") from None


# --------------------------------------------------------------------------- whitespace columns
def _slow_columns(raw: bytes, name: str, n_fields: int, layout: str, extra_ok: bool):
    """Reference reader: (line numbers, one list of strings per field)."""
    fields: list[list[str]] = [[] for _ in range(n_fields)]
    linenos: list[int] = []
    for lineno, line in _lines(raw, name):
        if "\ufeff" in line:
            _bom(name, lineno)
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) < n_fields or (len(parts) > n_fields and not extra_ok):
            hint = ""
            if len(parts) == 1 and ("," in line or ";" in line):
                hint = " (a CSV table? name it .csv)"
            raise FormatError(f"{name}:{lineno}: expected {n_fields} fields "
                              f"({layout}, separated by spaces or tabs), found {len(parts)}: {line.rstrip()!r}{hint}")
        linenos.append(lineno)
        for col, value in zip(fields, parts):
            col.append(value)
    return np.asarray(linenos, dtype=np.int64), fields


def _bom(name: str, lineno: int) -> None:
    raise FormatError(f"{name}:{lineno}: a byte-order mark (U+FEFF) inside the file (files joined with `cat`?); "
                      "trec_eval would read it as part of the id, making another user: remove it")


def _fast_columns(raw: bytes, n_fields: int, keep: dict):
    """pyarrow fast path for single-space or single-tab separated lines; None if anything is unusual
    (the reference reader then reads the file). ``keep`` maps field index -> 'str' | 'float'; a
    'str' field comes back as ``(codes int64, vocabulary of str)``, a 'float' one as float64.

    String fields are read as dictionary columns (codes, no per-line strings) whose dictionaries
    are unified across blocks; every column leaves pyarrow through its buffers: pyarrow's
    ``to_numpy`` and its compute module import pandas and build docstrings (a third of a second of
    a command-line run)."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:  # pragma: no cover - the slow path is complete
        return None
    delim = "\t" if b"\t" in _head(raw) else " "
    names = [f"f{i}" for i in range(n_fields)]
    types = {f"f{i}": (pa.dictionary(pa.int32(), pa.string()) if t == "str" else pa.float64())
             for i, t in keep.items()}
    try:
        table = pcsv.read_csv(
            (pa.input_stream(str(raw), compression=raw.compression or None) if isinstance(raw, _Plain)
             else pa.py_buffer(raw)),
            # one thread, 2 MB blocks and the system allocator (which returns freed blocks at once):
            # half the parse's peak memory of 8 MB blocks on threads over jemalloc, at about the same
            # speed on two cores
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 21, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=list(types),
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
            memory_pool=pa.system_memory_pool())
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, ValueError):
        return None
    if table.num_rows == 0:
        return None
    table = table.unify_dictionaries(memory_pool=pa.system_memory_pool())
    _release_arrow_memory()  # the blocks' own dictionaries and indices are gone: give them back
    cols = {}
    for i, t in keep.items():
        col = table.column(f"f{i}")
        # each column leaves the table once copied out: the copies and the table never coexist whole
        table = table.drop_columns([f"f{i}"])
        if col.null_count:
            return None
        if t == "str":
            vocab = col.chunk(0).dictionary.to_pylist()
            if "" in vocab or any("\ufeff" in v for v in vocab) or (i == 0 and any(v.startswith("#") for v in vocab)):
                return None  # an empty field, a byte-order mark or a comment line: the reference reader explains
            codes = np.concatenate([_buffer_array(c.indices, np.int32) for c in col.chunks])  # int32: memory
            cols[i] = (codes, np.asarray(vocab, dtype=object))
        else:
            cols[i] = np.concatenate([_buffer_array(c, np.float64) for c in col.chunks])
        del col
    return cols


def _buffer_array(arr, dtype) -> np.ndarray:
    """A null-free pyarrow primitive array's values as a (read-only) numpy view of its data buffer."""
    dtype = np.dtype(dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def _release_arrow_memory() -> None:
    """Give the freed blocks of pyarrow's pool and of the C allocator (which the parse went
    through) back to the system, so that what follows does not peak on top of them."""
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except (ImportError, AttributeError):  # pragma: no cover
        pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)  # glibc: return the freed heap pages
        except (OSError, AttributeError):  # pragma: no cover - another C library
            pass


def _reject(bad: np.ndarray, name, linenos: np.ndarray, message) -> None:
    """Raise a FormatError at the first True of ``bad``: ``message(i)`` describes entry ``i``."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{name}:{linenos[i]}: {message(i)}")


# a number as C's strtod reads all of it (no '_' digit separators, no non-ASCII digits, which
# Python's float() accepts and trec_eval's atof stops at: '1_000' is 1 there)
_C_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE | re.ASCII)


def _floats(values: list[str], name, linenos: np.ndarray, what: str) -> np.ndarray:
    out = np.empty(len(values))
    for n, v in enumerate(values):
        try:
            if not _C_NUMBER.fullmatch(v):
                raise ValueError(v)
            out[n] = float(v)
        except ValueError:
            raise FormatError(f"{name}:{linenos[n]}: {what} {v!r} is not a number (digits, '.', an exponent; "
                              "trec_eval would read only its leading part)") from None
    return out
