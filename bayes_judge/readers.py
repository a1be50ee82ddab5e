"""One reader for judgment files in the formats people have: CSV, Parquet, JSON Lines, JSON.

:func:`read_judgments` reads a file (or takes a DataFrame), renames columns to the judgments
table's names (``item``, ``a``, ``b``, ``judge``, ``p_a``, ``winner``, ``human``; see
:mod:`bayes_judge.schema`), recognizes Chatbot Arena exports (``question_id``, ``model_a``,
``model_b``, ``winner`` in ``model_a`` / ``model_b`` / ``tie`` / ``tie (bothbad)``) and normalizes
the winner labels.  It keeps every row, in order, and every other column untouched; it does not
validate (:func:`load_judgments` reads and validates in one call).

>>> import bayes_judge as bj
>>> df = bj.read_judgments("arena.jsonl")                              # doctest: +SKIP
>>> df = bj.read_judgments("runs.csv", mapping="a=model_a,b=model_b")  # doctest: +SKIP
>>> df = bj.load_judgments("runs.parquet", mapping={"p_a": "prob"})     # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from .judge_files import (
    FRAMEWORKS,
    _id,
    caller_stacklevel,
    framework_key,
    is_gzip,
    open_text,
    turn_number,
)

__all__ = ["read_judgments", "load_judgments", "FORMATS", "SUFFIXES"]

#: file formats by name (``format=``) and the aliases accepted for them
FORMATS: dict[str, str] = {
    "csv": "csv", "tsv": "tsv", "parquet": "parquet", "pq": "parquet",
    "jsonl": "jsonl", "ndjson": "jsonl", "json": "json",
}
#: file suffixes and the format each selects; csv, tsv, jsonl and json may end in ``.gz`` too
SUFFIXES: dict[str, str] = {
    ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
}
_GZIP_FORMATS = ("csv", "tsv", "jsonl", "json")
ACCEPTED = ".csv, .tsv, .parquet/.pq, .jsonl/.ndjson, .json (csv, tsv, jsonl and json also .gz-compressed)"

# the judgments table's own columns, and the Arena export's names for some of them
_KNOWN_COLUMNS = ("item", "a", "b", "judge", "p_a", "winner", "human", "sample")
_ARENA_COLUMNS = ("model_a", "model_b", "question_id")
# columns read as text from CSV, so that an id "001" stays "001" (and "1" and 1 agree)
_TEXT_COLUMNS = ("item", "a", "b", "judge", "winner", "human", *_ARENA_COLUMNS)
_TEXT_TARGETS = ("item", "a", "b", "judge", "winner", "human")

# winner spellings (lower case, whitespace removed) -> the package's labels
_WINNER_VALUES: dict[str, str] = {
    "a": "a", "b": "b", "tie": "tie",
    "model_a": "a", "model_b": "b", "tie(bothbad)": "tie",
}
_ARENA_WINNERS = ("model_a", "model_b", "tie(bothbad)")
ACCEPTED_WINNERS = ("a", "b", "tie", "model_a", "model_b", "tie (bothbad)")


class _Rename(NamedTuple):
    """One mapping entry ``target=source`` as given (``target``/``source`` None: no ``=``)."""

    entry: str
    target: str | None
    source: str | None


# -- mapping --------------------------------------------------------------------------------


def _parse_mapping(mapping: Mapping[str, str] | str | None) -> list[_Rename]:
    """Split a mapping into entries; the checks that need the table's columns come later."""
    if mapping is None:
        return []
    if isinstance(mapping, str):
        out = []
        for raw in mapping.split(","):
            entry = raw.strip()
            if not entry:  # "a=x," or an empty string: nothing to rename
                continue
            if "=" not in entry:
                out.append(_Rename(entry, None, None))
            else:
                target, _, source = entry.partition("=")
                out.append(_Rename(entry, target.strip(), source.strip()))
        return out
    if isinstance(mapping, Mapping):
        out = []
        for target, source in mapping.items():
            if not isinstance(target, str) or not isinstance(source, str):
                raise ValueError(
                    f"mapping entry {target!r}: {source!r}: names must be strings "
                    "(package column -> the file's column)"
                )
            out.append(_Rename(f"{target}={source}", target.strip(), source.strip()))
        return out
    raise ValueError(
        f"mapping must be a dict {{package column: file column}} or a string 'a=model_a,b=model_b', "
        f"got {type(mapping).__name__}"
    )


