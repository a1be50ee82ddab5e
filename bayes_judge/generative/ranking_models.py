"""Bayesian ranking models, each declared once (Liusie et al. 2024 (PoE) §3, as posteriors instead of MAP).

Every declaration reads the comparisons of :class:`~bayes_judge.ranking.encode.RankData` as
``pm.Data`` (:meth:`RankData.arrays`, dims :attr:`RankData.DIMS`): ``d.i``, ``d.j`` (K,) the
candidates in positions A and B of every comparison, ``d.p`` (K,) the soft outcome ``p_ij``,
``d.y`` (K,) the hard one (1: i preferred, 0: j preferred, 0.5: a tie), ``d.cand_item`` (N,)
every candidate's item and ``d.n_per_item`` (G,) the candidates per item.  Dims: ``candidate``
(N), ``comparison`` (K), ``item`` (G).

Every model has the same scores: ``s_raw ~ Normal(0, 1)`` per candidate and
``s = s_raw − mean_item(s_raw)`` (sum to zero within every item; scores are defined up to a shift
per item, Liusie et al. 2024 (PoE) §3.3; no candidate is pinned, so every one gets an honest interval), and the
same score difference of comparison k, ``d_k = s_i − s_j (+ γ)`` with the optional position-bias
shift ``γ ~ Normal(0, 1)`` (``position_bias=True``; γ > 0 favours position A; Liusie et al. 2024 (PoE) §3.5 and
A.8 write the shift the other way, ``σ(s_i − s_j − γ)``).

Observed variables.  ``c`` is the model's own likelihood of every comparison (what the posterior
conditions on).  Each model also states ``log_lik_y``, the log-probability of the comparison's
hard *decision* ``y_ij`` under the model's prediction (a tie counts half a win each way)::

    poe-bt, bt :  P(y_ij = 1 | θ) = σ(d)                               (eq. 1-2; Davidson: given no tie)
    poe-g      :  P(y_ij = 1 | θ) = P(p_ij > 1/2) = Φ((α d + β − 1/2) / σ)   (eq. 12)

It is a latent deterministic, not an observed variable: the decisions are (or are read from) the
same judgments that ``c`` already scores, so conditioning on both would count every comparison
twice.  It is what :func:`bayes_judge.compare_models` compares the three models on
(:mod:`bayes_judge.ranking.bayesian`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .priors import HalfNormal, Normal, Prior, Priors
from .registry import generative_model

__all__ = [
    "SoftBTPriors",
    "GaussianPoEPriors",
    "BTPriors",
    "soft_bradley_terry",
    "gaussian_poe",
    "bradley_terry",
    "centred_scores",
    "score_difference",
]


@dataclass(frozen=True)
class SoftBTPriors(Priors):
    """Priors of the soft Bradley-Terry experts.

    ``scores``: every candidate's raw score ``s_raw`` (the model reports it centred within the
    item); ``gamma``: the position-bias shift (used with ``position_bias=True``).
    """

    scores: Prior = Normal(0, 1)
    gamma: Prior = Normal(0, 1)


@dataclass(frozen=True)
class GaussianPoEPriors(Priors):
    """Priors of the Gaussian experts: scores as :class:`SoftBTPriors`; ``alpha`` the slope of
    ``p_ij`` on the score difference, ``beta`` its offset (the position-bias term E[p] of
    eq. 13; 0.5 for an unbiased judge), ``sigma`` the experts' noise sd."""

    scores: Prior = Normal(0, 1)
    alpha: Prior = HalfNormal(1.0)
    beta: Prior = Normal(0.5, 0.25)
    sigma: Prior = HalfNormal(0.5)


@dataclass(frozen=True)
class BTPriors(Priors):
    """Priors of hard Bradley-Terry: scores and ``gamma`` as :class:`SoftBTPriors`; ``nu``
    Davidson's tie parameter (used with ``ties=True``)."""

    scores: Prior = Normal(0, 1)
    gamma: Prior = Normal(0, 1)
    nu: Prior = HalfNormal(1.0)


# -- blocks shared by the declarations ----------------------------------------------------------


def centred_scores(d: Any, s_raw: Any) -> Any:
    """``s = s_raw − mean_item(s_raw)`` as the deterministic ``s`` (dim candidate)."""
    import pymc as pm
    import pytensor.tensor as pt

    sums = pt.inc_subtensor(pt.zeros_like(d.n_per_item)[d.cand_item], s_raw)
    return pm.Deterministic("s", s_raw - (sums / d.n_per_item)[d.cand_item], dims="candidate")


def score_difference(d: Any, s: Any, prior: Any, position_bias: bool) -> Any:
    """``d_k = s_i − s_j``, plus ``γ`` (declared here) with ``position_bias``, shape (K,)."""
    diff = s[d.i] - s[d.j]
    if position_bias:
        diff = diff + prior.gamma.rv("gamma")
    return diff


