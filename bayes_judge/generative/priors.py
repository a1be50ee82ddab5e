"""Prior distributions as printable objects, with their defaults stated once.

A generative model declares its priors as a frozen dataclass of :class:`Prior` fields (one
field per parameter, the default written where the field is); the declaration turns each
field into a PyMC random variable with :meth:`Prior.rv`.  The fit records the priors it used in
``idata.attrs["priors"]`` (JSON), which the report and saved runs read instead of guessing from
variable names.

>>> from bayes_judge.generative.priors import Beta
>>> Beta(2, 1)
Beta(alpha=2, beta=1)
>>> Beta(2, 1).mean()
0.6666666666666666
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

__all__ = ["Prior", "Beta", "Normal", "HalfNormal", "Priors", "priors_to_json"]


def _fmt(x: Any) -> str:
    a = np.asarray(x)
    if a.ndim == 0:
        v = float(a)
        return str(int(v)) if v.is_integer() else f"{v:.4g}"
    if a.size and np.all(a == a.flat[0]):
        return f"{_fmt(a.flat[0])} (x{a.size})"
    return f"array{a.shape}[{_fmt(a.min())}..{_fmt(a.max())}]"


def _jsonable(x: Any) -> Any:
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


@dataclass(frozen=True, repr=False)
class Prior:
    """One prior distribution; the parameters may be scalars or arrays that broadcast."""

    family: ClassVar[str] = ""

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __repr__(self) -> str:
        return f"{self.family}(" + ", ".join(f"{k}={_fmt(v)}" for k, v in self.params().items()) + ")"

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, **{k: _jsonable(v) for k, v in self.params().items()}}

    def rv(self, name: str, **kwargs: Any) -> Any:
        """The PyMC random variable ``name ~ self`` (inside a model context)."""
        import pymc as pm

        dist = getattr(pm, self.family)
        return dist(name, **{k: np.asarray(v, dtype=float) for k, v in self.params().items()}, **kwargs)

    def logp(self, value: Any) -> Any:
        """The log-density of ``value`` under this prior (a PyTensor expression)."""
        import pymc as pm

        dist = getattr(pm, self.family).dist(**{k: np.asarray(v, dtype=float) for k, v in self.params().items()})
        return pm.logp(dist, value)

    def mean(self) -> Any:
        raise NotImplementedError


@dataclass(frozen=True, repr=False)
class Beta(Prior):
    """Beta(alpha, beta) on (0, 1)."""

    alpha: Any = 1.0
    beta: Any = 1.0
    family: ClassVar[str] = "Beta"

    def mean(self) -> Any:
        a, b = np.asarray(self.alpha, float), np.asarray(self.beta, float)
        return a / (a + b)


@dataclass(frozen=True, repr=False)
class Normal(Prior):
    """Normal(mu, sigma)."""

    mu: Any = 0.0
    sigma: Any = 1.0
    family: ClassVar[str] = "Normal"

    def mean(self) -> Any:
        return np.asarray(self.mu, float)


@dataclass(frozen=True, repr=False)
class HalfNormal(Prior):
    """HalfNormal(sigma) on (0, inf)."""

    sigma: Any = 1.0
    family: ClassVar[str] = "HalfNormal"

    def mean(self) -> Any:
        return np.asarray(self.sigma, float) * np.sqrt(2 / np.pi)


@dataclass(frozen=True)
class Priors:
    """Base of a model's priors: a frozen dataclass whose fields are :class:`Prior` objects.

    ``replace(**changes)`` returns a copy with some priors changed; unknown names raise.
    """

    def replace(self, **changes: Prior) -> Priors:
        names = {f.name for f in fields(self)}
        bad = sorted(set(changes) - names)
        if bad:
            raise ValueError(f"{type(self).__name__} has no prior(s) {bad}; it has {sorted(names)}")
        return dataclasses.replace(self, **changes)

    def items(self) -> list[tuple[str, Prior]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]

    def __str__(self) -> str:
        return "\n".join(f"{k} ~ {v!r}" for k, v in self.items())

    def key(self) -> str:
        """A stable string of every parameter value (a compiled model is reused only for equal keys)."""
        return priors_to_json(self)


def priors_to_json(priors: Priors) -> str:
    """The priors as a JSON object ``{name: {"family": ..., params...}}``."""
    return json.dumps({k: v.to_dict() for k, v in priors.items()}, sort_keys=True)
