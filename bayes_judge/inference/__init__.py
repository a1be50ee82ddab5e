"""Inference: one sampling entry for every declared model, and the registered fast paths.

:func:`fit_model` runs NUTS on a declaration of :mod:`bayes_judge.generative` with
``sampler="nutpie" | "pymc" | "numpyro"`` and returns InferenceData built one way.
"""

from .fastpaths import fast_path, register_fast_path
from .fit import (
    Fit,
    clear_compiled,
    fit_model,
    latent_draws,
    pointwise_log_lik,
    predictive_draws,
)
from .settings import APPROXIMATE, SAMPLERS, SAMPLING, Sampling

__all__ = [
    "SAMPLERS",
    "APPROXIMATE",
    "SAMPLING",
    "Sampling",
    "fit_model",
    "latent_draws",
    "pointwise_log_lik",
    "predictive_draws",
    "Fit",
    "clear_compiled",
    "register_fast_path",
    "fast_path",
]
