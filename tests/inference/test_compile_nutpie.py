"""The nutpie compile of a declaration (``bayes_judge.inference._compile_nutpie``): its C callbacks
give PyMC's log density and gradient, follow new data, keep nutpie's return codes, and nutpie
draws from it exactly what it draws from its own ``compile_pymc_model``."""

from __future__ import annotations

import ctypes

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from pytensor.raise_op import Assert

from bayes_judge.inference._compile_nutpie import compile_declaration

DPTR = ctypes.POINTER(ctypes.c_double)


def _call(compiled, x: np.ndarray) -> tuple[int, float, np.ndarray]:
    """The logp callback at ``x``: (return code, log density, gradient)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    grad = np.zeros(compiled.n_dim)
    logp = np.zeros(1)
    code = compiled.compiled_logp_func.ctypes(
        x.shape[0], x.ctypes.data_as(DPTR), grad.ctypes.data_as(DPTR), logp.ctypes.data_as(DPTR),
        compiled.user_data.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
    )
    return code, float(logp[0]), grad


def _expand(compiled, x: np.ndarray) -> tuple[int, np.ndarray]:
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.zeros(compiled.n_expanded)
    code = compiled.compiled_expand_func.ctypes(
        x.shape[0], compiled.n_expanded, x.ctypes.data_as(DPTR), out.ctypes.data_as(DPTR),
        compiled.user_data.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
    )
    return code, out


def _model(y, groups, weights, scale):
    """Shared data of three ranks and two dtypes: float64 (n,), int32 (n,), float64 (n, 2), a 0-d
    float64; a bounded parameter (a transform in the gradient) and a vector parameter."""
    with pm.Model(coords={"group": ["g0", "g1", "g2"]}) as model:
        y_ = pm.Data("y", y)
        g_ = pm.Data("groups", groups.astype(np.int32))
        w_ = pm.Data("weights", weights)
        s_ = pm.Data("scale", scale)
        mu = pm.Normal("mu", 0.0, 2.0, dims="group")
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Deterministic("spread", sigma * s_)
        pm.Normal("obs", mu[g_] * (w_[:, 0] - w_[:, 1]), sigma * s_, observed=y_)
    return model


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(3)
    n = 40
    data = dict(y=rng.normal(size=n), groups=rng.integers(0, 3, n), weights=rng.uniform(size=(n, 2)),
                scale=np.array(1.5))
    model = _model(**data)
    return model, data, compile_declaration(model, var_names=["mu", "sigma", "spread"])


def _assert_pymc_at(compiled, model, x: np.ndarray) -> None:
    """The logp callback at the flat unconstrained ``x`` (nutpie's order) returns 0 and PyMC's log
    density and gradient of ``model``."""
    names, slices, shapes = compiled.shape_info
    point = {n: x[s].reshape(sh) for n, s, sh in zip(names, slices, shapes, strict=False)
             if n in {v.name for v in model.value_vars}}
    code, logp, grad = _call(compiled, x)
    assert code == 0
    np.testing.assert_allclose(logp, float(model.compile_logp()(point)), rtol=1e-12)
    np.testing.assert_allclose(grad, np.asarray(model.compile_dlogp()(point)), rtol=1e-10, atol=1e-12)


def test_callbacks_give_pymc_log_density_gradient_and_stored_values(case):
    model, _, compiled = case
    assert compiled.n_dim == 4 and compiled.n_expanded == 6  # mu (3), log sigma; + sigma, spread
    assert compiled.shape_info[0] == ["mu", "sigma_log__", "sigma", "spread"]
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.normal(size=compiled.n_dim)
        _assert_pymc_at(compiled, model, x)
        code, values = _expand(compiled, x)
        assert code == 0
        sigma = np.exp(x[3])
        np.testing.assert_allclose(values, [*x[:3], x[3], sigma, sigma * 1.5], rtol=1e-12)


def test_with_data_follows_new_values_of_every_rank(case):
    model, data, compiled = case
    rng = np.random.default_rng(1)
    new = dict(y=rng.normal(size=25), groups=rng.integers(0, 3, 25), weights=rng.uniform(size=(25, 2)),
               scale=np.array(0.7))
    refit = compiled.with_data(**new)
    other = _model(**new)
    x = rng.normal(size=compiled.n_dim)
    _assert_pymc_at(refit, other, x)
    assert refit.shared_data["groups"].dtype == np.int32
    # the original keeps its own data
    _assert_pymc_at(compiled, model, x)
    with pytest.raises(KeyError, match="Unknown shared variable: nope"):
        compiled.with_data(nope=np.zeros(3))
    with pytest.raises(ValueError, match="weights must have rank 2"):
        compiled.with_data(weights=np.zeros(3))


def test_return_codes_of_nutpies_contract():
    """1 when the graph raises (an Assert), 3 for a non-finite gradient, 4 for a non-finite log
    density with a finite gradient, -1 for a wrong dimension."""
    with pm.Model() as model:
        x = pm.Normal("x", 0.0, 1.0)
        pm.Potential("bounded", Assert("x must be below 5")(0.0 * x, x < 5.0))
        pm.Potential("log", pt.log(x + 3.0))
    compiled = compile_declaration(model)
    assert _call(compiled, np.array([0.5]))[0] == 0
    assert _call(compiled, np.array([7.0]))[0] == 1
    assert _call(compiled, np.array([-3.0]))[0] == 3  # log(0) = -inf, its gradient 1/0
    assert _call(compiled, np.array([-4.0]))[0] == 4  # log(-1) = nan, its gradient -1
    assert _call(compiled, np.array([0.5, 0.5]))[0] == -1


def test_a_model_without_shared_data():
    with pm.Model() as model:
        pm.Normal("x", 1.0, 2.0, shape=2)
    compiled = compile_declaration(model)
    code, logp, grad = _call(compiled, np.array([1.0, 3.0]))
    assert code == 0
    np.testing.assert_allclose(grad, [0.0, -0.5])
    np.testing.assert_allclose(logp, -2 * np.log(2.0 * np.sqrt(2 * np.pi)) - 0.5)


@pytest.mark.slow  # nutpie's own compile is the 5-10 s this module saves; the first tests check logp and gradient
def test_nutpie_draws_what_it_draws_on_its_own_compile(case):
    """Same graph, same start, same seed: the same draws, to the last bit."""
    import nutpie

    model, _, compiled = case
    theirs = nutpie.compile_pymc_model(model, backend="numba", jitter_rvs=set(),
                                       var_names=["mu", "sigma", "spread"])
    kw = dict(chains=2, draws=150, tune=150, seed=7, progress_bar=False, cores=1)
    ours = nutpie.sample(compiled, **kw).posterior
    ref = nutpie.sample(theirs, **kw).posterior
    for var in ("mu", "sigma", "spread"):
        np.testing.assert_array_equal(ours[var].values, ref[var].values)
