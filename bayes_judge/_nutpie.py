"""nutpie's Rust NUTS on a hand-written numba log-density: the model-independent plumbing.

A model is a pair of C callbacks (``numba.cfunc``) with nutpie's C ABI and one contiguous
float64 data buffer handed to both as ``user_data`` (so the compiled code has no data baked in
and a refit only packs a new buffer):

* ``logp(dim, x*, grad_out*, logp_out*, user_data*) -> int64``: log density at the unconstrained
  point ``x`` (length ``dim``), gradient written to ``grad_out``; 0 on success, non-zero to
  reject the point (nutpie treats it as a divergence / failed initialization);
* ``expand(dim, n_expanded, x*, out*, user_data*) -> int64``: the values stored per draw
  (length ``n_expanded``, e.g. the constrained parameters).

:func:`make_model` wraps them in nutpie's own ``CompiledPyMCModel`` (its numba path, minus
PyMC), :func:`run` samples it and returns the draws and sampler statistics as
``(chains, draws, ...)`` arrays, post-warmup only.  Used by
:mod:`bayes_judge.annotation.ds_fast` and :mod:`bayes_judge.ranking.bayesian_fast`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numba
import numpy as np

__all__ = ["LOGP_SIG", "EXPAND_SIG", "make_model", "run", "read_trace"]

# nutpie's C ABI; user_data is declared double* (same pointer ABI as nutpie's record pointer).
LOGP_SIG = numba.types.int64(
    numba.types.uint64,
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
)
EXPAND_SIG = numba.types.int64(
    numba.types.uint64,
    numba.types.uint64,
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
)


# the required fields of nutpie 0.16.8's CompiledPyMCModel, which make_model fills
_KNOWN_FIELDS = {
    "dims", "compiled_logp_func", "compiled_expand_func", "initial_point_func", "shared_data",
    "user_data", "n_expanded", "shape_info", "logp_func", "expand_func", "_n_dim", "_shapes", "_coords",
}


def make_model(
    *,
    logp_cfunc,
    expand_cfunc,
    buf: np.ndarray,
    init_flat: np.ndarray,
    shapes: Mapping[str, tuple[int, ...]],
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, np.ndarray],
    logp_grad=None,
):
    """A nutpie model around two C callbacks and their data buffer.

    Parameters
    ----------
    logp_cfunc, expand_cfunc : numba ``CFunc``
        Compiled with :data:`LOGP_SIG` and :data:`EXPAND_SIG`.
    buf : ndarray of float64, shape (B,)
        The data buffer passed to both callbacks (kept alive by the model).
    init_flat : ndarray of float64, shape (n_dim,)
        Starting point of every chain on the unconstrained space (no jitter).
    logp_grad : callable ``(x, buf, grad) -> logp``, optional
        The kernel behind ``logp_cfunc``, callable from Python.  nutpie initializes its mass
        matrix from the gradient at the start and rejects a start with an exactly-zero gradient
        entry (a perfectly symmetric start, a candidate whose comparisons cancel); given the
        kernel, such entries of the start are moved by 1e-6.
    shapes : mapping name -> shape, in the order of the expanded vector
        The stored variables; their sizes sum to the expanded length (``()`` for a scalar).
    dims, coords : dimension names per variable (scalars may be left out) and their coordinates.

    Returns
    -------
    nutpie.compile_pymc.CompiledPyMCModel
    """
    import dataclasses

    from nutpie.compile_pymc import CompiledPyMCModel

    fields = {f.name for f in dataclasses.fields(CompiledPyMCModel) if f.default is dataclasses.MISSING
              and f.default_factory is dataclasses.MISSING}
    if fields - _KNOWN_FIELDS:
        import nutpie

        raise RuntimeError(
            f"nutpie {nutpie.__version__}'s CompiledPyMCModel needs fields {sorted(fields - _KNOWN_FIELDS)} that "
            "the hand-written fast paths do not provide (they were written for nutpie 0.16.8, which "
            "pyproject.toml pins); install nutpie==0.16.8 or fit with fast=False"
        )
    buf = np.ascontiguousarray(buf, dtype=np.float64)
    init_flat = np.array(init_flat, dtype=np.float64)
    if init_flat.ndim != 1:
        raise ValueError(f"init_flat must be a 1-d vector, got shape {init_flat.shape}")
    n = init_flat.shape[0]
    if logp_grad is not None:
        g0 = np.empty_like(init_flat)
        logp_grad(init_flat, buf, g0)
        init_flat = np.where(g0 == 0.0, init_flat + 1e-6, init_flat)
    names = list(shapes)
    shape_list = [tuple(int(d) for d in shapes[k]) for k in names]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shape_list]
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def initial_point(seed):  # every chain starts at the same point (see DESIGN.md)
        return init_flat.copy()

    return CompiledPyMCModel(
        _n_dim=n,
        dims={k: tuple(dims[k]) for k in names if k in dims},
        _coords={**coords, "unconstrained_parameter": np.arange(n)},
        _shapes=dict(zip(names, shape_list, strict=True)),
        compiled_logp_func=logp_cfunc,
        compiled_expand_func=expand_cfunc,
        initial_point_func=initial_point,
        shared_data={},
        user_data=buf,
        n_expanded=int(bounds[-1]),
        shape_info=(names, slices, shape_list),
        logp_func=None,
        expand_func=None,
    )


def _column(batches, name: str, tuning: Sequence[np.ndarray]) -> np.ndarray:
    """(chains, draws, ...) array of one arrow column, post-warmup rows only."""
    import pyarrow

    out: list[np.ndarray] = []
    for b in batches:
        col = pyarrow.array(b.column(name))
        if hasattr(col, "flatten"):
            vals = col.flatten().to_numpy(zero_copy_only=False)
            vals = vals.reshape(len(col), -1)
        else:
            vals = col.to_numpy(zero_copy_only=False)
        out.append(vals[~tuning[len(out)]])
    return np.stack(out)


def read_trace(
    raw, shapes: Mapping[str, tuple[int, ...]], chains: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Post-warmup draws and sampler statistics of a raw nutpie trace.

    Parameters
    ----------
    raw : the object ``nutpie.sample(..., return_raw_trace=True)`` returns
    shapes : mapping name -> shape of the stored variables to read
    chains : number of chains

    Returns
    -------
    posterior : {name: (chains, draws, *shape)}
    stats : {"diverging", "energy", "n_steps", "acceptance_rate", "lp"}, each (chains, draws),
        the layout of :func:`bayes_judge.inference.sample_numpyro`.
    """
    import pyarrow

    draw_batches, stat_batches = raw.get_arrow_trace()
    tuning = [
        np.asarray(pyarrow.array(b.column("tuning")).to_numpy(zero_copy_only=False), dtype=bool)
        for b in stat_batches
    ]
    post = {
        k: _column(draw_batches, k, tuning).reshape(chains, -1, *shape) for k, shape in shapes.items()
    }

    def sc(name):
        return _column(stat_batches, name, tuning).reshape(chains, -1)

    stats = {
        "diverging": sc("diverging").astype(bool),
        "energy": sc("energy"),
        "n_steps": sc("n_steps"),
        "acceptance_rate": sc("mean_tree_accept"),
        "lp": sc("logp"),
    }
    return post, stats


