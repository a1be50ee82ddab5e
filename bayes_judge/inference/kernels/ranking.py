"""Registered nutpie fast paths of the Bayesian ranking models: numba log-densities.

The declarations ``"poe-bt"``, ``"poe-g"`` and ``"bt"`` of
:mod:`bayes_judge.generative.ranking_models` (Liusie et al. 2024 (PoE) §3.1-3.5, eq. 1-2, 12-13, A.7-A.8) are the
models; this module is an optional speed-up for ``sampler="nutpie"``: the same log-density with
its gradient written by hand in numba and handed to nutpie's Rust NUTS as C callbacks (built by
:mod:`bayes_judge.inference._nutpie`): no Python in the sampling loop, chains on native threads, kernels
cached on disk (``cache=True``), data and prior parameters in one float64 buffer, so a refit only
packs a new buffer.  Listed in ``FAST_PATHS``, which :mod:`bayes_judge.inference.fastpaths` collects; each
``fast_path.logp_grad`` is checked against the declaration's compiled log-density and gradient
(``tests/inference/test_fastpaths.py``).  Priors: any scalar parameters of the declared families
(scores ``Normal(0, sigma_s)``, ``gamma`` and ``beta`` Normal, ``alpha``, ``sigma``, ``nu``
HalfNormal); :func:`supports` says whether a :class:`~bayes_judge.generative.priors.Priors` is
one, and :func:`bayes_judge.ranking.bayesian.fit_scores` falls back to the compiled declaration
when it is not.

Unconstrained vector of the kernel (the declaration's value variables, reordered: see
:func:`value_order`)::

    x = [r (N), gamma?, log alpha?, beta?, log sigma?, log nu?]

``r`` is ``s_raw ~ Normal(0, sigma_s)`` for ``poe-bt`` and ``bt``.  For ``poe-g`` it is
``r = alpha^(1 - w) s_raw ~ Normal(0, alpha^(1 - w) sigma_s)``, the same prior partially
non-centred (the declaration's option ``w``): ``w = 1`` samples ``s_raw`` itself, ``w = 0``
samples ``delta_raw = alpha s_raw``; the likelihood reads ``delta_raw = alpha^w r``.  ``poe-g`` has
no ``gamma``.

``gamma ~ Normal(mu_g, sd_g)``, ``beta ~ Normal(mu_b, sd_b)`` live on the real line; the
HalfNormal sites ``alpha ~ HN(tau_a)``, ``sigma ~ HN(tau_s)``, ``nu ~ HN(tau_n)`` are sampled on
the log scale (PyMC's log transform) with the log-Jacobian ``u = log v``, so their density on
``u`` is ``log 2 - log(tau sqrt(2 pi)) - v^2 / (2 tau^2) + u`` with gradient ``1 - v^2 / tau^2``.

Scores: ``s = C s_raw`` with ``C`` the within-item centering (``s_n = s_raw_n - mean of
s_raw over n's item``), a symmetric projection, so ``d logp / d r = C (d logp / d (C r))``.
The prior of ``r`` has scale ``tau = sigma_s`` (``alpha^(1 - w) sigma_s`` for ``poe-g``), whence
``d/dr_n = -r_n / tau^2`` and, for ``poe-g``, ``(1 - w)(|r|^2 / tau^2 - N)`` in ``d/dlog alpha``
besides the HalfNormal term.  With ``d_k = s_i - s_j + gamma`` and ``l_k`` the log-likelihood of
comparison ``k``:

* logistic (``poe-bt`` on ``p``, and ``bt`` on ``y`` without Davidson ties)::

      l_k = p_k log sigma(d_k) + (1 - p_k) log sigma(-d_k) = log sigma(d_k) - (1 - p_k) d_k
      dl_k / dd_k = p_k - sigma(d_k)

* Gaussian experts (``poe-g``, eq. 12), ``alpha d_k = alpha^w ((C r)_i - (C r)_j)``,
  ``z_k = (p_k - alpha d_k - beta) / sigma``::

      l_k = -z_k^2 / 2 - log sigma - log(2 pi) / 2
      dl/dr = alpha^w C (scatter of z / sigma),  dl/dlog alpha = w sum_k alpha d_k z_k / sigma,
      dl/dbeta = z / sigma,  dl/dlog sigma = z^2 - 1

* Davidson ties (``bt`` with ``nu``), ``h = d / 2``, ``t = exp(-|h|)``, ``D = 1 + t^2 + nu t``::

      l_k = w_k - |h| - log D,  w_k = h, -h, log nu for a win of i, of j, a tie
      dl/dd = w'_k - sign(h) (1 - t^2) / (2 D),  dl/dlog nu = [tie] - nu t / D

The logistic case (the one that matters at scale) runs in blocks of 512 comparisons: gather the
``d_k``, a branch-free polynomial ``exp(-|d_k|)`` that the compiler vectorizes, the terms (the
``log1p`` of each comparison accumulated as a product of the factors ``1 + t`` in (1, 2], one
``log`` per block), then the scatter into the gradient.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ...generative.priors import HalfNormal, Normal, Priors
from .._nutpie import make_model, run

__all__ = ["pack_data", "logp_grad", "expand", "site_names", "value_order", "supports", "fast_paths"]

# N, K, G, kind (0 logistic, 1 gaussian, 2 davidson), bias, ties, sigma_s, n_dim, w, then the
# prior parameters mu_g, sd_g (gamma), tau_a (alpha), mu_b, sd_b (beta), tau_s (sigma), tau_n (nu)
_HEADER = 16
_LOGISTIC, _GAUSSIAN, _DAVIDSON = 0, 1, 2
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)


def site_names(model: str, position_bias: bool, has_ties: bool) -> list[str]:
    """The scalar sites of the kernel after the raw scores, in order: ``gamma?``, ``alpha``,
    ``beta``, ``sigma`` (``poe-g``), ``nu?`` (``bt`` with Davidson ties)."""
    return (["gamma"] if position_bias else []) + (["alpha", "beta", "sigma"] if model == "poe-g" else []) + (
        ["nu"] if has_ties else [])


def _options(model: str, options: dict | None) -> tuple[bool, bool, float]:
    """(position_bias, ties, w) of a declaration's options, refusing the ones it does not take."""
    options = dict(options or {})
    allowed = {"poe-bt": {"position_bias"}, "poe-g": {"w"}, "bt": {"position_bias", "ties"}}[model]
    bad = sorted(set(options) - allowed)
    if bad:
        raise ValueError(f"model {model!r} takes the options {sorted(allowed)}, got {bad}")
    return bool(options.get("position_bias", False)), bool(options.get("ties", False)), float(options.get("w", 1.0))


