"""bj.compare_models: PSIS-LOO comparison of generative models fitted to the same judgments."""

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayes_judge as bj
from bayes_judge.analysis.comparison import loo_scored

FAST = dict(chains=2, draws=400, tune=400, seed=0)
COLUMNS = ["rank", "elpd_loo", "p_loo", "elpd_diff", "weight", "se", "dse", "warning", "scale",
           "pareto_k_max", "n_pareto_k_high", "verdict"]


@pytest.fixture(scope="module")
def asym():
    """Two-coin Dawid-Skene truth with q0 != q1 (judges err more often when G1 is better)."""
    return bj.simulate_win_rate(300, p=0.7, q0=[0.9, 0.85, 0.8], q1=[0.6, 0.65, 0.7], seed=11)


@pytest.fixture(scope="module")
def two_coin(asym):
    return bj.win_rate(asym, method="dawid-skene", prior="none", **FAST)


@pytest.fixture(scope="module")
def independent(asym):
    return bj.win_rate(asym, method="independent", prior="none", sampler="pymc", **FAST)


def soft_table(n=8, k=150, seed=0, hard=False):
    rng = np.random.default_rng(seed)
    s = rng.normal(0, 1, n)
    i = rng.integers(0, n, 3 * k)
    j = rng.integers(0, n, 3 * k)
    keep = i != j
    i, j = i[keep][:k], j[keep][:k]
    p = 1 / (1 + np.exp(-(s[i] - s[j] + rng.normal(0, 0.5, k))))
    df = pd.DataFrame({"item": "ctx", "a": [f"c{x}" for x in i], "b": [f"c{x}" for x in j],
                       "sample": np.arange(k)})
    if hard:  # decisions drawn from the probabilities: the Bradley-Terry story
        return df.assign(winner=np.where(rng.random(k) < p, "a", "b"))
    return df.assign(p_a=p)


@pytest.fixture(scope="module")
def rankings():
    df = soft_table()
    return {m: bj.rank(df, method=m, bayesian=True, debias=False, **FAST) for m in ("poe-bt", "poe-g", "bt")}


def test_loo_scored_is_az_loo_on_the_own_likelihood(two_coin):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = az.loo(two_coin, pointwise=True, var_name="t")
    ours = loo_scored(two_coin, "t")
    for key in ("elpd_loo", "se", "p_loo", "n_data_points", "good_k"):
        assert ours[key] == pytest.approx(ref[key], rel=1e-12)
    np.testing.assert_allclose(ours["loo_i"], ref["loo_i"], rtol=1e-12)
    np.testing.assert_allclose(ours["pareto_k"], ref["pareto_k"], rtol=1e-12)


def test_cross_scored_loo_matches_the_exact_leave_one_out_predictive():
    """Normal mean model, posterior conditioned on x; scored quantity y_i = [x_i > 0] with
    P(y_i = 1 | theta) = Phi(theta).  Exact: theta | x_-i ~ N(m_i, v_i), so the LOO predictive
    is Phi(m_i / sqrt(1 + v_i))."""
    rng = np.random.default_rng(7)
    n, tau0 = 30, 0.01  # prior theta ~ N(0, 10^2), x_i ~ N(theta, 1)
    x = rng.normal(0.4, 1.0, n)
    y = (x > 0).astype(float)
    v, m = 1 / (tau0 + n), x.sum() / (tau0 + n)
    theta = rng.normal(m, np.sqrt(v), size=(4, 2000))
    own = stats.norm.logpdf(x, theta[..., None], 1.0)
    score = y * stats.norm.logcdf(theta[..., None]) + (1 - y) * stats.norm.logcdf(-theta[..., None])
    idata = az.from_dict(posterior={"theta": theta}, log_likelihood={"x": own, "y": score},
                         dims={"x": ["obs"], "y": ["obs"]})
    idata.log_likelihood["y"].attrs["loo_weights"] = "x"
    e = loo_scored(idata, "y")
    v_i = 1 / (tau0 + n - 1)
    m_i = v_i * (x.sum() - x)
    p1 = stats.norm.cdf(m_i / np.sqrt(1 + v_i))
    exact = np.where(y == 1, np.log(p1), np.log1p(-p1))
    np.testing.assert_allclose(e["loo_i"], exact, atol=0.01)
    assert (e["pareto_k"] < 0.5).all()
    # scoring with the wrong weights (az.loo on "y" alone) is measurably different
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        naive = az.loo(idata, pointwise=True, var_name="y")
    assert np.abs(naive["loo_i"] - exact).max() > 2 * np.abs(e["loo_i"] - exact).max()


