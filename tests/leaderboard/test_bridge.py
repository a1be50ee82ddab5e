"""The score bridge: people's leaderboard scores from LLM judges without labels (issue 30)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayes_judge as bj
from bayes_judge.leaderboard.bridge import (
    SCORE_BRIDGE,
    ScoreBridge,
    bridge_scores,
    calibrate_bridge,
    fit_score_bridge,
    panel_fit,
)
from bayes_judge.leaderboard.simulate import simulate_leaderboard


def test_the_bridge_keeps_the_order_of_the_reading_and_centres_it():
    s = np.tile(np.array([-1.0, 0.0, 0.5, 1.5]), (2000, 1))
    h = bridge_scores(s, ScoreBridge(lam_median=2.0, lam_sd=0.3, tau_median=1e-6, tau_sd=0.0), np.random.default_rng(0))
    assert np.allclose(h.mean(axis=1), 0.0)
    assert (np.argsort(h, axis=1) == np.argsort(s[0])).all()  # λ > 0: the order stays
    lam = h[:, 3] / (s[0, 3] - s[0].mean())
    assert np.median(lam) == pytest.approx(2.0, rel=0.03) and np.log(lam).std() == pytest.approx(0.3, rel=0.1)
    # τ alone widens each system by Normal(0, τ) (centring takes a 1/k share of it)
    h = bridge_scores(np.zeros((4000, 5)), ScoreBridge(1.0, 0.0, 0.5, 0.0), np.random.default_rng(1))
    assert h.std(axis=0).mean() == pytest.approx(0.5 * np.sqrt(1 - 1 / 5), rel=0.05)


def test_the_prior_recovers_a_known_scale_and_residual():
    rng = np.random.default_rng(2)
    cases = []
    for lam in (1.5, 2.0, 2.5, 3.0):
        s = rng.normal(0, 1, 40)
        cases.append((s, lam * s + rng.normal(0, 0.4, 40)))
    fits = np.array([panel_fit(s, t) for s, t in cases])
    assert np.allclose(fits[:, 0], [1.5, 2.0, 2.5, 3.0], atol=0.15) and np.allclose(fits[:, 1], 0.4, atol=0.1)
    own = fit_score_bridge(cases, reach=None)
    assert own.lam_median == pytest.approx(np.exp(np.log(fits[:, 0]).mean()), rel=1e-9)
    assert own.lam_sd == pytest.approx(np.log(fits[:, 0]).std(ddof=1), rel=1e-9)
    assert own.tau_median == pytest.approx(0.4, abs=0.1)
    # reaching λ = 1 (judges that follow the model): the median halfway on the log scale, and a 90%
    # interval that holds 1 and the largest λ̂
    wide = fit_score_bridge(cases)
    assert wide.lam_median == pytest.approx(np.sqrt(own.lam_median), rel=1e-9)
    lo, hi = np.exp(np.log(wide.lam_median) + np.array([-1.645, 1.645]) * wide.lam_sd)
    assert lo <= 1.0 + 1e-9 and hi >= fits[:, 0].max() - 1e-9
    with pytest.raises(ValueError, match="order the systems against people's"):
        fit_score_bridge([(np.arange(5.0), -np.arange(5.0))])
    with pytest.raises(ValueError, match="lam_median must be positive"):
        ScoreBridge(0.0, 0.1, 0.3, 0.1)


@pytest.fixture(scope="module")
def unlabelled():
    df, true = simulate_leaderboard(8, 800, alpha=(1.5, 1.0), beta=(0.3, -0.2), seed=4)
    return df.drop(columns="human"), true


def test_a_judges_only_leaderboard_carries_its_reading_over_to_people(unlabelled):
    df, true = unlabelled
    fit = bj.leaderboard(df, chains=2, draws=300, tune=300, seed=0, pointwise=False)
    post = fit.posterior
    assert "s_judges" in post and fit.attrs["score_bridge"] == SCORE_BRIDGE.describe()
    assert "score bridge" in fit.attrs["estimand_note"]
    sd_bridged, sd_reading = post["s"].std(("chain", "draw")), post["s_judges"].std(("chain", "draw"))
    assert (sd_bridged > sd_reading).all()
    # the summaries read the bridged scores, and say so
    summ = bj.leaderboard_summary(fit)
    assert summ.attrs["score_bridge"] == SCORE_BRIDGE.describe() and "score bridge" in summ.attrs["estimand_note"]
    means = post["s"].mean(("chain", "draw")).to_series()
    assert np.allclose(summ.set_index("system")["mean"], means.loc[summ["system"]], atol=1e-9)
    from bayes_judge.cli.commands import run_notes

    assert any("score bridge" in line for line in run_notes(fit))
    # the same fit without the bridge is the judges' reading, and says what it cannot cover
    raw = bj.leaderboard(df, chains=2, draws=300, tune=300, seed=0, pointwise=False, bridge=False)
    assert "s_judges" not in raw.posterior and "score_bridge" not in raw.attrs
    assert np.allclose(raw.posterior["s"], post["s_judges"])
    assert "a preference all judges share is not in the intervals" in raw.attrs["estimand_note"]


def test_the_bridge_applies_only_where_people_are_read_through_judges_without_labels(unlabelled):
    df, _ = unlabelled
    kw = dict(chains=1, draws=50, tune=50, seed=0, pointwise=False)
    with pytest.raises(TypeError, match="bridge must be"):
        bj.leaderboard(df, bridge="yes", **kw)
    with pytest.raises(ValueError, match="carries LLM judges' reading over to people's scores"):
        bj.leaderboard(df, estimand="judges", position_bias=False, bridge=True, **kw)
    with pytest.raises(ValueError, match="one score per system"):
        lab = df[["item", "a", "b"]].drop_duplicates(["item", "a", "b"]).iloc[:40].assign(human="a")
        bj.leaderboard(df, human=lab, bridge=ScoreBridge(1.5, 0.3, 0.3, 0.3), difficulty=True, **kw)
    judges = bj.leaderboard(df, estimand="judges", position_bias=False, **kw)  # the panel's own preference
    assert "score_bridge" not in judges.attrs and "s_judges" not in judges.posterior
    votes = df[df["judge"] == df["judge"].iloc[0]].assign(judge="human")  # people's own votes: nothing to bridge
    assert "score_bridge" not in bj.leaderboard(votes, position_bias=False, **kw).attrs


def test_on_a_real_panel_the_bridge_covers_the_experts_where_the_reading_does_not():
    """SummEval coherence, three LLM judges, no labels: the judges' reading covers none of the
    experts' Bradley-Terry scores (benchmarks/results/leaderboard_real.md); the bridged intervals
    cover most of them (benchmarks/results/leaderboard_bridge.md)."""
    from bayes_judge.datasets import summeval

    judges = ["gpt-4-0314/rts", "gpt-3.5-turbo-0301/rts", "gpt-3.5-turbo-0301/mcq"]
    df = pd.concat([summeval.pairs("coherence", judge=j) for j in judges], ignore_index=True)
    one = df.drop_duplicates(["item", "a", "b"])
    one = one[(one["a"] < one["b"]) & one["human"].isin(["a", "b"])]
    systems = sorted(set(df["a"]))
    from bayes_judge.ranking import bradley_terry, pairs_rank_data

    idx = pd.Index(systems)  # the experts' Bradley-Terry scores, as benchmarks/leaderboard_real.py fits them
    truth = bradley_terry(pairs_rank_data(idx.get_indexer(one["a"]), idx.get_indexer(one["b"]),
                                          (one["human"] == "a").to_numpy(float), len(systems)),
                          prior=1e-4, tol=1e-8, max_iter=100_000, accelerate=True)
    truth = truth - truth.mean()
    fit = bj.leaderboard(df.drop(columns="human"), chains=2, draws=400, tune=400, seed=0, pointwise=False)
    for var, lo_cov in (("s_judges", 0.0), ("s", 0.75)):
        q = fit.posterior[var].sel(system=systems).quantile([0.05, 0.95], dim=("chain", "draw")).to_numpy()
        covered = ((q[0] <= truth) & (truth <= q[1])).mean()
        if var == "s_judges":
            assert covered <= 0.25, covered
        else:
            assert covered >= lo_cov, covered


def test_the_command_line_says_which_scores_and_the_prior(unlabelled, tmp_path, capsys):
    from bayes_judge.cli import main

    df, _ = unlabelled
    path = tmp_path / "j.csv"
    df.to_csv(path, index=False)
    args = ["leaderboard", str(path), "--draws", "100", "--chains", "1"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    text = capsys.readouterr().out
    assert "score bridge" in text and "prior: people's scores = λ × the judges' reading" in text
    assert main([*args, "--no-bridge", "--out", str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    assert "a preference all judges share is not in the intervals" in text and "prior:" not in text
    assert "s_judges" not in bj.load_run(tmp_path / "b").posterior


def test_convergence_is_judged_on_the_sampled_scores(unlabelled):
    """The bridge adds independent draws of its prior to every draw: R-hat and ESS of the bridged
    scores would hide chains that disagree; the warning and the summary read the sampled ones."""
    import arviz as az

    from bayes_judge.inference.convergence import SamplerConvergenceWarning

    df, _ = unlabelled
    with pytest.warns(SamplerConvergenceWarning, match="s_judges"):
        fit = bj.leaderboard(df, chains=4, draws=30, tune=15, seed=0, pointwise=False)
    summ = bj.leaderboard_summary(fit).set_index("system")
    rhat = az.rhat(fit.posterior["s_judges"])["s_judges"].to_series()
    assert np.allclose(summ["r_hat"], rhat.loc[summ.index].round(2), atol=0.011)
    assert summ["r_hat"].max() >= az.rhat(fit.posterior["s"])["s"].max() - 0.005


def test_the_labels_calibrate_the_bridge():
    """calibrate_bridge: many labels recover λ and people's scores; none leave the prior's bridge."""
    rng = np.random.default_rng(0)
    N = 6
    s_j = np.linspace(-1.0, 1.0, N)
    reading = s_j + 0.05 * rng.standard_normal((2000, N))
    reading -= reading.mean(axis=1, keepdims=True)
    eps = np.array([0.3, -0.2, 0.0, 0.1, -0.4, 0.2])
    h = 2.0 * s_j + eps - eps.mean()
    a, b = np.triu_indices(N, 1)
    wins = rng.binomial(400, 1 / (1 + np.exp(-(h[a] - h[b]))))
    out = calibrate_bridge(reading, a, b, np.column_stack([wins, 400 - wins]), SCORE_BRIDGE, chains=2, draws=500,
                           tune=500, seed=1)
    lo, hi = np.quantile(out["s"].reshape(-1, N), [0.05, 0.95], axis=0)
    assert ((lo <= h) & (h <= hi)).mean() >= 5 / 6 and (hi - lo).mean() < 0.5
    lam = out["bridge_lambda"].ravel()
    assert np.quantile(lam, 0.05) < 2.0 < np.quantile(lam, 0.95) and lam.std() < 0.3  # the prior's sd is ~0.6
    assert out["s"].shape == (2, 500, N) and abs(out["s"].sum(axis=-1)).max() < 1e-9
    # no label: the prior's bridge (bridge_scores) of the same reading
    assert out["log_lik_human"].shape == (2, 500, len(a))
    none = calibrate_bridge(reading, np.zeros(0, int), np.zeros(0, int), np.zeros((0, 2)), SCORE_BRIDGE, chains=2,
                            draws=1000, tune=500, seed=2, pointwise=False)
    assert "log_lik_human" not in none  # draws × pairs floats only where the fit keeps pointwise values
    prior = bridge_scores(reading, SCORE_BRIDGE, np.random.default_rng(3))
    q = [0.05, 0.5, 0.95]
    assert np.allclose(np.quantile(none["s"].reshape(-1, N), q, axis=0), np.quantile(prior, q, axis=0), atol=0.12)


def test_a_few_labels_narrow_the_bridged_leaderboard_and_say_so(unlabelled):
    df, _ = unlabelled
    kw = dict(chains=2, draws=300, tune=300, seed=0)
    comps = df.loc[df["a"] < df["b"], ["item", "a", "b"]].drop_duplicates()  # one row a comparison
    lab = comps.iloc[::4].assign(human=np.where(np.arange(len(comps.iloc[::4])) % 3, "a", "b"))
    bare = bj.leaderboard(df, pointwise=False, **kw)
    fit = bj.leaderboard(df, human=lab, bridge=True, **kw)
    post = fit.posterior
    assert {"s_judges", "bridge_lambda", "bridge_tau"} <= set(post) and fit.attrs["n_labels"] == len(lab)
    assert f"{len(lab)} human label(s)" in fit.attrs["estimand_note"]
    from bayes_judge.cli.commands import run_notes

    assert any(line.startswith("prior (the labels update it): ") for line in run_notes(fit))
    assert fit.attrs["score_bridge"] == SCORE_BRIDGE.describe()
    # the judges' reading is the judges-only fit's; the labels move λ from its prior and narrow the scores
    assert np.allclose(post["s_judges"], bare.posterior["s_judges"])
    assert post["s"].std(("chain", "draw")).mean() < bare.posterior["s"].std(("chain", "draw")).mean()
    counts = fit.observed_data["human_counts"]  # one cell a pair of systems, the labels counted in it
    assert counts.sum() == len(lab) and fit.log_likelihood["human"].shape[-1] == counts.shape[0]
    summ = bj.leaderboard_summary(fit).set_index("system")
    assert summ.attrs["score_bridge"] == SCORE_BRIDGE.describe()
    # both score sets are sampled (the judges' fit, then the bridge's): the summary reports the worse
    import arviz as az

    worse = np.maximum(az.rhat(fit, var_names=["s_judges"])["s_judges"].to_series(),
                       az.rhat(fit, var_names=["s"])["s"].to_series())
    assert np.allclose(summ["r_hat"], worse.loc[summ.index], atol=0.006)  # az.summary rounds to 2 decimals
    # a bridge whose chains disagree is reported as unconverged, though the judges' reading converged
    broken = fit.copy()
    broken.posterior["s"] = broken.posterior["s"] + xr.DataArray([0.0, 1.0], dims="chain")
    assert bj.leaderboard_summary(broken)["r_hat"].min() > 1.1


def test_a_system_only_people_compared_cannot_be_bridged(unlabelled):
    df, _ = unlabelled
    low = {"S000", "S001", "S002", "S003"}
    split = df[df["a"].isin(low) == df["b"].isin(low)]  # the judges compare within two groups only
    lab = pd.DataFrame({"item": ["x1", "x2"], "a": ["S003", "S002"], "b": ["S004", "S005"], "human": ["a", "b"]})
    with pytest.raises(ValueError, match="judges' comparisons alone"):
        bj.leaderboard(split, human=lab, bridge=True, chains=1, draws=20, tune=20)
