"""Leaderboard models: systems ranked across prompts, each declared once (Gao et al. 2024 and Liusie et al. 2024 (PoE) joined).

Both declarations read the cell counts of :class:`bayes_judge.leaderboard.encode.LeaderboardData`
(``d.sys_a``, ``d.sys_b``, ``d.judge``, ``d.h``, ``d.n`` with columns ``[n_A, n_B, n_tie, soft_A,
soft_B]``, the human-label cells ``d.hum_*``) with dims ``system`` (N), ``judge`` (E), ``cell``
(C), ``hcell`` (H), ``prompt``, ``covariate``.  Every model has the same scores on the logit
scale of the *human* preference::

    s_raw_i ~ Normal(0, σ_s),  s = s_raw − mean(s_raw)                   (sum to zero)
    d = s_A − s_B  [· exp(u_prompt)]  [+ x·β]                             (Bradley-Terry, Liusie et al. 2024 (PoE) eq. 1-2)

so that σ(s_i − s_j) is the probability that a person prefers system i's answer to system j's.

``"bt-judges"`` (the default).  Every judgment has a latent human preference ``h`` (A or B better),
``P(h = A) = σ(d)`` (Bradley-Terry); judge ``e`` sees it through its own discrimination ``α_e``
(accuracy ``q_e = σ(α_e)``), position bias ``β_e``, its own preference for some systems
``δ_e`` (``system_bias``; ``δ_{e,i} = σ_δ z_{e,i}``, centred per judge, partially pooled) and a
tie threshold ``τ_e`` (an ordered logit over B < tie < A)::

    η = ±α_e + β_e + δ_{e,A} − δ_{e,B}   (+ when h = A)
    P(v = A | h) = σ(η − τ_e),  P(v = B | h) = σ(−η − τ_e),  P(v = tie | h) = 1 − P(A | h) − P(B | h)

The preference is marginalized, ``P(v) = σ(d) P(v | A) + σ(−d) P(v | B)``, as Gao et al. 2024's Model 1
marginalizes the true label; where a human labelled the comparison, ``h`` is known and the
judgment scores ``P(v | h)`` (the labels themselves score ``log σ(±d)`` once per comparison).  A
judgment with a probability ``p_a`` scores ``p log P̃(A) + (1 − p) log P̃(B)`` with ``P̃`` the
verdict probabilities given no tie: Liusie et al. 2024 (PoE)'s soft Bradley-Terry expert (§3.2) applied to the
judge's marginal verdict probability.  Each judgment marginalizes its own ``h``: judgments of
one comparison by several judges are independent given the scores, not given one shared
preference (real judges' errors correlate with each other — ``benchmarks/real_calibration.py`` —
so a shared latent would count their agreement as independent evidence about ``h``), and so the
likelihood depends on the data only through counts per (system pair, judge, order, label,
outcome).  The judges' own system preferences are what real judges add beyond noise (a judge
that likes one system's style more than people do); without them the model reads every judge
bias as a human preference and its intervals miss the human scores (``benchmarks/
leaderboard_real.py``).  They are told apart from the human scores by human labels; without
labels only their prior (and their disagreement between judges) bounds them, and the scores'
intervals widen accordingly.

``"bt"``: the judges report the preference itself (no accuracy; Chatbot Arena's human votes),
with Davidson's ties and a position shift per judge::

    P(A), P(tie), P(B) ∝ e^{(d + β_e)/2}, ν_e, e^{−(d + β_e)/2}          (Davidson 1970)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .priors import HalfNormal, Normal, Prior, Priors
from .registry import generative_model

__all__ = ["JudgedBTPriors", "DavidsonPriors", "judged_bradley_terry", "davidson_bradley_terry", "DIMS"]


@dataclass(frozen=True)
class JudgedBTPriors(Priors):
    """Priors of ``bt-judges``.

    ``scores``: every system's raw score (logit scale of the human preference); ``alpha``: a
    judge's discrimination (its accuracy is σ(α); HalfNormal keeps judges better than chance, with
    a median accuracy of 0.84 a priori); ``beta``: position bias (logit shift toward A); ``tau``:
    tie threshold of judges that say "tie"; ``system_bias``: sd of a judge's own preference for
    some systems (``system_bias=True``); ``difficulty``: sd of the per-prompt log-scale of the
    score differences; ``effect``: covariate coefficients.
    """

    scores: Prior = Normal(0, 1.5)
    alpha: Prior = HalfNormal(2.5)
    beta: Prior = Normal(0, 1)
    tau: Prior = HalfNormal(1)
    system_bias: Prior = HalfNormal(0.5)
    difficulty: Prior = HalfNormal(0.5)
    effect: Prior = Normal(0, 1)


@dataclass(frozen=True)
class DavidsonPriors(Priors):
    """Priors of ``bt``: scores, position bias and covariates as :class:`JudgedBTPriors`;
    ``nu`` Davidson's tie weight per judge that says "tie"."""

    scores: Prior = Normal(0, 1.5)
    beta: Prior = Normal(0, 1)
    nu: Prior = HalfNormal(1)
    difficulty: Prior = HalfNormal(0.5)
    effect: Prior = Normal(0, 1)


