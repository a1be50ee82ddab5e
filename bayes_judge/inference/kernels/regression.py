"""Registered nutpie fast path of the ``"regression"`` win-rate declaration.

A hand-differentiated numba log-density of
:func:`bayes_judge.generative.winrate_models.label_regression` on PyMC's unconstrained space
(``b0`` (P), ``b``, ``log tau``, ``z`` (E), in that order), compiled once and cached on disk
by numba, so that a fresh process fits in about a second.  It is checked against the
declaration's own compiled log-density and gradient by ``tests/inference/test_fastpaths.py``;
it is never the definition.  Only labelled patterns enter the likelihood::

    eta_k = b0[pair_k] + b m_k + tau sum_e (v_ke − m_k) z_e,     r_k = y_k − n_k sigmoid(eta_k)
    log p = sum_k [y_k log sigmoid(eta_k) + (n_k − y_k) log sigmoid(−eta_k)]
            − (b0 − mu0)² / (2 s0²) − (b − mub)² / (2 sb²) − tau² / (2 st²) + log tau − |z|² / 2
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._nutpie import make_model, run

__all__ = ["fast_path", "pack_data", "logp_grad", "expand"]

_HEADER = 3  # P, E, K


def pack_data(arrays, priors, P: int) -> np.ndarray:
    """One float64 buffer: header, prior parameters, then the labelled patterns' rows."""
    n = np.asarray(arrays["n_labelled"], dtype=np.float64)
    keep = n > 0
    E = int(np.shape(arrays["vote"])[1])
    m = np.asarray(arrays["vote_mean"], dtype=np.float64)[keep]
    dev = np.asarray(arrays["vote_dev"], dtype=np.float64)[keep]
    rows = np.column_stack([
        np.asarray(arrays["pair"], dtype=np.float64)[keep], m,
        np.asarray(arrays["n_label_g0"], dtype=np.float64)[keep], n[keep], dev,
    ])
    pri = [
        np.broadcast_to(np.asarray(priors.intercept.mu, float), (P,)),
        np.broadcast_to(np.asarray(priors.intercept.sigma, float), (P,)),
        [float(priors.slope.mu), float(priors.slope.sigma), float(priors.spread.sigma)],
    ]
    parts = [np.array([P, E, rows.shape[0]], dtype=np.float64), *pri, rows.ravel()]
    return np.ascontiguousarray(np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in parts]))


@numba.njit(cache=True, nogil=True, inline="always")
def _log_sigmoid(u):
    if u >= 0.0:
        return -math.log1p(math.exp(-u))
    return u - math.log1p(math.exp(u))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def logp_grad(x, buf, grad):
    """Log-density (up to a constant) and its gradient at the unconstrained point ``x``."""
    P = int(buf[0])
    E = int(buf[1])
    K = int(buf[2])
    o = _HEADER
    mu0 = buf[o:o + P]
    s0 = buf[o + P:o + 2 * P]
    mub, sb, st = buf[o + 2 * P], buf[o + 2 * P + 1], buf[o + 2 * P + 2]
    o += 2 * P + 3
    W = 4 + E
    b = x[P]
    u = x[P + 1]
    tau = math.exp(u)
    z = x[P + 2:P + 2 + E]
    for i in range(grad.shape[0]):
        grad[i] = 0.0
    total = 0.0
    g_u = 0.0
    for k in range(K):
        r0 = o + k * W
        j = int(buf[r0])
        m = buf[r0 + 1]
        y = buf[r0 + 2]
        n = buf[r0 + 3]
        dz = 0.0
        for e in range(E):
            dz += buf[r0 + 4 + e] * z[e]
        eta = x[j] + b * m + tau * dz
        total += y * _log_sigmoid(eta) + (n - y) * _log_sigmoid(-eta)
        r = y - n * math.exp(_log_sigmoid(eta))
        grad[j] += r
        grad[P] += r * m
        g_u += r * dz
        for e in range(E):
            grad[P + 2 + e] += r * tau * buf[r0 + 4 + e]
    for j in range(P):
        d = x[j] - mu0[j]
        total -= 0.5 * d * d / (s0[j] * s0[j])
        grad[j] -= d / (s0[j] * s0[j])
    total -= 0.5 * (b - mub) * (b - mub) / (sb * sb)
    grad[P] -= (b - mub) / (sb * sb)
    total += -0.5 * tau * tau / (st * st) + u
    grad[P + 1] = tau * g_u - tau * tau / (st * st) + 1.0
    for e in range(E):
        total -= 0.5 * z[e] * z[e]
        grad[P + 2 + e] -= z[e]
    return total


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):
    """The stored values ``(b0, b, tau, z)``: ``x`` with ``tau = exp(log tau)``."""
    P = int(buf[0])
    for i in range(x.shape[0]):
        out[i] = x[i]
    out[P + 1] = math.exp(x[P + 1])


def accepts(priors, options=None, arrays=None) -> bool:
    """The kernel is written for Normal / Normal / HalfNormal priors with scalar slope and spread."""
    return (
        (priors.intercept.family, priors.slope.family, priors.spread.family) == ("Normal", "Normal", "HalfNormal")
        and all(np.ndim(v) == 0 for v in (priors.slope.mu, priors.slope.sigma, priors.spread.sigma))
    )


def fast_path(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept):
    """Sample the regression declaration's posterior with nutpie on the numba kernel."""
    P, E = len(coords["pair"]), len(coords["judge"])
    buf = pack_data(arrays, priors, P)
    start = np.concatenate([
        np.broadcast_to(np.asarray(init.get("b0", 0.0), float), (P,)),
        [float(np.asarray(init.get("b", 0.0)))],
        [math.log(float(np.asarray(init.get("tau", 0.5))))],
        np.broadcast_to(np.asarray(init.get("z", 0.0), float), (E,)),
    ])
    model = make_model(
        logp_grad, expand, buf=buf, init_flat=start,
        shapes={"b0": (P,), "b": (), "tau": (), "z": (E,)},
        dims={"b0": ("pair",), "z": ("judge",)},
        coords={"pair": np.arange(P), "judge": np.arange(E)},
    )
    return run(model, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept)


def _fast_logp_grad(x, arrays, coords, priors):
    buf = pack_data(arrays, priors, len(coords["pair"]))
    grad = np.empty_like(np.asarray(x, dtype=np.float64))
    lp = logp_grad(np.asarray(x, dtype=np.float64), buf, grad)
    return float(lp), grad


fast_path.logp_grad = _fast_logp_grad  # type: ignore[attr-defined]
fast_path.accepts = accepts  # type: ignore[attr-defined]
#: this module's fast paths by (task, model), collected by :mod:`bayes_judge.inference.fastpaths`
FAST_PATHS = {("win-rate", "regression"): fast_path}
