"""Everything a chapter writes besides its notebook, staged and committed under the chapter's key.

A running chapter writes into scratch folders under ``generated/.running/``: its findings
(``RECMETRICS_FINDINGS_DIR``), the results the reference pages reuse (:mod:`.results`, beside the
findings) and the meta-evaluation tables (``RECMETRICS_META_RESULTS``, e.g. chapter 6's
discriminative power and robustness, :func:`recmetrics.meta.guidelines.save_measured`). Only when
the chapter completed does :func:`commit` move them into ``generated/``, *before* the executed
notebook replaces the old one (:func:`recmetrics.report.execute.execute_notebook`):

* the meta tables go to ``generated/meta/<chapter>/``, a folder replaced whole, holding the
  chapter's manifest ``outputs.json`` (its content key and the findings and results files it
  wrote; those of its previous run that it did not write again are removed);
* findings and results replace their files in ``generated/findings/`` and ``generated/results/``.

A chapter's outputs are current only when the manifest's key is the chapter's key
(:func:`outputs_key`); the report keeps a chapter as unchanged only then. A chapter that reads
another's tables (``DEPENDS``, e.g. chapter 4's guide reads chapters 5-7) gets, in its scratch
meta folder, the tables of those chapters whose manifest carries the key this build planned for
them (:func:`seed_inputs`), and nothing else: never a table a killed or other build left behind.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Iterable, Mapping

from .site import replace_dir

MANIFEST = "outputs.json"


def meta_dir(generated: Path, stem: str) -> Path:
    return Path(generated) / "meta" / stem


def read_manifest(generated: Path, stem: str) -> dict:
    try:
        data = json.loads((meta_dir(generated, stem) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def outputs_key(generated: Path, stem: str) -> str | None:
    """The content key of the outputs of ``stem`` in ``generated`` (``None``: none committed)."""
    return read_manifest(generated, stem).get("key")


def committed(generated: Path, keys: Mapping[str, str | None], kind: str) -> list[str]:
    """The files of ``generated/<kind>/`` (``findings`` or ``results``) that the chapters of ``keys``
    (``{stem: content key}``: the chapters of one build's book) committed under those keys, by
    name: what that build's pages may read, never a file another build or an older run left."""
    names: list[str] = []
    for stem, key in keys.items():
        manifest = read_manifest(generated, stem)
        if key is not None and manifest.get("key") == key:
            names += [n for n in manifest.get(kind) or [] if isinstance(n, str)]
    return names


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def remove_unkeyed(generated: Path) -> None:
    """Tables an older recmetrics wrote straight into ``generated/meta/`` (no chapter, no key)."""
    for f in (Path(generated) / "meta").glob("*.*"):
        if f.is_file():
            f.unlink()


def seed_inputs(generated: Path, depends: Mapping[str, str], dest: Path) -> dict[str, str]:
    """Fill ``dest`` (a chapter's scratch meta folder) with the tables of the chapters it reads,
    ``{stem: key this build planned}``; a chapter whose committed outputs carry another key gives
    nothing. CSV tables of one name from two chapters are joined (one header); another file of one
    name is the last chapter's. Returns
    ``{file name: sha256}`` of what was put there (so :func:`commit` keeps only what the chapter wrote)."""
    dest.mkdir(parents=True, exist_ok=True)
    for stem, key in sorted(depends.items()):
        if key is None or outputs_key(generated, stem) != key:
            continue
        for table in sorted(meta_dir(generated, stem).iterdir()):
            if not table.is_file() or table.name == MANIFEST:
                continue
            target = dest / table.name
            if target.exists() and table.suffix == ".csv":
                rows = table.read_text(encoding="utf-8").splitlines(keepends=True)[1:]
                with open(target, "a", encoding="utf-8") as fh:
                    fh.writelines(rows)
            else:
                shutil.copyfile(table, target)
    return {f.name: _digest(f) for f in dest.iterdir() if f.is_file()}


def commit(generated: Path, stem: str, key: str, *, meta: Path, findings: Path, results: Path,
           seeded: Mapping[str, str] | None = None) -> None:
    """Move what chapter ``stem`` wrote (scratch folders ``meta``, ``findings``, ``results``) into
    ``generated/`` under ``key`` (see the module docstring). Tables in ``meta`` that :func:`seed_inputs`
    put there and the chapter left unchanged are not the chapter's and are dropped."""
    generated = Path(generated)
    seeded = dict(seeded or {})
    previous = read_manifest(generated, stem)
    staged = generated / ".running" / f"meta-{stem}"
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    for f in sorted(meta.glob("*")) if meta.is_dir() else []:
        if f.is_file() and not (f.name in seeded and _digest(f) == seeded[f.name]):
            os.replace(f, staged / f.name)
    moved = {"findings": _move_all(findings, generated / "findings"),
             "results": _move_all(results, generated / "results")}
    for kind, names in moved.items():
        for old in set(previous.get(kind) or []) - set(names):
            (generated / kind / old).unlink(missing_ok=True)
    (staged / MANIFEST).write_text(json.dumps({"key": key, **moved}, indent=1, sort_keys=True), encoding="utf-8")
    meta_dir(generated, stem).parent.mkdir(parents=True, exist_ok=True)
    replace_dir(staged, meta_dir(generated, stem))


def _move_all(scratch: Path, target: Path) -> list[str]:
    names = []
    for f in sorted([*scratch.glob("*.json"), *scratch.glob("*.parquet")]) if scratch.is_dir() else []:
        target.mkdir(parents=True, exist_ok=True)
        os.replace(f, target / f.name)
        names.append(f.name)
    return names


def remove_orphans(generated: Path, stems: Iterable[str]) -> None:
    """Outputs of chapters that are no longer in the book."""
    stems = set(stems)
    for folder in (Path(generated) / "meta").glob("*"):
        if folder.is_dir() and folder.name not in stems:
            shutil.rmtree(folder)
