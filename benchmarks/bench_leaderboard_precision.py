"""Benchmark: the ``bt-judges`` tie pass in double and in single precision.

The ``bt-judges`` fast path at arena scale is bound by its cell arithmetic
(:func:`bayes_judge.inference.kernels.leaderboard._tie_pass`).  The same pass compiles for float64 (4 lanes
of AVX2) and float32 (8 lanes); the kernel runs tables of at least ``fast._SINGLE_MIN`` cells in
float32 (:func:`bayes_judge.inference.kernels.leaderboard._single`).  This script times the package's pass in
both precisions on the same cells, in blocks of ``fast._BLOCK`` as the dense grid runs it, and
reports the difference of the log-likelihood sum and of ∂/∂α and ∂/∂t from float64's, at a
typical tie threshold and at a small one (where a tie's probability is small and a form through
``1 − P_A − P_B`` would lose it).

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_precision.py              # 120,000 cells
    .venv/bin/python benchmarks/bench_leaderboard_precision.py --cells 40000 --rounds 9
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numba
import numpy as np

from bayes_judge.inference.kernels import leaderboard as fast

HERE = Path(__file__).resolve().parent


@numba.njit(nogil=True)
def _run(qb, wr, wr1, nA, nB, nT, nS, G, r0, eap, iea, v, vm):
    """The pass over every cell, a block at a time: (log-lik, ∂/∂α, ∂/∂β, ∂/∂t) in float64."""
    out = np.zeros(4)
    n = qb.shape[0]
    for b0 in range(0, n, fast._BLOCK):
        t = fast._tie_pass(qb[b0:], r0, wr[b0:], wr1[b0:], nA[b0:], nB[b0:], nT[b0:], nS[b0:], G,
                           min(fast._BLOCK, n - b0), eap, iea, v, vm, bool(0))
        for j in range(4):
            out[j] += t[j]
    return out


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
    counts = [rng.poisson(lam, n).astype(float) for lam in (3.5, 3.5, 0.9)]  # ~8 a place
    cols = (qb, w, 1.0 - w, *counts, np.zeros(n))
    res: dict[str, dict] = {}
    for tau in (0.35, 1e-4):
        consts = (1.0, math.exp(1.3), math.exp(-1.3), math.exp(tau), math.expm1(2 * tau))  # r0, e^{±α}, v, v² − 1
        out = {}
        for name, dtype in (("float64", np.float64), ("float32", np.float32)):
            a = (*(c.astype(dtype) for c in cols), np.empty(3 * fast._BLOCK, dtype), *(dtype(c) for c in consts))
            out[name] = (_run(*a), a)
        ref = out["float64"][0]
        for name, (got, a) in out.items():
            key = f"{name}, t = {tau:g}"
            res[key] = {"loglik": float(got[0]), "loglik_rel_diff": float(abs(got[0] - ref[0]) / abs(ref[0])),
                        "grad_alpha_rel_diff": float(abs(got[1] - ref[1]) / abs(ref[1])),
                        "grad_t_rel_diff": float(abs(got[3] - ref[3]) / abs(ref[3])), "ms": [], "args": a}
    for _ in range(args.rounds):
        for r in res.values():
            t = time.thread_time()
            for _ in range(args.calls):
                _run(*r["args"])
            r["ms"].append((time.thread_time() - t) / args.calls * 1e3)
    for r in res.values():
        del r["args"]
    lines = [f"command: `.venv/bin/python benchmarks/bench_leaderboard_precision.py --cells {n} "
             f"--rounds {args.rounds} --calls {args.calls}`", "",
             f"{n:,} cells of a tie judge (counts ~ Poisson(3.5, 3.5, 0.9)), blocks of {fast._BLOCK}, the package's "
             "`fast._tie_pass` compiled for each precision; thread CPU time per pass over all cells; differences "
             "relative to float64 at the same t", "",
             "| precision, tie threshold | min ms | median ms | speed-up (min) | log-lik sum | rel. difference "
             "| ∂/∂α rel. difference | ∂/∂t rel. difference |",
             "|---|---|---|---|---|---|---|---|"]
    for key, r in res.items():
        base = res[key.replace("float32", "float64")]
        lines.append(f"| {key} | {min(r['ms']):.3f} | {np.median(r['ms']):.3f} | {min(base['ms']) / min(r['ms']):.2f}x "
                     f"| {r['loglik']:.4f} | {r['loglik_rel_diff']:.1e} | {r['grad_alpha_rel_diff']:.1e} "
                     f"| {r['grad_t_rel_diff']:.1e} |")
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"cells": n, "rounds": args.rounds, "calls": args.calls, "variants": res},
                                   indent=1))
    args.out.with_suffix(".md").write_text(text + "\n")


if __name__ == "__main__":
    main()
