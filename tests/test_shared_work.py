"""Work shared between computations gives the values each computation gives alone, bit for bit.

The paper profile's chapters 03, 07 and 09 share work: the reduced test sets of a robustness study
are scored once for several means over users (:func:`recmetrics.meta.robustness.robustness_studies`),
the diversity metrics of one run share its (cell, aspect) pairs and the users' judgments
(:func:`recmetrics.metrics.diversity.lists.judged_pairs`, ``judgments_of``), and the levels of the
redundancy family are built in one pass. Each shortcut is compared with the computation alone.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from recmetrics.data.qrels import Qrels
from recmetrics.data.simulate import simulate
from recmetrics.errors import InputError
from recmetrics.judged import judge
from recmetrics.meta import perturbations as pt
from recmetrics.meta.robustness import robustness_studies, robustness_study
from recmetrics.metrics import diversity as dv
from recmetrics.metrics.registry import parse
from recmetrics.study import Study


@pytest.fixture(scope="module")
def study():
    return Study(simulate(40, 60, 800, seed=3), ["Pop", "Random", "ItemKNN", "UserKNN"], ["P", "nDCG", "RR"],
                 [5, 10], k=2, cache=False, progress=False)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("scenarios", [["ratings", "popular-items"], ["random-users", "large-users", "random-items"]])
def test_several_means_in_one_pass_equal_each_alone(study, scenarios):
    sizes = [1.0, 0.7, 0.3]
    both = robustness_studies(study, ["arithmetic", "geometric"], scenarios, sizes, 4, 11, progress=False)
    assert list(both) == ["arithmetic", "geometric"]
    for agg, res in both.items():
        alone = robustness_study(study, scenarios, sizes, 4, 11, aggregate=agg, progress=False)
        _same(res.samples, alone.samples)
        _same(res.full, alone.full)
        assert res.grids == alone.grids and res.tie_break == alone.tie_break
    # the two means do differ (the test compares something)
    assert not both["arithmetic"].samples["mean_value"].equals(both["geometric"].samples["mean_value"])


def test_several_means_refuse_an_empty_or_bad_list(study):
    with pytest.raises(InputError, match="at least one aggregate"):
        robustness_studies(study, [], ["ratings"], [1.0, 0.5], 2, 0, progress=False)
    with pytest.raises(InputError, match="names of means"):
        robustness_studies(study, [None], ["ratings"], [1.0, 0.5], 2, 0, progress=False)


def test_robustness_by_mean_equals_robustness_per_mean(study):
    from recmetrics.papers import experiments

    sizes = {"ratings": [1.0, 0.5], "popular-items": [1.0, 0.9, 0.8]}
    both = experiments.robustness_by_mean(study, sizes, 3, 5, ["geometric", "arithmetic"], cutoffs=10,
                                          progress=False)
    for agg, res in both.items():
        alone = experiments.robustness(study, sizes, 3, 5, cutoffs=10, aggregate=agg, progress=False)
        _same(res.samples, alone.samples)
        _same(res.full, alone.full)


# ------------------------------------------------------------------------------------- diversity
@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    aspects = {f"i{j}": tuple(a for a in "ABCD" if rng.random() < 0.4) for j in range(40)}
    test = pd.DataFrame([(u, f"i{j}", float(rng.integers(1, 6))) for u in range(12)
                         for j in rng.choice(40, 15, replace=False)], columns=["user", "item", "rating"])
    return test, aspects


METRICS = ["ab-nDCG@10(profile=test)", "a-nDCG@10", "S-Recall@10", "S-Recall@10(relevant_only=false)", "S-RR",
           "NRBP", "EU(profile=test)", "RBU@10(profile=test)", "ERR-IA@10(profile=test)", "nDCG-IA@10(profile=test)"]


def test_metrics_sharing_a_runs_pairs_equal_each_metric_alone(toy):
    test, aspects = toy
    qrels = Qrels(test)
    ideal = pt.ideal_ordering(qrels, aspects)
    runs = pt.perturbed_runs(ideal, "swap", 3) + pt.perturbed_runs(ideal, "aspect", 2)
    shared = pt.score_runs(runs, qrels, METRICS, aspects=aspects)
    train = pd.DataFrame({"user": pd.Series(dtype=object), "item": pd.Series(dtype=object),
                          "rating": pd.Series(dtype=np.float64)})
    for r, run in enumerate(runs):
        for m, name in enumerate(METRICS):
            q = Qrels(test)            # a fresh Qrels and judging: nothing cached is shared
            j = dv.attach_judgments(judge(run, q, depth=max(run.depth, 10), users="relevant"), q)
            alone = parse(name)(j, aspects=pd.Series(aspects, dtype=object), train=train)
            np.testing.assert_array_equal(shared[m, r], alone, err_msg=f"{name}, run {run.name}")


def test_judged_pairs_are_cached_per_mask(toy):
    test, aspects = toy
    qrels = Qrels(test)
    run = pt.ideal_ordering(qrels, aspects).to_run(10)
    j = judge(run, qrels, depth=10)
    idx = dv.aspect_index(aspects)
    valid = np.arange(10)[None, :] < np.minimum(j.lengths, 10)[:, None]
    first = dv.lists.judged_pairs(j, 10, valid, idx)
    assert dv.lists.judged_pairs(j, 10, valid.copy(), idx) is first        # same mask: reused
    other = valid & (np.arange(10)[None, :] < 5)
    second = dv.lists.judged_pairs(j, 10, other, idx)
    assert second is not first
    fresh = dv.list_pairs(j.items[:, :10], other, idx)
    for field in ("flat", "aspect", "order", "group"):
        np.testing.assert_array_equal(getattr(second, field), getattr(fresh, field))


def test_judgments_shared_across_runs_follow_the_qrels(toy):
    """Two runs judged against one Qrels share its judgments; another Qrels (a reduced test set) never does."""
    test, aspects = toy
    full = Qrels(test)
    reduced = Qrels(test.iloc[::2].reset_index(drop=True))
    idx = dv.aspect_index(aspects)
    run = pt.ideal_ordering(full, aspects).to_run(10)
    a = dv.judgments_of(judge(run, full, depth=10), idx)
    b = dv.judgments_of(judge(run, full, depth=10), idx)
    assert a is b
    j_red = judge(run, reduced, depth=10, users=judge(run, full, depth=10).users)
    c = dv.judgments_of(j_red, idx)
    fresh = dv.judgments_from_qrels(reduced, j_red.users, idx)
    assert c is not a and len(c.items) < len(a.items)
    for field in ("row", "items", "ratings", "member"):
        np.testing.assert_array_equal(getattr(c, field), getattr(fresh, field))


@pytest.mark.parametrize("size", [None, 6])
def test_redundancy_levels_in_one_pass_equal_each_level_alone(toy, size):
    test, aspects = toy
    ideal = pt.ideal_ordering(Qrels(test), aspects)
    runs = pt.perturbed_runs(ideal, "redundancy", 12, size)
    assert [r.name for r in runs] == [f"redundancy-{lvl}" for lvl in range(13)]
    changed = 0
    for lvl, run in enumerate(runs):
        alone = ideal.to_run(size, items=pt.perturb(ideal, "redundancy", lvl, size))
        np.testing.assert_array_equal(run.items, alone.items)
        np.testing.assert_array_equal(run.lengths, alone.lengths)
        changed += not np.array_equal(run.items, runs[0].items)
    assert changed > 0      # the family does perturb these lists
    with pytest.raises(InputError):
        pt.perturbed_runs(ideal, "redundancy", 3, 0)


# --------------------------------------------------------------- chapter 9 reads chapter 7
def test_explorer_with_known_robustness_equals_the_explorer_alone(study):
    from recmetrics import explorers

    kw = dict(n_permutations=200, sizes={"ratings": [1.0, 0.6], "popular-items": [1.0, 0.9]}, n_samples=3, seed=2)
    alone = explorers.explorer_table(study, **kw)
    # what chapters 6 (arithmetic) and 7 (geometric) compute at cut-off 10, one scenario at a time
    from recmetrics.papers import experiments

    known = {agg: experiments.robustness(study, kw["sizes"], 3, 2, cutoffs=10, aggregate=agg, progress=False).samples
             for agg in ("arithmetic", "geometric")}
    reused = explorers.explorer_table(study, **kw, known_robustness=known)
    _same(reused, alone)
    # every cell known: nothing left to compute, same table
    every = {agg: experiments.robustness(study, kw["sizes"], 3, 2, aggregate=agg, progress=False).samples
             for agg in known}
    _same(explorers.explorer_table(study, **kw, known_robustness=every), alone)
    with pytest.raises(InputError, match="samples per size"):
        explorers.explorer_table(study, **{**kw, "n_samples": 2}, known_robustness=known)


def test_a_known_table_for_one_mean_only_is_not_used(study):
    from recmetrics import explorers
    from recmetrics.papers import experiments

    kw = dict(n_permutations=100, sizes={"ratings": [1.0, 0.5]}, n_samples=2, seed=1)
    known = {"arithmetic": experiments.robustness(study, kw["sizes"], 2, 1, cutoffs=5, progress=False).samples}
    _same(explorers.explorer_table(study, **kw, known_robustness=known), explorers.explorer_table(study, **kw))


def test_shared_tables_are_read_only_under_the_plans_keys_and_the_same_settings(tmp_path, monkeypatch, study):
    import json

    from recmetrics.report import shared

    settings = shared.robustness_settings(study, seed=0, sizes={"ratings": [1.0, 0.5]}, n_samples=2,
                                          aggregate="arithmetic")
    table = pd.DataFrame({"scenario": ["ratings"], "size": [0.5], "sample": [0], "metric": ["P@5"],
                          "tau": [0.1 + 0.2], "mean_value": [np.nan]})
    for var in ("RECMETRICS_CHAPTER", "RECMETRICS_CHAPTER_KEY", "RECMETRICS_DEPENDS", "RECMETRICS_RESULTS_DIR",
                "RECMETRICS_FINDINGS_DIR"):
        monkeypatch.delenv(var, raising=False)
    assert shared.share("robustness", table, settings) is None          # outside a build: nothing written
    assert shared.shared("06_comparing_metrics", "robustness", settings) is None
    scratch = tmp_path / ".running" / "findings"
    monkeypatch.setenv("RECMETRICS_FINDINGS_DIR", str(scratch))
    monkeypatch.setenv("RECMETRICS_CHAPTER", "06_comparing_metrics")
    monkeypatch.setenv("RECMETRICS_CHAPTER_KEY", "k6")
    path = shared.share("robustness", table, settings)
    assert path == tmp_path / ".running" / "results" / "06_comparing_metrics--robustness.parquet"
    monkeypatch.setenv("RECMETRICS_RESULTS_DIR", str(path.parent))
    monkeypatch.setenv("RECMETRICS_DEPENDS", json.dumps({"06_comparing_metrics": "k6"}))
    _same(shared.shared("06_comparing_metrics", "robustness", settings), table)   # exact floats back
    assert shared.shared("06_comparing_metrics", "robustness", {**settings, "n_samples": 3}) is None
    assert shared.shared("07_arithmetic_vs_geometric", "robustness", settings) is None   # not a dependency
    monkeypatch.setenv("RECMETRICS_DEPENDS", json.dumps({"06_comparing_metrics": "another key"}))
    assert shared.shared("06_comparing_metrics", "robustness", settings) is None         # executed since
    with pytest.raises(InputError, match="letters, digits"):
        shared.shared("../06", "robustness", settings)


def _build_env(monkeypatch, tmp_path, chapter=None, key=None, depends=None):
    """The variables a report build gives a chapter's kernel (recmetrics.report.execute.execute_plan)."""
    import json

    scratch = tmp_path / ".running" / "findings"
    monkeypatch.setenv("RECMETRICS_FINDINGS_DIR", str(scratch))
    monkeypatch.setenv("RECMETRICS_RESULTS_DIR", str(scratch.parent / "results"))
    for var, value in (("RECMETRICS_CHAPTER", chapter), ("RECMETRICS_CHAPTER_KEY", key),
                       ("RECMETRICS_DEPENDS", None if depends is None else json.dumps(depends))):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)


