"""NumPyro's NUTS runs one compiled program per data shapes, with the data as its arguments: a
refit with new data of the same shapes compiles nothing and follows the new data (the conjugate
Beta posterior of a binomial, exactly known), and the same seed gives the same draws."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("numpyro")

from bayes_judge.generative import (  # noqa: E402
    Beta,
    Prior,
    Priors,
    generative_model,
    get_model,
    unregister_model,
)
from bayes_judge.inference import fit as F  # noqa: E402
from bayes_judge.inference.settings import Sampling


@dataclass(frozen=True)
class RatePriors(Priors):
    p: Prior = Beta(1, 1)


def binomial_rate(d, prior, *, predict=False):
    """k_i ~ Binomial(n_i, p), p ~ Beta(1, 1)."""
    import pymc as pm

    p = prior.p.rv("p")
    pm.Binomial("y", n=d.n, p=p, observed=d.k, dims="obs")


@pytest.fixture(scope="module")
def spec():
    generative_model("binomial-rate", task="win-rate", priors=RatePriors, observed=("y",), summary=("p",),
                     replace=True)(binomial_rate)
    yield get_model("binomial-rate", "win-rate")
    unregister_model("binomial-rate", "win-rate")
    F.clear_compiled()


def _fit(spec, y, n, seed=0):
    arrays = {"k": np.asarray(y), "n": np.asarray(n)}
    return F.fit_model(spec, arrays, dims={"k": ("obs",), "n": ("obs",)}, coords={},
                       sampling=Sampling("numpyro", chains=2, draws=1500, tune=500, seed=seed))


def _check_conjugate(fit, y, n):
    a, b = 1 + np.sum(y), 1 + np.sum(np.asarray(n) - np.asarray(y))
    p = fit.posterior["p"].ravel()
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert abs(p.mean() - a / (a + b)) < 0.1 * sd * 4  # MCSE of ~3000 draws is ~0.02 sd
    assert abs(p.std() - sd) < 0.1 * sd


def test_a_refit_of_the_same_shapes_reuses_the_program_and_follows_the_data(spec):
    F.clear_compiled()
    n = [20, 30, 25, 40]
    first = _fit(spec, [3, 5, 4, 6], n)
    sampler = next(e for e in F._CACHE.values() if e.numpyro is not None).numpyro
    traces = sampler.n_traces
    assert traces > 0 and len(sampler.programs) == 1
    _check_conjugate(first, [3, 5, 4, 6], n)

    refit = _fit(spec, [15, 22, 20, 33], n)  # same shapes, another rate
    assert sampler.n_traces == traces and len(sampler.programs) == 1
    _check_conjugate(refit, [15, 22, 20, 33], n)
    assert refit.posterior["p"].mean() > first.posterior["p"].mean() + 0.3

    again = _fit(spec, [15, 22, 20, 33], n)
    np.testing.assert_array_equal(again.posterior["p"], refit.posterior["p"])
    assert set(again.stats) >= {"diverging", "n_steps", "acceptance_rate", "energy", "step_size", "lp"}
    assert again.stats["n_steps"].shape == (2, 1500) and not again.stats["diverging"].any()
    # the draws follow the warm-up (one loop runs both): the step size is adapted no longer
    assert (np.ptp(again.stats["step_size"], axis=1) == 0).all()

    other = _fit(spec, [1, 2, 3], [10, 10, 10])  # new shapes: a second program
    assert len(sampler.programs) == 2 and sampler.n_traces > traces
    _check_conjugate(other, [1, 2, 3], [10, 10, 10])


def _assert_log_density_is_the_models(sampler, model, seed: int) -> None:
    """NumPyro's (padded) log density against the model's own, unpadded, at three random points."""
    logp = model.compile_logp(jacobian=True, mode="FAST_COMPILE")  # Python thunks: no C to build
    start, rng = model.initial_point(), np.random.default_rng(seed)
    for _ in range(3):
        point = {v.name: rng.normal(scale=0.7, size=np.shape(start[v.name])) for v in model.value_vars}
        x = np.concatenate([np.ravel(point[v.name]) for v in model.value_vars])
        np.testing.assert_allclose(sampler.log_density(x), logp(point), rtol=1e-10)


def test_padded_verdict_patterns_keep_the_log_density_and_share_one_program():
    """Dawid-Skene's pattern count changes with the data (MT-Bench: 109 and 112 patterns for two
    generator draws); NumPyro pads the patterns with weight-0 rows to one size, and its log density
    equals the model's own (unpadded, PyTensor) at random points."""
    import bayes_judge as bj

    F.clear_compiled()
    df = bj.load_dataset("mtbench")
    kw = dict(method="dawid-skene", prior="none", swap="split", sampler="numpyro", chains=2, draws=300, tune=300)
    counts = []
    for seed in (0, 1):
        fit = bj.win_rate(bj.assign_generators(df, share=0.8, seed=seed), seed=seed, **kw)
        entry = next(e for e in F._CACHE.values() if e.numpyro is not None)
        sampler, model = entry.numpyro, entry.model
        counts.append(int(model.dim_lengths["pattern"].get_value()))
        assert fit.attrs["n_patterns"] == counts[-1] and fit.posterior["h_prob"].sizes["item"] > 0
        _assert_log_density_is_the_models(sampler, model, seed)
    assert counts == [109, 112] and len(sampler.programs) == 1  # both padded to 112 rows
    F.clear_compiled()


@pytest.mark.parametrize("method", ["one-coin", "consensus", "independent", "hierarchical"])  # dawid-skene: above
def test_every_padded_model_keeps_its_log_density(method):
    """Each model that declares its patterns paddable: NumPyro's padded log density equals the
    model's own (unpadded) at random points (MT-Bench split by order: 109 patterns, padded to 112;
    the consensus model's 116 to 120)."""
    import bayes_judge as bj
    from bayes_judge.inference._numpyro import NumpyroSampler

    F.clear_compiled()
    g = bj.assign_generators(bj.load_dataset("mtbench"), share=0.8, seed=0)
    kw = {} if method == "consensus" else {"prior": "none"}
    with warnings.catch_warnings():  # five draws: only to build the model
        warnings.simplefilter("ignore")
        bj.win_rate(g, method=method, swap="split", sampler="pymc", chains=1, draws=5, tune=5, **kw)
    spec = get_model(method, "win-rate")
    assert spec.padding == ("pattern",)
    model = next(iter(F._CACHE.values())).model
    sampler = NumpyroSampler(model, [rv.name for rv in model.free_RVs], spec.padding)
    (n, padded), = sampler._lengths().values()
    assert padded > n
    _assert_log_density_is_the_models(sampler, model, 3)
    F.clear_compiled()
