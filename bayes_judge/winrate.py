"""``bj.win_rate``: calibrated win rates of systems from judge verdicts (seed 003)."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd

from .annotation import dawid_skene as ds
from .calibration import bwrs_draws, observed_draws
from .inference import BACKENDS, sample_numpyro, sample_pymc
from .verdicts import WinRateData, encode_win_rate

__all__ = ["win_rate", "LabelSwitchingWarning", "METHODS", "PRIORS", "DS_MODELS"]

METHODS = ("dawid-skene", "bwrs", "observed", "independent")
PRIORS = ("none", "in-distribution", "ood")
DS_MODELS = ("two-coin", "one-coin")


class LabelSwitchingWarning(UserWarning):
    """Chains of a Dawid-Skene fit disagree on which class the judges favour."""


def _coords(data: WinRateData) -> dict:
    return {
        "pair": data.pair_labels,
        "judge": list(data.judges),
        "item": data.unit_labels,
    }


def _observed_groups(data: WinRateData) -> tuple[dict, dict, dict]:
    observed = {"n_first": data.n_first, "n_second": data.n_second}
    k_judge = data.k_observed()
    constant = {
        "k_observed": np.nanmean(k_judge, axis=-1),
        "k_judge": k_judge,
        "human_label": data.label,
        "item_pair": data.unit_pair,
        "n_tie": data.n_tie,
    }
    dims = {
        "n_first": ["item", "judge"],
        "n_second": ["item", "judge"],
        "k_observed": ["pair"],
        "k_judge": ["pair", "judge"],
        "human_label": ["item"],
        "item_pair": ["item"],
        "n_tie": ["item", "judge"],
    }
    return observed, constant, dims


def loglik_attrs(use_labels: bool) -> dict[str, str]:
    """What ``log_likelihood["t"]`` scores, read by :func:`bayes_judge.compare_models`.

    Every likelihood model of the win rate (two-coin and one-coin Dawid-Skene, independent
    raters) scores the same observations per item: the judges' verdicts, and the human label
    where it is observed and used (``prior="in-distribution"``).  Fits that score the same
    observations the same way carry the same ``scores`` string.
    """
    what = "judges' verdicts and observed human labels" if use_labels else "judges' verdicts"
    return {
        "scores": f"win-rate items: {what}",
        "observed": "n_first n_second",
        "loo_weights": "t",
    }


def _attrs(data: WinRateData, method: str, prior: str, backend: str | None, seed: int) -> dict:
    from . import __version__

    return {
        "bayes_judge_version": __version__,
        "method": method,
        "prior": prior,
        "backend": backend or "numpy",
        "seed": seed,
        "swap": data.swap,
        "ties": data.ties,
        "n_random_ties": data.n_random_ties,
        "n_rows": data.n_rows,
        "systems": list(data.systems),
        "pair_first": [a for a, _ in data.pairs],
        "pair_second": [b for _, b in data.pairs],
    }


def _check_labels_two_classes(data: WinRateData, where: str, per_pair: bool = False) -> None:
    groups = range(len(data.pairs)) if per_pair else [None]
    for g in groups:
        sel = data.label >= 0 if g is None else (data.label >= 0) & (data.unit_pair == g)
        lab = data.label[sel]
        name = "" if g is None else f" of pair {data.pair_labels[g]}"
        if per_pair and lab.size == 0:
            raise ValueError(f"{where}: no human labels{name}; BWRS calibrates every pair from its own labels")
        if lab.size and np.unique(lab).size < 2:
            side = "G0 (the pair's first system)" if lab[0] == 1 else "G1 (the pair's second system)"
            raise ValueError(
                f"{where}: all {lab.size} human labels{name} prefer {side}; the accuracy on the "
                "other class (q0 or q1) cannot be estimated from them"
            )


def _label_switch_check(q0: np.ndarray, q1: np.ndarray, data: WinRateData) -> None:
    """Warn when chains sit in different modes: sign of mean(q0 + q1 - 1) per chain and pair."""
    if q0.shape[0] < 2:
        return
    mode = np.sign((q0 + q1 - 1).mean(axis=(1, 3)))  # (chain, pair)
    split = (mode.max(axis=0) != mode.min(axis=0)).nonzero()[0]
    if split.size:
        pairs = [data.pair_labels[i] for i in split]
        warnings.warn(
            f"Dawid-Skene: chains disagree on which class the judges favour for {pairs} "
            "(label switching: some chains have mean q0 + q1 < 1). r_hat of p will be large; "
            "the judges may be near chance. Add human labels (prior='in-distribution') or an "
            "OOD prior.",
            LabelSwitchingWarning,
            stacklevel=3,
        )
        return
    # local modes of one judge: chains agree overall but not on whether judge e beats chance
    # (a quantity merely centred near 0 also flips sign between chains: require that the chains'
    # means sit apart by more than twice the within-chain spread, i.e. separate modes)
    d = q0 + q1 - 1
    m, sd = d.mean(axis=1), d.std(axis=1).mean(axis=0)  # (chain, pair, judge), (pair, judge)
    split_modes = (np.sign(m).max(axis=0) != np.sign(m).min(axis=0)) & (np.ptp(m, axis=0) > 2 * sd)
    pj = split_modes.nonzero()
    if pj[0].size:
        where = sorted({(data.pair_labels[a], str(data.judges[e])) for a, e in zip(*pj, strict=True)})
        warnings.warn(
            f"Dawid-Skene: chains disagree on whether judge(s) beat chance (q0 + q1 > 1) for "
            f"{where[:6]}: the posterior has several modes (one judge adversarial, or the others) "
            "and r_hat will be large. Look at that judge's verdicts; add human labels "
            "(prior='in-distribution') or an OOD prior.",
            LabelSwitchingWarning,
            stacklevel=3,
        )


def _check_labels_present(data: WinRateData, where: str) -> None:
    if not (data.label >= 0).any():
        raise ValueError(
            f"{where}: prior='in-distribution' needs human labels: a 'human' column or a human= table"
        )


def _fit_dawid_skene(
    data: WinRateData,
    *,
    prior: str,
    ood: WinRateData | None,
    ds_model: str,
    backend: str,
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    target_accept: float,
) -> tuple[dict, dict]:
    use_labels = prior == "in-distribution"
    one_coin = ds_model == "one-coin"
    if prior == "none":
        if (data.n_first.sum() == 0) or (data.n_second.sum() == 0):
            side = "G1" if data.n_first.sum() == 0 else "G0"
            n = int(data.n_first.sum() + data.n_second.sum())
            raise ValueError(
                f"dawid-skene: all {n} verdicts prefer {side}; with no human "
                "labels (prior='none') p and the judges' accuracies are not identified. Add human "
                "labels (prior='in-distribution') or an OOD prior."
            )
    if use_labels:
        _check_labels_present(data, "dawid-skene")
        if not one_coin:  # one accuracy per judge is identified by labels of either class
            _check_labels_two_classes(data, "dawid-skene")
    pri = ds.ds_prior(data, prior, ood, one_coin=one_coin)
    pat = ds.pattern_histogram(data, use_labels=use_labels, pad=backend == "numpyro")
    coords = {"pair": data.pair_labels, "judge": list(data.judges)}
    if one_coin:
        post, stats = _sample_one_coin(pat, pri, coords, backend, chains, draws, tune, seed, target_accept)
        q0 = q1 = post["q"]
    else:
        post, stats = _sample_two_coin(pat, pri, coords, backend, chains, draws, tune, seed, target_accept)
        q0, q1 = post["q0"], post["q1"]
    _label_switch_check(q0, q1, data)
    log_lik, h_prob = ds.posterior_item_quantities(post["p"], q0, q1, data, use_labels)
    post = {**post, "h_prob": h_prob}
    const = (
        {"alpha_q": pri.alpha_q0, "beta_q": pri.beta_q0}
        if one_coin
        else {k: getattr(pri, k) for k in ("alpha_q0", "beta_q0", "alpha_q1", "beta_q1")}
    )
    extra = {
        "log_likelihood": {"t": log_lik},
        "loglik_attrs": loglik_attrs(use_labels),
        "sample_stats": stats,
        "prior_const": const,
        "n_patterns": pat.n_patterns,
    }
    return post, extra


def _sample_two_coin(pat, pri, coords, backend, chains, draws, tune, seed, target_accept):
    init = pri.mean()
    if backend == "nutpie":
        from .annotation.ds_fast import sample_ds_fast  # compiles / loads numba callbacks

        return sample_ds_fast(
            pat, pri, chains=chains, draws=draws, tune=tune, seed=seed, init_values=init,
            target_accept=target_accept,
        )
    if backend == "numpyro":
        args = (
            pat.n1, pat.n0, pat.label, pat.pair, pat.weight,
            pri.alpha_p, pri.beta_p, pri.alpha_q0, pri.beta_q0, pri.alpha_q1, pri.beta_q1,
        )
        return sample_numpyro(
            ds.numpyro_model, args, init_values=init, chains=chains, draws=draws, tune=tune,
            seed=seed, target_accept=target_accept,
        )
    model = ds.pymc_model(pat, pri, coords)
    return sample_pymc(
        model, var_names=["p", "q0", "q1"], init_values=init, chains=chains, draws=draws,
        tune=tune, seed=seed, target_accept=target_accept,
    )


def _sample_one_coin(pat, pri, coords, backend, chains, draws, tune, seed, target_accept):
    m = pri.mean()
    init = {"p": m["p"], "q": m["q0"]}
    if backend == "numpyro":
        args = (pat.n1, pat.n0, pat.label, pat.pair, pat.weight, pri.alpha_p, pri.beta_p, pri.alpha_q0, pri.beta_q0)
        return sample_numpyro(
            ds.numpyro_one_coin, args, init_values=init, chains=chains, draws=draws, tune=tune,
            seed=seed, target_accept=target_accept,
        )
    model = ds.pymc_one_coin(pat, pri, coords)
    return sample_pymc(
        model, var_names=["p", "q"], init_values=init, chains=chains, draws=draws, tune=tune,
        seed=seed, target_accept=target_accept,
    )


def _fit_independent(
    data: WinRateData,
    *,
    prior: str,
    backend: str,
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    target_accept: float,
) -> tuple[dict, dict]:
    use_labels = prior == "in-distribution"
    if use_labels:
        _check_labels_present(data, "independent")
    P, E = len(data.pairs), len(data.judges)
    a_k = np.full((P, E), ds.INDEPENDENT_PRIOR_K[0])
    b_k = np.full((P, E), ds.INDEPENDENT_PRIOR_K[1])
    judged = (data.verdict_counts()[1] > 0).astype(float)
    pat = ds.pattern_histogram(data, use_labels=use_labels, pad=backend == "numpyro")
    init = {"k": a_k / (a_k + b_k)}
    if backend == "numpyro":
        args = (pat.n1, pat.n0, pat.label, pat.pair, pat.weight, judged, a_k, b_k)
        post, stats = sample_numpyro(
            ds.numpyro_independent, args, init_values=init, chains=chains, draws=draws, tune=tune,
            seed=seed, target_accept=target_accept,
        )
    else:
        coords = {"pair": data.pair_labels, "judge": list(data.judges)}
        model = ds.pymc_independent(pat, judged, a_k, b_k, coords)
        post, stats = sample_pymc(
            model, var_names=["p", "k"], init_values=init, chains=chains, draws=draws, tune=tune,
            seed=seed, target_accept=target_accept,
        )
    log_lik = ds.independent_item_log_lik(post["p"], post["k"], data, use_labels)
    extra = {
        "log_likelihood": {"t": log_lik},
        "loglik_attrs": loglik_attrs(use_labels),
        "sample_stats": stats,
        "prior_const": {"alpha_k": a_k, "beta_k": b_k},
        "n_patterns": pat.n_patterns,
    }
    return post, extra


def win_rate(
    df: pd.DataFrame,
    *,
    method: str = "dawid-skene",
    ds_model: str = "two-coin",
    prior: str = "none",
    human: pd.DataFrame | None = None,
    ood: pd.DataFrame | None = None,
    systems: list[str] | None = None,
    judges: list[str] | None = None,
    swap: str = "sum",
    ties: str = "random",
    backend: str = "nutpie",
    chains: int = 4,
    draws: int = 1000,
    tune: int = 1000,
    seed: int = 0,
    target_accept: float = 0.8,
) -> az.InferenceData:
    """Posterior win rate ``p`` of every pair of systems from judge verdicts.

    Parameters
    ----------
    df : pandas.DataFrame
        Judgments table (``DESIGN.md``); ``a`` and ``b`` are system names; rows may show either
        system first.  A ``human`` column, where filled, gives gold labels.
    method : {"dawid-skene", "bwrs", "observed", "independent"}
        ``"observed"``: k of eq. 4 with its Beta-Bernoulli posterior, pooled over judges;
        ``"bwrs"``: Algorithm 1 / eq. 11; ``"dawid-skene"``: Model 1 with the true label
        marginalized, sampled by NUTS; ``"independent"``: independent raters, no latent truth
        (judge e prefers G0 with its own rate ``k^e`` on every item, ``k^e ~ Beta(1, 1)``; ``p``
        is the judges' mean rate, and an observed human label is one more such rater, see
        :mod:`bayes_judge.annotation.dawid_skene`): the observed win rate as a likelihood, the
        baseline that :func:`bayes_judge.compare_models` ranks Dawid-Skene against.
    ds_model : {"two-coin", "one-coin"}
        For ``"dawid-skene"``: Model 1 with two accuracies per judge (q0, q1; the seed's model,
        default) or one (``q0 = q1 = q``, posterior ``q``; an OOD prior pools eq. 12-13 over
        both classes).  The one-coin model, like ``"independent"``, is sampled by NumPyro or
        PyMC: ``backend="nutpie"`` runs it on NumPyro (``attrs["backend"]`` records it).
    prior : {"none", "in-distribution", "ood"}
        Source of human knowledge (seed 003 §4.3).  ``"none"``: Beta(2, 1) on every q (not
        valid for BWRS, footnote 4); ``"in-distribution"``: human labels on a subset of the
        items (``human`` column or ``human=``) are observed; ``"ood"``: the labelled judgments
        in ``ood=`` give eq. 12-13 priors (DS) or the counts of Alg. 1 (BWRS).
    human : pandas.DataFrame, optional
        Gold labels: columns item, a, b, human ("a" / "b" in that row's orientation).
    ood : pandas.DataFrame, optional
        A labelled OOD judgments table (judgments columns plus ``human``), same judges.  Its
        pairs are oriented by sorted system name (the OOD set's alphabetically first system plays
        G0), so name its systems so that G0's counterpart sorts first.
    systems : list of str, optional
        System order; pairs are (earlier, later).  Default: sorted names.
    judges : list of str, optional
        Judges to use.  Default: all.
    swap : {"sum", "none", "split"}
        Swap-and-sum of a judge's two orders (seed 003 App. B), every row an observation, or
        each order its own judge.  See :func:`bayes_judge.verdicts.encode_win_rate`.
    ties : {"random", "skip"}
        Ties broken by a seeded coin flip (seed 003 App. B) or left out and counted.
    backend : {"nutpie", "numpyro", "pymc"}
        NUTS implementation for ``"dawid-skene"`` and ``"independent"``.  ``"nutpie"`` (default): nutpie's Rust NUTS
        on a hand-differentiated numba log-density (:mod:`bayes_judge.annotation.ds_fast`),
        sub-second fits and refits; ``"numpyro"``: NumPyro NUTS on the model function
        :func:`~bayes_judge.annotation.dawid_skene.numpyro_model`; ``"pymc"``: PyMC's NUTS on
        :func:`~bayes_judge.annotation.dawid_skene.pymc_model`.  The three sample the same
        posterior (``tests/annotation``).  ``"nutpie"`` implements the two-coin model only;
        for ``ds_model="one-coin"`` and ``method="independent"`` it means NumPyro.
    chains, draws, tune : int
        Sampler settings (BWRS and observed draw ``chains * draws`` independent samples).
    seed : int
        Every random choice (tie flips, draws, NUTS) follows from it.

    Returns
    -------
    arviz.InferenceData
        ``posterior.p`` with dim ``pair`` (P(a human prefers the pair's first system)), plus
        ``q0``, ``q1`` (pair, judge; one-coin: ``q``) and ``h_prob`` (item) for Dawid-Skene,
        ``p_judge``, ``q0``, ``q1``, ``k`` for BWRS, ``k`` for observed and independent;
        ``log_likelihood["t"]`` (DS and independent: per item, the verdicts and the used human
        labels; its ``attrs`` say what it scores), ``observed_data`` (verdict counts),
        ``constant_data`` (observed k, labels) and ``sample_stats`` (DS, independent).
        ``attrs`` records method, ds_model, prior, backend, swap, ties and seed.

    See Also
    --------
    win_rate_summary : one row per pair: p_mean, p_mode, HDI, P(p > 0.5), k, r_hat, ESS.
    compare_models : PSIS-LOO comparison of two-coin, one-coin and independent fits.

    References
    ----------
    Gao, Xu, Wang, Cohan. Bayesian Calibration of Win Rate Estimation with LLM Evaluators
    (seed 003): eq. 4, 9-14, Algorithm 1, Model 1.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(n_items=100, p=0.7, q0=[0.8, 0.9], q1=[0.75, 0.85], seed=1)
    >>> idata = bj.win_rate(df, method="observed", seed=0)
    >>> float(idata.posterior["p"].mean()) > 0.5
    True
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if ds_model not in DS_MODELS:
        raise ValueError(f"ds_model must be one of {DS_MODELS}, got {ds_model!r}")
    if ds_model != "two-coin" and method != "dawid-skene":
        raise ValueError(f"ds_model={ds_model!r} applies to method='dawid-skene' only (got method={method!r})")
    if method == "independent" and prior == "ood":
        raise ValueError(
            "method='independent' has no judge accuracies for an OOD prior to inform; use "
            "prior='none' or 'in-distribution'"
        )
    for name, val in (("chains", chains), ("draws", draws)):
        if not isinstance(val, int | np.integer) or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    if not isinstance(tune, int | np.integer) or tune < 0:
        raise ValueError(f"tune must be a non-negative integer, got {tune!r}")
    if prior == "ood" and ood is None:
        raise ValueError("prior='ood' needs ood=, a labelled judgments table")
    if method == "observed" and prior != "none":
        raise ValueError(f"method='observed' uses no human knowledge; got prior={prior!r} (use prior='none')")
    if ood is not None and prior != "ood":
        raise ValueError(f"ood= is only read with prior='ood' (got prior={prior!r}); drop it or set prior='ood'")
    if human is not None and (prior != "in-distribution" or method == "observed"):
        raise ValueError(
            f"human= labels are only read with prior='in-distribution' by 'bwrs', 'dawid-skene' or 'independent' "
            f"(got method={method!r}, prior={prior!r})"
        )

    data = encode_win_rate(df, systems=systems, judges=judges, human=human, swap=swap, ties=ties, seed=seed)
    ood_data = None
    if prior == "ood":
        assert ood is not None  # checked above: prior="ood" needs ood=
        ood_data = encode_win_rate(ood, swap=swap, ties=ties, seed=seed + 1, judges=None)
        if not set(ood_data.judges) & set(data.judges):
            raise ValueError(
                f"ood: no judge of the data ({data.judges}) appears in the OOD set "
                f"({ood_data.judges}); the OOD prior needs the same judges"
            )

    coords = _coords(data)
    observed, constant, cdims = _observed_groups(data)
    dims: dict[str, list[str]] = {"p": ["pair"], **cdims}
    extra: dict = {}
    rng_seed = seed + 7919  # draws use a stream distinct from the tie flips
    if backend == "nutpie" and (method == "independent" or ds_model == "one-coin"):
        backend = "numpyro"  # nutpie implements the two-coin model only

    if method == "observed":
        post = observed_draws(data, chains=chains, draws=draws, seed=rng_seed)
        dims["k"] = ["pair", "judge"]
    elif method == "independent":
        post, extra = _fit_independent(
            data, prior=prior, backend=backend, chains=chains, draws=draws, tune=tune, seed=seed,
            target_accept=target_accept,
        )
        dims.update({"k": ["pair", "judge"], "t": ["item"]})
    elif method == "bwrs":
        if prior == "none":
            raise ValueError(
                "method='bwrs' needs human labels: prior='in-distribution' (a 'human' column or "
                "human=) or prior='ood' (ood=); seed 003 footnote 4"
            )
        if prior == "in-distribution":
            if not (data.label >= 0).any():
                raise ValueError(
                    "method='bwrs' with prior='in-distribution' found no human labels: fill the "
                    "'human' column or pass human="
                )
            _check_labels_two_classes(data, "bwrs", per_pair=True)
            counts = data.accuracy_counts()
        else:
            assert ood_data is not None  # prior == "ood": encoded above
            _check_labels_two_classes(ood_data, "bwrs (ood)")
            if not (ood_data.label >= 0).any():
                raise ValueError("method='bwrs' with prior='ood': the OOD set has no human labels")
            c = {k: v.sum(axis=0) for k, v in ood_data.accuracy_counts().items()}
            idx = [ood_data.judges.index(j) if j in ood_data.judges else -1 for j in data.judges]
            missing = [j for j, i in zip(data.judges, idx, strict=True) if i < 0]
            if missing:
                raise ValueError(f"ood: judge(s) {missing} have no verdicts in the OOD set")
            counts = {k: v[idx][None, :] for k, v in c.items()}
        post = bwrs_draws(data, counts, chains=chains, draws=draws, seed=rng_seed)
        constant["bwrs_weight"] = post.pop("weight")
        dims.update({k: ["pair", "judge"] for k in ("p_judge", "q0", "q1", "k", "bwrs_weight")})
    else:
        post, extra = _fit_dawid_skene(
            data, prior=prior, ood=ood_data, ds_model=ds_model, backend=backend, chains=chains,
            draws=draws, tune=tune, seed=seed, target_accept=target_accept,
        )
        dims.update({k: ["pair", "judge"] for k in ("q0", "q1", "q")})
        dims.update({"h_prob": ["item"], "t": ["item"]})

    sampled = method in ("dawid-skene", "independent")
    attrs = _attrs(data, method, prior, backend if sampled else None, seed)
    if method == "dawid-skene":
        attrs["ds_model"] = ds_model
    if "n_patterns" in extra:
        attrs["n_patterns"] = extra["n_patterns"]
    idata = az.from_dict(
        posterior=post,
        sample_stats=extra.get("sample_stats"),
        log_likelihood=extra.get("log_likelihood"),
        observed_data=observed,
        constant_data=constant,
        coords=coords,
        dims=dims,
        attrs=attrs,
    )
    for name, val in extra.get("prior_const", {}).items():
        idata.constant_data[name] = (("pair", "judge"), val)
    if "loglik_attrs" in extra:
        idata.log_likelihood["t"].attrs.update(extra["loglik_attrs"])
    return idata
