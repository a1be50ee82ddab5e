"""The derived functions' PyTensor mode: Python thunks for small evaluations whose every
elementwise op is one numpy call, C otherwise; the values are the same either way."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor")

import pytensor.tensor as pt  # noqa: E402
from pytensor.link.basic import PerformLinker  # noqa: E402

from bayes_judge.inference import fit as F  # noqa: E402


def _is_python(fn) -> bool:
    return isinstance(fn.maker.linker, PerformLinker)


def test_small_ufunc_graph_uses_python_thunks_and_matches_c():
    x = pt.matrix("x")
    out = pt.exp(x) * 2.0 - pt.sigmoid(x)  # ops with numpy ufuncs (fusion off)
    fn_py = F.compile_derived([x], [out], 10, {"x": np.zeros(1)})
    fn_c = F.compile_derived([x], [out], int(F._PY_THUNK_WORK) * 2, {"x": np.zeros(1)})
    assert _is_python(fn_py) and F._all_ufuncs(fn_py)
    assert not _is_python(fn_c)
    v = np.random.default_rng(0).normal(size=(50, 7))
    np.testing.assert_allclose(fn_py(v)[0], fn_c(v)[0], rtol=1e-13, atol=0)


def test_op_without_ufunc_falls_back_to_c():
    x = pt.vector("x")
    out = pt.round(x, mode="half_away_from_zero")  # no numpy ufunc, and no restatement
    fn = F.compile_derived([x], [out], 10, {"x": np.zeros(1)})
    assert not _is_python(fn)
    np.testing.assert_array_equal(fn(np.array([0.5, -2.5, 3.2]))[0], [1.0, -3.0, 3.0])


def test_ops_without_ufunc_are_restated_as_ufuncs_with_the_same_values():
    """softplus, log1mexp, clip, casts and a variadic multiply-add (whose ufunc is binary) run as
    numpy calls in the Python mode, with C's values over the whole range (extremes included)."""
    x, y, z = pt.vector("x"), pt.vector("y"), pt.vector("z")
    i = pt.lvector("i")
    outs = [pt.log1p(pt.exp(x)), pt.softplus(-x), pt.log1mexp(-pt.abs(x) - 1e-300), pt.clip(x, -1.5, 2.0),
            x * y * z + y + z + pt.cast(i, "float64"), pt.cast(x * 3.0, "int64"), pt.cast(i > 2, "float64")]
    fn_py = F.compile_derived([x, y, z, i], outs, 10, {"x": np.zeros(1)})
    fn_c = F.compile_derived([x, y, z, i], outs, int(F._PY_THUNK_WORK) * 2, {"x": np.zeros(1)})
    assert _is_python(fn_py) and F._all_ufuncs(fn_py) and not _is_python(fn_c)
    rng = np.random.default_rng(1)
    v = np.concatenate([[0.0, 1e-12, -1e-12, 0.69, -0.69, 36.0, -36.0, 40.0, -40.0, 700.0, -745.0],
                        rng.normal(scale=20.0, size=89)])
    args = (v, rng.normal(size=v.size), rng.normal(size=v.size), rng.integers(-5, 5, size=v.size))
    for a, b in zip(fn_py(*args), fn_c(*args), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-300)


LLMBAR8 = [f"{m}/{s}" for m in ("GPT-4", "PaLM2") for s in ("Vanilla_NoRules", "Metrics_Reference", "Metrics", "Reference")]


@pytest.mark.parametrize("name, kw", [
    ("mtbench", dict(method="dawid-skene", prior="none", swap="split")),
    ("llmbar", dict(judges=LLMBAR8)),  # the default model: softplus, casts, a variadic product
])
def test_real_fits_derive_in_python_thunks_like_c(monkeypatch, name, kw):
    """The per-item quantities of a small real fit: Python thunks, the same numbers as C."""
    import bayes_judge as bj

    g = bj.assign_generators(bj.load_dataset(name), share=0.8, seed=0)
    kw = dict(kw, seed=0, chains=2, draws=200, tune=200)
    modes = []
    real = F.compile_derived

    def spy(ins, outs, n_draws, arrays):
        fn = real(ins, outs, n_draws, arrays)
        modes.append(_is_python(fn))
        return fn

    monkeypatch.setattr(F, "compile_derived", spy)
    F.clear_compiled()
    a = bj.win_rate(g, **kw)
    n = len(modes)
    monkeypatch.setattr(F, "_PY_THUNK_WORK", -1.0)
    F.clear_compiled()
    b = bj.win_rate(g, **kw)
    F.clear_compiled()
    assert n >= 1 and modes == [True] * n + [False] * n
    np.testing.assert_array_equal(a.posterior["p"], b.posterior["p"])
    for group in ("log_likelihood", "posterior"):
        for v in a[group].data_vars:
            np.testing.assert_allclose(a[group][v], b[group][v], rtol=1e-10, atol=1e-12, err_msg=f"{group}.{v}")
