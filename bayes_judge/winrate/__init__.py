"""Win rates: how often people (or the judges) prefer one system's outputs to another's.

Gao et al. 2024 (Bayesian win-rate sampling, Dawid-Skene) with prediction-powered inference and the
no-label bridge beside them.  A judgments table is encoded once (:mod:`.encode`); each estimator
turns the encoded verdicts into draws of ``p`` per pair of systems:

================  ===============================================================================
module            what it holds
================  ===============================================================================
``estimate``      :func:`win_rate`, the entry point: picks the estimator, builds the InferenceData
``encode``        :func:`encode_win_rate`, :class:`WinRateData`: verdicts per item, judge and pair
``bridge``        without labels: the judges' rate, and the human rate bridged from it
``observed``      observed k with its Beta posterior (Gao et al. 2024, eq. 4)
``bwrs``, ``kde``  Bayesian win-rate sampling and its KDE (Gao et al. 2024, Algorithm 1)
``dawid_skene``   Dawid-Skene's in-distribution and OOD priors (Gao et al. 2024, eq. 12-13)
``ppi``           prediction-powered inference and PPI++ (Angelopoulos et al. 2023)
``transfer``      judge calibration transferred from other labelled sets
``labelling``     :func:`next_labels`: which items a person should label next
``simulate``      :func:`simulate_win_rate`: judgments with a known true rate
================  ===============================================================================

The generative models themselves are declared in :mod:`bayes_judge.generative.winrate_models`.
"""

from .encode import VerdictPatterns, WinRateData, encode_win_rate, verdict_patterns
from .estimate import (
    DS_MODELS,
    ESTIMANDS,
    METHODS,
    PRIORS,
    LabelSwitchingWarning,
    transfer_sources,
    win_rate,
)
from .labelling import next_labels
from .simulate import simulate_win_rate

__all__ = [
    "win_rate", "encode_win_rate", "WinRateData", "VerdictPatterns", "verdict_patterns", "transfer_sources",
    "next_labels", "simulate_win_rate", "LabelSwitchingWarning", "METHODS", "PRIORS", "DS_MODELS", "ESTIMANDS",
]
