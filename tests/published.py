"""What a published site must not carry: a path of the machine that built it (issue 24 §1)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: part of the name of the folder the tests build the books in: it must appear in no published file
DISTINCTIVE = "zq7-distinctive-folder"


def machine_paths(*extra: str | os.PathLike) -> list[bytes]:
    """The byte strings a published file must not contain: ``extra`` (the folders the books were
    built from), the checkout, the home folder and the temporary folder (with a separator after
    it, as a path inside it is written: ``/tmp`` alone is a word a page may use)."""
    repo = Path(__file__).resolve().parent.parent
    home = os.path.expanduser("~")
    needles = {str(repo), DISTINCTIVE, home + os.sep, tempfile.gettempdir() + os.sep, *map(str, extra)}
    return sorted(n.encode() for n in needles if n and n != os.sep)


def files_with_paths(site: str | os.PathLike, *extra: str | os.PathLike) -> dict[str, list[str]]:
    """``{file relative to site: [needles found]}`` over the bytes of every file of ``site``."""
    needles = machine_paths(*extra)
    found = {}
    for path in sorted(Path(site).rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            hits = [n.decode() for n in needles if n in data]
            if hits:
                found[path.relative_to(site).as_posix()] = hits
    return found
