"""The registered nutpie fast paths of the ranking declarations (bayes_judge.inference.kernels.ranking).

Their log-density and gradient are checked against the declarations' compiled ones for every
registered fast path by tests/inference/test_fastpaths.py; here: their layout, determinism, the
priors they state, and (slow) that they draw exactly what nutpie draws on the compiled declaration.
"""

import numpy as np
import pandas as pd
import pytest

from bayes_judge.generative import get_model
from bayes_judge.generative.priors import Beta, HalfNormal, Normal
from bayes_judge.inference import fast_path
from bayes_judge.inference.kernels.ranking import (
    OPTION_CASES,
    _sample,
    pack_data,
    site_names,
    supports,
    value_order,
)
from bayes_judge.ranking.bayesian import fit_scores
from bayes_judge.ranking.encode import RankData, encode_ranking


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


def _coords(data):
    return {"candidate": np.arange(data.n_candidates), "comparison": np.arange(data.n_comparisons),
            "item": np.arange(data.n_items)}


@pytest.mark.parametrize("model", ["poe-bt", "poe-g", "bt"])
def test_registered_with_the_declarations_value_order(data, model):
    """Every option case of every model: the kernel's coordinates are the declaration's value
    variables, reordered (alpha first in poe-g's declaration)."""
    from bayes_judge.inference.fit import _build

    fp = fast_path("ranking", model)
    assert fp is not None and fp.option_cases == OPTION_CASES[model]
    spec = get_model(model, "ranking")
    for opts in fp.option_cases:
        m = _build(spec, data.arrays(), RankData.DIMS, _coords(data), spec.default_priors(), False, opts)
        declared = [(v.name.removesuffix("_log__"), int(np.prod(m.initial_point()[v.name].shape, dtype=int)))
                    for v in m.value_vars]
        bias, ties = opts.get("position_bias", False), opts.get("ties", False)
        kernel = [("r" if model == "poe-g" else "s_raw", data.n_candidates)] + [
            (k, 1) for k in site_names(model, bias, ties)]
        assert sorted(declared) == sorted(kernel)
        names = [n for n, size in declared for _ in range(size)]
        order = value_order(model, bias, ties, data.n_candidates)
        assert [names[k] for k in order] == [n for n, size in kernel for _ in range(size)]


@pytest.mark.parametrize(("model", "opts"), [("poe-g", {"w": 0.0}), ("bt", {"ties": True})])
def test_determinism_and_sites(data, model, opts):
    spec = get_model(model, "ranking")
    pri = spec.default_priors()
    kw = dict(init={}, chains=2, draws=150, tune=150, target_accept=0.8, options=opts)
    args = (model, data.arrays(), _coords(data), pri)
    a, sa = _sample(*args, seed=5, **kw)
    b, sb = _sample(*args, seed=5, cores=1, **kw)
    c, _ = _sample(*args, seed=6, **kw)
    sites = site_names(model, False, opts.get("ties", False))
    assert set(a) == {"s", "s_raw", *sites} | ({"r"} if model == "poe-g" else set())
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k])
    assert not np.array_equal(a["s"], c["s"])
    assert set(sa) == {"diverging", "energy", "n_steps", "acceptance_rate", "lp"}
    assert all(v.shape == (2, 150) for v in sa.values())
    for k in sites:
        assert a[k].shape == (2, 150) and np.isfinite(a[k]).all()
        if k in ("alpha", "sigma", "nu"):
            assert (a[k] > 0).all()
    # s is s_raw centred within each of the two items
    for g in range(data.n_items):
        m = data.cand_item == g
        np.testing.assert_allclose(a["s"][..., m].sum(-1), 0.0, atol=1e-12)
        np.testing.assert_allclose(a["s"][..., m], a["s_raw"][..., m] - a["s_raw"][..., m].mean(-1, keepdims=True))
    if model == "poe-g":  # r = alpha^(1 - w) s_raw
        np.testing.assert_allclose(a["r"], a["alpha"][..., None] * a["s_raw"])


def test_priors_the_kernel_states():
    pri = get_model("poe-g", "ranking").default_priors()
    assert supports(pri)
    assert supports(pri.replace(scores=Normal(0, 2.5), alpha=HalfNormal(0.3), beta=Normal(0.4, 0.1)))
    assert not supports(pri.replace(scores=Normal(1.0, 1)))  # scores centred at 0 only
    assert not supports(pri.replace(beta=Beta(2, 2)))  # another family
    assert not supports(pri.replace(sigma=HalfNormal(np.array([0.5, 1.0]))))  # not scalar


def test_bad_arguments(data):
    pri = get_model("poe-bt", "ranking").default_priors()
    arrays = data.arrays()
    with pytest.raises(ValueError, match="sigma_s must be"):
        pack_data(arrays, pri.replace(scores=Normal(0, 0.0)), model="poe-bt")
    with pytest.raises(ValueError, match=r"w must lie in \[0, 1\]"):
        pack_data(arrays, get_model("poe-g", "ranking").default_priors(), model="poe-g", w=1.5)
    with pytest.raises(ValueError, match="states Normal / HalfNormal priors"):
        pack_data(arrays, pri.replace(scores=Normal(1.0, 1.0)), model="poe-bt")
    with pytest.raises(ValueError, match="soft outcomes p must lie in"):
        pack_data({**arrays, "p": arrays["p"] + 1.0}, pri, model="poe-bt")
    with pytest.raises(ValueError, match=r"takes the options \['position_bias'\]"):
        _sample("poe-bt", arrays, _coords(data), pri, init={}, chains=1, draws=1, tune=0, seed=0,
                target_accept=0.8, options={"ties": True})
    with pytest.raises(ValueError, match="target_accept"):
        _sample("poe-bt", arrays, _coords(data), pri, init={}, chains=1, draws=1, tune=0, seed=0, target_accept=1.5)


CASES = [("poe-bt", dict(position_bias=True)), ("poe-g", dict(centring="centred")),
         ("poe-g", dict(centring="non-centred")), ("bt", dict(position_bias=True))]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "kw"), CASES)
def test_fast_path_samples_what_nutpie_samples_on_the_declaration(data, model, kw, same_posterior_mean):
    """nutpie on the kernel and on the compiled declaration (numba): same start, seed and
    log-density, but the trajectories part after a while (the two round differently), so the
    posteriors are compared within Monte Carlo error."""
    fits = {fast: fit_scores(data, model=model, fast=fast, chains=2, draws=600, tune=600, seed=3, **kw)
            for fast in (True, False)}
    assert [f.attrs["sampler"] for f in fits.values()] == ["nutpie (fast path)", "nutpie"]
    a, b = (f.posterior for f in fits.values())
    for name in a.data_vars:
        same_posterior_mean(a[name].to_numpy(), b[name].to_numpy(), name=name)
