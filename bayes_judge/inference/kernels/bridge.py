"""The score bridge learnt from human labels, as one numba log-density sampled by nutpie.

The model is :func:`bayes_judge.leaderboard.bridge.calibrate_bridge`'s (read its docstring
first); this kernel samples its marginal over people's scores ``h`` and the bridge's ``λ, τ``,
with the judges' reading ``s_J`` and the per-system ``z`` integrated out.  Given ``λ, τ`` the
scores are Gaussian on the centred subspace: with ``V`` (N × (N − 1)) an orthonormal basis of
it in which the reading's covariance is diagonal (``Vᵀ Σ_J V = diag w``) and ``μ = Vᵀ m`` (the
reading's mean ``m``), the coordinates ``v = Vᵀ h`` are independent::

    v_k ~ Normal(λ μ_k, σ_k²),   σ_k² = λ² w_k + τ²              (h = λ s_J + τ z − mean)
    log λ ~ Normal(log λ_med, σ_λ),   log τ ~ Normal(log τ_med, σ_τ)
    n_A ~ Binomial(n_A + n_B, σ(h_a − h_b))                      each labelled pair

Two parametrizations of the scores, chosen by how much the labels tell (:data:`CENTRED_FROM`):

* **centred**, ``x = [h̃ (N), log λ, log τ]`` with ``h = h̃ − mean(h̃)`` (the mean of ``h̃``,
  which nothing else sees, gets a ``Normal(0, 1/N)`` prior so the density is proper; its draws
  are dropped): the scores sampled where the labels pin them.  With many labels each ``h_i`` is
  known far better than its prior says, and a non-centred ``z`` then trades against ``τ`` along
  a ridge nutpie's diagonal mass matrix cannot follow (the PyMC model took 534 s at 200 systems
  and 100,000 labels; this kernel 21-26 s).  The scores ride along ``λ m``: the Laplace shear on
  ``log λ``, ``log τ`` and ``m`` (:func:`bayes_judge.inference.laplace.laplace_shear`) takes
  that correlation out.
* **non-centred**, ``x = [ξ (N − 1), log λ, log τ]`` with ``v = λ μ + σ ξ``, ``ξ ~ Normal(0, I)``:
  with few labels a system the scores are mostly prior, and centred they would form a funnel
  with ``τ`` (at 200 systems and 1,000 labels τ's ESS 168 centred, 1,661 non-centred).

The likelihood's pairs are unordered (``a < b``, the two orders' counts summed): the same
posterior at half the terms, read by the leaderboard kernel's vectorized human-label pass
(:mod:`bayes_judge.inference.kernels.leaderboard`).  Checked against an independent computation of
the density and against the PyMC model's posterior by ``tests/inference/test_kernel_bridge.py``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .leaderboard import _human_cells

__all__ = ["pack_data", "logp_grad", "expand", "reading_basis", "reading_mean", "start", "n_dim", "CENTRED_FROM", "TUNE"]

_HEADER = 8  # N, K (= N − 1), P, log λ_med, σ_λ, log τ_med, σ_τ, centred

#: the warm-up a leaderboard gives the bridge where it was given none: from the mode, sheared, 300
#: steps left the same ESS as 1,000 (200 systems with 1,000 or 100,000 labels: the scores' lowest
#: bulk ESS 3,454 and 4,851 of 4,000 draws against 3,652 and 4,133; 12 systems with 60: 5,495
#: against 4,949)
TUNE = 300
#: the scores are sampled where the labels pin them (centred) when the median system's labels
#: tell more than its prior: ``n_i / 4 · τ_med² ≥ CENTRED_FROM`` (``n_i`` its labels, ``1/4``
#: the Bradley-Terry information of a label at even odds); otherwise non-centred
CENTRED_FROM = 1.0


def reading_basis(reading: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(V, μ, w)`` of the judges' reading: ``V`` (N × (N − 1)) an orthonormal basis of the
    centred subspace diagonalizing the draws' covariance (``Vᵀ Σ_J V = diag w``, ``w ≥ 0``) and
    ``μ = Vᵀ m`` the mean in it.

    Parameters
    ----------
    reading : (draws, N) array
        Posterior draws of the judges' reading (centred or not: the centred part is used).
    """
    reading = np.asarray(reading, dtype=float)
    N = reading.shape[1]
    # an orthonormal basis of the centred subspace: the last N − 1 columns of a QR of [1, I]
    Q = np.linalg.qr(np.column_stack([np.ones(N), np.eye(N)[:, : N - 1]]))[0][:, 1:]
    centred = reading - reading.mean(axis=1, keepdims=True)
    proj = centred @ Q
    cov = np.atleast_2d(np.cov(proj, rowvar=False)) if reading.shape[0] > 1 else np.zeros((N - 1, N - 1))
    w, E = np.linalg.eigh(cov)
    V = Q @ E
    return np.ascontiguousarray(V), V.T @ centred.mean(axis=0), np.clip(w, 0.0, None)


