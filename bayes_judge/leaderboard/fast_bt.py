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

so a cell costs one log (two with soft rows) and no exp: ``e^h = r_a / r_b · c_e`` from the tables
``r = exp(s / 2)`` and ``c = exp(β / 2)``, computed once per evaluation.  Human labels score
``log σ(±(s_a − s_b))`` as in ``bt-judges``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..generative.priors import HalfNormal, Normal, Prior, Priors
from .fast import (
    _cells,
    _close_scores,
    _half_normal_logp,
    _human_cells,
    _par,
    _scalar,
    _scores_and_effects,
    register_kernel,
)

__all__ = ["pack_data", "logp_grad", "expand", "accepts", "fast_path"]

# N, E, C, H, K, T, position bias, then mu_s, sd_s, mu_b, sd_b, tau_n, mu_e, sd_e
_HEADER = 16
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_FAMILIES: dict[str, type[Prior]] = {"scores": Normal, "beta": Normal, "nu": HalfNormal, "effect": Normal}
_OPTIONS = {"position_bias", "tie_judges", "n_judges", "difficulty", "n_cov"}


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
        Header, then ``a, b, e`` (C each), ``n`` (C × 5), ``x`` (C × K), ``hum_a, hum_b`` (H
        each), ``hum_n`` (H × 2), ``hum_x`` (H × K), the tie index of every judge (E; −1: none).
    """
    if not accepts(priors, options):
        raise ValueError(f"the 'bt' fast path states no difficulty and the declared prior families with scalar "
                         f"parameters; got options {options} and\n{priors}")
    (N, E, C, H, K, T), parts = _cells(arrays, options, n_systems, with_h=False)
    pr = priors
    header = np.zeros(_HEADER)
    header[:14] = [N, E, C, H, K, T, float(bool(options.get("position_bias", True))),
                   _par(pr.scores, "mu"), _par(pr.scores, "sigma"), _par(pr.beta, "mu"),  # type: ignore[attr-defined]
                   _par(pr.beta, "sigma"), _par(pr.nu, "sigma"), _par(pr.effect, "mu"),  # type: ignore[attr-defined]
                   _par(pr.effect, "sigma")]  # type: ignore[attr-defined]
    return np.concatenate([header, *parts])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def logp_grad(x, buf, grad):
    """Log-density of the unconstrained vector ``x`` (module docstring); fills ``grad``.

    A probability that under- or overflows gives −inf or nan (numpy's error model), which nutpie
    counts as a divergence.
    """
    N, E, C, H, K = int(buf[0]), int(buf[1]), int(buf[2]), int(buf[3]), int(buf[4])
    pb = buf[6] != 0.0
    mu_s, sd_s, mu_b, sd_b, tau_n, mu_e, sd_e = buf[7], buf[8], buf[9], buf[10], buf[11], buf[12], buf[13]
    ca, cb, ce = _HEADER, _HEADER + C, _HEADER + 2 * C
    cn = _HEADER + 3 * C
    cx = cn + 5 * C
    oh = cx + C * K
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
    # tables: e^h = r_a / r_b · c_e, with r = exp((s − max s) / 2) and c = exp(β / 2)
    r = np.empty(N)
    smax = s.max()
    for i in range(N):
        r[i] = math.exp(0.5 * (s[i] - smax))
    cj = np.empty(E)
    for j in range(E):
        cj[j] = math.exp(0.5 * beta[j])
    g_s = np.zeros(N)
    g_beta = np.zeros(E)
    g_nu = np.zeros(E)
    g_eff = np.zeros(K)
    for c in range(C):
        a = int(buf[ca + c])
        b = int(buf[cb + c])
        e = int(buf[ce + c])
        nA = buf[cn + 5 * c]
        nB = buf[cn + 5 * c + 1]
        nT = buf[cn + 5 * c + 2]
        sA = buf[cn + 5 * c + 3]
        sB = buf[cn + 5 * c + 4]
        if K == 0 and r[b] > 0.0 and r[a] > 0.0:
            h = 0.5 * (s[a] - s[b] + beta[e])
            u = r[a] / r[b] * cj[e]
        else:
            d = s[a] - s[b] + beta[e]
            for k in range(K):
                d += buf[cx + c * K + k] * x[q_eff + k]
            h = 0.5 * d
            u = math.exp(h)
        iu = 1.0 / u
        ab = u + iu
        z = ab + nu[e]
        nh = nA + nB + nT
        total += (nA - nB) * h - nh * math.log(z)
        gh = (nA - nB) - nh * (u - iu) / z
        if nT != 0.0:
            total += nT * lnu[e]
        if tied[e]:
            g_nu[e] += nT / nu[e] - nh / z
        ss = sA + sB
        if ss != 0.0:
            total += (sA - sB) * h - ss * math.log(ab)
            gh += (sA - sB) - ss * (u - iu) / ab
        gh *= 0.5
        g_s[a] += gh
        g_s[b] -= gh
        g_beta[e] += gh
        for k in range(K):
            g_eff[k] += gh * buf[cx + c * K + k]
    total += _human_cells(x, buf, oh, H, K, s, g_s, g_eff)
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
fast_path = register_kernel(
    "bt", pack=pack_data, kernel=logp_grad, expand=expand, layout=_layout, log_sites=("nu",), accepts=accepts,
    option_cases=[
        {"position_bias": True, "tie_judges": (1,), "n_judges": 3},
        {"position_bias": False, "tie_judges": (), "n_judges": 3},
        {"position_bias": True, "tie_judges": (0, 2), "n_judges": 3, "n_cov": 1},
    ],
)
