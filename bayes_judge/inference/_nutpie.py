"""nutpie's Rust NUTS on a hand-written numba log-density: the model-independent plumbing.

A fast path supplies two numba kernels (``numba.njit``) on one contiguous float64 data buffer
``buf`` (its own layout: the compiled code has no data baked in, a refit only packs a new buffer):

* ``logp_grad(x, buf, grad) -> float``: log density at the unconstrained point ``x`` (length
  ``n_dim``), its gradient written into ``grad``;
* ``expand(x, buf, out) -> None``: the values stored per draw into ``out`` (length
  ``n_expanded``, e.g. the constrained parameters).

:func:`callbacks` wraps them in the two C callbacks of nutpie's C ABI (``numba.cfunc``,
:data:`LOGP_SIG` and :data:`EXPAND_SIG`); nutpie hands them its ``user_data`` pointer, here
``[len(buf), n_dim, n_expanded, k, nnz, *buf, *sh]`` (:func:`make_model` packs it; ``sh`` is
the packed :class:`Shear`, absent with ``k = 0``), and the callbacks check
the dimensions, view the buffer and reject a non-finite log density or gradient (nutpie treats
a non-zero return as a divergence / failed initialization).  :func:`make_model` wraps them in
nutpie's own ``CompiledPyMCModel`` (its numba path, minus PyMC), :func:`run` samples it and
returns the draws and sampler statistics as ``(chains, draws, ...)`` arrays, post-warmup only.

A :class:`Shear` (a fixed linear change of the sampled coordinates on a few directions,
:mod:`bayes_judge.inference.laplace`) lets nutpie sample ``y`` with ``x = y + V (B − I) Vᵀ y``:
the callbacks map ``y`` to the kernel's ``x`` and the gradient back (``∇_y = ∇_x + V (B − I)ᵀ
Vᵀ ∇_x``), in O(n + nnz(V) + k²) an evaluation.  The map is linear with a constant Jacobian, so the
posterior of ``x`` is unchanged; the reported log density is the kernel's, without that
constant.
Used by :mod:`bayes_judge.inference.kernels.dawid_skene`, :mod:`bayes_judge.inference.kernels.regression`
and :mod:`bayes_judge.inference.kernels.ranking`.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import threading
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["LOGP_SIG", "EXPAND_SIG", "c_signatures", "Shear", "callbacks", "make_model", "run", "read_trace"]


def c_signatures(user_data=numba.types.double):
    """nutpie's C ABI, ``(logp, expand)`` numba signatures, with ``user_data`` declared a pointer
    to ``user_data`` (the same pointer ABI as nutpie's record pointer):
    ``logp(dim, x, grad, logp, user_data) -> int64`` and
    ``expand(dim, n_expanded, x, out, user_data) -> int64``."""
    t = numba.types
    ptr, data = t.CPointer(t.double), t.CPointer(user_data)
    return (t.int64(t.uint64, ptr, ptr, ptr, data), t.int64(t.uint64, t.uint64, ptr, ptr, data))


# the fast paths' callbacks read a float64 user data vector
LOGP_SIG, EXPAND_SIG = c_signatures()


_HEAD = 5  # nutpie's user data: [len(buf), n_dim, n_expanded, k, nnz, *buf, *sh] (make_model; sh: _shear's)


@numba.njit(cache=True, nogil=True)
def _shear(y, sh, transpose, out):  # pragma: no cover (compiled by numba)
    """``out = y + V M Vᵀ y`` (``Mᵀ`` with ``transpose``); ``out`` may be ``y``.

    ``sh`` is ``[k, nnz, rows (nnz), columns (nnz), values (nnz), M (k × k, row-major)]``: ``V``'s
    nonzero entries, so the cost is O(nnz + k²)."""
    k, nnz = int(sh[0]), int(sh[1])
    rows, cols, vals, M = sh[2:2 + nnz], sh[2 + nnz:2 + 2 * nnz], sh[2 + 2 * nnz:2 + 3 * nnz], sh[2 + 3 * nnz:]
    w = np.zeros(k)
    for t in range(nnz):
        w[int(cols[t])] += vals[t] * y[int(rows[t])]
    m = np.zeros(k)
    for a in range(k):
        for b in range(k):
            m[a] += (M[b * k + a] if transpose else M[a * k + b]) * w[b]
    for i in range(y.shape[0]):
        out[i] = y[i]
    for t in range(nnz):
        out[int(rows[t])] += vals[t] * m[int(cols[t])]


def _pack_shear(shear: Shear, n: int) -> np.ndarray:
    """The flat ``sh`` of :func:`_shear` for a :class:`Shear` of ``n`` coordinates."""
    k = shear.V.shape[1]
    if shear.V.shape != (n, k) or shear.B.shape != (k, k):
        raise ValueError(f"shear: V {shear.V.shape} and B {shear.B.shape} do not fit {n} dimensions")
    rows, cols = np.nonzero(shear.V)
    return np.concatenate([[k, len(rows)], rows, cols, shear.V[rows, cols], np.ravel(shear.B - np.eye(k))])


# The bodies of the two C callbacks.  ``_LOGP_GRAD`` and ``_EXPAND`` are not defined here: each
# model gets a copy of these functions whose globals name its kernels (see ``callbacks``).
def _logp_callback(dim, x_, grad_, logp_, user_data_):  # pragma: no cover (compiled by numba)
    head = numba.carray(user_data_, (_HEAD,))
    n, nb, k, nnz = int(head[1]), int(head[0]), int(head[3]), int(head[4])
    if dim != n:
        return -1
    data = numba.carray(user_data_, (_HEAD + nb + (2 + 3 * nnz + k * k if k else 0),))
    buf = data[_HEAD:_HEAD + nb]
    x = numba.carray(x_, (n,))
    grad = numba.carray(grad_, (n,))
    if k == 0:
        lp = _LOGP_GRAD(x, buf, grad)  # noqa: F821
    else:  # the sampled y -> the kernel's x; the gradient back to y
        sh = data[_HEAD + nb:]
        xs = np.empty(n)
        _shear(x, sh, False, xs)
        lp = _LOGP_GRAD(xs, buf, grad)  # noqa: F821
        _shear(grad, sh, True, grad)
    logp_[0] = lp
    for i in range(n):
        if not np.isfinite(grad[i]):
            return 3
    if not np.isfinite(lp):
        return 4
    return 0


def _expand_callback(dim, n_expanded, x_, out_, user_data_):  # pragma: no cover (compiled by numba)
    head = numba.carray(user_data_, (_HEAD,))
    n, nb, m, k, nnz = int(head[1]), int(head[0]), int(head[2]), int(head[3]), int(head[4])
    if dim != n or n_expanded != m:
        return -1
    data = numba.carray(user_data_, (_HEAD + nb + (2 + 3 * nnz + k * k if k else 0),))
    buf = data[_HEAD:_HEAD + nb]
    x = numba.carray(x_, (n,))
    if k:
        xs = np.empty(n)
        _shear(x, data[_HEAD + nb:], False, xs)
        x = xs
    _EXPAND(x, buf, numba.carray(out_, (m,)))  # noqa: F821
    return 0


@dataclass(frozen=True)
class Shear:
    """A fixed linear change of the sampled coordinates: nutpie samples ``y``, the kernel sees
    ``x = y + V (B − I) Vᵀ y``.

    ``V`` (n × k) has orthonormal columns, the directions it acts on (stored by its nonzero
    entries: unit vectors cost one each); ``B`` (k × k, invertible) is the map of their
    coordinates.  Elsewhere ``x = y``.
    """

    V: np.ndarray
    B: np.ndarray

    def kernel(self, y: np.ndarray) -> np.ndarray:
        """``x`` of a sampled point ``y``."""
        return y + self.V @ ((self.B - np.eye(self.B.shape[0])) @ (self.V.T @ y))

    def sampled(self, x: np.ndarray) -> np.ndarray:
        """``y`` of a kernel point ``x`` (the inverse map: ``B`` becomes ``B⁻¹``)."""
        b_inv = np.linalg.inv(self.B)
        return x + self.V @ ((b_inv - np.eye(self.B.shape[0])) @ (self.V.T @ x))


_CALLBACKS: dict[tuple, tuple] = {}
_CALLBACKS_LOCK = threading.Lock()


def _source_digest(kernel) -> str:
    """A digest of the source file that defines ``kernel`` ("src" when it cannot be read)."""
    try:
        with open(inspect.getfile(getattr(kernel, "py_func", kernel)), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:12]
    except (OSError, TypeError):
        return "src"


def copy_function(fn, qualname: str, **consts):
    """A copy of the plain function ``fn`` (same code, same module) whose globals also hold
    ``consts``, under its own qualified name: numba's on-disk cache keeps one file per qualified
    name next to ``fn``'s source, and the copy has no closure (numba's cache key pickles a
    closure's cells, which differs between processes), so a copy compiled with ``cache=True`` is
    cached like a function of its own."""
    out = types.FunctionType(fn.__code__, {**fn.__globals__, **consts}, qualname.rsplit(".", 1)[-1])
    out.__qualname__ = qualname
    out.__module__ = fn.__module__
    out.__doc__ = fn.__doc__
    return out


def _cfunc(template, sig, name: str, kernels: Mapping[str, object], tag: str):
    """``numba.cfunc(sig, cache=True)`` of a :func:`copy_function` of ``template`` whose globals
    hold ``kernels``: one cache file per model next to this module.  That file is invalidated when
    this module changes (numba's source stamp); ``tag`` holds a digest of the kernels' source
    file, so a changed kernel gets a new cache file instead of the stale code.
    """
    return numba.cfunc(sig, cache=True, nogil=True)(copy_function(template, f"{tag}_{name}", **kernels))


def callbacks(logp_grad, expand):
    """The nutpie C callbacks ``(logp, expand)`` of two numba kernels (compiled once per pair).

    Parameters
    ----------
    logp_grad : numba dispatcher ``(x, buf, grad) -> float``
        Log density at ``x`` (length ``n_dim``); writes its gradient into ``grad``.
    expand : numba dispatcher ``(x, buf, out) -> None``
        Writes the values stored per draw into ``out`` (length ``n_expanded``).

    Returns
    -------
    (logp_cfunc, expand_cfunc) : numba ``CFunc`` with :data:`LOGP_SIG` and :data:`EXPAND_SIG`,
        for user data ``[len(buf), n_dim, n_expanded, *buf]``.
    """
    key = (logp_grad, expand)
    with _CALLBACKS_LOCK:
        if key not in _CALLBACKS:
            mod = str(getattr(logp_grad, "__module__", "kernel")).rsplit(".", 1)[-1]
            digests = dict.fromkeys(_source_digest(k) for k in (logp_grad, expand))
            tag = "_".join([mod, logp_grad.__name__, expand.__name__, *digests])
            _CALLBACKS[key] = (
                _cfunc(_logp_callback, LOGP_SIG, "logp", {"_LOGP_GRAD": logp_grad}, tag),
                _cfunc(_expand_callback, EXPAND_SIG, "expand", {"_EXPAND": expand}, tag),
            )
        return _CALLBACKS[key]


# the required fields of nutpie 0.16.8's CompiledPyMCModel, which make_model fills
_KNOWN_FIELDS = {
    "dims", "compiled_logp_func", "compiled_expand_func", "initial_point_func", "shared_data",
    "user_data", "n_expanded", "shape_info", "logp_func", "expand_func", "_n_dim", "_shapes", "_coords",
}


def make_model(
    logp_grad,
    expand,
    *,
    buf: np.ndarray,
    init_flat: np.ndarray,
    shapes: Mapping[str, tuple[int, ...]],
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, np.ndarray],
    shear: Shear | None = None,
):
    """A nutpie model of two numba kernels and their data buffer.

    Parameters
    ----------
    logp_grad, expand : numba dispatchers
        The model's log density with gradient and its stored values (see :func:`callbacks`).
        nutpie initializes its mass matrix from the gradient at the start and rejects a start
        with an exactly-zero gradient entry (a perfectly symmetric start, a candidate whose
        comparisons cancel): such entries of the start are moved by 1e-6.
    buf : ndarray of float64, shape (B,)
        The data buffer passed to both kernels (a copy with the header is kept by the model).
    init_flat : ndarray of float64, shape (n_dim,)
        Starting point of every chain on the unconstrained space (no jitter).
    shapes : mapping name -> shape, in the order of the expanded vector
        The stored variables; their sizes sum to the expanded length (``()`` for a scalar).
    dims, coords : dimension names per variable (scalars may be left out) and their coordinates.
    shear : Shear, optional
        Sample ``y`` with ``x = y + V (B − I) Vᵀ y`` (module docstring); ``init_flat`` stays on
        the kernel's ``x``.

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
    g0 = np.empty_like(init_flat)
    logp_grad(init_flat, buf, g0)
    init_flat = np.where(g0 == 0.0, init_flat + 1e-6, init_flat)
    names = list(shapes)
    shape_list = [tuple(int(d) for d in shapes[k]) for k in names]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shape_list]
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    n_expanded = int(bounds[-1])
    logp_cfunc, expand_cfunc = callbacks(logp_grad, expand)
    sh = np.zeros(2) if shear is None else _pack_shear(shear, n)
    user_data = np.concatenate([[buf.shape[0], n, n_expanded, sh[0], sh[1]], buf, sh if shear else []])
    user_data = user_data.astype(np.float64)
    if shear is not None:
        init_flat = shear.sampled(init_flat)

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
        user_data=user_data,
        n_expanded=n_expanded,
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
    stats : {"diverging", "energy", "n_steps", "acceptance_rate", "lp"}, each (chains, draws)
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
