"""Optional fast paths: hand-written log-densities registered for a declared model by name.

A fast path is never the definition of a model: it is a speed-up for ``sampler="nutpie"``,
checked by one generic test (``tests/inference/test_fastpaths.py``) against the declaration's
own compiled log-density and gradient.  A fast path is a callable::

    fn(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept)
        -> (posterior: dict name -> (chains, draws, ...) array, stats: dict name -> (chains, draws))

plus, for the gradient test, ``fn.logp_grad(x, arrays, coords, priors[, options]) -> (logp, grad)``
(and ``fn.option_cases``, the declaration options to check) on the
declaration's unconstrained space (PyMC's value variables in ``model.value_vars`` order), and
optionally ``fn.accepts(priors, options, arrays) -> bool``: a kernel written for particular
prior families (or data, e.g. without human labels) declines others, and the declaration is
sampled instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register_fast_path", "fast_path", "fast_paths"]

_FAST: dict[tuple[str, str], Callable[..., Any]] = {}  # a user's, added by register_fast_path
_BUILTIN: dict[tuple[str, str], Callable[..., Any]] = {}


def register_fast_path(task: str, name: str, fn: Callable[..., Any]) -> None:
    """Register ``fn`` as the nutpie fast path of the model ``name`` of ``task``."""
    _FAST[(task, name)] = fn


def _builtin() -> dict[tuple[str, str], Callable[..., Any]]:
    """The package's own kernels (:mod:`bayes_judge.inference.kernels`), imported on first use
    (numba compiles them lazily, but importing numba is not free)."""
    if not _BUILTIN:
        from .kernels import builtin_fast_paths

        _BUILTIN.update(builtin_fast_paths())
    return _BUILTIN


def fast_path(task: str, name: str) -> Callable[..., Any] | None:
    """The fast path registered for a model, or None (a user's registration wins)."""
    return _FAST.get((task, name)) or _builtin().get((task, name))


def fast_paths() -> dict[tuple[str, str], Callable[..., Any]]:
    """Every registered fast path by (task, name)."""
    return {**_builtin(), **_FAST}
