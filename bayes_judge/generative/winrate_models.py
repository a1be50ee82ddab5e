"""Generative models of win rates, each declared once (Gao et al. 2024 and the package's own).

Every declaration reads the pattern histogram of :func:`bayes_judge.winrate.encode.verdict_patterns`
as ``pm.Data`` (``d.n1``, ``d.n_total``, ``d.label``, ``d.pair``, ``d.weight``, ``d.vote``, ...)
with dims ``pair`` (P), ``judge`` (E) and ``pattern`` (K).  ``p`` always has dim ``pair``:
P(a human prefers the pair's first system G0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .observations import (
    consensus_log_lik,
    consensus_truth,
    independent_verdicts,
    judged_truth,
    label_posterior,
    truth_posterior,
)
from .priors import Beta, HalfNormal, Normal, Prior, Priors
from .registry import generative_model

__all__ = [
    "consensus_kappa",
    "consensus_p",
    "consensus_rate_logpdf",
    "DawidSkenePriors",
    "OneCoinPriors",
    "IndependentPriors",
    "RegressionPriors",
    "dawid_skene",
    "one_coin",
    "independent",
    "label_regression",
    "HierarchicalPriors",
    "hierarchical",
    "label_switch",
    "unfold_label_switch",
    "ConsensusPriors",
    "consensus",
]


@dataclass(frozen=True)
class DawidSkenePriors(Priors):
    """Gao et al. 2024 §4.3 "No prior": p ~ Beta(1, 1), every q ~ Beta(2, 1); eq. 12-13 replace the q's."""

    p: Prior = Beta(1, 1)
    q0: Prior = Beta(2, 1)
    q1: Prior = Beta(2, 1)


def _log_kernel(prior: Prior, x: Any) -> Any:
    """``log π(x)`` up to the prior's normalizing constant (which cancels in a ratio of the same
    prior): ``(a − 1) log x + (b − 1) log(1 − x)`` for a Beta, a smaller graph than ``pm.logp``."""
    import pytensor.tensor as pt

    if isinstance(prior, Beta):
        return (np.asarray(prior.alpha, float) - 1.0) * pt.log(x) + (np.asarray(prior.beta, float) - 1.0) * pt.log1p(-x)
    return prior.logp(x)


def label_switch(p: Any, prior_p: Prior, judges: Any) -> Any:
    """Make the prior invariant under Model 1's label switch; returns Δ per pair.

    ``judges`` (pair, judge): each judge's ``log π(T q) − log π(q)``.

    Without human labels the likelihood of Model 1 is invariant under
    ``T: (p, q0, q1) -> (1 − p, 1 − q1, 1 − q0)`` (rename G0 and G1 and turn every judge round),
    so the posterior has two mirrored modes whose masses differ only through the prior, and a
    chain stays in the one it starts in.  This adds ``log ½ (1 + e^Δ)``,
    ``Δ = log π(T x) − log π(x)`` (the priors' log ratio), per pair: the model becomes the
    T-symmetric ``½ (π(x) + π(T x)) L(x)``, whose draws folded into ``A = {mean_e (q0 + q1) ≥ 1}``
    are the seed posterior's folded ones; :func:`unfold_label_switch` then puts each draw in the
    mirrored mode with probability ``σ(Δ)``, which gives the seed posterior itself, both modes
    with their masses, wherever the chains started.
    """
    import pymc as pm
    import pytensor.tensor as pt

    delta = _log_kernel(prior_p, 1.0 - p) - _log_kernel(prior_p, p) + judges.sum(axis=-1)
    delta = pm.Deterministic("label_switch_delta", delta, dims="pair")
    pm.Potential("label_switch", pt.softplus(delta) - np.log(2.0))
    return delta


