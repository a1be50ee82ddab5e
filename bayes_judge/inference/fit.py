"""One sampling entry for every declared generative model.

:func:`fit_model` builds the PyMC model of a declaration (cached per model, priors and
coordinates, so a refit only swaps the ``pm.Data``), runs NUTS with the chosen sampler and
returns the draws as plain arrays; :mod:`bayes_judge.inference.idata` makes the InferenceData.

* ``"nutpie"``: nutpie's NUTS on the PyMC model compiled with numba once per process and cache
  entry (:mod:`bayes_judge.inference._compile_nutpie`: nutpie's functions, leaner callbacks); a
  refit hands it the new data (``with_data``).  A registered fast path (hand-written log-density) is
  used instead where one exists (``fast=True``).
* ``"pymc"``: PyMC's own NUTS (``pm.sample``).
* ``"numpyro"``: NumPyro's NUTS on the same PyMC model, jaxified once per cache entry with the data
  as arguments, so a refit of the same shapes runs the compiled program again
  (:mod:`bayes_judge.inference._numpyro`).

Every chain starts at the declaration's ``init`` (default: the prior means), with no jitter:
that keeps Dawid-Skene's chains out of the label-switched mode (``DESIGN.md``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import operator
import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..generative.priors import Priors
from ..generative.registry import ModelSpec
from .fastpaths import fast_path
from .initial import initial_point
from .settings import APPROXIMATE, FAST_PATH, SAMPLERS, SAMPLING, TRANSPORTED, Sampling

__all__ = [
    "SAMPLERS", "fit_model", "pointwise_log_lik", "latent_draws", "predictive_draws", "item_quantities",
    "clear_compiled", "Fit",
]

STAT_NAMES = ("diverging", "energy", "n_steps", "acceptance_rate", "lp", "tree_depth", "step_size")
# The derived functions (pointwise log-likelihood, latent and predictive draws) run in one of two
# PyTensor modes.  C (the default mode) costs, in a process that has compiled no C yet, the load of
# PyTensor's module cache (1.2-2 s on a cache of ~450 modules, more as it grows; a gcc compile on an
# empty one).  Python thunks without elementwise fusion cost nothing to compile and run every op as
# one numpy call over all draws, as fast as C for a small model (MT-Bench Dawid-Skene: 0.5 s against
# 1.7-2.0 s in a fresh process, the same values to 1e-13); but fusion is what keeps a large model's
# temporaries small, and an op with no numpy ufunc (softplus, log1mexp, a fused Composite) would run
# one scalar at a time (82 s against 19 s for tests/test_reproduction.py's llmbar case).  The Python
# mode therefore restates the scalar ops our declarations use that have no ufunc through ones that
# have (:func:`_ufunc_rewrite`: softplus, log1mexp, clip, casts).  So: Python thunks when the
# evaluation touches at most _PY_THUNK_WORK values (data values × draws) and every elementwise op of
# the compiled graph has a numpy ufunc; C otherwise.
_DERIVED_MODE = None
_PY_THUNK_WORK = 5e7


@functools.cache
def _ufunc_rewrite():
    """A graph rewrite for the Python-thunk mode: elementwise softplus, log1mexp, clip and casts,
    which have no numpy ufunc and would run one scalar at a time there, become ops that have one
    (the same functions: ``softplus(x) = max(x, 0) + log1p(exp(-|x|))``;
    ``log1mexp(x) = log(-expm1(x))`` for x > −log 2, else ``log1p(-exp(x))``)."""
    import pytensor.tensor as pt
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op
    from pytensor.graph.rewriting.basic import in2out, node_rewriter
    from pytensor.scalar.basic import Add, Cast, Clip, Mul
    from pytensor.scalar.math import Log1mexp, Softplus
    from pytensor.tensor.elemwise import Elemwise

    class AsType(Op):
        """``x.astype(dtype)``: an elementwise cast as one numpy call."""

        __props__ = ("dtype",)

        def __init__(self, dtype: str) -> None:
            self.dtype = dtype

        def make_node(self, x):
            x = pt.as_tensor_variable(x)
            return Apply(self, [x], [pt.tensor(dtype=self.dtype, shape=x.type.shape)])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = np.asarray(inputs[0]).astype(self.dtype)

        def infer_shape(self, fgraph, node, shapes):
            return shapes

    @node_rewriter([Elemwise])
    def as_ufuncs(fgraph, node):
        op = node.op.scalar_op
        x = node.inputs[0]
        if isinstance(op, Softplus):
            out = pt.maximum(x, 0) + pt.log1p(pt.exp(-pt.abs(x)))
        elif isinstance(op, Log1mexp):
            out = pt.switch(x > -np.log(2.0), pt.log(-pt.expm1(x)), pt.log1p(-pt.exp(x)))
        elif isinstance(op, Clip):
            out = pt.minimum(pt.maximum(x, node.inputs[1]), node.inputs[2])
        elif isinstance(op, Cast):
            out = AsType(node.outputs[0].dtype)(x)
        elif isinstance(op, Add | Mul) and len(node.inputs) > 2:  # the ufunc is binary
            out = functools.reduce(operator.add if isinstance(op, Add) else operator.mul, node.inputs)
        else:
            return None
        out = pt.cast(out, node.outputs[0].dtype) if out.dtype != node.outputs[0].dtype else out
        return [out]

    return in2out(as_ufuncs, name="bayes_judge_as_ufuncs")


def _py_thunk_mode():
    from pytensor.compile.mode import Mode
    from pytensor.graph.rewriting.db import RewriteDatabaseQuery

    mode = Mode(linker="py", optimizer=RewriteDatabaseQuery(include=["fast_run"], exclude=["fusion", "inplace"]))
    return mode.register((_ufunc_rewrite(), 48.9))


def _all_ufuncs(fn: Any) -> bool:
    """Whether every elementwise op of the compiled function ``fn`` maps to one numpy call (a
    variadic add or multiply of three or more inputs does not: its ufunc is binary)."""
    from pytensor.scalar.basic import Composite
    from pytensor.tensor.elemwise import Elemwise

    for node in fn.maker.fgraph.apply_nodes:
        if isinstance(node.op, Elemwise):
            op = node.op.scalar_op
            spec = getattr(op, "nfunc_spec", None)
            if isinstance(op, Composite) or spec is None or spec[1] != len(node.inputs):
                return False
    return True


def compile_derived(ins: list, outs: list, n_draws: int, arrays: Mapping[str, Any]) -> Any:
    """``pytensor.function(ins, outs)`` in the mode that suits ``n_draws`` evaluations on the data
    ``arrays`` (comment above)."""
    import pytensor

    if n_draws * sum(np.size(v) for v in arrays.values()) <= _PY_THUNK_WORK:
        fn = pytensor.function(ins, outs, on_unused_input="ignore", mode=_py_thunk_mode())
        if _all_ufuncs(fn):
            return fn
    return pytensor.function(ins, outs, on_unused_input="ignore", mode=_DERIVED_MODE)


@dataclass
class _Entry:
    model: Any
    dims: dict[str, tuple[str, ...]]
    nutpie: Any = None
    numpyro: Any = None
    predict_model: Any = None
    fns: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)


_CACHE: dict[tuple, _Entry] = {}


def clear_compiled() -> None:
    """Forget the PyMC models and compiled samplers kept for refits."""
    _CACHE.clear()


def _coords_key(coords: Mapping[str, Any], fixed: set[str]) -> tuple:
    return tuple((k, tuple(map(str, coords[k]))) for k in sorted(coords) if k in fixed)


def _build(spec: ModelSpec, arrays: Mapping[str, np.ndarray], dims: Mapping[str, tuple[str, ...]],
           coords: Mapping[str, Any], priors: Priors, predict: bool, options: Mapping[str, Any]):
    import pymc as pm

    with pm.Model(coords=dict(coords)) as model:
        d = SimpleNamespace(**{k: pm.Data(k, v, dims=dims.get(k)) for k, v in arrays.items()})
        spec.declare(d, priors, predict=predict, **options)
    return model


def _entry(spec: ModelSpec, arrays, dims, coords, priors: Priors, data_dims: set[str],
           options: Mapping[str, Any]) -> _Entry:
    fixed = set(coords) - data_dims
    key = (spec.task, spec.name, id(spec.declare), priors.key(), _coords_key(coords, fixed),
           tuple(sorted((k, np.asarray(v).ndim, np.asarray(v).dtype.kind) for k, v in arrays.items())),
           tuple(sorted((k, repr(v)) for k, v in options.items())))
    entry = _CACHE.get(key)
    if entry is None:
        entry = _Entry(model=_build(spec, arrays, dims, coords, priors, False, options), dims=dict(dims),
                       options=dict(options))
        _CACHE[key] = entry
    else:
        _set_data(entry.model, arrays, coords, data_dims)
    return entry


class _LazyEntry:
    """An :class:`_Entry` built on first use: a fast path that starts itself from the declaration's
    start values (``own_start``) samples without the PyMC model, which a fresh process would import
    PyMC (0.4 s) and build for; it is built when something reads it (pointwise log-likelihoods,
    posterior predictions, a declaration's dims).  Attributes read and set go to the built entry;
    it is not an ``_Entry`` itself (no ``isinstance`` or identity checks), and an error while
    building is raised as a RuntimeError (an AttributeError would read as a missing attribute)."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._built: _Entry | None = None

    def _get(self) -> _Entry:
        if self._built is None:
            try:
                self._built = self._make()
            except AttributeError as e:
                raise RuntimeError(f"building the PyMC model of a fit failed: {e}") from e
        return self._built

    def __getattr__(self, name: str) -> Any:  # only for what the proxy itself lacks
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:  # what is cached goes to the shared entry
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._get(), name, value)


