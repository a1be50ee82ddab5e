"""Tables read off posterior InferenceData."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd

from .calibration.kde import kde_mode

__all__ = ["win_rate_summary"]


def win_rate_summary(
    idata: az.InferenceData, *, hdi_prob: float = 0.94, by_judge: bool = False
) -> pd.DataFrame:
    """One row per pair of systems: the posterior of p and what the judges observed.

    Parameters
    ----------
    idata : arviz.InferenceData
        The result of :func:`bayes_judge.win_rate`.
    hdi_prob : float
        Mass of the highest-density interval (ArviZ's default 0.94).
    by_judge : bool
        For BWRS and observed fits: one row per (pair, judge) from the per-judge estimates
        (``p_judge`` / ``k``), as the seed reports them per evaluator mode.

    Returns
    -------
    pandas.DataFrame indexed by pair label, with columns
        system_a, system_b : the pair's orientation; p = P(a human prefers system_a)
        p_mean, p_mode : posterior mean and KDE mode of p (seed 003 p_mean / p_mode)
        hdi_low, hdi_high : highest-density interval of p
        prob_gt_half : P(p > 0.5 | data), the probability that system_a is the better system
        k_observed : observed win rate (eq. 4) averaged over judges
        r_hat, ess_bulk : convergence diagnostics of p (NaN-free only for MCMC fits)
        frac_outside_unit : share of p draws outside [0, 1] (BWRS, eq. 14)
        frac_q_sum_le_1 : share of (q0, q1) draws with q0 + q1 <= 1 (eq. 14)
        method, prior : from the fit
    """
    if not hasattr(idata, "posterior") or "p" not in idata.posterior:
        raise ValueError("win_rate_summary needs an InferenceData with a posterior variable 'p'")
    post = idata.posterior
    if by_judge:
        return _by_judge(idata, hdi_prob)
    p = post["p"]
    pairs = list(p["pair"].to_numpy())
    attrs = idata.attrs if idata.attrs else post.attrs
    first = list(attrs.get("pair_first", [s.split(" vs ")[0] for s in pairs]))
    second = list(attrs.get("pair_second", [s.split(" vs ")[-1] for s in pairs]))
    pv = p.to_numpy()  # (chain, draw, pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdi = az.hdi(p, hdi_prob=hdi_prob)["p"].to_numpy()
        rhat = az.rhat(p)["p"].to_numpy() if pv.shape[0] > 1 else np.full(len(pairs), np.nan)
        ess = az.ess(p, method="bulk")["p"].to_numpy()
    q_le = np.full(len(pairs), np.nan)
    if "q0" in post and "q1" in post:
        s = (post["q0"] + post["q1"]).to_numpy()
        q_le = (s <= 1).mean(axis=(0, 1, 3))
    k_obs = (
        idata.constant_data["k_observed"].to_numpy()
        if hasattr(idata, "constant_data") and "k_observed" in idata.constant_data
        else np.full(len(pairs), np.nan)
    )
    flat = pv.reshape(-1, len(pairs))
    out = pd.DataFrame(
        {
            "system_a": first,
            "system_b": second,
            "p_mean": flat.mean(axis=0),
            "p_mode": [kde_mode(flat[:, i]) for i in range(len(pairs))],
            "hdi_low": hdi[:, 0],
            "hdi_high": hdi[:, 1],
            "prob_gt_half": (flat > 0.5).mean(axis=0),
            "k_observed": k_obs,
            "r_hat": rhat,
            "ess_bulk": ess,
            "frac_outside_unit": ((flat < 0) | (flat > 1)).mean(axis=0),
            "frac_q_sum_le_1": q_le,
            "method": attrs.get("method", ""),
            "prior": attrs.get("prior", ""),
        },
        index=pd.Index(pairs, name="pair"),
    )
    return out


def _by_judge(idata: az.InferenceData, hdi_prob: float) -> pd.DataFrame:
    post = idata.posterior
    var = "p_judge" if "p_judge" in post else "k" if "k" in post else None
    if var is None:
        raise ValueError(
            "by_judge=True needs per-judge win rates (method='bwrs' or 'observed'); "
            "a Dawid-Skene fit has one p per pair"
        )
    rows = []
    k_judge = idata.constant_data["k_judge"]
    for pair in post["pair"].to_numpy():
        for judge in post["judge"].to_numpy():
            x = post[var].sel(pair=pair, judge=judge).to_numpy().ravel()
            if not np.isfinite(x).any():
                continue
            lo, hi = az.hdi(x, hdi_prob=hdi_prob)
            rows.append(
                {
                    "pair": pair,
                    "judge": judge,
                    "p_mean": x.mean(),
                    "p_mode": kde_mode(x),
                    "hdi_low": lo,
                    "hdi_high": hi,
                    "prob_gt_half": (x > 0.5).mean(),
                    "k_observed": float(k_judge.sel(pair=pair, judge=judge)),
                    "frac_outside_unit": ((x < 0) | (x > 1)).mean(),
                }
            )
    return pd.DataFrame(rows).set_index(["pair", "judge"])