def _text_columns(renames: Iterable[_Rename]) -> list[str]:
    """Columns to read as text: the known id/label columns and the file columns mapped onto them."""
    cols = list(_TEXT_COLUMNS)
    cols += [r.source for r in renames if r.source and r.target in _TEXT_TARGETS]
    return cols


_LABEL_COLUMNS = ("winner", "human")  # text whose "NA" / "None" may well mean "no verdict"
# pandas' default missing-value spellings (pandas.read_csv, ``na_values``)
_PANDAS_NA = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
              "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def _na_values(path: Path, sep: str, compression: Literal["gzip"] | None,
               text_columns: Iterable[str]) -> dict[str, list[str]]:
    """pandas' missing-value spellings per column, except that an id column's only missing value is an
    empty cell: a system, judge or item named "None", "NA" or "null" is that name, not a missing id."""
    ids = set(text_columns) - set(_LABEL_COLUMNS)
    header = pd.read_csv(path, sep=sep, nrows=0, compression=compression).columns
    return {str(c): ([""] if c in ids else _PANDAS_NA) for c in header}


def _apply_mapping(df: pd.DataFrame, renames: list[_Rename], where: str) -> pd.DataFrame:
    """Rename ``source`` columns to ``target`` names, after checking every entry."""
    if not renames:
        return df
    columns = [str(c) for c in df.columns]
    have = f"{where} has columns {columns}"

    def fail(entry: str, problem: str) -> ValueError:
        return ValueError(f"mapping entry {entry!r}: {problem}; {have} "
                          "(write target=source: the package's column = the file's column)")

    targets: dict[str, str] = {}
    sources: dict[str, str] = {}
    for r in renames:
        if r.target is None or r.source is None:
            raise fail(r.entry, "no '=' (expected target=source, e.g. a=model_a)")
        if not r.target or not r.source:
            raise fail(r.entry, "empty column name")
        if r.source not in df.columns:
            raise fail(r.entry, f"column {r.source!r} is not in {where}")
        if r.target in targets:
            raise fail(r.entry, f"column {r.target!r} is already mapped by {targets[r.target]!r}")
        if r.source in sources:
            raise fail(r.entry, f"column {r.source!r} is already mapped by {sources[r.source]!r}; "
                                "one file column cannot become two package columns")
        targets[r.target] = r.entry
        sources[r.source] = r.entry
    renamed = {r.source: r.target for r in renames if r.source != r.target}
    for r in renames:
        assert r.target is not None  # checked above
        if r.target in df.columns and r.target not in renamed and r.source != r.target:
            raise fail(r.entry, f"{where} already has a column {r.target!r}; map it away "
                                f"(e.g. {r.target}_orig={r.target}) or drop it first")
    return df.rename(columns=renamed)


# -- reading files --------------------------------------------------------------------------


def _benchmark_of(format: str | None) -> str | None:
    """The benchmark (a key of :data:`~bayes_judge.judge_files.FRAMEWORKS`) that ``format=`` names,
    ``_`` read as ``-`` (``"mt_bench"`` is ``"mt-bench"``); None for any other format."""
    if format is None:
        return None
    key = framework_key(format)
    return key if key in FRAMEWORKS else None


def _format_of(path: Path, format: str | None) -> str:
    """The format named by ``format=`` or by the file's suffix (``.gz`` looked through)."""
    if format is not None:
        key = str(format).strip().lower().lstrip(".")
        if key not in FORMATS:
            raise ValueError(f"format {format!r} for {path} is not one of {sorted(FORMATS)} (file formats) "
                             f"or {sorted(FRAMEWORKS)} (benchmarks' judgment files; '_' for '-' accepted)")
        return FORMATS[key]
    name = path.name.lower()
    gz = name.endswith(".gz")
    stem = name[: -len(".gz")] if gz else name
    suffix = os.path.splitext(stem)[1]
    fmt = SUFFIXES.get(suffix)
    if fmt is None or (gz and fmt not in _GZIP_FORMATS):
        shown = (suffix + ".gz" if gz else suffix) or "(none)"
        raise ValueError(f"{path}: unsupported file type {shown!r}; accepted: {ACCEPTED} "
                         "(or pass format=)")
    return fmt


