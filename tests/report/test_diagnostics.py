"""Convergence diagnostics: thresholds, highlighted failures and the sentences that explain them."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

from bayes_judge.report import diagnostics as dg


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def _idata(posterior: dict, stats: dict | None = None) -> az.InferenceData:
    return az.from_dict(posterior=posterior, sample_stats=stats)


def test_split_chains_fail_rhat(rng):
    mu = rng.normal(size=(4, 500)) + np.array([0, 0, 0, 3.0])[:, None]  # one chain elsewhere
    idata = _idata({"mu": mu, "ok": rng.normal(size=(4, 500))})
    diag = dg.parameter_diagnostics(idata, ["mu", "ok"])
    assert list(diag.index) == ["mu", "ok"]
    fails = dg.parameter_fail_mask(diag)
    assert fails.loc["mu", "r_hat"] and not fails.loc["ok", "r_hat"]
    text = " ".join(dg.parameter_problems(diag, 4, kind="win-rate"))
    assert "R̂ > 1.01 for 1 of 2 parameters (mu: 1 of 1; worst mu = " in text
    assert "label switching" in text
    assert "ok:" not in text
    independent = " ".join(dg.parameter_problems(diag, 4, independent=True))
    assert "only reflects Monte Carlo noise" in independent and "label switching" not in independent


def test_parameter_diagnostics_are_arviz_summary(rng):
    """Names, means, sds, R-hat, ESS and MCSE as ``az.summary`` gives them (every quantity at once)."""
    q = rng.normal(size=(4, 200, 2, 3))
    q[..., 1, 2] = np.nan  # a parameter without verdicts
    idata = az.from_dict(posterior={"tau": rng.normal(size=(4, 200)), "q": q, "c": np.ones((4, 200))},
                         coords={"pair": ["A vs B", "A vs C"], "judge": ["j1", "j2", "j3"]},
                         dims={"q": ["pair", "judge"]})
    got = dg.parameter_diagnostics(idata, ["tau", "q", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = az.summary(idata, var_names=["tau", "q", "c"], kind="all", round_to="none")
    assert list(got.index) == list(want.index)
    assert got.index[1] == "q[A vs B, j1]" and list(got["variable"]) == ["tau"] + ["q"] * 6 + ["c"]
    for col in ("mean", "sd", "r_hat", "ess_bulk", "ess_tail", "mcse_mean"):
        np.testing.assert_allclose(got[col], want[col], rtol=1e-11, equal_nan=True, err_msg=col)


def test_low_ess_is_explained(rng):
    walk = np.cumsum(rng.normal(size=(2, 300)), axis=1)  # strongly autocorrelated
    diag = dg.parameter_diagnostics(_idata({"w": walk}), ["w"])
    assert diag.loc["w", "ess_bulk"] < dg.ESS_MIN
    text = " ".join(dg.parameter_problems(diag, 2, kind="ranking"))
    assert "ESS < 400" in text and "Increase draws=" in text


def test_one_chain_is_a_problem(rng):
    diag = dg.parameter_diagnostics(_idata({"mu": rng.normal(size=(1, 500))}), ["mu"])
    assert any("Only one chain" in s for s in dg.parameter_problems(diag, 1))


def test_divergences_and_bfmi_per_chain(rng):
    div = np.zeros((3, 400), dtype=bool)
    div[1, :5] = True
    energy = rng.normal(size=(3, 400))
    energy[2] = np.cumsum(rng.normal(scale=0.05, size=400))  # slowly varying: low E-BFMI
    idata = _idata({"mu": rng.normal(size=(3, 400))}, {"diverging": div, "energy": energy})
    chains = dg.chain_diagnostics(idata)
    assert list(chains["divergences"]) == [0, 5, 0]
    assert chains.loc[2, "bfmi"] < dg.BFMI_MIN < chains.loc[0, "bfmi"]
    fails = dg.chain_fail_mask(chains)
    assert list(fails["divergences"]) == [False, True, False]
    assert list(fails["bfmi"]) == [False, False, True]
    text = " ".join(dg.chain_problems(chains))
    assert "Divergent transitions after warm-up in chain(s) 1 (5)" in text and "target_accept" in text
    assert "E-BFMI < 0.3 in chain(s) 2" in text


def test_no_sampler_stats():
    assert dg.chain_diagnostics(_idata({"mu": np.zeros((2, 10))})) is None


def test_diagnostic_vars_skip_per_item_and_raw(ds_labels_fit, ranking_fit):
    assert dg.diagnostic_vars(ds_labels_fit) == ["p", "q0", "q1"]
    assert dg.diagnostic_vars(ranking_fit) == ["s", "gamma"]


def test_position_advice_knows_when_the_fit_has_gamma():
    from bayes_judge.report import sections

    assert "debias=True" in sections._ppc_advice("position A wins", "poe-bt", has_gamma=False)
    assert "already has a position-bias shift" in sections._ppc_advice("position A wins", "poe-bt", has_gamma=True)


def test_a_real_leaderboards_diagnostics_are_arviz_summary():
    """On a Laplace fit of the bundled SummEval leaderboard (three real judges, coherence; its
    resampled draws repeat), the summary's and the report's R-hat, ESS and MCSE are ArviZ's."""
    import pandas as pd

    import bayes_judge as bj
    from bayes_judge.datasets import summeval
    from bayes_judge.inference.laplace import cap_ess

    judges = ["gpt-4-0314/rts", "gpt-3.5-turbo-0301/rts", "gpt-3.5-turbo-0301/mcq"]
    df = pd.concat([summeval.pairs("coherence", judge=j) for j in judges], ignore_index=True).drop(columns="human")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bj.leaderboard(df, sampler="laplace", bridge=False, seed=1, pointwise=False)
        want = az.summary(fit, kind="all", round_to="none")
    s = bj.leaderboard_summary(fit).set_index("system")
    ref = want.loc[[f"s[{name}]" for name in s.index]]
    np.testing.assert_allclose(s["r_hat"], ref["r_hat"], rtol=1e-12)
    np.testing.assert_allclose(s["ess_bulk"], cap_ess(ref["ess_bulk"].to_numpy(), fit.attrs), rtol=1e-12)
    got = dg.parameter_diagnostics(fit, list(fit["posterior"].data_vars))
    assert list(got.index) == list(want.index)
    for col in ("mean", "sd", "r_hat", "ess_bulk", "ess_tail", "mcse_mean"):
        np.testing.assert_allclose(got[col], want[col], rtol=1e-10, equal_nan=True, err_msg=col)
