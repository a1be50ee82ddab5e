"""method="transfer": a win rate with no labels here, from judges calibrated on other labelled sets.

Checks: the source calibration recovers a known slope; the cut posterior covers a known p under
label shift; it widens when the sources disagree and is the Beta(1, 1)-like prior when the
judges carry no signal; seeds reproduce; end to end through ``bj.win_rate``; bad input.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import bayes_judge as bj
from bayes_judge.winrate.transfer import (
    TransferSource,
    judge_weights,
    slope_prior,
    source_slope,
    source_slopes,
    transfer_draws,
    weighted_vote,
)


def _calibrated(n: int, beta: float, pi: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Mean votes x and labels h with P(h | x) = σ(β x) at balance and a share pi of h = 1.

    x is drawn from its class-conditional law (label shift): x | h = 1 has density ∝ σ(β x),
    x | h = 0 ∝ σ(−β x) on a grid of [−1, 1] (votes of 8 verdicts).
    """
    grid = np.linspace(-1, 1, 17)
    w1 = expit(beta * grid)
    w1 /= w1.sum()
    w0 = w1[::-1]
    h = (rng.random(n) < pi).astype(int)
    x = np.where(h == 1, rng.choice(grid, n, p=w1), rng.choice(grid, n, p=w0))
    return x, h


def test_source_slope_recovers_beta():
    rng = np.random.default_rng(0)
    x, h = _calibrated(4000, 3.0, 0.5, rng)
    b, se = source_slope(x, h, name="sim")
    assert abs(b - 3.0) < 3 * se and 0.05 < se < 0.5


def test_covers_a_known_win_rate_under_label_shift():
    rng = np.random.default_rng(1)
    src = [source_slope(*_calibrated(1500, 3.0, 0.5, rng), name=f"s{i}") for i in range(3)]
    covered = 0
    for rep in range(10):
        x, h = _calibrated(200, 3.0, 0.8, rng)
        d = transfer_draws(x, np.full(200, -1), src, chains=2, draws=500, seed=rep)
        lo, hi = np.quantile(d["p"], [0.05, 0.95])
        covered += lo <= h.mean() <= hi
        assert d["p"].shape == (2, 500) and np.all((d["p"] >= 0) & (d["p"] <= 1))
    assert covered >= 8  # 90% intervals; P(<= 7 of 10) = 0.07


def test_disagreeing_sources_widen_the_interval():
    rng = np.random.default_rng(2)
    x, _ = _calibrated(200, 2.0, 0.75, rng)
    agree = [(2.0, 0.2), (2.1, 0.2)]
    split = [(0.5, 0.2), (4.0, 0.2)]
    width = {}
    for name, src in (("agree", agree), ("split", split)):
        d = transfer_draws(x, np.full(200, -1), src, chains=2, draws=1000, seed=0)
        lo, hi = np.quantile(d["p"], [0.05, 0.95])
        width[name] = hi - lo
    assert width["split"] > 1.5 * width["agree"]
    m, sd = slope_prior(split)
    assert m == pytest.approx(2.25) and sd == pytest.approx(np.sqrt(np.var([0.5, 4.0], ddof=1) + 0.04))


def test_judges_without_signal_give_the_prior():
    rng = np.random.default_rng(3)
    src = [(0.0, 0.01), (0.0, 0.01)]
    x = rng.choice(np.linspace(-1, 1, 9), 300)
    d = transfer_draws(x, np.full(300, -1), src, chains=2, draws=1000, seed=0)
    lo, hi = np.quantile(d["p"], [0.05, 0.95])
    assert lo < 0.1 and hi > 0.9  # π ~ Beta(1, 1) unchanged: the verdicts say nothing


def test_labelled_items_count_as_observed():
    src = [(0.0, 0.01), (0.0, 0.01)]
    x = np.zeros(10)
    d = transfer_draws(x, np.ones(10, dtype=int), src, chains=1, draws=200, seed=0)
    np.testing.assert_allclose(d["p"], 1.0)


def test_seed_reproduces():
    src = [(2.0, 0.3)]
    x = np.linspace(-1, 1, 50)
    a = transfer_draws(x, np.full(50, -1), src, chains=2, draws=100, seed=7)
    b = transfer_draws(x, np.full(50, -1), src, chains=2, draws=100, seed=7)
    np.testing.assert_array_equal(a["p"], b["p"])