def _set_data(model, arrays, coords, data_dims: set[str]) -> None:
    """Swap a cached model's data and the lengths of its data dimensions.

    ``pm.set_data`` reads each old dimension length with ``.eval()``, which compiles a C function
    (and loads PyTensor's whole module cache, about a second, in a fresh process); the lengths are
    shared variables, so they are read and set directly.
    """
    for dim in data_dims:
        if dim in coords and dim in model.dim_lengths:
            model.set_dim(dim, len(coords[dim]), coord_values=coords[dim])
    for name, values in arrays.items():
        var = model[name]
        var.set_value(np.asarray(values, dtype=var.dtype))


@dataclass
class Fit:
    """Draws of one fit: ``posterior`` and ``stats`` as (chains, draws, ...) arrays."""

    posterior: dict[str, np.ndarray]
    stats: dict[str, np.ndarray]
    spec: ModelSpec
    priors: Priors
    sampler: str
    fast: bool
    entry: Any
    arrays: dict[str, np.ndarray]
    coords: dict[str, Any]
    seed: int
    info: dict = field(default_factory=dict)  # an approximate sampler's own figures (its mode, curvature)

    @property
    def moved(self) -> bool:
        """Whether the draws are an earlier fit's, moved and reweighed (``info["transport"]``)."""
        t = self.info.get("transport")
        return t is not None and "why" not in t

    @property
    def sampler_label(self) -> str:
        """What drew the draws, as a run's ``attrs["sampler"]`` says it."""
        if self.moved:
            return TRANSPORTED
        return FAST_PATH if self.fast and self.sampler not in APPROXIMATE else self.sampler


