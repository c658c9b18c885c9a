"""Every chapter parameter of both books is checked at planning by its chapter's schema: a bad
``-p`` value is one line naming the parameter and what it accepts, exit 2, nothing written."""
from __future__ import annotations

import ast

import papermill
import pytest

from recmetrics import checks, cli, parallel
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.report import own_book, own_runs, plan as plan_mod, profiles, schema
from recmetrics.report.paths import ReportError, default_notebooks_dir

MAIN = sorted(default_notebooks_dir().glob("[0-9]*.ipynb"))
OWN = sorted(own_runs.notebooks_dir().glob("[0-9]*.ipynb"))


def _declared(nb):
    return dict(papermill.inspect_notebook(str(nb)))


@pytest.mark.parametrize("nb, schemas", [(nb, profiles.SCHEMAS) for nb in MAIN] +
                         [(nb, own_runs.SCHEMAS) for nb in OWN], ids=lambda x: getattr(x, "stem", ""))
def test_each_chapter_has_one_schema_covering_its_parameters_and_defaults(nb, schemas):
    specs = _declared(nb)
    rules = schemas[nb.stem]
    reported = set(plan_mod.RESERVED)    # set by the report's flags: a schema may hold them for any chapter
    assert set(rules) - reported == set(specs) - reported, (set(rules) ^ set(specs))   # none missing, none extra
    assert set(specs) <= set(rules)
    for name, spec in specs.items():
        default = ast.literal_eval(spec["default"])
        schema.check(rules, name, default, what=f"{nb.stem}'s default")   # the notebook's own default passes


@pytest.mark.parametrize("profile", sorted(profiles.PROFILES))
def test_every_profile_value_passes_the_schemas(profile):
    declared = {nb.stem: _declared(nb) for nb in MAIN}
    values = {stem: profiles.notebook_parameters(profile, "movielens-small", stem, specs)
              for stem, specs in declared.items()}
    plan_mod.check_values(values, declared, f"profile {profile!r}")
    own = {**{k: profiles.PROFILES[profile][k] for k in ("seed", "cutoffs")}, **own_runs.OWN_PARAMETERS[profile],
           "sizes": own_runs._grids(profile), "scenarios": own_runs._scenarios(), "profile": profile}
    own_book.check_parameters({}, own, OWN, profile, own_runs.SCHEMAS)


def test_a_profile_value_the_schema_refuses_is_a_report_error():
    declared = {"05_cutoffs": _declared(default_notebooks_dir() / "05_cutoffs.ipynb")}
    with pytest.raises(ReportError, match=r"profile 'x' gives 05_cutoffs n_jobs=0: expected an integer >= 1"):
        plan_mod.check_values({"05_cutoffs": {"n_jobs": 0}}, declared, "profile 'x'")
    with pytest.raises(ReportError, match="declares cutoff_grid, dataset, .*which its schema does not"):
        plan_mod.chapter_schema("05_cutoffs", declared["05_cutoffs"], {"05_cutoffs": {}})