def unfold_label_switch(post: dict[str, np.ndarray], delta: np.ndarray, seed: int,
                        h_prob: np.ndarray | None = None, pattern_pair: np.ndarray | None = None) -> np.ndarray | None:
    """Draws of the symmetric model (:func:`label_switch`) turned into the seed posterior, in place.

    Each draw is folded into ``A`` (mirrored by ``T`` where ``mean_e (q0 + q1) < 1``), then
    mirrored with probability ``σ(Δ_A)``, ``Δ_A`` its log prior ratio there (``Δ`` is odd under
    ``T``).  ``post``: ``p`` (C, D, P) (and the consensus model's ``p_consensus``) and ``q0``, ``q1``
    (C, D, P, E) or ``q``; ``delta`` (C, D, P)
    at the draws as sampled.  The uniforms come from ``default_rng([seed, 7919])``.  ``h_prob``
    (C, D, K), P(G0 preferred) per pattern of pair ``pattern_pair`` (K,), evaluated at the draws
    as sampled, is returned mirrored with its draw (``T`` turns it into ``1 − h_prob``); the
    log-likelihood needs nothing (``T`` leaves it unchanged).
    """
    one_coin = "q" in post
    q0, q1 = (post["q"], post["q"]) if one_coin else (post["q0"], post["q1"])
    folded = (q0 + q1 - 1.0).mean(axis=-1) < 0.0
    delta_a = np.where(folded, -delta, delta)
    u = np.random.default_rng([int(seed), 7919]).random(delta.shape)
    flip = folded ^ (u < 1.0 / (1.0 + np.exp(-delta_a)))
    for name in ("p", "p_consensus"):  # the consensus model's p and p_c both turn (its κ does not)
        if name in post:
            post[name] = np.where(flip, 1.0 - post[name], post[name])
    f = flip[..., None]
    if one_coin:
        post["q"] = np.where(f, 1.0 - post["q"], post["q"])
    else:
        post["q0"], post["q1"] = np.where(f, 1.0 - q1, q0), np.where(f, 1.0 - q0, q1)
    if h_prob is None:
        return None
    return np.where(flip[..., np.asarray(pattern_pair)], 1.0 - h_prob, h_prob)


@generative_model(
    "dawid-skene", task="win-rate", priors=DawidSkenePriors, observed=("t",), latent=("h_prob",),
    summary=("p", "q0", "q1"), reference="Gao et al. 2024, Model 1 (eq. 5-6), label marginalized", padding=("pattern",),
    accuracies=("q0", "q1"), label_switch=True, ood_prior=True, prior_constants=("q0", "q1"),
)
def dawid_skene(d: Any, prior: DawidSkenePriors, *, predict: bool = False, symmetric: bool = False) -> None:
    """Bayesian Dawid-Skene, two coins per judge (Gao et al. 2024 Model 1).

    ::

        p ~ Beta(1, 1);  q0^e, q1^e ~ Beta(2, 1)
        h_i ~ Bernoulli(p);  t_ie | h_i = G0 ~ Bernoulli(q0^e),  t_ie | h_i = G1 ~ Bernoulli(1 − q1^e)

    ``symmetric=True`` (no labels in the likelihood): the prior made label-switch invariant, to be
    unfolded after sampling (:func:`label_switch`).
    """
    import pymc as pm

    p = prior.p.rv("p", dims="pair")
    q0 = prior.q0.rv("q0", dims=("pair", "judge"))
    q1 = prior.q1.rv("q1", dims=("pair", "judge"))
    if symmetric:
        k0, k1 = prior.q0, prior.q1
        label_switch(p, prior.p, _log_kernel(k0, 1.0 - q1) + _log_kernel(k1, 1.0 - q0) - _log_kernel(k0, q0)
                     - _log_kernel(k1, q1))
    args = (p[d.pair], q0[d.pair], q1[d.pair])
    judged_truth("t", *args, d.n_total, d.label, d.weight, observed=d.n1, dims=("pattern", "judge"))
    pm.Deterministic("h_prob", truth_posterior(d.n1, d.n_total, *args, d.label), dims="pattern")


@dataclass(frozen=True)
class OneCoinPriors(Priors):
    """p ~ Beta(1, 1), q ~ Beta(2, 1): one accuracy per judge."""

    p: Prior = Beta(1, 1)
    q: Prior = Beta(2, 1)


