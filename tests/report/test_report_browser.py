"""The written report, opened in headless Chromium: loads cleanly, every image decodes, tables show."""

from __future__ import annotations

import struct

import pytest


@pytest.fixture(scope="module")
def page(browser, full_report, keep):
    shot = full_report.with_name("report_screenshot.png")
    result = browser.inspect(full_report, screenshot=shot)
    keep(full_report)
    keep(shot)
    return result, shot


def test_page_loads_without_console_errors(page):
    result, _ = page
    assert result.console_errors == []


def test_page_requests_nothing_but_itself(page, full_report):
    result, _ = page
    outside = [u for u in result.requests if not u.startswith("data:") and u != full_report.resolve().as_uri()]
    assert outside == []
    assert result.probe["links"] == []  # every href / src is an anchor or a data: URI


def test_every_image_decodes(page):
    result, _ = page
    images = result.images
    # per run: trace + estimates (+ PPC, + prior for Dawid-Skene): 4 + 4 + 2 + 3
    assert len(images) == 13
    bad = [i["alt"] for i in images if not (i["ok"] and i["complete"] and i["width"] > 0 and i["height"] > 0)]
    assert bad == []
    assert all(i["src"].startswith("data:image/png;base64") for i in images)


def test_tables_are_present(page):
    result, _ = page
    captions = [t["caption"] for t in result.tables]
    for caption in ("Parameters", "Sampler, per chain", "bj.win_rate_summary", "bj.score_summary"):
        assert caption in captions
    assert any(c.startswith("Observed vs replicated") for c in captions)
    assert any(c.startswith("Position bias") for c in captions)
    assert any(c.startswith("Expected log predictive density") for c in captions)
    assert all(t["rows"] > 0 for t in result.tables)
    assert result.probe["failCells"] > 0  # 2 x 200 draws: ESS below 400 is shown in red


def test_headings_name_every_run_and_section(page):
    result, _ = page
    headings = result.probe["headings"]
    for name in ("DS split <MT-Bench>", "DS labelled (saved run)", "observed k", "PoE-BT ranking"):
        assert any(h.startswith(name) for h in headings)  # autoescaped, shown verbatim
    assert "Model comparison (LOO)" in headings
    assert headings.count("Convergence") == 4


def test_screenshot_is_a_full_page_png(page, artifacts_dir):
    result, shot = page
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280
    assert height >= result.probe["height"] - 1 > 3000
    assert (artifacts_dir / shot.name).is_file()
