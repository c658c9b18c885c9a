"""Issue 17 part A, "No silent wrong p-value": each test below fails on the code before the fix.

Inputs that used to give a wrong p-value without a word (repeated user labels, ±inf scores,
repeated system names), raw tracebacks (non-numeric cells, bad seeds and counts, a system name
instead of a fitted system, a closed stdout), the command line's ``-m`` swallowing the files, CSV
rows longer than their header, and the quiet surprises of ``compare`` / ``protocols.evaluate`` /
``tau_ap``. ``tests/bad_inputs.py`` tallies every case; the last test requires all of them to be
correct or a clear error.
"""
import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import FormatError, InputError
from recmetrics.meta import compare as cmp

import bad_inputs
from bad_inputs import _cli, _dup_systems, _fold_dropped, _scores, _toy_split, _trec_files, _with


# ------------------------------------------------------------------ 1. repeated user labels
def test_repeated_user_labels_are_an_error_not_counted_twice():
    s = _fold_dropped()                      # 60 columns, 30 labels each twice
    for call in (lambda: rm.meta.discriminative_power(s, n_permutations=999),
                 lambda: rm.meta.pairwise(s, n_permutations=999),
                 lambda: cmp.compare({"P@10": s}, n_permutations=999),
                 lambda: rm.meta.agreement.metric_agreement({"P@10": s, "RR": s})):
        with pytest.raises(InputError, match=r"30 user label\(s\) appear more than once: 'u0' at positions \[0, 30\]"):
            call()


def test_unique_units_give_the_same_p_in_discriminative_power_and_compare():
    s = _scores(n_users=60)
    s.columns = pd.MultiIndex.from_arrays([np.repeat([0, 1], 30), [f"u{i % 30}" for i in range(60)]])
    dp = rm.meta.discriminative_power(s, n_permutations=2000, seed=3).pvalues.p.to_numpy()
    c = cmp.compare({"m": s}, n_permutations=2000, seed=3, correction=None).pairs.p.to_numpy()
    np.testing.assert_array_equal(dp, c)


# ------------------------------------------------------------------ 2. non-finite scores
@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("entry", ["dp", "permutation", "bootstrap", "tukey", "t", "wilcoxon", "tukey_hsd", "compare"])
def test_non_finite_scores_name_system_and_user(entry, value):
    s = _with(value)
    call = {"dp": lambda: rm.meta.discriminative_power(s, n_permutations=999),
            "tukey_hsd": lambda: rm.meta.tukey_hsd(s, n_permutations=99),
            "compare": lambda: cmp.compare({"m": s}, n_permutations=99)}.get(
        entry, lambda: rm.meta.pairwise(s, test=entry, n_permutations=99))
    kind = "NaN" if np.isnan(value) else ("+inf" if value > 0 else "-inf")
    with pytest.raises(InputError, match=rf"{'[+]' if kind == '+inf' else ''}{kind.lstrip('+')} for system 'A', user 'u3'"):
        call()


@pytest.mark.parametrize("fn", ["permutation_test", "paired_bootstrap", "paired_t", "wilcoxon", "effect_size"])
def test_non_finite_paired_arrays(fn):
    a = _with(np.inf).loc["A"].to_numpy()
    b = _scores().loc["B"].to_numpy()
    with pytest.raises(InputError, match=r"scores a \(first system\): \+inf for user 3"):
        getattr(rm.meta, fn)(a, b)
    with pytest.raises(InputError, match=r"scores b \(second system\): \+inf for user 3"):
        getattr(rm.meta, fn)(b, a)


def test_infinite_scores_used_to_make_pairs_significant():
    """The pre-fix symptom: the pair holding an inf got p = 1/(B+1) (t-test: 1). Now an error; the
    finite pairs are unchanged."""
    s = _with(np.inf)
    with pytest.raises(InputError):
        rm.meta.permutation_test(s.loc["A"].to_numpy(), s.loc["B"].to_numpy(), n_permutations=999)
    fine = rm.meta.pairwise(_scores(), n_permutations=999)
    assert fine.p.min() > 1 / 1000


