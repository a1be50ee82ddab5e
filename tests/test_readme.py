"""The README's example runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(marker: str) -> str:
    """The README's python example that contains ``marker``."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S) if marker in b]
    assert len(blocks) == 1, f"{len(blocks)} README examples contain {marker!r}"
    return blocks[0]


@pytest.mark.filterwarnings("ignore::bayes_judge.calibration.bwrs.BWRSWarning")
def test_readme_example_runs(capsys):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    ns: dict = {}
    exec(compile(blocks[0], str(README), "exec"), ns)
    out = capsys.readouterr().out
    assert "p_mean" in out and "true p: 0.8" in out and "acc_g0" in out and "h_mean" in out
    assert ns["tr"].attrs["method"] == "transfer" and ns["tr"].attrs["transfer_sources"] == ["llmeval2", "llmbar_natural"]
    assert ns["nl"].attrs["method"] == "bridge" and ns["nl"].attrs["estimand"] == "human"
    assert ns["jr"].attrs["estimand"] == "judges"


def test_readme_model_library_example_runs(capsys):
    from bayes_judge.generative import unregister_model

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    try:
        exec(compile(blocks[1], str(README), "exec"), {})
    finally:
        unregister_model("shared-accuracy", "win-rate")
    out = capsys.readouterr().out
    assert "p_mean" in out and '"q": {"alpha": 2.0' in out


def test_readme_ranking_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "README has no ranking example"
    exec(compile(blocks[2], str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "p_best" in out and "M12" in out


def test_readme_gives_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text


def test_readme_comparator_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("Comparator(template="), str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "P(A)" in out and "rank" in out
    assert (tmp_path / "models" / "run.sqlite").is_file()


def test_readme_report_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("bj.compare_models(runs)"), str(README), "exec"), {})
    assert "verdict" in capsys.readouterr().out
    assert (tmp_path / "models" / "report.html").stat().st_size > 10_000


def test_readme_leaderboard_example_runs(capsys):
    exec(compile(_block("bj.leaderboard("), str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "p_best" in out and "tier" in out and "M" in out