def value_order(model: str, position_bias: bool, has_ties: bool, n: int) -> np.ndarray:
    """Index of every kernel coordinate in the declaration's value variables.

    The declaration creates ``alpha`` before the scores of ``poe-g`` (their prior scale is
    ``alpha^(1 - w)``), so its value variables are ``[log alpha, r (N), beta, log sigma]``; the
    kernel keeps the scores first.  ``x_kernel = x_declared[value_order(...)]``.
    """
    sites = site_names(model, position_bias, has_ties)
    kernel = [("scores", n)] + [(k, 1) for k in sites]
    declared = ([("alpha", 1)] + [("scores", n)] + [(k, 1) for k in sites if k != "alpha"]) if model == "poe-g" \
        else kernel
    start, pos = {}, 0
    for name, size in declared:
        start[name] = pos
        pos += size
    return np.concatenate([np.arange(start[name], start[name] + size) for name, size in kernel])


def _scalar(v) -> float | None:
    """The value of a scalar (or constant array) prior parameter, else None."""
    a = np.asarray(v, dtype=float)
    return float(a.flat[0]) if a.size and np.all(a == a.flat[0]) else None


def supports(priors: Priors) -> bool:
    """Whether the kernel states these priors: the declared families with scalar parameters and
    scores centred at 0."""
    for name, pr in priors.items():
        family = HalfNormal if name in ("alpha", "sigma", "nu") else Normal
        if type(pr) is not family or any(_scalar(v) is None for v in pr.params().values()):
            return False
    return _scalar(priors.scores.mu) == 0.0  # type: ignore[attr-defined]


