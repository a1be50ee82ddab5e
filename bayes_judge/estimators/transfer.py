"""Transfer: a win rate with no labels on the set at hand, from judges calibrated on other sets.

On a set with labels, ``method="regression"`` learns how the human label follows the judges'
verdicts.  With no labels here, the same relation must come from other labelled sets, and the
relation is not the same across sets: on LLMBar's natural set the panel's mean vote predicts the
human label almost perfectly, on its adversarial sets hardly at all, on one of them inversely.
A prior that trusts one source set (seed 003 eq. 12-13) is then confidently wrong on the next.
This estimator carries the sets' disagreement into the interval.

The model, for item i of the set at hand with the judges' mean net vote ``x_i = 2 f_i − 1``
(``f_i``: the share of all its verdicts, both orders, that prefer G0; a tie counts 1/2)::

    on every labelled source set s (both orientations of each item, so no side is favoured):
        P(h_i = G0 | x_i) = σ(β_s x_i)                     β_s: maximum likelihood, se_s (Fisher)
    between sets:  β ~ N(β̄, ω),  β̄ = mean_s β_s,  ω² = var_s β_s + mean_s se_s²
    on the set at hand (label shift, Saerens et al. 2002: the verdicts' distribution given h is
    the source's, the share π of G0-preferred items is new):
        r_i = σ(β x_i);   p(x_i | π, β) ∝ π r_i + (1 − π)(1 − r_i)
        π ~ Beta(1, 1);   h_i | x_i, π, β ~ Bernoulli(π r_i / (π r_i + (1 − π)(1 − r_i)))
    p = (Σ_labelled h_i + Σ_unlabelled h_i) / N            (the items at hand)

β is not updated by the set at hand: its verdicts alone cannot tell a strong panel with a lopsided
win rate from a weak panel with an even one (the likelihood above would push β to ∞), so
β's draws come from the between-set distribution only, a *cut* posterior (Plummer 2015,
"Cuts in Bayesian graphical models", Stat. Comput. 25:37-43).  Given each β draw, π's conditional
posterior is computed on a grid and p drawn from it.  A labelled item of the set at hand
counts as observed (its term is ``π r_i`` or ``(1 − π)(1 − r_i)``).

With one source set ω cannot be estimated and ``DEFAULT_SPREAD`` stands in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit

__all__ = ["TransferSource", "source_slope", "slope_prior", "transfer_draws", "DEFAULT_SPREAD"]

#: between-set sd of β when fewer than two source sets are given (the sources show 0.3-5.5)
DEFAULT_SPREAD = 2.0
_GRID = np.linspace(0.0005, 0.9995, 1000)


@dataclass(frozen=True)
class TransferSource:
    """One labelled source set's calibration of the judges' mean vote.

    Attributes
    ----------
    name : str
    slope, se : float
        β_s and its standard error: P(human prefers a side | x) = σ(β_s x).
    n_items : int
        Labelled items with a verdict.
    """

    name: str
    slope: float
    se: float
    n_items: int


def source_slope(x: np.ndarray, y: np.ndarray, name: str = "source") -> TransferSource:
    """β_s of one labelled set: logistic regression of the label on the mean vote, through the
    origin, on both orientations of every item.

    Parameters
    ----------
    x : ndarray, shape (n,)
        Mean net vote for one side, in [−1, 1] (NaN: no verdict; left out).
    y : ndarray, shape (n,)
        1 where a human preferred that side, 0 otherwise.

    Raises
    ------
    ValueError
        Fewer than 2 labelled items with verdicts, or labels outside {0, 1}.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = ~np.isnan(x)
    x, y = x[keep], y[keep]
    if len(x) < 2:
        raise ValueError(f"transfer source {name!r}: {len(x)} labelled item(s) with verdicts; need at least 2")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError(f"transfer source {name!r}: labels must be 0 or 1")
    X, Y = np.r_[x, -x], np.r_[y, 1.0 - y]

    def nll(b: float) -> float:
        return float(-(Y * log_expit(b * X) + (1 - Y) * log_expit(-b * X)).sum() / 2)

    b = float(minimize_scalar(nll, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-8}).x)
    info = float((X**2 * expit(b * X) * expit(-b * X)).sum() / 2)
    return TransferSource(name=name, slope=b, se=float(1 / np.sqrt(max(info, 1e-12))), n_items=len(x))


def slope_prior(sources: Sequence[TransferSource]) -> tuple[float, float]:
    """β's between-set distribution N(β̄, ω) from the source sets (module docstring)."""
    if not sources:
        raise ValueError("transfer: no source sets given")
    b = np.array([s.slope for s in sources])
    se2 = np.array([s.se for s in sources]) ** 2
    if len(b) < 2:
        return float(b[0]), float(np.sqrt(DEFAULT_SPREAD**2 + se2[0]))
    return float(b.mean()), float(np.sqrt(b.var(ddof=1) + se2.mean()))


def transfer_draws(
    x: np.ndarray, label: np.ndarray, sources: Sequence[TransferSource], *, chains: int, draws: int, seed: int,
) -> dict[str, np.ndarray]:
    """Cut-posterior draws of p, π and β for one pair of systems (module docstring).

    Parameters
    ----------
    x : ndarray, shape (N,)
        Each item's mean net vote for G0 in [−1, 1]; NaN where no judge judged it (r = 1/2).
    label : ndarray of int, shape (N,)
        1 / 0 where a human label says G0 / G1 is preferred, −1 where unlabelled.

    Returns
    -------
    dict with ``p``, ``pi``, ``beta``, each of shape (chains, draws)
    """
    x = np.where(np.isnan(np.asarray(x, dtype=float)), 0.0, x)
    label = np.asarray(label)
    m, sd = slope_prior(sources)
    rng = np.random.default_rng(seed)
    M = chains * draws
    beta = rng.normal(m, sd, M)
    lab1, lab0, unl = label == 1, label == 0, label < 0
    xu, cu = np.unique(x[unl], return_counts=True)  # few distinct votes: exact and small
    g = _GRID[None, :, None]
    pi = np.empty(M)
    p = np.empty(M)
    n = len(x)
    for lo in range(0, M, 256):  # chunks keep (chunk, grid, values) small
        b = beta[lo : lo + 256, None]
        r_u = expit(b * xu[None, :])[:, None, :]
        ll = (cu * np.log(g * r_u + (1 - g) * (1 - r_u))).sum(-1)
        ll += (np.log(g) + log_expit(b * x[lab1][None, :])[:, None, :]).sum(-1)
        ll += (np.log1p(-g) + log_expit(-b * x[lab0][None, :])[:, None, :]).sum(-1)
        w = np.exp(ll - ll.max(axis=1, keepdims=True))
        cdf = np.cumsum(w, axis=1)
        u = rng.random(len(b)) * cdf[:, -1]
        pick = _GRID[np.minimum((cdf < u[:, None]).sum(axis=1), len(_GRID) - 1)]
        pi[lo : lo + 256] = pick
        r = expit(b * xu[None, :])
        post = pick[:, None] * r / (pick[:, None] * r + (1 - pick[:, None]) * (1 - r))
        p[lo : lo + 256] = (rng.binomial(cu[None, :], post).sum(axis=1) + lab1.sum()) / n
    shape = (chains, draws)
    return {"p": p.reshape(shape), "pi": pi.reshape(shape), "beta": beta.reshape(shape)}
