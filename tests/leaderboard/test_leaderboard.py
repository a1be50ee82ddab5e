"""bj.leaderboard: recovery of known scores and judges, samplers agreeing, exact counts, bad input."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

import bayes_judge as bj
from bayes_judge.inference import SAMPLING
from bayes_judge.leaderboard import (
    PositionBiasNotIdentifiedError,
    encode_leaderboard,
    judge_table,
    position_identified,
)
from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

# the joint model's fixtures judge each comparison several times: its warning is asserted in its own test
pytestmark = pytest.mark.filterwarnings("ignore::bayes_judge.leaderboard.board.CountedTwiceWarning")

FAST = dict(chains=2, draws=400, tune=400)


def simulate(n_sys=8, n_cmp=600, alpha=(2.0, 1.0), beta=(0.4, -0.3), tau=(0.0, 0.5), label_share=0.0,
             both_orders=True, seed=0):
    """:func:`simulate_leaderboard` with the judges' true parameters returned beside the table."""
    df, s = simulate_leaderboard(n_sys, n_cmp, alpha=alpha, beta=beta, tau=tau, label_share=label_share,
                                 design="both-orders" if both_orders else "one-order", seed=seed)
    return df, s, np.asarray(alpha), np.asarray(beta)


@pytest.fixture(scope="module")
def sim():
    return simulate(label_share=0.1, seed=3)


@pytest.fixture(scope="module")
def fitted(sim):
    """The joint model of judges and labels (bridge=False): it reads the judges' accuracy and
    position bias from the labels, which the recovery test checks."""
    df, *_ = sim
    return bj.leaderboard(df, seed=1, bridge=False, **FAST)


def test_with_labels_the_default_learns_the_bridge_from_them(sim):
    df, s, *_ = sim
    fit = bj.leaderboard(df, seed=1, **FAST)
    assert "bridge_lambda" in fit.posterior and "human label(s)" in fit.attrs["estimand_note"]
    summ = bj.leaderboard_summary(fit)
    truth = s[summ["system"]].to_numpy()
    assert kendalltau(summ["mean"], truth).statistic >= 0.6
    assert ((summ["hdi_low"] <= truth) & (truth <= summ["hdi_high"])).mean() >= 0.75
    lam = fit.posterior["bridge_lambda"].to_numpy()
    assert np.quantile(lam, 0.05) < 1.0 < np.quantile(lam, 0.95)  # judges that follow the model: people's scale


def test_recovers_scores_judges_and_position_bias(sim, fitted):
    df, s, alpha, beta = sim
    summ = bj.leaderboard_summary(fitted)
    truth = s[summ["system"]].to_numpy()
    assert kendalltau(summ["mean"], truth).statistic >= 0.6
    covered = (summ["hdi_low"] <= truth) & (truth <= summ["hdi_high"])
    assert covered.mean() >= 0.75, summ.assign(truth=truth)
    assert summ["r_hat"].max() < 1.02 and summ["ess_bulk"].min() > 200
    jt = judge_table(fitted).set_index("judge")
    q = 1 / (1 + np.exp(-alpha))
    for e, name in enumerate(["j0", "j1"]):
        assert jt.loc[name, "q_low"] - 0.05 <= q[e] <= jt.loc[name, "q_high"] + 0.05, jt
        assert jt.loc[name, "beta_low"] - 0.1 <= beta[e] <= jt.loc[name, "beta_high"] + 0.1, jt
    # the better-accuracy judge is read as better
    assert jt.loc["j0", "q_mean"] > jt.loc["j1", "q_mean"]


def test_summary_columns_ranks_and_tiers(fitted):
    summ = bj.leaderboard_summary(fitted)
    assert list(summ.columns) == ["system", "mean", "sd", "hdi_low", "hdi_high", "rank_mean", "rank_low",
                                  "rank_high", "p_best", "tier", "r_hat", "ess_bulk"]
    assert summ["mean"].is_monotonic_decreasing
    assert np.isclose(summ["p_best"].sum(), 1.0)
    # a central interval of a skewed rank need not hold its mean (rank 8 in 96% of draws, 7 else)
    n = len(summ)
    assert (1 <= summ["rank_low"]).all() and (summ["rank_low"] <= summ["rank_high"]).all()
    assert (summ["rank_high"] <= n).all() and summ["rank_mean"].between(1, n).all()
    assert summ["tier"].iloc[0] == 1 and summ["tier"].is_monotonic_increasing
    pref = bj.pairwise_prob(fitted, kind="preference")
    order = bj.pairwise_prob(fitted)
    off = ~np.eye(len(pref), dtype=bool)
    assert np.allclose((pref.to_numpy() + pref.to_numpy().T)[off], 1.0)
    assert np.allclose((order.to_numpy() + order.to_numpy().T)[off], 1.0)
    cmp = bj.compare_systems(fitted)
    assert len(cmp) == len(summ) * (len(summ) - 1) // 2
    assert {"p_prefer", "prob_a_better", "verdict"} <= set(cmp.columns)
    assert fitted.attrs["task"] == "leaderboard" and fitted.attrs["model"] == "bt-judges"
    assert "log_likelihood" in fitted.groups()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isfinite(az.loo(fitted, var_name="v").elpd_loo)


def test_counts_are_exact_and_every_row_counted(sim):
    df, *_ = sim
    data = encode_leaderboard(df)
    hard = data.n[:, :3].sum()
    assert hard == len(df)  # every judgment counted once
    assert data.hum_n.sum() == df.drop_duplicates("item")["human"].notna().sum()  # one label per comparison
    # the cells reproduce the verdict counts per (first system, judge)
    got = pd.Series(data.n[:, 0], index=[data.systems[k] for k in data.sys_a]).groupby(level=0).sum()
    want = df[df["winner"] == "a"].groupby("a").size()
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index().astype(float), check_names=False)
    assert data.n_cells <= len(df)


def test_soft_probabilities_enter_as_sums():
    df, *_ = simulate(n_cmp=200, seed=4)
    rng = np.random.default_rng(0)
    df["p_a"] = np.where(df["winner"] == "a", 0.8, np.where(df["winner"] == "b", 0.2, 0.5)) + rng.uniform(-.05, .05, len(df))
    df = df.drop(columns="winner")
    data = encode_leaderboard(df)
    assert np.isclose(data.n[:, 3].sum(), df["p_a"].sum()) and np.isclose(data.n[:, 4].sum(), (1 - df["p_a"]).sum())
    assert data.n[:, :3].sum() == 0


@pytest.mark.slow
@pytest.mark.parametrize("model", ["bt-judges", "bt"])
def test_samplers_agree(model):
    df, *_ = simulate(n_sys=5, n_cmp=250, label_share=0.2, seed=7)
    fits = {smp: bj.leaderboard(df, model=model, sampler=smp, chains=2, draws=600, tune=600, seed=2)
            for smp in ("nutpie", "pymc", "numpyro")}
    fits["declaration"] = bj.leaderboard(df, model=model, fast=False, chains=2, draws=600, tune=600, seed=2)
    assert fits["nutpie"].attrs["sampler"] == "nutpie (fast path)"
    assert fits["declaration"].attrs["sampler"] == "nutpie"
    ref = fits["nutpie"].posterior
    for smp, idata in fits.items():
        for var in ("s", "beta"):
            a, b = ref[var], idata.posterior[var]
            se = np.sqrt(az.mcse(ref[var])[var].to_numpy() ** 2 + az.mcse(idata.posterior[var])[var].to_numpy() ** 2)
            diff = np.abs(a.mean(("chain", "draw")).to_numpy() - b.mean(("chain", "draw")).to_numpy())
            assert (diff < 4.5 * se + 1e-3).all(), (model, smp, var, diff, se)


