"""Position bias of a pairwise judge: P(A) (Liusie, Manakul & Gales 2024 eq. 8) and debiasing (eq. 9-10).

Works on any judgments table with ``p_a`` (the comparator's output, or a loaded one).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

__all__ = ["position_bias", "debias_position"]

MIN_DEBIAS = 20  # fewer comparisons in a group: its median p_a is too noisy a threshold (a warning)
BALANCED_SHARE = 0.9  # of a group's comparisons judged in both orders, below which debiasing warns


def position_bias(df: pd.DataFrame) -> dict:
    """P(A) and P(B) of Liusie, Manakul & Gales 2024 eq. 8: the share of comparisons decided for the first / second
    position (hard decisions p_a > 0.5, eq. 2; exact ties count half to each).

    Returns a dict with ``P(A)``, ``P(B)``, ``n`` and the mean soft probability ``mean_p_a``.
    For a symmetric comparison set an unbiased judge has P(A) = P(B) = 0.5.
    """
    p = _p(df)
    y = np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5))
    return {"P(A)": float(y.mean()), "P(B)": float(1 - y.mean()), "n": int(p.size),
            "mean_p_a": float(p.mean())}


def _p(df: pd.DataFrame) -> np.ndarray:
    if "p_a" not in df.columns:
        raise ValueError("position bias needs a 'p_a' column (soft probabilities)")
    p = df["p_a"].to_numpy(dtype=float)
    if p.size == 0:
        raise ValueError("position bias of an empty table is undefined")
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError("column 'p_a' must hold probabilities in [0, 1]")
    return p


def debias_position(df: pd.DataFrame, method: str = "reweight", *, by: str | None = "judge") -> pd.DataFrame:
    """Remove a judge's systematic position bias (Liusie, Manakul & Gales 2024 §3.5).

    ``"threshold"`` (eq. 10): the decision threshold tau is set to the median of p_a, so that
    P(A) = P(B) = 0.5 on this comparison set; ``winner`` is recomputed with it and ``p_a`` is emptied
    (NaN: a probability above ½ beside a debiased "b" would contradict it, and every estimator
    refused the table), so the hard decisions are the verdicts.
    ``"reweight"`` (eq. 9): p̂ = α p / (α p + 1 − p) with α = (1 − tau) / tau, the same tau, so that
    p̂ > 0.5 ⇔ p > tau: the soft probabilities themselves are debiased, and ``winner`` follows.

    The input's ``p_a`` is kept as ``p_a_raw``; ``df.attrs["debias"]`` records per group what was
    done (method, tau, alpha, P(A) before and after, ``n`` and ``n_both_orders``).

    Taking the median as the threshold assumes a balanced set: every pair judged in both orders
    (``compare(..., symmetric=True)``), so that half the verdicts *should* go to each position. On
    a set judged in one order only, the median also moves the candidates' real differences (a
    better candidate shown first more often becomes a tie or loses), and on a few comparisons it
    is noise: a UserWarning names each group where under ``BALANCED_SHARE`` (90%) of the
    comparisons were judged in both orders (``a``/``b`` read as shown first / second, within
    ``item`` when there is one) or with fewer than ``MIN_DEBIAS`` = 20 comparisons.

    Parameters
    ----------
    df : judgments table with ``p_a``
    method : ``"reweight"`` or ``"threshold"``
    by : column whose groups are debiased separately (default: per judge); None for one group
    """
    if method not in ("reweight", "threshold"):
        raise ValueError(f"debias method must be 'reweight' or 'threshold', not {method!r}")
    _p(df)
    out = df.copy()
    out["p_a_raw"] = out["p_a"].astype(float)
    groups = [(None, out.index)] if by is None or by not in out.columns else list(out.groupby(by, sort=False).groups.items())
    record, unsound = {}, []
    for key, idx in groups:
        p = out.loc[idx, "p_a_raw"].to_numpy(dtype=float)
        both = _both_orders(out.loc[idx])
        if (both is not None and both < BALANCED_SHARE * p.size) or p.size < MIN_DEBIAS:
            unsound.append(f"{'all' if key is None else repr(key)}: {p.size} comparison(s), "
                           f"{'?' if both is None else both} judged in both orders")
        before = position_bias(pd.DataFrame({"p_a": p}))["P(A)"]
        tau = float(np.median(p))
        tau = min(max(tau, 1e-6), 1 - 1e-6)
        alpha = (1 - tau) / tau
        if method == "reweight":
            q = alpha * p / (alpha * p + (1 - p))
            out.loc[idx, "p_a"] = q
            win = np.where(q > 0.5, "a", np.where(q < 0.5, "b", "tie"))
        else:  # the decisions carry the debiasing; p_a (kept as p_a_raw) would contradict them
            win = np.where(p > tau, "a", np.where(p < tau, "b", "tie"))
            out.loc[idx, "p_a"] = np.nan
        out.loc[idx, "winner"] = win
        y = np.where(win == "a", 1.0, np.where(win == "b", 0.0, 0.5))
        record[str(key) if key is not None else "all"] = {
            "method": method, "equation": "Liusie, Manakul & Gales 2024 eq. 9" if method == "reweight" else "Liusie, Manakul & Gales 2024 eq. 10",
            "tau": tau, "alpha": alpha, "P(A) before": before, "P(A) after": float(y.mean()), "n": int(p.size),
            "n_both_orders": both,
        }
    if unsound:
        warnings.warn(
            f"debias={method!r} sets the decision threshold to the median p_a, which assumes a balanced set (every "
            f"pair judged in both orders, at least {MIN_DEBIAS} comparisons); {len(unsound)} group(s) are not: "
            f"{'; '.join(unsound[:5])}{' ...' if len(unsound) > 5 else ''}. There the threshold also moves the "
            "candidates' real differences (verdicts become ties or flip) or is noise: judge both orders "
            "(symmetric=True) and more comparisons, or leave debias off", UserWarning, stacklevel=2)
    out.attrs = {**df.attrs, "debias": record}
    return out


def _both_orders(df: pd.DataFrame) -> int | None:
    """How many rows of ``df`` have their pair judged in the other order too (a row (a, b) beside a
    row (b, a), of the same ``item`` where there is one); None without ``a`` / ``b`` columns."""
    if not {"a", "b"} <= set(df.columns):
        return None
    item = df["item"].astype(str).tolist() if "item" in df.columns else [""] * len(df)
    a, b = df["a"].astype(str).tolist(), df["b"].astype(str).tolist()
    shown = set(zip(item, a, b, strict=True))
    return sum((i, y, x) in shown for i, x, y in zip(item, a, b, strict=True))