@generative_model(
    "one-coin", task="win-rate", priors=OneCoinPriors, observed=("t",), latent=("h_prob",),
    summary=("p", "q"), reference="Gao et al. 2024 Model 1 with q0^e = q1^e = q^e", padding=("pattern",),
    accuracies=("q",), label_switch=True, ood_prior=True, prior_constants=("q",),
)
def one_coin(d: Any, prior: OneCoinPriors, *, predict: bool = False, symmetric: bool = False) -> None:
    """One-coin Dawid-Skene: Model 1 with one accuracy per judge, ``q0^e = q1^e = q^e``
    (``symmetric``: as in :func:`dawid_skene`, with ``T: (p, q) -> (1 − p, 1 − q)``)."""
    import pymc as pm

    p = prior.p.rv("p", dims="pair")
    q = prior.q.rv("q", dims=("pair", "judge"))
    if symmetric:
        label_switch(p, prior.p, _log_kernel(prior.q, 1.0 - q) - _log_kernel(prior.q, q))
    args = (p[d.pair], q[d.pair], q[d.pair])
    judged_truth("t", *args, d.n_total, d.label, d.weight, observed=d.n1, dims=("pattern", "judge"))
    pm.Deterministic("h_prob", truth_posterior(d.n1, d.n_total, *args, d.label), dims="pattern")


@dataclass(frozen=True)
class ConsensusPriors(Priors):
    """Priors of the consensus model (:func:`consensus`).

    ``p`` ~ Beta(1, 1): P(a human prefers G0) (fixed).  ``kappa`` ~ Beta(a, 1), ``a ≥ 2``
    (default 3): ``κ = 2c − 1``, where ``c`` is the chance that the judges' consensus on an item
    agrees with a human; Beta(3, 1) puts c's median at 0.90 and its 5% quantile at 0.68 (for
    comparison, GPT-4 agrees with MT-Bench's human experts on 85% of the non-tie pairs, Zheng
    et al. 2023); a larger ``a`` trusts the consensus more (``a = 9``: median c 0.96).  Without
    labels nothing in the data moves κ: p's interval is as wide as this prior makes it
    (``benchmarks/consensus_prior_sensitivity.py`` shows by how much).
    ``q`` ~ Beta(2, 1): each judge's accuracy on the consensus (as in the one-coin model).
    """

    p: Prior = Beta(1, 1)
    kappa: Prior = Beta(3, 1)
    q: Prior = Beta(2, 1)

    def __post_init__(self) -> None:
        k = self.kappa
        ok = (isinstance(k, Beta) and np.ndim(k.alpha) == 0 and float(k.beta) == 1.0
              and float(k.alpha) >= 2.0)
        if self.p != Beta(1, 1) or not ok:
            raise ValueError(
                "ConsensusPriors: p ~ Beta(1, 1) is fixed and kappa must be Beta(a, 1) with one a >= 2 "
                f"(the joint prior is sampled in closed form); got p={self.p}, kappa={k}"
            )


def _consensus_init(d: Any, prior: Priors) -> dict[str, Any]:
    return {"p_consensus": 0.5, "v": 0.5, "q": np.asarray(prior.q.mean(), dtype=float)}  # type: ignore[attr-defined]


def consensus_rate_logpdf(p_c: Any, a: float, xp: Any = np) -> Any:
    """log π_a(p_c): the consensus rate ``p_c = ½ + κ (p − ½)`` under ``p ~ U(0, 1)``,
    ``κ ~ Beta(a, 1)`` has density ``π_a(p_c) = a (1 − |2 p_c − 1|^{a−1}) / (a − 1)`` (Beta(2, 2) at
    ``a = 3``).  ``xp``: numpy or ``pytensor.tensor``."""
    return xp.log(a / (a - 1.0)) + xp.log1p(-(xp.abs(2.0 * p_c - 1.0) ** (a - 1.0)))


def consensus_kappa(p_c: Any, v: Any, a: float, xp: Any = np) -> Any:
    """κ given ``p_c`` and ``v ~ U(0, 1)``: ``κ^{a−1} | p_c`` is uniform on ``[m^{a−1}, 1]``,
    ``m = |2 p_c − 1|``, so ``κ = (m^{a−1} + (1 − m^{a−1}) v)^{1/(a−1)}`` (see :func:`consensus`)."""
    m_pow = xp.abs(2.0 * p_c - 1.0) ** (a - 1.0)
    return (m_pow + (1.0 - m_pow) * v) ** (1.0 / (a - 1.0))