def _stored_vars(model, spec: ModelSpec) -> list[str]:
    names = [rv.name for rv in model.free_RVs]
    names += [v.name for v in model.deterministics if v.name not in spec.latent]
    return names


def _prior_mean_init() -> Any:
    from ..generative.winrate_models import prior_mean_init

    return prior_mean_init


def _init_point(spec: ModelSpec, d: Any, priors: Priors, model) -> dict[str, np.ndarray]:
    return _shape_start(model, (spec.init or _prior_mean_init())(d, priors))


def _shape_start(model, init: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Start values broadcast to their variables' shapes; names the model lacks are left out."""
    out = {}
    ip = initial_point(model)
    for name, val in init.items():
        if name not in model.named_vars or model[name] not in model.free_RVs:
            continue
        shape = tuple(ip[model.rvs_to_values[model[name]].name].shape)
        out[name] = np.broadcast_to(np.asarray(val, dtype=float), shape).copy()
    return out


def _read_idata_stats(ss) -> dict[str, np.ndarray]:
    rename = {"mean_tree_accept": "acceptance_rate", "logp": "lp", "depth": "tree_depth"}
    out = {}
    for name in ss.data_vars:
        key = rename.get(name, name)
        if key in STAT_NAMES and key not in out:
            out[key] = ss[name].to_numpy()
    return out


def chosen_fast_path(spec: ModelSpec, sampler: str, fast: bool, priors: Priors,
                     options: Mapping[str, Any] | None, arrays: Mapping[str, np.ndarray]) -> Any:
    """The registered fast path :func:`fit_model` runs for these settings (``None``: the
    declaration's own sampler): the model's, where ``fast`` and NUTS by nutpie (or an
    approximate sampler) ask for it and it states these priors, options and data."""
    fp = fast_path(spec.task, spec.name) if ((fast and sampler == "nutpie") or sampler in APPROXIMATE) else None
    if fp is not None and not getattr(fp, "accepts", lambda p, o, a: True)(priors, dict(options or {}), arrays):
        fp = None
    return fp


def fit_model(
    spec: ModelSpec,
    arrays: Mapping[str, np.ndarray],
    *,
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    priors: Priors | None = None,
    sampling: Sampling = SAMPLING,
    fast: bool = True,
    init: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    earlier: Mapping[str, Any] | None = None,
) -> Fit:
    """Sample the posterior of a declared model by NUTS.

    Parameters
    ----------
    spec : ModelSpec
        A registered declaration (:func:`bayes_judge.generative.get_model`).
    arrays : mapping name -> ndarray
        The encoded data, one ``pm.Data`` each (``dims[name]`` names their dims).
    coords : mapping dim -> labels
        Coordinates of every dim; dims that data arrays carry (e.g. ``pattern``) may change
        between refits, the others are part of the cache key.
    priors : Priors, optional
        Default: the declaration's defaults.
    sampling : Sampling
        How the posterior is drawn (:class:`~bayes_judge.inference.settings.Sampling`: sampler,
        chains, draws, tune, seed, target_accept); default :data:`~bayes_judge.inference.settings.SAMPLING`.
    fast : bool
        With ``sampler="nutpie"``, use the model's registered fast path if there is one.
    init : mapping, optional
        Start of every chain (constrained values by variable name, broadcast to each variable's
        shape; names the model does not have are ignored); default the declaration's.
    options : mapping, optional
        Keyword options of the declaration (structural choices such as a parametrization); part
        of the cache key and handed to a fast path as ``options=``.
    earlier : mapping, optional
        For an update with NUTS by nutpie: an earlier fit of fewer rows (``arrays``, ``posterior``
        and ``stats``, see the fast path's ``transport``), whose draws a fast path that offers it
        moves onto this posterior and reweighs, instead of sampling, where the weights hold
        (:mod:`bayes_judge.inference.transport`); ``Fit.info["transport"]`` says what was done,
        and where the draws could not serve, why.

    Returns
    -------
    Fit
    """
    if not isinstance(sampling, Sampling):
        raise TypeError(f"sampling must be a Sampling, got {type(sampling).__name__}")
    sampler, chains, draws, tune = sampling.sampler, sampling.chains, sampling.draws, sampling.tune
    seed, target_accept = sampling.seed, sampling.target_accept
    priors = spec.default_priors() if priors is None else priors
    if not isinstance(priors, spec.priors):
        raise TypeError(f"model {spec.name!r} takes {spec.priors.__name__}, got {type(priors).__name__}")
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    data_dims = {dim for k in arrays for dim in dims.get(k, ())} - {"pair", "judge", "system", "candidate"}
    coords = dict(coords)
    for k, v in arrays.items():  # data-carried dims get coordinates from the data's shape
        for ax, dim in enumerate(dims.get(k, ())):
            if dim in data_dims and dim not in coords:
                coords[dim] = np.arange(v.shape[ax])

    fp = chosen_fast_path(spec, sampler, fast, priors, options, arrays)
    if sampler in APPROXIMATE and (fp is None or not hasattr(fp, sampler)):
        raise ValueError(f"sampler={sampler!r} needs a model with a hand-written kernel that offers it "
                         f"({spec.task} model {spec.name!r} with these options has none); use 'nutpie'")
    options = dict(options or {})
    d = SimpleNamespace(**arrays)
    if fp is not None and getattr(fp, "own_start", False):  # the start broadcast by the kernel itself
        entry: Any = _LazyEntry(functools.partial(_entry, spec, arrays, dims, coords, priors, data_dims, options))
        start = dict((spec.init or _prior_mean_init())(d, priors) if init is None else init)
    else:
        entry = _entry(spec, arrays, dims, coords, priors, data_dims, options)
        model = entry.model
        start = _init_point(spec, d, priors, model) if init is None else _shape_start(model, init)
    info: dict = {}
    if sampler in APPROXIMATE:
        kw = {"options": options} if options else {}
        post, stats, info = getattr(fp, sampler)(arrays, coords, priors, init=start, chains=chains, draws=draws,
                                                 seed=seed, **kw)
    elif fp is not None:
        kw = {"options": options} if options else {}
        post = None
        if earlier is not None and hasattr(fp, "transport"):
            post, stats, moved = fp.transport(arrays, coords, priors, earlier=earlier, chains=chains, draws=draws,
                                              seed=seed, **kw)
            info["transport"] = moved
        if post is None:
            post, stats = fp(arrays, coords, priors, init=start, chains=chains, draws=draws, tune=tune,
                             seed=seed, target_accept=target_accept, **kw)
    elif sampler == "nutpie":
        post, stats = _sample_nutpie(entry, spec, start, chains, draws, tune, seed, target_accept, arrays)
    elif sampler == "numpyro":
        from ._numpyro import NumpyroSampler

        if entry.numpyro is None:
            entry.numpyro = NumpyroSampler(model, _stored_vars(model, spec), spec.padding)
        post, stats = entry.numpyro.sample(_unconstrained(model, start), chains=chains, draws=draws, tune=tune,
                                           seed=seed, target_accept=target_accept)
    else:
        post, stats = _sample_pymc(model, spec, start, chains, draws, tune, seed, target_accept)
    return Fit(post, stats, spec, priors, sampler, fp is not None, entry, arrays, coords, seed, info)


def _sample_nutpie(entry: _Entry, spec, start, chains, draws, tune, seed, target_accept, arrays):
    from ._compile_nutpie import compile_declaration
    from ._nutpie import run

    model = entry.model
    if entry.nutpie is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            entry.nutpie = compile_declaration(model, initial_points=start, var_names=_stored_vars(model, spec))
    compiled = entry.nutpie.with_data(**{k: v for k, v in arrays.items() if k in entry.nutpie.shared_data})
    compiled = _with_start(compiled, model, start)
    stored = set(_stored_vars(model, spec))
    return run(compiled, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
               read={k: v for k, v in compiled.shapes.items() if k in stored})


def _unconstrained(model, start) -> dict[str, np.ndarray]:
    """Every value variable's start (by value-variable name): ``start``'s constrained values
    transformed, the model's initial point for the others."""
    ip = dict(initial_point(model))
    for name, val in start.items():
        rv = model[name]
        value_var = model.rvs_to_values[rv]
        tr = model.rvs_to_transforms.get(rv)
        ip[value_var.name] = tr.forward(val, *rv.owner.inputs).eval() if tr is not None else val
    return ip


def _with_start(compiled, model, start):
    """The compiled model with every chain starting at ``start`` (constrained values)."""
    import dataclasses

    ip = _unconstrained(model, start)
    flat = np.concatenate([np.ravel(ip[v.name]) for v in model.value_vars]).astype(np.float64)
    if not hasattr(compiled, "initial_point_func") or flat.shape[0] != compiled.n_dim:
        return compiled
    # nutpie refuses a start with an exactly-zero gradient entry (a symmetric start, a judge with
    # no verdicts on the labelled items): move every coordinate by a fixed, tiny amount
    flat = flat + 1e-6 * (1.0 + np.arange(flat.shape[0]) % 7)
    return dataclasses.replace(compiled, initial_point_func=lambda seed: flat.copy())


def _sample_pymc(model, spec, start, chains, draws, tune, seed, target_accept):
    import pymc as pm

    names = _stored_vars(model, spec)
    kw: dict[str, Any] = dict(
        draws=draws, tune=tune, chains=chains, random_seed=seed, initvals=start,
        target_accept=target_accept, progressbar=False, compute_convergence_checks=False,
        var_names=names,
    )
    # forking a process that already runs JAX's thread pool is unsafe: chains in-process then
    kw.update(init="adapt_diag", cores=1 if "jax" in sys.modules else min(chains, os.cpu_count() or 1))
    with model, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*The number of samples is too small.*")
        warnings.filterwarnings("ignore", message=".*There were .* divergences.*")
        idata = pm.sample(**kw)
    post = {k: idata.posterior[k].to_numpy() for k in names}
    return post, _read_idata_stats(idata.sample_stats)


def _full_model(fit: Fit):
    """The declaration built with ``predict=True`` (all variables), its data set to the fit's."""
    entry = fit.entry
    if entry.predict_model is None:
        entry.predict_model = _build(fit.spec, fit.arrays, entry.dims, fit.coords, fit.priors, True, entry.options)
    else:
        data_dims = {dim for k in fit.arrays for dim in entry.dims.get(k, ())} - {"pair", "judge", "system", "candidate"}
        _set_data(entry.predict_model, fit.arrays, fit.coords, data_dims)
    return entry.predict_model


def _vectorized(fit: Fit, logp_names: tuple[str, ...], value_names: tuple[str, ...]):
    """One compiled function per cache entry: free-parameter draws (batched) -> outputs.

    The elementwise log-densities of the observed variables ``logp_names``, then the variables
    ``value_names`` themselves (deterministics and predictive draws).  Compiled once per process
    and cache entry (PyTensor keeps the C code on disk), evaluated for all draws at once.
    """
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.graph.replace import vectorize_graph

    key = (logp_names, value_names)
    if key in fit.entry.fns:
        return fit.entry.fns[key]
    model = _full_model(fit)
    free = [model[rv.name] for rv in fit.entry.model.free_RVs]
    outs = [pm.logp(model[n], model.rvs_to_values[model[n]]) for n in logp_names]
    outs += [model[n] for n in value_names]
    ins = [pt.tensor(name=rv.name, shape=(None,) + (None,) * rv.ndim, dtype=rv.dtype) for rv in free]
    vec = vectorize_graph(outs, replace=dict(zip(free, ins, strict=True)))
    C, D = fit.posterior[free[0].name].shape[:2] if free else (1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn = compile_derived(ins, vec, C * D, fit.arrays)
    rngs = [v for v in fn.get_shared() if isinstance(v.get_value(borrow=True), np.random.Generator)]
    fit.entry.fns[key] = (fn, [rv.name for rv in free], rngs)
    return fit.entry.fns[key]


def _evaluate(fit: Fit, logp_names: tuple[str, ...], value_names: tuple[str, ...] = (),
              seed: int | None = None, chunk: int = 2000) -> list[np.ndarray]:
    """Outputs of :func:`_vectorized` for every draw, shape (chains, draws, ...) each."""
    names = logp_names + value_names
    fresh = (logp_names, value_names) not in fit.entry.fns
    fn, inputs, rngs = _vectorized(fit, logp_names, value_names)
    if not fresh:
        _full_model(fit)  # a refit: the full model's data follow the fit's
    for i, r in enumerate(rngs):
        r.set_value(np.random.default_rng([int(seed or 0), i]), borrow=True)
    C, D = fit.posterior[inputs[0]].shape[:2] if inputs else (1, 1)
    flat = [np.ascontiguousarray(fit.posterior[n].reshape((C * D,) + fit.posterior[n].shape[2:])) for n in inputs]
    parts: list[list[np.ndarray]] = [[] for _ in names]
    for s in range(0, C * D, chunk):
        outs = fn(*[x[s:s + chunk] for x in flat])
        for j, o in enumerate(outs):
            parts[j].append(np.asarray(o))
    return [np.concatenate(p, axis=0).reshape((C, D) + p[0].shape[1:]) for p in parts]


def pointwise_log_lik(fit: Fit, var: str) -> np.ndarray:
    """Log-likelihood of every pattern's *single item* for every draw, shape (chains, draws, K).

    The declaration's observed variable ``var`` scores each pattern row with its weight (the
    number of items sharing it); dividing by the weight gives one item's value.
    """
    (out,) = _evaluate(fit, (var,))
    w = fit.arrays.get("weight")
    if w is not None:
        out = out / np.where(w > 0, w, 1.0)
    return out


def latent_draws(fit: Fit, var: str) -> np.ndarray:
    """A latent deterministic of the declaration (e.g. ``h_prob``) for every draw."""
    (out,) = _evaluate(fit, (), (var,))
    return out


def predictive_draws(fit: Fit, names: list[str]) -> dict[str, np.ndarray]:
    """Posterior predictive draws of the declaration's ``predict=True`` variables (seeded by the
    fit's seed)."""
    outs = _evaluate(fit, (), tuple(names), seed=fit.seed + 104729)
    return dict(zip(names, outs, strict=True))


def item_quantities(fit: Fit, observed: str, latent: tuple[str, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The pointwise log-likelihood of ``observed`` (per single item of each pattern) and the
    ``latent`` deterministics, from one evaluation of the declaration's graph."""
    ll, *lat = _evaluate(fit, (observed,), latent)
    w = fit.arrays.get("weight")
    if w is not None:
        ll = ll / np.where(w > 0, w, 1.0)
    return ll, lat


@contextlib.contextmanager
def _quiet_pymc():
    """PyMC logs "Sampling: [...]" at INFO for every predictive draw; hold it back."""
    log = logging.getLogger("pymc")
    level = log.level
    log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(level)


def _as_idata(ds):
    import arviz as az

    return az.InferenceData(posterior=ds)
