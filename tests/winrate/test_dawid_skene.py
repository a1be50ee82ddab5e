import itertools
import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.generative.observations import class_log_lik
from bayes_judge.inference.convergence import LabelSwitchingWarning, warn_label_switching
from bayes_judge.winrate import dawid_skene as ds
from bayes_judge.winrate.encode import verdict_patterns

FAST = dict(chains=4, draws=500, tune=500)


def brute_force_loglik(p, q0, q1, n1, n0, label):
    """Model 1 by explicit enumeration of h_i (no log-sum-exp), for one pair."""
    out = []
    for i in range(n1.shape[0]):
        terms = []
        for h in (1, 0):
            if label[i] >= 0 and label[i] != h:
                continue
            lik = p if h == 1 else 1 - p
            for e in range(n1.shape[1]):
                t1 = q0[e] if h == 1 else 1 - q1[e]
                lik *= t1 ** n1[i, e] * (1 - t1) ** n0[i, e]
            terms.append(lik)
        out.append(np.log(sum(terms)))
    return np.array(out)


def test_marginal_loglik_equals_enumeration(rng):
    U, E = 12, 3
    n1 = rng.integers(0, 3, size=(U, E)).astype(float)
    n0 = rng.integers(0, 3, size=(U, E)).astype(float)
    label = rng.choice([-1, 0, 1], size=U)
    p, q0, q1 = 0.63, rng.uniform(0.3, 0.95, E), rng.uniform(0.3, 0.95, E)
    ll0, ll1 = class_log_lik(n1, n1 + n0, p, q0, q1, xp=np)
    ours = np.where(label == 1, ll0, np.where(label == 0, ll1, np.logaddexp(ll0, ll1)))
    np.testing.assert_allclose(ours, brute_force_loglik(p, q0, q1, n1, n0, label), rtol=1e-12)


def test_pattern_histogram_is_exact():
    df = bj.simulate_win_rate(300, p=0.7, q0=[0.8, 0.7, 0.9], q1=[0.75, 0.8, 0.6], swap=True, seed=0)
    data = bj.encode_win_rate(df, swap="none")
    pat = verdict_patterns(data, use_labels=True)
    assert pat.n_patterns < data.n_units and pat.weight.sum() == data.n_units
    p, q0, q1 = 0.6, np.array([0.8, 0.6, 0.7]), np.array([0.7, 0.9, 0.65])

    def item_ll(n1, n0, label):
        ll0, ll1 = class_log_lik(n1, n1 + n0, p, q0, q1, xp=np)
        return np.where(label == 1, ll0, np.where(label == 0, ll1, np.logaddexp(ll0, ll1)))

    per_unit = item_ll(data.n_first, data.n_second, data.label)
    merged = item_ll(pat.n1, pat.n0, pat.label)
    assert (pat.weight * merged).sum() == pytest.approx(per_unit.sum(), rel=1e-12)
    np.testing.assert_allclose(merged[pat.unit_pattern], per_unit)
    # every item of a pattern has the same verdicts and label
    np.testing.assert_array_equal(pat.n1[pat.unit_pattern], data.n_first)
    np.testing.assert_array_equal(pat.label[pat.unit_pattern], data.label)


def test_ood_prior_is_eq_12_13():
    ood = bj.simulate_win_rate(50, p=0.6, q0=[0.9, 0.6], q1=[0.7, 0.8], seed=9)
    enc = bj.encode_win_rate(ood)
    a0, b0, a1, b1 = ds.ood_prior(enc, ["judge1", "judge0", "other"])
    c = {k: v[0] for k, v in enc.accuracy_counts().items()}
    for out_idx, e in ((0, 1), (1, 0)):
        assert a0[out_idx] == pytest.approx((2 * c["s0"][e] + 2) / (c["n0"][e] + 2))
        assert b0[out_idx] == pytest.approx((2 * c["n0"][e] - 2 * c["s0"][e] + 2) / (c["n0"][e] + 2))
        assert a1[out_idx] == pytest.approx((2 * c["s1"][e] + 2) / (c["n1"][e] + 2))
        assert a0[out_idx] + b0[out_idx] == pytest.approx(2.0)  # normalized (weight of two)
    assert np.isnan(a0[2])


@pytest.fixture(scope="module")
def sim():
    return bj.simulate_win_rate(
        300, p=0.7, q0=[0.85, 0.8, 0.75, 0.9, 0.7], q1=[0.8, 0.75, 0.85, 0.7, 0.8], seed=11
    )


