"""People's leaderboard scores without labels: the judges' reading widened by what it cannot tell.

A leaderboard fitted on LLM judges alone reads people's Bradley-Terry scores ``s`` through the
judges' accuracies (``bt-judges``).  Nothing in the verdicts says how far that reading lies from
people's: on real panels the experts' scores are a multiple of it, and each system is off by the
judges' own taste for its texts (``benchmarks/leaderboard_bridge.py``).  The score bridge states
both as a prior and carries them into the posterior, draw by draw::

    h_i = λ s_i + ε_i − mean_k(λ s_k + ε_k)
    λ ~ LogNormal(log λ_med, σ_λ)      one per fit: people's scale against the judges' reading
    ε_i ~ Normal(0, τ),  τ ~ LogNormal(log τ_med, σ_τ)   the judges' taste for system i

``λ > 0`` keeps the order of the judges' reading, so the ranks and P(best) widen by ``ε`` only;
the scores' magnitudes (and P(a person prefers i to j)) widen by ``λ`` too.  The prior is fitted
(:func:`fit_score_bridge`) to panels with known human scores.

With human labels the same bridge is learnt from them (:func:`calibrate_bridge`): the labels
score ``h`` by Bradley-Terry, ``n_A ~ Binomial(n_A + n_B, σ(h_a − h_b))``, so λ and each system's
ε move from their prior as far as the labels say, and the intervals narrow from the judges-only
ones as labels come in, never below what the labels support.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["ScoreBridge", "SCORE_BRIDGE", "bridge_map", "bridge_scores", "calibrate_bridge", "fit_score_bridge", "panel_fit"]


@dataclass(frozen=True)
class ScoreBridge:
    """The prior of the score bridge: ``λ ~ LogNormal(log lam_median, lam_sd)``, ``τ ~
    LogNormal(log tau_median, tau_sd)``, ``ε_i ~ Normal(0, τ)``.

    Pass one as ``bj.leaderboard(..., bridge=ScoreBridge(...))`` to state another prior (e.g. one
    fitted by :func:`fit_score_bridge` to your own panels with known human scores).

    Examples
    --------
    >>> import numpy as np
    >>> from bayes_judge.leaderboard.bridge import SCORE_BRIDGE, ScoreBridge, bridge_scores
    >>> SCORE_BRIDGE.describe()
    "people's scores = λ × the judges' reading + ε per system, λ ~ LogNormal(log 1.35, 0.42), ε ~ Normal(0, τ), τ ~ LogNormal(log 0.41, 0.33)"
    >>> reading = np.array([[-1.0, 0.0, 1.0]] * 4000)       # draws x systems
    >>> h = bridge_scores(reading, ScoreBridge(2.0, 0.1, 0.2, 0.1), np.random.default_rng(0))
    >>> np.round(h.mean(axis=0), 1)
    array([-2.,  0.,  2.])
    """

    lam_median: float
    lam_sd: float
    tau_median: float
    tau_sd: float

    def __post_init__(self) -> None:
        for name in ("lam_median", "tau_median"):
            if not float(getattr(self, name)) > 0:
                raise ValueError(f"ScoreBridge: {name} must be positive, got {getattr(self, name)!r}")
        for name in ("lam_sd", "tau_sd"):
            if not float(getattr(self, name)) >= 0:
                raise ValueError(f"ScoreBridge: {name} must be non-negative, got {getattr(self, name)!r}")

    def describe(self) -> str:
        return (f"people's scores = λ × the judges' reading + ε per system, λ ~ LogNormal(log {self.lam_median:.2f}, "
                f"{self.lam_sd:.2f}), ε ~ Normal(0, τ), τ ~ LogNormal(log {self.tau_median:.2f}, {self.tau_sd:.2f})")

    def to_json(self) -> str:
        return json.dumps({k: round(float(v), 4) for k, v in asdict(self).items()})


#: :func:`fit_score_bridge` of the ten bundled panels of SummEval (4 aspects) and HANNA (6
#: criteria), reaching λ = 1 (``python benchmarks/leaderboard_bridge.py --fit-prior`` prints it)
SCORE_BRIDGE = ScoreBridge(lam_median=1.35, lam_sd=0.42, tau_median=0.41, tau_sd=0.33)


def bridge_scores(s: np.ndarray, prior: ScoreBridge, rng: np.random.Generator) -> np.ndarray:
    """Draws of people's scores from draws of the judges' reading.

    Parameters
    ----------
    s : (draws, systems) array
        The judges' reading (posterior draws of a judges-only leaderboard's scores).
    prior : ScoreBridge
    rng : numpy Generator

    Returns
    -------
    (draws, systems) array, centred per draw.
    """
    s = np.asarray(s, dtype=float)
    n, k = s.shape
    lam = np.exp(np.log(prior.lam_median) + prior.lam_sd * rng.standard_normal((n, 1)))
    tau = np.exp(np.log(prior.tau_median) + prior.tau_sd * rng.standard_normal((n, 1)))
    return bridge_map(s, lam, tau, rng.standard_normal((n, k)))


def bridge_map(reading, lam, tau, z):  # numpy arrays or PyTensor tensors: no annotation fits both
    """The score bridge, stated once for the prior's draws (:func:`bridge_scores`) and the model
    the labels update (:func:`calibrate_bridge`): ``h = λ s + τ z``, ``z ~ Normal(0, 1)`` per
    system, centred over the systems (the last axis)."""
    h = lam * reading + tau * z
    return h - h.mean(axis=-1, keepdims=True)


def calibrate_bridge(reading: np.ndarray, hum_a: np.ndarray, hum_b: np.ndarray, hum_n: np.ndarray,
                     prior: ScoreBridge, *, sampler: str = "nutpie", chains: int = 4, draws: int = 1000,
                     tune: int = 1000, seed: int = 0, target_accept: float = 0.9,
                     pointwise: bool = True, earlier: dict | None = None) -> dict:
    """People's scores from the judges' reading and human labels: the score bridge learnt from them.

    ::

        s_J ~ Normal(m, Σ_J)                             the judges' reading (its draws' Gaussian)
        λ ~ LogNormal(log λ_med, σ_λ),  τ ~ LogNormal(log τ_med, σ_τ),  z_i ~ Normal(0, 1)
        h = λ s_J + τ z − mean                           people's scores (bridge_map)
        n_A ~ Binomial(n_A + n_B, σ(h_a − h_b))          each labelled pair (Bradley-Terry)

    The judges' reading enters through the mean ``m`` and covariance ``Σ_J`` of its posterior
    draws (a judges-only fit), so the labels calibrate the bridge without refitting the judges.
    With ``sampler="nutpie"`` (or ``"laplace"``) the posterior of ``(h, λ, τ)`` is sampled by
    nutpie on a hand-written kernel that integrates ``s_J`` and ``z`` out
    (:mod:`bayes_judge.inference.kernels.bridge`: the scores where the labels pin them, 402 →
    202 coordinates at 200 systems); other samplers take this PyMC model as written.

    Parameters
    ----------
    reading : (draws, N) array
        Centred posterior draws of a judges-only leaderboard's scores.
    hum_a, hum_b : (H,) int
        The systems of each labelled pair.
    hum_n : (H, 2) array
        People's preferences for ``hum_a`` and for ``hum_b``.
    prior : ScoreBridge
    sampler, chains, draws, tune, seed, target_accept
        NUTS settings.
    pointwise : bool
        Return ``log_lik_human`` (draws × labelled pairs floats: 250 MB for 4,000 draws of 8,000
        pairs, so the leaderboard asks for it only where it keeps its pointwise values).
    earlier : dict, optional
        An earlier fit of the bridge to move onto this one (a leaderboard update, with nutpie):
        its ``reading`` (draws, N₀), ``hum_a``, ``hum_b``, ``hum_n``, its NUTS draws ``s``
        (chains, draws, N₀), ``bridge_lambda``, ``bridge_tau``, and ``kept`` (N₀,), where its
        systems sit among these.  Its draws are moved by the map between the two posteriors'
        Laplace approximations and importance-resampled
        (:func:`bayes_judge.inference.transport.transport_draws`) where the weights serve
        (Pareto k-hat ≤ 0.7, importance ESS ≥ a quarter of the draws); otherwise this bridge is
        sampled afresh.

    Returns
    -------
    dict
        ``s`` (chains, draws, N) people's scores, centred; ``bridge_lambda``, ``bridge_tau``
        (chains, draws); ``diverging`` (chains, draws); ``log_lik_human`` (chains, draws, H; with
        ``pointwise``), each labelled pair's log-likelihood without the binomial coefficient (as
        the leaderboard models' pointwise values); with ``earlier``, ``moved``: the transport's
        ``pareto_k`` and ``ess_importance`` where its draws served, else ``why`` they did not.
    """
    reading = np.asarray(reading, dtype=float)
    a, b = np.asarray(hum_a, dtype=np.int64), np.asarray(hum_b, dtype=np.int64)
    n = np.asarray(hum_n, dtype=float).reshape(-1, 2)
    out: dict | None = None
    moved: dict | None = None
    if earlier is not None and sampler in ("nutpie", "laplace"):
        out, moved = _transport_bridge(reading, a, b, n, prior, earlier, chains=chains, draws=draws, seed=seed)
    if out is None and sampler in ("nutpie", "laplace"):
        out = _bridge_kernel(reading, a, b, n, prior, chains=chains, draws=draws, tune=tune, seed=seed,
                             target_accept=target_accept)
    elif out is None:
        out = _bridge_pymc(reading, a, b, n, prior, sampler=sampler, chains=chains, draws=draws, tune=tune,
                           seed=seed, target_accept=target_accept)
    if pointwise:  # each labelled pair's log-likelihood, counts × log σ(±d)
        d = out["s"][..., a] - out["s"][..., b]
        out["log_lik_human"] = n[:, 0] * -np.logaddexp(0.0, -d) + n[:, 1] * -np.logaddexp(0.0, d)
    if earlier is not None:
        out["moved"] = moved or {"why": f"sampler {sampler!r} samples the bridge's PyMC model"}
    return out


def _transport_bridge(reading: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray, prior: ScoreBridge,
                      earlier: dict, *, chains: int, draws: int, seed: int) -> tuple[dict | None, dict]:
    """The earlier bridge's draws moved onto this one (:func:`calibrate_bridge`'s ``earlier``):
    ``(draws, info)``, or ``(None, {"why": ...})`` where they cannot serve."""
    from ..inference.kernels import bridge as kernel
    from ..inference.laplace import ESS_SHARE
    from ..inference.transport import resample_within_chains, transport_draws

    N = reading.shape[1]
    s0 = np.asarray(earlier["s"], dtype=float)
    C0, D0, N0 = s0.shape
    if (C0, D0) != (chains, draws):
        return None, {"why": f"its {C0} x {D0} draws are not the {chains} x {draws} asked for"}
    # moved on the centred coordinates (the scores where they are; the non-centred ξ turn with the
    # reading's basis, which the update changes), τ held where each draw has it and the rest moved
    # between its modes given τ (transport_draws(held=)): where the labels are few a system, τ's joint
    # mode with the scores is the corner τ → 0; where they are many, τ sits skewed against its prior
    # and its own map kept less weight (200 systems, 10% labelled, 10% more: importance ESS 2,095 →
    # 2,784 of 4,000 at 100,000 battles, 3,099 → 3,816 at 1,000,000; 1% labelled at 100,000: 2,129)
    new = kernel.pack_data(reading, a, b, n, prior, centred=True)
    old = kernel.pack_data(earlier["reading"], earlier["hum_a"], earlier["hum_b"], earlier["hum_n"], prior,
                           centred=True)
    kept = np.asarray(earlier["kept"], dtype=np.int64)
    lam = np.asarray(earlier["bridge_lambda"], dtype=float).reshape(-1)
    tau = np.asarray(earlier["bridge_tau"], dtype=float).reshape(-1)
    rng = np.random.default_rng([seed, 104729])
    # h̃ = h + c, c ~ Normal(0, 1/N₀): its exact posterior, which nothing else sees
    scores = s0.reshape(-1, N0) + rng.standard_normal((C0 * D0, 1)) / np.sqrt(N0)
    x_old = np.column_stack([scores, np.log(lam), np.log(tau)])
    try:
        y, _, wts, info = transport_draws((kernel.logp_grad, old), (kernel.logp_grad, new), x_old,
                                          kept=np.r_[kept, N, N + 1], n_new=N + 2, seed=seed,
                                          held=np.array([N0 + 1]))
    except ValueError as err:
        return None, {"why": str(err)}
    # kept from a quarter of the draws (ESS_SHARE, what a Laplace fit returns), not the judges' half
    # (MIN_SHARE): the bridge's τ sits skewed against its prior, and a map taken from the modes keeps
    # less of the draws' weight (1,000,000 battles with 10% labels, 10% more: ESS 3,171 of 4,000 with
    # τ held and the mean shift, bench_leaderboard_update.py --cases "labels (default)"; 1% labelled
    # at 100,000 battles: 1,985-2,129)
    if not (info["pareto_k"] <= 0.7 and info["ess_importance"] >= ESS_SHARE * len(y)):
        return None, {"why": f"the moved draws' weights do not serve (Pareto k-hat {info['pareto_k']:.2f}, "
                             f"importance ESS {info['ess_importance']:.0f} of {len(y)})"}
    idx = resample_within_chains(wts, chains, rng).ravel()
    flat = np.empty((len(idx), N + 2))
    for i, j in enumerate(idx):
        kernel.expand(np.ascontiguousarray(y[j]), new, flat[i])
    out = {"s": flat[:, :N].reshape(chains, draws, N), "bridge_lambda": flat[:, N].reshape(chains, draws),
           "bridge_tau": flat[:, N + 1].reshape(chains, draws), "diverging": np.zeros((chains, draws), bool)}
    return out, {"pareto_k": float(info["pareto_k"]), "ess_importance": float(info["ess_importance"]),
                 "mean_shifted": bool(info["mean_shifted"])}


def _bridge_kernel(reading: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray, prior: ScoreBridge, *,
                   chains: int, draws: int, tune: int, seed: int, target_accept: float,
                   centred: bool | None = None) -> dict:
    """:func:`calibrate_bridge` by nutpie on :mod:`bayes_judge.inference.kernels.bridge`, from the
    mode (``τ`` held at its prior's median) with the Laplace shear on ``log λ``, ``log τ`` and
    the reading's direction."""
    from ..inference._nutpie import make_model, run
    from ..inference.kernels import bridge as kernel
    from ..inference.laplace import laplace_shear

    N = reading.shape[1]
    buf = kernel.pack_data(reading, a, b, n, prior, centred=centred)
    d = kernel.n_dim(buf)
    free = np.ones(d, dtype=bool)
    free[-1] = False  # τ: with few labels its joint mode with the scores is the corner τ → 0

    def directions(x_mode: np.ndarray) -> np.ndarray:
        cols = np.zeros((d, 3))
        cols[-2, 0] = cols[-1, 1] = 1.0
        if d == N + 2:  # centred: the scores ride along λ m
            cols[:N, 2] = kernel.reading_mean(buf)
        return cols

    x0, shear = laplace_shear(kernel.logp_grad, buf, kernel.start(buf), free, directions)
    model = make_model(kernel.logp_grad, kernel.expand, buf=buf, init_flat=x0,
                       shapes={"s": (N,), "bridge_lambda": (), "bridge_tau": ()}, dims={"s": ("system",)},
                       coords={"system": np.arange(N)}, shear=shear)
    post, stats = run(model, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept)
    return {**post, "diverging": stats["diverging"]}


def _bridge_pymc(reading: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray, prior: ScoreBridge, *,
                 sampler: str, chains: int, draws: int, tune: int, seed: int,
                 target_accept: float) -> dict:
    """:func:`calibrate_bridge` as a PyMC model (``s_J = m + L u``, ``u ~ Normal(0, I)``, ``L Lᵀ = Σ_J``),
    sampled by ``sampler``."""
    import pymc as pm

    from ..inference.fit import _quiet_pymc

    N = reading.shape[1]
    m = reading.mean(axis=0)
    w, V = np.linalg.eigh(np.cov(reading, rowvar=False))
    keep = w > 1e-9 * max(float(w.max()), 1e-300)
    L = V[:, keep] * np.sqrt(w[keep])
    with pm.Model() as model:
        u = pm.Normal("u", 0.0, 1.0, shape=L.shape[1])
        # an elementwise product and a sum, not a dot: PyTensor's C dot warns where it finds no BLAS
        s_j = m + (L * u[None, :]).sum(axis=1)
        lam = pm.LogNormal("bridge_lambda", np.log(prior.lam_median), max(prior.lam_sd, 1e-6))
        tau = pm.LogNormal("bridge_tau", np.log(prior.tau_median), max(prior.tau_sd, 1e-6))
        z = pm.Normal("z", 0.0, 1.0, shape=N)
        h = pm.Deterministic("s", bridge_map(s_j, lam, tau, z))
        pm.Binomial("human", n=n.sum(axis=1), logit_p=h[a] - h[b], observed=n[:, 0])
    with _quiet_pymc(), model, warnings.catch_warnings():
        # PyTensor's C compiler warns once, on a fresh cache, of no BLAS (its rewrites may make a dot)
        warnings.filterwarnings("ignore", message=".*could not link to a BLAS.*", category=UserWarning)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed, target_accept=target_accept,
                          nuts_sampler=sampler, progressbar=False, compute_convergence_checks=False)
    post = idata["posterior"]
    out = {k: post[k].to_numpy() for k in ("s", "bridge_lambda", "bridge_tau")}
    div = idata["sample_stats"].get("diverging")
    out["diverging"] = (div.to_numpy() if div is not None else np.zeros(out["bridge_tau"].shape, bool))
    return out


