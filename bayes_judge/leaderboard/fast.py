"""Registered nutpie fast path of the leaderboard model ``"bt-judges"``: a numba log-density.

The declaration :func:`bayes_judge.generative.leaderboard_models.judged_bradley_terry` is the
model; this module is an optional speed-up for ``sampler="nutpie"`` at arena scale: the same
log-density with its gradient written by hand in numba and handed to nutpie's Rust NUTS as C
callbacks (:mod:`bayes_judge._nutpie`), one pass over the cells per evaluation, no per-cell
arrays.  It is checked against the declaration's compiled log-density and gradient by the one
generic test (``tests/inference/test_fastpaths.py``), and it declines what it does not state
(:func:`accepts`): the per-prompt ``difficulty`` and priors outside the declared families.

Unconstrained vector (the declaration's value variables in ``model.value_vars`` order)::

    x = [s_raw (N), effect (K)?, log alpha (E), beta (E)?, log tau (T)?, log σ_δ?, z (E × N)?]

Per judgment cell ``c`` (systems ``a``, ``b``, judge ``e``, human label ``h``), with
``d = s_a − s_b + x_c·b``, ``w = σ(d)`` (``h`` unknown; 1 or 0 when a person said A or B),
``η± = ±α_e + β_e + δ_{e,a} − δ_{e,b}`` and ``t = τ_e`` (0 for a judge that never ties)::

    a₁ = σ(η₊ − t), a₀ = σ(η₋ − t), b₁ = σ(−η₊ − t), b₀ = σ(−η₋ − t)
    P_A = w a₁ + (1 − w) a₀,  P_B = w b₁ + (1 − w) b₀,  P_T = 1 − P_A − P_B,  S = P_A + P_B
    l_c = n_A log P_A + n_B log P_B + n_T log P_T + s_A log(P_A / S) + s_B log(P_B / S)

(a judge that never ties has ``b = 1 − a`` and no tie counts).  With ``g_A = ∂l/∂P_A``,
``g_B = ∂l/∂P_B`` and ``σ'(u) = σ(u) σ(−u)``::

    ∂l/∂η₊ = w (g_A σ'(η₊ − t) − g_B σ'(−η₊ − t)),  ∂l/∂η₋ = (1 − w)(g_A σ'(η₋ − t) − g_B σ'(−η₋ − t))
    ∂l/∂α = ∂l/∂η₊ − ∂l/∂η₋,   ∂l/∂β = ∂l/∂δ_a = −∂l/∂δ_b = ∂l/∂η₊ + ∂l/∂η₋
    ∂l/∂t = −g_A (w σ'(η₊ − t) + (1 − w) σ'(η₋ − t)) − g_B (w σ'(−η₊ − t) + (1 − w) σ'(−η₋ − t))
    ∂l/∂d = w (1 − w) (g_A (a₁ − a₀) + g_B (b₁ − b₀))          (h unknown only)

A cell computes no exp: ``u± = e^{η±} = e^{±α_e} e^{β_e} e^{δ_{e,a}} / e^{δ_{e,b}}``, ``v = e^t`` and
``e^{s}`` come from tables made once per evaluation (E × N entries), so ``σ(η± − t) = u± / (u± + v)``,
``σ(−η± − t) = 1 / (1 + v u±)`` and ``w = e^{s_a} / (e^{s_a} + e^{s_b})``: a cell costs its logs
(one per non-zero outcome count) and a few divisions, about 40 ns.  A human label scores
``log σ(±d)``.  Scores ``s = s_raw − mean(s_raw)`` and ``δ_e = σ_δ (z_e −
mean(z_e))`` are centring projections, so their gradients are centred the same way; the
HalfNormal sites are sampled on the log scale with the log-Jacobian (PyMC's log transform).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from .._nutpie import make_model, run
from ..generative.priors import HalfNormal, Normal, Prior, Priors
from ..inference.fastpaths import register_fast_path

__all__ = ["pack_data", "logp_grad", "expand", "accepts", "fast_path", "register_kernel"]

# N, E, C, H, K, T, position bias, system bias, then mu_s, sd_s, tau_a, mu_b, sd_b, tau_t, tau_d,
# mu_e, sd_e
_HEADER = 20
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)
_FAMILIES: dict[str, type[Prior]] = {"scores": Normal, "alpha": HalfNormal, "beta": Normal, "tau": HalfNormal,
             "system_bias": HalfNormal, "effect": Normal}
_OPTIONS = {"position_bias", "tie_judges", "n_judges", "difficulty", "n_cov", "system_bias"}


def _scalar(v: Any) -> float | None:
    a = np.asarray(v, dtype=float)
    return float(a.flat[0]) if a.size and np.all(a == a.flat[0]) else None


def accepts(priors: Priors, options: dict, arrays: dict | None = None) -> bool:
    """Whether the kernel states this fit: no per-prompt difficulty, the declared prior families
    (:class:`~bayes_judge.generative.leaderboard_models.JudgedBTPriors`) with scalar parameters."""
    if options.get("difficulty") or set(options) - _OPTIONS:
        return False
    for name, family in _FAMILIES.items():
        pr: Any = getattr(priors, name, None)
        if type(pr) is not family or any(_scalar(v) is None for v in pr.params().values()):
            return False
    return True


def _par(pr: Any, field: str) -> float:
    return float(np.asarray(getattr(pr, field), dtype=float).flat[0])


def pack_data(arrays: dict, priors: Priors, options: dict, n_systems: int) -> np.ndarray:
    """One contiguous float64 buffer for the callbacks.

    Parameters
    ----------
    arrays : dict
        :meth:`bayes_judge.leaderboard.encode.LeaderboardData.arrays`: ``C`` judgment cells,
        ``H`` human-label cells, ``K`` covariate columns.
    priors : JudgedBTPriors
        (:func:`accepts` must hold.)
    options : dict
        The declaration's options (``position_bias``, ``tie_judges``, ``n_judges``, ``n_cov``,
        ``system_bias``).
    n_systems : int
        ``N``, the length of the ``system`` coordinate.

    Returns
    -------
    ndarray of float64
        Header (``_HEADER``), then ``a, b, e, h`` (C each), ``n`` (C × 5), ``x`` (C × K),
        ``hum_a, hum_b`` (H each), ``hum_n`` (H × 2), ``hum_x`` (H × K), the tie index of every
        judge (E; −1 for a judge that never ties) and ``N``'s count.
    """
    if not accepts(priors, options):
        raise ValueError(f"the 'bt-judges' fast path states no difficulty and the declared prior families "
                         f"with scalar parameters; got options {options} and\n{priors}")
    (N, E, C, H, K, T), parts = _cells(arrays, options, n_systems, with_h=True)
    pr = priors
    header = np.zeros(_HEADER)
    header[:17] = [N, E, C, H, K, T, float(bool(options.get("position_bias", True))),
                   float(bool(options.get("system_bias", True))),
                   _par(pr.scores, "mu"), _par(pr.scores, "sigma"), _par(pr.alpha, "sigma"),  # type: ignore[attr-defined]
                   _par(pr.beta, "mu"), _par(pr.beta, "sigma"), _par(pr.tau, "sigma"),  # type: ignore[attr-defined]
                   _par(pr.system_bias, "sigma"), _par(pr.effect, "mu"), _par(pr.effect, "sigma")]  # type: ignore[attr-defined]
    return np.concatenate([header, *parts])


def _cells(arrays: dict, options: dict, n_systems: int, *, with_h: bool) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """The cell arrays of a leaderboard buffer, in its order: ``a, b, e, [h,] n (C × 5), x (C × K),
    hum_a, hum_b, hum_n (H × 2), hum_x (H × K)`` and each judge's tie index (−1: never ties),
    with ``(N, E, C, H, K, T)``."""
    E = int(options.get("n_judges", 1))
    ties = tuple(int(e) for e in options.get("tie_judges", ()))
    K = int(options.get("n_cov", 0))
    col = {k: np.asarray(arrays[k], dtype=np.float64) for k in ("sys_a", "sys_b", "judge", "h", "n", "hum_a",
                                                                 "hum_b", "hum_n")}
    C, H, N = len(col["sys_a"]), len(col["hum_a"]), int(n_systems)
    x = np.asarray(arrays["x"], dtype=np.float64)[:, :K] if K else np.zeros((C, 0))
    hx = np.asarray(arrays["hum_x"], dtype=np.float64)[:, :K] if K else np.zeros((H, 0))
    if max(col[k].max(initial=-1) for k in ("sys_a", "sys_b", "hum_a", "hum_b")) >= N:
        raise ValueError(f"system indices must lie in [0, {N}), the system coordinate")
    tie_idx = np.full(E, -1.0)
    tie_idx[list(ties)] = np.arange(len(ties))
    parts = [col["sys_a"], col["sys_b"], col["judge"]] + ([col["h"]] if with_h else [])
    parts += [col["n"].ravel(), x.ravel(), col["hum_a"], col["hum_b"], col["hum_n"].ravel(), hx.ravel(), tie_idx]
    return (N, E, C, H, K, len(ties)), parts


@numba.njit(inline="always")
def _sig_pair(u):
    """σ(u) and σ(−u) from one exp, both to full relative precision."""
    t = math.exp(-abs(u))
    inv = 1.0 / (1.0 + t)
    if u >= 0.0:
        return inv, t * inv
    return t * inv, inv


@numba.njit(inline="always")
def _half_normal_logp(u, tau):
    """HalfNormal(tau) on v = exp(u), with the log-Jacobian: (log density, d/du)."""
    v = math.exp(u)
    z = v / tau
    return _LOG2 - math.log(tau) - _HALF_LOG_2PI - 0.5 * z * z + u, 1.0 - z * z


@numba.njit(inline="always")
def _scores_and_effects(x, grad, N, K, mu_s, sd_s, mu_e, sd_e):
    """Priors of ``s_raw`` (Normal(mu_s, sd_s)) and of the covariate effects (Normal(mu_e, sd_e),
    at ``x[N:N + K]``); zeroes ``grad`` and fills those entries.  Returns (log density, centred s)."""
    for i in range(x.shape[0]):
        grad[i] = 0.0
    total = 0.0
    mean = 0.0
    for i in range(N):
        mean += x[i]
        zs = (x[i] - mu_s) / sd_s
        total -= 0.5 * zs * zs
        grad[i] = -zs / sd_s
    total -= N * (math.log(sd_s) + _HALF_LOG_2PI)
    mean /= N
    s = np.empty(N)
    for i in range(N):
        s[i] = x[i] - mean
    for k in range(K):
        ze = (x[N + k] - mu_e) / sd_e
        total -= 0.5 * ze * ze + math.log(sd_e) + _HALF_LOG_2PI
        grad[N + k] = -ze / sd_e
    return total, s


@numba.njit(inline="always")
def _human_cells(x, buf, oh, H, K, s, g_s, g_eff):
    """The human-label cells (``hum_a, hum_b, hum_n, hum_x`` from ``buf[oh:]``): ``log σ(±d)``
    weighted by their counts; adds to ``g_s`` and ``g_eff``, returns the log-likelihood."""
    hna = oh + 2 * H
    hxo = hna + 2 * H
    total = 0.0
    for c in range(H):
        a = int(buf[oh + c])
        b = int(buf[oh + H + c])
        d = s[a] - s[b]
        for k in range(K):
            d += buf[hxo + c * K + k] * x[s.shape[0] + k]
        m1 = buf[hna + 2 * c]
        m0 = buf[hna + 2 * c + 1]
        p, p1 = _sig_pair(d)
        total += m1 * math.log(p) + m0 * math.log(p1)
        gd = m1 * p1 - m0 * p
        g_s[a] += gd
        g_s[b] -= gd
        for k in range(K):
            g_eff[k] += gd * buf[hxo + c * K + k]
    return total


@numba.njit(inline="always")
def _close_scores(grad, g_s, g_eff, N, K):
    """Chain rule of the centring ``s = s_raw − mean(s_raw)`` and the effects' likelihood terms."""
    gm = 0.0
    for i in range(N):
        gm += g_s[i]
    gm /= N
    for i in range(N):
        grad[i] += g_s[i] - gm
    for k in range(K):
        grad[N + k] += g_eff[k]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def logp_grad(x, buf, grad):  # noqa: C901 (one pass over the cells, written out)
    """Log-density of the unconstrained vector ``x`` (module docstring); fills ``grad``.

    A probability that under- or overflows to 0 gives −inf or nan (numpy's error model, no
    exception in the callback), which nutpie counts as a divergence, as it does the declaration's.
    """
    N, E, C, H, K, T = int(buf[0]), int(buf[1]), int(buf[2]), int(buf[3]), int(buf[4]), int(buf[5])
    pb, sb = buf[6] != 0.0, buf[7] != 0.0
    mu_s, sd_s, tau_a, mu_b, sd_b, tau_t, tau_d, mu_e, sd_e = (
        buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15], buf[16])
    o = _HEADER
    ca, cb, ce, ch = o, o + C, o + 2 * C, o + 3 * C
    cn = o + 4 * C
    cx = cn + 5 * C
    oh = cx + C * K
    hna = oh + 2 * H
    hxo = hna + 2 * H
    tio = hxo + H * K
    # positions in x
    q_eff = N
    q_a = q_eff + K
    q_b = q_a + E
    q_t = q_b + (E if pb else 0)
    q_sd = q_t + T
    q_z = q_sd + 1
    total, s = _scores_and_effects(x, grad, N, K, mu_s, sd_s, mu_e, sd_e)
    alpha = np.empty(E)
    beta = np.zeros(E)
    tau = np.zeros(E)
    tied = np.zeros(E, dtype=np.bool_)
    for j in range(E):
        lp, g = _half_normal_logp(x[q_a + j], tau_a)
        total += lp
        grad[q_a + j] = g
        alpha[j] = math.exp(x[q_a + j])
        if pb:
            beta[j] = x[q_b + j]
            zb = (beta[j] - mu_b) / sd_b
            total -= 0.5 * zb * zb + math.log(sd_b) + _HALF_LOG_2PI
            grad[q_b + j] = -zb / sd_b
    for j in range(T):
        lp, g = _half_normal_logp(x[q_t + j], tau_t)
        total += lp
        grad[q_t + j] = g
    for j in range(E):
        ti = int(buf[tio + j])
        if ti >= 0:
            tau[j] = math.exp(x[q_t + ti])
            tied[j] = True
    delta = np.zeros((E, N))
    sd_d = 0.0
    if sb:
        lp, g = _half_normal_logp(x[q_sd], tau_d)
        total += lp
        grad[q_sd] = g
        sd_d = math.exp(x[q_sd])
        for j in range(E):
            zm = 0.0
            for i in range(N):
                v = x[q_z + j * N + i]
                total -= 0.5 * v * v + _HALF_LOG_2PI
                grad[q_z + j * N + i] = -v
                zm += v
            zm /= N
            for i in range(N):
                delta[j, i] = sd_d * (x[q_z + j * N + i] - zm)
    # likelihood: judgment cells
    g_s = np.zeros(N)
    g_d = np.zeros((E, N))
    g_alpha = np.zeros(E)
    g_shift = np.zeros(E)
    g_tau = np.zeros(E)
    g_eff = np.zeros(K)
    # exp tables, once per evaluation: no exp per cell.  With u± = exp(η±) and v = exp(t),
    # σ(η± − t) = u± / (u± + v) and σ(−η± − t) = 1 / (1 + v u±); u± = e^{±α} e^β e^{δ_a} / e^{δ_b}
    es = np.empty(N)
    smax = s.max()
    for i in range(N):
        es[i] = math.exp(s[i] - smax)
    ea = np.empty(E)
    ev = np.empty(E)
    qa = np.empty((E, N))
    qb = np.empty((E, N))
    for j in range(E):
        ea[j] = math.exp(alpha[j])
        ev[j] = math.exp(tau[j])
        eb = math.exp(beta[j])
        for i in range(N):
            qa[j, i] = eb * math.exp(delta[j, i])
            qb[j, i] = math.exp(-delta[j, i])
    for c in range(C):
        a = int(buf[ca + c])
        b = int(buf[cb + c])
        e = int(buf[ce + c])
        hc = buf[ch + c]
        nA = buf[cn + 5 * c]
        nB = buf[cn + 5 * c + 1]
        nT = buf[cn + 5 * c + 2]
        sA = buf[cn + 5 * c + 3]
        sB = buf[cn + 5 * c + 4]
        if hc == 0.0:
            if K == 0:
                z = es[a] + es[b]
                w = es[a] / z
                w1 = es[b] / z
                if not z > 0.0:  # both scores far below the top one: σ(d) directly
                    w, w1 = _sig_pair(s[a] - s[b])
            else:
                d = s[a] - s[b]
                for k in range(K):
                    d += buf[cx + c * K + k] * x[q_eff + k]
                w, w1 = _sig_pair(d)
        elif hc == 1.0:
            w, w1 = 1.0, 0.0
        else:
            w, w1 = 0.0, 1.0
        r = qa[e, a] * qb[e, b]
        up = ea[e] * r
        um = r / ea[e]
        v = ev[e]
        # a = σ(η − t), σ'(η − t) = a v / (u + v); b = σ(−η − t), σ'(−η − t) = b v u / (1 + v u)
        i1 = 1.0 / (up + v)
        i0 = 1.0 / (um + v)
        a1 = up * i1
        a0 = um * i0
        da1 = a1 * v * i1
        da0 = a0 * v * i0
        tie = tied[e]
        if tie:
            b1 = 1.0 / (1.0 + v * up)
            b0 = 1.0 / (1.0 + v * um)
            db1 = b1 * v * up * b1
            db0 = b0 * v * um * b0
        else:
            b1 = v * i1
            b0 = v * i0
            db1 = da1
            db0 = da0
        pA = w * a1 + w1 * a0
        pB = w * b1 + w1 * b0
        gA = 0.0
        gB = 0.0
        if nA + sA != 0.0:
            total += (nA + sA) * math.log(pA)
            gA += (nA + sA) / pA
        if nB + sB != 0.0:
            total += (nB + sB) * math.log(pB)
            gB += (nB + sB) / pB
        if nT != 0.0:
            pT = 1.0 - pA - pB
            total += nT * math.log(pT)
            gA -= nT / pT
            gB -= nT / pT
        if tie and sA + sB != 0.0:
            S = pA + pB
            total -= (sA + sB) * math.log(S)
            gA -= (sA + sB) / S
            gB -= (sA + sB) / S
        ge_p = w * (gA * da1 - gB * db1)
        ge_m = w1 * (gA * da0 - gB * db0)
        g_alpha[e] += ge_p - ge_m
        gsh = ge_p + ge_m
        g_shift[e] += gsh
        g_d[e, a] += gsh
        g_d[e, b] -= gsh
        if tie:
            g_tau[e] -= gA * (w * da1 + w1 * da0) + gB * (w * db1 + w1 * db0)
        if hc == 0.0:
            gd = w * w1 * (gA * (a1 - a0) + gB * (b1 - b0))
            g_s[a] += gd
            g_s[b] -= gd
            for k in range(K):
                g_eff[k] += gd * buf[cx + c * K + k]
    total += _human_cells(x, buf, oh, H, K, s, g_s, g_eff)
    _close_scores(grad, g_s, g_eff, N, K)
    for j in range(E):
        grad[q_a + j] += g_alpha[j] * alpha[j]
        if pb:
            grad[q_b + j] += g_shift[j]
        ti = int(buf[tio + j])
        if ti >= 0:
            grad[q_t + ti] += g_tau[j] * tau[j]
    if sb:
        g_sd = 0.0
        for j in range(E):
            gm = 0.0
            for i in range(N):
                gm += g_d[j, i]
            gm /= N
            for i in range(N):
                grad[q_z + j * N + i] += sd_d * (g_d[j, i] - gm)
                g_sd += g_d[j, i] * delta[j, i]
        grad[q_sd] += g_sd  # d/dlog σ_δ = σ_δ Σ g_δ (z − z̄) = Σ g_δ δ
    return total


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):
    """Stored per draw: the declaration's free variables, constrained, in ``x``'s order."""
    N, E, K, T = int(buf[0]), int(buf[1]), int(buf[4]), int(buf[5])
    pb, sb = buf[6] != 0.0, buf[7] != 0.0
    for i in range(x.shape[0]):
        out[i] = x[i]
    q = N + K
    for j in range(E):
        out[q + j] = math.exp(x[q + j])
    q += E + (E if pb else 0)
    for j in range(T):
        out[q + j] = math.exp(x[q + j])
    q += T
    if sb:
        out[q] = math.exp(x[q])


