"""The recommended estimator with labels (method="regression"): what the issue promises of it.

It reduces to the labels alone when the judges carry no signal, answers (wide) with few labels
or labels of one class, is exact when every item is labelled, and uses strong judges to narrow
the interval while still covering the truth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayes_judge as bj
from bayes_judge.inference.settings import Sampling

KW = dict(chains=2, draws=500, tune=500, seed=0)


def _label(df: pd.DataFrame, every: int) -> pd.DataFrame:
    return df.assign(human=df["human"].where(df["item"] % every == 0, None))


def _summary(idata) -> pd.Series:
    return bj.win_rate_summary(idata, hdi_prob=0.9).iloc[0]


def test_default_with_labels_is_the_regression_and_records_it():
    df = _label(bj.simulate_win_rate(120, p=0.7, q0=[0.9, 0.85], q1=[0.85, 0.9], seed=1), 4)
    fit = bj.win_rate(df, **KW)
    assert fit.attrs["model"] == "regression" and fit.attrs["method"] == "regression"
    assert fit.attrs["prior"] == "in-distribution" and fit.attrs["ties"] == "skip"
    assert '"slope": {"family": "Normal"' in fit.attrs["priors"]
    assert fit.posterior["p"].dims == ("chain", "draw", "pair")
    assert fit.posterior["h_prob"].dims == ("chain", "draw", "item")
    # labelled items' h_prob is their label
    lab = fit.constant_data["human_label"].to_numpy()
    h = fit.posterior["h_prob"].mean(("chain", "draw")).to_numpy()
    np.testing.assert_array_equal(h[lab >= 0], lab[lab >= 0])


def test_judges_without_signal_reduce_to_the_labels_alone():
    """Judges at chance: p is the labelled share with the labels' uncertainty (not narrower)."""
    rng = np.random.default_rng(3)
    df = bj.simulate_win_rate(200, p=0.7, q0=[0.5, 0.5, 0.5], q1=[0.5, 0.5, 0.5], seed=3)
    df = _label(df, 5)  # 40 labels
    s = _summary(bj.win_rate(df, **KW))
    data = bj.encode_win_rate(df)
    y = data.label[data.label >= 0]
    k, n, N = y.sum(), y.size, data.n_units
    # the labels alone, finite population: k + Beta-binomial(N - n) draws of the rest
    theta = rng.beta(1 + k, 1 + n - k, size=20000)
    rest = rng.binomial(N - n, theta)
    ref = (k + rest) / N
    assert s["p_mean"] == pytest.approx(ref.mean(), abs=0.03)
    lo, hi = np.quantile(ref, [0.05, 0.95])
    assert (s["hdi_high"] - s["hdi_low"]) == pytest.approx(hi - lo, rel=0.25)


def test_strong_judges_narrow_the_interval_and_cover():
    df = bj.simulate_win_rate(300, p=0.65, q0=[0.92, 0.9, 0.88], q1=[0.9, 0.92, 0.9], seed=7)
    truth = df.attrs["truth"]["p_hat"]
    df = _label(df, 10)  # 30 labels
    s = _summary(bj.win_rate(df, **KW))
    y = bj.encode_win_rate(df).label
    y = y[y >= 0]
    cp = stats.binomtest(int(y.sum()), y.size).proportion_ci(0.9, method="exact")
    assert s["hdi_low"] <= truth <= s["hdi_high"]
    assert (s["hdi_high"] - s["hdi_low"]) < 0.6 * (cp.high - cp.low)


def test_every_item_labelled_gives_the_labelled_share_exactly():
    df = bj.simulate_win_rate(60, p=0.6, q0=[0.8], q1=[0.8], seed=2)
    s = _summary(bj.win_rate(df, **KW))
    assert s["hdi_low"] == s["hdi_high"] == pytest.approx(df.attrs["truth"]["p_hat"])


@pytest.mark.parametrize("labels", ["one", "one_class"])
def test_few_or_one_sided_labels_answer_wide(labels):
    df = bj.simulate_win_rate(150, p=0.7, q0=[0.75, 0.7], q1=[0.7, 0.75], seed=4)
    h = bj.encode_win_rate(df).label
    if labels == "one":
        keep = df["item"] == 0
    else:  # 7 labels, all G0
        g0_items = np.flatnonzero(h == 1)[:7]
        keep = df["item"].isin(g0_items)
    fit = bj.win_rate(df.assign(human=df["human"].where(keep, None)), **KW)
    s = _summary(fit)
    assert s["hdi_high"] - s["hdi_low"] > 0.25
    assert s["r_hat"] < 1.05


def test_bad_labels_are_clear_errors():
    df = bj.simulate_win_rate(30, seed=0)
    with pytest.raises(ValueError, match="regression: needs human labels"):
        bj.win_rate(df.assign(human=None), method="regression")
    with pytest.raises(ValueError, match="needs prior='in-distribution'"):
        bj.win_rate(df, method="regression", prior="none")
    bad = pd.DataFrame({"item": [999], "a": ["G0"], "b": ["G1"], "human": ["a"]})
    with pytest.raises(ValueError, match="999"):
        bj.win_rate(df.assign(human=None), human=bad)
    clash = df.copy()
    clash.loc[clash.index[0], "human"] = "b" if clash["human"].iloc[0] == "a" else "a"
    with pytest.raises(ValueError, match="contradicting human labels"):
        bj.win_rate(clash)


