"""The docs site: every page in the navigation, and the CLI page in step with the commands."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert pages and [p for p in pages if p not in nav] == []


def test_readme_links_point_at_files():
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links and [t for t in links if not t.startswith("http") and not (ROOT / t).exists()] == []


@pytest.mark.parametrize("command", ["compare", "fit", "leaderboard", "summary", "report", "select"])
def test_cli_page_lists_every_option(command):
    out = subprocess.run([sys.executable, "-m", "bayes_judge.cli", command, "--help"], capture_output=True,
                         text=True, env={"COLUMNS": "100", "PATH": ""}, check=True).stdout
    options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", out)))
    page = (DOCS / "cli.md").read_text()
    section = page.split(f"## `bayes-judge {command}`")[1].split("\n## ")[0]
    assert options and [o for o in options if o not in section] == [], "docs/cli.md: rerun its generator"


def test_every_notebook_is_a_page_of_the_site():
    nav = (ROOT / "mkdocs.yml").read_text()
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks and [n for n in notebooks if f"notebooks/{n}" not in nav] == []
    assert (DOCS / "notebooks").resolve() == (ROOT / "notebooks").resolve()  # the site reads them where they are
