"""A PyMC declaration compiled for nutpie's Rust NUTS (numba), with lean C callbacks.

nutpie's own ``compile_pymc_model(model, backend="numba")`` compiles the model's log density and
gradient with PyTensor's numba backend, then wraps them in two ``numba.cfunc`` callbacks that read
the data through a record of pointers (``literal_unroll`` over the shared variables, inlined
overloads, ``out[...] = grad``).  Typing and lowering those wrappers took most of a compile: 8-10 s
for the Dawid-Skene declaration, every process, whatever PyTensor's own on-disk cache of the
compiled graph held.

:func:`compile_declaration` builds the same two functions (nutpie's ``_make_functions``: the same
PyTensor graph, the same initial point, the same stored variables) and writes the callbacks as
straight-line code generated for the model's shared variables: the data arrive as one int64
vector ``[address, *shape]`` per shared variable, each viewed with ``numba.carray``.  The compiled
graph is called with C-contiguous arrays, the types of a direct call, so PyTensor's cache of it
(``~/.pytensor/numba``) serves a later process.  Fits of three declarations on MT-Bench
(``benchmarks/bench_compile_nutpie.py``, compile and 4 × 2000 draws, one run): 11.7, 8.5, 5.5 s
with nutpie's compile against 7.8, 4.8, 2.0 s in a process after the first; 23.6, 16.0, 15.1 s
against 24.0, 13.5, 11.0 s with empty caches, where PyTensor's C compiles of the model's other
functions dominate.

The callbacks keep nutpie's contract: 0 on success; 1 when the graph raises; 3 / 4 for a
non-finite gradient / log density; -1 for a dimension that does not match.  The result is
nutpie's own ``CompiledPyMCModel`` (its data replaced by :meth:`DeclaredModel.with_data`), sampled
by ``nutpie.sample`` as nutpie's would be.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numba
import numpy as np
from numba.core import cgutils
from numba.core.errors import NumbaPerformanceWarning
from numba.extending import intrinsic
from nutpie import compile_pymc as ncp

from ._nutpie import c_signatures

__all__ = ["compile_declaration"]

_LOGP_SRC = '''
def logp_callback(dim, x_, grad_, logp_, data_):
    if dim != {n}:
        return -1
    data = numba.carray(data_, ({d},))
    x = numba.carray(x_, ({n},))
{views}
    try:
        lp, g = GRAPH(x{args})
    except Exception:
        return 1
    grad = numba.carray(grad_, ({n},))
    for i in range({n}):
        grad[i] = g[i]
        if not np.isfinite(g[i]):
            return 3
    logp = numba.carray(logp_, ())
    logp[()] = lp
    if not np.isfinite(logp[()]):
        return 4
    return 0
'''

_EXPAND_SRC = '''
def expand_callback(dim, n_expanded, x_, out_, data_):
    if dim != {n} or n_expanded != {m}:
        return -1
    data = numba.carray(data_, ({d},))
    x = numba.carray(x_, ({n},))
{views}
    try:
        (values,) = GRAPH(x{args})
    except Exception:
        return -2
    out = numba.carray(out_, ({m},))
    for i in range({m}):
        out[i] = values[i]
    return 0
'''
# The try block holds the graph's call only: numba's liveness analysis of a try block grows with
# the code inside it (the loops inside it cost 25 s of compile in a trial).


@intrinsic
def _address(typingctx, src):
    """The void pointer at an int64 address (numba intrinsic)."""

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return numba.types.voidptr(src), codegen


def _offsets(shared: Mapping[str, np.ndarray]) -> tuple[dict[str, int], int]:
    """Where each shared variable's ``[address, *shape]`` starts in the data vector, and its length."""
    out, pos = {}, 0
    for name, arr in shared.items():
        out[name] = pos
        pos += 1 + arr.ndim
    return out, pos


def _pack(shared: Mapping[str, np.ndarray]) -> np.ndarray:
    """The callbacks' data vector: ``[address, *shape]`` of each shared array, in order (int64)."""
    vals: list[int] = []
    for arr in shared.values():
        vals += [arr.ctypes.data, *arr.shape]
    return np.array(vals or [0], dtype=np.int64)


