"""Turn a judgments table into comparison arrays for ranking, all contexts at once.

Notation of Liusie et al. 2024 (PoE) §3: in one context (``item``) there are ``N`` candidates ``x_{1:N}`` and
``K`` comparisons ``C_{1:K}``; comparison ``k`` is ``(i, j, p_ij)`` with ``i`` the candidate in
position A, ``j`` the one in position B and ``p_ij = P(x_i better than x_j)`` the judge's
probability (§3.2), or ``y_ij`` in {0, 1} for a hard decision (§3.1).

Every item is ranked on its own.  The encoding puts the candidates of all items on one *global*
index (item by item, candidates sorted by name inside an item), so that one sparse system or one
vectorized iteration treats every item at once: the comparison matrix is block-diagonal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
import pandas as pd

from ..outcomes import check_connected, read_outcomes

__all__ = [
    "RankData",
    "pairs_rank_data",
    "encode_ranking",
    "position_bias",
    "position_imbalance",
    "BALANCE_TOL",
    "ClippedProbabilityWarning",
    "ConvergenceWarning",
]

Outcome = Literal["soft", "hard"]
BiasBy = Literal["item", "judge"]


class ClippedProbabilityWarning(UserWarning):
    """Probabilities at (or beyond) 0 or 1 were clipped for the soft Bradley-Terry expert."""


class ConvergenceWarning(UserWarning):
    """An iterative ranking solver stopped at ``max_iter`` before reaching its tolerance."""


@dataclass(frozen=True)
class RankData:
    """Comparisons of one judgments table on a global candidate index.

    Candidates of item ``g`` occupy the global indices ``offsets[g]:offsets[g + 1]``, sorted by
    name; the first of them, ``offsets[g]``, is the one the paper's anchoring expert pins
    (Liusie et al. 2024 (PoE) §3.3, "an additional expert on the first element").

    Attributes
    ----------
    items : list of str, length G
        Item (context) ids; numeric ids are ordered numerically, others as strings.
    candidates : ndarray of str, shape (N,)
        Candidate id of every global index (``N`` is summed over items).
    cand_item : ndarray of int, shape (N,)
        Item index of every global candidate.
    offsets : ndarray of int, shape (G + 1,)
        Start of every item's block of candidates.
    i, j : ndarray of int, shape (K,)
        Global index of the candidate in position A (``i``) and B (``j``) of every comparison.
    p : ndarray of float, shape (K,)
        Soft outcome ``p_ij = P(i beats j)``: the ``p_a`` column where given, else 1 / 0 / 0.5
        from ``winner`` (see ``p_given``).
    y : ndarray of float, shape (K,)
        Hard outcome ``y_ij``: 1 if ``i`` won, 0 if ``j`` won, 0.5 for a tie.
    p_given : ndarray of bool, shape (K,)
        Whether ``p`` came from ``p_a`` (True) or from the hard decision (False).
    comp_item : ndarray of int, shape (K,)
        Item index of every comparison.
    judge : ndarray of int, shape (K,)
        Judge index (into ``judges``) of every comparison.
    judges : list of str
        Judge names.
    row : ndarray of int, shape (K,)
        Row of every comparison in the validated (re-indexed) judgments table.
    """

    items: list[str]
    candidates: np.ndarray
    cand_item: np.ndarray
    offsets: np.ndarray
    i: np.ndarray
    j: np.ndarray
    p: np.ndarray
    y: np.ndarray
    p_given: np.ndarray
    comp_item: np.ndarray
    judge: np.ndarray
    judges: list[str]
    row: np.ndarray
    meta: dict = field(default_factory=dict)

    #: dims of :meth:`arrays`, the data a ranking declaration reads as ``pm.Data``
    #: (:mod:`bayes_judge.generative.ranking_models`)
    DIMS: ClassVar[dict[str, tuple[str, ...]]] = {
        "i": ("comparison",), "j": ("comparison",), "p": ("comparison",), "y": ("comparison",),
        "cand_item": ("candidate",), "n_per_item": ("item",),
    }

    def arrays(self) -> dict[str, np.ndarray]:
        """The comparisons as the arrays a ranking declaration reads (dims :attr:`DIMS`).

        ``i``, ``j`` (K,) int, ``p``, ``y`` (K,) float, ``cand_item`` (N,) int and
        ``n_per_item`` (G,) float.
        """
        return {
            "i": np.asarray(self.i, dtype=np.int64), "j": np.asarray(self.j, dtype=np.int64),
            "p": np.asarray(self.p, dtype=np.float64), "y": np.asarray(self.y, dtype=np.float64),
            "cand_item": np.asarray(self.cand_item, dtype=np.int64),
            "n_per_item": self.n_per_item.astype(np.float64),
        }

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_candidates(self) -> int:
        return len(self.candidates)

    @property
    def n_comparisons(self) -> int:
        return len(self.i)

    @property
    def n_per_item(self) -> np.ndarray:
        """Number of candidates ``N`` of every item, shape (G,)."""
        return np.diff(self.offsets)

    def outcome(self, kind: Outcome = "soft") -> np.ndarray:
        """``p`` (``kind="soft"``) or ``y`` (``kind="hard"``), shape (K,)."""
        if kind == "soft":
            return self.p
        if kind == "hard":
            return self.y
        raise ValueError(f"outcome must be 'soft' or 'hard', got {kind!r}")

    def is_symmetric(self) -> bool:
        """True when every comparison (i, j) of a judge also occurs as (j, i) (Liusie, Manakul & Gales 2024 §3.4)."""
        n = max(self.n_candidates, 1)
        fwd = (self.judge * n + self.i) * n + self.j
        bwd = (self.judge * n + self.j) * n + self.i
        return bool(np.isin(fwd, bwd).all())


def pairs_rank_data(i: np.ndarray, j: np.ndarray, y: np.ndarray, n: int) -> RankData:
    """Comparisons ``i`` vs ``j`` (global indices into ``n`` candidates of one item) with hard or
    fractional outcomes ``y`` (share won by ``i``), as :class:`RankData` without a table.

    For callers that hold counts already (a leaderboard's cells, a bootstrap's resampled pairs)
    and want :func:`~bayes_judge.ranking.baselines.bradley_terry` on them (with ``weight=``).
    """
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    y = np.asarray(y, dtype=float)
    k = len(i)
    z = np.zeros(k, dtype=np.int64)
    return RankData(items=["all"], candidates=np.arange(n).astype(str).astype(object),
                    cand_item=np.zeros(n, dtype=np.int64), offsets=np.array([0, n]), i=i, j=j, p=y, y=y,
                    p_given=np.zeros(k, dtype=bool), comp_item=z, judge=z, judges=["judge"], row=np.arange(k))


def _item_order(items: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Codes and ordered ids of the items: numerically when every id is an integer."""
    uniq = pd.unique(items)
    try:
        keys = [int(u) for u in uniq]
        order = np.argsort(np.asarray(keys), kind="stable")
    except (TypeError, ValueError, OverflowError):
        order = np.argsort(np.asarray(uniq, dtype=str), kind="stable")
    ordered = [str(u) for u in np.asarray(uniq, dtype=object)[order]]
    codes = pd.Index(ordered).get_indexer(pd.Index(items))
    return codes.astype(np.int64), ordered


