"""Open an HTML file in headless Chromium and inspect it over the DevTools protocol.

Chromium is driven through ``--remote-debugging-pipe``: the browser reads protocol messages from
file descriptor 3 and writes to 4, each a JSON object ending in a NUL byte.  Only the standard
library is needed (no websocket client, no Playwright, no TCP port that could clash between
parallel test workers), and the messages are the same Chrome DevTools Protocol calls Playwright
and Puppeteer send.

>>> with Browser() as b:                                   # doctest: +SKIP
...     page = b.inspect(Path("report.html"), screenshot=Path("shot.png"))
>>> page.console_errors, page.images                      # doctest: +SKIP
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Browser", "PageReport", "chromium_path", "BrowserError"]

ENSURE_SCRIPT = "tests/report/ensure_chromium.sh"
CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")

FLAGS = (
    "--headless",
    "--no-sandbox",  # tests run as root in containers, where the sandbox cannot start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)

# Evaluated in the page after "load": every image decoded, the tables and headings present.
PAGE_PROBE = """
(async () => {
  const imgs = Array.from(document.images);
  const decoded = await Promise.all(imgs.map(async (img) => {
    let ok = true;
    try { await img.decode(); } catch (e) { ok = false; }
    return {alt: img.alt, ok: ok, complete: img.complete, width: img.naturalWidth,
            height: img.naturalHeight, src: img.src.slice(0, 22)};
  }));
  return {
    title: document.title,
    images: decoded,
    tables: Array.from(document.querySelectorAll("table")).map(t => ({
      caption: (t.closest("figure")?.querySelector("figcaption")?.textContent || "").trim(),
      rows: t.tBodies[0] ? t.tBodies[0].rows.length : 0})),
    headings: Array.from(document.querySelectorAll("h2, h3")).map(h => h.textContent.trim()),
    failCells: document.querySelectorAll("td.fail").length,
    links: Array.from(document.querySelectorAll("[href], [src]"))
      .map(e => e.getAttribute("href") || e.getAttribute("src"))
      .filter(u => !u.startsWith("#") && !u.startsWith("data:")),
    height: document.documentElement.scrollHeight,
  };
})()
"""


class BrowserError(RuntimeError):
    """Chromium could not be started or did not answer."""


def chromium_path() -> str | None:
    """The Chromium executable (``$BJ_CHROMIUM`` first), or None when none is installed."""
    env = os.environ.get("BJ_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for c in CANDIDATES:
        if Path(c).is_file():
            return c
    return shutil.which("chromium")


@dataclass
class PageReport:
    """What the page showed: console errors, exceptions, failed requests, images, tables."""

    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    probe: dict = field(default_factory=dict)

    @property
    def images(self) -> list[dict]:
        return self.probe.get("images", [])

    @property
    def tables(self) -> list[dict]:
        return self.probe.get("tables", [])


class Browser:
    """One headless Chromium process, talked to over ``--remote-debugging-pipe``."""

    def __init__(self, executable: str | None = None, *, timeout: float = 30.0):
        self.executable = executable or chromium_path()
        if self.executable is None:
            raise BrowserError(f"Chromium is not installed: run {ENSURE_SCRIPT}")
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict] = []

    # -- process ---------------------------------------------------------------

    def __enter__(self) -> Browser:
        self._profile = tempfile.mkdtemp(prefix="bj-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the browser expects the pipe on fds 3 and 4; bash maps them there from fds >= 10, so
        # that no redirection overwrites a descriptor another one still reads
        child = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w)]
        for fd in (to_child_r, from_child_w):
            os.close(fd)
        script = f'exec "$@" 3<&{child[0]} 4>&{child[1]} {child[0]}<&- {child[1]}>&-'
        self._log = open(Path(self._profile) / "chromium.log", "wb")  # closed in __exit__
        args = [self.executable, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"]
        try:
            self._proc = subprocess.Popen(
                ["/bin/bash", "-c", script, "bash", *args], pass_fds=child,
                stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            )
        finally:
            for fd in child:
                os.close(fd)
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self._proc.poll() is None:
                try:
                    self.call("Browser.close", timeout=5)
                except (BrowserError, OSError):
                    pass
                try:
                    self._proc.wait(5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(5)
        finally:
            for fd in (self._to_child, self._from_child):
                os.close(fd)
            self._log.close()
            shutil.rmtree(self._profile, ignore_errors=True)

    def log_tail(self, n: int = 2000) -> str:
        """The end of Chromium's own stderr, for error messages."""
        self._log.flush()
        return (Path(self._profile) / "chromium.log").read_bytes()[-n:].decode(errors="replace")

    # -- protocol --------------------------------------------------------------

    def _send(self, method: str, params: dict | None, session: str | None) -> int:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        return self._next_id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_child], [], [], max(left, 0))
            if not ready:
                raise BrowserError(f"Chromium did not answer within {self.timeout} s\n{self.log_tail()}")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe (exit {self._proc.poll()})\n{self.log_tail()}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             *, timeout: float | None = None) -> dict:
        """Send one command and wait for its result; events that arrive meanwhile are kept."""
        deadline = time.monotonic() + (timeout or self.timeout)
        mid = self._send(method, params, session)
        while True:
            msg = self._receive(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._events.append(msg)

    def _wait_event(self, method: str, session: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self._events):
            self._events.append(self._receive(deadline))

    # -- one page --------------------------------------------------------------

    def inspect(self, html: Path, *, screenshot: Path | None = None, width: int = 1280) -> PageReport:
        """Load ``html``, collect console errors and requests, probe images and tables.

        Parameters
        ----------
        html : Path
            The file to open (as a ``file://`` URL).
        screenshot : Path, optional
            Write a full-page PNG screenshot here.
        width : int
            Viewport width in CSS pixels.
        """
        self._events.clear()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", {}, sid)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, sid)
        self.call("Page.navigate", {"url": html.resolve().as_uri()}, sid)
        self._wait_event("Page.loadEventFired", sid)
        probe = self.call("Runtime.evaluate", {"expression": PAGE_PROBE, "awaitPromise": True,
                                               "returnByValue": True}, sid)
        if "exceptionDetails" in probe:
            raise BrowserError(f"page probe failed: {probe['exceptionDetails']}")
        if screenshot is not None:
            shot = self.call("Page.captureScreenshot",
                             {"format": "png", "captureBeyondViewport": True}, sid)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        report = PageReport(probe=probe["result"]["value"])
        for e in self._events:
            if e.get("sessionId") != sid:
                continue
            report.console_errors += _console_error(e)
            if e.get("method") == "Network.requestWillBeSent":
                report.requests.append(e["params"]["request"]["url"])
        self.call("Target.closeTarget", {"targetId": target})
        return report


def _console_error(event: dict) -> list[str]:
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        return [" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))]
    if method == "Runtime.exceptionThrown":
        return [params.get("exceptionDetails", {}).get("text", "exception")]
    if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        return [params["entry"].get("text", "")]
    return []
