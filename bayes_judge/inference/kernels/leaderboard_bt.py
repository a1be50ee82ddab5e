"""Registered nutpie fast path of the leaderboard model ``"bt"`` (Bradley-Terry-Davidson): numba.

The declaration :func:`bayes_judge.generative.leaderboard_models.davidson_bradley_terry` is the
model (the default for a Chatbot Arena export, whose only judge is ``"human"``); this module is an
optional speed-up for ``sampler="nutpie"``, checked against the declaration's compiled
log-density and gradient by the generic test (``tests/inference/test_fastpaths.py``).  It declines
the per-prompt ``difficulty`` and priors outside the declared families (:func:`accepts`).

Unconstrained vector (the declaration's value variables in ``model.value_vars`` order)::

    x = [s_raw (N), effect (K)?, beta (E)?, log nu (T)?]

Per cell (systems ``a``, ``b``, judge ``e``), ``h = (s_a − s_b + x_c·b + β_e) / 2``,
``Z = e^h + e^{−h} + ν_e`` (Davidson 1970; ``ν_e = 0`` for a judge that never ties)::

    l_c = n_A (h − log Z) + n_B (−h − log Z) + n_T (log ν_e − log Z)
          + s_A (h − log(e^h + e^{−h})) + s_B (−h − log(e^h + e^{−h}))
    ∂l/∂h = (n_A − n_B) − (n_A + n_B + n_T) (e^h − e^{−h}) / Z
            + (s_A − s_B) − (s_A + s_B) tanh(h)
    ∂l/∂ν_e = n_T / ν_e − (n_A + n_B + n_T) / Z

with no exp: ``e^h = r_a / r_b · c_e`` from the tables ``r = exp(s / 2)`` and ``c = exp(β / 2)``,
computed once per evaluation.  The terms linear in h, ``(n_A − n_B + s_A − s_B) h`` and
``n_T log ν_e``, are sums over cells of data times parameters: packed once per system, judge and
covariate, they leave each cell ``−n_h log Z − (s_A + s_B) log(e^h + e^{−h})``.  As in
``bt-judges`` (:mod:`bayes_judge.inference.kernels.leaderboard`) the cells are sorted by judge and read in
blocks whose elementwise pass is SIMD code: without soft rows one log (the bit-level log of
:mod:`~bayes_judge.inference.kernels.leaderboard`) and two divisions a cell.  The numba
helpers it takes from that module are compiled into this one's cache, which numba renews only
when this file changes: after editing them, clear ``__pycache__`` here.  Human labels score
``log σ(±(s_a − s_b))`` as in ``bt-judges``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ...generative.priors import HalfNormal, Normal, Prior, Priors
from .leaderboard import (
    _BLOCK,
    _FM,
    _UB,
    _cells,
    _close_scores,
    _half_normal_logp,
    _human_cells,
    _log2,
    _log_inv,
    _par,
    _scalar,
    _scores_and_effects,
    _wide_vectors,
    accept_near_gaussian,
    build_fast_path,
)

__all__ = ["pack_data", "logp_grad", "expand", "accepts", "fast_path"]

# N, E, C, H, K, T, position bias, then mu_s, sd_s, mu_b, sd_b, tau_n, mu_e, sd_e
_HEADER = 16
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_FAMILIES: dict[str, type[Prior]] = {"scores": Normal, "beta": Normal, "nu": HalfNormal, "effect": Normal}
_OPTIONS = {"position_bias", "tie_judges", "n_judges", "difficulty", "n_cov", "double"}  # double: fast.py's Laplace path


def accepts(priors: Priors, options: dict, arrays: dict | None = None) -> bool:
    """Whether the kernel states this fit: no per-prompt difficulty, the declared prior families
    (:class:`~bayes_judge.generative.leaderboard_models.DavidsonPriors`) with scalar parameters."""
    if options.get("difficulty") or set(options) - _OPTIONS:
        return False
    for name, family in _FAMILIES.items():
        pr: Any = getattr(priors, name, None)
        if type(pr) is not family or any(_scalar(v) is None for v in pr.params().values()):
            return False
    return True


def pack_data(arrays: dict, priors: Priors, options: dict, n_systems: int) -> np.ndarray:
    """One contiguous float64 buffer for the callbacks.

    Parameters
    ----------
    arrays : dict
        :meth:`bayes_judge.leaderboard.encode.LeaderboardData.arrays` (``C`` cells, ``H``
        human-label cells, ``K`` covariates).
    priors : DavidsonPriors
        (:func:`accepts` must hold.)
    options : dict
        The declaration's options (``position_bias``, ``tie_judges``, ``n_judges``, ``n_cov``).
    n_systems : int
        ``N``, the length of the ``system`` coordinate.

    Returns
    -------
    ndarray of float64
        Header, then the cells sorted by (judge, a, b): ``a, b`` (C each), the counts
        ``n_A + n_B + n_T, s_A + s_B`` (2 rows of C), ``x`` (C × K), the segment starts (E + 1:
        judge ``e``'s cells are ``[seg[e], seg[e + 1])``); the sums of the terms linear in h,
        with ``Δ = n_A − n_B + s_A − s_B``: ``Σ Δ`` as A minus as B per system (N), ``Σ Δ`` and
        ``Σ n_T`` per judge (E each), ``Σ Δ x`` (K); then ``hum_a, hum_b`` (H each), ``hum_n``
        (H × 2), ``hum_x`` (H × K) and the tie index of every judge (E; −1: none).
    """
    if not accepts(priors, options):
        raise ValueError(f"the 'bt' fast path states no difficulty and the declared prior families with scalar "
                         f"parameters; got options {options} and\n{priors}")
    (N, E, C, H, K, T), parts = _cells(arrays, options, n_systems, with_h=False)
    a, b, e, n, x = parts[:5]
    o = np.lexsort((b, a, e))
    a, b, e, n, x = a[o], b[o], e[o], n.reshape(C, 5)[o], x.reshape(C, K)[o]
    # the terms linear in h (module docstring) summed once: per system, judge and covariate
    dn = n[:, 0] - n[:, 1] + n[:, 3] - n[:, 4]
    ia, ib, ie = a.astype(np.int64), b.astype(np.int64), e.astype(np.int64)
    lin = [np.bincount(ia, dn, N) - np.bincount(ib, dn, N), np.bincount(ie, dn, E), np.bincount(ie, n[:, 2], E),
           dn @ x]
    seg = np.searchsorted(e, np.arange(E + 1)).astype(np.float64)
    counts = np.stack([n[:, 0] + n[:, 1] + n[:, 2], n[:, 3] + n[:, 4]])
    parts = [a, b, counts.ravel(), x.ravel(), seg, *lin, *parts[5:]]
    pr = priors
    header = np.zeros(_HEADER)
    header[:14] = [N, E, C, H, K, T, float(bool(options.get("position_bias", True))),
                   _par(pr.scores, "mu"), _par(pr.scores, "sigma"), _par(pr.beta, "mu"),  # type: ignore[attr-defined]
                   _par(pr.beta, "sigma"), _par(pr.nu, "sigma"), _par(pr.effect, "mu"),  # type: ignore[attr-defined]
                   _par(pr.effect, "sigma")]  # type: ignore[attr-defined]
    return np.concatenate([header, *parts])


@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _block_davidson(W, G, nk, c, nu, soft):
    """``nk`` cells of one judge (columns of ``W``: ``P = r_a`` (or ``e^{d/2}``), ``Q = r_b`` (or
    1), ``n_h = n_A + n_B + n_T``, ``s_A + s_B``): (their log-likelihood less the terms linear in
    h, Σ n_h / Z, count of non-finite normalizers); ``G`` gets ``∂l/∂h`` less its constant part.
    Vectorizable; without soft rows one log and two divisions a cell."""
    _wide_vectors()
    total = 0.0
    s_nz = 0.0
    bad = 0.0
    for k in range(np.uint64(nk)):  # unsigned: see fast._UB
        P = W[k] * c
        Q = W[_UB[1] + k]
        q = 1.0 / (P * Q)
        u = P * P * q  # e^h
        iu = Q * Q * q  # e^{−h}
        ab = u + iu
        z = ab + nu
        nh = W[_UB[2] + k]
        bad += 0.0 if z <= 1e300 else 1.0  # also nan
        if soft:
            ss = W[_UB[3] + k]
            lz, lab = _log2(z, ab)
            rz = 1.0 / (z * ab)
            iz = rz * ab
            total -= nh * lz + ss * lab
            G[k] = -0.5 * (u - iu) * (nh * iz + ss * (rz * z))
        else:  # log Z and 1 / Z share the division of the log's series
            lz, iz = _log_inv(z)
            total -= nh * lz
            G[k] = -0.5 * (u - iu) * nh * iz
        s_nz += nh * iz
    return total, s_nz, bad


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _davidson_cells(beff, buf, ca, cb, cn, cx, sg, C, E, K, beta, nu, tied, r, s, direct, g_s, g_beta, g_nu,
                    g_eff):
    """Log-likelihood of the judgment cells less the terms linear in h (module docstring), in
    blocks of one judge: a scalar gather, the vectorized :func:`_block_davidson`, a scalar
    scatter of ∂l/∂h.  A normalizer that overflows gives nan (a divergence for nutpie)."""
    B = _BLOCK
    W = np.empty(4 * B)
    G = np.empty(B)
    IA = np.empty(B, dtype=np.int64)  # the block's systems, read once for gather and scatter
    IB = np.empty(B, dtype=np.int64)
    total = 0.0
    bad = 0.0
    for e in range(E):
        lo = int(buf[sg + e])
        hi = int(buf[sg + e + 1])
        c = math.exp(0.5 * beta[e])
        for c0 in range(lo, hi, B):
            nk = min(B, hi - c0)
            soft = bool(0)  # a bool: with the literal False numba compiles _block_davidson twice
            for k in range(nk):  # gather
                cc = c0 + k
                a = int(buf[ca + cc])
                b = int(buf[cb + cc])
                IA[k] = a
                IB[k] = b
                if direct:
                    d = s[a] - s[b]
                    for j in range(K):
                        d += buf[cx + cc * K + j] * beff[j]
                    W[k] = math.exp(0.5 * d)
                    W[B + k] = 1.0
                else:
                    W[k] = r[a]
                    W[B + k] = r[b]
                W[2 * B + k] = buf[cn + cc]
                W[3 * B + k] = buf[cn + C + cc]
                soft = soft or buf[cn + C + cc] != 0.0
            t, snz, bd = _block_davidson(W, G, nk, c, nu[e], soft)
            total += t
            bad += bd
            if tied[e]:
                g_nu[e] -= snz
            gb = 0.0
            for k in range(nk):  # scatter
                cc = c0 + k
                gb += G[k]
                g_s[IA[k]] += G[k]
                g_s[IB[k]] -= G[k]
                for j in range(K):
                    g_eff[j] += G[k] * buf[cx + cc * K + j]
            g_beta[e] += gb
    if bad != 0.0:
        return math.nan
    return total


@numba.njit(cache=True, nogil=True, error_model="numpy")
def logp_grad(x, buf, grad):
    """Log-density of the unconstrained vector ``x`` (module docstring); fills ``grad``.

    A probability that under- or overflows gives −inf or nan (numpy's error model), which nutpie
    counts as a divergence.
    """
    N, E, C, H, K = int(buf[0]), int(buf[1]), int(buf[2]), int(buf[3]), int(buf[4])
    pb = buf[6] != 0.0
    mu_s, sd_s, mu_b, sd_b, tau_n, mu_e, sd_e = buf[7], buf[8], buf[9], buf[10], buf[11], buf[12], buf[13]
    ca, cb = _HEADER, _HEADER + C
    cn = cb + C
    cx = cn + 2 * C
    sg = cx + C * K
    ol = sg + E + 1  # the linear sums: per system (N), per judge Δ and n_T (E each), per covariate (K)
    oh = ol + N + 2 * E + K
    hna = oh + 2 * H
    hxo = hna + 2 * H
    tio = hxo + H * K
    q_eff = N
    q_b = q_eff + K
    q_n = q_b + (E if pb else 0)
    total, s = _scores_and_effects(x, grad, N, K, mu_s, sd_s, mu_e, sd_e)
    beta = np.zeros(E)
    nu = np.zeros(E)
    lnu = np.zeros(E)
    tied = np.zeros(E, dtype=np.bool_)
    for j in range(E):
        if pb:
            beta[j] = x[q_b + j]
            zb = (beta[j] - mu_b) / sd_b
            total -= 0.5 * zb * zb + math.log(sd_b) + _HALF_LOG_2PI
            grad[q_b + j] = -zb / sd_b
        ti = int(buf[tio + j])
        if ti >= 0:
            lp, g = _half_normal_logp(x[q_n + ti], tau_n)
            total += lp
            grad[q_n + ti] = g
            lnu[j] = x[q_n + ti]
            nu[j] = math.exp(lnu[j])
            tied[j] = True
    # tables: e^h = r_a / r_b · c_e, with r = exp((s − max s) / 2) and c = exp(β / 2), unless a
    # score lies so far below the top that r loses precision; with covariates h has a term per cell
    r = np.empty(N)
    smax = s.max()
    for i in range(N):
        r[i] = math.exp(0.5 * (s[i] - smax))
    g_s = np.zeros(N)
    g_beta = np.zeros(E)
    g_nu = np.zeros(E)
    g_eff = np.zeros(K)
    direct = K > 0 or smax - s.min() > 600.0
    total += _davidson_cells(x[q_eff:q_eff + K], buf, ca, cb, cn, cx, sg, C, E, K, beta, nu, tied, r, s, direct,
                             g_s, g_beta, g_nu, g_eff)
    # the terms linear in h = (s_a − s_b + x·b + β_e) / 2, and n_T log ν, from the sums packed once
    for i in range(N):
        total += 0.5 * s[i] * buf[ol + i]
        g_s[i] += 0.5 * buf[ol + i]
    for j in range(E):
        total += 0.5 * beta[j] * buf[ol + N + j]
        g_beta[j] += 0.5 * buf[ol + N + j]
        if tied[j]:
            total += buf[ol + N + E + j] * lnu[j]
            g_nu[j] += buf[ol + N + E + j] / nu[j]
    for k in range(K):
        total += 0.5 * x[q_eff + k] * buf[ol + N + 2 * E + k]
        g_eff[k] += 0.5 * buf[ol + N + 2 * E + k]
    es = np.empty(N)  # e^{s − max s} for the human labels' σ(s_a − s_b)
    for i in range(N):
        es[i] = r[i] * r[i]
    total += _human_cells(x[q_eff:q_eff + K], buf, oh, H, K, s, es, smax, direct, g_s, g_eff)
    _close_scores(grad, g_s, g_eff, N, K)
    for j in range(E):
        if pb:
            grad[q_b + j] += g_beta[j]
        ti = int(buf[tio + j])
        if ti >= 0:
            grad[q_n + ti] += g_nu[j] * nu[j]
    return total


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):
    """Stored per draw: the declaration's free variables, constrained, in ``x``'s order."""
    N, E, K, T, pb = int(buf[0]), int(buf[1]), int(buf[4]), int(buf[5]), buf[6] != 0.0
    for i in range(x.shape[0]):
        out[i] = x[i]
    q = N + K + (E if pb else 0)
    for j in range(T):
        out[q + j] = math.exp(x[q + j])


def _layout(buf: np.ndarray) -> list[tuple[str, tuple[int, ...]]]:
    N, E, K, T, pb = (int(buf[i]) for i in (0, 1, 4, 5, 6))
    out: list[tuple[str, tuple[int, ...]]] = [("s_raw", (N,))]
    if K:
        out.append(("effect", (K,)))
    if pb:
        out.append(("beta", (E,)))
    if T:
        out.append(("nu", (T,)))
    return out


#: the registered fast path of ``bt``; ``option_cases``: what the gradient check covers
fast_path = build_fast_path(
    "bt", pack=pack_data, kernel=logp_grad, expand=expand, layout=_layout, log_sites=("nu",), accepts=accepts,
    # no shear: the votes' model has no accuracy to trade against the scores' spread; at 1e6 a shear of
    # (beta, nu, the scores' direction) left the scores' ESS as it was (4,550 against 4,447) and took
    # 9.9 leapfrog steps a draw instead of 9.0 (one seed, a scratch run with global_sites=("effect",
    # "beta", "nu") restored; the table has the run without). From 100 systems the posterior is near a
    # Gaussian in as many dimensions: at 0.7 a draw takes 7 leapfrog steps instead of 9.3-10.6, a fit
    # 0.65-0.83 of the time, with more ESS of the scores and the same coverage (accept_near_gaussian)
    target_accept=lambda options, n_systems: accept_near_gaussian(n_systems),
    option_cases=[
        {"position_bias": True, "tie_judges": (1,), "n_judges": 3},
        {"position_bias": False, "tie_judges": (), "n_judges": 3},
        {"position_bias": True, "tie_judges": (0, 2), "n_judges": 3, "n_cov": 1},
    ],
)
#: this module's fast paths by (task, model), collected by :mod:`bayes_judge.inference.fastpaths`
FAST_PATHS = {("leaderboard", "bt"): fast_path}