def _prior_header(priors: Priors) -> list[float]:
    """``[mu_g, sd_g, tau_a, mu_b, sd_b, tau_s, tau_n]`` (defaults where the model has no such prior)."""
    get = dict(priors.items())

    def par(name: str, field: str, default: float) -> float:
        return float(np.asarray(getattr(get[name], field), dtype=float).flat[0]) if name in get else default

    return [par("gamma", "mu", 0.0), par("gamma", "sigma", 1.0), par("alpha", "sigma", 1.0),
            par("beta", "mu", 0.5), par("beta", "sigma", 0.25), par("sigma", "sigma", 0.5), par("nu", "sigma", 1.0)]


def pack_data(arrays: dict, priors: Priors, *, model: str, position_bias: bool = False, has_ties: bool = False,
              w: float = 1.0) -> np.ndarray:
    """One contiguous float64 buffer for the callbacks.

    Parameters
    ----------
    arrays : dict
        :meth:`bayes_judge.ranking.encode.RankData.arrays`: ``K`` comparisons over ``N``
        candidates in ``G`` items.
    priors : Priors
        The declaration's priors (:func:`supports` must hold).
    model : {"poe-bt", "poe-g", "bt"}
    position_bias : bool
        Whether the model has ``gamma``.
    has_ties : bool
        ``model="bt"`` only: Davidson's ``nu`` (else a tie counts half a win each way).
    w : float in [0, 1]
        ``poe-g`` only: the partial non-centring exponent (1: sample ``s_raw``, 0: sample
        ``alpha s_raw``); ignored by the other models.

    Returns
    -------
    ndarray of float64, shape (16 + 3K + N + G,)
        Header ``[N, K, G, kind, bias, ties, sigma_s, n_dim, w, mu_g, sd_g, tau_a, mu_b, sd_b,
        tau_s, tau_n]``, then ``i (K)``, ``j (K)``, the outcome (``p`` for the PoE models, ``y``
        for ``bt``; K), ``cand_item (N)``, ``1 / count (G)``.
    """
    if not supports(priors):
        raise ValueError(f"the {model!r} fast path states Normal / HalfNormal priors with scalar parameters "
                         f"and scores centred at 0; got\n{priors}")
    names = site_names(model, position_bias, has_ties)
    sigma_s = float(priors.scores.sigma)  # type: ignore[attr-defined]
    if not (np.isfinite(sigma_s) and sigma_s > 0):
        raise ValueError(f"sigma_s must be a positive prior scale, got {sigma_s!r}")
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"w must lie in [0, 1], got {w!r}")
    i = np.asarray(arrays["i"], dtype=np.int64)
    j = np.asarray(arrays["j"], dtype=np.int64)
    cand_item = np.asarray(arrays["cand_item"], dtype=np.int64)
    counts = np.asarray(arrays["n_per_item"], dtype=np.float64)
    N, K, G = len(cand_item), len(i), len(counts)
    if K == 0:
        raise ValueError("no comparisons to fit")
    if j.shape != (K,):
        raise ValueError("comparison arrays i, j have inconsistent shapes")
    if min(i.min(), j.min()) < 0 or max(i.max(), j.max()) >= N:
        raise ValueError(f"comparison indices must lie in [0, {N}), the candidate index")
    if cand_item.min() < 0 or cand_item.max() >= G:
        raise ValueError(f"cand_item must lie in [0, {G}), the item index")
    if (counts <= 0).any():
        raise ValueError("every item needs at least one candidate")
    if model == "bt":
        out = np.asarray(arrays["y"], dtype=np.float64)
        if not np.isin(out, (0.0, 0.5, 1.0)).all():
            raise ValueError("hard outcomes y must be 1 (i wins), 0 (j wins) or 0.5 (tie)")
    else:
        out = np.asarray(arrays["p"], dtype=np.float64)
        if not np.isfinite(out).all():
            raise ValueError("soft outcomes p must be finite")
        if model == "poe-bt" and ((out < 0) | (out > 1)).any():
            raise ValueError("soft outcomes p must lie in [0, 1] for the soft Bradley-Terry model")
    kind = _GAUSSIAN if model == "poe-g" else (_DAVIDSON if has_ties else _LOGISTIC)
    n_dim = N + len(names)
    head = [N, K, G, kind, float(bool(position_bias)), float(bool(has_ties)), sigma_s, n_dim, float(w),
            *_prior_header(priors)]
    parts = [np.asarray(head, dtype=np.float64), i, j, out, cand_item, 1.0 / counts]
    return np.ascontiguousarray(np.concatenate([np.asarray(a, dtype=np.float64) for a in parts]))


