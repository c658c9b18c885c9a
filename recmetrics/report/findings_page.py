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
* the paper's evidence, ours (with where the set-up differs from the paper's), and the verdict.

Above the tables, the count of each verdict (:data:`recmetrics.meta.findings.VERDICTS`) with a
check box that shows or hides its rows: a few lines of plain JavaScript inside the page (no
library, no network).
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
    "004": ("Bellogín, PhD thesis, ch. 4",
            "Bellogín. PhD thesis, chapter 4: *Ranking-based evaluation of recommender systems: "
            "experimental designs and biases.*"),
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
    """``["6 systems", "2 folds", ..., "10 replicates", "split seed 0"]`` from the row's context, else the
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
            shown.append(label.format(f"{value:,}"))
    return shown


def _row_html(row: Mapping[str, Any], chapter: str, info: Mapping[str, Any], anchor: str) -> tuple[str, bool]:
    """One ``<tr>`` of the page and whether it carries the small-profile warning."""
    params = info["parameters"]
    dataset = _text(row.get("dataset")) or _text(params.get("dataset"))
    profile = _text(row.get("profile")) or _text(params.get("profile"))
    section = _text(row.get("section"))
    target = section or anchor
    where = info["labels"].get(section) if section else info["anchors"].get(anchor)
    found = (section in info["labels"]) if section else (anchor in info["anchors"])
    href = f"{chapter}.html" + (f"#{target}" if found else "")
    title = info["title"] or chapter
    link = f'<a href="{html.escape(href)}">{_inline(title)}</a>'
    if where and where != title:
        link += f"<br><small>§ {_inline(where)}</small>"
    setup = _setup(row, params)
    lines = [f"dataset <code>{html.escape(dataset or 'unknown')}</code>",
             f"profile <code>{html.escape(profile or 'unknown')}</code>"]
    if _text(row.get("tie_break")) not in ("", "n/a"):
        lines.append(f"tie-break <code>{html.escape(_text(row['tie_break']))}</code>")
    small = profile not in ("", "paper")
    if setup:
        lines.append(html.escape(", ".join(setup)))
    if small:
        lines.append(f'<span class="rm-small-profile" title="a set-up too small to decide the claim: the verdict is '
                     f'provisional; build the book with --profile paper">⚠ {html.escape(profile)} profile: '
                     f"too small to decide</span>")
    ours = _inline(_text(row.get("our_evidence")))
    deviations = _text(row.get("deviations"))
    if deviations.strip():
        ours += f'<br><span class="rm-deviations">Set-up differs from the paper: {_inline(deviations)}</span>'
    verdict = _text(row.get("verdict"))
    claim_id = _text(row.get("id"))
    cells = [
        f'{_inline(_text(row.get("claim")))}<br><small><code>{html.escape(claim_id)}</code></small>',
        link,
        "<br>".join(lines),
        _inline(_text(row.get("paper_evidence"))),
        ours,
        f'<span class="rm-verdict rm-verdict-{_slug(verdict)}">{html.escape(verdict)}</span>',
    ]
    klass = ' class="rm-small"' if small else ""
    tr = (f'<tr data-verdict="{html.escape(verdict)}"{klass}>'
          + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return tr, small


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


_HEAD = ("<thead><tr><th>claim</th><th>computed in</th><th>set-up</th><th>paper's evidence</th>"
         "<th>our evidence</th><th>verdict</th></tr></thead>")

_SCRIPT = """<script>
/* recmetrics Findings page: show or hide the rows of each verdict (plain JavaScript, no network). */
(function () {
  var root = document.currentScript.closest("article") || document;
  function update() {
    var shown = {};
    root.querySelectorAll(".rm-findings-filter input[data-verdict]").forEach(function (box) {
      shown[box.getAttribute("data-verdict")] = box.checked;
    });
    root.querySelectorAll("table.rm-findings").forEach(function (table) {
      var visible = 0;
      table.querySelectorAll("tbody tr[data-verdict]").forEach(function (tr) {
        var on = shown[tr.getAttribute("data-verdict")] !== false;
        tr.hidden = !on;
        tr.style.display = on ? "" : "none";
        if (on) { visible += 1; }
      });
      var empty = table.parentNode.querySelector(".rm-findings-empty");
      if (empty) { empty.hidden = visible > 0; }
      var count = table.parentNode.querySelector(".rm-findings-shown");
      if (count) { count.textContent = String(visible); }
    });
  }
  root.querySelectorAll(".rm-findings-filter input[data-verdict]").forEach(function (box) {
    box.addEventListener("change", update);
  });
  update();
})();
</script>"""


def _raw(block: str) -> list[str]:
    return ["```{raw} html", block, "```", ""]


def write_findings_page(generated_dir: str | os.PathLike) -> Path | None:
    """Gather every chapter's saved findings (``generated/findings/*.json``, written by the
    notebooks through :func:`recmetrics.meta.findings.save`) into the book page
    ``generated/99_findings.md`` (see the module docstring); removes a stale page when there are none."""
    from ..meta import findings

    generated = Path(generated_dir)
    page = generated / "99_findings.md"
    table = findings.collect(generated / "findings")
    if table.empty:
        page.unlink(missing_ok=True)
        return None
    counts = table.verdict.value_counts()
    verdicts = list(findings.VERDICTS) + sorted(set(table.verdict) - set(findings.VERDICTS))
    is_paper = table.paper.map(paper_key).str.fullmatch(r"\d{3}")
    paper_counts = table.verdict[is_paper].value_counts()
    summary = f"{int(is_paper.sum())} claims of the papers: " + ", ".join(
        f"{paper_counts.get(v, 0)} {v}" for v in verdicts)
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
        trs = []
        for i, row in rows.iterrows():
            record = row.to_dict()
            tr, small = _row_html(record, row.chapter, infos[row.chapter], anchors[i])
            trs.append(tr)
            if small:
                n_small += 1
                prof = _text(record.get("profile")) or _text(infos[row.chapter]["parameters"].get("profile"))
                small_setups.setdefault(prof, set()).add(
                    (row.chapter, f"{infos[row.chapter]['title'] or row.chapter}: "
                     + (", ".join(_setup(record, infos[row.chapter]["parameters"]))
                        or f"the {prof} profile's parameters (shown under the chapter's title)")))
        pc = rows.verdict.value_counts()
        heading, citation = PAPERS.get(paper, (f"Paper {paper}", ""))
        body += [f"## {paper}: {heading}" if paper.isdigit() else f"## {heading}", ""]
        counted = ", ".join(f"{pc.get(v, 0)} {v}" for v in verdicts if pc.get(v, 0))
        body += [(citation + " " if citation else "") + f"{len(rows)} claims: {counted}.", ""]
        body += _raw(f'<div class="rm-findings-wrap" data-paper="{html.escape(paper)}">'
                     f'<p class="rm-findings-count"><span class="rm-findings-shown">{len(rows)}</span> of '
                     f"{len(rows)} shown</p>"
                     f'<table class="rm-findings">{_HEAD}<tbody>{"".join(trs)}</tbody></table>'
                     '<p class="rm-findings-empty" hidden>No claim of this paper has the verdicts selected above.</p>'
                     "</div>")

    parts = ["# Findings: the papers' claims, tested", "",
             f"Every claim of the papers that a chapter tests, with the paper's evidence, the evidence computed "
             f"by that chapter for the dataset and profile it ran with, and the verdict its code gave "
             f"({summary}). Nothing on this page is typed by hand: it is gathered from the "
             f"JSON files the chapters wrote. *not testable* means the project's set-up cannot produce the "
             f"effect the claim is about (the evidence says why); *inconclusive* that it could, but the "
             f"evidence does not clear its uncertainty. Each row links to the section of the chapter that "
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
    parts += _raw(f'<div class="rm-findings-filter"><strong>Show verdicts:</strong> {boxes}</div>')
    parts += body
    parts += _raw(_SCRIPT)
    page.write_text("\n".join(parts), encoding="utf-8")
    return page
