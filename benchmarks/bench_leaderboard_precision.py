"""Benchmark: the ``bt-judges`` tie pass in double against single precision (a design option).

The ``bt-judges`` fast path at arena scale is bound by its cell arithmetic
(:func:`bayes_judge.leaderboard.fast._tie_pass`, float64, 4 lanes of AVX2): 1,000,000 comparisons
fit in about 99 s against the issue's 60 s, with NUTS at 15 leapfrog steps a draw (the
dimension's) and both cores busy (``benchmarks/results/bench_leaderboard.md``).  This script
measures what single-precision cells (8 lanes) would give, before the kernel is rewritten: the
package's pass against a float32 restatement of the same cell (:func:`_tie_cell32`, with a float32
bit-level log), on the same cells, in blocks of ``fast._BLOCK`` as the dense grid runs it.

Two float32 variants: sums over a block in float64 (each cell's terms converted), and in float32
(the block's sum converted once).  Reported: the time per pass over all cells (minimum and
median over rounds, thread CPU time, alternating the variants in one process) and the difference
of the log-likelihood sum from float64's.  Tie judge, no soft rows.

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_precision.py              # 120,000 cells
    .venv/bin/python benchmarks/bench_leaderboard_precision.py --cells 40000 --rounds 9
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numba
import numpy as np

from bayes_judge.leaderboard import fast
from bayes_judge.leaderboard.fast import _FM, _f2i, _i2f  # the bit casts take float32 too

HERE = Path(__file__).resolve().parent
F = np.float32
_MANT32 = np.int32(0x007FFFFF)
_SQRT2_MANT32 = np.int32(0x3504F3)  # mantissa bits of √2 in float32
_LOG2_32 = F(np.log(2.0))
_B = np.uint64(fast._BLOCK)


@numba.njit(inline="always")
def _split32(p):
    """``p = 2^e m``, ``m`` in [√½, √2) (``fast._split`` in float32)."""
    bits = _f2i(p)
    mant = bits & _MANT32
    up = np.int32(mant > _SQRT2_MANT32)
    return (F((bits >> np.int32(23)) - np.int32(127) + up),
            _i2f(np.int32(mant | ((np.int32(127) - up) << np.int32(23)))))  # numba widens int32 sums


@numba.njit(inline="always", fastmath={"contract"})
def _atanh2_32(z):
    """``2 atanh(z)``, ``|z| ≤ 3 − 2√2``, the series to z^9 (remainder below float32's ulp)."""
    t = z * z
    return F(2.0) * z * ((((F(1 / 9) * t + F(1 / 7)) * t + F(1 / 5)) * t + F(1 / 3)) * t + F(1.0))


@numba.njit(inline="always", fastmath={"contract"})
def _log3_32(p, q, u):
    """``fast._log3`` in float32: three logs, one division."""
    ep, mp = _split32(p)
    eq, mq = _split32(q)
    eu, mu = _split32(u)
    dp, dq, du = mp + F(1), mq + F(1), mu + F(1)
    dpq = dp * dq
    r = F(1) / (dpq * du)
    rpq = r * du
    return (ep * _LOG2_32 + _atanh2_32((mp - F(1)) * dq * rpq),
            eq * _LOG2_32 + _atanh2_32((mq - F(1)) * dp * rpq),
            eu * _LOG2_32 + _atanh2_32((mu - F(1)) * dpq * r))


@numba.njit(inline="always", fastmath=_FM)
def _tie_cell32(r, wk, wk1, ca, cb, nt, eap, iea, v):
    """``fast._judge_probs`` + ``fast._tie_cell`` + ``fast._chain`` in float32 (no soft rows)."""
    up, um = eap * r, iea * r
    x1, x2, x3, x4 = up + v, um + v, F(1) + v * up, F(1) + v * um
    p12, p34 = x1 * x2, x3 * x4
    q = F(1) / (p12 * p34)
    q12, q34 = q * p34, q * p12
    i1, i0, b1, b0 = q12 * x2, q12 * x1, q34 * x4, q34 * x3
    a1, a0 = up * i1, um * i0
    da1, da0, db1, db0 = a1 * v * i1, a0 * v * i0, b1 * v * up * b1, b0 * v * um * b0
    pA = wk * a1 + wk1 * a0
    pB = wk * b1 + wk1 * b0
    yA = pA if ca != F(0) else F(1)
    yB = pB if cb != F(0) else F(1)
    yT = F(1) - pA - pB if nt != F(0) else F(1)
    yAB = yA * yB
    z = F(1) / (yAB * yT)
    zAB = z * yT
    gT = nt * (z * yAB)
    gA = ca * (zAB * yB) - gT
    gB = cb * (zAB * yA) - gT
    lA, lB, lT = _log3_32(yA, yB, yT)
    ge_p = wk * (gA * da1 - gB * db1)
    ge_m = wk1 * (gA * da0 - gB * db0)
    g_t = -(gA * (wk * da1 + wk1 * da0) + gB * (wk * db1 + wk1 * db0))
    gd = wk * wk1 * (gA * (a1 - a0) + gB * (b1 - b0))
    return ca * lA + cb * lB + nt * lT, ge_p - ge_m, ge_p + ge_m, g_t, gd


@numba.njit(nogil=True, error_model="numpy", fastmath=_FM)
def _pass32_f64sum(qb, r0, wr, wr1, nA, nB, nT, G, nk, eap, iea, v):
    total = g_al = g_sh = g_t = 0.0
    for k in range(np.uint64(nk)):
        lk, ga, g, gt, gd = _tie_cell32(r0 * qb[k], wr[k], wr1[k], nA[k], nB[k], nT[k], eap, iea, v)
        seen = nA[k] + nB[k] + nT[k] != F(0)
        total += np.float64(lk)
        g_al += np.float64(ga) if seen else 0.0
        g_sh += np.float64(g) if seen else 0.0
        g_t += np.float64(gt) if seen else 0.0
        G[k] = g if seen else F(0)
        G[_B + k] = gd if seen else F(0)
    return total, g_al, g_sh, g_t


@numba.njit(nogil=True, error_model="numpy", fastmath=_FM)
def _pass32_f32sum(qb, r0, wr, wr1, nA, nB, nT, G, nk, eap, iea, v):
    total = g_al = g_sh = g_t = F(0)
    for k in range(np.uint64(nk)):
        lk, ga, g, gt, gd = _tie_cell32(r0 * qb[k], wr[k], wr1[k], nA[k], nB[k], nT[k], eap, iea, v)
        seen = nA[k] + nB[k] + nT[k] != F(0)
        total += lk
        g_al += ga if seen else F(0)
        g_sh += g if seen else F(0)
        g_t += gt if seen else F(0)
        G[k] = g if seen else F(0)
        G[_B + k] = gd if seen else F(0)
    return np.float64(total), np.float64(g_al), np.float64(g_sh), np.float64(g_t)


@numba.njit(nogil=True)
def _run64(qb, wr, wr1, nA, nB, nT, nS, G, r0, eap, iea, v):
    out = np.zeros(4)
    n = qb.shape[0]
    for b0 in range(0, n, fast._BLOCK):
        t = fast._tie_pass(qb[b0:], r0, wr[b0:], wr1[b0:], nA[b0:], nB[b0:], nT[b0:], nS[b0:], G,
                           min(fast._BLOCK, n - b0), eap, iea, v, False)
        for j in range(4):
            out[j] += t[j]
    return out


def _make_run32(kernel):
    @numba.njit(nogil=True)
    def run(qb, wr, wr1, nA, nB, nT, G, r0, eap, iea, v):
        out = np.zeros(4)
        n = qb.shape[0]
        for b0 in range(0, n, fast._BLOCK):
            t = kernel(qb[b0:], r0, wr[b0:], wr1[b0:], nA[b0:], nB[b0:], nT[b0:], G,
                       min(fast._BLOCK, n - b0), eap, iea, v)
            for j in range(4):
                out[j] += t[j]
        return out
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", type=int, default=120_000, help="cells of one pass (default: 3 judges "
                    "x 200 x 199 places, the 1e6 benchmark's grid)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_leaderboard_precision.json")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    n = args.cells
    qb = np.exp(rng.normal(0.0, 0.3, n))  # e^{δ_a − δ_b}
    w = 1.0 / (1.0 + np.exp(-rng.normal(0.0, 1.0, n)))  # σ(s_a − s_b)
    nA, nB, nT = (rng.poisson(lam, n).astype(float) for lam in (3.5, 3.5, 0.9))  # ~8 a place
    consts = (1.01, 1.3, 0.77, 1.2)  # e^{β}, e^{α}, e^{−α}, e^{τ}
    a64 = (qb, w, 1.0 - w, nA, nB, nT, np.zeros(n), np.empty(3 * fast._BLOCK), *consts)
    a32 = (*(x.astype(np.float32) for x in (qb, w, 1.0 - w, nA, nB, nT)),
           np.empty(3 * fast._BLOCK, np.float32), *(F(c) for c in consts))
    variants = {"float64 (the package's _tie_pass)": (_run64, a64),
                "float32 cells, float64 sums": (_make_run32(_pass32_f64sum), a32),
                "float32 cells, float32 sums per block": (_make_run32(_pass32_f32sum), a32)}
    ref = None
    res: dict[str, dict] = {}
    for name, (fn, a) in variants.items():
        out = fn(*a)
        ref = out if ref is None else ref
        if abs(out[0] - ref[0]) > 1e-6 * abs(ref[0]):  # a float64 slipped in, or a wrong restatement
            raise AssertionError(f"{name}: log-likelihood {out[0]} against float64's {ref[0]}")
        res[name] = {"loglik": float(out[0]), "loglik_diff": float(out[0] - ref[0]),
                     "grad_alpha_rel_diff": float(abs(out[1] - ref[1]) / abs(ref[1])), "ms": []}
    for _ in range(args.rounds):
        for name, (fn, a) in variants.items():
            t = time.thread_time()
            for _ in range(args.calls):
                fn(*a)
            res[name]["ms"].append((time.thread_time() - t) / args.calls * 1e3)
    t64 = min(res["float64 (the package's _tie_pass)"]["ms"])
    lines = [f"command: `.venv/bin/python benchmarks/bench_leaderboard_precision.py --cells {n} "
             f"--rounds {args.rounds} --calls {args.calls}`", "",
             f"{n:,} cells of a tie judge (counts ~ Poisson(3.5, 3.5, 0.9)), blocks of {fast._BLOCK}, "
             "thread CPU time per pass", "",
             "| variant | min ms | median ms | speed-up (min) | log-lik sum | difference | ∂/∂α rel. difference |",
             "|---|---|---|---|---|---|---|"]
    for name, r in res.items():
        lines.append(f"| {name} | {min(r['ms']):.3f} | {np.median(r['ms']):.3f} | {t64 / min(r['ms']):.2f}x "
                     f"| {r['loglik']:.4f} | {r['loglik_diff']:.2e} | {r['grad_alpha_rel_diff']:.1e} |")
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"cells": n, "rounds": args.rounds, "calls": args.calls,
                                    "variants": res}, indent=1))
    args.out.with_suffix(".md").write_text(text + "\n")


if __name__ == "__main__":
    main()
