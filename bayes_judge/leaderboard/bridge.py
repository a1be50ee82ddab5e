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
(:func:`fit_score_bridge`) to panels with known human scores; with human labels the leaderboard
learns the judges' bias itself (``system_bias``) and no bridge is applied.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["ScoreBridge", "SCORE_BRIDGE", "bridge_scores", "fit_score_bridge", "panel_fit"]


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
    h = lam * s + tau * rng.standard_normal((n, k))
    return h - h.mean(axis=1, keepdims=True)


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
