"""``bj.compare_models``: which generative model predicts the same judgments best (PSIS-LOO).

Every likelihood model of the package stores pointwise log-likelihoods in the ``log_likelihood``
group, and each variable's ``attrs`` say what it scores:

``scores``
    The observations and the way they are scored.  Two fits compare on a variable only when
    this string is the same in both (for win rates: ``"win-rate items: judges' verdicts"``, with
    or without the human labels; for rankings: the hard decisions ``"y"``).
``observed``
    The ``observed_data`` variables it scores (space separated); with ``constant_data`` (the
    design: pairs, items, labels) they must be identical in every run.
``loo_weights``
    The log-likelihood variable the posterior conditions on.  PSIS removes observation ``i``
    from the posterior with weights ``1 / p_own(y_i | theta)`` from that variable and then
    averages the scored density (Vehtari, Gelman, Gabry 2017, eq. 10).  For a model's own
    likelihood the two are the same variable and this is ``az.loo`` exactly; for the ranking
    models' hard decisions ``"y"`` the weights come from their own ``"c"``
    (:mod:`bayes_judge.ranking.bayesian`).

Win rates: two-coin and one-coin Dawid-Skene and independent raters
(``bj.win_rate(method="dawid-skene", ds_model=...)``, ``method="independent"``) all score
``"t"``: per item, the judges' verdicts (and the human label where observed and used).
Rankings: ``poe-bt``, ``poe-g`` and ``bt`` (``bj.rank(..., bayesian=True)``) compare on ``"y"``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import logsumexp

from ..inference.mcmc_stats import ess_mean
from .runs import data_hash, load_run

__all__ = ["compare_models", "loo_scored"]

RunLike = az.InferenceData | str | os.PathLike
ICS = ("loo", "waic")
SCALES = ("log", "negative_log", "deviance")
_PRIOR_CONST = ("alpha_", "beta_", "bwrs_weight")  # options, not data (as in runs.data_hash)
#: elpd differences below this are too small to call (Sivula et al. 2022; the LOO-CV FAQ)
SMALL_ELPD_DIFF = 4.0


def _as_runs(runs: Mapping[str, RunLike] | Sequence[RunLike]) -> dict[str, az.InferenceData]:
    """Names and InferenceData of every run; paths are read with :func:`bayes_judge.load_run`."""
    if isinstance(runs, az.InferenceData | str | os.PathLike):
        raise TypeError("compare_models needs several runs: a dict name -> run or a list of runs")
    items = list(runs.items()) if isinstance(runs, Mapping) else [(None, r) for r in runs]
    out: dict[str, az.InferenceData] = {}
    for name, run in items:
        if isinstance(run, str | os.PathLike):
            idata = load_run(run)
            default = Path(run).name.removesuffix(".nc").removesuffix(".json")
        elif isinstance(run, az.InferenceData):
            idata, default = run, _run_name(run)
        else:
            raise TypeError(
                f"compare_models: a run must be an InferenceData or the path of a saved run, got "
                f"{type(run).__name__}"
            )
        name = default if name is None else str(name)
        base, k = name, 2
        while name in out:
            name, k = f"{base} #{k}", k + 1
        out[name] = idata
    if len(out) < 2:
        raise ValueError(f"compare_models needs at least 2 runs, got {len(out)}")
    return out


def _run_name(idata: az.InferenceData) -> str:
    attrs = dict(idata.attrs) if idata.attrs else {}
    method = attrs.get("method") or attrs.get("model") or "run"
    if method == "dawid-skene":
        return f"dawid-skene ({attrs.get('ds_model', 'two-coin')})"
    return str(method)


def _loglik(name: str, idata: az.InferenceData) -> xr.Dataset:
    if not hasattr(idata, "posterior"):
        raise ValueError(f"run {name!r} has no posterior group")
    ll = getattr(idata, "log_likelihood", None)
    if ll is not None:  # a variable of no observations (a leaderboard's human labels, where there are none)
        ll = ll[[v for v in ll.data_vars if ll[v].size > 0]]
    if ll is None or not ll.data_vars:
        attrs = idata.attrs or {}
        method = attrs.get("method", "?")
        if _is_likelihood_model(attrs):
            raise ValueError(
                f"run {name!r} (method {method!r}) has no log_likelihood group: it was fitted with "
                "pointwise=False, which leaves out the pointwise log-likelihoods (the default for "
                "large data); refit it with pointwise=True to compare it"
            )
        raise ValueError(
            f"run {name!r} (method {method!r}) has no log_likelihood group: it is not a likelihood "
            "model (win rates: 'observed' and 'bwrs' are not; fit 'dawid-skene' or 'independent')"
        )
    return ll


def _is_likelihood_model(attrs: Mapping) -> bool:
    """Whether a run's model has a likelihood, so that a missing log_likelihood group means
    ``pointwise=False``: a Bayesian ranking or leaderboard, or a declared win-rate model (not
    one of the estimators of :data:`bayes_judge.winrate.estimate.ESTIMATORS`)."""
    task = attrs.get("task")
    if task in ("ranking", "leaderboard"):
        return True
    if task != "win-rate":
        return False
    from ..winrate.estimate import ESTIMATORS, METHODS

    method = str(attrs.get("method", ""))
    return method in METHODS and method not in ESTIMATORS


def _scores(ll: xr.Dataset, var: str) -> str | None:
    return ll[var].attrs.get("scores")


def _weights_var(ll: xr.Dataset, var: str) -> str:
    return str(ll[var].attrs.get("loo_weights", var))


def _var_names(ll: xr.Dataset) -> list[str]:
    """The log-likelihood variables by name (ArviZ names them with str; xarray types them Hashable)."""
    return [str(v) for v in ll.data_vars]


def _choose_var(lls: dict[str, xr.Dataset], var_name: str | None) -> str:
    names = list(lls)
    if var_name is not None:
        for n, ll in lls.items():
            if var_name not in ll.data_vars:
                raise ValueError(
                    f"run {n!r} has no log-likelihood variable {var_name!r} (it has "
                    f"{sorted(_var_names(ll))})"
                )
        _check_scores(lls, var_name)
        return var_name
    common = sorted(set.intersection(*(set(_var_names(ll)) for ll in lls.values())))
    if not common:
        have = {n: sorted(_var_names(ll)) for n, ll in lls.items()}
        raise ValueError(
            f"the runs share no log-likelihood variable ({have}): they model different "
            "observations (e.g. a win-rate fit and a ranking) and cannot be compared"
        )
    agree = [v for v in common if len({_scores(ll, v) for ll in lls.values()}) == 1]
    if not agree:
        detail = "; ".join(f"{v!r}: " + ", ".join(f"{n} scores {_scores(lls[n], v)!r}" for n in names) for v in common)
        raise ValueError(
            "the runs share no comparable log-likelihood variable: every shared variable scores "
            f"different observations in different runs ({detail})"
        )
    own = [v for v in agree if all(_weights_var(ll, v) == v for ll in lls.values())]
    return (own or agree)[0]


def _check_scores(lls: dict[str, xr.Dataset], var: str) -> None:
    scores = {n: _scores(ll, var) for n, ll in lls.items()}
    if len(set(scores.values())) > 1:
        lines = "; ".join(f"{n}: {s!r}" for n, s in scores.items())
        hint = ""
        shared = [v for v in set.intersection(*(set(_var_names(ll)) for ll in lls.values()))
                  if len({_scores(ll, v) for ll in lls.values()}) == 1]
        if shared:
            hint = f"; compare on {sorted(shared)[0]!r}, which every run scores the same way"
        raise ValueError(
            f"log-likelihood {var!r} scores different observations in these runs, so their elpd "
            f"are on different scales ({lines}){hint}"
        )


def _data_key(idata: az.InferenceData, ll: xr.Dataset, var: str) -> str:
    """Hash of the observations ``var`` scores and of the design (constant data)."""
    obs = getattr(idata, "observed_data", None)
    groups = {}
    if obs is not None:
        scored = str(ll[var].attrs.get("observed", " ".join(obs.data_vars))).split()
        groups["observed_data"] = obs[[v for v in scored if v in obs.data_vars]]
    const = getattr(idata, "constant_data", None)
    if const is not None:
        groups["constant_data"] = const[[v for v in const.data_vars if not str(v).startswith(_PRIOR_CONST)]]
    return data_hash(az.InferenceData(**groups))


def _check_same_data(runs: dict[str, az.InferenceData], lls: dict[str, xr.Dataset], var: str) -> None:
    names = list(runs)
    first = names[0]
    ref = lls[first][var]
    point_dims = [d for d in ref.dims if d not in ("chain", "draw")]
    for n in names[1:]:
        da = lls[n][var]
        dims = [d for d in da.dims if d not in ("chain", "draw")]
        sizes = {d: da.sizes[d] for d in dims}
        ref_sizes = {d: ref.sizes[d] for d in point_dims}
        if sizes != ref_sizes:
            raise ValueError(
                f"runs {first!r} and {n!r} score different numbers of observations in {var!r} "
                f"({ref_sizes} vs {sizes}): they were fitted to different data"
            )
        for d in dims:
            if d in ref.coords and d in da.coords and not np.array_equal(
                ref[d].to_numpy().astype(str), da[d].to_numpy().astype(str)
            ):
                raise ValueError(
                    f"runs {first!r} and {n!r} have different {d!r} coordinates in {var!r}: they "
                    "were fitted to different data"
                )
    keys = {n: _data_key(runs[n], lls[n], var) for n in names}
    for n in names[1:]:
        if keys[n] != keys[first]:
            raise ValueError(
                f"runs {first!r} and {n!r} were fitted to different data (data hash "
                f"{keys[first][:12]} vs {keys[n][:12]}; see bayes_judge.analysis.runs.data_hash): a model "
                "comparison needs the same judgments encoded the same way (same table, systems, "
                "judges, swap and ties; with ties='random' also the same seed, which flips the ties)"
            )


def _reff(idata: az.InferenceData, n_samples: int) -> float:
    """Relative efficiency for PSIS, as ``az.loo`` computes it: mean ESS over the posterior."""
    post = idata["posterior"]
    if post.sizes["chain"] == 1:
        return 1.0
    vals = np.hstack([ess_mean(post[v].transpose("chain", "draw", ...).to_numpy()).ravel() for v in post.data_vars])
    r = float(np.nanmean(vals)) / n_samples if np.isfinite(vals).any() else 1.0
    return r if np.isfinite(r) and r > 0 else 1.0


def loo_scored(
    idata: az.InferenceData, var_name: str, *, weights_var: str | None = None, scale: str = "log"
) -> az.ELPDData:
    """PSIS-LOO of the density in ``var_name``, leaving each observation out by the weights of
    ``weights_var`` (default: the variable's ``attrs["loo_weights"]``, else itself).

    With ``weights_var == var_name`` this is :func:`arviz.loo` (pointwise).  Otherwise it is the
    importance-sampling LOO predictive of a quantity the model predicts but does not condition
    on: ``elpd_i = log sum_s w_is p(y_i | theta_s)`` with ``w_is`` the Pareto-smoothed,
    normalized weights ``∝ 1 / p_own(obs_i | theta_s)``; ``p_loo = lppd - elpd``; the Pareto k of
    observation ``i`` is that of its own weights.

    Parameters
    ----------
    idata : arviz.InferenceData with a posterior and a log_likelihood group
    var_name : the scored log-likelihood variable, shape (chain, draw, n)
    weights_var : the model's own log-likelihood variable, same shape
    scale : {"log", "negative_log", "deviance"}

    Returns
    -------
    arviz.ELPDData, as ``az.loo(..., pointwise=True)``: elpd_loo, se, p_loo, n_samples,
    n_data_points, warning, loo_i, pareto_k, scale, good_k.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    ll = idata["log_likelihood"]
    weights_var = _weights_var(ll, var_name) if weights_var is None else weights_var
    if weights_var not in ll.data_vars:
        raise ValueError(f"log_likelihood has no variable {weights_var!r} to take the LOO weights from")
    score = ll[var_name].stack(__sample__=("chain", "draw"))
    own = ll[weights_var].stack(__sample__=("chain", "draw"))
    if own.shape != score.shape:
        raise ValueError(f"log-likelihoods {var_name!r} {score.shape} and {weights_var!r} {own.shape} differ in shape")
    n_samples = score.shape[-1]
    n_data_points = int(np.prod(score.shape[:-1]))
    scale_value = {"log": 1, "negative_log": -1, "deviance": -2}[scale]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log_weights, pareto_k = az.psislw(-own, _reff(idata, n_samples))
    good_k = min(1 - 1 / np.log10(n_samples), 0.7)
    lw = log_weights.transpose(..., "__sample__").to_numpy()
    sv = score.transpose(..., "__sample__").to_numpy()
    loo_i_val = scale_value * logsumexp(lw + sv, axis=-1)
    loo_i = xr.DataArray(loo_i_val, dims=score.dims[:-1], coords={d: score[d] for d in score.dims[:-1] if d in score.coords},
                         name="loo_i")
    elpd = float(loo_i_val.sum())
    se = float((n_data_points * np.var(loo_i_val)) ** 0.5)
    lppd = float((logsumexp(sv, axis=-1) - np.log(n_samples)).sum())
    p_loo = lppd - elpd / scale_value
    return az.ELPDData(
        data=[elpd, se, p_loo, n_samples, n_data_points, bool(np.any(pareto_k > good_k)), loo_i,
              pareto_k, scale, good_k],
        index=["elpd_loo", "se", "p_loo", "n_samples", "n_data_points", "warning", "loo_i",
               "pareto_k", "scale", "good_k"],
    )


def compare_models(
    runs: Mapping[str, RunLike] | Sequence[RunLike],
    *,
    var_name: str | None = None,
    ic: str = "loo",
    scale: str = "log",
) -> pd.DataFrame:
    """Rank generative models fitted to the same judgments by their expected log predictive density.

    Parameters
    ----------
    runs : dict name -> run, or a list of runs
        A run is an :class:`arviz.InferenceData` (``bj.win_rate``, ``bj.rank(..., bayesian=True)``)
        or the path of one saved by :func:`bayes_judge.save_run`.  A list takes its names from
        the file names, else from the fits (``"dawid-skene (two-coin)"``, ``"independent"``,
        ``"poe-bt"``, ...).
    var_name : str, optional
        The pointwise log-likelihood to compare on.  Default: the one variable every run scores
        the same way (its ``attrs["scores"]``), preferring a model's own likelihood: ``"t"`` for
        win rates, ``"y"`` (the hard decisions) across different ranking models, ``"c"`` across
        fits of one ranking model.
    ic : {"loo", "waic"}
        PSIS-LOO (default) or WAIC; WAIC only where every run is scored on its own likelihood.
    scale : {"log", "negative_log", "deviance"}
        As in :func:`arviz.compare` (``"log"``: higher is better).

    Returns
    -------
    pandas.DataFrame
        :func:`arviz.compare`'s table, one row per run, best first: ``rank``, ``elpd_loo``
        (``elpd_waic``), ``p_loo``, ``elpd_diff`` (to the best, >= 0), ``weight`` (stacking),
        ``se``, ``dse`` (standard error of the difference), ``warning``, ``scale``; plus
        ``pareto_k_max`` and ``n_pareto_k_high`` (observations with Pareto k above
        ``min(1 - 1 / log10 S, 0.7)`` for S draws: PSIS-LOO is unreliable there) and
        ``verdict``: ``"best"``, ``"cannot tell apart from best"`` (``elpd_diff <= 2 dse``),
        ``"cannot tell apart from best (elpd_diff < 4: too small to call)"`` (a difference
        beyond 2 dse but below 4, where the normal approximation of the difference, and so
        ``dse``, is unreliable: Sivula et al. 2022) or ``"worse"`` (``elpd_diff > 2 dse`` and
        ``elpd_diff >= 4``), with ``"; LOO unreliable (...)"`` appended where a run has high
        Pareto k.
        ``attrs``: ``var_name``, ``scores`` (what was compared), ``ic``.

    Raises
    ------
    ValueError
        Fewer than two runs; a run without a log_likelihood group (``"observed"``, ``"bwrs"``,
        or a likelihood model fitted with ``pointwise=False``: the message says to refit it);
        no shared log-likelihood variable, or ``var_name`` missing from a run or scoring
        different observations in different runs (e.g. the ranking models' own ``"c"``); runs
        fitted to different data (different sizes, coordinates or data hash).
    TypeError
        A run that is neither an InferenceData nor a path.

    See Also
    --------
    loo_scored : the LOO of one run on one variable.
    bayes_judge.win_rate, bayes_judge.rank

    References
    ----------
    Vehtari, Gelman, Gabry (2017). Practical Bayesian model evaluation using leave-one-out
    cross-validation and WAIC.  Vehtari et al. (2024). Pareto smoothed importance sampling.
    Sivula, Magnusson, Matamoros, Vehtari (2022). Uncertainty in Bayesian leave-one-out
    cross-validation based model comparison (an elpd difference below 4 is small).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(100, p=0.7, q0=[0.9, 0.8], q1=[0.6, 0.7], seed=1)
    >>> fits = {m: bj.win_rate(df, ds_model=m, chains=2, draws=200, tune=200, backend="pymc")
    ...         for m in ("two-coin", "one-coin")}                      # doctest: +SKIP
    >>> bj.compare_models(fits)[["elpd_loo", "elpd_diff", "dse", "verdict"]]  # doctest: +SKIP
    """
    if ic not in ICS:
        raise ValueError(f"ic must be one of {ICS}, got {ic!r}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    idatas = _as_runs(runs)
    lls = {n: _loglik(n, idata) for n, idata in idatas.items()}
    var = _choose_var(lls, var_name)
    _check_same_data(idatas, lls, var)
    elpds = {}
    for n, idata in idatas.items():
        w = _weights_var(lls[n], var)
        if ic == "waic":
            if w != var:
                raise ValueError(
                    f"ic='waic' scores a model on its own likelihood; run {n!r} conditions on "
                    f"{w!r}, not {var!r}: use ic='loo'"
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                elpds[n] = az.waic(idata, pointwise=True, var_name=var, scale=scale)
        else:
            elpds[n] = loo_scored(idata, var, weights_var=w, scale=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # high Pareto k is reported in the table's columns
        table = az.compare(elpds)
    k_max, k_high = [], []
    for n in table.index:
        e = elpds[n]
        if "pareto_k" in e:
            k = np.asarray(e["pareto_k"])
            k_max.append(float(np.max(k)))
            k_high.append(int((k > e["good_k"]).sum()))
        else:
            k_max.append(np.nan)
            k_high.append(0)
    table["pareto_k_max"] = k_max
    table["n_pareto_k_high"] = k_high
    # an elpd difference below 4 is small and its standard error unreliable (Sivula et al. 2022;
    # Vehtari's cross-validation FAQ): no call, however small dse is
    diff = table["elpd_diff"].to_numpy(dtype=float)
    verdict = np.where(
        table["rank"] == 0, "best",
        np.where(diff <= 2 * table["dse"].to_numpy(dtype=float), "cannot tell apart from best",
                 np.where(np.abs(diff) < SMALL_ELPD_DIFF, f"cannot tell apart from best (elpd_diff < "
                          f"{SMALL_ELPD_DIFF:g}: too small to call)", "worse")),
    ).astype(object)
    for i, n in enumerate(table["n_pareto_k_high"]):
        if n:
            verdict[i] += f"; LOO unreliable ({n} Pareto k > {float(elpds[table.index[i]]['good_k']):.2f})"
    table["verdict"] = verdict
    table.attrs.update(var_name=var, scores=_scores(next(iter(lls.values())), var), ic=ic)
    return table
