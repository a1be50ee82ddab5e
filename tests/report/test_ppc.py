"""Posterior predictive simulations: seeded, shaped right, consistent with the data they replicate."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

import bayes_judge as bj
from bayes_judge import plots
from bayes_judge.report.ppc import (
    PPCCheck,
    _order_consistency,
    _pair_agreement,
    ranking_checks,
    win_rate_checks,
    win_rate_ppc_applies,
)
from bayes_judge.report.sections import _ppc_table, _swap_sum_note, labels_needed


def test_win_rate_checks(ds_split_fit):
    checks = win_rate_checks(ds_split_fit, max_draws=100, seed=1)
    # swap="split": 3 judges x 2 orders = 6 one-verdict judges, so 15 pairs and no order consistency
    assert [c.name for c in checks] == ["agreement with the other judges", "agreement between two judges",
                                        "wins of the first system"]
    agree, pairs, wins = checks
    assert pairs.replicated.shape == (100, 15) and len(pairs.labels) == 15
    n_judges = ds_split_fit.posterior.sizes["judge"]
    assert agree.replicated.shape == (100, n_judges) and agree.observed.shape == (n_judges,)
    assert np.all((agree.replicated >= 0) & (agree.replicated <= 1))
    total = float((ds_split_fit.observed_data["n_first"] + ds_split_fit.observed_data["n_second"]).sum())
    assert np.all((wins.replicated >= 0) & (wins.replicated <= total))
    assert wins.observed[0] == float(ds_split_fit.observed_data["n_first"].sum())
    assert np.all((agree.ppp() >= 0) & (agree.ppp() <= 1))


def test_win_rate_checks_are_seeded(ds_labels_fit):
    a = win_rate_checks(ds_labels_fit, max_draws=50, seed=4)
    b = win_rate_checks(ds_labels_fit, max_draws=50, seed=4)
    c = win_rate_checks(ds_labels_fit, max_draws=50, seed=5)
    np.testing.assert_array_equal(a[1].replicated, b[1].replicated)
    assert not np.array_equal(a[1].replicated, c[1].replicated)


def test_well_specified_model_passes(ds_labels_fit):
    """Data simulated from the model itself: the observed statistics are not extreme."""
    for check in win_rate_checks(ds_labels_fit, max_draws=300, seed=0):
        assert np.all((check.ppp() > 0.01) & (check.ppp() < 0.99)), check.name


def test_ranking_checks(ranking_fit):
    wins, pos = ranking_checks(ranking_fit, max_draws=80, seed=0)
    n_comp = ranking_fit.observed_data.sizes["comparison"]
    assert wins.replicated.shape == (80, ranking_fit.posterior.sizes["candidate"])
    np.testing.assert_allclose(wins.replicated.sum(axis=1), n_comp)  # every comparison has one winner
    np.testing.assert_allclose(wins.observed.sum(), n_comp)
    assert pos.replicated.shape == (80, 1) and 0 <= pos.observed[0] <= 1


def _variant(fit, rename: dict, drop: list[str], method: str, model: str) -> az.InferenceData:
    """A copy of a two-coin fit laid out like a one-coin (``q``) or independent-raters (``k``) fit."""
    post = fit.posterior.rename(rename).drop_vars(drop)
    const_rename = {f"{a}_{old}": f"{a}_{new}" for old, new in rename.items() for a in ("alpha", "beta")}
    const = fit.constant_data.rename(const_rename).drop_vars([f"{a}_{d}" for d in drop for a in ("alpha", "beta")])
    return az.InferenceData(
        posterior=post, observed_data=fit.observed_data, constant_data=const,
        attrs={**fit.attrs, "method": method, "model": model},
    )


def test_one_coin_and_independent_layouts(ds_labels_fit):
    one = _variant(ds_labels_fit, {"q0": "q"}, ["q1"], "dawid-skene", "one-coin")
    ind = _variant(ds_labels_fit, {"q0": "k"}, ["q1"], "independent", "independent")
    for idata, var in ((one, "q"), (ind, "k")):
        assert win_rate_ppc_applies(idata)
        assert plots.prior_vars(idata) == [var]
        checks = win_rate_checks(idata, max_draws=40, seed=0)
        assert [c.replicated.shape for c in checks] == [(40, 3), (40, 3), (40, 1)]
        fig = plots.plot_prior_posterior(idata)
        assert fig.axes[0].get_title(loc="left").startswith(var)
    observed = ds_labels_fit.copy()
    observed.attrs["method"] = "observed"
    assert not win_rate_ppc_applies(observed)


def test_pair_agreement_and_order_consistency_by_hand():
    # 4 items, 3 judges; verdicts for G0 out of n_tot (2: both orders, 1: one order, 0: none)
    n_tot = np.array([[2, 2, 1], [2, 2, 2], [2, 1, 0], [2, 2, 2]], float)
    first = np.array([[2, 0, 1], [1, 2, 2], [0, 0, 0], [2, 2, 1]], float)
    # item verdicts: judge 0: +, 0, -, +; judge 1: -, +, -, +; judge 2: +, +, 0, 0
    ea, eb = np.array([0, 0, 1]), np.array([1, 2, 2])
    agree = _pair_agreement(first[None], n_tot, ea, eb)[0]
    np.testing.assert_allclose(agree, [2 / 3, 1, 1 / 2])  # both decided: (0,1) items 0,2,3; (0,2) 0; (1,2) 0,1
    consistent = _order_consistency(first[None], n_tot)[0]
    np.testing.assert_allclose(consistent, [3 / 4, 3 / 3, 1 / 2])  # items in both orders: 4, 3 and 2


def _repeat_across_orders(df):
    """Every judge's second presentation order copies its first: errors repeated across orders."""
    df = df.sort_values(["item", "judge", "a"]).reset_index(drop=True)
    first = df.groupby(["item", "judge"], sort=False).cumcount() == 0
    lead = df[first].set_index(["item", "judge"])
    named = lead["a"].where(lead["winner"] == "a", lead["b"])  # the system the first verdict named
    key = list(zip(df["item"], df["judge"], strict=True))
    chosen = named.loc[key].to_numpy()
    return df.assign(winner=np.where(df["a"].to_numpy() == chosen, "a", "b"))


