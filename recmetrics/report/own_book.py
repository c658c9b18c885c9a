"""Where an own-runs book lives and what keys its chapters (used by :func:`recmetrics.report.own_runs.build`).

* **Folders** (:func:`book_folder`): every own-runs book gets its own work folder under
  ``runs/`` of the books' cache (:func:`recmetrics.report.paths.books_root`), and its site, unless
  ``--out`` says otherwise, a folder of the same name under ``./recmetrics-runs/`` (:func:`default_out`).
  A named book's folder is the name made safe (letters, digits, ``_``;
  anything else becomes ``-``) plus a hash of the exact name, so a name never leaves that folder
  (``..``, ``a/b``) and two names never share one (``a b``, ``a/b`` and ``a-b`` differ); an
  unnamed book's folder is ``runs-`` plus the inputs' content hash, so two unnamed builds of
  different inputs never share one.
* **Inputs** (:func:`stage_inputs`): the judgments and run files are linked (or, for in-memory
  inputs, moved) into ``<book>/_build/inputs/`` under their file names, and the chapters run there:
  their ``source`` parameter names the files relative to that folder and carries the inputs'
  content hash (:func:`content_hash`), so the parameters table and cell under each chapter's title
  identify the inputs without showing a path of the building machine.
* **Keys** (:func:`report_plan`): each chapter's content key (:mod:`.cache`) hashes its notebook,
  its parameters (the inputs' content hash among them), the package sources and the dependency
  versions, as the main report's chapters do; the book is then executed, refused when stale and
  recorded by the same machinery (:func:`recmetrics.report.execute.execute_plan`,
  :func:`recmetrics.report.state.stale_chapters`).
* **Front page** (:func:`front_page_answer`): its answer is kept in the generated folder with the keys
  of the chapters it reads, so a rebuild with those chapters unchanged shows it without computing it.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import InputError
from . import cache
from .paths import DEFAULT_RUNS_OUT, absolute, books_root
from .site import replace_dir


def runs_root() -> Path:
    """``runs/`` of the books' cache: the work folder of every own-runs book built without ``book_dir``."""
    return books_root() / "runs"


def default_out(name: str | None, content: str) -> Path:
    """The site of an own-runs book built without ``--out``: ``./recmetrics-runs/<folder>`` of the
    current folder (:func:`folder_name`)."""
    return absolute(Path(DEFAULT_RUNS_OUT) / folder_name(name, content))


def folder_name(name: str | None, content: str) -> str:
    """The folder of a book named ``name`` (``None``: unnamed, from the inputs' ``content`` hash).

    >>> [folder_name(n, "0" * 64)[:4] for n in ("a b", "a/b", "a-b")], folder_name("..", "0" * 64)[:5]
    (['a-b-', 'a-b-', 'a-b-'], 'book-')
    >>> len({folder_name(n, "0" * 64) for n in ("a b", "a/b", "a-b")}), folder_name(None, "ab" * 32)
    (3, 'runs-abababababab')
    """
    if name is None:
        return f"runs-{content[:12]}"
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", str(name)).strip("-")[:40] or "book"
    return f"{slug}-{hashlib.sha256(str(name).encode()).hexdigest()[:10]}"


def book_folder(name: str | None, content: str, root: str | os.PathLike | None = None) -> Path:
    """``root/folder_name(name, content)``, checked to be a folder directly inside ``root``."""
    root = Path(root or runs_root()).resolve()
    folder = (root / folder_name(name, content)).resolve()
    if folder.parent != root:  # pragma: no cover - folder_name keeps no separator and no dot-only name
        raise InputError(f"--name {name!r}: would leave the folder of own-runs books")
    return folder


def input_files(source: Mapping) -> list[tuple[str, str]]:
    """``(role, path)`` of every file of a ``source``: qrels per fold, each run per fold, ratings."""
    files = [("qrels", str(q)) for q in source["qrels"]]
    files += [(f"run {n}", str(p)) for n, paths in source["runs"].items() for p in paths]
    if source.get("ratings"):
        files.append(("ratings", str(source["ratings"])))
    return files


def content_hash(source: Mapping) -> str:
    """SHA-256 of what a ``source`` holds: each file's bytes with its role, the fold labels, the
    threshold and how the judgments are read (never where the files are)."""
    h = hashlib.sha256()
    for role, path in input_files(source):
        h.update(f"{role}\0".encode() + bytes.fromhex(cache.file_hash(path)))
    h.update(cache.canonical({k: source.get(k) for k in ("folds", "threshold", "format", "judgments")}).encode())
    return h.hexdigest()


def stage_inputs(source: Mapping, folder: Path, *, move: bool = False) -> dict:
    """Link (``move``: move) the files of ``source`` into ``folder`` (replaced whole) under their
    file names (a repeated name gets ``-2``, ``-3``, ... before its suffix); return the ``source``
    naming them relative to ``folder``, with ``content`` (:func:`content_hash`) and without ``label``
    changes."""
    folder = Path(folder)
    content = content_hash(source)
    staged = folder.parent / f".{folder.name}.new"
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    names: dict[str, str] = {}
    for _, path in input_files(source):
        if path in names:
            continue
        p = Path(path)
        name, n = p.name, 1
        while name in names.values():
            n += 1
            name = f"{p.stem}-{n}{p.suffix}"
        if move:
            os.replace(p, staged / name)
        else:
            try:
                os.symlink(p.resolve(), staged / name)
            except OSError:  # no symbolic links here: a copy
                shutil.copyfile(p, staged / name)
        names[path] = name
    replace_dir(staged, folder)
    out = copy.deepcopy(dict(source))
    out["qrels"] = [names[str(q)] for q in source["qrels"]]
    out["runs"] = {n: [names[str(p)] for p in paths] for n, paths in source["runs"].items()}
    if source.get("ratings"):
        out["ratings"] = names[str(source["ratings"])]
    out["content"] = f"sha256:{content[:16]}"
    return out