def _layout(buf: np.ndarray) -> list[tuple[str, tuple[int, ...]]]:
    N, E, K, T, pb, sb = (int(buf[i]) for i in (0, 1, 4, 5, 6, 7))
    out: list[tuple[str, tuple[int, ...]]] = [("s_raw", (N,))]
    if K:
        out.append(("effect", (K,)))
    out.append(("alpha", (E,)))
    if pb:
        out.append(("beta", (E,)))
    if T:
        out.append(("tau", (T,)))
    if sb:
        out += [("system_bias_sd", ()), ("delta_raw", (E, N))]
    return out


_LOG_SITES = ("alpha", "tau", "system_bias_sd")


def _start(init: dict, layout: list[tuple[str, tuple[int, ...]]], log_sites: tuple[str, ...] = _LOG_SITES
           ) -> np.ndarray:
    """The kernel's unconstrained start from the declaration's (constrained) start values; the
    ``log_sites`` are sampled on the log scale."""
    parts = []
    for name, shape in layout:
        default = 1.0 if name in log_sites else 0.0
        v = np.broadcast_to(np.asarray(init.get(name, default), dtype=float), shape).ravel()
        parts.append(np.log(v) if name in log_sites else v)
    return np.concatenate(parts)


def _derive_judged(post: dict) -> None:
    """The declaration's deterministics of ``bt-judges`` from its free variables' draws."""
    post["q"] = 1.0 / (1.0 + np.exp(-post["alpha"]))
    if "delta_raw" in post:
        z = post["delta_raw"]
        post["delta"] = post["system_bias_sd"][..., None, None] * (z - z.mean(axis=-1, keepdims=True))


