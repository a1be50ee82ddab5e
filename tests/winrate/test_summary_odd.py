"""Summaries of win-rate fits on uneven designs: judges that skip pairs, a judge alone."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj

KW = dict(chains=2, draws=300, tune=300, seed=1)


@pytest.fixture(scope="module")
def skipping():
    """Pairs G0 vs G1 (120 items) and G0 vs G2 (60 items), two judges of accuracy 0.95;
    judge1 never judges G0 vs G2.  Half the items carry a human label."""
    ab = bj.simulate_win_rate(120, p=0.7, q0=[0.95, 0.95], seed=95)
    ac = bj.simulate_win_rate(60, p=0.6, q0=[0.95, 0.95], systems=("G0", "G2"), seed=96)
    ac = ac[ac["judge"] != "judge1"].assign(item=ac["item"] + 1000)
    df = pd.concat([ab, ac], ignore_index=True)
    return df.assign(human=np.where(df["item"] % 2 == 0, df["human"], None))


def _weighted_q(idata, var, weights):
    """Draws of sum_pair w q / sum_pair w per judge, pooled over chains and draws: (E,)."""
    q = idata.posterior[var].transpose("chain", "draw", "pair", "judge").to_numpy()
    w = np.asarray(weights, dtype=float)
    return (np.einsum("cdpe,pe->cde", q, w) / w.sum(axis=0)).mean(axis=(0, 1))


def test_judge_accuracy_counts_only_the_pairs_a_judge_judged(skipping):
    """Dawid-Skene: judge1's q0 on G0 vs G2 is its prior (it never judged that pair); pooled
    with equal weights it read 0.80 for a 0.95 judge.  Each pair now counts by the judge's
    verdicts on it, and frac_q_sum_le_1 looks at the judges that judged the pair."""
    fit = bj.win_rate(skipping, method="dawid-skene", **KW)
    js = bj.judge_summary(fit)
    counts = np.array([[120.0, 120.0], [60.0, 0.0]])  # (pair, judge) verdicts
    np.testing.assert_allclose(js["acc_g0"], _weighted_q(fit, "q0", counts), rtol=1e-10)
    np.testing.assert_allclose(js["acc_g1"], _weighted_q(fit, "q1", counts), rtol=1e-10)
    own = float(fit.posterior["q0"].sel(pair="G0 vs G1", judge="judge1").mean())
    assert js.loc["judge1", "acc_g0"] == pytest.approx(own, rel=1e-10)
    assert js.loc["judge1", "acc_g0"] > 0.85
    assert (js["acc_g0_low"] <= js["acc_g0"]).all() and (js["acc_g0"] <= js["acc_g0_high"]).all()
    s = bj.win_rate_summary(fit)
    qsum = (fit.posterior["q0"] + fit.posterior["q1"]).sel(pair="G0 vs G2", judge="judge0")
    assert s.loc["G0 vs G2", "frac_q_sum_le_1"] == pytest.approx(float((qsum <= 1).mean()))


def test_bwrs_on_a_pair_a_judge_never_judged(skipping):
    """BWRS: no eq. 14 warning from judge1's prior draws on the pair it never judged (it read
    12.7% of q0 + q1 <= 1 for two 0.95 judges), no numpy "All-NaN slice" warning, and the
    summaries read the judged cells only."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = bj.win_rate(skipping, method="bwrs", **KW)
        js = bj.judge_summary(fit)
        s = bj.win_rate_summary(fit)
        by = bj.win_rate_summary(fit, by_judge=True)
    assert np.isnan(fit.posterior["p_judge"].sel(pair="G0 vs G2", judge="judge1")).all()
    own = float(fit.posterior["q0"].sel(pair="G0 vs G1", judge="judge1").mean())
    assert js.loc["judge1", "acc_g0"] == pytest.approx(own, rel=1e-10)
    assert (s["frac_q_sum_le_1"] == 0).all()
    assert ("G0 vs G2", "judge1") not in by.index and len(by) == 3


def test_agreement_of_a_judge_alone_is_unknown():
    """One judge shares no item with another: its agreement is NaN, not Beta(1, 1)'s
    0.5 [0.05, 0.95]; two judges still get one."""
    alone = bj.simulate_win_rate(100, p=0.75, q0=[0.85], seed=4)
    js = bj.judge_summary(bj.win_rate(alone, method="observed", seed=0))
    assert js[["agreement", "agreement_low", "agreement_high"]].isna().all().all()
    pair = bj.simulate_win_rate(100, p=0.75, q0=[0.85, 0.8], seed=4)
    both = bj.judge_summary(bj.win_rate(pair, method="observed", seed=0))
    assert both["agreement"].between(0.6, 1.0).all()
    assert (both["agreement_low"] < both["agreement"]).all()


def test_a_bwrs_point_estimate_lies_within_its_clipped_interval():
    """The BWRS median of eq. 11 draws can exceed 1 (1.08 with interval [0.77, 1.0]): the point
    estimate is clipped as its interval is, pooled and per judge."""
    import bayes_judge as bj

    df = bj.simulate_win_rate(120, p=0.9, q0=[0.85, 0.52], seed=1)
    df.loc[~df["item"].isin(df["item"].unique()[::6]), "human"] = None
    from bayes_judge.winrate.bwrs import BWRSWarning

    with pytest.warns(BWRSWarning, match="outside"):
        fit = bj.win_rate(df, method="bwrs", seed=0)
    for s in (bj.win_rate_summary(fit), bj.win_rate_summary(fit, by_judge=True)):
        assert ((s["hdi_low"] <= s["p_mean"]) & (s["p_mean"] <= s["hdi_high"])).all()
    raw = bj.win_rate_summary(fit, by_judge=True)["p_median"]
    assert (raw > 1).any()  # the case: an unclipped median above 1
