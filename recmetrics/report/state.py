"""What ``book/generated/`` holds and under which settings: chapter records, attempts, stale chapters.

Every executed chapter carries a record in its notebook metadata (``metadata.recmetrics``, written
by :func:`recmetrics.report.execute.execute_notebook` when the chapter completed): its content key
(:mod:`.cache`), the build settings (profile, dataset, dataset arguments, ``-p`` overrides), the
parameters it ran with, the dataset fingerprints, when it ran and how long it took. A chapter that
failed or was interrupted is never moved into ``generated/`` (the last good copy stays), and the
attempt is logged in ``generated/.report-state.json``, so that a later ``--no-execute`` build can
refuse a book whose chapters did not all complete under one set of settings
(:func:`stale_chapters`).
"""
from __future__ import annotations

import collections
import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

#: Key of the chapter record in an executed notebook's metadata.
RECORD_KEY = "recmetrics"
#: File (in ``generated/``) logging the last execution attempt of every chapter.
STATE_FILE = ".report-state.json"
#: The settings that must be equal across the chapters of one book.
SETTINGS = ("profile", "dataset", "dataset_args", "overrides")


def now() -> str:
    """The current UTC time, ISO 8601 to the second (``2025-01-31T12:00:00Z``)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def read_record(notebook: str | os.PathLike) -> dict[str, Any] | None:
    """The record an executed notebook carries (``None``: missing, unreadable or not recorded)."""
    try:
        with open(notebook, encoding="utf-8") as fh:
            meta = json.load(fh).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return None
    record = meta.get(RECORD_KEY) if isinstance(meta, dict) else None
    return record if isinstance(record, dict) and "key" in record else None


def read_state(generated_dir: str | os.PathLike) -> dict[str, Any]:
    """The attempts log of ``generated_dir`` (empty when there is none or it is unreadable)."""
    try:
        state = json.loads((Path(generated_dir) / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"attempts": {}}
    if not isinstance(state, dict) or not isinstance(state.get("attempts"), dict):
        return {"attempts": {}}
    return state


def record_attempt(generated_dir: str | os.PathLike, stem: str, status: str, *, key: str | None = None,
                   message: str = "", settings: Mapping[str, Any] | None = None) -> None:
    """Log the outcome (``ok``, ``failed``, ``interrupted``) of executing chapter ``stem``."""
    generated = Path(generated_dir)
    state = read_state(generated)
    state["attempts"][stem] = {"status": status, "key": key, "at": now(), "message": message,
                               "settings": dict(settings or {})}
    tmp = generated / f"{STATE_FILE}.tmp"
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, generated / STATE_FILE)


def settings_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The book-level settings of a chapter record (:data:`SETTINGS`)."""
    s = record.get("settings", {})
    return {k: s.get(k) for k in SETTINGS}


def describe_settings(settings: Mapping[str, Any]) -> str:
    """``profile 'quick', dataset 'movielens-small'`` (+ arguments and overrides when there are any)."""
    parts = [f"profile {settings.get('profile')!r}", f"dataset {settings.get('dataset')!r}"]
    if settings.get("dataset_args"):
        parts.append("dataset arguments " + ", ".join(f"{k}={v!r}" for k, v in settings["dataset_args"].items()))
    if settings.get("overrides"):
        parts.append("-p " + " ".join(f"{k}={v!r}" for k, v in settings["overrides"].items()))
    return ", ".join(parts)


def _canon(settings: Mapping[str, Any]) -> str:
    return json.dumps({k: settings.get(k) or ({} if k in ("dataset_args", "overrides") else None)
                       for k in SETTINGS}, sort_keys=True, default=str)


def stale_chapters(generated_dir: str | os.PathLike, stems: Iterable[str],
                   expected: Mapping[str, Any] | None = None,
                   keys: Mapping[str, str] | None = None) -> dict[str, str]:
    """Chapters of ``stems`` that cannot go into one book with the others, each with the reason.

    A chapter is stale when it has no executed notebook in ``generated_dir``, when its notebook
    carries no record, when its last execution failed or was interrupted (the notebook in place is
    then an older run), when its settings differ from ``expected`` (the keys of :data:`SETTINGS`
    that are given; otherwise from the settings most chapters share), or, with ``keys``
    (``{stem: content key}`` of the build just planned), when its record has another key.
    """
    generated = Path(generated_dir)
    attempts = read_state(generated)["attempts"]
    stale: dict[str, str] = {}
    records: dict[str, dict] = {}
    for stem in stems:
        path = generated / f"{stem}.ipynb"
        record = read_record(path) if path.exists() else None
        last = attempts.get(stem, {})
        if not path.exists():
            stale[stem] = "not executed"
        elif record is None:
            stale[stem] = "executed without a build record (by hand or by an older recmetrics)"
        elif last.get("status") in ("failed", "interrupted") and last.get("at", "") >= record.get("executed_at", ""):
            what = "failed" if last["status"] == "failed" else "was interrupted"
            stale[stem] = f"its last execution {what} ({last.get('at')}" + (
                f": {last['message']}" if last.get("message") else "") + "); the copy in place is older"
        elif keys is not None and stem in keys and record.get("key") != keys[stem]:
            stale[stem] = "executed with other inputs than this build's (notebook, parameters, data or package)"
        else:
            records[stem] = record
    if not records:
        return stale
    given = {k: v for k, v in (expected or {}).items() if k in SETTINGS and v is not None}
    if given:
        for stem, record in records.items():
            mine = settings_of(record)
            diff = {k: mine.get(k) for k in given if _canon({k: mine.get(k)}) != _canon({k: given[k]})}
            if diff:
                stale[stem] = f"executed with {describe_settings(mine)}; this build asks for " \
                              f"{describe_settings({**mine, **given})}"
        return stale
    counts = collections.Counter(_canon(settings_of(r)) for r in records.values())
    first = _canon(settings_of(next(iter(records.values()))))
    top = max(counts.values())
    reference = first if counts[first] == top else next(c for c, n in counts.items() if n == top)
    ref_settings = next(settings_of(r) for r in records.values() if _canon(settings_of(r)) == reference)
    for stem, record in records.items():
        if _canon(settings_of(record)) != reference:
            stale[stem] = f"executed with {describe_settings(settings_of(record))}; the other chapters with " \
                          f"{describe_settings(ref_settings)}"
    return stale


def stale_message(stale: Mapping[str, str]) -> str:
    """One line naming the stale chapters and why, and what to run."""
    listed = "; ".join(f"{stem}: {why}" for stem, why in stale.items())
    return (f"not building the book: {len(stale)} chapter(s) did not complete under the same settings as the "
            f"others ({listed}); run `recmetrics report` with the settings you want (it executes only what "
            f"changed)")
