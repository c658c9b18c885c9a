"""What a report build runs, checked before any notebook starts: :func:`make_plan` -> :class:`Plan`.

Every argument of ``recmetrics report`` is validated here, before the first notebook executes:

* the profile (:data:`~recmetrics.report.profiles.PROFILES`) and the dataset: the dataset is
  loaded with its arguments (``--dataset-arg path=DIR`` -> ``rm.datasets.load(name, path=DIR)``),
  so an unknown name, a missing file or an argument its loader does not take fails now; every
  other dataset a notebook's parameters name (chapter 8's ``real_datasets``) is loaded too;
* ``-p key=value`` overrides: ``key`` must be a parameter some notebook's ``parameters`` cell
  declares, and ``value`` (a Python literal; a bare word is a string) must have the type of the
  declared default (an ``int`` for ``folds = 5``, a list of strings for ``systems = ["Pop"]``;
  ``None`` where the default or a profile uses ``None``);
* ``--out``: a folder (or a path that can be created), writable;
* ``--scheduler``: a Dask scheduler that answers, and a notebook that declares ``scheduler``.

A notebook receives only the names its ``parameters`` cell declares. Dataset arguments go to the
notebooks that declare ``dataset_args`` (``rm.datasets.load(dataset, **dataset_args)``): a notebook
that declares ``dataset`` but not ``dataset_args`` could not honour them, so that is an error.

The chapters run in file-name order, except that a chapter runs after the chapters it reads
(:data:`~recmetrics.report.profiles.DEPENDS`, or ``depends_on`` in the notebook's ``recmetrics``
metadata); a cycle is an error. Of those, the ones it reads only late
(:data:`~recmetrics.report.profiles.READS_LATE`, or ``reads_late`` in the metadata) it may run
beside when several chapters run at once. Each chapter gets its content key (:mod:`.cache`), which
includes the keys of every chapter it reads.
"""
from __future__ import annotations

import ast
import copy
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError, unknown_name
from . import cache
from .paths import ReportError, absolute, default_notebooks_dir, main_work_dir
from .profiles import DEPENDS, PROFILES, READS_LATE, notebook_parameters, notebook_values

#: Parameters the report sets itself (from ``--profile``, ``--dataset``, ``--dataset-arg`` and
#: ``--scheduler``); ``-p`` cannot set them.
RESERVED = {"dataset": "--dataset", "profile": "--profile", "dataset_args": "--dataset-arg",
            "scheduler": "--scheduler"}


@dataclass(frozen=True)
class Chapter:
    """One notebook of the build: what papermill injects, what the chapter shows, what it reads."""

    stem: str
    source: Path
    parameters: dict          # injected by papermill (only names the notebook declares)
    shown: dict               # every declared parameter with the value it runs with, profile first
    depends: tuple[str, ...]  # chapters whose results it reads (run before it)
    key: str                  # content key (:mod:`.cache`): executed again only when it changes
    overrides: dict = field(default_factory=dict)  # the -p values that change what it runs with
    cwd: Path | None = None   # the kernel's working folder (default: the chapter's scratch folder)
    late: tuple[str, ...] = ()  # of ``depends``, those it may start beside (profiles.READS_LATE)


@dataclass
class Plan:
    """A validated build: settings, chapters in execution order, data fingerprints, package hash."""

    profile: str
    dataset: str
    dataset_args: dict
    overrides: dict
    scheduler: str | None
    notebooks_dir: Path
    generated_dir: Path
    chapters: list[Chapter]
    fingerprints: dict[str, dict]
    package: str
    versions: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # every notebook of the book (not only those run)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings every chapter of one book shares (``recmetrics.report.state.SETTINGS``)."""
        return {"profile": self.profile, "dataset": self.dataset, "dataset_args": dict(self.dataset_args),
                "overrides": dict(self.overrides)}

    @property
    def stems(self) -> list[str]:
        return [c.stem for c in self.chapters]


