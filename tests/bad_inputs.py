"""Bad inputs of issue 17 part A ("No silent wrong p-value") and what each surface does with them.

Run ``python tests/bad_inputs.py`` (from the repository root) to print one line per case and the
tally: *correct* (a right result), *clear error* (``InputError`` / exit 2 with one line naming
the culprit), *silent wrong* (a result where an error or another value was due), *traceback*
(any other exception, or a CLI traceback), *unclear error* (an error that does not name the
culprit) and *refused valid input* (an error where a result was due). ``PYTHONPATH=/path/to/other/checkout`` tallies another
version of the code. ``tests/test_no_silent_pvalue.py`` requires every case to be correct or a
clear error.

Surfaces: recmetrics.study (Study.from_runs), the run cache, recmetrics.datasets (ratings-file),
recmetrics.meta (robustness_study, discriminative_power, pairwise, permutation_test, paired_bootstrap,
paired_t, wilcoxon, tukey_hsd, effect_size, compare, kendall_tau, tau_ap), recmetrics.protocols
(evaluate, build_targets), recmetrics.data.io (table readers) and the ``evaluate`` / ``compare``
commands.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
_TMP = tempfile.TemporaryDirectory(prefix="rm-bad-")  # every case's files; removed at exit


def _mkdtemp() -> Path:
    return Path(tempfile.mkdtemp(dir=_TMP.name))


@dataclass
class Case:
    surface: str
    what: str
    run: Callable
    # ("error", fragments the message must contain) or ("ok", predicate on the result)
    expect: tuple


def _scores(n_sys=3, n_users=40, seed=0, names=("A", "B", "C")):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.random((n_sys, n_users)), index=list(names[:n_sys]),
                        columns=[f"u{i}" for i in range(n_users)])


def _fold_dropped():
    """study.scores(...) with the fold level dropped: every user label appears in two folds."""
    s = _scores(n_users=60)
    s.columns = pd.MultiIndex.from_arrays([np.repeat([0, 1], 30), [f"u{i % 30}" for i in range(60)]],
                                          names=["fold", "user"])
    s.columns = s.columns.droplevel("fold")
    return s


def _with(value, system="A", user="u3"):
    s = _scores()
    if isinstance(value, str):
        s = s.astype(object)
    s.loc[system, user] = value
    return s


def _dup_systems():
    s = _scores()
    s.index = ["A", "A", "C"]
    return s


def _meta():
    import recmetrics as rm

    return rm.meta


def _compare():
    from recmetrics.meta import compare

    return compare.compare


def _toy_split():
    import recmetrics as rm

    rng = np.random.default_rng(3)
    rows = [(u, i, float(rng.integers(1, 6))) for u in range(30) for i in rng.choice(60, 25, replace=False)]
    frame = pd.DataFrame(rows, columns=["user", "item", "rating"])
    return rm.splits.holdout(frame, 0.3, seed=1)


def _subset_keeps_values():
    """protocols.evaluate(users=subset): every subset user keeps the per-set values it has when all
    users are evaluated."""
    import recmetrics as rm

    train, test = _toy_split()
    system = rm.recommenders.create("Random", seed=1).fit(train)
    full = rm.protocols.evaluate(system, train, test, "TI-1R-NN(n=10)", ["RR"], seed=0).per_set
    who = np.sort(test.user.unique())[::3]
    part = rm.protocols.evaluate(system, train, test, "TI-1R-NN(n=10)", ["RR"], seed=0, users=who).per_set
    ref = full[full.user.isin(who)].reset_index(drop=True)
    return ref[["user", "item", "RR"]].equals(part[["user", "item", "RR"]].reset_index(drop=True))


def _tmp(name: str, text: str) -> str:
    d = _mkdtemp()
    p = d / name
    p.write_text(text)
    return str(p)


def _trec_files():
    """qrels with 3 users; run 'sys' covers users 1-2, run 'sub' only user 1."""
    d = _mkdtemp()
    (d / "qrels.txt").write_text("1 0 10 5\n1 0 11 2\n2 0 10 4\n2 0 12 5\n3 0 13 1\n")
    (d / "run1.txt").write_text("1 Q0 11 1 2.0 sys\n1 Q0 10 2 1.0 sys\n2 Q0 10 1 1 sys\n2 Q0 12 2 1 sys\n")
    (d / "run2.txt").write_text("1 Q0 10 1 2.0 sub\n1 Q0 11 2 1.0 sub\n")
    return d


def _cli(*argv, close_stdout=False, cwd=None):
    """(exit status, stdout, stderr) of ``python -m recmetrics.cli argv`` in a fresh process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", ""), str(ROOT)]).strip(os.pathsep) \
        if "PYTHONPATH" in env else str(ROOT)
    cmd = [sys.executable, "-m", "recmetrics.cli", *argv]
    if close_stdout:  # `>&-`
        cmd = ["sh", "-c", '"$@" >&-', "sh", *cmd]
    res = subprocess.run(cmd, capture_output=not close_stdout, stderr=subprocess.PIPE if close_stdout else None,
                         text=True, cwd=cwd or _TMP.name, env=env)  # not ROOT: -m puts the cwd first
    return res.returncode, res.stdout or "", res.stderr or ""


