"""The parity checks against peer tools: every "equals peer X" claim of the metric reference.

One :class:`PeerCheck` says that the recmetrics spec ``ours`` equals the peer's measure ``theirs``
per user, and names the test that compares them. The tests consume this table (the ranx and
ir_measures tests compute every check of their peer from it; the trec_eval tests assert that each
trec_eval check is among the measures they compare), and :mod:`.reference` prints its "equals"
row only from it, so a claim without a test cannot appear. ``{k}`` in ``ours`` and ``theirs`` is
a cut-off the test fills in (ranx and ir_measures: 1, 3, 10, 50; trec_eval: its parity cut-offs).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PeerCheck", "PEER_CHECKS", "PEERS", "checks", "claims"]

PARITY = "tests/test_parity_trec_eval.py"
PEERS_TEST = "tests/test_peers_parity.py"
PEERS = ("trec_eval", "ir_measures", "ranx")


@dataclass(frozen=True)
class PeerCheck:
    """``ours`` (a recmetrics spec, ``{k}`` a cut-off) equals the peer's ``theirs`` per user, as ``test`` checks."""

    metric: str     # the registered metric the claim is about
    peer: str       # one of PEERS
    ours: str
    theirs: str
    test: str       # "file::test function"


def _t(metric, ours, theirs, test=f"{PARITY}::test_per_user_parity"):
    return PeerCheck(metric, "trec_eval", ours, theirs, test)


_ALL_TREC = f"{PARITY}::test_per_user_parity_of_the_rest_of_all_trec"
_BINARY = f"{PARITY}::test_cli_trec_format_matches_the_trec_eval_binary"
_IRM = f"{PEERS_TEST}::test_ir_measures_parity"
_RANX = f"{PEERS_TEST}::test_ranx_parity"

PEER_CHECKS: tuple[PeerCheck, ...] = (
    # trec_eval 10.0, per user (pytrec_eval, and the binary line for line under `-m all_trec`)
    _t("P", "P@{k}", "P_{k}"), _t("Recall", "Recall@{k}", "recall_{k}"), _t("AP", "AP@{k}", "map_cut_{k}"),
    _t("AP", "AP", "map"), _t("nDCG", "nDCG@{k}", "ndcg_cut_{k}"), _t("nDCG", "nDCG", "ndcg"),
    _t("RR", "RR", "recip_rank"), _t("bpref", "bpref", "bpref"), _t("infAP", "infAP", "infAP"),
    _t("Rprec", "Rprec", "Rprec"), _t("success", "success@{k}", "success_{k}"), _t("num_ret", "num_ret", "num_ret"),
    _t("num_rel", "num_rel", "num_rel"), _t("num_rel_ret", "num_rel_ret", "num_rel_ret"),
    _t("Rprec_mult", "Rprec_mult(mult={k})", "Rprec_mult_{k}", _ALL_TREC),
    _t("relative_P", "relative_P@{k}", "relative_P_{k}", _ALL_TREC), _t("utility", "utility", "utility", _ALL_TREC),
    _t("binG", "binG", "binG", _ALL_TREC), _t("G", "G", "G", _ALL_TREC), _t("nDCG_rel", "nDCG_rel", "ndcg_rel", _ALL_TREC),
    _t("Rndcg", "Rndcg", "Rndcg", _ALL_TREC), _t("set_P", "set_P", "set_P", _ALL_TREC),
    _t("set_relative_P", "set_relative_P", "set_relative_P", _ALL_TREC),
    _t("set_recall", "set_recall", "set_recall", _ALL_TREC), _t("set_map", "set_map", "set_map", _ALL_TREC),
    _t("set_F", "set_F", "set_F", _ALL_TREC),
    _t("num_nonrel_judged_ret", "num_nonrel_judged_ret", "num_nonrel_judged_ret", _ALL_TREC),
    _t("IPrec", "IPrec(recall={k})", "iprec_at_recall_{k}", _BINARY), _t("IPrec_avg", "IPrec_avg", "11pt_avg", _BINARY),
    _t("unj", "unj@{k}", "unj_{k}", _BINARY), _t("DCG", "DCG", "dcg", _BINARY),
    _t("RBP", "RBP(p=0.9)", "rbp", _BINARY), _t("RBP_resid", "RBP_resid(p=0.9,zero_when_judged=true)",
                                                     "rbp_resid", _BINARY),
    # ir_measures (its pytrec_eval and runtime providers), per user
    *(PeerCheck(m, "ir_measures", o, t, _IRM) for m, o, t in (
        ("P", "P@{k}", "P@{k}"), ("Recall", "Recall@{k}", "R@{k}"), ("AP", "AP@{k}", "AP@{k}"), ("AP", "AP", "AP"),
        ("nDCG", "nDCG@{k}", "nDCG@{k}"), ("RR", "RR@{k}", "RR@{k}"), ("RR", "RR", "RR"), ("bpref", "bpref", "Bpref"),
        ("infAP", "infAP", "infAP"), ("Rprec", "Rprec", "Rprec"), ("success", "success@{k}", "Success@{k}"),
        ("num_ret", "num_ret", "NumRet"), ("num_rel", "num_rel", "NumRel"), ("num_rel_ret", "num_rel_ret", "NumRelRet"),
        ("Judged", "Judged@{k}", "Judged@{k}"), ("Judged", "Judged", "Judged"))),
    # ranx, per user
    *(PeerCheck(m, "ranx", o, t, _RANX) for m, o, t in (
        ("nDCG", "nDCG@{k}", "ndcg@{k}"), ("nDCG", "nDCG(dcg='exp-log2')@{k}", "ndcg_burges@{k}"),
        ("DCG", "DCG@{k}", "dcg@{k}"), ("DCG", "DCG(dcg='exp-log2')@{k}", "dcg_burges@{k}"),
        ("num_rel_ret", "num_rel_ret@{k}", "hits@{k}"), ("RR", "RR@{k}", "mrr@{k}"),
        ("RBP", "RBP(p=0.8,gain='grade')", "rbp.8"), ("RBP", "RBP(p=0.5,gain='grade')", "rbp.5"))),
)


def checks(peer: str | None = None, metric: str | None = None) -> list[PeerCheck]:
    """The checks of one peer and/or one registered metric (by any of its names)."""
    if metric is not None:
        from .registry import get

        metric = get(metric).name
    return [c for c in PEER_CHECKS if (peer is None or c.peer == peer) and (metric is None or c.metric == metric)]


def claims(metric: str) -> list[str]:
    """The reference's "equals" items of ``metric``: ``peer name`` (``= spec`` when the spec checked
    has parameters of its own, e.g. ``ranx rbp.8 = RBP(p=0.8,gain='grade')``), one per check of
    :data:`PEER_CHECKS` (a cut-off or a parameter the test varies reads ``k``)."""
    out = []
    for c in checks(metric=metric):
        own = "(" in c.ours and "={k}" not in c.ours
        text = f"{c.peer} {c.theirs.replace('{k}', 'k')}" + (f" = {c.ours.replace('{k}', 'k')}" if own else "")
        if text not in out:
            out.append(text)
    return out