_BLOCK = 512
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_C = tuple(1.0 / math.factorial(n) for n in range(14))


@numba.njit(cache=True, nogil=True, inline="always", fastmath={"contract", "reassoc", "arcp", "nsz"})
def _exp_neg_parts(d):
    """``exp(-min(|d|, 700)) = q * 2^n`` as ``(q, bits of 2^n)``; vectorizes, unlike libm's exp.

    Cody-Waite reduction ``-|d| = n log 2 + r``, ``|r| <= log(2) / 2``, and the degree-13 Taylor
    polynomial of ``exp(r)`` (truncation < 1e-17; relative error a few ulps overall).
    """
    x = -min(abs(d), 700.0)
    n = math.floor(x * _INV_LN2 + 0.5)
    r = (x - n * _LN2_HI) - n * _LN2_LO
    q = _C[13]
    q = _C[12] + r * q
    q = _C[11] + r * q
    q = _C[10] + r * q
    q = _C[9] + r * q
    q = _C[8] + r * q
    q = _C[7] + r * q
    q = _C[6] + r * q
    q = _C[5] + r * q
    q = _C[4] + r * q
    q = _C[3] + r * q
    q = _C[2] + r * q
    q = 1.0 + r * q
    q = 1.0 + r * q
    return q, (np.int64(n) + 1023) << 52


@numba.njit(cache=True, nogil=True, inline="always")
def _half_normal_logp(u, tau):
    """Log density of v = exp(u) ~ HalfNormal(tau) on u (Jacobian included) and its derivative."""
    v = math.exp(u)
    r = v / tau
    return _LOG2 - _HALF_LOG_2PI - math.log(tau) - 0.5 * r * r + u, 1.0 - r * r


