"""Which pairs the comparator judges: all pairs, or :func:`bayes_judge.select_comparisons` per item."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, cast

import pandas as pd

if TYPE_CHECKING:
    from ..selection import Method

__all__ = ["plan_pairs", "PLANS"]

PLANS = ("all", "random", "no-repeat", "symmetric", "greedy-d-optimal")


def plan_pairs(candidates: pd.DataFrame, method: str = "all", *, k: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Pairs to judge for every item.

    Parameters
    ----------
    candidates : table with columns ``item``, ``candidate``
    method : ``"all"`` (every unordered pair once; pass ``symmetric=True`` to
        :meth:`Comparator.compare` for both orders) or a method of
        :func:`bayes_judge.select_comparisons` (``k`` comparisons per item)
    k : comparisons per item for the selection methods
    seed : seed of the random methods (item ``n`` uses ``seed + n``)

    Returns
    -------
    DataFrame with columns item, a, b.
    """
    from ..selection import select_comparisons

    if method not in PLANS:
        raise ValueError(f"pair plan must be one of {PLANS}, not {method!r}")
    missing = {"item", "candidate"} - set(candidates.columns)
    if missing:
        raise ValueError(f"candidates table is missing column(s) {sorted(missing)}")
    if method != "all" and k is None:
        raise ValueError(f"pair plan {method!r} needs k (comparisons per item)")
    out = []
    for n, (item, sub) in enumerate(candidates.groupby("item", sort=False)):
        cands = list(dict.fromkeys(sub["candidate"].astype(str)))
        if len(cands) < 2:
            raise ValueError(f"item {item!r} has fewer than 2 candidates")
        if method == "all":
            pairs = pd.DataFrame(list(itertools.combinations(cands, 2)), columns=["a", "b"])
        else:
            assert k is not None  # checked above: every selection plan needs k
            # method is one of PLANS other than "all": a selection Method
            try:
                pairs = select_comparisons(cands, k, method=cast("Method", method), seed=seed + n)
            except ValueError as err:
                raise ValueError(f"item {item!r}: {err}") from err
        out.append(pairs.assign(item=str(item))[["item", "a", "b"]])
    return pd.concat(out, ignore_index=True)