def _callback(template: str, name: str, sig, graph, used: list[str], shared: Mapping[str, np.ndarray],
              **sizes: int):
    """``numba.cfunc(sig)`` of ``template`` written out for the graph's shared inputs ``used``."""
    offsets, length = _offsets(shared)
    ns: dict[str, Any] = {"numba": numba, "np": np, "GRAPH": graph, "ADDRESS": _address}
    views = []
    for i, var in enumerate(used):
        arr, at = shared[var], offsets[var]
        dims = "".join(f"data[{at + 1 + k}], " for k in range(arr.ndim))
        ns[f"DTYPE{i}"] = arr.dtype
        views.append(f"    s{i} = numba.carray(ADDRESS(data[{at}]), ({dims}), DTYPE{i})")
    src = template.format(views="\n".join(views), args="".join(f", s{i}" for i in range(len(used))),
                          d=max(length, 1), **sizes)
    exec(compile(src, f"<bayes_judge nutpie {name}>", "exec"), ns)  # noqa: S102 (generated above)
    return numba.cfunc(sig, nogil=True)(ns[name])


@dataclasses.dataclass(frozen=True)
class DeclaredModel(ncp.CompiledPyMCModel):
    """nutpie's compiled PyMC model whose callbacks read :func:`_pack`'s data vector."""

    def with_data(self, **updates):
        """The model on new values of its shared variables (same dtype and rank)."""
        shared = dict(self.shared_data)
        for name, value in updates.items():
            if name not in shared:
                raise KeyError(f"Unknown shared variable: {name}")
            new = np.array(value, dtype=shared[name].dtype, order="C", copy=True)
            if new.ndim != shared[name].ndim:
                raise ValueError(f"Shared variable {name} must have rank {shared[name].ndim}, got {new.ndim}")
            new.flags.writeable = False
            shared[name] = new
        return dataclasses.replace(self, shared_data=shared, user_data=_pack(shared))


def compile_declaration(model, *, initial_points: Mapping[str, Any] | None = None,
                        var_names: Iterable[str] | None = None):
    """The PyMC ``model`` compiled for ``nutpie.sample`` (numba), as ``nutpie.compile_pymc_model(
    model, backend="numba", initial_points=..., jitter_rvs=set(), var_names=...)`` compiles it.

    Parameters
    ----------
    model : pymc.Model
    initial_points : start values by variable name (constrained), as nutpie's argument
    var_names : the variables stored per draw (default: all)

    Returns
    -------
    DeclaredModel
        nutpie's ``CompiledPyMCModel``, with ``with_data`` for new values of the shared data.
    """
    from pymc.initial_point import make_initial_point_fn

    start_fn = ncp._wrap_with_lock(make_initial_point_fn(
        model=model, overrides=initial_points, default_strategy="support_point", jitter_rvs=set(),
        return_transformed=True,
    ))
    n_dim, n_expanded, logp_fn, expand_fn, initial_point_fn, shape_info = ncp._make_functions(
        model, mode="NUMBA", compute_grad=True, join_expanded=True, pymc_initial_point_fn=start_fn,
        var_names=var_names,
    )
    variables: dict[str, Any] = {}
    for var in [*logp_fn.get_shared(), *expand_fn.get_shared()]:
        if variables.setdefault(var.name, var) is not var:
            raise ValueError(f"Shared variables must have unique names: {var.name}")
    shared = {name: np.array(var.get_value(), order="C", copy=True) for name, var in variables.items()}
    for arr in shared.values():
        arr.flags.writeable = False
    logp_sig, expand_sig = c_signatures(numba.types.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # numba's speed hints on the code pytensor generates (np.dot on non-contiguous views, seen
        # where the caches are empty): not the user's code, nor ours
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        logp = _callback(_LOGP_SRC, "logp_callback", logp_sig, logp_fn.vm.jit_fn,
                         [v.name for v in logp_fn.get_shared()], shared, n=n_dim)
        expand = _callback(_EXPAND_SRC, "expand_callback", expand_sig, expand_fn.vm.jit_fn,
                           [v.name for v in expand_fn.get_shared()], shared, n=n_dim, m=n_expanded)
    dims, coords = ncp._prepare_dims_and_coords(model, shape_info)
    return DeclaredModel(
        _n_dim=n_dim,
        dims=dims,
        _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp,
        compiled_expand_func=expand,
        initial_point_func=initial_point_fn,
        shared_data=shared,
        user_data=_pack(shared),
        n_expanded=n_expanded,
        shape_info=shape_info,
        logp_func=logp_fn,
        expand_func=expand_fn,
    )
