"""The blocked cell passes of the leaderboard fast paths (``bt-judges``:
:mod:`bayes_judge.inference.kernels.leaderboard`; ``bt``: :mod:`bayes_judge.inference.kernels.leaderboard_bt`).

The generic test (``tests/inference/test_fastpaths.py``) checks the kernel against the
declaration on five systems, where every (label, judge) segment fits in one block.  Here: the
vectorized log against libm's, a table whose segments span several blocks, and the cell order.
"""

from __future__ import annotations

import re

import numba
import numpy as np
import pandas as pd
import pytest

from bayes_judge.generative import get_model
from bayes_judge.inference.fit import _build
from bayes_judge.inference.kernels import leaderboard as fast
from bayes_judge.inference.kernels import leaderboard_bt as fast_bt
from bayes_judge.leaderboard.encode import LeaderboardData, encode_leaderboard
from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard


@numba.njit
def _logs(p, out, inv):
    """``out = log(p)`` through the cell passes' logs, one (with ``inv = 1 / p``), two and three at
    a time."""
    n = p.shape[0]
    for k in range(n):
        inv[k] = np.nan
    for k in range(0, n - n % 6, 6):
        out[k], inv[k] = fast._log_inv(p[k])
        out[k + 1], out[k + 2] = fast._log2(p[k + 1], p[k + 2])
        out[k + 3], out[k + 4], out[k + 5] = fast._log3(p[k + 3], p[k + 4], p[k + 5])
    for k in range(n - n % 6, n):
        out[k], inv[k] = fast._log_inv(p[k])


def test_vectorized_log_in_float32_matches_libm_over_its_range():
    """The same logs on float32 arguments run in float32 (the cells at arena scale): within a few
    float32 ulps of the float64 log of the same float32 value."""
    rng = np.random.default_rng(0)
    p = np.concatenate([np.exp(rng.uniform(-87.0, 88.0, 20_000)), rng.uniform(1e-4, 1.0, 20_000),
                        1.0 - rng.uniform(0.0, 1e-3, 2_000), np.sqrt([0.5, 2.0]),
                        [np.finfo(np.float32).tiny, 1.0, 2.0, 0.5]]).astype(np.float32)
    out, inv = np.empty_like(p), np.empty_like(p)
    _logs(p, out, inv)
    assert out.dtype == np.float32
    ref = np.log(p.astype(np.float64))
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(out, ref, rtol=4 * eps, atol=4 * eps)
    assert out[p == 1.0].tolist() == [0.0]
    has = ~np.isnan(inv)
    np.testing.assert_allclose(inv[has], 1.0 / p[has].astype(np.float64), rtol=4 * eps)


def test_vectorized_log_matches_libm_over_the_whole_range():
    rng = np.random.default_rng(0)
    p = np.concatenate([
        np.exp(rng.uniform(-708.0, 709.0, 20_000)),  # every exponent of a normal float
        rng.uniform(1e-4, 1.0, 20_000),  # probabilities
        1.0 - rng.uniform(0.0, 1e-6, 2_000), 1.0 + rng.uniform(0.0, 1e-6, 2_000),  # near log 0
        np.sqrt([0.5, 2.0]), np.nextafter(np.sqrt([0.5, 2.0]), 0.0),  # the mantissa fold
        [2.2250738585072014e-308, 1.0, 2.0, 0.5, 1.7976931348623157e308],
    ])
    out, inv = np.empty_like(p), np.empty_like(p)
    _logs(p, out, inv)
    ref = np.log(p)
    # relative to log p, and absolute where log p is near 0 (there 1 - p is what a product keeps)
    np.testing.assert_allclose(out, ref, rtol=1e-15, atol=2.3e-16)
    assert out[p == 1.0].tolist() == [0.0]
    has = ~np.isnan(inv) & (p < 1e308)  # 1 / p of the largest floats is subnormal
    assert has.sum() > 7_000
    np.testing.assert_allclose(inv[has], 1.0 / p[has], rtol=1e-15, atol=0)


def _large_case(seed: int = 3, model: str = "bt-judges", soft_share: float = 0.1):
    """30 systems, 3 judges (judge 1 ties), 4,000 comparisons: each unlabelled segment holds
    several hundred cells, so segments span blocks and blocks end mid-segment."""
    df, _ = simulate_leaderboard(30, 4000, alpha=(1.5, 1.0, 0.7), beta=(0.3, -0.2, 0.0), tau=[0.0, 0.6, 0.0],
                                 label_share=0.05, design="one-judge", seed=seed)
    rng = np.random.default_rng(seed)
    soft = (rng.random(len(df)) < soft_share) & (df["winner"] != "tie").to_numpy()
    df["p_a"] = np.where(soft, rng.uniform(0.05, 0.95, len(df)), np.nan)
    df["winner"] = df["winner"].where(~soft, None)
    data = encode_leaderboard(df)
    ties = tuple(int(e) for e in np.flatnonzero(data.has_ties))
    coords = data.coords()
    coords["tie_judge"] = [data.judges[e] for e in ties] or ["none"]
    options = {"position_bias": True, "tie_judges": ties, "n_judges": 3}
    if model == "bt-judges":
        options["system_bias"] = True
    return data, coords, options