def _scores(d: Any, prior: Any) -> Any:
    import pymc as pm

    s_raw = prior.scores.rv("s_raw", dims="system")
    return pm.Deterministic("s", s_raw - s_raw.mean(), dims="system")


def _differences(d: Any, prior: Any, s: Any, *, difficulty: bool, n_cov: int) -> tuple[Any, Any]:
    """Score differences of the judgment cells (C,) and of the human-label cells (H,)."""
    import pymc as pm
    import pytensor.tensor as pt

    diff = s[d.sys_a] - s[d.sys_b]
    hdiff = s[d.hum_a] - s[d.hum_b]
    if difficulty:
        sd = prior.difficulty.rv("difficulty_sd")
        z = pm.Normal("u_raw", 0.0, 1.0, dims="prompt")
        u = pm.Deterministic("u", sd * z, dims="prompt")
        diff, hdiff = diff * pt.exp(u[d.item]), hdiff * pt.exp(u[d.hum_item])
    if n_cov:
        b = prior.effect.rv("effect", dims="covariate")
        diff, hdiff = diff + (d.x * b).sum(axis=-1), hdiff + (d.hum_x * b).sum(axis=-1)
    return diff, hdiff


def _per_judge(prior_field: Prior, name: str, tie_judges: tuple[int, ...], n_judges: int) -> Any:
    """A tie parameter declared for the judges that tie only (dim ``tie_judge``), 0 elsewhere."""
    import pytensor.tensor as pt

    full = pt.zeros(n_judges)
    if not tie_judges:
        return full
    return pt.set_subtensor(full[np.asarray(tie_judges)], prior_field.rv(name, dims="tie_judge"))


def _observe(d: Any, log_p: Any, hdiff: Any) -> None:
    """The judgments' counts score ``Σ n_v log P_v`` per cell; the human labels ``log σ(±d)``."""
    import pymc as pm
    import pytensor.tensor as pt

    pm.CustomDist("v", log_p, logp=lambda value, lp: value * lp, observed=d.n, dims=("cell", "outcome"))
    hl = pt.stack([-pt.softplus(-hdiff), -pt.softplus(hdiff)], axis=-1)
    pm.CustomDist("human", hl, logp=lambda value, lp: value * lp, observed=d.hum_n, dims=("hcell", "hum_outcome"))


def _log_table(p_a: Any, p_b: Any, p_t: Any) -> Any:
    import pytensor.tensor as pt

    lpa, lpb = pt.log(p_a), pt.log(p_b)
    lab = pt.log(p_a + p_b)
    return pt.stack([lpa, lpb, pt.log(p_t), lpa - lab, lpb - lab], axis=-1)


def _system_bias_scale(p: Prior) -> Any:
    """The scale of ``δ = scale · (z − z̄)``.  For a HalfNormal(σ₀) prior on ``σ_δ``, a signed scale
    ``u ~ Normal(0, σ₀)`` with ``σ_δ = |u|`` (a deterministic): parameter expansion (Gelman 2006,
    §3; Gelman, van Dyk, Huang & Boscardin 2008).  ``z``'s prior is symmetric, so ``u z`` has the
    distribution of ``|u| z`` and ``δ``'s prior is exactly that of ``σ_δ (z − z̄)`` with ``σ_δ ~
    HalfNormal(σ₀)``; but ``u`` passes through 0 where ``log σ_δ`` has an exponential tail.  When
    the judges have no system preferences, ``σ_δ``'s posterior piles up near 0, and on the log
    scale its effective sample size was 300-440 of 4,000 draws with r_hat up to 1.016 (δ's too);
    signed, 590-860 and 1.001-1.009 (``benchmarks/results/bench_leaderboard.md``).  Other prior
    families: ``σ_δ`` itself, on the log scale."""
    import pymc as pm
    import pytensor.tensor as pt

    if not isinstance(p, HalfNormal):
        return p.rv("system_bias_sd")
    u = pm.Normal("system_bias_signed", 0.0, np.asarray(p.sigma, dtype=float))
    pm.Deterministic("system_bias_sd", pt.abs(u))
    return u


#: the dims of every variable the two declarations may declare, for readers that would otherwise
#: build the PyMC model to ask it (a Laplace or fast-path fit: PyMC's import and the build, 0.5 s in
#: a fresh process); a test checks them against the models' own under every option
DIMS: dict[str, tuple[str, ...]] = {
    "s_raw": ("system",), "s": ("system",), "difficulty_sd": (), "u_raw": ("prompt",), "u": ("prompt",),
    "effect": ("covariate",), "tau": ("tie_judge",), "nu": ("tie_judge",), "alpha": ("judge",), "q": ("judge",),
    "beta": ("judge",), "delta_raw": ("judge", "system"), "delta": ("judge", "system"), "system_bias_signed": (),
    "system_bias_sd": (),
}


