"""Transfer: a win rate with no labels on the set at hand, from judges calibrated on other sets.

On a set with labels, ``method="regression"`` learns how the human label follows the judges'
verdicts.  With no labels here, the same relation must come from other labelled sets, and the
relation is not the same across sets: on LLMBar's natural set the panel's mean vote predicts the
human label almost perfectly, on its adversarial sets hardly at all, on one of them inversely.
A prior that trusts one source set (Gao et al. 2024 eq. 12-13) is then confidently wrong on the next.
This estimator carries the sets' disagreement into the interval.

The model, for item i of the set at hand with judge e's net vote ``v_ie`` for G0 (its verdicts
over both presentation orders: (for G0 − for G1) / all, a tie counting 0) and a weight ``w_e``
per judge::

    w_e = max(0, mean_s logit a_es)     a_es: judge e's agreement with the human labels on
                                        source set s (ties 1/2); the mean over the sources that
                                        have e; an unseen judge gets the mean weight
    x_i = Σ_e w_e v_ie / Σ_e w_e        (the judges that judged item i)

    on every labelled source set s, with x computed from weights of the *other* sources:
        P(h_i = G0 | x_i) = σ(β_s x_i)                     β_s: maximum likelihood, se_s (Fisher)
                                                           on both orientations of every item
    between sets:  β ~ N(β̄, ω),  β̄ = mean_s β_s,  ω² = var_s β_s + mean_s se_s²
    on the set at hand (label shift, Saerens et al. 2002: the verdicts' distribution given h is
    the source's, the share π of G0-preferred items is new):
        r_i = σ(β x_i);   p(x_i | π, β) ∝ π r_i + (1 − π)(1 − r_i)
        π ~ Beta(1, 1);   h_i | x_i, π, β ~ Bernoulli(π r_i / (π r_i + (1 − π)(1 − r_i)))
    p = (Σ_labelled h_i + Σ_unlabelled h_i) / N            (the items at hand)

The weights matter: the same judge's reliability moves with the set, but which judges are the
reliable ones moves far less, so a vote weighted by the judges' record elsewhere has a
calibration β that holds across sets (on the 7 bundled sets β_s = 1.7-4.8 weighted, against
−0.7 to 5.5 for the plain mean vote, where an adversarial set's weak judges drown the strong).
A source's own β_s is computed with weights from the other sources, as the set at hand's are
(its labels never weight its own judges).

With one source set ω cannot be estimated and ``DEFAULT_SPREAD`` stands in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit, logit

__all__ = [
    "TransferSource", "judge_weights", "weighted_vote", "source_slope", "source_slopes", "slope_prior",
    "transfer_draws", "DEFAULT_SPREAD",
]

#: between-set sd of β when fewer than two source sets are given (the sources show 0.3-5.5)
DEFAULT_SPREAD = 2.0
_GRID = np.linspace(0.0005, 0.9995, 1000)


@dataclass(frozen=True)
class TransferSource:
    """One labelled source set: every judge's net vote on every labelled item, and the labels.

    Attributes
    ----------
    name : str
    judges : tuple of str, length E
    votes : ndarray, shape (n, E)
        ``v_ie`` for one side of item i in [−1, 1]; NaN where judge e gave no verdict.
    label : ndarray of int, shape (n,)
        1 where a human preferred that side, 0 otherwise.
    """

    name: str
    judges: tuple[str, ...]
    votes: np.ndarray
    label: np.ndarray

    def __post_init__(self) -> None:
        v, y = np.asarray(self.votes, dtype=float), np.asarray(self.label)
        if v.ndim != 2 or v.shape != (len(y), len(self.judges)):
            raise ValueError(f"transfer source {self.name!r}: votes must have shape (items, judges) = "
                             f"({len(y)}, {len(self.judges)}), got {v.shape}")
        if not np.isin(y, (0, 1)).all():
            raise ValueError(f"transfer source {self.name!r}: labels must be 0 or 1")
        if len(y) < 2:
            raise ValueError(f"transfer source {self.name!r}: {len(y)} labelled item(s); need at least 2")

    def agreement(self) -> dict[str, float]:
        """Each judge's agreement with the labels (a tie or a split vote counts 1/2)."""
        v = np.asarray(self.votes, dtype=float)
        sign = 2 * np.asarray(self.label)[:, None] - 1
        agree = (1 + v * sign) / 2  # 1: with the human, 0: against, 1/2: split or tie
        m = np.nanmean(np.where(np.isnan(v), np.nan, agree), axis=0)
        return {j: float(a) for j, a in zip(self.judges, m, strict=True) if np.isfinite(a)}