def test_chapter_9_reads_the_robustness_chapter_7_shares_in_a_build(tmp_path, monkeypatch):
    """Chapter 7 shares its robustness studies the way its notebook computes them (the arithmetic mean
    and both readings of the geometric mean's zeros, rec_eval's for its claims, from one pass; the
    arithmetic study is chapter 6's, bit for bit); chapter 9's explorer, whose geometric mean is
    trec_eval's, finds both means and its table is the one it computes alone, bit for bit. (Before:
    chapter 7 shared only rec_eval's reading, under the name chapter 9 reads trec_eval's from, so
    chapter 9 recomputed the geometric study.)"""
    from recmetrics import explorers
    from recmetrics.meta import replicates as split_replicates
    from recmetrics.metrics.aggregate import aggregate_name
    from recmetrics.papers import experiments
    from recmetrics.report import shared

    sizes = {"ratings": [1.0, 0.5], "popular-items": [1.0, 0.9]}
    kw = dict(seed=0, sizes=sizes, n_samples=3)
    # the producers' studies run at one cut-off (their chapters' 100), the reader's at every cut-off
    # (two hit-only metrics, F1 and RR, as in the chapters: the same float sums whether scored with the others)
    data, systems, metrics = simulate(40, 60, 800, seed=3), ["Pop", "Random", "ItemKNN", "UserKNN"], ["P", "F1", "RR"]
    producer = Study(data, systems, metrics, [10], k=2, cache=False, progress=False)
    reader = Study(data, systems, metrics, [5, 10], k=2, cache=False, progress=False)
    labels = split_replicates.unit_labels(producer, 2, 0)
    # chapter 6's study (notebook cell "robust = experiments.robustness(...)")
    robust = experiments.robustness(producer, sizes, 3, 0, cutoffs=10, replicates=labels, progress=False)
    # chapter 7: rec_eval's reading for every metric, trec_eval's re-run for the hit-only metrics (RR)
    _build_env(monkeypatch, tmp_path, "07_arithmetic_vs_geometric", "k7")
    geo = {r: aggregate_name("geometric", r) for r in ("rec_eval", "trec_eval")}
    both = experiments.robustness_by_mean(producer, sizes, 3, 0, [geo["rec_eval"], geo["trec_eval"], "arithmetic"],
                                          cutoffs=10, replicates=labels, progress=False)
    hit_only = [f"{m}@10" for m in experiments.hit_only_metrics(producer.metrics)]
    other = experiments.replace_metrics(both[geo["rec_eval"]], both[geo["trec_eval"]].select(hit_only))
    # the same as the hit-only metrics' study run alone (what chapter 7 ran before: a second pass)
    alone = experiments.replace_metrics(both[geo["rec_eval"]], experiments.robustness(
        producer, sizes, 3, 0, cutoffs=10, metrics=experiments.hit_only_metrics(producer.metrics),
        aggregate=geo["trec_eval"], progress=False))
    _same(other.samples, alone.samples)
    _same(other.full, alone.full)
    _same(both["arithmetic"].samples, robust.samples)                 # chapter 6's study, from the same pass
    for mean, rob in ((geo["rec_eval"], both[geo["rec_eval"]]), (geo["trec_eval"], other),
                      ("arithmetic", both["arithmetic"])):
        assert shared.share_robustness(rob.samples, producer, aggregate=mean, **kw) is not None
    written = sorted(p.name for p in (tmp_path / ".running" / "results").iterdir())
    assert written == ["07_arithmetic_vs_geometric--robustness-arithmetic.parquet",
                       "07_arithmetic_vs_geometric--robustness-geometric-rec_eval.parquet",
                       "07_arithmetic_vs_geometric--robustness-geometric.parquet"]
    # chapter 9, keyed on chapter 7
    _build_env(monkeypatch, tmp_path, "09_explorers", "k9", {"07_arithmetic_vs_geometric": "k7"})
    known = shared.shared_robustness(reader, {"arithmetic": "07_arithmetic_vs_geometric",
                                             "geometric": "07_arithmetic_vs_geometric"}, **kw)
    assert sorted(known) == ["arithmetic", "geometric"]
    _same(known["geometric"], other.samples)                      # trec_eval's reading, not rec_eval's
    rec = shared.shared_robustness(reader, {"geometric(rec_eval)": "07_arithmetic_vs_geometric"}, **kw)
    _same(rec["geometric(rec_eval)"], both[geo["rec_eval"]].samples)
    assert not known["geometric"]["mean_value"].equals(rec["geometric(rec_eval)"]["mean_value"])   # GF1, GMRR differ
    table = dict(n_permutations=50, sizes=sizes, n_samples=3, seed=0)
    _same(explorers.explorer_table(reader, **table, known_robustness=known), explorers.explorer_table(reader, **table))


