"""The consensus model (ds_model='consensus'): judges that err together through their consensus.

Checked against closed forms (its likelihood at c = 1 and c = ½, its prior's exact transform,
its posterior on a grid) and on data simulated here (not by the package) where the judges follow
a consensus that disagrees with the human on a quarter of the items: the one-coin interval then
misses the human win rate, the consensus interval covers it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayes_judge as bj
from bayes_judge.generative import get_model
from bayes_judge.generative.observations import class_log_lik, consensus_log_lik
from bayes_judge.generative.priors import Beta
from bayes_judge.generative.winrate_models import ConsensusPriors

KW = dict(method="dawid-skene", ds_model="consensus", swap="none", chains=2, draws=500, tune=500, seed=0)


def _table(votes: np.ndarray, human: np.ndarray | None = None) -> pd.DataFrame:
    """One row per (item, judge): ``votes[i, e] = 1`` when judge e prefers G0 on item i."""
    n, e = votes.shape
    df = pd.DataFrame({
        "item": np.repeat(np.arange(n), e), "a": "G0", "b": "G1",
        "judge": np.tile([f"j{k}" for k in range(e)], n),
        "winner": np.where(votes.ravel() == 1, "a", "b"),
    })
    if human is not None:
        df["human"] = np.repeat(human, e)
    return df


def _simulate(n: int, p: float, c: float, q: list[float], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Human preferences y ~ Bernoulli(p); the consensus z = y with chance c; judge e says z
    with chance q[e].  Returns (votes (n, E), y (n,))."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p
    z = np.where(rng.random(n) < c, y, ~y)
    right = rng.random((n, len(q))) < np.asarray(q)
    return np.where(right, z[:, None], ~z[:, None]).astype(int), y.astype(int)


def _interval(fit, var: str = "p", prob: float = 0.9) -> tuple[float, float]:
    x = fit.posterior[var].to_numpy().ravel()
    return tuple(np.quantile(x, [(1 - prob) / 2, (1 + prob) / 2]))


def test_likelihood_closed_forms():
    rng = np.random.default_rng(0)
    n_total = rng.integers(1, 4, size=(50, 3)).astype(float)
    n1 = np.floor(rng.random((50, 3)) * (n_total + 1))
    p, q = rng.random(50), 0.5 + 0.5 * rng.random((50, 3))
    # c = 1: the consensus is the human preference, i.e. one-coin Model 1 (seed 003 eq. 9 with q0 = q1)
    with np.errstate(divide="ignore"):  # log(1 - c) = -inf
        g0, g1 = consensus_log_lik(n1, n_total, p, np.ones(50), q, xp=np)
    r0, r1 = class_log_lik(n1, n_total, p, q, q, xp=np)
    np.testing.assert_allclose(g0, r0, rtol=1e-10)
    np.testing.assert_allclose(g1, r1, rtol=1e-10)
    # c = 1/2: the verdicts say nothing about y: P(y = G0 | t) = p
    g0, g1 = consensus_log_lik(n1, n_total, p, np.full(50, 0.5), q, xp=np)
    np.testing.assert_allclose(1.0 / (1.0 + np.exp(g1 - g0)), p, rtol=1e-10)
    # unlabelled: sums to the one-coin likelihood at the consensus rate p_c = c p + (1 - c)(1 - p)
    c = 0.5 + 0.5 * rng.random(50)
    g0, g1 = consensus_log_lik(n1, n_total, p, c, q, xp=np)
    r0, r1 = class_log_lik(n1, n_total, c * p + (1 - c) * (1 - p), q, q, xp=np)
    np.testing.assert_allclose(np.logaddexp(g0, g1), np.logaddexp(r0, r1), rtol=1e-10)


@pytest.mark.parametrize("a", [2.0, 3.0, 5.0])
def test_prior_is_exactly_p_uniform_and_kappa_beta_a_1(a):
    """The sampled coordinates (p_c ~ π_a, v ~ U(0, 1)) give p ~ U(0, 1) and κ ~ Beta(a, 1),
    independent (forward draws of the declaration: p_c drawn as ½ + κ' (p' − ½), then p and κ
    from (p_c, v): the two constructions agree only if π_a and κ | p_c do)."""
    import pymc as pm

    from bayes_judge.inference.fit import _build
    from bayes_judge.winrate.encode import VerdictPatterns, verdict_patterns

    data = bj.encode_win_rate(_table(_simulate(20, 0.6, 0.9, [0.8, 0.8], seed=1)[0]), swap="none")
    pat = verdict_patterns(data, use_labels=False)
    model = _build(get_model("consensus", "win-rate"), pat.arrays(), VerdictPatterns.DIMS,
                   {"pair": data.pair_labels, "judge": list(data.judges)}, ConsensusPriors(kappa=Beta(a, 1)),
                   False, {})
    pc, p, c = pm.draw([model["p_consensus"], model["p"], model["agreement"]], draws=20000, random_seed=3)
    pc, p, kappa = np.ravel(pc), np.ravel(p), 2.0 * np.ravel(c) - 1.0

    def cdf_pc(x):  # of π_a: m = |2 p_c − 1| has CDF (a m − m^a) / (a − 1)
        m = np.abs(2 * x - 1)
        return 0.5 + 0.5 * np.sign(2 * x - 1) * (a * m - m**a) / (a - 1)

    assert stats.kstest(pc, cdf_pc).pvalue > 1e-3  # the forward draws follow π_a ...
    x = np.array([0.05, 0.3, 0.5, 0.8])  # ... which is the density the sampler sees
    np.testing.assert_allclose(pm.logp(model["p_consensus"], np.broadcast_to(x[:, None], (4, 1))).eval().ravel(),
                               np.log(a * (1 - np.abs(2 * x - 1) ** (a - 1)) / (a - 1)), rtol=1e-6)
    assert stats.kstest(p, stats.uniform().cdf).pvalue > 1e-3
    assert stats.kstest(kappa, stats.beta(a, 1).cdf).pvalue > 1e-3
    assert abs(stats.spearmanr(p, kappa).statistic) < 0.03


def _exact_consensus(votes: np.ndarray, m: int = 120) -> tuple[float, float]:
    """E[p] and P(p > 1/2) of the consensus model on a grid of (p_c, q_1, q_2): p_c ~ Beta(2, 2),
    q_e ~ Beta(2, 1), E[p | p_c] = ½ + (p_c − ½) E[1/κ | p_c] = ½ + (p_c − ½) · 2 / (1 + |2 p_c − 1|)."""
    g = (np.arange(m) + 0.5) / m
    pc = g[:, None, None]
    q = [g[None, :, None], g[None, None, :]]
    log_post = np.log(pc * (1 - pc)) + np.log(q[0]) + np.log(q[1])
    for v in votes:
        like_a = like_b = np.ones(1)
        for e, ve in enumerate(v):
            like_a = like_a * (q[e] if ve else 1 - q[e])
            like_b = like_b * (1 - q[e] if ve else q[e])
        log_post = log_post + np.log(pc * like_a + (1 - pc) * like_b)
    w = np.exp(log_post - log_post.max())
    w = (w / w.sum()).sum(axis=(1, 2))
    e_p = 0.5 + (g - 0.5) * 2.0 / (1.0 + np.abs(2 * g - 1))
    return float((w * e_p).sum()), float(w[g > 0.5].sum())


def test_posterior_matches_the_grid_with_both_mirrored_modes():
    votes = np.array([[1, 1]] * 7 + [[0, 0]] * 3 + [[1, 0]] * 3 + [[0, 1]] * 3)
    mean, gt_half = _exact_consensus(votes)
    assert 0.1 < 1 - gt_half < 0.45  # the mirrored mode holds real mass
    fit = bj.win_rate(_table(votes), **{**KW, "chains": 4, "draws": 2000, "tune": 1000})
    p = fit.posterior["p"].to_numpy()
    assert p.mean() == pytest.approx(mean, abs=0.03)
    assert (p > 0.5).mean() == pytest.approx(gt_half, abs=0.05)
    assert np.all(np.abs((p > 0.5).mean(axis=1) - gt_half) < 0.1)
    # p_c and p turn together: same side of 1/2 in every draw
    assert np.all((fit.posterior["p_consensus"].to_numpy() > 0.5) == (p > 0.5))


def test_covers_the_human_rate_where_one_coin_sits_on_the_consensus_rate():
    p, c = 0.75, 0.75  # consensus rate p_c = 0.625
    votes, _ = _simulate(400, p, c, [0.85, 0.8, 0.9], seed=11)
    one = bj.win_rate(_table(votes), **{**KW, "ds_model": "one-coin"})
    lo, hi = _interval(one)
    assert hi < p  # the one-coin model is sure of the wrong number
    cons = bj.win_rate(_table(votes), **KW)
    lo, hi = _interval(cons)
    assert lo < p < hi
    pc_lo, pc_hi = _interval(cons, "p_consensus")
    assert pc_lo < 0.625 < pc_hi
    assert cons.attrs["ds_model"] == "consensus"
    # a judge's accuracy on the human preference is its accuracy on the consensus carried by c
    js = bj.judge_summary(cons)
    q, c = cons.posterior["q"], cons.posterior["agreement"]
    np.testing.assert_allclose(js["acc_g0"], (q * c + (1 - q) * (1 - c)).mean(("chain", "draw", "pair")))
    assert np.all(js["acc_g0"] < q.mean(("chain", "draw", "pair")).to_numpy())
    assert cons.posterior["h_prob"].dims[-1] == "item"


def test_labels_identify_the_agreement():
    p, c = 0.75, 0.75
    votes, y = _simulate(400, p, c, [0.85, 0.8, 0.9], seed=11)
    human = np.where(np.arange(400) % 2 == 0, np.where(y == 1, "a", "b"), None)
    fit = bj.win_rate(_table(votes, human), **{**KW, "prior": "in-distribution"})
    lo, hi = _interval(fit, "agreement")
    assert lo < c < hi and hi - lo < 0.15
    lo, hi = _interval(fit)
    assert lo < p < hi and hi - lo < 0.12
    h = fit.posterior["h_prob"].mean(("chain", "draw"))
    item = h.coords["item"].to_numpy().astype(int)
    even = item % 2 == 0
    np.testing.assert_array_equal(h.to_numpy()[even], y[item[even]])  # a labelled item keeps its label
    assert np.all((h.to_numpy()[~even] > 0) & (h.to_numpy()[~even] < 1))


@pytest.mark.parametrize("a", [2.0, 5.0])
def test_fast_path_equals_the_declaration_for_other_kappa_priors(a):
    """The generic fast-path test checks the default κ ~ Beta(3, 1); here Beta(2, 1) (π_a has a
    kink at p_c = ½) and Beta(5, 1), with and without the label-switch term."""
    from bayes_judge.inference.fastpaths import fast_path
    from bayes_judge.inference.fit import _build
    from bayes_judge.winrate.encode import VerdictPatterns, verdict_patterns

    data = bj.encode_win_rate(_table(_simulate(60, 0.7, 0.8, [0.8, 0.7, 0.9], seed=4)[0]), swap="none")
    arrays = verdict_patterns(data, use_labels=False).arrays()
    coords = {"pair": data.pair_labels, "judge": list(data.judges)}
    priors = ConsensusPriors(kappa=Beta(a, 1), q=Beta(3, 2))
    fp = fast_path("win-rate", "consensus")
    rng = np.random.default_rng(1)
    for options in ({}, {"symmetric": True}):
        model = _build(get_model("consensus", "win-rate"), arrays, VerdictPatterns.DIMS, coords, priors, False, options)
        logp, dlogp = model.compile_logp(), model.compile_dlogp()
        ip = model.initial_point()
        names = [v.name for v in model.value_vars]
        diffs = []
        for _ in range(5):
            x = rng.normal(0.0, 0.8, size=sum(int(np.size(ip[n])) for n in names))
            point, o = {}, 0
            for n in names:
                k = int(np.size(ip[n]))
                point[n] = x[o:o + k].reshape(np.shape(ip[n]))
                o += k
            lp, g = fp.logp_grad(x, arrays, coords, priors, **({"options": options} if options else {}))
            np.testing.assert_allclose(g, np.asarray(dlogp(point)), rtol=1e-7, atol=1e-8)
            diffs.append(lp - float(logp(point)))
        assert np.ptp(diffs) < 1e-8  # equal up to a constant


def test_bad_input():
    with pytest.raises(ValueError, match="kappa"):
        ConsensusPriors(kappa=Beta(2, 2))
    with pytest.raises(ValueError, match="a >= 2"):
        ConsensusPriors(kappa=Beta(1.5, 1))
    with pytest.raises(ValueError, match="fixed"):
        ConsensusPriors(p=Beta(2, 2))
    ConsensusPriors(q=Beta(3, 1))  # q may change
    votes, y = _simulate(40, 0.7, 0.9, [0.8, 0.8], seed=2)
    df = _table(votes)
    with pytest.raises(ValueError, match="OOD"):
        bj.win_rate(df, ds_model="consensus", method="dawid-skene", prior="ood",
                    ood=_table(votes, np.where(y == 1, "a", "b")))
    with pytest.raises(ValueError, match="method='dawid-skene'"):
        bj.win_rate(df, ds_model="consensus", method="independent")
    with pytest.raises(ValueError, match="ds_model"):
        bj.win_rate(df, ds_model="consensus-model")


def test_prior_sensitivity_reweighting_is_exact(load_benchmark):
    """benchmarks/consensus_prior_sensitivity.py turns draws under κ ~ Beta(3, 1) into draws under
    κ ~ Beta(a, 1): on prior draws (no likelihood) p must come out U(0, 1) for every a."""
    cps = load_benchmark("consensus_prior_sensitivity")
    rng = np.random.default_rng(0)
    pc = rng.beta(2.0, 2.0, 200_000)  # p_c's prior under a = 3
    for a in (1.5, 2.0, 5.0, 9.0):
        p = cps.reweighted(pc, a, rng, n=20_000)
        assert stats.kstest(p, stats.uniform().cdf).pvalue > 1e-3, a
        m = rng.random(20_000)  # π_a(p_c) integrates to 1
        assert cps.prior_pc(m, a).mean() == pytest.approx(1.0, abs=0.02)
        # p_c = ½: the joint density a κ^{a−2} (Jacobian 1 / κ) makes κ | p_c Beta(a − 1, 1)
        kappa = cps.draw_kappa(np.full(20_000, 0.5), a, rng)
        assert stats.kstest(kappa, stats.beta(a - 1, 1).cdf).pvalue > 1e-3, a


def test_judge_accuracies_on_mtbench_match_the_human_labels():
    """Real judges (MT-Bench, 8 judges, G0 given 80% of the preferred outputs): fitted on the
    verdicts alone, the consensus model's judge accuracies match the judges' agreement with the
    hidden human labels (mean 0.74); the one-coin model's, its accuracy on the consensus, are
    too high (0.83)."""
    df = bj.assign_generators(bj.load_dataset("mtbench"), share=0.8, seed=0)
    decided = df[df["winner"].isin(["a", "b"])]
    truth = (decided["winner"] == decided["human"]).mean()
    kw = dict(chains=2, draws=300, tune=300, seed=0)
    verdicts = df.drop(columns="human")
    cons = bj.judge_summary(bj.win_rate(verdicts, method="dawid-skene", ds_model="consensus", prior="none", **kw))["acc_g0"].mean()
    one = bj.judge_summary(bj.win_rate(verdicts, method="dawid-skene", ds_model="one-coin", prior="none", **kw))["acc_g0"].mean()
    assert abs(cons - truth) < 0.03
    assert one - truth > 0.05
