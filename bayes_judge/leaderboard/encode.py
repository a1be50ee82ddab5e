"""Judgments of systems across prompts as the counts a leaderboard model reads.

A leaderboard's likelihood (:mod:`bayes_judge.generative.leaderboard_models`) depends on the data
only through counts per *cell*: (system shown first, system shown second, judge, what the human
label says about that comparison, and, when asked for, the prompt and the covariates).  Each cell
holds five numbers, ``n = [n_A, n_B, n_tie, soft_A, soft_B]``: the hard verdicts for position A,
for B and ties, and the sums of ``p_a`` and ``1 − p_a`` over the judgments that give a
probability (Liusie et al. 2024 (PoE)'s soft outcome).  Human labels are counted once per comparison
(item, unordered pair) in cells of their own.  Merging judgments into counts is exact, so a
million comparisons of 200 systems become at most a few hundred thousand cells, and nothing per
row is kept per draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..outcomes import (
    Outcomes,
    check_connected,
    one_label_per_comparison,
    orient,
    read_label_table,
    read_outcomes,
)

__all__ = ["LeaderboardData", "encode_leaderboard", "judges_only", "OUTCOMES", "H_UNKNOWN", "H_A", "H_B"]

OUTCOMES = ("A", "B", "tie", "soft_A", "soft_B")
#: what a cell knows about the human preference of its comparisons
H_UNKNOWN, H_A, H_B = 0, 1, 2


@dataclass
class LeaderboardData:
    """Counts per cell, ready for ``pm.Data`` (:meth:`arrays`, dims :attr:`DIMS`).

    Attributes
    ----------
    systems, judges, items : list of str
        Coordinates (``items`` only with ``difficulty``; else one dummy item).
    sys_a, sys_b : (C,) int
        Systems in positions A and B of every judgment cell.
    judge : (C,) int
    h : (C,) int
        ``0`` no human label on these comparisons, ``1`` the human preferred A, ``2`` B.
    n : (C, 5) float
        ``[n_A, n_B, n_tie, soft_A, soft_B]`` (see the module docstring).
    item : (C,) int
        The prompt of each cell (all 0 without ``difficulty``).
    x : (C, K) float
        Covariate differences (A minus B), K ≥ 1 (a zero column when there are none).
    hum_a, hum_b, hum_item : (H,) int; hum_n : (H, 2) float; hum_x : (H, K)
        Human labels: counts of "A preferred" / "B preferred" per cell.
    covariates : list of str
    meta : dict
        Rows read, comparisons, labels, ties, soft rows.
    row_keys, label_keys, comparison_keys : ndarray of int64
        A hash of every row (item, a, b, judge, sample; a row without a ``sample`` is sample 0), of
        every labelled comparison (item and its two systems, in either order) and of every judged
        comparison (the same, once each), kept with the run so that an update (``previous=``) can
        refuse rows and labels the earlier fit already counted, count comparisons judged in both
        fits once, and see judgments and labels of one comparison that fall into different fits.
    """

    systems: list[str]
    judges: list[str]
    items: list[str]
    sys_a: np.ndarray
    sys_b: np.ndarray
    judge: np.ndarray
    h: np.ndarray
    n: np.ndarray
    item: np.ndarray
    x: np.ndarray
    hum_a: np.ndarray
    hum_b: np.ndarray
    hum_item: np.ndarray
    hum_n: np.ndarray
    hum_x: np.ndarray
    covariates: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    row_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    label_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    comparison_keys: np.ndarray | None = None  # None: a run written before they were kept
    #: each judge's (verdicts naming A, decided verdicts), kept with the run for an update's screening
    position_counts: tuple[np.ndarray, np.ndarray] | None = None
    #: the encoded table's ``item`` and ``judge`` codes per row (:func:`bayes_judge.schema.coded_judgments`),
    #: for the judge screening of the same rows (not kept with the run)
    row_ids: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False, compare=False)

    DIMS = {
        "sys_a": ("cell",), "sys_b": ("cell",), "judge": ("cell",), "h": ("cell",), "n": ("cell", "outcome"),
        "item": ("cell",), "x": ("cell", "covariate"),
        "hum_a": ("hcell",), "hum_b": ("hcell",), "hum_item": ("hcell",), "hum_n": ("hcell", "hum_outcome"),
        "hum_x": ("hcell", "covariate"),
    }

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in self.DIMS}

    def coords(self) -> dict[str, Any]:
        return {"system": self.systems, "judge": self.judges, "prompt": self.items,
                "covariate": self.covariates or ["none"], "outcome": list(OUTCOMES),
                "hum_outcome": ["A", "B"], "cell": np.arange(len(self.sys_a)),
                "hcell": np.arange(len(self.hum_a))}

    @property
    def has_ties(self) -> np.ndarray:
        """(E,) bool: the judges that ever say "tie"."""
        return np.bincount(self.judge, weights=self.n[:, 2], minlength=len(self.judges)) > 0

    @property
    def n_cells(self) -> int:
        return len(self.sys_a)


def _group(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique rows of ``keys`` (R, k) and the sums of ``values`` (R, m) over each.

    Rows of non-negative integers are first packed into one int64 (mixed radix), so the
    grouping is one 1-D coding (at 1e6 rows about 10x faster than the 2-D ``np.unique``), in
    ``np.unique``'s order.
    """
    if len(keys) == 0:
        return keys, values
    inv: np.ndarray
    ints = np.issubdtype(keys.dtype, np.integer) or bool(np.all(keys == np.round(keys)))
    span = keys.max(axis=0).astype(float) + 1 if ints and keys.min() >= 0 else None
    if span is not None and float(np.prod(span)) < 2.0**62:
        code = np.zeros(len(keys), dtype=np.int64)
        for c in range(keys.shape[1]):
            code = code * np.int64(span[c]) + keys[:, c].astype(np.int64)
        # hashed, not sorted (a million rows: 0.03 s, np.unique's sort 0.08 s), then the distinct
        # codes sorted, so the cells come in np.unique's order.  Codes are given in order of first
        # appearance, so a row is its group's first where the running maximum of the codes rises
        inv, distinct = pd.factorize(code)
        run = np.maximum.accumulate(inv)
        first = np.flatnonzero(np.r_[True, run[1:] > run[:-1]])
        order = np.argsort(distinct)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        inv, uniq = rank[inv], keys[first[order]]
    else:
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    sums = np.zeros((len(uniq), values.shape[1]))
    for c in range(values.shape[1]):
        sums[:, c] = np.bincount(inv, weights=values[:, c], minlength=len(uniq))
    return uniq, sums