def test_both_models_run_on_their_fast_paths_by_default(fitted):
    """The kernels are checked against the declarations in tests/inference/test_fastpaths.py."""
    assert fitted.attrs["sampler"] == "nutpie (fast path)"  # bt-judges
    df, *_ = simulate(n_sys=4, n_cmp=80, alpha=(3.0,), beta=(0.0,), tau=(0.6,), seed=3)
    idata = bj.leaderboard(df.assign(judge="human").drop(columns="human"), seed=0, chains=1, draws=50, tune=50)
    assert (idata.attrs["model"], idata.attrs["sampler"]) == ("bt", "nutpie (fast path)")
    with pytest.raises(ValueError, match="sampler must be one of"):
        bj.leaderboard(df, sampler="stan")


def test_the_fast_paths_chains_tune_for_its_own_warm_up_unless_told():
    """``tune=None``: 300 steps where bt-judges samples from its mode through the shear (nutpie's
    own default, ``benchmarks/results/bench_leaderboard_tune.md``); a given ``tune`` is kept, and a
    model without that warm-up (the votes' ``bt``) tunes for the package's 1000.
    ``target_accept=None``: 0.7 on both fast paths from 100 systems on (near-Gaussian posteriors,
    ``benchmarks/results/bench_leaderboard_accept.md``), a given one kept, PyMC's 0.8 with fewer
    systems, elsewhere, and with the judges' own system preferences (a hierarchical scale)."""
    df, *_ = simulate(n_sys=4, n_cmp=120, seed=3)
    a = bj.leaderboard(df, seed=0, chains=1, draws=20).attrs
    assert (a["tuning_steps"], a["target_accept"]) == (300, 0.8)  # four systems
    many, *_ = simulate(n_sys=100, n_cmp=1500, seed=3)
    a = bj.leaderboard(many, seed=0, chains=1, draws=20).attrs
    assert (a["tuning_steps"], a["target_accept"]) == (300, 0.7)
    a = bj.leaderboard(many, seed=0, chains=1, draws=20, tune=40, target_accept=0.9).attrs
    assert (a["tuning_steps"], a["target_accept"]) == (40, 0.9)
    assert bj.leaderboard(many, seed=0, chains=1, draws=20, tune=20, fast=False).attrs["target_accept"] == 0.8
    labelled, *_ = simulate(n_sys=100, n_cmp=1500, label_share=0.3, seed=3)
    a = bj.leaderboard(labelled, seed=0, chains=1, draws=20, tune=20, bridge=False).attrs
    assert (a["system_bias"], a["target_accept"]) == (1, 0.8)
    votes, *_ = simulate(n_sys=100, n_cmp=1500, alpha=(3.0,), beta=(0.0,), tau=(0.6,), seed=3)
    votes = votes.assign(judge="human").drop(columns="human")
    a = bj.leaderboard(votes, seed=0, chains=1, draws=20).attrs
    assert (a["tuning_steps"], a["target_accept"]) == (SAMPLING.tune, 0.7)
    a = bj.leaderboard(votes[votes["a"].isin(votes["a"].unique()[:50]) & votes["b"].isin(votes["a"].unique()[:50])],
                       seed=0, chains=1, draws=20).attrs
    assert a["target_accept"] == 0.8  # fewer than 100 systems


def test_arena_votes_use_plain_davidson_bt():
    df, s, *_ = simulate(n_sys=6, n_cmp=400, alpha=(3.0,), beta=(0.0,), tau=(0.6,), seed=5)
    df = df.assign(judge="human").drop(columns="human")
    idata = bj.leaderboard(df, seed=0, **FAST)
    assert idata.attrs["model"] == "bt"
    assert "nu" in idata.posterior and "q" not in idata.posterior
    summ = bj.leaderboard_summary(idata)
    assert kendalltau(summ["mean"], s[summ["system"]]).statistic >= 0.6


def test_single_extreme_comparison_gives_finite_scores():
    df = pd.DataFrame({"item": ["x", "x"], "a": ["s1", "s2"], "b": ["s2", "s1"], "p_a": [0.9999, 0.0001]})
    summ = bj.leaderboard_summary(bj.leaderboard(df, seed=0, **FAST))
    assert np.isfinite(summ[["mean", "hdi_low", "hdi_high"]].to_numpy()).all()
    assert summ["mean"].abs().max() < 10 and summ.loc[0, "system"] == "s1"


# -- bad input --------------------------------------------------------------------------------


def _alpaca_design(n=120, seed=0):
    """AlpacaEval: every system against one baseline that is always shown second."""
    rng = np.random.default_rng(seed)
    sysn = rng.choice(["m1", "m2", "m3"], n)
    return pd.DataFrame({"item": np.arange(n).astype(str), "a": sysn, "b": "baseline",
                         "winner": rng.choice(["a", "b"], n)})


def test_a_system_always_in_one_position_is_an_error_not_a_silent_debias():
    df = _alpaca_design()
    assert not position_identified(encode_leaderboard(df)).any()
    with pytest.raises(PositionBiasNotIdentifiedError, match="always shown second|not identified"):
        bj.leaderboard(df, **FAST)
    idata = bj.leaderboard(df, position_bias=False, seed=0, **FAST)
    assert "beta" not in idata.posterior and idata.attrs["position_bias"] == 0


def test_disconnected_systems():
    df = pd.DataFrame({"item": ["1", "2", "3", "4"], "a": ["x", "y", "u", "v"], "b": ["y", "x", "v", "u"],
                       "winner": ["a", "b", "a", "b"]})
    with pytest.raises(ValueError, match="never compared"):
        bj.leaderboard(df, **FAST)


def test_a_judge_that_always_names_one_position():
    df, *_ = simulate(n_cmp=100, seed=1)
    df.loc[df["judge"] == "j1", "winner"] = "a"
    with pytest.raises(ValueError, match="j1.*first \\(A\\) position"):
        bj.leaderboard(df, **FAST)


def test_human_labels_on_unknown_systems_and_contradictions():
    df, *_ = simulate(n_cmp=60, seed=2)
    lab = pd.DataFrame({"item": ["q0"], "a": ["S000"], "b": ["NOPE"], "human": ["a"]})
    with pytest.raises(ValueError, match="not in the judgments table.*NOPE"):
        bj.leaderboard(df, human=lab, **FAST)
    row = df.iloc[0]
    clash = pd.DataFrame({"item": [row["item"]] * 2, "a": [row["a"], row["b"]], "b": [row["b"], row["a"]],
                          "human": ["a", "a"]})
    with pytest.raises(ValueError, match="contradict"):
        bj.leaderboard(df, human=clash, **FAST)