@pytest.fixture(scope="module")
def fit_none(sim):
    return bj.win_rate(sim, method="dawid-skene", prior="none", seed=0, **FAST)


def test_recovers_p_and_accuracies(sim, fit_none):
    t = sim.attrs["truth"]
    s = bj.win_rate_summary(fit_none)
    assert abs(s["p_mean"].iloc[0] - t["p_hat"]) < 0.04
    assert s["hdi_low"].iloc[0] < t["p_hat"] < s["hdi_high"].iloc[0]
    assert s["r_hat"].iloc[0] < 1.01 and s["ess_bulk"].iloc[0] > 400
    for q in ("q0", "q1"):
        m = fit_none.posterior[q].mean(("chain", "draw")).to_numpy()[0]
        sd = fit_none.posterior[q].std(("chain", "draw")).to_numpy()[0]
        assert (np.abs(m - np.array(t[q])) < 3 * sd).all(), (q, m, sd, t[q])
    # per-item posterior of the hidden label recovers the truth
    order = fit_none.posterior["item"].to_numpy().astype(int)  # items are sorted as strings
    h = np.array(t["h"])[order]
    hp = fit_none.posterior["h_prob"].mean(("chain", "draw")).to_numpy()
    assert ((hp > 0.5) == (h == 1)).mean() > 0.9


def test_inference_data_is_complete(fit_none):
    post = fit_none.posterior
    assert post["p"].dims == ("chain", "draw", "pair")
    assert post["q0"].dims == ("chain", "draw", "pair", "judge")
    assert post["h_prob"].dims == ("chain", "draw", "item")
    assert fit_none.log_likelihood["t"].shape == (4, 500, 300)
    assert fit_none.sample_stats["diverging"].sum() == 0
    assert set(fit_none.observed_data) == {"n_first", "n_second"}
    assert fit_none.attrs["method"] == "dawid-skene"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(fit_none)
        summ = az.summary(fit_none, var_names=["p", "q0"])
    assert np.isfinite(loo.elpd_loo)
    assert len(summ) == 1 + 5


def test_in_distribution_labels_are_observed(sim):
    h = np.array(sim.attrs["truth"]["h"])
    keep = sim["item"].isin(np.arange(0, 300, 3))  # a third of the items labelled
    df = sim.assign(human=sim["human"].where(keep, None))
    fit = bj.win_rate(df, method="dawid-skene", prior="in-distribution", seed=0, **FAST)
    hp = fit.posterior["h_prob"].mean(("chain", "draw")).to_series()
    hp.index = hp.index.astype(int)
    labelled = np.arange(0, 300, 3)
    np.testing.assert_array_equal(hp[labelled].to_numpy(), h[labelled])
    s = bj.win_rate_summary(fit)
    assert abs(s["p_mean"].iloc[0] - h.mean()) < 0.04


def test_same_seed_same_draws(sim):
    kw = dict(method="dawid-skene", prior="none", chains=2, draws=100, tune=100)
    a = bj.win_rate(sim, seed=3, **kw)
    b = bj.win_rate(sim, seed=3, **kw)
    c = bj.win_rate(sim, seed=4, **kw)
    np.testing.assert_array_equal(a.posterior["p"], b.posterior["p"])
    assert not np.array_equal(a.posterior["p"], c.posterior["p"])


