"""The explorers without a kernel (issue 18 §5): the metric explorer's table, the sandbox and guide grids,
their Vega-Lite charts (rendered with vl-convert to check the bound parameters really filter), the live
widget, and the files that carry the tables between builds."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmetrics import explorers
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.meta.discriminative import discriminative_power
from recmetrics.meta.robustness import robustness_study

SIZES = [1.0, 0.5, 0.2]
SCENARIOS = ["ratings", "popular-items"]
KW = dict(n_permutations=300, sizes=SIZES, n_samples=3, scenarios=SCENARIOS, seed=3)


@pytest.fixture(scope="module")
def study():
    from recmetrics.data.simulate import simulate
    from recmetrics.study import Study

    return Study(simulate(50, 70, 800, seed=1), ["Pop", "Random", "ItemKNN"], ["P", "nDCG"], [5, 10], k=2,
                 cache=False, progress=False)


@pytest.fixture(scope="module")
def table(study):
    return explorers.explorer_table(study, **KW)


def _panel(table, metric, cutoff, agg, view):
    return table[(table.metric == metric) & (table.cutoff == cutoff) & (table.aggregation == agg)
                 & (table.view == view)].reset_index(drop=True)


# ----------------------------------------------------------------------------------------- the table
def test_table_shape_and_columns(study, table):
    assert list(table.columns) == list(explorers.COLUMNS)
    panels = 2 * 2 * 2
    counts = table.groupby("view").size()
    assert counts["ranking"] == panels * 3
    assert counts["pvalue"] == panels * 3                       # 3 pairs of 3 systems
    assert counts["robustness"] == panels * len(SIZES) * len(SCENARIOS)
    assert counts["summary"] == panels * (2 + len(SCENARIOS))
    assert set(table.dataset) == {study.dataset}
    assert table.attrs["explorer"]["n_permutations"] == 300


@pytest.mark.parametrize("agg", ["arithmetic", "geometric"])
def test_ranking_is_the_study_mean_with_a_t_interval(study, table, agg):
    for metric, cutoff in [("P", 5), ("nDCG", 10)]:
        rows = _panel(table, metric, cutoff, agg, "ranking").set_index("label")
        expected = study.system_scores(metric, cutoff, aggregate=agg)
        np.testing.assert_allclose(rows.loc[expected.index, "value"], expected.to_numpy(), rtol=1e-12)
        x = study.scores(metric, cutoff).to_numpy()
        t = x if agg == "arithmetic" else np.log(np.maximum(x, 1e-5))
        for i, system in enumerate(study.systems):
            lo, hi = stats.t.interval(0.95, t.shape[1] - 1, loc=t[i].mean(), scale=stats.sem(t[i]))
            if agg == "geometric":
                lo, hi = np.exp(lo), np.exp(hi)
            assert rows.loc[system, "lo"] == pytest.approx(lo, rel=1e-10)
            assert rows.loc[system, "hi"] == pytest.approx(hi, rel=1e-10)
        # ranked by value, best first
        assert list(rows["x"]) == sorted(rows["x"])
        assert rows["value"].is_monotonic_decreasing


def test_pvalues_are_discriminative_power_of_the_ranked_quantity(study, table):
    s = study.scores("P", 10)   # a panel whose p-values are not all at the floor
    ari = discriminative_power(s, n_permutations=300, seed=3)
    geo = discriminative_power(pd.DataFrame(np.log(np.maximum(s.to_numpy(), 1e-5)), index=s.index, columns=s.columns),
                               n_permutations=300, seed=3)
    for agg, res in [("arithmetic", ari), ("geometric", geo)]:
        rows = _panel(table, "P", 10, agg, "pvalue")
        np.testing.assert_array_equal(rows["value"].to_numpy(), np.sort(res.pvalues["p"].to_numpy()))
        assert list(rows["x"]) == [1, 2, 3]
        summary = _panel(table, "P", 10, agg, "summary").set_index("label")
        assert summary.loc["DP", "value"] == pytest.approx(res.dp)
        assert summary.loc["DP", "se"] == pytest.approx(res.dp_se)
        assert summary.loc["significant", "value"] == pytest.approx(res.share_significant)
    # the two tests differ on these data (the log scale weighs zeros differently), so the checks above tell them apart
    assert not np.array_equal(_panel(table, "P", 10, "arithmetic", "pvalue")["value"],
                              _panel(table, "P", 10, "geometric", "pvalue")["value"])


@pytest.mark.parametrize("agg", ["arithmetic", "geometric"])
def test_robustness_rows_are_the_robustness_study(study, table, agg):
    r = robustness_study(study, SCENARIOS, SIZES, 3, 3, metrics=["P"], cutoffs=[5], aggregate=agg, progress=False)
    s = r.summary()
    rows = _panel(table, "P", 5, agg, "robustness")
    for sc in SCENARIOS:
        got = rows[rows.label == sc].sort_values("x", ascending=False)
        want = s[s.scenario == sc].sort_values("size", ascending=False)
        np.testing.assert_allclose(got["x"], want["size"])
        np.testing.assert_allclose(got["value"], want["tau"], rtol=1e-12)
        se = (want["tau_std"] / np.sqrt(want["samples"])).where(want["samples"] > 1).to_numpy()
        np.testing.assert_allclose(got["se"].to_numpy(), se, rtol=1e-12, equal_nan=True)
        assert (got["lo"] <= got["value"] + 1e-12).all() and (got["hi"] >= got["value"] - 1e-12).all()
        assert got["lo"].min() >= -1 and got["hi"].max() <= 1
    summary = _panel(table, "P", 5, agg, "summary").set_index("label")
    assert summary.loc["robustness:ratings", "value"] == pytest.approx(r.area("ratings")["P@5"])
    assert summary.loc["robustness:ratings", "se"] == pytest.approx(r.area_se("ratings")["P@5"])


def test_one_panel_equals_the_rows_of_the_full_table(study, table):
    """What the live widget relies on: a selection computed alone equals the table's rows."""
    alone = explorers.explorer_table(study, ["nDCG"], [5], ["geometric"], **KW)
    full = table[(table.metric == "nDCG") & (table.cutoff == 5) & (table.aggregation == "geometric")]
    pd.testing.assert_frame_equal(alone.reset_index(drop=True), full.reset_index(drop=True))