def test_a_robustness_study_restricted_to_some_metrics_is_their_study_alone(study):
    sizes = {"ratings": [1.0, 0.5], "large-users": [1.0, 0.8]}
    every = robustness_study(study, sizes=sizes, n_samples=3, seed=2, progress=False)
    part = every.select(["RR@10", "P@5"])
    alone = robustness_study(study, sizes=sizes, n_samples=3, seed=2, metrics=["P", "RR"], progress=False)
    key = ["scenario", "size", "sample", "metric"]
    _same(part.samples.sort_values(key, kind="stable").reset_index(drop=True),
          alone.samples[alone.samples["metric"].isin(["RR@10", "P@5"])].sort_values(key, kind="stable")
          .reset_index(drop=True))
    assert list(part.full.columns) == ["RR@10", "P@5"] and part.grids == every.grids
    with pytest.raises(InputError, match="no metric 'AP@10'"):
        every.select(["AP@10"])


def test_robustness_tables_are_named_by_their_canonical_mean():
    from recmetrics.report import shared

    assert shared.robustness_name("gm") == shared.robustness_name("geometric(trec_eval)") == "robustness-geometric"
    assert shared.robustness_name("geometric(rec_eval)") == "robustness-geometric-rec_eval"
    with pytest.raises(InputError, match="aggregation"):
        shared.robustness_name("median")


