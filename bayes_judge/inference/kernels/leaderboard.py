"""Registered nutpie fast path of the leaderboard model ``"bt-judges"``: a numba log-density.

The declaration :func:`bayes_judge.generative.leaderboard_models.judged_bradley_terry` is the
model; this module is an optional speed-up for ``sampler="nutpie"`` at arena scale: the same
log-density with its gradient written by hand in numba and handed to nutpie's Rust NUTS as C
callbacks (:mod:`bayes_judge.inference._nutpie`), one pass over the cells per evaluation, no per-cell
arrays.  It is checked against the declaration's compiled log-density and gradient by the one
generic test (``tests/inference/test_fastpaths.py``), and it declines what it does not state
(:func:`accepts`): the per-prompt ``difficulty`` and priors outside the declared families.

Unconstrained vector (the declaration's value variables in ``model.value_vars`` order)::

    x = [s_raw (N), effect (K)?, log alpha (E), beta (E)?, log tau (T)?, u?, z (E × N)?]   (σ_δ = |u|)

Per judgment cell ``c`` (systems ``a``, ``b``, judge ``e``, human label ``h``), with
``d = s_a − s_b + x_c·b``, ``w = σ(d)`` (``h`` unknown; 1 or 0 when a person said A or B),
``η± = ±α_e + β_e + δ_{e,a} − δ_{e,b}`` and ``t = τ_e`` (0 for a judge that never ties)::

    a₁ = σ(η₊ − t), a₀ = σ(η₋ − t), b₁ = σ(−η₊ − t), b₀ = σ(−η₋ − t)
    P_A = w a₁ + (1 − w) a₀,  P_B = w b₁ + (1 − w) b₀,  P_T = 1 − P_A − P_B,  S = P_A + P_B
    l_c = n_A log P_A + n_B log P_B + n_T log P_T + s_A log(P_A / S) + s_B log(P_B / S)

(a judge that never ties has ``b = 1 − a`` and no tie counts).  With ``g_A = ∂l/∂P_A``,
``g_B = ∂l/∂P_B`` and ``σ'(u) = σ(u) σ(−u)``::

    ∂l/∂η₊ = w (g_A σ'(η₊ − t) − g_B σ'(−η₊ − t)),  ∂l/∂η₋ = (1 − w)(g_A σ'(η₋ − t) − g_B σ'(−η₋ − t))
    ∂l/∂α = ∂l/∂η₊ − ∂l/∂η₋,   ∂l/∂β = ∂l/∂δ_a = −∂l/∂δ_b = ∂l/∂η₊ + ∂l/∂η₋
    ∂l/∂t = −g_A (w σ'(η₊ − t) + (1 − w) σ'(η₋ − t)) − g_B (w σ'(−η₊ − t) + (1 − w) σ'(−η₋ − t))
    ∂l/∂d = w (1 − w) (g_A (a₁ − a₀) + g_B (b₁ − b₀))          (h unknown only)

A cell computes no exp: ``u± = e^{η±} = e^{±α_e} e^{β_e} e^{δ_{e,a}} / e^{δ_{e,b}}``, ``v = e^t`` and
``e^{s}`` come from tables made once per evaluation (E × N entries), so ``σ(η± − t) = u± / (u± + v)``,
``σ(−η± − t) = 1 / (1 + v u±)`` and ``w = e^{s_a} / (e^{s_a} + e^{s_b})``.  The packed cells are
sorted by (label, judge) and read in blocks: a scalar gather from the tables, a branch-free
elementwise pass that LLVM compiles to SIMD code (the reciprocals of a cell share one division,
its logs another, through a bit-level log: libm's is a call per value and keeps a loop scalar),
and a scalar scatter of the per-cell gradients.  About 17 ns a cell at 1,000,000 comparisons,
against 32 ns for a plain loop over cells with libm's log.  A judge whose unlabelled cells fill
at least 55% of the N (N − 1) ordered pairs (A, B) (37% in float32; the arena case; no
covariates) has them stored as an N × N grid instead (:func:`_sorted_cells`,
:func:`_dense_cells`): a grid row is read in contiguous blocks with no gather, its gradients land
on contiguous runs of systems with no scatter, and the row's ``σ(s_a − s_b)`` serves every judge, about 8 ns a place of the grid
(empty places included, their gradient terms masked).
The passes ask LLVM for 512-bit vectors where the CPU has AVX-512 (:func:`_wide_vectors`; its
default there is 256 bits): one evaluation at 1,000,000 comparisons takes 0.70 ms instead of 0.90.
``benchmarks/bench_leaderboard.py`` reports the evaluation's time.  A human label scores
``log σ(±d)``.  Scores ``s = s_raw − mean(s_raw)`` and ``δ_e = u (z_e − mean(z_e))`` are
centring projections, so their gradients are centred the same way; ``u ~ Normal(0, σ₀)`` is the
signed scale of δ, ``σ_δ = |u|`` (the declaration's parameter expansion of its HalfNormal); the
other HalfNormal sites are sampled on the log scale with the log-Jacobian (PyMC's log transform).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import types
from numba.extending import intrinsic, overload

from ...generative.priors import HalfNormal, Normal, Prior, Priors
from .._compile_beside import KERNEL_SIG, AfterCompile, compile_beside, stop, wait
from .._nutpie import copy_function, make_model, run
from ..laplace import laplace_shear

__all__ = ["pack_data", "logp_grad", "expand", "accepts", "fast_path", "build_fast_path", "FAST_PATHS"]

# N, E, C, H, K, T, position bias, system bias, then mu_s, sd_s, tau_a, mu_b, sd_b, tau_t, tau_d,
# mu_e, sd_e, then D (judges with a dense grid)
_HEADER = 20
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)
_FAMILIES: dict[str, type[Prior]] = {"scores": Normal, "alpha": HalfNormal, "beta": Normal, "tau": HalfNormal,
             "system_bias": HalfNormal, "effect": Normal}
_OPTIONS = {"position_bias", "tie_judges", "n_judges", "difficulty", "n_cov", "system_bias", "double"}


def _scalar(v: Any) -> float | None:
    a = np.asarray(v, dtype=float)
    return float(a.flat[0]) if a.size and np.all(a == a.flat[0]) else None


def accepts(priors: Priors, options: dict, arrays: dict | None = None) -> bool:
    """Whether the kernel states this fit: no per-prompt difficulty, the declared prior families
    (:class:`~bayes_judge.generative.leaderboard_models.JudgedBTPriors`) with scalar parameters."""
    if options.get("difficulty") or set(options) - _OPTIONS:
        return False
    for name, family in _FAMILIES.items():
        pr: Any = getattr(priors, name, None)
        if type(pr) is not family or any(_scalar(v) is None for v in pr.params().values()):
            return False
    return True


def _par(pr: Any, field: str) -> float:
    return float(np.asarray(getattr(pr, field), dtype=float).flat[0])


def pack_data(arrays: dict, priors: Priors, options: dict, n_systems: int) -> np.ndarray:
    """One contiguous float64 buffer for the callbacks.

    Parameters
    ----------
    arrays : dict
        :meth:`bayes_judge.leaderboard.encode.LeaderboardData.arrays`: ``C`` judgment cells,
        ``H`` human-label cells, ``K`` covariate columns.
    priors : JudgedBTPriors
        (:func:`accepts` must hold.)
    options : dict
        The declaration's options (``position_bias``, ``tie_judges``, ``n_judges``, ``n_cov``,
        ``system_bias``).
    n_systems : int
        ``N``, the length of the ``system`` coordinate.

    Returns
    -------
    ndarray of float64
        Header (``_HEADER``; ``buf[17]`` the number D of judges with a dense grid, ``buf[18]``
        1 where the cells run in single precision, :func:`_single`), then the
        listed judgment cells sorted by (human label, judge, a, b):
        ``a, b`` (C each), the counts ``n_A + s_A, n_B + s_B, n_T, s_A + s_B`` (4 rows of C),
        ``x`` (C × K), the segment starts (3E + 1: cells of label ``h`` and judge ``e`` are
        ``[seg[hE + e], seg[hE + e + 1])``), then ``hum_a, hum_b`` (H each), ``hum_n`` (H × 2),
        ``hum_x`` (H × K), the tie index of every judge (E; −1 for a judge that never ties) and
        the dense section of :func:`_sorted_cells` (its count grids as float32, two to a
        float64 of the buffer, where ``buf[18]`` is 1).
    """
    if not accepts(priors, options):
        raise ValueError(f"the 'bt-judges' fast path states no difficulty and the declared prior families "
                         f"with scalar parameters; got options {options} and\n{priors}")
    (N, E, C, H, K, T), parts = _cells(arrays, options, n_systems, with_h=True)
    single = _single(parts[4], C) and not options.get("double", False)  # the Laplace path differentiates twice
    parts, C, D = _sorted_cells(parts, N, E, C, H, K, single=single,
                                system_bias=bool(options.get("system_bias", True)))
    pr = priors
    header = np.zeros(_HEADER)
    header[:18] = [N, E, C, H, K, T, float(bool(options.get("position_bias", True))),
                   float(bool(options.get("system_bias", True))),
                   _par(pr.scores, "mu"), _par(pr.scores, "sigma"), _par(pr.alpha, "sigma"),  # type: ignore[attr-defined]
                   _par(pr.beta, "mu"), _par(pr.beta, "sigma"), _par(pr.tau, "sigma"),  # type: ignore[attr-defined]
                   _par(pr.system_bias, "sigma"), _par(pr.effect, "mu"), _par(pr.effect, "sigma"),  # type: ignore[attr-defined]
                   D]
    header[18] = float(single)
    return np.concatenate([header, *parts])


def _cells(arrays: dict, options: dict, n_systems: int, *, with_h: bool) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """The cell arrays of a leaderboard buffer, in its order: ``a, b, e, [h,] n (C × 5), x (C × K),
    hum_a, hum_b, hum_n (H × 2), hum_x (H × K)`` and each judge's tie index (−1: never ties),
    with ``(N, E, C, H, K, T)``."""
    E = int(options.get("n_judges", 1))
    ties = tuple(int(e) for e in options.get("tie_judges", ()))
    K = int(options.get("n_cov", 0))
    col = {k: np.asarray(arrays[k], dtype=np.float64) for k in ("sys_a", "sys_b", "judge", "h", "n", "hum_a",
                                                                 "hum_b", "hum_n")}
    C, H, N = len(col["sys_a"]), len(col["hum_a"]), int(n_systems)
    x = np.asarray(arrays["x"], dtype=np.float64)[:, :K] if K else np.zeros((C, 0))
    hx = np.asarray(arrays["hum_x"], dtype=np.float64)[:, :K] if K else np.zeros((H, 0))
    if max(col[k].max(initial=-1) for k in ("sys_a", "sys_b", "hum_a", "hum_b")) >= N:
        raise ValueError(f"system indices must lie in [0, {N}), the system coordinate")
    tie_idx = np.full(E, -1.0)
    tie_idx[list(ties)] = np.arange(len(ties))
    parts = [col["sys_a"], col["sys_b"], col["judge"]] + ([col["h"]] if with_h else [])
    parts += [col["n"].ravel(), x.ravel(), col["hum_a"], col["hum_b"], col["hum_n"].ravel(), hx.ravel(), tie_idx]
    return (N, E, C, H, K, len(ties)), parts


#: a judge's unlabelled cells are read from a dense N x N grid when they fill at least this share
#: of its N (N − 1) ordered pairs (and the model has no covariates): rows of the grid are
#: contiguous, so the cell pass needs no gather or scatter of system indices (about 2x fewer ns
#: a cell); listed cells cost a gather and a scatter each, the grid costs its empty places too.
#: In float64 the two cost about the same at 56% (``benchmarks/bench_leaderboard_kernel.py``,
#: 100,000 comparisons of 200 systems: 1.09 ms listed against 1.14 dense; at 39%, 0.77 against
#: 1.13; at 92%, 1.82 against 1.18); in float32 (:func:`_single`) at about 45% with 256-bit
#: vectors (0.67 against 0.75 at 39%, 0.95 against 0.76 at 56%) and about 37% with 512-bit ones
#: (:func:`_wide_vectors`: 0.63 against 0.60 at 39%, 0.36 against 0.58 at 22%).  At this share
#: the grid (4 floats a place) takes at most 6/5 of the listed cells' memory (6 floats a cell).
_DENSE_FILL = 0.55
#: the share for a table in single precision, as a factor of :data:`_DENSE_FILL` (37%): the
#: float32 grid's crossover with 512-bit vectors (its places take 4 float32 each, less than the
#: listed cells' memory down to 33% fill)
_SINGLE_FILL_FACTOR = 0.37 / 0.55
_DENSE_MAX_N = 2000  # 4 N^2 floats a judge: 128 MB at N = 2000


@numba.njit(inline="always")
def _row_length(N):
    """A grid row's length: ``N`` padded to a multiple of 16 (empty places), so that every block
    of a row is whole vector iterations (LLVM's vector loop takes 16 cells an iteration here; a
    remainder runs scalar)."""
    return (N + 15) // 16 * 16


def _dense_judges(a: np.ndarray, b: np.ndarray, e: np.ndarray, h: np.ndarray, N: int, E: int, K: int,
                  single: bool = False) -> np.ndarray:
    """The judges whose unlabelled cells go to a dense grid: distinct (A, B) places that fill
    :data:`_DENSE_FILL` of the ordered pairs (times :data:`_SINGLE_FILL_FACTOR` for a table in
    single precision); none with covariates (a cell's ``x`` is its own), fewer than 2 or more
    than :data:`_DENSE_MAX_N` systems."""
    if K or N > _DENSE_MAX_N or N < 2:
        return np.zeros(E, dtype=bool)
    u = h == 0
    places = np.unique((e[u].astype(np.int64) * N + a[u].astype(np.int64)) * N + b[u].astype(np.int64))
    per_judge = np.bincount(places // (N * N), minlength=E)
    fill = _DENSE_FILL * (_SINGLE_FILL_FACTOR if single else 1.0)
    return per_judge >= fill * N * (N - 1)


#: the judgment cells run in single precision (float32: twice the SIMD lanes, half the grid's
#: memory) from this many cells on (before the dense grid takes some): below it an evaluation
#: takes well under a millisecond either way, and float64 keeps small fits' log densities equal
#: to the declaration's to 1e-12 (:func:`_single`)
_SINGLE_MIN = 20_000


def _single(n: np.ndarray, C: int) -> bool:
    """Whether the ``C`` judgment cells of a table (counts ``n``, C × 5) run in single precision:
    at least :data:`_SINGLE_MIN` of them, and every count exact in float32 (whole counts below
    2^24; soft sums are not, so tables with soft rows stay in float64).

    In float32 a cell's terms carry a relative rounding of about 1e-7 and a block's sum about
    ``_BLOCK`` times that (``tests/inference/test_kernel_leaderboard.py`` bounds the difference from
    float64); NUTS reads the log density through differences of order one along a trajectory,
    far above that.  A block whose probabilities leave float32's normal range, or a judge whose
    exp tables could overflow it, runs again in float64 (:func:`_dense_cells`)."""
    counts = np.asarray(n, dtype=np.float64).reshape(C, 5)
    return C >= _SINGLE_MIN and bool(np.all(counts.astype(np.float32) == counts))


def _sorted_cells(parts: list[np.ndarray], N: int, E: int, C: int, H: int, K: int, *, single: bool = False,
                  system_bias: bool = True) -> tuple[list[np.ndarray], int, int]:
    """The kernel's cell layout from :func:`_cells`' parts: cells sorted by (h, e, a, b) and cut
    into segments of one label state and one judge (judge constants are scalars in a segment),
    the five counts folded into the four the likelihood reads.  The unlabelled cells of the
    :func:`_dense_judges` leave the list for a dense section after the other parts: the dense
    index of every judge (E; −1 for a sparse one), a flag per grid row (D × N: 0 empty, 1 hard
    counts only, 2 with soft rows) and the four count grids ``[judge, count, a, b]``
    (D × 4 × N × P, rows padded to P = :func:`_row_length`; cells of one place are summed, as the
    listed cells' terms add up).  Empty and padding places hold zero counts: the kernel still
    computes them, and masks their gradient terms.  With ``single`` the grids are stored as
    float32, two to a float64 slot.  Without ``system_bias`` the labelled cells of one judge and
    one label state are summed into one (:func:`_one_cell_a_label`).  Returns the parts, the
    number of listed cells and D."""
    a, b, e, h, n, x = parts[:6]
    n = n.reshape(C, 5)
    counts = np.stack([n[:, 0] + n[:, 3], n[:, 1] + n[:, 4], n[:, 2], n[:, 3] + n[:, 4]])
    dense = _dense_judges(a, b, e, h, N, E, K, single)
    into = dense[e.astype(np.int64)] & (h == 0)
    index = np.full(E, -1.0)
    index[dense] = np.arange(int(dense.sum()))
    D = int(dense.sum())
    P = _row_length(N)
    ai, bi, ki = a[into].astype(np.int64), b[into].astype(np.int64), index[e[into].astype(np.int64)].astype(np.int64)
    grid = np.zeros((D, 4, N * P))
    for j in range(4):  # summed: one (h, e, a, b) may come as several cells (a prompt's, a covariate's)
        grid[:, j] = np.bincount(ki * (N * P) + ai * P + bi, weights=counts[j, into],
                                 minlength=D * N * P).reshape(D, N * P)
    row_total = grid[:, :3].sum(axis=1).reshape(D, N, P).sum(axis=2)
    row_soft = grid[:, 3].reshape(D, N, P).any(axis=2)
    row_flag = np.where(row_soft, 2.0, np.where(row_total > 0, 1.0, 0.0))
    keep = ~into
    a, b, e, h, counts, x = a[keep], b[keep], e[keep], h[keep], counts[:, keep], x.reshape(C, K)[keep]
    if not system_bias:
        a, b, e, h, counts, x = _one_cell_a_label(a, b, e, h, counts, x, E, single)
    C = len(a)
    o = np.lexsort((b, a, e, h))
    key = h[o].astype(np.int64) * E + e[o].astype(np.int64)
    seg = np.searchsorted(key, np.arange(3 * E + 1)).astype(np.float64)
    cells = grid.ravel().astype(np.float32).view(np.float64) if single else grid.ravel()  # P is even
    out = [a[o], b[o], counts[:, o].ravel(), x[o].ravel(), seg, *parts[6:], index, row_flag.ravel(), cells]
    return out, C, D


def _one_cell_a_label(a: np.ndarray, b: np.ndarray, e: np.ndarray, h: np.ndarray, counts: np.ndarray, x: np.ndarray,
                      E: int, single: bool) -> tuple[np.ndarray, ...]:
    """The listed cells with those a person labelled summed into one cell per (label, judge).

    With the label known, ``w`` is 1 or 0, so a labelled cell's probabilities are
    ``P_A = a₁`` or ``a₀`` (module docstring): functions of its judge's ``α, β, τ`` and
    ``δ_{e,a} − δ_{e,b}`` alone.  Without the judges' own system preferences (δ = 0) every
    labelled cell of a judge and a label has the same probabilities, and the likelihood is linear
    in the counts, so one cell holding their sums gives the same log density and gradient (its
    systems, ``0, 0``, and covariates, zeros, are never read for a labelled cell).  At a million
    verdicts with 10% labelled, 78,000 listed cells become six.  Kept listed where a sum would
    not be exact in the cells' float32 (2^24 verdicts of one judge and one label)."""
    lab = h != 0
    if not lab.any():
        return a, b, e, h, counts, x
    key = (h[lab].astype(np.int64) - 1) * E + e[lab].astype(np.int64)
    sums = np.stack([np.bincount(key, weights=counts[j, lab], minlength=2 * E) for j in range(4)])
    if single and not np.all(sums.astype(np.float32) == sums):
        return a, b, e, h, counts, x
    held = np.flatnonzero(np.bincount(key, minlength=2 * E))
    new = len(held)
    zeros = np.zeros(new)
    return (np.concatenate([a[~lab], zeros]), np.concatenate([b[~lab], zeros]),
            np.concatenate([e[~lab], (held % E).astype(np.float64)]),
            np.concatenate([h[~lab], (held // E + 1).astype(np.float64)]),
            np.concatenate([counts[:, ~lab], sums[:, held]], axis=1),
            np.concatenate([x[~lab], np.zeros((new, x.shape[1]))]))


@numba.njit(inline="always")
def _sig_pair(u):
    """σ(u) and σ(−u) from one exp, both to full relative precision."""
    t = math.exp(-abs(u))
    inv = 1.0 / (1.0 + t)
    if u >= 0.0:
        return inv, t * inv
    return t * inv, inv


@numba.njit(inline="always")
def _half_normal_logp(u, tau):
    """HalfNormal(tau) on v = exp(u), with the log-Jacobian: (log density, d/du)."""
    v = math.exp(u)
    z = v / tau
    return _LOG2 - math.log(tau) - _HALF_LOG_2PI - 0.5 * z * z + u, 1.0 - z * z


@numba.njit(inline="always")
def _scores_and_effects(x, grad, N, K, mu_s, sd_s, mu_e, sd_e):
    """Priors of ``s_raw`` (Normal(mu_s, sd_s)) and of the covariate effects (Normal(mu_e, sd_e),
    at ``x[N:N + K]``); zeroes ``grad`` and fills those entries.  Returns (log density, centred s)."""
    for i in range(x.shape[0]):
        grad[i] = 0.0
    total = 0.0
    mean = 0.0
    for i in range(N):
        mean += x[i]
        zs = (x[i] - mu_s) / sd_s
        total -= 0.5 * zs * zs
        grad[i] = -zs / sd_s
    total -= N * (math.log(sd_s) + _HALF_LOG_2PI)
    mean /= N
    s = np.empty(N)
    for i in range(N):
        s[i] = x[i] - mean
    for k in range(K):
        ze = (x[N + k] - mu_e) / sd_e
        total -= 0.5 * ze * ze + math.log(sd_e) + _HALF_LOG_2PI
        grad[N + k] = -ze / sd_e
    return total, s


@numba.njit(inline="always")
def _close_scores(grad, g_s, g_eff, N, K):
    """Chain rule of the centring ``s = s_raw − mean(s_raw)`` and the effects' likelihood terms."""
    gm = 0.0
    for i in range(N):
        gm += g_s[i]
    gm /= N
    for i in range(N):
        grad[i] += g_s[i] - gm
    for k in range(K):
        grad[N + k] += g_eff[k]


# -- a vectorizable log: the cell pass runs in blocks whose elementwise loops LLVM turns into
# SIMD code; libm's log is a call per value and keeps a loop scalar, so the logs there split the
# float's bits (exponent, mantissa m in [√½, √2)) and sum 2 atanh((m − 1)/(m + 1)) as a series,
# several logs sharing one division.  Relative error within 1e-15 of libm's (tests/leaderboard).

#: the integer type of a float's width, for the bit casts
_SAME_WIDTH = {types.float64: types.int64, types.float32: types.int32}


@intrinsic
def _f2i(typingctx, x):
    """The bits of a float as the integer of its width (a bit cast): float64 -> int64, float32 ->
    int32 (``benchmarks/bench_leaderboard_precision.py`` restates the log in float32)."""
    if x not in _SAME_WIDTH:
        return None
    out = _SAME_WIDTH[x]

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(out.bitwidth))
    return out(x), codegen


@intrinsic
def _i2f(typingctx, x):
    """The float whose bits are an integer of its width (a bit cast; :func:`_f2i` reversed): the
    integer's type picks the float's, and numba widens int32 arithmetic to int64, so a float32's
    bits computed from an int32 must be cast back to ``np.int32`` first."""
    back = {i: f for f, i in _SAME_WIDTH.items()}
    if x not in back:
        return None
    out = back[x]

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType() if out.bitwidth == 64 else ir.FloatType())
    return out(x), codegen


@intrinsic
def _wide_vectors(typingctx):
    """Mark the calling function ``"prefer-vector-width"="512"`` (clang's ``-mprefer-vector-width``):
    LLVM vectorizes its loops with 512-bit registers on a CPU with AVX-512, where its default for
    such CPUs keeps to 256 bits.  Elsewhere the attribute does nothing."""
    def codegen(context, builder, sig, args):
        set.add(builder.function.attributes, '"prefer-vector-width"="512"')  # a string attribute
        return context.get_dummy_value()
    return types.none(), codegen


#: a float type's numpy scalar type: the constants of a generic cell function take the type of
#: its arguments (a float64 literal would widen float32 arithmetic to float64)
_NP = {types.float64: np.float64, types.float32: np.float32}


def _c(x, value):
    """``value`` as a constant of the float type of ``x`` (in numba code)."""
    return value


@overload(_c, inline="always")
def _ol_c(x, value):
    if x in _NP:
        cast = _NP[x]
        return lambda x, value: cast(value)
    return None


def _tiny(x):
    """The smallest normal float of the type of ``x``: a probability below it is lost."""
    return np.finfo(np.float64).tiny


@overload(_tiny, inline="always")
def _ol_tiny(x):
    if x in _NP:
        tiny = np.finfo(_NP[x]).tiny
        return lambda x: tiny
    return None


def _split(p):
    """``p = 2^e m`` with ``m`` in [√½, √2), for a normal positive ``p``: ``(e, m)`` (numba code)."""
    return p


@overload(_split, inline="always")
def _ol_split(p):
    if p == types.float64:
        mant_bits, sqrt2, bias, width, i = 0x000FFFFFFFFFFFFF, 0x6A09E667F3BCD, 1023, 52, np.int64
    elif p == types.float32:
        mant_bits, sqrt2, bias, width, i = 0x007FFFFF, 0x3504F3, 127, 23, np.int32
    else:
        return None
    f = _NP[p]
    MANT, SQRT2, BIAS, WIDTH = i(mant_bits), i(sqrt2), i(bias), i(width)  # mantissa bits of √2: SQRT2

    def impl(p):
        bits = _f2i(p)
        mant = bits & MANT
        up = i(mant > SQRT2)
        # numba widens int32 arithmetic to int64: cast back before the bit cast (_i2f)
        return f((bits >> WIDTH) - BIAS + up), _i2f(i(mant | ((BIAS - up) << WIDTH)))
    return impl


def _atanh2(z):
    """``2 atanh(z)`` for ``|z| ≤ 3 − 2√2`` (numba code): the odd series to z^23 in float64
    (remainder below 1e-17), to z^9 in float32 (below its ulp)."""
    return z


@overload(_atanh2, inline="always")
def _ol_atanh2(z):
    if z == types.float64:
        def impl64(z):
            t = z * z
            return 2.0 * z * (((((((((((1.0 / 23 * t + 1.0 / 21) * t + 1.0 / 19) * t + 1.0 / 17) * t
                                      + 1.0 / 15) * t + 1.0 / 13) * t + 1.0 / 11) * t + 1.0 / 9) * t
                                  + 1.0 / 7) * t + 1.0 / 5) * t + 1.0 / 3) * t + 1.0)
        return impl64
    if z == types.float32:
        F = np.float32
        c9, c7, c5, c3, one, two = F(1 / 9), F(1 / 7), F(1 / 5), F(1 / 3), F(1), F(2)

        def impl32(z):
            t = z * z
            return two * z * ((((c9 * t + c7) * t + c5) * t + c3) * t + one)
        return impl32
    return None


@numba.njit(inline="always", fastmath={"contract"})
def _log_inv(p):
    """``(log p, 1 / p)`` for a normal positive ``p``, with one division (the log's); float64 or
    float32, as ``p``."""
    one = _c(p, 1.0)
    e, m = _split(p)
    dm = m + one
    r = one / (p * dm)
    return e * _c(p, _LOG2) + _atanh2((m - one) * p * r), r * dm


@numba.njit(inline="always", fastmath={"contract"})
def _log2(p, q):
    """``(log p, log q)`` with one division."""
    one = _c(p, 1.0)
    ep, mp = _split(p)
    eq, mq = _split(q)
    dp = mp + one
    dq = mq + one
    r = one / (dp * dq)
    ln2 = _c(p, _LOG2)
    return ep * ln2 + _atanh2((mp - one) * dq * r), eq * ln2 + _atanh2((mq - one) * dp * r)


@numba.njit(inline="always", fastmath={"contract"})
def _log3(p, q, u):
    """``(log p, log q, log u)`` with one division."""
    one = _c(p, 1.0)
    ep, mp = _split(p)
    eq, mq = _split(q)
    eu, mu = _split(u)
    dp = mp + one
    dq = mq + one
    du = mu + one
    dpq = dp * dq
    r = one / (dpq * du)
    rpq = r * du
    ln2 = _c(p, _LOG2)
    return (ep * ln2 + _atanh2((mp - one) * dq * rpq), eq * ln2 + _atanh2((mq - one) * dp * rpq),
            eu * ln2 + _atanh2((mu - one) * dpq * r))


# -- the judgment cells, in blocks of _BLOCK cells of one judge and one label state: a scalar
# gather (tables to contiguous columns of W), a branch-free elementwise pass (SIMD: probabilities,
# log-likelihood, gradients; reciprocals batched into one division: _tie_pass, _notie_pass, which
# also run over the dense grid's rows), a scalar scatter of the per-cell gradients onto systems.
_BLOCK = 128
#: unsigned offsets of the block's columns, ``j · _BLOCK``.  The passes index with unsigned
#: integers: with a signed index numba adds a negative-index fix-up, and LLVM's runtime alias
#: check then also tests the range one array length past each array, which an adjacent
#: allocation can fall in; the loop then runs scalar, slower and with its sums in another order
#: (the same seed gave log densities one ulp apart, so different draws, depending on where
#: malloc put the scratch arrays: on a nutpie thread, not on the main thread)
_UB = tuple(np.uint64(j * _BLOCK) for j in range(8))
_FM = {"contract", "reassoc"}


@numba.njit(inline="always", fastmath=_FM)
def _judge_probs(r, eap, iea, v):
    """``a± = σ(η± − t)``, ``b± = σ(−η± − t)`` and their derivatives in η, from ``r = u/e^{±α}``
    (one division for the four reciprocals)."""
    one = _c(v, 1.0)
    up = eap * r
    um = iea * r
    x1 = up + v
    x2 = um + v
    x3 = one + v * up
    x4 = one + v * um
    p12 = x1 * x2
    p34 = x3 * x4
    q = one / (p12 * p34)
    q12 = q * p34
    q34 = q * p12
    i1 = q12 * x2
    i0 = q12 * x1
    b1 = q34 * x4
    b0 = q34 * x3
    a1 = up * i1
    a0 = um * i0
    return a1, a0, b1, b0, a1 * v * i1, a0 * v * i0, b1 * v * up * b1, b0 * v * um * b0


@numba.njit(inline="always", fastmath=_FM)
def _chain(w, w1, gA, gB, a1, a0, b1, b0, da1, da0, db1, db0):
    """From ``g_A = ∂l/∂P_A`` and ``g_B = ∂l/∂P_B`` of a cell (module docstring): ``∂l/∂α``,
    ``∂l/∂β = ∂l/∂(δ_a − δ_b)``, ``∂l/∂t`` and ``∂l/∂d``."""
    ge_p = w * (gA * da1 - gB * db1)
    ge_m = w1 * (gA * da0 - gB * db0)
    g_t = -(gA * (w * da1 + w1 * da0) + gB * (w * db1 + w1 * db0))
    return ge_p - ge_m, ge_p + ge_m, g_t, w * w1 * (gA * (a1 - a0) + gB * (b1 - b0))


@numba.njit(inline="always", fastmath=_FM)
def _chain_tie(w, w1, gA, gB, gC, a1, a0, b1, b0, c1, c0, da1, da0, db1, db0):
    """:func:`_chain` for a judge that ties, from ``g_A = ∂l/∂P_A``, ``g_B = ∂l/∂P_B`` and
    ``g_C = ∂l/∂P_T`` taken as three separate probabilities, ``c = 1 − a − b = (v² − 1) a b`` per
    position: ``∂c/∂η = c (b − a)``, ``∂c/∂t = a(1 − a) + b(1 − b)``.  Written through
    ``P_T = 1 − P_A − P_B`` instead, ``g_A − g_T`` and ``g_B − g_T`` would subtract terms of
    order ``n_T / P_T``, which cancel as t → 0 (a relative error of ε / P_T, 1e-3 in float32
    at P_T = 1e-4); here no term larger than the result is subtracted."""
    ge_p = w * (gA * da1 - gB * db1 + gC * c1 * (b1 - a1))
    ge_m = w1 * (gA * da0 - gB * db0 + gC * c0 * (b0 - a0))
    g_t = (w * ((gC - gA) * da1 + (gC - gB) * db1) + w1 * ((gC - gA) * da0 + (gC - gB) * db0))
    gd = w * w1 * (gA * (a1 - a0) + gB * (b1 - b0) + gC * (c1 - c0))
    return ge_p - ge_m, ge_p + ge_m, g_t, gd


@numba.njit(inline="always", fastmath=_FM)
def _soft_cell(r, wk, wk1, ss, eap, iea, v):
    """A cell's soft normalizer ``−(s_A + s_B) log S``, ``S = P_A + P_B``: (term, ``(s_A + s_B) / S``,
    1 for an S below the smallest normal float)."""
    zero, one = _c(v, 0.0), _c(v, 1.0)
    a1, a0, b1, b0, _, _, _, _ = _judge_probs(r, eap, iea, v)
    S = wk * (a1 + b1) + wk1 * (a0 + b0)
    yS = S if ss != zero else one
    lS, iS = _log_inv(yS)
    return -ss * lS, ss * iS, zero if yS >= _tiny(v) else one


@numba.njit(inline="always", fastmath=_FM)
def _tie_cell(r, wk, wk1, ca, cb, nt, sn, eap, iea, v, vm):
    """A cell of a judge that ties (module docstring; ``sn`` the soft normalizer's ``∂/∂P_A``,
    ``vm = v² − 1 = expm1(2t)``): (log-likelihood, ∂/∂α, ∂/∂(δ_a − δ_b), ∂/∂t, ∂/∂d, 1 where the
    product of its probabilities is below the smallest normal float, else 0).  Every value in
    the float type of its arguments (float64 or float32).

    ``P_T`` is not ``1 − P_A − P_B``, which keeps only the float's absolute precision (in float32
    a tie probability of 1e-4 would carry a relative error near 1e-3): per position
    ``1 − σ(η − t) − σ(−η − t) = u (v² − 1) / ((u + v)(1 + v u)) = (v² − 1) a b``, so
    ``P_T = (v² − 1)(w a₁ b₁ + (1 − w) a₀ b₀)``, to full relative precision; the gradient
    likewise (:func:`_chain_tie`)."""
    zero, one, tiny = _c(v, 0.0), _c(v, 1.0), _tiny(v)
    a1, a0, b1, b0, da1, da0, db1, db0 = _judge_probs(r, eap, iea, v)
    pA = wk * a1 + wk1 * a0
    pB = wk * b1 + wk1 * b0
    c1 = vm * a1 * b1
    c0 = vm * a0 * b0
    pT = wk * c1 + wk1 * c0
    yA = pA if ca != zero else one  # an outcome never seen scores 0 whatever its probability
    yB = pB if cb != zero else one
    yT = pT if nt != zero else one
    yAB = yA * yB
    yABT = yAB * yT
    # each is at most 1: a product below the smallest normal float means one of them is lost, or
    # that 1 / product, below, would be inexact (a subnormal) or infinite
    bad = zero if yABT >= tiny else one
    z = one / yABT
    zAB = z * yT
    gC = nt * (z * yAB)
    gA = ca * (zAB * yB) - sn
    gB = cb * (zAB * yA) - sn
    lA, lB, lT = _log3(yA, yB, yT)
    ga, g, gt, gd = _chain_tie(wk, wk1, gA, gB, gC, a1, a0, b1, b0, c1, c0, da1, da0, db1, db0)
    return ca * lA + cb * lB + nt * lT, ga, g, gt, gd, bad


@numba.njit(inline="always", fastmath=_FM)
def _notie_cell(r, wk, wk1, ca, cb, eap, iea, v):
    """As :func:`_tie_cell` for a judge that never ties (t = 0, ``b = 1 − a``, no tie count)."""
    zero, one, tiny = _c(v, 0.0), _c(v, 1.0), _tiny(v)
    a1, a0, b1, b0, da1, da0, db1, db0 = _judge_probs(r, eap, iea, v)  # v = 1: b = 1 − a
    pA = wk * a1 + wk1 * a0
    pB = wk * b1 + wk1 * b0
    yA = pA if ca != zero else one
    yB = pB if cb != zero else one
    yAB = yA * yB
    bad = zero if yAB >= tiny else one  # as in _tie_cell
    z = one / yAB
    gA = ca * (z * yB)
    gB = cb * (z * yA)
    lA, lB = _log2(yA, yB)
    ga, g, _, gd = _chain(wk, wk1, gA, gB, a1, a0, b1, b0, da1, da0, db1, db0)
    return ca * lA + cb * lB, ga, g, gd, bad


@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _tie_pass(qb, r0, wr, wr1, nA, nB, nT, nS, G, nk, eap, iea, v, vm, soft):
    """The elementwise pass over ``nk`` cells of a judge that ties, each given by column arrays
    that start at the block's first cell (a listed block's gathered columns, or a stretch of a
    dense grid row read in place; indexed from 0, so no negative-index fix-up per access keeps
    the loop off SIMD code): ``r = r0 qb[k]``, ``w = wr[k]``, ``1 − w = wr1[k]``, the counts
    ``n_A + s_A, n_B + s_B, n_T, s_A + s_B`` (and the judge's ``e^{±α}``, ``v = e^t``, ``v² − 1``).  Returns (log-likelihood, ∂/∂α, ∂/∂β, ∂/∂t, count
    of lost probabilities); ``G[k]`` gets ∂l/∂(δ_a − δ_b) and ``G[B + k]`` ∂l/∂d of cell ``k``.
    With ``soft`` rows their normalizer's terms come first, from a loop of their own (the main
    loop then has no branch to keep it off SIMD code); its ``∂/∂P_A = ∂/∂P_B`` is kept in
    ``G[2B + k]``.  The arithmetic and the block's sums are in the float type of the arguments
    (:func:`_single`: float32 at arena scale, twice the SIMD lanes)."""
    _wide_vectors()
    zero = _c(v, 0.0)
    total = zero
    bad = zero
    if soft:
        for k in range(np.uint64(nk)):
            t, G[_UB[2] + k], bd = _soft_cell(r0 * qb[k], wr[k], wr1[k], nS[k], eap, iea, v)
            total += t
            bad += bd
    else:
        for k in range(np.uint64(nk)):
            G[_UB[2] + k] = zero
    g_al = zero
    g_sh = zero
    g_t = zero
    for k in range(np.uint64(nk)):
        lk, ga, g, gt, gd, bd = _tie_cell(r0 * qb[k], wr[k], wr1[k], nA[k], nB[k], nT[k], G[_UB[2] + k], eap, iea, v,
                                          vm)
        # an empty place of a grid adds nothing, also where its σ overflow (0 · nan): masked
        seen = nA[k] + nB[k] + nT[k] != zero
        total += lk
        bad += bd
        g_al += ga if seen else zero
        g_sh += g if seen else zero
        g_t += gt if seen else zero
        G[k] = g if seen else zero
        G[_UB[1] + k] = gd if seen else zero
    return total, g_al, g_sh, g_t, bad


@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _notie_pass(qb, r0, wr, wr1, nA, nB, G, nk, eap, iea, v):
    """As :func:`_tie_pass` for a judge that never ties (t = 0, ``b = 1 − a``, no tie count)."""
    _wide_vectors()
    zero = _c(v, 0.0)
    total = zero
    bad = zero
    g_al = zero
    g_sh = zero
    for k in range(np.uint64(nk)):
        lk, ga, g, gd, bd = _notie_cell(r0 * qb[k], wr[k], wr1[k], nA[k], nB[k], eap, iea, v)
        seen = nA[k] + nB[k] != zero  # as in _tie_pass
        total += lk
        bad += bd
        g_al += ga if seen else zero
        g_sh += g if seen else zero
        G[k] = g if seen else zero
        G[_UB[1] + k] = gd if seen else zero
    return total, g_al, g_sh, zero, bad


@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _block_human(W, G, nk):
    """``nk`` human-label cells (columns of ``W``: ``e_a, e_b`` with ``σ(d) = e_a / (e_a + e_b)``,
    their logs ``l_a, l_b``, the counts ``m_A, m_B``): ``Σ m_A log σ(d) + m_B log σ(−d)``; ``G``
    gets ``∂/∂d``.  One log and two divisions a cell, vectorizable."""
    _wide_vectors()
    total = 0.0
    for k in range(np.uint64(nk)):
        ea = W[k]
        eb = W[_UB[1] + k]
        m1 = W[_UB[4] + k]
        m0 = W[_UB[5] + k]
        lz, iz = _log_inv(ea + eb)
        total += m1 * (W[_UB[2] + k] - lz) + m0 * (W[_UB[3] + k] - lz)
        G[k] = (m1 * eb - m0 * ea) * iz
    return total


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _human_cells(beff, buf, oh, H, K, s, es, smax, direct, g_s, g_eff):
    """The human-label cells (``hum_a, hum_b, hum_n, hum_x`` from ``buf[oh:]``): ``log σ(±d)``
    weighted by their counts, in blocks (:func:`_block_human`); ``σ(d) = e^{s_a} / (e^{s_a} +
    e^{s_b})`` from the table ``es = e^{s − max s}``, or from ``d`` itself where ``direct``
    (covariates, or scores too far apart for the table).  Adds to ``g_s`` and ``g_eff``."""
    B = _BLOCK
    hna = oh + 2 * H
    hxo = hna + 2 * H
    W = np.empty(6 * B)
    G = np.empty(B)
    IA = np.empty(B, dtype=np.int64)
    IB = np.empty(B, dtype=np.int64)
    total = 0.0
    for c0 in range(0, H, B):
        nk = min(B, H - c0)
        for k in range(nk):  # gather
            c = c0 + k
            a = int(buf[oh + c])
            b = int(buf[oh + H + c])
            IA[k] = a
            IB[k] = b
            if direct:  # σ(d) = e_a / (e_a + e_b) with the larger of e_a, e_b equal to 1
                d = s[a] - s[b]
                for j in range(K):
                    d += buf[hxo + c * K + j] * beff[j]
                t = math.exp(-abs(d))
                W[k] = 1.0 if d >= 0.0 else t
                W[B + k] = t if d >= 0.0 else 1.0
                W[2 * B + k] = 0.0 if d >= 0.0 else d
                W[3 * B + k] = -d if d >= 0.0 else 0.0
            else:
                W[k] = es[a]
                W[B + k] = es[b]
                W[2 * B + k] = s[a] - smax
                W[3 * B + k] = s[b] - smax
            W[4 * B + k] = buf[hna + 2 * c]
            W[5 * B + k] = buf[hna + 2 * c + 1]
        total += _block_human(W, G, nk)
        for k in range(nk):  # scatter
            c = c0 + k
            g_s[IA[k]] += G[k]
            g_s[IB[k]] -= G[k]
            for j in range(K):
                g_eff[j] += G[k] * buf[hxo + c * K + j]
    return total


#: a judge's cells run in float32 while ``|log u±| + t``, over its exp tables, stays below this:
#: a cell's largest product, ``(u + v)(u' + v)(1 + v u)(1 + v u')``, is then below e^{4 · 20 + 3},
#: inside float32's range (e^{88.7}); beyond it (far from any posterior) float64 takes the judge
_SINGLE_LOG_RANGE = 20.0


@numba.njit(inline="always")
def _single_safe(e, ea, ev, qa, qb):
    """Whether judge ``e``'s cells stay inside float32's range (:data:`_SINGLE_LOG_RANGE`)."""
    hi = max(qa[e].max() * ea[e], 1.0 / (qa[e].min() / ea[e]))
    hi_b = max(qb[e].max(), 1.0 / qb[e].min())
    return math.log(hi) + math.log(hi_b) + math.log(ev[e]) < _SINGLE_LOG_RANGE



@numba.njit(cache=True, nogil=True)
def _cell_scatter(G, IA, IB, nk, e, h, c0, K, buf, cx, g_d, g_s, g_eff):
    """A listed block's per-cell gradients (float64 or float32) onto its systems: ``∂/∂(δ_a −
    δ_b)`` to ``g_d[e]``, and for unlabelled cells ``∂/∂d`` to ``g_s`` and the effects."""
    B = _BLOCK
    for k in range(nk):
        c = c0 + k
        a = IA[k]
        b = IB[k]
        g_d[e, a] += G[k]
        g_d[e, b] -= G[k]
        if h == 0:
            g_s[a] += G[B + k]
            g_s[b] -= G[B + k]
            for j in range(K):
                g_eff[j] += G[B + k] * buf[cx + c * K + j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _judgment_cells(beff, buf, ca, cb, cn, cx, sg, C, E, K, cells, safe, tied, ea, ev, evm, qa, qb, es, s, direct,
                    g_s, g_d, g_alpha, g_shift, g_tau, g_eff):
    """Log-likelihood of the judgment cells (module docstring); adds to the gradients.  A
    probability below the smallest normal float gives nan (a divergence for nutpie).

    The passes run in the float type of the (empty) array ``cells``.  In float32 (:func:`_single`)
    a block is gathered in float64 and converted; a block with soft rows, one that loses a
    probability in float32, and every block of a judge not ``safe`` (:func:`_single_safe`) run in
    float64."""
    B = _BLOCK
    W = np.empty(7 * B)
    Wg = np.empty(7 * B, cells.dtype)
    G = np.empty(3 * B)
    Gg = np.empty(3 * B, cells.dtype)
    IA = np.empty(B, dtype=np.int64)  # the block's systems, read once for gather and scatter
    IB = np.empty(B, dtype=np.int64)
    total = 0.0
    bad = 0.0
    for h in range(3):
        for e in range(E):
            lo = int(buf[sg + h * E + e])
            hi = int(buf[sg + h * E + e + 1])
            eap = ea[e]
            iea = 1.0 / eap
            v = ev[e]
            vm = evm[e]
            f32 = safe[e]
            one = _c(Wg[0], 1.0)  # a value of the cells' type, for the casts
            eapg, ieag, vg, vmg = _c(one, eap), _c(one, iea), _c(one, v), _c(one, vm)
            for c0 in range(lo, hi, B):
                nk = min(B, hi - c0)
                soft = bool(0)  # a bool: with the literal False numba compiles _tie_pass twice
                for k in range(nk):  # gather
                    c = c0 + k
                    a = int(buf[ca + c])
                    b = int(buf[cb + c])
                    IA[k] = a
                    IB[k] = b
                    W[k] = qa[e, a] * qb[e, b]
                    if h == 0:
                        if direct:
                            d = s[a] - s[b]
                            for j in range(K):
                                d += buf[cx + c * K + j] * beff[j]
                            W[B + k], W[2 * B + k] = _sig_pair(d)
                        else:
                            z = 1.0 / (es[a] + es[b])
                            W[B + k] = es[a] * z
                            W[2 * B + k] = es[b] * z
                    else:
                        W[B + k] = 1.0 if h == 1 else 0.0
                        W[2 * B + k] = 0.0 if h == 1 else 1.0
                    for j in range(4):
                        W[(3 + j) * B + k] = buf[cn + j * C + c]
                    soft = soft or buf[cn + 3 * C + c] != 0.0
                ok = False
                if f32 and not soft:
                    for j in range(6):
                        for k in range(nk):
                            Wg[j * B + k] = _c(one, W[j * B + k])
                    if tied[e]:
                        t, gal, gsh, gt, bd = _tie_pass(Wg, one, Wg[B:], Wg[2 * B:], Wg[3 * B:], Wg[4 * B:],
                                                        Wg[5 * B:], Wg[6 * B:], Gg, nk, eapg, ieag, vg, vmg, soft)
                    else:
                        t, gal, gsh, gt, bd = _notie_pass(Wg, one, Wg[B:], Wg[2 * B:], Wg[3 * B:], Wg[4 * B:], Gg, nk,
                                                          eapg, ieag, vg)
                    ok = bd == 0.0 and math.isfinite(t + gal + gsh + gt)
                    if ok:
                        _cell_scatter(Gg, IA, IB, nk, e, h, c0, K, buf, cx, g_d, g_s, g_eff)
                if not ok:
                    if tied[e]:
                        t, gal, gsh, gt, bd = _tie_pass(W, 1.0, W[B:], W[2 * B:], W[3 * B:], W[4 * B:], W[5 * B:],
                                                        W[6 * B:], G, nk, eap, iea, v, vm, soft)
                    else:
                        t, gal, gsh, gt, bd = _notie_pass(W, 1.0, W[B:], W[2 * B:], W[3 * B:], W[4 * B:], G, nk,
                                                          eap, iea, v)
                    _cell_scatter(G, IA, IB, nk, e, h, c0, K, buf, cx, g_d, g_s, g_eff)
                total += t
                bad += bd
                g_alpha[e] += gal
                g_shift[e] += gsh
                g_tau[e] += gt
    if bad != 0.0:
        return math.nan
    return total


@numba.njit(cache=True, nogil=True, fastmath=_FM)
def _row_scatter(G, gde, gse, n):
    """A grid block's per-cell gradients (float64 or float32) onto contiguous runs of systems:
    ``∂/∂(δ_a − δ_b)`` to ``gde``, ``∂/∂d`` to ``gse``; returns the ∂/∂d sum, the row's own."""
    _wide_vectors()
    acc = 0.0
    for j in range(np.uint64(n)):  # unsigned: _UB
        gde[j] -= G[j]
        gse[j] -= G[_UB[1] + j]
        acc += G[_UB[1] + j]
    return acc


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _dense_cells(buf, grid, safe, do, N, E, D, tied, ea, ev, evm, qa, qb, es, s, direct, g_s, g_d, g_alpha,
                 g_shift, g_tau):
    """As :func:`_judgment_cells` for the unlabelled cells of the dense judges (the section at
    ``do``, :func:`_sorted_cells`; ``grid`` its count grids): grid row ``a`` of judge ``e`` is
    read in blocks of contiguous ``b``, the row's ``σ(s_a − s_b)`` is made once for all judges,
    and the per-cell gradients go to contiguous runs of ``g_d[e]`` and ``g_s`` (the row's own
    sums to ``a``).

    The passes run in the float type of ``grid``.  In float32 (:func:`_single`) a block that
    loses a probability (:func:`_tie_cell`; or a sum not finite), and every block of a judge not
    ``safe`` (:func:`_single_safe`), runs again in float64 on the same counts (exact in both);
    in float64 that rerun gives the same lost probability, and the evaluation is nan."""
    B = _BLOCK
    P = _row_length(N)
    single = grid.itemsize == 4
    G = np.empty(3 * B)
    Gg = np.empty(3 * B, grid.dtype)
    C64 = np.empty(4 * B)  # a block's counts in float64, for its float64 run
    wr = np.full(P, 0.5)  # the padding's values: finite, and its counts are 0
    wr1 = np.full(P, 0.5)
    wrg = np.full(P, 0.5, grid.dtype)
    wr1g = np.full(P, 0.5, grid.dtype)
    qbp = np.ones((E, P))
    qbpg = np.ones((E, P), grid.dtype)
    for e in range(E):  # element by element: a slice assignment compiles numba's shape-error
        for k in range(N):  # message formatting, 5 s of a cold compile
            qbp[e, k] = qb[e, k]
            qbpg[e, k] = _c(qbpg[e, k], qb[e, k])
    NN = N * P
    fo = do + E
    total = 0.0
    bad = 0.0
    for a in range(N):
        used = False
        for e in range(E):
            k = int(buf[do + e])
            used = used or (k >= 0 and buf[fo + k * N + a] != 0.0)
        if not used:
            continue
        if direct:
            for b in range(N):
                wr[b], wr1[b] = _sig_pair(s[a] - s[b])
        else:
            esa = es[a]
            for b in range(N):
                z = 1.0 / (esa + es[b])
                wr[b] = esa * z
                wr1[b] = es[b] * z
        for b in range(N):
            wrg[b] = _c(wrg[b], wr[b])
            wr1g[b] = _c(wr1g[b], wr1[b])
        for e in range(E):
            k = int(buf[do + e])
            if k < 0:
                continue
            flag = buf[fo + k * N + a]
            if flag == 0.0:
                continue
            soft = flag == 2.0
            eap = ea[e]
            iea = 1.0 / eap
            v = ev[e]
            vm = evm[e]
            r0 = qa[e, a]
            g_row = 0.0
            gs_row = 0.0
            qbe = qbp[e]
            qbeg = qbpg[e]
            for b0 in range(0, P, B):
                nk = min(B, P - b0)
                n_run = min(nk, N - b0)
                gde = g_d[e, b0:]
                gse = g_s[b0:]
                o = k * 4 * NN + a * P + b0
                ok = False
                if not single or safe[e]:
                    one = qbeg[0]  # a value of the grid's type, for the casts
                    if tied[e]:
                        t, gal, gsh, gt, bd = _tie_pass(qbeg[b0:], _c(one, r0), wrg[b0:], wr1g[b0:], grid[o:],
                                                       grid[o + NN:], grid[o + 2 * NN:], grid[o + 3 * NN:], Gg, nk,
                                                       _c(one, eap), _c(one, iea), _c(one, v), _c(one, vm), soft)
                    else:
                        t, gal, gsh, gt, bd = _notie_pass(qbeg[b0:], _c(one, r0), wrg[b0:], wr1g[b0:], grid[o:],
                                                         grid[o + NN:], Gg, nk, _c(one, eap), _c(one, iea),
                                                         _c(one, v))
                    ok = bd == 0.0 and math.isfinite(t + gal + gsh + gt)
                    if ok:
                        gs = _row_scatter(Gg, gde, gse, n_run)
                if not ok:
                    for j in range(4):  # float64, on the same (exact) counts
                        for i in range(nk):
                            C64[j * B + i] = grid[o + j * NN + i]
                    if tied[e]:
                        t, gal, gsh, gt, bd = _tie_pass(qbe[b0:], r0, wr[b0:], wr1[b0:], C64, C64[B:], C64[2 * B:],
                                                       C64[3 * B:], G, nk, eap, iea, v, vm, soft)
                    else:
                        t, gal, gsh, gt, bd = _notie_pass(qbe[b0:], r0, wr[b0:], wr1[b0:], C64, C64[B:], G, nk,
                                                         eap, iea, v)
                    gs = _row_scatter(G, gde, gse, n_run)
                total += t
                bad += bd
                g_alpha[e] += gal
                g_shift[e] += gsh
                g_tau[e] += gt
                g_row += gsh
                gs_row += gs
            g_d[e, a] += g_row
            g_s[a] += gs_row
    if bad != 0.0:
        return math.nan
    return total


#: the float type of :func:`logp_grad`'s cells (:func:`logp_grad_single` is a copy with float32)
_CELLS = np.float64


@numba.njit(cache=True, nogil=True, error_model="numpy")
def logp_grad(x, buf, grad):  # noqa: C901 (one pass over the cells, written out)
    """Log-density of the unconstrained vector ``x`` (module docstring); fills ``grad``.

    A probability that under- or overflows to 0 gives −inf or nan (numpy's error model, no
    exception in the callback), which nutpie counts as a divergence, as it does the declaration's.
    """
    N, E, C, H, K, T = int(buf[0]), int(buf[1]), int(buf[2]), int(buf[3]), int(buf[4]), int(buf[5])
    D = int(buf[17])
    pb, sb = buf[6] != 0.0, buf[7] != 0.0
    mu_s, sd_s, tau_a, mu_b, sd_b, tau_t, tau_d, mu_e, sd_e = (
        buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15], buf[16])
    ca, cb = _HEADER, _HEADER + C
    cn = cb + C
    cx = cn + 4 * C
    sg = cx + C * K
    oh = sg + 3 * E + 1
    hna = oh + 2 * H
    hxo = hna + 2 * H
    tio = hxo + H * K
    # positions in x
    q_eff = N
    q_a = q_eff + K
    q_b = q_a + E
    q_t = q_b + (E if pb else 0)
    q_sd = q_t + T
    q_z = q_sd + 1
    total, s = _scores_and_effects(x, grad, N, K, mu_s, sd_s, mu_e, sd_e)
    alpha = np.empty(E)
    beta = np.zeros(E)
    tau = np.zeros(E)
    tied = np.zeros(E, dtype=np.bool_)
    for j in range(E):
        lp, g = _half_normal_logp(x[q_a + j], tau_a)
        total += lp
        grad[q_a + j] = g
        alpha[j] = math.exp(x[q_a + j])
        if pb:
            beta[j] = x[q_b + j]
            zb = (beta[j] - mu_b) / sd_b
            total -= 0.5 * zb * zb + math.log(sd_b) + _HALF_LOG_2PI
            grad[q_b + j] = -zb / sd_b
    for j in range(T):
        lp, g = _half_normal_logp(x[q_t + j], tau_t)
        total += lp
        grad[q_t + j] = g
    for j in range(E):
        ti = int(buf[tio + j])
        if ti >= 0:
            tau[j] = math.exp(x[q_t + ti])
            tied[j] = True
    delta = np.zeros((E, N))
    u_d = 0.0
    if sb:  # the signed scale u ~ Normal(0, tau_d), σ_δ = |u| (leaderboard_models._system_bias_scale)
        u_d = x[q_sd]
        zu = u_d / tau_d
        total -= 0.5 * zu * zu + math.log(tau_d) + _HALF_LOG_2PI
        grad[q_sd] = -zu / tau_d
        for j in range(E):
            zm = 0.0
            for i in range(N):
                v = x[q_z + j * N + i]
                total -= 0.5 * v * v + _HALF_LOG_2PI
                grad[q_z + j * N + i] = -v
                zm += v
            zm /= N
            for i in range(N):
                delta[j, i] = u_d * (x[q_z + j * N + i] - zm)
    # likelihood: judgment cells
    g_s = np.zeros(N)
    g_d = np.zeros((E, N))
    g_alpha = np.zeros(E)
    g_shift = np.zeros(E)
    g_tau = np.zeros(E)
    g_eff = np.zeros(K)
    # exp tables, once per evaluation: no exp per cell.  With u± = exp(η±) and v = exp(t),
    # σ(η± − t) = u± / (u± + v) and σ(−η± − t) = 1 / (1 + v u±); u± = e^{±α} e^β e^{δ_a} / e^{δ_b}
    es = np.empty(N)
    smax = s.max()
    for i in range(N):
        es[i] = math.exp(s[i] - smax)
    ea = np.empty(E)
    ev = np.empty(E)
    evm = np.empty(E)  # v² − 1, for the tie probability (_tie_cell)
    qa = np.empty((E, N))
    qb = np.empty((E, N))
    for j in range(E):
        ea[j] = math.exp(alpha[j])
        ev[j] = math.exp(tau[j])
        evm[j] = math.expm1(2.0 * tau[j])
        eb = math.exp(beta[j])
        for i in range(N):
            qa[j, i] = eb * math.exp(delta[j, i])
            qb[j, i] = math.exp(-delta[j, i])
    # σ(s_a − s_b) from the table unless a score lies so far below the top that e^{s − max s}
    # loses precision; with covariates d has a term per cell
    direct = K > 0 or smax - s.min() > 700.0
    cells = np.empty(0, _CELLS)  # the cells' float type: float64, or float32 in logp_grad_single
    if (buf[18] != 0.0) != (cells.itemsize == 4):
        return math.nan  # a buffer packed for the other kernel (kernel_for picks the right one)
    safe = np.zeros(E, dtype=np.bool_)  # the judges whose cells float32 holds, once an evaluation
    if cells.itemsize == 4:
        for j in range(E):
            safe[j] = _single_safe(j, ea, ev, qa, qb)
    total += _judgment_cells(x[q_eff:q_eff + K], buf, ca, cb, cn, cx, sg, C, E, K, cells, safe, tied, ea, ev, evm, qa,
                             qb, es, s, direct, g_s, g_d, g_alpha, g_shift, g_tau, g_eff)
    if D:
        do = tio + E
        co = do + E + D * N  # the grids: after the dense index (E) and the row flags (D x N)
        grid = buf[co:co + D * 4 * N * _row_length(N) * cells.itemsize // 8].view(_CELLS)
        total += _dense_cells(buf, grid, safe, do, N, E, D, tied, ea, ev, evm, qa, qb, es, s, direct, g_s, g_d,
                              g_alpha, g_shift, g_tau)
    total += _human_cells(x[q_eff:q_eff + K], buf, oh, H, K, s, es, smax, direct, g_s, g_eff)
    _close_scores(grad, g_s, g_eff, N, K)
    for j in range(E):
        grad[q_a + j] += g_alpha[j] * alpha[j]
        if pb:
            grad[q_b + j] += g_shift[j]
        ti = int(buf[tio + j])
        if ti >= 0:
            grad[q_t + ti] += g_tau[j] * tau[j]
    if sb:
        g_sd = 0.0
        for j in range(E):
            gm = 0.0
            for i in range(N):
                gm += g_d[j, i]
            gm /= N
            zm = 0.0
            for i in range(N):
                zm += x[q_z + j * N + i]
            zm /= N
            for i in range(N):
                grad[q_z + j * N + i] += u_d * (g_d[j, i] - gm)
                g_sd += g_d[j, i] * (x[q_z + j * N + i] - zm)
        grad[q_sd] += g_sd  # d/du = Σ g_δ (z − z̄)
    return total


#: :func:`logp_grad` with its judgment cells in float32, for buffers packed with ``buf[18] = 1``
#: (:func:`_single`).  A separate kernel, so that tables in float64 (every small one) never compile
#: the float32 passes: they cost ~2 s of a cold compile.
logp_grad_single = numba.njit(cache=True, nogil=True, error_model="numpy")(
    copy_function(logp_grad.py_func, "logp_grad_single", _CELLS=np.float32))


#: what a second process runs to compile :func:`logp_grad_single` (and the sampler's callbacks of
#: it) while this one compiles :func:`logp_grad` (:mod:`bayes_judge.inference._compile_beside`)
_COMPILE_SINGLE = ("from bayes_judge.inference.kernels.leaderboard import logp_grad_single, expand\n"
                   "from bayes_judge.inference._nutpie import callbacks\n"
                   "callbacks(logp_grad_single, expand)")


def kernel_for(buf: np.ndarray):
    """The log-density kernel for a packed buffer: :func:`logp_grad_single` where its cells run
    in single precision, else :func:`logp_grad`."""
    return logp_grad_single if buf[18] != 0.0 else logp_grad


@numba.njit(cache=True, nogil=True)
def expand(x, buf, out):
    """Stored per draw: the declaration's free variables, constrained, in ``x``'s order."""
    N, E, K, T = int(buf[0]), int(buf[1]), int(buf[4]), int(buf[5])
    pb = buf[6] != 0.0
    for i in range(x.shape[0]):
        out[i] = x[i]
    q = N + K
    for j in range(E):
        out[q + j] = math.exp(x[q + j])
    q += E + (E if pb else 0)
    for j in range(T):
        out[q + j] = math.exp(x[q + j])


def _layout(buf: np.ndarray) -> list[tuple[str, tuple[int, ...]]]:
    N, E, K, T, pb, sb = (int(buf[i]) for i in (0, 1, 4, 5, 6, 7))
    out: list[tuple[str, tuple[int, ...]]] = [("s_raw", (N,))]
    if K:
        out.append(("effect", (K,)))
    out.append(("alpha", (E,)))
    if pb:
        out.append(("beta", (E,)))
    if T:
        out.append(("tau", (T,)))
    if sb:
        out += [("system_bias_signed", ()), ("delta_raw", (E, N))]
    return out


_LOG_SITES = ("alpha", "tau")


def _start(init: dict, layout: list[tuple[str, tuple[int, ...]]], log_sites: tuple[str, ...] = _LOG_SITES
           ) -> np.ndarray:
    """The kernel's unconstrained start from the declaration's (constrained) start values; the
    ``log_sites`` are sampled on the log scale."""
    parts = []
    for name, shape in layout:
        default = 1.0 if name in log_sites else 0.0
        v = np.broadcast_to(np.asarray(init.get(name, default), dtype=float), shape).ravel()
        parts.append(np.log(v) if name in log_sites else v)
    return np.concatenate(parts)


def _held_location(post: dict) -> dict:
    """What the stored draws of the judges' own system preferences do not show, kept with the
    sampler's statistics: ``delta_raw``'s mean over systems, which δ (centred over systems) does
    not see, signed as ``δ``'s scale (``system_bias_signed`` and ``delta_raw`` change sign
    together without changing the density), shape (chains, draws, judges)."""
    if "delta_raw" not in post:
        return {}
    sign = np.where(post["system_bias_signed"] < 0, -1.0, 1.0)[..., None]
    return {"delta_raw_mean": sign * post["delta_raw"].mean(axis=-1)}


def _held_raw(post0: dict, stats0: dict, chains: int, draws: int, seed: int) -> dict:
    """The raw coordinates of the judges' own system preferences from the stored draws (δ and
    its scale) and :func:`_held_location`: the scale positive, ``delta_raw = δ / scale`` plus its
    mean over systems.  The draw has the recorded log density, or its mirror's, which is the same.
    Where the mean was not recorded it is drawn from its posterior, ``Normal(0, 1/N)`` (only its
    prior sees it), and the recorded log density no longer applies (evaluated again)."""
    if "delta" not in post0 or "system_bias_sd" not in post0:
        return {}
    delta, sd = np.asarray(post0["delta"], dtype=np.float64), np.asarray(post0["system_bias_sd"], dtype=np.float64)
    loc = stats0.get("delta_raw_mean")
    if loc is None or np.shape(loc) != delta.shape[:-1]:
        n = delta.shape[-1]
        loc = np.random.default_rng([seed, 34]).standard_normal(delta.shape[:-1]) / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = delta / sd[..., None, None] + np.asarray(loc, dtype=np.float64)[..., None]
    return {"system_bias_signed": sd, "delta_raw": z}


def _derive_judged(post: dict) -> None:
    """The declaration's deterministics of ``bt-judges`` from its free variables' draws."""
    post["q"] = 1.0 / (1.0 + np.exp(-post["alpha"]))
    if "delta_raw" in post:
        z = post["delta_raw"]
        u = post["system_bias_signed"]
        post["system_bias_sd"] = np.abs(u)
        post["delta"] = u[..., None, None] * (z - z.mean(axis=-1, keepdims=True))


#: whether the fast paths start at the mode and sample through a Laplace shear (:func:`_sheared_start`);
#: ``benchmarks/bench_leaderboard.py --no-shear`` turns it off to compare
SHEAR = True
#: whether the mode and the curvature of the shear are read from the cells in double precision where
#: the sampler's are single (``benchmarks/bench_leaderboard_shear.py`` turns it off to compare)
CURVATURE_DOUBLE = True


def _sheared_start(kernel, buf: np.ndarray, x0: np.ndarray, lay: list[tuple[str, tuple[int, ...]]],
                   global_sites: tuple[str, ...] | None, held_sites: tuple[str, ...]):
    """The chains' start at the mode of every site but ``held_sites``, and a
    :class:`~bayes_judge.inference._nutpie.Shear` that decorrelates the ``global_sites`` (a judge's accuracy,
    position bias, tie threshold) and the scores' direction at the mode
    (:mod:`bayes_judge.inference.laplace`; at 1,000,000 comparisons, over 6 seeds, the lowest
    effective sample size of the judges' accuracies goes from 497-705 to 6,420-7,818 of 4,000
    draws, the scores' lowest from 2,204-3,097 to 6,823-7,937: ``benchmarks/bench_leaderboard.py``,
    section (c) of ``benchmarks/results/bench_leaderboard.md``).

    ``kernel`` and ``buf`` give the mode and the curvature: the cells in double precision
    (``CURVATURE_DOUBLE``).  Single precision's rounding, differenced, swamps the curvature of the
    flat direction where a judge's accuracy trades against the scores' spread: without labels the
    shear from it left the accuracies' lowest ESS at 337-345 of 4,000 draws (r_hat up to 1.018);
    from double precision 3,441-3,532 (r_hat 1.005-1.007; two seeds at 1,000,000 comparisons,
    ``benchmarks/bench_leaderboard_shear.py``)."""
    if not SHEAR or global_sites is None:
        return x0, None
    sl, off = {}, 0
    for site, shape in lay:
        size = int(np.prod(shape, dtype=np.int64))
        sl[site], off = slice(off, off + size), off + size
    free = np.ones(off, dtype=bool)
    for site in held_sites:
        if site in sl:
            free[sl[site]] = False

    def directions(x_mode: np.ndarray) -> np.ndarray:
        s = x_mode[sl["s_raw"]]
        cols = [np.zeros(off)]
        cols[0][sl["s_raw"]] = s - s.mean()
        for site in global_sites:
            for i in range(sl[site].start, sl[site].stop) if site in sl else ():
                cols.append(np.zeros(off))
                cols[-1][i] = 1.0
        return np.column_stack(cols)

    return laplace_shear(kernel, buf, x0, free, directions)


def build_fast_path(name: str, *, pack, kernel, expand, layout, log_sites: tuple[str, ...], derive=None,
                    accepts, option_cases: list[dict], kernel_for=None, global_sites: tuple[str, ...] | None = None,
                    held_sites: tuple[str, ...] = (), tune: int | None = None,
                    target_accept: Callable[[dict, int], float | None] | None = None,
                    compile_single: str | None = None, keep_held: Callable[[dict], dict] | None = None,
                    rebuild_held: Callable[..., dict] | None = None):
    """Register a leaderboard model's numba kernel as its nutpie fast path.

    ``pack(arrays, priors, options, n_systems)`` makes the data buffer, ``kernel_for(buf)``, if
    given, picks the log-density kernel for a buffer (else ``kernel``), ``layout(buf)`` lists the
    declaration's free variables in ``model.value_vars`` order (the kernel's order; the sizes give
    the unconstrained length), ``log_sites`` are sampled on the log scale, and ``derive(post)`` adds
    the model's deterministics beyond the centred scores ``s``.  With ``global_sites`` the chains
    start at the mode of every site but ``held_sites`` and sample through a shear of those sites
    and the scores' direction (:func:`_sheared_start`); without, from the declaration's start on
    the kernel's coordinates.  The fast path returns the declaration's stored
    variables as ``(chains, draws, ...)`` and nutpie's statistics.  ``tune``, if given, is the
    warm-up its chains need (``fast_path.tune``): a caller that was given none
    (``bj.leaderboard(tune=None)``) tunes for that many steps; ``target_accept(options,
    n_systems)``, if given, is the acceptance target its step size adapts to where the caller
    gave none (``None``: the package's).  ``compile_single``, if given, is
    the code a second process runs to compile the single-precision kernel while this one finds the
    mode on the double-precision one, where the former is not in numba's cache yet
    (:mod:`bayes_judge.inference._compile_beside`).  ``keep_held(post)``, if given, returns what
    the stored draws do not show of the ``held_sites`` (kept with the sampler's statistics), and
    ``rebuild_held(post, stats, chains, draws, seed)`` their raw draws from the stored ones and it,
    for an update's transport (:func:`_held_location`, :func:`_held_raw`).
    """

    def buffer(arrays: dict, coords: dict, priors: Priors, options: dict | None):
        buf = pack(arrays, priors, dict(options or {}), len(coords["system"]))
        return buf, layout(buf)

    def kernel_of(buf: np.ndarray):
        return kernel if kernel_for is None else kernel_for(buf)

    def expanded(z: np.ndarray, buf: np.ndarray, lay, chains: int, draws: int) -> dict:
        """The stored variables of draws ``z`` (chains × draws, n) on the kernel's coordinates, as
        the sampler's: expanded, the scores centred, the deterministics derived."""
        n_out = sum(int(np.prod(shape, dtype=np.int64)) for _, shape in lay)
        flat = np.empty((len(z), n_out))
        for i, x in enumerate(z):
            expand(np.ascontiguousarray(x), buf, flat[i])
        post, off = {}, 0
        for site, shape in lay:
            size = int(np.prod(shape, dtype=np.int64))
            post[site] = flat[:, off:off + size].reshape(chains, draws, *shape)
            off += size
        post["s"] = post["s_raw"] - post["s_raw"].mean(axis=-1, keepdims=True)
        if derive is not None:
            derive(post)
        return post

    def fast_path(arrays, coords, priors, *, init, chains, draws, tune, seed, target_accept, options=None):
        buf, lay = buffer(arrays, coords, priors, options)
        kern = kernel_of(buf)
        # the mode and the curvature on the cells in double precision (_sheared_start); the sampler's own
        # cells where they differ
        single = SHEAR and CURVATURE_DOUBLE and global_sites is not None and buf[18] != 0.0
        dbuf = buffer(arrays, coords, priors, {**(options or {}), "double": True})[0] if single else buf
        # on a first run the sampler's single-precision kernel compiles in a second process meanwhile
        helper = compile_beside(kern, KERNEL_SIG, compile_single) if single and compile_single else None
        try:
            start, shear = _sheared_start(kernel_of(dbuf), dbuf, _start(init, lay, log_sites), lay, global_sites,
                                          held_sites)
        except BaseException:
            stop(helper)
            raise
        wait(helper)
        m = make_model(kern, expand, buf=buf, init_flat=start, shapes=dict(lay), dims={}, coords={}, shear=shear)
        post, stats = run(m, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
                          save_warmup=False)
        post["s"] = post["s_raw"] - post["s_raw"].mean(axis=-1, keepdims=True)
        # the scores' common location, which the likelihood does not see: with ``lp`` it gives the
        # log density of each draw, so that an update can weigh it without evaluating it (transport)
        stats["s_raw_mean"] = post["s_raw"].mean(axis=-1)
        stats.update(keep_held(post) if keep_held is not None else {})
        if derive is not None:
            derive(post)
        return post, stats

    def transport(arrays, coords, priors, *, earlier, chains, draws, seed, options=None):
        """An update's posterior from an earlier fit's draws (:mod:`bayes_judge.inference.transport`).

        ``earlier`` holds the earlier fit's ``arrays`` (its cells: the same judges and options,
        its ``systems`` this fit's first ones; new systems' scores are drawn given the rest),
        ``posterior`` and ``stats`` (its stored draws and sampler statistics, as
        ``(chains, draws, ...)`` arrays).  Returns ``(post, stats, info)`` as :func:`laplace` does,
        the earlier draws moved and importance-resampled within each chain.  A hierarchical
        scale (``held_sites``' scalar) stays where each draw has it (``transport_draws(held=)``),
        its raw effects rebuilt from the stored draws (:func:`_held_raw`).  ``post`` is None
        where the draws cannot serve (``info["why"]`` says why): draws of other shapes (a judge's
        first ties, other chains or draws), no mode, or weights under the trusted k-hat or
        :data:`~bayes_judge.inference.transport.MIN_SHARE` of the draws in importance ESS."""
        from ..laplace import _logp_many, k_max
        from ..transport import MIN_SHARE, resample_within_chains, transport_draws

        opts = dict(options or {})
        buf1, lay = buffer(arrays, coords, priors, {**opts, "double": True})
        post0, stats0 = earlier["posterior"], earlier["stats"]
        systems = list(coords["system"])
        systems0 = list(earlier.get("systems", systems))
        if systems[:len(systems0)] != systems0:
            return None, None, {"why": "the earlier fit's systems are not this fit's first ones, in order"}
        coords0 = {**coords, "system": systems0}  # new systems come last: their scores are new coordinates
        buf0, lay0 = buffer(earlier["arrays"], coords0, priors, {**opts, "double": True})
        s_old = post0.get("s_judges", post0.get("s"))
        raw = rebuild_held(post0, stats0, chains, draws, seed) if rebuild_held is not None else {}
        parts, kept, held, off = [], [], [], 0
        for (site, shape), (site0, shape0) in zip(lay, lay0, strict=True):
            v = s_old if site == "s_raw" else raw.get(site, post0.get(site))
            if site != site0 or v is None or np.shape(v) != (chains, draws, *shape0):
                return None, None, {"why": f"the earlier draws of {site!r} have another shape than this fit's "
                                           f"{(chains, draws, *shape0)} (a judge's first ties, or other chains or draws)"}
            v = np.log(v) if site in log_sites else np.asarray(v, dtype=np.float64)
            if site in held_sites and not shape:  # a hierarchical scale: left where it is (transport_draws)
                held.append(sum(len(k) for k in kept))
            parts.append(v.reshape(chains * draws, -1))
            # the earlier coordinates among this fit's (new systems come last along the site's last axis)
            pos = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
            kept.append(off + pos[tuple(slice(0, n) for n in shape0)].ravel())
            off += int(np.prod(shape, dtype=np.int64))
        x_old = np.concatenate(parts, axis=1)
        n_sys0 = len(systems0)
        w_buf1, w_buf0 = buffer(arrays, coords, priors, opts)[0], buffer(earlier["arrays"], coords0, priors, opts)[0]
        loc = stats0.get("s_raw_mean")
        lp_old = None
        if loc is not None and "lp" in stats0:  # the sampler's own log density, where it is this kernel's
            x_old[:, :n_sys0] += np.reshape(loc, (-1, 1))
            lp_old = np.asarray(stats0["lp"], dtype=np.float64).ravel()
            check = np.linspace(0, len(x_old) - 1, 16).astype(int)
            d = lp_old[check] - _logp_many(kernel_of(w_buf0), w_buf0, x_old[check], None)
            # the same kernel gives the same numbers (1e-11 apart at 100,000 battles); another density: evaluated here
            if not np.all(np.isfinite(d)) or np.ptp(d) > 1e-9 * np.abs(lp_old[check]).max() + 1e-6:
                lp_old = None
        try:
            y, lp1, w, info = transport_draws((kernel_of(buf0), buf0), (kernel_of(buf1), buf1), x_old,
                                              kept=np.concatenate(kept), n_new=off, seed=seed,
                                              weigh_old=(kernel_of(w_buf0), w_buf0),
                                              weigh_new=(kernel_of(w_buf1), w_buf1), lp_old=lp_old,
                                              held=np.array(held, dtype=np.int64))
        except ValueError as e:
            return None, None, {"why": str(e)}
        total = chains * draws
        info["lp_recorded"] = lp_old is not None
        if not (info["pareto_k"] <= k_max(total) and info["ess_importance"] >= MIN_SHARE * total):
            info["why"] = (f"the moved draws' importance weights (Pareto k-hat {info['pareto_k']:.2f}, importance "
                           f"ESS {info['ess_importance']:.0f} of {total}) are too uneven")
            return None, None, info
        idx = resample_within_chains(w, chains, np.random.default_rng(seed)).ravel()
        post = expanded(y[idx], buf1, lay, chains, draws)
        stats = {"diverging": np.zeros((chains, draws), dtype=bool), "lp": lp1[idx].reshape(chains, draws),
                 "s_raw_mean": post["s_raw"].mean(axis=-1), **(keep_held(post) if keep_held is not None else {})}
        return post, stats, info

    def logp_grad_declared(x, arrays: dict, coords: dict, priors: Priors, options: dict | None = None):
        """Log-density and gradient at ``x``, the declaration's value variables flattened in
        ``model.value_vars`` order (the kernel's own order)."""
        buf, lay = buffer(arrays, coords, priors, options)
        n = sum(int(np.prod(shape, dtype=np.int64)) for _, shape in lay)
        xk = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
        if xk.shape != (n,):
            raise ValueError(f"x has {xk.shape} values; the kernel takes {n}")
        g = np.empty_like(xk)
        return float(kernel_of(buf)(xk, buf, g)), g

    def laplace(arrays, coords, priors, *, init, chains, draws, seed, options=None):
        """Draws of the Laplace approximation of the same posterior (its mode and the curvature
        there, on the kernel's coordinates), expanded and derived as the sampler's draws are."""
        from ..laplace import laplace_draws

        # float64 cells: the curvature comes from differences of gradients, which float32 would swamp
        buf, lay = buffer(arrays, coords, priors, {**(options or {}), "double": True})
        held = [site for site, _ in lay if site in held_sites]
        if held:
            raise ValueError(
                f"sampler='laplace' cannot fit {held}: a hierarchical scale's mode is at 0, where the "
                "Laplace approximation does not exist; pass system_bias=False, or sample with NUTS")
        kern = kernel_of(buf)
        # the importance weights need only log densities: those the sampler would use (single
        # precision where the table qualifies)
        w_buf, _ = buffer(arrays, coords, priors, options)
        weigh, helper = None, None
        if w_buf[18] != buf[18]:  # on a first run compiled in a second process during the mode and curvature
            helper = compile_beside(kernel_of(w_buf), KERNEL_SIG, compile_single) if compile_single else None
            weigh = (AfterCompile(kernel_of(w_buf), helper) if helper is not None else kernel_of(w_buf), w_buf)
        try:
            z, info = laplace_draws(kern, buf, _start(init, lay, log_sites), chains=chains, draws=draws, seed=seed,
                                    weigh=weigh)
        finally:  # done wherever the weights were weighed (they waited for it); else not needed
            stop(helper)
        post = expanded(z.reshape(chains * draws, -1), buf, lay, chains, draws)
        stats = {"diverging": np.zeros((chains, draws), dtype=bool)}
        return post, stats, info

    fast_path.__doc__ = f"The registered nutpie fast path of the {name!r} declaration (same posterior)."
    fast_path.laplace = laplace  # type: ignore[attr-defined]
    fast_path.transport = transport  # type: ignore[attr-defined]
    fast_path.own_start = True  # type: ignore[attr-defined]  # _start broadcasts the declaration's start values
    fast_path.tune = tune  # type: ignore[attr-defined]
    fast_path.target_accept = target_accept or (lambda options, n_systems: None)  # type: ignore[attr-defined]
    fast_path.logp_grad = logp_grad_declared  # type: ignore[attr-defined]
    fast_path.accepts = accepts  # type: ignore[attr-defined]
    fast_path.option_cases = option_cases  # type: ignore[attr-defined]
    return fast_path


#: from this many systems a leaderboard's fast path adapts to an acceptance of 0.7 (accept_near_gaussian)
NEAR_GAUSSIAN_FROM = 100


def accept_near_gaussian(n_systems: int) -> float | None:
    """The acceptance target of a leaderboard fast path where the caller gave none: 0.7 from
    :data:`NEAR_GAUSSIAN_FROM` systems on, else ``None`` (the package's 0.8).

    With hundreds of systems the posterior (through the shear, where there is one) is near a
    standard Gaussian in hundreds of dimensions, where HMC's best acceptance rate is about 0.65
    (Beskos, Pillai, Roberts, Sanz-Serna & Stuart 2013, "Optimal tuning of the hybrid Monte Carlo
    algorithm", arXiv:1001.4460), not PyMC's 0.8: with 200 systems at 0.7 a draw takes 7-8
    leapfrog steps instead of 9-14, a fit 0.65-0.83 of the time at 10,000 to 1,000,000
    comparisons, with no lower ESS per second and the same r_hat and coverage
    (``benchmarks/results/bench_leaderboard_accept.md``).  With a dozen systems the optimum is
    higher and the geometry less Gaussian: on the bundled SummEval and HANNA leaderboards
    (12 and 11 systems) 0.7 left 2-35 divergent transitions in five fits of ten where 0.8 left
    2-5 in three (``benchmarks/results/leaderboard_real_accept07.md`` against
    ``leaderboard_real.md``); there the target stays 0.8, and such fits take seconds.
    """
    return 0.7 if n_systems >= NEAR_GAUSSIAN_FROM else None


def _target_accept(options: dict, n_systems: int) -> float | None:
    """``bt-judges``' acceptance target where the caller gave none (:func:`accept_near_gaussian`);
    the judges' own system preferences (``system_bias``, a hierarchical scale: a funnel) keep
    0.8: there a draw takes 15 steps either way, and 0.7 gave no steady gain and left r_hat at
    1.0105 on one seed (``benchmarks/results/bench_leaderboard_accept.md``)."""
    return None if options.get("system_bias", True) else accept_near_gaussian(n_systems)


#: the registered fast path of ``bt-judges``; ``option_cases``: what the gradient check covers
fast_path = build_fast_path(
    "bt-judges", pack=pack_data, kernel=logp_grad, kernel_for=kernel_for, expand=expand, layout=_layout,
    log_sites=_LOG_SITES, derive=_derive_judged, accepts=accepts, global_sites=("effect", "alpha", "beta", "tau"),
    held_sites=("system_bias_signed", "delta_raw"), keep_held=_held_location, rebuild_held=_held_raw,
    # chains that start at the mode and sample through the shear need nutpie's own default warm-up:
    # 300 steps gave the ESS, r_hat and coverage of 1000 in 0.58-0.77 of the time, with and without
    # labels and the judges' own system preferences (benchmarks/results/bench_leaderboard_tune.md).
    tune=300, target_accept=_target_accept, compile_single=_COMPILE_SINGLE,
    option_cases=[
        {"position_bias": True, "system_bias": True, "tie_judges": (1,), "n_judges": 3},
        {"position_bias": False, "system_bias": False, "tie_judges": (), "n_judges": 3},
        {"position_bias": True, "system_bias": True, "tie_judges": (0, 2), "n_judges": 3, "n_cov": 1},
        # labelled cells summed a judge and a label (_one_cell_a_label), beside ties, a shift, a covariate
        {"position_bias": True, "system_bias": False, "tie_judges": (1,), "n_judges": 3, "n_cov": 1},
    ],
)
#: this module's fast paths by (task, model), collected by :mod:`bayes_judge.inference.fastpaths`
FAST_PATHS = {("leaderboard", "bt-judges"): fast_path}