@pytest.mark.parametrize(("model", "kernel"), [("bt-judges", fast), ("bt", fast_bt)])
def test_segments_spanning_blocks_match_the_declaration(model, kernel, monkeypatch):
    monkeypatch.setattr(fast, "_DENSE_FILL", np.inf)  # every cell listed (the dense grid: below)
    data, coords, options = _large_case(model=model)
    arrays = data.arrays()
    buf = kernel.pack_data(arrays, get_model(model, "leaderboard").default_priors(), options, len(data.systems))
    E, C = 3, data.n_cells
    rows = {"bt-judges": 6, "bt": 4}[model]  # a, b and the count rows come before the segments
    seg = buf[kernel._HEADER + rows * C + np.arange(E + 1)].astype(int)  # the unlabelled cells' segments
    assert np.diff(seg).max() > 2 * fast._BLOCK and np.diff(seg).min() % fast._BLOCK != 0
    spec = get_model(model, "leaderboard")
    priors = spec.default_priors()
    model = _build(spec, arrays, LeaderboardData.DIMS, coords, priors, False, options)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    ip = model.initial_point()
    names = [v.name for v in model.value_vars]
    sizes = [int(np.size(ip[n])) for n in names]
    rng = np.random.default_rng(1)
    ref0 = got0 = None
    for _ in range(3):
        x = rng.normal(0.0, 0.5, sum(sizes))
        point = dict(zip(names, np.split(x, np.cumsum(sizes)[:-1]), strict=True))
        point = {n: v.reshape(np.shape(ip[n])) for n, v in point.items()}
        lp, g = kernel.fast_path.logp_grad(x, arrays, coords, priors, options=options)
        np.testing.assert_allclose(g, np.asarray(dlogp(point)), rtol=1e-8, atol=1e-8)
        if ref0 is None:
            ref0, got0 = float(logp(point)), lp
        else:
            assert lp - got0 == pytest.approx(float(logp(point)) - ref0, rel=1e-10, abs=1e-8)


@pytest.mark.parametrize("single", [False, True], ids=["float64", "float32"])
def test_labelled_cells_are_one_a_judge_and_label_without_the_judges_system_preferences(monkeypatch, single):
    """Without δ a labelled cell's probabilities are its judge's and label's alone: the packed
    buffer holds one listed cell per (label, judge) seen, and the same value and gradient as every
    labelled cell listed (soft rows, ties and segments spanning blocks included)."""
    monkeypatch.setattr(fast, "_DENSE_FILL", np.inf)
    monkeypatch.setattr(fast, "_SINGLE_MIN", 0 if single else np.inf)
    data, coords, options = _large_case(soft_share=0.0 if single else 0.1)  # soft rows keep a table in float64
    options = {**options, "system_bias": False}
    arrays = data.arrays()
    priors = get_model("bt-judges", "leaderboard").default_priors()
    labelled = arrays["h"] != 0
    seen = len(np.unique(arrays["h"][labelled] * 3 + arrays["judge"][labelled]))
    assert labelled.sum() > 20 * seen
    x = np.random.default_rng(2).normal(0.0, 0.5, len(data.systems) + 3 + 3 + 1)
    out = []
    for summed in (True, False):
        if not summed:
            monkeypatch.setattr(fast, "_one_cell_a_label", lambda a, b, e, h, counts, x, *_: (a, b, e, h, counts, x))
        buf = fast.pack_data(arrays, priors, options, len(data.systems))
        assert buf[18] == float(single)
        assert int(buf[2]) == (~labelled).sum() + (seen if summed else labelled.sum())
        out.append(fast.fast_path.logp_grad(x, arrays, coords, priors, options=options))
    (lp0, g0), (lp1, g1) = out
    assert np.isfinite(lp0)
    tol = float(_F32_BOUND) if single else 1e-12
    assert lp0 == pytest.approx(lp1, rel=tol)
    np.testing.assert_allclose(g0, g1, rtol=0, atol=tol * np.abs(g1).max())


