"""The score bridge's numba kernel (bayes_judge.inference.kernels.bridge) against the model it
samples: its log density and gradient by an independent computation, its two parametrizations
against each other, and (slow) its posterior against the PyMC model as written."""

import math

import numpy as np
import pytest
from scipy import stats

from bayes_judge.inference.kernels import bridge as kernel
from bayes_judge.leaderboard.bridge import SCORE_BRIDGE, _bridge_kernel, _bridge_pymc

N = 7


def _data(seed: int = 0, H: int = 40):
    rng = np.random.default_rng(seed)
    m = rng.normal(0.0, 1.0, N)
    reading = m + 0.1 * rng.standard_normal((500, N)) @ rng.normal(size=(N, N))
    a = rng.integers(0, N, H)
    b = (a + rng.integers(1, N, H)) % N
    return reading, a, b, rng.integers(0, 5, (H, 2)).astype(float)


def _labels(h, a, b, n):
    d = h[a] - h[b]
    return float((n[:, 0] * -np.logaddexp(0.0, -d) + n[:, 1] * -np.logaddexp(0.0, d)).sum())


def _priors(log_lam, log_tau):
    return (stats.norm(math.log(SCORE_BRIDGE.lam_median), SCORE_BRIDGE.lam_sd).logpdf(log_lam)
            + stats.norm(math.log(SCORE_BRIDGE.tau_median), SCORE_BRIDGE.tau_sd).logpdf(log_tau))


def test_the_centred_density_is_the_models_up_to_a_constant():
    """h̃ = h + c 1 with h ~ Normal(λ m, λ² Σ_J + τ² C) on the centred subspace and c ~ Normal(0, 1/N):
    a Gaussian of covariance λ² Σ_J + τ² C + 11ᵀ/N, by scipy, plus the labels and the priors."""
    reading, a, b, n = _data()
    buf = kernel.pack_data(reading, a, b, n, SCORE_BRIDGE, centred=True)
    rc = reading - reading.mean(axis=1, keepdims=True)
    S, m, C = np.cov(rc, rowvar=False), rc.mean(axis=0), np.eye(N) - 1.0 / N
    rng = np.random.default_rng(1)
    diffs = []
    for _ in range(5):
        x = 0.5 * rng.standard_normal(N + 2)
        lam, tau = np.exp(x[N:])
        ref = (stats.multivariate_normal(lam * m, lam**2 * S + tau**2 * C + np.ones((N, N)) / N).logpdf(x[:N])
               + _labels(x[:N] - x[:N].mean(), a, b, n) + _priors(*x[N:]))
        diffs.append(kernel.logp_grad(x, buf, np.empty(N + 2)) - ref)
    assert np.ptp(diffs) < 1e-9


def test_the_non_centred_density_pushes_forward_to_the_same_scores():
    """ξ ~ Normal(0, I) in the reading's basis: v = λ μ + σ ξ, h = V v."""
    reading, a, b, n = _data()
    buf = kernel.pack_data(reading, a, b, n, SCORE_BRIDGE, centred=False)
    V, mu, w = kernel.reading_basis(reading)
    rng = np.random.default_rng(2)
    diffs = []
    for _ in range(5):
        x = 0.5 * rng.standard_normal(N + 1)
        lam, tau = np.exp(x[-2:])
        h = V @ (lam * mu + np.sqrt(lam**2 * w + tau**2) * x[:-2])
        ref = _labels(h, a, b, n) - 0.5 * x[:-2] @ x[:-2] + _priors(*x[-2:])
        diffs.append(kernel.logp_grad(x, buf, np.empty(N + 1)) - ref)
        out = np.empty(N + 2)
        kernel.expand(x, buf, out)
        assert np.allclose(out, np.r_[h, lam, tau])
    assert np.ptp(diffs) < 1e-9


@pytest.mark.parametrize("centred", [True, False])
def test_the_gradient_is_the_densitys(centred):
    reading, a, b, n = _data(3)
    buf = kernel.pack_data(reading, a, b, n, SCORE_BRIDGE, centred=centred)
    d = kernel.n_dim(buf)
    x = 0.5 * np.random.default_rng(4).standard_normal(d)
    g, scratch = np.empty(d), np.empty(d)
    kernel.logp_grad(x, buf, g)
    eye = np.eye(d) * 1e-6
    fd = [(kernel.logp_grad(x + e, buf, scratch) - kernel.logp_grad(x - e, buf, scratch)) / 2e-6 for e in eye]
    assert np.allclose(g, fd, atol=1e-6 * max(1.0, np.abs(g).max()))


def test_the_parametrization_follows_how_much_the_labels_tell():
    reading, a, b, _ = _data(H=70)  # 20 labels a system: n_i / 4 τ² = 0.84 < 1
    few = kernel.pack_data(reading, a, b, np.ones((70, 2)) * [1.0, 0.0], SCORE_BRIDGE)
    many = kernel.pack_data(reading, a, b, np.ones((70, 2)) * [2.0, 1.0], SCORE_BRIDGE)  # 60 a system
    assert (kernel.n_dim(few), kernel.n_dim(many)) == (N + 1, N + 2)
    # the two orders of a pair are one unordered pair, their counts summed the right way round
    buf = kernel.pack_data(reading, np.array([2, 5]), np.array([5, 2]), np.array([[3.0, 1.0], [4.0, 6.0]]),
                           SCORE_BRIDGE)
    assert buf[2] == 1 and list(buf[8:12]) == [2.0, 5.0, 9.0, 5.0]


def _draws(out):
    return np.column_stack([out["s"].reshape(-1, N), out["bridge_lambda"].ravel(), out["bridge_tau"].ravel()])


def _agree(x, y, tol):
    sd = np.sqrt(0.5 * (x.var(axis=0) + y.var(axis=0)))
    q = [0.05, 0.5, 0.95]
    return (np.abs(np.quantile(x, q, axis=0) - np.quantile(y, q, axis=0)) / sd).max() < tol  # in sd units


def test_both_parametrizations_sample_one_posterior():
    reading, a, b, n = _data(5, H=60)
    kw = dict(chains=2, draws=1500, tune=500, seed=6, target_accept=0.8)
    cen = _bridge_kernel(reading, a, b, n, SCORE_BRIDGE, centred=True, **kw)
    non = _bridge_kernel(reading, a, b, n, SCORE_BRIDGE, centred=False, **kw)
    assert not cen["diverging"].any() and not non["diverging"].any()
    assert np.allclose(cen["s"].sum(axis=-1), 0.0) and np.allclose(non["s"].sum(axis=-1), 0.0)
    assert _agree(_draws(cen), _draws(non), 0.25)


@pytest.mark.slow
@pytest.mark.parametrize("labels", [60, 3000])  # non-centred, centred
def test_the_kernel_samples_the_pymc_models_posterior(labels):
    reading, a, b, _ = _data(7, H=labels)
    rng = np.random.default_rng(8)
    h = 1.3 * (reading.mean(axis=0) - reading.mean()) + 0.4 * rng.standard_normal(N)
    y = rng.random(labels) < 1.0 / (1.0 + np.exp(-(h[a] - h[b])))
    n = np.column_stack([y, ~y]).astype(float)
    kw = dict(chains=4, draws=1000, tune=1000, seed=9, target_accept=0.8)
    fast = _bridge_kernel(reading, a, b, n, SCORE_BRIDGE, **kw)
    slow = _bridge_pymc(reading, a, b, n, SCORE_BRIDGE, sampler="nutpie", **kw)
    assert _agree(_draws(fast), _draws(slow), 0.25)  # 5% and 95% quantiles: ~0.07 sd of MC error apart