def register_kernel(name: str, *, pack, kernel, expand, layout, log_sites: tuple[str, ...], derive=None,
                    accepts, option_cases: list[dict]):
    """Register a leaderboard model's numba kernel as its nutpie fast path.

    ``pack(arrays, priors, options, n_systems)`` makes the data buffer, ``layout(buf)`` lists the
    declaration's free variables in ``model.value_vars`` order (the kernel's order; the sizes give
    the unconstrained length), ``log_sites`` are sampled on the log scale, and ``derive(post)`` adds
    the model's deterministics beyond the centred scores ``s``.  The fast path returns the
    declaration's stored variables as ``(chains, draws, ...)`` and nutpie's statistics.
    """

    def buffer(arrays: dict, coords: dict, priors: Priors, options: dict | None):
        buf = pack(arrays, priors, dict(options or {}), len(coords["system"]))
        return buf, layout(buf)

    def fast_path(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept, options=None):
        buf, lay = buffer(arrays, coords, priors, options)
        m = make_model(kernel, expand, buf=buf, init_flat=_start(init, lay, log_sites), shapes=dict(lay),
                       dims={}, coords={})
        post, stats = run(m, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
                          save_warmup=False)
        post["s"] = post["s_raw"] - post["s_raw"].mean(axis=-1, keepdims=True)
        if derive is not None:
            derive(post)
        return post, stats

    def logp_grad_declared(x, arrays: dict, coords: dict, priors: Priors, options: dict | None = None):
        """Log-density and gradient at ``x``, the declaration's value variables flattened in
        ``model.value_vars`` order (the kernel's own order)."""
        buf, lay = buffer(arrays, coords, priors, options)
        n = sum(int(np.prod(shape, dtype=np.int64)) for _, shape in lay)
        xk = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
        if xk.shape != (n,):
            raise ValueError(f"x has {xk.shape} values; the kernel takes {n}")
        g = np.empty_like(xk)
        return float(kernel(xk, buf, g)), g

    fast_path.__doc__ = f"The registered nutpie fast path of the {name!r} declaration (same posterior)."
    fast_path.logp_grad = logp_grad_declared  # type: ignore[attr-defined]
    fast_path.accepts = accepts  # type: ignore[attr-defined]
    fast_path.option_cases = option_cases  # type: ignore[attr-defined]
    register_fast_path("leaderboard", name, fast_path)
    return fast_path


#: the registered fast path of ``bt-judges``; ``option_cases``: what the gradient check covers
fast_path = register_kernel(
    "bt-judges", pack=pack_data, kernel=logp_grad, expand=expand, layout=_layout, log_sites=_LOG_SITES,
    derive=_derive_judged, accepts=accepts,
    option_cases=[
        {"position_bias": True, "system_bias": True, "tie_judges": (1,), "n_judges": 3},
        {"position_bias": False, "system_bias": False, "tie_judges": (), "n_judges": 3},
        {"position_bias": True, "system_bias": True, "tie_judges": (0, 2), "n_judges": 3, "n_cov": 1},
    ],
)
