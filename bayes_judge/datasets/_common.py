"""Helpers shared by the per-source loaders: id selection, argument checks, soft pairs from scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["prefixed", "preference", "select_ids", "check_judges", "check_tau", "soft_pairs"]


def prefixed(df: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """``df`` with ``prefix`` before every item id."""
    return df.assign(item=prefix + df["item"].astype(str))


def preference(diff: np.ndarray) -> pd.Series:
    """``"a"`` where ``diff > 0``, ``"b"`` where ``diff < 0``, None at a tie or a missing value."""
    out = np.full(len(diff), None, dtype=object)
    out[diff > 0] = "a"
    out[diff < 0] = "b"
    return pd.Series(out, dtype="object")


def select_ids(order: list[str], wanted, *, noun: str, dataset: str) -> list[str]:
    """Ids of a bundled data set: all (``None``), the first ``n`` of ``order``, or the ones named.

    Named ids keep the caller's order (duplicates dropped); an empty list or an unknown id is an
    error that names the ids, so that no call silently selects nothing.
    """
    if wanted is None:
        return order
    if isinstance(wanted, int | np.integer) and not isinstance(wanted, bool):
        if not 1 <= wanted <= len(order):
            raise ValueError(f"{noun}s={wanted}: expected between 1 and {len(order)} {noun}s")
        return order[: int(wanted)]
    if isinstance(wanted, str):
        wanted = [wanted]
    names = [str(a) for a in wanted]
    unknown = sorted(set(names) - set(order))
    if unknown or not names:
        raise ValueError(
            f"unknown {dataset} {noun} id(s) {unknown[:5]}; ids are {order[0]!r} ... {order[-1]!r}"
            if unknown else f"{noun}s=[] selects no {dataset} {noun}; give ids, a count or None for all"
        )
    return list(dict.fromkeys(names))


def check_judges(judge: str | Sequence[str], known: list[str], dataset: str) -> list[str]:
    """The judge setting(s) asked for, each one of ``known``."""
    judges = [judge] if isinstance(judge, str) else [str(j) for j in judge]
    unknown = [j for j in judges if j not in known]
    if unknown or not judges:
        raise ValueError(f"unknown {dataset} judge setting(s) {unknown}; available: {known}")
    return judges


def check_tau(tau: float) -> None:
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a positive number of score points, got {tau!r}")


def soft_pairs(frame: pd.DataFrame, *, tau: float, judge: str) -> pd.DataFrame:
    """Every ordered pair of distinct candidates within each item, from pointwise scores.

    ``frame`` has one row per (item, candidate) with columns item, candidate, llm (the LLM's
    score) and human (the human score), each item's rows contiguous, in the order wanted.
    ``p_ij = sigma((llm_i - llm_j) / tau)``, written as ``1 - sigma(|d|)`` for ``d < 0`` so
    that ``p_ij + p_ji = 1`` to rounding; pairs come item by item, then row-major (``i`` then
    ``j``), as ``np.nonzero(~np.eye(n))``.  Vectorized over items of any sizes.
    """
    from scipy.special import expit

    item = frame["item"].to_numpy(dtype=object)
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    sizes = np.diff(np.r_[starts, len(item)])
    n_row = np.repeat(sizes, sizes)  # the size of each row's item
    start_row = np.repeat(starts, sizes)
    a = np.repeat(np.arange(len(item)), n_row)  # each row against every row of its item
    block = np.repeat(np.cumsum(n_row) - n_row, n_row)
    b = start_row[a] + (np.arange(len(a)) - block)
    a, b = a[a != b], b[a != b]
    s = frame["llm"].to_numpy(dtype=float)
    hs = frame["human"].to_numpy(dtype=float)
    c = frame["candidate"].to_numpy(dtype=object)
    d = (s[a] - s[b]) / tau
    up = expit(np.abs(d))
    h = hs[a] - hs[b]
    return pd.DataFrame(
        {
            "item": item[a],
            "a": c[a],
            "b": c[b],
            "judge": judge,
            "p_a": np.where(d >= 0, up, 1.0 - up),
            "winner": np.where(d > 0, "a", np.where(d < 0, "b", "tie")).astype(object),
            "human": preference(h),
            "score_a": s[a],
            "score_b": s[b],
        }
    )
