"""What a report build runs, checked before any notebook starts: :func:`make_plan` -> :class:`Plan`.

Every argument of ``recmetrics report`` is validated here, before the first notebook executes:

* the profile (:data:`~recmetrics.report.profiles.PROFILES`) and the dataset: the dataset is
  loaded with its arguments (``--dataset-arg path=DIR`` -> ``rm.datasets.load(name, path=DIR)``),
  so an unknown name, a missing file or an argument its loader does not take fails now; every
  other dataset a notebook's parameters name (chapter 8's ``real_datasets``) is loaded too;
* ``-p key=value`` overrides: ``key`` must be a parameter some notebook's ``parameters`` cell
  declares (and not one the report sets: :data:`RESERVED`), and ``value`` (a Python literal; a
  bare word is a string) must be accepted by the schema of every chapter declaring it (its type,
  range and allowed values: :data:`recmetrics.report.profiles.SCHEMAS`, :mod:`.schema`); the
  values the profile gives every chapter are checked against the same schemas;
* ``--out``: a folder (or a path that can be created), writable, that the site may replace whole
  (:func:`check_out`: not among the sources, not holding them, empty or a site of ours);
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
from . import cache, schema
from .paths import ReportError, absolute, default_book_dir, default_notebooks_dir, main_work_dir
from .profiles import DEPENDS, PROFILES, READS_LATE, SCHEMAS, notebook_parameters, notebook_values

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


def _default(spec: Mapping[str, Any]):
    """The literal default of a papermill parameter spec (``_NO_LITERAL`` when it is an expression)."""
    try:
        return ast.literal_eval(spec["default"])
    except (ValueError, SyntaxError, TypeError):
        return _NO_LITERAL


_NO_LITERAL = object()


def chapter_schema(stem: str, specs: Mapping[str, Mapping[str, Any]],
                   schemas: Mapping[str, Mapping[str, schema.Rule]] = SCHEMAS) -> dict[str, schema.Rule]:
    """The schema of chapter ``stem`` (``{parameter: Rule}``) for the parameters its notebook
    declares (``specs``: papermill's reading): the one written in ``schemas``, which must cover
    every declared parameter, or for a chapter without one, rules inferred from its defaults
    (:func:`recmetrics.report.schema.inferred`)."""
    written = schemas.get(stem)
    if written is None:
        return {k: schema.inferred(None if (d := _default(s)) is _NO_LITERAL else d) for k, s in specs.items()}
    missing = sorted(set(specs) - set(written))
    if missing:
        raise ReportError(f"notebook {stem} declares {', '.join(missing)}, which its schema does not: add a rule "
                          f"for each beside the chapter's other rules (SCHEMAS)")
    return {k: written[k] for k in specs}


def accepted(declared: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The parameter names ``-p`` accepts: those some notebook declares, less those the report sets."""
    return sorted({k for specs in declared.values() for k in specs} - set(RESERVED))


def check_overrides(overrides: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]],
                    schemas: Mapping[str, Mapping[str, schema.Rule]] = SCHEMAS) -> dict[str, Any]:
    """Validate ``-p`` overrides against the schema of every chapter that declares them
    (:func:`chapter_schema`); return them as the chapters receive them (``-p alpha=1`` is the number
    1.0, a bare word given where a text is expected stays a text, e.g. ``-p focus=AP``).

    ``declared``: ``{notebook stem: papermill.inspect_notebook(...)}``; ``schemas``: the book's
    (:data:`recmetrics.report.profiles.SCHEMAS` or :data:`recmetrics.report.own_runs.SCHEMAS`).
    """
    out = {}
    for key, value in overrides.items():
        if key in RESERVED:
            raise InputError(f"-p {key}=...: {key!r} is set by {RESERVED[key]}, not -p")
        takers = {stem: specs for stem, specs in declared.items() if key in specs}
        if not takers:
            raise unknown_name("notebook parameter (-p)", key, accepted(declared))
        rules = {stem: chapter_schema(stem, specs, schemas) for stem, specs in takers.items()}
        verdicts = {}
        for stem, rule in rules.items():
            try:
                verdicts[stem] = schema.check(rule, key, value)
            except InputError as exc:
                verdicts[stem] = exc
        refused = {stem: v for stem, v in verdicts.items() if isinstance(v, InputError)}
        if refused:
            stem, exc = next(iter(refused.items()))
            if len(refused) < len(verdicts):  # another chapter takes it: say which one refuses
                raise InputError(str(exc).replace(": expected ", f": chapter {stem} expects ", 1)) from None
            raise exc
        out[key] = next(iter(verdicts.values()))
    return out