@numba.njit(cache=True, nogil=True, fastmath={"contract", "reassoc", "arcp", "nsz"}, error_model="numpy")
def logp_grad(x, buf, grad):
    """Log density on the unconstrained space; writes the gradient into ``grad``.

    Parameters
    ----------
    x : ndarray, shape (n_dim,)
        ``[r (N), gamma?, log alpha?, beta?, log sigma?, log nu?]``; ``r`` is ``s_raw``, or
        ``alpha^(1 - w) s_raw`` for the Gaussian experts.
    buf : ndarray, shape (B,)
        From :func:`pack_data`.
    grad : ndarray, shape (n_dim,)
        Output: ``d logp / d x``.

    Returns
    -------
    float
        ``log p(x | data)`` with all normalizing constants (= minus NumPyro's potential energy).
    """
    N = int(buf[0])
    K = int(buf[1])
    G = int(buf[2])
    kind = int(buf[3])
    bias = buf[4] != 0.0
    sigma_s = buf[6]
    o = _HEADER
    ii = buf[o:o + K]
    jj = buf[o + K:o + 2 * K]
    out = buf[o + 2 * K:o + 3 * K]
    item = buf[o + 3 * K:o + 3 * K + N]
    inv_count = buf[o + 3 * K + N:o + 3 * K + N + G]

    # prior of the raw scores r ~ Normal(0, tau): tau = sigma_s, or alpha^(1 - w) sigma_s for
    # the Gaussian experts (r = alpha^(1 - w) s_raw); then s = r - item mean
    q = N
    w = buf[8]
    tau = sigma_s
    if kind == 1:
        tau = math.exp((1.0 - w) * x[q + (1 if bias else 0)]) * sigma_s
    total = -N * (math.log(tau) + _HALF_LOG_2PI)
    inv_var = 1.0 / (tau * tau)
    ssq = 0.0
    mean = np.zeros(G)
    for n in range(N):
        v = x[n]
        ssq += v * v
        mean[int(item[n])] += v
    total -= 0.5 * ssq * inv_var
    for g in range(G):
        mean[g] *= inv_count[g]
    s = np.empty(N)
    gs = np.zeros(N)  # d loglik / d s
    for n in range(N):
        s[n] = x[n] - mean[int(item[n])]

    mu_g, sd_g, tau_a, mu_b, sd_b, tau_s, tau_n = buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15]
    gamma = 0.0
    if bias:
        gamma = x[q]
        zg = (gamma - mu_g) / sd_g
        total -= 0.5 * zg * zg + math.log(sd_g) + _HALF_LOG_2PI
        q += 1
    g_gamma = 0.0

    if kind == 0:
        # logistic: l = log sigma(d) - (1 - p) d, log sigma(d) = min(d, 0) - log1p(exp(-|d|)).
        # Blocks of 512: gather d, a branch-free (SIMD) exp(-|d|), then the scatter.
        dbuf = np.empty(_BLOCK)
        tbuf = np.empty(_BLOCK)
        ebuf = np.empty(_BLOCK, dtype=np.int64)
        efl = ebuf.view(np.float64)
        for c0 in range(0, K, _BLOCK):
            m = min(K - c0, _BLOCK)
            for k in range(m):
                dbuf[k] = s[int(ii[c0 + k])] - s[int(jj[c0 + k])] + gamma
            for k in range(m):
                tbuf[k], ebuf[k] = _exp_neg_parts(dbuf[k])
            prod = 1.0  # 512 factors in (1, 2]: below 2^512
            lin = 0.0
            for k in range(m):
                d = dbuf[k]
                t = tbuf[k] * efl[k]
                inv = 1.0 / (1.0 + t)
                sig = (1.0 if d >= 0.0 else t) * inv
                pk = out[c0 + k]
                lin += min(d, 0.0) - (1.0 - pk) * d
                prod *= 1.0 + t
                dbuf[k] = pk - sig
            total += lin - math.log(prod)
            for k in range(m):
                r = dbuf[k]
                gs[int(ii[c0 + k])] += r
                gs[int(jj[c0 + k])] -= r
                g_gamma += r
    elif kind == 1:
        # s = C r here; the likelihood reads alpha (s_i - s_j) = alpha^w (s_a - s_b)
        la = x[q]
        beta = x[q + 1]
        ls = x[q + 2]
        aw = math.exp(w * la)
        sigma = math.exp(ls)
        inv_s = 1.0 / sigma
        lp_a, g_la = _half_normal_logp(la, tau_a)
        lp_s, g_ls = _half_normal_logp(ls, tau_s)
        zb = (beta - mu_b) / sd_b
        total += lp_a + lp_s - 0.5 * zb * zb - math.log(sd_b) - _HALF_LOG_2PI
        g_beta = -zb / sd_b
        zz = 0.0
        zs = 0.0
        zd = 0.0
        for k in range(K):
            a = int(ii[k])
            b = int(jj[k])
            ad = aw * (s[a] - s[b])
            z = (out[k] - ad - beta) * inv_s
            zz += z * z
            zs += z
            zd += z * ad
            r = aw * z * inv_s
            gs[a] += r
            gs[b] -= r
        total += -0.5 * zz - K * (ls + _HALF_LOG_2PI)
        # HalfNormal(tau_a) on log alpha, the prior scale of r, and the likelihood through alpha^w
        grad[q] = g_la + (1.0 - w) * (ssq * inv_var - N) + w * zd * inv_s
        grad[q + 1] = g_beta + zs * inv_s
        grad[q + 2] = g_ls + zz - K
    else:
        # Davidson: l = w - |h| - log(1 + t^2 + nu t), h = d / 2, t = exp(-|h|)
        lnu = x[q]
        nu = math.exp(lnu)
        lp_n, g_lnu = _half_normal_logp(lnu, tau_n)
        total += lp_n
        for k in range(K):
            a = int(ii[k])
            b = int(jj[k])
            d = s[a] - s[b] + gamma
            h = 0.5 * d
            ah = abs(h)
            t = math.exp(-ah)
            D = 1.0 + t * t + nu * t
            inv_d = 1.0 / D
            y = out[k]
            dn = 0.5 * (1.0 - t * t) * inv_d
            if h < 0.0:
                dn = -dn
            if y == 1.0:
                wk = h
                r = 0.5 - dn
            elif y == 0.0:
                wk = -h
                r = -0.5 - dn
            else:
                wk = lnu
                r = -dn
                g_lnu += 1.0
            total += wk - ah - math.log(D)
            g_lnu -= nu * t * inv_d
            gs[a] += r
            gs[b] -= r
            g_gamma += r
        grad[q] = g_lnu

    if bias:
        grad[N] = g_gamma - (gamma - mu_g) / (sd_g * sd_g)
    # d/dr = C gs (C the symmetric centering) plus the prior
    for g in range(G):
        mean[g] = 0.0
    for n in range(N):
        mean[int(item[n])] += gs[n]
    for g in range(G):
        mean[g] *= inv_count[g]
    for n in range(N):
        grad[n] = gs[n] - mean[int(item[n])] - x[n] * inv_var
    return total


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):
    """Stored per draw: ``[s_raw (N), gamma?, alpha?, beta?, sigma?, nu?]`` (constrained;
    ``s_raw = alpha^(w - 1) r`` for the Gaussian experts)."""
    N = int(buf[0])
    kind = int(buf[3])
    for i in range(x.shape[0]):
        out[i] = x[i]
    q = N + (1 if buf[4] != 0.0 else 0)
    if kind == 1:
        alpha = math.exp(x[q])
        back = math.exp((buf[8] - 1.0) * x[q])
        for i in range(N):
            out[i] = x[i] * back
        out[q] = alpha
        out[q + 2] = math.exp(x[q + 2])
    elif kind == 2:
        out[q] = math.exp(x[q])


