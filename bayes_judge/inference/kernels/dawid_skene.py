"""Fast NUTS for Model 1 (Dawid-Skene, label marginalized): nutpie driven by a numba C callback.

NumPyro's NUTS loop costs ~100 µs of Python/XLA dispatch per leapfrog step on CPU, while the
log-density of this model is a few µs.  Here the log-density and its gradient are written by
hand in numba and wrapped in C callbacks (``numba.cfunc``, :mod:`bayes_judge.inference._nutpie`), which
nutpie's Rust NUTS calls directly: no Python in the sampling loop, chains run on native threads.
Kernels and callbacks are compiled with ``cache=True``, so a fresh process loads them from
``__pycache__`` instead of compiling (~1 s of LLVM otherwise), and a refit only packs a new data
buffer.

Parameterization (the same as NumPyro's for Beta sites): ``u = logit(x)`` for every
x in (p, q0, q1), with the log-Jacobian ``log x + log(1 - x)``, so the density on ``u`` of a
Beta(a, b) prior is ``a log x + b log(1 - x) - log B(a, b)``, gradient ``a (1 - x) - b x``.
The likelihood is :func:`bayes_judge.winrate.dawid_skene.item_log_lik`, hand-differentiated:
with ``A_k, B_k`` the two branches and ``r_k = P(h_k = G0 | ...)``,

    d/du_p[j]   = sum_k w_k (r_k - p_j)
    d/du_q0[je] = sum_k w_k r_k       (n1_ke (1 - q0_je) - n0_ke q0_je)
    d/du_q1[je] = sum_k w_k (1 - r_k) (n0_ke (1 - q1_je) - n1_ke q1_je)

The data buffer handed to the callback is one float64 array (header, priors, patterns), so the
compiled code has no data baked in.  Unconstrained vector: ``[u_p (P), u_q0 (P*E), u_q1 (P*E)]``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numba
import numpy as np

from .._nutpie import make_model, run

__all__ = ["sample_ds_fast", "pack_data", "logp_grad", "expand"]

_HEADER = 5  # P, E, K, log-normalizing constant of the priors, symmetric (label switch) flag


def _lbeta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    return gammaln(a) + gammaln(b) - gammaln(a + b)


def pack_buffer(patterns, beta_priors, header) -> np.ndarray:
    """One contiguous float64 buffer: ``[P, E, K, log-normalizing constant, *header]``, the
    Beta priors' parameters (``beta_priors``: (alpha, beta) arrays, the first one per pair), then
    the non-empty verdict patterns (rows ``[n1 | n0]``, label, pair, weight)."""
    keep = np.asarray(patterns.weight) > 0
    n1 = np.asarray(patterns.n1, dtype=np.float64)[keep]
    n0 = np.asarray(patterns.n0, dtype=np.float64)[keep]
    K, E = n1.shape
    P = int(np.size(beta_priors[0][0]))
    const = -sum(_lbeta(a, b).sum() for a, b in beta_priors)
    parts = [
        np.array([P, E, K, const, *header], dtype=np.float64),
        *(np.ravel(x) for ab in beta_priors for x in ab),
        np.concatenate([n1, n0], axis=1).ravel(),  # (K, 2E) rows: [n1 | n0]
        np.asarray(patterns.label)[keep], np.asarray(patterns.pair)[keep],
        np.asarray(patterns.weight)[keep],
    ]
    return np.ascontiguousarray(np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in parts]))


def pack_data(patterns, prior, symmetric: bool = False) -> np.ndarray:
    """The two-coin kernel's buffer (:func:`pack_buffer`): priors of p, q0, q1; header ``symmetric``."""
    pairs = [(prior.alpha_p, prior.beta_p), (prior.alpha_q0, prior.beta_q0), (prior.alpha_q1, prior.beta_q1)]
    return pack_buffer(patterns, pairs, [float(symmetric)])


