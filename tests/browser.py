"""Headless Chromium for the book tests: a minimal DevTools-protocol client and the checks that a
built page renders cleanly (used by test_report for the book on the embedded data and by
test_own_runs for the book on a user's own runs)."""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import urlparse


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class DevTools:
    """Minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self, binary: str, profile_dir: Path, extra_args: list[str]):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4. Move both ends above 10
        # first: os.pipe() may itself have returned 3 or 4 (dup2(3, 3) would keep close-on-exec)
        def fds():
            high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)  # os.dup2 makes the target inheritable
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={profile_dir}", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-default-apps", "--disable-extensions", "--metrics-recording-only",
             "--mute-audio", "--hide-scrollbars", *extra_args, "about:blank"],
            # close_fds would close 3 and 4 after preexec_fn ran
            preexec_fn=fds, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._replies: dict[int, dict] = {}
        self.events: list[dict] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session: str | None = None

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    def send(self, method: str, params: dict | None = None, *, session: bool = True, timeout: float = 60):
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._next not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no reply to {method}")
                self._cond.wait(left)
            reply = self._replies.pop(self._next)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for ev in self.events:
                    if ev.get("method") == method:
                        return ev
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {method} event")
                self._cond.wait(left)

    def evaluate(self, expression: str, *, await_promise: bool = False):
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": await_promise})
        if "exceptionDetails" in res:
            raise RuntimeError(f"JS error: {res['exceptionDetails']}")
        return res["result"].get("value")

    def open_page(self, width: int = 1280, height: int = 1000):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Network", "Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass


#: text of a rendered page that is not prose: code, math, charts, widgets, plain-text outputs
NOT_PROSE = ("pre, code, script, style, mjx-container, .math, .MathJax, .recmetrics-vega, .vega-embed, "
              ".jupyter-widgets, .widget-subarea, .output.text_plain, .output.stream, .output.stderr, textarea")

CLEAN_PROBE = r"""((url, notProse) => {
    const column = (document.querySelector('article.bd-article') || document.querySelector('main article') || document.querySelector('main'));
    if (location.href !== url || document.readyState !== 'complete' || !column) return null;
    const prose = [];
    const walker = document.createTreeWalker(column, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const n = walker.currentNode;
        if (n.parentElement && !n.parentElement.closest(notProse) && n.textContent.trim()) prose.push(n.textContent);
    }
    const outputs = Array.from(column.querySelectorAll('.cell_output .output')).map(o => ({
        cls: o.className, text: o.innerText.trim().slice(0, 300)}));
    const frames = Array.from(column.querySelectorAll('.cell_output table'));
    const cut = [];
    frames.forEach((t, i) => t.querySelectorAll('td, th').forEach(c => {
        const x = c.innerText.trim();
        if (x === '...' || x === '\u2026' || /(\.\.\.|\u2026)$/.test(x)) cut.push([i, x.slice(-60)]);
    }));
    const limit = column.getBoundingClientRect().right + 1;
    // the text column's content box (the article's padding excluded): where a table has to fit
    const content = column.querySelector('section') || column;
    const fit = content.getBoundingClientRect().right + 1;
    const wideWidgets = Array.from(column.querySelectorAll('.jupyter-widgets [class*="widget-"]'))
        .map(e => [String(e.getAttribute('class')).slice(0, 60), Math.round(e.getBoundingClientRect().right)])
        .filter(([c, right]) => right > limit);
    // a table wider than the column must sit in a box that scrolls inside the column
    const scrolls = (t) => {
        for (let e = t.parentElement; e && e !== column; e = e.parentElement) {
            const o = getComputedStyle(e).overflowX;
            if ((o === 'auto' || o === 'scroll') && e.getBoundingClientRect().right <= limit) return true;
        }
        return false;
    };
    const wideTables = frames.map((t, i) => [i, Math.round(t.getBoundingClientRect().right), scrolls(t)])
        .filter(([i, right, scrolled]) => right > limit && !scrolled);
    // every table of the page (outputs and Markdown tables) wider than the text column, even when
    // a box lets it scroll: [table, its width, the column's width, its first words]
    const overWide = Array.from(column.querySelectorAll('table'))
        .map((t, i) => [i, Math.round(t.getBoundingClientRect().right), t])
        .filter(([i, right]) => right > fit)
        .map(([i, right, t]) => [i, Math.round(t.getBoundingClientRect().width),
                                 Math.round(content.getBoundingClientRect().width),
                                 t.innerText.trim().slice(0, 40).replace(/\s+/g, ' ')]);
    // a chart scaled down to fit the column (CSS max-width) below MIN_CHART_SCALE of its drawn size:
    // its labels are then too small to read; lay it out narrower (wrap its facets) instead
    const scaled = Array.from(column.querySelectorAll('.recmetrics-vega svg.marks, .recmetrics-vega canvas.marks'))
        .map((e, i) => {
            const drawn = e.tagName.toLowerCase() === 'svg' ? parseFloat(e.getAttribute('width'))
                                                             : parseFloat(e.style.width || e.width);
            const shown = e.getBoundingClientRect().width;
            return [i, Math.round(drawn), Math.round(shown), drawn > 0 ? shown / drawn : 1];
        })
        .filter(([i, drawn, shown, scale]) => shown > 0 && scale < %s);
    const math = document.querySelectorAll('span.math, div.math').length;
    const typeset = document.querySelectorAll('mjx-container').length;
    return {prose: prose.join('\n'), outputs: outputs, cut: cut, wideWidgets: wideWidgets, wideTables: wideTables,
            overWide: overWide,
            limit: limit, scaled: scaled,
            math: math, typeset: typeset, mathErrors: document.querySelectorAll('mjx-merror').length};
})(%s, %s)"""

#: the smallest factor a chart may be scaled down by to fit the column: Vega's 10-11 px labels
#: shown at 0.8 are 8-9 px, the smallest still readable
MIN_CHART_SCALE = 0.8

#: outputs that are Python reprs (an object printed instead of shown) or warnings
REPR = re.compile(r"^<[\w.]+(?: object at 0x[0-9a-f]+| [^>]*)?>$|^[A-Za-z_][\w.]*\((?:'[^']*'|\d*)\)$|"
                   r"\bobject at 0x[0-9a-f]+|(?:User|Deprecation|Future|Runtime|Performance)Warning\b")


def page_problems(state: dict, tables: str = "scroll") -> dict:
    """What is wrong with a page, from :data:`CLEAN_PROBE`'s result (empty when nothing is).

    ``tables``: ``"scroll"`` accepts a table wider than the text column when it scrolls inside a
    box that fits the column; ``"fit"`` fails on every table wider than the column, scrolling or
    not (a reader then sees it whole at 1280 px)."""
    if tables not in ("scroll", "fit"):
        raise ValueError(f"tables must be 'scroll' or 'fit', got {tables!r}")
    prose = state["prose"]
    problems = {
        # a Markdown table printed as text: a row of cells, or its |---| rule
        "raw markdown table": re.findall(r"(?m)^\s*\|.*\|\s*$|\|\s*:?-{3,}:?\s*\|", prose)[:3],
        # a dollar sign or a TeX command left as text: math that was not rendered
        "unrendered math": re.findall(r".{0,30}(?:\$|\\(?:[a-zA-Z]+|[(\[])).{0,30}", prose)[:3],
        # a str.format / f-string placeholder that was never filled
        "placeholder": re.findall(r"\{[A-Za-z_][\w.]*(?:![rsa])?(?::[^{}]*)?\}", prose)[:3],
        "repr or warning in an output": [o["text"][:120] for o in state["outputs"]
                                         if "stderr" in o["cls"] or REPR.search(o["text"])][:3],
        "table cut with ...": state["cut"][:3],
        "widget wider than the column": state["wideWidgets"][:3],
        "table wider than the column": state["wideTables"][:3],
        "table wider than the column, scrolling ([table, width, column width, first words])":
            state.get("overWide", [])[:3] if tables == "fit" else [],
        "chart scaled below readable size ([chart, drawn px, shown px, scale])": state.get("scaled", [])[:3],
        "math not typeset": [] if state["typeset"] >= state["math"] and not state["mathErrors"] else
                            [f"{state['typeset']} of {state['math']} formulas, {state['mathErrors']} errors"],
    }
    return {k: v for k, v in problems.items() if v}


def render_problems(binary: str, site: Path, pages, profile_dir: Path, base_url: str | None = None,
                    tables: str = "scroll") -> dict:
    """Open each page in Chromium (offline: no DNS, no proxy) and return ``{page: problems}`` for
    the pages with any (:func:`page_problems`, plus console errors and requests that left the
    machine); empty when every page renders cleanly. ``tables``: as :func:`page_problems`. ``base_url`` (e.g.
    ``http://127.0.0.1:8000/a/sub-path/``): open the pages from a web server serving ``site`` there
    instead of from disk; only requests to that server are then allowed."""
    if base_url is None:
        args = ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>"]
    else:   # the local server is reached directly; any other host through a proxy that is not there
        host = urlparse(base_url).hostname
        args = [f"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {host}", "--proxy-server=http://127.0.0.1:9",
                f"--proxy-bypass-list={host}"]
    origin = None if base_url is None else "{0.scheme}://{0.netloc}/".format(urlparse(base_url))
    cdp = DevTools(binary, profile_dir, args)
    found = {}
    try:
        cdp.open_page(width=1280)
        for page in pages:
            url = page.resolve().as_uri() if base_url is None else base_url + page.relative_to(site).as_posix()
            first_event = len(cdp.events)
            cdp.send("Page.navigate", {"url": url})
            deadline = time.monotonic() + 90
            state, previous = None, None
            while time.monotonic() < deadline:  # until loaded, typeset and stable
                state = cdp.evaluate(CLEAN_PROBE % (MIN_CHART_SCALE, json.dumps(url), json.dumps(NOT_PROSE)))
                if state is not None and state["typeset"] >= state["math"] and state == previous:
                    break
                previous = state
                time.sleep(0.5)
            assert state is not None, (page.name, "page did not load")
            problems = page_problems(state, tables)
            events = cdp.events[first_event:]
            errors = [(d.get("exception") or {}).get("description", d.get("text"))
                      for d in (ev["params"]["exceptionDetails"] for ev in events
                                if ev.get("method") == "Runtime.exceptionThrown")]
            errors += [ev["params"]["entry"].get("text") for ev in events
                       if ev.get("method") == "Log.entryAdded" and ev["params"]["entry"].get("level") == "error"]
            errors += [" ".join(str(a.get("value", a.get("description", ""))) for a in ev["params"].get("args", []))
                       for ev in events if ev.get("method") == "Runtime.consoleAPICalled"
                       and ev["params"].get("type") in ("error", "assert")]
            if errors:
                problems["console error"] = errors[:3]
            remote = [ev["params"]["request"]["url"] for ev in events if ev.get("method") == "Network.requestWillBeSent"
                      and urlparse(ev["params"]["request"]["url"]).scheme not in ("file", "data", "blob", "about")
                      and not (origin and ev["params"]["request"]["url"].startswith(origin))]
            if remote:
                problems["request off the machine"] = remote[:3]
            if problems:
                found[str(page.relative_to(site))] = problems
    finally:
        cdp.close()
    return found
