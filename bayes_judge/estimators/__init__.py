"""Frequentist reference estimators of a win rate from judge predictions and a few labels.

:mod:`~bayes_judge.estimators.ppi`: prediction-powered inference for a mean (PPI, PPI++) and the
labels-alone interval of a share, the baselines that ``benchmarks/real_calibration.py`` measures
every win-rate estimator against.
"""

from .ppi import LabelsOnlyResult, PPIResult, labels_only_interval, ppi_mean

__all__ = ["PPIResult", "LabelsOnlyResult", "ppi_mean", "labels_only_interval"]