def test_chapter_9_runs_beside_and_is_keyed_on_chapter_7():
    from recmetrics.report import plan, profiles

    assert profiles.DEPENDS["09_explorers"] == profiles.READS_LATE["09_explorers"] == ("07_arithmetic_vs_geometric",)
    order = plan.order_chapters(["09_explorers", "07_arithmetic_vs_geometric", "06_comparing_metrics"],
                                profiles.DEPENDS)
    assert order.index("09_explorers") > order.index("07_arithmetic_vs_geometric")


def test_bootstrap_taus_in_one_pass_equal_kendall_tau_per_resample():
    """Exp. 1's bootstrap τ (rank_correlation) counts pairs for every resample at once, as scipy does."""
    from recmetrics.meta import agreement
    from recmetrics.meta.perturbations.scoring import _tau_b_columns

    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(2, 40))
        x = rng.integers(0, 4, size=(n, 15)).astype(float) if trial % 2 else rng.random((n, 15))
        y = -np.arange(n, dtype=float) if trial % 3 else rng.integers(0, 3, n).astype(float)
        got = _tau_b_columns(x, y)
        want = np.array([agreement.kendall_tau(x[:, b], y) for b in range(15)])
        np.testing.assert_array_equal(got, want)       # NaN where constant, bit-identical elsewhere


