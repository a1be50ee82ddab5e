"""The one reader of outcomes: a judgments table as oriented per-row outcomes.

Every encoder (win rates, :mod:`bayes_judge.winrate.encode`; rankings within an item,
:mod:`bayes_judge.ranking.encode`; leaderboards, :mod:`bayes_judge.leaderboard.encode`) reads the
``winner``, ``p_a`` and ``human`` columns of a validated table the same way, here:

* the compared things (systems or candidates) get integer codes, ``names[code]``, in one order
  (sorted names, or an order given); a row's two codes in that order are ``(first, second)``,
  its *canonical orientation*, whichever of them the judge saw in position A;
* the hard outcome is ``+1`` when the canonical first won, ``-1`` when the second won, ``0`` for
  a tie (or no decision);
* the soft outcome is the judge's ``p_a`` turned the same way, ``P(first better)``, NaN where the
  row gives no probability;
* the human label is ``+1`` / ``-1`` / ``0`` (none) in the same orientation.

The same numbers in the row's own orientation (position A first) are properties of
:class:`Outcomes`.  :func:`check_connected` is the one check that a comparison graph connects what
is to be compared.  Bad tables are rejected by :func:`bayes_judge.validate_judgments`, which
:func:`read_outcomes` calls first: its errors name the column, the bad values and the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .schema import coded_judgments, ids_as_text

__all__ = [
    "Outcomes", "read_outcomes", "read_label_table", "one_label_per_comparison", "orient", "label_sign", "check_connected",
    "merge_label_table",
]


def orient(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The canonical orientation of compared pairs given by their codes.

    Parameters
    ----------
    a, b : ndarray of int, shape (K,)
        Codes of the things shown in positions A and B.

    Returns
    -------
    first, second : ndarray of int64, shape (K,)
        The smaller and the larger code of every pair.
    a_first : ndarray of bool, shape (K,)
        Whether position A holds the canonical first (``a < b``).
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    return np.minimum(a, b), np.maximum(a, b), a < b


def label_sign(values: pd.Series | np.ndarray, coded: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """A column of ``"a"`` / ``"b"`` labels as ``+1`` / ``-1``; anything else (missing) is ``0``.

    Parameters
    ----------
    values : Series or ndarray, shape (K,)
        Normalized labels (``winner`` or ``human`` of a validated table).
    coded : (codes, labels), optional
        The same column as :func:`bayes_judge.schema.coded_judgments` codes it (``values ==
        labels[codes]``, −1 missing): read from the few distinct labels, not row by row.

    Returns
    -------
    ndarray of int8, shape (K,)
        The label in the row's own orientation (position A first).
    """
    if coded is not None and len(coded[0]) == len(values):
        codes, labels = coded
        u = np.asarray(labels, dtype=object)
        sign = np.append((u == "a").astype(np.int8) - (u == "b").astype(np.int8), np.int8(0))
        return sign[codes]  # code -1: the appended 0
    v = np.asarray(values, dtype=object)
    return (v == "a").astype(np.int8) - (v == "b").astype(np.int8)


@dataclass(frozen=True)
class Outcomes:
    """The outcomes of every row of a judgments table, in a canonical orientation.

    Attributes
    ----------
    table : pandas.DataFrame, shape (K, n_columns)
        The validated table (:func:`bayes_judge.validate_judgments`; index ``0..K-1``), for the
        columns an encoder reads besides the outcomes (``item``, ``judge``, covariates).
    names : list of str, length S
        The compared things; a code is an index into this list, and its order orients pairs.
    first, second : ndarray of int64, shape (K,)
        Codes of the row's two compared things, ``first < second``.
    a_first : ndarray of bool, shape (K,)
        Whether the judge saw the canonical first in position A.
    outcome : ndarray of int8, shape (K,)
        ``+1`` the canonical first won, ``-1`` the second won, ``0`` a tie (or no decision).
    p : ndarray of float, shape (K,)
        The judge's probability that the canonical first is better (``p_a`` turned with the
        row); NaN where the row gives no ``p_a``.
    human : ndarray of int8, shape (K,)
        The row's human label: ``+1`` the canonical first preferred, ``-1`` the second, ``0`` none.
    p_a : ndarray of float, shape (K,)
        ``p`` for position A: the ``p_a`` column as given (NaN where not given), kept because
        turning a probability twice, ``1 - (1 - x)``, need not give ``x`` back.
    ids : dict
        ``"item"`` and ``"judge"`` → ``(codes, uniques)`` of the table's column
        (:func:`bayes_judge.schema.coded_judgments`), for encoders that would code them again;
        empty where not known.
    """

    table: pd.DataFrame
    names: list[str]
    first: np.ndarray
    second: np.ndarray
    a_first: np.ndarray
    outcome: np.ndarray
    p: np.ndarray
    human: np.ndarray
    p_a: np.ndarray
    ids: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_positions(
        cls, table: pd.DataFrame, names: list[str], a: np.ndarray, b: np.ndarray,
        outcome_a: np.ndarray, p_a: np.ndarray, human_a: np.ndarray, ids: dict | None = None,
    ) -> Outcomes:
        """Build from the rows' own orientation (codes of positions A and B, outcomes for A).

        Parameters
        ----------
        table : DataFrame, shape (K, n_columns)
        names : list of str, length S
        a, b : ndarray of int, shape (K,)
            Codes of positions A and B.
        outcome_a, human_a : ndarray of int, shape (K,)
            ``+1`` / ``-1`` / ``0`` for position A.
        p_a : ndarray of float, shape (K,)
            P(A better), NaN where not given.
        ids : dict, optional
            :attr:`ids`.
        """
        first, second, a_first = orient(a, b)
        sign = np.where(a_first, 1, -1).astype(np.int8)
        p_a = np.asarray(p_a, dtype=float)
        return cls(
            table=table, names=list(names), first=first, second=second, a_first=a_first,
            outcome=(np.asarray(outcome_a, dtype=np.int8) * sign).astype(np.int8),
            p=np.where(a_first, p_a, 1.0 - p_a),
            human=(np.asarray(human_a, dtype=np.int8) * sign).astype(np.int8),
            p_a=p_a, ids=dict(ids or {}),
        )

    @property
    def n_rows(self) -> int:
        return len(self.first)

    @property
    def sign(self) -> np.ndarray:
        """``+1`` where position A is the canonical first, else ``-1``, shape (K,) int8."""
        return np.where(self.a_first, 1, -1).astype(np.int8)

    @property
    def a(self) -> np.ndarray:
        """Code of the thing in position A, shape (K,)."""
        return np.where(self.a_first, self.first, self.second)

    @property
    def b(self) -> np.ndarray:
        """Code of the thing in position B, shape (K,)."""
        return np.where(self.a_first, self.second, self.first)

    @property
    def pair(self) -> np.ndarray:
        """One code per unordered pair, ``first * S + second``, shape (K,) int64."""
        return self.first * len(self.names) + self.second

    @property
    def p_given(self) -> np.ndarray:
        """Whether the row gives a probability ``p_a``, shape (K,) bool."""
        return np.isfinite(self.p)

    @property
    def score(self) -> np.ndarray:
        """The canonical first's score: ``p`` where given, else 1 / 0 / 0.5 from the outcome, (K,)."""
        return np.where(self.p_given, self.p, (self.outcome + 1.0) / 2.0)

    @property
    def outcome_a(self) -> np.ndarray:
        """``outcome`` for position A: ``+1`` A won, ``-1`` B won, ``0`` tie, shape (K,) int8."""
        return (self.outcome * self.sign).astype(np.int8)

    @property
    def score_a(self) -> np.ndarray:
        """``score`` for position A: ``p_a`` where given, else 1 / 0 / 0.5, shape (K,)."""
        return np.where(self.p_given, self.p_a, (self.outcome_a + 1.0) / 2.0)

    @property
    def human_a(self) -> np.ndarray:
        """``human`` for position A: ``+1`` a human preferred A, ``-1`` B, ``0`` none, (K,) int8."""
        return (self.human * self.sign).astype(np.int8)

    def reordered(self, names: Sequence[str]) -> Outcomes:
        """The same outcomes coded and oriented by another order of the names.

        Parameters
        ----------
        names : sequence of str, length S'
            Every compared name of :attr:`names` (in any order) and possibly more, never compared.

        Raises
        ------
        ValueError
            When ``names`` repeats a name or leaves out one the table compares.

        Examples
        --------
        >>> o = read_outcomes(pd.DataFrame({"item": 1, "a": ["x"], "b": ["y"], "winner": ["a"]}))
        >>> r = o.reordered(["y", "x"])
        >>> r.a_first.tolist(), r.outcome.tolist(), r.outcome_a.tolist()
        ([False], [-1], [1])
        """
        names = [str(s) for s in names]
        new = pd.Index(names)
        if not new.is_unique:
            raise ValueError(f"names: duplicate names in {names}")
        remap = new.get_indexer(pd.Index(self.names))
        compared = np.zeros(len(self.names), dtype=bool)
        compared[self.first] = compared[self.second] = True
        if (compared & (remap < 0)).any():
            missing = [self.names[k] for k in np.flatnonzero(compared & (remap < 0))]
            raise ValueError(f"names: the table compares {missing}, which are not listed in {names}")
        return Outcomes.from_positions(
            self.table, names, remap[self.a], remap[self.b], self.outcome_a, self.p_a, self.human_a, self.ids
        )