def _log_sigmoid(x: Any) -> Any:
    import pytensor.tensor as pt

    return -pt.softplus(-x)


def _decision_log_lik(d: Any, log_win: Any, log_loss: Any) -> None:
    """``log_lik_y = y log P + (1 − y) log(1 − P)`` per comparison (latent; module docstring)."""
    import pymc as pm

    pm.Deterministic("log_lik_y", d.y * log_win + (1.0 - d.y) * log_loss, dims="comparison")


def _soft_bernoulli_logp(value: Any, diff: Any) -> Any:
    return value * _log_sigmoid(diff) + (1.0 - value) * _log_sigmoid(-diff)


def _soft_bernoulli_random(diff: Any, rng: Any = None, size: Any = None) -> np.ndarray:
    diff = np.asarray(diff, dtype=float)
    shape = diff.shape if size is None else tuple(size)
    return (rng.random(shape) < 1.0 / (1.0 + np.exp(-diff))).astype(float)


def soft_bernoulli(name: str, diff: Any, *, observed: Any, dims: Any = None) -> Any:
    """Outcomes ``v`` in [0, 1] scored ``v log σ(d) + (1 − v) log σ(−d)`` (Liusie et al. 2024 (PoE) §3.2).

    For ``v`` in {0, 1} this is the Bernoulli likelihood of Bradley-Terry (eq. 1-2); for a soft
    ``v = p_ij`` the soft BT expert (its normalizer ``Z_ij = π / sin(π p_ij)`` does not depend on
    the scores and is left out: a pseudo-likelihood, not a density of ``p_ij``).  Draws are hard
    decisions ``Bernoulli(σ(d))``, the expected decision the expert reads ``p_ij`` as.
    """
    import pymc as pm

    return pm.CustomDist(name, diff, logp=_soft_bernoulli_logp, random=_soft_bernoulli_random,
                         observed=observed, dims=dims)


def _davidson_logp(value: Any, diff: Any, nu: Any) -> Any:
    import pytensor.tensor as pt

    h = 0.5 * diff
    log_nu = pt.log(nu)
    log_norm = pt.logaddexp(pt.logaddexp(h, -h), log_nu)
    return pt.switch(pt.eq(value, 1.0), h, pt.switch(pt.eq(value, 0.0), -h, log_nu)) - log_norm


def _davidson_random(diff: Any, nu: Any, rng: Any = None, size: Any = None) -> np.ndarray:
    diff, nu = np.broadcast_arrays(np.asarray(diff, dtype=float), np.asarray(nu, dtype=float))
    shape = diff.shape if size is None else tuple(size)
    ea, eb = np.exp(0.5 * diff), np.exp(-0.5 * diff)
    z = ea + eb + nu
    u = rng.random(shape)
    return np.where(u < ea / z, 1.0, np.where(u < (ea + nu) / z, 0.5, 0.0))


def davidson(name: str, diff: Any, nu: Any, *, observed: Any, dims: Any = None) -> Any:
    """Hard decisions with ties (Davidson 1970): ``y = 1, 1/2, 0`` with probabilities
    ``e^{d/2}, ν, e^{−d/2}`` over ``e^{d/2} + e^{−d/2} + ν``."""
    import pymc as pm

    return pm.CustomDist(name, diff, nu, logp=_davidson_logp, random=_davidson_random,
                         observed=observed, dims=dims)


def ranking_start(d: Any, prior: Priors) -> dict[str, Any]:
    """Start of every chain: the prior means (the sampled raw scores, ``s_raw`` or, for the
    Gaussian experts, ``r``, at the scores' prior mean)."""
    out = {name: np.asarray(pr.mean(), dtype=float) for name, pr in prior.items()}
    out["r" if isinstance(prior, GaussianPoEPriors) else "s_raw"] = out.pop("scores")
    return out


# -- the declarations ---------------------------------------------------------------------------


@generative_model(
    "poe-bt", task="ranking", priors=SoftBTPriors, observed=("c",), latent=("log_lik_y",),
    summary=("s", "gamma"), init=ranking_start,
    reference="Liusie et al. 2024 (PoE) §3.2, eq. 4 with the soft Bradley-Terry expert; position bias §3.5, A.8",
)
def soft_bradley_terry(d: Any, prior: SoftBTPriors, *, predict: bool = False, position_bias: bool = False) -> None:
    """Product of soft Bradley-Terry experts, PoE-BT (Liusie et al. 2024 (PoE) §3.2, eq. 4)::

        s_raw_n ~ Normal(0, 1),  s = s_raw − mean_item(s_raw)
        d_k = s_i − s_j (+ γ),   γ ~ Normal(0, 1)                 (position_bias, §3.5)
        log p(C | s) = Σ_k p_k log σ(d_k) + (1 − p_k) log σ(−d_k)
    """
    s = centred_scores(d, prior.scores.rv("s_raw", dims="candidate"))
    diff = score_difference(d, s, prior, position_bias)
    soft_bernoulli("c", diff, observed=d.p, dims="comparison")
    _decision_log_lik(d, _log_sigmoid(diff), _log_sigmoid(-diff))


