"""The judgment files of the LLM-as-a-judge benchmarks, read as they come into the judgments table.

- **MT-Bench** (FastChat ``llm_judge``, ``data/mt_bench/model_judgment/gpt-4_pair.jsonl``): one
  line per question, pair of models and turn, judged in both orders: ``model_1``, ``model_2``,
  ``g1_winner`` (``model_1`` shown first) and ``g2_winner`` (``model_2`` shown first), each
  ``"model_1"``, ``"model_2"``, ``"tie"`` or ``"error"``; ``judge`` is ``[model, prompt]``.
  Two rows a line, one per order.
- **AlpacaEval** (``annotations.json``): a list of records with ``instruction``, ``generator_1``,
  ``generator_2``, ``annotator`` and ``preference`` in [1, 2] (1: ``output_1`` better, 2:
  ``output_2``; weighted annotators give fractions, ``preference − 1`` being P(``output_2``
  better)). One row a record, ``p_a = 2 − preference``.
- **Arena-Hard** (``data/arena-hard-v0.1/model_judgment/<judge>/<model>.jsonl``): one line per
  question and model, ``games`` holding the two orders against the baseline (game 1: the baseline
  is A, the model B; game 2 the other way), each ``score`` one of ``A>>B``, ``A>B``, ``A=B``,
  ``B>A``, ``B>>A`` (``>>`` a strong preference, kept in the ``strength`` column: Arena-Hard counts
  it three times). The baseline is not in the file (``baseline=``, default ``gpt-4-0314``).

A verdict the benchmark itself could not read (``"error"``, a ``null`` score) is left out with a
warning that counts it; a record missing a field is an error naming its line.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from pathlib import Path
from typing import IO

import pandas as pd

__all__ = ["FRAMEWORKS", "detect_framework", "read_framework"]

#: the benchmarks whose judgment files :func:`read_framework` reads, and the fields that identify them
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "mt-bench": ("question_id", "model_1", "model_2", "g1_winner", "g2_winner"),
    "alpaca-eval": ("instruction", "generator_1", "generator_2", "preference"),
    "arena-hard": ("question_id", "model", "games"),
}
_ARENA_HARD = {"A>>B": ("a", 3), "A>B": ("a", 1), "A=B": ("tie", 1), "B>A": ("b", 1), "B>>A": ("b", 3)}



def is_gzip(path: Path) -> bool:
    """Whether the file starts with gzip's magic bytes."""
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def open_text(path: Path) -> IO[str]:
    """A text file, or a gzip-compressed one, opened for reading as UTF-8."""
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")

def detect_framework(record: dict) -> str | None:
    """The benchmark whose judgment file a first record comes from, or None."""
    for name, fields in FRAMEWORKS.items():
        if all(f in record for f in fields):
            return name
    return None