def panel_fit(reading: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """``(λ̂, τ̂)`` of one panel: the least-squares multiple of the (centred) judges' reading that
    gives people's scores, and the sd of what is left (``k − 2`` degrees of freedom: the centring and λ)."""
    s = np.asarray(reading, float) - np.mean(reading)
    t = np.asarray(truth, float) - np.mean(truth)
    lam = float(s @ t / (s @ s))
    res = t - lam * s
    return lam, float(np.sqrt(res @ res / max(len(t) - 2, 1)))


def fit_score_bridge(cases: Sequence[tuple[np.ndarray, np.ndarray]], *, reach: float | None = 1.0) -> ScoreBridge:
    """The prior from panels with known people's scores: ``(reading, truth)`` per panel.

    τ's median is the geometric mean of the panels' ``τ̂`` and its spread the sd of their logs.
    λ's is the same with ``reach=None``.  With ``reach`` (default 1: judges that follow the model,
    the synthetic protocol, where the reading is people's scale) λ must hold that value too: its
    median is the geometric mean of the panels' and ``reach``, and its spread puts both ``reach``
    and the largest and smallest ``λ̂`` inside its 90% interval (at least the panels' own spread).
    """
    if not cases:
        raise ValueError("fit_score_bridge: no panels")
    fits = np.array([panel_fit(r, t) for r, t in cases])
    if (fits[:, 0] <= 0).any():
        raise ValueError(f"fit_score_bridge: a panel's judges order the systems against people's (λ̂ = "
                         f"{fits[:, 0].min():.2f}); the bridge assumes λ > 0")
    logs = np.log(np.maximum(fits, 1e-6))
    sd = logs.std(axis=0, ddof=1) if len(fits) > 1 else np.zeros(2)
    lam_med, lam_sd = float(np.exp(logs[:, 0].mean())), float(sd[0])
    if reach is not None:
        if not reach > 0:
            raise ValueError(f"fit_score_bridge: reach must be positive, got {reach!r}")
        lam_med = float(np.sqrt(lam_med * reach))
        far = np.abs(np.log([*fits[:, 0], reach]) - np.log(lam_med)).max()
        lam_sd = max(lam_sd, float(far) / 1.645)
    return ScoreBridge(lam_median=lam_med, lam_sd=lam_sd, tau_median=float(np.exp(logs[:, 1].mean())),
                       tau_sd=float(sd[1]))
