"""Without labels, Model 1's posterior has two mirrored modes (label switching); the fit must give
both with their masses (generative.winrate_models.label_switch), checked against the exact
posterior computed on a grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj


def _table(votes: np.ndarray) -> pd.DataFrame:
    """One row per (item, judge): ``votes[i, e] = 1`` when judge e prefers G0 on item i."""
    n, e = votes.shape
    return pd.DataFrame({
        "item": np.repeat(np.arange(n), e), "a": "G0", "b": "G1",
        "judge": np.tile([f"j{k}" for k in range(e)], n),
        "winner": np.where(votes.ravel() == 1, "a", "b"),
    })


def _exact_one_coin(votes: np.ndarray, m: int = 120) -> tuple[float, float]:
    """E[p] and P(p > 1/2) of the one-coin model, p ~ Beta(1, 1), q_e ~ Beta(2, 1), on a grid."""
    g = (np.arange(m) + 0.5) / m
    p = g[:, None, None]
    q = [g[None, :, None], g[None, None, :]]
    log_post = np.log(q[0]) + np.log(q[1])  # Beta(2, 1) priors; Beta(1, 1) on p
    for v in votes:
        like_a = np.ones(1)
        like_b = np.ones(1)
        for e, ve in enumerate(v):
            like_a = like_a * (q[e] if ve else 1 - q[e])
            like_b = like_b * (1 - q[e] if ve else q[e])
        log_post = log_post + np.log(p * like_a + (1 - p) * like_b)
    w = np.exp(log_post - log_post.max())
    w = w / w.sum()
    return float((w * p).sum()), float(w[g > 0.5].sum())


def test_both_mirrored_modes_with_their_exact_masses():
    # 2 judges that often disagree: the data hardly say whether the judges are right (mode A,
    # p > 1/2 here) or wrong (mode B); only the Beta(2, 1) prior on q tips it
    votes = np.array([[1, 1]] * 7 + [[0, 0]] * 3 + [[1, 0]] * 3 + [[0, 1]] * 3)
    mean, gt_half = _exact_one_coin(votes)
    assert 0.1 < 1 - gt_half < 0.45  # the mirrored mode holds real mass: the case tests something
    fit = bj.win_rate(_table(votes), method="dawid-skene", ds_model="one-coin", prior="none", swap="none",
                      seed=0, chains=4, draws=2000, tune=1000)
    p = fit.posterior["p"].to_numpy()
    assert p.mean() == pytest.approx(mean, abs=0.03)
    assert (p > 0.5).mean() == pytest.approx(gt_half, abs=0.05)
    # every chain visits both modes in the same proportion (no chain stuck where it started)
    assert np.all(np.abs((p > 0.5).mean(axis=1) - gt_half) < 0.1)


def test_a_decided_case_is_unchanged_in_mode_and_seeded():
    """With judges that agree, the mirrored mode has little mass: same answer as before, and the
    unfolding's draws follow the seed.  Little is not none: the unfolding puts a draw there with
    its posterior odds, about 0.5% of the draws here, so the check bounds the share."""
    df = bj.simulate_win_rate(150, p=0.75, q0=[0.85, 0.8, 0.9], q1=[0.8, 0.85, 0.75], swap=False, seed=2)
    df = df.drop(columns="human")
    kw = dict(method="dawid-skene", prior="none", swap="none", chains=2, draws=300, tune=300)
    a = bj.win_rate(df, seed=1, **kw)
    b = bj.win_rate(df, seed=1, **kw)
    np.testing.assert_array_equal(a.posterior["p"], b.posterior["p"])
    assert float((a.posterior["p"] < 0.5).mean()) < 0.02
    assert float(a.posterior["p"].median()) == pytest.approx(0.75, abs=0.08)


def test_symmetric_prior_gives_both_modes_in_every_chain():
    """Flat priors on p and q: the posterior is exactly symmetric, P(p > 1/2) = 1/2.  Six judges,
    three right and three wrong, put the mirrored modes far apart: a chain cannot cross, so each
    chain's draws must come from the unfolding (before it, each chain sat in one mode)."""
    from bayes_judge.generative.priors import Beta
    from bayes_judge.generative.winrate_models import OneCoinPriors

    rng = np.random.default_rng(4)
    h = rng.random(200) < 0.7
    acc = np.array([0.9, 0.85, 0.8, 0.1, 0.15, 0.2])
    votes = np.where(rng.random((200, 6)) < acc, h[:, None], ~h[:, None]).astype(int)
    fit = bj.win_rate(_table(votes), method="dawid-skene", ds_model="one-coin", prior="none", swap="none",
                      priors=OneCoinPriors(p=Beta(1, 1), q=Beta(1, 1)), seed=3, chains=4, draws=1000, tune=500)
    share = (fit.posterior["p"].to_numpy() > 0.5).mean(axis=1)  # per chain
    np.testing.assert_allclose(share, 0.5, atol=0.08)
    # each mode is the truth or its mirror image: p near 0.7 or near 0.3
    p = fit.posterior["p"].to_numpy()
    assert np.abs(np.abs(p - 0.5) - 0.2).mean() < 0.06
    # the per-item posteriors are mirrored with their draw: the items' mean P(G0) follows p
    h = fit.posterior["h_prob"].to_numpy().mean(axis=-1)
    assert np.abs(h - p[..., 0]).max() < 0.15


def test_consensus_by_name_and_the_seed_method_stays_two_coin():
    df = bj.simulate_win_rate(80, p=0.7, q0=[0.85, 0.8, 0.9], q1=[0.8, 0.85, 0.75], swap=False, seed=5)
    df = df.drop(columns="human")
    kw = dict(chains=2, draws=150, tune=150, seed=0)
    assert bj.win_rate(df, **kw).attrs["method"] == "bridge"  # the default without labels
    fit = bj.win_rate(df, method="dawid-skene", ds_model="consensus", prior="none", **kw)
    assert fit.attrs["method"] == "dawid-skene" and fit.attrs["ds_model"] == "consensus"
    assert {"q", "agreement", "p_consensus"} <= set(fit.posterior) and "q0" not in fit.posterior
    seed_fit = bj.win_rate(df, method="dawid-skene", **kw)
    assert seed_fit.attrs["ds_model"] == "two-coin" and "q0" in seed_fit.posterior
    labelled = bj.simulate_win_rate(80, p=0.7, q0=[0.85, 0.8, 0.9], q1=[0.8, 0.85, 0.75], seed=5)
    assert bj.win_rate(labelled, **kw).attrs["method"] == "regression"
