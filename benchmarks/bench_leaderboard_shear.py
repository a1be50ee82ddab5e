"""Benchmark: NUTS on a leaderboard of judges without labels, its shear from single- or double-precision cells.

A judge's accuracy trades against how far apart the systems are.  The ``bt-judges`` fast path
samples through a fixed linear map from the curvature at the mode
(:func:`bayes_judge.inference.kernels.leaderboard._sheared_start`), which decorrelates the judges'
global parameters and the scores' direction.  At 20,000 cells or more the sampler reads the cells
in single precision; the mode and the curvature are read from them in double precision
(``CURVATURE_DOUBLE``), or, as before, from the sampler's own single-precision cells.  This script
fits the same table both ways with the package's default NUTS settings (4 chains of 1000 + 1000)
and reports the wall time, the leapfrog steps a draw, the lowest bulk ESS of the scores and of the
judges' accuracies, the largest r_hat, and the 90% intervals' coverage of the simulated scores.

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_shear.py                       # ~3 min on 2 cores
    .venv/bin/python benchmarks/bench_leaderboard_shear.py --comparisons 200000 --seeds 1

Writes ``benchmarks/results/bench_leaderboard_shear.{json,md}`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def fit(df, truth, seed: int, double: bool) -> dict:
    import arviz as az

    import bayes_judge as bj
    from bayes_judge.inference.kernels import leaderboard as fast

    keep = fast.CURVATURE_DOUBLE
    fast.CURVATURE_DOUBLE = double
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            idata = bj.leaderboard(df, seed=seed, pointwise=False, bridge=False)
            wall = time.perf_counter() - t
    finally:
        fast.CURVATURE_DOUBLE = keep
    ess = az.ess(idata, var_names=["s", "alpha"])
    s = bj.leaderboard_summary(idata).set_index("system")
    tr = truth[s.index]
    return {"curvature from": "double" if double else "single (before)", "seed": seed, "wall_s": wall,
            "steps_per_draw": float(idata.sample_stats["n_steps"].mean()),
            "ess_scores_min": float(ess["s"].min()), "ess_alpha_min": float(ess["alpha"].min()),
            "r_hat_max": float(az.rhat(idata, var_names=["s", "alpha"]).to_array().max()),
            "coverage": float(((s["hdi_low"] <= tr) & (tr <= s["hdi_high"])).mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_leaderboard_shear.json")
    args = ap.parse_args()

    import bayes_judge as bj
    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    df, truth = simulate_leaderboard(args.systems, args.comparisons, **THREE_JUDGES, design="one-judge", label_share=0.0, seed=0)
    df = df.drop(columns="human")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bj.leaderboard(df.head(5000), seed=0, pointwise=False, bridge=False)  # kernels loaded
    rows = []
    for seed in range(1, args.seeds + 1):
        for double in (False, True):  # alternating, so both see the same machine
            rows.append(fit(df, truth, seed, double))
            print(json.dumps(rows[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"systems": args.systems, "comparisons": args.comparisons, "rows": rows},
                                   indent=1))
    cols = ["curvature from", "seed", "wall_s", "steps_per_draw", "ess_scores_min", "ess_alpha_min", "r_hat_max", "coverage"]
    fmt = {"wall_s": "{:.1f} s", "steps_per_draw": "{:.1f}", "ess_scores_min": "{:.0f}", "ess_alpha_min": "{:.0f}",
           "r_hat_max": "{:.4f}", "coverage": "{:.1%}"}
    command = "python benchmarks/bench_leaderboard_shear.py " + " ".join(sys.argv[1:])
    lines = ["# NUTS through the fast path's shear from single- or double-precision curvature, judges without labels (`benchmarks/bench_leaderboard_shear.py`)",
             "", f"Command: `{command.strip()}`; {args.systems} systems, {args.comparisons:,} comparisons by three "
             "judges (accuracies, position biases and ties as in `bench_leaderboard_laplace.py`), no labels, "
             "`bridge=False`; default NUTS (4 x (1000 + 1000)); 2 cores, one process, kernels compiled; ESS: bulk, "
             "of 4,000 draws.", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt.get(c, "{}").format(r[c]) for c in cols) + " |")
    md = "\n".join(lines) + "\n"
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
