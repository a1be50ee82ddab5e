"""What ``bj.report`` accepts: fits, saved runs and an output path, checked before any work."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import arviz as az

from ..analysis.runs import load_run

__all__ = ["collect_runs", "check_output_path", "fit_kind", "RunInput"]

RunInput = az.InferenceData | str | os.PathLike
WIN_RATE, RANKING, LEADERBOARD, OTHER = "win-rate", "ranking", "leaderboard", "other"


def fit_kind(idata: az.InferenceData) -> str:
    """``"win-rate"`` (posterior ``p`` over ``pair``), ``"ranking"`` (``s`` over ``candidate``),
    ``"leaderboard"`` (``attrs["task"]``, as :func:`bayes_judge.leaderboard` sets it, with scores
    ``s`` over ``system``) or ``"other"``."""
    post = idata["posterior"]
    task = (idata.attrs or {}).get("task") or post.attrs.get("task")
    if task == LEADERBOARD and "s" in post and "system" in post["s"].dims:
        return LEADERBOARD
    if "p" in post and "pair" in post["p"].dims:
        return WIN_RATE
    if "s" in post and "candidate" in post["s"].dims:
        return RANKING
    return OTHER


def _load(path: str | os.PathLike) -> az.InferenceData:
    try:
        return load_run(path)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"report: cannot read run {os.fspath(path)!r}: {err}") from err
    except ValueError as err:
        raise ValueError(f"report: cannot read run {os.fspath(path)!r}: {err}") from err
    except OSError as err:  # unreadable NetCDF
        raise ValueError(f"report: cannot read run {os.fspath(path)!r}: {err}") from err


def _default_name(idata: az.InferenceData, k: int) -> str:
    attrs = idata.attrs or {}
    method = attrs.get("method") or attrs.get("model")
    return f"run {k}" + (f" ({method})" if method else "")


def _one(item: object, name: str | None, k: int) -> tuple[str, az.InferenceData]:
    if isinstance(item, az.InferenceData):
        idata = item
        label = name or _default_name(idata, k)
    elif isinstance(item, str | os.PathLike):
        idata = _load(item)
        stem = Path(os.fspath(item)).name
        label = name or (stem[: -len(Path(stem).suffix)] if Path(stem).suffix in (".nc", ".json") else stem)
    else:
        where = f"run {name!r}" if name is not None else f"entry {k}"
        raise TypeError(
            f"report: {where} is a {type(item).__name__}; expected an arviz.InferenceData or the "
            "path of a run saved by bj.save_run (.nc / .json)"
        )
    if not hasattr(idata, "posterior"):
        groups = ", ".join(idata.groups()) or "none"
        raise ValueError(
            f"report: run {label!r} has no posterior group (groups: {groups}); pass a fitted "
            "InferenceData from bj.win_rate, bj.rank(..., bayesian=True) or bj.leaderboard"
        )
    return label, idata


def collect_runs(
    idata_or_runs: RunInput | Sequence[RunInput] | Mapping[str, RunInput],
) -> list[tuple[str, az.InferenceData]]:
    """Normalize the runs to report into ``(name, InferenceData)`` pairs with unique names.

    Parameters
    ----------
    idata_or_runs
        One InferenceData; a path to a saved run; a list of either; or a dict name -> either.

    Raises
    ------
    TypeError
        An entry is neither an InferenceData nor a path.
    ValueError
        No runs, a run without a posterior group, or a saved run that cannot be read
        (e.g. written by an incompatible version).
    FileNotFoundError
        A saved run's files are missing.
    """
    # InferenceData is itself a Mapping (group name -> Dataset): test it first
    if isinstance(idata_or_runs, az.InferenceData | str | os.PathLike):
        entries = [_one(idata_or_runs, None, 1)]
    elif isinstance(idata_or_runs, Mapping):
        entries = [_one(v, str(k), i + 1) for i, (k, v) in enumerate(idata_or_runs.items())]
    elif isinstance(idata_or_runs, Sequence):
        entries = [_one(v, None, i + 1) for i, v in enumerate(idata_or_runs)]
    else:
        raise TypeError(
            f"report: idata_or_runs is a {type(idata_or_runs).__name__}; expected an InferenceData, "
            "a path to a saved run, or a list or dict of them"
        )
    if not entries:
        raise ValueError("report: no runs to report (idata_or_runs is empty)")
    return _unique(entries)


def _unique(entries: list[tuple[str, az.InferenceData]]) -> list[tuple[str, az.InferenceData]]:
    seen: dict[str, int] = {}
    out = []
    for name, idata in entries:
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name} #{seen[name]}", idata))
    return out


def check_output_path(path: str | os.PathLike) -> Path:
    """Check that the report can be written at ``path`` (missing folders may be created).

    Raises
    ------
    TypeError
        ``path`` is not a string or path.
    ValueError
        ``path`` is an existing folder, an existing file that is not writable, or lies under a
        file or a folder that is not writable.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"report: path must be a str or os.PathLike, got {type(path).__name__}")
    out = Path(path).expanduser()
    if out.is_dir():
        raise ValueError(f"report: output path {out} is an existing folder; give a file name such as {out / 'report.html'}")
    if out.exists() and not os.access(out, os.W_OK):
        raise ValueError(f"report: output file {out} exists and is not writable")
    ancestor = out.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(
            f"report: cannot write {out}: {ancestor} is a file, not a folder, so the folder "
            f"{out.parent} cannot be created"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"report: cannot write {out}: the folder {ancestor} is not writable")
    return out
