"""Benchmark: the ``bt-judges`` fast path's two cell layouts, listed cells against the dense grid.

:mod:`bayes_judge.inference.kernels.leaderboard` keeps a judge's unlabelled cells as a sorted list (a gather
and a scatter of system indices per cell) or, when its distinct (A, B) places fill at least
``_DENSE_FILL`` (55%; 37% in float32) of the N (N − 1) ordered pairs, as an N × N grid read row by row (no
gather or scatter, but the empty places are computed too).  This script measures where one beats
the other: the data of ``benchmarks/bench_leaderboard.py`` (200 systems, 3 judges, 10% ties, 1%
human-labelled, one judge per comparison) at several sizes, packed both ways (``_DENSE_FILL``
set to infinity: every cell listed; set to 0: every judge's unlabelled cells in the grid), and
one log density + gradient evaluation of each timed, alternating the two layouts in one process
(thread CPU time, ``--rounds`` rounds of ``--calls`` calls each; the minimum and the median over
rounds), at one random point.  Both layouts give the same value (checked to 1e-12 in float64,
to float32's rounding where the table runs in single precision).

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_kernel.py                 # 3e4, 6e4, 1e5, 3e5, 1e6
    .venv/bin/python benchmarks/bench_leaderboard_kernel.py --sizes 1e5 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def measure(m: int, rounds: int, calls: int) -> dict:
    from bench_leaderboard import N_SYSTEMS, simulate  # the same data, seeded by the size

    from bayes_judge.generative import get_model
    from bayes_judge.inference.kernels import leaderboard as fast
    from bayes_judge.leaderboard.encode import encode_leaderboard

    df, *_ = simulate(m, seed=m, label_share=0.01)
    data = encode_leaderboard(df)
    ties = tuple(int(e) for e in np.flatnonzero(data.has_ties))
    options = {"position_bias": True, "tie_judges": ties, "n_judges": 3, "system_bias": True}
    priors = get_model("bt-judges", "leaderboard").default_priors()
    arrays = data.arrays()
    unlabelled = (arrays["h"] == 0)
    places = len(np.unique((arrays["judge"][unlabelled] * N_SYSTEMS + arrays["sys_a"][unlabelled]) * N_SYSTEMS
                           + arrays["sys_b"][unlabelled]))
    default = fast._DENSE_FILL
    bufs = {}
    try:
        for name, fill in (("listed", np.inf), ("dense", 0.0)):
            fast._DENSE_FILL = fill
            bufs[name] = fast.pack_data(arrays, priors, options, N_SYSTEMS)
        fast._DENSE_FILL = default
        chosen = "dense" if int(fast.pack_data(arrays, priors, options, N_SYSTEMS)[17]) else "listed"
    finally:
        fast._DENSE_FILL = default
    n = N_SYSTEMS + 3 + 3 + len(ties) + 1 + 3 * N_SYSTEMS
    x = np.random.default_rng(1).normal(0.0, 0.3, n)
    g = np.empty(n)
    values = {k: fast.kernel_for(b)(x, b, g) for k, b in bufs.items()}  # compiles
    # the same value: to 1e-12 in float64; in float32 (tables of fast._SINGLE_MIN cells and more)
    # within the rounding the kernel's tests bound (150 float32 epsilons of |log density|)
    single = bool(bufs["dense"][18])
    tol = 150 * float(np.finfo(np.float32).eps) if single else 1e-12
    assert abs(values["dense"] - values["listed"]) <= tol * abs(values["listed"]), values
    times: dict[str, list[float]] = {k: [] for k in bufs}
    for _ in range(rounds):
        for k, b in bufs.items():
            t = time.thread_time()
            for _ in range(calls):
                fast.kernel_for(b)(x, b, g)
            times[k].append((time.thread_time() - t) / calls * 1e3)
    grid = 3 * N_SYSTEMS * fast._row_length(N_SYSTEMS)
    return {"comparisons": m, "cells": data.n_cells, "unlabelled_places": places,
            "fill": places / (3 * N_SYSTEMS * (N_SYSTEMS - 1)), "grid_places": grid, "chosen": chosen,
            "precision": "float32" if single else "float64",
            **{f"{k}_ms_min": min(v) for k, v in times.items()},
            **{f"{k}_ms_median": float(np.median(v)) for k, v in times.items()},
            "dense_ns_per_place": min(times["dense"]) * 1e6 / grid}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3e4,6e4,1e5,3e5,1e6")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_leaderboard_kernel.json")
    args = parser.parse_args(argv)
    rows = [measure(int(float(s)), args.rounds, args.calls) for s in args.sizes.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2))
    cmd = "`.venv/bin/python benchmarks/bench_leaderboard_kernel.py" + "".join(f" {a}" for a in (argv or sys.argv[1:]))
    md = [f"command: {cmd}`", "",
          "logp+grad of `bt-judges` (200 systems, 3 judges, 810 parameters), the two layouts alternating in one "
          "process; thread CPU time, min (median) over rounds.", "",
          "| comparisons | cells | cell precision | grid filled | listed | dense grid | dense, per grid place (labelled "
          "cells included) | layout chosen |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['comparisons']:,} | {r['cells']:,} | {r['precision']} | {100 * r['fill']:.0f}% | "
                  f"{r['listed_ms_min']:.2f} ({r['listed_ms_median']:.2f}) ms | "
                  f"{r['dense_ms_min']:.2f} ({r['dense_ms_median']:.2f}) ms | {r['dense_ns_per_place']:.1f} ns | "
                  f"{r['chosen']} |")
    text = "\n".join(md)
    print(text)
    args.out.with_suffix(".md").write_text(text + "\n")
    return rows


if __name__ == "__main__":
    main()
