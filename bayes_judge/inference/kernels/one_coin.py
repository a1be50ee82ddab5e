"""Fast NUTS for the one-coin and consensus models: nutpie driven by a numba C callback.

The same construction as :mod:`bayes_judge.inference.kernels.dawid_skene` (read its docstring first) for
the declarations ``"one-coin"`` (:func:`bayes_judge.generative.winrate_models.one_coin`) and,
without human labels, ``"consensus"`` (:func:`~bayes_judge.generative.winrate_models.consensus`).
Without labels the consensus model's likelihood is the one-coin likelihood at the consensus rate
``p_c`` (``c p + (1 − c)(1 − p) = p_c``), and ``v`` enters through its U(0, 1) prior alone, so
one kernel serves both: parameters ``u = logit x`` for x in (p or p_c, q), plus ``logit v`` for
the consensus model.  With ``A_k, B_k`` the two branches of pattern k (Gao et al. 2024 eq. 9 with
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
``κ ~ Beta(a, 1)``).  The consensus model's ``p`` and ``agreement`` are derived from the draws
of ``(p_c, v)`` by the declaration's own functions
(:func:`~bayes_judge.generative.winrate_models.consensus_kappa`, ``consensus_p``).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .._nutpie import make_model, run
from .dawid_skene import _logit, _patterns, pack_buffer
from .dawid_skene import onecoin_expand as expand
from .dawid_skene import onecoin_logp_grad as logp_grad

__all__ = ["pack_data", "logp_grad", "expand"]



def pack_data(patterns, prior, *, symmetric: bool = False, kappa_a: float = 0.0) -> np.ndarray:
    """The kernel's buffer (:func:`~bayes_judge.inference.kernels.dawid_skene.pack_buffer`): priors of p and
    q; header ``symmetric`` and ``kappa_a``, the consensus model's ``κ ~ Beta(a, 1)`` (0: the
    one-coin model), whose ``p_c`` takes ``π_a(p_c)`` with the priors on p set to Beta(1, 1)
    (the logit Jacobian alone)."""
    pairs = [(prior.alpha_p, prior.beta_p), (prior.alpha_q, prior.beta_q)]
    return pack_buffer(patterns, pairs, [float(symmetric), float(kappa_a)])


def _derive_consensus(post: dict, a: float) -> None:
    """The consensus declaration's Deterministics from its sampled (p_c, v), in place."""
    from ...generative.winrate_models import consensus_kappa, consensus_p

    kappa = consensus_kappa(post["p_consensus"], post["v"], a)
    post["p"] = consensus_p(post["p_consensus"], kappa)
    post["agreement"] = 0.5 * (1.0 + kappa)


def _prior_arrays(name: str, priors, P: int, E: int) -> SimpleNamespace:
    b = np.broadcast_to
    pp = (1.0, 1.0) if name == "consensus" else (priors.p.alpha, priors.p.beta)  # p_c: π_a in the kernel
    return SimpleNamespace(
        alpha_p=b(np.asarray(pp[0], float), (P,)).copy(), beta_p=b(np.asarray(pp[1], float), (P,)).copy(),
        alpha_q=b(np.asarray(priors.q.alpha, float), (P, E)).copy(),
        beta_q=b(np.asarray(priors.q.beta, float), (P, E)).copy(),
    )


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
        shapes = {first: (P,), **({"v": (P,)} if name == "consensus" else {}), "q": (P, E)}
        dims = {k: ("pair", "judge") if k == "q" else ("pair",) for k in shapes}
        model = make_model(logp_grad, expand, buf=buf, init_flat=np.concatenate(parts), shapes=shapes,
                           dims=dims, coords={"pair": np.arange(P), "judge": np.arange(E)})
        post, stats = run(model, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept)
        if name == "consensus":
            _derive_consensus(post, float(priors.kappa.alpha))
        return post, stats

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


#: this module's fast paths by (task, model), collected by :mod:`bayes_judge.inference.fastpaths`
FAST_PATHS = {("win-rate", name): _make(name) for name in ("one-coin", "consensus")}