def _human_labels(o: Outcomes, human: pd.DataFrame | None, row_items: np.ndarray) -> pd.DataFrame:
    """One human label per comparison, from the table's ``human`` column and the ``human=`` table
    together (a contradiction between them is an error): columns item, lo, hi (system codes,
    lo < hi), lo_wins, item_code (the labelled row's item code from the validation; -1 for a label
    of the ``human=`` table, which the encoder looks up)."""
    has = o.human != 0
    lab = pd.DataFrame({"item": o.table["item"].to_numpy(object)[has], "first": o.first[has], "second": o.second[has],
                        "first_wins": o.human[has] > 0, "item_code": row_items[has]})
    if human is not None:  # their items' codes looked up by the encoder (-1)
        lab = pd.concat([lab, read_label_table(human, o.names).assign(item_code=-1)], ignore_index=True)
    lab = one_label_per_comparison(lab, o.names)
    return lab.rename(columns={"first": "lo", "second": "hi", "first_wins": "lo_wins"})


def _row_items(o: Outcomes) -> tuple[np.ndarray, np.ndarray]:
    """Each row's item code and the distinct items (in order of first appearance): the
    validation's (``o.ids``) where they are this table's, else coded here."""
    if "item" in o.ids and len(o.ids["item"][0]) == len(o.table):
        codes, uniq = o.ids["item"]
        return np.asarray(codes, dtype=np.int64), np.asarray(uniq, dtype=object)
    codes, uniq = pd.factorize(o.table["item"].to_numpy(object))
    return codes.astype(np.int64), np.asarray(uniq, dtype=object)


