"""Bayesian scores from pairwise comparisons (seed 004 §3, as posteriors instead of MAP / closed form).

Three generative models over the scores ``s`` of every candidate, each with an optional
position-bias parameter ``gamma`` (seed 004 eq. 13, A.7-A.8: a constant shift of the score
difference in favour of position A):

``"poe-bt"``  soft Bradley-Terry experts (§3.2) used as a fractional Bernoulli pseudo-likelihood::

    log p(C | s) = sum_k  p_ij log sigma(d_k) + (1 - p_ij) log sigma(-d_k),   d_k = s_i - s_j + gamma

  (the expert's normalizer Z_ij = pi / sin(pi p_ij) does not depend on s; at p_ij in {0, 1} this
  is hard Bradley-Terry).

``"poe-g"``  Gaussian experts with linear mean and constant variance (eq. 12)::

    p_ij ~ Normal(alpha (s_i - s_j) + beta, sigma),  alpha ~ HalfNormal(1), beta ~ Normal(0.5, 0.25),
    sigma ~ HalfNormal(0.5)

  ``beta`` is the debiasing offset E[p] of eq. 13 (0.5 for a judge without position bias), so
  this model takes no ``gamma``: ``alpha gamma`` and ``beta`` would be one unidentified sum.
  Eq. 12 writes the expert the other way round, as a Gaussian over the score difference given
  the probability, ``s_i - s_j ~ Normal(alpha' (p_ij - beta), sigma'^2)``; as a function of
  ``s`` it has the same shape as this likelihood with ``alpha' = 1 / alpha`` and
  ``sigma' = sigma / alpha``.  Here it is written as a generative model of ``p_ij``, so that
  ``alpha``, ``beta`` and ``sigma`` get priors and the pointwise log-likelihood is a density of
  the observed ``p_ij``.

  Sampling.  The comparisons identify ``alpha (s_i - s_j)``, not ``alpha`` and ``s`` apart.
  With informative comparisons the posterior in ``(s_raw, alpha)`` is a thin ridge
  ``alpha |s| ~ const`` that NUTS crosses slowly (nutpie: ESS 25 of 2000 draws, r_hat 1.09 at
  N = 50, K = 500); in ``(delta_raw = alpha s_raw, alpha)`` the likelihood pins ``delta_raw``
  and ``alpha`` is left a smooth one-dimensional conditional.  With weak comparisons it is the
  other way round (``delta_raw`` and ``alpha`` form a funnel).  The same prior
  ``s_raw ~ Normal(0, sigma_s)`` is therefore sampled partially non-centred,
  ``r = alpha^(1 - w) s_raw ~ Normal(0, alpha^(1 - w) sigma_s)``, ``s_raw = alpha^(w - 1) r``,
  with ``w`` chosen from the data before sampling (:func:`gaussian_centring`): ``w = 0``
  (centred, ``r = delta_raw``) when the pilot scores' spread is at least 4.6 times their
  sampling variance, else ``w = 1`` (``r = s_raw``).  The model, and the posterior reported
  (``s``, ``s_raw``, ``alpha``, ``beta``, ``sigma``), do not depend on ``w``; only the
  sampler's geometry does.  ``idata.attrs`` record ``w`` and the signal-to-noise ratio.

``"bt"``  hard Bradley-Terry on decisions ``y_ij``, with ties by Davidson's model when present::

    P(i wins) = e^{d/2} / (e^{d/2} + e^{-d/2} + nu),  P(tie) = nu / (...),  nu ~ HalfNormal(1)

Position bias (``"poe-bt"``, ``"bt"``): ``d = s_i - s_j + gamma`` with ``gamma ~ Normal(0, 1)``,
so a judge that favours position A has ``gamma > 0``.  Seed 004 A.8 and
:func:`bayes_judge.ranking.poe.poe_bt` write the shift the other way, ``sigma(s_i - s_j -
gamma)``, where the same judge has ``gamma = -logit(E[p]) < 0``: the posterior ``gamma`` here is
minus that ``gamma``.

Identification: scores are only defined up to a shift within each item, so the model samples
``s_raw ~ Normal(0, sigma_s)`` and reports ``s = s_raw - mean_item(s_raw)`` (sum to zero within
every item; ``sigma_s = 1`` by default).  No candidate is pinned, so every candidate gets an
honest interval.

The same log-likelihood expressions (:func:`comparison_log_lik`) serve the NumPyro and the PyMC
models through an array namespace, as in :mod:`bayes_judge.annotation.dawid_skene`.

Comparing the three models (:func:`bayes_judge.compare_models`).  Their own pointwise
log-likelihoods, ``log_likelihood["c"]``, score different things: ``poe-bt`` a fractional
Bernoulli pseudo-likelihood of the soft ``p_ij`` (not a density of ``p_ij``; the expert's
normalizer ``Z_ij`` of §3.2 is a constant in ``s``, not in ``p``), ``poe-g`` a Gaussian density
of ``p_ij`` (eq. 12), ``bt`` a probability of the hard decision ``y_ij``.  Their sums are on
different scales, so ``az.compare`` on ``"c"`` across models is meaningless.  What every model
does predict is the hard decision of a comparison, ``y_ij = 1`` when the judge prefers ``i``::

    poe-bt, bt :  P(y_ij = 1 | s) = sigma(d)                           (eq. 1-2; Davidson: given no tie)
    poe-g      :  P(y_ij = 1 | s) = P(p_ij > 1/2) = Phi((alpha d + beta - 1/2) / sigma)   (eq. 12)

with ``d = s_i - s_j (+ gamma)``; a tie (``y = 1/2``) scores half a win each way,
``(log P + log(1 - P)) / 2``, in every model alike.  Each fit stores this as
``log_likelihood["y"]`` next to its own ``"c"``.  A leave-one-out comparison then asks, for
every comparison, how well the model fitted to all *other* comparisons (on whatever outcome it
reads: ``p`` or ``y``) predicts this comparison's decision.  Because the posterior conditions on
``"c"``, not ``"y"``, the PSIS importance weights that remove comparison ``k`` come from ``"c"``
(``attrs["loo_weights"]``), the predicted density from ``"y"``; ``compare_models`` does that.
(``az.loo(idata, var_name="y")`` alone would take its weights from ``"y"``: right for ``bt``
without Davidson ties, where ``"y"`` equals ``"c"``, not for the PoE models; with two variables,
``az.loo`` needs ``var_name``: ``"c"`` for a model's own LOO.)

What this comparison measures: how well each model predicts the judge's *decision* on a new
comparison.  ``poe-bt`` and ``bt`` read a decision as a Bernoulli draw with ``P = sigma(d)``
(the soft expert treats ``p_ij`` as an expected decision); ``poe-g`` models ``p_ij`` itself, so
its decision is the threshold ``p_ij > 1/2``.  Where the decisions are the judge's thresholded
probabilities (``winner`` derived from ``p_a``), the Gaussian model's sharper prediction can win
by a wide margin while ``poe-bt``, whose ``sigma(d)`` is calibrated to ``p_ij``, is penalized for
hedging; a better decision predictor is not necessarily a better ranker.
"""