class CliResult:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err


def _cli_case(*argv, **kw):
    return lambda: CliResult(*_cli(*argv, **kw))


def _files_after_m(cmd):
    d = _trec_files()
    if cmd == "evaluate":
        return CliResult(*_cli("evaluate", "-m", "P@1", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt")))
    return CliResult(*_cli("compare", "-m", "P@1", "RR", str(d / "qrels.txt"), str(d / "run1.txt"),
                           str(d / "run2.txt"), "--permutations", "100"))


def _cli_d(*argv, **kw):
    def run():
        d = _trec_files()
        return CliResult(*_cli(*[a.format(d=d) for a in argv], **kw))
    return run


def _many_systems():
    s = pd.DataFrame(np.arange(30)[:, None] * 0.01 + np.random.default_rng(0).random((30, 40)) * 0.001,
                     index=[f"s{i}" for i in range(30)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _compare()({"m": s}, test="t", correction=None)
    return res


def _warns(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


def _compare_from_runs():
    import recmetrics as rm

    d = _trec_files()
    runs = [rm.io.read_run(str(d / "run1.txt")), rm.io.read_run(str(d / "run2.txt"))]
    return _compare()(runs=runs, qrels=rm.io.read_qrels(str(d / "qrels.txt")), metrics=["P@1"], n_permutations=100)


def _read_table(text, kind="qrels"):
    import recmetrics as rm

    path = _tmp("t.csv", text)
    return (rm.io.read_qrels if kind == "qrels" else rm.io.read_run)(path)


def _protocols_evaluate_str():
    import recmetrics as rm

    train, test = _toy_split()
    return rm.protocols.evaluate("Pop", train, test, "TI-1R-NN(n=10)")


E = "error"
OK = "ok"
FINITE = ("inf", "'A'", "'u3'")

def _study_runs():
    """A small Runs object (2 systems, 2 folds) fitted on simulated ratings."""
    import recmetrics as rm
    from recmetrics.data.simulate import simulate

    ratings = simulate(60, 80, 1500, seed=3)
    runs = rm.study.run_systems(ratings, ["Random", "Pop"], "kfold", k=2, seed=0, n=20, cache=False, progress=False)
    return rm, runs


def _from_runs_tail_folds():
    rm, runs = _study_runs()
    full = rm.study.Study.from_runs(runs, runs.folds, ["Recall"], [20], progress=False)
    tail = rm.study.Study.from_runs(runs, rm.study.tail_folds(runs.folds), ["Recall"], [20], progress=False)
    return full.scores("Recall", 20).mean(axis=1), tail.scores("Recall", 20).mean(axis=1)


def _from_runs_dict():
    rm, runs = _study_runs()
    by_name = {name: runs[(name, 0)] for name in runs.systems}
    st = rm.study.Study.from_runs(by_name, [runs.folds[0]], ["P"], [10], progress=False)
    return st.scores("P", 10)


def _damaged_run_cache():
    """A cached run with one flipped byte is recomputed, not loaded as another run."""
    import recmetrics as rm
    from recmetrics.data.simulate import simulate

    ratings = simulate(50, 70, 1200, seed=4)
    cache = _mkdtemp()
    first = rm.study.run_systems(ratings, ["Pop"], "kfold", k=2, seed=0, n=10, cache_dir=cache, progress=False)
    for path in sorted(cache.rglob("*.parquet")):
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x10
        path.write_bytes(bytes(data))
    again = rm.study.run_systems(ratings, ["Pop"], "kfold", k=2, seed=0, n=10, cache_dir=cache, progress=False)
    return all(np.array_equal(first[k].items, again[k].items) for k in first)


def _robustness_of_scores():
    from recmetrics.meta.robustness import robustness_study

    return robustness_study(_scores())


def _ratings_file_header_short():
    import recmetrics as rm

    return rm.datasets.load("ratings-file", path=_tmp("short.csv", "user,item,rating\n1,10,4,2\n"))


CASES = [
    # -- item 1: duplicate user labels
    Case("meta", "discriminative_power, fold level dropped (user labels twice)",
         lambda: _meta().discriminative_power(_fold_dropped(), n_permutations=999), (E, ("'u0'", "more than once"))),
    Case("meta", "pairwise, fold level dropped", lambda: _meta().pairwise(_fold_dropped(), n_permutations=999),
         (E, ("'u0'", "more than once"))),
    Case("meta", "compare, fold level dropped", lambda: _compare()({"P@10": _fold_dropped()}, n_permutations=999),
         (E, ("'u0'", "more than once"))),
    Case("meta", "discriminative_power {metric: frame}, fold level dropped",
         lambda: _meta().discriminative_power({"a": _fold_dropped(), "b": _fold_dropped()}, n_permutations=999),
         (E, ("'u0'", "more than once"))),
    # -- item 2: ±inf (and NaN) scores
    Case("meta", "discriminative_power +inf", lambda: _meta().discriminative_power(_with(np.inf), n_permutations=999),
         (E, FINITE)),
    Case("meta", "discriminative_power -inf", lambda: _meta().discriminative_power(_with(-np.inf), n_permutations=999),
         (E, ("-inf", "'A'", "'u3'"))),
    *[Case("meta", f"pairwise(test={t!r}) +inf", (lambda t=t: _meta().pairwise(_with(np.inf), test=t, n_permutations=999)),
           (E, FINITE)) for t in ("permutation", "bootstrap", "tukey", "t", "wilcoxon")],
    Case("meta", "tukey_hsd +inf", lambda: _meta().tukey_hsd(_with(np.inf), n_permutations=999), (E, FINITE)),
    Case("meta", "compare +inf", lambda: _compare()({"m": _with(np.inf)}, n_permutations=999), (E, FINITE)),
    Case("meta", "permutation_test +inf", lambda: _meta().permutation_test(_with(np.inf).loc["A"].to_numpy(),
                                                                           _scores().loc["B"].to_numpy()),
         (E, ("inf", "user 3"))),
    Case("meta", "paired_bootstrap +inf", lambda: _meta().paired_bootstrap(_with(np.inf).loc["A"].to_numpy(),
                                                                           _scores().loc["B"].to_numpy()),
         (E, ("inf", "user 3"))),
    Case("meta", "paired_t +inf", lambda: _meta().paired_t(_with(np.inf).loc["A"].to_numpy(), _scores().loc["B"].to_numpy()),
         (E, ("inf", "user 3"))),
    Case("meta", "wilcoxon -inf", lambda: _meta().wilcoxon(_scores().loc["B"].to_numpy(), _with(-np.inf).loc["A"].to_numpy()),
         (E, ("-inf", "user 3"))),
    Case("meta", "effect_size +inf", lambda: _meta().effect_size(_with(np.inf).loc["A"].to_numpy(), _scores().loc["B"].to_numpy()),
         (E, ("inf", "user 3"))),
    Case("meta", "discriminative_power NaN", lambda: _meta().discriminative_power(_with(np.nan), n_permutations=999),
         (E, ("NaN", "'A'", "'u3'"))),
    Case("meta", "kendall_tau +inf", lambda: _meta().kendall_tau([1, np.inf, 3], [1, 2, 3]), (E, ("inf", "system 1"))),
    # -- item 4: duplicate system names
    Case("meta", "pairwise(test='tukey') duplicate systems", lambda: _meta().pairwise(_dup_systems(), test="tukey", n_permutations=999),
         (E, ("'A'", "more than once"))),
    Case("meta", "pairwise(test='permutation') duplicate systems", lambda: _meta().pairwise(_dup_systems(), n_permutations=999),
         (E, ("'A'", "more than once"))),
    Case("meta", "pairwise(test='t') duplicate systems", lambda: _meta().pairwise(_dup_systems(), test="t"),
         (E, ("'A'", "more than once"))),
    Case("meta", "tukey_hsd duplicate systems", lambda: _meta().tukey_hsd(_dup_systems(), n_permutations=999),
         (E, ("'A'", "more than once"))),
    Case("meta", "compare duplicate systems", lambda: _compare()({"m": _dup_systems()}, n_permutations=999),
         (E, ("'A'", "more than once"))),
    Case("meta", "discriminative_power duplicate systems", lambda: _meta().discriminative_power(_dup_systems(), n_permutations=999),
         (E, ("'A'",))),
    # -- non-numeric cells, seeds and counts
    Case("meta", "discriminative_power non-numeric cell", lambda: _meta().discriminative_power(_with("x"), n_permutations=999),
         (E, ("'x'", "'A'", "'u3'"))),
    Case("meta", "pairwise non-numeric cell", lambda: _meta().pairwise(_with("x"), n_permutations=999), (E, ("'x'", "'A'", "'u3'"))),
    Case("meta", "permutation_test non-numeric cell", lambda: _meta().permutation_test([0.1, "x", 0.3], [0.2, 0.1, 0.0]),
         (E, ("'x'", "position 1"))),
    Case("meta", "discriminative_power seed=-1", lambda: _meta().discriminative_power(_scores(), n_permutations=999, seed=-1),
         (E, ("seed", "-1"))),
    Case("meta", "discriminative_power seed=None", lambda: _meta().discriminative_power(_scores(), n_permutations=999, seed=None),
         (E, ("seed", "None"))),
    Case("meta", "discriminative_power n_jobs=0", lambda: _meta().discriminative_power(_scores(), n_permutations=999, n_jobs=0),
         (E, ("n_jobs", "0"))),
    Case("meta", "discriminative_power chunk_size=0", lambda: _meta().discriminative_power(_scores(), n_permutations=999, chunk_size=0),
         (E, ("chunk_size", "0"))),
    Case("meta", "discriminative_power exact, chunk_size=0",
         lambda: _meta().discriminative_power(_scores(n_users=8), chunk_size=0), (E, ("chunk_size", "0"))),
    Case("meta", "paired_bootstrap seed=None (unreproducible)", lambda: _meta().paired_bootstrap([0.1, 0.5, 0.3], [0.2, 0.1, 0.0], seed=None),
         (E, ("seed", "None"))),
    Case("meta", "tukey_hsd seed=-1", lambda: _meta().tukey_hsd(_scores(), n_permutations=99, seed=-1), (E, ("seed", "-1"))),
    Case("meta", "pairwise n_permutations=0", lambda: _meta().pairwise(_scores(), n_permutations=0), (E, ("n_permutations", "0"))),
    # -- quietly surprising
    Case("meta", "tau_ap of a fully tied ranking = kendall_tau's NaN",
         lambda: (_meta().tau_ap([1, 1, 1], [1, 2, 3]), _meta().kendall_tau([1, 1, 1], [1, 2, 3])),
         (OK, lambda r: np.isnan(r[0]) and np.isnan(r[1]))),
    Case("meta", "compare with 30 systems: distinct letters", lambda: _many_systems().letters,
         (OK, lambda r: len(set(r.values())) == 30 and not any(v.startswith("s") and v[1:].isdigit() for v in r.values()))),
    Case("meta", "compare LaTeX escapes % and &",
         lambda: _compare()({"P@10 (%)": _scores(names=("A&B", "C_1", "D"))}, test="t").to_latex(),
         (OK, lambda r: "A\\&B" in r and "P@10 (\\%)" in r and "A&B" not in r.replace("A\\&B", ""))),
    Case("meta", "compare warns when B is too small for Holm over the pairs",
         lambda: _warns(lambda: _compare()({"m": _scores(n_sys=30, names=[f"s{i}" for i in range(30)])},
                                           n_permutations=5000)),
         (OK, lambda r: any("no pair can be significant" in m for m in r))),
    Case("meta", "compare from runs states the users policy and missing users", lambda: _compare_from_runs().to_text(),
         (OK, lambda r: "users: relevant" in r and "sub 2" in r)),
    Case("protocols", "evaluate('Pop', ...) (a name, not a fitted system)", _protocols_evaluate_str,
         (E, ("fitted system", "create('Pop').fit(train)"))),
    Case("protocols", "evaluate(users=subset) keeps every subset user's sample", _subset_keeps_values, (OK, lambda r: r is True)),
    Case("protocols", "build_targets seed=-1", lambda: __import__("recmetrics").protocols.build_targets(*_toy_split(), "TI-1R-NN(n=5)", seed=-1),
         (E, ("seed", "-1"))),
    # -- item 5 (readers): a header one name short
    Case("io", "qrels table, header one name short", lambda: _read_table("user,item,rating\n1,10,4,2\n2,11,5,1\n"),
         (E, ("t.csv:2", "4 fields", "header names 3"))),
    Case("io", "run table, header one name short", lambda: _read_table("user,item,score\n1,10,4,2\n2,11,5,1\n", "run"),
         (E, ("t.csv:2", "4 fields"))),
    Case("io", "qrels table, third line longer", lambda: _read_table("user,item,rating\n1,10,4\n2,11,5,1\n"),
         (E, ("t.csv:3", "4 fields"))),
    Case("io", "plain file named .csv.gz",
         lambda: __import__("recmetrics").io.read_qrels(_tmp("q.csv.gz", "user,item,rating\n1,2,4\n")),
         (E, ("q.csv.gz", "gzip"))),
    # -- command line
    Case("cli", "evaluate -m P@1 QRELS RUN1 RUN2 (files after -m)", lambda: _files_after_m("evaluate"),
         (OK, lambda r: r.rc == 0 and "run sys" in r.out and "run sub" in r.out)),
    Case("cli", "compare -m P@1 RR QRELS RUN1 RUN2 (files after -m)", lambda: _files_after_m("compare"),
         (OK, lambda r: r.rc == 0 and "RR" in r.out and "sub" in r.out)),
    Case("cli", "compare -l 5 (trec_eval's threshold flag)",
         _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt", "{d}/run2.txt", "-m", "P@1", "-l", "5", "--permutations", "99"),
         (OK, lambda r: r.rc == 0 and "rating >= 5" in r.out)),
    Case("cli", "compare states the users missing from each run",
         _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt", "{d}/run2.txt", "-m", "P@1", "--permutations", "99"),
         (OK, lambda r: r.rc == 0 and "sys 1, sub 2" in r.out)),
    Case("cli", "compare warnings: one line each",
         _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt", "{d}/run2.txt", "-m", "P@1", "--permutations", "99"),
         (OK, lambda r: r.rc == 0 and r.err.strip() and all(l.startswith("recmetrics: warning: ")
                                                             for l in r.err.strip().splitlines()))),
    Case("cli", "evaluate with standard output closed",
         _cli_d("evaluate", "{d}/qrels.txt", "{d}/run1.txt", close_stdout=True), (E, ("standard output is closed",))),
    Case("cli", "compare with standard output closed",
         _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt", "{d}/run2.txt", "--permutations", "99", close_stdout=True),
         (E, ("standard output is closed",))),
    Case("cli", "compare --test bootstrap --seed -1",
         _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt", "{d}/run2.txt", "--test", "bootstrap", "--seed", "-1"),
         (E, ("seed", "-1"))),
    Case("cli", "compare --permutations 0", _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt", "{d}/run2.txt",
                                                   "--permutations", "0"), (E, ("n_permutations", "0"))),
    Case("cli", "compare with one run", _cli_d("compare", "{d}/qrels.txt", "{d}/run1.txt"), (E, ("2 run",))),
    Case("cli", "evaluate, run table with a non-numeric score",
         lambda: CliResult(*_cli("evaluate", str(_trec_files() / "qrels.txt"),
                                 _tmp("r.csv", "user,item,score\n1,10,0.5\n1,11,high\n"))),
         (E, ("'high'", "r.csv:3"))),
    Case("cli", "evaluate, plain file named .gz",
         lambda: CliResult(*_cli("evaluate", str(_trec_files() / "qrels.txt"), _tmp("r.gz", "1 Q0 10 1 1 s\n"))),
         (E, ("r.gz", "gzip"))),
    Case("cli", "evaluate, run table with a header one name short",
         lambda: CliResult(*_cli("evaluate", str(_trec_files() / "qrels.txt"), _tmp("r.csv", "user,item,score\n1,10,4,2\n"))),
         (E, ("r.csv:2", "4 fields"))),
    # -- study, caches, dataset loaders (part B)
    Case("study", "Study.from_runs(Runs, tail folds) scores the folds given",
         _from_runs_tail_folds, (OK, lambda r: not np.allclose(r[0].to_numpy(), r[1].to_numpy()))),
    Case("study", "Study.from_runs({name: Run}, folds)", _from_runs_dict, (OK, lambda r: r.shape[0] == 2)),
    Case("cache", "a cached run with a flipped byte", _damaged_run_cache, (OK, lambda r: r is True)),
    Case("meta", "robustness_study(plain scores)", _robustness_of_scores, (E, ("robustness_study",))),
    Case("datasets", "ratings-file with a header one name short", _ratings_file_header_short,
         (E, ("short.csv:2", "4 fields"))),
]


def outcome(case: Case) -> tuple[str, str]:
    """(``correct`` | ``clear error`` | ``silent wrong`` | ``traceback``, detail)."""
    from recmetrics.errors import RecmetricsError

    kind, spec = case.expect
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = case.run()
    except RecmetricsError as exc:
        msg = str(exc)
        if kind == E and all(f in msg for f in spec):
            return "clear error", msg
        return ("refused valid input" if kind == OK else "unclear error"), msg
    except Exception as exc:  # noqa: BLE001 - the point is to classify every other exception
        return "traceback", f"{type(exc).__name__}: {exc}"
    if isinstance(result, CliResult):
        if "Traceback" in result.err:
            return "traceback", result.err.strip().splitlines()[-1]
        if kind == E:
            lines = result.err.strip().splitlines()
            one = len(lines) == 1 and lines[0].startswith("recmetrics: error: ")
            if result.rc == 2 and one and all(f in lines[0] for f in spec):
                return "clear error", lines[0]
            if result.rc == 2 and one:
                return "unclear error", lines[0]
            return "silent wrong", f"exit {result.rc}: {result.err.strip()[:200]}"
        if spec(result):
            return "correct", result.out[:80]
        return ("refused valid input" if result.rc else "silent wrong"), f"exit {result.rc}: {result.err[:200]}"
    if kind == E:
        return "silent wrong", repr(result)[:200]
    return ("correct", repr(result)[:80]) if spec(result) else ("silent wrong", repr(result)[:200])


def main() -> int:
    import recmetrics

    print(f"# recmetrics from {Path(recmetrics.__file__).parent}")
    tally: dict[str, int] = {}
    for case in CASES:
        res, detail = outcome(case)
        tally[res] = tally.get(res, 0) + 1
        print(f"{res:<13} {case.surface:<9} {case.what}\n              {' '.join(detail.split())[:150]}")
    print(f"\n{len(CASES)} bad inputs: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    return 0


if __name__ == "__main__":
    if not os.environ.get("PYTHONPATH"):  # this checkout's recmetrics, not an installed one
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