def judge_weights(judges: Sequence[str], sources: Sequence[TransferSource]) -> np.ndarray:
    """``w_e = max(0, mean_s logit a_es)`` over the sources that have judge e (module docstring);
    an unseen judge gets the mean weight of the seen ones (1 when none is seen), shape (E,)."""
    agree = [src.agreement() for src in sources]
    w = np.full(len(judges), np.nan)
    for k, j in enumerate(judges):
        a = np.array([g[j] for g in agree if j in g])
        if a.size:
            w[k] = max(0.0, float(np.mean(logit(np.clip(a, 0.02, 0.98)))))
    seen = ~np.isnan(w)
    fill = float(w[seen].mean()) if seen.any() else 1.0
    w = np.where(seen, w, fill)
    return w if w.sum() > 0 else np.ones(len(judges))


def weighted_vote(votes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``x_i = Σ_e w_e v_ie / Σ_e w_e`` over the judges that judged item i; 0 where none did, (n,)."""
    v = np.asarray(votes, dtype=float)
    w = np.where(np.isnan(v), 0.0, np.asarray(weights, dtype=float)[None, :])
    den = w.sum(axis=1)
    return np.where(den > 0, (np.nan_to_num(v) * w).sum(axis=1) / np.where(den > 0, den, 1.0), 0.0)


def source_slope(x: np.ndarray, y: np.ndarray, name: str = "source") -> tuple[float, float]:
    """β_s and its standard error: logistic regression of the label on the vote ``x``, through
    the origin, on both orientations of every item.

    Parameters
    ----------
    x : ndarray, shape (n,)
        Vote for one side, in [−1, 1].
    y : ndarray, shape (n,)
        1 where a human preferred that side, 0 otherwise.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        raise ValueError(f"transfer source {name!r}: {len(x)} labelled item(s) with verdicts; need at least 2")
    X, Y = np.r_[x, -x], np.r_[y, 1.0 - y]

    def nll(b: float) -> float:
        return float(-(Y * log_expit(b * X) + (1 - Y) * log_expit(-b * X)).sum() / 2)

    b = float(minimize_scalar(nll, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-8}).x)
    info = float((X**2 * expit(b * X) * expit(-b * X)).sum() / 2)
    return b, float(1 / np.sqrt(max(info, 1e-12)))


def source_slopes(sources: Sequence[TransferSource]) -> list[tuple[float, float]]:
    """(β_s, se_s) of every source, its vote weighted by the *other* sources' records."""
    if not sources:
        raise ValueError("transfer: no source sets given")
    out = []
    for k, src in enumerate(sources):
        others = [o for i, o in enumerate(sources) if i != k]
        w = judge_weights(src.judges, others) if others else np.ones(len(src.judges))
        out.append(source_slope(weighted_vote(src.votes, w), src.label, name=src.name))
    return out


def slope_prior(slopes: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """β's between-set distribution N(β̄, ω) from the sources' (β_s, se_s) (module docstring)."""
    if not slopes:
        raise ValueError("transfer: no source sets given")
    b = np.array([s for s, _ in slopes])
    se2 = np.array([e for _, e in slopes]) ** 2
    if len(b) < 2:
        return float(b[0]), float(np.sqrt(DEFAULT_SPREAD**2 + se2[0]))
    return float(b.mean()), float(np.sqrt(b.var(ddof=1) + se2.mean()))


def transfer_draws(
    x: np.ndarray, label: np.ndarray, slopes: Sequence[tuple[float, float]], *, chains: int, draws: int, seed: int,
) -> dict[str, np.ndarray]:
    """Cut-posterior draws of p, π and β for one pair of systems (module docstring).

    Parameters
    ----------
    x : ndarray, shape (N,)
        Each item's (weighted) vote for G0 in [−1, 1]; 0 or NaN where no judge judged it (r = 1/2).
    label : ndarray of int, shape (N,)
        1 / 0 where a human label says G0 / G1 is preferred, −1 where unlabelled.
    slopes : sequence of (β_s, se_s)
        The sources' calibrations (:func:`source_slopes`).

    Returns
    -------
    dict with ``p``, ``pi``, ``beta``, each of shape (chains, draws)
    """
    x = np.where(np.isnan(np.asarray(x, dtype=float)), 0.0, x)
    label = np.asarray(label)
    m, sd = slope_prior(slopes)
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
