"""Fast NUTS for the one-coin and consensus models: nutpie driven by a numba C callback.

The same construction as :mod:`bayes_judge.annotation.ds_fast` (read its docstring first) for
the declarations ``"one-coin"`` (:func:`bayes_judge.generative.winrate_models.one_coin`) and,
without human labels, ``"consensus"`` (:func:`~bayes_judge.generative.winrate_models.consensus`).
Without labels the consensus model's likelihood is the one-coin likelihood at the consensus rate
``p_c`` (``c p + (1 − c)(1 − p) = p_c``), and ``v`` enters through its U(0, 1) prior alone, so
one kernel serves both: parameters ``u = logit x`` for x in (p or p_c, q), plus ``logit v`` for
the consensus model.  With ``A_k, B_k`` the two branches of pattern k (seed 003 eq. 9 with
``q0 = q1 = q``), ``r_k = P(h_k = G0 | ...)`` (1 / 0 where labelled)::

    A_k = log p + sum_e [n1 log q + n0 log(1 − q)],   B_k = log(1 − p) + sum_e [n1 log(1 − q) + n0 log q]
    d/du_p[j]  = sum_k w_k (r_k − p_j)
    d/du_q[je] = sum_k w_k [r_k (n1 (1 − q) − n0 q) + (1 − r_k)(n0 (1 − q) − n1 q)]
    d/du_v[j]  = 1 − 2 v_j                              (U(0, 1) prior with the logit Jacobian)

``symmetric`` adds the label-switch term of
:func:`~bayes_judge.generative.winrate_models.label_switch`: ``log ½ (1 + e^Δ)`` per pair with
``Δ = (a_p − 1 − (b_p − 1))(log(1 − p) − log p) + sum_e (a_q − b_q)(log(1 − q) − log q)``,
``dΔ/du = b − a`` for both.  Unconstrained vector, in the declaration's order:
``[u_p (P), u_q (P*E)]`` (one-coin) or ``[u_pc (P), u_v (P), u_q (P*E)]`` (consensus, whose
``p_c`` has the prior ``π_a(p_c) = a (1 − m^{a−1}) / (a − 1)``, ``m = |2 p_c − 1|``, from
``κ ~ Beta(a, 1)``).  The consensus model's stored values add ``p = ½ + (p_c − ½) / κ`` and
``agreement = (1 + κ) / 2``, ``κ = (m^{a−1} + (1 − m^{a−1}) v)^{1/(a−1)}``, as its declaration's
Deterministics.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numba
import numpy as np

from .._nutpie import make_model, run
from ..inference.fastpaths import register_fast_path
from .ds_fast import _lbeta, _logit, pattern_mixture

__all__ = ["pack_data", "logp_grad", "expand"]

_HEADER = 6  # P, E, K, log-normalizing constant, symmetric flag, consensus: its a (0 for one-coin)


def pack_data(patterns, prior, *, symmetric: bool = False, kappa_a: float = 0.0) -> np.ndarray:
    """One contiguous float64 buffer: header, priors (p, q), then the non-empty patterns.

    ``kappa_a``: the consensus model's ``κ ~ Beta(a, 1)`` (0: the one-coin model); its ``p_c``
    takes ``π_a(p_c)`` with the priors on p set to Beta(1, 1) (the logit Jacobian alone)."""
    keep = np.asarray(patterns.weight) > 0
    n1 = np.asarray(patterns.n1, dtype=np.float64)[keep]
    n0 = np.asarray(patterns.n0, dtype=np.float64)[keep]
    K, E = n1.shape
    P = int(np.size(prior.alpha_p))
    const = -(_lbeta(prior.alpha_p, prior.beta_p).sum() + _lbeta(prior.alpha_q, prior.beta_q).sum())
    parts = [
        np.array([P, E, K, const, float(symmetric), float(kappa_a)], dtype=np.float64),
        np.ravel(prior.alpha_p), np.ravel(prior.beta_p), np.ravel(prior.alpha_q), np.ravel(prior.beta_q),
        np.concatenate([n1, n0], axis=1).ravel(),  # (K, 2E) rows: [n1 | n0]
        np.asarray(patterns.label)[keep], np.asarray(patterns.pair)[keep], np.asarray(patterns.weight)[keep],
    ]
    return np.ascontiguousarray(np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in parts]))


@numba.njit(cache=True, nogil=True, inline="always")
def _logs(u):
    """(x, log x, log(1 − x)) of x = sigmoid(u), from one exp and one log1p."""
    t = math.exp(-abs(u))
    lg = math.log1p(t)
    if u >= 0.0:
        return 1.0 / (1.0 + t), -lg, -u - lg
    return t / (1.0 + t), u - lg, -lg


@numba.njit(cache=True, nogil=True, fastmath={"contract", "reassoc", "arcp", "nsz"}, error_model="numpy")
def logp_grad(x, buf, grad):
    """Log density on the unconstrained space; writes the gradient into ``grad``."""
    P = int(buf[0])
    E = int(buf[1])
    K = int(buf[2])
    total = buf[3]
    symmetric = buf[4] != 0.0
    consensus = buf[5] != 0.0
    ka = buf[5]  # the consensus model's κ ~ Beta(a, 1)
    PE = P * E
    o = _HEADER
    ap = buf[o:o + P]; o += P
    bp = buf[o:o + P]; o += P
    aq = buf[o:o + PE]; o += PE
    bq = buf[o:o + PE]; o += PE
    cnt = buf[o:o + 2 * K * E]; o += 2 * K * E
    label = buf[o:o + K]; o += K
    pair = buf[o:o + K]; o += K
    weight = buf[o:o + K]
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
            t = math.exp(-abs(dl))
            total += max(dl, 0.0) + math.log1p(t) - 0.6931471805599453
            sg = 1.0 / (1.0 + t) if dl >= 0.0 else t / (1.0 + t)
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
def expand(x, buf, out):
    """The stored values: sigmoid of every parameter; the consensus model then adds p and c."""
    n = x.shape[0]
    for i in range(n):
        out[i] = _logs(x[i])[0]
    if buf[5] != 0.0:
        P = int(buf[0])
        ka = buf[5]
        for j in range(P):
            pc, v = out[j], out[P + j]
            mp = abs(2.0 * pc - 1.0) ** (ka - 1.0)
            kappa = (mp + (1.0 - mp) * v) ** (1.0 / (ka - 1.0))
            out[n + j] = 0.5 + (pc - 0.5) / kappa
            out[n + P + j] = 0.5 * (1.0 + kappa)


def _prior_arrays(name: str, priors, P: int, E: int) -> SimpleNamespace:
    b = np.broadcast_to
    pp = (1.0, 1.0) if name == "consensus" else (priors.p.alpha, priors.p.beta)  # p_c: π_a in the kernel
    return SimpleNamespace(
        alpha_p=b(np.asarray(pp[0], float), (P,)).copy(), beta_p=b(np.asarray(pp[1], float), (P,)).copy(),
        alpha_q=b(np.asarray(priors.q.alpha, float), (P, E)).copy(),
        beta_q=b(np.asarray(priors.q.beta, float), (P, E)).copy(),
    )


def _patterns(arrays) -> SimpleNamespace:
    return SimpleNamespace(n1=arrays["n1"], n0=arrays["n_total"] - arrays["n1"], label=arrays["label"],
                           pair=arrays["pair"], weight=arrays["weight"])


def _buffer(name: str, arrays, coords, priors, options) -> np.ndarray:
    P, E = len(coords["pair"]), len(coords["judge"])
    return pack_data(_patterns(arrays), _prior_arrays(name, priors, P, E),
                     symmetric=bool((options or {}).get("symmetric", False)),
                     kappa_a=float(priors.kappa.alpha) if name == "consensus" else 0.0)


def _make(name: str):
    first = "p_consensus" if name == "consensus" else "p"

    def fast_path(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept, options=None):
        P, E = len(coords["pair"]), len(coords["judge"])
        buf = _buffer(name, arrays, coords, priors, options)
        parts = [_logit(np.broadcast_to(init[first], (P,))).ravel()]
        if name == "consensus":
            parts.append(_logit(np.broadcast_to(init["v"], (P,))).ravel())
        parts.append(_logit(np.broadcast_to(init["q"], (P, E))).ravel())
        shapes = {first: (P,), **({"v": (P,)} if name == "consensus" else {}), "q": (P, E),
                  **({"p": (P,), "agreement": (P,)} if name == "consensus" else {})}
        dims = {k: ("pair", "judge") if k == "q" else ("pair",) for k in shapes}
        model = make_model(logp_grad, expand, buf=buf, init_flat=np.concatenate(parts), shapes=shapes,
                           dims=dims, coords={"pair": np.arange(P), "judge": np.arange(E)})
        return run(model, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept)

    def _fast_logp_grad(x, arrays, coords, priors, options=None):
        """log-density and gradient of the kernel at ``x`` (the declaration's unconstrained order)."""
        grad = np.empty_like(np.asarray(x, dtype=np.float64))
        lp = logp_grad(np.asarray(x, dtype=np.float64), _buffer(name, arrays, coords, priors, options), grad)
        return float(lp), grad

    def accepts(priors, options=None, arrays=None) -> bool:
        """Beta priors, the ``symmetric`` option; the consensus model only without labels (a
        labelled item's likelihood depends on p and c apart, which this kernel does not write)."""
        if not set(options or {}) <= {"symmetric"} or priors.q.family != "Beta":
            return False
        if name == "one-coin":
            return priors.p.family == "Beta"
        return arrays is not None and not (np.asarray(arrays["label"]) >= 0).any()

    fast_path.logp_grad = _fast_logp_grad  # type: ignore[attr-defined]
    fast_path.accepts = accepts  # type: ignore[attr-defined]
    fast_path.option_cases = [{}, {"symmetric": True}]  # type: ignore[attr-defined]
    return fast_path


for _name in ("one-coin", "consensus"):
    register_fast_path("win-rate", _name, _make(_name))
