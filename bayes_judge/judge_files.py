"""The judgment files of the LLM-as-a-judge benchmarks, read as they come into the judgments table.

- **MT-Bench** (FastChat ``llm_judge``, ``data/mt_bench/model_judgment/gpt-4_pair.jsonl``): one
  line per question, pair of models and turn, judged in both orders: ``model_1``, ``model_2``,
  ``g1_winner`` (``model_1`` shown first) and ``g2_winner`` (``model_2`` shown first), each
  ``"model_1"``, ``"model_2"``, ``"tie"`` or ``"error"``; ``judge`` is ``[model, prompt]``.
  Two rows a line, one per order.
- **AlpacaEval** (``annotations.json``): a list of records with ``instruction``, ``generator_1``,
  ``generator_2``, ``annotator`` and ``preference`` in [1, 2] (1: ``output_1`` better, 2:
  ``output_2``; weighted annotators give fractions, ``preference − 1`` being P(``output_2``
  better)) or 0, a draw as AlpacaEval's own win rate counts it (read as 1.5). One row a record,
  ``a = generator_1``, ``b = generator_2``, ``p_a = 2 − preference``. AlpacaEval's annotator
  shows the two outputs in a random order by default and flips the preference back before it
  saves it, so the file does not say which output the judge saw first: ``a`` / ``b`` are the
  file's ``generator_1`` / ``generator_2``, not the presentation order, and a position bias
  cannot be estimated from such a file.
- **Arena-Hard** (``data/arena-hard-v0.1/model_judgment/<judge>/<model>.jsonl``): one line per
  question and model, ``games`` holding the two orders against the baseline (game 1: the baseline
  is A, the model B; game 2 the other way), each ``score`` one of ``A>>B``, ``A>B``, ``A=B``,
  ``B>A``, ``B>>A`` (``>>`` a strong preference, kept in the ``strength`` column: Arena-Hard counts
  it three times). The baseline is not in the file (``baseline=``, default ``gpt-4-0314``).

A verdict the benchmark itself could not read (MT-Bench's ``"error"``, a null verdict, an
Arena-Hard game whose ``score`` is null) is left out with a warning that counts it; a record
missing a field, or a field of another shape (an Arena-Hard game without a ``score``, a turn of
2.5 or ``true``, a boolean preference), is an error naming its line (its record in a JSON list).
"""

from __future__ import annotations

import gzip
import json
import numbers
import os
import sys
import warnings
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

__all__ = ["FRAMEWORKS", "detect_framework", "read_framework"]