@pytest.mark.filterwarnings("ignore:sampler='laplace'")  # 60 comparisons: the Gaussian may be far; counts only
def test_human_labels_from_the_column_and_the_table_together():
    """Labels in the table's own ``human`` column are kept when ``human=`` adds more (a contradiction
    between the two is an error), and ``human=`` ids read as the table's (1.0 is item "1")."""
    df, *_ = simulate(n_cmp=60, seed=2)
    df = df.drop(columns="human", errors="ignore")
    first = df.drop_duplicates(["item", "a", "b"]).iloc[:20]
    col = first[["item", "a", "b"]].assign(human=["a", "b"] * 10)
    with_col = df.merge(col, on=["item", "a", "b"], how="left")
    assert bj.leaderboard(with_col, sampler="laplace", system_bias=False).attrs["n_labels"] == 20
    extra = df.drop_duplicates(["item", "a", "b"]).iloc[20:25][["item", "a", "b"]].assign(human="a")
    fit = bj.leaderboard(with_col, human=extra, sampler="laplace", system_bias=False)
    assert fit.attrs["n_labels"] == 25
    clash = col.iloc[:1].assign(human=lambda d: np.where(d["human"] == "a", "b", "a"))
    with pytest.raises(ValueError, match="contradict"):
        bj.leaderboard(with_col, human=clash, sampler="laplace", system_bias=False)
    numbered = df.assign(item=pd.factorize(df["item"])[0])
    lab = numbered.drop_duplicates(["item", "a", "b"]).iloc[:20][["item", "a", "b"]].assign(human="a")
    for h in (lab, lab.assign(item=lab["item"].astype(float))):
        assert bj.leaderboard(numbered, human=h, sampler="laplace", system_bias=False).attrs["n_labelled_rows"] > 0


def test_missing_covariate_and_unknown_model():
    df, *_ = simulate(n_cmp=60, seed=2)
    with pytest.raises(ValueError, match="covariate column 'len_diff'"):
        bj.leaderboard(df, covariates=["len_diff"], **FAST)
    with pytest.raises(ValueError, match="no leaderboard model named 'nope'"):
        bj.leaderboard(df, model="nope", **FAST)


@pytest.mark.slow
def test_difficulty_and_covariates_run():
    df, *_ = simulate(n_sys=5, n_cmp=150, seed=6)
    df["len_diff"] = np.random.default_rng(0).normal(0, 1, len(df))
    idata = bj.leaderboard(df, difficulty=True, covariates=["len_diff"], seed=0, **FAST)
    assert {"u", "difficulty_sd", "effect"} <= set(idata.posterior)
    assert idata.posterior["effect"].shape[-1] == 1