from __future__ import annotations

from types import SimpleNamespace

import arviz as az
import numpy as np

from ..inference import sample_numpyro, sample_pymc
from .encode import RankData

__all__ = [
    "BAYES_MODELS", "fit_scores", "comparison_log_lik", "decision_log_lik", "loglik_attrs", "raw_site",
    "site_names",
]

BAYES_MODELS = ("poe-bt", "poe-g", "bt")


#: signal-to-noise ratio of the pilot scores above which the Gaussian experts are sampled centred
CENTRING_SNR = 4.6


def site_names(model: str, position_bias: bool, has_ties: bool) -> list[str]:
    """The scalar sites a model samples beside its scores, in order: ``gamma?``, ``alpha``,
    ``beta``, ``sigma`` (``poe-g``), ``nu?`` (``bt`` with Davidson ties).

    The one statement of which combinations exist, shared by every backend.

    Raises
    ------
    ValueError
        An unknown model; ``has_ties`` for a model other than ``bt``; ``position_bias`` with
        ``poe-g``, whose ``beta`` is the position-bias offset E[p] of eq. 13 (a ``gamma`` beside
        it would not be identified).
    """
    if model not in BAYES_MODELS:
        raise ValueError(f"bayesian model must be one of {BAYES_MODELS}, got {model!r}")
    if has_ties and model != "bt":
        raise ValueError(f"has_ties (Davidson's nu) applies to model='bt' only, got model={model!r}")
    if position_bias and model == "poe-g":
        raise ValueError(
            "model='poe-g' takes no position_bias: its beta is the position-bias offset E[p] of "
            "eq. 13 (a gamma beside it would not be identified)"
        )
    return (["gamma"] if position_bias else []) + (["alpha", "beta", "sigma"] if model == "poe-g" else []) + (
        ["nu"] if has_ties else [])


def raw_site(model: str) -> str:
    """The sampled score site: ``"r"`` (= alpha^(1 - w) s_raw) for ``"poe-g"``, else ``"s_raw"``."""
    return "r" if model == "poe-g" else "s_raw"


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


