"""The vectorized R-hat, ESS and MCSE give ArviZ's numbers, quantity by quantity."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

from bayes_judge.inference import mcmc_stats


def _ar1(rng, chains, draws, q, phi):
    e = rng.normal(size=(chains, draws, q))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


def _cases():
    rng = np.random.default_rng(7)
    nan_const = rng.normal(size=(4, 100, 5))
    nan_const[:, :, 0] = 3.0  # a constant quantity
    nan_const[1, 5, 1] = np.nan  # a quantity with a NaN draw
    return {
        "iid": rng.normal(size=(4, 400, 6)),
        "sticky": _ar1(rng, 4, 400, 6, 0.95),  # Geyer's sequence runs long
        "antithetic": _ar1(rng, 4, 300, 4, -0.6),  # ESS above the number of draws
        "odd draws, chains apart": _ar1(rng, 3, 101, 4, 0.5) + np.arange(3)[:, None, None] * 0.3,
        "ties": rng.integers(0, 5, size=(4, 200, 4)).astype(float),
        "resampled": rng.normal(size=300)[rng.integers(0, 300, size=(4, 250, 3))],  # a Laplace fit's
        # a tie at the 5% or 95% quantile, where ArviZ's quantile falls an ulp below the tied draws
        "tie at the tail quantile": (lambda r: r.normal(size=300)[r.integers(0, 300, size=(4, 250, 3))])(
            np.random.default_rng(8)),
        "rare event": (rng.random((4, 200, 3)) < 0.02).astype(float),
        "one chain": _ar1(rng, 1, 200, 3, 0.7),
        "five draws": rng.normal(size=(2, 5, 3)),
        "three draws": rng.normal(size=(4, 3, 2)),  # too few: NaN
        "constant and NaN": nan_const,
        "matrix-valued": rng.normal(size=(2, 60, 3, 2)),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_r_hat_ess_and_mcse_are_arviz_numbers(name):
    x = _cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = az.from_dict(posterior={"x": x})
        want_r = az.rhat(post)["x"].to_numpy()
        want_e = az.ess(post, method="bulk")["x"].to_numpy()
        want_mean = az.ess(post, method="mean")["x"].to_numpy()
        summ = az.summary(post, kind="diagnostics", round_to="none")
    r, e = mcmc_stats.rhat_ess_bulk(x)
    assert r.shape == e.shape == x.shape[2:]
    np.testing.assert_allclose(r, want_r, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(e, want_e, rtol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(mcmc_stats.rhat(x), r)
    np.testing.assert_array_equal(mcmc_stats.ess_bulk(x), e)
    np.testing.assert_allclose(mcmc_stats.ess_mean(x), want_mean, rtol=1e-12, equal_nan=True)
    got = mcmc_stats.diagnostics(x)
    for col in ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"):
        np.testing.assert_allclose(got[col].ravel(), summ[col].to_numpy(), rtol=1e-11, equal_nan=True, err_msg=col)


def test_a_stuck_chain_is_seen():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 500, 2))
    x[0, :, 1] += 3.0  # one chain elsewhere
    r, e = mcmc_stats.rhat_ess_bulk(x)
    assert r[0] < 1.01 and r[1] > 1.2
    assert e[1] < 100 < e[0]


def test_draws_without_chains_are_refused():
    with pytest.raises(ValueError, match="chain, draw"):
        mcmc_stats.rhat(np.zeros(10))