def test_more_jobs_give_the_same_table(study, table):
    """The robustness study's threads (n_jobs) do not change a value."""
    pd.testing.assert_frame_equal(explorers.explorer_table(study, **KW, n_jobs=2), table)


def test_tables_of_parts_joined_equal_the_table_of_every_cut_off(study, table):
    """Chapter 9 computes its cut-offs in two parts (the one chapters 6 and 7 compute beside it last):
    joined, the parts are the whole table's rows and settings; a cell twice or other settings fail."""
    parts = [explorers.explorer_table(study, cutoffs=[c], **KW) for c in (10, 5)]
    joined = explorers.join_tables(parts)
    key = ["metric", "cutoff", "aggregation", "view", "label", "x"]
    pd.testing.assert_frame_equal(joined.sort_values(key).reset_index(drop=True),
                                  table.sort_values(key).reset_index(drop=True), check_exact=True)
    assert joined.attrs["explorer"] == {**table.attrs["explorer"], "cutoffs": [10, 5]}
    with pytest.raises(InputError, match="P@10 is in two of the tables"):
        explorers.join_tables([parts[0], parts[0]])
    with pytest.raises(InputError, match="different settings"):
        explorers.join_tables([parts[0], explorers.explorer_table(study, cutoffs=[5], **{**KW, "seed": 4})])
    with pytest.raises(InputError, match="at least one"):
        explorers.join_tables([])


def test_sizes_per_scenario(study):
    t = explorers.explorer_table(study, ["P"], [5], ["arithmetic"], n_permutations=100, n_samples=2,
                                 sizes={"ratings": [1.0, 0.5], "large-users": [1.0, 0.8, 0.6]})
    rob = t[t.view == "robustness"]
    assert rob.groupby("label").size().to_dict() == {"large-users": 3, "ratings": 2}


def test_bad_input_is_named(study):
    with pytest.raises(UnknownNameError, match="harmonic"):
        explorers.explorer_table(study, aggregations=["harmonic"], **KW)
    with pytest.raises(UnknownNameError):
        explorers.explorer_table(study, aggregations=["median"], **KW)
    with pytest.raises(UnknownNameError, match="AP"):
        explorers.explorer_table(study, metrics=["AP"], **KW)
    with pytest.raises(InputError, match="cut-off 7"):
        explorers.explorer_table(study, cutoffs=[7], **KW)
    with pytest.raises(InputError, match="n_permutations"):
        explorers.explorer_table(study, **{**KW, "n_permutations": 0})
    with pytest.raises(InputError, match="outside"):
        explorers.explorer_table(study, **{**KW, "sizes": [1.0, 1.5]})
    with pytest.raises(InputError, match="Study"):
        explorers.explorer_table(pd.DataFrame(), **KW)


