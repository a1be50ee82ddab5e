"""Does a judge carry information? Checks run on a judgments table after every comparator run.

A judge carries no information about the texts when its verdicts would be the same whatever the
texts were. Three signatures are checked on the rows that have a probability (``p_a`` finite):

``"constant"``
    ``p_a`` is (nearly) the same for every comparison: its standard deviation is below
    ``constant_sd`` (default 0.01).
``"position-determined"``
    Among the pairs judged in both orders, the text shown in the same position (first, or
    second) wins in both orders for at least ``position_share`` (default 90 %) of the pairs: the
    verdict follows the position, not the texts ("A" whatever the order; Liusie, Manakul & Gales 2024 §3.5 and Table
    8 report judges at 0.9+). Debiasing (Liusie, Manakul & Gales 2024 eq. 9-10) cannot recover texts' differences
    from such a judge: with the position removed, nothing is left.
``"order-inconsistent"``
    Soft version of the same question, on the pairs judged in both orders: q₁ = P(x better | x
    shown first) and q₂ = P(x better | x shown second) should rise and fall together across pairs
    if ``p_a`` reads the texts. The flag fires when the 95 % interval (Fisher z) of their
    correlation lies below 0, i.e. when the soft probabilities of the two orders disagree more
    than chance allows (an informative judge, however noisy, raises it with probability ≤ 2.5 %).
    SmolLM2-135M on SummEval (``data/summeval/smollm2_pairwise.csv``) has r = −0.77 to −0.84:
    its p_a depends on the pair, not on which text is where.
``"saturated"``
    ``p_a`` lies within ``saturation`` (default 0.01) of 0 or 1 for at least ``saturated_share``
    (default 95 %) of the comparisons: the probabilities are hard verdicts in disguise (a sampled
    judge with few samples, an over-confident API model). The verdicts may still be informative,
    but the soft models (PoE-BT's Z = π / sin(π p), soft Bradley-Terry) read them as certainty.

The checks need at least ``min_rows`` (default 10) scored comparisons, and the two order checks
``min_pairs`` (default 5) pairs judged in both orders; below that, ``checked`` is False and
nothing is flagged (with 6 comparisons an informative judge says "A" every time by chance too
often for a warning to mean anything).

:func:`diagnose_judgments` returns the diagnosis as a dict; :class:`~.comparator.Comparator`
stores it in the result's ``attrs["diagnosis"]`` and warns with :class:`UninformativeJudgeWarning`
when a flag is raised (silence it with ``warnings.simplefilter("ignore", UninformativeJudgeWarning)``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["UninformativeJudgeWarning", "DuplicateJudgesWarning", "diagnose_judgments", "diagnose_table",
           "diagnose_rows", "identical_judges", "duplicate_message", "one_order_message",
           "warn_if_uninformative", "uninformative_judges", "uninformative_message"]


class UninformativeJudgeWarning(UserWarning):
    """The judge's verdicts do not depend on the texts (or its probabilities are saturated).

    The result's ``attrs["diagnosis"]`` says which check fired and with which numbers.
    """


_MESSAGES = {
    "constant": "p_a is nearly constant (sd {p_sd:.4f} over {n_scored} comparisons): the verdicts do "
                "not depend on the texts",
    "position-determined": "the text shown {dominant_position} wins in both orders for "
                           "{position_determined:.0%} of the {n_pairs_both_orders} pairs judged both ways: "
                           "the verdict follows the position, not the texts",
    "order-inconsistent": "over the {n_pairs_both_orders} pairs judged both ways, a text's probability of "
                          "being better when shown first and when shown second are anti-correlated "
                          "(r = {order_correlation:.2f}, 95% interval up to {order_correlation_high:.2f})",
    "saturated": "p_a is within {saturation} of 0 or 1 for {share_saturated:.0%} of the comparisons: the "
                 "probabilities are hard verdicts, which soft models (PoE-BT, soft BT) read as certain",
}


def diagnose_judgments(
    df: pd.DataFrame,
    *,
    min_rows: int = 10,
    min_pairs: int = 5,
    constant_sd: float = 0.01,
    position_share: float = 0.9,
    saturation: float = 0.01,
    saturated_share: float = 0.95,
) -> dict[str, Any]:
    """Check whether a judge's judgments carry information about the texts (see the module docstring).

    Parameters
    ----------
    df : judgments table with ``p_a`` (rows with NaN ``p_a`` are not scored and are counted in
        ``n_missing``), and, for the position check, ``pair_a``, ``pair_b``, ``order`` (the
        comparator's output) or ``a``, ``b`` (a pair judged in both orders appears as (x, y) and
        (y, x) of one item and judge)
    min_rows, min_pairs : least scored comparisons / pairs judged both ways for the checks
    constant_sd, position_share, saturation, saturated_share : thresholds of the three checks

    Returns
    -------
    dict with ``checked``, ``flags`` (list of the checks that fired), ``messages``, ``n``,
    ``n_scored``, ``n_missing``, ``p_sd``, ``share_a`` (share of verdicts for the first
    position), ``share_saturated``, ``n_pairs_both_orders``, ``position_determined`` (share of
    those pairs where one position won both times; NaN when none), ``order_consistent`` (share
    where the same text won both times), ``dominant_position``, ``order_correlation`` and
    ``order_correlation_high`` (its 95 % upper bound), ``informative`` (None when not checked)
    and the thresholds used.
    """
    if "p_a" not in df.columns:
        raise ValueError("diagnose_judgments needs a 'p_a' column")
    p_all = pd.to_numeric(df["p_a"], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(p_all)
    p = p_all[ok]
    out: dict[str, Any] = {
        "n": int(p_all.size), "n_scored": int(p.size), "n_missing": int((~ok).sum()),
        "thresholds": {"min_rows": min_rows, "min_pairs": min_pairs, "constant_sd": constant_sd,
                       "position_share": position_share, "saturation": saturation,
                       "saturated_share": saturated_share},
    }
    out["p_sd"] = float(p.std()) if p.size else float("nan")
    out["share_a"] = float(np.mean(np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5)))) if p.size else float("nan")
    out["share_saturated"] = float(np.mean((p <= saturation) | (p >= 1 - saturation))) if p.size else float("nan")
    out["saturation"] = saturation
    out.update(_both_orders(df.loc[ok]))
    flags: list[str] = []
    out["checked"] = bool(p.size >= min_rows)
    if out["checked"]:
        if out["p_sd"] < constant_sd:
            flags.append("constant")
        if out["n_pairs_both_orders"] >= min_pairs and out["position_determined"] >= position_share:
            flags.append("position-determined")
        if (out["n_pairs_both_orders"] >= min_pairs and "constant" not in flags
                and out["order_correlation_high"] < 0):
            flags.append("order-inconsistent")
        if out["share_saturated"] >= saturated_share and "constant" not in flags:
            flags.append("saturated")
    out["flags"] = flags
    out["messages"] = [_MESSAGES[f].format(**out) for f in flags]
    out["informative"] = None if not out["checked"] else not (set(flags) - {"saturated"})
    return out


MAX_ROWS = 20_000  # rows per judge that diagnose_table reads (whole items, chosen with a fixed seed)

_KEEP = ("flags", "messages", "informative", "checked", "share_a", "position_determined", "n_pairs_both_orders",
         "order_consistent", "p_sd", "n")


def diagnose_table(df: pd.DataFrame, *, ids: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
                   **thresholds: Any) -> dict[str, dict[str, Any]]:
    """:func:`diagnose_judgments` for every judge of a judgments table, read from the table itself.

    The diagnosis is made from the rows, not carried beside them, so it holds whatever route the
    table took (the comparator, its store, a CSV or Parquet round trip, another tool's export).
    ``p_a`` is read where given, else the hard verdict (``winner`` ``"a"`` / ``"b"`` / ``"tie"``
    as 1 / 0 / ½); hard verdicts are not flagged ``"saturated"`` (they are meant to be hard).
    A judge with more than ``MAX_ROWS`` rows is read on a fixed-seed share of its items (both
    orders of an item together), so a million-row table costs what 20,000 rows do.

    Parameters
    ----------
    df : DataFrame
        A judgments table (``item``, ``a``, ``b``, ``judge``, ``p_a`` and/or ``winner``).
    ids : dict, optional
        ``"item"`` and ``"judge"`` → ``(codes, distinct values)`` of ``df``'s rows, where a reader
        has coded them already (:func:`bayes_judge.schema.coded_judgments`, kept by the
        leaderboard's encoder): not coded again.
    **thresholds
        Passed to :func:`diagnose_judgments`.

    Returns
    -------
    dict
        judge name → the diagnosis's ``flags``, ``messages``, ``informative``, ``checked``,
        ``share_a`` (P(first position)), ``position_determined``, ``n_pairs_both_orders``,
        ``order_consistent``, ``p_sd`` and ``n``.
    """
    if df.empty:
        return {}
    if "p_a" not in df.columns and "winner" not in df.columns:
        return {}
    # each row's p_a where given, else its hard verdict: a table may mix judges of both kinds
    p = (pd.to_numeric(df["p_a"], errors="coerce").to_numpy(float) if "p_a" in df.columns
         else np.full(len(df), np.nan))
    given = ~np.isnan(p)
    if "winner" in df.columns and not given.all():  # the few distinct spellings read once, not a million strings
        codes, uniq = pd.factorize(df["winner"])
        val = pd.Series(uniq).astype(str).str.strip().str.lower().map({"a": 1.0, "b": 0.0, "tie": 0.5})
        hard = np.where(codes >= 0, np.r_[val.to_numpy(float), np.nan][codes], np.nan)
        p = np.where(given, p, hard)
    # the judges and the items coded once (a million rows: 0.02 s and, a million distinct items,
    # 0.15 s), the rows read chosen by those codes before any frame is built, so the grouping and
    # the checks see ~20,000 rows a judge
    ids = {k: v for k, v in (ids or {}).items() if len(v[0]) == len(df)}  # codes of these very rows
    if "judge" in ids:
        jcode, jnames = ids["judge"]
        jnames = np.asarray(jnames, dtype=object)
    elif "judge" in df.columns:
        from .schema import _coded_ids

        named = df["judge"].notna().to_numpy()
        if not named.all():  # a verdict of no judge is no judge's: left out (a missing group)
            df, p, given = df[named], p[named], given[named]
        _, jcode, jnames = _coded_ids(df["judge"])  # the names the validation gives (1.0 -> "1")
    else:
        jcode, jnames = np.zeros(len(df), dtype=np.intp), np.array(["judge"], dtype=object)
    keep = same = None  # the rows each judge's checks read, and the rows the copies' check reads
    if "item" in df.columns:
        rank, n_items = _item_rank(df["item"], ids.get("item"))
        n_j = np.bincount(jcode, minlength=len(jnames))
        big = n_j > MAX_ROWS
        if big.any():
            # a judge's share of the items, and at least its first item in the order (a judge whose
            # rows sit on a few items far down the order is still read)
            first = np.full(len(jnames), np.inf)
            np.minimum.at(first, jcode, rank)
            limit = np.maximum(np.maximum(1, (n_items * MAX_ROWS / np.maximum(n_j, 1)).astype(np.int64)), first + 1)
            keep = ~big[jcode] | (rank < limit[jcode])
        if len(df) > MAX_ROWS:  # the copies' check: one share of the items for every judge (the
            # smallest share, so its rows are among every judge's own)
            same = rank < max(1, int(n_items * MAX_ROWS / len(df)))
    cols = [c for c in ("item", "a", "b") if c in df.columns]
    t = df[cols]
    if keep is not None:  # the rows read chosen before the judges' names are written out (a million: 0.09 s)
        rows = np.flatnonzero(keep)
        t, p, jcode, given = t.iloc[rows], p[rows], jcode[rows], given[rows]
        same = same[rows] if same is not None else None
    t = t.assign(p_a=p, judge=jnames[jcode], _soft=given)
    out = {}
    for name, g in t.groupby("judge", sort=True):
        soft = bool(g["_soft"].any())
        g = g.drop(columns="_soft")
        d = diagnose_judgments(g, **thresholds)
        if not soft:  # hard verdicts: meant to be hard, and "constant" said in their terms
            keep_f = [i for i, f in enumerate(d["flags"]) if f != "saturated"]
            d["flags"], d["messages"] = [d["flags"][i] for i in keep_f], [d["messages"][i] for i in keep_f]
            if "constant" in d["flags"]:
                v = {1.0: "'a' (the first position)", 0.0: "'b' (the second position)", 0.5: "a tie"}
                d["messages"][d["flags"].index("constant")] = (
                    f"all {d['n']} of its verdicts are {v.get(float(g['p_a'].iloc[0]), 'the same')}: "
                    "they do not depend on the texts")
        out[str(name)] = {k: d[k] for k in _KEEP}
    t = t.drop(columns="_soft")
    for name, copies in _identical(t if same is None else t[same]).items():  # copies: counted several times
        out[name]["identical_to"] = copies
    return out


IDENTICAL_MIN = 20  # comparisons two judges must share before their verdicts are called identical
IDENTICAL_VARIED = 5  # ... of which at least this many differ from the commonest verdict: two good judges of
# a plain pair agree on every item by chance (98% one way), copies agree on their rarer verdicts too


def _item_rank(item: pd.Series, coded: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """Each row's item's place in one fixed-seed random order of the distinct items (a missing item
    +inf: never chosen), and the number of items.  The rows whose rank is under ``m`` are those of
    ``m`` items chosen at random; a smaller share's items are among a larger's.  ``coded``: the
    items' codes and distinct values where a reader has them (not coded again)."""
    codes, uniq = coded if coded is not None else pd.factorize(item)
    order = np.random.default_rng(0).permutation(len(uniq)).astype(float)
    return np.r_[order, np.inf][codes], len(uniq)


def identical_judges(t: pd.DataFrame) -> dict[str, list[str]]:
    """Judge → the other judges whose verdicts equal its own on every comparison both judged (at
    least ``IDENTICAL_MIN`` of them, ``IDENTICAL_VARIED`` of those away from the commonest verdict):
    one judge under two names, or a panel that never disagrees.
    ``t`` holds ``item``, ``a``, ``b``, ``judge`` and the verdict ``p_a``; a share of the items
    (fixed seed) is read when there are more than ``MAX_ROWS``."""
    if len(t) > MAX_ROWS and "item" in t.columns:
        rank, n_items = _item_rank(t["item"])
        t = t[rank < max(1, int(n_items * MAX_ROWS / len(t)))]
    return _identical(t)


def _identical(t: pd.DataFrame) -> dict[str, list[str]]:
    """:func:`identical_judges` on every row of ``t``."""
    if t["judge"].nunique() < 2 or not {"item", "a", "b"} <= set(t.columns):
        return {}
    # each verdict for the same system of the pair (the lower-sorted one), whatever the order shown: the
    # commonest verdict is then a system, not a position, and both orders of an item count once each
    a, b = t["a"].astype(str).to_numpy(), t["b"].astype(str).to_numpy()
    first_low = a <= b
    t = t.assign(lo=np.where(first_low, a, b), hi=np.where(first_low, b, a), shown=first_low,
                 p_lo=np.where(first_low, t["p_a"].to_numpy(float), 1.0 - t["p_a"].to_numpy(float)))
    wide = t.pivot_table(index=["item", "lo", "hi", "shown"], columns="judge", values="p_lo", aggfunc="first")
    v = wide.to_numpy(dtype=float)
    names = [str(c) for c in wide.columns]
    out: dict[str, list[str]] = {}
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            both = ~np.isnan(v[:, i]) & ~np.isnan(v[:, j])
            if both.sum() < IDENTICAL_MIN or not np.allclose(v[both, i], v[both, j], rtol=0, atol=1e-9):
                continue
            _, counts = np.unique(np.round(v[both, i], 9), return_counts=True)
            if both.sum() - counts.max() >= IDENTICAL_VARIED:  # not two strong judges of a plain pair
                out.setdefault(names[i], []).append(names[j])
                out.setdefault(names[j], []).append(names[i])
    return out


def duplicate_message(diagnosis: dict[str, dict[str, Any]] | str) -> str | None:
    """One sentence naming judges whose verdicts are identical, or None."""
    import json

    diag = json.loads(diagnosis or "{}") if isinstance(diagnosis, str) else diagnosis
    groups = sorted({tuple(sorted([j, *d["identical_to"]])) for j, d in diag.items() if d.get("identical_to")})
    if not groups:
        return None
    listed = "; ".join(" = ".join(g) for g in groups)
    return (f"judges with identical verdicts on every comparison they share: {listed}. A model that counts judges "
            "as independent evidence (Dawid-Skene, BWRS, the observed share, a leaderboard's judges) counts "
            "them several times and narrows its intervals as if they were (5 copies of one judge: coverage "
            "0.92 -> 0.50); keep one of each, or judges= only the distinct ones")


def one_order_message(diagnosis: dict[str, dict[str, Any]] | str) -> str | None:
    """A sentence when no judge saw both orders of any comparison (a position bias then cannot be
    told from the systems: with judges naming position A 66% of the time, the default said 0.70
    [0.45, 0.91] for a truth of 0.23), or None."""
    import json

    diag = json.loads(diagnosis or "{}") if isinstance(diagnosis, str) else diagnosis
    if not diag or any(int(d.get("n_pairs_both_orders", 0) or 0) > 0 for d in diag.values()):
        return None
    return ("no judge saw both orders of any comparison: a preference for a position cannot be told from the "
            "systems' quality here, and the answer carries whatever position bias the judges have; judge both "
            "orders of some comparisons to measure it")


class DuplicateJudgesWarning(UserWarning):
    """Two or more judges gave identical verdicts on every comparison they share."""


def uninformative_judges(diagnosis: dict[str, dict[str, Any]] | str) -> dict[str, str]:
    """Judge → why its verdicts do not depend on the texts, for each judge that fails
    :func:`diagnose_table`; ``diagnosis`` as made there or as a fit keeps it (JSON in
    ``attrs["judge_diagnosis"]``)."""
    import json

    diag: dict[str, dict[str, Any]] = json.loads(diagnosis or "{}") if isinstance(diagnosis, str) else diagnosis
    return {str(j): "; ".join(d.get("messages", [])) for j, d in diag.items() if d.get("informative") is False}


def uninformative_message(diagnosis: dict[str, dict[str, Any]], *, judges_option: bool = True) -> str | None:
    """One sentence naming each judge whose verdicts do not depend on the texts, or None
    (``judges_option``: the call takes ``judges=``, else the advice is to drop their rows)."""
    bad = uninformative_judges(diagnosis)
    if not bad:
        return None
    parts = [f"{j!r}: {why}" for j, why in bad.items()]
    how = f"judges= without {sorted(bad)}" if judges_option else f"drop the rows of {sorted(bad)}"
    return (f"{len(bad)} of {len(diagnosis)} judge(s) carry no information about the texts: " + " | ".join(parts)
            + f". Their verdicts move the estimates by what they follow (a position, a constant), not by the "
              f"systems: leave them out ({how})"
            + (" or judge again with an informative judge." if len(bad) < len(diagnosis)
               else "; no judge is left, so these verdicts cannot answer the question."))


def _both_orders(df: pd.DataFrame) -> dict[str, Any]:
    """Pairs judged in both orders: how often one position, or one text, won both times."""
    nan = float("nan")
    none = {"n_pairs_both_orders": 0, "position_determined": nan, "order_consistent": nan,
            "dominant_position": "first", "order_correlation": nan, "order_correlation_high": nan}
    if df.empty:
        return none
    keys = ["judge"] if "judge" in df.columns else []
    if "item" in df.columns:
        keys.append("item")
    p = df["p_a"].to_numpy(dtype=float)
    first = df["a"].astype(str).to_numpy()
    second = df["b"].astype(str).to_numpy()
    lo = np.minimum(first, second)
    hi = np.maximum(first, second)
    lo_first = first == lo
    t = pd.DataFrame({**{k: df[k].astype(str).to_numpy() for k in keys}, "lo": lo, "hi": hi,
                      "lo_first": lo_first,
                      "v": np.sign(p - 0.5),  # +1: the text shown first won, -1: the second, 0: tie
                      "q": np.where(lo_first, p, 1 - p)})  # P(lo better)
    both = t.groupby([*keys, "lo", "hi"], sort=False)["lo_first"].agg(["min", "max", "size"])
    both = both[(both["min"] != both["max"]) & (both["size"] == 2)]
    if both.empty:
        return none
    t = t.set_index([*keys, "lo", "hi"]).loc[both.index]
    shown_first = t[t["lo_first"]]
    shown_second = t[~t["lo_first"]].reindex(shown_first.index)
    decided = ((shown_first["v"] != 0) & (shown_second["v"] != 0)).to_numpy()
    same_position = (shown_first["v"] == shown_second["v"]).to_numpy()[decided]  # one position won both
    first_both = ((shown_first["v"] > 0) & (shown_second["v"] > 0)).to_numpy()[decided]
    q1, q2 = shown_first["q"].to_numpy(), shown_second["q"].to_numpy()
    n = len(q1)
    r = high = float("nan")
    if n >= 4 and q1.std() > 0 and q2.std() > 0:
        r = float(np.clip(np.corrcoef(q1, q2)[0, 1], -0.999999, 0.999999))
        high = float(np.tanh(np.arctanh(r) + 1.96 / np.sqrt(n - 3)))
    return {
        "n_pairs_both_orders": int(n),
        "position_determined": float(same_position.mean()) if same_position.size else float("nan"),
        "order_consistent": float(1 - same_position.mean()) if same_position.size else float("nan"),
        "dominant_position": "first" if first_both.sum() >= (same_position & ~first_both).sum() else "second",
        "order_correlation": r, "order_correlation_high": high,
    }


def warn_if_uninformative(diagnosis: dict[str, Any], judge: str, *, stacklevel: int = 3) -> None:
    """Warn (:class:`UninformativeJudgeWarning`) when :func:`diagnose_judgments` raised a flag."""
    if diagnosis.get("flags"):
        warnings.warn(
            f"judge {judge!r}: " + "; ".join(diagnosis["messages"])
            + ". See the result's attrs['diagnosis'].", UninformativeJudgeWarning, stacklevel=stacklevel,
        )


def diagnose_rows(df: pd.DataFrame, where: str, *, ids: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
                  ) -> str:
    """The judges' diagnosis of a judgments table as ``attrs["judge_diagnosis"]`` keeps it (JSON),
    with an :class:`UninformativeJudgeWarning` naming a judge whose verdicts do not depend on the
    texts (for the calls without ``judges=``: ``bj.rank``, ``bj.leaderboard``); ``ids`` as
    :func:`diagnose_table` takes them."""
    import json
    import warnings

    cols = [c for c in ("item", "a", "b", "judge", "p_a", "winner") if c in df.columns]
    diagnosis = diagnose_table(df[cols], ids=ids)
    why = uninformative_message(diagnosis, judges_option=False)
    if why:
        warnings.warn(f"{where}: {why}", UninformativeJudgeWarning, stacklevel=3)
    same = duplicate_message(diagnosis)
    if same:
        warnings.warn(f"{where}: {same}", DuplicateJudgesWarning, stacklevel=3)
    return json.dumps(diagnosis)
