"""The registry of generative models: each model declared once, by name and task.

A *declaration* is one Python function that states a model's priors and likelihood in PyMC,
reading like the paper's equations::

    @generative_model("dawid-skene", task="win-rate", priors=DawidSkenePriors, observed=("t",))
    def dawid_skene(d, prior, *, predict=False):
        p = prior.p.rv("p", dims="pair")
        ...

It is called inside a ``pm.Model`` whose coords the library sets, with ``d`` the encoded data as
``pm.Data`` containers (so a compiled sampler is reused for new data) and ``prior`` an instance of
the model's :class:`~bayes_judge.generative.priors.Priors` class.  Everything else comes from the
declaration: NUTS on nutpie, NumPyro and PyMC (:func:`bayes_judge.inference.fit_model`), the
pointwise log-likelihood of the ``observed`` variables, the ``latent`` deterministics (per-item
posteriors, computed on request), posterior predictive draws of the ``predictive`` variables
(built when ``predict=True``), and prior predictive simulation for calibration checks.

A user adds a model with :func:`register_model` (or the decorator) and fits it by name; no
package file changes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .priors import Priors

__all__ = [
    "ModelSpec", "generative_model", "register_model", "unregister_model", "get_model", "list_models", "TASKS",
]

TASKS = ("win-rate", "ranking", "leaderboard")


@dataclass(frozen=True)
class ModelSpec:
    """A declared generative model.

    Attributes
    ----------
    name, task : str
        Registry key; ``task`` is one of :data:`TASKS` and names the encoded data the model reads.
    declare : callable ``(d, prior, *, predict) -> None``
        The declaration, called inside a ``pm.Model`` context.
    priors : type
        The model's :class:`Priors` dataclass; ``priors()`` gives the defaults.
    observed : tuple of str
        Observed variables: their pointwise log-likelihood goes to the ``log_likelihood`` group.
    latent : tuple of str
        Deterministics left out while sampling and computed on request (per-item posteriors).
    predictive : tuple of str
        Variables added by ``predict=True`` and drawn by posterior predictive sampling into the
        posterior (e.g. a finite-population win rate).
    summary : tuple of str
        The model's headline parameters (what a summary shows first).
    init : callable ``(d, prior) -> dict``, optional
        Start of every chain (default: the prior means of the :class:`Priors` fields).
    reference : str
        The paper and equations the declaration implements.
    padding : tuple of str
        Data dimensions along which a row of zeros (weight 0, no verdicts) adds nothing to the log
        density.  A sampler that compiles one program per data shape (NumPyro) pads them to
        fixed sizes, so that refits of similar data reuse the program.

    What a win-rate model needs beyond its declaration (read by :func:`bayes_judge.win_rate`, so a new
    model touches no task file):

    accuracies : tuple of str
        The judges' accuracies against the true label (``("q0", "q1")``: one per class; ``("q",)``:
        one coin).  A chain whose mean ``q0 + q1 − 1`` has the other sign sits in the mirrored mode:
        the fit warns (label switching).  Two per-class accuracies need labels of both classes.
    label_switch : bool
        Without labels the posterior has two mirrored modes: the declaration takes ``symmetric=True``
        (the folded model, with a ``label_switch_delta`` deterministic), and its draws are unfolded.
    needs_labels : bool
        The model is calibrated on human labels and cannot be fitted without some.
    ood_prior : bool
        The accuracies can take Gao et al. 2024's out-of-distribution prior (eq. 12-13, ``prior="ood"``).
    prior_constants : tuple of str
        Beta prior fields stored as ``alpha_<name>``, ``beta_<name>`` in ``constant_data`` (for the
        report's prior-posterior plots).
    ties : {"random", "skip"}
        How the model reads a tie: the seed's coin flip, or no vote (a vote of 0).
    """

    name: str
    task: str
    declare: Callable[..., None]
    priors: type[Priors]
    observed: tuple[str, ...] = ()
    latent: tuple[str, ...] = ()
    predictive: tuple[str, ...] = ()
    summary: tuple[str, ...] = ()
    init: Callable[[Any, Priors], dict[str, Any]] | None = None
    reference: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    padding: tuple[str, ...] = ()
    accuracies: tuple[str, ...] = ()
    label_switch: bool = False
    needs_labels: bool = False
    ood_prior: bool = False
    prior_constants: tuple[str, ...] = ()
    ties: str = "random"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if not isinstance(self.priors, type) or not issubclass(self.priors, Priors):
            raise TypeError(f"priors of model {self.name!r} must be a Priors dataclass, got {self.priors!r}")
        if self.ties not in ("random", "skip"):
            raise ValueError(f"ties of model {self.name!r} must be 'random' or 'skip', got {self.ties!r}")
        if self.label_switch and "symmetric" not in inspect.signature(self.declare).parameters:
            raise TypeError(f"model {self.name!r}: label_switch=True needs a declaration that takes symmetric=")
        if len(self.accuracies) > 2 or (self.ood_prior and not self.accuracies):
            raise ValueError(f"model {self.name!r}: accuracies names one coin or two per judge; ood_prior needs them")

    def default_priors(self) -> Priors:
        return self.priors()


_REGISTRY: dict[tuple[str, str], ModelSpec] = {}


def register_model(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Add ``spec`` to the registry under ``(spec.task, spec.name)``.

    Raises
    ------
    ValueError
        A model of that name and task exists and ``replace`` is false.
    """
    key = (spec.task, spec.name)
    if key in _REGISTRY and not replace:
        raise ValueError(f"a {spec.task} model named {spec.name!r} is already registered (pass replace=True)")
    _REGISTRY[key] = spec
    return spec


def generative_model(
    name: str,
    *,
    task: str,
    priors: type[Priors],
    observed: Sequence[str] = (),
    latent: Sequence[str] = (),
    predictive: Sequence[str] = (),
    summary: Sequence[str] = (),
    init: Callable[[Any, Priors], dict[str, Any]] | None = None,
    reference: str = "",
    replace: bool = False,
    padding: Sequence[str] = (),
    accuracies: Sequence[str] = (),
    label_switch: bool = False,
    needs_labels: bool = False,
    ood_prior: bool = False,
    prior_constants: Sequence[str] = (),
    ties: str = "random",
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Decorator form of :func:`register_model`; returns the declaration unchanged."""

    def wrap(fn: Callable[..., None]) -> Callable[..., None]:
        register_model(
            ModelSpec(
                name=name,
                task=task,
                declare=fn,
                priors=priors,
                observed=tuple(observed),
                latent=tuple(latent),
                predictive=tuple(predictive),
                summary=tuple(summary),
                init=init,
                reference=reference or _first_line(fn.__doc__),
                padding=tuple(padding),
                accuracies=tuple(accuracies),
                label_switch=label_switch,
                needs_labels=needs_labels,
                ood_prior=ood_prior,
                prior_constants=tuple(prior_constants),
                ties=ties,
            ),
            replace=replace,
        )
        return fn

    return wrap


def _first_line(doc: str | None) -> str:
    lines = (doc or "").strip().splitlines()
    return lines[0] if lines else ""


def unregister_model(name: str, task: str) -> None:
    """Remove a model from the registry (a built-in one comes back on the next import)."""
    _REGISTRY.pop((task, name), None)


def _load_builtin() -> None:
    from . import leaderboard_models, ranking_models, winrate_models  # noqa: F401  (register the built-in models)


def get_model(name: str, task: str) -> ModelSpec:
    """The registered model ``name`` for ``task``; a clear error lists the known ones."""
    _load_builtin()
    try:
        return _REGISTRY[(task, name)]
    except KeyError:
        known = sorted(n for t, n in _REGISTRY if t == task)
        raise ValueError(f"no {task} model named {name!r}; registered: {known}") from None


def list_models(task: str | None = None) -> list[ModelSpec]:
    """Every registered model (of ``task``, if given), sorted by task and name."""
    _load_builtin()
    return [s for (t, _), s in sorted(_REGISTRY.items()) if task is None or t == task]