def test_geometric_rejects_negative_metrics():
    from recmetrics.runs import run_systems
    from recmetrics.data.simulate import simulate
    from recmetrics.study import Study

    runs = run_systems(simulate(30, 50, 500, seed=0), ["Pop", "Random"], k=2, n=10, cache=False, progress=False)
    st = Study.from_runs(dict(runs), runs.folds, ["MCC(universe=judged)"], [10], progress=False)
    with pytest.raises(InputError, match=r"MCC\(universe=judged\)@10 has negative values.*unit=true"):
        explorers.explorer_table(st, aggregations=["geometric"], n_permutations=50, sizes=[1.0], n_samples=1)
    t = explorers.explorer_table(st, aggregations=["arithmetic"], n_permutations=50, sizes=[1.0], n_samples=1)
    assert (t.aggregation == "arithmetic").all()


def test_ranking_rows_ties_and_checks():
    s = pd.DataFrame([[0.2, 0.4], [0.4, 0.2], [0.0, 0.1]], index=["A", "B", "C"], columns=["u", "v"])
    rows = explorers.ranking_rows(s)
    assert rows.set_index("label")["x"].to_dict() == {"A": 1, "B": 1, "C": 3}
    with pytest.raises(InputError, match="confidence"):
        explorers.ranking_rows(s, confidence=1.5)
    with pytest.raises(InputError, match="floor"):
        explorers.ranking_rows(s, "geometric", floor=0.0)
    with pytest.raises(InputError, match="system 'C'"):
        explorers.ranking_rows(s - 0.05, "geometric")


def test_leaders_use_the_verdict_rule(table):
    lead = explorers.leaders(table, table.dataset.iloc[0], 10, "arithmetic")
    dp = lead["dp"]
    best = dp["values"][dp["best"]].min()
    assert best == dp["values"].min()
    for m in dp["values"].index:   # a metric outside the group is beyond the noise of the best one
        gap = abs(dp["values"][m] - best)
        band = 2 * np.hypot(dp["se"][m], dp["se"][dp["values"].idxmin()]) + 1e-9 * max(1, abs(best))
        assert (m in dp["best"]) == (gap <= band)
    assert set(lead) == {"dp", "robustness"}
    with pytest.raises(InputError, match="no summary rows"):
        explorers.leaders(table, "elsewhere", 10, "arithmetic")


# ----------------------------------------------------------------------------------------- files
def test_save_and_load_tables(tmp_path, table):
    path = explorers.save_table(table, profile="quick", directory=tmp_path)
    assert path.name == f"explorer-{table.dataset.iloc[0]}.json"
    other = table.assign(dataset="other")
    other.attrs = table.attrs
    explorers.save_table(other, profile="quick", directory=tmp_path)
    explorers.save_table(table.assign(dataset="paper-one"), profile="paper", directory=tmp_path)
    back = explorers.load_tables(profile="quick", directory=tmp_path)
    assert set(back.dataset) == {table.dataset.iloc[0], "other"}
    mine = back[back.dataset == table.dataset.iloc[0]].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, table.reset_index(drop=True), check_dtype=False)
    assert back.attrs["explorer"]["other"]["profile"] == "quick"
    assert set(explorers.load_tables(directory=tmp_path).dataset) == {table.dataset.iloc[0], "other", "paper-one"}
    # another package version is not mixed in
    data = json.loads(path.read_text())
    data["meta"]["version"] = "0.0.0-old"
    path.write_text(json.dumps(data))
    assert set(explorers.load_tables(profile="quick", directory=tmp_path).dataset) == {"other"}
    assert len(explorers.load_tables(directory=tmp_path / "none")) == 0
    with pytest.raises(InputError, match="one dataset"):
        explorers.save_table(pd.concat([table, other]), directory=tmp_path)
    with pytest.raises(InputError, match="not an explorer table"):
        explorers.save_table(table.drop(columns="se"), directory=tmp_path)


# ----------------------------------------------------------------------------------------- sandbox, guide
def test_sandbox_grid_equals_the_widget_state():
    from recmetrics.widgets.sandbox import SandboxState

    metrics = ["ab-nDCG@5", "a-nDCG@5", "S-Recall@5", "nDCG@5"]
    values, rankings = explorers.sandbox_grid(metrics=metrics, weights=[0.0, 0.3, 1.0])
    state = SandboxState()
    given = values[(values.a == 0) & (values.aspect == "Sci-Fi") & (values.weight == 0.3)]
    np.testing.assert_allclose(given[metrics].to_numpy()[0], state.scores(metrics).to_numpy())
    # swap ranks 1 and 6 with Action's weight at 1.0
    state.swap(0, 5)
    state.weights["Action"] = 1.0
    row = values[(values.a == 1) & (values.b == 6) & (values.aspect == "Action") & (values.weight == 1.0)]
    np.testing.assert_allclose(row[metrics].to_numpy()[0], state.scores(metrics).to_numpy())
    swapped = rankings[(rankings.a == 1) & (rankings.b == 6)].sort_values("rank")
    assert swapped["item"].tolist() == state.items
    assert values.attrs["weights"]["Sci-Fi"] == 0.3
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        explorers.sandbox_grid(weights=[0.5, 2.0])


