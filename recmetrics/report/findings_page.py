"""The book's Findings page, gathered from the JSON every chapter wrote.

:func:`write_findings_page` writes ``generated/99_findings.md``: every claim a chapter tested
(``generated/findings/*.json``, written by :func:`recmetrics.meta.findings.save`), grouped by
paper, each row with

* a link to where the chapter computes it: the section the chapter named with
  ``findings.save(..., section=label)`` (a MyST target above its heading), else the claim's row in
  the chapter's claims table (``findings.to_markdown`` gives each row an anchor,
  :func:`recmetrics.meta.findings.claim_anchor`);
* the dataset and report profile it was computed with (from the row, else from the parameters the
  chapter ran with: the table :func:`recmetrics.report.show_parameters` put under its title);
* a visible warning when the profile is not ``paper``: the quick profile's set-up (a few systems,
  folds, samples and permutations) is too small to decide the papers' claims;
* the paper's evidence, ours, and the verdict.

Within a paper the rows are grouped by chapter (one ``<tbody>`` each): the group's head row states
the chapter, the set-up and the deviations from the paper its rows share, once; a row states only
the set-up entries and deviations particular to it.

Each verdict carries its firmness (:mod:`recmetrics.meta.firmness`): the chance that another split
of the same data reads it the same; below :data:`recmetrics.meta.firmness.FIRM` it is shown as
borderline ("another split may read this differently").

Above the tables, the count of each verdict (:data:`recmetrics.meta.findings.VERDICTS`) and of the
firm and borderline verdicts, each with a check box that shows or hides its rows: a few lines of
plain JavaScript inside the page (no library, no network).
"""
from __future__ import annotations

import ast
import html
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Mapping

from ..meta.findings import split_deviations
from ..meta.firmness import BORDERLINE, FIRM, UNKNOWN, firm_label, firm_reading

#: the papers by the id their claims carry (the project's ``papers/`` file prefix): (heading, citation)
PAPERS: dict[str, tuple[str, str]] = {
    "000": ("Valcarce et al., IRJ 2020",
            "Valcarce, Bellogín, Parapar, Castells. *Assessing ranking metrics in top-N recommendation.* "
            "Information Retrieval Journal 23(4), 2020."),
    "001": ("Schröder et al., RecSys 2011 workshop",
            "Schröder, Thiele, Lehner. *Setting Goals and Choosing Metrics for Recommender System "
            "Evaluations.* UCERSTI 2 workshop, RecSys 2011."),
    "002": ("Parapar & Radlinski, RecSys 2021",
            "Parapar, Radlinski. *Towards Unified Metrics for Accuracy and Diversity for Recommender "
            "Systems.* RecSys 2021."),
    "003": ("Valcarce et al., RecSys 2018",
            "Valcarce, Bellogín, Parapar, Castells. *On the Robustness and Discriminative Power of IR "
            "Metrics for Top-N Recommendation.* RecSys 2018."),
    "004": ("Bellogín, PhD thesis 2012, ch. 4",
            "Bellogín. PhD thesis, Universidad Autónoma de Madrid, 2012, chapter 4: *Ranking-based evaluation "
            "of recommender systems: experimental designs and biases.*"),
    "zoo": ("Sanity checks of the recommender zoo",
            "Expectations the book checks before it trusts finer comparisons; not claims of the papers."),
    "project": ("The project's own checks",
                "Identities the project derives from a paper's definitions and checks on data (chapter 04: "
                "Schröder et al.'s metrics at catalogue scale); the papers state none of them, so they are not "
                "counted as the papers' claims."),
}


def paper_key(paper: Any) -> str:
    """The paper a row belongs to: its leading three-digit id (``"001 Schröder et al. (2011)"`` ->
    ``"001"``), else the value itself."""
    text = _text(paper).strip()
    m = re.match(r"(\d{3})(?!\d)", text)
    return m.group(1) if m else text


