"""Win rates without labels that name their estimand (:mod:`bayes_judge.winrate.bridge`).

Checks: the judges' rate covers the panel's rate of the population the items were drawn from;
the bridge reduces to its closed form when its prior is a point; the prior fit recovers a known
λ and τ; seeds reproduce; the default of ``bj.win_rate`` names its estimand, answers the case of
issue 30 (a unanimous panel, people at 0.84) with an interval that holds the truth, and refuses
what it cannot answer; real natural pairs (SummEval) cover.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import bayes_judge as bj
from bayes_judge.diagnose import UninformativeJudgeWarning
from bayes_judge.generative.winrate_models import ConsensusPriors
from bayes_judge.winrate.bridge import (
    BRIDGE_PRIOR,
    BridgePrior,
    consensus_votes,
    fit_bridge_prior,
    human_draws,
    judges_draws,
    labels_to_decide,
    panel_scores,
)


def _table(votes: np.ndarray, both_orders: bool = True) -> pd.DataFrame:
    """Items x judges verdicts (1: system "A" wins, 0: "B", 0.5: tie) as a judgments table, each
    judge in both presentation orders with the same verdict."""
    n, judges = votes.shape
    rows = []
    for i in range(n):
        for j in range(judges):
            v = votes[i, j]
            w = "tie" if v == 0.5 else ("a" if v == 1 else "b")
            rows.append(dict(item=i, a="A", b="B", judge=f"j{j}", winner=w))
            if both_orders:
                w2 = "tie" if v == 0.5 else ("b" if v == 1 else "a")
                rows.append(dict(item=i, a="B", b="A", judge=f"j{j}", winner=w2))
    return pd.DataFrame(rows)


def test_panel_scores_and_consensus_votes_closed_form():
    n1 = np.array([[2, 0], [0, 0], [1, 1]])
    n0 = np.array([[0, 1], [0, 0], [1, 0]])
    nt = np.array([[0, 1], [2, 0], [0, 0]])
    np.testing.assert_allclose(panel_scores(n1, n0, nt), [2.5 / 4, 0.5, 2 / 3])
    np.testing.assert_allclose(consensus_votes(n1, n0), [2 / 3, 0.5, 2 / 3])


def test_judges_rate_covers_the_population_rate():
    """Items drawn from a population whose panel rate is 0.7: the Bayesian bootstrap's 90%
    interval covers it in about 90% of 60 draws (P(<= 48 of 60) < 0.05)."""
    rng = np.random.default_rng(0)
    covered = 0
    for rep in range(60):
        s = rng.beta(2.8, 1.2, size=80)  # item-level panel shares, population mean 0.7
        d = judges_draws(s, np.zeros(80, dtype=int), 1, chains=2, draws=500, seed=rep)
        lo, hi = np.quantile(d, [0.05, 0.95])
        covered += lo <= 0.7 <= hi
    assert covered >= 49


def test_bridge_is_its_closed_form_when_the_prior_is_a_point():
    """λ = 1.5, α = 0, many identical items: p = expit(1.5 logit π) up to the pseudo-item."""
    v = np.full(4000, 0.8)
    d = human_draws(v, np.zeros(4000, dtype=int), 1, prior=BridgePrior(1.5, 0.0, 0.0, 0.0), chains=1, draws=400, seed=0)
    pi = (0.8 * 4000 + 0.5) / 4001
    assert d["p_consensus"].mean() == pytest.approx(pi, abs=1e-3)
    assert d["p"].mean() == pytest.approx(expit(1.5 * logit(pi)), abs=2e-3)
    assert np.all(d["lam"] == 1.5) and np.all(d["alpha"] == 0.0)


def test_fit_bridge_prior_recovers_lambda_and_tau():
    rng = np.random.default_rng(3)
    lams = {"s0": 0.8, "s1": 1.3, "s2": 2.0, "s3": 1.1}
    cases = []
    for name, lam in lams.items():
        for _ in range(40):
            pi = rng.uniform(0.2, 0.8)
            n = 400
            v = (rng.random(n) < pi).astype(float)
            t = rng.binomial(n, expit(lam * logit(v.mean()) + 0.4 * rng.standard_normal())) / n
            cases.append((name, v, t))
    prior = fit_bridge_prior(cases, human_a=0.0)
    logs = np.log(list(lams.values()))
    assert prior.lam_median == pytest.approx(np.exp(logs.mean()), rel=0.15)
    assert prior.lam_log_sd == pytest.approx(logs.std(ddof=1), abs=0.12)
    assert prior.tau == pytest.approx(0.4, abs=0.12)
    with pytest.raises(ValueError, match="at least 2 sets"):
        fit_bridge_prior([c for c in cases if c[0] == "s0"])


def test_bridge_prior_is_stated_and_checked():
    assert "LogNormal(log 1.4, 0.58)" in BRIDGE_PRIOR.describe()
    assert BRIDGE_PRIOR.scaled(2.0).tau == pytest.approx(2 * BRIDGE_PRIOR.tau)
    assert BRIDGE_PRIOR.scaled(2.0).human_a == pytest.approx(BRIDGE_PRIOR.human_a / 2)
    with pytest.raises(ValueError, match="lam_median"):
        BridgePrior(lam_median=0.0)
    with pytest.raises(ValueError, match="tau"):
        BridgePrior(tau=float("nan"))


def test_labels_to_decide():
    n = labels_to_decide(np.array([0.6, 0.5, 0.9]), np.array([1000, 1000, 1000]))
    assert n[0] == np.ceil((1.645 * np.sqrt(0.24) / 0.1) ** 2) and n[1] == 1000 and n[2] == 2


def test_default_names_its_estimand_and_reproduces():
    rng = np.random.default_rng(1)
    votes = (rng.random((60, 5)) < 0.7).astype(float)
    df = _table(votes)
    fit = bj.win_rate(df, seed=4)
    assert fit.attrs["method"] == "bridge" and fit.attrs["estimand"] == "human"
    assert "λ ~ LogNormal" in fit.attrs["bridge_prior"]
    s = bj.win_rate_summary(fit, hdi_prob=0.9)
    assert s["estimand"].iloc[0] == "human" and "labels_to_decide" in s
    # the table carries what the answer rests on: the prior and its sensitivity
    assert "λ ~ LogNormal" in s.attrs["bridge_prior"] and "bridged to people's" in s.attrs["estimand_note"]
    sens = json.loads(fit.attrs["prior_sensitivity"])
    assert s["low_prior_x2"].iloc[0] == sens["x2"][0][0] and s["high_prior_x0.5"].iloc[0] == sens["x0.5"][0][1]
    assert s["low_prior_x2"].iloc[0] < s["low_prior_x0.5"].iloc[0]  # a wider prior, a wider interval
    from bayes_judge.analysis.summary import prior_sensitivity

    ps = prior_sensitivity(fit)  # the one reader the summary, the report and the CLI share
    assert ps.loc[s.index[0], "fitted_low"] == pytest.approx(np.quantile(fit.posterior["p"].to_numpy(), 0.05))
    assert ps.loc[s.index[0], "low_prior_x2"] < ps.loc[s.index[0], "fitted_low"] < ps.loc[s.index[0], "low_prior_x0.5"]
    again = bj.win_rate(df, seed=4)
    np.testing.assert_array_equal(fit.posterior["p"].to_numpy(), again.posterior["p"].to_numpy())
    other = bj.win_rate(df, seed=5)
    assert not np.array_equal(fit.posterior["p"].to_numpy(), other.posterior["p"].to_numpy())
    judges = bj.win_rate(df, estimand="judges", seed=4)
    sj = bj.win_rate_summary(judges, hdi_prob=0.9)
    assert judges.attrs["method"] == "panel" and sj["estimand"].iloc[0] == "judges"
    assert sj["p_mean"].iloc[0] == pytest.approx(votes.mean(), abs=0.02)
    # the human rate's interval is wider than the judges' own: the verdicts do not identify it
    assert (s["hdi_high"] - s["hdi_low"]).iloc[0] > 2 * (sj["hdi_high"] - sj["hdi_low"]).iloc[0]
    # with labels the default is the label regression, for the same estimand
    lab = df.assign(human=np.where(df["item"] % 5 == 0, np.where(df["a"] == "A", "a", "b"), None))
    reg = bj.win_rate(lab, chains=2, draws=200, tune=200, seed=0)
    assert reg.attrs["method"] == "regression" and reg.attrs["estimand"] == "human"
    # the next labels of a no-label fit
    assert len(bj.next_labels(fit, 3)) == 3


def test_a_unanimous_panel_does_not_claim_certainty_about_people():
    """Issue 30's example: the judges prefer system A on 98% of 70 items, people on 84%: the
    default's 90% interval (equal-tailed) reaches down to about 0.84 (the consensus model's p
    never lay nearer ½ than the consensus rate, so it said [0.95, 1.00])."""
    rng = np.random.default_rng(2)
    votes = np.where(rng.random((70, 5)) < 0.98, 1.0, 0.0)
    s = bj.win_rate_summary(bj.win_rate(_table(votes), seed=0), hdi_prob=0.9).iloc[0]
    assert s["hdi_low"] <= 0.85 and s["hdi_high"] > 0.95
    assert s["hdi_high"] - s["hdi_low"] < 0.35  # honest, not [0, 1]


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(estimand="people"), "estimand must be one of"),
        (dict(estimand="judges", method="dawid-skene"), "estimand='judges' is the panel's own rate"),
        (dict(method="panel"), "pass estimand='judges'"),
        (dict(method="bridge", ties="random"), "counts ties"),
        (dict(method="bridge", priors=ConsensusPriors()), "BridgePrior"),
    ],
)
def test_bad_requests(kw, match):
    df = _table(np.ones((10, 2)))
    with pytest.raises((ValueError, TypeError), match=match):
        bj.win_rate(df, **kw)


def test_the_judges_rate_is_the_panel_s_not_the_observed_share():
    """method='observed' said estimand 'judges' in its attrs, but its Beta interval treats verdicts as
    independent (3 items x 20 judges: width 0.14 against the panel's 0.43): asked for estimand='judges'
    it is refused with that reason, and its note says so."""
    df = _table(np.where(np.random.default_rng(0).random((40, 3)) < 0.7, 1.0, 0.0))
    fit = bj.win_rate(df, method="observed", seed=0)
    assert fit.attrs["estimand"] == "judges" and "treats every verdict as independent" in fit.attrs["estimand_note"]
    with pytest.raises(ValueError, match="method='observed' is Gao et al. 2024's k"):
        bj.win_rate(df, method="observed", estimand="judges")
    assert bj.win_rate(df, estimand="judges", seed=0).attrs["method"] == "panel"


def test_not_a_table():
    with pytest.raises(TypeError, match="pandas DataFrame"):
        bj.win_rate([{"item": 1, "a": "A", "b": "B", "winner": "a"}])


def test_natural_pairs_summeval_cover():
    """Real systems, nothing reassigned: SummEval's fluency, all 66 pairs of 12 summarisers, 9 LLM
    judges; the default's 90% intervals cover the experts' rate on at least 80% of the pairs (the
    benchmark's full run: benchmarks/results/natural_pairs.md)."""
    from bayes_judge.datasets import natural

    df = natural.system_pairs("summeval", "fluency")
    truth = natural.truth(df)
    s = bj.win_rate_summary(bj.win_rate(df.assign(human=None), seed=0), hdi_prob=0.9).join(truth)
    covered = ((s["hdi_low"] <= s["p_true"]) & (s["p_true"] <= s["hdi_high"])).mean()
    assert covered >= 0.8 and (s["hdi_high"] - s["hdi_low"]).mean() < 0.45


def test_people_s_own_disagreement_pulls_toward_half():
    """κ_h ~ Beta(a, 1): E[p] = ½ + a / (a + 1) (p* − ½) at a point λ and α = 0."""
    v = np.full(4000, 0.9)
    d = human_draws(v, np.zeros(4000, dtype=int), 1, prior=BridgePrior(1.0, 0.0, 0.0, 4.0), chains=2, draws=2000, seed=1)
    pi = (0.9 * 4000 + 0.5) / 4001
    assert d["p"].mean() == pytest.approx(0.5 + 0.8 * (pi - 0.5), abs=3e-3)


# -- issue 30's bad inputs: each a clear error or an honest wide answer with its reason -----------


def _pairs_table(n_items: int, judges: int, p_first: float, seed: int, systems=("A", "B")) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return _table((rng.random((n_items, judges)) < p_first).astype(float)).replace(
        {"a": {"A": systems[0], "B": systems[1]}, "b": {"A": systems[0], "B": systems[1]}})


@pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")
def test_a_judge_that_always_names_one_position_is_refused_with_the_reason():
    df = _table(np.ones((30, 1))).assign(winner="a")  # "A" whatever the order
    with pytest.raises(ValueError, match="Why: 1 of 1 judge.*follows the position"):
        bj.win_rate(df)


def test_a_judge_that_always_says_a_in_one_order_is_refused_too():
    """Shown in one order only, "always A" reads as "x always wins": the same refusal, not 0.94 [0.83, 1]."""
    df = pd.DataFrame({"item": range(60), "a": "x", "b": "y", "winner": "a"})
    for estimand in ("human", "judges"):
        with pytest.raises(ValueError, match="cannot answer the question.*all 60 of its verdicts are 'a'"):
            bj.win_rate(df, estimand=estimand)
    labelled = df.assign(human=["a", "b", "b"] * 20)  # people can answer where the judge cannot
    with pytest.warns(UninformativeJudgeWarning):
        fit = bj.win_rate(labelled)
    p = bj.win_rate_summary(fit)["p_mean"].iloc[0]
    assert 0.15 < p < 0.55  # people preferred x on 20 of 60 items


@pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")
def test_a_constant_judge_is_refused_with_the_reason():
    df = _table(np.full((30, 2), 0.5))  # every verdict a tie
    with pytest.raises(ValueError, match="all 60 of its verdicts are a tie"):
        bj.win_rate(df)


def test_a_position_driven_judge_beside_an_informative_one_is_warned_and_recorded():
    import json

    from bayes_judge.comparator import UninformativeJudgeWarning

    rng = np.random.default_rng(0)
    df = _table((rng.random((40, 2)) < 0.8).astype(float))
    first = (df["judge"] == "j1") & (rng.random(len(df)) < 0.95)
    df.loc[first, "winner"] = "a"  # j1 names the first position 95% of the time
    with pytest.warns(UninformativeJudgeWarning, match="'j1'.*follows the position"):
        fit = bj.win_rate(df)
    diag = json.loads(fit.attrs["judge_diagnosis"])
    assert diag["j1"]["informative"] is False and diag["j0"]["informative"] is True


def test_single_judge_and_unanimous_judges_give_an_honest_interval():
    one = bj.win_rate_summary(bj.win_rate(_pairs_table(80, 1, 0.7, 1)), hdi_prob=0.9).iloc[0]
    same = np.repeat((np.random.default_rng(2).random((80, 1)) < 0.7).astype(float), 6, axis=1)
    from bayes_judge.diagnose import DuplicateJudgesWarning

    with pytest.warns(DuplicateJudgesWarning, match="j0 = j1 = j2 = j3 = j4 = j5"):  # issue 30: judges that always agree
        agree = bj.win_rate_summary(bj.win_rate(_table(same)), hdi_prob=0.9).iloc[0]
    for s in (one, agree):  # neither certain nor [0, 1]
        assert 0.25 < s["hdi_high"] - s["hdi_low"] < 0.6 and s["hdi_low"] < 0.7 < s["hdi_high"]


def test_a_pair_judged_on_three_items_is_wide_and_says_how_many_labels_would_decide():
    big = _pairs_table(60, 4, 0.7, 3)
    tiny = _pairs_table(3, 4, 0.7, 4, systems=("A", "C")).assign(item=lambda d: "t" + d["item"].astype(str))
    s = bj.win_rate_summary(bj.win_rate(pd.concat([big, tiny], ignore_index=True)), hdi_prob=0.9)
    w = s["hdi_high"] - s["hdi_low"]
    assert w["A vs C"] > w["A vs B"] and s.loc["A vs C", "hdi_low"] < 0.5
    assert 0 < s.loc["A vs C", "labels_to_decide"] <= 3  # capped at the pair's items
    # a system in one pair only (C) is answered like any other
    assert np.isfinite(s.loc["A vs C", "p_mean"])


def test_a_unanimous_panel_s_rate_stays_in_range_and_is_not_certain():
    """Found by tests/test_fuzz.py: the bootstrap mean of values all 1.0 came out 1 + 2e-16. And
    seven unanimous items do not make the rate exactly 1: the pseudo-item of unknown value keeps
    it below, while the interval still reaches the panel's share."""
    d = judges_draws(np.ones(7), np.zeros(7, dtype=int), 1, chains=4, draws=1000, seed=0)
    assert d.max() <= 1.0 and np.quantile(d, 0.05) < 0.97 and d.max() > 0.999


def test_the_normal_limit_of_the_bootstrap_matches_the_exact_draws():
    """Above EXACT_MAX items the judges' rate is drawn from its normal limit: same mean and sd."""
    from bayes_judge.winrate import bridge

    rng = np.random.default_rng(5)
    s = rng.beta(2, 1, size=bridge.EXACT_MAX + 1)
    exact = judges_draws(s[:-1], np.zeros(s.size - 1, dtype=int), 1, chains=2, draws=2000, seed=0)
    limit = judges_draws(s, np.zeros(s.size, dtype=int), 1, chains=2, draws=2000, seed=0)
    assert limit.mean() == pytest.approx(exact.mean(), abs=2e-3)
    assert limit.std() == pytest.approx(exact.std(), rel=0.08)


def test_labels_to_decide_follows_the_summary_s_interval_mass():
    rng = np.random.default_rng(8)
    fit = bj.win_rate(_table((rng.random((40, 3)) < 0.6).astype(float)), seed=0)
    s90, s99 = (bj.win_rate_summary(fit, hdi_prob=h).iloc[0] for h in (0.9, 0.99))
    assert s90["labels_to_decide"] > 0  # undecided at 90% with 40 items near 0.6
    assert s99["labels_to_decide"] >= s90["labels_to_decide"]
    p = s90["p_mean"]
    assert s90["labels_to_decide"] == min(40, np.ceil((1.645 * np.sqrt(p * (1 - p)) / abs(p - 0.5)) ** 2))



def test_the_labelled_default_says_its_rate_is_over_the_items_at_hand():
    """The label regression's estimand is the share of these items (finite population): with every
    item labelled the rate is known exactly, and the note says so rather than a zero-width interval
    passing for people's preference in general."""
    df = bj.simulate_win_rate(30, p=0.8, seed=0)
    fit = bj.win_rate(df, chains=2, draws=100, tune=100)
    assert fit.attrs["method"] == "regression"
    assert "these 30 items" in fit.attrs["estimand_note"] and "every item is labelled" in fit.attrs["estimand_note"]


def test_a_pair_without_labels_of_its_own_is_said_so():
    """The label regression read an unlabelled pair's judges through the other pairs' labels (0.26
    [0.0, 0.5] for a truth of 0.9 where the judges err otherwise) with a note pooling the labels."""
    d1 = bj.simulate_win_rate(300, p=0.6, q0=[0.85, 0.8, 0.8], seed=1, systems=("A", "B"))
    d2 = bj.simulate_win_rate(20, p=0.8, q0=[0.25, 0.2, 0.3], q1=[0.95, 0.95, 0.9], seed=2, systems=("A", "C"))
    d2["item"] += 1000
    x = pd.concat([d1, d2])
    x["human"] = x["human"].where(x["item"].astype(int) < 30)
    with pytest.warns(UserWarning, match=r"\['A vs C'\] have no human label of their own"):
        fit = bj.win_rate(x, chains=2, draws=200, tune=200, seed=0)
    assert "no human label of their own" in fit.attrs["estimand_note"]


def test_one_source_set_twice_is_refused_by_transfer():
    """The same labelled set passed twice collapsed the spread between sources: 0.904 [0.84, 0.995]
    for a truth of 0.8, where once it gave [0.07, 1.0]."""
    src = bj.simulate_win_rate(80, p=0.6, q0=[0.8, 0.7], seed=3)
    tgt = bj.simulate_win_rate(60, p=0.8, q0=[0.8, 0.7], seed=4).assign(human=None)
    with pytest.raises(ValueError, match="sources 'a' and 'b' hold the same judgments and labels"):
        bj.win_rate(tgt, ood={"a": src, "b": src.copy()})


def test_the_judges_own_rates_are_named_the_judges_and_bare_items_named():
    """method='independent' (the mean of the judges' rates) was labelled people's rate, 0.646 for
    people's 0.75 with a verdict; 'observed' said "pooled share" of an unweighted mean over judges;
    items left without verdicts by judges= ended in "bridge: 5 item(s) have no verdict"."""
    rng = np.random.default_rng(3)
    votes = (rng.random((40, 3)) < 0.7).astype(float)
    df = _table(votes)
    ind = bj.win_rate(df, method="independent", chains=2, draws=200, tune=200, seed=0)
    assert ind.attrs["estimand"] == "judges" and "the mean of the judges' own rates" in ind.attrs["estimand_note"]
    assert bj.win_rate_summary(ind)["estimand"].iloc[0] == "judges"
    with pytest.raises(ValueError, match="method='independent' is the mean of the judges' own rates"):
        bj.win_rate(df, method="independent", estimand="judges")
    obs = bj.win_rate(df, method="observed", seed=0)
    assert "every judge weighted alike however many verdicts it gave" in obs.attrs["estimand_note"]
    bare = df[~((df["judge"] != "j2") & (df["item"] < 5))]  # items 0-4 judged by j2 only
    for kw in ({}, {"estimand": "judges"}):
        with pytest.raises(ValueError, match=r"5 item\(s\) have no verdict from the judges kept .*judges= left out"):
            bj.win_rate(bare, judges=["j0", "j1"], seed=0, **kw)