def test_guide_grid_holds_every_recommendation_and_caution():
    from recmetrics.meta import guidelines as gl

    grid = explorers.guide_grid(k=5, width=70)
    keys = [q.key for q in gl.QUESTIONS]
    assert grid.groupby(keys).ngroups == len(gl.decision_table())
    assert grid["text"].str.len().max() <= 70
    answers = {"rated_unrated": "no", "scale": "binary", "interest": "top items", "limited_list": "yes",
               "ordered": "no", "decay": "slow"}
    lines = grid[np.logical_and.reduce([grid[k] == v for k, v in answers.items()])].sort_values("line")
    text = " ".join(lines["text"])
    for rec in gl.recommend_metrics(answers):
        assert " ".join(rec.reason.split()) in text
        assert ", ".join(gl.family_metrics(rec.family, 5)) in text
    for c in gl.cautions(answers):
        assert " ".join(c.reason.split()) in text
    assert lines["kind"].iloc[0] == "heading"


# ----------------------------------------------------------------------------------------- charts
vlc = pytest.importorskip("vl_convert")


def _svg(chart, **values):
    """The chart rendered with some parameters set to ``values`` (as if chosen in the page)."""
    spec = chart.to_dict()
    for p in spec.get("params", []):
        if p["name"] in values:
            p["value"] = values[p["name"]]
    return vlc.vegalite_to_svg(json.dumps(spec))


def test_metric_explorer_chart_filters_by_its_parameters(study, table):
    from recmetrics import viz_explorers as vx

    chart = vx.metric_explorer_chart(table)
    spec = chart.to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert set(params) == {"pick_dataset", "pick_metric", "pick_cutoff", "pick_aggregation"}
    assert params["pick_metric"]["bind"]["input"] == "select"
    assert params["pick_aggregation"]["bind"]["input"] == "radio"
    assert params["pick_cutoff"]["bind"]["options"] == [5, 10]
    assert vx.spec_bytes(chart) < 2_000_000
    # the title and the DP text follow the selection
    svg = _svg(chart, pick_metric="nDCG", pick_cutoff=10, pick_aggregation="geometric")
    assert "nDCG@10 (geometric mean) on ratings" in svg
    dp = table[(table.metric == "nDCG") & (table.cutoff == 10) & (table.aggregation == "geometric")
               & (table.label == "DP")]["value"].iloc[0]
    assert f"DP = {float(f'{dp:.4g}'):.4g}" in svg
    assert "nDCG@10 (geometric mean)" not in _svg(chart, pick_metric="P")
    unbound = vx.metric_explorer_chart(table, controls=False).to_dict()
    assert all("bind" not in p for p in unbound["params"])
    with pytest.raises(InputError, match="start"):
        vx.metric_explorer_chart(table, start={"metric": "MAP"})
    with pytest.raises(InputError, match="empty"):
        vx.metric_explorer_chart(table.iloc[:0])


def test_sandbox_chart_shows_the_swapped_ranking():
    from recmetrics import viz_explorers as vx

    values, rankings = explorers.sandbox_grid(metrics=["a-nDCG@5", "P@5"], weights=[0.0, 0.5, 1.0])
    chart = vx.sandbox_chart(values, rankings, start_aspect="Drama")
    params = {p["name"]: p for p in chart.to_dict()["params"]}
    assert params["weight"]["bind"] == {"input": "range", "min": 0.0, "max": 1.0, "step": 0.5,
                                        "name": "weight w(u, a) "}
    given = _svg(chart)
    swapped = _svg(chart, swap_a=1, swap_b=6)
    assert "1. Alien" in given and "6. Gattaca" in given
    assert "1. Gattaca" in swapped and "6. Alien" in swapped
    with pytest.raises(InputError, match="start_weight"):
        vx.sandbox_chart(values, rankings, start_weight=0.3)


