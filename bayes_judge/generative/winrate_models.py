"""Generative models of win rates, each declared once (seed 003 and the package's own).

Every declaration reads the pattern histogram of :func:`bayes_judge.verdicts.verdict_patterns`
as ``pm.Data`` (``d.n1``, ``d.n_total``, ``d.label``, ``d.pair``, ``d.weight``, ``d.vote``, ...)
with dims ``pair`` (P), ``judge`` (E) and ``pattern`` (K).  ``p`` always has dim ``pair``:
P(a human prefers the pair's first system G0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .observations import independent_verdicts, judged_truth, truth_posterior
from .priors import Beta, HalfNormal, Normal, Prior, Priors
from .registry import generative_model

__all__ = [
    "DawidSkenePriors",
    "OneCoinPriors",
    "IndependentPriors",
    "RegressionPriors",
    "dawid_skene",
    "one_coin",
    "independent",
    "label_regression",
]


@dataclass(frozen=True)
class DawidSkenePriors(Priors):
    """Seed 003 §4.3 "No prior": p ~ Beta(1, 1), every q ~ Beta(2, 1); eq. 12-13 replace the q's."""

    p: Prior = Beta(1, 1)
    q0: Prior = Beta(2, 1)
    q1: Prior = Beta(2, 1)


@generative_model(
    "dawid-skene", task="win-rate", priors=DawidSkenePriors, observed=("t",), latent=("h_prob",),
    summary=("p", "q0", "q1"), reference="seed 003, Model 1 (eq. 5-6), label marginalized",
)
def dawid_skene(d: Any, prior: DawidSkenePriors, *, predict: bool = False) -> None:
    """Bayesian Dawid-Skene, two coins per judge (seed 003 Model 1).

    ::

        p ~ Beta(1, 1);  q0^e, q1^e ~ Beta(2, 1)
        h_i ~ Bernoulli(p);  t_ie | h_i = G0 ~ Bernoulli(q0^e),  t_ie | h_i = G1 ~ Bernoulli(1 − q1^e)
    """
    import pymc as pm

    p = prior.p.rv("p", dims="pair")
    q0 = prior.q0.rv("q0", dims=("pair", "judge"))
    q1 = prior.q1.rv("q1", dims=("pair", "judge"))
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
    summary=("p", "q"), reference="seed 003 Model 1 with q0^e = q1^e = q^e",
)
def one_coin(d: Any, prior: OneCoinPriors, *, predict: bool = False) -> None:
    """One-coin Dawid-Skene: Model 1 with one accuracy per judge, ``q0^e = q1^e = q^e``."""
    import pymc as pm

    p = prior.p.rv("p", dims="pair")
    q = prior.q.rv("q", dims=("pair", "judge"))
    args = (p[d.pair], q[d.pair], q[d.pair])
    judged_truth("t", *args, d.n_total, d.label, d.weight, observed=d.n1, dims=("pattern", "judge"))
    pm.Deterministic("h_prob", truth_posterior(d.n1, d.n_total, *args, d.label), dims="pattern")


@dataclass(frozen=True)
class IndependentPriors(Priors):
    """k^e ~ Beta(1, 1): uniform rates, as the observed k's posterior (seed 003 Alg. 1 line 16)."""

    k: Prior = Beta(1, 1)


@generative_model(
    "independent", task="win-rate", priors=IndependentPriors, observed=("t",), summary=("p", "k"),
    reference="independent raters: the observed win rate (seed 003 eq. 4) as a likelihood",
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
    "regression", task="win-rate", priors=RegressionPriors, observed=("y",),
    predictive=("g0_unlabelled", "p"), summary=("p", "b", "b0", "tau"), init=_regression_init,
    reference="Bayesian label regression on the verdict pattern; finite-population win rate",
)
def label_regression(d: Any, prior: RegressionPriors, *, predict: bool = False) -> None:
    """The human label regressed on the item's whole verdict pattern.

    For item i with judge e's net vote ``x_ie`` for G0 (all of its verdicts, both presentation
    orders; ties count 0) and the judges' mean ``x̄_i``::

        logit π_i = β0[pair] + β x̄_i + Σ_e τ z_e (x_ie − x̄_i),   z_e ~ N(0, 1)
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
    eta = b0[d.pair] + b * d.vote_mean + pt.dot(d.vote - d.vote_mean[:, None], tau * z)
    pi = pm.math.sigmoid(eta)
    pm.Binomial("y", n=d.n_labelled, p=pi, observed=d.n_label_g0, dims="pattern")
    if predict:
        g = pm.Binomial("g0_unlabelled", n=d.n_unlabelled, p=pi, dims="pattern")
        g0 = pt.inc_subtensor(pt.zeros_like(d.items_per_pair)[d.pair], d.n_label_g0 + g)
        pm.Deterministic("p", g0 / d.items_per_pair, dims="pair")


def prior_mean_init(d: Any, prior: Priors) -> dict[str, Any]:
    """Start of every chain: each prior's mean (keeps Dawid-Skene out of the label-switched mode)."""
    return {name: np.asarray(pr.mean(), dtype=float) for name, pr in prior.items()}
