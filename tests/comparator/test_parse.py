import pytest

from bayes_judge.comparator.parse import parse_choice
from bayes_judge.comparator.templates import PRESETS

SUMMARY = PRESETS["summeval-coherence"].choices
INSTR = PRESETS["instruction"].choices


@pytest.mark.parametrize("answer, expected", [
    (" A", "a"), (" B is better", "b"), (" A. Summary B is worse", "a"), ("B", "b"),
    ("Both are equally good", "tie"), ("Summary A and Summary B are equal", "tie"),
    ("This is a better summary", None), ("", None), (" (a)", "a"),
])
def test_summary_answers(answer, expected):
    assert parse_choice(answer, SUMMARY, prefix="Summary") == expected


@pytest.mark.parametrize("answer, expected", [("a)", "a"), (" b) is better", "b"), ("Output (a)", "a"), ("neither", "tie")])
def test_instruction_answers(answer, expected):
    assert parse_choice(answer, INSTR, prefix="Output (") == expected


def test_the_article_a_is_not_a_choice():
    assert parse_choice("I think a summary should be short") is None
    assert parse_choice("A is clearly better") == "a"
