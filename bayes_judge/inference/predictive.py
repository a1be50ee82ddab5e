"""Prior and posterior predictive draws of a declared model, from the declaration itself.

Simulation-based calibration (:mod:`bayes_judge.analysis.sbc`) draws its parameters and data sets with
:func:`prior_predictive`; the report's posterior predictive checks (:mod:`bayes_judge.report.ppc`)
replicate the observations with :func:`posterior_predictive`.  Both evaluate the PyMC graph of the
declaration (its priors and the ``random`` functions of its observed distributions), built and
cached as :func:`~bayes_judge.inference.fit_model` builds it, so nothing restates a model in
NumPy.  Randomness comes only from the explicit ``seed``.

Observed variables are drawn once per row of the data arrays: a win-rate declaration fitted on the
pattern histogram (``weight`` items per row) replicates one item per pattern, so replicate a data
set from item-level arrays (``weight`` 1), as :mod:`bayes_judge.report.ppc` does.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..generative.priors import Priors
from ..generative.registry import ModelSpec
from .fit import _DERIVED_MODE, Fit, _entry, compile_derived

__all__ = ["prior_predictive", "posterior_predictive", "replicate"]

_FIXED_DIMS = {"pair", "judge", "system", "candidate"}  # as fit_model: dims the data never resize


def _model_entry(spec: ModelSpec, arrays: Mapping[str, Any], dims, coords, priors: Priors | None, options):
    """The cached entry of :func:`fit_model` for this declaration, its data set to ``arrays``."""
    priors = spec.default_priors() if priors is None else priors
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    data_dims = {dim for k in arrays for dim in dims.get(k, ())} - _FIXED_DIMS
    coords = dict(coords)
    for k, v in arrays.items():  # data-carried dims get coordinates from the data's shape
        for ax, dim in enumerate(dims.get(k, ())):
            if dim in data_dims and dim not in coords:
                coords[dim] = np.arange(v.shape[ax])
    return _entry(spec, arrays, dims, coords, priors, data_dims, dict(options or {}))


def _seed_rngs(rngs, *key: int) -> None:
    for i, r in enumerate(rngs):
        r.set_value(np.random.default_rng([*map(int, key), i]), borrow=True)


def _rngs(fn) -> list:
    return [v for v in fn.get_shared() if isinstance(v.get_value(borrow=True), np.random.Generator)]


def prior_predictive(
    spec: ModelSpec,
    arrays: Mapping[str, Any],
    *,
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    priors: Priors | None = None,
    options: Mapping[str, Any] | None = None,
    var_names: Sequence[str] | None = None,
    draws: int = 1,
    seed: int | Sequence[int] = 0,
) -> dict[str, np.ndarray]:
    """Joint draws of a declaration's parameters and observations from its prior.

    Parameters
    ----------
    spec, arrays, dims, coords, priors, options
        As :func:`~bayes_judge.inference.fit_model`: the design (the observed arrays' values are
        not read, their shapes are) and the model's priors (default the declaration's).
    var_names : sequence of str, optional
        Variables to draw; default every free parameter, every stored deterministic and every
        observed variable of the declaration.
    draws : int
        Independent joint draws.
    seed : int or sequence of int
        Seeds the declaration's random generators (``default_rng([*seed, i])`` for its i-th
        generator): the same seed gives the same draws.

    Returns
    -------
    dict name -> ndarray of shape (draws, ...)
    """
    entry = _model_entry(spec, arrays, dims, coords, priors, options)
    model = entry.model
    if var_names is None:
        var_names = [rv.name for rv in model.free_RVs]
        var_names += [v.name for v in model.deterministics if v.name not in spec.latent]
        var_names += [rv.name for rv in model.observed_RVs]
    names = tuple(var_names)
    key = ("prior", names)
    if key not in entry.fns:
        import pymc as pm

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = pm.pytensorf.compile([], [model[n] for n in names], mode=_DERIVED_MODE)
        entry.fns[key] = (fn, _rngs(fn))
    fn, rngs = entry.fns[key]
    _seed_rngs(rngs, *np.atleast_1d(seed))
    outs = [fn() for _ in range(int(draws))]  # the RNG updates make every call a fresh draw
    return {n: np.stack([np.asarray(o[k]) for o in outs]) for k, n in enumerate(names)}


def _conditioning(model, posterior: Mapping[str, Any], outs: list) -> list:
    """The model variables given by ``posterior`` that the outputs depend on; every free
    parameter the outputs depend on must be one of them or lie behind one of them."""
    from pytensor.graph.traversal import ancestors

    known = set(model.free_RVs) | set(model.deterministics)
    cands = [model[n] for n in posterior if n in model.named_vars and model[n] in known]
    reached = set(ancestors(outs, blockers=cands))
    missing = [rv.name for rv in model.free_RVs if rv in reached and rv not in cands]
    if missing:
        raise ValueError(f"posterior predictive draws need the draws of {missing}")
    return [v for v in cands if v in reached]


def posterior_predictive(
    spec: ModelSpec,
    arrays: Mapping[str, Any],
    *,
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    posterior: Mapping[str, np.ndarray],
    var_names: Sequence[str] | None = None,
    priors: Priors | None = None,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    chunk: int = 2000,
) -> dict[str, np.ndarray]:
    """Replicated observations of a declaration given posterior draws of its parameters.

    The declaration's graph of the observed variables, with the parameters (free variables or
    deterministics) found in ``posterior`` put in, evaluated for all draws at once.

    Parameters
    ----------
    spec, arrays, dims, coords, priors, options
        As :func:`~bayes_judge.inference.fit_model` (the priors do not enter the replicated
        observations; they only select the cached model).
    posterior : mapping name -> ndarray
        Draws with the same leading sample shape (e.g. (chains, draws) or (draws,)) followed by
        the variable's own shape.
    var_names : sequence of str, optional
        Variables to draw (default the declaration's ``observed``).
    seed : int
        Seeds the draws (chunk ``c`` of ``chunk`` draws uses ``default_rng([seed, c, i])``).

    Returns
    -------
    dict name -> ndarray of shape (sample shape, ...)

    Raises
    ------
    ValueError
        ``posterior`` lacks a parameter the observed variables depend on.
    """
    import pytensor.tensor as pt
    from pytensor.graph.replace import vectorize_graph

    entry = _model_entry(spec, arrays, dims, coords, priors, options)
    model = entry.model
    names = tuple(var_names or spec.observed)
    outs = [model[n] for n in names]
    given = _conditioning(model, posterior, outs)
    if not given:
        raise ValueError(f"posterior has none of the parameters of {list(names)}")
    key = ("posterior", names, tuple(v.name for v in given))
    if key not in entry.fns:
        ins = [pt.tensor(name=v.name, dtype=v.dtype, shape=(None, *v.type.shape)) for v in given]
        vec = vectorize_graph(outs, replace=dict(zip(given, ins, strict=True)))
        first = np.asarray(posterior[given[0].name])
        n_draws = int(np.prod(first.shape[: first.ndim - given[0].ndim]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = compile_derived(ins, vec, n_draws, arrays)
        entry.fns[key] = (fn, _rngs(fn))
    fn, rngs = entry.fns[key]
    first = np.asarray(posterior[given[0].name])
    lead = first.shape[: first.ndim - given[0].ndim]
    n = int(np.prod(lead))
    flat = []
    for v in given:
        x = np.asarray(posterior[v.name], dtype=v.dtype)
        flat.append(np.ascontiguousarray(x.reshape((n, *x.shape[len(lead):]))))
    parts: list[list[np.ndarray]] = [[] for _ in names]
    for c, s in enumerate(range(0, n, chunk)):
        _seed_rngs(rngs, seed, c)
        for k, o in enumerate(fn(*[x[s:s + chunk] for x in flat])):
            parts[k].append(np.asarray(o))
    return {nm: np.concatenate(p).reshape(lead + p[0].shape[1:]) for nm, p in zip(names, parts, strict=True)}


def replicate(fit: Fit, var_names: Sequence[str] | None = None, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Posterior predictive draws of a :class:`~bayes_judge.inference.Fit`'s observed variables
    (one per row of its data arrays), shape (chains, draws, ...)."""
    return posterior_predictive(
        fit.spec, fit.arrays, dims=fit.entry.dims, coords=fit.coords, posterior=fit.posterior,
        var_names=var_names, priors=fit.priors, options=fit.entry.options, seed=seed,
    )