def test_order_consistency_flags_errors_repeated_across_orders():
    """Independent orders (the model's assumption) pass; a judge that repeats its verdict in the
    other order is more consistent than the model replicates, and the check says so."""
    df = bj.simulate_win_rate(n_items=150, p=0.7, q0=[0.75, 0.8, 0.7], swap=True, seed=5).drop(columns="human")
    kw = dict(method="dawid-skene", prior="none", swap="none", chains=2, draws=200, tune=200, seed=0)
    for data, extreme in ((df, False), (_repeat_across_orders(df), True)):
        checks = {c.name: c for c in win_rate_checks(bj.win_rate(data, **kw), max_draws=200, seed=0)}
        oc = checks["order consistency"]
        assert oc.replicated.shape == (200, 3)
        if extreme:  # the model may absorb one judge's repeats as near-perfect accuracy, not all three
            np.testing.assert_allclose(oc.observed, 1.0)
            assert (oc.ppp() < 0.01).sum() >= 2
        else:
            assert np.all((oc.ppp() > 0.01) & (oc.ppp() < 0.99))


def test_labels_needed_closed_form():
    # normal interval of width w: n0 = (2 z)^2 p (1 - p) / w^2; finite-population correction
    assert labels_needed(0.5, 10**9, 0.1) == 271  # 270.55 rounded up
    assert labels_needed(0.8, 200, 0.2) == 36  # n0 = 43.29 -> 43.29 / (1 + 42.29 / 200) = 35.7
    assert labels_needed(0.5, 50, 0.01) == 50  # never more than the items


@pytest.mark.parametrize("name, hinted", [("agreement between two judges", True), ("order consistency", True),
                                          ("wins of the first system", False)])
def test_correlation_problems_say_how_many_labels(name, hinted):
    extreme = PPCCheck(name=name, xlabel="x", labels=["r"], observed=np.array([1.0]),
                       replicated=np.zeros((50, 1)))
    _, problems = _ppc_table([extreme], 0.9, "dawid-skene", labels_hint="Human labels settle it: 36 ...")
    assert len(problems) == 1 and ("Human labels settle it" in problems[0]) == hinted


def test_a_swap_and_sum_fit_says_order_consistency_is_not_checked():
    df = bj.simulate_win_rate(n_items=60, p=0.7, q0=[0.75, 0.8], swap=True, seed=6).drop(columns="human")
    kw = dict(method="dawid-skene", prior="none", chains=2, draws=100, tune=100, seed=0)
    summed = bj.win_rate(df, **kw)
    note = _swap_sum_note(summed)
    assert note.startswith("Order consistency is not checked")
    assert f"{summed.attrs['n_random_ties']} of its 120 item verdicts" in note
    assert _swap_sum_note(bj.win_rate(df, swap="none", **kw)) == ""


def test_pairs_that_never_judged_an_item_together_are_left_out():
    """Three judges on disjoint halves: judge 2 sees every item, judges 0 and 1 never share one."""
    df = bj.simulate_win_rate(n_items=80, p=0.7, q0=[0.8, 0.8, 0.75], seed=7).drop(columns="human")
    first_half = df["item"] < 40
    df = df[~((df["judge"] == df["judge"].unique()[0]) & ~first_half) & ~((df["judge"] == df["judge"].unique()[1]) & first_half)]
    fit = bj.win_rate(df, method="dawid-skene", prior="none", chains=2, draws=100, tune=100, seed=0)
    pairs = {c.name: c for c in win_rate_checks(fit, max_draws=50, seed=0)}["agreement between two judges"]
    assert len(pairs.labels) == 2 and np.all(np.isfinite(pairs.observed))


def test_mtbench_judges_agree_more_than_dawid_skene_replicates():
    """Real judges (MT-Bench, 8 judges, both orders kept): their errors are correlated, so pairs
    of judges agree more often than Dawid-Skene's conditionally independent judges replicate.
    The pairwise check flags 8 of the 28 pairs here, all on the side of too much agreement."""
    g = bj.assign_generators(bj.load_dataset("mtbench"), share=0.8, seed=0).drop(columns="human")
    fit = bj.win_rate(g, method="dawid-skene", prior="none", swap="none", chains=2, draws=500, tune=500, seed=0)
    pairs = {c.name: c for c in win_rate_checks(fit, max_draws=400, seed=0)}["agreement between two judges"]
    ppp, excess = pairs.ppp(), pairs.observed - pairs.replicated.mean(axis=0)
    flagged = (ppp < 0.01) | (ppp > 0.99)
    assert len(pairs.labels) == 28 and flagged.sum() >= 5
    assert np.all(excess[flagged] > 0) and excess.mean() > 0.02