def test_two_coin_does_not_lose_to_independent_raters(asym, two_coin, independent, tmp_path):
    table = bj.compare_models({"two-coin": two_coin, "independent": independent})
    assert list(table.columns) == COLUMNS
    assert table.attrs["var_name"] == "t"
    assert table.index[0] == "two-coin" and table.loc["two-coin", "verdict"] == "best"
    assert table.loc["independent", "verdict"] == "worse"
    assert table.loc["independent", "elpd_diff"] > 2 * table.loc["independent", "dse"]
    assert table["n_pareto_k_high"].sum() == 0 and not table["warning"].any()
    # saved runs, named by their files, give the same table
    paths = [bj.save_run(two_coin, tmp_path / "ds2"), bj.save_run(independent, tmp_path / "indep")]
    again = bj.compare_models(paths)
    assert list(again.index) == ["ds2", "indep"]
    np.testing.assert_allclose(again["elpd_loo"], table["elpd_loo"], rtol=1e-10)
    # a list of fits is named from the fits
    assert list(bj.compare_models([independent, two_coin]).index) == ["dawid-skene (two-coin)", "independent"]


def test_ranking_models_compare_on_the_hard_decisions(rankings):
    table = bj.compare_models(rankings)
    assert table.attrs["var_name"] == "y" and "hard decisions" in table.attrs["scores"]
    assert set(table.index) == {"poe-bt", "poe-g", "bt"}
    assert table["verdict"].iloc[0] == "best" and np.isfinite(table["elpd_loo"]).all()
    # elpd_loo is the sum of the pointwise LOO predictive of y, each a log-probability
    e = loo_scored(rankings["poe-g"], "y")
    assert (np.asarray(e["loo_i"]) < 0).all()
    # on their own likelihoods "c" the three are on different scales: refused, with a pointer
    with pytest.raises(ValueError, match=r"'c' scores different observations.*compare on 'y'"):
        bj.compare_models(rankings, var_name="c")
    # fits of one model compare on their own likelihood by default
    refit = bj.rank(soft_table(), method="poe-g", bayesian=True, debias=False, **{**FAST, "seed": 1})
    two_seeds = {"a": rankings["poe-g"], "b": refit}
    assert bj.compare_models(two_seeds).attrs["var_name"] == "c"
    with pytest.raises(ValueError, match="ic='waic' scores a model on its own likelihood"):
        bj.compare_models(rankings, ic="waic")
    # poe-g on the hard decisions reads other inputs (p = y) but predicts the same decisions
    hard = bj.rank(soft_table(), method="poe-g-hard", bayesian=True, **FAST)
    with_hard = bj.compare_models([*rankings.values(), hard])
    assert "poe-g-hard" in with_hard.index and with_hard.attrs["var_name"] == "y"
    with pytest.raises(ValueError, match="'c' scores different observations"):
        bj.compare_models({"soft": rankings["poe-g"], "hard": hard}, var_name="c")


def test_soft_and_hard_bradley_terry_agree_on_hard_data():
    """On a table of hard decisions (p = y) poe-bt and bt are the same model."""
    df = soft_table(k=200, seed=3, hard=True)
    fits = {m: bj.rank(df, method=m, bayesian=True, debias=False, **FAST) for m in ("poe-bt", "bt")}
    table = bj.compare_models(fits)
    assert (table["verdict"] != "worse").all()
    assert table["elpd_diff"].iloc[1] < 1.0


def test_different_data_sets_are_refused(two_coin):
    other = bj.simulate_win_rate(300, p=0.5, q0=[0.9, 0.85, 0.8], q1=[0.6, 0.65, 0.7], seed=12)
    with pytest.raises(ValueError, match=r"fitted to different data \(data hash"):
        bj.compare_models({"a": two_coin, "b": bj.win_rate(other, method="dawid-skene", prior="none", **FAST)})
    smaller = bj.simulate_win_rate(200, p=0.7, q0=[0.9, 0.85, 0.8], q1=[0.6, 0.65, 0.7], seed=11)
    with pytest.raises(ValueError, match="different numbers of observations"):
        bj.compare_models({"a": two_coin, "b": bj.win_rate(smaller, method="dawid-skene", prior="none", **FAST)})


def test_labels_in_one_fit_only_are_refused(asym, two_coin):
    labelled = bj.win_rate(asym, method="dawid-skene", prior="in-distribution", **FAST)
    assert "human labels" in labelled.log_likelihood["t"].attrs["scores"]
    with pytest.raises(ValueError, match="'t' scores different observations"):
        bj.compare_models({"none": two_coin, "labels": labelled}, var_name="t")


def test_runs_without_a_comparable_log_likelihood(asym, two_coin, rankings):
    observed = bj.win_rate(asym, method="observed", **FAST)
    with pytest.raises(ValueError, match="'observed'.*has no log_likelihood group"):
        bj.compare_models({"ds": two_coin, "observed": observed})
    with pytest.raises(ValueError, match="share no log-likelihood variable"):
        bj.compare_models({"ds": two_coin, "poe": rankings["poe-bt"]})
    with pytest.raises(ValueError, match="run 'ds' has no log-likelihood variable 'y'"):
        bj.compare_models({"ds": two_coin, "ds2": two_coin}, var_name="y")