def read_outcomes(df: pd.DataFrame, *, names: Sequence[str] | None = None) -> Outcomes:
    """Validate a judgments table and read every row's outcome in a canonical orientation.

    Parameters
    ----------
    df : pandas.DataFrame, shape (K, n_columns)
        A judgments table (columns of :mod:`bayes_judge.schema`).
    names : sequence of str, optional
        The order of the compared things that orients the pairs; it must list every name of
        columns ``a`` and ``b`` and may list more.  Default: the names in the table, sorted.

    Returns
    -------
    Outcomes

    Raises
    ------
    ValueError
        Every error of :func:`bayes_judge.validate_judgments` (naming the column, the bad values
        and the rows: unknown ``winner`` or ``human`` values, NaN or out-of-range ``p_a``, ...),
        and a ``names`` that leaves out a compared name.

    Examples
    --------
    >>> import pandas as pd
    >>> o = read_outcomes(pd.DataFrame({"item": 1, "a": ["y", "x"], "b": ["x", "y"],
    ...                                 "p_a": [0.75, 0.25]}))
    >>> o.names, o.a_first.tolist(), o.outcome.tolist(), o.p.tolist()
    (['x', 'y'], [False, True], [-1, -1], [0.25, 0.25])
    """
    v, coded = coded_judgments(df)
    K = len(v)
    # the compared names, sorted, and each position's code: from the validation's codes of the
    # columns (their few distinct names looked up, not two million strings coded again)
    (ca, ua), (cb, ub) = coded["a"], coded["b"]
    compared = sorted(set(ua.tolist()) | set(ub.tolist()))
    index = pd.Index(compared)
    p_a = v["p_a"].to_numpy(dtype=float) if "p_a" in v.columns else np.full(K, np.nan)
    out = Outcomes.from_positions(
        v, compared, index.get_indexer(ua)[ca], index.get_indexer(ub)[cb], label_sign(v["winner"], coded.get("winner")),
        p_a, label_sign(v["human"], coded.get("human")), ids={"item": coded["item"], "judge": coded["judge"]},
    )
    return out if names is None else out.reordered(names)


