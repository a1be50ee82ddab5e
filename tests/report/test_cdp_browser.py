"""The headless-browser helper itself: a missing Chromium is reported with the fix, not skipped."""

from __future__ import annotations

import pytest
from cdp_browser import ENSURE_SCRIPT, Browser, BrowserError, chromium_path


def test_missing_chromium_names_the_install_script(monkeypatch):
    monkeypatch.setenv("BJ_CHROMIUM", "/nonexistent/chromium")
    assert chromium_path() is None
    with pytest.raises(BrowserError, match=ENSURE_SCRIPT):
        Browser()


def test_console_errors_are_caught(browser, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><title>t</title><img alt="x" src="data:image/png;base64,AAAA">'
                    '<script>console.error("boom")</script>')
    result = browser.inspect(page)
    assert any("boom" in e for e in result.console_errors)
    assert [i["ok"] for i in result.images] == [False]  # a broken image does not decode