def test_cli_leaderboard_on_an_arena_export(tmp_path, capsys):
    from bayes_judge.cli import main

    df, s, *_ = simulate(n_sys=5, n_cmp=300, alpha=(3.0,), beta=(0.0,), tau=(0.6,), both_orders=False, seed=8)
    arena = pd.DataFrame({"model_a": df["a"], "model_b": df["b"],
                          "winner": df["winner"].map({"a": "model_a", "b": "model_b", "tie": "tie (bothbad)"})})
    path = tmp_path / "arena.jsonl"
    arena.to_json(path, orient="records", lines=True)
    out = tmp_path / "lb"
    assert main(["leaderboard", str(path), "--draws", "300", "--chains", "2", "--csv", str(tmp_path / "lb.csv"),
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "leaderboard, bt:" in text and "p_best" in text
    table = pd.read_csv(tmp_path / "lb.csv")
    assert kendalltau(table["mean"], s[table["system"]]).statistic >= 0.6
    assert bj.load_run(out).attrs["task"] == "leaderboard"
    # unknown winner values are a one-line error naming them
    arena.loc[0, "winner"] = "model_c"
    arena.to_json(path, orient="records", lines=True)
    with pytest.raises(SystemExit) as exc:
        main(["leaderboard", str(path), "--out", str(tmp_path / "x")])
    assert exc.value.code == 2 and "'model_c'" in capsys.readouterr().err


def test_covariates_of_human_labels_follow_the_labels_orientation():
    """A label given as (b, a) with covariate x counts as the comparison (a, b) with −x; labels on
    comparisons no judge saw take the human table's covariates."""
    df, *_ = simulate(n_sys=4, n_cmp=40, seed=9)
    df = df.drop(columns="human")
    df["x"] = np.where(df["a"] < df["b"], 1.0, -1.0)  # lo − hi = +1 for every judged comparison
    row = df.iloc[0]
    lo, hi = sorted([row["a"], row["b"]])
    human = pd.DataFrame({"item": [row["item"], "new"], "a": [hi, "S001"], "b": [lo, "S000"], "human": ["a", "a"],
                          "x": [-7.0, 2.0]})
    data = encode_leaderboard(df, human=human, covariates=["x"])
    got = {(data.systems[i], data.systems[j]): x for i, j, x in zip(data.hum_a, data.hum_b, data.hum_x[:, 0],
                                                                    strict=True)}
    assert got[(lo, hi)] == 1.0  # from the judgments, oriented lo − hi
    assert got[("S000", "S001")] == -2.0  # no judge saw it: the human table's value, turned to lo − hi
    with pytest.raises(ValueError, match="need their covariate"):
        encode_leaderboard(df, human=human.drop(columns="x"), covariates=["x"])


def test_leaderboard_names_its_estimand():
    """estimand="judges" is the panel's own preference (model "bt"); the default is people's."""
    df = bj.simulate_win_rate(40, p=0.7, q0=[0.8, 0.75], swap=True, seed=1).drop(columns="human")
    kw = dict(chains=2, draws=100, tune=100, seed=0)
    judges = bj.leaderboard(df, estimand="judges", position_bias=False, **kw)
    assert judges.attrs["model"] == "bt" and judges.attrs["estimand"] == "judges"
    assert bj.leaderboard_summary(judges).attrs["estimand"] == "judges"
    with pytest.raises(ValueError, match="estimand='judges' takes the panel's verdicts"):
        bj.leaderboard(df, estimand="judges", model="bt-judges", **kw)
    with pytest.raises(ValueError, match="that is estimand='judges'"):
        bj.leaderboard(df, estimand="human", model="bt", **kw)
    with pytest.raises(ValueError, match="estimand must be"):
        bj.leaderboard(df, estimand="people", **kw)


def test_judges_only_human_scores_say_what_they_cannot_cover():
    df = bj.simulate_win_rate(40, p=0.7, q0=[0.8, 0.75], swap=True, seed=1).drop(columns="human")
    fit = bj.leaderboard(df, chains=2, draws=100, tune=100, seed=0, bridge=False)  # the judges' reading as it is
    assert fit.attrs["estimand"] == "human" and "add labels (human=)" in fit.attrs["estimand_note"]
    from bayes_judge.cli.commands import run_notes

    assert any("a preference all judges share is not in the intervals" in line for line in run_notes(fit))


@pytest.mark.parametrize("case", ["votes", "judges with labels"])
def test_laplace_agrees_with_nuts(case):
    """Issue 34: sampler="laplace" (the mode, the curvature there, importance-resampled) gives the
    intervals NUTS gives: endpoints within 10% of NUTS's interval width (the issue's target, 95%
    of the systems, is measured by benchmarks/bench_leaderboard_laplace.py: 100%); here >= 90% of
    30 systems, as NUTS's own endpoints move by 5-8% of the width between seeds."""
    if case == "votes":  # people's votes, Bradley-Terry-Davidson: nearly Gaussian
        df, _ = simulate_leaderboard(30, 8000, alpha=(3.0,), beta=(0.0,), tau=(0.4,), design="one-judge", seed=5)
        df, kw = df.drop(columns="human").assign(judge="human"), {}
    else:  # judges read through their accuracy, labels fixing the scale: skewed, corrected
        df, _ = simulate_leaderboard(30, 12000, **THREE_JUDGES,
                                     design="one-judge", label_share=0.1, seed=5)
        kw = {"system_bias": False, "bridge": False}  # the one joint model both approximate
    lap = bj.leaderboard(df, sampler="laplace", seed=1, pointwise=False, **kw)
    nuts = bj.leaderboard(df, seed=1, chains=4, draws=1000, tune=1000, pointwise=False, **kw)
    a = bj.leaderboard_summary(lap).set_index("system")
    b = bj.leaderboard_summary(nuts).set_index("system").loc[a.index]
    width = b["hdi_high"] - b["hdi_low"]
    err = np.maximum((a["hdi_low"] - b["hdi_low"]).abs(), (a["hdi_high"] - b["hdi_high"]).abs()) / width
    assert (err <= 0.1).mean() >= 0.9 and err.max() <= 0.2, err.round(3).to_dict()
    assert lap.attrs["sampler"] == "laplace" and "importance" in a.attrs["approximate"]
    assert "approximate" not in b.attrs
    assert lap.posterior["s"].shape == nuts.posterior["s"].shape  # 4 chains x 1000 draws by default


def test_laplace_weighs_in_single_precision_where_the_sampler_would(monkeypatch):
    """The importance weights come from the cells in single precision where the table qualifies
    (large tables: ``_SINGLE_MIN`` lowered here so a small one does), the mode and curvature from
    double precision; the intervals are those of weights in double precision."""
    import bayes_judge.inference.laplace as laplace_mod
    from bayes_judge.inference.kernels import leaderboard as lb_kernel

    df, _ = simulate_leaderboard(30, 12000, **THREE_JUDGES,
                                 design="one-judge", label_share=0.1, seed=5)
    kw = dict(sampler="laplace", seed=1, pointwise=False, system_bias=False)
    double = bj.leaderboard_summary(bj.leaderboard(df, **kw)).set_index("system")
    seen, inner = [], laplace_mod.laplace_draws

    def spy(*args, **kwargs):
        seen.append(kwargs.get("weigh"))
        return inner(*args, **kwargs)

    monkeypatch.setattr(laplace_mod, "laplace_draws", spy)
    monkeypatch.setattr(lb_kernel, "_SINGLE_MIN", 100)
    single = bj.leaderboard_summary(bj.leaderboard(df, **kw)).set_index("system").loc[double.index]
    assert seen and seen[0] is not None and seen[0][1][18] == 1.0  # a single-precision buffer weighed them
    width = double["hdi_high"] - double["hdi_low"]
    # the rounding moves a few resampled draws (systematic resampling reads the weights' running
    # sum): Monte Carlo differences, well inside the 10% of the width the Laplace target allows
    assert ((single["mean"] - double["mean"]).abs() / width).max() < 0.03
    for col in ("hdi_low", "hdi_high"):
        assert ((single[col] - double[col]).abs() / width).max() < 0.1, col


def test_a_resampled_laplace_fit_reports_the_importance_ess():
    """Resampled draws repeat their proposals (4,000 draws from 2,000 weighed): the ESS read off
    them (~4,000) overstated the Monte Carlo precision; the summary caps it at the importance ESS."""
    df, _ = simulate_leaderboard(8, 3000, alpha=(1.0, 0.5), seed=1, label_share=0.3)
    fit = bj.leaderboard(df, sampler="laplace", chains=4, draws=1000, seed=0)  # CountedTwiceWarning: filtered
    cap = fit.attrs["ess_importance"]
    assert "resampled to 4000 draws" in fit.attrs["approximate"] and 500 < cap < 4000
    assert (bj.leaderboard_summary(fit)["ess_bulk"] <= cap).all()


def test_laplace_says_when_it_fails_and_refuses_what_it_cannot_approximate():
    # judges without labels: accuracy against spread, a ridge no Gaussian follows
    df, _ = simulate_leaderboard(40, 15000, **THREE_JUDGES,
                                 design="one-judge", seed=5)
    with pytest.warns(RuntimeWarning, match="Gaussian approximation is far from this posterior"):
        lap = bj.leaderboard(df.drop(columns="human"), sampler="laplace", pointwise=False)
    assert "NOT corrected" in bj.leaderboard_summary(lap).attrs["approximate"]
    df, *_ = simulate(label_share=0.2, seed=4)
    with pytest.raises(ValueError, match="hierarchical scale's mode is at 0"):
        bj.leaderboard(df, sampler="laplace", system_bias=True)  # asked for: the judges' own preferences, pooled
    fit = bj.leaderboard(df, sampler="laplace", pointwise=False)  # by default laplace leaves them out, and says so
    assert "without the judges' own system preferences" in fit.attrs["approximate"]
    assert "delta" not in fit.posterior and "system_bias_sd" not in fit.posterior
    with pytest.raises(ValueError, match="needs a model with a hand-written kernel"):
        bj.leaderboard(df.drop(columns="human"), sampler="laplace", difficulty=True)


def test_an_update_with_new_battles_equals_a_fit_of_all_of_them(tmp_path):
    """Issue 34 item 2: previous= adds battles (and a new system) to an earlier fit from its cells;
    the posterior is a cold fit's of all the rows, within Monte Carlo error."""
    df, _ = simulate_leaderboard(9, 3000, alpha=(2.0, 1.0), beta=(0.3, -0.2), tau=(0.0, 0.4), design="one-judge",
                                 label_share=0.1, seed=8)
    late = df["a"].eq("S008") | df["b"].eq("S008")  # S008 arrives with the new battles
    old, new = df[~late].iloc[:2000], pd.concat([df[~late].iloc[2000:], df[late]])
    first = bj.leaderboard(old, seed=1, pointwise=False)
    assert "S008" not in first.posterior["system"]
    path = bj.save_run(first, tmp_path / "lb")
    upd = bj.leaderboard(new, previous=path, seed=2, pointwise=False)
    cold = bj.leaderboard(df, seed=2, pointwise=False)
    a = bj.leaderboard_summary(upd).set_index("system")
    b = bj.leaderboard_summary(cold).set_index("system").loc[a.index]
    assert "S008" in a.index and upd.attrs["n_rows"] == cold.attrs["n_rows"] == len(df)
    se = np.hypot(a["sd"], b["sd"]) / np.sqrt(a["ess_bulk"].clip(upper=b["ess_bulk"]))
    assert ((a["mean"] - b["mean"]).abs() < 4.5 * se + 0.01).all()
    assert np.allclose(a["sd"], b["sd"], rtol=0.15)
    assert "previous fit of 2000 rows" in upd.attrs["updated_from"]


def test_an_update_moves_the_earlier_nuts_draws_where_they_serve():
    """Issue 34's update target: with new battles among the same systems the earlier fit's NUTS
    draws, moved onto the new posterior by the map between the two Laplace approximations and
    importance-resampled, give a cold fit's posterior within Monte Carlo error, and say so; moved
    draws are not moved again, transport=False samples afresh, and a new system is sampled."""
    df, _ = simulate_leaderboard(30, 20_000, **THREE_JUDGES, design="one-judge", seed=4)
    df = df.drop(columns="human")
    first = bj.leaderboard(df.iloc[:16_000], seed=1, pointwise=False)
    assert first.attrs["sampler"] == "nutpie (fast path)" and "s_raw_mean" in first.sample_stats
    upd = bj.leaderboard(df.iloc[16_000:18_000], previous=first, seed=2, pointwise=False)
    cold = bj.leaderboard(df.iloc[:18_000], seed=2, pointwise=False)
    assert upd.attrs["sampler"] == "transport of the earlier nutpie draws (fast path)"
    assert "importance-resampled within each chain" in upd.attrs["updated_from"]
    assert "tuning_steps" not in upd.attrs and 2000 <= upd.attrs["ess_importance"] <= 4000
    assert upd.attrs["n_rows"] == cold.attrs["n_rows"] == 18_000
    _same_posterior(upd, cold)
    summ = bj.leaderboard_summary(upd)
    assert summ["ess_bulk"].max() <= upd.attrs["ess_importance"] and summ["r_hat"].max() < 1.02
    # the log density the sampler recorded, or evaluated again: the same weights
    bare = first.copy()
    del bare.sample_stats["s_raw_mean"]
    again = bj.leaderboard(df.iloc[16_000:18_000], previous=bare, seed=2, pointwise=False)
    assert again.attrs["ess_importance"] == pytest.approx(upd.attrs["ess_importance"], rel=1e-3)
    # moved draws repeat some; moved again they would repeat more: sampled afresh, and said why
    third = bj.leaderboard(df.iloc[18_000:], previous=upd, seed=3, pointwise=False)
    assert third.attrs["sampler"] == "nutpie (fast path)"
    assert "sampled afresh by NUTS" in third.attrs["updated_from"] and "not NUTS draws" in third.attrs["updated_from"]
    plain = bj.leaderboard(df.iloc[16_000:18_000], previous=first, seed=2, pointwise=False, transport=False)
    assert plain.attrs["sampler"] == "nutpie (fast path)" and plain.attrs["tuning_steps"] == 300
    # a new system: its score drawn from the new Laplace approximation given the moved draws, weighed with them
    late = df.iloc[18_000:].assign(a="S999")
    newcomer = bj.leaderboard(late, previous=first, seed=2, pointwise=False)
    assert newcomer.attrs["sampler"].startswith("transport") and "S999" in newcomer.posterior["system"]
    _same_posterior(newcomer, bj.leaderboard(pd.concat([df.iloc[:16_000], late]), seed=2, pointwise=False))


def test_an_update_moves_the_judges_own_system_preferences(monkeypatch):
    """With ``system_bias`` (a hierarchical scale, which no Laplace approximation covers) the
    earlier draws move too: the scale held where it is, the rest between each draw's conditional
    modes (transport_draws(held=)); the same posterior as a cold fit within Monte Carlo error,
    and also from a fit that kept no delta_raw_mean (drawn from its posterior, the log density
    evaluated again)."""
    df, _ = simulate_leaderboard(30, 20_000, **THREE_JUDGES, design="one-judge", seed=4)
    df = df.drop(columns="human")
    from bayes_judge.inference.kernels.leaderboard import fast_path

    first = bj.leaderboard(df.iloc[:16_000], seed=1, pointwise=False, system_bias=True, bridge=False)
    assert first.sample_stats["delta_raw_mean"].dims == ("chain", "draw", "judge")
    # the raw draws rebuilt from δ, its scale and delta_raw_mean are the sampled ones (or their mirror):
    # the log density the sampler recorded serves, checked on 16 draws (else evaluated again)
    recorded = []
    move = fast_path.transport

    def watched(*args, **kwargs):
        out = move(*args, **kwargs)
        recorded.append(out[2].get("lp_recorded"))
        return out

    monkeypatch.setattr(fast_path, "transport", watched)
    upd = bj.leaderboard(df.iloc[16_000:18_000], previous=first, seed=2, pointwise=False)
    assert upd.attrs["sampler"] == "transport of the earlier nutpie draws (fast path)", upd.attrs["updated_from"]
    assert upd.attrs["system_bias"] == 1 and 2000 <= upd.attrs["ess_importance"] <= 4000
    cold = bj.leaderboard(df.iloc[:18_000], seed=2, pointwise=False, system_bias=True, bridge=False)
    for var in ("s", "alpha", "beta", "system_bias_sd", "delta"):
        a, b = (f.posterior[var].to_numpy().reshape(4000, -1) for f in (upd, cold))
        se = np.hypot(a.std(0), b.std(0)) / np.sqrt(1000)
        assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se), var
        assert np.allclose(a.std(0), b.std(0), rtol=0.15), var
    bare = first.copy()
    del bare.sample_stats["delta_raw_mean"]
    again = bj.leaderboard(df.iloc[16_000:18_000], previous=bare, seed=2, pointwise=False)
    assert again.attrs["sampler"].startswith("transport") and again.attrs["ess_importance"] >= 2000
    assert recorded == [True, False]


def test_an_update_with_labels_moves_the_bridge_too(monkeypatch):
    """With labels (the default score bridge learnt from them) the bridge's NUTS draws are moved
    onto the new posterior as the judges' are: people's scores as a cold fit's within Monte Carlo
    error, said in updated_from; bridge draws that were moved are not moved again."""
    df, _ = simulate_leaderboard(20, 16_000, **THREE_JUDGES, design="one-judge", label_share=0.1, seed=5)
    first = bj.leaderboard(df.iloc[:14_000], seed=1, pointwise=False)
    assert first.attrs["n_labels"] > 1000 and "bridge_lambda" in first.posterior
    upd = bj.leaderboard(df.iloc[14_000:], previous=first, seed=2, pointwise=False)
    cold = bj.leaderboard(df, seed=2, pointwise=False)
    assert "the score bridge's draws moved likewise" in upd.attrs["updated_from"] and upd.attrs["bridge_moved"] == 1
    assert 2000 <= upd.attrs["ess_importance"] <= 4000
    for var in ("s", "bridge_lambda"):
        a, b = (f.posterior[var].to_numpy().reshape(4000, -1) for f in (upd, cold))
        se = np.hypot(a.std(0), b.std(0)) / np.sqrt(1000)
        assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se), var
        assert np.allclose(a.std(0), b.std(0), rtol=0.12), var
    again = bj.leaderboard(df.iloc[15_000:].assign(item=lambda d: d["item"].astype(str) + "x"), previous=upd, seed=3,
                           pointwise=False)
    assert "the score bridge sampled afresh by NUTS: the earlier fit's bridge draws were themselves moved" \
        in again.attrs["updated_from"]
    # where transport_draws kept its shift by the weighted mean, updated_from says so, for the bridge too
    from bayes_judge.inference import transport

    plain = transport.transport_draws

    def shifted(*args, **kwargs):
        y, lp, w, info = plain(*args, **kwargs)
        return y, lp, w, {**info, "mean_shifted": True}

    monkeypatch.setattr(transport, "transport_draws", shifted)
    said = bj.leaderboard(df.iloc[14_000:], previous=first, seed=2, pointwise=False).attrs["updated_from"]
    assert said.count("after one shift by the weighted mean") == 2, said


