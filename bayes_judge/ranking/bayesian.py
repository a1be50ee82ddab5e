"""Bayesian scores from pairwise comparisons (Liusie et al. 2024 (PoE) §3, as posteriors instead of MAP / closed form).

The models are declared once, in :mod:`bayes_judge.generative.ranking_models` (task
``"ranking"``): ``"poe-bt"`` (soft Bradley-Terry experts, §3.2), ``"poe-g"`` (Gaussian experts
with linear mean and constant variance, eq. 12) and ``"bt"`` (hard Bradley-Terry, eq. 1-2, with
Davidson's ties), each over the scores ``s`` of every candidate (sum to zero within every item)
and, for ``"poe-bt"`` and ``"bt"``, an optional position-bias shift ``gamma``.  :func:`fit_scores`
samples one of them by NUTS with :func:`bayes_judge.inference.fit_model` (``sampler="nutpie" |
"pymc" | "numpyro"``; nutpie runs the registered numba kernel of
:mod:`bayes_judge.inference.kernels.ranking` unless ``fast=False``) and returns InferenceData built by
:func:`bayes_judge.inference.idata.build_idata`.

Sampling the Gaussian experts.  The comparisons identify ``alpha (s_i - s_j)``, not ``alpha`` and
``s`` apart.  With informative comparisons the posterior in ``(s_raw, alpha)`` is a thin ridge
``alpha |s| ~ const`` that NUTS crosses slowly (nutpie: ESS 25 of 2000 draws, r_hat 1.09 at
N = 50, K = 500); in ``(delta_raw = alpha s_raw, alpha)`` the likelihood pins ``delta_raw`` and
``alpha`` is left a smooth one-dimensional conditional.  With weak comparisons it is the other
way round (``delta_raw`` and ``alpha`` form a funnel).  The declaration therefore samples the same
prior ``s_raw ~ Normal(0, sigma_s)`` partially non-centred, ``r = alpha^(1 - w) s_raw``, with ``w``
chosen from the data before sampling (:func:`gaussian_centring`): ``w = 0`` (centred,
``r = delta_raw``) when the pilot scores' spread is at least 4.6 times their sampling variance,
else ``w = 1`` (``r = s_raw``).  The model, and the posterior reported (``s``, ``s_raw``,
``alpha``, ``beta``, ``sigma``), do not depend on ``w``; only the sampler's geometry does.
``idata.attrs`` record ``centring_w`` and ``centring_snr``.

Comparing the three models (:func:`bayes_judge.compare_models`).  Their own pointwise
log-likelihoods, ``log_likelihood["c"]`` (the declarations' observed variable ``c``), score
different things: ``poe-bt`` a fractional Bernoulli pseudo-likelihood of the soft ``p_ij`` (not a
density of ``p_ij``; the expert's normalizer ``Z_ij`` of §3.2 is a constant in ``s``, not in
``p``), ``poe-g`` a Gaussian density of ``p_ij`` (eq. 12), ``bt`` a probability of the hard
decision ``y_ij``.  Their sums are on different scales, so ``az.compare`` on ``"c"`` across models
is meaningless.  What every model does predict is the hard decision of a comparison, ``y_ij = 1``
when the judge prefers ``i``::

    poe-bt, bt :  P(y_ij = 1 | s) = sigma(d)                           (eq. 1-2; Davidson: given no tie)
    poe-g      :  P(y_ij = 1 | s) = P(p_ij > 1/2) = Phi((alpha d + beta - 1/2) / sigma)   (eq. 12)

with ``d = s_i - s_j (+ gamma)``; a tie (``y = 1/2``) scores half a win each way,
``(log P + log(1 - P)) / 2``, in every model alike.  Each declaration states it as the latent
``log_lik_y`` (not an observed variable: the decisions are the judgments ``c`` already scores,
and conditioning on both would count them twice), stored as ``log_likelihood["y"]`` next to
``"c"``.  A leave-one-out comparison then asks, for every comparison, how well the model fitted
to all *other* comparisons (on whatever outcome it reads: ``p`` or ``y``) predicts this
comparison's decision.  Because the posterior conditions on ``"c"``, not ``"y"``, the PSIS
importance weights that remove comparison ``k`` come from ``"c"`` (``attrs["loo_weights"]``), the
predicted density from ``"y"``; ``compare_models`` does that.  (``az.loo(idata, var_name="y")``
alone would take its weights from ``"y"``: right for ``bt`` without Davidson ties, where ``"y"``
equals ``"c"``, not for the PoE models; with two variables, ``az.loo`` needs ``var_name``:
``"c"`` for a model's own LOO.)

What this comparison measures: how well each model predicts the judge's *decision* on a new
comparison.  ``poe-bt`` and ``bt`` read a decision as a Bernoulli draw with ``P = sigma(d)``
(the soft expert treats ``p_ij`` as an expected decision); ``poe-g`` models ``p_ij`` itself, so
its decision is the threshold ``p_ij > 1/2``.  Where the decisions are the judge's thresholded
probabilities (``winner`` derived from ``p_a``), the Gaussian model's sharper prediction can win
by a wide margin while ``poe-bt``, whose ``sigma(d)`` is calibrated to ``p_ij``, is penalized for
hedging; a better decision predictor is not necessarily a better ranker.
"""