#: the set-up entries shown with each row: (row/context keys, chapter parameter keys, label; "{}" the value)
_SETUP = (
    (("systems", "n_systems"), ("n_systems", "systems"), "{} systems"),
    (("folds",), ("folds",), "{} folds"),
    (("repeats",), ("repeats",), "split drawn {} times"),   # repeated cross-validation or holdout (shown above 1)
    (("samples", "n_samples"), ("n_samples", "n_removals"), "{} samples"),
    (("permutations", "n_permutations"), ("n_permutations",), "{} permutations"),
    (("users",), ("users", "n_users"), "{} users"),
    (("bootstrap", "n_bootstrap"), ("n_bootstrap",), "{} bootstrap replicates"),
    (("replicates",), ("replicates",), "{} replicates"),   # the data split's replicates behind the verdict
    (("seed",), ("seed",), "split seed {}"),
)

_PARAM_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`(.*)`\s*\|\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_TARGET = re.compile(r"^\(([A-Za-z0-9][A-Za-z0-9_.:-]*)\)=\s*$")
_ANCHOR = re.compile(r"""id=["'](claim-[A-Za-z0-9_-]+)["']""")


def _text(value: Any) -> str:
    """A row value as display text ('' for missing, NaN or None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _inline(text: str) -> str:
    """Escaped HTML of ``text`` with its `code spans` and *emphasis* kept."""
    parts = str(text).split("`")
    out = []
    for i, part in enumerate(parts):
        if i % 2 and i < len(parts) - 1:
            out.append(f"<code>{html.escape(part)}</code>")
        else:
            esc = html.escape(part if i % 2 == 0 else "`" + part)
            out.append(re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"<em>\1</em>", esc))
    return "".join(out)


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def chapter_info(notebook: str | os.PathLike) -> dict[str, Any]:
    """What the Findings page needs from an executed chapter: its title, the parameters it ran
    with, the title of every labelled section, and the section each claim row is shown in.

    Returns ``{"title", "parameters", "labels": {label: section title},
    "anchors": {claim anchor: section title}}``; empty entries when the notebook is missing.
    """
    info: dict[str, Any] = {"title": None, "parameters": {}, "labels": {}, "anchors": {}}
    path = Path(notebook)
    if not path.is_file():
        return info
    nb = json.loads(path.read_text(encoding="utf-8"))
    papermill = nb.get("metadata", {}).get("papermill", {}).get("parameters", {})
    info["parameters"].update(papermill if isinstance(papermill, dict) else {})
    section, pending = None, []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            tags = cell.get("metadata", {}).get("tags", [])
            lines = _source(cell).splitlines()
            if "recmetrics-parameters" in tags:
                for line in lines:
                    m = _PARAM_ROW.match(line)
                    if m:
                        try:
                            info["parameters"][m.group(1)] = ast.literal_eval(m.group(2))
                        except (ValueError, SyntaxError):
                            info["parameters"][m.group(1)] = m.group(2)
                continue
            fence = False
            for line in lines:
                if line.lstrip().startswith(("```", "~~~")):
                    fence = not fence
                if fence:
                    continue
                target, heading = _TARGET.match(line.strip()), _HEADING.match(line)
                if target:
                    pending.append(target.group(1))
                elif heading:
                    title = heading.group(2)
                    if len(heading.group(1)) == 1 and info["title"] is None:
                        info["title"] = title
                    section = title
                    for label in pending:
                        info["labels"][label] = title
                    pending = []
                elif line.strip():
                    pending = []
        elif cell.get("cell_type") == "code":
            for out in cell.get("outputs", []):
                for mime in ("text/markdown", "text/html"):
                    data = out.get("data", {}).get(mime, "")
                    data = "".join(data) if isinstance(data, list) else data
                    for anchor in _ANCHOR.findall(data):
                        info["anchors"].setdefault(anchor, section)
    return info


def _setup(row: Mapping[str, Any], params: Mapping[str, Any]) -> list[str]:
    """``["6 systems", "1 fold", ..., "10 replicates", "split seed 0"]`` from the row's context, else the
    chapter's parameters."""
    shown = []
    for row_keys, param_keys, label in _SETUP:
        value = next((row[k] for k in row_keys if _text(row.get(k))), None)
        if value is None:
            value = next((params[k] for k in param_keys if params.get(k) is not None), None)
        if isinstance(value, (list, tuple)):
            value = len(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            if "drawn" in label and value == 1:     # a split drawn once is the usual case: nothing to say
                continue
            text = label.format(f"{value:,}")
            shown.append(text[:-1] if value == 1 and text.endswith("s") else text)   # "1 fold"
    return shown


def _setup_lines(row: Mapping[str, Any], info: Mapping[str, Any]) -> list[str]:
    """The set-up of a row as display lines: dataset, profile, tie-break, the counts."""
    params = info["parameters"]
    dataset = _text(row.get("dataset")) or _text(params.get("dataset"))
    profile = _text(row.get("profile")) or _text(params.get("profile"))
    lines = [f"dataset <code>{html.escape(dataset or 'unknown')}</code>",
             f"profile <code>{html.escape(profile or 'unknown')}</code>"]
    if _text(row.get("tie_break")) not in ("", "n/a"):
        lines.append(f"tie-break <code>{html.escape(_text(row['tie_break']))}</code>")
    lines += [html.escape(s) for s in _setup(row, params)]
    return lines


def _profile(row: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    return _text(row.get("profile")) or _text(info["parameters"].get("profile"))


def _small_warning(profile: str) -> str:
    return (f'<span class="rm-small-profile" title="a set-up too small to decide the claim: the verdict is '
            f'provisional; build the book with --profile paper">⚠ {html.escape(profile)} profile: '
            f"too small to decide</span>")


def _common(lists: list[list[str]]) -> list[str]:
    """The entries every list holds, in the first list's order."""
    return [x for x in lists[0] if all(x in other for other in lists[1:])] if lists else []


def _group_html(rows: list[Mapping[str, Any]], chapter: str, info: Mapping[str, Any],
                anchors: list[str]) -> tuple[str, int]:
    """One ``<tbody>`` per chapter of a paper: a head row stating the chapter, the set-up and the
    deviations its rows share, once; then one row per claim with only what is particular to it.
    Returns the HTML and how many rows carry the small-profile warning."""
    setups = [_setup_lines(r, info) for r in rows]
    devs = [split_deviations(r.get("deviations")) for r in rows]
    shared_setup, shared_devs = _common(setups), _common(devs)
    profiles = {_profile(r, info) for r in rows}
    title = info["title"] or chapter
    head = [f'<a href="{html.escape(chapter)}.html">{_inline(title)}</a>']
    if shared_setup:
        head.append("set-up: " + ", ".join(shared_setup))
    small = sorted(p for p in profiles if p not in ("", "paper"))
    if len(profiles) == 1 and small:
        head.append(_small_warning(small[0]))
    if shared_devs:
        head.append('<span class="rm-deviations">Set-up differs from the paper: '
                    + "; ".join(_inline(d) for d in shared_devs) + "</span>")
    trs = [f'<tr class="rm-findings-group-head"><th colspan="5">{"<br>".join(head)}</th></tr>']
    n_small = 0
    for row, setup, dev, anchor in zip(rows, setups, devs, anchors):
        section = _text(row.get("section"))
        target = section or anchor
        where = info["labels"].get(section) if section else info["anchors"].get(anchor)
        found = (section in info["labels"]) if section else (anchor in info["anchors"])
        href = f"{chapter}.html" + (f"#{target}" if found else "")
        link = f'<a href="{html.escape(href)}">§ {_inline(where or title)}</a>'
        own = [x for x in setup if x not in shared_setup]
        profile = _profile(row, info)
        is_small = profile not in ("", "paper")
        n_small += is_small
        if own:
            link += "<br><small>" + ", ".join(own) + "</small>"
        if is_small and len(profiles) > 1:
            link += "<br>" + _small_warning(profile)
        ours = _inline(_text(row.get("our_evidence")))
        extra = [d for d in dev if d not in shared_devs]
        if extra:
            ours += ('<br><span class="rm-deviations">Also differs from the paper: '
                     + "; ".join(_inline(d) for d in extra) + "</span>")
        verdict = _text(row.get("verdict"))
        firm = firm_label(row.get("firmness"), _text(row.get("firmness_basis")))
        cells = [
            f'{_inline(_text(row.get("claim")))}<br><small><code>{html.escape(_text(row.get("id")))}</code></small>',
            link,
            _inline(_text(row.get("paper_evidence"))),
            ours,
            f'<span class="rm-verdict rm-verdict-{_slug(verdict)}">{html.escape(verdict)}</span>'
            + firmness_html(row.get("firmness"), row.get("firmness_basis")) + _replicated_html(row),
        ]
        klass = ' class="rm-small"' if is_small else ""
        trs.append(f'<tr data-verdict="{html.escape(verdict)}" data-firm="{firm or "unknown"}"{klass}>'
                   + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f'<tbody class="rm-findings-group" data-chapter="{html.escape(chapter)}">{"".join(trs)}</tbody>', n_small


def _firm_labels(table):
    """Each row's firmness label (:func:`recmetrics.meta.firmness.firm_label`), from its figure and basis."""
    import pandas as pd

    bases = table["firmness_basis"] if "firmness_basis" in table else [""] * len(table)
    return pd.Series([firm_label(v, _text(b)) for v, b in zip(table["firmness"], bases)], index=table.index)


def firmness_html(value: Any, basis: Any = "") -> str:
    """The firmness under a verdict: ``firm 0.97`` (``firm exact values``), or ``borderline 0.62``
    with the words :data:`recmetrics.meta.firmness.BORDERLINE`; ``""`` when not computed."""
    basis = _text(basis)
    label, how = firm_reading(value, basis)
    if not label:
        return ""
    title = ("the share of replays, each estimate redrawn as another split of the data would read it, that "
             "give this verdict" if basis in ("", "simulated") else
             "it rests on a comparison whose uncertainty this split cannot estimate" if basis == UNKNOWN
             else f"firm by construction: {basis}")
    words = f": {BORDERLINE}" if label == "borderline" else ""
    return (f'<br><small class="rm-firmness rm-{label}" title="{html.escape(title)}">{label} '
            f"{html.escape(how)}{html.escape(words)}</small>")


def _replicated_html(row: Mapping[str, Any]) -> str:
    """Under the verdict of a replicated build: each seed's verdict and the replicated one."""
    by_seed = row.get("seed_verdicts")
    if not isinstance(by_seed, dict) or not by_seed:
        return ""
    seeds = ", ".join(f"{html.escape(str(k))}: {html.escape(str(v))}" for k, v in by_seed.items())
    rep = _text(row.get("replicated"))
    words = f" ({BORDERLINE})" if rep == "borderline" else ""
    return (f'<br><small class="rm-replicated">by split seed — {seeds}; replicated: '
            f'<strong>{html.escape(rep)}</strong>{html.escape(words)}</small>')


def _with_seeds(table, generated: Path):
    """``table`` with each row's verdict under every seed of a replicated build (``seed_verdicts``,
    the book's own seed first) and the replicated verdict (:func:`.stability.replicated_verdict`);
    unchanged when the build was not replicated. Returns ``(table, seeds)``."""
    from .stability import replicated_verdict, verdicts_by_seed

    folders = sorted((generated / "replicated").glob("seed-*"), key=lambda d: int(d.name[5:]))
    if not folders:
        return table, []
    own = sorted({str(s) for s in table["seed"].dropna()}) if "seed" in table else []
    own_label = own[0] if len(own) == 1 else "this book"
    v = verdicts_by_seed({own_label: generated / "findings", **{d.name[5:]: d for d in folders}})
    occurrence = table.groupby(["chapter", "id"]).cumcount()
    rows = [v.loc[key].dropna().to_dict() if key in v.index else {}
            for key in zip(table["chapter"], table["id"], occurrence)]
    table = table.assign(seed_verdicts=rows, replicated=[replicated_verdict(r.values()) if r else "" for r in rows])
    return table, list(v.columns)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


_HEAD = ("<thead><tr><th>claim</th><th>computed in</th><th>paper's evidence</th>"
         "<th>our evidence</th><th>verdict</th></tr></thead>")

_SCRIPT = """<script>
/* recmetrics Findings page: show or hide the rows of each verdict (plain JavaScript, no network). */
(function () {
  var root = document.currentScript.closest("article") || document;
  function update() {
    var shown = {}, firm = {};
    root.querySelectorAll(".rm-findings-filter input[data-verdict]").forEach(function (box) {
      shown[box.getAttribute("data-verdict")] = box.checked;
    });
    root.querySelectorAll(".rm-findings-filter input[data-firm]").forEach(function (box) {
      firm[box.getAttribute("data-firm")] = box.checked;
    });
    root.querySelectorAll("table.rm-findings").forEach(function (table) {
      var visible = 0;
      table.querySelectorAll("tbody tr[data-verdict]").forEach(function (tr) {
        var on = shown[tr.getAttribute("data-verdict")] !== false && firm[tr.getAttribute("data-firm")] !== false;
        tr.hidden = !on;
        tr.style.display = on ? "" : "none";
        if (on) { visible += 1; }
      });
      table.querySelectorAll("tbody.rm-findings-group").forEach(function (group) {
        var any = group.querySelector("tr[data-verdict]:not([hidden])") !== null;
        var head = group.querySelector("tr.rm-findings-group-head");
        if (head) { head.hidden = !any; head.style.display = any ? "" : "none"; }
      });
      var empty = table.parentNode.querySelector(".rm-findings-empty");
      if (empty) { empty.hidden = visible > 0; }
      var count = table.parentNode.querySelector(".rm-findings-shown");
      if (count) { count.textContent = String(visible); }
    });
  }
  root.querySelectorAll(".rm-findings-filter input").forEach(function (box) {
    box.addEventListener("change", update);
  });
  update();
})();
</script>"""


def _raw(block: str) -> list[str]:
    return ["```{raw} html", block, "```", ""]


def build_findings(generated_dir: str | os.PathLike, keys: Mapping[str, str | None] | None = None):
    """The findings of ``generated/findings/`` as one table (:func:`recmetrics.meta.findings.collect`).
    With ``keys`` (``{chapter: content key}`` of the chapters a build put in its book) only the files
    those chapters committed under those keys (their manifests, :mod:`.outputs`): never a file another
    build, an older run of a chapter, or a chapter outside the book left in the folder."""
    from ..meta import findings
    from .outputs import committed

    generated = Path(generated_dir)
    names = None if keys is None else committed(generated, keys, "findings")
    return findings.collect(generated / "findings", names=names)


def write_findings_page(generated_dir: str | os.PathLike, keys: Mapping[str, str | None] | None = None
                        ) -> Path | None:
    """Gather the chapters' saved findings (``generated/findings/*.json``, written by the notebooks
    through :func:`recmetrics.meta.findings.save`; with ``keys``, only those of the build's chapters
    under its keys, :func:`build_findings`) into the book page ``generated/99_findings.md`` (see the
    module docstring); removes a stale page when there are none."""
    from ..meta import findings

    generated = Path(generated_dir)
    page = generated / "99_findings.md"
    table = build_findings(generated, keys)
    if table.empty:
        page.unlink(missing_ok=True)
        return None
    table, seeds = _with_seeds(table, generated)
    counts = table.verdict.value_counts()
    verdicts = list(findings.VERDICTS) + sorted(set(table.verdict) - set(findings.VERDICTS))
    is_paper = table.paper.map(paper_key).str.fullmatch(r"\d{3}")
    paper_counts = table.verdict[is_paper].value_counts()
    summary = f"{int(is_paper.sum())} claims of the papers: " + ", ".join(
        f"{paper_counts.get(v, 0)} {v}" for v in verdicts)
    if "firmness" in table:
        labels = list(_firm_labels(table)[is_paper])
        firm_counts = {k: labels.count(k) for k in ("firm", "borderline")}
        summary += (f"; {firm_counts.get('firm', 0)} of them firm (another split of the data reads the same verdict "
                    f"with a chance of at least {FIRM:g}), {firm_counts.get('borderline', 0)} borderline")
    if seeds:
        rep = table.replicated[is_paper].value_counts()
        summary += (f"; replicated over split seeds {', '.join(seeds)}: "
                    + ", ".join(f"{rep.get(v, 0)} {v}" for v in [*verdicts, "borderline"] if rep.get(v, 0)))
    if not is_paper.all():
        own = table.verdict[~is_paper].value_counts()
        summary += f"; and {int((~is_paper).sum())} of the project's own checks, not counted as the papers' claims: " \
            + ", ".join(f"{own.get(v, 0)} {v}" for v in verdicts if own.get(v, 0))

    infos = {ch: chapter_info(generated / f"{ch}.ipynb") for ch in table.chapter.unique()}
    anchors: dict[int, str] = {}
    for ch, group in table.groupby("chapter", sort=False):
        for i, a in zip(group.index, findings.row_anchors(group["id"])):
            anchors[i] = a

    keys = table.paper.map(paper_key)
    papers = sorted(keys.unique(), key=lambda p: (not p.isdigit(), p not in PAPERS, p))
    body: list[str] = []
    n_small = 0
    small_setups: dict[str, set[str]] = {}
    for paper in papers:
        rows = table[keys == paper]
        groups = []
        for chapter, group in rows.groupby("chapter", sort=False):
            info = infos[chapter]
            records = [r.to_dict() for _, r in group.iterrows()]
            tbody, small = _group_html(records, chapter, info, [anchors[i] for i in group.index])
            groups.append(tbody)
            n_small += small
            for record in records:
                prof = _profile(record, info)
                if prof not in ("", "paper"):
                    small_setups.setdefault(prof, set()).add(
                        (chapter, f"{info['title'] or chapter}: "
                         + (", ".join(_setup(record, info["parameters"]))
                            or f"the {prof} profile's parameters (shown under the chapter's title)")))
        pc = rows.verdict.value_counts()
        heading, citation = PAPERS.get(paper, (f"Paper {paper}", ""))
        body += [f"## {paper}: {heading}" if paper.isdigit() else f"## {heading}", ""]
        counted = ", ".join(f"{pc.get(v, 0)} {v}" for v in verdicts if pc.get(v, 0))
        body += [(citation + " " if citation else "") + f"{len(rows)} claims: {counted}.", ""]
        body += _raw(f'<div class="rm-findings-wrap" data-paper="{html.escape(paper)}">'
                     f'<p class="rm-findings-count"><span class="rm-findings-shown">{len(rows)}</span> of '
                     f"{len(rows)} shown</p>"
                     f'<table class="rm-findings">{_HEAD}{"".join(groups)}</table>'
                     '<p class="rm-findings-empty" hidden>No claim of this paper has the verdicts selected above.</p>'
                     "</div>")

    parts = ["# Findings: the papers' claims, tested", "",
             f"Every claim of the papers that a chapter tests, with the paper's evidence, the evidence computed "
             f"by that chapter for the dataset and profile it ran with, and the verdict its code gave "
             f"({summary}). Nothing on this page is typed by hand: it is gathered from the "
             f"JSON files the chapters wrote. *not testable* means the project's set-up cannot produce the "
             f"effect the claim is about (the evidence says why); *inconclusive* that it could, but the "
             f"evidence does not clear its uncertainty. Within each paper the claims are grouped by the chapter "
             f"that tests them: the group's first line states that chapter's set-up and where it differs from "
             f"the paper, once; a row adds only what is particular to it, and links to the section that "
             f"computes it.", ""]
    if n_small:
        lines = "\n".join(f"* {s}" for _, s in sorted(set().union(*small_setups.values())))
        profiles = ", ".join(f"`{p}`" for p in sorted(small_setups))
        parts += [":::{warning}",
                  f"{n_small} of the {len(table)} verdicts were computed with the {profiles} profile, whose set-up "
                  f"is too small to decide many of the papers' claims (few systems, folds, samples and "
                  f"permutations): read them as provisional, and build the book with `--profile paper` for the "
                  f"papers' settings. The set-ups used:", "", lines, ":::", ""]
    boxes = "".join(
        f'<label class="rm-verdict rm-verdict-{_slug(v)}"><input type="checkbox" data-verdict="{html.escape(v)}" '
        f'checked> {html.escape(v)} <span class="rm-findings-n">{counts.get(v, 0)}</span></label> '
        for v in verdicts)
    labels = list(_firm_labels(table)) if "firmness" in table else []
    firm_boxes = "".join(
        f'<label class="rm-firmness rm-{k}"><input type="checkbox" data-firm="{k}" checked> {k} '
        f'<span class="rm-findings-n">{labels.count(k)}</span></label> ' for k in ("firm", "borderline") if labels)
    parts += _raw(f'<div class="rm-findings-filter"><strong>Show verdicts:</strong> {boxes}'
                  + (f"<br><strong>Show:</strong> {firm_boxes}" if firm_boxes else "") + "</div>")
    parts += body
    parts += _raw(_SCRIPT)
    page.write_text("\n".join(parts), encoding="utf-8")
    return page


def _chapter_link(chapter: str, title: str) -> str:
    """``[6](generated/06_x "title")``: a short link to a chapter (its number), its title as the tooltip."""
    m = re.match(r"(\d+)_", chapter)
    label = str(int(m.group(1))) if m else chapter
    return f'[{label}](generated/{chapter} "{title.replace(chr(34), chr(39))}")'


def findings_glance(generated_dir: str | os.PathLike, keys: Mapping[str, str | None] | None = None) -> str:
    """The front page's "findings at a glance": per paper, how many of its claims got each verdict
    and the chapters that test them (linked), as a Markdown table for the introduction's MyST
    substitution ``{{ findings_glance }}``; computed from ``generated/findings/*.json`` at build time
    (with ``keys``, the build's own: :func:`build_findings`)."""
    from ..meta import findings

    generated = Path(generated_dir)
    table = build_findings(generated, keys)
    if table.empty:
        return "No chapter of this copy tested a claim of the papers."
    verdicts = list(findings.VERDICTS) + sorted(set(table.verdict) - set(findings.VERDICTS))
    keys = table.paper.map(paper_key)
    papers = sorted(keys.unique(), key=lambda p: (not p.isdigit(), p not in PAPERS, p))
    infos = {ch: chapter_info(generated / f"{ch}.ipynb") for ch in table.chapter.unique()}
    titles = {ch: info["title"] or ch for ch, info in infos.items()}
    firm = _firm_labels(table)
    lines = ["| paper (claims) | " + " | ".join(verdicts) + " | firm / border&shy;line | chapters |",
             "|---|" + "---:|" * (len(verdicts) + 1) + "---|"]
    for paper in papers:
        rows = table[keys == paper]
        counts = rows.verdict.value_counts()
        fc = firm[rows.index].value_counts()
        label = PAPERS.get(paper, (f"Paper {paper}", ""))[0]      # named (authors, venue, year), not numbered
        chapters = ", ".join(_chapter_link(ch, titles[ch]) for ch in sorted(rows.chapter.unique()))
        lines.append(f"| {label} ({len(rows)}) | " + " | ".join(str(counts.get(v, 0)) for v in verdicts)
                     + f" | {fc.get('firm', 0)} / {fc.get('borderline', 0)} | {chapters} |")
    profiles = {_profile(row, infos[row["chapter"]]) for row in table.to_dict("records")}
    lines += ["", f"*Firm*: another split of the same data reads the same verdict with a chance of at least "
                  f"{FIRM:g} (each verdict replayed with its estimates redrawn as another split would read them; "
                  f"identities and definitions are firm by construction); *borderline*: {BORDERLINE}. "
                  f"The [Findings page](generated/99_findings) lists all {len(table)} claims with the paper's "
                  "evidence, ours, where this copy's set-up differs from the paper's, and a link to the section "
                  "that computes each verdict."]
    if profiles - {"paper"}:
        lines[-1] += (" Verdicts computed with a profile other than `paper` are provisional: its set-up (few "
                      "systems, folds, samples, permutations) is too small to decide most claims.")
    return "\n".join(lines)