def leaderboard_start(d: Any, prior: Priors) -> dict[str, Any]:
    """Start of every chain: scores 0, judges at their prior means, the signed scale of their
    system preferences at a tenth of its prior mean."""
    out: dict[str, Any] = {"s_raw": 0.0}
    for name in ("alpha", "tau", "nu", "difficulty_sd", "system_bias_sd"):
        field = name.removesuffix("_sd")
        if hasattr(prior, field):
            out[name] = np.asarray(getattr(prior, field).mean(), float)
    if "system_bias_sd" in out:
        # the signed scale (_system_bias_scale) moves on a linear scale, not a log one: from the
        # prior mean (0.4) to a posterior near 0 the first warm-up draws took trees of 1,023 steps
        # (1e6 comparisons: 25,000-31,000 warm-up steps a chain against 17,700-19,400 from 0.04)
        out["system_bias_signed"] = 0.1 * out["system_bias_sd"]
    return out


@generative_model(
    "bt-judges", task="leaderboard", priors=JudgedBTPriors, observed=("v", "human"),
    summary=("s", "q", "beta"), init=leaderboard_start,
    reference="Liusie et al. 2024 (PoE) eq. 1-2 (Bradley-Terry scores), §3.2 (soft expert); Gao et al. 2024 Model 1 (judges "
              "marginalized over the latent human preference, eq. 5-6)",
)
def judged_bradley_terry(d: Any, prior: JudgedBTPriors, *, predict: bool = False, position_bias: bool = True,
                         tie_judges: tuple[int, ...] = (), n_judges: int = 1, difficulty: bool = False,
                         n_cov: int = 0, system_bias: bool = True) -> None:
    """Bradley-Terry scores of the human preference, seen through judges with errors (module docstring)."""
    import pymc as pm
    import pytensor.tensor as pt

    s = _scores(d, prior)
    diff, hdiff = _differences(d, prior, s, difficulty=difficulty, n_cov=n_cov)
    alpha = prior.alpha.rv("alpha", dims="judge")
    pm.Deterministic("q", pm.math.sigmoid(alpha), dims="judge")
    beta = prior.beta.rv("beta", dims="judge") if position_bias else pt.zeros(n_judges)
    tau = _per_judge(prior.tau, "tau", tie_judges, n_judges)
    no_tie = np.ones(n_judges)
    no_tie[list(tie_judges)] = 0.0
    e = d.judge
    sig = pm.math.sigmoid
    w_a = pt.switch(pt.eq(d.h, 0), sig(diff), pt.switch(pt.eq(d.h, 1), 1.0, 0.0))
    shift = beta[e]
    if system_bias:  # a judge's own preference for some systems, beyond the human one (centred per judge)
        scale = _system_bias_scale(prior.system_bias)
        z = pm.Normal("delta_raw", 0.0, 1.0, dims=("judge", "system"))
        delta = pm.Deterministic("delta", scale * (z - z.mean(axis=1, keepdims=True)), dims=("judge", "system"))
        shift = shift + delta[e, d.sys_a] - delta[e, d.sys_b]
    eta_a, eta_b = alpha[e] + shift, -alpha[e] + shift
    p_a = w_a * sig(eta_a - tau[e]) + (1.0 - w_a) * sig(eta_b - tau[e])
    p_b = w_a * sig(-eta_a - tau[e]) + (1.0 - w_a) * sig(-eta_b - tau[e])
    # P(tie) = 1 − P(A) − P(B); for a judge that never ties its count is 0 and the value is set
    # to 1 (a finite log)
    p_t = 1.0 - p_a - p_b + pt.as_tensor(no_tie)[e]
    _observe(d, _log_table(p_a, p_b, p_t), hdiff)


@generative_model(
    "bt", task="leaderboard", priors=DavidsonPriors, observed=("v", "human"), summary=("s", "beta"),
    init=leaderboard_start, reference="Liusie et al. 2024 (PoE) eq. 1-2 with Davidson's ties and a position shift per judge",
)
def davidson_bradley_terry(d: Any, prior: DavidsonPriors, *, predict: bool = False, position_bias: bool = True,
                           tie_judges: tuple[int, ...] = (), n_judges: int = 1, difficulty: bool = False,
                           n_cov: int = 0) -> None:
    """Bradley-Terry-Davidson scores; the judges report the preference itself (module docstring)."""
    import pytensor.tensor as pt

    s = _scores(d, prior)
    diff, hdiff = _differences(d, prior, s, difficulty=difficulty, n_cov=n_cov)
    beta = prior.beta.rv("beta", dims="judge") if position_bias else pt.zeros(n_judges)
    nu = _per_judge(prior.nu, "nu", tie_judges, n_judges)
    has_tie = np.zeros(n_judges)
    has_tie[list(tie_judges)] = 1.0
    x = 0.5 * (diff + beta[d.judge])
    ea, eb = pt.exp(x), pt.exp(-x)
    z = ea + eb + nu[d.judge]
    p_t = (nu[d.judge] + pt.as_tensor(1.0 - has_tie)[d.judge]) / z
    _observe(d, _log_table(ea / z, eb / z, p_t), hdiff)