@generative_model(
    "poe-g", task="ranking", priors=GaussianPoEPriors, observed=("c",), latent=("log_lik_y",),
    summary=("s", "alpha", "beta", "sigma"), init=ranking_start,
    reference="Liusie et al. 2024 (PoE) §3.3-3.4, eq. 5 and 12 (linear mean, constant variance); β of eq. 13",
)
def gaussian_poe(d: Any, prior: GaussianPoEPriors, *, predict: bool = False, w: float = 1.0) -> None:
    """Gaussian experts with linear mean and constant variance, PoE-g (Liusie et al. 2024 (PoE) eq. 12)::

        s_raw_n ~ Normal(0, 1),  s = s_raw − mean_item(s_raw),  d_k = s_i − s_j
        α ~ HalfNormal(1),  β ~ Normal(0.5, 0.25),  σ ~ HalfNormal(0.5)
        p_k ~ Normal(α d_k + β, σ)

    Eq. 12 writes the expert the other way round, ``s_i − s_j ~ Normal(α' (p_ij − β), σ'²)``; as a
    function of ``s`` it has the same shape with ``α' = 1 / α`` and ``σ' = σ / α``.  Written as a
    model of ``p_ij``, α, β and σ get priors and ``c`` is a density of the observed ``p_ij``.  β is
    the position-bias offset E[p] of eq. 13, so the model takes no γ.

    ``w`` (in [0, 1]) is the partial non-centring of the scores: the same prior of ``s_raw`` is
    sampled as ``r = α^(1 − w) s_raw ~ Normal(0, α^(1 − w))``, ``s_raw = α^(w − 1) r``: ``w = 1``
    samples ``s_raw``, ``w = 0`` samples ``α s_raw`` (:func:`bayes_judge.ranking.bayesian.
    gaussian_centring` chooses it from the data).  The posterior does not depend on ``w``.
    """
    import pymc as pm

    if not 0.0 <= float(w) <= 1.0:
        raise ValueError(f"w must lie in [0, 1], got {w!r}")
    alpha = prior.alpha.rv("alpha")
    scale = alpha ** (1.0 - float(w))
    if float(w) == 1.0:
        r = prior.scores.rv("r", dims="candidate")
    elif isinstance(prior.scores, Normal):
        r = pm.Normal("r", scale * float(prior.scores.mu), scale * float(prior.scores.sigma), dims="candidate")
    else:
        raise TypeError(f"w < 1 rescales the scores' prior, which must then be Normal, got {prior.scores!r}")
    s = centred_scores(d, pm.Deterministic("s_raw", r / scale, dims="candidate"))
    diff = score_difference(d, s, prior, False)
    beta = prior.beta.rv("beta")
    sigma = prior.sigma.rv("sigma")
    pm.Normal("c", alpha * diff + beta, sigma, observed=d.p, dims="comparison")
    z = (alpha * diff + beta - 0.5) / sigma
    std = pm.Normal.dist(0.0, 1.0)
    _decision_log_lik(d, pm.logcdf(std, z), pm.logcdf(std, -z))


@generative_model(
    "bt", task="ranking", priors=BTPriors, observed=("c",), latent=("log_lik_y",),
    summary=("s", "gamma", "nu"), init=ranking_start,
    reference="Liusie et al. 2024 (PoE) §3.1, eq. 1-2 (Bradley-Terry); ties by Davidson's model",
)
def bradley_terry(d: Any, prior: BTPriors, *, predict: bool = False, position_bias: bool = False,
                  ties: bool = False) -> None:
    """Hard Bradley-Terry on the decisions ``y_ij`` (Liusie et al. 2024 (PoE) eq. 1-2)::

        s_raw_n ~ Normal(0, 1),  s = s_raw − mean_item(s_raw),  d_k = s_i − s_j (+ γ)
        y_k ~ Bernoulli(σ(d_k))                          (a tie counts half a win each way)
        ties=True (Davidson):  P(i wins), P(tie), P(j wins) ∝ e^{d/2}, ν, e^{−d/2},  ν ~ HalfNormal(1)
    """
    s = centred_scores(d, prior.scores.rv("s_raw", dims="candidate"))
    diff = score_difference(d, s, prior, position_bias)
    if ties:
        davidson("c", diff, prior.nu.rv("nu"), observed=d.y, dims="comparison")
    else:
        soft_bernoulli("c", diff, observed=d.y, dims="comparison")
    _decision_log_lik(d, _log_sigmoid(diff), _log_sigmoid(-diff))
