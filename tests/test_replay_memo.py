"""The summaries a claim's replays share (:func:`recmetrics.meta.firmness.replay_cached`) leave every
finding as it is: the rows :func:`recmetrics.meta.findings.assess` gives — verdicts, evidence,
firmness — are the same, bit for bit, when every replay computes every summary again.

The checks of the popularity-bias claims (per-design values, paired bootstrap se's, the sparsity
curves' steps, the random-precision table, the sweep's leads) and of the robustness scenarios
(``scenario_below``, ``tau_at_size``, a scenario's replicates read by metric names) are replayed on
constructed results, once with the session memo and once with a memo that remembers nothing."""
from __future__ import annotations

import pickle

import pandas as pd
import pytest

from recmetrics import papers
from recmetrics.meta import findings, firmness
from recmetrics.papers import bellogin2012 as paper004

from test_claim_words import METRICS, flat, rob, with_replicates
from test_protocols_thesis import POP, ROLES, constructed_frames, curves_of, designs, fake_run, fake_sweep


class _Forgetful(dict):
    """A memo that never holds a result: every cached call is computed again, as written."""

    def __contains__(self, key) -> bool:
        return False


@pytest.fixture
def forgetful(monkeypatch):
    def use():
        monkeypatch.setattr(firmness, "_replay_memo", lambda: _Forgetful())
        monkeypatch.setattr(firmness, "_SESSION", firmness.ContextVar("no_session", default=None))
    return use


def _bits(table: pd.DataFrame) -> bytes:
    """Every cell of ``table`` as bytes (floats by their bits, NaN in its place)."""
    return pickle.dumps([table[c].tolist() for c in table.columns]) + pickle.dumps(list(table.columns))


def _curves(seed: int = 1):
    """Sparsity curves of one system and Random against removal (AR falls with the density, 1R flat)."""
    return curves_of(constructed_frames((0.0, 0.4, 0.8), seed))


def _random_table() -> pd.DataFrame:
    """Measured vs expected random precision: AR near its expectation, one 1R design beside it."""
    return pd.DataFrame({"design": ["TI-AR", "TI-AR", "AI-AR", "TI-1R", "TI-1R"],
                         "measured": [0.0101, 0.0099, 0.0102, 0.0100, 0.0130],
                         "expected": [0.0100, 0.0100, 0.0100, 0.0100, 0.0100],
                         "se": [0.0004, 0.0004, 0.0004, 0.0003, 0.0003]})


def _popularity_results() -> dict:
    """Results every popularity-bias claim reads: designs and a sweep near a decision (so replays
    read some verdicts differently), sparsity curves and the random-precision table."""
    run = fake_run(designs(P1R={POP: 0.040}, P1R_train={POP: 0.041}, U1R={POP: 0.020}, UAR={POP: 0.041},
                           AI_UAR={POP: 0.043}, head10={POP: 0.039}, AR={POP: 0.042}), noise=0.02, n_users=200)
    sweep = fake_sweep(pop=[0.0095, 0.02, 0.05], knn=[0.0098, 0.012, 0.03], mf=[0.0099, 0.013, 0.02],
                       plsa=[0.009, 0.019, 0.049], se=0.002)
    return {"systems": ROLES, "designs": run, "sweep": sweep, "curves": _curves(), "random": _random_table()}


def test_popularity_bias_replays_read_the_same_with_and_without_the_memo(forgetful):
    claims = [c for c in paper004.CLAIMS if c.id != "long-tail"]
    results = _popularity_results()
    context = {"seed": 3}
    cached = findings.assess(claims, results, context, draws=40)
    forgetful()
    plain = findings.assess(claims, results, context, draws=40)
    assert _bits(cached) == _bits(plain)
    simulated = cached[cached.firmness_basis == "simulated"]
    assert len(simulated) >= 5                     # the replays ran (and redrew something)
    assert (simulated.firmness < 1).any()          # some verdicts move under the redraws


def _scenario_results(shift: dict) -> dict:
    # ratings: τ falls with the size, so its curve at 0.5 is not its mean over the sizes
    scen = {"ratings": {m: {0.5: 0.92, 0.2: 0.84} for m in METRICS}, "random-items": flat({m: 0.8 for m in METRICS}),
            "random-users": flat({m: 0.97 for m in METRICS}),
            "large-users": flat({**{m: 0.85 for m in METRICS}, "RR": 0.95, "ERR": 0.94, "infAP": 0.9, "bpref": 0.89})}
    return {"robustness": with_replicates(rob(scen), shift, spread=0.05), "n_systems": 12}


@pytest.mark.parametrize("shift", [{}, {"random-items": {"P": 0.12}, "ratings": {"nDCG": 0.08}}])
def test_robustness_scenario_replays_read_the_same_with_and_without_the_memo(shift, forgetful):
    ids = {"items-hurt-more", "ratings-half-above-09", "large-users-utility-best"}
    claims = [c for c in papers.get("000").CLAIMS if c.id in ids]
    assert {c.id for c in claims} == ids
    results = _scenario_results(shift)
    cached = findings.assess(claims, results, {"seed": 1}, draws=40)
    forgetful()
    plain = findings.assess(claims, results, {"seed": 1}, draws=40)
    assert _bits(cached) == _bits(plain)
    assert (cached.firmness_basis == "simulated").sum() >= 2


def test_readings_of_an_open_choice_read_the_same_with_and_without_the_memo(forgetful):
    """assess_choices: every reading's own verdicts and the rows' replays share one memo."""
    ids = {"items-hurt-more", "ratings-half-above-09", "large-users-utility-best"}
    claims = [c for c in papers.get("000").CLAIMS if c.id in ids]
    shared = _scenario_results({})
    by_pool = {"concat": shared, "mean": _scenario_results({"random-items": {"P": 0.12}, "ratings": {"nDCG": 0.08}}),
               "same": dict(shared)}
    cached = papers.assess_choices(claims, by_pool, {"seed": 2}, draws=40)
    forgetful()
    plain = papers.assess_choices(claims, by_pool, {"seed": 2}, draws=40)
    assert _bits(cached) == _bits(plain)
    assert (cached.firmness_basis == "simulated").sum() >= 2
