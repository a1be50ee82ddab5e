"""Prediction-powered inference (PPI, PPI++) for a mean, and the labels-alone interval of a share.

A judge's per-item prediction ``f_i`` (e.g. the share of its verdicts that prefer G0) is cheap on
every item; the human label ``y_i`` (1 when a human prefers G0) is known on a few.  PPI estimates
the mean of ``y`` from the mean of ``f`` over the unlabelled items, corrected by the mean
*rectifier* ``y - f`` on the labelled ones; PPI++ weights the prediction term by ``lam`` chosen
to minimize the estimator's variance.  Intervals are normal approximations: honest with many
labels, short of nominal with a handful (the benchmark ``benchmarks/real_calibration.py``
measures how short).

Conventions follow the reference implementation ``ppi_py`` (PyPI ``ppi-python``), against which
``tests/winrate/test_ppi.py`` checks this module: variances are the plain (``ddof=0``)
empirical variances, ``lam=None`` means the power-tuned ``lam`` (as ``ppi_py``'s
``lam=None``), and the tuned ``lam`` is clipped to ``[0, 1]``.

References
----------
.. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic.  Prediction-powered
   inference.  Science 382(6671):669-674, 2023 (arXiv:2301.09633), §2 "mean estimation": the
   estimate ``mean(f~) - mean(f - y)`` and its interval ``± z_{1-α/2} sqrt(σ²_f~/N + σ²_{f-y}/n)``.
.. [2] A. N. Angelopoulos, J. C. Duchi, T. Zrnic.  PPI++: Efficient prediction-powered inference.
   arXiv:2311.01453, 2023: the λ-weighted (power-tuned) estimate of a mean,
   ``λ·mean(f~) + mean(y - λ f)``, and the variance-minimizing
   ``λ̂ = Cov(y, f) / ((1 + n/N) Var(f))`` (§2 and §6, power tuning; the mean is the special
   case ``ℓ_θ(y) = (y - θ)²/2`` with Hessian 1).  Equation numbers are not given here because
   they differ between the paper's versions.
.. [3] C. J. Clopper, E. S. Pearson.  The use of confidence or fiducial limits illustrated in the
   case of the binomial.  Biometrika 26(4):404-413, 1934.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

__all__ = ["PPIResult", "LabelsOnlyResult", "ppi_mean", "labels_only_interval"]


@dataclass(frozen=True)
class PPIResult:
    """A prediction-powered estimate of a mean with its normal-approximation interval.

    Attributes
    ----------
    estimate : float
        Point estimate of the mean of ``y``.
    se : float
        Estimated standard error of ``estimate``.
    low, high : float
        ``estimate ∓ z_{1-α/2} · se`` (not clipped: a share's interval may leave [0, 1]).
    lam : float
        Weight of the prediction term (1: classic PPI, 0: labels alone).
    n : int
        Number of labelled items.
    N : int
        Number of unlabelled items.
    alpha : float
        Error level; the interval targets coverage ``1 - alpha``.
    """

    estimate: float
    se: float
    low: float
    high: float
    lam: float
    n: int
    N: int
    alpha: float


@dataclass(frozen=True)
class LabelsOnlyResult:
    """A share estimated from the labels alone.

    Attributes
    ----------
    estimate : float
        Posterior mean ``(k + 1) / (n + 2)`` under a uniform Beta(1, 1) prior.
    low, high : float
        Exact (Clopper-Pearson) ``1 - alpha`` interval.
    k, n : int
        Successes and labels.
    alpha : float
        Error level.
    """

    estimate: float
    low: float
    high: float
    k: int
    n: int
    alpha: float


def _vector(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per item), got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s), first at index "
            f"{int(np.flatnonzero(bad)[0])}; drop or fill those items first"
        )
    return arr


def _check_alpha(alpha: float) -> float:
    a = float(alpha)
    if not (0.0 < a < 1.0):
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return a


def _tuned_lam(y: np.ndarray, f: np.ndarray, f_unl: np.ndarray) -> float:
    """PPI++'s variance-minimizing weight for a mean, clipped to [0, 1] (ref. [2]).

    ``λ̂ = Ĉov(y, f) / ((1 + n/N) V̂ar(f ∪ f~))`` with the labelled covariance over ``n`` and the
    prediction variance over all ``n + N`` predictions (``ddof=1``), as ``ppi_py`` computes it.
    Constant predictions carry no information, and every ``λ`` then gives the same estimate and
    interval: ``λ = 0`` is returned.
    """
    n, N = y.size, f_unl.size
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var = float(np.var(np.concatenate([f, f_unl]), ddof=1))
    if var <= 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / N) * var), 0.0, 1.0))


def ppi_mean(
    y_labelled,
    f_labelled,
    f_unlabelled,
    *,
    alpha: float = 0.1,
    lam: float | Literal["tuned"] | None = None,
) -> PPIResult:
    """Prediction-powered estimate and interval for the mean of ``y`` (PPI / PPI++).

    ``θ̂ = λ · mean(f_unlabelled) + mean(y_labelled − λ · f_labelled)`` with standard error
    ``sqrt(λ² σ̂²(f_unlabelled) / N + σ̂²(y_labelled − λ f_labelled) / n)`` and the interval
    ``θ̂ ± z_{1−α/2} · se``.  Labelled and unlabelled items are two independent samples of
    the same population, the labelled ones drawn at random (refs. [1], [2]).

    Parameters
    ----------
    y_labelled : array_like, shape (n,)
        Gold labels (for a win rate: 1 if a human prefers G0, else 0; any real values work).
    f_labelled : array_like, shape (n,)
        Predictions for the labelled items, in the same order.
    f_unlabelled : array_like, shape (N,)
        Predictions for the unlabelled items.
    alpha : float
        Error level in (0, 1); the interval targets coverage ``1 - alpha`` (default 90%).
    lam : float, "tuned" or None
        Weight of the predictions.  ``1.0``: classic PPI [1]; ``0.0``: the labels' mean with its
        CLT interval; ``"tuned"`` or ``None`` (default, as in ``ppi_py``): PPI++'s power-tuned
        ``λ̂`` [2], clipped to ``[0, 1]``.  A float is used as given (any finite value keeps
        the estimate unbiased).

    Returns
    -------
    PPIResult
        estimate, se, low, high, lam, n, N, alpha.

    Raises
    ------
    ValueError
        Inputs that are not one-dimensional, contain NaN or infinity, or whose lengths do not
        match (``y_labelled`` vs ``f_labelled``); fewer than 2 labelled or 2 unlabelled items;
        ``alpha`` outside (0, 1); an unknown or non-finite ``lam``.

    Notes
    -----
    *A single label is an error.*  With ``n = 1`` the rectifier's variance is estimated as zero
    (``ppi_py`` does so and returns an interval that ignores the label noise entirely), which
    claims a precision the data cannot support.  Use :func:`labels_only_interval` for one
    label, or collect more.  Likewise ``N = 1`` is refused.

    The variances are the plain empirical ones (``ddof=0``), as in ``ppi_py``; with a handful of
    labels the interval is short of its nominal coverage, which is a property of the method.

    See Also
    --------
    labels_only_interval : exact interval from the labels alone.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.binomial(1, 0.7, 200).astype(float)
    >>> f = np.clip(y * 0.8 + rng.normal(0.1, 0.1, 200), 0, 1)
    >>> r = ppi_mean(y[:30], f[:30], f[30:], alpha=0.1, lam=1.0)
    >>> bool(r.low < r.estimate < r.high), r.n, r.N
    (True, 30, 170)
    """
    a = _check_alpha(alpha)
    y = _vector(y_labelled, "y_labelled")
    f = _vector(f_labelled, "f_labelled")
    fu = _vector(f_unlabelled, "f_unlabelled")
    if y.size != f.size:
        raise ValueError(
            f"y_labelled and f_labelled must have one value per labelled item each; got "
            f"{y.size} labels and {f.size} predictions"
        )
    if y.size < 2:
        raise ValueError(
            f"ppi_mean needs at least 2 labelled items for a normal-approximation interval, got "
            f"{y.size}: with one label the rectifier's variance cannot be estimated. Use "
            "labels_only_interval() for an exact interval, or label more items"
        )
    if np.unique(y).size < 2:
        raise ValueError(
            f"ppi_mean: all {y.size} labels are {y[0]:g}: with labels of one value the rectifier's "
            "variance is not estimable from them and the normal interval collapses (p = 1.0 [1.0, 1.0] "
            "for labels of one class). Use labels_only_interval() for an exact interval, or label more items"
        )
    if fu.size < 2:
        raise ValueError(f"ppi_mean needs at least 2 unlabelled predictions, got {fu.size}")
    if lam is None or (isinstance(lam, str) and lam == "tuned"):
        lam_v = _tuned_lam(y, f, fu)
    elif isinstance(lam, str):
        raise ValueError(f"lam must be a number, 'tuned' or None, got {lam!r}")
    else:
        lam_v = float(lam)
        if not np.isfinite(lam_v):
            raise ValueError(f"lam must be finite, got {lam!r}")
    n, N = y.size, fu.size
    estimate = lam_v * float(fu.mean()) + float(np.mean(y - lam_v * f))
    se = float(np.sqrt(lam_v**2 * np.var(fu) / N + np.var(y - lam_v * f) / n))
    z = float(stats.norm.ppf(1.0 - a / 2.0))
    return PPIResult(
        estimate=estimate, se=se, low=estimate - z * se, high=estimate + z * se,
        lam=lam_v, n=int(n), N=int(N), alpha=a,
    )


def labels_only_interval(y, alpha: float = 0.1) -> LabelsOnlyResult:
    """A share from 0/1 labels alone: Beta(1, 1) posterior mean and exact Clopper-Pearson interval.

    Parameters
    ----------
    y : array_like of {0, 1} (or bool), shape (n,)
        The labels (for a win rate: 1 if a human prefers G0).
    alpha : float
        Error level in (0, 1); the interval has coverage at least ``1 - alpha`` for every true
        share (it is conservative).

    Returns
    -------
    LabelsOnlyResult
        ``estimate = (k + 1) / (n + 2)``; ``low = B⁻¹(α/2; k, n − k + 1)`` (0 when k = 0) and
        ``high = B⁻¹(1 − α/2; k + 1, n − k)`` (1 when k = n), with ``B⁻¹`` the Beta quantile
        (ref. [3]).

    Raises
    ------
    ValueError
        No labels, values other than 0 / 1, NaN, or ``alpha`` outside (0, 1).

    Notes
    -----
    One label is answered honestly: e.g. ``y = [1]`` at ``alpha = 0.1`` gives ``[0.05, 1]``.

    Examples
    --------
    >>> r = labels_only_interval([1, 1, 0, 1], alpha=0.1)
    >>> round(r.estimate, 3), round(r.low, 3), round(r.high, 3)
    (0.667, 0.249, 0.987)
    """
    a = _check_alpha(alpha)
    arr = _vector(y, "y")
    if arr.size == 0:
        raise ValueError("labels_only_interval needs at least one label, got none")
    if not np.isin(arr, (0.0, 1.0)).all():
        bad = np.flatnonzero(~np.isin(arr, (0.0, 1.0)))
        raise ValueError(f"y must hold 0 / 1 labels; got {arr[bad[0]]!r} at index {int(bad[0])}")
    n = int(arr.size)
    k = int(arr.sum())
    low = 0.0 if k == 0 else float(stats.beta.ppf(a / 2.0, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1.0 - a / 2.0, k + 1, n - k))
    return LabelsOnlyResult(estimate=(k + 1) / (n + 2), low=low, high=high, k=k, n=n, alpha=a)
