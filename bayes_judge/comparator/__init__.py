"""The LLM comparator (behind the ``llm`` extra: torch, transformers, gguf, accelerate).

Importing this subpackage is cheap; torch and transformers load when a model does.

>>> from bayes_judge.comparator import Comparator       # doctest: +SKIP
>>> judge = Comparator(template="summeval-coherence")    # the embedded default judge
>>> df = judge.compare(pairs, texts=texts, contexts=contexts, symmetric=True, store="run.sqlite")
>>> judge = Comparator(endpoint="http://127.0.0.1:8000/v1", model="served-name")  # any OpenAI-compatible server
>>> df = judge.compare(pairs, texts=texts, contexts=contexts, engine="ray")  # fanned out over Ray actors
"""

from __future__ import annotations

from ..diagnose import UninformativeJudgeWarning, diagnose_judgments
from .bias import debias_position, position_bias
from .endpoint import (
    EndpointAuthError,
    EndpointError,
    EndpointModelError,
    EndpointResponseError,
    EndpointUnreachableError,
    LabelTokenError,
    LogprobsFallbackWarning,
    LogprobsUnavailableError,
    MissingLabelsWarning,
)
from .install import MissingModelError, default_model_path, install_default_model
from .parse import parse_choice
from .store import JudgmentStore, StoreMismatchError
from .templates import PRESETS, PromptTemplate, get_template

__all__ = [
    "Comparator",
    "MODES",
    "ContextTooLongWarning",
    "PromptTemplate",
    "PRESETS",
    "get_template",
    "JudgmentStore",
    "StoreMismatchError",
    "install_default_model",
    "default_model_path",
    "MissingModelError",
    "position_bias",
    "debias_position",
    "parse_choice",
    "load_model",
    "diagnose_judgments",
    "UninformativeJudgeWarning",
    "EndpointError",
    "EndpointUnreachableError",
    "EndpointAuthError",
    "EndpointModelError",
    "EndpointResponseError",
    "LogprobsUnavailableError",
    "LabelTokenError",
    "MissingLabelsWarning",
    "LogprobsFallbackWarning",
]


def __getattr__(name: str):
    if name in ("Comparator", "MODES", "ContextTooLongWarning"):
        from . import comparator

        return getattr(comparator, name)
    if name == "load_model":
        from .models import load_model

        return load_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