def test_an_update_with_few_labels_a_system_moves_the_bridge_too():
    """Where the labels are too few a system for the bridge to sample the scores where they are
    (it samples them non-centred, in coordinates the update turns), its draws are still moved: on
    the centred coordinates, τ held where each draw has it (its joint mode with the scores is the
    corner τ → 0), the rest between its modes given τ; a cold fit's posterior within Monte Carlo
    error."""
    from bayes_judge.inference.kernels import bridge as kernel
    from bayes_judge.leaderboard.bridge import SCORE_BRIDGE

    df, _ = simulate_leaderboard(20, 16_000, **THREE_JUDGES, design="one-judge", label_share=0.01, seed=5)
    first = bj.leaderboard(df.iloc[:14_400], seed=1, pointwise=False)
    buf = kernel.pack_data(first.posterior["s_judges"].to_numpy().reshape(4000, -1), first.constant_data["hum_a"],
                           first.constant_data["hum_b"], first.observed_data["human_counts"].to_numpy(), SCORE_BRIDGE)
    assert kernel.n_dim(buf) == 20 + 1  # the kernel's own rule sampled it non-centred (ξ: N − 1, log λ, log τ)
    upd = bj.leaderboard(df.iloc[14_400:], previous=first, seed=2, pointwise=False)
    assert "the score bridge's draws moved likewise" in upd.attrs["updated_from"], upd.attrs["updated_from"]
    cold = bj.leaderboard(df, seed=2, pointwise=False)
    for var in ("s", "bridge_lambda", "bridge_tau"):
        a, b = (f.posterior[var].to_numpy().reshape(4000, -1) for f in (upd, cold))
        se = np.hypot(a.std(0), b.std(0)) / np.sqrt(1000)
        assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se), var
        assert np.allclose(a.std(0), b.std(0), rtol=0.12), var