def center_scores(cand_item: np.ndarray, n_items: int, s_raw: np.ndarray) -> np.ndarray:
    """``s_raw`` minus its item mean along the last axis, shape (..., N)."""
    import scipy.sparse as sp

    cand_item = np.asarray(cand_item, dtype=np.int64)
    N = len(cand_item)
    s_raw = np.asarray(s_raw, dtype=np.float64)
    counts = np.bincount(cand_item, minlength=n_items).astype(np.float64)
    avg = sp.csr_matrix((1.0 / counts[cand_item], (cand_item, np.arange(N))), shape=(n_items, N))
    flat = s_raw.reshape(-1, N)
    mean = np.asarray(avg @ flat.T).T  # (rows, G)
    return (flat - mean[:, cand_item]).reshape(s_raw.shape)


_LOG_SCALE = ("alpha", "sigma", "nu")


def _start(model: str, init: dict, sites: list[str], n: int) -> np.ndarray:
    """The kernel's unconstrained start from the declaration's (constrained) start values."""
    raw = np.broadcast_to(np.asarray(init.get("r" if model == "poe-g" else "s_raw", 0.0), dtype=float), (n,))
    rest = []
    for k in sites:
        v = float(np.asarray(init.get(k, 1.0 if k in _LOG_SCALE else 0.0), dtype=float))
        rest.append(math.log(v) if k in _LOG_SCALE else v)
    return np.concatenate([raw, np.asarray(rest, dtype=float)])