def _oriented_covariates(t: pd.DataFrame, covariates: list[str], systems: list[str]) -> pd.DataFrame:
    """Covariate differences of a table's rows turned to the (lo, hi) orientation of their pair,
    one row per (item, lo, hi), lo and hi system codes."""
    sys_index = pd.Index(systems)
    lo, hi, a_first = orient(sys_index.get_indexer(pd.Index(t["a"].astype(str))),
                             sys_index.get_indexer(pd.Index(t["b"].astype(str))))
    sign = np.where(a_first, 1.0, -1.0)
    cov = pd.DataFrame({c: pd.to_numeric(t[c], errors="coerce").to_numpy(float) * sign for c in covariates})
    cov["item"], cov["lo"], cov["hi"] = t["item"].astype(str).to_numpy(object), lo, hi
    return cov.drop_duplicates(["item", "lo", "hi"]).set_index(["item", "lo", "hi"])[covariates]


def _position_counts(o: Outcomes, je: np.ndarray, n_judges: int) -> tuple[np.ndarray, np.ndarray]:
    """Each judge's (verdicts naming position A, decided verdicts), (E,) each, ``je`` each row's
    judge; a soft row counts by the side of ½ its ``p_a`` is on."""
    ya = o.outcome_a
    return (np.bincount(je, weights=ya > 0, minlength=n_judges).astype(float),
            np.bincount(je, weights=ya != 0, minlength=n_judges).astype(float))


def _refuse_one_position(judges: list[str], named_a: np.ndarray, decided: np.ndarray, over: str = "") -> None:
    """A judge that names the same position in all of its (at least 10) decided verdicts carries no
    information about the systems."""
    one_sided = (decided >= 10) & ((named_a == decided) | (named_a == 0))
    if one_sided.any():
        e = int(np.flatnonzero(one_sided)[0])
        pos = "first (A)" if named_a[e] > 0 else "second (B)"
        raise ValueError(f"judge {judges[e]!r} names the {pos} position in all {int(decided[e])} of its decided "
                         f"judgments{over}: its verdicts follow the position, not the systems, and carry no "
                         "information; drop its rows (df[df.judge != ...])")


def check_judges_cells(data: LeaderboardData) -> None:
    """The position screening of an update: over the earlier fit's and the new rows' counts per
    judge (kept with the run); a run written before they were kept is screened by its cells' hard
    verdicts and soft sums."""
    if data.position_counts is not None:
        named_a, decided = data.position_counts
    else:
        named_a = np.bincount(data.judge, weights=data.n[:, 0] + data.n[:, 3], minlength=len(data.judges))
        named_b = np.bincount(data.judge, weights=data.n[:, 1] + data.n[:, 4], minlength=len(data.judges))
        decided = named_a + named_b
    _refuse_one_position(data.judges, np.round(named_a), np.round(decided), " over the earlier fit and these rows")


def position_identified(data: LeaderboardData) -> np.ndarray:
    """(E,) bool: whether each judge's position bias can be told apart from the scores.

    The judge's cells give rows ``e_A − e_B`` of a design matrix ``D`` over the systems; a
    position shift adds a column of ones.  The shift is identified when ``[D 1]`` has one more
    rank than ``D``, checked on the Gram matrices (N + 1 square; cheap at any number of rows).
    A design where every system sits in the same position for that judge (AlpacaEval: the
    baseline always second) fails it: the baseline's strength and the judge's preference for
    position A are the same number.
    """
    n_sys, out = len(data.systems), []
    cnt = data.n[:, :5].sum(axis=1)
    for e in range(len(data.judges)):
        m = (data.judge == e) & (cnt > 0)
        a, b = data.sys_a[m], data.sys_b[m]
        w = np.ones(len(a))
        d = sp.coo_matrix((np.r_[w, -w], (np.r_[np.arange(len(a)), np.arange(len(a))], np.r_[a, b])),
                          shape=(len(a), n_sys)).tocsr()
        g = (d.T @ d).toarray()
        col = np.asarray(d.sum(axis=0)).ravel()
        aug = np.block([[g, col[:, None]], [col[None, :], np.array([[float(len(a))]])]])
        tol = 1e-9 * max(1.0, float(np.abs(aug).max()))
        out.append(np.linalg.matrix_rank(aug, tol=tol) > np.linalg.matrix_rank(g, tol=tol))
    return np.asarray(out, dtype=bool)


