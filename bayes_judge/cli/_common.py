"""Helpers shared by the subcommands: reading tables and runs, checking output paths, printing.

Every helper raises :class:`CLIError` (a ``ValueError``) or ``FileNotFoundError`` with a message
that names the file and the problem; :func:`bayes_judge.cli.main` turns those into one line on
stderr and exit status 2, as ``argparse`` does for bad options.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EndpointError

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az
    import pandas as pd

__all__ = [
    "CLIError",
    "USER_ERRORS",
    "one_line",
    "read_table",
    "write_table",
    "check_output",
    "run_paths",
    "load_runs",
    "fit_kind",
    "format_table",
]

# columns of the judgments table that are ids or labels: read as text, so that "1" and 1 agree
_TEXT_COLUMNS = ("item", "a", "b", "judge", "winner", "human", "candidate", "pair_a", "pair_b")


class CLIError(ValueError):
    """Bad input on the command line: reported as one line, exit status 2."""


# exceptions that mean "the input is wrong", never "the program is wrong": reported in one line
# (EndpointError: unreachable server, refused key, unserved model, malformed answers; stdlib-only import)
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, EndpointError)


def one_line(err: BaseException | str) -> str:
    """The message of ``err`` on one line (whitespace runs collapsed)."""
    msg = " ".join(str(err).split())
    if isinstance(err, BaseException) and not msg:
        msg = type(err).__name__
    if isinstance(err, FileNotFoundError) and err.filename and str(err.filename) not in msg:
        msg = f"{msg}: {err.filename}"
    return msg


def read_table(path: str | os.PathLike, what: str = "table", *, judgments: bool = False,
               mapping: str | None = None, baseline: str = "gpt-4-0314") -> pd.DataFrame:
    """Read a table (``.csv``, ``.tsv``, ``.parquet``, ``.jsonl``, ``.json``; see
    :func:`bayes_judge.read_judgments`); id-like columns are read as text.

    With ``judgments=True`` (or a ``mapping``) the table goes through
    :func:`bayes_judge.read_judgments`: the ``mapping`` renames (``"a=model_a,b=model_b"``:
    the package's column = the file's column), Chatbot Arena exports, winner labels.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    CLIError
        ``path`` is a folder, has another extension, cannot be parsed, holds no rows, or (a
        judgments table) has a bad mapping or unknown winner values.
    """
    import pandas as pd

    from ..readers import (
        ACCEPTED,
        _format_of,
        _normalize,
        _parse_mapping,
        _read_file,
        _text_columns,
    )

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} {p} not found")
    if p.is_dir():
        raise CLIError(f"{what} {p} is a folder, not a .csv or .parquet file")
    try:
        fmt = _format_of(p, None)
    except ValueError:
        name = p.name.lower()
        suffix = (Path(name[:-3]).suffix + ".gz") if name.endswith(".gz") else p.suffix.lower()
        raise CLIError(f"{what} {p}: unsupported file type {suffix or '(none)'!r}; use {ACCEPTED}") from None
    renames = _parse_mapping(mapping)
    try:
        df = _read_file(p, fmt, [*_TEXT_COLUMNS, *_text_columns(renames)])
    except Exception as err:  # noqa: BLE001 - any parser failure is an unreadable file
        raise CLIError(f"cannot read {what} {p}: {one_line(err)}") from err
    if df.empty:
        raise CLIError(f"{what} {p} has no rows")
    if judgments:  # an MT-Bench, AlpacaEval or Arena-Hard judgment file, read as its benchmark means it
        from ..readers import _framework_file

        try:
            df = _framework_file(df, p, fmt, baseline)
        except ValueError as err:
            raise CLIError(one_line(err)) from err
    if judgments or renames:
        # the normalization of bayes_judge.read_judgments, its messages naming this file
        try:
            df = _normalize(df, renames, f"{what} {p}")
        except ValueError as err:
            raise CLIError(one_line(err)) from err
    # text columns as plain Python strings with None for missing cells (pandas' string dtypes
    # keep <NA> or NaN); the package expects object columns
    for c in _TEXT_COLUMNS:
        if c in df.columns and (isinstance(df[c].dtype, pd.StringDtype) or df[c].dtype == object):
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    if (judgments and fmt in ("csv", "tsv") and {"item", "a", "b"} <= set(df.columns)
            and ({"winner", "p_a"} & set(df.columns))):  # verdicts, not a pairs table
        # checked here, where the file is known, so that an error names the file's lines (a row's
        # line is its position + 2 below the header); the analysis checks the table again
        from ..schema import validate_judgments

        try:
            validate_judgments(df)
        except ValueError as err:
            raise CLIError(f"{what} {p}: {_rows_as_lines(one_line(err))}") from err
    return df


def _rows_as_lines(message: str) -> str:
    """A validation message's 0-based ``row(s) i, j`` as the CSV file's ``line(s) i+2, j+2``."""
    import re

    def lines(m: re.Match) -> str:
        nums = ", ".join(str(int(x) + 2) for x in re.findall(r"\d+", m.group(1)))
        return f"line(s) {nums}{m.group(2) or ''}"

    return re.sub(r"row\(s\) ((?:\d+(?:, )?)+)( and \d+ more)?", lines, message)


def check_output(path: str | os.PathLike, what: str = "output") -> Path:
    """Check, before any work, that a file can be written at ``path`` (missing folders may be created).

    Raises
    ------
    CLIError
        ``path`` is an existing folder, lies under a file, or its folder is not writable.
    """
    p = Path(path)
    if str(path) == "" or p.name in ("", ".", ".."):
        raise CLIError(f"{what} path {str(path)!r} names no file")
    if p.is_dir():
        raise CLIError(f"{what} path {p} is an existing folder; give a file name")
    if p.exists() and not os.access(p, os.W_OK):
        raise CLIError(f"cannot write {what} {p}: the file is not writable")
    parent = p.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise CLIError(f"cannot write {what} {p}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CLIError(f"cannot write {what} {p}: the folder {parent} is not writable")
    return p


def check_table_output(path: str | os.PathLike, what: str = "output") -> Path:
    """:func:`check_output` and a table's file type (``.csv``, ``.tsv``, ``.txt``, ``.parquet``),
    before any work."""
    p = check_output(path, what)
    if p.suffix.lower() not in (".csv", ".parquet", ".pq", ".txt", ".tsv") and p.suffix:
        raise CLIError(f"{what} {p}: unsupported file type {p.suffix!r}; use .csv or .parquet")
    return p


def write_table(df: pd.DataFrame, path: str | os.PathLike, what: str = "output") -> Path:
    """Write ``df`` as ``.parquet`` (by suffix) or CSV; folders are created."""
    p = check_table_output(path, what)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix.lower() in (".parquet", ".pq"):
        df.to_parquet(p, index=False)
    else:
        df.to_csv(p, index=False, sep="\t" if p.suffix.lower() == ".tsv" else ",")
    return p


def run_paths(path: str | os.PathLike) -> tuple[Path, Path]:
    """``NAME.nc`` and ``NAME.json`` of a run named with or without a suffix (as ``bj.save_run``)."""
    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (".nc", ".json") else p
    return Path(f"{stem}.nc"), Path(f"{stem}.json")


def run_name(path: str | os.PathLike) -> str:
    nc, _ = run_paths(path)
    return nc.name[: -len(".nc")]


def fit_kind(idata: az.InferenceData) -> str:
    """``"win-rate"``, ``"ranking"`` or ``"other"`` (see :mod:`bayes_judge.report.inputs`)."""
    from ..report.inputs import fit_kind as _kind

    return _kind(idata)


def is_judgments_table(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a file that :func:`bayes_judge.read_judgments` reads by its suffix
    (``.csv``, ``.tsv``, ``.parquet``, ``.jsonl``, ``.ndjson``, ``.json``, the ``.gz`` ones)
    rather than a saved run. A ``.json`` is a run's manifest when its ``.nc`` is there, or unless
    it holds a JSON list or JSON Lines (its first line a whole record; a manifest is written over
    many lines)."""
    from ..judge_files import open_text
    from ..readers import _format_of

    p = Path(path)
    if not p.is_file():
        return False
    try:
        fmt = _format_of(p, None)
    except ValueError:
        return False
    if fmt != "json" or p.name.lower().endswith(".gz"):
        return True
    if run_paths(p)[0].is_file():
        return False
    try:
        with open_text(p) as fh:
            first = fh.readline().strip()
        return first.startswith("[") or isinstance(json.loads(first), dict)
    except (ValueError, OSError):  # not text, or a first line that is no whole record
        return False