def test_a_likelihood_model_fitted_without_pointwise_is_told_to_refit(asym, two_coin):
    """A Dawid-Skene fit with pointwise=False has no log_likelihood group: the message says to
    refit with pointwise=True, not that Dawid-Skene is no likelihood model."""
    lean = bj.win_rate(asym, method="dawid-skene", prior="none", pointwise=False, **FAST)
    assert "log_likelihood" not in lean.groups()
    with pytest.raises(ValueError, match=r"'lean'.*pointwise=False.*refit it with pointwise=True") as err:
        bj.compare_models({"ds": two_coin, "lean": lean})
    assert "not a likelihood model" not in str(err.value)


def _fixed_runs(gap_per_point, n=200, noise=0.3, seed=0):
    """Two runs scoring n observations, the second worse by ``gap_per_point`` per observation
    (plus noise), with log-likelihoods that barely vary over the draws (LOO ≈ the
    log-likelihood, Pareto k small)."""
    rng = np.random.default_rng(seed)
    base = np.log(rng.uniform(0.3, 0.7, n))
    worse = base - gap_per_point + rng.normal(0.0, noise * gap_per_point, n)
    runs = {}
    for name, ll in (("good", base), ("bad", worse)):
        draws = ll + rng.normal(0.0, 1e-3, (2, 300, n))
        runs[name] = az.from_dict(posterior={"theta": rng.normal(size=(2, 300))},
                                  log_likelihood={"t": draws}, dims={"t": ["obs"]})
    return runs


def test_a_small_elpd_difference_is_not_called_worse():
    """elpd_diff 1.5 with dse 0.04 (beyond 2 dse) was called "worse"; below 4 the difference is
    small and its se unreliable (Sivula et al. 2022), so it is not called.  From 4 on the
    2-dse rule stands."""
    small = bj.compare_models(_fixed_runs(1.5 / 200))
    large = bj.compare_models(_fixed_runs(6.0 / 200))
    assert small.loc["bad", "elpd_diff"] == pytest.approx(1.5, abs=0.2)
    assert small.loc["bad", "elpd_diff"] > 2 * small.loc["bad", "dse"]
    assert small.loc["bad", "verdict"] == "cannot tell apart from best (elpd_diff < 4: too small to call)"
    assert large.loc["bad", "elpd_diff"] > 4 and large.loc["bad", "verdict"] == "worse"


def test_bad_arguments(two_coin):
    with pytest.raises(ValueError, match="at least 2 runs"):
        bj.compare_models({"only": two_coin})
    with pytest.raises(TypeError, match="needs several runs"):
        bj.compare_models(two_coin)
    with pytest.raises(TypeError, match="InferenceData or the path"):
        bj.compare_models({"a": two_coin, "b": 3})
    with pytest.raises(ValueError, match="ic must be one of"):
        bj.compare_models({"a": two_coin, "b": two_coin}, ic="aic")
    with pytest.raises(ValueError, match="scale must be one of"):
        bj.compare_models({"a": two_coin, "b": two_coin}, scale="bits")


def test_identical_runs_cannot_be_told_apart_and_waic_works(two_coin):
    table = bj.compare_models([two_coin, two_coin], ic="waic", scale="deviance")
    assert list(table.index) == ["dawid-skene (two-coin)", "dawid-skene (two-coin) #2"]
    assert "elpd_waic" in table.columns and (table["scale"] == "deviance").all()
    assert list(table["verdict"]) == ["best", "cannot tell apart from best"]


@pytest.mark.slow
def test_three_win_rate_models_on_mtbench():
    """MT-Bench with simulated generators (seed 003 §4.1): the judges' errors depend on the true
    class, and the model with one accuracy per class and judge predicts the verdicts best."""
    df = bj.assign_generators(bj.load_dataset("mtbench"), share=0.8, seed=0)
    kw = dict(chains=4, draws=1000, tune=1000, seed=0)
    fits = {
        "two-coin": bj.win_rate(df, method="dawid-skene", prior="none", **kw),
        "one-coin": bj.win_rate(df, method="dawid-skene", ds_model="one-coin", prior="none", sampler="pymc", **kw),
        "independent": bj.win_rate(df, method="independent", prior="none", sampler="pymc", **kw),
    }
    table = bj.compare_models(fits)
    assert table.index[0] == "two-coin"
    assert table.loc["independent", "verdict"] == "worse"


def test_leaderboards_without_labels_compare_on_the_judges_verdicts():
    """A judges-only leaderboard keeps an empty log-likelihood of human labels; comparison skips it."""
    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    df, _ = simulate_leaderboard(6, 600, seed=1)
    df = df.drop(columns="human")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = {"full": bj.leaderboard(df, chains=2, draws=200, tune=200, seed=0),
                "no position bias": bj.leaderboard(df, position_bias=False, chains=2, draws=200, tune=200, seed=0)}
        table = bj.compare_models(runs)
    assert table.attrs["var_name"] == "v" and table.index[0] == "full"