def _same_posterior(a_fit, b_fit):
    """The judges' reading and the judges of two fits agree within Monte Carlo error (both ESS
    over 1,000 here)."""
    for var in ("s_judges", "alpha", "beta"):
        a = a_fit.posterior[var].to_numpy().reshape(4000, -1)
        b = b_fit.posterior[var].sel(system=a_fit.posterior["system"]).to_numpy().reshape(4000, -1) \
            if var == "s_judges" else b_fit.posterior[var].to_numpy().reshape(4000, -1)
        se = np.hypot(a.std(0), b.std(0)) / np.sqrt(1000)
        assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se), var
        assert np.allclose(a.std(0), b.std(0), rtol=0.12), var


def test_an_update_refuses_what_it_cannot_add():
    df, _ = simulate_leaderboard(6, 600, alpha=(2.0, 1.0), beta=(0.3, -0.2), tau=(0.0, 0.4), design="one-judge", seed=9)
    first = bj.leaderboard(df, pointwise=False, **FAST)
    with pytest.raises(ValueError, match=r"judge\(s\) \['j9'\] that the previous fit did not have"):
        bj.leaderboard(df.assign(judge="j9"), previous=first)
    with pytest.raises(ValueError, match="was fitted with model 'bt-judges', not 'bt'"):
        bj.leaderboard(df.assign(judge="human"), previous=first, model="bt")
    island = pd.DataFrame({"item": ["x", "y"], "a": ["N1", "N2"], "b": ["N2", "N1"], "judge": "j0",
                           "winner": ["a", "b"]})
    with pytest.raises(ValueError, match="N1"):  # new systems that never met the old ones
        bj.leaderboard(island, previous=first)
    wr = bj.win_rate(bj.simulate_win_rate(30, p=0.6, q0=[0.8], q1=[0.8], seed=1), method="observed")
    with pytest.raises(ValueError, match="previous= must be a leaderboard run"):
        bj.leaderboard(df, previous=wr)


def test_an_update_counts_each_row_and_label_once_and_keeps_the_fit_s_settings(tmp_path):
    """previous= counted rows and labels passed again a second time (intervals as of a table fitted
    twice), refused new battles that connect only through the earlier fit's systems, and dropped
    its position bias and score bridge settings for the defaults."""
    lap = {"sampler": "laplace", "chains": 2, "draws": 200, "seed": 0, "pointwise": False}
    df, _ = simulate_leaderboard(4, 200, label_share=0.3, seed=5)
    first = bj.leaderboard(df, bridge=False, **lap)
    path = bj.save_run(first, tmp_path / "lb")
    fresh = df.drop(columns="human").assign(item=df["item"].astype(str) + "-new")
    for prev in (first, path):  # in memory and from a saved run
        with pytest.raises(ValueError, match=r"800 of the 800 new rows were already counted"):
            bj.leaderboard(df, previous=prev, bridge=False, **lap)
    labels = df[df["human"].notna()][["item", "a", "b", "human"]]
    n_lab = first.attrs["n_labels"]
    with pytest.raises(ValueError, match=rf"{n_lab} of the {n_lab} new human labels were already counted"):
        bj.leaderboard(fresh.iloc[:40], human=labels, previous=first, bridge=False, **lap)
    # new battles between old systems only, in two groups that the earlier fit connects
    systems = sorted(set(df["a"]))
    judges = sorted(set(df["judge"]))
    two = pd.DataFrame([{"item": f"n{i}", "a": x, "b": y, "judge": j,  # the same text wins both orders,
                         "winner": "a" if (x == p) == bool((i + k + e) % 3) else "b"}  # each judge its own
                        for i in range(5) for k, (p, q) in enumerate(((systems[0], systems[1]), (systems[2], systems[3])))
                        for x, y in ((p, q), (q, p)) for e, j in enumerate(judges)])
    upd = bj.leaderboard(two, previous=first, bridge=False, **lap)
    assert upd.attrs["n_rows"] == first.attrs["n_rows"] + len(two)
    # the earlier fit's settings carry over; contradicting them is refused
    plain = bj.leaderboard(df, position_bias=False, bridge=False, **lap)  # with labels: Laplace holds
    kept = bj.leaderboard(fresh.iloc[:40], previous=plain, **lap)
    assert kept.attrs["position_bias"] == 0 and "score_bridge" not in kept.attrs and "beta" not in kept.posterior
    with pytest.raises(ValueError, match="fitted with position_bias=False, this update asks position_bias=True"):
        bj.leaderboard(fresh.iloc[:40], previous=plain, position_bias=True, **lap)


