"""Moving an earlier posterior's draws onto an updated one (bayes_judge.inference.transport)."""

import numpy as np
import pytest
from scipy import stats

from bayes_judge.inference import transport
from bayes_judge.inference.transport import gaussian_map, resample_within_chains, transport_draws


def _spd(rng, n, scale=1.0):
    q = rng.standard_normal((n, n))
    return scale * (q @ q.T / n + np.eye(n))


def test_the_map_carries_one_gaussian_onto_the_other_and_leaves_a_shared_direction():
    rng = np.random.default_rng(0)
    h0, h1 = _spd(rng, 6), _spd(rng, 6, 2.0)
    a = gaussian_map(h0, h1)
    assert np.allclose(a, a.T)
    assert np.allclose(a @ np.linalg.inv(h0) @ a, np.linalg.inv(h1), atol=1e-10)
    assert np.all(np.linalg.eigvalsh(a) > 0)  # the optimal map: the gradient of a convex function
    # a direction both precisions share, with the same curvature (the scores' common location): kept
    u = np.ones(6) / np.sqrt(6)
    p = np.eye(6) - np.outer(u, u)
    h0s, h1s = p @ h0 @ p + 3.0 * np.outer(u, u), p @ h1 @ p + 3.0 * np.outer(u, u)
    assert np.allclose(gaussian_map(h0s, h1s) @ u, u, atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        gaussian_map(h0, -h1)


def _gaussian(m, h):
    def kernel(x, buf, grad):
        d = x - m
        grad[:] = -h @ d
        return float(-0.5 * d @ h @ d)
    return kernel


def test_between_two_gaussians_the_moved_draws_need_no_weights():
    """Exact draws of one Gaussian, moved, are exact draws of the other: equal weights."""
    rng = np.random.default_rng(1)
    n, size = 5, 2000
    m0, m1 = rng.standard_normal(n), rng.standard_normal(n)
    h0, h1 = _spd(rng, n), _spd(rng, n, 1.3)
    x = rng.multivariate_normal(m0, np.linalg.inv(h0), size)
    y, lp1, w, info = transport_draws((_gaussian(m0, h0), None), (_gaussian(m1, h1), None), x, threads=1)
    assert np.allclose(w, 1.0 / size, rtol=1e-4)
    assert info["ess_importance"] == pytest.approx(size, rel=1e-6)
    a = gaussian_map(h0, h1)
    assert np.allclose(y, m1 + (x - m0) @ a, atol=1e-4)
    assert np.allclose(lp1, [_gaussian(m1, h1)(v, None, np.empty(n)) for v in y])


def _skew(mu, sigma, a):
    """A skew-normal's log density in each of two coordinates (independent)."""
    def kernel(x, buf, grad):
        z = (x - mu) / sigma
        lp = stats.norm.logpdf(z) + stats.norm.logcdf(a * z)
        grad[:] = (-z + a * np.exp(stats.norm.logpdf(a * z) - stats.norm.logcdf(a * z))) / sigma
        return float(lp.sum())
    return kernel


def test_the_weights_correct_what_the_gaussians_map_gets_wrong(monkeypatch):
    """Skewed posteriors whose skew changes: the map between their Laplace approximations moves the
    draws near the new one, and only the weights make their mean the new posterior's (a test the
    map alone fails; an affine map of a skew-normal of the same skew would be exact)."""
    monkeypatch.setattr(transport, "SHIFT_BELOW", 0.0)  # the map alone, not shifted after it
    rng = np.random.default_rng(2)
    a0, a1, size = 4.0, 2.5, 8000
    old, new = (np.zeros(2), np.ones(2)), (np.array([0.3, -0.2]), np.array([0.6, 0.7]))
    x = np.column_stack([stats.skewnorm.rvs(a0, loc=old[0][i], scale=old[1][i], size=size, random_state=rng)
                         for i in range(2)])
    y, _, w, info = transport_draws((_skew(*old, a0), None), (_skew(*new, a1), None), x, threads=1)
    truth = stats.skewnorm.mean(a1, loc=new[0], scale=new[1])
    sd = stats.skewnorm.std(a1, loc=new[0], scale=new[1])
    se = sd / np.sqrt(info["ess_importance"])
    assert np.all(np.abs(w @ y - truth) < 4 * se)
    assert np.any(np.abs(y.mean(axis=0) - truth) > 8 * se)  # the moved draws alone are off
    assert info["pareto_k"] < 0.6 and info["ess_importance"] > 0.5 * size


def test_a_shift_by_the_weighted_mean_keeps_more_of_the_draws(monkeypatch):
    """Where the map leaves the draws' weights uneven (the skew-normals' modes are not their means),
    one shift by the weighted mean raises the importance ESS and lowers the k-hat, and the weighted
    mean stays the new posterior's."""
    rng = np.random.default_rng(4)
    a0, a1, size = 6.0, 2.0, 8000
    old, new = (np.zeros(2), np.ones(2)), (np.array([0.3, -0.2]), np.array([0.6, 0.7]))
    x = np.column_stack([stats.skewnorm.rvs(a0, loc=old[0][i], scale=old[1][i], size=size, random_state=rng)
                         for i in range(2)])
    kernels = (_skew(*old, a0), None), (_skew(*new, a1), None)
    monkeypatch.setattr(transport, "SHIFT_BELOW", 0.0)
    *_, plain = transport_draws(*kernels, x, threads=1)
    monkeypatch.setattr(transport, "SHIFT_BELOW", 0.9)
    y, lp, w, info = transport_draws(*kernels, x, threads=1)
    assert not plain["mean_shifted"] and info["mean_shifted"]
    assert info["ess_importance"] > plain["ess_importance"] and info["pareto_k"] < plain["pareto_k"]
    assert np.allclose(lp, [kernels[1][0](v, None, np.empty(2)) for v in y])
    truth = stats.skewnorm.mean(a1, loc=new[0], scale=new[1])
    se = stats.skewnorm.std(a1, loc=new[0], scale=new[1]) / np.sqrt(info["ess_importance"])
    assert np.all(np.abs(w @ y - truth) < 4 * se)


def _conditional(mh, sh, m, b, c):
    """The joint Gaussian of a held coordinate ``h ~ N(mh, sh²)`` (last) and the others given it,
    ``f | h ~ N(m + b h, c)``: its mean and precision."""
    n = len(m)
    cov = np.zeros((n + 1, n + 1))
    cov[:n, :n] = c + sh ** 2 * np.outer(b, b)
    cov[:n, n] = cov[n, :n] = sh ** 2 * b
    cov[n, n] = sh ** 2
    return np.r_[m + b * mh, mh], np.linalg.inv(cov)


def test_a_held_coordinate_stays_and_the_others_move_between_its_conditional_modes(monkeypatch):
    """transport_draws(held=): the held coordinate is left as each draw has it and the others move
    between their conditional modes given it.  Where only the others' conditional changes, the
    moved draws are exact (equal weights); where the held coordinate's own posterior moves, the
    weights correct it."""
    monkeypatch.setattr(transport, "SHIFT_BELOW", 0.0)
    rng = np.random.default_rng(5)
    n, size = 4, 4000
    b0, b1 = rng.standard_normal(n), rng.standard_normal(n)
    c0, c1 = np.linalg.inv(_spd(rng, n)), np.linalg.inv(_spd(rng, n, 1.5))
    old = _conditional(0.5, 0.3, rng.standard_normal(n), b0, c0)
    new = _conditional(0.5, 0.3, rng.standard_normal(n), b1, c1)
    x = rng.multivariate_normal(old[0], np.linalg.inv(old[1]), size)
    held = np.array([n])
    y, _, w, info = transport_draws((_gaussian(*old), None), (_gaussian(*new), None), x, held=held, threads=1)
    assert np.array_equal(y[:, n], x[:, n])
    assert np.allclose(w, 1.0 / size, rtol=1e-4)
    # the held coordinate's posterior moves too (0.5 ± 0.3 → 0.6 ± 0.28): the weights make the means
    new = _conditional(0.6, 0.28, new[0][:n] - 0.5 * b1, b1, c1)
    y, _, w, info = transport_draws((_gaussian(*old), None), (_gaussian(*new), None), x, held=held, threads=1)
    assert np.array_equal(y[:, n], x[:, n]) and info["pareto_k"] < 0.5
    se = np.sqrt(np.diag(np.linalg.inv(new[1])) / info["ess_importance"])
    assert np.all(np.abs(w @ y - new[0]) < 4 * se)
    assert abs(y[:, n].mean() - 0.6) > 8 * se[n]  # the held draws alone are off


def test_resampling_stays_within_each_chain_and_in_its_order():
    rng = np.random.default_rng(3)
    w = rng.gamma(2.0, size=(4, 250))
    w /= w.sum()
    idx = resample_within_chains(w.ravel(), 4, rng)
    assert idx.shape == (4, 250)
    for c in range(4):
        assert np.all((idx[c] >= 250 * c) & (idx[c] < 250 * (c + 1)))
        assert np.all(np.diff(idx[c]) >= 0)  # a repeated draw sits beside itself
        counts = np.bincount(idx[c] - 250 * c, minlength=250)
        assert np.all(np.abs(counts - 250 * w[c] / w[c].sum()) < 1.0 + 1e-9)  # systematic: within one
    assert np.array_equal(resample_within_chains(np.ones(8), 2, rng), np.arange(8).reshape(2, 4))