@numba.njit(inline="always")
def read_buffer(buf, head, n_q):
    """Views of a :func:`pack_buffer` buffer with ``head`` header values after the first four and
    ``n_q`` per-(pair, judge) Beta priors: ``(P, E, K, log-normalizing constant, α_p, β_p,
    accuracy priors (2 n_q rows of P·E: α, β of each), counts (K × 2E), label, pair, weight)``."""
    P = int(buf[0])
    E = int(buf[1])
    K = int(buf[2])
    PE = P * E
    o = 4 + head
    ap = buf[o:o + P]
    bp = buf[o + P:o + 2 * P]
    o += 2 * P
    q = buf[o:o + 2 * n_q * PE]
    o += 2 * n_q * PE
    cnt = buf[o:o + 2 * K * E]
    o += 2 * K * E
    return P, E, K, buf[3], ap, bp, q, cnt, buf[o:o + K], buf[o + K:o + 2 * K], buf[o + 2 * K:o + 3 * K]


@numba.njit(inline="always")
def _mirror_mixture(dl):
    """The label-switch mixture of a draw and its mirror, whose log-density differs by ``Δ = dl``:
    ``(log((1 + e^Δ) / 2), σ(Δ))``, σ(Δ) being the derivative, from one exp and one log1p."""
    t = math.exp(-abs(dl))
    return max(dl, 0.0) + math.log1p(t) - 0.6931471805599453, (1.0 / (1.0 + t) if dl >= 0.0 else t / (1.0 + t))


@numba.njit(inline="always")
def pattern_mixture(K, E2, pair, weight, cnt, label, la, lb, pv, v0, v1, grad, s0, s1):
    """The verdict patterns' log-likelihood, summed over the latent label (Gao et al. 2024 eq. 5-6).

    Pattern ``k`` of pair ``j = pair[k]`` (weight ``w``, counts ``cnt_k`` of length ``E2``) has
    branches ``A = log p_j + cnt_k · v0_j`` (G0 preferred) and ``B = log(1 − p_j) + cnt_k · v1_j``;
    it scores ``w log(e^A + e^B)``, or ``w A`` / ``w B`` where a human label fixes the branch.
    With ``r = P(G0 | pattern)``, adds ``w (r − p_j)`` to ``grad[j]`` (d/dlogit p) and
    accumulates ``s0 += w r cnt_k``, ``s1 += w (1 − r) cnt_k`` (per pair, length ``E2``) for the
    caller's accuracy gradients.  ``la, lb, pv``: log p, log(1 − p), p per pair.  Returns the sum.
    """
    total = 0.0
    prod = 1.0
    prod_exp = 0
    for k in range(K):
        j = int(pair[k])
        w = weight[k]
        ck = cnt[k * E2:(k + 1) * E2]
        vj0 = v0[j * E2:(j + 1) * E2]
        vj1 = v1[j * E2:(j + 1) * E2]
        A = la[j]
        B = lb[j]
        for e in range(E2):
            A += ck[e] * vj0[e]
            B += ck[e] * vj1[e]
        lab = label[k]
        if lab == 1.0:
            ll = A
            r = 1.0
        elif lab == 0.0:
            ll = B
            r = 0.0
        else:
            # logaddexp(A, B) and r = sigmoid(A - B) from one exp + one log1p
            d = A - B
            t = math.exp(-abs(d))
            if d >= 0.0:
                ll = A
                r = 1.0 / (1.0 + t)
            else:
                ll = B
                r = t / (1.0 + t)
            # w * log1p(t) is accumulated as a product of (1 + t)^w (integer w: pattern
            # counts) with one log at the end: saves a transcendental per pattern.
            wi = int(w)
            if wi == w and wi < 64:
                m = 1.0
                base = 1.0 + t
                while wi > 0:
                    if wi & 1:
                        m *= base
                    base *= base
                    wi >>= 1
                prod *= m
                if prod > 1e250:
                    mant, ex = math.frexp(prod)
                    prod = mant
                    prod_exp += ex
            else:
                total += w * math.log1p(t)
        total += w * ll
        grad[j] += w * (r - pv[j])
        wr = w * r
        ws = w - wr
        sj0 = s0[j * E2:(j + 1) * E2]
        sj1 = s1[j * E2:(j + 1) * E2]
        for e in range(E2):
            sj0[e] += wr * ck[e]
            sj1[e] += ws * ck[e]
    return total + math.log(prod) + prod_exp * 0.6931471805599453