def _mix(*parts: np.ndarray | None) -> np.ndarray:
    """One 64-bit key per row from the hashes (or integers) of its parts, in order, as int64."""
    out = np.zeros(len(next(p for p in parts if p is not None)), np.uint64)
    with np.errstate(over="ignore"):
        for p in parts:
            if p is not None:
                out = (out * np.uint64(0x100000001B3)) ^ p.astype(np.uint64)
    return pd.util.hash_array(out).view(np.int64)


def _sorted_codes(o: Outcomes, column: str) -> tuple[list[str], np.ndarray]:
    """The sorted distinct values of an id column of ``o.table`` and each row's index among them,
    from the validation's codes where ``o`` kept them."""
    if column in o.ids and len(o.ids[column][0]) == len(o.table):  # the codes of this very table
        codes, uniq = o.ids[column]
        names = sorted(str(u) for u in uniq)
        return names, pd.Index(names).get_indexer(pd.Index(np.asarray(uniq, dtype=object)))[codes]
    names = sorted(o.table[column].unique().tolist())
    return names, pd.Index(names).get_indexer(pd.Index(o.table[column].to_numpy(object)))


def encode_leaderboard(
    df: pd.DataFrame,
    *,
    human: pd.DataFrame | None = None,
    difficulty: bool = False,
    covariates: Sequence[str] | None = None,
    check_judges: bool = True,
    connected: bool = True,
) -> LeaderboardData:
    """Validate a judgments table of systems across prompts and count it into cells.

    Parameters
    ----------
    df : DataFrame
        The judgments table (``item`` the prompt, ``a``, ``b`` the systems in the order the judge
        saw them, ``judge``, ``p_a`` and/or ``winner``, optionally ``human``).
    human : DataFrame, optional
        Human labels as a table ``item, a, b, human`` (``"a"``/``"b"`` in that row's
        orientation), possibly on comparisons no judge saw; default: the ``human`` column.
    difficulty : bool
        Keep the prompt in the cell key (for the per-prompt difficulty option).
    covariates : list of str
        Columns of ``df`` (and of ``human``) holding covariate differences, A minus B.
    connected : bool
        Check that the comparisons connect every system (``False`` for the new rows of an update,
        which may connect only through the earlier fit's systems: :func:`merge_data` checks them).

    Raises
    ------
    ValueError
        Bad tables (:func:`bayes_judge.validate_judgments`), human labels naming unknown systems
        or contradicting each other, systems split into groups never compared, a judge that always
        names one position.
    """
    o = read_outcomes(df)
    df = o.table
    covariates = list(covariates or [])
    for c in covariates:
        if c not in df.columns:
            raise ValueError(f"covariate column {c!r} is not in the judgments table; it has {list(df.columns)}")
        x = pd.to_numeric(df[c], errors="coerce")
        if not np.isfinite(x.to_numpy(float)).all():
            raise ValueError(f"covariate column {c!r} has missing or non-numeric values in "
                             f"{int((~np.isfinite(x.to_numpy(float))).sum())} row(s)")
    judges, je = _sorted_codes(o, "judge")
    counts = _position_counts(o, je, len(judges))
    if check_judges:
        _refuse_one_position(judges, *counts)
    row_items, row_item_ids = _row_items(o)
    lab = _human_labels(o, human, row_items)
    systems = o.names
    items = sorted(set(df["item"]) | set(lab["item"])) if difficulty else ["all"]
    item_index = pd.Index(items)
    item_col = df["item"].to_numpy(object)
    # a comparison (item, lo, hi) as one integer, items coded over both tables (a MultiIndex of the
    # same keys costs a second a million rows in its lookups): the rows' codes from the validation,
    # a label from the rows its row's code, one from the human= table looked up (or coded after)
    item_ids = row_item_ids
    lab_items = lab["item_code"].to_numpy(np.int64, copy=True)
    other = lab_items < 0
    if other.any():
        at = pd.Index(item_ids).get_indexer(lab["item"].to_numpy(object)[other])
        new, new_ids = pd.factorize(lab["item"].to_numpy(object)[other][at < 0])
        at[at < 0] = len(item_ids) + new
        lab_items[other] = at
        item_ids = np.r_[item_ids, np.asarray(new_ids, dtype=object)]
    codes = np.r_[row_items, lab_items]
    S = len(systems)
    comparison = (codes[:len(df)] * S + o.first) * S + o.second
    # the human label of every judgment's comparison, in the judgment's orientation
    h = np.zeros(len(df), dtype=np.int64)
    if len(lab):  # one label per comparison (_human_labels)
        lab_key = (codes[len(df):] * S + lab["lo"].to_numpy(np.int64)) * S + lab["hi"].to_numpy(np.int64)
        at = pd.Index(lab_key).get_indexer(comparison)
        known = at >= 0
        a_wins = lab["lo_wins"].to_numpy(bool)[at] == o.a_first
        h[known] = np.where(a_wins[known], H_A, H_B)

    soft = o.p_given
    p = o.p_a
    ya = o.outcome_a
    n = np.zeros((len(df), 5))
    n[~soft, 0] = ya[~soft] > 0
    n[~soft, 1] = ya[~soft] < 0
    n[~soft, 2] = ya[~soft] == 0
    n[soft, 3] = p[soft]
    n[soft, 4] = 1.0 - p[soft]

    ia, ib = o.a, o.b
    it = item_index.get_indexer(pd.Index(item_col)) if difficulty else np.zeros(len(df), np.int64)
    xs = (df[covariates].to_numpy(float) if covariates else np.zeros((len(df), 1)))
    keys = np.column_stack([ia, ib, je, h, it, xs]) if covariates else np.column_stack([ia, ib, je, h, it])
    uniq, sums = _group(keys, n)
    k = len(covariates)

    # human cells: one count per labelled comparison, oriented (lo, hi)
    if len(lab):
        la, lb = lab["lo"].to_numpy(np.int64), lab["hi"].to_numpy(np.int64)
        li = item_index.get_indexer(pd.Index(lab["item"])) if difficulty else np.zeros(len(lab), np.int64)
        if difficulty and (li < 0).any():  # pragma: no cover - items come from both tables
            raise ValueError("internal error: a labelled prompt has no index")
        lx = np.zeros((len(lab), 1))
        if covariates:
            # the covariate of a labelled comparison (oriented lo − hi): from its judgments, else from
            # the human table's own covariate columns
            got = _oriented_covariates(df, covariates, systems).reindex(
                pd.MultiIndex.from_arrays([lab["item"], lab["lo"], lab["hi"]]))
            if human is not None and all(c in human.columns for c in covariates):
                got = got.fillna(_oriented_covariates(human, covariates, systems).reindex(got.index))
            if got.isna().any().any():
                raise ValueError("covariates: human-labelled comparisons that no judge saw need their covariate "
                                 "columns in the human table")
            lx = got.to_numpy(float)
        hn = np.column_stack([lab["lo_wins"].to_numpy(bool), ~lab["lo_wins"].to_numpy(bool)]).astype(float)
        hk, hsum = _group(np.column_stack([la, lb, li, lx]), hn)
        hum_a, hum_b, hum_item = hk[:, 0].astype(np.int64), hk[:, 1].astype(np.int64), hk[:, 2].astype(np.int64)
        hum_x = np.ascontiguousarray(hk[:, 3:]) if covariates else np.zeros((len(hk), 1))
    else:
        hum_a = hum_b = hum_item = np.zeros(0, np.int64)
        hsum = np.zeros((0, 2))
        hum_x = np.zeros((0, max(k, 1)))

    if connected:
        check_connected(len(systems), np.r_[ia, hum_a], np.r_[ib, hum_b], names=systems)
    # each distinct id's text hashed once (they are unique: no categorizing first), then mixed per row
    h_item = pd.util.hash_array(np.asarray(item_ids, dtype=object), categorize=False)[codes]
    h_sys = pd.util.hash_array(np.asarray(systems, dtype=object), categorize=False)
    h_judge = pd.util.hash_array(np.asarray(judges, dtype=object), categorize=False)
    row_keys = _mix(h_item[:len(df)], h_sys[ia], h_sys[ib], h_judge[je])
    if "sample" in df.columns:  # sample 0 is the one judgment a table without the column has
        sample = df["sample"].to_numpy(np.int64)
        rep = sample != 0
        row_keys[rep] = _mix(h_item[:len(df)][rep], h_sys[ia[rep]], h_sys[ib[rep]], h_judge[je[rep]], sample[rep])
    label_keys = (_mix(h_item[len(df):], h_sys[lab["lo"].to_numpy(np.int64)], h_sys[lab["hi"].to_numpy(np.int64)])
                  if len(lab) else np.zeros(0, np.int64))
    # each comparison's first row, hashed as label_keys (every row where each has an item of its own)
    once = (np.ones(len(df), dtype=bool) if len(row_item_ids) == len(df)
            else ~pd.Series(comparison).duplicated().to_numpy())
    comparison_keys = _mix(h_item[:len(df)][once], h_sys[o.first[once]], h_sys[o.second[once]])
    meta = {
        "n_rows": len(df), "n_soft": int(soft.sum()), "n_ties": int((~soft & (ya == 0)).sum()),
        "n_labels": len(lab), "n_labelled_rows": int((h > 0).sum()),
        "n_comparisons": int(once.sum()),
    }
    return LeaderboardData(
        systems=systems, judges=judges, items=items,
        sys_a=uniq[:, 0].astype(np.int64), sys_b=uniq[:, 1].astype(np.int64), judge=uniq[:, 2].astype(np.int64),
        h=uniq[:, 3].astype(np.int64), n=sums, item=uniq[:, 4].astype(np.int64),
        x=np.ascontiguousarray(uniq[:, 5:]) if covariates else np.zeros((len(uniq), 1)),
        hum_a=hum_a, hum_b=hum_b, hum_item=hum_item, hum_n=hsum, hum_x=hum_x,
        covariates=covariates, meta=meta, row_keys=row_keys, label_keys=label_keys,
        comparison_keys=np.asarray(comparison_keys, dtype=np.int64), position_counts=counts,
        row_ids={"item": (row_items, row_item_ids), "judge": (je, np.asarray(judges, dtype=object))},
    )


