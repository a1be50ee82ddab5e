"""How a posterior is drawn, stated once.

Every entry point that samples (:func:`bayes_judge.win_rate`, :func:`bayes_judge.rank` with
``bayesian=True``, :func:`bayes_judge.leaderboard`, simulation-based calibration, the command line)
takes PyMC's keywords (``sampler``, ``chains``, ``draws``, ``tune``, ``seed``, ``target_accept``)
with the defaults of :data:`SAMPLING`, checks them once by building a :class:`Sampling`, and hands
that one object down to :func:`bayes_judge.inference.fit_model`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Sampling", "SAMPLING", "SAMPLERS", "APPROXIMATE", "FAST_PATH", "TRANSPORTED"]

#: NUTS in three implementations of one declaration
SAMPLERS = ("nutpie", "pymc", "numpyro")
#: samplers that approximate the posterior (they say so in ``attrs["approximate"]``)
APPROXIMATE = ("laplace",)
#: ``attrs["sampler"]`` of draws by nutpie on a model's registered fast path
FAST_PATH = "nutpie (fast path)"
#: ``attrs["sampler"]`` of an update whose draws are an earlier fast-path fit's, moved and reweighed
#: (:mod:`bayes_judge.inference.transport`)
TRANSPORTED = "transport of the earlier nutpie draws (fast path)"


@dataclass(frozen=True)
class Sampling:
    """NUTS settings (PyMC's names and meanings).

    Attributes
    ----------
    sampler : {"nutpie", "pymc", "numpyro", "laplace"}
        NUTS in one of three samplers, or the Laplace approximation where a model offers one.
    chains, draws : int
        Chains, and kept draws per chain (``chains × draws`` draws in all).
    tune : int
        Warm-up steps per chain (not kept; unused by ``"laplace"``).
    seed : int
        The one seed of the fit: the same seed gives the same draws.
    target_accept : float
        NUTS's target acceptance rate in (0, 1); raise it when a fit reports divergences.

    Examples
    --------
    >>> from bayes_judge.inference import SAMPLING
    >>> SAMPLING.replace(draws=500, target_accept=0.95)
    Sampling(sampler='nutpie', chains=4, draws=500, tune=1000, seed=0, target_accept=0.95)
    >>> SAMPLING.replace(chains=0)
    Traceback (most recent call last):
    ...
    ValueError: chains must be a positive integer, got 0
    """

    sampler: str = "nutpie"
    chains: int = 4
    draws: int = 1000
    tune: int = 1000
    seed: int = 0
    target_accept: float = 0.8

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS + APPROXIMATE:
            raise ValueError(f"sampler must be one of {SAMPLERS + APPROXIMATE}, got {self.sampler!r}")
        for name in ("chains", "draws"):
            val = getattr(self, name)
            if isinstance(val, bool) or not isinstance(val, int | np.integer) or val < 1:
                raise ValueError(f"{name} must be a positive integer, got {val!r}")
        if isinstance(self.tune, bool) or not isinstance(self.tune, int | np.integer) or self.tune < 0:
            raise ValueError(f"tune must be a non-negative integer, got {self.tune!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if not 0.0 < float(self.target_accept) < 1.0:
            raise ValueError(f"target_accept must be in (0, 1), got {self.target_accept!r}")

    def replace(self, **changes: object) -> Sampling:
        """A copy with some settings changed (checked again)."""
        return replace(self, **changes)  # type: ignore[arg-type]


#: the defaults of every sampling entry point
SAMPLING = Sampling()
