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
    out = pt.log(pt.exp(x) + 1.0)  # rewritten to softplus, which has no numpy ufunc
    fn = F.compile_derived([x], [out], 10, {"x": np.zeros(1)})
    assert not _is_python(fn)
    v = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(fn(v)[0], np.logaddexp(0.0, v), rtol=1e-12)


def test_mt_bench_dawid_skene_derives_in_python_thunks_like_c(monkeypatch):
    """The per-item quantities of a small real fit: Python thunks, the same numbers as C."""
    import bayes_judge as bj

    g = bj.assign_generators(bj.load_dataset("mtbench"), share=0.8, seed=0)
    kw = dict(method="dawid-skene", prior="none", swap="split", seed=0, chains=2, draws=200, tune=200)
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
