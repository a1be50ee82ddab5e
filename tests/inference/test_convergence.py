"""Every NUTS fit says when it has not converged (issue 31, 5): one warning class, in attrs too."""

from __future__ import annotations

import numpy as np
import pytest

import bayes_judge as bj
from bayes_judge.inference.convergence import SamplerConvergenceWarning, convergence_problems


def test_a_short_win_rate_fit_warns_and_records_it():
    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75, 0.9], swap=False, seed=1).drop(columns="human")
    with pytest.warns(SamplerConvergenceWarning, match=r"win_rate \(dawid-skene\).*bulk ESS \d+ < 400"):
        fit = bj.win_rate(df, method="dawid-skene", prior="none", chains=2, draws=30, tune=30, seed=0)
    assert "has not converged" in fit.attrs["convergence"]


def test_a_converged_fit_is_quiet():
    import warnings

    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75, 0.9], swap=False, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerConvergenceWarning)
        fit = bj.win_rate(df, chains=4, draws=1000, tune=1000, seed=0)  # the label regression
    assert "convergence" not in fit.attrs and convergence_problems(fit, ["p"]) == []


def test_leaderboard_and_rank_warn_too():
    df = bj.simulate_win_rate(40, p=0.7, q0=[0.8, 0.75], swap=True, seed=2).drop(columns="human")
    with pytest.warns(SamplerConvergenceWarning, match="leaderboard"):
        bj.leaderboard(df, chains=2, draws=20, tune=20, seed=0)
    from bayes_judge.datasets import summeval

    pairs = summeval.pairs("coherence", articles=1)
    with pytest.warns(SamplerConvergenceWarning, match="rank"):
        bj.rank(pairs, method="poe-bt", bayesian=True, debias=False, chains=2, draws=20, tune=20, seed=0)


def test_problems_name_r_hat_and_divergences():
    import arviz as az

    rng = np.random.default_rng(0)
    p = rng.normal(size=(2, 500)) + np.array([[0.0], [3.0]])  # two chains in two places
    idata = az.from_dict(posterior={"p": p}, sample_stats={"diverging": np.zeros((2, 500), bool) | (rng.random((2, 500)) < 0.01)})
    probs = convergence_problems(idata, ["p"])
    assert any("r_hat" in m for m in probs) and any("divergent" in m for m in probs)
