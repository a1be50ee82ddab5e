"""A new model through the public registry only (no package file edited), end to end on all three
samplers: fit, summary, report and model comparison."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import bayes_judge as bj
from bayes_judge.generative import (
    Beta,
    Prior,
    Priors,
    generative_model,
    get_model,
    list_models,
    unregister_model,
)
from bayes_judge.generative.observations import judged_truth, truth_posterior


@dataclass(frozen=True)
class SharedPriors(Priors):
    """p ~ Beta(1, 1); one accuracy q ~ Beta(2, 1) shared by every judge and both classes."""

    p: Prior = Beta(1, 1)
    q: Prior = Beta(2, 1)


def shared_accuracy(d, prior, *, predict=False):
    """Dawid-Skene with one accuracy for all judges: a panel of interchangeable judges."""
    import pymc as pm
    import pytensor.tensor as pt

    p = prior.p.rv("p", dims="pair")
    q = prior.q.rv("q")
    qe = pt.ones_like(d.n1) * q
    judged_truth("t", p[d.pair], qe, qe, d.n_total, d.label, d.weight, observed=d.n1, dims=("pattern", "judge"))
    pm.Deterministic("h_prob", truth_posterior(d.n1, d.n_total, p[d.pair], qe, qe, d.label), dims="pattern")


@pytest.fixture(scope="module")
def registered():
    generative_model("shared-accuracy", task="win-rate", priors=SharedPriors, observed=("t",),
                     latent=("h_prob",), summary=("p", "q"), replace=True)(shared_accuracy)
    yield get_model("shared-accuracy", "win-rate")
    unregister_model("shared-accuracy", "win-rate")


@pytest.fixture(scope="module")
def sim():
    return bj.simulate_win_rate(150, p=0.7, q0=[0.8, 0.8, 0.8], q1=[0.8, 0.8, 0.8], seed=2)


def test_a_registered_model_is_listed_and_refuses_duplicates(registered):
    assert "shared-accuracy" in [m.name for m in list_models("win-rate")]
    assert registered.reference.startswith("Dawid-Skene with one accuracy")
    with pytest.raises(ValueError, match="already registered"):
        generative_model("shared-accuracy", task="win-rate", priors=SharedPriors)(shared_accuracy)
    with pytest.raises(TypeError, match="Priors dataclass"):
        generative_model("bad", task="win-rate", priors=dict)(shared_accuracy)
    with pytest.raises(ValueError, match="no win-rate model named 'nope'"):
        get_model("nope", "win-rate")


@pytest.mark.parametrize("sampler", ["nutpie", "pymc", "numpyro"])
def test_fit_summary_report_and_compare_on_every_sampler(registered, sim, sampler, tmp_path):
    kw = dict(prior="none", chains=2, draws=400, tune=400, seed=0, sampler=sampler)
    fit = bj.win_rate(sim, method="shared-accuracy", **kw)
    assert fit.attrs["model"] == "shared-accuracy" and fit.attrs["sampler"] == sampler
    assert '"q": {"alpha": 2.0' in fit.attrs["priors"]
    s = bj.win_rate_summary(fit, hdi_prob=0.9)
    t = sim.attrs["truth"]
    assert s["hdi_low"].iloc[0] < t["p_hat"] < s["hdi_high"].iloc[0]
    assert abs(float(fit.posterior["q"].mean()) - 0.8) < 0.05
    assert fit.posterior["h_prob"].dims == ("chain", "draw", "item")
    two_coin = bj.win_rate(sim, method="dawid-skene", **kw)
    cmp = bj.compare_models({"shared": fit, "two-coin": two_coin})
    assert set(cmp.index) == {"shared", "two-coin"}
    assert np.isfinite(cmp["elpd_loo"]).all()
    out = bj.report({"shared": fit}, tmp_path / "r.html")
    assert "shared-accuracy" in out.read_text()


def test_a_new_model_with_label_switching_touches_no_task_file():
    """Issue 32: what a win-rate model needs beyond its declaration (its accuracies, the label-switch
    symmetric fit, the OOD prior, the prior constants) comes from its registry entry: a copy of the
    one-coin declaration under another name is fitted exactly as the built-in one."""
    from bayes_judge.generative.winrate_models import OneCoinPriors, one_coin

    generative_model("one-coin-copy", task="win-rate", priors=OneCoinPriors, observed=("t",), latent=("h_prob",),
                     padding=("pattern",), accuracies=("q",), label_switch=True, ood_prior=True,
                     prior_constants=("q",))(one_coin)
    try:
        df = bj.simulate_win_rate(120, p=0.7, q0=[0.85, 0.75], q1=[0.85, 0.75], seed=4).drop(columns="human")
        ood = bj.simulate_win_rate(80, p=0.4, q0=[0.85, 0.75], q1=[0.85, 0.75], seed=5)
        kw = dict(chains=2, draws=300, tune=300, seed=1)
        for prior, extra in (("none", {}), ("ood", {"ood": ood})):
            copy = bj.win_rate(df, method="one-coin-copy", prior=prior, **extra, **kw)
            builtin = bj.win_rate(df, method="dawid-skene", ds_model="one-coin", prior=prior, **extra, **kw)
            assert copy.attrs["model"] == "one-coin-copy"
            for v in ("alpha_q", "beta_q"):  # the prior constants, from prior_constants=("q",)
                np.testing.assert_allclose(copy.constant_data[v], builtin.constant_data[v])
            a, b = (float(f.posterior["p"].mean()) for f in (copy, builtin))
            assert abs(a - b) < 0.03, (prior, a, b)  # the symmetric fit unfolded the same way
        with pytest.raises(TypeError, match="needs a declaration that takes symmetric="):
            generative_model("no-symmetric", task="win-rate", priors=SharedPriors, label_switch=True)(
                lambda d, prior, *, predict=False: None)
    finally:
        unregister_model("one-coin-copy", "win-rate")