def _records(rows: list, path: Path, where: str) -> pd.DataFrame:
    bad = [i for i, r in enumerate(rows) if not isinstance(r, dict)]
    if bad:
        raise ValueError(f"{path}: {where} {bad[0] + 1} is a JSON {type(rows[bad[0]]).__name__}, "
                         "not an object (one record per judgment expected)")
    return pd.DataFrame(rows) if rows else pd.DataFrame()


def _read_jsonl(path: Path) -> pd.DataFrame:
    rows = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}: line {lineno} is not valid JSON ({err.msg})") from err
            if not isinstance(rows[-1], dict):
                raise ValueError(f"{path}: line {lineno} is a JSON {type(rows[-1]).__name__}, "
                                 "not an object (one record per line expected)")
    return pd.DataFrame(rows) if rows else pd.DataFrame()


def _read_json(path: Path) -> pd.DataFrame:
    with open_text(path) as fh:
        text = fh.read()
    if not text.strip():  # an empty file: no records, as "[]" (reported by the caller)
        return pd.DataFrame()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno}); "
                         "a .json file holds a list of records, a .jsonl file one record a line") from err
    if not isinstance(data, list):
        raise ValueError(f"{path}: a .json judgments file holds a list of records "
                         f"([{{...}}, {{...}}]), this one a JSON {type(data).__name__}")
    return _records(data, path, "record")


def _read_file(path: Path, fmt: str, text_columns: Iterable[str] = _TEXT_COLUMNS) -> pd.DataFrame:
    """Read ``path`` as ``fmt``; CSV id/label columns as text.  Parser errors propagate."""
    if fmt in ("csv", "tsv"):
        text_columns = list(text_columns)
        text = dict.fromkeys(text_columns, str)
        sep = "\t" if fmt == "tsv" else ","
        compression: Literal["gzip"] | None = "gzip" if is_gzip(path) else None
        _check_complete(path, gzipped=compression == "gzip")
        na = _na_values(path, sep, compression, text_columns)
        import warnings

        with warnings.catch_warnings(record=True) as caught:  # index_col=False: never the first column as the
            warnings.simplefilter("always", pd.errors.ParserWarning)  # index (every column shifted left)
            df = pd.read_csv(path, sep=sep, dtype=text, compression=compression, keep_default_na=False,
                             na_values=na, index_col=False)
        if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
            # rows hold more fields than the header: a delimiter ending each row is dropped, an extra
            # value is an error (pandas would drop it silently)
            header = list(pd.read_csv(path, sep=sep, nrows=0, compression=compression).columns)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", pd.errors.ParserWarning)
                df = pd.read_csv(path, sep=sep, dtype={**text, "__extra__": str}, compression=compression,
                                 keep_default_na=False, na_values=na, header=0, names=[*header, "__extra__"],
                                 index_col=False)
            if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
                raise ValueError(f"{path}: rows hold two or more values beyond the header's {len(header)} columns")
            extra = df.pop("__extra__").fillna("").astype(str).str.strip()
            if (extra != "").any():
                rows = [int(i) for i in np.flatnonzero((extra != "").to_numpy())[:5]]
                raise ValueError(f"{path}: row(s) {rows} hold one value more than the header's {len(header)} "
                                 f"columns (e.g. {extra[extra != ''].iloc[0]!r})")
        return _float_written_ids(df, text_columns)
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "jsonl":
        return _read_jsonl(path)
    return _read_json(path)


def _float_written_ids(df: pd.DataFrame, text_columns: Iterable[str]) -> pd.DataFrame:
    """An id column that pandas wrote as floats (every value ``1.0``, ``2.0``, …: an integer column
    with a missing value, or after a merge) reads as the integers it holds, as the same table in
    memory or in Parquet does (``schema.ids_as_text``); read as text, system ``1.0`` was another
    system than ``1`` and labels keyed ``1`` matched nothing. A column with any other value keeps
    its text (``007``, ``v1.0``)."""
    for c in ("item", "a", "b", "judge", "question_id", "model_a", "model_b"):
        if c not in df.columns or c not in set(text_columns):
            continue
        vals = df[c].dropna().astype(str)
        if len(vals) and vals.str.fullmatch(r"-?\d+\.0").all():
            df[c] = df[c].where(df[c].isna(), df[c].astype(str).str[:-2])
    return df