def consensus_p(p_c: Any, kappa: Any) -> Any:
    """The human win rate ``p = ½ + (p_c − ½) / κ`` behind the consensus rate ``p_c``."""
    return 0.5 + (p_c - 0.5) / kappa


def _consensus_rate(name: str, a: float, *, dims: Any) -> Any:
    """``p_c = ½ + κ (p − ½)`` with ``p ~ U(0, 1)``, ``κ ~ Beta(a, 1)``: density π_a
    (:func:`consensus_rate_logpdf`), drawn by that construction, sampled on the logit scale."""
    import pymc as pm
    import pytensor.tensor as pt

    def logp(value, a):
        return consensus_rate_logpdf(value, a, pt)

    def random(a, rng=None, size=None):
        return 0.5 + rng.beta(a, 1.0, size=size) * (rng.random(size=size) - 0.5)

    return pm.CustomDist(name, a, logp=logp, random=random, transform=pm.distributions.transforms.logodds,
                         dims=dims)


@generative_model(
    "consensus", task="win-rate", priors=ConsensusPriors, observed=("t",), latent=("h_prob",),
    summary=("p", "agreement", "p_consensus", "q"), init=_consensus_init, padding=("pattern",),
    reference="one-coin Dawid-Skene on the judges' consensus, which agrees with a human with chance c",
    accuracies=("q",), label_switch=True, prior_constants=("q",),
)
def consensus(d: Any, prior: ConsensusPriors, *, predict: bool = False, symmetric: bool = False) -> None:
    """The judges' errors shared through their consensus: Model 1 one level up.

    Real judges err together (Gao et al. 2024's conditional independence fails on every bundled set),
    so without labels a Dawid-Skene model learns the rate ``p_c`` at which the judges'
    *consensus* prefers G0, not the human rate ``p``.  This model says so::

        p ~ Beta(1, 1),  κ ~ Beta(a, 1),  c = (1 + κ) / 2          (a = 3 by default)
        y_i ~ Bernoulli(p)                            the human preference
        z_i = y_i with chance c, else 1 − y_i          the judges' consensus
        q^e ~ Beta(2, 1);  t_ie | z_i ~ one-coin Model 1 on z_i
    so ``z_i ~ Bernoulli(p_c)``, ``p_c = ½ + κ (p − ½)``: the verdicts identify ``p_c``, and
    ``p = ½ + (p_c − ½) / κ`` only as far as the prior on ``κ`` allows.  The posterior of ``p``
    widens by ``1 / κ`` where the truth is not identified instead of sitting on ``p_c``.

    Sampled exactly in ``(p_c, v)``: ``(p, κ) -> (p_c, κ)`` has Jacobian ``1 / κ`` and
    ``p ∈ [0, 1]`` iff ``κ ≥ m = |2 p_c − 1|``, so the joint density is ``a κ^{a−1} / κ`` on
    ``m ≤ κ ≤ 1``: ``p_c``'s marginal is ``π_a(p_c) = a (1 − m^{a−1}) / (a − 1)`` (``a = 3``:
    ``6 p_c (1 − p_c)``, Beta(2, 2)) and ``κ^{a−1} | p_c`` is uniform on ``[m^{a−1}, 1]``, i.e.
    ``κ = (m^{a−1} + (1 − m^{a−1}) v)^{1/(a−1)}``, ``v ~ U(0, 1)`` (``v`` does not enter the
    likelihood).  ``symmetric`` (no labels): as in :func:`one_coin`,
    ``T: (p_c, q) -> (1 − p_c, 1 − q)`` (so ``p -> 1 − p``, ``κ`` unchanged).
    ``h_prob``: P(y_i = G0 | verdicts).  A labelled item (``label`` 1 or 0) keeps its label's
    term (:func:`~bayes_judge.generative.observations.consensus_truth`): labels identify ``c``.
    """
    import pymc as pm
    import pytensor.tensor as pt

    a = float(prior.kappa.alpha)  # type: ignore[attr-defined]
    p_c = _consensus_rate("p_consensus", a, dims="pair")
    v = pm.Uniform("v", 0.0, 1.0, dims="pair")
    kappa = consensus_kappa(p_c, v, a, pt)
    p = pm.Deterministic("p", consensus_p(p_c, kappa), dims="pair")
    c = pm.Deterministic("agreement", 0.5 * (1.0 + kappa), dims="pair")
    q = prior.q.rv("q", dims=("pair", "judge"))
    if symmetric:
        # π_a is symmetric about ½: only the judges' priors enter Δ
        label_switch(p_c, Beta(1, 1), _log_kernel(prior.q, 1.0 - q) - _log_kernel(prior.q, q))
    args = (p[d.pair], c[d.pair], q[d.pair])
    consensus_truth("t", *args, d.n_total, d.label, d.weight, observed=d.n1, dims=("pattern", "judge"))
    h = label_posterior(*consensus_log_lik(d.n1, d.n_total, *args), d.label)
    pm.Deterministic("h_prob", h, dims="pattern")


