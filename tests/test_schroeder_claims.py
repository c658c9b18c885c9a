"""The claims of paper 001 (Schröder et al.) that chapter 04 assesses: each check agrees on one result
and disagrees on another, and a tie within the floating-point tolerance decides nothing
(recmetrics.papers.schroeder2011)."""
from __future__ import annotations

import pandas as pd
import pytest

from recmetrics.meta import findings, guidelines
from recmetrics import papers as rm_papers
from recmetrics.papers import schroeder2011 as sc

CLAIMS = {c.id: c for c in sc.CHAPTERS["04_choosing_a_metric"]}


@pytest.fixture(scope="module")
def toy():
    return {"figure1": guidelines.figure1(), "figure2": guidelines.figure2(), "figure3": guidelines.figure3(),
            "figure4": guidelines.figure4()}


def identities(all_mean=0.001, judged_mean=0.1):
    rows = []
    for identity, _ in sc.IDENTITIES.values():
        rows.append({"universe": "all", "identity": identity, "mean |difference|": all_mean,
                     "max |difference|": 3 * all_mean})
        rows.append({"universe": "judged", "identity": identity, "mean |difference|": judged_mean,
                     "max |difference|": 1.0})
    return pd.DataFrame(rows)


def setv(results, figure, metric, x, at, value, **where):
    """A copy of ``results`` with one figure's metric set to ``value`` where its ``x`` is in ``at``
    (``value`` may be a function of the x values)."""
    out = dict(results)
    fig = results[f"figure{figure}"].copy()
    mask = (fig["metric"] == metric) & fig[x].isin(at)
    for col, val in where.items():
        mask &= fig[col] == val
    fig.loc[mask, "value"] = value(fig.loc[mask, x]) if callable(value) else value
    out[f"figure{figure}"] = fig
    return out


# claim id -> how to turn the real toy figures into a result the claim must disagree with
BREAK = {
    "fig1-precision-recall-inverse": lambda r: setv(r, 1, "precision", "k", range(1, 11), lambda k: k / 10),
    "fig1-choose-k": lambda r: setv(r, 1, "MCC", "k", [10], 0.5),
    "fig2-map-top": lambda r: setv(r, 2, "MAP", "position", range(1, 11), lambda p: 0.1 * p),
    "auc-swaps-equal": lambda r: setv(r, 2, "AUC", "position", range(1, 11), lambda p: 1 / p),
    "bktau-auc": lambda r: setv(r, 2, "BKTau", "position", range(1, 11), lambda p: (-1.0) ** p),
    "bktau-k-lauc": lambda r: setv(r, 2, "BKTau@k", "position", range(1, 11), lambda p: (-1.0) ** p),
    "fig3-ratio-bias": lambda r: setv(setv(setv(setv(
        r, 3, "precision", "n_relevant", range(1, 10), 1.0, recommender="perfect"),
        3, "precision", "n_relevant", range(1, 10), 0.0, recommender="inverse"),
        3, "F1", "n_relevant", range(1, 10), 1.0, recommender="perfect"),
        3, "F1", "n_relevant", range(1, 10), 0.0, recommender="inverse"),
    "fig3-mk-inf-mcc-sign": lambda r: setv(r, 3, "MCC", "n_relevant", [9], 0.1, recommender="inverse"),
    "lauc-one-first": lambda r: setv(r, 3, "LAUC", "n_relevant", [2], 0.9, recommender="perfect"),
    "lauc-zero": lambda r: setv(r, 3, "LAUC", "n_relevant", [9], 0.1, recommender="inverse"),
    "lauc-top-increases": lambda r: setv(r, 2, "LAUC", "position", [1], 0.5),
    "lauc-swap-equal": lambda r: setv(r, 2, "LAUC", "position", [2], 0.95),
    "lauc-beyond-ignored": lambda r: setv(r, 2, "LAUC", "position", [8], 0.1),
    # a case with no relevant item in the top k above the minimum: LAUC not minimal there
    "lauc-minimal": lambda r: setv(r, 4, "LAUC", "position", [7], 0.9),
}
# the one toy claim our LAUC disagrees with (§5.2's first bullet read literally): made to agree here
FIX = {"lauc-one-within": lambda r: setv(setv(r, 2, "LAUC", "position", range(1, 5), 1.0),
                                         4, "LAUC", "position", [1, 2], 1.0)}