def check_values(values: Mapping[str, Mapping[str, Any]], declared: Mapping[str, Mapping[str, Any]],
                 what: str, schemas: Mapping[str, Mapping[str, schema.Rule]] = SCHEMAS) -> None:
    """Every value each chapter receives (``values``: ``{stem: {parameter: value}}``) checked against
    its schema; ``what`` says where the values come from (e.g. "profile 'paper'"). A value the
    schema refuses is a :class:`ReportError` naming the chapter: the profile or set-up is wrong."""
    for stem, given in values.items():
        rules = chapter_schema(stem, declared[stem], schemas)
        for key, value in given.items():
            if key in rules:
                try:
                    schema.check(rules, key, value, what=f"{what} gives {stem}")
                except InputError as exc:
                    raise ReportError(str(exc)) from None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def source_folders(book_dir: str | os.PathLike | None = None) -> dict[Path, str]:
    """The folders a build reads and must never write into, ``{real path: what it is}``: the
    package, the main book's sources and notebooks, and ``book_dir`` when given."""
    package = Path(__file__).resolve().parent.parent
    folders = {package: "the recmetrics package's sources", default_book_dir().resolve(): "the book's sources",
               default_notebooks_dir().resolve(): "the notebooks' sources"}
    if book_dir is not None:
        folders.setdefault(Path(book_dir).expanduser().resolve(), "the book's sources")
    return folders


def _checkout() -> Path | None:
    """The checkout the package runs from (``None`` when it runs installed)."""
    from .paths import repo_root

    root = repo_root().resolve()
    package = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "recmetrics").resolve() == package else None


def check_out(out: str | os.PathLike | None, book_dir: Path | None = None) -> Path | None:
    """``--out``: a folder the site may replace whole, checked before anything is written:

    * not inside the package's, the book's or the notebooks' sources (a book's ``_build/`` is
      build output, not a source), and not a folder holding them or the checkout (``--out .`` in a
      checkout; a folder inside the checkout, e.g. ``--out site``, is fine);
    * not the folder the command runs in, nor one holding it (the site replaces the folder whole);
    * empty, missing, or a site this project built (:func:`recmetrics.report.site.is_site`, or a
      site inside a book's ``_build/``, built before sites were marked): never a folder of the
      user's files, nor the book's ``_build/`` itself or its other outputs;
    * writable, and so is the folder beside it, where the site is staged (tried with a probe file;
      a folder that does not exist yet is created by the build, not here).

    Each refusal is one :class:`~recmetrics.errors.InputError` line naming the folder; nothing is
    written."""
    from .site import is_site

    if out is None:
        return None
    if str(out) == "":
        raise InputError("--out: empty path; give the folder of the built site")
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise InputError(f"--out {out}: is a file, not a folder; give the folder of the built site")
    real = path.resolve()
    folders = source_folders(book_dir)
    # a site in a book's build output (its default html/, or one built before sites were marked): ours
    built = any(_inside(real, folder / "_build") for folder in folders) and (real / "index.html").is_file()
    for folder, what in folders.items():
        if real == folder / "_build":
            raise InputError(f"--out {out}: is the build folder of {what} ({folder.name}/_build/), which holds its "
                             f"other outputs; give a folder of its own")
        if _inside(real, folder) and not _inside(real, folder / "_build"):
            where = "is" if real == folder else "is inside"
            raise InputError(f"--out {out}: {where} {what} ({folder.name}/); give a folder outside them")
    checkout = _checkout()   # a site inside the checkout is fine (`--out site`), the checkout itself is not
    for folder, what in [*folders.items(), *([(checkout, "the recmetrics checkout")] if checkout else [])]:
        if _inside(folder, real):
            raise InputError(f"--out {out}: holds {what} ({folder.name}/), which the site would replace; "
                             f"give a folder of its own, e.g. {Path(out) / 'site'}")
    if _inside(Path.cwd().resolve(), real):
        raise InputError(f"--out {out}: is the folder this command runs in, or holds it, and the site replaces "
                         f"its folder whole; give a folder of its own, e.g. {Path(out) / 'site'}")
    if real.is_dir() and any(real.iterdir()) and not is_site(real) and not built:
        raise InputError(f"--out {out}: is a folder that is not empty and is not a site recmetrics built (the "
                         f"site replaces it whole); give an empty or new folder")
    probes = [real] if real.is_dir() else []
    probes.append(next(p for p in real.parents if p.exists()) if not real.parent.exists() else real.parent)
    try:
        for folder in probes:
            if not folder.is_dir():
                raise NotADirectoryError(20, "a part of the path is a file, not a folder")
            with tempfile.TemporaryFile(dir=folder):
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
    from ..parallel import connected

    with connected(address.strip(), timeout) as client:
        n = len(client.scheduler_info().get("workers", {}))
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
    check_values({stem: {k: v for k, v in p.items() if k not in overrides} for stem, p in params.items()},
                 declared, f"profile {profile!r}")

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
