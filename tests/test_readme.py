"""The README's and the docs' examples run as written, and print what they say they print."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def _block(marker: str, page: Path | None = None) -> str:
    """The python example of ``page`` (default: any docs page) that contains ``marker``."""
    pages = [page] if page is not None else sorted(DOCS.glob("*.md"))
    blocks = [b for p in pages for b in re.findall(r"```python\n(.*?)```", p.read_text(), flags=re.S) if marker in b]
    assert len(blocks) == 1, f"{len(blocks)} examples contain {marker!r}"
    return blocks[0]


def test_readme_example_prints_what_it_shows(capsys):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "the README has one example"
    ns: dict = {}
    exec(compile(blocks[0], str(README), "exec"), ns)
    out = capsys.readouterr().out
    shown = re.search(r"```python\n.*?```\n\n```text\n(.*?)```", text, flags=re.S).group(1)
    assert out == shown  # the printed output in the README is this code's
    assert [f.attrs["estimand"] for f in ns["fits"].values()] == ["human", "human", "judges"]
    assert len(text.splitlines()) <= 120


@pytest.mark.filterwarnings("ignore::bayes_judge.winrate.bwrs.BWRSWarning")
def test_getting_started_example_runs(capsys):
    ns: dict = {}
    exec(compile(_block("bj.next_labels(fit, 5)"), "getting-started.md", "exec"), ns)
    out = capsys.readouterr().out
    assert "p_mean" in out and "true p: 0.8" in out and "acc_g0" in out and "h_mean" in out
    assert ns["tr"].attrs["method"] == "transfer" and ns["tr"].attrs["transfer_sources"] == ["llmeval2", "llmbar_natural"]
    assert ns["nl"].attrs["method"] == "bridge" and ns["nl"].attrs["estimand"] == "human"
    assert ns["jr"].attrs["estimand"] == "judges"


def test_model_library_example_runs(capsys):
    from bayes_judge.generative import unregister_model

    try:
        exec(compile(_block("@generative_model("), "generative-models.md", "exec"), {})
    finally:
        unregister_model("shared-accuracy", "win-rate")
    out = capsys.readouterr().out
    assert "p_mean" in out and '"q": {"alpha": 2.0' in out


def test_ranking_example_runs(capsys):
    exec(compile(_block("bj.score_summary(post)"), "ranking.md", "exec"), {})
    out = capsys.readouterr().out
    assert "p_best" in out and "M12" in out


def test_readme_gives_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text


def test_comparator_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("Comparator(template="), "comparator.md", "exec"), {})
    out = capsys.readouterr().out
    assert "P(A)" in out and "rank" in out
    assert (tmp_path / "models" / "run.sqlite").is_file()


def test_report_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("bj.compare_models(runs)"), str(README), "exec"), {})
    assert "verdict" in capsys.readouterr().out
    assert (tmp_path / "models" / "report.html").stat().st_size > 10_000


def test_leaderboard_example_runs(capsys):
    exec(compile(_block("bj.leaderboard("), str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "p_best" in out and "tier" in out and "M" in out
