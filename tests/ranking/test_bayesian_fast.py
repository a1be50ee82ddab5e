"""nutpie + numba sampler of the Bayesian ranking models (bayes_judge.ranking.bayesian_fast)."""

import numpy as np
import pandas as pd
import pytest

from bayes_judge.ranking.bayesian import _numpyro_model, fit_scores, raw_site
from bayes_judge.ranking.bayesian_fast import (
    logp_grad,
    pack_data,
    param_names,
    sample_scores_fast,
)
from bayes_judge.ranking.encode import encode_ranking

# (model, position_bias, has_ties, w): every site combination of the three models, and the
# Gaussian experts' partial non-centring exponent w at both ends and between
CASES = [
    ("poe-bt", False, False, 1.0),
    ("poe-bt", True, False, 1.0),
    ("poe-g", False, False, 1.0),
    ("poe-g", False, False, 0.0),
    ("poe-g", False, False, 0.3),
    ("bt", False, False, 1.0),
    ("bt", True, False, 1.0),
    ("bt", False, True, 1.0),
    ("bt", True, True, 1.0),
]


def two_item_table(n=(5, 4), k=(60, 40), gamma=0.4, seed=0):
    """Soft comparisons in two items; every 7th one is an exact 0.5 (a tie in ``y``)."""
    rng = np.random.default_rng(seed)
    frames = []
    for g, (nc, kc) in enumerate(zip(n, k, strict=True)):
        s = rng.normal(0, 1, nc)
        i = rng.integers(0, nc, kc)
        j = (i + rng.integers(1, nc, kc)) % nc
        p = 1 / (1 + np.exp(-(s[i] - s[j] + gamma + rng.normal(0, 0.3, kc))))
        p[::7] = 0.5
        frames.append(pd.DataFrame({"item": f"q{g}", "a": [f"c{x}" for x in i],
                                    "b": [f"c{x}" for x in j], "p_a": p}))
    df = pd.concat(frames, ignore_index=True)
    return df.assign(sample=np.arange(len(df)))


@pytest.fixture(scope="module")
def data():
    return encode_ranking(two_item_table())


@pytest.fixture
def x64():
    import jax

    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize(("model", "bias", "ties", "w"), CASES)
def test_gradient_matches_numpyro_potential(data, x64, model, bias, ties, w):
    """log density and gradient = minus NumPyro's potential energy and its jax.grad (x64)."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer.util import potential_energy

    counts = np.bincount(data.cand_item, minlength=data.n_items).astype(float)
    args = (data.i, data.j, data.p, data.y, data.cand_item, counts)
    kw = dict(n_items=data.n_items, sigma_s=1.3, model=model, bias=bias, ties=ties, w=w)
    buf = pack_data(data, model=model, position_bias=bias, has_ties=ties, sigma_s=1.3, w=w)
    names = param_names(model, bias, ties)
    N = data.n_candidates
    rng = np.random.default_rng(1)
    for scale in (0.3, 1.0, 4.0):  # both branches of |d| and of the logistic / Davidson terms
        x = rng.normal(0, scale, N + len(names))
        z = {raw_site(model): jnp.asarray(x[:N])}
        z.update({k: jnp.asarray(x[N + m]) for m, k in enumerate(names)})
        pe = lambda z: potential_energy(_numpyro_model, args, kw, z)  # noqa: E731
        ref_val, ref_grad = jax.value_and_grad(pe)(z)
        g = np.empty_like(x)
        val = logp_grad(x, buf, g)
        assert val == pytest.approx(-float(ref_val), rel=1e-10, abs=1e-9)
        ref = np.concatenate([np.ravel(ref_grad[k]) for k in [raw_site(model), *names]])
        np.testing.assert_allclose(g, -ref, rtol=1e-8, atol=1e-10)


def test_posterior_means_agree_with_numpyro(same_posterior_mean):
    """Same posterior as fit_scores(backend="numpyro"): means of s and gamma within MC error."""
    data = encode_ranking(two_item_table(n=(6,), k=(120,), gamma=0.6, seed=3))
    kw = dict(chains=2, draws=1000, tune=1000)
    ref = fit_scores(data, model="poe-bt", position_bias=True, backend="numpyro", seed=1, **kw).posterior
    post, stats = sample_scores_fast(data, model="poe-bt", position_bias=True, seed=1, **kw)
    assert post["s"].shape == (2, 1000, data.n_candidates) and post["gamma"].shape == (2, 1000)
    assert stats["diverging"].sum() == 0
    np.testing.assert_allclose(post["s"].sum(-1), 0.0, atol=1e-12)
    for name, a in (("s", post["s"]), ("gamma", post["gamma"])):
        b = ref[name].to_numpy()
        same_posterior_mean(a, b, name=name)
        np.testing.assert_allclose(a.std((0, 1)), b.std((0, 1)), rtol=0.15)


@pytest.mark.parametrize(("model", "bias", "ties"), [("poe-g", False, False), ("bt", False, True)])
def test_determinism_and_sites(data, model, bias, ties):
    kw = dict(model=model, position_bias=bias, has_ties=ties, chains=2, draws=150, tune=150)
    a, sa = sample_scores_fast(data, seed=5, **kw)
    b, sb = sample_scores_fast(data, seed=5, cores=1, **kw)
    c, _ = sample_scores_fast(data, seed=6, **kw)
    assert list(a) == ["s", "s_raw", *param_names(model, bias, ties)]
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k])
    assert not np.array_equal(a["s"], c["s"])
    assert set(sa) == {"diverging", "energy", "n_steps", "acceptance_rate", "lp"}
    assert all(v.shape == (2, 150) for v in sa.values())
    for k in param_names(model, bias, ties):
        assert a[k].shape == (2, 150) and np.isfinite(a[k]).all()
        if k in ("alpha", "sigma", "nu"):
            assert (a[k] > 0).all()
    # s is s_raw centred within each of the two items
    for g in range(data.n_items):
        m = data.cand_item == g
        np.testing.assert_allclose(a["s"][..., m].sum(-1), 0.0, atol=1e-12)
        np.testing.assert_allclose(a["s"][..., m], a["s_raw"][..., m] - a["s_raw"][..., m].mean(-1, keepdims=True))


def test_bad_arguments(data):
    with pytest.raises(ValueError, match="bayesian model must be one of"):
        sample_scores_fast(data, model="thurstone")
    with pytest.raises(ValueError, match="model='bt' only"):
        sample_scores_fast(data, model="poe-bt", has_ties=True)
    with pytest.raises(ValueError, match="sigma_s must be"):
        sample_scores_fast(data, sigma_s=0.0)
    with pytest.raises(ValueError, match="'poe-g' takes no position_bias"):
        sample_scores_fast(data, model="poe-g", position_bias=True)
    with pytest.raises(ValueError, match=r"w must lie in \[0, 1\]"):
        sample_scores_fast(data, model="poe-g", w=1.5)
    with pytest.raises(ValueError, match="'poe-g' takes no position_bias"):  # site_names, every backend
        fit_scores(data, model="poe-g", position_bias=True, backend="numpyro")
    with pytest.raises(ValueError, match="target_accept"):
        sample_scores_fast(data, target_accept=1.5, chains=1, draws=1, tune=0)