def test_judge_summary_next_labels_and_bwrs_summary():
    df = _label(bj.simulate_win_rate(150, p=0.7, q0=[0.9, 0.6], q1=[0.8, 0.7], swap=True, seed=5), 5)
    fit = bj.win_rate(df, **KW)
    js = bj.judge_summary(fit)
    assert list(js.index) == ["judge0", "judge1"] and (js["source"] == "labels").all()
    assert js.loc["judge0", "acc_g0"] > js.loc["judge1", "acc_g0"]  # 0.9 vs 0.6 on G0 items
    assert ((js["acc_g0_low"] <= js["acc_g0"]) & (js["acc_g0"] <= js["acc_g0_high"])).all()
    assert js["p_first"].between(0.3, 0.7).all()  # the simulation has no position bias
    ds = bj.win_rate(df, method="dawid-skene", prior="none", **KW)
    assert (bj.judge_summary(ds)["source"] == "posterior").all()
    nl = bj.next_labels(fit, 5)
    assert len(nl) == 5 and nl["h_mean"].between(0, 1).all()
    every = bj.next_labels(fit, 10_000)  # all unlabelled items, in labelling order
    assert nl["score"].iloc[0] == every["score"].max()  # the first proposal is the best one
    labelled = {str(i) for i in df.loc[df["human"].notna(), "item"]}
    assert not set(nl["item"]) & labelled
    with pytest.raises(ValueError, match="positive integer"):
        bj.next_labels(fit, 0)
    with pytest.raises(ValueError, match="h_prob"):
        bj.next_labels(bj.win_rate(df, method="observed", prior="none", seed=0), 3)
    with pytest.warns(UserWarning, match="outside"):  # BWRSWarning: eq. 11 leaves [0, 1] here
        bw = bj.win_rate(df, method="bwrs", seed=0)
    s = _summary(bw)
    assert 0.0 <= s["hdi_low"] <= s["hdi_high"] <= 1.0
    assert s["p_mean"] == s["p_median"]


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "declaration"])
def test_a_judge_with_no_verdicts_on_the_labelled_items(fast):
    """The judge's own weight is then informed by its prior only: an answer, not an error (and
    not a start that nutpie refuses for an exactly-zero gradient)."""
    from bayes_judge.generative import get_model
    from bayes_judge.inference import fit_model
    from bayes_judge.winrate.encode import VerdictPatterns, verdict_patterns

    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.8, 0.8], q1=[0.8, 0.8, 0.8], seed=1)
    df = df[~((df["judge"] == "judge2") & (df["item"] % 5 == 0))]
    df = _label(df, 5)
    data = bj.encode_win_rate(df, ties="skip")
    pat = verdict_patterns(data, use_labels=True)
    fit = fit_model(get_model("regression", "win-rate"), pat.arrays(), dims=VerdictPatterns.DIMS,
                    coords={"pair": data.pair_labels, "judge": data.judges}, fast=fast,
                    sampling=Sampling(chains=2, draws=300, tune=300))
    assert fit.fast == fast
    z2 = fit.posterior["z"][..., 2]  # judge2: prior N(0, 1) only
    assert abs(float(z2.mean())) < 0.3 and 0.7 < float(z2.std()) < 1.3


def test_judge_summary_says_what_it_cannot_tell():
    """Without labels and without a model of accuracies the accuracies are unknown (NaN, source
    "none"), not 0.5 [0.05, 0.95]; a position bias needs comparisons seen in both orders (with G0
    always shown first, the first position's share is G0's win rate); hdi_prob is checked."""
    import warnings

    one_order = bj.simulate_win_rate(100, p=0.9, q0=[0.9, 0.85], seed=4).assign(human=None)
    both = bj.simulate_win_rate(100, p=0.9, q0=[0.9, 0.85], swap=True, seed=4).assign(human=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = bj.judge_summary(bj.win_rate(one_order, chains=2, draws=100, tune=100, seed=0))
        b = bj.judge_summary(bj.win_rate(both, chains=2, draws=100, tune=100, seed=0))
    assert a["acc_g0"].isna().all() and (a["source"] == "none").all()
    assert a["p_first"].isna().all()                      # was 0.72: G0's win rate read as a position bias
    assert b["p_first"].between(0.4, 0.6).all()           # these judges have none
    observed = bj.win_rate(both, method="observed")
    with pytest.raises(ValueError, match="hdi_prob must lie in"):
        bj.judge_summary(observed, hdi_prob=1.5)
    with pytest.raises(ValueError, match="hdi_prob must lie in"):
        bj.win_rate_summary(observed, hdi_prob=0)  # a zero-width interval would read as "decided"