from __future__ import annotations

import warnings
from typing import Any

import arviz as az
import numpy as np

from ..generative.priors import Priors
from ..inference.settings import SAMPLING, Sampling
from .encode import RankData

__all__ = ["BAYES_MODELS", "CENTRING_SNR", "fit_scores", "gaussian_centring", "loglik_attrs"]

BAYES_MODELS = ("poe-bt", "poe-g", "bt")

#: signal-to-noise ratio of the pilot scores above which the Gaussian experts are sampled centred
CENTRING_SNR = 4.6


def gaussian_centring(data: RankData) -> tuple[float, float]:
    """Partial non-centring exponent ``w`` of the Gaussian experts' scores, and the pilot's SNR.

    The pilot is the closed-form Gaussian PoE (eq. 12 with ``alpha = 1``, ``beta = E[p]``; its
    scores are in units of probability, as ``alpha s``), rescaled by the least-squares slope of
    ``p - E[p]`` on the fitted differences.  ``snr = var(scores within items) /
    (residual variance / comparisons per candidate)``: how far the comparisons determine the
    scores beyond their own noise.  ``w = 0`` (sample ``alpha s_raw``) when ``snr >=``
    :data:`CENTRING_SNR` (4.6), else ``w = 1`` (sample ``s_raw``).  The threshold lies between
    the highest SNR where the non-centred form sampled better and the lowest where the centred
    one did, on simulated designs (``benchmarks/bench_centring.py``, N = 6-50, K = 24-500,
    results in ``benchmarks/results/bench_centring.md``): nutpie, non-centred better at SNR
    2.6-4.5 (1.5-1.8x the min ESS), centred better from 4.8 to 378 (1.3-28x); NumPyro,
    non-centred better at 1.3-3.5, centred from 4.7.  Near the threshold both forms mix well.

    Returns
    -------
    w : float, 0.0 or 1.0
    snr : float (``inf`` when the pilot fits exactly, 0 when every ``p`` is equal)
    """
    from .poe import poe_gaussian

    s = np.asarray(poe_gaussian(data, outcome="soft", debias=True), dtype=float)
    d = s[data.i] - s[data.j]
    y = data.p - data.p.mean()
    dd = float(d @ d)
    if dd == 0.0:
        return 1.0, 0.0
    slope = float(d @ y) / dd
    counts = np.bincount(data.cand_item, minlength=data.n_items)
    mean = np.bincount(data.cand_item, weights=slope * s, minlength=data.n_items) / counts
    spread = float(np.mean((slope * s - mean[data.cand_item]) ** 2))
    noise = float(np.mean((y - slope * d) ** 2)) / (2.0 * data.n_comparisons / data.n_candidates)
    snr = np.inf if noise == 0.0 else spread / noise
    return (0.0 if snr >= CENTRING_SNR else 1.0), float(snr)


_OWN_SCORES = {
    "poe-bt": "comparisons: soft outcomes p, fractional Bernoulli pseudo-likelihood (Liusie et al. 2024 (PoE) §3.2)",
    "poe-g": "comparisons: soft outcomes p, Gaussian expert density (Liusie et al. 2024 (PoE) eq. 12)",
    "bt": "comparisons: hard decisions y, Bradley-Terry (ties half a win each way)",
    "bt-davidson": "comparisons: hard decisions y with ties, Bradley-Terry-Davidson",
}


