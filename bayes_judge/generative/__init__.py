"""The library of generative models: each declared once, in PyMC, registered by name and task.

>>> from bayes_judge.generative import list_models
>>> [m.name for m in list_models("win-rate")]
['consensus', 'dawid-skene', 'hierarchical', 'independent', 'one-coin', 'regression']

See :mod:`bayes_judge.generative.registry` for what a declaration is and what is derived from
it, :mod:`~bayes_judge.generative.priors` for prior objects, and
:mod:`~bayes_judge.generative.winrate_models` for the win-rate models.
"""

from .priors import Beta, HalfNormal, Normal, Prior, Priors
from .registry import (
    TASKS,
    ModelSpec,
    generative_model,
    get_model,
    list_models,
    register_model,
    unregister_model,
)

__all__ = [
    "TASKS",
    "ModelSpec",
    "generative_model",
    "register_model",
    "unregister_model",
    "get_model",
    "list_models",
    "Prior",
    "Priors",
    "Beta",
    "Normal",
    "HalfNormal",
]