@dataclass(frozen=True)
class IndependentPriors(Priors):
    """k^e ~ Beta(1, 1): uniform rates, as the observed k's posterior (Gao et al. 2024 Alg. 1 line 16)."""

    k: Prior = Beta(1, 1)


@generative_model(
    "independent", task="win-rate", priors=IndependentPriors, observed=("t",), summary=("p", "k"), padding=("pattern",),
    reference="independent raters: the observed win rate (Gao et al. 2024 eq. 4) as a likelihood",
    prior_constants=("k",),
)
def independent(d: Any, prior: IndependentPriors, *, predict: bool = False) -> None:
    """Independent raters, no latent truth: judge e prefers G0 with rate ``k^e`` on every item;
    ``p`` is the mean rate of the judges that judged the pair, and an observed human label is one
    more rater with rate ``p``."""
    import pymc as pm

    k = prior.k.rv("k", dims=("pair", "judge"))
    p = pm.Deterministic("p", (k * d.judged).sum(axis=-1) / d.judged.sum(axis=-1), dims="pair")
    independent_verdicts("t", k[d.pair], p[d.pair], d.n_total, d.label, d.weight, observed=d.n1,
                         dims=("pattern", "judge"))


@dataclass(frozen=True)
class RegressionPriors(Priors):
    """Priors of the label regression (logit scale).

    ``intercept``: logit P(G0 preferred) on an item the judges split evenly on (per pair);
    ``slope``: weight of the judges' mean net vote, sign-free (adversarial judges get a
    negative one); ``spread``: sd of each judge's own weight around the shared one.
    """

    intercept: Prior = Normal(0, 1.5)
    slope: Prior = Normal(0, 2.5)
    spread: Prior = HalfNormal(1.0)


def _regression_init(d: Any, prior: Priors) -> dict[str, Any]:
    return {"b0": 0.0, "b": 0.0, "tau": 0.5, "z": 0.0}


@generative_model(
    "regression", task="win-rate", priors=RegressionPriors, observed=("y",), latent=("h_prob",),
    predictive=("g0_unlabelled", "p"), summary=("p", "b", "b0", "tau"), init=_regression_init,
    reference="Bayesian label regression on the verdict pattern; finite-population win rate",
    needs_labels=True, ties="skip",
)
def label_regression(d: Any, prior: RegressionPriors, *, predict: bool = False) -> None:
    """The human label regressed on the item's whole verdict pattern.

    For item i with judge e's net vote ``x_ie`` for G0 (all of its verdicts, both presentation
    orders; ties count 0) and the mean ``x̄_i`` over the judges that judged it::

        logit π_i = β0[pair] + β x̄_i + Σ_e τ z_e (x_ie − x̄_i),   z_e ~ N(0, 1)

    (a judge that did not judge item i adds nothing to it).
        h_i ~ Bernoulli(π_i)                    observed on the labelled items
        p = (Σ_labelled h_i + Σ_unlabelled h_i) / N      (unlabelled h_i drawn from the posterior)

    The win rate is that of the N items at hand (finite population): the labels count as
    observed, the judges carry information to the unlabelled items only as far as the labelled
    ones show it.  With judges that carry no signal (β = τ = 0) it is the labels alone; with
    few labels, or labels of one class, it answers with a wide interval.
    """
    import pymc as pm
    import pytensor.tensor as pt

    b0 = prior.intercept.rv("b0", dims="pair")
    b = prior.slope.rv("b")
    tau = prior.spread.rv("tau")
    z = pm.Normal("z", 0.0, 1.0, dims="judge")
    eta = b0[d.pair] + b * d.vote_mean + pt.dot(d.vote_dev, tau * z)
    pi = pm.math.sigmoid(eta)
    pm.Binomial("y", n=d.n_labelled, p=pi, observed=d.n_label_g0, dims="pattern")
    h = pt.switch(pt.eq(d.label, 1), 1.0, pt.switch(pt.eq(d.label, 0), 0.0, pi))
    pm.Deterministic("h_prob", h, dims="pattern")  # P(a human prefers G0 | theta) per item
    if predict:
        g = pm.Binomial("g0_unlabelled", n=d.n_unlabelled, p=pi)  # size from the data: vectorizes over draws
        g0 = pt.inc_subtensor(pt.zeros_like(d.items_per_pair)[d.pair], d.n_label_g0 + g)
        pm.Deterministic("p", g0 / d.items_per_pair, dims="pair")


