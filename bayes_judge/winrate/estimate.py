"""``bj.win_rate``: calibrated win rates of systems from judge verdicts (Gao et al. 2024)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence

import arviz as az
import numpy as np
import pandas as pd

from ..generative import get_model
from ..generative.priors import Beta, Priors
from ..inference.convergence import LabelSwitchingWarning, warn_label_switching
from ..inference.idata import build_idata
from ..inference.settings import SAMPLERS, SAMPLING, Sampling
from . import dawid_skene as ds
from .bridge import BRIDGE_PRIOR, BridgePrior
from .bwrs import bwrs_draws
from .encode import WinRateData, encode_win_rate, net_vote
from .observed import observed_draws

__all__ = ["win_rate", "transfer_sources", "LabelSwitchingWarning", "METHODS", "PRIORS", "DS_MODELS", "ESTIMANDS"]

METHODS = ("bridge", "panel", "regression", "ppi", "transfer", "dawid-skene", "hierarchical", "bwrs", "observed",
           "independent")
#: the estimators that are no generative model (the others are declarations of :mod:`bayes_judge.generative`)
ESTIMATORS = ("bridge", "panel", "ppi", "transfer", "bwrs", "observed")
ESTIMANDS = ("human", "judges")
PRIORS = ("none", "in-distribution", "ood")
DS_MODELS = ("two-coin", "one-coin", "consensus")


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

    Every likelihood model of the win rate (two-coin, one-coin and consensus Dawid-Skene,
    independent raters) scores the same observations per item: the judges' verdicts, and the human label
    where it is observed and used (``prior="in-distribution"``).  Fits that score the same
    observations the same way carry the same ``scores`` string.
    """
    what = "judges' verdicts and observed human labels" if use_labels else "judges' verdicts"
    return {
        "scores": f"win-rate items: {what}",
        "observed": "n_first n_second",
        "loo_weights": "t",
    }