def test_refit_reuses_the_model_and_gives_the_same_draws(sim, fit_none):
    """A refit of the same declaration, priors and coordinates reuses the cached model (only the
    data change); the same seed gives the same draws."""
    from bayes_judge.inference import fit as fit_module

    n_cached = len(fit_module._CACHE)
    again = bj.win_rate(sim, method="dawid-skene", prior="none", seed=0, **FAST)
    other = bj.win_rate(sim.iloc[: len(sim) // 2], method="dawid-skene", prior="none", seed=0, **FAST)
    assert len(fit_module._CACHE) == n_cached
    np.testing.assert_array_equal(again.posterior["p"], fit_none.posterior["p"])
    assert other.posterior.sizes["item"] == 150


def test_near_chance_judges_stay_in_one_mode():
    """Judges barely better than chance: every chain must start and stay in the q > 0.5 mode."""
    df = bj.simulate_win_rate(150, p=0.5, q0=[0.6, 0.55, 0.6], q1=[0.55, 0.6, 0.6], seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelSwitchingWarning)
        fit = bj.win_rate(df, method="dawid-skene", prior="none", seed=0, **FAST)
    qsum = (fit.posterior["q0"] + fit.posterior["q1"]).mean(("draw", "judge")).to_numpy()
    assert (qsum > 1).all(), qsum
    assert bj.win_rate_summary(fit)["r_hat"].iloc[0] < 1.05


def test_label_switch_check_fires():
    data = bj.encode_win_rate(bj.simulate_win_rate(10, q0=[0.8], seed=0))
    q = np.full((4, 10, 1, 1), 0.8)
    q[2] = 0.2  # chain 2 in the mirrored mode
    with pytest.warns(LabelSwitchingWarning, match="chains disagree"):
        warn_label_switching(q, q, data.pair_labels, data.judges)


def test_label_switch_check_fires_for_one_judge_in_two_modes():
    """Chains agree overall, but judge 2 beats chance in some chains and not in others."""
    data = bj.encode_win_rate(bj.simulate_win_rate(10, q0=[0.8, 0.8, 0.8], q1=[0.8, 0.8, 0.8], seed=0))
    rng = np.random.default_rng(0)
    q = 0.8 + 0.02 * rng.standard_normal((4, 10, 1, 3))
    q[1, :, :, 2] -= 0.5  # chain 1: judge 2 adversarial
    with pytest.warns(LabelSwitchingWarning, match="whether judge"):
        warn_label_switching(q, q, data.pair_labels, data.judges)
    q[:, :, :, 2] = 0.5 + 0.05 * rng.standard_normal((4, 10, 1))  # near chance, one mode: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelSwitchingWarning)
        warn_label_switching(q, q, data.pair_labels, data.judges)


def test_many_systems_one_p_per_pair():
    frames, p_hat = [], {}
    truth = {("A", "B"): 0.8, ("A", "C"): 0.3, ("B", "C"): 0.5}
    for k, ((g0, g1), p) in enumerate(truth.items()):
        d = bj.simulate_win_rate(200, p=p, q0=[0.85, 0.8, 0.9], q1=[0.8, 0.85, 0.75], systems=(g0, g1), seed=k)
        p_hat[(g0, g1)] = d.attrs["truth"]["p_hat"]
        frames.append(d.assign(item=d["item"] + 1000 * k))
    fit = bj.win_rate(pd.concat(frames, ignore_index=True), method="dawid-skene", prior="none", seed=0, **FAST)
    s = bj.win_rate_summary(fit)
    assert list(s.index) == ["A vs B", "A vs C", "B vs C"]
    assert list(s["system_a"]) == ["A", "A", "B"]
    for (g0, g1), p in p_hat.items():
        row = s.loc[f"{g0} vs {g1}"]
        assert row["hdi_low"] < p < row["hdi_high"], (row, p)


@pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")  # and it is named
def test_all_verdicts_one_class_without_labels():
    df = bj.simulate_win_rate(30, q0=[1.0], q1=[0.0], seed=0)  # judge always says G0
    with pytest.raises(ValueError, match=r"all \d+ verdicts prefer G0.*not identified"):
        bj.win_rate(df, method="dawid-skene", prior="none")
    unlabelled = df.drop(columns="human")  # G0 always shown first: the verdict is the position's, refused as such
    with pytest.raises(ValueError, match=r"cannot answer the question.*all 30 of its verdicts are 'a'"):
        bj.win_rate(unlabelled, method="dawid-skene", prior="none")


def test_bad_arguments(sim):
    with pytest.raises(ValueError, match="method must be"):
        bj.win_rate(sim, method="em")
    with pytest.raises(ValueError, match="prior must be"):
        bj.win_rate(sim, prior="flat")
    with pytest.raises(ValueError, match="sampler must be"):
        bj.win_rate(sim, sampler="stan")
    with pytest.raises(ValueError, match="draws must be a positive integer"):
        bj.win_rate(sim, draws=0)
    with pytest.raises(ValueError, match="needs ood="):
        bj.win_rate(sim, prior="ood")
    with pytest.raises(ValueError, match="only read with prior='ood'"):
        bj.win_rate(sim, prior="none", ood=sim)
    with pytest.raises(ValueError, match="human= labels are only read"):
        bj.win_rate(sim, method="observed", human=sim[["item", "a", "b", "human"]])
    with pytest.raises(ValueError, match="needs human labels"):
        bj.win_rate(sim.assign(human=None), prior="in-distribution")
    other = sim.assign(judge="someone else")
    with pytest.raises(ValueError, match="no judge of the data"):
        bj.win_rate(sim.assign(human=None), prior="ood", ood=other.drop_duplicates(["item", "a", "b", "judge"]))


@pytest.mark.parametrize("sampler", ["nutpie", "pymc", "numpyro"])
def test_every_sampler_through_win_rate(sim, sampler):
    """``bj.win_rate(sampler=...)`` runs each sampler and says which ran; that they sample the same
    posterior is tests/generative/test_agreement.py's (every sampler on the same declaration)."""
    fit = bj.win_rate(sim, method="dawid-skene", prior="none", sampler=sampler, seed=1, chains=2, draws=100,
                      tune=100)
    assert fit.attrs["sampler"] == {"nutpie": "nutpie (fast path)"}.get(sampler, sampler)
    assert fit.posterior["p"].dims == ("chain", "draw", "pair")
    assert fit.posterior["q0"].shape == (2, 100, 1, 5)
    assert fit.log_likelihood["t"].shape == (2, 100, 300)
    p = float(fit.posterior["p"].mean())
    assert abs(p - sim.attrs["truth"]["p_hat"]) < 0.06, p


def test_enumeration_helper_covers_all_patterns():
    # sanity of the reference itself: sums to one over all verdict vectors for one judge pair
    p, q0, q1 = 0.3, np.array([0.8, 0.6]), np.array([0.7, 0.9])
    tot = 0.0
    for v in itertools.product([0, 1], repeat=2):
        n1 = np.array([v], float)
        tot += np.exp(brute_force_loglik(p, q0, q1, n1, 1 - n1, np.array([-1]))[0])
    assert tot == pytest.approx(1.0)


def test_external_human_table_equals_human_column(sim):
    keep = sim["item"] % 5 == 0
    with_col = sim.assign(human=sim["human"].where(keep, None))
    table = sim.loc[keep, ["item", "a", "b", "human"]].drop_duplicates()
    kw = dict(method="dawid-skene", prior="in-distribution", seed=2, chains=2, draws=200, tune=200)
    a = bj.win_rate(with_col, **kw)
    b = bj.win_rate(sim.assign(human=None), human=table, **kw)
    np.testing.assert_array_equal(a.posterior["p"], b.posterior["p"])


def test_ood_prior_end_to_end(sim):
    ood = bj.simulate_win_rate(120, p=0.4, q0=[0.9, 0.85, 0.8, 0.9, 0.75], q1=[0.8, 0.8, 0.85, 0.7, 0.8],
                               systems=("X", "Y"), seed=21)
    fit = bj.win_rate(sim.assign(human=None), prior="ood", ood=ood, seed=0, **FAST)
    a0, b0, _, _ = ds.ood_prior(bj.encode_win_rate(ood), fit.posterior["judge"].to_numpy().tolist())
    np.testing.assert_allclose(fit.constant_data["alpha_q0"].isel(pair=0), a0)
    np.testing.assert_allclose(fit.constant_data["beta_q0"].isel(pair=0), b0)
    s = bj.win_rate_summary(fit)
    assert s["hdi_low"].iloc[0] < sim.attrs["truth"]["p_hat"] < s["hdi_high"].iloc[0]


def test_labels_beside_ood_are_used_or_refused_never_ignored():
    """A filled human column beside ood= was silently ignored by BWRS and Dawid-Skene's OOD prior (the
    same answer with or without 60 labels), and the default switched to transfer, which does not
    learn this set's judges from its own labels."""
    src = bj.simulate_win_rate(200, p=0.5, q0=[0.9, 0.85, 0.8], seed=10)
    tgt = bj.simulate_win_rate(200, p=0.8, q0=[0.65, 0.6, 0.6], seed=11)
    lab = tgt.assign(human=tgt["human"].where(tgt["item"].astype(int) < 60))
    with pytest.raises(ValueError, match="human column holds labels, which prior='ood' does not read"):
        bj.win_rate(lab, method="bwrs", ood=src)
    with pytest.raises(ValueError, match="the default with labels is the label regression"):
        bj.win_rate(lab, ood=[src])