# claim id -> a result where the claimed difference is an exact tie (up to 1e-12): the rule decides nothing
TIES = {
    "fig2-map-top": lambda r: setv(r, 2, "MAP", "position", range(1, 11), lambda p: 1 - 0.1 * (p - 1) + 1e-12 * (p % 2)),
    "lauc-top-increases": lambda r: setv(r, 2, "LAUC", "position", [2], 1.0 - 1e-13),
    "fig3-ratio-bias": lambda r: setv(setv(setv(setv(
        r, 3, "precision", "n_relevant", range(1, 10), 0.5, recommender="perfect"),
        3, "precision", "n_relevant", range(1, 10), 0.5 + 1e-13, recommender="inverse"),
        3, "F1", "n_relevant", range(1, 10), 0.5, recommender="perfect"),
        3, "F1", "n_relevant", range(1, 10), 0.5, recommender="inverse"),
}


@pytest.mark.parametrize("cid", sorted(TIES))
def test_a_tie_within_float_noise_is_inconclusive(toy, cid):
    """The old checks decided with bare comparisons (a 1e-13 gap 'agreed'); the verdict rule does not."""
    ev = CLAIMS[cid].check(TIES[cid](toy))
    assert ev.verdict == "inconclusive", ev.detail


def test_the_papers_module_holds_the_set_up():
    assert sc.SETUP.paper == "001" and sc.SETUP.cutoffs == (4,) and sc.SETUP.extra["n_items"] == 10
    assert {c.paper for c in sc.CLAIMS} == {"001"}


def test_catalogue_identities_are_the_projects_checks_not_the_papers_claims():
    # 001 states none of the catalogue identities: they are filed under the project's key, apart from
    # the paper's claims (the Findings page does not count them as claims of 001)
    assert {c.paper for c in sc.CATALOGUE_CLAIMS} == {sc.PROJECT} and sc.PROJECT == "project"
    assert not {c.id for c in sc.CATALOGUE_CLAIMS} & {c.id for c in rm_papers.claims("001")}
    assert sc.CHAPTERS["04_choosing_a_metric"] == sc.TOY_CLAIMS + sc.CATALOGUE_CLAIMS


def test_every_claim_has_a_test():
    assert set(BREAK) | set(FIX) | set(sc.IDENTITIES) | {"id-judged-breaks"} == set(CLAIMS)
    assert len(CLAIMS) == len(sc.CHAPTERS["04_choosing_a_metric"])  # ids unique


@pytest.mark.parametrize("cid", sorted(BREAK))
def test_toy_claim_agrees_on_the_toy_figures_and_disagrees_when_broken(toy, cid):
    claim = CLAIMS[cid]
    assert claim.check(toy).verdict == "agrees", claim.check(toy).detail
    broken = claim.check(BREAK[cid](toy))
    assert broken.verdict == "disagrees", broken.detail


def test_lauc_within_disagrees_on_our_lauc_and_agrees_when_it_is_one(toy):
    claim = CLAIMS["lauc-one-within"]
    ev = claim.check(toy)
    assert ev.verdict == "disagrees" and ev.value == pytest.approx(2 / 3)
    assert claim.check(FIX["lauc-one-within"](toy)).verdict == "agrees"


@pytest.mark.parametrize("cid", sorted(sc.IDENTITIES))
def test_identity_claims(cid):
    claim = CLAIMS[cid]
    ok = claim.check({"identities": identities(), "identities_k": 10})
    assert ok.verdict == "agrees" and "k = 10" in ok.detail
    t = identities()
    t.loc[(t.universe == "all") & (t.identity == sc.IDENTITIES[cid][0]), "mean |difference|"] = 0.05
    bad = claim.check({"identities": t})
    assert bad.verdict == "disagrees" and bad.value == pytest.approx(0.05)


def test_judged_breaks_claim():
    claim = CLAIMS["id-judged-breaks"]
    assert claim.check({"identities": identities()}).verdict == "agrees"
    assert claim.check({"identities": identities(judged_mean=0.001)}).verdict == "disagrees"


def test_missing_results_are_inconclusive(toy):
    table = findings.assess(CLAIMS.values(), {"figure1": toy["figure1"]}, context={"dataset": "toy"})
    assert set(table.verdict) == {"agrees", "inconclusive"}
    assert (table.set_index("id").loc[["fig2-map-top", "id-bktau-mcc"], "verdict"] == "inconclusive").all()


def test_catalogue_identities_on_a_real_run_agree():
    import recmetrics as rm

    ds = rm.datasets.load("movielens-small")
    train, test = rm.splits.holdout(ds.ratings, test_size=0.2, seed=0)
    qrels = rm.Qrels(test, threshold=4)
    run = rm.recommenders.create("Pop").fit(train).recommend(qrels.users, n=10)
    ctx = {"train": train, "catalog": ds.ratings["item"].unique()}
    ident = guidelines.catalogue_identities(run, qrels, 10, **ctx)
    table = findings.assess(sc.CATALOGUE_CLAIMS, {"identities": ident, "identities_k": 10})
    assert (table.verdict == "agrees").all(), table[["id", "our_evidence"]].to_string()