def run(
    model,
    *,
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    target_accept: float,
    cores: int | None = None,
    save_warmup: bool = True,
    read: Mapping[str, tuple[int, ...]] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Sample a model of :func:`make_model` with nutpie's NUTS.

    Parameters
    ----------
    model : from :func:`make_model`
    chains, draws, tune : number of chains, post-warmup draws and warmup draws per chain
    seed : nutpie's seed; each chain has its own RNG stream derived from it, so the draws do not
        depend on ``cores``
    target_accept : step-size adaptation target
    cores : threads for the chains (default ``min(chains, os.cpu_count())``)
    save_warmup : whether nutpie keeps the warmup draws (they are dropped here either way;
        ``False`` saves memory for large models)
    read : the stored variables to return (default all of ``model.shapes``)

    Returns
    -------
    posterior, stats : see :func:`read_trace`
    """
    import nutpie

    for name, v in (("chains", chains), ("draws", draws)):
        if int(v) < 1:
            raise ValueError(f"{name} must be >= 1, got {v!r}")
    if int(tune) < 0:
        raise ValueError(f"tune must be >= 0, got {tune!r}")
    if not 0.0 < float(target_accept) < 1.0:
        raise ValueError(f"target_accept must be in (0, 1), got {target_accept!r}")
    if cores is None:
        cores = max(1, min(chains, os.cpu_count() or 1))
    raw = nutpie.sample(
        model,
        draws=int(draws),
        tune=int(tune),
        chains=int(chains),
        cores=int(cores),
        seed=int(seed),
        progress_bar=False,
        return_raw_trace=True,
        target_accept=float(target_accept),
        save_warmup=save_warmup,
    )
    return read_trace(raw, model.shapes if read is None else read, int(chains))
