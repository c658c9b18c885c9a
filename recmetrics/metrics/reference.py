"""The metric reference: one entry per registered metric, rendered from the registry.

The registry (:mod:`.registry`) holds what a metric *is* for the code — its kernel, cut-off mode,
parameters and defaults, range, scope (per user or per run), the context it needs and the
trec_eval measure it equals. This module adds what a reader needs besides: the formula (LaTeX),
the citation; the peers it equals come from :data:`.peers.PEER_CHECKS`, the table of parity checks
the tests consume, with the test that proves each equality (a claim without a test cannot appear). :func:`describe` renders one metric as text (``recmetrics metrics NAME``);
:func:`markdown` renders a family as a book page, optionally with the axioms each metric satisfies
and its discriminative power and robustness as the meta-evaluation chapters computed them
(:func:`recmetrics.report.results.load`). Nothing of a page is typed by hand: every registered
metric must have an entry here (a test checks it), and every number comes from a computation.

Notation: :math:`L_u` the user's list, :math:`L_u^k` its top k, :math:`R_u` the user's relevant
items, :math:`\\mathrm{rel}(i) \\in \\{0, 1\\}`, :math:`r(i)` the item's grade (its test rating),
:math:`N_u` the judged non-relevant items, :math:`J_{<i}` the judged items above rank i (trec_eval's
judged fraction), :math:`\\Phi` aspects, :math:`\\gamma_\\phi` aspect weights (Eq. 9 of Parapar & Radlinski).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ["Entry", "ENTRIES", "entry", "describe", "markdown", "families"]



@dataclass(frozen=True)
class Entry:
    """What the reference says of one metric besides the registry: formula and citation (the peers
    it equals: :func:`.peers.claims`)."""

    formula: str                      # LaTeX, without $ delimiters
    citation: str


_P = Entry(r"P@k = \frac{|L_u^k \cap R_u|}{k}", "Valcarce et al. 2018, Eq. 1; trec_eval m_P.c")
ENTRIES: dict[str, Entry] = {
    "P": _P,
    "Recall": Entry(r"Recall@k = \frac{|L_u^k \cap R_u|}{|R_u|}", "Valcarce et al. 2018, Eq. 2; trec_eval m_recall.c"),
    "F1": Entry(r"F_1@k = \frac{2\,P@k\,Recall@k}{P@k + Recall@k}", "Valcarce et al. 2020, Eq. 3"),
    "AP": Entry(r"AP@k = \frac{1}{|R_u|}\sum_{i=1}^{k} \mathrm{rel}(L_u[i])\,P@i",
                "Valcarce et al. 2018, Eq. 4; trec_eval m_map_cut.c"),
    "nDCG": Entry(r"nDCG@k = \frac{\sum_{i=1}^{k} g(L_u[i]) / \log_2(i+1)}{\sum_{i=1}^{k} g(I_u[i]) / \log_2(i+1)},"
                  r"\ g = r \text{ (every positive grade)}, I_u \text{ the user's judgments by grade}",
                  "Järvelin & Kekäläinen 2002; Valcarce et al. 2018, Eq. 5; trec_eval m_ndcg_cut.c"),
    "RR": Entry(r"RR@k = \frac{1}{\min\{i \le k : L_u[i] \in R_u\}} \text{ (0 if none)}",
                "Voorhees 1999; Valcarce et al. 2018, Eq. 6; trec_eval m_recip_rank.c"),
    "ERR": Entry(r"ERR@k = \sum_{i=1}^{k} \frac{1}{i} R_i \prod_{j<i} (1 - R_j),\ R_i = \frac{2^{r(L_u[i])} - 1}{2^{r_{max}}}",
                 "Chapelle et al. 2009; Valcarce et al. 2020, Eq. 7-8"),
    "bpref": Entry(r"bpref = \frac{1}{|R_u|}\sum_{i \in R_u \cap L_u^k}\Big(1 - \frac{\min(|\{n \in N_u \text{ above } i\}|, |R_u|)}"
                   r"{\min(|R_u|, |N_u|)}\Big)", "Buckley & Voorhees 2004; Valcarce et al. 2018, Eq. 9; trec_eval m_bpref.c"),
    "infAP": Entry(r"infAP = \frac{1}{|R_u|}\sum_{i \in R_u \cap L_u^k}\Big(\frac{1}{i} + \frac{i-1}{i}\,\frac{|J_{<i}|}{i-1}\,"
                   r"\frac{|rel_{<i}| + \epsilon}{|rel_{<i}| + |nonrel_{<i}| + 2\epsilon}\Big)",
                   "Yilmaz & Aslam 2006; Valcarce et al. 2018, Eq. 10-11; trec_eval m_infAP.c"),
    "Rprec": Entry(r"Rprec = \frac{|L_u^{|R_u|} \cap R_u|}{|R_u|}", "trec_eval m_Rprec.c"),
    "success": Entry(r"success@k = [\,L_u^k \cap R_u \ne \emptyset\,]", "trec_eval m_success.c"),
    "num_ret": Entry(r"|L_u^k|", "trec_eval m_num_ret.c"),
    "num_rel": Entry(r"|R_u|", "trec_eval m_num_rel.c"),
    "num_rel_ret": Entry(r"|L_u^k \cap R_u|", "trec_eval m_num_rel_ret.c (Hits@k)"),
    "fallout": Entry(r"\frac{fp}{fp + tn}", "Schröder et al. 2011, §4.1"),
    "missrate": Entry(r"\frac{fn}{tp + fn}", "Schröder et al. 2011, §4.1"),
    "inverse_precision": Entry(r"\frac{tn}{fn + tn}", "Schröder et al. 2011, §4.1; Powers 2011"),
    "inverse_recall": Entry(r"\frac{tn}{fp + tn}", "Schröder et al. 2011, §4.1; Powers 2011"),
    "Fbeta": Entry(r"F_\beta = \frac{(1+\beta^2)\,P\,R}{\beta^2 P + R}", "van Rijsbergen 1979; Schröder et al. 2011"),
    "markedness": Entry(r"P + \text{inverse }P - 1", "Powers 2011; Schröder et al. 2011, §4.2"),
    "informedness": Entry(r"R + \text{inverse }R - 1", "Powers 2011; Schröder et al. 2011, §4.2"),
    "MCC": Entry(r"\pm\sqrt{\text{informedness} \cdot \text{markedness}}", "Matthews 1975; Schröder et al. 2011, §4.2"),
    "AUC": Entry(r"\frac{1}{|R_u||N_u|}\sum_{i \in R_u}\sum_{n \in N_u} [\,i \text{ above } n\,] + \tfrac{1}{2}[\text{tie}]",
                 "Hanley & McNeil 1982; Schröder et al. 2011, §5.1"),
    "LAUC": Entry(r"\text{area under the ROC of } L_u^k \text{, then a line to } (1,1)", "Schröder et al. 2011, §5.2"),
    "BKTau": Entry(r"\tau_b \text{ of the partial ranking of } L_u^k \text{ vs. relevant/irrelevant}",
                   "Kendall 1945; Schröder et al. 2011, §4.3"),
    "MAE": Entry(r"\frac{1}{|T_u|}\sum_{i \in T_u} |\hat r(i) - r(i)|", "Schröder et al. 2011, §3; Herlocker et al. 2004"),
    "MSE": Entry(r"\frac{1}{|T_u|}\sum_{i \in T_u} (\hat r(i) - r(i))^2", "Schröder et al. 2011, §3"),
    "RMSE": Entry(r"\sqrt{MSE}", "Schröder et al. 2011, §3"),
    "NMAE": Entry(r"\frac{MAE}{r_{max} - r_{min}}", "Goldberg et al. 2001; Schröder et al. 2011, §3"),
    "ab-nDCG": Entry(r"\frac{\sum_{i \le k} \sum_\phi \gamma_\phi\, g_\phi(i) / \log_2(i+1)}{\text{the same for the greedy ideal}}"
                     r",\ g_\phi \text{ with } \alpha \text{ (unrated) and } \beta \text{ (rated) redundancy}",
                     "Parapar & Radlinski 2021, Eq. 4-16"),
    "a-nDCG": Entry(r"\frac{\sum_{i \le k} \sum_\phi J_\phi(i)(1-\alpha)^{c_\phi(i)} / \log_2(i+1)}{\text{greedy ideal}}",
                    "Clarke et al. 2008"),
    "NRBP": Entry(r"\frac{1-(1-\alpha)\beta}{N}\sum_i \beta^{i-1}\sum_\phi J_\phi(i)(1-\alpha)^{c_\phi(i)}", "Clarke et al. 2009"),
    "S-Recall": Entry(r"\frac{|\bigcup_{i \le k} \Phi(L_u[i])|}{|\Phi_u|}", "Zhai et al. 2003"),
    "S-RR": Entry(r"\frac{1}{\min\{i : \bigcup_{j \le i} \Phi(L_u[j]) = \Phi_u\}}", "Zhai et al. 2003"),
    "ERR-IA": Entry(r"\sum_\phi \gamma_\phi\, ERR_\phi@k", "Chapelle et al. 2009; Agrawal et al. 2009"),
    "P-IA": Entry(r"\sum_\phi \gamma_\phi\, P_\phi@k", "Agrawal et al. 2009"),
    "nDCG-IA": Entry(r"\sum_\phi \gamma_\phi\, nDCG_\phi@k", "Agrawal et al. 2009"),
    "EU": Entry(r"\sum_i p^{i-1}\Big(\sum_\phi \gamma_\phi\, g_\phi(i)(1-\alpha)^{c_\phi(i)} - e\Big) \text{ (reconstruction)}",
                "Yang & Lad 2009; Amigó et al. 2018"),
    "RBU": Entry(r"\sum_i p^{i-1}\Big(\sum_\phi \gamma_\phi\, g_\phi(i) \prod_{j<i}(1 - g_\phi(j)) - e\Big)", "Amigó et al. 2018"),
    "ItemCoverage": Entry(r"\frac{|\bigcup_u L_u^k|}{|I|}", "Ge et al. 2010; Elliot, RecBole"),
    "UserCoverage": Entry(r"\frac{|\{u : |L_u| \ge k\}|}{|U|}", "Ge et al. 2010; Elliot"),
    "Gini": Entry(r"\frac{1}{|I|-1}\sum_{j=1}^{|I|}(2j - |I| - 1)\,p_{(j)}", "Fleder & Hosanagar 2009; RankSys and Elliot report 1 − G, RecBole divides by n"),
    "Entropy": Entry(r"-\sum_i p_i \log_2 p_i", "Shannon 1948; RankSys, Elliot (RecBole: ln, over the distinct items)"),
    "ARP": Entry(r"\frac{1}{|L_u^k|}\sum_{i \in L_u^k} \phi(i)", "Yin et al. 2012; Elliot bias/arp"),
    "APLT": Entry(r"\frac{|L_u^k \cap \Gamma|}{|L_u^k|}", "Abdollahpouri, Burke & Mobasher, RecSys 2017; Elliot bias/aplt"),
    "ACLT": Entry(r"|L_u^k \cap \Gamma|", "Abdollahpouri et al. 2019; Elliot"),
    "EPC": Entry(r"C\sum_{i \le k} \mathrm{disc}(i)\,\mathrm{rel}(i)\,(1 - p(\text{seen}|L_u[i]))", "Vargas & Castells 2011"),
    "EFD": Entry(r"C\sum_{i \le k} \mathrm{disc}(i)\,\mathrm{rel}(i)\,(-\log_2 p(L_u[i]|\text{seen})),\ "
                 r"p(i|\text{seen}) = \frac{\phi(i)}{\sum_j \phi(j)}",
                 "Vargas & Castells 2011; RankSys FDItemNovelty, Elliot novelty/EFD"),
    "PopRSP": Entry(r"\frac{\mathrm{std}(P(R@k|\text{head}), P(R@k|\text{tail}))}{\mathrm{mean}(\cdot)}", "Zhu, Wang & Caverlee, SIGIR 2020; Elliot"),
    "PopREO": Entry(r"\frac{\mathrm{std}(P(R@k|\text{head}, \mathrm{rel}), P(R@k|\text{tail}, \mathrm{rel}))}{\mathrm{mean}(\cdot)}",
                    "Zhu, Wang & Caverlee, SIGIR 2020; Elliot"),
    "ILD": Entry(r"\frac{2}{|L|(|L|-1)}\sum_{i<j} d(\Phi(i), \Phi(j))", "Smyth & McClave 2001; RankSys EILD"),
    "DCG": Entry(r"\sum_{i=1}^{k} g(L_u[i]) / \log_2(i+1),\ g = r \text{ or } 2^r - 1 \text{ (dcg='exp-log2')}",
                 "Järvelin & Kekäläinen 2002; Burges et al. 2005 (exponential gain)"),
    "IPrec": Entry(r"\max\{P@j : Recall@j \ge x\}", "trec_eval m_iprec_at_recall.c"),
    "IPrec_avg": Entry(r"\frac{1}{11}\sum_{x \in \{0, 0.1, \dots, 1\}} IPrec@x", "trec_eval m_11pt_avg.c"),
    "Rprec_mult": Entry(r"P@\lfloor m|R_u| + 0.9 \rfloor", "trec_eval m_Rprec_mult.c"),
    "relative_P": Entry(r"\frac{|L_u^k \cap R_u|}{\min(k, |R_u|)}", "trec_eval m_rel_P.c"),
    "set_P": Entry(r"\frac{|L_u \cap R_u|}{|L_u|}", "trec_eval m_set_P.c"),
    "set_recall": Entry(r"\frac{|L_u \cap R_u|}{|R_u|}", "trec_eval m_set_recall.c"),
    "set_relative_P": Entry(r"\frac{|L_u \cap R_u|}{\min(|L_u|, |R_u|)}", "trec_eval m_set_rel_P.c"),
    "set_map": Entry(r"\frac{|L_u \cap R_u|^2}{|L_u|\,|R_u|}", "trec_eval m_set_map.c"),
    "set_F": Entry(r"\frac{(x+1)\,P\,R}{x\,P + R} \text{ over the whole list}", "trec_eval m_set_F.c"),
    "utility": Entry(r"a\,|rel\ ret| + b\,|nonrel\ ret| + c\,|rel\ missed| + d\,|nonrel\ missed|",
                     "trec_eval m_utility.c"),
    "binG": Entry(r"\frac{1}{|R_u|}\sum_{i \in R_u \cap L_u} \frac{1}{\log_2(2 + |N_u \text{ above } i|)}",
                  "trec_eval m_binG.c"),
    "G": Entry(r"\text{gain over } \log_2(2 + \text{ideal cost} - \text{gain so far}) \text{ (Kekäläinen)}",
               "trec_eval m_G.c"),
    "nDCG_rel": Entry(r"\frac{1}{|R_u|}\sum_{i \in R_u} nDCG@\mathrm{rank}(i)", "trec_eval m_ndcg_rel.c"),
    "Rndcg": Entry(r"\text{nDCG averaged at the R levels of the ideal gain}", "trec_eval m_Rndcg.c"),
    "num_nonrel_judged_ret": Entry(r"|L_u^k \cap N_u|", "trec_eval m_num_nonrel_judged_ret.c"),
    "unj": Entry(r"\frac{|\{i \in L_u^k : i \text{ unjudged}\}|}{k}", "trec_eval m_unjudged.c"),
    "Judged": Entry(r"\frac{|\{i \in L_u^k : i \text{ judged}\}|}{\min(k, |L_u|)}", "ir_measures Judged@k"),
    "RBP": Entry(r"(1-p)\sum_{i} g(L_u[i])\,p^{i-1}", "Moffat & Zobel 2008; trec_eval m_rbp.c"),
    "RBP_resid": Entry(r"p^{|L_u|} + (1-p)\sum_{i \text{ unjudged}} p^{i-1} \text{ (what the unjudged could add)}",
                       "Moffat & Zobel 2008; trec_eval m_rbp.c"),
}


def entry(name: str) -> Entry:
    """The reference entry of a registered metric (by any of its names)."""
    from .registry import get

    return ENTRIES[get(name).name]


def families() -> list[str]:
    """The metric families in registration order."""
    from .registry import get, names

    return list(dict.fromkeys(get(n).family for n in names()))


def _rows(name: str) -> list[tuple[str, str]]:
    from .registry import get

    d, e = get(name), entry(name)
    params = ", ".join(f"{k}={v!r}" for k, v in d.params.items()) or "none"
    from .peers import checks, claims

    equals = claims(name)
    tests = sorted({c.test for c in checks(metric=name)})
    rows = [("description", d.description), ("formula", e.formula), ("citation", e.citation),
            ("cut-off", d.cutoff), ("parameters", params), ("range", f"[{d.bounds[0]:g}, {d.bounds[1]:g}]"),
            ("scope", "one value per run (no user aggregation)" if d.scope == "run" else "per user, aggregated over users")]
    if d.needs or d.optional:
        rows.append(("needs", ", ".join([f"{n}= (required)" for n in d.needs] + [f"{n}= (for some parameters)" for n in d.optional if n not in d.needs_any]
                                  + ([" or ".join(f"{n}=" for n in d.needs_any) + " (required)"] if d.needs_any else []))))
    rows.append(("equals", (", ".join(equals) + f" (per user, checked by {'; '.join(tests)})") if equals else "—"))
    return rows


def describe(name: str) -> str:
    """One metric as plain text (what ``recmetrics metrics NAME`` prints).

    >>> print(describe("P").splitlines()[0])
    P — Precision@k: relevant items in the top k divided by k (Eq. 1)
    """
    from .registry import get

    d = get(name)
    rows = _rows(name)[1:]
    width = max(len(k) for k, _ in rows)
    return "\n".join([f"{d.name} — {d.description}"] + [f"  {k:<{width}}  {v}" for k, v in rows])


def markdown(family: str, results: Mapping | None = None) -> str:
    """A family of metrics as a Markdown (MyST) page: one section per metric.

    ``results`` (optional, from :func:`recmetrics.report.results.load`): ``{"axioms": {metric:
    {axiom: verdict}}, "dp": {dataset: {metric: DP}}, "robustness": {dataset: {metric: mean τ}}}``
    as the chapters computed them; the metric's rows are added where present, each labelled with
    ``results["context"][kind][dataset]`` when that is a string (what the value was computed with:
    cut-off, systems, profile, chapter).
    """
    from .registry import get, names

    results = results or {}
    defs = [d for d in map(get, names()) if d.family == family]
    if not defs:
        raise KeyError(family)
    out = [f"# {family.capitalize()} metrics", ""]
    for d in defs:
        out += [f"## {d.name}", "", "| | |", "|---|---|"]
        for k, v in _rows(d.name):
            v = f"${v.replace('|', chr(92) + 'vert ')}$" if k == "formula" else str(v).replace("|", "\\|")
            out.append(f"| {k} | {v} |")
        ax = results.get("axioms", {}).get(d.name)
        if ax:
            out.append("| axioms (chapter 3) | " + ", ".join(f"{a}: {v}" for a, v in ax.items()) + " |")
        for kind, label in (("dp", "discriminative power (DP, lower = more discriminative)"),
                            ("robustness", "robustness (mean τ over the reduced sizes)")):
            for dataset, values in sorted(results.get(kind, {}).items()):
                if d.name in values:
                    ctx = results.get("context", {}).get(kind, {}).get(dataset)
                    where = f" ({ctx})" if isinstance(ctx, str) and ctx else ""
                    out.append(f"| {label}, {dataset}{where} | {values[d.name]:.4g} |")
        out.append("")
    return "\n".join(out)