# --------------------------------------------------------------------------------------- axioms
def test_axioms_scored_together_equal_each_metric_alone():
    """evaluate() scores a scene once for all its metrics (same depth): the results are each check's alone."""
    from recmetrics.meta import axioms as ax
    from recmetrics.meta.axioms.definitions import check

    metrics = ["ab-nDCG@10", "a-nDCG@10", "NRBP", "EU", "S-Recall@10", "P@10"]
    axioms = ["Pri", "Deep", "TopHeav", "MoreAsp", "MissOverNon"]
    rep = ax.evaluate(metrics, axioms, max_examples=12, seed=3, zero_weights=True, n_counterexamples=2)
    for m in metrics:
        for a in axioms:
            alone = check(a, parse(m), max_examples=12, seed=3, zero_weights=True, n_counterexamples=2)
            got = rep.result(m, a)
            assert (got.satisfied, got.cases, got.basis, got.message) == \
                   (alone.satisfied, alone.cases, alone.basis, alone.message), (m, a)
            assert str(got) == str(alone), (m, a)
            assert [e.scores for e in got.counterexamples] == [e.scores for e in alone.counterexamples], (m, a)


def test_positions_looked_up_once_serve_every_reduced_test_set(toy):
    """Exp. 3 looks its lists up once (Qrels.positions) and reads every reduced set through its mask."""
    test, aspects = toy
    qrels = Qrels(test)
    rng = np.random.default_rng(1)
    users = np.repeat(qrels.users, 2)
    items = rng.choice(np.array(sorted(aspects) + ["nope"]), size=(len(users), 12))
    pos = qrels.positions(users, items)
    ratings = qrels.to_frame()["rating"].to_numpy()
    np.testing.assert_array_equal(np.where(pos >= 0, ratings[pos], np.nan), qrels.lookup(users, items))
    assert (pos[items == "nope"] == -1).all()
    for share in (0.9, 0.5, 0.1):
        keep = rng.random(len(qrels)) < share
        np.testing.assert_array_equal(np.where((pos >= 0) & keep[pos], ratings[pos], np.nan),
                                      qrels.mask(keep).lookup(users, items))


