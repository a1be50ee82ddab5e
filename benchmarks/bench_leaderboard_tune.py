"""Benchmark: the warm-up and the acceptance target NUTS needs on a leaderboard's fast path.

The ``bt-judges`` fast path starts every chain at the posterior's mode and samples through the
Laplace shear (:func:`bayes_judge.inference.kernels.leaderboard._sheared_start`): the judges'
global parameters and the scores' direction are decorrelated before the first step, and the
mode is where the chains begin.  nutpie's own default is 300 tuning steps (its mass-matrix
adaptation is built to converge quickly; PyMC's 1000 is the package-wide default).  Through
the shear the posterior is close to a standard Gaussian in hundreds of dimensions, where HMC's
best acceptance rate is about 0.65 (Beskos, Pillai, Roberts, Sanz-Serna & Stuart 2013, "Optimal
tuning of the hybrid Monte Carlo algorithm", Bernoulli 19(5A), arXiv:1001.4460), not the 0.8
that PyMC and Stan default to for harder geometry.  This script fits the same tables with each
``--tunes`` × ``--accepts`` setting (1000 kept draws a chain, 4 chains, the package's other
defaults, ``bridge=False``: the model's own posterior), alternating, and reports the wall, the
leapfrog steps a draw, the divergences, the lowest bulk and tail ESS of the scores and of the
judges' accuracies, the largest r_hat over every sampled variable, and the 90% intervals'
coverage of the simulated (human) scores.

Cases (200 systems, ``--comparisons`` battles (one size or several, comma-separated), one verdict a battle by three judges with the
accuracies, position biases and ties of ``bench_leaderboard_laplace.py``):

* ``no-labels``: the judges alone;
* ``labels``: people's label on 10% of the battles, ``system_bias=False`` (one joint model);
* ``labels+delta``: the same with the default ``system_bias`` (on with labels: each judge's own
  preference for each system, 3 × 200 more parameters);
* ``votes``: people's votes alone (judge ``human``, the simulated human preference of each battle).

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_tune.py                  # ~12 min on 2 cores
    .venv/bin/python benchmarks/bench_leaderboard_tune.py --cases no-labels --seeds 1
    .venv/bin/python benchmarks/bench_leaderboard_tune.py --tunes 300 --accepts 0.8,0.7 \
        --comparisons 1e4,1e5,1e6 --cases no-labels,labels,votes,labels+delta \
        --out benchmarks/results/bench_leaderboard_accept.json              # ~35 min

Writes ``benchmarks/results/bench_leaderboard_tune.{json,md}`` and prints the table.
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

CASES = {
    "no-labels": dict(label_share=0.0, kw={}),
    "labels": dict(label_share=0.1, kw={"system_bias": False}),
    "labels+delta": dict(label_share=0.1, kw={}),
    "votes": dict(label_share=1.0, kw={}, votes=True),
}


def fit(df, truth, case: str, seed: int, tune: int, accept: float) -> dict:
    import arviz as az

    import bayes_judge as bj

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        idata = bj.leaderboard(df, seed=seed, tune=tune, target_accept=accept, pointwise=False, bridge=False,
                               **CASES[case]["kw"])
        wall = time.perf_counter() - t
    names = [v for v in idata.posterior.data_vars if idata.posterior[v].ndim >= 2]
    have = [v for v in ("s", "alpha") if v in idata.posterior]  # people's votes alone: no accuracy
    bulk = az.ess(idata, var_names=have)
    tail = az.ess(idata, var_names=have, method="tail")
    s = bj.leaderboard_summary(idata).set_index("system")
    tr = truth[s.index]
    return {"case": case, "tune": tune, "target_accept": accept, "seed": seed, "wall_s": wall,
            "steps_per_draw": float(idata.sample_stats["n_steps"].mean()),
            "divergences": int(idata.sample_stats["diverging"].sum()),
            "ess_scores_min": float(bulk["s"].min()), "ess_alpha_min": float(bulk["alpha"].min()) if "alpha" in have else float("nan"),
            "tail_ess_min": float(min(tail[v].min() for v in have)),
            "r_hat_max": float(az.rhat(idata, var_names=names).to_array().max()),
            "coverage": float(((s["hdi_low"] <= tr) & (tr <= s["hdi_high"])).mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", default="1000000", help="table sizes (comma-separated)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--tunes", default="1000,300")
    ap.add_argument("--accepts", default="0.8", help="target_accept values (comma-separated)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_leaderboard_tune.json")
    args = ap.parse_args()

    import bayes_judge as bj
    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    grid = [(int(t), float(a)) for t in args.tunes.split(",") for a in args.accepts.split(",")]
    rows = []
    sizes = [int(float(n)) for n in args.comparisons.split(",")]
    for n_cmp, case in ((n, case) for n in sizes for case in args.cases.split(",")):
        c = CASES[case]
        df, truth = simulate_leaderboard(args.systems, n_cmp, **THREE_JUDGES, design="one-judge", label_share=c["label_share"], seed=0)
        if c.get("votes"):  # people's own preference as the votes, no judge between
            df = df.assign(winner=df["human"], judge="human").drop(columns=["human", "p_a"], errors="ignore")
        elif c["label_share"] == 0:
            df = df.drop(columns="human")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # every kernel this table runs loaded (or compiled): from 20,000 cells the sampler's is single precision
            bj.leaderboard(df, seed=0, chains=1, draws=1, tune=1, pointwise=False, bridge=False, **c["kw"])
        for seed in range(1, args.seeds + 1):
            for tune, accept in grid:  # alternating, so every setting sees the same machine
                rows.append({"comparisons": n_cmp, **fit(df, truth, case, seed, tune, accept)})
                print(json.dumps(rows[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/bench_leaderboard_tune.py " + " ".join(sys.argv[1:])
    args.out.write_text(json.dumps({"systems": args.systems, "comparisons": sizes, "command": command,
                                    "rows": rows}, indent=1))
    cols = ["comparisons", "case", "tune", "target_accept", "seed", "wall_s", "steps_per_draw", "divergences", "ess_scores_min", "ess_alpha_min",
            "tail_ess_min", "r_hat_max", "coverage"]
    fmt = {"comparisons": "{:,}", "wall_s": "{:.1f} s", "steps_per_draw": "{:.1f}", "ess_scores_min": "{:.0f}", "ess_alpha_min": "{:.0f}",
           "tail_ess_min": "{:.0f}", "r_hat_max": "{:.4f}", "coverage": "{:.1%}"}
    lines = ["# NUTS on a leaderboard's fast path: tuning steps and target acceptance "
             "(`benchmarks/bench_leaderboard_tune.py`)",
             "", f"Command: `{command.strip()}`; {args.systems} systems, comparisons by three "
             "judges, `bridge=False`; 4 chains x 1000 kept draws after `tune` steps, `target_accept` as given; 2 cores, one process, kernels "
             "compiled; ESS of 4,000 draws (bulk for the scores and accuracies; tail: the lowest of either); r_hat: "
             "every sampled variable.", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt.get(k, "{}").format(r[k]) for k in cols) + " |")
    if len(grid) == 2:  # each pair side by side: the second setting's wall over the first's
        key = ("comparisons", "case", "seed")
        first = {tuple(r[k] for k in key): r for r in rows if (r["tune"], r["target_accept"]) == grid[0]}
        ratios = [f"{r['comparisons']:,} {r['case']} seed {r['seed']}: {r['wall_s'] / first[tuple(r[k] for k in key)]['wall_s']:.2f}"
                  for r in rows if (r["tune"], r["target_accept"]) == grid[1]]
        lines += ["", f"Wall of tune {grid[1][0]}, target_accept {grid[1][1]} over tune {grid[0][0]}, target_accept "
                  f"{grid[0][1]}: " + "; ".join(ratios) + "."]
    md = "\n".join(lines) + "\n"
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