def prior_mean_init(d: Any, prior: Priors) -> dict[str, Any]:
    """Start of every chain: each prior's mean (keeps Dawid-Skene out of the label-switched mode)."""
    return {name: np.asarray(pr.mean(), dtype=float) for name, pr in prior.items()}


@dataclass(frozen=True)
class HierarchicalPriors(Priors):
    """Priors of the hierarchical Dawid-Skene (logit scale).

    ``accuracy``: the typical judge's logit accuracy (Normal(1, 1): about 0.73, rarely below
    chance); ``spread``: sd of the judges' logit accuracies around it; ``asymmetry``: sd of a
    judge's difference between its two classes' logit accuracies (0: one-coin).
    """

    p: Prior = Beta(1, 1)
    accuracy: Prior = Normal(1.0, 1.0)
    spread: Prior = HalfNormal(1.0)
    asymmetry: Prior = HalfNormal(0.5)


def _hierarchical_init(d: Any, prior: Priors) -> dict[str, Any]:
    return {"p": 0.5, "mu": 1.0, "sigma": 0.5, "tau": 0.25, "z": 0.0, "w": 0.0}


@generative_model(
    "hierarchical", task="win-rate", priors=HierarchicalPriors, observed=("t",), latent=("h_prob",),
    summary=("p", "q0", "q1", "mu", "sigma", "tau"), init=_hierarchical_init, padding=("pattern",),
    reference="Gao et al. 2024 Model 1 with judges drawn from a population and class asymmetry shrunk to 0",
    accuracies=("q0", "q1"),
)
def hierarchical(d: Any, prior: HierarchicalPriors, *, predict: bool = False) -> None:
    """Dawid-Skene whose judges come from one population (Gao et al. 2024 Model 1, hierarchical q).

    ::

        a_e = mu + sigma z_e,   delta_e = tau w_e,   z_e, w_e ~ N(0, 1)
        logit q0^e = a_e + delta_e / 2,   logit q1^e = a_e − delta_e / 2
        h_i ~ Bernoulli(p);  verdicts as in Model 1

    Between the one-coin model (``tau = 0``) and the seed's two-coin model (``tau`` free): a
    judge may be better on one class, but a large gap must be paid for by the data, which keeps
    the two-coin model from explaining a skewed verdict share by a lopsided judge.
    """
    import pymc as pm

    p = prior.p.rv("p", dims="pair")
    mu = prior.accuracy.rv("mu")
    sigma = prior.spread.rv("sigma")
    tau = prior.asymmetry.rv("tau")
    z = pm.Normal("z", 0.0, 1.0, dims=("pair", "judge"))
    w = pm.Normal("w", 0.0, 1.0, dims=("pair", "judge"))
    a = mu + sigma * z
    q0 = pm.Deterministic("q0", pm.math.sigmoid(a + tau * w / 2), dims=("pair", "judge"))
    q1 = pm.Deterministic("q1", pm.math.sigmoid(a - tau * w / 2), dims=("pair", "judge"))
    args = (p[d.pair], q0[d.pair], q1[d.pair])
    judged_truth("t", *args, d.n_total, d.label, d.weight, observed=d.n1, dims=("pattern", "judge"))
    pm.Deterministic("h_prob", truth_posterior(d.n1, d.n_total, *args, d.label), dims="pattern")