# ------------------------------------------------------------------------------ single checks
def parse_assignment(text: str, what: str = "-p") -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value)``: ``value`` is a Python literal (``5``, ``0.5``,
    ``[5, 10]``, ``None``, ``'x'``) or else the bare text as a string.

    >>> parse_assignment("folds=3"), parse_assignment("systems=['Pop', 'Random']"), parse_assignment("path=/data/ml")
    (('folds', 3), ('systems', ['Pop', 'Random']), ('path', '/data/ml'))
    """
    if not isinstance(text, str) or "=" not in text:
        raise InputError(f"{what} {text!r}: expected key=value, e.g. {what} folds=3")
    key, _, raw = text.partition("=")
    key = key.strip()
    if not key.isidentifier():
        raise InputError(f"{what} {text!r}: {key!r} is not a parameter name (expected key=value)")
    return key, literal(raw)


def literal(raw: str) -> Any:
    """A Python literal read from ``raw``, or ``raw`` itself (stripped) when it is not one."""
    raw = raw.strip()
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw


def _type_name(value, show: bool = True) -> str:
    if isinstance(value, (list, tuple)):
        inner = sorted({type(v).__name__ for v in value})
        return f"a list of {'/'.join(inner)}" if inner else "an empty list"
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}" + (f" ({value!r})" if show else "")


def _conforms(value, default) -> bool:
    """Whether ``value`` has the type of a declared ``default`` (a float accepts an int)."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return False
        kinds = {type(d) for d in default}
        if len(kinds) != 1:  # empty or mixed default: any list
            return True
        (kind,) = kinds
        return all(_conforms(v, kind()) for v in value)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return True  # a default that is no literal (an expression): nothing to check against


def _default(spec: Mapping[str, Any]):
    """The literal default of a papermill parameter spec (``_NO_LITERAL`` when it is an expression)."""
    try:
        return ast.literal_eval(spec["default"])
    except (ValueError, SyntaxError, TypeError):
        return _NO_LITERAL


_NO_LITERAL = object()


def _none_allowed(stem: str, key: str, default) -> bool:
    """``None`` is a valid value where the notebook's default or any profile uses ``None``."""
    if default is None:
        return True
    for profile, values in PROFILES.items():
        per_nb = notebook_values(profile, stem)
        if key in per_nb and per_nb[key] is None or key in values and values[key] is None:
            return True
    return False


def _int_at_least(low: int):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low


def _cutoff_list(v) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(_int_at_least(1)(c) for c in v)


def _share(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1


#: What a parameter's value must be, by name, in whichever notebook declares it (both books):
#: ``{name: (test, what is expected)}``. Checked when a build is planned, so a bad ``-p`` value is
#: one line and exit 2 there, not a failure in the first chapter that uses it.
VALUE_RULES: dict[str, tuple[Any, str]] = {
    "seed": (_int_at_least(0), "an integer >= 0"),
    **{k: (_cutoff_list, "a non-empty list of cut-offs, integers >= 1") for k in ("cutoffs", "cutoff_grid")},
    **{k: (_int_at_least(1), "an integer >= 1") for k in (
        "cutoff", "guide_k", "depth", "n", "folds", "n_permutations", "n_samples", "n_bootstrap", "users",
        "n_users", "n_systems", "axiom_examples")},
    **{k: (_share, "a number between 0 and 1 (exclusive)") for k in ("alpha", "test_size", "confidence")},
}


def check_value(key: str, value: Any, what: str = "-p") -> None:
    """Raise :class:`~recmetrics.errors.InputError` (one line) when ``value`` breaks the rule of
    parameter ``key`` (:data:`VALUE_RULES`; ``metrics``: registered metric names, each given a
    cut-off when it has none)."""
    rule = VALUE_RULES.get(key)
    if rule is not None and value is not None and not rule[0](value):
        raise InputError(f"{what} {key}={value!r}: expected {rule[1]}")
    if key == "metrics" and value is not None:
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(m, str) for m in value):
            raise InputError(f"{what} {key}={value!r}: expected a non-empty list of metric names, e.g. ['P', 'nDCG']")
        from ..metrics import parse

        for m in value:
            try:
                parse(m if "@" in m else f"{m}@10")
            except InputError as exc:
                raise InputError(f"{what} {key}: {' '.join(str(exc).split())}") from None


