"""What a book's ``generated/`` holds and under which settings: chapter records, attempts, stale chapters.

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
#: The settings a chapter record carries (see :data:`BOOK_LEVEL` for how they are compared).
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


def book_settings(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The settings of a book from its chapters' records: the first chapter's profile, dataset and
    dataset arguments, and the ``-p`` overrides of every chapter together (``None``: no record)."""
    records = list(records)
    if not records:
        return None
    out = settings_of(records[0])
    out["overrides"] = {}
    for r in records:
        out["overrides"].update(settings_of(r).get("overrides") or {})
    return out


def describe_settings(settings: Mapping[str, Any]) -> str:
    """``profile 'quick', dataset 'movielens-small'`` (+ arguments and overrides when there are any)."""
    parts = [f"profile {settings.get('profile')!r}", f"dataset {settings.get('dataset')!r}"]
    if settings.get("dataset_args"):
        parts.append("dataset arguments " + ", ".join(f"{k}={v!r}" for k, v in settings["dataset_args"].items()))
    if settings.get("overrides"):
        parts.append("-p " + " ".join(f"{k}={v!r}" for k, v in settings["overrides"].items()))
    return ", ".join(parts)


#: Settings every chapter of a book shares; ``-p`` overrides are compared only where a chapter
#: declares the parameter (an override of chapter 5's ``n_samples`` does not make chapter 1 stale).
BOOK_LEVEL = ("profile", "dataset", "dataset_args")
_DEFAULT = "<the notebook's default>"


def _canon(value: Any) -> str:
    from .cache import canonical

    return canonical(value)


def _book_level(settings: Mapping[str, Any]) -> str:
    return _canon({k: settings.get(k) or ({} if k == "dataset_args" else None) for k in BOOK_LEVEL})


def _overrides_seen(record: Mapping[str, Any], keys: Iterable[str]) -> dict[str, str]:
    """For each override key the chapter declares: the value it ran with (or the default)."""
    applied = settings_of(record).get("overrides") or {}
    declared = record.get("parameters") or {}
    return {k: _canon(applied[k]) if k in applied else _DEFAULT for k in keys if k in declared}


def _overrides_differ(record: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """``{parameter: (value it ran with, value asked)}`` where a chapter declaring the parameter ran
    with another value than ``wanted`` asks (compared by value: ``-p seed=0`` where it ran with
    seed 0 is no difference), or ran with an override this build does not give."""
    ran = record.get("parameters") or {}
    applied = settings_of(record).get("overrides") or {}
    bad = {}
    for k in sorted(set(wanted) | set(applied)):
        if k not in ran:
            continue
        if k in wanted:
            if _canon(ran[k]) != _canon(wanted[k]):
                bad[k] = (_canon(ran[k]), _canon(wanted[k]))
        else:
            bad[k] = (_canon(applied[k]), _DEFAULT)
    return bad


def stale_chapters(generated_dir: str | os.PathLike, stems: Iterable[str],
                   expected: Mapping[str, Any] | None = None,
                   keys: Mapping[str, str] | None = None) -> dict[str, str]:
    """Chapters of ``stems`` that cannot go into one book with the others, each with the reason.

    A chapter is stale when it has no executed notebook in ``generated_dir``, when its notebook
    carries no record, when its last execution failed or was interrupted (the notebook in place is
    then an older run), with ``keys`` (``{stem: content key}`` of the build just planned) when its
    record has another key, or when its settings differ: profile, dataset and dataset arguments
    from ``expected`` (those given) or else from the settings most chapters share; a ``-p``
    override only where the chapter declares that parameter (against ``expected["overrides"]``
    when given, else against the value most chapters declaring it ran with).
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
        elif last.get("status") in ("failed", "interrupted", "running") and \
                last.get("at", "") >= record.get("executed_at", ""):
            what = {"failed": "failed", "interrupted": "was interrupted",
                    "running": "did not finish (the build was killed or is still running)"}[last["status"]]
            stale[stem] = f"its last execution {what} ({last.get('at')}" + (
                f": {last['message']}" if last.get("message") else "") + "); the copy in place is older"
        elif keys is not None and stem in keys and record.get("key") != keys[stem]:
            stale[stem] = "executed with other inputs than this build's (notebook, parameters, data or package)"
        else:
            records[stem] = record
    if not records:
        return stale
    given = {k: v for k, v in (expected or {}).items() if k in BOOK_LEVEL and v is not None}
    if given:
        for stem, record in records.items():
            mine = settings_of(record)
            if _book_level({**mine, **given}) != _book_level(mine):
                stale[stem] = f"executed with {describe_settings(mine)}; this build asks for " \
                              f"{describe_settings({**mine, **given})}"
    else:
        counts = collections.Counter(_book_level(settings_of(r)) for r in records.values())
        top = max(counts.values())
        reference = next(_book_level(settings_of(r)) for r in records.values()
                         if counts[_book_level(settings_of(r))] == top)
        ref = next(settings_of(r) for r in records.values() if _book_level(settings_of(r)) == reference)
        for stem, record in records.items():
            if _book_level(settings_of(record)) != reference:
                stale[stem] = f"executed with {describe_settings(settings_of(record))}; the other chapters with " \
                              f"{describe_settings(ref)}"
    fresh = {s: r for s, r in records.items() if s not in stale}
    wanted = (expected or {}).get("overrides")
    if wanted is not None:
        for stem, record in fresh.items():
            if keys is not None and stem in keys:  # its key is this build's: exactly what it asks for
                continue
            bad = _overrides_differ(record, wanted)
            if bad:
                stale[stem] = "executed with " + ", ".join(f"{k} = {v}" for k, (v, _) in bad.items()) + \
                              "; this build asks for " + ", ".join(f"{k} = {a}" for k, (_, a) in bad.items())
        return stale
    all_keys = {k for r in fresh.values() for k in settings_of(r).get("overrides") or {}}
    for k in sorted(all_keys):
        seen = {s: _overrides_seen(r, [k]) for s, r in fresh.items()}
        values = collections.Counter(v[k] for v in seen.values() if k in v)
        if not values:  # no chapter declares it
            continue
        top_value = values.most_common(1)[0][0]
        for stem, v in seen.items():
            if k in v and v[k] != top_value and stem not in stale:
                stale[stem] = f"executed with -p {k} = {v[k]}; the other chapters declaring {k} with {top_value}"
    return stale


def stale_message(stale: Mapping[str, str]) -> str:
    """One line naming the stale chapters and why, and what to run."""
    listed = "; ".join(f"{stem}: {why}" for stem, why in stale.items())
    return (f"not building the book: a book is built only from chapters that all completed under one profile and "
            f"dataset, and {len(stale)} chapter(s) are stale ({listed}); run `recmetrics report` with the settings "
            f"you want (it executes only what changed)")