def report_plan(own, source: Mapping, generated: Path, cwd: Path, kernel_name: str | None = None):
    """The :class:`recmetrics.report.plan.Plan` of an own-runs :class:`~recmetrics.report.own_runs.Plan`
    whose inputs were staged (:func:`stage_inputs`: ``source`` names them relative to ``cwd``)."""
    import papermill

    from .plan import Chapter, Plan
    from .profiles import executed_parameters

    content = source["content"]
    package, versions = cache.package_hash(), cache.dependency_versions()
    params = {**own.parameters, "source": dict(source)}
    chapters, keys = [], {}
    for nb in map(Path, own.notebooks):
        declared = set(papermill.inspect_notebook(str(nb)))
        p = {k: v for k, v in params.items() if k in declared}
        key = cache.chapter_key({"source": cache.file_hash(nb), "parameters": cache.keyed(p), "profile": own.profile,
                                 "package": package, "versions": versions, "kernel": kernel_name, "depends": {}})
        keys[nb.stem] = key
        shown = executed_parameters(nb, p, profile=own.profile)
        overrides = {k: v for k, v in (own.overrides or {}).items() if k in declared}
        chapters.append(Chapter(nb.stem, nb, p, shown, (), key, overrides, Path(cwd)))
    # the chapters reading the robustness study (they declare n_samples) execute last: a build computes
    # it in the background meanwhile (own_prepared.start_robustness); the book's order is the notebooks'
    chapters.sort(key=lambda c: "n_samples" in c.parameters)
    label = f"your runs ({content})"
    fingerprint = {label: {"name": own.label, "hash": content, "files": len(input_files(source))}}
    return Plan(own.profile, label, {}, dict(own.overrides or {}), None, own.notebooks_dir, Path(generated),
                chapters, fingerprint, package, versions, keys)


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file replacing it (never half a page)."""
    tmp = path.parent / f".{path.name}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


#: the front page's answer as last computed (in the generated folder), with the keys of the chapters
#: it comes from (:func:`front_page_answer`)
ANSWER_FILE = ".front-answer.json"
#: the chapters whose computations the front page's answer reads (:func:`recmetrics.report.own_runs.front_answer`)
ANSWER_FROM = ("01_systems", "05_which_metric")


def front_page_answer(generated: Path, keys: Mapping[str, str], compute: Callable[[], str]) -> str:
    """The front page's answer: the one stored in ``generated`` when the chapters it comes from
    (:data:`ANSWER_FROM`) have the content ``keys`` they had when it was computed, else ``compute()``,
    stored with those keys. A chapter's key covers its notebook, parameters, inputs and the package, so
    a stored answer is the one ``compute`` would give; an unchanged rebuild then never computes again
    what chapters 1 and 5 computed, which their stored results in the run cache may no longer hold
    (the robustness study alone: minutes at MovieLens-20M scale)."""
    path = Path(generated) / ANSWER_FILE
    want = {stem: keys.get(stem) for stem in ANSWER_FROM}
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored["keys"] == want and isinstance(stored["answer"], str):
            return stored["answer"]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    answer = compute()
    write_text(path, json.dumps({"keys": want, "answer": answer}))
    return answer


def check_parameters(parameters: Mapping[str, Any], values: Mapping[str, Any], notebooks, profile: str,
                     schemas: Mapping[str, Mapping]) -> dict:
    """The own-runs chapters' parameters checked at planning, against each chapter's schema
    (``schemas``: :data:`recmetrics.report.own_runs.SCHEMAS`): the ``-p`` values (``parameters``:
    an unknown name, one the report sets, or a value a schema refuses is one line) and the
    ``values`` of the ``profile`` every chapter receives; the robustness grids must cover the
    scenarios asked. Returns the ``-p`` values as the chapters receive them."""
    import papermill

    from ..errors import unknown_name
    from .plan import RESERVED, accepted, check_overrides, check_values

    declared = {Path(nb).stem: {n: s for n, s in papermill.inspect_notebook(str(nb)).items() if n != "source"}
                for nb in notebooks}
    known = accepted(declared)
    for key in parameters:
        if key not in known and key not in RESERVED:
            raise unknown_name("own-runs notebook parameter (-p)", str(key), known)
    given = check_overrides(dict(parameters), declared, schemas)
    check_values({stem: {k: values[k] for k in specs if k in values and k not in given}
                  for stem, specs in declared.items()}, declared, f"profile {profile!r}", schemas)
    if {"sizes", "scenarios"} & set(given):
        from ..meta.robustness import resolve_grids

        merged = {**values, **given}
        try:
            resolve_grids(merged["sizes"], merged["scenarios"])
        except InputError as exc:
            raise InputError(f"-p sizes / scenarios: {' '.join(str(exc).split())} (scenarios asked: "
                             f"{', '.join(map(str, merged['scenarios']))}; grids given for: "
                             f"{', '.join(map(str, merged['sizes']))})") from None
    return given