def test_cut_offs_scored_together_equal_each_cut_off_alone():
    """The ranking kernels memoise their cut-off-independent per-hit terms on the judged run
    (:mod:`recmetrics.metrics.ranking`): every metric at several cut-offs, scored together, gives
    each cut-off's values scored alone on a fresh judged run, bit for bit. The data reach the edges:
    fractional and tied grades, pooled-but-unjudged labels (−1), lists shorter than the judgments
    and than the cut-offs, a user without a list, a user whose only relevant item is below every
    cut-off but the deepest."""
    from recmetrics.data.run import Run
    from recmetrics.evaluation import score_judged

    rng = np.random.default_rng(5)
    rows = []
    for u in range(60):
        items = rng.choice(80, size=rng.integers(1, 25), replace=False)
        grades = rng.choice([-1.0, 0.5, 1.0, 2.5, 3.0, 4.0, 4.0, 4.5, 5.0], size=len(items))
        rows += [(u, f"i{i}", g) for i, g in zip(items, grades)]
    rows += [(60, "i1", 5.0), (61, "i79", 4.0)]
    qrels = Qrels(pd.DataFrame(rows, columns=["user", "item", "rating"]), threshold=4.0, negative="unjudged")
    lists = {u: [f"i{i}" for i in rng.permutation(80)[:rng.integers(0, 40)]] for u in range(60)}
    lists[61] = [f"i{i}" for i in range(80)]          # its one relevant item at rank 80
    run = Run.from_lists({u: items for u, items in lists.items() if items})
    names = ["P", "Recall", "F1", "AP", "nDCG", "nDCG(gain=relevant)", "nDCG(dcg=exp-log2)", "DCG", "RR",
             "ERR", "ERR(max_rating=6)", "bpref", "infAP", "infAP(unjudged=pooled)"]
    specs = [parse(f"{m}@{k}") for m in names for k in (1, 3, 10, 50, 80)]
    together = score_judged(judge(run, qrels, depth=80, users="all"), specs)
    for row, spec in enumerate(specs):
        alone = score_judged(judge(run, qrels, depth=80, users="all"), [spec])[0]
        assert together[row].tobytes() == alone.tobytes(), spec
    # the cut-offs do differ (the test compares something)
    assert not np.array_equal(together[names.index("AP") * 5], together[names.index("AP") * 5 + 4])