def data_of_run(idata: Any) -> LeaderboardData:
    """The cells an earlier leaderboard fit was fitted to, read back from the run (its
    ``observed_data`` / ``constant_data``): the sufficient statistics, no rows re-encoded.

    Raises
    ------
    ValueError
        Not a leaderboard run, a run written before the human cells were stored, or one fitted
        with ``difficulty`` or ``covariates`` (their cells are per prompt or per comparison).
    """
    attrs = dict(getattr(idata, "attrs", None) or {})
    if attrs.get("task") != "leaderboard":
        raise ValueError(f"previous= must be a leaderboard run (bj.leaderboard or a saved one), not a "
                         f"{attrs.get('task', 'run without a task')!r} run")
    if int(attrs.get("difficulty", 0)) or attrs.get("covariates"):
        raise ValueError("previous= cannot update a fit with difficulty or covariates (its cells are per prompt or "
                         "per comparison); refit from the rows")
    cd, od = idata["constant_data"], idata["observed_data"]
    if "hum_a" not in cd:
        raise ValueError("previous= needs a run that stores its human cells (written by this version); refit once "
                         "from the rows")
    post = idata["posterior"]
    systems = [str(s) for s in post["system"].to_numpy()]
    judges = [str(j) for j in post["judge"].to_numpy()] if "judge" in post.coords else []
    n_cells, n_h = int(od["v_counts"].shape[0]), int(od["human_counts"].shape[0])
    meta = {k: int(attrs.get(k, 0)) for k in ("n_rows", "n_soft", "n_ties", "n_labels", "n_comparisons")}
    meta["n_labelled_rows"] = int(attrs.get("n_labelled_rows", 0))
    return LeaderboardData(
        systems=systems, judges=judges, items=["all"],
        sys_a=cd["sys_a"].to_numpy().astype(np.int64), sys_b=cd["sys_b"].to_numpy().astype(np.int64),
        judge=cd["cell_judge"].to_numpy().astype(np.int64), h=cd["h"].to_numpy().astype(np.int64),
        n=od["v_counts"].to_numpy().astype(float), item=np.zeros(n_cells, np.int64), x=np.zeros((n_cells, 1)),
        hum_a=cd["hum_a"].to_numpy().astype(np.int64), hum_b=cd["hum_b"].to_numpy().astype(np.int64),
        hum_item=np.zeros(n_h, np.int64), hum_n=od["human_counts"].to_numpy().astype(float),
        hum_x=np.zeros((n_h, 1)), covariates=[], meta=meta,
        row_keys=cd["row_key"].to_numpy().astype(np.int64) if "row_key" in cd else np.zeros(0, np.int64),
        label_keys=cd["label_key"].to_numpy().astype(np.int64) if "label_key" in cd else np.zeros(0, np.int64),
        comparison_keys=cd["comparison_key"].to_numpy().astype(np.int64) if "comparison_key" in cd else None,
        position_counts=((cd["judge_named_a"].to_numpy().astype(float), cd["judge_decided"].to_numpy().astype(float))
                         if "judge_decided" in cd else None),
    )