#: the benchmarks whose judgment files :func:`read_framework` reads, and the fields that identify them
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "mt-bench": ("question_id", "model_1", "model_2", "g1_winner", "g2_winner"),
    "alpaca-eval": ("instruction", "generator_1", "generator_2", "preference"),
    "arena-hard": ("question_id", "model", "games"),
}
_ARENA_HARD = {"A>>B": ("a", 3), "A>B": ("a", 1), "A=B": ("tie", 1), "B>A": ("b", 1), "B>>A": ("b", 3)}
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def is_gzip(path: Path) -> bool:
    """Whether the file starts with gzip's magic bytes."""
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def open_text(path: Path) -> IO[str]:
    """A text file, or a gzip-compressed one, opened for reading as UTF-8."""
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def caller_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning issued by the calling function to the first
    frame outside the ``bayes_judge`` package (the user's call, however deep the package's own)."""
    frame = sys._getframe(1)  # the function that warns: stacklevel 1
    level = 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
        level += 1
    return level


def turn_number(value: object) -> int | None:
    """An MT-Bench turn as an int (``2``, ``2.0`` or ``"2"``), or None for anything else.

    Parameters
    ----------
    value : the ``turn`` field as read

    Returns
    -------
    int or None
        None for a boolean, a non-integral number (``2.5``, NaN), null or other text: a turn is
        never coerced (``int(2.5)`` is 2, ``int(True)`` is 1).
    """
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        return int(number) if number.is_integer() else None
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value)
    return None


def detect_framework(record: dict) -> str | None:
    """The benchmark whose judgment file a first record comes from, or None."""
    for name, fields in FRAMEWORKS.items():
        if all(f in record for f in fields):
            return name
    return None


def _records(path: Path) -> tuple[str, list[tuple[int, object]]]:
    """The unit that numbers the records (``"record"`` in a JSON list, ``"line"`` in JSON Lines,
    whatever the file's suffix or compression) and the (number, record) pairs."""
    with open_text(path) as fh:
        text = fh.read()
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from err
        return "record", list(enumerate(data, start=1))
    out: list[tuple[int, object]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((lineno, json.loads(line)))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}: line {lineno} is not valid JSON ({err.msg})") from err
    return "line", out


def _id(value: object) -> str:
    """A question id as the judgments table reads ids (81.0 is question "81")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _need(rec: object, fields: tuple[str, ...], path: Path, where: str, what: str) -> dict:
    if not isinstance(rec, dict):
        raise ValueError(f"{path}: {where} is a JSON {type(rec).__name__}, not an object ({what})")
    missing = [f for f in fields if rec.get(f) is None and f not in ("g1_winner", "g2_winner", "preference")]
    missing += [f for f in fields if f not in rec]
    if missing:
        raise ValueError(f"{path}: {where} has no {sorted(set(missing))} (a {what} record needs {list(fields)})")
    return rec


def _mt_bench_rows(rec: dict, at: str) -> tuple[list[dict], int]:
    """The two rows (one per presentation order) of an MT-Bench pair record, and how many of its
    verdicts were ``"error"`` or null; ``at`` is ``"<file>: line <n>"`` for the messages."""
    judge = rec.get("judge")
    judge = "/".join(map(str, judge)) if isinstance(judge, list) else str(judge or "judge")
    turn_raw = rec.get("turn", 1)  # absent: a single-turn record; null, text, 2.5 or a bool: an error
    turn = turn_number(turn_raw)
    if turn is None:
        raise ValueError(f"{at}: turn is {turn_raw!r}, not a turn number (1, 2, ...)")
    item = f"{_id(rec['question_id'])}/turn{turn}"
    m1, m2 = str(rec["model_1"]), str(rec["model_2"])
    rows, skipped = [], 0
    for order, (first, second), key in (("ab", (m1, m2), "g1_winner"), ("ba", (m2, m1), "g2_winner")):
        w = rec.get(key)
        if w in (None, "error"):
            skipped += 1
            continue
        if w not in ("model_1", "model_2", "tie"):
            raise ValueError(f"{at}: {key} is {w!r}, not model_1, model_2, tie or error")
        winner = "tie" if w == "tie" else ("a" if (w == "model_1") == (first == m1) else "b")
        rows.append({"item": item, "a": first, "b": second, "judge": judge, "winner": winner,
                     "order": order, "turn": turn})
    return rows, skipped


def _alpaca_eval_p_a(pref: object, at: str) -> float | None:
    """P(``generator_1``'s output better) from an AlpacaEval ``preference``: ``2 − preference``,
    0.5 for a draw (0, as AlpacaEval's win rate counts it, or 1.5); None for null or NaN."""
    if pref is None or (isinstance(pref, float) and pref != pref):
        return None
    if isinstance(pref, bool) or not isinstance(pref, int | float) or not (pref == 0 or 1 <= pref <= 2):
        raise ValueError(f"{at}: preference is {pref!r}, not a number in [1, 2] (or 0, a draw)")
    return 0.5 if pref == 0 else 2.0 - float(pref)


def _alpaca_eval_rows(rec: dict, at: str) -> tuple[list[dict], int]:
    """The row of an AlpacaEval record (``a`` = ``generator_1``, as the file lists them), or none
    and a count of 1 when the annotator gave no preference."""
    p_a = _alpaca_eval_p_a(rec.get("preference"), at)
    if p_a is None:
        return [], 1
    return [{"item": str(rec["instruction"]), "a": str(rec["generator_1"]), "b": str(rec["generator_2"]),
             "judge": str(rec.get("annotator") or "judge"), "p_a": p_a}], 0


def _arena_hard_score(game: object, g: int, at: str) -> str | None:
    """Game ``g``'s verdict (a key of ``_ARENA_HARD``), or None when its ``score`` is null (the
    judge's answer held no verdict Arena-Hard could read); any other shape is a format error."""
    if not isinstance(game, dict) or "score" not in game:
        found = (f"an object with the fields {sorted(game)}" if isinstance(game, dict)
                 else f"a JSON {type(game).__name__} ({game!r})" if game is not None else "null")
        raise ValueError(f"{at}: game {g} is {found}, not an object with a 'score' "
                         f"(one of {list(_ARENA_HARD)}, or null)")
    score = game["score"]
    if score is not None and score not in _ARENA_HARD:
        raise ValueError(f"{at}: game {g}'s score is {score!r}, not one of {list(_ARENA_HARD)}")
    return score


def _arena_hard_rows(rec: dict, at: str, baseline: str) -> tuple[list[dict], int]:
    """The rows of an Arena-Hard record's two games against ``baseline`` (game 1: the baseline is
    A), and how many had a null score."""
    games = rec["games"]
    if not isinstance(games, list) or len(games) != 2:
        raise ValueError(f"{at}: games holds {len(games) if isinstance(games, list) else games!r}, "
                         "not the two orders")
    model = str(rec["model"])
    rows, skipped = [], 0
    for g, (order, first, second) in enumerate((("ab", baseline, model), ("ba", model, baseline)), start=1):
        score = _arena_hard_score(games[g - 1], g, at)
        if score is None:
            skipped += 1
            continue
        winner, strength = _ARENA_HARD[score]
        rows.append({"item": _id(rec["question_id"]), "a": first, "b": second,
                     "judge": str(rec.get("judge") or "judge"), "winner": winner, "order": order,
                     "strength": strength})
    return rows, skipped


def framework_key(name: object) -> str:
    """A benchmark's name as :data:`FRAMEWORKS` keys it: any case, ``_`` read as ``-``
    (``"MT_Bench"`` is ``"mt-bench"``)."""
    return str(name).strip().lower().replace("_", "-")


def _framework_of(recs: list[tuple[int, object]], framework: str | None, path: Path) -> str:
    """``framework`` checked (:func:`framework_key`), or recognized from the first record's fields."""
    if framework is not None:
        framework = framework_key(framework)
    if framework is None:
        first = recs[0][1]
        framework = detect_framework(first) if isinstance(first, dict) else None
        if framework is None:
            raise ValueError(f"{path}: not an MT-Bench, AlpacaEval or Arena-Hard judgment file (its first record has "
                             f"the fields {sorted(first) if isinstance(first, dict) else '(none)'})")
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework {framework!r} is not one of {sorted(FRAMEWORKS)}")
    return framework


def read_framework(path: str | os.PathLike[str], framework: str | None = None, *,
                   baseline: str = "gpt-4-0314") -> pd.DataFrame:
    """Read an MT-Bench, AlpacaEval or Arena-Hard judgment file as a judgments table.

    Parameters
    ----------
    path : the file (``.jsonl`` or ``.json``, optionally gzip-compressed)
    framework : {"mt-bench", "alpaca-eval", "arena-hard"}, optional
        Default: recognized from the first record's fields (:data:`FRAMEWORKS`).
    baseline : Arena-Hard's baseline model (not named in its files)

    Returns
    -------
    pandas.DataFrame
        ``item``, ``a``, ``b``, ``judge``, ``winner`` or ``p_a`` (AlpacaEval), and ``order``
        (``"ab"`` / ``"ba"``) where the file has both orders; MT-Bench adds ``turn``, Arena-Hard
        ``strength`` (3 for ``>>``, else 1). MT-Bench's and Arena-Hard's ``a`` / ``b`` are in the
        order the judge saw them; AlpacaEval's are the file's ``generator_1`` / ``generator_2``,
        whose presentation order the file does not record (see the module's notes). Not
        validated: pass it to :func:`bayes_judge.validate_judgments`.

    Raises
    ------
    ValueError
        An unknown ``framework``, a file of none of them or with no records, a record missing a
        field, with a field of another shape or with an unknown verdict (naming its line, or its
        record in a JSON list), or no verdict at all.

    Warns
    -----
    UserWarning
        Verdicts the benchmark itself could not read (``"error"``, null) are left out, counted.

    Examples
    --------
    >>> import bayes_judge as bj                                         # doctest: +SKIP
    >>> df = bj.read_judgments("gpt-4_pair.jsonl")                       # doctest: +SKIP
    >>> df = bj.read_judgments("model_judgment/gpt-4-1106-preview/my-model.jsonl", format="arena-hard")  # doctest: +SKIP
    """
    p = Path(path)
    unit, recs = _records(p)
    if not recs:
        raise ValueError(f"{p}: the file has no records (no judgment to read)")
    framework = _framework_of(recs, framework, p)
    rows, skipped = [], 0
    for n, raw in recs:
        at = f"{p}: {unit} {n}"
        rec = _need(raw, FRAMEWORKS[framework], p, f"{unit} {n}", framework)
        if framework == "mt-bench":
            got, missed = _mt_bench_rows(rec, at)
        elif framework == "alpaca-eval":
            got, missed = _alpaca_eval_rows(rec, at)
        else:
            got, missed = _arena_hard_rows(rec, at, baseline)
        rows += got
        skipped += missed
    if skipped:
        warnings.warn(f"{p}: {skipped} verdict(s) the {framework} judge gave no readable answer for "
                      "('error' or null) are left out", UserWarning, stacklevel=caller_stacklevel())
    if not rows:
        raise ValueError(f"{p}: no readable verdict in {len(recs)} {unit}(s)")
    return pd.DataFrame(rows)