def _attrs(data: WinRateData, method: str, prior: str, seed: int) -> dict:
    return {
        "position_counts": json.dumps(data.meta.get("position_counts", {})),
        "method": method,
        "prior": prior,
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


def _check_labels_present(data: WinRateData, where: str, what: str = "prior='in-distribution'") -> None:
    if not (data.label >= 0).any():
        raise ValueError(
            f"{where}: needs {what}: fill the 'human' column or pass a human= table "
            "(with no labels at all, use method='dawid-skene')"
            if what != "prior='in-distribution'"
            else f"{where}: prior='in-distribution' needs human labels: a 'human' column or a human= table"
        )


def _registered() -> list[str]:
    from ..generative import list_models

    return [m.name for m in list_models("win-rate")]


def _declared_priors(spec, data: WinRateData, prior: str, ood: WinRateData | None, priors):
    """The declaration's priors: the user's ``priors=``, or Gao et al. 2024's choice for ``prior``
    (eq. 12-13 on the model's ``accuracies`` when ``prior="ood"``)."""
    if priors is not None:
        if not isinstance(priors, spec.priors):
            raise TypeError(f"priors= for method {spec.name!r} must be {spec.priors.__name__}, got {type(priors).__name__}")
        if prior == "ood":
            raise ValueError("give either prior='ood' (eq. 12-13 from ood=) or priors=, not both")
        return priors
    if prior == "ood" and spec.ood_prior:
        one_coin = len(spec.accuracies) == 1
        pri = ds.ds_prior(data, prior, ood, one_coin=one_coin)
        by_class = [Beta(pri.alpha_q0, pri.beta_q0), Beta(pri.alpha_q1, pri.beta_q1)]
        return spec.priors().replace(**dict(zip(spec.accuracies, by_class, strict=False)))
    return spec.priors()


def _model_name(method: str, ds_model: str) -> str:
    """The registered declaration a ``method`` / ``ds_model`` pair fits."""
    if method == "dawid-skene" and ds_model != "two-coin":
        return ds_model  # "one-coin" or "consensus"
    return method


def _check_identified_without_labels(data: WinRateData, name: str) -> None:
    if (data.n_first.sum() == 0) or (data.n_second.sum() == 0):
        side = "G1" if data.n_first.sum() == 0 else "G0"
        n = int(data.n_first.sum() + data.n_second.sum())
        raise ValueError(
            f"{name}: all {n} verdicts prefer {side}; with no human "
            "labels (prior='none') p and the judges' accuracies are not identified. Add human "
            "labels (prior='in-distribution') or an OOD prior."
        )


def _fit_declared(
    data: WinRateData,
    *,
    name: str,
    prior: str,
    ood: WinRateData | None,
    priors,
    sampling: Sampling,
    pointwise: bool | None,
) -> tuple[dict, dict]:
    """Fit a declared win-rate model of :mod:`bayes_judge.generative` by NUTS."""
    from ..generative.winrate_models import unfold_label_switch
    from ..inference.fit import fit_model, item_quantities, latent_draws, predictive_draws
    from .encode import VerdictPatterns, verdict_patterns

    spec = get_model(name, "win-rate")
    use_labels = prior == "in-distribution"
    if spec.needs_labels:
        _check_labels_present(data, name, what="human labels on some items")
    elif prior == "none":
        _check_identified_without_labels(data, name)
    if use_labels and not spec.needs_labels:
        _check_labels_present(data, name)
        if len(spec.accuracies) == 2:  # one accuracy per class: each class's labels identify its own
            _check_labels_two_classes(data, name)
    pri = _declared_priors(spec, data, prior, ood, priors)
    pat = verdict_patterns(data, use_labels=use_labels)
    coords = {"pair": data.pair_labels, "judge": list(data.judges)}
    # without labels in the likelihood, Model 1's posterior has two mirrored modes: sample the
    # label-switch symmetric model and unfold its draws into the seed posterior (both modes with
    # their masses, wherever the chains started; generative.winrate_models.label_switch)
    symmetric = spec.label_switch and not use_labels
    fit = fit_model(
        spec, pat.arrays(), dims=VerdictPatterns.DIMS, coords=coords, priors=pri, sampling=sampling,
        options={"symmetric": True} if symmetric else None,
    )
    C, D = next(iter(fit.posterior.values())).shape[:2]
    if pointwise is None:  # per-item arrays per draw only while they stay small (<= ~160 MB)
        pointwise = C * D * data.n_units * (1 + len(spec.latent)) <= 2e7
    # one evaluation of the declaration at the draws as sampled, read by the unfolding too
    wanted = (spec.latent if pointwise else ()) + (("label_switch_delta",) if symmetric else ())
    ll, lat = item_quantities(fit, spec.observed[0], wanted) if pointwise else (None, [
        latent_draws(fit, v) for v in wanted])
    if symmetric:  # Model 1's one latent, h_prob, is there when pointwise
        delta = lat.pop()
        h = unfold_label_switch(fit.posterior, delta, sampling.seed, lat[0] if lat else None, fit.arrays["pair"])
        lat = [] if h is None else [h]
        fit.posterior.pop("label_switch_delta", None)  # a sampler's own copy, of the folded-model draws
    post = dict(fit.posterior)
    if spec.predictive:
        post.update({k: v for k, v in predictive_draws(fit, list(spec.predictive)).items() if k == "p"})
    if spec.accuracies:
        warn_label_switching(post[spec.accuracies[0]], post[spec.accuracies[-1]], data.pair_labels,
                             list(data.judges), chains=not symmetric)
    model = fit.entry.model  # the declaration names every variable's dims
    var_dims = {k: list(model.named_vars_to_dims.get(k, ())) for k in post}
    var_dims.update({"p": ["pair"], **{lat: ["item"] for lat in spec.latent}, "t": ["item"]})
    extra: dict = {"sample_stats": fit.stats, "n_patterns": pat.n_patterns, "priors": pri,
                   "sampler": fit.sampler_label, "dims": var_dims}
    if pointwise:
        idx = pat.unit_pattern
        assert ll is not None
        extra["log_likelihood"] = {"t": ll[..., idx]}
        extra["loglik_attrs"] = loglik_attrs(use_labels)
        for name_lat, val in zip(spec.latent, lat, strict=True):
            post[name_lat] = val[..., idx]
    extra["prior_const"] = {f"{ab}_{v}": getattr(getattr(pri, v), ab) for v in spec.prior_constants
                            for ab in ("alpha", "beta")}
    return post, extra


def win_rate(
    df: pd.DataFrame,
    *,
    human: pd.DataFrame | None = None,
    method: str | None = None,
    prior: str | None = None,
    ood: pd.DataFrame | Sequence[pd.DataFrame] | Mapping[str, pd.DataFrame] | None = None,
    systems: list[str] | None = None,
    judges: str | Sequence[str] | None = None,
    estimand: str = "human",
    ds_model: str | None = None,
    priors: Priors | BridgePrior | None = None,
    swap: str = "sum",
    ties: str | None = None,
    sampler: str = SAMPLING.sampler,
    chains: int = SAMPLING.chains,
    draws: int = SAMPLING.draws,
    tune: int = SAMPLING.tune,
    seed: int = SAMPLING.seed,
    target_accept: float = SAMPLING.target_accept,
    alpha: float = 0.1,
    pointwise: bool | None = None,
) -> az.InferenceData:
    """Posterior win rate ``p`` of every pair of systems from judge verdicts.

    Parameters
    ----------
    df : pandas.DataFrame
        Judgments table (``DESIGN.md``); ``a`` and ``b`` are system names; rows may show either
        system first.  A ``human`` column, where filled, gives gold labels.
    human : pandas.DataFrame, optional
        Gold labels: columns item, a, b, human ("a" / "b" in that row's orientation).
    estimand : {"human", "judges"}
        Which win rate.  ``"human"`` (default): the share of items on which a person prefers the
        pair's first system.  Without labels the verdicts do not identify it, and the default
        estimator (``"bridge"``) widens the interval by what they cannot tell: how far people's
        rate lies from the judges' consensus, in either direction, and how much the panel prefers
        one system's texts (:mod:`bayes_judge.winrate.bridge`).  ``"judges"``: the rate at which
        this panel prefers the first system over the population of items (every row a verdict:
        ties ½, both orders as judged, every judge; ``swap`` is not read), with only the
        uncertainty of which items were drawn (``method="panel"``).
    method : str, optional
        ``None`` (default): the package's recommended estimator for the estimand, the one that
        holds its nominal coverage on real judges with known truth, on outputs assigned to two
        systems at random (``benchmarks/real_calibration.py``) and on natural pairs of real
        systems (``benchmarks/natural_pairs.py``): for ``estimand="human"``, ``"regression"``
        when human labels are given, ``"transfer"`` when none are but ``ood=`` holds several
        labelled sets, ``"bridge"`` otherwise; for ``estimand="judges"``, ``"panel"``.
        ``"bridge"``: no labels; the human rate bridged from the consensus rate π by
        ``logit p = λ logit π + α`` under the prior :class:`~bayes_judge.winrate.bridge.BridgePrior`
        fitted to the bundled sets (``priors=`` another one); ``"panel"``: the judges' rate by the
        Bayesian bootstrap over items;
        ``"regression"``: the human label regressed on each item's whole verdict pattern, the
        fit carried to the unlabelled items, ``p`` the share of all items a human prefers G0 on
        (:func:`bayes_judge.generative.winrate_models.label_regression`);
        ``"ppi"``: prediction-powered inference, power-tuned (PPI++), the judges' share of
        verdicts for G0 as the prediction (a reference; its normal interval as draws);
        ``"transfer"``: no labels needed here; the judges' votes, each weighted by its record on
        the labelled sets in ``ood=`` (a list or dict of tables or
        :class:`~bayes_judge.winrate.transfer.TransferSource`) and calibrated on them, their
        between-set spread carried into the interval (:mod:`bayes_judge.winrate.transfer`);
        ``"dawid-skene"``: Gao et al. 2024 Model 1 with the true label marginalized (``ds_model``
        picks two coins, one, or one on the judges' consensus); ``"hierarchical"``: Model 1 with the judges drawn from one
        population and each judge's class asymmetry shrunk toward 0; ``"bwrs"``: Algorithm 1 / eq. 11; ``"observed"``: k of eq. 4
        with its Beta-Bernoulli posterior; ``"independent"``: independent raters with no latent
        truth, the baseline :func:`bayes_judge.compare_models` ranks Dawid-Skene against.  Any
        win-rate model added with :func:`bayes_judge.generative.register_model` by its name.
    prior : {"none", "in-distribution", "ood"}, optional
        Source of human knowledge (Gao et al. 2024 §4.3).  Default: ``"ood"`` when ``ood=`` is given,
        ``"in-distribution"`` when labels are given, else ``"none"``.
    ood : pandas.DataFrame, or a list / dict of them, optional
        A labelled OOD judgments table (judgments columns plus ``human``), same judges.  Its
        pairs are oriented by sorted system name (the OOD set's alphabetically first system plays
        G0), so name its systems so that G0's counterpart sorts first.  Several labelled sets
        (any judges; a dict names them) are read by ``method="transfer"``, also as
        :class:`~bayes_judge.winrate.transfer.TransferSource` from :func:`transfer_sources`.
    systems : list of str, optional
        System order; pairs are (earlier, later).  Default: sorted names.
    judges : str or list of str, optional
        Judges to use (a name, or a list of distinct names).  Default: all.
    ds_model : {"two-coin", "one-coin", "consensus"}, optional
        For ``"dawid-skene"``: two accuracies per judge (the seed's model), one, or one on the
        judges' consensus, which agrees with a human with an unknown chance ``c``
        (:func:`~bayes_judge.generative.winrate_models.consensus`: real judges err together, so
        without labels the verdicts identify the consensus's rate, not the human one).  Default:
        ``"two-coin"``; giving ``ds_model`` with no ``method`` fits that Dawid-Skene model.
    priors : Priors, optional
        Prior distributions of the generative model (its ``Priors`` dataclass in
        :mod:`bayes_judge.generative.winrate_models`); default: the declaration's.
    swap : {"sum", "none", "split"}
        Swap-and-sum of a judge's two orders (Gao et al. 2024 App. B), every row an observation, or
        each order its own judge.  See :func:`bayes_judge.winrate.encode.encode_win_rate`.
    ties : {"random", "skip"}, optional
        Ties broken by a seeded coin flip (Gao et al. 2024 App. B; default for the seed's methods) or
        left out and counted (default for ``"regression"`` and ``"ppi"``, which read a tie as a
        vote of 0 / a prediction of 1/2).
    sampler : {"nutpie", "pymc", "numpyro"}
        NUTS implementation for the generative models (``"regression"``, ``"dawid-skene"``,
        ``"independent"``): all three run the same PyMC declaration; ``"nutpie"`` uses a
        registered fast path where one exists (``attrs["sampler"]`` says so).
    chains, draws, tune : int
        Sampler settings (BWRS, observed and PPI draw ``chains * draws`` independent samples).
    seed : int
        Every random choice (tie flips, draws, NUTS) follows from it.
    alpha : float
        ``method="ppi"`` only: the interval's error rate (``hdi_prob = 1 − alpha`` reads it).
    pointwise : bool, optional
        Store per-item arrays per draw (the ``log_likelihood`` group and the latent ``h_prob``).
        Default: only while they stay small (≤ 2e7 values, e.g. 2,500 items at 4 × 1000 draws);
        ``False`` keeps a fit of a million judgments small.

    Returns
    -------
    arviz.InferenceData
        ``posterior.p`` with dim ``pair`` (P(a human prefers the pair's first system)), plus the
        model's parameters (``q0``, ``q1`` (pair, judge) for Dawid-Skene, ``b0``, ``b``, ``tau``,
        ``z`` for the regression, ...), ``h_prob`` (item, P(a human prefers G0 on the item));
        ``log_likelihood["t"]`` (per item; its ``attrs`` say what it scores), ``observed_data``
        (verdict counts), ``constant_data`` (observed k, labels) and ``sample_stats``.
        ``attrs``: task, model, sampler, seed, data_hash, priors (JSON), method, prior, swap,
        ties and the pair orientation.

    See Also
    --------
    win_rate_summary : one row per pair: p_mean, p_mode, HDI, P(p > 0.5), k, r_hat, ESS.
    compare_models : PSIS-LOO comparison of generative models fitted to the same data.

    References
    ----------
    Gao, Xu, Wang, Cohan. Bayesian Calibration of Win Rate Estimation with LLM Evaluators
    (Gao et al. 2024): eq. 4, 9-14, Algorithm 1, Model 1.  Angelopoulos et al. Prediction-powered
    inference (2023); PPI++ (2023).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(n_items=100, p=0.7, q0=[0.8, 0.9], q1=[0.75, 0.85], seed=1)
    >>> idata = bj.win_rate(df, method="observed", seed=0)
    >>> float(idata.posterior["p"].mean()) > 0.5
    True
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"judgments must be a pandas DataFrame, got {type(df).__name__}")
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {ESTIMANDS}, got {estimand!r}")
    labelled = human is not None or ("human" in df.columns and df["human"].notna().any())
    if estimand == "judges":
        if method == "observed":
            raise ValueError("estimand='judges' is the panel's rate over items, whose verdicts move together "
                             "(method='panel', the default for it); method='observed' is Gao et al. 2024's k with a "
                             "Beta posterior over independent verdicts, too narrow for that rate (3 items x 20 "
                             "judges: width 0.14 against the panel's 0.43). Leave method unset")
        if method == "independent":
            raise ValueError("estimand='judges' is the panel's rate over items, whose verdicts move together "
                             "(method='panel', the default for it); method='independent' is the mean of the judges' "
                             "own rates with every verdict independent, an interval too narrow for that rate (its "
                             "attrs name it the judges' too). Leave method unset")
        if method not in (None, "panel"):
            raise ValueError(f"estimand='judges' is the panel's own rate (method='panel'); method={method!r} "
                             "estimates the human rate (estimand='human')")
        if human is not None or ood is not None or prior not in (None, "none"):
            raise ValueError("estimand='judges' reads the verdicts only: drop human=, ood= and prior=")
        method, prior, labelled = method or "panel", "none", False
    elif method == "panel":
        raise ValueError("method='panel' estimates the judges' rate: pass estimand='judges'")
    if method is None and labelled and ood is not None and prior is None:
        raise ValueError(
            "the table has human labels and ood= names other labelled sets: the default with labels is the label "
            "regression on this set's own labels, which reads no ood=. Drop ood=, or pass method='transfer' to "
            "calibrate the judges on the other sets (this set's labels then enter only as known items)")
    if method is None:  # the recommended estimator: honest on real judges (benchmarks/natural_pairs.py)
        several = ood is not None and not isinstance(ood, pd.DataFrame)  # labelled sets to transfer from
        method = ("regression" if (labelled and prior in (None, "in-distribution") and ood is None)
                  else "transfer" if several
                  else "bridge" if (ood is None and prior in (None, "none") and ds_model is None)
                  else "dawid-skene")  # ds_model= names a Dawid-Skene model
    if ds_model is None:  # the seed's model (the package's no-label default is the bridge, not a Dawid-Skene)
        ds_model = "two-coin"
    if prior is None:
        prior = "ood" if ood is not None else ("in-distribution" if labelled and method != "observed" else "none")
    if method not in METHODS and method not in _registered():
        raise ValueError(f"method must be one of {METHODS} or a registered win-rate model {_registered()}, got {method!r}")
    if ds_model not in DS_MODELS:
        raise ValueError(f"ds_model must be one of {DS_MODELS}, got {ds_model!r}")
    spec = None if method in ESTIMATORS else get_model(_model_name(method, ds_model), "win-rate")
    if ties is None:  # the seed's coin flip for the seed's estimators; ties are votes of 0 otherwise
        ties = spec.ties if spec is not None else ("random" if method in ("bwrs", "observed") else "skip")
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    sampling = Sampling(sampler, chains, draws, tune, seed, target_accept)  # checked once
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS} for a win rate, got {sampler!r}")
    if ds_model != "two-coin" and method != "dawid-skene":
        raise ValueError(f"ds_model={ds_model!r} applies to method='dawid-skene' only (got method={method!r})")
    if method == "transfer" and (ood is None or prior not in ("ood", None)):
        raise ValueError("method='transfer' calibrates the judges on other labelled sets: pass them as ood= "
                         "(a table, or a list / dict of tables) and leave prior unset or 'ood'")
    if prior == "ood" and (method == "ppi" or (spec is not None and not spec.ood_prior)):
        name = method if spec is None else spec.name
        raise ValueError(
            f"{name}: has no judge accuracies for an OOD prior (Gao et al. 2024 eq. 12-13) to inform; use "
            "prior='none' or 'in-distribution', or method='transfer' with labelled other sets as ood="
        )
    needs_labels = method == "ppi" or (spec is not None and spec.needs_labels)
    if needs_labels and not labelled:
        raise ValueError(
            f"{method}: needs human labels on some items: fill the 'human' column or pass a "
            "human= table (with no labels at all, leave method unset: the score bridge, which widens by what the verdicts cannot tell)"
        )
    if needs_labels and prior == "none":
        raise ValueError(f"method={method!r} calibrates the judges on human labels; it needs prior='in-distribution' (the default when labels are given)")
    if method == "bridge" and prior != "none":
        raise ValueError(f"method='bridge' reads no labels (prior='none'); got prior={prior!r}: with labels "
                         "leave method unset (the label regression)")
    if method in ("bridge", "panel") and ties != "skip":
        raise ValueError(f"method={method!r} counts ties (ties='skip'), got ties={ties!r}")
    if method == "bridge" and priors is not None and not isinstance(priors, BridgePrior):
        raise TypeError(f"priors= for method='bridge' must be a BridgePrior, got {type(priors).__name__}")
    if priors is not None and method in ("observed", "bwrs", "ppi", "panel"):
        raise ValueError(f"priors= sets a generative model's prior distributions; method={method!r} has none")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if alpha != 0.1 and method != "ppi":
        raise ValueError("alpha= is the PPI interval's error rate; it is read by method='ppi' only")
    if prior == "ood" and ood is None:
        raise ValueError("prior='ood' needs ood=, a labelled judgments table")
    if method == "observed" and prior != "none":
        raise ValueError(f"method='observed' uses no human knowledge; got prior={prior!r} (use prior='none')")
    if ood is not None and prior != "ood":
        raise ValueError(f"ood= is only read with prior='ood' (got prior={prior!r}); drop it or set prior='ood'")
    if labelled and prior == "ood" and method != "transfer":
        raise ValueError(f"the table's human column holds labels, which prior='ood' does not read ({method!r} takes its "
                         "judges' accuracies from ood=): use them with prior='in-distribution' (without ood=), or "
                         "empty the column to fit from ood= alone")
    if human is not None and (prior != "in-distribution" or method == "observed"):
        raise ValueError(
            f"human= labels are only read with prior='in-distribution' by 'regression', 'ppi', 'bwrs', 'dawid-skene' or 'independent' "
            f"(got method={method!r}, prior={prior!r})"
        )

    if method == "panel":  # the panel's rate counts every row: both orders, each verdict as given
        swap = "none"
    data = encode_win_rate(df, systems=systems, judges=judges, human=human, swap=swap, ties=ties, seed=seed,
                           diagnose=True)
    diagnosis = data.meta["diagnosis"]  # the encoder warned of an uninformative judge
    ood_data = None
    sources = None
    if method == "transfer":
        sources = transfer_sources(ood, swap=swap, ties=ties, seed=seed + 1)
    elif prior == "ood":
        assert ood is not None  # checked above: prior="ood" needs ood=
        if not isinstance(ood, pd.DataFrame):
            raise ValueError(f"ood= is one labelled table for method={method!r} (several are read by method='transfer')")
        ood_data = encode_win_rate(ood, swap=swap, ties=ties, seed=seed + 1, judges=None)
        if not set(ood_data.judges) & set(data.judges):
            raise ValueError(
                f"ood: no judge of the data ({data.judges}) appears in the OOD set "
                f"({ood_data.judges}); the OOD prior needs the same judges"
            )

    coords = _coords(data)
    attrs = _attrs(data, method, prior, seed)  # what the data say, before any estimator runs
    observed, constant, cdims = _observed_groups(data)
    dims: dict[str, list[str]] = {"p": ["pair"], **cdims}
    extra: dict = {}
    rng_seed = seed + 7919  # draws use a stream distinct from the tie flips
    if method in ("bridge", "panel"):
        post, extra = _no_label_post(data, method, priors if isinstance(priors, BridgePrior) else None,
                                     chains=chains, draws=draws, seed=rng_seed)
        dims.update({"p_consensus": ["pair"], "alpha": ["pair"], "lam": [], "h_prob": ["item"]})
    elif method == "observed":
        post = observed_draws(data, chains=chains, draws=draws, seed=rng_seed)
        dims["k"] = ["pair", "judge"]
    elif method == "ppi":
        post = _ppi_draws(data, alpha=alpha, chains=chains, draws=draws, seed=rng_seed)
        extra = {"ppi": post.pop("ppi")}
    elif method == "transfer":
        assert sources is not None
        post, info = _transfer_post(data, sources, chains=chains, draws=draws, seed=rng_seed)
        extra = {"transfer": info}
        dims.update({"pi": ["pair"], "beta": ["pair"]})
    elif method == "bwrs":
        if prior == "none":
            raise ValueError(
                "method='bwrs' needs human labels: prior='in-distribution' (a 'human' column or "
                "human=) or prior='ood' (ood=); Gao et al. 2024 footnote 4"
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
        name = _model_name(method, ds_model)
        post, extra = _fit_declared(
            data, name=name, prior=prior, ood=ood_data, priors=priors, sampling=sampling, pointwise=pointwise,
        )
        dims.update(extra.pop("dims"))

    # k (eq. 4) and the independent raters' mean rate are what the judges say, not people
    attrs["estimand"] = "judges" if method in ("observed", "independent") else estimand
    if method == "observed":
        attrs["estimand_note"] = ("the mean over judges of each judge's share k (Gao et al. 2024, eq. 4) with its "
                                  "Beta posterior, every judge weighted alike however many verdicts it gave; "
                                  "biased for people's rate wherever the judges err (eq. 9), and its interval "
                                  "treats every verdict as independent while an item's verdicts move together: "
                                  "for the judges' rate over items use estimand='judges'")
    elif method == "independent":
        attrs["estimand_note"] = ("the mean of the judges' own rates (independent raters, no latent truth; every "
                                  "judge weighted alike), people's labels counted as one more rater of that rate: "
                                  "the judges' rate, biased for people's wherever the judges err; for people's "
                                  "rate use the default method")
    elif method == "regression":  # a finite population: the labelled items count as observed
        n_items = int(data.n_units)
        n_lab = int((np.asarray(data.label) >= 0).sum())
        attrs["estimand_note"] = (f"the share of these {n_items} items on which people prefer system_a, {n_lab} of "
                                  "them labelled (their labels count as known; the interval is the unlabelled "
                                  "items' uncertainty" + (", none here: every item is labelled" if n_lab == n_items
                                                           else "") + "), not a rate over new items")
        per_pair = np.bincount(data.unit_pair[np.asarray(data.label) >= 0], minlength=len(data.pairs))
        bare = [lab for lab, k in zip(data.pair_labels, per_pair, strict=True) if k == 0]
        if bare:  # its judges are read through the other pairs' labels: say so, it may not carry over
            why = (f"pair(s) {bare[:5]}{' ...' if len(bare) > 5 else ''} have no human label of their own: their "
                   "rates read the judges as the other pairs' labels calibrate them, which holds only if the "
                   "judges err alike on every pair")
            attrs["estimand_note"] += f"; {why}"
            warnings.warn(f"win_rate: {why}", UserWarning, stacklevel=2)
    attrs["judge_diagnosis"] = json.dumps(diagnosis)
    attrs.update(extra.get("no_label", {}))
    if method == "dawid-skene":
        attrs["ds_model"] = ds_model
    if "n_patterns" in extra:
        attrs["n_patterns"] = extra["n_patterns"]
    if "ppi" in extra:
        attrs.update(extra["ppi"])
    if "transfer" in extra:
        attrs.update(extra["transfer"])
    model_name = _model_name(method, ds_model)
    const = dict(constant)
    cdims = dict(dims)
    for name, val in extra.get("prior_const", {}).items():
        const[name] = np.broadcast_to(np.asarray(val, dtype=float), (len(data.pairs), len(data.judges)))
        cdims[name] = ["pair", "judge"]
    idata = build_idata(
        task="win-rate",
        model=model_name,
        sampler=extra.get("sampler", "none"),
        seed=seed,
        posterior=post,
        sample_stats=extra.get("sample_stats"),
        log_likelihood=extra.get("log_likelihood"),
        observed_data=observed,
        constant_data=const,
        coords=coords,
        dims=cdims,
        priors=extra.get("priors"),
        attrs=attrs,
    )
    if "loglik_attrs" in extra:
        idata["log_likelihood"]["t"].attrs.update(extra["loglik_attrs"])
    if extra.get("sample_stats") is not None:  # a NUTS fit: did it converge?
        from ..inference.convergence import warn_unconverged

        warn_unconverged(idata, ["p"], f"win_rate ({model_name})")
    return idata


def _no_label_post(data: WinRateData, method: str, priors: BridgePrior | None, *, chains: int, draws: int,
                   seed: int) -> tuple[dict, dict]:
    """Draws of the judges' rate (``"panel"``) or the bridged human rate (``"bridge"``) of every pair,
    with what the summaries print about them (:mod:`bayes_judge.winrate.bridge`)."""
    from .bridge import (
        bridge_draws,
        consensus_votes,
        human_draws,
        judges_draws,
        panel_scores,
    )

    P = len(data.pairs)
    n_items = np.bincount(data.unit_pair, minlength=P)
    judged = (data.n_first + data.n_second + data.n_tie).sum(axis=1) > 0
    if not judged.all():  # items whose only verdicts came from judges left out by judges=
        bare = [data.unit_labels[i] for i in np.flatnonzero(~judged)]
        raise ValueError(f"{int((~judged).sum())} item(s) have no verdict from the judges kept (e.g. "
                         f"{bare[:5]}): judges= left out the only judges of them; keep those judges, or drop "
                         "these items from the table")
    if method == "panel":
        s = panel_scores(data.n_first, data.n_second, data.n_tie)
        p = judges_draws(s, data.unit_pair, P, chains=chains, draws=draws, seed=seed)
        note = ("the judges' rate: the share of verdicts for the first system (ties 1/2, every judge and "
                "order), over the population of items; it says nothing of how people would judge")
        # equal tails: with few items the bootstrap's density is flat, and a highest-density window
        # of a flat density need not hold the panel's own share
        return {"p": p}, {"no_label": {"estimand_note": note, "n_items": n_items.tolist(), "interval": "eti"}}
    prior = BRIDGE_PRIOR if priors is None else priors
    v = consensus_votes(data.n_first, data.n_second)
    small = chains * draws * data.n_units <= 2e7  # per-item draws only while small, as pointwise= elsewhere
    nd = (data.n_first + data.n_second).sum(axis=1) if small else None
    post = human_draws(v, data.unit_pair, P, prior=prior, chains=chains, draws=draws, seed=seed, n_decisive=nd)
    pi = post["p_consensus"].reshape(-1, P)  # the same consensus draws under a prior half / twice as wide
    sens = {}
    for k, factor in enumerate((0.5, 2.0)):
        alt = bridge_draws(pi, n_items, prior.scaled(factor), np.random.default_rng([seed, k]))
        q = np.quantile(alt["p"], [0.05, 0.95], axis=0)
        sens[f"x{factor:g}"] = [[round(float(lo), 4), round(float(hi), 4)] for lo, hi in q.T]
    note = ("the human rate without labels: the judges' consensus rate bridged to people's by a prior fitted "
            "to 17 bundled sets with known truth; the interval is as wide as that prior makes it")
    info = {"estimand_note": note, "bridge_prior": prior.describe(), "interval": "eti", "bridge_prior_json": prior.to_json(),
            "prior_sensitivity": json.dumps(sens), "n_items": n_items.tolist()}
    return post, {"no_label": info}


def item_predictions(data: WinRateData) -> np.ndarray:
    """Each item's share of judge verdicts for G0 (all judges and orders; a tie counts 1/2), (U,).

    The judges' prediction of the human label that PPI corrects (NaN where no judge judged); the
    same share the judges' rate averages (:func:`~bayes_judge.winrate.bridge.panel_scores`).
    """
    from .bridge import panel_scores

    return panel_scores(data.n_first, data.n_second, data.n_tie)


PPI_MIN_LABELS = 10  # labels per pair below which win_rate's PPI is refused


def _ppi_draws(data: WinRateData, *, alpha: float, chains: int, draws: int, seed: int) -> dict:
    """PPI++ (power-tuned) per pair, as Normal(estimate, se) draws so the summaries read it.

    The interval of the summary at ``hdi_prob = 1 - alpha`` is PPI++'s normal interval, cut to
    [0, 1]: the draws are clipped there (a rate cannot leave it; near 0 or 1 the normal interval
    does, e.g. [0.93, 1.04]).  The unclipped estimate and standard error stay in ``attrs``
    (``ppi_estimate``, ``ppi_se``).
    """
    from .ppi import ppi_mean

    f = item_predictions(data)
    rng = np.random.default_rng(seed)
    P = len(data.pairs)
    out = np.empty((chains, draws, P))
    # equal-tailed: an HDI of draws clipped at 1 would drop the lower tail PPI's interval has (0.937 for 0.927)
    info: dict = {"ppi_lambda": [], "ppi_n_labelled": [], "ppi_estimate": [], "ppi_se": [], "interval": "eti"}
    for j in range(P):
        u = data.unit_pair == j
        lab = u & (data.label >= 0)
        if lab.sum() < PPI_MIN_LABELS:  # 2 labels that the judges happen to match gave a width-0.06 interval
            raise ValueError(f"ppi: pair {data.pair_labels[j]} has {int(lab.sum())} human label(s); PPI's normal "
                             f"interval needs at least {PPI_MIN_LABELS} (with fewer its variance estimate can collapse "
                             "and the interval miss by far): leave method unset (the label regression) or label more items")
        unl = u & (data.label < 0)
        f_unl = f[unl]
        if np.isnan(f[u]).any():
            raise ValueError(f"ppi: {int(np.isnan(f[u]).sum())} item(s) of pair {data.pair_labels[j]} have no judge verdict")
        try:
            r = ppi_mean(data.label[lab].astype(float), f[lab], f_unl if f_unl.size else f[lab], alpha=alpha,
                         lam="tuned")
        except ValueError as e:
            raise ValueError(f"ppi, pair {data.pair_labels[j]}: {e}") from e
        out[:, :, j] = np.clip(r.estimate + r.se * rng.standard_normal((chains, draws)), 0.0, 1.0)
        info["ppi_lambda"].append(r.lam)
        info["ppi_n_labelled"].append(r.n)
        info["ppi_estimate"].append(r.estimate)
        info["ppi_se"].append(r.se)
    return {"p": out, "ppi": info}


def transfer_sources(ood, *, swap: str = "sum", ties: str = "skip", seed: int = 1) -> list:
    """Labelled source sets for ``method="transfer"``: each table encoded once, its judges' net
    votes and its labels kept (:class:`~bayes_judge.winrate.transfer.TransferSource`).

    Parameters
    ----------
    ood : pandas.DataFrame, or a list / dict of them (a dict names the sets), or TransferSource
        objects (kept as they are).

    Returns
    -------
    list of TransferSource, one per set: its name, judges, net votes (labelled items × judges) and
    labels.  Pass it as ``ood=`` to several ``win_rate(..., method="transfer")`` fits to encode the
    sources once.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> labelled = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.7], seed=1)   # a 'human' column on every item
    >>> [(s.name, s.judges, s.votes.shape) for s in bj.transfer_sources({"sim": labelled})]
    [('sim', ('judge0', 'judge1'), (60, 2))]
    """
    from .transfer import TransferSource

    if isinstance(ood, pd.DataFrame | TransferSource):
        named = {"ood": ood}
    elif isinstance(ood, Mapping):
        named = {str(k): v for k, v in ood.items()}
    else:
        named = {f"ood[{i}]": v for i, v in enumerate(ood)}
    if not named:
        raise ValueError("method='transfer': ood= holds no source tables")
    out = []
    for i, (name, src) in enumerate(named.items()):
        if isinstance(src, TransferSource):  # encoded before: reuse
            out.append(src)
            continue
        if not isinstance(src, pd.DataFrame):
            raise TypeError(f"ood: source {name!r} is a {type(src).__name__}, not a judgments table or TransferSource")
        d = encode_win_rate(src, swap=swap, ties=ties, seed=seed + i, judges=None)
        lab = d.label >= 0
        if not lab.any():
            raise ValueError(f"ood: source {name!r} has no human labels ('human' column empty); a source must be labelled")
        votes = net_vote(d.n_first, d.n_second, d.n_tie, missing=np.nan)[lab]
        out.append(TransferSource(name=name, judges=tuple(d.judges), votes=votes, label=d.label[lab]))
    seen: dict[tuple, str] = {}
    for src in out:  # one set twice would count as two agreeing sets: their spread collapses (0.84-0.995, truth 0.8)
        key = (src.judges, np.nan_to_num(src.votes, nan=9.0).tobytes(), np.asarray(src.label).tobytes())
        if key in seen:
            raise ValueError(f"ood: sources {seen[key]!r} and {src.name!r} hold the same judgments and labels; "
                             "transfer reads the spread between sets, so pass each set once")
        seen[key] = src.name
    return out


def _transfer_post(data: WinRateData, sources: list, *, chains: int, draws: int, seed: int) -> tuple[dict, dict]:
    """Cut-posterior draws per pair of systems (:func:`~bayes_judge.winrate.transfer.transfer_draws`)."""
    from .transfer import judge_weights, source_slopes, transfer_draws, weighted_vote

    slopes = source_slopes(sources)
    w = judge_weights(data.judges, sources)
    # 0 (no information, r = 1/2) where no judge judged the item
    x = weighted_vote(net_vote(data.n_first, data.n_second, data.n_tie, missing=np.nan), w)
    P = len(data.pairs)
    post = {k: np.empty((chains, draws, P)) for k in ("p", "pi", "beta")}
    for j in range(P):
        u = data.unit_pair == j
        d = transfer_draws(x[u], data.label[u], slopes, chains=chains, draws=draws, seed=seed + j)
        for k, v in d.items():
            post[k][:, :, j] = v
    info = {"transfer_sources": [s.name for s in sources], "transfer_slopes": [b for b, _ in slopes],
            "transfer_judge_weights": [float(v) for v in w]}
    return post, info
