"""Turn a judgments table into per-pair verdict counts for win-rate models.

Every win-rate estimator (observed k, BWRS, Dawid-Skene) reads the same encoding, made once:

* the systems are ordered (``systems=`` or sorted by name) and every unordered pair of systems
  that meets in the table becomes one ``pair``, oriented (first, second) by that order;
* a *unit* is one (pair, item): one comparison task ``i`` of Gao et al. 2024, whose unknown human label
  ``h_i`` the Dawid-Skene model marginalizes;
* each row's verdict is read in the pair's orientation: ``1`` when the judge preferred the pair's
  first system G0, ``0`` when it preferred the second.  Rows may show either system in position
  A: the orientation is per row.

Conventions follow Gao et al. 2024 §3.1: label / verdict "first" (G0 preferred) is the seed's class 0, so
``p = P(h = G0)`` (eq. 1), ``q0 = P(T = G0 | H = G0)`` (eq. 5) and ``q1 = P(T = G1 | H = G1)``
(eq. 6).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..outcomes import merge_label_table, read_outcomes

__all__ = ["WinRateData", "VerdictPatterns", "encode_win_rate", "verdict_patterns", "SWAP_MODES", "TIE_MODES"]

SWAP_MODES = ("sum", "none", "split")
TIE_MODES = ("random", "skip")


@dataclass(frozen=True)
class WinRateData:
    """Verdict counts of one judgments table, ready for the win-rate models.

    Attributes
    ----------
    systems : list of str
        System names in the order that orients the pairs.
    pairs : list of (str, str)
        ``P`` pairs (G0, G1); ``p[pair]`` is P(a human prefers G0 over G1).
    judges : list of str
        ``E`` judges (after ``swap="split"``, one per judge and presentation order).
    unit_pair : ndarray of int, shape (U,)
        Pair index of each unit (one comparison task ``i`` of the seed).
    unit_item : ndarray of str, shape (U,)
        Item id of each unit.
    n_first, n_second : ndarray of float, shape (U, E)
        Number of verdicts of judge ``e`` on unit ``u`` preferring G0 (resp. G1).
    n_tie : ndarray of float, shape (U, E)
        Ties left out of the counts (``ties="skip"``); zero with ``ties="random"``.
    label : ndarray of int, shape (U,)
        Human label ``1`` (G0 preferred), ``0`` (G1 preferred) or ``-1`` (unknown).
    n_random_ties : int
        Ties that were resolved by a seeded coin flip (``ties="random"``, Gao et al. 2024 App. B).
    """

    systems: list[str]
    pairs: list[tuple[str, str]]
    judges: list[str]
    unit_pair: np.ndarray
    unit_item: np.ndarray
    n_first: np.ndarray
    n_second: np.ndarray
    n_tie: np.ndarray
    label: np.ndarray
    swap: str = "sum"
    ties: str = "random"
    n_random_ties: int = 0
    n_rows: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def n_units(self) -> int:
        return len(self.unit_pair)

    @property
    def pair_labels(self) -> list[str]:
        """``"a vs b"`` per pair; quoted (``"'a' vs 'b'"``) where names holding " vs " would make
        two pairs' labels one."""
        labels = [f"{a} vs {b}" for a, b in self.pairs]
        if len(set(labels)) < len(labels):
            labels = [f"{a!r} vs {b!r}" for a, b in self.pairs]
        return labels

    @property
    def unit_labels(self) -> list[str]:
        if len(self.pairs) == 1:
            return [str(i) for i in self.unit_item]
        return [f"{self.pair_labels[p]} | {i}" for p, i in zip(self.unit_pair, self.unit_item, strict=True)]

    def verdict_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Verdicts of every (pair, judge): those preferring the pair's first system, and all.

        Returns
        -------
        s_k, n_k : ndarray, shape (P, E)
            Gao et al. 2024, eq. 4's numerator and denominator (Alg. 1 line 16's counts).
        """
        P, E = len(self.pairs), len(self.judges)
        s = np.zeros((P, E))
        n = np.zeros((P, E))
        np.add.at(s, self.unit_pair, self.n_first)
        np.add.at(n, self.unit_pair, self.n_first + self.n_second)
        return s, n

    def k_observed(self) -> np.ndarray:
        """Observed win rate k_e of every (pair, judge), eq. 4; NaN where a judge gave no verdict.

        Returns
        -------
        ndarray, shape (P, E)
        """
        s, n = self.verdict_counts()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, s / np.where(n > 0, n, 1), np.nan)

    def accuracy_counts(self, units: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Counts n0, s0, n1, s1 of Algorithm 1 (lines 4-8) per (pair, judge).

        ``n0`` counts verdicts on units a human labelled G0, ``s0`` those of them that agree;
        likewise ``n1`` / ``s1`` for G1.  Only labelled units (and ``units`` if given) count.
        """
        P, E = len(self.pairs), len(self.judges)
        keep = self.label >= 0 if units is None else (self.label >= 0) & units
        out = {k: np.zeros((P, E)) for k in ("n0", "s0", "n1", "s1")}
        z1 = keep & (self.label == 1)
        z0 = keep & (self.label == 0)
        tot = self.n_first + self.n_second
        np.add.at(out["n0"], self.unit_pair[z1], tot[z1])
        np.add.at(out["s0"], self.unit_pair[z1], self.n_first[z1])
        np.add.at(out["n1"], self.unit_pair[z0], tot[z0])
        np.add.at(out["s1"], self.unit_pair[z0], self.n_second[z0])
        return out