def pack_data(reading: np.ndarray, hum_a: np.ndarray, hum_b: np.ndarray, hum_n: np.ndarray, prior,
              centred: bool | None = None) -> np.ndarray:
    """One float64 buffer: header, the unordered labelled pairs ``(a, b, n_A, n_B)``, then ``V``
    (row-major), ``μ`` and ``w`` of :func:`reading_basis`; ``prior`` a
    :class:`~bayes_judge.leaderboard.bridge.ScoreBridge`; ``centred`` the parametrization (default:
    by :data:`CENTRED_FROM`)."""
    reading = np.asarray(reading, dtype=float)
    N = reading.shape[1]
    a, b = np.asarray(hum_a, dtype=np.int64), np.asarray(hum_b, dtype=np.int64)
    n = np.asarray(hum_n, dtype=float).reshape(-1, 2)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    flip = a > b
    n_lo = np.where(flip, n[:, 1], n[:, 0])  # the count for the lower-numbered system
    n_hi = np.where(flip, n[:, 0], n[:, 1])
    key, inv = np.unique(lo * N + hi, return_inverse=True)
    nA = np.bincount(inv, weights=n_lo, minlength=len(key))
    nB = np.bincount(inv, weights=n_hi, minlength=len(key))
    keep = (nA + nB) > 0
    counts = np.column_stack([nA, nB])[keep]
    V, mu, w = reading_basis(reading)
    if centred is None:
        per = np.bincount(np.r_[a, b], weights=np.r_[n.sum(axis=1), n.sum(axis=1)], minlength=N)
        centred = float(np.median(per)) / 4.0 * prior.tau_median ** 2 >= CENTRED_FROM
    head = [N, N - 1, counts.shape[0], math.log(prior.lam_median), max(prior.lam_sd, 1e-6),
            math.log(prior.tau_median), max(prior.tau_sd, 1e-6), float(bool(centred))]
    # the pairs as the leaderboard kernel's human cells read them: a (P), b (P), counts (P × 2)
    return np.ascontiguousarray(np.concatenate([np.asarray(head, float), (key // N)[keep], (key % N)[keep],
                                                counts.ravel(), V.ravel(), mu, w]))


def reading_mean(buf: np.ndarray) -> np.ndarray:
    """The reading's centred mean ``m = V μ`` (N,) from a buffer of :func:`pack_data`."""
    N, K, P = int(buf[0]), int(buf[1]), int(buf[2])
    o = _HEADER + 4 * P
    return buf[o:o + N * K].reshape(N, K) @ buf[o + N * K:o + N * K + K]


def n_dim(buf: np.ndarray) -> int:
    """The sampled coordinates: ``N + 2`` centred (``h̃``), ``N + 1`` non-centred (``ξ``)."""
    return int(buf[0]) + 2 if buf[7] > 0 else int(buf[1]) + 2


def start(buf: np.ndarray) -> np.ndarray:
    """The prior's centre: ``h = λ_med m`` (``ξ = 0``), ``log λ = log λ_med``, ``log τ = log τ_med``."""
    scores = math.exp(buf[3]) * reading_mean(buf) if buf[7] > 0 else np.zeros(int(buf[1]))
    return np.concatenate([scores, [buf[3], buf[5]]])


@numba.njit(inline="always")
def _vt_times(V, x, N, K):  # pragma: no cover (compiled by numba)
    """``Vᵀ x`` (K,) for ``V`` (N × K, row-major, flat)."""
    out = np.zeros(K)
    for i in range(N):
        xi = x[i]
        r = i * K
        for k in range(K):
            out[k] += V[r + k] * xi
    return out


@numba.njit(inline="always")
def _v_times(V, y, N, K):  # pragma: no cover (compiled by numba)
    """``V y`` (N,) for ``V`` (N × K, row-major, flat)."""
    out = np.empty(N)
    for i in range(N):
        r = i * K
        acc = 0.0
        for k in range(K):
            acc += V[r + k] * y[k]
        out[i] = acc
    return out


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _labels(h, buf, P, gh):  # pragma: no cover (compiled by numba)
    """Bradley-Terry on each unordered labelled pair, ``σ(h_a − h_b)`` from the table
    ``e^{h − max h}``: the log-likelihood; its gradient in ``h`` added to ``gh``."""
    N = h.shape[0]
    hmax = h.max()
    eh = np.empty(N)
    for i in range(N):
        eh[i] = math.exp(h[i] - hmax)
    none = np.zeros(0)
    return _human_cells(none, buf, _HEADER, P, 0, h, eh, hmax, hmax - h.min() > 700.0, gh, none)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _centred(x, buf, grad, N, K, P, V, mu, w, lam, tau):  # pragma: no cover (compiled by numba)
    """``x = [h̃ (N), log λ, log τ]``, ``h = h̃ − mean(h̃)``: returns ``(log density, ∂/∂λ, ∂/∂τ)``
    with the scores' gradient in ``grad[:N]``."""
    c = 0.0
    for i in range(N):
        c += x[i]
    c /= N
    h = np.empty(N)
    gh = np.zeros(N)
    for i in range(N):
        h[i] = x[i] - c
    total = _labels(h, buf, P, gh)
    v = _vt_times(V, h, N, K)  # v_k ~ Normal(λ μ_k, λ² w_k + τ²)
    g_lam = 0.0
    g_tau = 0.0
    gv = np.empty(K)
    for k in range(K):
        var = lam * lam * w[k] + tau * tau
        e = v[k] - lam * mu[k]
        q = e * e / var
        total -= 0.5 * (q + math.log(var))
        gv[k] = -e / var
        half = 0.5 * (q - 1.0) / var  # d/d(var)
        g_lam += e * mu[k] / var + half * 2.0 * lam * w[k]
        g_tau += half * 2.0 * tau
    back = _v_times(V, gv, N, K)
    gm = 0.0
    for i in range(N):
        gh[i] += back[i]
        gm += gh[i]
    gm /= N
    for i in range(N):  # h = h̃ − mean(h̃), and mean(h̃) ~ Normal(0, 1/N)
        grad[i] = gh[i] - gm - c
    return total - 0.5 * N * c * c, g_lam, g_tau


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _non_centred(x, buf, grad, N, K, P, V, mu, w, lam, tau):  # pragma: no cover (compiled by numba)
    """``x = [ξ (K), log λ, log τ]``, ``v_k = λ μ_k + σ_k ξ_k``, ``h = V v``: returns ``(log
    density, ∂/∂λ, ∂/∂τ)`` with the gradient in ``ξ`` in ``grad[:K]``."""
    sd = np.empty(K)
    v = np.empty(K)
    for k in range(K):
        sd[k] = math.sqrt(lam * lam * w[k] + tau * tau)
        v[k] = lam * mu[k] + sd[k] * x[k]
    h = _v_times(V, v, N, K)
    gh = np.zeros(N)
    total = _labels(h, buf, P, gh)
    gv = _vt_times(V, gh, N, K)  # Vᵀ ∂/∂h
    g_lam = 0.0
    g_tau = 0.0
    for k in range(K):
        z = x[k]
        total -= 0.5 * z * z
        grad[k] = gv[k] * sd[k] - z
        g_lam += gv[k] * (mu[k] + lam * w[k] * z / sd[k])
        g_tau += gv[k] * tau * z / sd[k]
    return total, g_lam, g_tau


@numba.njit(cache=True, nogil=True, error_model="numpy")
def logp_grad(x, buf, grad):  # pragma: no cover (compiled by numba)
    """Log density (up to a constant) at ``x`` (:func:`n_dim` long: the scores' coordinates,
    ``log λ``, ``log τ``); its gradient into ``grad``."""
    N, K, P = int(buf[0]), int(buf[1]), int(buf[2])
    lam_mu, lam_sd, tau_mu, tau_sd = buf[3], buf[4], buf[5], buf[6]
    o = _HEADER + 4 * P
    V = buf[o:o + N * K]
    mu = buf[o + N * K:o + N * K + K]
    w = buf[o + N * K + K:o + N * K + 2 * K]
    q = x.shape[0] - 2
    log_lam, log_tau = x[q], x[q + 1]
    lam, tau = math.exp(log_lam), math.exp(log_tau)
    if buf[7] > 0.0:
        total, g_lam, g_tau = _centred(x, buf, grad, N, K, P, V, mu, w, lam, tau)
    else:
        total, g_lam, g_tau = _non_centred(x, buf, grad, N, K, P, V, mu, w, lam, tau)
    zl = (log_lam - lam_mu) / lam_sd
    zt = (log_tau - tau_mu) / tau_sd
    grad[q] = lam * g_lam - zl / lam_sd
    grad[q + 1] = tau * g_tau - zt / tau_sd
    return total - 0.5 * (zl * zl + zt * zt)


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):  # pragma: no cover (compiled by numba)
    """``[h (N), λ, τ]``: the centred scores and the bridge's two scales."""
    N, K, P = int(buf[0]), int(buf[1]), int(buf[2])
    q = x.shape[0] - 2
    lam, tau = math.exp(x[q]), math.exp(x[q + 1])
    if buf[7] > 0.0:
        c = 0.0
        for i in range(N):
            c += x[i]
        c /= N
        for i in range(N):
            out[i] = x[i] - c
    else:
        o = _HEADER + 4 * P
        mu = buf[o + N * K:o + N * K + K]
        w = buf[o + N * K + K:o + N * K + 2 * K]
        v = np.empty(K)
        for k in range(K):
            v[k] = lam * mu[k] + math.sqrt(lam * lam * w[k] + tau * tau) * x[k]
        h = _v_times(buf[o:o + N * K], v, N, K)
        for i in range(N):
            out[i] = h[i]
    out[N] = lam
    out[N + 1] = tau