def test_a_late_read_stops_waiting_when_the_producer_ends_or_the_build_is_gone(tmp_path, monkeypatch):
    """recmetrics.report.shared.shared waits for a chapter it reads late only while that chapter's attempt
    under the planned key has not ended and the build lives (the waiting itself: test_report_build)."""
    import json
    import subprocess
    import sys

    from recmetrics.report import shared, state

    generated = tmp_path / "generated"
    (generated / "results").mkdir(parents=True)
    monkeypatch.setenv("RECMETRICS_RESULTS_DIR", str(generated / "results"))
    monkeypatch.setenv("RECMETRICS_DEPENDS", json.dumps({"06_comparing_metrics": "k6"}))
    monkeypatch.setenv("RECMETRICS_READS_LATE", json.dumps(["06_comparing_metrics"]))
    monkeypatch.setenv("RECMETRICS_STATE", str(generated / state.STATE_FILE))
    monkeypatch.setenv("RECMETRICS_BUILD_PID", str(os.getpid()))
    for status in ("failed", "interrupted", "ok"):   # ended without (this) table: computed by the reader
        state.record_attempt(generated, "06_comparing_metrics", status, key="k6")
        assert shared.shared("06_comparing_metrics", "robustness", {}, poll=0.01) is None
    state.record_attempt(generated, "06_comparing_metrics", "running", key="k6")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    monkeypatch.setenv("RECMETRICS_BUILD_PID", str(gone.pid))   # the build died while the producer ran
    assert shared.shared("06_comparing_metrics", "robustness", {}, poll=0.01) is None


def test_chapter_6_reads_chapter_7s_arithmetic_study_whole(tmp_path, monkeypatch):
    """Chapter 7 runs the arithmetic robustness study beside its geometric ones and shares it whole
    (share_study); chapter 6, keyed on chapter 7, reads back the Robustness it would compute itself
    (samples, full-set scores, replicate samples, grids): frame for frame, bit for bit. Other replicates
    or another chapter key give None (chapter 6 then computes it)."""
    from recmetrics.meta import replicates as split_replicates
    from recmetrics.papers import experiments
    from recmetrics.report import shared

    sizes = {"ratings": [1.0, 0.5], "large-users": [1.0, 0.8, 0.5]}
    kw = dict(seed=1, sizes=sizes, n_samples=2)
    st = Study(simulate(40, 60, 800, seed=3), ["Pop", "Random", "ItemKNN"], ["P", "RR"], [10], k=2, cache=False,
               progress=False)
    labels = split_replicates.unit_labels(st, 3, 1)
    _build_env(monkeypatch, tmp_path, "07_arithmetic_vs_geometric", "k7")
    both = experiments.robustness_by_mean(st, sizes, 2, 1, ["geometric(rec_eval)", "arithmetic"], cutoffs=10,
                                          replicates=labels, progress=False)
    assert shared.share_study(both["arithmetic"], st, aggregate="arithmetic", replicates=3, **kw) is not None
    _build_env(monkeypatch, tmp_path, "06_comparing_metrics", "k6", {"07_arithmetic_vs_geometric": "k7"})
    got = shared.shared_study(st, "07_arithmetic_vs_geometric", aggregate="arithmetic", replicates=3, **kw)
    alone = experiments.robustness(st, sizes, 2, 1, cutoffs=10, replicates=labels, progress=False)  # chapter 6's cell
    _same(got.samples, alone.samples)
    _same(got.full, alone.full)
    _same(got.replicate_samples, alone.replicate_samples)
    assert got.grids == alone.grids and got.tie_break == alone.tie_break
    pd.testing.assert_frame_equal(got.summary(), alone.summary(), check_exact=True)
    assert shared.shared_study(st, "07_arithmetic_vs_geometric", aggregate="arithmetic", replicates=2, **kw) is None
    _build_env(monkeypatch, tmp_path, "06_comparing_metrics", "k6", {"07_arithmetic_vs_geometric": "older"})
    assert shared.shared_study(st, "07_arithmetic_vs_geometric", aggregate="arithmetic", replicates=3, **kw) is None
