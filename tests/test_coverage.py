"""Calibration of the posterior intervals on a small grid (``benchmarks/interval_coverage.py`` runs 200).

Simulation-based calibration (Talts et al. 2018) of Dawid-Skene (``bj.win_rate``) and Bayesian
soft Bradley-Terry (``bj.rank(bayesian=True)``) with the fast nutpie backend, 40 replications
each (see :mod:`bayes_judge.analysis.sbc` for the generative stories).  Tolerances are honest for 40 fits:

* every scalar: its coverage count is Binomial(40, 0.9) if the posterior is exact (the fits are
  independent), so it must pass a two-sided binomial test at level 0.001 / m (Bonferroni over the
  m scalars);
* every group pooled: the per-fit coverage fractions are independent across fits but the
  scalars within one fit are correlated, so the pooled coverage must lie within 3.29 standard
  errors (99.9%) of 0.9, the SE from the spread of the per-fit fractions and never below the
  independent-binomial value;
* SBC ranks (L = 99 thinned draws, 5 bins): chi-square uniformity per scalar, Bonferroni 0.001.

The checks are first run on an exactly sampled conjugate model (must pass) and on a posterior
that is too narrow (must fail), so they have power as well as tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from bayes_judge.analysis.sbc import (
    SBCResult,
    central_interval,
    default_bins,
    hdi_interval,
    sbc_ranks,
    simulation_based_calibration,
    uniformity_pvalues,
)

N_SIMS = 40
ALPHA = 0.001


def calibration_failures(res: SBCResult, prob: float = 0.9) -> list[str]:
    """Every violated check (empty if the intervals and ranks look calibrated)."""
    out = []
    n, m = res.cover_eti.shape
    for kind, cov in (("ETI", res.cover_eti), ("HDI", res.cover_hdi)):
        for j, name in enumerate(res.names):
            k = int(cov[:, j].sum())
            pv = binomtest(k, n, prob).pvalue
            if pv < ALPHA / m:
                out.append(f"{kind} {name}: {k}/{n} covered (binomial p = {pv:.2g})")
        for g in dict.fromkeys([*res.groups, "all"]):
            cols = res.group_columns(g)
            per_fit = cov[:, cols].mean(axis=1)
            c = per_fit.mean()
            var = max(per_fit.var(ddof=1) if n > 1 else 0.0, prob * (1 - prob) / len(cols))
            se = np.sqrt(var / n)
            if abs(c - prob) > 3.29 * se:
                out.append(f"{kind} group {g}: pooled coverage {c:.3f}, 0.9 +- {3.29 * se:.3f}")
    pv = uniformity_pvalues(res.rank, res.n_rank_draws, default_bins(n, res.n_rank_draws))
    for name, p in zip(res.names, pv, strict=True):
        if p * m < ALPHA:
            out.append(f"SBC ranks of {name}: chi-square p = {p:.2g} (x{m} Bonferroni)")
    return out


def _conjugate_result(n: int, scale: float, seed: int) -> SBCResult:
    """SBC of mu ~ N(0, 1), y_1..10 ~ N(mu, 1) with exact posterior draws, widened by ``scale``."""
    rng = np.random.default_rng(seed)
    L, m = 99, 3
    truth = rng.normal(size=(n, m))
    y = truth[:, None, :] + rng.normal(size=(n, 10, m))
    post_mean, post_sd = y.sum(axis=1) / 11, np.sqrt(1 / 11)
    rec = {k: [] for k in ("rank", "eti", "hdi")}
    for k in range(n):
        x = post_mean[k] + scale * post_sd * rng.normal(size=(2, 1000, m))
        flat = x.reshape(-1, m)
        eti, hdi = central_interval(flat), hdi_interval(flat)
        rec["rank"].append(sbc_ranks(x, truth[k], L))
        rec["eti"].append((eti[:, 0] <= truth[k]) & (truth[k] <= eti[:, 1]))
        rec["hdi"].append((hdi[:, 0] <= truth[k]) & (truth[k] <= hdi[:, 1]))
    return SBCResult(
        model="conjugate", names=["a", "b", "c"], groups=["mu"] * m, truth=truth,
        rank=np.array(rec["rank"]), cover_eti=np.array(rec["eti"]), cover_hdi=np.array(rec["hdi"]),
        r_hat=np.ones((n, m)), ess_bulk=np.full((n, m), 2000.0), divergences=np.zeros(n, int),
        wall_s=np.zeros(n), n_rank_draws=L, prob=0.9,
    )


@pytest.mark.slow
def test_checks_pass_on_exact_posterior_and_fail_on_overconfident_one():
    assert calibration_failures(_conjugate_result(N_SIMS, 1.0, seed=1)) == []
    bad = calibration_failures(_conjugate_result(N_SIMS, 0.5, seed=1))
    assert any("pooled coverage" in f for f in bad)
    assert any("SBC ranks" in f for f in bad)


@pytest.mark.slow
def test_interval_helpers_match_arviz():
    import arviz as az

    x = np.random.default_rng(3).gamma(2.0, size=(4000, 2))
    h = hdi_interval(x, 0.9)
    for j in range(2):
        np.testing.assert_allclose(h[j], az.hdi(x[:, j], hdi_prob=0.9))
    np.testing.assert_allclose(central_interval(x, 0.9), np.quantile(x, [0.05, 0.95], axis=0).T)


@pytest.fixture(scope="module")
def sbc_ds():
    return simulation_based_calibration("ds", n_sims=N_SIMS, seed=11)


@pytest.fixture(scope="module")
def sbc_softbt():
    return simulation_based_calibration("softbt", n_sims=N_SIMS, seed=12)


@pytest.mark.slow
def test_dawid_skene_intervals_are_calibrated(sbc_ds):
    res = sbc_ds
    assert res.failed == []
    assert res.n_fits == N_SIMS
    assert calibration_failures(res) == []
    # the sampler stays in the identified mode of the truth
    assert res.flags["mode_agrees"].mean() >= 0.95
    assert np.median(res.r_hat) < 1.01


@pytest.mark.slow
def test_soft_bradley_terry_intervals_are_calibrated(sbc_softbt):
    res = sbc_softbt
    assert res.failed == []
    assert res.n_fits == N_SIMS
    assert calibration_failures(res) == []
    assert res.divergences.sum() == 0
    assert np.median(res.r_hat) < 1.01
    # scores are compared centred within each item, as the model reports them
    s = res.truth[:, :-1].reshape(N_SIMS, 3, 6)
    np.testing.assert_allclose(s.sum(axis=2), 0.0, atol=1e-12)
