"""The one-coin Dawid-Skene and independent-raters models: likelihoods, recovery, bad input.

Sampler agreement for every declared model is tested once, in tests/generative/test_agreement.py."""

import numpy as np
import pytest
from scipy import stats

import bayes_judge as bj
from bayes_judge.winrate import dawid_skene as ds

PYMC = dict(sampler="pymc", chains=2, draws=400, tune=400, seed=0)


def test_pointwise_loglik_is_the_models_term_per_item():
    """log_likelihood['t'] (derived from the declarations' observed variable) is, per item and
    draw, the independent raters' product of Bernoullis and one-coin Model 1's marginal."""
    from bayes_judge.generative.observations import class_log_lik

    df = bj.simulate_win_rate(40, p=0.6, q0=[0.8, 0.7], q1=[0.75, 0.6], swap=True, seed=2)
    df = df.assign(human=df["human"].where(df["item"] % 3 == 0, None))
    data = bj.encode_win_rate(df, ties="random", seed=0)
    n1, n0, label = data.n_first, data.n_second, data.label
    fit = bj.win_rate(df, method="independent", **PYMC)
    k = fit.posterior["k"].to_numpy()[1, 2, 0]
    p = k.mean()
    ref = (stats.bernoulli.logpmf(1, k) * n1 + stats.bernoulli.logpmf(0, k) * n0).sum(axis=1)
    ref += np.where(label == 1, np.log(p), np.where(label == 0, np.log1p(-p), 0.0))
    np.testing.assert_allclose(fit.log_likelihood["t"].to_numpy()[1, 2], ref, rtol=1e-9)
    fit = bj.win_rate(df, method="dawid-skene", ds_model="one-coin", **PYMC)
    q, pp = fit.posterior["q"].to_numpy()[0, 1, 0], float(fit.posterior["p"].to_numpy()[0, 1, 0])
    ll0, ll1 = class_log_lik(n1, n1 + n0, pp, q, q, xp=np)
    ref = np.where(label == 1, ll0, np.where(label == 0, ll1, np.logaddexp(ll0, ll1)))
    np.testing.assert_allclose(fit.log_likelihood["t"].to_numpy()[0, 1], ref, rtol=1e-9)


def test_one_coin_ood_prior_pools_both_classes():
    ood = bj.simulate_win_rate(60, p=0.6, q0=[0.9, 0.6], q1=[0.7, 0.8], seed=9)
    enc = bj.encode_win_rate(ood)
    c = {k: v[0] for k, v in enc.accuracy_counts().items()}
    a, b, a1, b1 = ds.ood_prior(enc, ["judge0", "judge1"], pooled=True)
    s, n = c["s0"] + c["s1"], c["n0"] + c["n1"]
    np.testing.assert_allclose(a, (2 * s + 2) / (n + 2))
    np.testing.assert_allclose(b, (2 * n - 2 * s + 2) / (n + 2))
    np.testing.assert_allclose(a1, a)
    np.testing.assert_allclose(b1, b)
    data = bj.encode_win_rate(bj.simulate_win_rate(20, q0=[0.8, 0.7], seed=1))
    pri = ds.ds_prior(data, "ood", enc, one_coin=True)
    np.testing.assert_allclose(pri.alpha_q0[0], a)
    np.testing.assert_allclose(pri.beta_q0[0], b)


@pytest.fixture(scope="module")
def sym():
    """Two-coin data with q0 = q1: the one-coin model is true."""
    return bj.simulate_win_rate(250, p=0.7, q0=[0.85, 0.75, 0.8, 0.7], seed=21)


def test_one_coin_recovers_p_and_accuracies(sym):
    fit = bj.win_rate(sym, ds_model="one-coin", prior="none", **PYMC)
    t = sym.attrs["truth"]
    assert set(fit.posterior.data_vars) == {"p", "q", "h_prob"}
    assert fit.posterior["q"].dims == ("chain", "draw", "pair", "judge")
    assert fit.attrs["ds_model"] == "one-coin" and fit.attrs["sampler"] == "pymc"
    s = bj.win_rate_summary(fit)
    assert s["hdi_low"].iloc[0] < t["p_hat"] < s["hdi_high"].iloc[0]
    assert abs(s["p_mean"].iloc[0] - t["p_hat"]) < 0.05
    m = fit.posterior["q"].mean(("chain", "draw")).to_numpy()[0]
    sd = fit.posterior["q"].std(("chain", "draw")).to_numpy()[0]
    assert (np.abs(m - np.array(t["q0"])) < 3 * sd).all(), (m, sd)
    assert fit.log_likelihood["t"].shape == (2, 400, 250)
    assert {"alpha_q", "beta_q"} <= set(fit.constant_data.data_vars)


def test_independent_posterior_is_the_conjugate_beta():
    """Without labels k^e | data ~ Beta(1 + s_e, 1 + n_e - s_e) exactly; p is their mean."""
    df = bj.simulate_win_rate(150, p=0.7, q0=[0.9, 0.7, 0.6], q1=[0.6, 0.8, 0.7], seed=4)
    fit = bj.win_rate(df, method="independent", prior="none", **PYMC)
    data = bj.encode_win_rate(df)
    s, n = data.n_first.sum(axis=0), (data.n_first + data.n_second).sum(axis=0)
    a, b = 1 + s, 1 + n - s
    k = fit.posterior["k"].to_numpy()[:, :, 0, :].reshape(-1, 3)
    exact_sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    mc_se = exact_sd / np.sqrt(200)  # conservative ESS
    np.testing.assert_array_less(np.abs(k.mean(axis=0) - a / (a + b)), 4 * mc_se)
    np.testing.assert_allclose(k.std(axis=0), exact_sd, rtol=0.15)
    np.testing.assert_allclose(fit.posterior["p"].to_numpy()[..., 0], k.reshape(2, 400, 3).mean(axis=-1), rtol=1e-10)
    assert fit.attrs["method"] == "independent" and "ds_model" not in fit.attrs
    assert fit.log_likelihood["t"].attrs["scores"] == "win-rate items: judges' verdicts"


def test_bad_arguments():
    df = bj.simulate_win_rate(20, seed=0)
    with pytest.raises(ValueError, match="ds_model must be one of"):
        bj.win_rate(df, ds_model="three-coin")
    with pytest.raises(ValueError, match="applies to method='dawid-skene' only"):
        bj.win_rate(df, method="independent", ds_model="one-coin")
    with pytest.raises(ValueError, match="applies to method='dawid-skene' only"):
        bj.win_rate(df, method="bwrs", ds_model="one-coin", prior="in-distribution")
    with pytest.raises(ValueError, match="no judge accuracies for an OOD prior"):
        bj.win_rate(df, method="independent", prior="ood", ood=df)
    with pytest.raises(ValueError, match="independent: prior='in-distribution' needs human labels"):
        bj.win_rate(df.assign(human=None), method="independent", prior="in-distribution")
