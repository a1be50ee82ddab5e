import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayes_judge as bj
from bayes_judge.winrate.bwrs import BWRSWarning


@pytest.fixture
def labelled():
    return bj.simulate_win_rate(400, p=0.7, q0=[0.85, 0.8], q1=[0.75, 0.9], seed=4)


def counts(df, e):
    t = df.attrs["truth"]
    h = np.array(t["h"])
    g = df[df["judge"] == f"judge{e}"]
    says_g0 = (g["winner"] == "a").to_numpy()  # swap=False: G0 is always in position A
    return {
        "n0": h.sum(), "s0": (says_g0 & (h == 1)).sum(),
        "n1": (1 - h).sum(), "s1": (~says_g0 & (h == 0)).sum(),
        "nk": len(h), "sk": says_g0.sum(),
    }


def test_draws_follow_algorithm_1_beta_posteriors(labelled):
    idata = bj.win_rate(labelled, method="bwrs", prior="in-distribution", chains=4, draws=5000, seed=1)
    post = idata.posterior
    for e in range(2):
        c = counts(labelled, e)
        for var, s, n in (("q0", c["s0"], c["n0"]), ("q1", c["s1"], c["n1"]), ("k", c["sk"], c["nk"])):
            x = post[var].isel(pair=0, judge=e).to_numpy().ravel()
            ref = stats.beta(s + 1, n - s + 1)
            assert x.mean() == pytest.approx(ref.mean(), abs=4 * ref.std() / np.sqrt(x.size))
            assert x.std() == pytest.approx(ref.std(), rel=0.05)
            assert stats.kstest(x, ref.cdf).pvalue > 1e-3
        q0, q1, k = (post[v].isel(pair=0, judge=e).to_numpy() for v in ("q0", "q1", "k"))
        np.testing.assert_allclose(post["p_judge"].isel(pair=0, judge=e), (k + q1 - 1) / (q0 + q1 - 1))
    w = idata.constant_data["bwrs_weight"]
    assert float(w.sum()) == pytest.approx(1.0)
    np.testing.assert_allclose(post["p"], (post["p_judge"] * w).sum("judge"), rtol=1e-10)


def test_pooling_downweights_a_near_chance_judge():
    good = bj.simulate_win_rate(300, p=0.8, q0=[0.9, 0.85, 0.52], q1=[0.85, 0.9, 0.5], seed=8)
    df = good.assign(judge=good["judge"].replace({"judge2": "coin"}))
    with pytest.warns(BWRSWarning):
        idata = bj.win_rate(df, method="bwrs", prior="in-distribution", draws=1000, seed=0)
    w = idata.constant_data["bwrs_weight"].sel(pair="G0 vs G1").to_series()
    assert w["coin"] < 0.05 * min(w["judge0"], w["judge1"])
    s = bj.win_rate_summary(idata)
    assert abs(s["p_mean"].iloc[0] - good.attrs["truth"]["p_hat"]) < 0.05


def test_recovers_p_with_good_judges(labelled):
    s = bj.win_rate_summary(bj.win_rate(labelled, method="bwrs", prior="in-distribution", draws=2500, seed=0))
    p_hat = labelled.attrs["truth"]["p_hat"]
    assert abs(s["p_mean"].iloc[0] - p_hat) < 0.04
    assert s["hdi_low"].iloc[0] < p_hat < s["hdi_high"].iloc[0]
    assert abs(s["k_observed"].iloc[0] - p_hat) > 0.02  # the bias BWRS removes (eq. 9)


def test_same_seed_same_numbers(labelled):
    a = bj.win_rate(labelled, method="bwrs", prior="in-distribution", draws=200, seed=5)
    b = bj.win_rate(labelled, method="bwrs", prior="in-distribution", draws=200, seed=5)
    c = bj.win_rate(labelled, method="bwrs", prior="in-distribution", draws=200, seed=6)
    np.testing.assert_array_equal(a.posterior["p"], b.posterior["p"])
    assert not np.array_equal(a.posterior["p"], c.posterior["p"])