@numba.njit(cache=True, nogil=True, inline="always")
def _log_sigmoid(u):
    if u >= 0.0:
        return -math.log1p(math.exp(-u))
    return u - math.log1p(math.exp(u))


# fastmath without nnan/ninf: lets the length-2E dot products vectorize, keeps inf/nan semantics
@numba.njit(cache=True, nogil=True, fastmath={"contract", "reassoc", "arcp", "nsz"}, error_model="numpy")
def logp_grad(x, buf, grad):
    """Log density on the unconstrained space; writes the gradient into ``grad``."""
    P, E, K, total, ap, bp, q, cnt, label, pair, weight = read_buffer(buf, _HEADER - 4, 2)
    PE = P * E
    a0, b0, a1, b1 = q[:PE], q[PE:2 * PE], q[2 * PE:3 * PE], q[3 * PE:]

    n = P + 2 * PE
    val = np.empty(n)   # constrained value x = sigmoid(u)
    lx = np.empty(n)    # log x
    l1x = np.empty(n)   # log(1 - x)
    for i in range(n):
        # one exp + one log1p per parameter: t = exp(-|u|), log(1 + t) shared by both logs
        u = x[i]
        t = math.exp(-abs(u))
        lg = math.log1p(t)
        if u >= 0.0:
            lx[i] = -lg
            l1x[i] = -u - lg
            val[i] = 1.0 / (1.0 + t)
        else:
            lx[i] = u - lg
            l1x[i] = -lg
            val[i] = t / (1.0 + t)
    # priors (with the logit Jacobian)
    for j in range(P):
        total += ap[j] * lx[j] + bp[j] * l1x[j]
        grad[j] = ap[j] * (1.0 - val[j]) - bp[j] * val[j]
    for i in range(PE):
        i0 = P + i
        i1 = P + PE + i
        total += a0[i] * lx[i0] + b0[i] * l1x[i0] + a1[i] * lx[i1] + b1[i] * l1x[i1]
        grad[i0] = a0[i] * (1.0 - val[i0]) - b0[i] * val[i0]
        grad[i1] = a1[i] * (1.0 - val[i1]) - b1[i] * val[i1]
    if buf[4] != 0.0:
        # the label-switch symmetric prior (generative.winrate_models.label_switch): per pair
        # log ½(1 + e^Δ), Δ = log π(1 − p) − log π(p) + Σ_e [log π0(1 − q1) + log π1(1 − q0)
        # − log π0(q0) − log π1(q1)] with Beta densities (a − 1) log x + (b − 1) log(1 − x), and
        # dΔ/du_p = b − a,  dΔ/du_q0 = (b1 − a0)(1 − q0) + (b0 − a1) q0,
        # dΔ/du_q1 = (b0 − a1)(1 − q1) + (b1 − a0) q1  (u = logit x)
        for j in range(P):
            dl = (ap[j] - 1.0) * (l1x[j] - lx[j]) + (bp[j] - 1.0) * (lx[j] - l1x[j])
            for e in range(E):
                i = j * E + e
                i0 = P + i
                i1 = P + PE + i
                dl += ((a0[i] - 1.0) * (l1x[i1] - lx[i0]) + (b0[i] - 1.0) * (lx[i1] - l1x[i0])
                       + (a1[i] - 1.0) * (l1x[i0] - lx[i1]) + (b1[i] - 1.0) * (lx[i0] - l1x[i1]))
            lm, sg = _mirror_mixture(dl)
            total += lm
            grad[j] += sg * (bp[j] - ap[j])
            for e in range(E):
                i = j * E + e
                i0 = P + i
                i1 = P + PE + i
                grad[i0] += sg * ((b1[i] - a0[i]) * (1.0 - val[i0]) + (b0[i] - a1[i]) * val[i0])
                grad[i1] += sg * ((b0[i] - a1[i]) * (1.0 - val[i1]) + (b1[i] - a0[i]) * val[i1])
    # Per pair, branch G0 is cnt_k . v0 with v0 = [log q0, log(1-q0)], branch G1 is
    # cnt_k . v1 with v1 = [log(1-q1), log q1]; the gradients need s0 = sum_k w r cnt_k and
    # s1 = sum_k w (1-r) cnt_k (contiguous length-2E dot products / axpys).
    E2 = 2 * E
    v0 = np.empty(P * E2)
    v1 = np.empty(P * E2)
    s0 = np.zeros(P * E2)
    s1 = np.zeros(P * E2)
    for j in range(P):
        for e in range(E):
            i0 = P + j * E + e
            i1 = P + PE + j * E + e
            v0[j * E2 + e] = lx[i0]
            v0[j * E2 + E + e] = l1x[i0]
            v1[j * E2 + e] = l1x[i1]
            v1[j * E2 + E + e] = lx[i1]
    total += pattern_mixture(K, E2, pair, weight, cnt, label, lx, l1x, val, v0, v1, grad, s0, s1)
    for j in range(P):
        for e in range(E):
            i0 = P + j * E + e
            i1 = P + PE + j * E + e
            q = val[i0]
            grad[i0] += (1.0 - q) * s0[j * E2 + e] - q * s0[j * E2 + E + e]
            q = val[i1]
            grad[i1] += (1.0 - q) * s1[j * E2 + E + e] - q * s1[j * E2 + e]
    return total


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):
    """The stored values: ``(p, q0, q1) = sigmoid(x)``."""
    for i in range(x.shape[0]):
        out[i] = math.exp(_log_sigmoid(x[i]))