def load_runs(paths: Sequence[str | os.PathLike]) -> dict[str, az.InferenceData]:
    """Read saved runs (``bj.load_run``), named by file stem (made unique).

    Raises
    ------
    FileNotFoundError
        A run's ``.nc`` or ``.json`` is missing.
    CLIError
        A file is a judgments table (:func:`is_judgments_table`), not a run (unreadable NetCDF
        or manifest, foreign format, data hash mismatch), or holds neither a win rate nor a
        ranking.
    """
    import arviz as az

    from ..analysis.runs import load_run

    out: dict[str, az.InferenceData] = {}
    for path in paths:
        nc, js = run_paths(path)
        if is_judgments_table(path):
            raise CLIError(f"{path} is a table, not a saved run: fit it first (`bayes-judge fit {path} --out RUN` or "
                           "`bayes-judge leaderboard`), then `summary RUN`")
        for f in (nc, js):
            if not f.is_file():
                raise FileNotFoundError(
                    f"run {path}: file {f} not found (a run is NAME.nc plus NAME.json, written by "
                    "`bayes-judge fit` or bj.save_run)"
                )
        try:
            # eager: read the data and close the file, so that the run can be rewritten later in
            # this process (ArviZ's default lazy loading keeps the NetCDF file open)
            with az.rc_context({"data.load": "eager"}):
                idata = load_run(path)
        except (ValueError, OSError, KeyError) as err:
            raise CLIError(f"{path} is not a readable run: {one_line(err)}") from err
        if fit_kind(idata) == "other":
            raise CLIError(
                f"run {path} holds neither a win rate (posterior p over pair) nor a ranking "
                "(posterior s over candidate)"
            )
        name, base, k = run_name(path), run_name(path), 2
        while name in out:
            name, k = f"{base} #{k}", k + 1
        out[name] = idata
    return out


def format_table(df: pd.DataFrame, *, max_rows: int | None = None, digits: int = 3, index: bool = True) -> str:
    """A plain-text table (no optional dependencies), floats rounded, long tables cut with a note."""
    import numpy as np
    import pandas as pd

    shown = df if max_rows is None or len(df) <= max_rows else df.iloc[:max_rows]
    shown = shown.copy()
    for c in shown.columns:
        if pd.api.types.is_float_dtype(shown[c]):
            d = 0 if str(c).startswith("ess") else digits  # effective sample sizes: whole draws
            shown[c] = [("nan" if not np.isfinite(v) else f"{v:.{d}f}") for v in shown[c]]
    text = shown.to_string(index=index)
    if len(shown) < len(df):
        text += f"\n... ({len(df) - len(shown)} more rows)"
    return text