def read_label_table(human: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """A separate table of human labels read into the canonical orientation.

    The one reader of the ``human=`` tables of :func:`bayes_judge.win_rate` and
    :func:`bayes_judge.leaderboard` (labels possibly on comparisons no judge saw).

    Parameters
    ----------
    human : DataFrame
        Columns ``item, a, b, human``, ``human`` being ``"a"`` or ``"b"`` in that row's
        orientation.
    names : sequence of str
        The judgments table's systems; a system's code is its position here.

    Returns
    -------
    DataFrame
        One row per comparison: ``item`` (str), ``first``, ``second`` (system codes,
        ``first < second``), ``first_wins`` (bool), duplicates of a comparison dropped.

    Raises
    ------
    ValueError
        Not a table, missing columns, a ``human`` value other than ``"a"`` / ``"b"``, systems not
        in ``names``, or labels that contradict each other on one comparison.
    """
    need = ["item", "a", "b", "human"]
    if not isinstance(human, pd.DataFrame):
        raise ValueError(f"human labels must be a DataFrame with columns {need}; got {type(human).__name__}")
    missing = [c for c in need if c not in human.columns]
    if missing:
        raise ValueError(f"human labels: missing column(s) {missing}; expected {need}, got {list(human.columns)}")
    lab = human[need].reset_index(drop=True)
    h = lab["human"].astype(str).str.strip().str.lower()
    bad = ~h.isin(["a", "b"]) | lab["human"].isna()
    if bad.any():
        raise ValueError(f"human labels: column 'human' must be 'a' or 'b'; got {sorted(set(h[bad]))[:5]} in "
                         f"row(s) {list(lab.index[bad])[:8]}")
    # ids read as the judgments table's are (1.0 -> "1"), so that the same item is one item
    a, b, item = ids_as_text(lab["a"]), ids_as_text(lab["b"]), ids_as_text(lab["item"])
    unknown = sorted((set(a) | set(b)) - set(names))
    if unknown:
        raise ValueError(f"human labels name system(s) not in the judgments table: {unknown[:10]}; the table's "
                         f"systems are {_fmt_names(list(names))}")
    index = pd.Index(list(names))
    first, second, a_first = orient(index.get_indexer(pd.Index(a)), index.get_indexer(pd.Index(b)))
    out = pd.DataFrame({"item": item.to_numpy(object), "first": first, "second": second,
                        "first_wins": (h.to_numpy(object) == "a") == a_first})
    return one_label_per_comparison(out, names)


def one_label_per_comparison(labels: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Oriented labels (columns ``item, first, second, first_wins``) with repeats of a comparison
    dropped; labels that contradict each other on one comparison are an error naming them."""
    g = labels.groupby(["item", "first", "second"], sort=False)["first_wins"]
    clash = g.nunique() > 1
    if clash.any():
        shown = [(i, names[f], names[t]) for i, f, t in clash[clash].index[:5]]
        raise ValueError(f"human labels contradict each other on {int(clash.sum())} comparison(s) (item, system, "
                         f"system): {shown}; give one human preference per comparison")
    return labels.drop_duplicates(["item", "first", "second"]).reset_index(drop=True)


def _fmt_names(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(repr(str(n)) for n in list(names)[:limit])
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return "{" + shown + more + "}"


def check_connected(
    n: int, i: np.ndarray, j: np.ndarray, *, names: np.ndarray | Sequence[str],
    group: np.ndarray | None = None, groups: Sequence[str] | None = None,
    directed: bool = False, what: str = "",
) -> None:
    """Raise a ValueError naming the components when a comparison graph is split.

    Parameters
    ----------
    n : int
        Number of nodes (compared things).
    i, j : ndarray of int, shape (K,)
        The edges: node ``i[k]`` was compared with (or, ``directed``, beat) node ``j[k]``.
    names : array of str, shape (n,)
        The name of every node, for the message.
    group : ndarray of int, shape (n,), optional
        The group of every node (a ranking's items): each group must be connected on its own,
        and groups never are.  Default: one group, the systems of a leaderboard.
    groups : sequence of str, optional
        Group names (with ``group``).
    directed : bool
        Ask for strong connection of the win graph (the maximum-likelihood Bradley-Terry scores
        exist only then), with ``what`` naming the method in the message.

    Raises
    ------
    ValueError
        Naming the group(s) and their components.
    """
    graph = sp.coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n)).tocsr()
    n_comp, label = connected_components(graph, directed=directed, connection="strong" if directed else "weak")
    if n_comp <= 1:
        return
    names = np.asarray(names, dtype=object)
    if group is None:  # one leaderboard's systems
        comps = sorted((names[label == c].tolist() for c in range(n_comp)), key=len, reverse=True)
        shown = "; ".join(str(c[:8]) + (f" and {len(c) - 8} more" if len(c) > 8 else "") for c in comps[:4])
        raise ValueError(f"the systems fall into {n_comp} groups that are never compared with each other: {shown}. "
                         "Scores in different groups are not comparable; add comparisons between the groups "
                         "or build one leaderboard per group")
    groups = list(groups or [])
    first = np.full(n_comp, n, dtype=np.int64)
    np.minimum.at(first, label, np.arange(n))
    per_group = np.bincount(group[first], minlength=len(groups))
    bad = np.flatnonzero(per_group > 1)
    if len(bad) == 0:
        return
    parts = []
    for g in bad[:3]:
        members = np.flatnonzero(group == g)
        split = [names[members[label[members] == c]] for c in np.unique(label[members])]
        split.sort(key=len, reverse=True)
        listed = " and ".join(_fmt_names(c) for c in split[:5])
        more = f" and {len(split) - 5} more" if len(split) > 5 else ""
        parts.append(f"item {groups[g]!r}: {len(split)} components {listed}{more}")
    more_items = f"; and {len(bad) - 3} more item(s)" if len(bad) > 3 else ""
    if directed:
        raise ValueError(
            f"{what}the maximum-likelihood scores do not exist: the win graph is not strongly "
            "connected in " + "; ".join(parts) + more_items + ". Some candidates beat (or lose "
            "to) everyone outside their component, so their scores run off to infinity; "
            "add prior wins (prior > 0) or clip the probabilities away from 0 and 1"
        )
    raise ValueError(
        "the comparison graph does not connect the candidates to be ranked in "
        + "; ".join(parts) + more_items + ". Scores of candidates in different components are "
        "not comparable; add comparisons between the components or rank them as separate items"
    )


def merge_label_table(
    human: pd.DataFrame, label: np.ndarray, unit_keys: pd.DataFrame, order: dict[str, int], S: int
) -> np.ndarray:
    """Fold a gold-label table (item, a, b, human) into the labels of units keyed by (pair code, item).

    ``label`` (U,) the units' labels so far (1: the pair's first system wins, 0: its second, -1:
    none); ``unit_keys`` a frame with the units' ``pair`` code (``first * S + second`` on the
    order ``order``), ``item`` and ``unit``.  A label on an item the units lack, or one that
    contradicts a label already there, is refused.
    """
    names = sorted(order, key=order.__getitem__)
    h = read_label_table(human, names)
    h["pair"] = h["first"] * S + h["second"]
    m = h.merge(unit_keys[["pair", "item", "unit"]], on=["pair", "item"], how="left")
    orphan = m["unit"].isna()
    if orphan.any():
        shown = [(i, names[f], names[s]) for i, f, s in m.loc[orphan, ["item", "first", "second"]].to_numpy()[:5]]
        raise ValueError(
            f"human labels on comparison(s) (item, system, system) that the judgments table does not have: "
            f"{shown} ({int(orphan.sum())} label row(s) in all); a win rate uses labels of judged comparisons"
        )
    units = m["unit"].to_numpy(dtype=np.int64)
    labs = m["first_wins"].to_numpy().astype(label.dtype)
    out = label.copy()
    if ((out[units] >= 0) & (out[units] != labs)).any():
        raise ValueError("human labels: the table given as human= contradicts the judgments table's 'human' column")
    out[units] = labs
    return out
