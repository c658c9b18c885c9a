"""Runs made by other tools (RecBole, Elliot, LensKit, trec_eval style files), read from files.

:func:`load_runs` reads TREC run files and ``user,item,score[,rank]`` CSV/TSV/parquet tables,
one run per file named after the file stem, from a directory or a list of paths;
:data:`RUN_SUFFIXES` lists the file endings it picks up in a directory.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..data.run import Run
from ..errors import InputError

__all__ = ["load_runs", "RUN_SUFFIXES"]

#: file suffixes :func:`load_runs` picks up in a directory (TREC runs have many conventional names)
RUN_SUFFIXES = tuple(s + z for s in (".csv", ".tsv", ".parquet", ".trec", ".run", ".res", ".txt")
                     for z in ("", ".gz", ".bz2", ".xz", ".zst") if not (s == ".parquet" and z))


def run_name(path: Path) -> str:
    """A run file's name without its run suffix (``bm25.run.gz`` -> ``bm25``): the system's name."""
    name = path.name
    for suffix in sorted(RUN_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def load_runs(paths_or_dir, **kw) -> dict[str, Run]:
    """Read runs produced by other tools: ``{name: Run}`` with the name taken from the file stem.

    ``paths_or_dir`` is a directory (every non-hidden file ending in one of :data:`RUN_SUFFIXES`,
    sorted by name), one path, or a list of paths. ``.csv``/``.tsv``/``.parquet`` files are
    ``user,item,score[,rank]`` tables (a ``rank`` column keeps the given order), anything else is
    a TREC run file (``qid Q0 docno rank score tag``); see :func:`recmetrics.data.io.read_run`.
    Compressed files (``.gz``, ``.bz2``, ``.xz``, ``.zst``) are read too; ids are strings.
    Keyword arguments go to the reader (e.g. ``max_docs=100``). Each run's metadata records its
    ``path``. Two files with the same stem, a missing file or a directory without run files raise
    :class:`~recmetrics.errors.InputError`; a malformed line raises
    :class:`~recmetrics.errors.FormatError` with ``path:line``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from recmetrics.runs import load_runs
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "bm25.trec").write_text("u1 Q0 i9 1 2.5 bm25\\nu1 Q0 i4 2 1.0 bm25\\n")
    >>> _ = (d / "pop.csv").write_text("user,item,score\\nu1,i4,0.9\\nu2,i9,0.7\\n")
    >>> runs = load_runs(d)
    >>> list(runs), runs["bm25"].items[0].tolist()
    (['bm25', 'pop'], ['i9', 'i4'])
    """
    from ..data.io import read_run

    if isinstance(paths_or_dir, (str, os.PathLike)):
        p = Path(paths_or_dir).expanduser()
        if p.is_dir():
            paths = sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith(".")
                           and q.name.lower().endswith(RUN_SUFFIXES))
            if not paths:
                raise InputError(f"directory {str(p)!r} holds no run file (looked for {', '.join(RUN_SUFFIXES)})")
        else:
            paths = [p]
    else:
        paths = [Path(q).expanduser() for q in paths_or_dir]
        if not paths:
            raise InputError("load_runs got an empty list of paths")
    out: dict[str, Run] = {}
    origin: dict[str, Path] = {}
    for path in paths:
        if not path.exists():
            raise InputError(f"run file {str(path)!r} does not exist")
        name = run_name(path)
        if name in out:
            raise InputError(f"two run files are named {name!r}: {str(origin[name])!r} and {str(path)!r}; "
                             "rename one (the name comes from the file stem)")
        run = read_run(path, name=name, **kw)
        run.metadata.setdefault("path", str(path))
        out[name] = run
        origin[name] = path
    return out