def merge_data(old: LeaderboardData, new: LeaderboardData) -> LeaderboardData:
    """The cells of an earlier fit and of new rows, as one fit's: systems and judges matched by
    name (new systems appended), counts of the same cell added.

    Raises
    ------
    ValueError
        New rows from a judge the earlier fit did not have (a different judge set), systems that
        neither the old nor the new comparisons connect to the rest, or rows and human labels the
        earlier fit already counted (checked where the run keeps their keys).
    """
    if old.judges == ["human"] or new.judges == ["human"]:
        if old.judges != new.judges:
            raise ValueError(f"previous= was fitted to {old.judges}, the new rows come from {new.judges}: people's "
                             "votes and LLM judges are different models; refit from the rows")
    unknown = sorted(set(new.judges) - set(old.judges))
    if unknown:
        raise ValueError(f"the new rows have judge(s) {unknown} that the previous fit did not have "
                         f"({old.judges}); refit from all the rows to add a judge")
    for what, o, n in (("rows", old.row_keys, new.row_keys), ("human labels", old.label_keys, new.label_keys)):
        again = _isin(n, o)
        if again.any():
            raise ValueError(f"{int(again.sum())} of the {n.size} new {what} were already counted in the previous fit "
                             f"({'the same item, systems, judge and order' if what == 'rows' else 'the same item and systems'}): an update adds "
                             "new battles and labels only; pass the rows that came after it, or refit from all the rows")
    systems = old.systems + [s for s in new.systems if s not in set(old.systems)]
    smap = pd.Index(systems).get_indexer(pd.Index(new.systems))
    jmap = pd.Index(old.judges).get_indexer(pd.Index(new.judges))
    keys = np.column_stack([np.r_[old.sys_a, smap[new.sys_a]], np.r_[old.sys_b, smap[new.sys_b]],
                            np.r_[old.judge, jmap[new.judge]], np.r_[old.h, new.h],
                            np.zeros(len(old.sys_a) + len(new.sys_a), np.int64)])
    uniq, sums = _group(keys, np.r_[old.n, new.n])
    if len(new.hum_a):
        hk, hsum = _group(np.column_stack([np.r_[old.hum_a, smap[new.hum_a]], np.r_[old.hum_b, smap[new.hum_b]],
                                           np.zeros(len(old.hum_a) + len(new.hum_a), np.int64)]),
                          np.r_[old.hum_n, new.hum_n])
        hum_a, hum_b = hk[:, 0].astype(np.int64), hk[:, 1].astype(np.int64)
    else:
        hum_a, hum_b, hsum = old.hum_a, old.hum_b, old.hum_n
    check_connected(len(systems), np.r_[uniq[:, 0], hum_a].astype(np.int64), np.r_[uniq[:, 1], hum_b].astype(np.int64),
                    names=systems)
    meta = {k: int(old.meta.get(k, 0)) + int(new.meta.get(k, 0)) for k in set(old.meta) | set(new.meta)}
    comparisons = None
    if old.comparison_keys is not None and new.comparison_keys is not None:
        comparisons = np.asarray(pd.unique(np.r_[old.comparison_keys, new.comparison_keys]), dtype=np.int64)
        meta["n_comparisons"] = len(comparisons)
        # one comparison's judgments in one fit and its label in the other: the judgments' cells
        # cannot learn the label (a model in which each judge reads its comparison's label)
        meta["split_labels"] = int(_isin(new.comparison_keys, old.label_keys).sum()
                                   + _isin(new.label_keys, old.comparison_keys).sum())
    else:
        meta["split_labels"] = -1  # unknown: the earlier run does not keep its comparisons
    C, H = len(uniq), len(hum_a)
    return LeaderboardData(
        systems=systems, judges=old.judges, items=["all"],
        sys_a=uniq[:, 0].astype(np.int64), sys_b=uniq[:, 1].astype(np.int64), judge=uniq[:, 2].astype(np.int64),
        h=uniq[:, 3].astype(np.int64), n=sums, item=np.zeros(C, np.int64), x=np.zeros((C, 1)),
        hum_a=hum_a, hum_b=hum_b, hum_item=np.zeros(H, np.int64), hum_n=hsum, hum_x=np.zeros((H, 1)),
        covariates=[], meta=meta, row_keys=np.r_[old.row_keys, new.row_keys],
        label_keys=np.r_[old.label_keys, new.label_keys], comparison_keys=comparisons,
        position_counts=_merged_counts(old, new, jmap),
    )