# ---------------------------------------------------------------------------- the book of own runs
@pytest.fixture()
def own_files(tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    (d / "q.qrels").write_text("".join(f"{u} 0 {i} {(u + i) % 3}\n" for u in range(1, 21) for i in range(1, 13)))
    paths = []
    for s, shift in (("A", 0), ("B", 3), ("C", 5)):
        p = d / f"{s}.trec"
        p.write_text("".join(f"{u} Q0 {(i + shift) % 15 + 1} {i + 1} {20 - i} {s}\n"
                             for u in range(1, 21) for i in range(12)))
        paths.append(str(p))
    return str(d / "q.qrels"), paths


@pytest.fixture()
def runs_root(tmp_path, monkeypatch):
    root = tmp_path / "book" / "_build" / "runs"
    monkeypatch.setattr(own_book, "runs_root", lambda: root)

    def refuse(*a, **k):
        raise RuntimeError("a notebook was executed before the arguments were checked")

    monkeypatch.setattr("recmetrics.report.execute.execute_plan", refuse)
    return root


@pytest.mark.parametrize("args, words", [
    (["-p", "test=bogus"], ["-p test='bogus'", "one of 'permutation', 't', 'wilcoxon', 'bootstrap', 'tukey'"]),
    (["-p", "correction=bogus"], ["-p correction='bogus'", "one of 'holm', 'bonferroni', 'bh', or None"]),
    (["-p", "pool=bogus"], ["-p pool='bogus'", "one of 'concat', 'mean'"]),
    (["-p", 'sizes={"ratings":[1.0,2.0,-0.5]}'], ["-p sizes=", "test size 2.0 is outside (0, 1]"]),
    (["-p", 'sizes={"ratings":[1.0,0.5]}'], ["sizes has no grid for scenario 'random-items'"]),
    (["-p", "n_jobs=0"], ["-p n_jobs=0", "an integer >= 1, or -1 for every core"]),
    (["-p", "n_jobs=-3"], ["-p n_jobs=-3", "an integer >= 1, or -1 for every core"]),
    (["-p", "scenarios=['ratings', 'ratings']"], ["-p scenarios=", "distinct values", "a value given twice"]),
    (["--name", ""], ["--name ''", "give the book a label"]),
    (["--name", "  "], ["--name ' '", "give the book a label"]),   # the message's blanks are squeezed
])
def test_own_runs_parameters_are_refused_at_planning(capsys, own_files, runs_root, args, words):
    qrels, paths = own_files
    rc = cli.main(["report", "--qrels", qrels, "--runs", *paths, *args])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("recmetrics: error:"), err
    for w in words:
        assert w in err, (w, err)
    assert not runs_root.exists()   # nothing written


def test_own_runs_unknown_key_lists_only_what_is_accepted(own_files):
    qrels, paths = own_files
    with pytest.raises(UnknownNameError) as exc:
        own_runs.plan(qrels, paths, parameters={"bogus": 1})
    known = str(exc.value).split("(known: ")[1]
    for name in ("profile", "scheduler", "source"):
        assert name not in known, known
    assert "n_permutations" in known and "test" in known
    with pytest.raises(InputError, match="'profile' is set by --profile"):
        own_runs.plan(qrels, paths, parameters={"profile": "paper"})


def test_own_runs_accepted_values_reach_the_chapters(own_files):
    qrels, paths = own_files
    p = own_runs.plan(qrels, paths, parameters={"correction": None, "test": "t", "n_jobs": -1, "alpha": 1e-2})
    assert p.overrides == {"correction": None, "test": "t", "n_jobs": -1, "alpha": 0.01}
    assert p.parameters["test"] == "t" and p.parameters["correction"] is None


# ----------------------------------------------------------------------------------- the main book
@pytest.fixture()
def no_execution(monkeypatch):
    def refuse(*a, **k):
        raise RuntimeError("a notebook was executed before the arguments were checked")

    monkeypatch.setattr("recmetrics.report.book.execute_plan", refuse)
    monkeypatch.setattr("recmetrics.report.book.vendor_js", refuse)


@pytest.mark.parametrize("param, words", [
    ("pool=bogus", ["-p pool='bogus'", "one of 'concat', 'mean'"]),
    ("n_jobs=0", ["-p n_jobs=0", "an integer >= 1, or -1 for every core"]),
    ("n_jobs=-3", ["-p n_jobs=-3", "an integer >= 1, or -1 for every core"]),
    ("infap=bogus", ["-p infap='bogus'", "'nonrelevant', 'pooled'"]),
    ("split=bogus", ["-p split='bogus'", "a split method", "unknown split method 'bogus'"]),
    ("pools=['concat','concat']", ["-p pools=", "a value given twice"]),
    ("systems=['Nope']", ["-p systems=['Nope']", "recommender specs", "unknown recommender 'Nope'"]),
    ("systems=None", ["-p systems=None", "chapter 08_popularity_bias expects"]),
    ("focus=Nope", ["-p focus='Nope'", "a metric name"]),
    ("robustness_sizes={'ratings':[0]}", ["-p robustness_sizes=", "test size 0.0 is outside (0, 1]"]),
    ("designs=['XX']", ["-p designs=['XX']", "unknown design 'XX'"]),
    ("aggregations=['median']", ["-p aggregations=['median']", "'arithmetic', 'geometric'"]),
    ("geometric_reading=x", ["-p geometric_reading='x'", "'trec_eval', 'rec_eval'"]),
    ("betas=[0.0]", ["-p betas=[0.0]", "> 0 and <= 1"]),
    ("threshold=nan", ["-p threshold='nan'", "a finite number"]),
    ("folds=1", ["-p folds=1", "chapter 02_recommender_zoo expects an integer >= 2"]),
])
def test_main_book_parameters_are_refused_at_planning(capsys, no_execution, tmp_path, param, words):
    out = tmp_path / "site"
    rc = cli.main(["report", "-p", param, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("recmetrics: error:"), err
    for w in words:
        assert w in err, (w, err)
    assert not out.exists()


def test_a_split_alias_reaches_the_chapters_by_its_canonical_name():
    p = plan_mod.make_plan("quick", "movielens-small", overrides={"split": "CV"})
    assert {c.parameters["split"] for c in p.chapters if "split" in c.parameters} == {"kfold"}


def test_main_book_unknown_key_lists_only_what_is_accepted():
    with pytest.raises(UnknownNameError) as exc:
        plan_mod.make_plan("quick", "movielens-small", overrides={"bogus": 1})
    known = str(exc.value).split("(known: ")[1]
    for name in ("profile", "dataset", "dataset_args", "scheduler"):
        assert f" {name}," not in f" {known}" and f" {name})" not in f" {known}", (name, known)
    assert "n_jobs" in known and "pool" in known


# ------------------------------------------------------------------------------ n_jobs: one rule
@pytest.mark.parametrize("value", [0, -2, -3, 1.5, True, "2"])
def test_n_jobs_is_one_rule_in_the_library_and_the_report(value):
    with pytest.raises(InputError, match="or -1 for every core"):
        checks.n_jobs(value)
    with pytest.raises(InputError, match="or -1 for every core"):
        parallel.map_tasks(abs, [(1,), (2,)], n_jobs=value)
    with pytest.raises(InputError, match="expected an integer >= 1, or -1 for every core"):
        schema.check({"n_jobs": schema.n_jobs()}, "n_jobs", value)
    assert checks.n_jobs(-1) == -1 and checks.n_jobs(None) == 1 and checks.n_jobs(3) == 3


def test_run_systems_refuses_a_machine_dependent_n_jobs():
    from recmetrics.data.simulate import simulate
    from recmetrics.runs import run_systems

    with pytest.raises(InputError, match="n_jobs must be an integer >= 1"):
        run_systems(simulate(20, 30, 200, seed=0), ["Pop", "Random"], k=2, n=5, cache=False, progress=False, n_jobs=-2)


# ------------------------------------------------------------------------------- the rule builders
def test_rules_say_what_they_accept():
    rules = {"k": schema.integer(1, 5), "x": schema.number(0, open_low=True), "s": schema.text(),
             "c": schema.choice("a", "b") | None, "l": schema.list_of(schema.integer(0))}
    assert schema.check(rules, "x", 2) == 2.0 and isinstance(schema.check(rules, "x", 2), float)
    assert schema.check(rules, "c", None) is None and schema.check(rules, "l", (1, 2)) == [1, 2]
    for key, value, words in (("k", 6, "an integer >= 1 <= 5"), ("x", 0, "a finite number > 0"),
                              ("x", float("inf"), "a finite number"), ("s", " ", "a non-empty text"),
                              ("c", "z", "one of 'a', 'b', or None"), ("l", [1, -1], "item 1, -1"),
                              ("l", [], "a non-empty list")):
        with pytest.raises(InputError, match=None) as exc:
            schema.check(rules, key, value)
        assert str(exc.value).startswith(f"-p {key}={value!r}: expected") and words in str(exc.value), exc.value
