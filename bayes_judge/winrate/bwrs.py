"""Bayesian Win Rate Sampling (Gao et al. 2024, Algorithm 1), vectorized over judges, pairs and draws."""

from __future__ import annotations

import warnings

import numpy as np

from .encode import WinRateData

__all__ = ["bwrs_draws", "BWRSWarning"]


class BWRSWarning(UserWarning):
    """Some BWRS draws fall outside [0, 1] or have q0 + q1 <= 1 (Gao et al. 2024 eq. 14)."""


def bwrs_draws(
    data: WinRateData,
    counts: dict[str, np.ndarray],
    *,
    chains: int,
    draws: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Draws of Algorithm 1 for every (pair, judge), and their mean over judges.

    Parameters
    ----------
    data : WinRateData
        The data set D without (or ignoring) human labels: gives s_k, n_k (Alg. 1 lines 9-10).
    counts : dict of (P, E) arrays
        n0, s0, n1, s1 (Alg. 1 lines 4-8) from the human-labelled set F: the labelled subset
        of D (in-distribution) or an OOD set.
    chains, draws : int
        ``N = chains * draws`` samples (the seed uses N = 10 000).

    Returns
    -------
    dict with (chains, draws, P, E) arrays ``q0``, ``q1``, ``k``, ``p_judge``, the (P, E)
    pooling ``weight`` and the (chains, draws, P) pooled ``p``.

    Notes
    -----
    Line by line::

        q0 ~ Beta(s0 + 1, n0 - s0 + 1)                 (line 13)
        q1 ~ Beta(s1 + 1, n1 - s1 + 1)                 (line 14)
        k  ~ Beta(sk + 1, nk - sk + 1)                 (line 16)
        p  = (k + q1 - 1) / (q0 + q1 - 1)              (line 17, eq. 11)

    Draws with p outside [0, 1] or q0 + q1 <= 1 (eq. 14) are kept, counted in the summary and
    warned about: dropping them would bias the estimate silently.  The share of q0 + q1 <= 1
    counts only the (pair, judge) cells with verdicts: a judge that never judged a pair has no
    ``p_judge`` there (NaN) and its ``q0``, ``q1`` there are prior draws.

    Algorithm 1 calibrates one evaluator; the seed reports each evaluator mode separately
    (``win_rate_summary(..., by_judge=True)``).  To give one ``p`` per pair the judges' draws are
    pooled by an inverse-variance weighted mean, ``p = sum_e w_e p_e / sum_e w_e`` with
    ``w_e = 1 / s_e**2`` and ``s_e = IQR(p_e) / 1.349`` a robust posterior scale: a judge near
    chance, whose eq. 11 ratio explodes (q0 + q1 -> 1), gets almost no weight instead of
    dominating a plain average.
    """
    P, E = len(data.pairs), len(data.judges)
    sk, nk = data.verdict_counts()
    n0, s0, n1, s1 = (np.broadcast_to(counts[k], (P, E)) for k in ("n0", "s0", "n1", "s1"))
    rng = np.random.default_rng(seed)
    size = (chains, draws, P, E)
    q0 = rng.beta(s0 + 1, n0 - s0 + 1, size=size)
    q1 = rng.beta(s1 + 1, n1 - s1 + 1, size=size)
    k = rng.beta(sk + 1, nk - sk + 1, size=size)
    p_judge = (k + q1 - 1) / (q0 + q1 - 1)
    judged = nk > 0
    p_judge = np.where(judged, p_judge, np.nan)
    # a robust scale of every judged cell (a cell without verdicts has no draws: all NaN)
    scale = np.full((P, E), np.nan)
    if judged.any():
        q25, q75 = np.nanquantile(p_judge[:, :, judged], [0.25, 0.75], axis=(0, 1))
        scale[judged] = (q75 - q25) / 1.349
    weight = np.where(judged & np.isfinite(scale) & (scale > 0), 1.0 / np.maximum(scale, 1e-12) ** 2, 0.0)
    # no usable spread (e.g. a single draw): equal weights over the judges that judged the pair
    flat = weight.sum(axis=-1, keepdims=True) == 0
    weight = np.where(flat, judged.astype(float), weight)
    weight = weight / weight.sum(axis=-1, keepdims=True)
    p = (np.where(judged, p_judge, 0.0) * weight).sum(axis=-1)
    outside = float(np.mean((p < 0) | (p > 1)))
    # eq. 14 over the cells with verdicts: a judge's (q0, q1) on a pair it never judged are
    # not used by p and are its prior there (Beta(1, 1) without OOD counts)
    low_q = float(np.mean(((q0 + q1) <= 1)[:, :, judged])) if judged.any() else 0.0
    if outside > 0 or low_q > 0:
        warnings.warn(
            f"BWRS: {outside:.1%} of the pooled p draws lie outside [0, 1] and {low_q:.1%} of the "
            "(q0, q1) draws have q0 + q1 <= 1 (Gao et al. 2024 eq. 14); they are kept, not dropped. "
            "The judges may be too weak, or the labelled set too small, for eq. 11.",
            BWRSWarning,
            stacklevel=3,
        )
    return {"p": p, "p_judge": p_judge, "q0": q0, "q1": q1, "k": k, "weight": weight}