def test_weak_judges_warn_and_keep_draws_outside_unit_interval():
    df = bj.simulate_win_rate(40, p=0.5, q0=[0.5], q1=[0.5], seed=2)
    with pytest.warns(BWRSWarning, match=r"outside \[0, 1\].*kept, not dropped"):
        idata = bj.win_rate(df, method="bwrs", prior="in-distribution", draws=1000, seed=0)
    s = bj.win_rate_summary(idata)
    assert s["frac_outside_unit"].iloc[0] > 0.05
    qsum = (idata.posterior["q0"] + idata.posterior["q1"]).to_numpy()
    assert s["frac_q_sum_le_1"].iloc[0] == pytest.approx((qsum <= 1).mean()) and (qsum <= 1).any()
    p = idata.posterior["p"].to_numpy()
    assert s["frac_outside_unit"].iloc[0] == pytest.approx(((p < 0) | (p > 1)).mean())
    assert idata.posterior["p"].size == 4000  # nothing dropped


def test_ood_prior_counts_from_other_table(labelled):
    target = labelled.assign(human=None)
    idata = bj.win_rate(target, method="bwrs", prior="ood", ood=labelled, draws=500, seed=0)
    c = counts(labelled, 0)
    q0 = idata.posterior["q0"].isel(pair=0, judge=0).to_numpy()
    assert q0.mean() == pytest.approx((c["s0"] + 1) / (c["n0"] + 2), abs=0.01)


def test_no_human_labels_is_an_error(labelled):
    with pytest.raises(ValueError, match="found no human labels"):
        bj.win_rate(labelled.assign(human=None), method="bwrs", prior="in-distribution")
    with pytest.raises(ValueError, match="footnote 4"):
        bj.win_rate(labelled, method="bwrs", prior="none")


def test_labels_of_one_class_is_an_error(labelled):
    h = np.array(labelled.attrs["truth"]["h"])
    items = np.flatnonzero(h == 1)
    df = labelled.assign(human=np.where(labelled["item"].isin(items), labelled["human"], None))
    with pytest.raises(ValueError, match=r"all \d+ human labels.* prefer G0"):
        bj.win_rate(df, method="bwrs", prior="in-distribution")


def test_ood_without_shared_judges(labelled):
    other = labelled.assign(judge=labelled["judge"] + "_other")
    with pytest.raises(ValueError, match="no judge of the data"):
        bj.win_rate(labelled.assign(human=None), method="bwrs", prior="ood", ood=other)


def test_kde_mode_matches_scipy_and_is_fast():
    from bayes_judge.winrate.kde import kde_grid, kde_mode

    x = np.random.default_rng(0).beta(8, 3, size=10_000)
    grid, dens = kde_grid(x)
    ref = stats.gaussian_kde(x)(grid)
    np.testing.assert_allclose(dens, ref, atol=0.02 * ref.max())
    assert kde_mode(x) == pytest.approx(grid[np.argmax(ref)], abs=2e-3)
    assert kde_mode(np.full(5, 0.3)) == 0.3


def test_kde_mode_ignores_heavy_tails():
    """Eq. 11 draws with q0 + q1 near 1 reach |p| ~ 1e3: the mode must stay at the peak."""
    from bayes_judge.winrate.kde import kde_mode

    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(0.8, 0.03, 9990), 1000 * rng.standard_cauchy(10)])
    assert kde_mode(x) == pytest.approx(0.8, abs=0.01)


def test_observed_k_is_eq4(tiny):
    idata = bj.win_rate(tiny, method="observed", ties="skip", draws=3000, seed=0)
    # j1: 2 of 3 verdicts for x; j2: 1 of 2 -> pooled mean 7/12
    np.testing.assert_allclose(idata.constant_data["k_judge"].isel(pair=0), [2 / 3, 1 / 2])
    s = bj.win_rate_summary(idata)
    assert s["k_observed"].iloc[0] == pytest.approx(7 / 12)
    k = idata.posterior["k"].isel(pair=0, judge=0).to_numpy()
    assert k.mean() == pytest.approx(3 / 5, abs=0.01)  # Beta(2 + 1, 1 + 1)
    assert isinstance(s, pd.DataFrame) and list(s[["system_a", "system_b"]].iloc[0]) == ["x", "y"]