def test_guide_chart_follows_the_answers():
    from recmetrics import viz_explorers as vx
    from recmetrics.meta import guidelines as gl

    chart = vx.guide_chart(explorers.guide_grid())
    radios = [p for p in chart.to_dict()["params"] if p["bind"]["input"] == "radio"]
    assert len(radios) == len(gl.QUESTIONS)
    predict = _svg(chart, q_interest="predictions", q_limited_list="no")
    top = _svg(chart)
    assert "Predictive accuracy" in predict and "Predictive accuracy" not in top
    assert "Top-weighted rank accuracy" in top


def test_explorer_charts_are_altairs_own_specs_validated_when_drawn(study, table):
    """The explorers are built with Altair's debug mode off (it validates every object as it is made,
    and the inline data with it): the same specs as built with it on, the debug mode left as it was,
    and a chart is still validated when it is drawn."""
    import altair as alt
    from altair.utils import schemapi

    from recmetrics import viz_explorers as vx

    values, rankings = explorers.sandbox_grid(metrics=["a-nDCG@5", "P@5"], weights=[0.0, 0.5, 1.0])
    builds = [lambda: vx.metric_explorer_chart(table), lambda: vx.sandbox_chart(values, rankings),
              lambda: vx.guide_chart(explorers.guide_grid())]
    assert schemapi.DEBUG_MODE
    fast = [build().to_dict() for build in builds]
    assert schemapi.DEBUG_MODE                       # put back
    checked = [build.__wrapped__ for build in (vx.metric_explorer_chart, vx.sandbox_chart, vx.guide_chart)]
    slow = [checked[0](table).to_dict(), checked[1](values, rankings).to_dict(),
            checked[2](explorers.guide_grid()).to_dict()]
    assert fast == slow
    with schemapi.debug_mode(False):
        bad = alt.Chart(alt.InlineData(values=[{"x": 1}])).mark_point().encode(x=alt.X("x:Q", bin="many"))
    with pytest.raises(Exception, match="many"):
        bad.to_dict()


def test_explorer_modules_import_lazily():
    code = ("import sys, recmetrics.explorers, recmetrics.viz_explorers, recmetrics.widgets.explorer; "
            "print(any(m in sys.modules for m in ('altair', 'ipywidgets', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------------------- live widget
def test_live_explorer_reads_the_table_then_computes(study, table):
    pytest.importorskip("ipywidgets")
    from recmetrics.widgets.explorer import MetricExplorer

    part = table[table.metric == "P"]
    part.attrs = table.attrs
    ex = MetricExplorer({"ratings": study}, table=part)
    assert ex.explorer_kw["n_permutations"] == 300 and ex.explorer_kw["seed"] == 3
    from_table = ex.rows("ratings", "P", 5, "arithmetic")
    pd.testing.assert_frame_equal(from_table, _panel_all(table, "P", 5, "arithmetic"))
    computed = ex.rows("ratings", "nDCG", 10, "geometric")            # not in the table: from the study
    pd.testing.assert_frame_equal(computed, _panel_all(table, "nDCG", 10, "geometric"), check_dtype=False)
    box = ex.widget
    ex.metric.value = "nDCG"
    assert ("ratings", "nDCG", 5, "arithmetic") in ex._cache
    assert ex.status.value == ""
    assert len(box.children) == 4
    with pytest.raises(InputError, match="no rows"):
        MetricExplorer(table=part).rows("ratings", "nDCG", 5, "arithmetic")
    with pytest.raises(InputError, match="give the studies"):
        MetricExplorer()


def _panel_all(table, metric, cutoff, agg):
    rows = table[(table.metric == metric) & (table.cutoff == cutoff) & (table.aggregation == agg)]
    return rows.reset_index(drop=True)


# ----------------------------------------------------------------------------------------- chapter 09
def _chapter():
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parent.parent / "notebooks" / "09_explorers.ipynb")
                      .read_text(encoding="utf-8"))


def test_chapter_declares_the_report_parameters():
    import re

    from recmetrics.report.profiles import PROFILES

    cell = next(c for c in _chapter()["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    names = set(re.findall(r"^(\w+)\s*=", "".join(cell["source"]), re.M))
    assert {"dataset", "profile", "seed", "cutoffs", "systems", "folds"} <= names
    assert set(PROFILES["quick"]) - {"test_size"} <= names


def test_chapter_types_no_number_and_draws_through_the_library():
    import re

    for cell in _chapter()["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            prose = re.sub(r"`[^`]*`|§\s*[\d.]+|(Eqs?|Figs?|Tables?)\.?\s*[\d.]+", "", text)
            assert not re.search(r"\d+\.\d+", prose), text
            assert not re.search(r"\b(agrees?|disagrees?)\b", prose, re.I), text
        else:
            assert "alt.Chart(" not in text and ".mark_" not in text, text
