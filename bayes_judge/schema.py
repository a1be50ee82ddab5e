"""The judgments table: the one contract every part of bayes_judge speaks.

Long format, one row per judgment (see ``DESIGN.md``):

========  ==================  ===========================================================
column    type                meaning
========  ==================  ===========================================================
item      str / int           the prompt or context both candidates answer
a, b      str                 candidate ids in the order the judge saw them (A, B)
judge     str                 which evaluator; a single judge ``"judge"`` if absent
p_a       float in [0, 1]     the judge's probability that ``a`` is better (optional)
winner    "a" / "b" / "tie"   the hard decision; derived from ``p_a`` when absent
human     "a" / "b" / NA      a gold human label for this comparison, where one exists
sample    int (optional)      repeat index when a judge judged the same (item, a, b) twice
========  ==================  ===========================================================

:func:`validate_judgments` is the single gate: it returns a normalized copy or raises a
``ValueError`` that names the column and the offending rows.  Nothing is dropped silently:
extra columns are kept as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["validate_judgments", "coded_judgments", "ids_as_text", "REQUIRED_COLUMNS", "KEY_COLUMNS", "WINNERS"]

REQUIRED_COLUMNS = ("item", "a", "b")
KEY_COLUMNS = ("item", "a", "b", "judge")
WINNERS = ("a", "b", "tie")
DEFAULT_JUDGE = "judge"


def _rows(index: Iterable, limit: int = 8) -> str:
    """Format the first offending row labels for an error message."""
    rows = list(index)
    shown = ", ".join(str(r) for r in rows[:limit])
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"row(s) {shown}{more}"


_BY_VALUE = 10_000  # longer numeric id columns are read value by value (ids_as_text)


def ids_as_text(col: pd.Series) -> pd.Series:
    """Candidate / judge / item ids as plain Python strings (object dtype).

    The one reader of ids for every table the package takes (judgments, labels, texts, pairs).
    A whole-number float is written as an integer (``1.0`` → ``"1"``): pandas turns an integer
    id column into floats when a value is missing or after a merge, and the same system must not
    become two ("1" and "1.0").
    """
    kind = col.dtype.kind
    inferred = pd.api.types.infer_dtype(col, skipna=True) if kind == "O" else ""
    if len(col) > _BY_VALUE and kind in "iuf":
        # each distinct number formatted once and the rows pointed at it: the same strings as row
        # by row (a float column of 300 systems: 0.45 -> 0.01 s a million rows); text ids gain
        # little this way and lose where most are distinct (an item id per row)
        codes, uniq = pd.factorize(col)
        if (codes >= 0).all():
            text = _ids_as_text(pd.Series(uniq, dtype=col.dtype), kind, inferred).to_numpy(dtype=object)
            return pd.Series(text[codes], index=col.index, dtype=object)
    return _ids_as_text(col, kind, inferred)


def _ids_as_text(col: pd.Series, kind: str, inferred: str) -> pd.Series:
    """:func:`ids_as_text` row by row."""
    if inferred in ("mixed", "mixed-integer"):  # texts beside floats (2.0 and "y"): the floats read as numbers
        is_float = np.fromiter((isinstance(v, float | np.floating) for v in col), dtype=bool, count=len(col))
        if is_float.any():
            text = col.astype(str).to_numpy(dtype=object)
            text[is_float] = ids_as_text(pd.Series(col.to_numpy(dtype=object)[is_float], dtype=float)).to_numpy()
            return pd.Series(text, index=col.index, dtype=object)
    if kind == "f" or inferred in ("floating", "mixed-integer-float"):
        num = pd.to_numeric(col, errors="coerce") if kind == "O" else col
        x = num.to_numpy(dtype=float)
        whole = np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) < 2**53)
        if whole.any():
            text = col.astype(str).to_numpy(dtype=object)
            text[whole] = x[whole].astype(np.int64).astype(str)
            return pd.Series(text, index=col.index, dtype=object)
    return col.astype(str).astype(object)


def _coded_ids(col: pd.Series) -> tuple[pd.Series, np.ndarray, np.ndarray]:
    """:func:`ids_as_text` of a column without missing values, with its codes: ``(text, codes,
    uniques)``, ``text == uniques[codes]``.

    Where the column is of one type (a string, number or bool dtype, or objects that are all
    ``str``) each distinct value is read once: the column is coded, then its distinct values turned
    to text (distinct values of one type read as distinct texts: a float is written as an integer
    only where it is whole).  Otherwise the rows are read first: ``1`` and ``True`` are one key to a
    hash table but two ids, and ``1`` and ``"1"`` two keys but one id.
    """
    kind = col.dtype.kind
    by_value = kind in "iufb" or (kind == "O" and pd.api.types.infer_dtype(col, skipna=False) == "string") \
        or (kind != "O" and pd.api.types.is_string_dtype(col.dtype))
    if by_value:  # distinct values of one of these types read as distinct texts
        codes, uniq = pd.factorize(col)
        names = ids_as_text(pd.Series(uniq)).to_numpy(dtype=object)
    else:
        codes, uniq = pd.factorize(ids_as_text(col))
        names = np.asarray(uniq, dtype=object)
    return pd.Series(names[codes], index=col.index, dtype=object), codes, names


def _all_trimmed(vals: np.ndarray) -> bool:
    """Whether no id has surrounding whitespace and none is empty (one vectorized pass; ~0.04 s a
    million ids)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        arr = pa.array(vals, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return False  # not all str: the checks below say what is wrong
    trimmed = pc.utf8_trim_whitespace(arr)
    return not (pc.any(pc.not_equal(trimmed, arr)).as_py() or pc.any(pc.equal(trimmed, "")).as_py())


def _check_ids(out: pd.DataFrame, distinct: dict[str, np.ndarray]) -> None:
    """No empty system or judge name, and no two systems, judges or items whose ids differ only by
    surrounding whitespace: ``"gpt-4"`` and ``"gpt-4 "`` are one system typed twice, never silently
    two (an item typed twice would split its two presentation orders).  ``distinct``: each id
    column's distinct values."""
    for cols in (("a", "b"), ("judge",), ("item",)):
        vals = (np.asarray(distinct[cols[0]], dtype=object) if len(cols) == 1  # distinct already
                else pd.unique(np.concatenate([np.asarray(distinct[c], dtype=object) for c in cols])))
        if _all_trimmed(vals):
            continue
        ids = pd.Series(vals, dtype=object)
        stripped = ids.str.strip()
        empty = (stripped == "") & (cols != ("item",))  # an empty item id is one item, as any other
        name = "/".join(f"'{c}'" for c in cols)
        if empty.any():
            rows = np.zeros(len(out), dtype=bool)
            for c in cols:
                rows |= out[c].str.strip().to_numpy() == ""
            raise ValueError(f"column(s) {name}: empty id in {_rows(out.index[rows])}")
        clash = stripped.duplicated(keep=False)
        if clash.any():
            groups = ids[clash].groupby(stripped[clash]).apply(list).tolist()[:3]
            raise ValueError(
                f"column(s) {name}: ids that differ only by surrounding whitespace {groups} would be "
                "counted as different; strip them (df[col].str.strip()) or rename them"
            )


def _normalize_label(col: pd.Series, name: str, allowed: tuple[str, ...], allow_na: bool
                     ) -> tuple[pd.Series, tuple[np.ndarray, np.ndarray]]:
    """``col`` stripped and lower-cased, None where missing; each distinct spelling read once (a
    million verdicts have a handful), errors naming the unknown values and the rows.  With its
    codes: ``(codes, texts)``, the label ``texts[codes]``, a missing one code −1."""
    missing = col.isna().to_numpy()
    codes, uniq = pd.factorize(col)  # a missing value: -1
    text = pd.Series(np.asarray(uniq, dtype=object)).astype(str).str.strip().str.lower().to_numpy(dtype=object)
    known = np.append(np.isin(text, list(allowed)), True)[codes]
    bad = ~missing & ~known
    if bad.any():
        vals = sorted({str(v) for v in col[bad].unique()})[:5]
        raise ValueError(
            f"column '{name}': unknown value(s) {vals} in {_rows(col.index[bad])}; "
            f"expected one of {list(allowed)}" + (" or missing" if allow_na else "")
        )
    if missing.any() and not allow_na:
        raise ValueError(f"column '{name}': missing value in {_rows(col.index[missing])}")
    return (pd.Series(np.append(text, np.array([None], dtype=object))[codes], index=col.index, dtype=object),
            (np.asarray(codes), text))


def _duplicated(out: pd.DataFrame, key: list[str], coded: dict[str, tuple[np.ndarray, Any]]) -> np.ndarray:
    """Rows whose ``key`` another row repeats: the id columns' codes packed into one integer (mixed
    radix; a million rows in 0.04 s once coded, the coding shared with the id checks, where
    ``DataFrame.duplicated`` codes the strings again, 0.19 s),
    or pandas' own check where the packed key would not fit in 62 bits or a column is not coded."""
    if any(c in coded and len(coded[c][1]) == len(out) for c in key):
        return np.zeros(len(out), dtype=bool)  # a key column with a distinct value a row (an arena's battle ids)
    span = [len(coded[c][1]) for c in key if c in coded]
    if len(span) == len(key) and float(np.prod([float(x) for x in span])) < 2.0**62:
        packed = np.zeros(len(out), dtype=np.int64)
        for c in key:
            packed = packed * np.int64(len(coded[c][1])) + coded[c][0].astype(np.int64)
        return pd.Series(packed).duplicated(keep=False).to_numpy()
    return out.duplicated(key, keep=False).to_numpy()


def validate_judgments(df: pd.DataFrame) -> pd.DataFrame:
    """Check a judgments table and return a normalized copy.

    Parameters
    ----------
    df : pandas.DataFrame, shape (n_rows, n_columns)
        Long-format judgments (columns described in the module docstring).

    Returns
    -------
    pandas.DataFrame
        A copy with ``item``, ``a``, ``b``, ``judge`` as strings, ``winner`` in
        {"a", "b", "tie"} (derived from ``p_a`` when absent: ``p_a > 0.5`` gives "a",
        ``p_a < 0.5`` gives "b", exactly 0.5 gives "tie"), ``p_a`` as float where given,
        ``human`` as "a" / "b" / None, and every other column untouched.  The row index is
        reset to ``0..n-1`` so that error messages and results refer to positions.

    Raises
    ------
    ValueError
        Naming the column and rows for: a non-DataFrame or empty table, a missing required
        column, missing or empty ids, ids that differ only by surrounding whitespace, ``a == b``, NaN or out-of-range ``p_a``, an unknown ``winner``
        or ``human`` value, a ``winner`` that contradicts ``p_a``, and duplicate
        (item, a, b, judge[, sample]) rows.

    Examples
    --------
    >>> import pandas as pd, bayes_judge as bj
    >>> bj.validate_judgments(pd.DataFrame({"item": [1], "a": ["x"], "b": ["y"], "p_a": [0.7]}))
      item  a  b  p_a  judge winner human
    0    1  x  y  0.7  judge      a  None
    """
    return coded_judgments(df)[0]


def coded_judgments(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """:func:`validate_judgments`, with the codes of the id columns it computes on the way.

    Returns
    -------
    table : DataFrame
        :func:`validate_judgments`'s normalized copy.
    coded : dict
        ``"item"``, ``"a"``, ``"b"``, ``"judge"`` → ``(codes, uniques)``: ``table[c] ==
        uniques[codes]`` (int codes, shape (n_rows,); uniques an object array of the ids as text,
        in order of first appearance), for readers that would otherwise code the same million
        strings again; ``"sample"`` where given: its codes and raw distinct values (a missing
        one a value of its own); ``"winner"`` (where no winner is derived from ``p_a``) and
        ``"human"`` where given: codes and the distinct labels as normalized (a missing one −1).
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"judgments must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ValueError("judgments table is empty: no rows to work with")
    missing_cols = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing_cols:
        raise ValueError(
            f"judgments table is missing required column(s) {missing_cols}; "
            f"it has {list(df.columns)}"
        )
    if "winner" not in df.columns and "p_a" not in df.columns:
        raise ValueError("judgments table needs a 'winner' column, a 'p_a' column, or both")
    read = set(KEY_COLUMNS) | {"winner", "p_a", "human", "sample"}
    twice = sorted({str(c) for c in df.columns[df.columns.duplicated()] if c in read})
    if twice:
        raise ValueError(f"judgments table has column(s) {twice} more than once; keep one of each")

    out = df.reset_index(drop=True).copy()
    # each id column coded once: its distinct values for the id checks, its codes for the duplicate
    # key and for the readers (coded_judgments)
    coded: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for c in ("item", "a", "b"):
        na = out[c].isna()
        if na.any():
            raise ValueError(f"column '{c}': missing id in {_rows(out.index[na])}")
        out[c], codes, uniq = _coded_ids(out[c])
        coded[c] = (codes, uniq)
    if "judge" not in out.columns:
        out["judge"] = DEFAULT_JUDGE
        coded["judge"] = (np.zeros(len(out), dtype=np.intp), np.array([DEFAULT_JUDGE], dtype=object))
    else:
        na = out["judge"].isna()
        if na.any():
            raise ValueError(f"column 'judge': missing judge name in {_rows(out.index[na])}")
        out["judge"], codes, uniq = _coded_ids(out["judge"])
        coded["judge"] = (codes, uniq)
    _check_ids(out, {c: u for c, (_, u) in coded.items()})
    # a == b compared on the codes (b's distinct ids looked up among a's: a million rows 0.01 s,
    # where comparing the strings row by row takes 0.13 s)
    (ca, ua), (cb, ub) = coded["a"], coded["b"]
    if pd.Index(ua).is_unique:
        same = pd.Series(pd.Index(ua).get_indexer(pd.Index(ub))[cb] == ca, index=out.index)
    else:  # pragma: no cover - the distinct ids' texts are distinct (_coded_ids)
        same = out["a"] == out["b"]
    if same.any():
        raise ValueError(
            f"columns 'a' and 'b': a candidate is compared with itself in {_rows(out.index[same])}"
        )

    if "p_a" in out.columns:
        p = pd.to_numeric(out["p_a"], errors="coerce").astype(float)
        non_numeric = p.isna() & out["p_a"].notna()
        if non_numeric.any():
            raise ValueError(f"column 'p_a': not a number in {_rows(out.index[non_numeric])}")
        if "winner" not in out.columns:
            nan = ~np.isfinite(p.to_numpy())
            if nan.any():
                raise ValueError(f"column 'p_a': NaN or infinite probability in {_rows(out.index[nan])}")
        bad = np.isfinite(p.to_numpy()) & ((p < 0) | (p > 1)).to_numpy()
        inf = np.isinf(p.to_numpy())
        if bad.any() or inf.any():
            raise ValueError(
                f"column 'p_a': probability outside [0, 1] in {_rows(out.index[bad | inf])}"
            )
        out["p_a"] = p

    derived = None
    if "p_a" in out.columns:
        pa = out["p_a"].to_numpy()
        derived = np.where(pa > 0.5, "a", np.where(pa < 0.5, "b", "tie")).astype(object)
        derived[np.isnan(pa)] = None
    if "winner" in out.columns:
        w, coded["winner"] = _normalize_label(out["winner"], "winner", WINNERS, allow_na=derived is not None)
        if derived is not None:
            no_w = w.isna().to_numpy()
            no_p = pd.isna(derived)
            both_missing = no_w & no_p
            if both_missing.any():
                raise ValueError(
                    f"columns 'winner' and 'p_a': neither is given in {_rows(out.index[both_missing])}"
                )
            conflict = ~no_w & ~no_p & (w.to_numpy() != derived)
            if conflict.any():
                raise ValueError(
                    f"columns 'winner' and 'p_a' disagree in {_rows(out.index[conflict])} "
                    "(winner must be 'a' when p_a > 0.5, 'b' when p_a < 0.5, 'tie' at 0.5)"
                )
            if no_w.any():  # the winners derived from p_a: the codes no longer say them
                del coded["winner"]
                w = pd.Series(np.where(no_w, derived, w.to_numpy()), index=out.index, dtype=object)
        out["winner"] = w.astype(object)
    else:
        out["winner"] = derived

    if "human" in out.columns:
        out["human"], coded["human"] = _normalize_label(out["human"], "human", ("a", "b"), allow_na=True)
    else:
        out["human"] = None

    key = list(KEY_COLUMNS) + (["sample"] if "sample" in out.columns else [])
    if "sample" in out.columns:  # coded too, so that the packed key serves tables with repeats
        s_codes, s_uniq = pd.factorize(out["sample"], use_na_sentinel=False)  # a missing one a code of its own
        coded["sample"] = (s_codes, np.asarray(s_uniq))
    dup = _duplicated(out, key, coded)
    if dup.any():
        raise ValueError(
            f"duplicate judgments: {_rows(out.index[dup])} repeat the key {key}; "
            "a judge that judged the same comparison more than once needs a 'sample' column "
            "numbering the repeats"
        )
    return out, coded