def loglik_attrs(model: str, has_ties: bool) -> dict[str, dict[str, str]]:
    """What ``log_likelihood["c"]`` and ``["y"]`` score, read by :func:`bayes_judge.compare_models`.

    ``"c"`` is the model's own likelihood (the factor its posterior conditions on); its
    ``scores`` string names the model, so that only fits of the same model family compare on it.
    ``"y"`` is the same for every model: the hard decisions, PSIS weights from ``"c"``.
    """
    key = "bt-davidson" if (model == "bt" and has_ties) else model
    return {
        "c": {"scores": _OWN_SCORES[key], "observed": "y" if model == "bt" else "p", "loo_weights": "c"},
        "y": {
            "scores": "comparisons: hard decisions y, P(i preferred) (ties half a win each way)",
            "observed": "y",
            "loo_weights": "c",
        },
    }


def _check_model(model: str, position_bias: bool) -> None:
    if model not in BAYES_MODELS:
        raise ValueError(f"bayesian model must be one of {BAYES_MODELS}, got {model!r}")
    if position_bias and model == "poe-g":
        raise ValueError(
            "model='poe-g' takes no position_bias: its beta is the position-bias offset E[p] of "
            "eq. 13 (a gamma beside it would not be identified)"
        )


def fit_scores(
    data: RankData,
    *,
    model: str = "poe-bt",
    position_bias: bool = False,
    ties: str = "davidson",
    priors: Priors | None = None,
    centring: str = "auto",
    sampler: str = SAMPLING.sampler,
    chains: int = SAMPLING.chains,
    draws: int = SAMPLING.draws,
    tune: int = SAMPLING.tune,
    seed: int = SAMPLING.seed,
    target_accept: float = SAMPLING.target_accept,
    fast: bool = True,
    pointwise: bool | None = None,
) -> az.InferenceData:
    """Posterior over the candidates' scores by NUTS.

    Parameters
    ----------
    data : RankData
        From :func:`bayes_judge.ranking.encode.encode_ranking`.
    model : {"poe-bt", "poe-g", "bt"}
        A ranking declaration of :mod:`bayes_judge.generative.ranking_models`.
    position_bias : bool
        Add a latent shift ``gamma`` of every score difference in favour of position A
        (``"poe-bt"``, ``"bt"``; ``"poe-g"`` has ``beta`` instead and refuses it).
    ties : {"davidson", "half"}
        For ``model="bt"``: Davidson's tie parameter ``nu`` (used only when the data have ties), or
        a tie as half a win each way.
    priors : Priors, optional
        The model's priors (:class:`~bayes_judge.generative.ranking_models.SoftBTPriors`,
        ``GaussianPoEPriors`` or ``BTPriors``); default the declaration's (``s_raw ~ Normal(0, 1)``,
        ``gamma ~ Normal(0, 1)``, ...).
    centring : {"auto", "centred", "non-centred"}
        ``"poe-g"`` only: how the sampler parameterizes the scores (the posterior is the same):
        ``"non-centred"`` samples ``s_raw``, ``"centred"`` samples ``alpha s_raw``, ``"auto"``
        chooses from the data (:func:`gaussian_centring`; module docstring).
    sampler : {"nutpie", "pymc", "numpyro"}
        NUTS on the declaration (:func:`bayes_judge.inference.fit_model`).  With ``"nutpie"`` and
        ``fast=True`` the registered numba kernel (:mod:`bayes_judge.inference.kernels.ranking`) is
        used where it states the priors; ``attrs["sampler"]`` says ``"nutpie (fast path)"`` then.
    chains, draws, tune, seed, target_accept :
        NUTS settings.
    fast : bool
        Use the registered fast path with ``sampler="nutpie"``.
    pointwise : bool, optional
        Store the pointwise log-likelihoods (``chains x draws x comparisons`` each); default: when
        that is at most 5e7 values.

    Returns
    -------
    arviz.InferenceData with posterior ``s`` (dim ``candidate``; coords ``item`` and
    ``candidate_id`` give each candidate's item and id), ``s_raw``, and ``gamma`` / ``alpha`` /
    ``beta`` / ``sigma`` / ``nu`` where the model has them; ``log_likelihood["c"]`` per comparison
    (the declaration's observed ``c``) and ``log_likelihood["y"]`` (its latent ``log_lik_y``: the
    hard decisions under the model's prediction, comparable across the three models; see the
    module docstring); ``observed_data`` ``p`` and ``y``, ``constant_data`` ``i`` and ``j``;
    ``attrs`` task, model, sampler, seed, priors, data_hash, position_bias (and centring_w,
    centring_snr for ``"poe-g"``).
    """
    from ..generative import get_model
    from ..inference import fast_path, fit_model
    from ..inference.fit import item_quantities
    from ..inference.idata import build_idata
    from ..inference.settings import APPROXIMATE

    if ties not in ("davidson", "half"):
        raise ValueError(f"ties must be 'davidson' or 'half', got {ties!r}")
    sampling = Sampling(sampler, chains, draws, tune, seed, target_accept)  # checked once
    has_ties = model == "bt" and ties == "davidson" and bool(np.any(data.y == 0.5))
    _check_model(model, position_bias)
    if centring not in ("auto", "centred", "non-centred"):
        raise ValueError(f"centring must be 'auto', 'centred' or 'non-centred', got {centring!r}")
    spec = get_model(model, "ranking")
    priors = spec.default_priors() if priors is None else priors
    if not isinstance(priors, spec.priors):
        raise TypeError(f"model {model!r} takes {spec.priors.__name__}, got {type(priors).__name__}")
    attrs: dict = {"position_bias": int(position_bias)}
    options: dict = {}
    if model == "poe-g":
        w, snr = gaussian_centring(data)
        if centring != "auto":
            w = 0.0 if centring == "centred" else 1.0
        options["w"] = w
        attrs.update(centring_w=w, centring_snr=snr)
    else:
        options["position_bias"] = bool(position_bias)
    if model == "bt":
        options["ties"] = has_ties
    fp = fast_path("ranking", model)
    fit = fit_model(
        spec, data.arrays(), dims=RankData.DIMS, coords={"candidate": np.arange(data.n_candidates)},
        priors=priors, sampling=sampling, fast=fast and fp is not None and getattr(fp, "supports", lambda _p: True)(priors),
        options=options,
    )
    post = fit.posterior
    sites = [rv.name for rv in fit.entry.model.free_RVs if rv.name not in ("s_raw", "r")]  # declaration order
    if not np.isfinite(post["s"]).all():
        raise FloatingPointError("the sampler returned non-finite scores; check the comparisons")
    if pointwise is None:
        pointwise = chains * draws * data.n_comparisons <= 5e7
    log_lik = None
    if pointwise:
        with warnings.catch_warnings():  # PyTensor's C compiler warns once, on a fresh cache, of no BLAS
            warnings.filterwarnings("ignore", message=".*could not link to a BLAS.*", category=UserWarning)
            own, (decisions,) = item_quantities(fit, "c", ("log_lik_y",))  # one pass over the draws
            log_lik = {"c": own, "y": decisions}
    labels = [f"{data.items[g]} | {c}" for g, c in zip(data.cand_item, data.candidates, strict=True)]
    if sampler in APPROXIMATE:
        from ..inference.laplace import approximate_attrs

        attrs.update(approximate_attrs(fit.info, chains * draws))
    idata: Any = build_idata(
        task="ranking", model=model, sampler=fit.sampler_label, seed=seed,
        posterior={k: post[k] for k in ["s", "s_raw", *sites]},
        coords={"candidate": labels, "comparison": np.arange(data.n_comparisons)},
        dims={"s": ["candidate"], "s_raw": ["candidate"], "c": ["comparison"], "y": ["comparison"],
              "p": ["comparison"], "i": ["comparison"], "j": ["comparison"]},
        sample_stats=fit.stats, log_likelihood=log_lik,
        observed_data={"p": data.p, "y": data.y}, constant_data={"i": data.i, "j": data.j},
        priors=priors, attrs=attrs,
    )
    if log_lik is not None:
        for name, at in loglik_attrs(model, has_ties).items():
            idata.log_likelihood[name].attrs.update(at)
    idata.posterior = idata.posterior.assign_coords(
        item=("candidate", [data.items[g] for g in data.cand_item]),
        candidate_id=("candidate", [str(c) for c in data.candidates]),
    )
    from ..inference.convergence import warn_unconverged

    if sampler not in APPROXIMATE:
        warn_unconverged(idata, ["s"], f"rank ({model}, bayesian)")
    return idata
