"""A model's initial point on the unconstrained space, compiled once per model."""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["initial_point"]

_POINT_FNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def initial_point(model) -> dict[str, np.ndarray]:
    """``model.initial_point()`` from a function compiled once per model (it reads the model's
    shared data, so a refit's new shapes show); PyMC compiles it anew on every call."""
    fn = _POINT_FNS.get(model)
    if fn is None:
        from pymc.initial_point import make_initial_point_fn

        fn = _POINT_FNS[model] = make_initial_point_fn(model=model, return_transformed=True)
    return fn(0)