# ---------------------------------------------------------------- the one-coin / consensus kernel
# (registered by :mod:`bayes_judge.inference.kernels.one_coin`, whose docstring states it).  It lives
# in this file because it inlines :func:`pattern_mixture`: numba's on-disk cache is invalidated by
# a change of the caller's own file only, so a kernel in another file would keep a stale copy.

_ONECOIN_HEADER = 6  # P, E, K, log-normalizing constant, symmetric flag, consensus: its a (0 for one-coin)


@numba.njit(cache=True, nogil=True, inline="always")
def _logs(u):
    """(x, log x, log(1 − x)) of x = sigmoid(u), from one exp and one log1p."""
    t = math.exp(-abs(u))
    lg = math.log1p(t)
    if u >= 0.0:
        return 1.0 / (1.0 + t), -lg, -u - lg
    return t / (1.0 + t), u - lg, -lg


@numba.njit(cache=True, nogil=True, fastmath={"contract", "reassoc", "arcp", "nsz"}, error_model="numpy")
def onecoin_logp_grad(x, buf, grad):
    """Log density on the unconstrained space; writes the gradient into ``grad``."""
    P, E, K, total, ap, bp, q, cnt, label, pair, weight = read_buffer(buf, _ONECOIN_HEADER - 4, 1)
    symmetric = buf[4] != 0.0
    consensus = buf[5] != 0.0
    ka = buf[5]  # the consensus model's κ ~ Beta(a, 1)
    PE = P * E
    aq, bq = q[:PE], q[PE:]
    oq = 2 * P if consensus else P  # offset of u_q in x
    for i in range(x.shape[0]):
        grad[i] = 0.0

    pv = np.empty(P); lp = np.empty(P); l1p = np.empty(P)
    for j in range(P):
        pv[j], lp[j], l1p[j] = _logs(x[j])
        total += ap[j] * lp[j] + bp[j] * l1p[j]
        grad[j] = ap[j] * (1.0 - pv[j]) - bp[j] * pv[j]
        if consensus:
            # π_a(p_c) = a (1 − m^{a−1}) / (a − 1), m = |2 p_c − 1| (p's prior is Beta(1, 1) here)
            sgn = 1.0 if pv[j] > 0.5 else (-1.0 if pv[j] < 0.5 else 0.0)
            m = abs(2.0 * pv[j] - 1.0)
            mp = m ** (ka - 1.0)
            total += math.log(ka / (ka - 1.0)) + math.log1p(-mp)
            grad[j] -= 2.0 * (ka - 1.0) * m ** (ka - 2.0) * sgn / (1.0 - mp) * pv[j] * (1.0 - pv[j])
            # v ~ U(0, 1) on the logit scale: log v + log(1 − v)
            v, lv, l1v = _logs(x[P + j])
            total += lv + l1v
            grad[P + j] = 1.0 - 2.0 * v
    E2 = 2 * E
    qv = np.empty(PE)
    v0 = np.empty(P * E2)  # per pair [log q | log(1 − q)]: branch G0 is cnt_k . v0
    v1 = np.empty(P * E2)  # per pair [log(1 − q) | log q]: branch G1 is cnt_k . v1
    for i in range(PE):
        q, lq, l1q = _logs(x[oq + i])
        qv[i] = q
        total += aq[i] * lq + bq[i] * l1q
        grad[oq + i] = aq[i] * (1.0 - q) - bq[i] * q
        j, e = i // E, i % E
        v0[j * E2 + e] = lq
        v0[j * E2 + E + e] = l1q
        v1[j * E2 + e] = l1q
        v1[j * E2 + E + e] = lq
    if symmetric:
        for j in range(P):
            dl = (ap[j] - bp[j]) * (l1p[j] - lp[j])
            for e in range(E):
                i = j * E + e
                dl += (aq[i] - bq[i]) * (v1[j * E2 + e] - v0[j * E2 + e])  # log(1 − q) − log q
            lm, sg = _mirror_mixture(dl)
            total += lm
            grad[j] += sg * (bp[j] - ap[j])
            for e in range(E):
                i = j * E + e
                grad[oq + i] += sg * (bq[i] - aq[i])
    s0 = np.zeros(P * E2)  # sum_k w r cnt_k
    s1 = np.zeros(P * E2)  # sum_k w (1 − r) cnt_k
    total += pattern_mixture(K, E2, pair, weight, cnt, label, lp, l1p, pv, v0, v1, grad, s0, s1)
    for i in range(PE):
        j, e = i // E, i % E
        q = qv[i]
        n1r, n0r = s0[j * E2 + e], s0[j * E2 + E + e]
        n1s, n0s = s1[j * E2 + e], s1[j * E2 + E + e]
        grad[oq + i] += (1.0 - q) * (n1r + n0s) - q * (n0r + n1s)
    return total