def _records(path: Path) -> list[tuple[int, dict]]:
    """(line or record number, record) of a JSON Lines file or a JSON list."""
    with open_text(path) as fh:
        text = fh.read()
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from err
        return list(enumerate(data, start=1))
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((lineno, json.loads(line)))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}: line {lineno} is not valid JSON ({err.msg})") from err
    return out


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
        ``item``, ``a``, ``b`` (in the order the judge saw them), ``judge``, ``winner`` or ``p_a``
        (AlpacaEval), and ``order`` (``"ab"`` / ``"ba"``) where the file has both orders;
        MT-Bench adds ``turn``, Arena-Hard ``strength`` (3 for ``>>``, else 1). Not validated:
        pass it to :func:`bayes_judge.validate_judgments`.

    Raises
    ------
    ValueError
        An unknown ``framework``, a file of none of them, a record missing a field or with an
        unknown verdict (naming its line), or no verdict at all.

    Examples
    --------
    >>> import bayes_judge as bj                                         # doctest: +SKIP
    >>> df = bj.read_judgments("gpt-4_pair.jsonl")                       # doctest: +SKIP
    >>> df = bj.read_judgments("model_judgment/gpt-4-1106-preview/my-model.jsonl", format="arena-hard")  # doctest: +SKIP
    """
    p = Path(path)
    recs = _records(p)
    if not recs:
        raise ValueError(f"{p}: no records")
    if framework is None:
        framework = detect_framework(recs[0][1]) if isinstance(recs[0][1], dict) else None
        if framework is None:
            raise ValueError(f"{p}: not an MT-Bench, AlpacaEval or Arena-Hard judgment file (its first record has "
                             f"the fields {sorted(recs[0][1]) if isinstance(recs[0][1], dict) else '(none)'})")
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework {framework!r} is not one of {sorted(FRAMEWORKS)}")
    unit = "line" if p.suffix.lower() != ".json" else "record"
    rows, skipped = [], 0
    for n, rec in recs:
        where = f"{unit} {n}"
        rec = _need(rec, FRAMEWORKS[framework], p, where, framework)
        if framework == "mt-bench":
            judge = rec.get("judge")
            judge = "/".join(map(str, judge)) if isinstance(judge, list) else str(judge or "judge")
            turn_raw = rec.get("turn", 1)  # absent: a single-turn record; null or text: an error naming the line
            try:
                turn = int(turn_raw)
            except (TypeError, ValueError):
                raise ValueError(f"{p}: {where}: turn is {turn_raw!r}, not a turn number") from None
            item = f"{_id(rec['question_id'])}/turn{turn}"
            m1, m2 = str(rec["model_1"]), str(rec["model_2"])
            for order, (first, second), key in (("ab", (m1, m2), "g1_winner"), ("ba", (m2, m1), "g2_winner")):
                w = rec.get(key)
                if w in (None, "error"):
                    skipped += 1
                    continue
                if w not in ("model_1", "model_2", "tie"):
                    raise ValueError(f"{p}: {where}: {key} is {w!r}, not model_1, model_2, tie or error")
                winner = "tie" if w == "tie" else ("a" if (w == "model_1") == (first == m1) else "b")
                rows.append({"item": item, "a": first, "b": second, "judge": judge, "winner": winner,
                             "order": order, "turn": turn})
        elif framework == "alpaca-eval":
            pref = rec.get("preference")
            if pref is None or (isinstance(pref, float) and pref != pref):
                skipped += 1
                continue
            if not isinstance(pref, int | float) or not 1 <= float(pref) <= 2:
                raise ValueError(f"{p}: {where}: preference is {pref!r}, not a number in [1, 2]")
            rows.append({"item": str(rec["instruction"]), "a": str(rec["generator_1"]), "b": str(rec["generator_2"]),
                         "judge": str(rec.get("annotator") or "judge"), "p_a": 2.0 - float(pref)})
        else:
            games = rec["games"]
            if not isinstance(games, list) or len(games) != 2:
                raise ValueError(f"{p}: {where}: games holds {len(games) if isinstance(games, list) else games!r}, "
                                 "not the two orders")
            model = str(rec["model"])
            for g, (order, first, second) in enumerate((("ab", baseline, model), ("ba", model, baseline))):
                score = games[g].get("score") if isinstance(games[g], dict) else None
                if score is None:
                    skipped += 1
                    continue
                if score not in _ARENA_HARD:
                    raise ValueError(f"{p}: {where}: game {g + 1}'s score is {score!r}, not one of {list(_ARENA_HARD)}")
                winner, strength = _ARENA_HARD[score]
                rows.append({"item": _id(rec["question_id"]), "a": first, "b": second,
                             "judge": str(rec.get("judge") or "judge"), "winner": winner, "order": order,
                             "strength": strength})
    if skipped:
        warnings.warn(f"{p}: {skipped} verdict(s) the {framework} judge gave no readable answer for "
                      "('error' or null) are left out", UserWarning, stacklevel=3)
    if not rows:
        raise ValueError(f"{p}: no readable verdict in {len(recs)} {unit}(s)")
    return pd.DataFrame(rows)