def _label_01(sign: np.ndarray) -> np.ndarray:
    """A ±1 / 0 label of :mod:`bayes_judge.outcomes` as this module's 1 (G0) / 0 (G1) / -1 (none)."""
    return np.where(sign > 0, 1, np.where(sign < 0, 0, -1)).astype(np.int64)


def encode_win_rate(
    df: pd.DataFrame,
    *,
    systems: list[str] | None = None,
    judges: str | Sequence[str] | None = None,
    human: pd.DataFrame | None = None,
    swap: str = "sum",
    ties: str = "random",
    seed: int = 0,
    diagnose: bool = False,
) -> WinRateData:
    """Encode a judgments table as verdict counts per (pair, item, judge).

    Parameters
    ----------
    df : pandas.DataFrame
        A judgments table (validated here).
    systems : list of str, optional
        System order; pair (s, t) is oriented with the earlier system first.  Every system in
        the table must be listed.  Default: sorted names.
    judges : str or list of str, optional
        Judges to use, in this order.  Default: every judge in the table, sorted.  Rows of
        other judges are left out and counted in ``meta["rows_other_judges"]``.
    human : pandas.DataFrame, optional
        Extra gold labels with columns item, a, b, human ("a" or "b" in that row's
        orientation).  Every labelled comparison must occur in ``df``.
    swap : {"sum", "none", "split"}
        How the two presentation orders of one judge combine.  ``"sum"``: swap-and-sum of seed
        003 App. B (scores of all of a judge's rows on a unit are summed, the higher total
        wins); ``"none"``: every row is one observation of its judge; ``"split"``: each
        presentation order is its own judge.
    ties : {"random", "skip"}
        A tie (``winner="tie"``, or an even swap-and-sum) is broken by a seeded coin flip as
        in Gao et al. 2024 App. B, or left out of the counts and reported.
    seed : int
        Seed of the coin flips.
    diagnose : bool
        Diagnose every chosen judge from its rows as read here
        (:func:`bayes_judge.diagnose.diagnose_table`: position-driven, constant,
        orders disagreeing) into ``meta["diagnosis"]``; a table the judges cannot answer is then
        refused with the reason, and an uninformative judge is named in an
        :class:`~bayes_judge.diagnose.UninformativeJudgeWarning`.

    Returns
    -------
    WinRateData

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(50, p=0.7, q0=[0.8, 0.9], q1=[0.8, 0.9], seed=1)
    >>> enc = bj.encode_win_rate(df, diagnose=True)
    >>> sorted(enc.meta["diagnosis"])                        # each judge's quality
    ['judge0', 'judge1']
    """
    if swap not in SWAP_MODES:
        raise ValueError(f"swap must be one of {SWAP_MODES}, got {swap!r}")
    if ties not in TIE_MODES:
        raise ValueError(f"ties must be one of {TIE_MODES}, got {ties!r}")
    o = read_outcomes(df)
    v = o.table
    meta: dict = {}

    present = o.names
    if systems is None:
        systems = present
    else:
        systems = [str(s) for s in systems]
        if len(set(systems)) != len(systems):
            raise ValueError(f"systems: duplicate names in {systems}")
        unknown = sorted(set(present) - set(systems))
        if unknown:
            raise ValueError(
                f"systems: the table compares {unknown}, which are not in systems={systems}; "
                "list every system or filter the table first"
            )
        absent = sorted(set(systems) - set(present))
        if absent:
            raise ValueError(f"systems: {absent} never appear in columns 'a' or 'b'")
        o = o.reordered(systems)
    if len(systems) < 2:
        raise ValueError(f"win rates need at least 2 systems; the table has {systems}")
    order = {s: i for i, s in enumerate(systems)}

    present_judges = sorted(set(v["judge"]))
    if judges is None:
        judges = present_judges
    else:
        if isinstance(judges, str):  # one name, not its letters
            judges = [judges]
        judges = [str(j) for j in judges]
        if not judges:
            raise ValueError(f"judges: an empty list chooses no judge (judges present: {present_judges}); "
                             "leave judges=None for all of them")
        twice = sorted({j for j in judges if judges.count(j) > 1})
        if twice:
            raise ValueError(f"judges: {twice} named more than once")
        never = [j for j in judges if j not in present_judges]
        if never:
            raise ValueError(
                f"judges: {never} never judged in this table (judges present: {present_judges})"
            )
    keep = v["judge"].isin(judges).to_numpy()
    meta["rows_other_judges"] = int((~keep).sum())

    first_in_a = o.a_first
    human_oriented = _label_01(o.human)
    # Score of the pair's first system in each row: p_a read in the pair's orientation, or 1 / 0 / 0.5
    # from the hard decision (App. B sums scores).
    score_a = o.score_a
    score_first = o.score

    # position choices per judge: P(first) of Liusie, Manakul & Gales 2024 eq. 8, from the decided rows of
    # comparisons the judge saw in both orders; elsewhere the first position's share is also the shown
    # system's (a system always shown first makes "P(A)" its win rate, not a position bias)
    judge_code = pd.factorize(v["judge"].to_numpy(dtype=object))[0].astype(np.int64)
    item_code = pd.factorize(v["item"].to_numpy(dtype=object))[0].astype(np.int64)
    pair_code = pd.factorize(np.asarray(o.first, dtype=np.int64) * len(o.names) + np.asarray(o.second))[0]
    key = np.unique((judge_code * (item_code.max(initial=0) + 1) + item_code) * (pair_code.max(initial=0) + 1)
                    + pair_code, return_inverse=True)[1].reshape(-1)
    shown_a = np.bincount(key, weights=first_in_a, minlength=key.max(initial=-1) + 1)  # per comparison: rows with
    shown_b = np.bincount(key, weights=~first_in_a, minlength=key.max(initial=-1) + 1)  # the pair's first in A, in B
    seen_both = (shown_a > 0)[key] & (shown_b > 0)[key]
    decided = keep & (score_a != 0.5) & seen_both
    pos = pd.DataFrame({"judge": v["judge"].to_numpy(dtype=object)[decided], "a": score_a[decided] > 0.5})
    g = pos.groupby("judge", sort=True)["a"].agg(["sum", "count"])
    meta["position_counts"] = {str(j): [int(r["sum"]), int(r["count"])] for j, r in g.iterrows()}
    judge_col = v["judge"].to_numpy(dtype=object)
    if swap == "split":
        judge_col = np.where(first_in_a, judge_col + " [G0 in A]", judge_col + " [G0 in B]").astype(object)
        judges = [f"{j} [G0 in {pos}]" for j in judges for pos in ("A", "B")]
        judges = [j for j in judges if j in set(judge_col[keep])]

    rows = pd.DataFrame(
        {
            "pair": o.pair,
            "item": v["item"].to_numpy(dtype=object),
            "judge": judge_col,
            "score": score_first,
            "human": human_oriented,
            "keep": keep,
        }
    )

    # Units: every (pair, item) that occurs, human labels collected before judges are filtered.
    unit_keys = rows[["pair", "item"]].drop_duplicates().reset_index(drop=True)
    pair_codes = np.sort(unit_keys["pair"].unique())
    pairs = [(systems[c // len(systems)], systems[c % len(systems)]) for c in pair_codes]
    pair_of_code = {c: i for i, c in enumerate(pair_codes)}
    unit_keys["pair_idx"] = unit_keys["pair"].map(pair_of_code)
    unit_keys = unit_keys.sort_values(["pair_idx", "item"], kind="stable").reset_index(drop=True)
    unit_keys["unit"] = np.arange(len(unit_keys))
    rows = rows.merge(unit_keys[["pair", "item", "unit"]], on=["pair", "item"], how="left")

    label = np.full(len(unit_keys), -1, dtype=np.int64)
    lab = rows.loc[rows["human"] >= 0, ["unit", "human"]].drop_duplicates()
    clash = lab["unit"].duplicated(keep=False)
    if clash.any():
        bad = unit_keys.loc[lab.loc[clash, "unit"].unique(), "item"].tolist()[:8]
        raise ValueError(f"column 'human': contradicting human labels for item(s) {bad}")
    label[lab["unit"].to_numpy()] = lab["human"].to_numpy()

    if human is not None:
        label = merge_label_table(human, label, unit_keys, order, len(systems))

    why = None
    if diagnose:  # from the rows as validated here: no second parse of the table
        from ..diagnose import (
            UninformativeJudgeWarning,
            diagnose_table,
            uninformative_message,
        )

        verdicts = [c for c in ("p_a", "winner") if c in v.columns]  # p_a where given, else the winner
        meta["diagnosis"] = diagnose_table(v.loc[keep, ["item", "a", "b", "judge", *verdicts]])
        why = uninformative_message(meta["diagnosis"])
        if (meta["diagnosis"] and all("constant" in d.get("flags", []) for d in meta["diagnosis"].values())
                and not (label >= 0).any()):
            # every verdict of every judge the same (always A, always B, always a tie) and no human
            # label: nothing to estimate from, whatever the orders; a number here would be the prior's
            raise ValueError(f"every verdict of every judge is the same: these verdicts cannot answer the question. Why: {why}")

    # rows in a canonical order, so that seeded tie flips do not depend on the table's row order
    rows = rows[rows["keep"]].sort_values(["unit", "judge"], kind="stable")
    judge_idx = {j: i for i, j in enumerate(judges)}
    rows = rows.assign(j=rows["judge"].map(judge_idx))
    rng = np.random.default_rng(seed)

    if swap == "sum":
        g = rows.groupby(["unit", "j"], sort=True)["score"].agg(["sum", "count"]).reset_index()
        diff = 2 * g["sum"].to_numpy() - g["count"].to_numpy()  # total(G0) - total(G1)
        verdict = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5))
        u, j = g["unit"].to_numpy(), g["j"].to_numpy()
    else:
        verdict = rows["score"].to_numpy()
        verdict = np.where(verdict > 0.5, 1.0, np.where(verdict < 0.5, 0.0, 0.5))
        u, j = rows["unit"].to_numpy(), rows["j"].to_numpy()

    is_tie = verdict == 0.5
    n_random = 0
    if ties == "random" and is_tie.any():
        flips = rng.random(int(is_tie.sum())) < 0.5
        verdict = verdict.copy()
        verdict[is_tie] = flips.astype(float)
        n_random = int(is_tie.sum())
        is_tie = np.zeros_like(is_tie)

    U, E = len(unit_keys), len(judges)
    n_first = np.zeros((U, E))
    n_second = np.zeros((U, E))
    n_tie = np.zeros((U, E))
    np.add.at(n_first, (u[~is_tie], j[~is_tie]), verdict[~is_tie] == 1.0)
    np.add.at(n_second, (u[~is_tie], j[~is_tie]), verdict[~is_tie] == 0.0)
    np.add.at(n_tie, (u[is_tie], j[is_tie]), 1.0)

    per_pair = np.bincount(unit_keys["pair_idx"].to_numpy(), weights=(n_first + n_second).sum(axis=1), minlength=len(pairs))
    empty = [f"{a} vs {b}" for (a, b), n in zip(pairs, per_pair, strict=True) if n == 0]
    because = f". Why: {why}" if why else ""
    if empty:  # (ties='random' would answer with coin flips: not offered as a way out)
        raise ValueError(
            f"pair(s) {empty} have no verdict from the chosen judges {list(judges)} (every row of "
            f"theirs was left out or is a tie); choose other judges or drop the pair{because}"
        )
    silent = [judges[e] for e in range(E) if (n_first[:, e] + n_second[:, e]).sum() == 0]
    if silent:
        decided = rows.loc[rows["judge"].isin(silent) & (rows["score"] != 0.5), "judge"].unique().tolist()
        if swap == "sum" and decided:  # rows that decide, cancelled by the other order of their items
            raise ValueError(
                f"judge(s) {decided} gave verdicts, but on every item its two presentation orders disagree (or it "
                "called a tie), so "
                "swap='sum' (each item's orders added up) leaves a tie on every item: the verdicts follow the "
                f"position. Leave them out with judges=[...], or read each order on its own with swap='none'{because}"
            )
        raise ValueError(
            f"judge(s) {silent} never gave a verdict: every one of their rows is a tie or "
            f"missing; leave them out with judges=[...]{because}"
        )

    if why:  # the caller's warning: every judge whose verdicts do not depend on the texts
        warnings.warn(f"win_rate: {why}", UninformativeJudgeWarning, stacklevel=3)
    if diagnose:
        from ..diagnose import DuplicateJudgesWarning, duplicate_message

        same = duplicate_message(meta["diagnosis"])
        if same:
            warnings.warn(f"win_rate: {same}", DuplicateJudgesWarning, stacklevel=3)
    return WinRateData(
        systems=list(systems),
        pairs=pairs,
        judges=list(judges),
        unit_pair=unit_keys["pair_idx"].to_numpy(dtype=np.int64),
        unit_item=unit_keys["item"].to_numpy(dtype=object),
        n_first=n_first,
        n_second=n_second,
        n_tie=n_tie,
        label=label,
        swap=swap,
        ties=ties,
        n_random_ties=n_random,
        n_rows=int(keep.sum()),
        meta=meta,
    )


@dataclass(frozen=True)
class VerdictPatterns:
    """Items with identical verdicts and label merged into weighted patterns (exact).

    Every win-rate model's likelihood depends on the data only through this histogram, so a
    million judgment rows become at most a few thousand patterns.

    Attributes
    ----------
    n1, n0, n_tie : ndarray, shape (K, E)
        Verdicts of judge ``e`` for G0, for G1, and ties left out (``ties="skip"``).
    label : ndarray of int, shape (K,)
        1 = a human preferred G0, 0 = G1, -1 = unlabelled (or labels not used).
    pair : ndarray of int, shape (K,)
    weight : ndarray of float, shape (K,)
        Number of items that share the pattern.
    unit_pattern : ndarray of int, shape (U,)
        The pattern of every item (unit) of the :class:`WinRateData`.
    items_per_pair : ndarray of float, shape (P,)
    """

    n1: np.ndarray
    n0: np.ndarray
    n_tie: np.ndarray
    label: np.ndarray
    pair: np.ndarray
    weight: np.ndarray
    unit_pattern: np.ndarray
    items_per_pair: np.ndarray

    @property
    def n_patterns(self) -> int:
        return len(self.weight)

    @property
    def vote(self) -> np.ndarray:
        """Net vote of judge ``e`` for G0 on a pattern (:func:`net_vote`; 0 where e gave none)."""
        return net_vote(self.n1, self.n0, self.n_tie, missing=0.0)

    @property
    def vote_mean(self) -> np.ndarray:
        """Mean net vote over the judges that judged the pattern's items, shape (K,)."""
        judged = (self.n1 + self.n0 + self.n_tie) > 0
        return self.vote.sum(axis=1) / np.maximum(judged.sum(axis=1), 1)

    @property
    def vote_dev(self) -> np.ndarray:
        """Judge e's net vote minus the judges' mean on the pattern, 0 where e gave no verdict, (K, E)."""
        judged = (self.n1 + self.n0 + self.n_tie) > 0
        return np.where(judged, self.vote - self.vote_mean[:, None], 0.0)

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays a win-rate declaration reads, as ``pm.Data`` names → values."""
        lab = self.label
        w = self.weight
        return {
            "n1": self.n1,
            "n_total": self.n1 + self.n0,
            "label": lab.astype(np.int64),
            "pair": self.pair.astype(np.int64),
            "weight": w,
            "vote": self.vote,
            "vote_mean": self.vote_mean,
            "vote_dev": self.vote_dev,
            "n_labelled": np.where(lab >= 0, w, 0.0).astype(np.int64),
            "n_label_g0": np.where(lab == 1, w, 0.0).astype(np.int64),
            "n_unlabelled": np.where(lab < 0, w, 0.0).astype(np.int64),
            "items_per_pair": self.items_per_pair,
            "judged": self.judged,
        }

    @property
    def judged(self) -> np.ndarray:
        """1.0 where judge e gave a verdict on some item of the pair, shape (P, E)."""
        P, E = len(self.items_per_pair), self.n1.shape[1]
        out = np.zeros((P, E))
        np.add.at(out, self.pair, (self.n1 + self.n0) * self.weight[:, None])
        return (out > 0).astype(float)

    #: dims of each array of :meth:`arrays` (the declarations' ``pm.Data``)
    DIMS = {
        "n1": ("pattern", "judge"), "n_total": ("pattern", "judge"), "vote": ("pattern", "judge"),
        "vote_dev": ("pattern", "judge"),
        "label": ("pattern",), "pair": ("pattern",), "weight": ("pattern",),
        "vote_mean": ("pattern",), "n_labelled": ("pattern",), "n_label_g0": ("pattern",),
        "n_unlabelled": ("pattern",), "items_per_pair": ("pair",), "judged": ("pair", "judge"),
    }


def net_vote(n1: np.ndarray, n0: np.ndarray, n_tie: np.ndarray, *, missing: float) -> np.ndarray:
    """Net vote for G0, ``(n1 − n0) / (n1 + n0 + ties)`` in [−1, 1] (a tie counts 0), elementwise;
    ``missing`` where there is no verdict at all."""
    tot = n1 + n0 + n_tie
    return np.where(tot > 0, (n1 - n0) / np.maximum(tot, 1), missing)


def verdict_patterns(data: WinRateData, *, use_labels: bool) -> VerdictPatterns:
    """The pattern histogram of ``data``: items with equal (pair, label, verdicts) merged.

    Parameters
    ----------
    data : WinRateData
    use_labels : bool
        Whether human labels are part of the pattern (observed); otherwise every label is -1.
    """
    label = data.label if use_labels else np.full(data.n_units, -1)
    key = np.column_stack([data.unit_pair, label, data.n_first, data.n_second, data.n_tie])
    uniq, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    E = len(data.judges)
    per_pair = np.bincount(data.unit_pair, minlength=len(data.pairs)).astype(float)
    return VerdictPatterns(
        n1=uniq[:, 2 : 2 + E].astype(float),
        n0=uniq[:, 2 + E : 2 + 2 * E].astype(float),
        n_tie=uniq[:, 2 + 2 * E :].astype(float),
        label=uniq[:, 1].astype(np.int64),
        pair=uniq[:, 0].astype(np.int64),
        weight=counts.astype(float),
        unit_pattern=inverse.reshape(-1),
        items_per_pair=per_pair,
    )