# ------------------------------------------------------------------ 4. repeated system names
@pytest.mark.parametrize("test", ["tukey", "permutation", "t", "wilcoxon", "bootstrap"])
def test_repeated_system_names_are_an_error(test):
    with pytest.raises(InputError, match=r"1 system label\(s\) appear more than once: 'A' at positions \[0, 1\]"):
        rm.meta.pairwise(_dup_systems(), test=test, n_permutations=99)
    with pytest.raises(InputError, match="'A' at positions"):
        cmp.compare({"m": _dup_systems()}, test=test, n_permutations=99)


def test_tukey_p_values_sit_on_their_pairs():
    s = _scores(n_sys=4, names=("A", "B", "C", "D"))
    s.loc["B"] += 0.3
    hsd = rm.meta.tukey_hsd(s, n_permutations=999, seed=1)
    pw = rm.meta.pairwise(s, test="tukey", n_permutations=999, seed=1)
    assert list(zip(pw.a, pw.b)) == list(zip(hsd.a, hsd.b))
    np.testing.assert_array_equal(pw.p, hsd.p)
    base = rm.meta.pairwise(s, test="tukey", n_permutations=999, seed=1, baseline="C")
    lookup = {frozenset((a, b)): p for a, b, p in zip(hsd.a, hsd.b, hsd.p)}
    assert all(p == lookup[frozenset((a, b))] for a, b, p in zip(base.a, base.b, base.p))


# ------------------------------------------------------------------ non-numeric cells, seeds, counts
def test_non_numeric_cells_are_located():
    with pytest.raises(InputError, match=r"value 'x' for system 'A', user 'u3' \(row 0, column 3\) is not a number"):
        rm.meta.discriminative_power(_with("x"), n_permutations=99)
    with pytest.raises(InputError, match=r"value 'x' at position 1 is not a number"):
        rm.meta.permutation_test([0.1, "x", 0.3], [0.2, 0.1, 0.0])
    with pytest.raises(InputError, match=r"value 'x' at position \(1, 1\)"):
        rm.meta.discriminative_power([[0.1, 0.2], [0.3, "x"]])


@pytest.mark.parametrize("kw,match", [({"seed": -1}, "seed must be a non-negative integer, got -1"),
                                      ({"seed": None}, "seed must be a non-negative integer, got None"),
                                      ({"seed": 1.5}, "seed must be"),
                                      ({"n_jobs": 0}, "n_jobs must be an integer >= 1"),
                                      ({"n_jobs": -2}, r"or -1 for every core, got -2"),
                                      ({"chunk_size": 0}, "chunk_size must be an integer >= 1, got 0"),
                                      ({"n_permutations": 0}, "n_permutations must be an integer >= 1")])
def test_integer_parameters(kw, match):
    for users in (8, 40):  # exact enumeration and Monte Carlo
        with pytest.raises(InputError, match=match):
            rm.meta.discriminative_power(_scores(n_users=users), **{"n_permutations": 999, **kw})
    if "seed" in kw:
        for call in (lambda: rm.meta.paired_bootstrap([0.1, 0.5, 0.3], [0.2, 0.1, 0.0], **kw),
                     lambda: rm.meta.tukey_hsd(_scores(), n_permutations=9, **kw),
                     lambda: rm.meta.effect_size([0.1, 0.5, 0.3], [0.2, 0.1, 0.0], **kw),
                     lambda: rm.protocols.build_targets(*_toy_split(), "TI-1R-NN(n=5)", **kw)):
            with pytest.raises(InputError, match=match):
                call()


def test_numpy_integer_parameters_are_accepted_and_change_nothing():
    s = _scores()
    a = rm.meta.discriminative_power(s, n_permutations=999, seed=np.int64(4), chunk_size=np.int32(256))
    b = rm.meta.discriminative_power(s, n_permutations=999, seed=4, n_jobs=2)
    np.testing.assert_array_equal(a.pvalues.p, b.pvalues.p)


# ------------------------------------------------------------------ 5. CSV header one name short
@pytest.mark.parametrize("kind,header", [("qrels", "user,item,rating"), ("run", "user,item,score")])
def test_row_longer_than_header_is_an_error_with_its_line(tmp_path, kind, header):
    read = rm.io.read_qrels if kind == "qrels" else rm.io.read_run
    p = tmp_path / "t.csv"
    p.write_text(f"{header}\n1,10,4,2\n2,11,5,1\n")
    with pytest.raises(FormatError, match=rf"t.csv:2: 4 fields but the header names 3 \({header}\)"):
        read(str(p))
    p.write_text(f"{header}\n1,10,4\n2,11,5,1\n")
    with pytest.raises(FormatError, match="t.csv:3: 4 fields"):
        read(str(p))
    t = tmp_path / "t.tsv"
    t.write_text(header.replace(",", "\t") + "\n1\t10\t4\t2\n")
    with pytest.raises(FormatError, match="t.tsv:2: 4 fields"):
        read(str(t))