@numba.njit(cache=True, nogil=True)
def onecoin_expand(x, buf, out):
    """The one-coin / consensus kernel's stored values: sigmoid of every parameter (the consensus
    model's p and agreement are derived after sampling by the declaration's own functions, in
    :mod:`bayes_judge.inference.kernels.one_coin`)."""
    for i in range(x.shape[0]):
        out[i] = _logs(x[i])[0]


def _logit(v):
    v = np.asarray(v, dtype=np.float64)
    return np.log(v) - np.log1p(-v)


def sample_ds_fast(
    patterns,
    prior,
    *,
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    init_values: dict[str, np.ndarray] | None = None,
    target_accept: float,
    cores: int | None = None,
    symmetric: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Sample Model 1 with nutpie's NUTS on the numba log-density.

    Parameters
    ----------
    patterns : DSPatterns   (padding rows, weight 0, are dropped)
    prior : DSPrior
    init_values : dict with "p" (P,), "q0", "q1" (P, E) in (0, 1); default: the prior mean.
        Every chain starts there (no jitter).
    cores : threads for the chains (default min(chains, os.cpu_count())).  Each chain has its own
        RNG stream derived from ``seed``, so results do not depend on ``cores``.
    symmetric : the declaration's ``symmetric`` option (the label-switch symmetric prior).

    Returns
    -------
    posterior : {"p": (C, D, P), "q0": (C, D, P, E), "q1": (C, D, P, E)}
    stats : {"diverging", "energy", "n_steps", "acceptance_rate", "lp"}, each (C, D)
    """
    P = int(np.size(prior.alpha_p))
    E = int(np.shape(prior.alpha_q0)[-1])
    if init_values is None:
        init_values = prior.mean()
    init_flat = np.concatenate([
        _logit(np.broadcast_to(init_values["p"], (P,))).ravel(),
        _logit(np.broadcast_to(init_values["q0"], (P, E))).ravel(),
        _logit(np.broadcast_to(init_values["q1"], (P, E))).ravel(),
    ])
    buf = pack_data(patterns, prior, symmetric)
    model = make_model(
        logp_grad,
        expand,
        buf=buf,
        init_flat=init_flat,
        shapes={"p": (P,), "q0": (P, E), "q1": (P, E)},
        dims={"p": ("pair",), "q0": ("pair", "judge"), "q1": ("pair", "judge")},
        coords={"pair": np.arange(P), "judge": np.arange(E)},
    )
    return run(
        model, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
        cores=cores,
    )


def _prior_arrays(priors, P: int, E: int) -> SimpleNamespace:
    b = np.broadcast_to
    return SimpleNamespace(
        alpha_p=b(np.asarray(priors.p.alpha, float), (P,)).copy(),
        beta_p=b(np.asarray(priors.p.beta, float), (P,)).copy(),
        alpha_q0=b(np.asarray(priors.q0.alpha, float), (P, E)).copy(),
        beta_q0=b(np.asarray(priors.q0.beta, float), (P, E)).copy(),
        alpha_q1=b(np.asarray(priors.q1.alpha, float), (P, E)).copy(),
        beta_q1=b(np.asarray(priors.q1.beta, float), (P, E)).copy(),
    )


def _patterns(arrays) -> SimpleNamespace:
    return SimpleNamespace(
        n1=arrays["n1"], n0=arrays["n_total"] - arrays["n1"], label=arrays["label"],
        pair=arrays["pair"], weight=arrays["weight"],
    )


def fast_path(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept, options=None):
    """The registered nutpie fast path of the ``"dawid-skene"`` declaration (same posterior)."""
    P, E = len(coords["pair"]), len(coords["judge"])
    return sample_ds_fast(
        _patterns(arrays), _prior_arrays(priors, P, E), chains=chains, draws=draws, tune=tune,
        seed=seed, init_values=init, target_accept=target_accept,
        symmetric=bool((options or {}).get("symmetric", False)),
    )


def _fast_logp_grad(x, arrays, coords, priors, options=None):
    """log-density and gradient of the kernel at ``x`` (logit p, logit q0, logit q1, flattened)."""
    P, E = len(coords["pair"]), len(coords["judge"])
    buf = pack_data(_patterns(arrays), _prior_arrays(priors, P, E), bool((options or {}).get("symmetric", False)))
    grad = np.empty_like(np.asarray(x, dtype=np.float64))
    lp = logp_grad(np.asarray(x, dtype=np.float64), buf, grad)
    return float(lp), grad


def accepts(priors, options=None, arrays=None) -> bool:
    """The kernel is written for Beta priors on p, q0 and q1 and the ``symmetric`` option."""
    return set(options or {}) <= {"symmetric"} and all(getattr(priors, k).family == "Beta" for k in ("p", "q0", "q1"))


fast_path.logp_grad = _fast_logp_grad  # type: ignore[attr-defined]
fast_path.accepts = accepts  # type: ignore[attr-defined]
fast_path.option_cases = [{}, {"symmetric": True}]  # type: ignore[attr-defined]
#: this module's fast paths by (task, model), collected by :mod:`bayes_judge.inference.fastpaths`
FAST_PATHS = {("win-rate", "dawid-skene"): fast_path}