def _log_sigmoid(xp, x):
    return -xp.logaddexp(0.0, -x)


def comparison_log_lik(xp, model: str, d, p, y, alpha=None, beta=None, sigma=None, nu=None):
    """Pointwise log-likelihood of every comparison, shape (K,).

    Parameters
    ----------
    xp : array namespace (``jax.numpy``, ``numpy`` or a pytensor adapter)
    model : one of :data:`BAYES_MODELS`
    d : (K,) score difference s_i - s_j (+ gamma)
    p : (K,) soft outcomes p_ij;  y : (K,) hard outcomes (1, 0, 0.5 = tie)
    """
    if model == "poe-bt":
        return p * _log_sigmoid(xp, d) + (1.0 - p) * _log_sigmoid(xp, -d)
    if model == "poe-g":
        z = (p - (alpha * d + beta)) / sigma
        return -0.5 * z * z - xp.log(sigma) - 0.5 * np.log(2 * np.pi)
    if model == "bt":
        if nu is None:  # ties, if any, count half a win each way
            return y * _log_sigmoid(xp, d) + (1.0 - y) * _log_sigmoid(xp, -d)
        log_norm = xp.logaddexp(xp.logaddexp(0.5 * d, -0.5 * d), xp.log(nu))
        win = xp.where(xp.equal(y, 1.0), 0.5 * d, xp.where(xp.equal(y, 0.0), -0.5 * d, xp.log(nu)))
        return win - log_norm
    raise ValueError(f"unknown model {model!r}")


def decision_log_lik(model: str, d, y, alpha=None, beta=None, sigma=None) -> np.ndarray:
    """Log-probability of the hard decisions under each model's prediction (numpy).

    Parameters
    ----------
    model : one of :data:`BAYES_MODELS`
    d : (..., K) score difference s_i - s_j (+ gamma)
    y : (K,) hard outcomes: 1 (i preferred), 0 (j preferred), 0.5 (tie: half a win each way)
    alpha, beta, sigma : (..., 1) the Gaussian expert's parameters (``poe-g`` only)

    Returns
    -------
    (..., K) ``y log P + (1 - y) log(1 - P)`` with ``P = sigma(d)`` (``poe-bt``, ``bt``) or
    ``P = Phi((alpha d + beta - 1/2) / sigma)`` (``poe-g``: the probability that the Gaussian
    expert's ``p_ij`` exceeds 1/2).
    """
    from scipy.special import log_expit, log_ndtr

    if model == "poe-g":
        z = (alpha * d + beta - 0.5) / sigma
        log_win, log_loss = log_ndtr(z), log_ndtr(-z)
    elif model in ("poe-bt", "bt"):
        log_win, log_loss = log_expit(d), log_expit(-d)
    else:
        raise ValueError(f"unknown model {model!r}")
    return y * log_win + (1.0 - y) * log_loss