def encode_ranking(
    df: pd.DataFrame,
    *,
    candidates: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
) -> RankData:
    """Encode a judgments table as comparison arrays on a global candidate index.

    Parameters
    ----------
    df : pandas.DataFrame, shape (K, n_columns)
        A judgments table (validated here by :func:`bayes_judge.validate_judgments`).  Every
        row is one comparison ``C_k`` (Liusie et al. 2024 (PoE) §3): ``a`` is candidate ``i`` (position A),
        ``b`` is ``j`` (position B), ``p_a`` is ``p_ij``.  Rows of every judge are used; each
        row is one expert.
    candidates : sequence of str or mapping item -> sequence of str, optional
        The candidates to be ranked, the same for every item (a sequence) or per item (a
        mapping).  A listed candidate that is never compared makes the graph disconnected (an
        error); a row comparing an unlisted candidate is an error, never dropped.  Default:
        every candidate that occurs in an item's rows.

    Returns
    -------
    RankData

    Raises
    ------
    ValueError
        For a table :func:`~bayes_judge.validate_judgments` rejects, an item with fewer than 2
        candidates, a comparison graph that does not connect an item's candidates (naming the
        components), or rows / items that do not match ``candidates``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": 1, "a": ["x", "y"], "b": ["y", "z"], "p_a": [0.8, 0.6]})
    >>> d = encode_ranking(df)
    >>> list(d.candidates), d.i.tolist(), d.j.tolist(), d.p.tolist()
    (['x', 'y', 'z'], [0, 1], [1, 2], [0.8, 0.6])
    """
    o = read_outcomes(df)
    v = o.table
    K = len(v)
    item_code, items = _item_order(v["item"].to_numpy(dtype=object))
    G = len(items)

    # Extra nodes: candidates listed to be ranked, per item.
    extra_item = np.zeros(0, dtype=np.int64)
    extra_name = np.zeros(0, dtype=object)
    if candidates is not None:
        if isinstance(candidates, Mapping):
            listed = {str(k): [str(c) for c in vals] for k, vals in candidates.items()}
            unknown = sorted(set(listed) - set(items))
            if unknown:
                raise ValueError(f"candidates: item(s) {unknown[:8]} have no rows in the table")
            missing = [g for g in items if g not in listed]
            if missing:
                raise ValueError(
                    f"candidates: no candidate list for item(s) {missing[:8]}; a mapping must "
                    "list the candidates of every item in the table"
                )
            per_item = [listed[g] for g in items]
        elif isinstance(candidates, str):
            raise ValueError("candidates must be a sequence of candidate ids, not one string")
        else:
            per_item = [[str(c) for c in candidates]] * G
        for g, listed_names in enumerate(per_item):
            if len(set(listed_names)) != len(listed_names):
                raise ValueError(f"candidates: duplicate ids for item {items[g]!r}")
        too_few = [g for g, listed_names in enumerate(per_item) if len(listed_names) < 2]
        if too_few:
            raise ValueError(
                "ranking needs at least 2 candidates per item; candidates lists "
                + ", ".join(f"{len(per_item[g])} for item {items[g]!r}" for g in too_few[:8])
            )
        extra_item = np.repeat(np.arange(G), [len(n) for n in per_item]).astype(np.int64)
        extra_name = np.asarray([c for n in per_item for c in n], dtype=object)

    if len(extra_name):  # code the listed candidates with the compared ones, all sorted by name
        o = o.reordered(sorted(set(o.names) | set(extra_name)))
    names = np.asarray(o.names, dtype=object)
    n_names = max(len(names), 1)
    key_a = item_code * n_names + o.a
    key_b = item_code * n_names + o.b
    key_x = extra_item * n_names + pd.Index(o.names).get_indexer(pd.Index(extra_name)).astype(np.int64)

    if candidates is not None:
        unlisted = ~np.isin(key_a, key_x) | ~np.isin(key_b, key_x)
        if unlisted.any():
            rows = np.flatnonzero(unlisted)
            raise ValueError(
                f"candidates: row(s) {rows[:8].tolist()} compare candidates that are not listed "
                "to be ranked in their item; list them or filter the table first"
            )

    all_keys = np.concatenate([key_a, key_b, key_x])
    if G * n_names <= 50_000_000:  # O(K) dense lookup instead of a sort
        present = np.bincount(all_keys, minlength=G * n_names) > 0
        keys = np.flatnonzero(present)
        inverse = (np.cumsum(present) - 1)[all_keys]
    else:
        keys, inverse = np.unique(all_keys, return_inverse=True)
    cand_item = (keys // n_names).astype(np.int64)
    cand_names = names[keys % n_names]
    n_per = np.bincount(cand_item, minlength=G)
    few = np.flatnonzero(n_per < 2)
    if len(few):
        raise ValueError(
            "ranking needs at least 2 candidates per item; item(s) "
            + ", ".join(f"{items[g]!r} ({n_per[g]})" for g in few[:8])
            + " have fewer"
        )
    offsets = np.concatenate([[0], np.cumsum(n_per)]).astype(np.int64)
    i = inverse[:K].astype(np.int64)
    j = inverse[K : 2 * K].astype(np.int64)

    y = (o.outcome_a + 1.0) / 2.0  # 1 / 0 / 0.5: position A won, B won, tie
    p_given = o.p_given
    p = o.score_a  # p_a where given, else y

    judge_code, judges = pd.factorize(v["judge"].to_numpy(dtype=object), sort=True)

    check_connected(len(keys), i, j, names=cand_names, group=cand_item, groups=items)

    return RankData(
        items=items,
        candidates=cand_names,
        cand_item=cand_item,
        offsets=offsets,
        i=i,
        j=j,
        p=p.astype(float),
        y=y,
        p_given=p_given,
        comp_item=item_code,
        judge=judge_code.astype(np.int64),
        judges=[str(x) for x in judges],
        row=np.arange(K, dtype=np.int64),
    )


BALANCE_TOL = 0.4  # the most position imbalance at which E[p_ij] is read as a bias: random orders of
# >= 4 comparisons a candidate stay below it (0.375 expected at 4), a systematic order does not (every pair once
# in alphabetical order: 0.5-0.6; a chain a-b, b-c: 0.5; one comparison: 1)


def _bias_groups(data: RankData, by: BiasBy) -> np.ndarray:
    """(K,) group index of every comparison: one per (item, judge), or one per judge."""
    if by == "item":
        group = data.comp_item * max(len(data.judges), 1) + data.judge
    elif by == "judge":
        group = data.judge
    else:
        raise ValueError(f"debias_by must be 'item' or 'judge', got {by!r}")
    return np.unique(group, return_inverse=True)[1]


def position_imbalance(data: RankData, *, by: BiasBy = "item") -> np.ndarray:
    """Each debiasing group's position imbalance ``B_g``, shape (number of groups,).

    ``B_g = Σ_c |n_A(c) − n_B(c)| / (2 K_g)``: 0 when every candidate of the group is shown
    first as often as second (both orders of every pair, or a balanced design), 1 for a single
    comparison.  The mean outcome ``E[p_ij]`` estimates a position bias (Liusie et al. 2024
    (PoE) A.7) only where the positions are balanced: to first order ``E[p_ij] − ½`` is a
    judge's bias plus ``Σ_c s_c (n_A(c) − n_B(c)) / K_g``, so an unbalanced design (every pair
    once in alphabetical order; one comparison per judge) reads score differences as a bias
    and removes them.
    """
    g = _bias_groups(data, by)
    n_g = int(g.max()) + 1 if g.size else 0
    n_cand = len(data.candidates)
    # (group, candidate) pairs that occur, not a dense groups x candidates table (2,000 items x 3 judges
    # x 20,000 candidates would be 1.9 GB)
    key, pos = np.unique(np.r_[g * n_cand + data.i, g * n_cand + data.j], return_inverse=True)
    net = np.bincount(pos, weights=np.r_[np.ones(g.size), -np.ones(g.size)], minlength=key.size)
    total = np.bincount(key // n_cand, weights=np.abs(net), minlength=n_g)
    return total / (2.0 * np.bincount(g, minlength=n_g))


def position_bias(data: RankData, values: np.ndarray, *, by: BiasBy = "item",
                  neutral: float | None = None) -> np.ndarray:
    """Mean outcome ``E[p_ij]`` of every comparison's group, the debiasing statistic.

    Liusie et al. 2024 (PoE) §3.5 estimates a judge's position bias by the average probability over its
    comparisons, ``E[p_ij] ≈ (1/K) Σ_k p_ij^(k)`` (A.7): ``β = E[p_ij]`` for the linear
    Gaussian expert (eq. 13) and ``γ = −logit(E[p_ij])`` for the soft Bradley-Terry expert
    (A.8).

    Parameters
    ----------
    data : RankData
    values : ndarray, shape (K,)
        The outcomes to average (``p``, clipped ``p``, or ``y``).
    by : {"item", "judge"}
        ``"item"``: one mean per (item, judge), the paper's K comparisons of one context by one
        LLM.  ``"judge"``: one mean per judge, pooled over all items (steadier when items have
        few comparisons each).

    neutral : float, optional
        When given, a group whose positions are not balanced (:func:`position_imbalance` above
        ``BALANCE_TOL``) gets this value instead of its mean (no shift: ½ for ``p``, 0 for a
        mean already centred).

    Returns
    -------
    ndarray, shape (K,)
        The group mean, broadcast to every comparison.
    """
    values = np.asarray(values, dtype=float)
    g = _bias_groups(data, by)
    total = np.bincount(g, weights=values)
    count = np.bincount(g)
    mean = total / count
    if neutral is not None:
        mean = np.where(position_imbalance(data, by=by) <= BALANCE_TOL, mean, neutral)
    return mean[g]


def center_per_item(data: RankData, s: np.ndarray) -> np.ndarray:
    """Shift scores so that they have mean zero within every item, shape (N,)."""
    mean = np.bincount(data.cand_item, weights=s, minlength=data.n_items) / data.n_per_item
    return s - mean[data.cand_item]


def check_finite_scores(data: RankData, s: np.ndarray, method: str) -> np.ndarray:
    """Return ``s`` or raise ``FloatingPointError`` naming candidates with non-finite scores."""
    bad = ~np.isfinite(s)
    if bad.any():
        idx = np.flatnonzero(bad)
        named = ", ".join(
            f"{data.candidates[k]!r} (item {data.items[data.cand_item[k]]!r})" for k in idx[:8]
        )
        raise FloatingPointError(
            f"{method}: the solver returned non-finite scores for {len(idx)} candidate(s): "
            f"{named}; no ranking is returned rather than NaN ranks"
        )
    return s