def _isin(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``np.isin`` by a hash table (pandas): 0.04 s for 100,000 keys in a million, where numpy's
    sorts or hashes both (0.7 s)."""
    if not (values.size and pool.size):
        return np.zeros(values.size, bool)
    return pd.Series(values).isin(pool).to_numpy()


def _merged_counts(old: LeaderboardData, new: LeaderboardData, jmap: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The judges' position counts of both fits, added by judge (None where a run has none)."""
    if old.position_counts is None or new.position_counts is None:
        return None
    out = [c.copy() for c in old.position_counts]
    for mine, theirs in zip(out, new.position_counts, strict=True):
        np.add.at(mine, jmap, theirs)
    return out[0], out[1]


def judges_only(data: LeaderboardData) -> LeaderboardData:
    """The judgment cells of ``data`` without what they know of people's preference, and no label
    cells: the judges-only fit whose reading the score bridge learns from the labels
    (:func:`bayes_judge.leaderboard.bridge.calibrate_bridge`).  Cells that differ only in their
    label are added together.

    Raises
    ------
    ValueError
        With difficulty or covariates (the bridge reads one score per system), or when the judges'
        comparisons alone leave a system apart from the rest (people compared it, no judge did).
    """
    if len(data.items) > 1 or data.covariates:
        raise ValueError("the score bridge learnt from labels reads one score per system: fit without difficulty= "
                         "and covariates=, or pass bridge=False")
    keys = np.column_stack([data.sys_a, data.sys_b, data.judge, np.zeros_like(data.h), data.item]).astype(np.int64)
    uniq, sums = _group(keys, data.n)
    try:
        check_connected(len(data.systems), uniq[:, 0], uniq[:, 1], names=data.systems)
    except ValueError as err:
        raise ValueError(f"the score bridge reads the judges' reading of every system, but the judges' comparisons "
                         f"alone (people's labels aside) do not connect them: {err}; or pass bridge=False") from err
    C = len(uniq)
    none = np.zeros(0, np.int64)
    return LeaderboardData(
        systems=data.systems, judges=data.judges, items=data.items,
        sys_a=uniq[:, 0].astype(np.int64), sys_b=uniq[:, 1].astype(np.int64), judge=uniq[:, 2].astype(np.int64),
        h=np.zeros(C, np.int64), n=sums, item=uniq[:, 4].astype(np.int64), x=np.zeros((C, data.x.shape[1])),
        hum_a=none, hum_b=none, hum_item=none, hum_n=np.zeros((0, 2)), hum_x=np.zeros((0, data.x.shape[1])),
        covariates=[], meta={**data.meta, "n_labels": 0, "n_labelled_rows": 0},
    )