def _check_complete(path: Path, gzipped: bool = False) -> None:
    """A text table must end with a line break: a file cut inside its last number would otherwise
    load with a different value (a p_a of 0.93 cut to "0." reads as 0.0, the verdict flipped).
    A gzip'd table is read through once for its last bytes (gzip has no random access)."""
    size = path.stat().st_size
    if size == 0:
        return
    if gzipped:
        import gzip

        tail = b""
        try:
            with gzip.open(path, "rb") as gz:
                while chunk := gz.read(1 << 20):
                    tail = (tail + chunk)[-200:]
        except (EOFError, OSError) as e:  # the compressed stream itself was cut
            raise ValueError(f"{path}: the gzip stream is incomplete or damaged ({e}); the file was cut") from e
        if not tail:
            return
    else:
        with open(path, "rb") as fh:
            fh.seek(max(0, size - 200))
            tail = fh.read()
    if not tail.endswith((b"\n", b"\r")):
        last = tail.splitlines()[-1].decode("utf-8", "replace") if tail.splitlines() else ""
        raise ValueError(
            f"{path}: the file does not end with a line break, so its last row may have been cut "
            f"(it reads {last[-80:]!r}); if the file is complete, add a newline at its end")


def _check_path(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(f"judgments file {path} not found")
    if path.is_dir():
        raise IsADirectoryError(f"judgments file {path} is a folder, not a file")


# -- normalizing ----------------------------------------------------------------------------


def _normalize_winner(col: pd.Series, where: str) -> tuple[pd.Series, bool]:
    """Winner labels as "a" / "b" / "tie" (missing kept); also whether Arena spellings were seen."""
    missing = col.isna()
    keys = col[~missing].astype(str).map(lambda v: re.sub(r"\s+", "", v.lower()))
    unknown = ~keys.isin(list(_WINNER_VALUES))
    if unknown.any():
        counts = Counter(str(v) for v in col[~missing][unknown])
        listed = ", ".join(f"{v!r} ({n})" for v, n in counts.most_common())
        raise ValueError(
            f"column 'winner' of {where}: unknown value(s) {listed}; accepted (any case and "
            f"spacing): {', '.join(repr(v) for v in ACCEPTED_WINNERS)} or missing"
        )
    arena = bool(keys.isin(list(_ARENA_WINNERS)).any())
    mapped = keys.map(_WINNER_VALUES)
    if (mapped == col[~missing].astype(str)).all():
        return col, arena  # already the package's labels: leave the column as it is
    out = pd.Series(None, index=col.index, dtype=object)
    out[~missing] = mapped.to_numpy(dtype=object)
    if isinstance(col.dtype, pd.StringDtype):
        out = out.astype(col.dtype)
    return out, arena


def _warn_probability_columns(df: pd.DataFrame) -> None:
    """Warn about a column that looks like the judge's probability while ``p_a`` is absent."""
    if "p_a" in df.columns:
        return
    for c in df.columns:
        if c in _KNOWN_COLUMNS or c in _ARENA_COLUMNS:
            continue
        col = df[c]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        vals = col.dropna().to_numpy(dtype=float)
        if vals.size == 0 or not np.all((vals >= 0) & (vals <= 1)):
            continue
        if np.all((vals == 0) | (vals == 1)):
            continue  # binary: a flag or a hard label, not a probability
        warnings.warn(
            f"column {c!r} looks like a probability (all values in [0, 1]) but is not used: "
            f"pass mapping p_a={c} if it is the judge's P(a better)",
            UserWarning, stacklevel=caller_stacklevel(),
        )


_KAGGLE_WINNERS = ("winner_model_a", "winner_model_b", "winner_tie")


def _kaggle_winner(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """The Kaggle Arena format's one-hot ``winner_model_a`` / ``winner_model_b`` / ``winner_tie``
    as one ``winner`` column; a row with no or several ones is an error naming it."""
    onehot = df[list(_KAGGLE_WINNERS)].apply(pd.to_numeric, errors="coerce")
    bad = ~onehot.isin([0, 1]).all(axis=1) | (onehot.sum(axis=1) != 1)
    if bad.any():
        rows = ", ".join(str(i) for i in df.index[bad][:8])
        raise ValueError(f"{where}: columns {list(_KAGGLE_WINNERS)} must hold exactly one 1 per row "
                         f"(the Kaggle Arena format); row(s) {rows} do not")
    winner = np.array(["a", "b", "tie"], dtype=object)[np.argmax(onehot.to_numpy(), axis=1)]
    return df.drop(columns=list(_KAGGLE_WINNERS)).assign(winner=winner)


def _judge_column_names_judges(judge: pd.Series) -> bool:
    """Whether a ``judge`` column beside ``model_a`` / ``model_b`` names judges (an LLM judge's file)
    rather than voters: no Arena voter id (``arena_user_…``), and one name throughout or a median of
    at least 20 verdicts a name (an LLM judge gives hundreds; Arena's voters a few each)."""
    names = judge.astype(str)
    if names.str.startswith("arena_user").any():
        return False
    counts = names.value_counts()
    return len(counts) == 1 or float(counts.median()) >= 20


def _turns(turn: pd.Series, where: str) -> list[int]:
    """The ``turn`` column as turn numbers; a boolean, a non-integral or a missing turn is an error
    naming its rows (never coerced: ``int(2.5)`` is 2, ``int(True)`` is 1)."""
    if (pd.api.types.is_integer_dtype(turn.dtype) and not pd.api.types.is_bool_dtype(turn.dtype)
            and not turn.isna().any()):
        return turn.astype(np.int64).tolist()  # a whole column of ints (an Arena export's): nothing to check
    turns = [turn_number(v) for v in turn]
    bad = [i for i, t in enumerate(turns) if t is None]
    if bad:
        rows = ", ".join(str(turn.index[i]) for i in bad[:8]) + (f" and {len(bad) - 8} more" if len(bad) > 8 else "")
        raise ValueError(f"column 'turn' of {where}: row(s) {rows} hold {turn.iloc[bad[0]]!r}"
                         f"{' ...' if len(bad) > 1 else ''}, not a turn number (1, 2, ...)")
    return [t for t in turns if t is not None]


def _question_items(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """``question_id`` renamed ``item``; where a ``turn`` column tells apart the turns of one
    question (MT-Bench human judgments: turn 1 and turn 2 of question 81 are two comparisons), the
    item is ``81/turn1``, as the MT-Bench pair reader's. A ``turn`` with one value a question (a
    Chatbot Arena export's: the conversation's length) leaves the question id as the item."""
    df = df.rename(columns={"question_id": "item"})
    if "turn" not in df.columns:
        return df
    turns = _turns(df["turn"], where)
    # several turns of one question (on the ids as read: a million-row Arena export stays vectorized)
    if pd.DataFrame({"q": df["item"], "t": turns}).dropna().groupby("q")["t"].nunique().max() > 1:
        questions = df["item"].map(_id).where(df["item"].notna(), None)
        df["item"] = [None if q is None else f"{q}/turn{t}" for q, t in zip(questions, turns, strict=True)]
    return df


def _normalize(df: pd.DataFrame, renames: list[_Rename], where: str) -> pd.DataFrame:
    original = set(df.columns)
    df = _apply_mapping(df, renames, where)
    if set(_KAGGLE_WINNERS) <= set(df.columns) and "winner" not in df.columns:
        df = _kaggle_winner(df, where)
    # an Arena export of people's votes: winner values in Arena's spelling (model_a, tie (bothbad)),
    # or model_a / model_b with a hard winner, no probability and either no judge column or one of
    # voter ids (arena_user_973). A judge column of other names is an LLM judge's file in those
    # columns: its verdicts stay that judge's, never people's.
    arena = {"model_a", "model_b"} <= original and "winner" in df.columns and "p_a" not in df.columns
    judges_named = "judge" in df.columns and _judge_column_names_judges(df["judge"])
    if arena and "judge" in df.columns:
        arena = not judges_named
    if "a" not in df.columns and "b" not in df.columns and {"model_a", "model_b"} <= set(df.columns):
        df = df.rename(columns={"model_a": "a", "model_b": "b"})
    if "winner" in df.columns:
        winner, arena_winners = _normalize_winner(df["winner"], where)
        df["winner"] = winner
        arena = arena or (arena_winners and not judges_named)  # Arena's spelling in an LLM judge's file too
    if "item" not in df.columns:
        if "question_id" in df.columns:
            df = _question_items(df, where)
        elif arena:
            df.insert(0, "item", np.arange(len(df)))
    if arena and "judge" in df.columns and "voter" not in df.columns and not {"a", "b"} <= original:
        # the real export's "judge" holds the voters' ids (arena_user_973): people, one judge
        df = df.rename(columns={"judge": "voter"})
    if arena and "judge" not in df.columns:
        df["judge"] = "human"
    if arena and "sample" not in df.columns and {"item", "a", "b", "judge"} <= set(df.columns):
        # several people voting on the same prompt and pair: each vote is one observation
        key = ["item", "a", "b", "judge"]
        if df.duplicated(key).any():
            df["sample"] = df.groupby(key, sort=False, dropna=False).cumcount()
    _warn_probability_columns(df)
    return df


# -- public ---------------------------------------------------------------------------------


def read_judgments(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    mapping: Mapping[str, str] | str | None = None,
    format: str | None = None,
    baseline: str = "gpt-4-0314",
) -> pd.DataFrame:
    """Read a judgments file (CSV, TSV, Parquet, JSON Lines, JSON) into the judgments table's names.

    Parameters
    ----------
    source : str, os.PathLike or pandas.DataFrame
        A file, its format chosen by suffix: ``.csv``, ``.tsv``, ``.parquet`` / ``.pq``,
        ``.jsonl`` / ``.ndjson`` (one JSON object per line), ``.json`` (a list of records);
        csv, tsv, jsonl and json may be gzip-compressed (``.csv.gz``, ``.jsonl.gz``, ...).  A
        DataFrame goes through the same renaming and normalization (the input is not modified).
        In CSV files the id and label columns (``item``, ``a``, ``b``, ``judge``, ``winner``,
        ``human``, the Arena names and the file columns mapped onto them) are read as text, so
        that an id ``"001"`` stays ``"001"``.
    mapping : dict or str, optional
        Column renames **target=source**: the key is the package's column, the value is the
        file's column, as a dict ``{"a": "model_a", "b": "model_b", "p_a": "prob"}`` or the
        command-line string ``"a=model_a, b=model_b, p_a=prob"`` (spaces around names are
        ignored).  Applied before the automatic Arena renames below.
    format : str, optional
        ``"csv"``, ``"tsv"``, ``"parquet"``, ``"jsonl"`` (``"ndjson"``) or ``"json"``, for a file
        whose suffix does not say; gzip compression is recognized from the file's content. Or
        ``"mt-bench"``, ``"alpaca-eval"``, ``"arena-hard"`` (also spelled with ``_``): those
        benchmarks' judgment files (:mod:`bayes_judge.judge_files`), which a ``.jsonl`` /
        ``.json`` file of theirs is also recognized as without ``format=``.
    baseline : str
        Arena-Hard's baseline model, which its judgment files do not name.

    Returns
    -------
    pandas.DataFrame
        Exactly the input's rows, in order, with:

        - the ``mapping`` renames applied;
        - Chatbot Arena exports recognized: columns ``model_a`` / ``model_b`` become ``a`` /
          ``b`` when the table has neither ``a`` nor ``b``; ``question_id`` becomes ``item``
          when there is no ``item`` column, ``81/turn1`` (as the MT-Bench pair reader's) where a
          ``turn`` column holds two or more turns of one question (MT-Bench human judgments; a
          turn of 2.5, ``true`` or none is an error naming its rows); an Arena table (columns ``model_a`` and
          ``model_b`` with a ``winner``, no ``p_a`` and no ``judge`` column other than voter ids,
          or winner values spelled ``model_a``, ``model_b`` or ``tie (bothbad)``; a ``judge``
          column of judges keeps the table an LLM judge's whatever the spelling: one name
          throughout, or a median of at least 20 verdicts a name, and no ``arena_user`` id) with neither ``item`` nor
          ``question_id`` gets
          ``item`` = the row number (0, 1, ...), i.e. **each row is its own item**; an Arena
          table without a ``judge`` column gets ``judge = "human"``, since the Arena winner is
          a human vote; the real export's ``judge`` column of voter ids (``arena_user_973``)
          becomes ``voter`` and the judge is ``"human"``; repeated votes on the same prompt and
          pair get a ``sample`` number;
        - the Kaggle Arena format (one-hot ``winner_model_a``, ``winner_model_b``,
          ``winner_tie``) read as ``winner``;
        - ``winner`` as ``"a"`` / ``"b"`` / ``"tie"`` (missing kept): ``model_a`` -> ``"a"``,
          ``model_b`` -> ``"b"``, ``tie`` and ``tie (bothbad)`` -> ``"tie"``, and the package's
          own labels in any case and spacing;
        - every other column (covariates such as answer lengths) untouched.

        The table is not validated: pass it to :func:`bayes_judge.validate_judgments` (or use
        :func:`load_judgments`).

    Raises
    ------
    FileNotFoundError
        ``source`` names no file.
    ValueError
        An unsupported suffix or ``format`` (naming the path and the accepted formats), a file
        that cannot be parsed, a JSON Lines or JSON file with no records, a mapping entry without ``=``, with an empty name, naming a
        column not in the file, or taking a column already taken (listing the file's columns),
        or ``winner`` values that are none of the accepted ones (listed with their counts).
    IsADirectoryError
        ``source`` is a folder.

    Warns
    -----
    UserWarning
        When there is no ``p_a`` column but another numeric column has all its values in
        [0, 1] and not only 0 and 1: it is not used as ``p_a`` unless mapped (``p_a=<col>``).

    Examples
    --------
    >>> import pandas as pd, bayes_judge as bj
    >>> arena = pd.DataFrame({"question_id": ["q1", "q2"], "model_a": ["gpt-4", "vicuna"],
    ...                       "model_b": ["vicuna", "gpt-4"], "winner": ["model_a", "tie (bothbad)"]})
    >>> bj.read_judgments(arena)
      item       a       b winner  judge
    0   q1   gpt-4  vicuna      a  human
    1   q2  vicuna   gpt-4    tie  human
    >>> bj.read_judgments(pd.DataFrame({"q": [1], "x": ["m1"], "y": ["m2"], "prob": [0.8]}),
    ...                   mapping="item=q, a=x, b=y, p_a=prob")
       item   a   b  p_a
    0     1  m1  m2  0.8
    """
    renames = _parse_mapping(mapping)
    if isinstance(source, pd.DataFrame):
        if format is not None:
            raise ValueError("format= applies to files; a DataFrame is read as it is")
        return _normalize(source.copy(), renames, "the table")
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"source must be a file path or a pandas DataFrame, got {type(source).__name__}")
    path = Path(source)
    _check_path(path)
    from .judge_files import read_framework

    benchmark = _benchmark_of(format)
    if benchmark is not None:
        return _normalize(read_framework(path, benchmark, baseline=baseline), renames, str(path))
    fmt = _format_of(path, format)
    try:
        df = _read_file(path, fmt, _text_columns(renames))
    except Exception as err:  # any parser failure (pandas, pyarrow, json, gzip) is an unreadable file
        msg = " ".join(str(err).split()) or type(err).__name__
        raise ValueError(msg if msg.startswith(f"{path}:") else f"cannot read {path} as {fmt}: {msg}") from err
    if fmt in ("jsonl", "json") and len(df) == 0:  # an empty file, blank lines or "[]": nothing to read
        raise ValueError(f"{path}: the file has no records (no judgment to read)")
    df = _framework_file(df, path, fmt, baseline)
    return _normalize(df, renames, str(path))


def _framework_file(df: pd.DataFrame, path: Path, fmt: str, baseline: str) -> pd.DataFrame:
    """An MT-Bench, AlpacaEval or Arena-Hard judgment file read as its benchmark means it
    (:mod:`bayes_judge.judge_files`); any other table as it is."""
    from .judge_files import detect_framework, read_framework

    if fmt not in ("jsonl", "json"):
        return df
    framework = detect_framework(dict.fromkeys(df.columns))
    return df if framework is None else read_framework(path, framework, baseline=baseline)


def load_judgments(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    mapping: Mapping[str, str] | str | None = None,
    format: str | None = None,
    baseline: str = "gpt-4-0314",
) -> pd.DataFrame:
    """Read a judgments file (:func:`read_judgments`) and validate it (:func:`validate_judgments`).

    Parameters
    ----------
    source, mapping, format, baseline
        As in :func:`read_judgments` (``baseline``: an Arena-Hard file's baseline model, which the
        file does not name).

    Returns
    -------
    pandas.DataFrame
        The validated, normalized judgments table (index reset to ``0..n-1``).

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`read_judgments` and :func:`bayes_judge.validate_judgments`.

    Examples
    --------
    >>> import pathlib, tempfile, bayes_judge as bj
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judgments.csv"
    >>> _ = path.write_text("item,a,b,judge,winner\\n1,x,y,gpt,a\\n2,y,x,gpt,tie\\n")
    >>> bj.load_judgments(path)[["item", "a", "b", "judge", "winner"]]
      item  a  b judge winner
    0    1  x  y   gpt      a
    1    2  y  x   gpt    tie
    """
    from .schema import validate_judgments

    return validate_judgments(read_judgments(source, mapping=mapping, format=format, baseline=baseline))
