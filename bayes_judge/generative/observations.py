"""Observation blocks shared by the win-rate declarations.

:func:`judged_truth` is Gao et al. 2024's Model 1 likelihood for one item, the latent human preference
``h_i`` summed out; :func:`truth_posterior` is the same two class terms turned into
P(h_i = G0 | verdicts).  Both call :func:`class_log_lik`, the one statement of the two terms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["class_log_lik", "verdict_log_lik", "label_posterior", "judged_truth", "truth_posterior",
           "independent_verdicts", "consensus_truth", "consensus_log_lik"]


def class_log_lik(n1: Any, n_total: Any, p: Any, q0: Any, q1: Any, xp: Any = None) -> tuple[Any, Any]:
    """log p(h = G0, t) and log p(h = G1, t) of one item (Gao et al. 2024 Model 1, eq. 5-6).

    ::

        log p(h = G0, t) = log p     + sum_e [n1_e log q0^e       + n0_e log(1 - q0^e)]
        log p(h = G1, t) = log(1 - p) + sum_e [n1_e log(1 - q1^e) + n0_e log q1^e]

    Parameters
    ----------
    n1, n_total : (..., E) verdicts for G0 and all verdicts of each judge
    p : (...,) P(h = G0);  q0, q1 : (..., E) accuracy on G0- and G1-preferred items
    xp : module, optional
        ``pytensor.tensor`` (default) or ``numpy``.

    Returns
    -------
    ll_g0, ll_g1 : (...,)
    """
    if xp is None:
        import pytensor.tensor as xp
    l0, l1 = verdict_log_lik(n1, n_total, q0, q1, xp)
    return xp.log(p) + l0, xp.log1p(-p) + l1


def verdict_log_lik(n1: Any, n_total: Any, q0: Any, q1: Any, xp: Any = None) -> tuple[Any, Any]:
    """log p(t | h = G0) and log p(t | h = G1): the judges' verdict sums of :func:`class_log_lik`
    without the class prior, shape (...,)."""
    if xp is None:
        import pytensor.tensor as xp
    n0 = n_total - n1
    return ((n1 * xp.log(q0) + n0 * xp.log1p(-q0)).sum(axis=-1),
            (n1 * xp.log1p(-q1) + n0 * xp.log(q1)).sum(axis=-1))


def label_posterior(ll_g0: Any, ll_g1: Any, label: Any) -> Any:
    """P(h = G0 | verdicts) from the two classes' joint log-likelihoods; 1 or 0 where a human
    label is observed (``label`` 1 / 0; −1 unlabelled)."""
    import pytensor.tensor as pt

    return pt.switch(pt.eq(label, 1), 1.0, pt.switch(pt.eq(label, 0), 0.0, pt.sigmoid(ll_g0 - ll_g1)))


def _label_mixture(ll_g0, ll_g1, label, weight):
    """``weight ·`` the branch a human label fixes (1: G0, 0: G1), or both summed out (−1)."""
    import pytensor.tensor as pt

    ll = pt.switch(pt.eq(label, 1), ll_g0, pt.switch(pt.eq(label, 0), ll_g1, pt.logaddexp(ll_g0, ll_g1)))
    return weight * ll


def _judged_truth_logp(value, p, q0, q1, n_total, label, weight):
    return _label_mixture(*class_log_lik(value, n_total, p, q0, q1), label, weight)


def _draw_preference(p, label, rng, shape):
    """The human preference of every item: its label where observed, else ~ Bernoulli(p)."""
    return np.where(label >= 0, label == 1, rng.random(shape) < p)


def _judged_truth_random(p, q0, q1, n_total, label, weight, rng=None, size=None):
    p, q0, q1, n_total, label = np.broadcast_arrays(
        np.asarray(p)[..., None], q0, q1, n_total, np.asarray(label)[..., None]
    )
    shape = q0.shape if size is None else tuple(size) + q0.shape[-1:]
    h_g0 = _draw_preference(p[..., 0], label[..., 0], rng, shape[:-1])
    rate = np.where(h_g0[..., None], q0, 1.0 - q1)  # P(a verdict for G0 | h)
    return rng.binomial(np.broadcast_to(n_total, shape).astype(np.int64), np.broadcast_to(rate, shape))


def judged_truth(name: str, p, q0, q1, n_total, label, weight, *, observed, dims=None):
    """Verdicts of E judges on items whose latent human preference is summed out (Model 1).

    ``h_i ~ Bernoulli(p)``; judge e's ``n_ie`` verdicts give ``n1_ie ~ Binomial(n_ie, q0^e)`` for
    G0 when ``h_i = G0`` and ``Binomial(n_ie, 1 − q1^e)`` when ``h_i = G1``.  A labelled item
    (``label`` 1 or 0) keeps only its label's term.  ``weight`` items share each row (the
    pattern histogram; exact).  The log-density counts verdict sequences (no binomial
    coefficient), as the seed writes it.

    Parameters
    ----------
    p : (K,)  q0, q1, n_total : (K, E)  label, weight : (K,)
    observed : (K, E) verdicts for G0
    """
    import pymc as pm

    return pm.CustomDist(
        name, p, q0, q1, n_total, label, weight,
        logp=_judged_truth_logp, random=_judged_truth_random,
        signature="(),(e),(e),(e),(),()->(e)", observed=observed, dims=dims,
    )


def truth_posterior(n1, n_total, p, q0, q1, label):
    """P(h_i = G0 | verdicts, p, q), 1 or 0 where the label is observed, shape (K,)."""
    return label_posterior(*class_log_lik(n1, n_total, p, q0, q1), label)


def _independent_logp(value, k, p, n_total, label, weight):
    import pytensor.tensor as pt

    ll = (value * pt.log(k) + (n_total - value) * pt.log1p(-k)).sum(axis=-1)
    lab = pt.switch(pt.eq(label, 1), pt.log(p), pt.switch(pt.eq(label, 0), pt.log1p(-p), 0.0))
    return weight * (ll + lab)


def _independent_random(k, p, n_total, label, weight, rng=None, size=None):
    k, n_total = np.broadcast_arrays(k, n_total)
    shape = k.shape if size is None else tuple(size) + k.shape[-1:]
    return rng.binomial(np.broadcast_to(n_total, shape).astype(np.int64), np.broadcast_to(k, shape))


def independent_verdicts(name: str, k, p, n_total, label, weight, *, observed, dims=None):
    """Independent raters, no latent truth: every verdict of judge e prefers G0 with rate ``k^e``;
    an observed human label is one more rater with rate ``p`` (its log term joins the item's)."""
    import pymc as pm

    return pm.CustomDist(
        name, k, p, n_total, label, weight,
        logp=_independent_logp, random=_independent_random,
        signature="(e),(),(e),(),()->(e)", observed=observed, dims=dims,
    )


def consensus_log_lik(n1: Any, n_total: Any, p: Any, c: Any, q: Any, xp: Any = None) -> tuple[Any, Any]:
    """log p(y = G0, t) and log p(y = G1, t) of one item under the consensus model.

    The judges follow their consensus ``z`` (one-coin, accuracy ``q^e``); ``z`` agrees with the
    human preference ``y`` with chance ``c``::

        log p(y = G0, t) = log p       + log[c e^{ℓ0} + (1 − c) e^{ℓ1}]
        log p(y = G1, t) = log(1 − p)  + log[(1 − c) e^{ℓ0} + c e^{ℓ1}]
        ℓ0 = sum_e [n1_e log q^e + n0_e log(1 − q^e)],  ℓ1 = sum_e [n1_e log(1 − q^e) + n0_e log q^e]

    Parameters
    ----------
    n1, n_total, q : (..., E);  p, c : (...,)
    """
    if xp is None:
        import pytensor.tensor as xp
    l0, l1 = verdict_log_lik(n1, n_total, q, q, xp)  # the consensus z = G0 / G1
    lc, l1c = xp.log(c), xp.log1p(-c)
    ll_g0 = xp.log(p) + xp.logaddexp(lc + l0, l1c + l1)
    ll_g1 = xp.log1p(-p) + xp.logaddexp(l1c + l0, lc + l1)
    return ll_g0, ll_g1


def _consensus_logp(value, p, c, q, n_total, label, weight):
    return _label_mixture(*consensus_log_lik(value, n_total, p, c, q), label, weight)


def _consensus_random(p, c, q, n_total, label, weight, rng=None, size=None):
    p, c, q, n_total, label = np.broadcast_arrays(
        np.asarray(p)[..., None], np.asarray(c)[..., None], q, n_total, np.asarray(label)[..., None]
    )
    shape = q.shape if size is None else tuple(size) + q.shape[-1:]
    y = _draw_preference(p[..., 0], label[..., 0], rng, shape[:-1])
    z = np.where(rng.random(shape[:-1]) < c[..., 0], y, ~y)
    rate = np.where(z[..., None], q, 1.0 - q)  # P(a verdict for G0 | z)
    return rng.binomial(np.broadcast_to(n_total, shape).astype(np.int64), np.broadcast_to(rate, shape))


def consensus_truth(name: str, p, c, q, n_total, label, weight, *, observed, dims=None):
    """Verdicts of E judges that follow their consensus ``z_i``, which agrees with the latent
    human preference ``y_i ~ Bernoulli(p)`` with chance ``c`` (:func:`consensus_log_lik`); a
    labelled item keeps its label's term, an unlabelled one sums ``y_i`` and ``z_i`` out.
    ``weight`` items share each row.  As :func:`judged_truth`, verdict sequences are counted.

    Parameters
    ----------
    p, c : (K,)  q, n_total : (K, E)  label, weight : (K,)
    observed : (K, E) verdicts for G0
    """
    import pymc as pm

    return pm.CustomDist(
        name, p, c, q, n_total, label, weight,
        logp=_consensus_logp, random=_consensus_random,
        signature="(),(),(e),(e),(),()->(e)", observed=observed, dims=dims,
    )
