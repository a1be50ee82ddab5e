"""Bayesian Dawid-Skene for two classes (seed 003, Model 1), with the true label marginalized.

Model 1 of seed 003, for one pair of systems (G0, G1) and judges e = 1..E::

    p      ~ Beta(alpha_p, beta_p)                  (alpha_p = beta_p = 1)
    q0^e   ~ Beta(alpha_q0^e, beta_q0^e)            accuracy when G0 is truly better (eq. 5)
    q1^e   ~ Beta(alpha_q1^e, beta_q1^e)            accuracy when G1 is truly better (eq. 6)
    h_i    ~ Bernoulli(p)                           h_i = 1: a human prefers G0 (the seed's class 0)
    t_ie | h_i = 1 ~ Bernoulli(q0^e)                t_ie = 1: judge e prefers G0
    t_ie | h_i = 0 ~ Bernoulli(1 - q1^e)

The binary ``h_i`` is summed out, so NUTS samples only (p, q0, q1)::

    log p(t_i | p, q) = logsumexp( log p     + sum_e [n1_ie log q0^e     + n0_ie log(1 - q0^e)],
                                   log(1-p)  + sum_e [n1_ie log(1 - q1^e) + n0_ie log q1^e] )

where n1_ie / n0_ie count judge e's verdicts for G0 / G1 on item i.  An item with an observed
human label (in-distribution prior) keeps only its label's term.  The likelihood depends on
the data only through the histogram of (n1_i, n0_i, label_i) patterns, so identical items are
merged into one pattern with a weight: exact, and far fewer terms.

The one likelihood expression :func:`item_log_lik` is written against an array namespace, so
the NumPyro model (``jax.numpy``) and the PyMC model (``pytensor.tensor``) evaluate the same
formula.  Priors (``prior="none"``: Beta(2, 1) on every q; ``"ood"``: eq. 12-13) are built once
by :func:`ds_prior`.

Two simpler generative models of the same observations serve as alternatives that PSIS-LOO can
rank against Model 1 (:func:`bayes_judge.compare_models`); every one scores, per item, the
judges' verdicts and, where observed and used, the human label, so that their pointwise
log-likelihoods are on one scale:

* **one-coin** Dawid-Skene: Model 1 with one accuracy per judge, ``q0^e = q1^e = q^e``
  (:func:`numpyro_one_coin`, :func:`pymc_one_coin`): a judge errs as often on either class;
* **independent raters**: no latent truth.  Judge e prefers G0 with its own rate ``k^e``
  independently on every item, ``k^e ~ Beta(1, 1)``; a human label, where observed, is one more
  independent rater whose rate is the judges' average ``p = mean_e k^e`` (the observed win rate
  of eq. 4 averaged over judges, §4.3, read as a likelihood)::

      log p(t_i [, h_i] | k) = sum_e [n1_ie log k^e + n0_ie log(1 - k^e)]
                               [+ h_i log p + (1 - h_i) log(1 - p)]

  (:func:`independent_log_lik`, :func:`numpyro_independent`, :func:`pymc_independent`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..verdicts import WinRateData

__all__ = [
    "DSPrior",
    "DSPatterns",
    "ds_prior",
    "ood_prior",
    "pattern_histogram",
    "item_log_lik",
    "numpyro_model",
    "pymc_model",
    "posterior_item_quantities",
    "numpyro_one_coin",
    "pymc_one_coin",
    "independent_log_lik",
    "judge_mean",
    "numpyro_independent",
    "pymc_independent",
    "independent_item_log_lik",
]

NO_PRIOR_Q = (2.0, 1.0)  # seed 003 §4.3 "No prior": alpha_q = 2, beta_q = 1
INDEPENDENT_PRIOR_K = (1.0, 1.0)  # uniform rates, as the observed k's posterior (Alg. 1 line 16)


@dataclass(frozen=True)
class DSPrior:
    """Beta prior parameters, each of shape (P, E) (q's) or (P,) (p)."""

    alpha_p: np.ndarray
    beta_p: np.ndarray
    alpha_q0: np.ndarray
    beta_q0: np.ndarray
    alpha_q1: np.ndarray
    beta_q1: np.ndarray

    def mean(self) -> dict[str, np.ndarray]:
        return {
            "p": self.alpha_p / (self.alpha_p + self.beta_p),
            "q0": self.alpha_q0 / (self.alpha_q0 + self.beta_q0),
            "q1": self.alpha_q1 / (self.alpha_q1 + self.beta_q1),
        }


@dataclass(frozen=True)
class DSPatterns:
    """The verdict-pattern histogram of a :class:`WinRateData`, padded to a fixed bucket size.

    n1, n0 : (K, E) counts; label : (K,) in {1, 0, -1}; pair : (K,); weight : (K,) how many
    items share the pattern (0 for padding rows); unit_pattern : (U,) the pattern of each item.
    """

    n1: np.ndarray
    n0: np.ndarray
    label: np.ndarray
    pair: np.ndarray
    weight: np.ndarray
    unit_pattern: np.ndarray
    n_patterns: int


def ood_prior(ood: WinRateData, judges: list[str], pooled: bool = False) -> tuple[np.ndarray, ...]:
    """Normalized Beta priors for q0, q1 from a labelled OOD set, seed 003 eq. 12-13.

    For judge e with counts n0, s0, n1, s1 pooled over the OOD set's pairs and labelled items::

        q0^e ~ Beta((2 s0 + 2) / (n0 + 2), (2 n0 - 2 s0 + 2) / (n0 + 2))     (eq. 12)
        q1^e ~ Beta((2 s1 + 2) / (n1 + 2), (2 n1 - 2 s1 + 2) / (n1 + 2))     (eq. 13)

    The parameters sum to 2: the prior mean is (s + 1)/(n + 2) with the weight of two
    observations, so an OOD set cannot overwhelm the in-distribution data.  With ``pooled``
    (the one-coin model's single accuracy q^e) both classes' counts are summed first,
    ``s = s0 + s1``, ``n = n0 + n1``, and the same prior is returned for q0 and q1.

    Returns
    -------
    alpha_q0, beta_q0, alpha_q1, beta_q1 : ndarray, shape (E,)
        NaN for judges that the OOD set lacks.
    """
    if not (ood.label >= 0).any():
        raise ValueError("ood: the OOD set has no human labels ('human' column is empty)")
    shared = [j for j in judges if j in ood.judges]
    if not shared:
        raise ValueError(
            f"ood: no judge of the data ({judges}) appears in the OOD set ({ood.judges}); "
            "the OOD prior needs the same judges' verdicts on labelled items"
        )
    c = {k: v.sum(axis=0) for k, v in ood.accuracy_counts().items()}  # pooled over OOD pairs
    if pooled:
        c = {"s0": c["s0"] + c["s1"], "n0": c["n0"] + c["n1"]}
        c.update(s1=c["s0"], n1=c["n0"])
    idx = [ood.judges.index(j) if j in ood.judges else -1 for j in judges]
    out = []
    for s, n in (("s0", "n0"), ("s1", "n1")):
        s_e = np.array([c[s][i] if i >= 0 else np.nan for i in idx])
        n_e = np.array([c[n][i] if i >= 0 else np.nan for i in idx])
        out += [(2 * s_e + 2) / (n_e + 2), (2 * n_e - 2 * s_e + 2) / (n_e + 2)]
    return tuple(out)


def ds_prior(
    data: WinRateData,
    prior: str = "none",
    ood: WinRateData | None = None,
    q_prior: tuple[float, float] = NO_PRIOR_Q,
    one_coin: bool = False,
) -> DSPrior:
    """Prior parameters of Model 1 for every (pair, judge).

    ``"none"`` and ``"in-distribution"`` use Beta(2, 1) on every q (seed 003 §4.3); ``"ood"``
    uses eq. 12-13 from the OOD set, and Beta(2, 1) for a judge the OOD set lacks.
    p ~ Beta(1, 1) always.  ``one_coin``: the one-coin model's q^e, whose OOD prior pools both
    classes (:func:`ood_prior` with ``pooled=True``); the q0 fields then hold q's prior and the
    q1 fields repeat it.
    """
    P, E = len(data.pairs), len(data.judges)
    a0 = np.full((P, E), q_prior[0])
    b0 = np.full((P, E), q_prior[1])
    a1, b1 = a0.copy(), b0.copy()
    if prior == "ood":
        if ood is None:
            raise ValueError("prior='ood' needs an ood= table of labelled judgments")
        oa0, ob0, oa1, ob1 = ood_prior(ood, data.judges, pooled=one_coin)
        have = ~np.isnan(oa0)
        a0[:, have], b0[:, have] = oa0[have], ob0[have]
        a1[:, have], b1[:, have] = oa1[have], ob1[have]
    return DSPrior(np.ones(P), np.ones(P), a0, b0, a1, b1)


def _bucket(n: int) -> int:
    """Pad pattern counts to a few fixed sizes so that refits keep the same array shapes."""
    size = 16
    while size < n:
        size *= 2
    return size


def pattern_histogram(data: WinRateData, use_labels: bool, pad: bool = True) -> DSPatterns:
    """Merge items with identical (pair, n1, n0, label) into weighted patterns (exact)."""
    label = data.label if use_labels else np.full(data.n_units, -1)
    key = np.column_stack([data.unit_pair, label, data.n_first, data.n_second])
    uniq, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    K, E = len(uniq), len(data.judges)
    size = _bucket(K) if pad else K
    pair = np.zeros(size, dtype=np.int32)
    lab = np.full(size, -1, dtype=np.int32)
    n1 = np.zeros((size, E))
    n0 = np.zeros((size, E))
    w = np.zeros(size)
    pair[:K] = uniq[:, 0]
    lab[:K] = uniq[:, 1]
    n1[:K] = uniq[:, 2 : 2 + E]
    n0[:K] = uniq[:, 2 + E :]
    w[:K] = counts
    return DSPatterns(n1, n0, lab, pair, w, inverse, K)


def item_log_lik(xp, p, q0, q1, n1, n0, label, pair):
    """Marginal log-likelihood of each item (or pattern) under Model 1.

    Parameters
    ----------
    xp : namespace
        ``jax.numpy`` / ``numpy``-like with ``log``, ``log1p``, ``logaddexp``, ``where``, ``equal``; or a
        ``SimpleNamespace`` adapter for pytensor (see :func:`pymc_model`).
    p : (P,)
    q0, q1 : (P, E)
    n1, n0 : (K, E) verdict counts for G0 / G1
    label : (K,) 1 = G0, 0 = G1, -1 unknown (marginalized)
    pair : (K,) pair index

    Returns
    -------
    (K,) log p(t_k [, h_k] | p, q0, q1)
    """
    lq0, l1q0 = xp.log(q0)[pair], xp.log1p(-q0)[pair]
    lq1, l1q1 = xp.log(q1)[pair], xp.log1p(-q1)[pair]
    ll_g0 = xp.log(p)[pair] + (n1 * lq0 + n0 * l1q0).sum(axis=-1)  # h_i = G0
    ll_g1 = xp.log1p(-p)[pair] + (n1 * l1q1 + n0 * lq1).sum(axis=-1)  # h_i = G1
    is_g0, is_g1 = xp.equal(label, 1), xp.equal(label, 0)
    return xp.where(is_g0, ll_g0, xp.where(is_g1, ll_g1, xp.logaddexp(ll_g0, ll_g1)))


def numpyro_model(n1, n0, label, pair, weight, alpha_p, beta_p, alpha_q0, beta_q0, alpha_q1, beta_q1):
    """Model 1 of seed 003 in NumPyro; the label is marginalized (see the module docstring)."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    p = numpyro.sample("p", dist.Beta(alpha_p, beta_p).to_event(1))
    q0 = numpyro.sample("q0", dist.Beta(alpha_q0, beta_q0).to_event(2))
    q1 = numpyro.sample("q1", dist.Beta(alpha_q1, beta_q1).to_event(2))
    ll = item_log_lik(jnp, p, q0, q1, n1, n0, label, pair)
    numpyro.factor("t", jnp.sum(weight * ll))


def pymc_model(patterns: DSPatterns, prior: DSPrior, coords: dict):
    """Model 1 of seed 003 in PyMC, the same likelihood expression as :func:`numpyro_model`."""
    import pymc as pm
    import pytensor.tensor as pt

    ptx = SimpleNamespace(
        log=pt.log, log1p=pt.log1p, logaddexp=pt.logaddexp, where=pt.switch, equal=pt.eq
    )
    with pm.Model(coords=coords) as model:
        p = pm.Beta("p", prior.alpha_p, prior.beta_p, dims="pair")
        q0 = pm.Beta("q0", prior.alpha_q0, prior.beta_q0, dims=("pair", "judge"))
        q1 = pm.Beta("q1", prior.alpha_q1, prior.beta_q1, dims=("pair", "judge"))
        ll = item_log_lik(
            ptx,
            p,
            q0,
            q1,
            pt.as_tensor(patterns.n1),
            pt.as_tensor(patterns.n0),
            pt.as_tensor(patterns.label),
            pt.as_tensor(patterns.pair),
        )
        pm.Potential("t", pt.sum(pt.as_tensor(patterns.weight) * ll))
    return model


def posterior_item_quantities(
    p: np.ndarray, q0: np.ndarray, q1: np.ndarray, data: WinRateData, use_labels: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per-item marginal log-likelihood and P(h_i = G0 | t, draw) for every posterior draw.

    Parameters
    ----------
    p : (C, D, P); q0, q1 : (C, D, P, E)

    Returns
    -------
    log_lik : (C, D, U)
    h_prob : (C, D, U), P(a human prefers G0 on item i | data, p, q); 1 or 0 on labelled items.
    """
    label = data.label if use_labels else np.full(data.n_units, -1)
    # a draw exactly at 0 or 1 (float rounding) would give 0 * log(0) = NaN for unused counts
    tiny = np.finfo(float).tiny
    q0, q1, p = (np.clip(np.asarray(x, dtype=float), tiny, 1 - 1e-16) for x in (q0, q1, p))
    C, D, P = p.shape
    ll_g0 = np.empty((C, D, data.n_units))
    ll_g1 = np.empty((C, D, data.n_units))
    with np.errstate(divide="ignore"):
        for j in range(P):  # a few pairs; each is two (C*D, E) @ (E, U_j) products
            u = data.unit_pair == j
            n1, n0 = data.n_first[u].T, data.n_second[u].T  # (E, U_j)
            lq0, l1q0 = np.log(q0[:, :, j]), np.log1p(-q0[:, :, j])  # (C, D, E)
            lq1, l1q1 = np.log(q1[:, :, j]), np.log1p(-q1[:, :, j])
            ll_g0[:, :, u] = np.log(p[:, :, j, None]) + lq0 @ n1 + l1q0 @ n0
            ll_g1[:, :, u] = np.log1p(-p[:, :, j, None]) + l1q1 @ n1 + lq1 @ n0
    marg = np.logaddexp(ll_g0, ll_g1)
    log_lik = np.where(label == 1, ll_g0, np.where(label == 0, ll_g1, marg))
    h_prob = np.where(label == 1, 1.0, np.where(label == 0, 0.0, np.exp(ll_g0 - marg)))
    return log_lik, h_prob


def numpyro_one_coin(n1, n0, label, pair, weight, alpha_p, beta_p, alpha_q, beta_q):
    """One-coin Dawid-Skene in NumPyro: Model 1 with ``q0^e = q1^e = q^e``, label marginalized."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    p = numpyro.sample("p", dist.Beta(alpha_p, beta_p).to_event(1))
    q = numpyro.sample("q", dist.Beta(alpha_q, beta_q).to_event(2))
    ll = item_log_lik(jnp, p, q, q, n1, n0, label, pair)
    numpyro.factor("t", jnp.sum(weight * ll))


def _pytensor_ns():
    import pytensor.tensor as pt

    return SimpleNamespace(log=pt.log, log1p=pt.log1p, logaddexp=pt.logaddexp, where=pt.switch, equal=pt.eq)


def pymc_one_coin(patterns: DSPatterns, prior: DSPrior, coords: dict):
    """One-coin Dawid-Skene in PyMC, the same likelihood as :func:`numpyro_one_coin`."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model(coords=coords) as model:
        p = pm.Beta("p", prior.alpha_p, prior.beta_p, dims="pair")
        q = pm.Beta("q", prior.alpha_q0, prior.beta_q0, dims=("pair", "judge"))
        n1, n0, label, pair = (pt.as_tensor(x) for x in (patterns.n1, patterns.n0, patterns.label, patterns.pair))
        ll = item_log_lik(_pytensor_ns(), p, q, q, n1, n0, label, pair)
        pm.Potential("t", pt.sum(pt.as_tensor(patterns.weight) * ll))
    return model


def judge_mean(k, judged):
    """The human rate of the independent-raters model: mean of ``k^e`` over the judges that judged
    the pair.

    Parameters
    ----------
    k : (..., P, E) rates;  judged : (P, E) 1.0 where the judge gave a verdict on the pair, else 0.0

    Returns
    -------
    (..., P)
    """
    return (k * judged).sum(axis=-1) / judged.sum(axis=-1)


def independent_log_lik(xp, p, k, n1, n0, label, pair):
    """Log-likelihood of each item (or pattern) under the independent-raters model.

    Parameters
    ----------
    xp : array namespace (``jax.numpy``, ``numpy`` or the pytensor adapter)
    p : (P,) the human's rate (:func:`judge_mean`);  k : (P, E) the judges' rates of preferring G0
    n1, n0 : (K, E) verdict counts for G0 / G1;  label : (K,) 1 = G0, 0 = G1, -1 not observed
    pair : (K,) pair index

    Returns
    -------
    (K,) log p(t_k [, h_k] | k)
    """
    ll = (n1 * xp.log(k)[pair] + n0 * xp.log1p(-k)[pair]).sum(axis=-1)
    lab = xp.where(xp.equal(label, 1), xp.log(p)[pair], xp.where(xp.equal(label, 0), xp.log1p(-p)[pair], 0.0))
    return ll + lab


def numpyro_independent(n1, n0, label, pair, weight, judged, alpha_k, beta_k):
    """Independent raters in NumPyro: every verdict ~ Bernoulli(k^e), a label ~ Bernoulli(mean k)."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    k = numpyro.sample("k", dist.Beta(alpha_k, beta_k).to_event(2))
    p = numpyro.deterministic("p", judge_mean(k, judged))
    numpyro.factor("t", jnp.sum(weight * independent_log_lik(jnp, p, k, n1, n0, label, pair)))


def pymc_independent(patterns: DSPatterns, judged: np.ndarray, alpha_k, beta_k, coords: dict):
    """Independent raters in PyMC, the same likelihood as :func:`numpyro_independent`."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model(coords=coords) as model:
        k = pm.Beta("k", alpha_k, beta_k, dims=("pair", "judge"))
        p = pm.Deterministic("p", judge_mean(k, pt.as_tensor(judged)), dims="pair")
        n1, n0, label, pair = (pt.as_tensor(x) for x in (patterns.n1, patterns.n0, patterns.label, patterns.pair))
        ll = independent_log_lik(_pytensor_ns(), p, k, n1, n0, label, pair)
        pm.Potential("t", pt.sum(pt.as_tensor(patterns.weight) * ll))
    return model


def independent_item_log_lik(p: np.ndarray, k: np.ndarray, data: WinRateData, use_labels: bool) -> np.ndarray:
    """Per-item log-likelihood of the independent-raters model for every posterior draw.

    Parameters
    ----------
    p : (C, D, P); k : (C, D, P, E)

    Returns
    -------
    log_lik : (C, D, U)
    """
    label = data.label if use_labels else np.full(data.n_units, -1)
    tiny = np.finfo(float).tiny
    k, p = (np.clip(np.asarray(x, dtype=float), tiny, 1 - 1e-16) for x in (k, p))
    C, D, P = p.shape
    out = np.empty((C, D, data.n_units))
    for j in range(P):
        u = data.unit_pair == j
        lab = label[u]
        out[:, :, u] = np.log(k[:, :, j]) @ data.n_first[u].T + np.log1p(-k[:, :, j]) @ data.n_second[u].T
        out[:, :, u] += np.where(lab == 1, np.log(p[:, :, j, None]), np.where(lab == 0, np.log1p(-p[:, :, j, None]), 0.0))
    return out