def test_well_formed_tables_still_read(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text("user,item,rating\n1,10,4\n1,11,2\n2,10,5\n")
    q = rm.io.read_qrels(str(p))
    f = q.to_frame()
    assert sorted(f.user.unique().tolist()) == ["1", "2"] and f.rating.tolist().count(5.0) == 1


# ------------------------------------------------------------------ protocols
def test_protocols_evaluate_says_to_pass_a_fitted_system():
    train, test = _toy_split()
    with pytest.raises(InputError, match=r"fitted system .* got str 'Pop'.*create\('Pop'\)\.fit\(train\)"):
        rm.protocols.evaluate("Pop", train, test, "TI-1R-NN(n=10)")
    with pytest.raises(InputError, match="eq42_bounds needs a fitted system"):
        rm.protocols.eq42_bounds(object(), train, test)


@pytest.mark.parametrize("design", ["TI-1R-NN(n=10)", "TI-AR-NN(n=10)", "P1R(m=2,n=5)"])
def test_protocols_a_users_sample_does_not_depend_on_the_other_users(design):
    train, test = _toy_split()
    system = rm.recommenders.create("Random", seed=1).fit(train)
    full = rm.protocols.build_targets(train, test, design, seed=0)
    who = np.sort(test.user.unique())[::3]
    part = rm.protocols.build_targets(train, test, design, seed=0, users=who)

    def sets(ts):
        return [(u, tuple(ts.items[a:b])) for u, a, b in zip(ts.users, ts.starts[:-1], ts.starts[1:])]

    f = [x for x in sets(full) if x[0] in set(who)]
    p = sets(part)
    assert f == p and len(p) > 0
    a = rm.protocols.evaluate(system, train, test, design, ["RR"], seed=0).per_set
    b = rm.protocols.evaluate(system, train, test, design, ["RR"], seed=0, users=who).per_set
    np.testing.assert_array_equal(a[a.user.isin(who)]["RR"].to_numpy(), b["RR"].to_numpy())


# ------------------------------------------------------------------ tau_ap convention
def test_tau_ap_of_a_full_tie_is_nan_like_kendall_tau():
    assert np.isnan(rm.meta.tau_ap([1, 1, 1], [1, 2, 3])) and np.isnan(rm.meta.kendall_tau([1, 1, 1], [1, 2, 3]))
    assert np.isnan(rm.meta.tau_ap([1, 2, 3], [2, 2, 2]))
    assert rm.meta.tau_ap([1, 1, 2], [1, 2, 3]) == pytest.approx(1.0)  # a partial tie keeps the favourable rule


# ------------------------------------------------------------------ compare: quiet surprises
def test_compare_letters_latex_and_too_few_permutations():
    s = pd.DataFrame(np.arange(30)[:, None] * 0.01 + np.random.default_rng(0).random((30, 40)) * 0.001,
                     index=[f"run{i}" for i in range(30)])
    res = cmp.compare({"m": s}, test="t", correction=None)
    assert [res.letters[f"run{i}"] for i in (0, 25, 26, 27, 29)] == ["a", "z", "aa", "ab", "ad"]
    assert " ^a,b,c," in res.to_text()  # multi-letter labels are separated
    tex = cmp.compare({"P@10 (%)": _scores(names=("A&B", "C_1", "x#y"))}, test="t").to_latex()
    assert "A\\&B" in tex and "P@10 (\\%)" in tex and "x\\#y" in tex
    with pytest.warns(UserWarning, match=r"no pair can be significant at alpha=0.05: with 5,000 permutations .* "
                                         r"holm over 435 pairs .*use at least 8,700"):
        cmp.compare({"m": _scores(n_sys=30, names=[f"s{i}" for i in range(30)])}, n_permutations=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cmp.compare({"m": _scores(n_sys=30, names=[f"s{i}" for i in range(30)])}, n_permutations=9000)
        cmp.compare({"m": _scores(n_sys=30, names=[f"s{i}" for i in range(30)])}, n_permutations=5000, correction="bh")


def test_compare_from_runs_states_the_user_policy_and_missing_users():
    d = _trec_files()
    runs = [rm.io.read_run(str(d / "run1.txt")), rm.io.read_run(str(d / "run2.txt"))]
    res = cmp.compare(runs=runs, qrels=rm.io.read_qrels(str(d / "qrels.txt")), metrics=["P@1"], test="t")
    text = res.to_text()
    assert text.startswith("# relevant = rating >= 1; users: relevant (judged users with >= 1 relevant item); 3 evaluated")
    assert "users missing from each run (they score 0): sys 1, sub 2" in text
    assert json.loads(res.to_json())["users"]["users_missing_from_run"] == {"sys": 1, "sub": 2}
    assert res.to_latex().startswith("% relevant = rating >= 1")
    with pytest.raises(InputError, match="users must be one of"):
        cmp.compare(runs=runs, qrels=rm.io.read_qrels(str(d / "qrels.txt")), metrics=["P@1"], users="run")


# ------------------------------------------------------------------ command line
def test_cli_files_after_m():
    d = _trec_files()
    rc, out, err = _cli("evaluate", "-m", "map", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt"))
    assert rc == 0 and "# run sys" in out and "# run sub" in out, err
    rc, out, err = _cli("compare", "-m", "P@1", "RR", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt"),
                        "--permutations", "99")
    assert rc == 0 and "RR" in out and "sub" in out, err
    rc, out, err = _cli("compare", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt"), "-m", "P@1",
                        "-l", "5", "--test", "t")
    assert rc == 0 and "rating >= 5" in out and "sys 0, sub 1" in out, err
    rc, out, err = _cli("evaluate", "-m", "map", "nope.txt", str(d / "run1.txt"), str(d / "run2.txt"))
    assert rc == 2 and "no file 'nope.txt' exists" in err and len(err.strip().splitlines()) == 1


def test_cli_closed_stdout_and_one_line_warnings():
    d = _trec_files()
    for argv in (["evaluate", str(d / "qrels.txt"), str(d / "run1.txt")],
                 ["compare", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt"), "--permutations", "99"]):
        rc, _, err = _cli(*argv, close_stdout=True)
        assert rc == 2 and err.strip() == "recmetrics: error: standard output is closed; redirect it to a file " \
                                          "(or /dev/null) instead", err
    rc, out, err = _cli("compare", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt"), "-m", "P@1",
                        "--permutations", "99")
    lines = err.strip().splitlines()
    assert rc == 0 and lines and all(l.startswith("recmetrics: warning: ") for l in lines), err
    assert "Warning" not in err and "warnings.warn" not in err
    rc, _, err = _cli("compare", str(d / "qrels.txt"), str(d / "run1.txt"), str(d / "run2.txt"), "--test", "bootstrap",
                      "--seed", "-1")
    assert rc == 2 and err.startswith("recmetrics: error: seed must be a non-negative integer"), err


# ------------------------------------------------------------------ the whole tally
@pytest.mark.parametrize("case", bad_inputs.CASES, ids=lambda c: f"{c.surface}: {c.what}")
def test_every_bad_input_is_correct_or_a_clear_error(case):
    result, detail = bad_inputs.outcome(case)
    assert result in ("correct", "clear error"), detail


def test_labelled_inputs_pair_by_label_not_position():
    from recmetrics.meta import agreement, significance

    x = pd.Series({"A": 0.3, "B": 0.2, "C": 0.1, "D": 0.05})
    assert agreement.kendall_tau(x, x.sort_values()) == 1.0   # was -1.0: paired by position
    a = pd.Series([0.5, 0.4, 0.6, 0.7, 0.2, 0.9], index=list("uvwxyz"))
    b = pd.Series([0.1, 0.2, 0.3, 0.1, 0.2, 0.3], index=list("uvwxyz"))
    assert significance.permutation_test(a, b).pvalue == significance.permutation_test(a, b.iloc[::-1]).pvalue
    with pytest.raises(InputError, match="only in the first: 'D'; only in the second: 'E'"):
        agreement.kendall_tau(x, x.rename({"D": "E"}))