def test_labelled_cells_stay_listed_where_their_sum_would_round_in_float32():
    counts = np.array([[2.0 ** 23, 2.0 ** 23 + 1.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    a, b, e, h = np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.zeros(2), np.ones(2)
    x = np.zeros((2, 0))
    kept = fast._one_cell_a_label(a, b, e, h, counts, x, 1, single=True)
    assert len(kept[0]) == 2
    one = fast._one_cell_a_label(a, b, e, h, counts, x, 1, single=False)
    assert len(one[0]) == 1 and one[4][:, 0].tolist() == [2.0 ** 24 + 1.0, 1.0, 0.0, 0.0]


def _dense_case(n_systems: int = 150, m: int = 6000, seed: int = 7, soft_share: float = 0.05):
    """Rows of the dense grid longer than a block (150 systems: 160 places a row), three judges
    (judge 1 ties), some soft rows, 5% labelled (listed cells beside the grid), empty rows."""
    df, _ = simulate_leaderboard(n_systems, m, alpha=(1.5, 1.0, 0.7), beta=(0.3, -0.2, 0.0), tau=[0.0, 0.6, 0.0],
                                 label_share=0.05, design="one-judge", seed=seed)
    df = df[df["a"] != "S003"]  # an empty row in every judge's grid (S003 is only ever shown second)
    rng = np.random.default_rng(seed)
    soft = (rng.random(len(df)) < soft_share) & (df["winner"] != "tie").to_numpy()
    df = df.assign(p_a=np.where(soft, rng.uniform(0.05, 0.95, len(df)), np.nan),
                   winner=df["winner"].where(~soft, None))
    data = encode_leaderboard(df)
    coords = data.coords()
    ties = tuple(int(e) for e in np.flatnonzero(data.has_ties))
    coords["tie_judge"] = [data.judges[e] for e in ties] or ["none"]
    return data, coords, {"position_bias": True, "tie_judges": ties, "n_judges": 3, "system_bias": True}


def _two_layouts(monkeypatch, data, coords, options, x):
    """The kernel's value and gradient at ``x`` with every judge's cells listed and with every
    unlabelled cell in the dense grid."""
    priors = get_model("bt-judges", "leaderboard").default_priors()
    out = []
    for fill, n_dense in ((np.inf, 0), (0.0, 3)):
        monkeypatch.setattr(fast, "_DENSE_FILL", fill)
        buf = fast.pack_data(data.arrays(), priors, options, len(data.systems))
        assert int(buf[17]) == n_dense
        out.append(fast.fast_path.logp_grad(x, data.arrays(), coords, priors, options=options))
    return out


@pytest.mark.parametrize("options", [
    {},
    {"position_bias": False, "system_bias": False},
    {"tie_judges": ()},  # judge 1's ties then count nowhere: only its other verdicts are read
])
def test_the_dense_grid_gives_the_listed_cells_value_and_gradient(monkeypatch, options):
    data, coords, base = _dense_case()
    options = {**base, **options}
    N = len(data.systems)
    n = N + 3 + (3 if options["position_bias"] else 0) + len(options["tie_judges"])
    n += (1 + 3 * N) if options["system_bias"] else 0
    x = np.random.default_rng(3).normal(0.0, 0.5, n)
    (lp0, g0), (lp1, g1) = _two_layouts(monkeypatch, data, coords, options, x)
    assert np.isfinite(lp0)
    assert lp1 == pytest.approx(lp0, rel=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-9)


def test_the_dense_grid_layout_and_its_extremes(monkeypatch):
    data, coords, options = _dense_case()
    N, D = len(data.systems), 3
    monkeypatch.setattr(fast, "_DENSE_FILL", 0.0)
    priors = get_model("bt-judges", "leaderboard").default_priors()
    buf = fast.pack_data(data.arrays(), priors, options, N)
    P = fast._row_length(N)
    assert P == 160 > fast._BLOCK
    C, H = int(buf[2]), int(buf[3])
    assert C == int((data.arrays()["h"] != 0).sum())  # the labelled cells stay listed
    do = fast._HEADER + 6 * C + 3 * 3 + 1 + 4 * H + 3
    flags = buf[do + 3:do + 3 + D * N]
    assert {0.0, 1.0, 2.0} <= set(flags.tolist())  # empty rows, hard rows, rows with soft judgments
    grid = buf[do + 3 + D * N:].reshape(D, 4, N, P)
    assert grid[..., N:].sum() == 0 and grid.shape[0] * grid.shape[1] * N * P == len(buf) - do - 3 - D * N
    n = N + 3 + 3 + 1 + 1 + 3 * N
    x = np.random.default_rng(4).normal(0.0, 0.5, n)
    # scores more than 700 apart: σ(s_a − s_b) from the differences, not from the exp table
    x[:N] = np.linspace(-450.0, 450.0, N)
    (lp0, g0), (lp1, g1) = _two_layouts(monkeypatch, data, coords, options, x)
    assert np.isfinite(lp0) and lp1 == pytest.approx(lp0, rel=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-6)
    # a tie threshold so high (τ = e^7) that a verdict for A or B has probability below e^-1000
    # (σ overflows on the way): nan in both layouts; the grid's own check alone is tested below
    x = np.random.default_rng(4).normal(0.0, 0.5, n)
    x[N + 6] = 7.0
    (lp0, _), (lp1, _) = _two_layouts(monkeypatch, data, coords, options, x)
    assert np.isnan(lp0) and np.isnan(lp1)


def test_the_dense_grid_sums_cells_of_one_place(monkeypatch):
    """Cells of one (label, judge, A, B) (a prompt's or a covariate's own, in tables encoded with
    them) add their terms: listed twice, a cell counts twice in both layouts."""
    data, coords, options = _dense_case(seed=8)
    arrays = data.arrays()
    twice = {k: (np.concatenate([np.asarray(v), np.asarray(v)])
                 if k in ("sys_a", "sys_b", "judge", "h", "n", "x", "item") else v) for k, v in arrays.items()}
    N = len(data.systems)
    x = np.random.default_rng(5).normal(0.0, 0.5, N + 3 + 3 + 1 + 1 + 3 * N)
    priors = get_model("bt-judges", "leaderboard").default_priors()
    out = []
    for fill in (np.inf, 0.0):
        monkeypatch.setattr(fast, "_DENSE_FILL", fill)
        once = fast.fast_path.logp_grad(x, arrays, coords, priors, options=options)
        out.append(fast.fast_path.logp_grad(x, twice, coords, priors, options=options))
        # the labelled cells (listed in both) and the unlabelled ones (in the grid in the second)
        assert out[-1][0] < once[0]
    assert out[1][0] == pytest.approx(out[0][0], rel=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-9, atol=1e-9)


def test_an_empty_place_of_the_grid_adds_nothing_where_its_probabilities_overflow(monkeypatch):
    """A pair a judge never compared still has its place in the grid.  Its judge preferences may
    differ by more than the cells' σ can hold: judge 0 compared only pairs whose δ differ by at
    most 160 (δ = 240, −240, 80, −80, 0, 0 for S000 … S005), never S000 with S001 (480 apart).
    Those empty places' terms must stay 0, not 0 · nan."""
    df, _ = simulate_leaderboard(6, 6000, alpha=(0.5, 1.0, 0.7), beta=(0.0, -0.2, 0.0), tau=[0.0, 0.6, 0.0],
                                 label_share=0.0, design="one-judge", seed=5)
    near = {(0, 2), (2, 3), (3, 1), (2, 4), (2, 5), (3, 4), (3, 5), (4, 5)}
    near = {f"S{i:03d}-S{j:03d}" for i, j in near | {(j, i) for i, j in near}}
    data = encode_leaderboard(df[(df["judge"] != "j0") | (df["a"] + "-" + df["b"]).isin(near)])
    assert 0 < int(((data.arrays()["judge"] == 0) & (data.arrays()["h"] == 0)).sum()) < 30
    coords = data.coords()
    coords["tie_judge"] = [data.judges[1]]
    options = {"position_bias": True, "tie_judges": (1,), "n_judges": 3, "system_bias": True}
    N, E = 6, 3
    x = np.zeros(N + E + E + 1 + 1 + E * N)
    x[N:N + E] = np.log(0.5)
    x[N + 7] = np.log(240.0)  # σ_δ
    x[N + 8:N + 8 + N] = [1.0, -1.0, 1 / 3, -1 / 3, 0.0, 0.0]  # judge 0: δ = 240, −240, 80, −80, 0, 0
    (lp0, g0), (lp1, g1) = _two_layouts(monkeypatch, data, coords, options, x)
    assert np.isfinite(lp0) and np.isfinite(g0).all()
    assert lp1 == pytest.approx(lp0, rel=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-9)


def test_a_probability_lost_in_the_grid_is_a_divergence(monkeypatch):
    """No labels, so every judgment is in the grid: a judge with α = 709 gives a verdict against
    the preference a probability of about e^-709, under the smallest normal float (σ itself does
    not overflow at 709).  The grid's own check must turn that into nan, as the listed cells' does."""
    df, _ = simulate_leaderboard(40, 8000, alpha=(1.5, 1.0, 0.7), beta=(0.0, 0.0, 0.0), tau=[0.0, 0.0, 0.0],
                                 label_share=0.0, design="one-judge", seed=9)
    data = encode_leaderboard(df)
    coords = data.coords()
    coords["tie_judge"] = ["none"]
    options = {"position_bias": False, "tie_judges": (), "n_judges": 3, "system_bias": False}
    N = len(data.systems)
    x = np.random.default_rng(6).normal(0.0, 0.3, N + 3)
    lp = [out[0] for out in _two_layouts(monkeypatch, data, coords, options, x)]
    assert np.isfinite(lp).all()
    x[N] = np.log(709.0)
    lp = [out[0] for out in _two_layouts(monkeypatch, data, coords, options, x)]
    assert np.isnan(lp).all(), lp


def test_the_cell_order_does_not_matter_and_a_lost_probability_is_a_divergence():
    data, coords, options = _large_case(seed=5)
    arrays = data.arrays()
    priors = get_model("bt-judges", "leaderboard").default_priors()
    perm = np.random.default_rng(0).permutation(data.n_cells)
    shuffled = {k: (np.asarray(v)[perm] if k in ("sys_a", "sys_b", "judge", "h", "n", "x", "item") else v)
                for k, v in arrays.items()}
    n = len(data.systems) + 3 + 3 + 1 + 1 + 3 * len(data.systems)
    x = np.random.default_rng(2).normal(0.0, 0.5, n)
    lp, g = fast.fast_path.logp_grad(x, arrays, coords, priors, options=options)
    lp2, g2 = fast.fast_path.logp_grad(x, shuffled, coords, priors, options=options)
    assert lp2 == pytest.approx(lp, rel=1e-13)
    np.testing.assert_allclose(g2, g, rtol=1e-11, atol=1e-11)
    # judges so sure (α = e^6.7, about 810) that a verdict against a human label has probability
    # below e^-800: under the smallest normal float the log is not taken, and nutpie sees nan
    # (a divergence), as it sees the declaration's -inf
    x[len(data.systems):len(data.systems) + 3] = 6.7
    lp3, _ = fast.fast_path.logp_grad(x, arrays, coords, priors, options=options)
    assert np.isnan(lp3) or lp3 == -np.inf


@pytest.mark.parametrize(("name", "dtype"), [
    ("fast._tie_pass", np.float64), ("fast._notie_pass", np.float64), ("fast._block_human", np.float64),
    ("fast_bt._block_davidson", np.float64), ("fast._tie_pass", np.float32), ("fast._notie_pass", np.float32),
])
def test_the_elementwise_passes_compile_to_simd_loops(name, dtype):
    """The passes exist to be vectorized: a libm call, a data-dependent branch or one more
    possibly-aliased array can leave the loop scalar (and the kernel 2-3x slower) while every
    value stays right, so the loop vectorizer's output is checked in a fresh compile (a variant
    with libm's log instead of the module's fails the second assertion).  In float32 (the cells
    at arena scale) the loops are also checked to stay in float32: one float64 constant would
    widen every operation and halve the lanes."""
    import llvmlite.binding
    import numba

    mod, fn = name.split(".")
    f = getattr({"fast": fast, "fast_bt": fast_bt}[mod], fn)
    fresh = numba.njit(**{k: v for k, v in f.targetoptions.items() if k not in ("cache", "nopython")})(f.py_func)
    B = fast._BLOCK
    W, G = np.full(7 * B, 0.7, dtype=dtype), np.empty(B, dtype=dtype)
    col = [W[j * B:] for j in range(7)]  # a listed block's columns, as _judgment_cells passes them
    c = [dtype(v) for v in (1.0, 1.1, 0.9, 1.2, 0.44)]
    args = {"_block_human": (W, G, B), "_block_davidson": (W, G, B, 1.1, 0.3, True),
            "_tie_pass": (col[0], c[0], *col[1:7], np.empty(3 * B, dtype=dtype), B, *c[1:], True),
            "_notie_pass": (col[0], c[0], *col[1:5], np.empty(3 * B, dtype=dtype), B, c[1], c[2], c[0])}[fn]
    fresh(*args)
    ir = fresh.inspect_llvm(fresh.signatures[0])
    if dtype == np.float32:
        assert re.search(r"<\d+ x float>", ir)
        body = "\n".join(re.findall(r"^vector\.body\d*:.*?(?=^\S)", ir, re.M | re.S))
        assert body and not re.search(r"(fpext|fadd|fmul|fdiv).*double", body), "a float64 in a float32 loop"
    # 512-bit vectors where the CPU has them (fast._wide_vectors: LLVM keeps to 256 bits there
    # by default, and the kernel takes ~25% longer)
    assert '"prefer-vector-width"="512"' in ir
    if "+avx512f" in llvmlite.binding.get_host_cpu_features().flatten().split(","):
        lanes = "<16 x float>" if dtype == np.float32 else "<8 x double>"
        assert lanes in "\n".join(re.findall(r"^vector\.body\d*:.*?(?=^\S)", ir, re.M | re.S))
    # the Davidson block's loop is unswitched on its soft-rows flag: a vector loop for each value;
    # the tie pass has its soft normalizer's loop and its main loop
    assert len(re.findall(r"^vector\.body\d*:", ir, re.M)) >= (2 if fn in ("_block_davidson", "_tie_pass") else 1)
    # LLVM vectorizes a libm log as llvm.log.v4f64, which it lowers to a scalar call per lane
    assert not re.search(r"@llvm\.(log|exp|pow)\.v|call double @(log|exp)\b", ir)
    # the runtime alias checks test the accessed ranges only: with a signed index they also test
    # a range one array length (the array's shape field, ``%arg.X.5.0``) past the array, where an
    # adjacent allocation sends the loop to its scalar copy (fast._UB)
    for check in re.findall(r"^vector\.memcheck:.*?(?=^\S)", ir, re.M | re.S):
        assert not re.search(r"%arg\.\w+\.5\.0", check), check


def test_a_labelled_fit_gives_the_same_draws_for_the_same_seed():
    """Real judges with 10% human labels (SummEval): the fast path twice with one seed gives the
    same draws.  With signed indices in the passes, the scratch arrays' places in memory decided
    whether a loop ran vectorized, so the log density moved by an ulp and the draws diverged (4 of
    4 such pairs differed, 30 draws each)."""
    import bayes_judge as bj
    from bayes_judge.generative.leaderboard_models import leaderboard_start

    judges = ["gpt-4-0314/rts", "gpt-3.5-turbo-0301/rts", "gpt-3.5-turbo-0301/mcq"]
    df = pd.concat([bj.datasets.summeval.pairs("coherence", judge=j) for j in judges], ignore_index=True)
    keep = np.random.default_rng(0).random(len(df)) < 0.1  # the experts' preference on 10% of the rows
    data = encode_leaderboard(df.assign(human=df["human"].where(keep, None)))
    assert (data.arrays()["h"] != 0).any() and len(data.arrays()["hum_a"]) > 0
    priors = get_model("bt-judges", "leaderboard").default_priors()
    coords = data.coords()
    coords["tie_judge"] = ["none"]
    options = {"position_bias": True, "tie_judges": (), "n_judges": 3, "system_bias": True}
    lps = [fast.fast_path(data.arrays(), coords, priors, init=leaderboard_start(data, priors), chains=2, draws=30,
                          tune=30, seed=0, target_accept=0.8, options=options)[1]["lp"]
           for _ in range(2)]
    np.testing.assert_array_equal(lps[0], lps[1])


def _two_precisions(monkeypatch, data, coords, options, x, fill):
    """The kernel's value and gradient at ``x`` in float64 and in single precision (every table
    large enough: ``_SINGLE_MIN`` 0), with ``_DENSE_FILL`` at ``fill``."""
    priors = get_model("bt-judges", "leaderboard").default_priors()
    monkeypatch.setattr(fast, "_DENSE_FILL", fill)
    out = []
    for minimum, single in ((np.inf, 0.0), (0, 1.0)):
        monkeypatch.setattr(fast, "_SINGLE_MIN", minimum)
        assert fast.pack_data(data.arrays(), priors, options, len(data.systems))[18] == single
        out.append(fast.fast_path.logp_grad(x, data.arrays(), coords, priors, options=options))
    return out


# float32 rounds each operation by at most ε/2 (ε = 2^-23): a cell's terms take ~20 operations
# and a block's float32 sum up to 128 additions, so a block's sum is within ~150 ε of the sum of
# its terms' magnitudes; blocks are summed in float64.  The log-likelihood's terms are all
# negative (no soft rows), so that magnitude is |log density| up to the priors' small share.
_F32_BOUND = 150 * np.finfo(np.float32).eps


@pytest.mark.parametrize("fill", [np.inf, 0.0], ids=["listed", "grid"])
def test_single_precision_cells_stay_within_float32_rounding_of_float64(monkeypatch, fill):
    data, coords, options = _dense_case(soft_share=0.0)
    N = len(data.systems)
    x = np.random.default_rng(3).normal(0.0, 0.5, N + 3 + 3 + 1 + 1 + 3 * N)
    (lp0, g0), (lp1, g1) = _two_precisions(monkeypatch, data, coords, options, x, fill)
    assert np.isfinite(lp0) and lp1 != lp0  # float32 did run
    assert abs(lp1 - lp0) <= _F32_BOUND * abs(lp0)
    assert np.abs(g1 - g0).max() <= _F32_BOUND * np.abs(g0).max()


def test_single_precision_falls_back_to_float64_where_float32_cannot_hold_a_cell(monkeypatch):
    """Two ways out of float32, each rerun in float64 rather than a divergence or a wrong value:
    a tie threshold so small (τ = e^-85) that a tie's probability (~1e-37 · w a b) is below
    float32's smallest normal (not float64's); judges so sure (α = 30) that their exp tables
    leave float32's range (every block of every judge then runs in float64: float64's values)."""
    data, coords, options = _dense_case(soft_share=0.0)
    N = len(data.systems)
    assert options["tie_judges"] == (1,)
    x = np.random.default_rng(3).normal(0.0, 0.5, N + 3 + 3 + 1 + 1 + 3 * N)
    x[N + 6] = -85.0  # log τ of judge 1
    for fill in (np.inf, 0.0):
        (lp0, g0), (lp1, g1) = _two_precisions(monkeypatch, data, coords, options, x, fill)
        assert np.isfinite(lp0) and np.isfinite(lp1)
        assert abs(lp1 - lp0) <= _F32_BOUND * abs(lp0)
        assert np.abs(g1 - g0).max() <= _F32_BOUND * np.abs(g0).max()
    x[N:N + 3] = np.log(30.0)
    for fill in (np.inf, 0.0):
        (lp0, g0), (lp1, g1) = _two_precisions(monkeypatch, data, coords, options, x, fill)
        assert np.isfinite(lp0) and lp1 == pytest.approx(lp0, rel=1e-13)
        np.testing.assert_allclose(g1, g0, rtol=1e-11, atol=1e-9)


def test_single_precision_only_where_every_count_is_exact_in_float32():
    priors = get_model("bt-judges", "leaderboard").default_priors()
    for soft_share, single in ((0.05, 0.0), (0.0, 1.0)):
        data, _, options = _dense_case(soft_share=soft_share)
        arrays = data.arrays()
        assert data.n_cells < fast._SINGLE_MIN  # a small table stays in float64 either way
        assert fast.pack_data(arrays, priors, options, len(data.systems))[18] == 0.0
        big = {k: (np.concatenate([np.asarray(v)] * 8) if k in ("sys_a", "sys_b", "judge", "h", "n", "x", "item")
                   else v) for k, v in arrays.items()}
        assert fast.pack_data(big, priors, options, len(data.systems))[18] == single
    big["n"] = np.asarray(big["n"], dtype=np.float64) + 2.0**24  # whole counts past float32's 2^24
    assert fast.pack_data(big, priors, options, len(data.systems))[18] == 0.0


def test_the_signed_scale_keeps_the_half_normal_prior_of_the_judges_system_preferences():
    """``σ_δ = |u|`` with ``u ~ Normal(0, σ₀)`` (parameter expansion, ``leaderboard_models.
    _system_bias_scale``): the declaration's prior draws of ``σ_δ`` are HalfNormal(σ₀), and
    ``δ = u (z − z̄)`` has the prior sd of ``σ_δ (z − z̄)``, ``σ₀ √(1 − 1/N)``; the fast path's
    ``σ_δ`` and ``δ`` are those of its signed draws."""
    import pymc as pm
    from scipy import stats

    data, coords, options = _large_case()
    spec = get_model("bt-judges", "leaderboard")
    priors = spec.default_priors()
    model = _build(spec, data.arrays(), LeaderboardData.DIMS, coords, priors, False, options)
    assert "system_bias_signed" in [v.name for v in model.free_RVs]
    sd, delta = pm.draw([model["system_bias_sd"], model["delta"]], draws=4000, random_seed=0)
    s0 = float(priors.system_bias.sigma)
    assert stats.kstest(sd, stats.halfnorm(scale=s0).cdf).pvalue > 0.01
    N = len(data.systems)
    np.testing.assert_allclose(delta.std(), s0 * np.sqrt(1 - 1 / N), rtol=0.03)
    post = {"alpha": np.ones((1, 2, 3)), "system_bias_signed": np.array([[-0.2, 0.3]]),
            "delta_raw": np.arange(2 * 3 * N, dtype=float).reshape(1, 2, 3, N) % 7}
    fast._derive_judged(post)
    np.testing.assert_array_equal(post["system_bias_sd"], [[0.2, 0.3]])
    z = post["delta_raw"]
    np.testing.assert_allclose(post["delta"][0, 0], -0.2 * (z[0, 0] - z[0, 0].mean(axis=-1, keepdims=True)))


def test_single_precision_tables_take_the_grid_from_a_lower_fill():
    """A judge whose unlabelled cells fill 44% of its ordered pairs keeps them listed in float64
    (the grid pays from 55%) and reads them from the grid in float32 (from 37%, with 512-bit
    vectors: ``benchmarks/results/bench_leaderboard_kernel.md``); 30% stays listed in both."""
    N = 10
    pairs = np.array([(a, b) for a in range(N) for b in range(N) if a != b])  # 90 ordered pairs
    for share, in_float64, in_float32 in ((0.44, False, True), (0.30, False, False), (0.60, True, True)):
        take = pairs[: int(round(share * len(pairs)))]
        a, b = take[:, 0].astype(float), take[:, 1].astype(float)
        e, h = np.zeros(len(take)), np.zeros(len(take))
        assert fast._dense_judges(a, b, e, h, N, 1, 0, single=False)[0] == in_float64, share
        assert fast._dense_judges(a, b, e, h, N, 1, 0, single=True)[0] == in_float32, share


def test_the_shear_decorrelates_the_judges_at_the_mode_of_the_double_precision_cells(monkeypatch):
    """The fast path's shear (the judges' global parameters and the scores' direction) is read from
    the cells in double precision where the sampler's are single (single precision's rounding,
    differenced, swamped the flat direction where a judge's accuracy trades against the scores'
    spread: the accuracies' ESS 337-345 of 4,000 draws without labels at 1,000,000 comparisons,
    3,441-3,532 from double): in the sampled coordinates the block's precision at the mode is
    diagonal, ``Bᵀ H_V B = diag H_V``, and the sampler's buffer is packed in single precision."""
    from bayes_judge.inference.laplace import hessian

    df, _ = simulate_leaderboard(120, 60_000, **THREE_JUDGES,
                                 design="one-judge", label_share=0.0, seed=3)
    data = encode_leaderboard(df.drop(columns="human"))
    ties = tuple(int(e) for e in np.flatnonzero(data.has_ties))
    options = {"position_bias": True, "system_bias": False, "tie_judges": ties, "n_judges": 3}
    priors = get_model("bt-judges", "leaderboard").default_priors()
    assert fast.pack_data(data.arrays(), priors, options, len(data.systems))[18] == 1.0  # the sampler: single
    buf = fast.pack_data(data.arrays(), priors, {**options, "double": True}, len(data.systems))
    lay = fast._layout(buf)
    kern = fast.kernel_for(buf)
    start, shear = fast._sheared_start(kern, buf, fast._start({}, lay), lay, ("effect", "alpha", "beta", "tau"),
                                       ("system_bias_signed", "delta_raw"))
    assert shear is not None and shear.V.shape[1] == 1 + 3 + 3 + len(ties)
    hv = shear.V.T @ hessian(kern, buf, start) @ shear.V
    d = np.diag(hv)
    assert np.abs(shear.B.T @ hv @ shear.B - np.diag(d)).max() <= 1e-3 * d.max()
    # and the fast path hands _sheared_start that buffer, not the sampler's
    import bayes_judge as bj

    seen: list[float] = []
    real = fast._sheared_start
    monkeypatch.setattr(fast, "_sheared_start", lambda k, b, *a: seen.append(float(b[18])) or real(k, b, *a))
    bj.leaderboard(df.drop(columns="human"), chains=1, draws=20, tune=20, bridge=False, system_bias=False,
                   pointwise=False)
    assert seen == [0.0]


def test_the_judges_own_preferences_are_rebuilt_from_the_stored_draws_or_their_mirror():
    """An update rebuilds the raw draws of δ's scale and effects from the stored δ, its scale's
    size and delta_raw_mean (kernels.leaderboard._held_location / _held_raw): each draw is the
    sampled one, or its mirror (both signs flipped), which has the same log density; a scale of
    either sign."""
    from bayes_judge.inference.kernels.leaderboard import _derive_judged, _held_location, _held_raw

    rng = np.random.default_rng(0)
    u = rng.normal(0.0, 0.5, size=(2, 50))
    assert (u < 0).any() and (u > 0).any()
    post = {"system_bias_signed": u, "delta_raw": rng.standard_normal((2, 50, 3, 7)), "alpha": np.zeros((2, 50, 3))}
    stats = _held_location(post)
    _derive_judged(post)
    raw = _held_raw({k: post[k] for k in ("delta", "system_bias_sd")}, stats, 2, 50, seed=0)
    sign = np.sign(u)[..., None, None]
    assert np.allclose(raw["system_bias_signed"], np.abs(u))
    assert np.allclose(raw["delta_raw"], sign * post["delta_raw"])