def test_an_update_counts_comparisons_once_and_keeps_judgments_with_their_labels():
    """A review's findings: in the joint model (labels without the score bridge) judgments in the
    new rows of a comparison labelled in the earlier fit were read as unlabelled (S004 off by 0.07,
    every sd 10% narrower than a fit of all the rows); comparisons judged in both fits were counted
    twice (n_comparisons 2,000 for 1,000), which hid the warning that the joint model counts a
    comparison's judgments as independent; a table with sample 0 repeated rows counted without
    one; a ranking fit or a DataFrame as previous= got errors about priors or pathlib."""
    from bayes_judge.leaderboard.board import CountedTwiceWarning

    lap = {"sampler": "laplace", "chains": 2, "draws": 200, "seed": 0, "pointwise": False, "bridge": False}
    df, _ = simulate_leaderboard(6, 1000, alpha=(2.0, 1.0), beta=(0.3, -0.2), design="one-order", label_share=0.3,
                                 seed=3)
    i = df["item"].astype(int)
    first = (df["judge"] == "j0") == (i < 500)  # each comparison: one judge in each fit
    with pytest.warns(CountedTwiceWarning):
        full = bj.leaderboard(df, **lap)
    assert full.attrs["n_comparisons"] == 1000
    old = bj.leaderboard(df[first], **lap)  # one judge's half of each comparison, with the labels
    with pytest.raises(ValueError, match=r"\d+ comparison\(s\) have their judgments in one fit and their human"):
        bj.leaderboard(df[~first].drop(columns="human"), previous=old, **lap)
    # no labels anywhere: the same comparisons judged in both fits count once
    plain = df.drop(columns="human")
    old = bj.leaderboard(plain[first], **lap)
    upd = bj.leaderboard(plain[~first], previous=old, **lap)
    assert upd.attrs["n_comparisons"] == 1000 and upd.attrs["n_rows"] == 2000
    # a table without 'sample' is sample 0: the same rows with sample=0 were counted again
    with pytest.raises(ValueError, match="50 of the 50 new rows were already counted"):
        bj.leaderboard(plain[first].iloc[:50].assign(sample=0), previous=old, **lap)
    # a dozen new verdicts that all name A are a batch, not a judge that follows the position
    batch = plain[~first].iloc[:12].assign(winner="a", item=lambda d: d["item"].astype(str) + "-late")
    with pytest.warns(UserWarning, match="leaderboard update \\(its 12 new rows alone"):
        assert bj.leaderboard(batch, previous=old, **lap).attrs["n_rows"] == 1012
    # a judge naming A in 8 rows of the earlier fit and 8 of the update: 16 of 16 over both fits
    j1 = plain[first & (plain["judge"] == "j1")]
    j0 = plain[plain["judge"] == "j0"].assign(winner="a")
    few = bj.leaderboard(pd.concat([j1, j0.iloc[:8]]), position_bias=False, **lap)
    with pytest.raises(ValueError, match=r"judge 'j0' names the first \(A\) position in all 16 .* earlier fit"):
        bj.leaderboard(j0.iloc[8:16], previous=few, **lap)
    # soft verdicts count by their side of 1/2, as a fresh fit's screening counts them (a p_a of 0.9
    # every time names A every time; its cells' soft sums have some B)
    soft = j0.drop(columns="winner").assign(p_a=0.9)
    with warnings.catch_warnings():  # 400 draws of a small fit: its Laplace check is not what is tested
        warnings.simplefilter("ignore", RuntimeWarning)
        few = bj.leaderboard(pd.concat([j1, soft.iloc[:8]]), position_bias=False, **lap)
    with pytest.raises(ValueError, match=r"judge 'j0' names the first \(A\) position in all 16"):
        bj.leaderboard(soft.iloc[8:16], previous=few, **lap)
    nuts = bj.leaderboard(df[first], system_bias=True, chains=2, draws=100, tune=100, seed=0, pointwise=False,
                          bridge=False)
    with pytest.raises(ValueError, match="update it with NUTS"):  # its advice led to another refusal
        bj.leaderboard(plain[~first], previous=nuts, **lap)
    with pytest.raises(TypeError, match="previous= takes an earlier leaderboard fit"):
        bj.leaderboard(plain[~first], previous=plain[first], **lap)
    ranked = bj.rank(plain[first].iloc[:300].rename(columns={"item": "ctx"}).assign(item=lambda d: d["ctx"]),
                     method="bt", bayesian=True, sampler="laplace", seed=0, debias=False)
    with pytest.raises(ValueError, match="previous= must be a leaderboard run"):
        bj.leaderboard(plain[~first], previous=ranked, **lap)


def test_the_simulator_s_position_mechanisms():
    """Issue 34 item 4: a judge's position bias as the model's shift, a fixed chance of naming its
    favoured position without reading, or a shift that grows as the two texts come close."""
    kw = dict(alpha=(2.0, 2.0), tau=0.0, design="one-order", seed=3)
    df, _ = simulate_leaderboard(40, 20000, beta=(0.2, -0.1), position="chance", **kw)
    share = df.assign(a=df["winner"] == "a").groupby("judge")["a"].mean()
    assert share["j0"] == pytest.approx(0.2 + 0.8 * 0.5, abs=0.015)  # named A outright 20% of the time
    assert share["j1"] == pytest.approx(0.9 * 0.5, abs=0.015)
    # the close mechanism biases close pairs only: far-apart pairs are judged as without bias
    scores = np.r_[np.zeros(20), np.full(20, 6.0)]
    df, s = simulate_leaderboard(40, 20000, beta=(1.5, 1.5), scores=scores, position="close", **kw)
    near = (s[df["a"]].to_numpy() == s[df["b"]].to_numpy())
    a_share = (df["winner"] == "a").to_numpy()
    assert a_share[near].mean() == pytest.approx((0.5 * (1 / (1 + np.exp(-3.5)) + 1 / (1 + np.exp(0.5)))), abs=0.02)
    assert abs(a_share[~near].mean() - 0.5) < 0.02
    with pytest.raises(ValueError, match="position must be"):
        simulate_leaderboard(5, 10, position="order")
    with pytest.raises(ValueError, match="probability below 1"):
        simulate_leaderboard(5, 10, beta=(1.5, 0.0), position="chance")


def test_cli_leaderboard_checks_its_options_before_fitting(tmp_path, capsys, monkeypatch):
    from bayes_judge.cli import main

    df, *_ = simulate(n_sys=4, n_cmp=60, seed=3)
    path = tmp_path / "j.csv"
    df.to_csv(path, index=False)
    monkeypatch.setattr(bj, "leaderboard", lambda *a, **k: pytest.fail("fitted before the options were checked"))
    for extra, said in ((["--hdi-prob", "1.5"], "--hdi-prob must lie in [0.01, 1)"),
                        (["--csv", str(tmp_path / "out.xlsx")], "unsupported file type '.xlsx'")):
        with pytest.raises(SystemExit):
            main(["leaderboard", str(path), "--out", str(tmp_path / "lb"), *extra])
        assert said in capsys.readouterr().err


def test_the_summary_keeps_r_hat_unrounded():
    """A convergence check against 1.01 must see 1.014 as 1.014, not 1.01 (az.summary rounds by default)."""
    df, *_ = simulate(n_cmp=80, seed=3)
    s = bj.leaderboard_summary(bj.leaderboard(df, **FAST))
    assert (np.abs(s["r_hat"] * 100 - np.round(s["r_hat"] * 100)) > 1e-9).any()
    assert (np.abs(s["ess_bulk"] - np.round(s["ess_bulk"])) > 1e-9).any()


