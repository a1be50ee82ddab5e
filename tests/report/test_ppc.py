"""Posterior predictive simulations: seeded, shaped right, consistent with the data they replicate."""

from __future__ import annotations

import arviz as az
import numpy as np

from bayes_judge import plots
from bayes_judge.report.ppc import ranking_checks, win_rate_checks, win_rate_ppc_applies


def test_win_rate_checks(ds_split_fit):
    checks = win_rate_checks(ds_split_fit, max_draws=100, seed=1)
    assert [c.name for c in checks] == ["agreement with the other judges", "wins of the first system"]
    agree, wins = checks
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


def _variant(fit, rename: dict, drop: list[str], method: str) -> az.InferenceData:
    """A copy of a two-coin fit laid out like a one-coin (``q``) or independent-raters (``k``) fit."""
    post = fit.posterior.rename(rename).drop_vars(drop)
    const_rename = {f"{a}_{old}": f"{a}_{new}" for old, new in rename.items() for a in ("alpha", "beta")}
    const = fit.constant_data.rename(const_rename).drop_vars([f"{a}_{d}" for d in drop for a in ("alpha", "beta")])
    return az.InferenceData(
        posterior=post, observed_data=fit.observed_data, constant_data=const,
        attrs={**fit.attrs, "method": method},
    )


def test_one_coin_and_independent_layouts(ds_labels_fit):
    one = _variant(ds_labels_fit, {"q0": "q"}, ["q1"], "dawid-skene")
    ind = _variant(ds_labels_fit, {"q0": "k"}, ["q1"], "independent")
    for idata, var in ((one, "q"), (ind, "k")):
        assert win_rate_ppc_applies(idata)
        assert plots.prior_vars(idata) == [var]
        checks = win_rate_checks(idata, max_draws=40, seed=0)
        assert [c.replicated.shape for c in checks] == [(40, 3), (40, 1)]
        fig = plots.plot_prior_posterior(idata)
        assert fig.axes[0].get_title(loc="left").startswith(var)
    observed = ds_labels_fit.copy()
    observed.attrs["method"] = "observed"
    assert not win_rate_ppc_applies(observed)
