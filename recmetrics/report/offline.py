"""Offline pages: Altair/Vega-Lite outputs rewritten to the vendored ``vegaEmbed``; remote-asset scan."""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Mapping

from .vendor import VEGA_BUNDLE

_VEGA_MIME = re.compile(r"^application/vnd\.vega(lite)?\.v(\d+)\+json$")
_ALTAIR_CALL = re.compile(r"\}\)\(\s*(?=\{)")

_EMBED_TEMPLATE = """<div id="{div_id}" class="recmetrics-vega"></div>
<script type="text/javascript">
(function (spec, embedOpt) {{
  var el = document.getElementById("{div_id}");
  function fail(err) {{
    el.innerHTML = '<div class="error" style="color:red;">' + String(err && err.message || err) + '</div>';
  }}
  function show() {{
    if (typeof window.vegaEmbed !== "function") {{
      fail("vega-embed is not loaded: expected the vendored _static/{bundle} (see recmetrics.report)");
      return;
    }}
    window.vegaEmbed(el, spec, embedOpt).then(function (result) {{ el.vegaView = result.view; }}).catch(fail);
  }}
  if (typeof window.vegaEmbed === "function" || document.readyState !== "loading") {{ show(); }}
  else {{ document.addEventListener("DOMContentLoaded", show); }}
}})({spec}, {embed_opt});
</script>"""

#: vega-embed options of the book's charts: no "Open in Vega Editor" action (it needs the web)
EMBED_OPTIONS: dict[str, Any] = {"actions": {"export": True, "source": True, "compiled": True, "editor": False}}


def _script_json(obj: Any) -> str:
    """JSON safe to inline inside a ``<script>`` element."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _altair_html_spec(html: str) -> tuple[dict, dict] | None:
    """(spec, embed options) from the HTML of Altair's ``html``/``default`` renderer, or None."""
    if "vegaEmbed" not in html or "altair-viz" not in html:
        return None
    decoder = json.JSONDecoder()
    for m in reversed(list(_ALTAIR_CALL.finditer(html))):
        try:
            spec, end = decoder.raw_decode(html, m.end())
            rest = html[end:].lstrip()
            opt: dict = {}
            if rest.startswith(","):
                opt, _ = decoder.raw_decode(rest[1:].lstrip())
        except ValueError:
            continue
        if isinstance(spec, dict) and isinstance(opt, dict):
            return spec, opt
    return None


def embed_html(
    spec: Mapping[str, Any],
    mode: str = "vega-lite",
    embed_options: Mapping[str, Any] | None = None,
    *,
    key: str = "",
) -> str:
    """HTML that renders ``spec`` with the vendored ``window.vegaEmbed`` (no network).

    The element id is derived from the spec and ``key`` (e.g. the cell and output index), so the
    executed notebooks are reproducible and two identical charts on a page stay distinct.
    """
    opt = dict(EMBED_OPTIONS)
    opt.update(embed_options or {})
    opt["mode"] = mode
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return _EMBED_TEMPLATE.format(
        div_id=f"rm-vega-{digest}" + (f"-{re.sub(r'[^A-Za-z0-9_-]', '-', key)}" if key else ""),
        bundle=VEGA_BUNDLE,
        spec=_script_json(spec),
        embed_opt=_script_json(opt),
    )


def offline_outputs(nb) -> int:
    """Rewrite the chart outputs of an executed notebook (in place) to use the vendored bundle.

    Handles Vega/Vega-Lite mime bundles (Altair's ``mimetype``/``jupyterlab`` renderers) and the
    ``text/html`` of Altair's default ``html`` renderer (whose loader pulls vega from a CDN).
    The mime JSON is kept so the executed notebook still renders in JupyterLab. Returns the
    number of outputs rewritten.
    """
    count = 0
    for ci, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for oi, out in enumerate(cell.get("outputs", [])):
            if out.get("output_type") not in ("display_data", "execute_result"):
                continue
            data = out.get("data", {})
            found = None
            for mime, value in data.items():
                m = _VEGA_MIME.match(mime)
                if m:
                    spec = json.loads(value) if isinstance(value, str) else value
                    found = (spec, "vega-lite" if m.group(1) else "vega", {})
                    break
            if found is None and "text/html" in data:
                html = data["text/html"]
                html = "".join(html) if isinstance(html, list) else html
                parsed = _altair_html_spec(html)
                if parsed:
                    spec, opt = parsed
                    mode = opt.pop("mode", "vega-lite")
                    found = (spec, mode, opt)
            if found is None:
                continue
            spec, mode, opt = found
            data["text/html"] = embed_html(spec, mode, opt, key=f"{ci}-{oi}")
            count += 1
    return count


_ASSET_TAG = re.compile(r"<(script|link|img|iframe|source|embed|video|audio|object)\b[^>]*>", re.I)
_ATTR = re.compile(r"\b(src|href|data|rel)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.I)
_CSS_URL = re.compile(r"(?:url\(\s*['\"]?|@import\s+['\"])([^'\")\s]+)", re.I)
_REMOTE = re.compile(r"^(?:https?:|wss?:)?//", re.I)


def external_assets(html_dir: str | os.PathLike) -> dict[str, list[str]]:
    """Scripts, stylesheets, images, frames and CSS imports/fonts the site loads from elsewhere.

    Scans every ``*.html`` page (``src``/``href``/``data`` of asset tags; ``<link>`` only when it
    is a stylesheet, preload or icon, and plain ``<a href>`` links are not assets) and every
    ``*.css`` file (``url(...)``/``@import``, comments ignored). Returns ``{file: [url, ...]}``
    for the files that reference another host; empty when the site is self-contained.
    """
    found: dict[str, list[str]] = {}
    root = Path(html_dir)
    for page in sorted(root.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        bad = []
        for tag in _ASSET_TAG.finditer(text):
            attrs = {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
                     for m in _ATTR.finditer(tag.group(0))}
            if tag.group(1).lower() == "link" and not re.search(
                r"stylesheet|preload|icon|modulepreload|manifest", attrs.get("rel", ""), re.I
            ):
                continue
            bad += [u for k, u in attrs.items() if k in ("src", "href", "data") and _REMOTE.match(u)]
        if bad:
            found[str(page.relative_to(root))] = bad
    for sheet in sorted(root.rglob("*.css")):
        text = re.sub(r"/\*.*?\*/", "", sheet.read_text(encoding="utf-8", errors="replace"), flags=re.S)
        bad = [m.group(1) for m in _CSS_URL.finditer(text) if _REMOTE.match(m.group(1))]
        if bad:
            found[str(sheet.relative_to(root))] = bad
    return found
