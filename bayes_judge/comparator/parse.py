"""Mapping free-text judge answers to a decision (Liusie, Manakul & Gales 2024 eq. 4-5: f(w̃) ∈ {0, 1}).

:func:`parse_choice` reads an answer such as "Summary A", "Output (b) is better", "B.", "Both
are equally good" and returns ``"a"``, ``"b"``, ``"tie"`` or ``None`` (unparseable: no choice
word, or both choices named with no tie word).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["parse_choice"]


def _pattern(word: str) -> re.Pattern:
    w = re.escape(word.strip().lower())
    if len(word.strip()) == 1:
        # a bare letter counts only as the whole answer's first word ("A", "A.", "(a) because"),
        # never as the article in "a better summary"
        return re.compile(rf"^\W*{w}(?![a-z0-9])")
    return re.compile(rf"(?<![a-z0-9]){w}(?![a-z0-9])")


def parse_choice(text: str, choices: Sequence[Sequence[str]] = (("a",), ("b",), ("tie", "both", "neither", "equal")),
                 prefix: str = "") -> str | None:
    """Decision named by a free-text answer.

    Parameters
    ----------
    text : the generated answer (the part after the prompt)
    choices : words naming A, B and a tie (matched case-insensitively as whole words)
    prefix : the answer prefix the prompt ended with (e.g. ``"Summary"``); it is prepended so that
        an answer " A" reads as "Summary A"

    Returns
    -------
    ``"a"``, ``"b"``, ``"tie"`` or ``None``. The earliest-named choice wins, so "A is better than
    B" is A; an explicit tie word anywhere makes it a tie when both are named.
    """
    joined = prefix + (" " if prefix[-1:].isalnum() and text[:1].isalnum() else "") + text
    joined = re.sub(r"([(\[])\s+", r"\1", joined)
    for s in (joined, text) if prefix else (text,):
        found = _decide(s.strip().lower(), choices)
        if found is not None:
            return found
    return None


def _decide(s: str, choices: Sequence[Sequence[str]]) -> str | None:
    first = {}
    for label, words in zip(("a", "b", "tie"), choices, strict=True):
        pos = [m.start() for w in words for m in _pattern(w).finditer(s)]
        if pos:
            first[label] = min(pos)
    if not first:
        return None
    if "tie" in first and ("a" in first) == ("b" in first):
        return "tie"
    named = {k: v for k, v in first.items() if k != "tie"}
    if not named:
        return "tie"
    return min(named, key=named.__getitem__)
