"""The README's example runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.filterwarnings("ignore::bayes_judge.calibration.bwrs.BWRSWarning")
def test_readme_example_runs(capsys):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    exec(compile(blocks[0], str(README), "exec"), {})
    out = capsys.readouterr().out
    assert out.count("p_mean") == 4


def test_readme_ranking_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "README has no ranking example"
    exec(compile(blocks[1], str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "p_best" in out and "M12" in out


def test_readme_gives_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text