def check_overrides(overrides: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Validate ``-p`` overrides against the notebooks' declared parameters; return them (a bare
    word given where a notebook declares a string stays a string, e.g. ``-p focus=AP``).

    ``declared``: ``{notebook stem: papermill.inspect_notebook(...)}``.
    """
    out = {}
    known = sorted({k for specs in declared.values() for k in specs})
    for key, value in overrides.items():
        if key in RESERVED:
            raise InputError(f"-p {key}=...: {key!r} is set by {RESERVED[key]}, not -p")
        takers = {stem: specs[key] for stem, specs in declared.items() if key in specs}
        if not takers:
            raise unknown_name("notebook parameter (-p)", key, known)
        for stem, spec in takers.items():
            default = _default(spec)
            if default is _NO_LITERAL:
                continue
            if value is None and _none_allowed(stem, key, default):
                continue
            if not _conforms(value, default) and isinstance(default, str) and not isinstance(value, str):
                value = str(value)  # -p focus=5 where the notebook declares a string
            if not _conforms(value, default):
                raise InputError(f"-p {key}={value!r}: notebook {stem} declares {key} = {spec['default']} "
                                 f"({_type_name(default, show=False)}); got {_type_name(value)}")
            if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)  # -p alpha=1 is the value 1.0 (one key for one value)
        check_value(key, value)
        out[key] = value
    return out


def check_out(out: str | os.PathLike | None, book_dir: Path | None = None) -> Path | None:
    """``--out``: a folder that exists or can be created, and is writable (tried: the folder is
    created and a probe file written and removed). Fails before anything runs."""
    if out is None:
        return None
    if str(out) == "":
        raise InputError("--out: empty path; give the folder of the built site")
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise InputError(f"--out {out}: is a file, not a folder; give the folder of the built site")
    if book_dir is not None and path.resolve() == Path(book_dir).resolve():
        raise InputError(f"--out {out}: that is the book's source folder; give another folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    return path


def check_dataset(dataset: Any) -> str:
    if not isinstance(dataset, str) or not dataset.strip():
        from ..data import datasets

        names = ", ".join(datasets.list()["name"])
        raise InputError(f"--dataset {dataset!r}: give a dataset name ({names})")
    return dataset.strip()


def check_scheduler(address: str | None, timeout: float = 10.0) -> str | None:
    """``--scheduler``: connect to the Dask scheduler once (a clear error when it does not answer)."""
    if address is None:
        return None
    if not isinstance(address, str) or not address.strip():
        raise InputError(f"--scheduler {address!r}: give a scheduler address, e.g. tcp://127.0.0.1:8786")
    from ..parallel import get_client

    client = get_client(address.strip(), timeout=timeout)
    try:
        n = len(client.scheduler_info().get("workers", {}))
    finally:
        client.close()
    if n == 0:
        raise InputError(f"--scheduler {address}: the scheduler answers but has no worker")
    return address.strip()


def order_chapters(stems: Iterable[str], depends: Mapping[str, Iterable[str]]) -> list[str]:
    """``stems`` in file-name order, each after the stems it depends on (those not in ``stems``
    are ignored). A cycle raises :class:`ReportError` naming it.

    >>> order_chapters(["01", "04", "05", "06"], {"04": ["05", "06"]})
    ['01', '05', '06', '04']
    """
    stems = sorted(stems)
    deps = {s: sorted(set(depends.get(s, ())) & set(stems) - {s}) for s in stems}
    done: list[str] = []
    left = list(stems)
    while left:
        ready = next((s for s in left if all(d in done for d in deps[s])), None)
        if ready is None:
            cycle = " -> ".join(left)
            raise ReportError(f"chapters depend on each other in a cycle ({cycle}); fix DEPENDS or depends_on")
        done.append(ready)
        left.remove(ready)
    return done


def _read(path: Path):
    import nbformat

    return nbformat.read(str(path), as_version=4)


def _declared(path: Path) -> dict[str, dict]:
    """The parameters a notebook's ``parameters`` cell declares (papermill's reading)."""
    import papermill

    return dict(papermill.inspect_notebook(str(path)))


def dataset_names(parameters: Mapping[str, Any]) -> list[str]:
    """Registered dataset names among a chapter's parameters other than ``dataset`` (e.g. the
    ``real_datasets`` list of chapter 8)."""
    names = []
    for key, value in parameters.items():
        if "dataset" not in key or key in ("dataset", "dataset_args"):
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, str) and v:
                names.append(v)
    return names


# ------------------------------------------------------------------------------------- plan
def make_plan(
    profile: str = "quick",
    dataset: str = "movielens-small",
    *,
    dataset_args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    scheduler: str | None = None,
    notebooks_dir: str | os.PathLike | None = None,
    generated_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    out: str | os.PathLike | None = None,
    book_dir: str | os.PathLike | None = None,
    kernel_name: str | None = None,
) -> Plan:
    """Validate a build's arguments and return its :class:`Plan` (nothing executes here).

    Raises :class:`~recmetrics.errors.InputError` / :class:`~recmetrics.errors.UnknownNameError`
    (bad profile, dataset, dataset argument, ``-p`` key or value, ``--out``, ``--scheduler``) or
    :class:`ReportError` (no notebook, dependency cycle).
    """
    if profile not in PROFILES:
        raise unknown_name("report profile", str(profile), PROFILES)
    dataset = check_dataset(dataset)
    dataset_args = dict(dataset_args or {})
    for k in dataset_args:
        if not isinstance(k, str) or not k.isidentifier():
            raise InputError(f"--dataset-arg {k!r}=...: not an argument name")
    book = absolute(book_dir) if book_dir else main_work_dir()
    nb_dir = absolute(notebooks_dir) if notebooks_dir else default_notebooks_dir()
    generated = absolute(generated_dir) if generated_dir else book / "generated"
    sources = sorted(p for p in nb_dir.glob("*.ipynb") if not p.name.startswith((".", "_")))
    if not sources:
        raise ReportError(f"no notebook found in {nb_dir}")
    wanted = None
    if only is not None:
        wanted = {Path(o).stem for o in only}
        unknown = wanted - {p.stem for p in sources}
        if unknown:
            raise unknown_name("notebook", sorted(unknown)[0], [p.stem for p in sources])

    notebooks = {p.stem: _read(p) for p in sources}
    declared = {p.stem: _declared(p) for p in sources}
    for stem, specs in declared.items():
        unheard = sorted(set(notebook_values(profile, stem)) - set(specs))
        if unheard:  # the chapter would silently run with its own defaults for these
            raise ReportError(f"profile {profile!r} sets {stem}'s {', '.join(unheard)}, which the notebook does not "
                              f"declare in its parameters cell; fix NOTEBOOK_PARAMETERS / recmetrics.papers or the notebook")
    overrides = check_overrides(dict(overrides or {}), declared)
    check_out(out, book)
    if dataset_args:
        deaf = [s for s, d in declared.items() if "dataset" in d and "dataset_args" not in d]
        if deaf:
            raise InputError(
                f"--dataset-arg {', '.join(dataset_args)}: notebook(s) {', '.join(deaf)} load `dataset` but do not "
                f"declare `dataset_args` in their parameters cell, so they would load {dataset!r} without the "
                f"arguments; declare `dataset_args = {{}}` there and call rm.datasets.load(dataset, **dataset_args)")
    if scheduler is not None:
        takers = [s for s, d in declared.items() if "scheduler" in d]
        if not takers:
            raise InputError(f"--scheduler {scheduler}: no notebook declares a `scheduler` parameter, so nothing "
                             f"would run on the cluster; declare `scheduler = None` and pass client=scheduler")
        scheduler = check_scheduler(scheduler)

    # the data the chapters run on (loaded now: a bad name or argument fails before anything runs)
    fingerprints = {}
    if any("dataset" in specs for specs in declared.values()):
        fingerprints[dataset] = cache.dataset_fingerprint(dataset, dataset_args)
    params: dict[str, dict] = {}
    for stem, specs in declared.items():
        p = notebook_parameters(profile, dataset, stem, specs)
        extra = {"dataset_args": dataset_args, "scheduler": scheduler, **copy.deepcopy(overrides)}
        p.update({k: v for k, v in extra.items() if k in specs})
        params[stem] = p
        for name in dataset_names({k: p.get(k, _default(s)) for k, s in specs.items()}):
            if name not in fingerprints:
                fingerprints[name] = cache.dataset_fingerprint(name)

    declared_meta = {stem: nb.metadata.get("recmetrics", {}) or {} for stem, nb in notebooks.items()}
    late_reads = {stem: tuple(READS_LATE.get(stem, ())) + tuple(m.get("reads_late", ()))
                  for stem, m in declared_meta.items()}
    depends = {stem: tuple(dict.fromkeys((*DEPENDS.get(stem, ()), *m.get("depends_on", ()), *late_reads[stem])))
               for stem, m in declared_meta.items()}
    order = order_chapters(notebooks, depends)
    package = cache.package_hash()
    versions = cache.dependency_versions()
    keys: dict[str, str] = {}
    chapters = []
    for stem in order:
        specs, p = declared[stem], params[stem]
        shown: dict[str, Any] = {"profile": profile}
        for name, spec in specs.items():
            if name in p:
                shown[name] = p[name]
            else:
                d = _default(spec)
                shown[name] = spec["default"] if d is _NO_LITERAL else d
        base = notebook_parameters(profile, dataset, stem, specs)
        changed = {k: v for k, v in overrides.items() if k in specs
                   and cache.canonical(v) != cache.canonical(base[k] if k in base else _default(specs[k]))}
        deps = tuple(d for d in depends[stem] if d in keys)
        used = {n: fingerprints[n] for n in [dataset, *dataset_names(shown)] if n in fingerprints}
        key = cache.chapter_key({
            "source": cache.file_hash(nb_dir / f"{stem}.ipynb"),
            "parameters": cache.keyed(p),     # a cluster or more threads give identical results
            "profile": profile, "datasets": used, "package": package,
            "versions": versions, "kernel": kernel_name, "depends": {d: keys[d] for d in deps},
        })
        keys[stem] = key
        if wanted is None or stem in wanted:
            chapters.append(Chapter(stem, nb_dir / f"{stem}.ipynb", p, shown, deps, key, changed,
                                    late=tuple(d for d in dict.fromkeys(late_reads[stem]) if d in deps)))
    return Plan(profile, dataset, dataset_args, overrides, scheduler, nb_dir, generated, chapters, fingerprints,
                package, versions, keys)