_OWN_SCORES = {
    "poe-bt": "comparisons: soft outcomes p, fractional Bernoulli pseudo-likelihood (seed 004 §3.2)",
    "poe-g": "comparisons: soft outcomes p, Gaussian expert density (seed 004 eq. 12)",
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


def _center(xp, s_raw, cand_item, n_items, counts):
    """s_raw minus the mean of its item: sum-to-zero within every item."""
    if xp.__name__.startswith("pytensor"):
        import pytensor.tensor as pt

        sums = pt.zeros(n_items)
        sums = pt.inc_subtensor(sums[cand_item], s_raw)
    else:
        sums = xp.zeros(n_items).at[cand_item].add(s_raw)
    return s_raw - (sums / counts)[cand_item]


def _numpyro_model(i, j, p, y, cand_item, counts, n_items, sigma_s, model, bias, ties, w=1.0):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    n = cand_item.shape[0]
    kw = {}
    if model == "poe-g":
        alpha = numpyro.sample("alpha", dist.HalfNormal(1.0))
        # s_raw ~ Normal(0, sigma_s), sampled as r = alpha^(1 - w) s_raw (module docstring)
        r = numpyro.sample("r", dist.Normal(0.0, alpha ** (1.0 - w) * sigma_s).expand([n]).to_event(1))
        s_raw = numpyro.deterministic("s_raw", alpha ** (w - 1.0) * r)
        kw = {
            "alpha": alpha,
            "beta": numpyro.sample("beta", dist.Normal(0.5, 0.25)),
            "sigma": numpyro.sample("sigma", dist.HalfNormal(0.5)),
        }
    else:
        s_raw = numpyro.sample("s_raw", dist.Normal(0.0, sigma_s).expand([n]).to_event(1))
    s = numpyro.deterministic("s", _center(jnp, s_raw, cand_item, n_items, counts))
    d = s[i] - s[j]
    if bias:
        d = d + numpyro.sample("gamma", dist.Normal(0.0, 1.0))
    if model == "bt" and ties:
        kw["nu"] = numpyro.sample("nu", dist.HalfNormal(1.0))
    numpyro.factor("c", jnp.sum(comparison_log_lik(jnp, model, d, p, y, **kw)))


def _pymc_model(data: RankData, coords, sigma_s, model, bias, ties, w=1.0):
    import pymc as pm
    import pytensor.tensor as pt

    ptx = SimpleNamespace(
        __name__="pytensor.tensor", logaddexp=pt.logaddexp, log=pt.log, where=pt.switch, equal=pt.eq
    )
    counts = np.bincount(data.cand_item, minlength=data.n_items).astype(float)
    with pm.Model(coords=coords) as m:
        kw = {}
        if model == "poe-g":
            alpha = pm.HalfNormal("alpha", 1.0)
            # s_raw ~ Normal(0, sigma_s), sampled as r = alpha^(1 - w) s_raw (module docstring)
            r = pm.Normal("r", 0.0, alpha ** (1.0 - w) * sigma_s, dims="candidate")
            s_raw = pm.Deterministic("s_raw", alpha ** (w - 1.0) * r, dims="candidate")
            kw = {"alpha": alpha, "beta": pm.Normal("beta", 0.5, 0.25), "sigma": pm.HalfNormal("sigma", 0.5)}
        else:
            s_raw = pm.Normal("s_raw", 0.0, sigma_s, dims="candidate")
        s = pm.Deterministic("s", _center(ptx, s_raw, data.cand_item, data.n_items, counts), dims="candidate")
        d = s[data.i] - s[data.j]
        if bias:
            d = d + pm.Normal("gamma", 0.0, 1.0)
        if model == "bt" and ties:
            kw["nu"] = pm.HalfNormal("nu", 1.0)
        pm.Potential("c", pt.sum(comparison_log_lik(ptx, model, d, data.p, data.y, **kw)))
    return m


def _pointwise(model: str, post: dict, data: RankData, bias: bool, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """(chains, draws, K) log-likelihood of every comparison from the posterior draws: the
    model's own (``"c"``) and that of the hard decisions (``"y"``, :func:`decision_log_lik`)."""
    s = post["s"]
    d = s[..., data.i] - s[..., data.j]
    if bias:
        d = d + post["gamma"][..., None]
    kw = {}
    if model == "poe-g":
        kw = {k: post[k][..., None] for k in ("alpha", "beta", "sigma")}
    nu = post["nu"][..., None] if (model == "bt" and ties) else None
    own = comparison_log_lik(np, model, d, data.p, data.y, nu=nu, **kw)
    return own, decision_log_lik(model, d, data.y, **kw)


def fit_scores(
    data: RankData,
    *,
    model: str = "poe-bt",
    position_bias: bool = False,
    ties: str = "davidson",
    sigma_s: float = 1.0,
    centring: str = "auto",
    backend: str = "nutpie",
    chains: int = 4,
    draws: int = 1000,
    tune: int = 1000,
    seed: int = 0,
    target_accept: float = 0.8,
) -> az.InferenceData:
    """Posterior over the candidates' scores by NUTS.

    Parameters
    ----------
    data : RankData
        From :func:`bayes_judge.ranking.encode.encode_ranking`.
    model : {"poe-bt", "poe-g", "bt"}
        See the module docstring.
    position_bias : bool
        Add a latent shift ``gamma`` of every score difference in favour of position A
        (``"poe-bt"``, ``"bt"``; ``"poe-g"`` has ``beta`` instead and refuses it).
    ties : {"davidson", "half"}
        For ``model="bt"``: Davidson's tie parameter ``nu`` (used only when the data have ties), or
        a tie as half a win each way.
    sigma_s : float
        Prior scale of the raw scores.
    centring : {"auto", "centred", "non-centred"}
        ``"poe-g"`` only: how the sampler parameterizes the scores (the posterior is the same):
        ``"non-centred"`` samples ``s_raw``, ``"centred"`` samples ``alpha s_raw``, ``"auto"``
        chooses from the data (:func:`gaussian_centring`; module docstring).
    backend : {"nutpie", "numpyro", "pymc"}
        ``"nutpie"`` (default): nutpie's NUTS on hand-differentiated numba densities
        (:mod:`bayes_judge.ranking.bayesian_fast`); ``"numpyro"`` / ``"pymc"``: their own NUTS on
        the model functions of this module.  Tests check that they sample the same posterior.

    Returns
    -------
    arviz.InferenceData with posterior ``s`` (dim ``candidate``; coords ``item`` and
    ``candidate_id`` give each candidate's item and id), ``s_raw``, and ``gamma`` / ``alpha`` /
    ``beta`` / ``sigma`` / ``nu`` where the model has them; ``log_likelihood["c"]`` per comparison
    (the model's own likelihood) and ``log_likelihood["y"]`` (the hard decisions under the
    model's prediction, comparable across the three models; see the module docstring);
    ``observed_data`` with the outcomes.
    """
    if ties not in ("davidson", "half"):
        raise ValueError(f"ties must be 'davidson' or 'half', got {ties!r}")
    if backend not in ("nutpie", "numpyro", "pymc"):
        raise ValueError(f"backend must be 'nutpie', 'numpyro' or 'pymc' for rankings, got {backend!r}")
    has_ties = model == "bt" and ties == "davidson" and bool(np.any(data.y == 0.5))
    extra = site_names(model, position_bias, has_ties)  # validates the model and its options
    if centring not in ("auto", "centred", "non-centred"):
        raise ValueError(f"centring must be 'auto', 'centred' or 'non-centred', got {centring!r}")
    w, snr = 1.0, float("nan")
    if model == "poe-g":
        w, snr = gaussian_centring(data)
        if centring != "auto":
            w = 0.0 if centring == "centred" else 1.0
    labels = [f"{data.items[g]} | {c}" for g, c in zip(data.cand_item, data.candidates, strict=True)]
    counts = np.bincount(data.cand_item, minlength=data.n_items).astype(float)
    if backend == "nutpie":
        from .bayesian_fast import sample_scores_fast

        post, stats = sample_scores_fast(
            data, model=model, position_bias=position_bias, has_ties=has_ties, sigma_s=sigma_s, w=w,
            chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
        )
    elif backend == "numpyro":
        args = (data.i, data.j, data.p, data.y, data.cand_item, counts)
        fn = _model_for((data.n_items, sigma_s, model, position_bias, has_ties, w))
        init = {raw_site(model): np.zeros(data.n_candidates)}
        init.update({k: np.zeros(()) for k in extra})
        post, stats = sample_numpyro(
            fn, args, chains=chains, draws=draws, tune=tune, seed=seed,
            target_accept=target_accept, unconstrained_init=init,
        )
    else:
        m = _pymc_model(data, {"candidate": labels}, sigma_s, model, position_bias, has_ties, w)
        post, stats = sample_pymc(
            m, var_names=["s", "s_raw", *extra], chains=chains, draws=draws, tune=tune, seed=seed,
            target_accept=target_accept,
        )
    if not np.isfinite(post["s"]).all():
        raise FloatingPointError("the sampler returned non-finite scores; check the comparisons")
    ll, ll_y = _pointwise(model, post, data, position_bias, has_ties)
    dims = {"s": ["candidate"], "s_raw": ["candidate"], "c": ["comparison"], "p": ["comparison"],
            "y": ["comparison"], "i": ["comparison"], "j": ["comparison"]}
    idata = az.from_dict(
        posterior={k: post[k] for k in ["s", "s_raw", *extra]},
        sample_stats=stats,
        log_likelihood={"c": ll, "y": ll_y},
        observed_data={"p": data.p, "y": data.y},
        constant_data={"i": data.i, "j": data.j},
        coords={"candidate": labels, "comparison": np.arange(data.n_comparisons)},
        dims=dims,
        attrs={"model": model, "backend": backend, "position_bias": int(position_bias), "seed": seed,
               "kind": "ranking",
               **({"centring_w": w, "centring_snr": snr} if model == "poe-g" else {})},
    )
    for name, at in loglik_attrs(model, has_ties).items():
        idata.log_likelihood[name].attrs.update(at)
    idata.posterior = idata.posterior.assign_coords(
        item=("candidate", [data.items[g] for g in data.cand_item]),
        candidate_id=("candidate", [str(c) for c in data.candidates]),
    )
    return idata


_MODELS: dict[tuple, object] = {}


def _model_for(key: tuple):
    """One model callable per configuration (n_items, sigma_s, model, bias, ties, w), so that the
    NumPyro sampler cache, keyed by the callable, finds the compiled sampler again on a refit."""
    if key not in _MODELS:
        from functools import partial

        n_items, sigma_s, model, bias, ties, w = key
        _MODELS[key] = partial(
            _numpyro_model, n_items=n_items, sigma_s=sigma_s, model=model, bias=bias, ties=ties, w=w
        )
    return _MODELS[key]