def test_summary_rejects_other_objects():
    with pytest.raises(ValueError, match="posterior variable 'p'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import arviz as az

            bj.win_rate_summary(az.from_dict(posterior={"x": np.zeros((1, 5))}))


def test_summary_by_judge(labelled):
    idata = bj.win_rate(labelled, method="bwrs", prior="in-distribution", draws=500, seed=0)
    s = bj.win_rate_summary(idata, by_judge=True)
    assert list(s.index.get_level_values("judge")) == ["judge0", "judge1"]
    x = idata.posterior["p_judge"].isel(pair=0, judge=1).to_numpy()
    assert s["p_mean"].iloc[1] == pytest.approx(np.median(x)) == s["p_median"].iloc[1]  # the pooled rule
    with pytest.raises(ValueError, match="by_judge=True needs per-judge"):
        bj.win_rate_summary(bj.win_rate(labelled, draws=50, tune=50, chains=2), by_judge=True)


def test_summary_by_judge_follows_the_pooled_rule_for_a_weak_judge():
    """A weak judge's eq. 11 ratio has heavy tails (draws from about -140 to 40): its row gives
    the median and the interval clipped to [0, 1], as the pooled row does, not a mean of 0.44
    for a median of 0.87.  An observed fit's k stays in [0, 1] and keeps its mean."""
    df = bj.simulate_win_rate(120, p=0.7, q0=[0.85, 0.55], seed=8)
    df = df.assign(human=np.where(df["item"] % 4 == 0, df["human"], None))
    with pytest.warns(BWRSWarning):
        idata = bj.win_rate(df, method="bwrs", chains=2, draws=300, seed=1)
    s = bj.win_rate_summary(idata, by_judge=True)
    for e, judge in enumerate(("judge0", "judge1")):
        x = idata.posterior["p_judge"].isel(pair=0, judge=e).to_numpy()
        row = s.loc[("G0 vs G1", judge)]
        assert row["p_mean"] == pytest.approx(np.median(x)) == row["p_median"]
        assert 0.0 <= row["hdi_low"] <= row["hdi_high"] <= 1.0
    weak = idata.posterior["p_judge"].isel(pair=0, judge=1).to_numpy()
    assert abs(weak.mean() - np.median(weak)) > 0.1  # the mean would have been off
    pooled = bj.win_rate_summary(idata)
    assert pooled["p_mean"].iloc[0] == pytest.approx(np.median(idata.posterior["p"]))
    obs = bj.win_rate(df, method="observed", draws=300, seed=1)
    k = obs.posterior["k"].isel(pair=0, judge=1).to_numpy()
    assert bj.win_rate_summary(obs, by_judge=True)["p_mean"].iloc[1] == pytest.approx(k.mean())


def test_compare_systems_on_win_rates():
    import bayes_judge as bj

    clear = bj.simulate_win_rate(400, p=0.85, q0=[0.95], q1=[0.95], seed=1)
    close = bj.simulate_win_rate(400, p=0.5, q0=[0.95], q1=[0.95], systems=("G0", "G2"), seed=2)
    df = pd.concat([clear, close.assign(item=close["item"] + 1000)], ignore_index=True)
    c = bj.compare_systems(bj.win_rate(df, method="observed", draws=1000, seed=0))
    assert list(c["verdict"]) == ["G0 better", "cannot tell apart"]
    assert c["prob_a_better"].iloc[0] > 0.99


def test_single_draw_pools_with_equal_weights(labelled):
    idata = bj.win_rate(labelled, method="bwrs", prior="in-distribution", chains=1, draws=1, seed=0)
    pj = idata.posterior["p_judge"].to_numpy().ravel()
    assert idata.posterior["p"].to_numpy().item() == pytest.approx(pj.mean())


def test_bwrs_needs_labels_on_every_pair(labelled):
    other = labelled.assign(b="G2", item=labelled["item"] + 1000, human=None)
    with pytest.raises(ValueError, match="no human labels of pair G0 vs G2"):
        bj.win_rate(pd.concat([labelled, other]), method="bwrs", prior="in-distribution")


def test_observed_refuses_a_prior(labelled):
    with pytest.raises(ValueError, match="uses no human knowledge"):
        bj.win_rate(labelled, method="observed", prior="in-distribution")