def _tables() -> tuple[pd.DataFrame, dict[str, pd.DataFrame], float]:
    target = bj.simulate_win_rate(150, p=0.8, q0=[0.85, 0.8, 0.75], q1=[0.85, 0.8, 0.75], seed=4)
    truth = float((target.drop_duplicates("item")["human"] == "a").mean())  # the items' realized win rate
    sources = {f"set{i}": bj.simulate_win_rate(150, p=0.5, q0=[0.85, 0.8, 0.75], q1=[0.85, 0.8, 0.75], seed=10 + i)
               for i in range(3)}
    return target.assign(human=None), sources, truth


def test_win_rate_transfer_end_to_end():
    target, sources, truth = _tables()
    fit = bj.win_rate(target, method="transfer", ood=sources, chains=2, draws=500, seed=0)
    assert fit.attrs["method"] == "transfer" and fit.attrs["prior"] == "ood"
    assert fit.attrs["transfer_sources"] == ["set0", "set1", "set2"]
    s = bj.win_rate_summary(fit, hdi_prob=0.99).iloc[0]  # 90% coverage is checked above, over draws
    assert s["hdi_low"] <= truth <= s["hdi_high"] and abs(s["p_mean"] - truth) < 0.06
    assert s["p_mean"] > 0.6  # the judges are informative: far from the prior's 0.5
    # several labelled sets and no method: the transfer estimator is the default
    assert bj.win_rate(target, ood=sources, chains=1, draws=50).attrs["method"] == "transfer"
    # precomputed sources give the same draws
    again = bj.win_rate(target, method="transfer", ood=bj.transfer_sources(sources), chains=2, draws=500, seed=0)
    np.testing.assert_allclose(again.posterior["p"], fit.posterior["p"])


def test_bad_input():
    target, sources, _ = _tables()
    with pytest.raises(ValueError, match="ood="):
        bj.win_rate(target, method="transfer")
    unlabelled = {"x": sources["set0"].assign(human=None)}
    with pytest.raises(ValueError, match="source 'x' has no human labels"):
        bj.win_rate(target, method="transfer", ood=unlabelled)
    with pytest.raises(TypeError, match="not a judgments table"):
        bj.win_rate(target, method="transfer", ood=[42])
    with pytest.raises(ValueError, match="no source tables"):
        bj.win_rate(target, method="transfer", ood=[])
    with pytest.raises(ValueError, match="at least 2"):
        TransferSource("one", ("j",), np.array([[0.5]]), np.array([1]))
    with pytest.raises(ValueError, match="shape"):
        TransferSource("bad", ("j", "k"), np.zeros((3, 1)), np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="several are read by method='transfer'"):
        bj.win_rate(target, method="dawid-skene", prior="ood", ood=list(sources.values()))


def test_weights_follow_the_judges_record_elsewhere():
    # judge g is right on 90% of a source's items, judge w at chance, judge b mostly wrong
    rng = np.random.default_rng(5)
    n = 400
    y = rng.integers(0, 2, n)
    side = 2 * y - 1
    votes = np.column_stack([
        np.where(rng.random(n) < 0.9, side, -side), np.where(rng.random(n) < 0.5, side, -side),
        np.where(rng.random(n) < 0.3, side, -side),
    ]).astype(float)
    src = TransferSource("s", ("g", "w", "b"), votes, y)
    agree = src.agreement()
    assert agree["g"] == pytest.approx(0.9, abs=0.04) and agree["b"] == pytest.approx(0.3, abs=0.05)
    w = judge_weights(["g", "w", "b", "new"], [src])
    assert w[0] > 1.5 and w[1] == pytest.approx(0, abs=0.2) and w[2] == 0.0
    assert w[3] == pytest.approx(w[:3].mean())  # an unseen judge gets the mean weight
    x = weighted_vote(votes, w[:3])
    assert np.corrcoef(x, side)[0, 1] > np.corrcoef(votes.mean(axis=1), side)[0, 1]  # weighting helps
    np.testing.assert_allclose(weighted_vote(np.array([[np.nan, 1.0, np.nan]]), np.ones(3)), [1.0])
    # each source's slope uses the *other* sources' weights: two copies of one set agree
    (b1, _), (b2, _) = source_slopes([src, TransferSource("t", ("g", "w", "b"), votes, y)])
    assert b1 == pytest.approx(b2) and b1 > 1.0