def test_a_leaderboard_says_when_a_judge_follows_the_position(tmp_path, capsys):
    """win_rate and rank diagnosed their judges; a leaderboard fitted a judge that names position A
    98% of the time with no word, and the CLI summary and the report of a ranking or leaderboard
    run never showed a diagnosis."""
    from bayes_judge.cli import main
    from bayes_judge.diagnose import UninformativeJudgeWarning

    df, _ = simulate_leaderboard(4, 200, alpha=(2.0, 2.0), beta=(0.0, 0.0), tau=(0.0, 0.0), seed=3)
    df = df.drop(columns="human")
    j1 = (df["judge"] == "j1").to_numpy()
    flip = np.random.default_rng(0).random(len(df)) < 0.985
    df.loc[j1 & flip, "winner"] = "a"
    with pytest.warns(UninformativeJudgeWarning, match=r"leaderboard: 1 of 2 judge\(s\).*'j1'.*drop the rows"):
        fit = bj.leaderboard(df, estimand="judges", sampler="laplace", chains=2, draws=200, seed=0)
    assert "position" in fit.attrs["judge_diagnosis"]
    path = bj.save_run(fit, tmp_path / "lb")
    assert main(["summary", str(path)]) == 0
    assert "UNINFORMATIVE JUDGE j1" in capsys.readouterr().out
    html = bj.report(str(path), tmp_path / "r.html").read_text(encoding="utf-8")
    assert "carries no information about the texts" in html and "j1" in html


def test_people_s_votes_beside_llm_judges_are_refused_with_the_way_to_pass_them():
    """Votes of judge 'human' beside an LLM judge were fitted as one more LLM judge (q 0.96) and the
    note said the fit had no labels."""
    df, _ = simulate_leaderboard(5, 400, design="one-judge", label_share=1.0, seed=2)
    votes = df.assign(judge="human", winner=df["human"]).drop(columns="human")
    mixed = pd.concat([votes.iloc[:200], df.drop(columns="human").iloc[200:]], ignore_index=True)
    with pytest.raises(ValueError, match="mixes people's votes .* Pass them as human= labels"):
        bj.leaderboard(mixed, sampler="laplace")


def test_the_joint_model_says_when_it_counts_one_comparison_s_judgments_apart():
    """With labels and no score bridge (bridge=False, or Laplace's default), each judgment draws its own
    human preference: two judges in both orders covered 69% of 90% intervals, with no word."""
    from bayes_judge.leaderboard.board import CountedTwiceWarning

    df, _ = simulate_leaderboard(6, 300, label_share=0.2, seed=3)  # two judges, both orders
    with pytest.warns(CountedTwiceWarning, match="carry 4.0 judgments each"):
        fit = bj.leaderboard(df, sampler="laplace", chains=2, draws=200, seed=0)
    assert "too narrow" in fit.attrs["estimand_note"]
    one, _ = simulate_leaderboard(6, 600, label_share=0.2, design="one-judge", seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CountedTwiceWarning)  # one judgment a comparison: the model's own design
        bj.leaderboard(one, sampler="laplace", chains=2, draws=200, seed=0)


def test_a_judge_that_people_s_labels_contradict_is_named():
    """Judges agreeing with 21% and 32% of people's labels were reported accurate (q 0.79) by the
    judges-only reading, with no word."""
    df, _ = simulate_leaderboard(10, 1500, design="one-judge", alpha=(-1.5, -1.0), beta=(0.3, -0.2), label_share=0.1,
                                 seed=41)
    with pytest.warns(UserWarning, match=r"labels contradict judge\(s\): 'j0' agrees with 21% of 80"):
        bj.leaderboard(df, sampler="laplace", chains=2, draws=100, seed=0)


@pytest.mark.parametrize("model", ["bt-judges", "bt"])
def test_the_dims_table_is_the_declarations_own(model, monkeypatch):
    """A fast-path fit reads its variables' dims from ``leaderboard_models.DIMS`` instead of
    building the PyMC model (PyMC's import and the build, ~0.5 s of a fresh process): under every
    option the model names, every variable it declares has those dims, and a Laplace fit then
    returns without importing PyMC's model (its entry never built)."""
    from bayes_judge.generative import get_model
    from bayes_judge.generative.leaderboard_models import DIMS
    from bayes_judge.inference.fit import _build
    from bayes_judge.leaderboard.encode import LeaderboardData

    df, *_ = simulate(n_sys=5, n_cmp=150, seed=6)
    df["x"] = np.random.default_rng(0).normal(0, 1, len(df))
    spec = get_model(model, "leaderboard")
    for difficulty, cov, bias, system_bias, ties in [(False, [], True, True, (0,)), (True, ["x"], False, False, ())]:
        data = encode_leaderboard(df, difficulty=difficulty, covariates=cov)
        coords = data.coords()
        coords["tie_judge"] = [data.judges[e] for e in ties] or ["none"]
        options = {"position_bias": bias, "tie_judges": ties, "n_judges": len(data.judges), "difficulty": difficulty,
                   "n_cov": len(cov)}
        if model == "bt-judges":
            options["system_bias"] = system_bias
        m = _build(spec, data.arrays(), LeaderboardData.DIMS, coords, spec.default_priors(), False, options)
        declared = [v.name for v in (*m.free_RVs, *m.deterministics)]
        assert declared and all(DIMS[k] == tuple(m.named_vars_to_dims.get(k, ())) for k in declared), declared
    import bayes_judge.inference.fit as fit_mod

    built: list[int] = []
    real = fit_mod._entry
    monkeypatch.setattr(fit_mod, "_entry", lambda *a, **k: built.append(1) or real(*a, **k))
    idata = bj.leaderboard(df.drop(columns="human"), model=model, sampler="laplace", pointwise=False,
                           system_bias=False if model == "bt-judges" else None)
    assert not built and idata.posterior["s"].dims == ("chain", "draw", "system")


def test_labels_from_the_table_and_from_a_human_table_are_the_same_comparisons():
    """The rows' item codes come from the validation and a label's from its row; a ``human=``
    table's items are looked up among the rows' (or coded after them where no judge saw them): the
    same labels given either way are the same comparisons (keys, human cells, labelled rows), and
    labels on unseen items are comparisons of their own."""
    df, _ = simulate_leaderboard(8, 600, label_share=0.3, design="one-judge", seed=4)
    human = df.loc[df["human"].notna(), ["item", "a", "b", "human"]]
    a = encode_leaderboard(df)
    b = encode_leaderboard(df.drop(columns="human"), human=human)
    assert sorted(a.label_keys) == sorted(b.label_keys) and a.meta["n_labelled_rows"] == b.meta["n_labelled_rows"] > 0
    assert np.array_equal(a.hum_n, b.hum_n) and np.array_equal(a.h, b.h)
    codes, items = a.row_ids["item"]  # the rows' item codes, handed to the judge screening
    assert np.array_equal(items[codes], df["item"].astype(str).to_numpy()) and a.row_ids["judge"][1].tolist() == a.judges
    unseen = human.head(5).assign(item=lambda t: t["item"].astype(str) + "_unseen")
    c = encode_leaderboard(df.drop(columns="human"), human=pd.concat([unseen, human], ignore_index=True))
    assert len(c.label_keys) == len(b.label_keys) + 5 and set(b.label_keys) < set(c.label_keys)
    assert c.meta["n_labelled_rows"] == b.meta["n_labelled_rows"]