def _sample(model: str, arrays: dict, coords: dict, priors: Priors, *, init: dict, chains: int, draws: int,
            tune: int, seed: int, target_accept: float, options: dict | None = None,
            cores: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Sample a declared ranking model with nutpie's NUTS on the numba log-density.

    Returns the draws of the declaration's stored variables, ``(chains, draws, ...)``: the raw
    scores (``s_raw``; ``r`` as well for ``poe-g``), ``s`` and the scalar sites the model has,
    and nutpie's sampler statistics (:func:`bayes_judge.inference._nutpie.read_trace`).
    """
    bias, ties, w = _options(model, options)
    sites = site_names(model, bias, ties)
    buf = pack_data(arrays, priors, model=model, position_bias=bias, has_ties=ties, w=w)
    N = len(arrays["cand_item"])
    m = make_model(
        logp_grad,
        expand,
        buf=buf,
        init_flat=_start(model, init, sites, N),
        shapes={"s_raw": (N,), **{k: () for k in sites}},
        dims={"s_raw": ("candidate",)},
        coords={"candidate": np.arange(N)},
    )
    post, stats = run(m, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
                      cores=cores, save_warmup=False)
    post["s"] = center_scores(arrays["cand_item"], len(arrays["n_per_item"]), post["s_raw"])
    if model == "poe-g":
        post["r"] = post["s_raw"] * post["alpha"][..., None] ** (1.0 - w)
    return post, stats


def _laplace(model: str, arrays: dict, coords: dict, priors: Priors, *, init: dict, chains: int, draws: int,
             seed: int, options: dict | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict]:
    """Draws of the Laplace approximation of the same posterior, importance-corrected
    (:func:`bayes_judge.inference.laplace.laplace_draws`), expanded as :func:`_sample`'s."""
    from ..laplace import laplace_draws

    bias, ties, w = _options(model, options)
    sites = site_names(model, bias, ties)
    buf = pack_data(arrays, priors, model=model, position_bias=bias, has_ties=ties, w=w)
    N = len(arrays["cand_item"])
    z, info = laplace_draws(logp_grad, buf, _start(model, init, sites, N), chains=chains, draws=draws, seed=seed)
    flat = np.empty((chains * draws, z.shape[-1]))
    for i, x in enumerate(z.reshape(chains * draws, -1)):
        expand(np.ascontiguousarray(x), buf, flat[i])
    post: dict[str, np.ndarray] = {"s_raw": flat[:, :N].reshape(chains, draws, N)}
    for j, k in enumerate(sites):
        post[k] = flat[:, N + j].reshape(chains, draws)
    post["s"] = center_scores(arrays["cand_item"], len(arrays["n_per_item"]), post["s_raw"])
    if model == "poe-g":
        post["r"] = post["s_raw"] * post["alpha"][..., None] ** (1.0 - w)
    return post, {"diverging": np.zeros((chains, draws), dtype=bool)}, info


def _logp_grad_declared(model: str, x, arrays: dict, coords: dict, priors: Priors,
                        options: dict | None = None) -> tuple[float, np.ndarray]:
    """Log-density and gradient at ``x``, the declaration's value variables flattened in
    ``model.value_vars`` order (PyMC's log transform for the HalfNormal sites)."""
    bias, ties, w = _options(model, options)
    buf = pack_data(arrays, priors, model=model, position_bias=bias, has_ties=ties, w=w)
    order = value_order(model, bias, ties, len(arrays["cand_item"]))
    xk = np.ascontiguousarray(np.asarray(x, dtype=np.float64)[order])
    g = np.empty_like(xk)
    lp = logp_grad(xk, buf, g)
    grad = np.empty_like(g)
    grad[order] = g
    return float(lp), grad


#: option combinations of every model (what a gradient check should cover)
OPTION_CASES: dict[str, list[dict]] = {
    "poe-bt": [{}, {"position_bias": True}],
    "poe-g": [{"w": 1.0}, {"w": 0.0}, {"w": 0.3}],
    "bt": [{}, {"position_bias": True}, {"ties": True}, {"position_bias": True, "ties": True}],
}


def _build(model: str):
    from functools import partial

    def fast_path(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept, options=None):
        return _sample(model, arrays, coords, priors, init=init, chains=chains, draws=draws, tune=tune,
                       seed=seed, target_accept=target_accept, options=options)

    fast_path.__doc__ = f"The registered nutpie fast path of the {model!r} declaration (same posterior)."
    fast_path.laplace = partial(_laplace, model)  # type: ignore[attr-defined]
    fast_path.logp_grad = partial(_logp_grad_declared, model)  # type: ignore[attr-defined]
    fast_path.supports = supports  # type: ignore[attr-defined]
    fast_path.option_cases = OPTION_CASES[model]  # type: ignore[attr-defined]
    return fast_path


#: the registered fast paths by model name
fast_paths = {name: _build(name) for name in ("poe-bt", "poe-g", "bt")}
#: this module's fast paths by (task, model), collected by :mod:`bayes_judge.inference.fastpaths`
FAST_PATHS = {("ranking", name): fn for name, fn in fast_paths.items()}
