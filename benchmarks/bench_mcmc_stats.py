"""Benchmark: R-hat, ESS and MCSE of many quantities, ``bayes_judge.inference.mcmc_stats`` against ArviZ.

Every NUTS fit checks its convergence (R-hat and bulk ESS of its scores), and every summary
(``bj.leaderboard_summary``, ``bj.score_summary``, ``bj.win_rate_summary``, the report's
parameter table) reports them. ArviZ computes them one quantity at a time; ``mcmc_stats`` computes
the same numbers for all quantities in one pass of array operations.  For draws of shape
(4 chains, 1000 draws, Q) with Q = ``--sizes`` (200: a leaderboard's scores; 810: the judges'
model's parameters; 3,000: a ranking of 3,000 texts) it times, in one process, alternating,
the median of ``--repeats``:

* ``rhat + ess_bulk``: ``az.rhat`` and ``az.ess(method="bulk")`` against ``mcmc_stats.rhat_ess_bulk``
  (the convergence check, the summaries);
* ``ess_mean``: ``az.ess(method="mean")`` against ``mcmc_stats.ess_mean`` (the relative
  efficiency of ``bj.compare_models``' PSIS-LOO);
* ``summary diagnostics``: ``az.summary(kind="diagnostics")`` against ``mcmc_stats.diagnostics``
  (mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat; the report),

and the largest relative difference of their numbers.  The draws are AR(1) chains (φ = 0.5)
with a tenth of the quantities resampled from 1,000 values (ties, as a Laplace fit's draws have).

Usage::

    .venv/bin/python benchmarks/bench_mcmc_stats.py              # ~1 min on 2 cores

Writes ``benchmarks/results/bench_mcmc_stats.{json,md}`` and prints the table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_leaderboard_laplace import write  # noqa: E402


def draws(q: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.normal(size=(4, 1000, q))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, x.shape[1]):
        x[:, t] = 0.5 * x[:, t - 1] + e[:, t]
    k = max(1, q // 10)
    x[..., :k] = rng.normal(size=(1000, k))[rng.integers(0, 1000, size=(4, 1000, k)), np.arange(k)]
    return x


def main(argv: list[str] | None = None) -> dict:
    import arviz as az

    from bayes_judge.inference import mcmc_stats as ms

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="200,810,3000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_mcmc_stats.json"))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")

    def arviz_pair(x):
        d = az.from_dict(posterior={"x": x}).posterior
        return az.rhat(d)["x"].to_numpy(), az.ess(d, method="bulk")["x"].to_numpy()

    def arviz_mean(x):
        return az.ess(az.from_dict(posterior={"x": x}).posterior, method="mean")["x"].to_numpy()

    def arviz_summary(x):
        s = az.summary(az.from_dict(posterior={"x": x}), kind="diagnostics", round_to="none")
        return {k: s[k].to_numpy() for k in ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat")}

    def ours_summary(x):
        return {k: v.ravel() for k, v in ms.diagnostics(x).items()}

    tasks = {"rhat + ess_bulk": (arviz_pair, ms.rhat_ess_bulk), "ess_mean": (arviz_mean, ms.ess_mean),
             "summary diagnostics": (arviz_summary, ours_summary)}
    rows = []
    for q in (int(s) for s in args.sizes.split(",")):
        x = draws(q)
        for name, (ref, ours) in tasks.items():
            a, b = ref(x), ours(x)  # warm, and the numbers compared
            pa = list(a.values()) if isinstance(a, dict) else list(a) if isinstance(a, tuple) else [a]
            pb = list(b.values()) if isinstance(b, dict) else list(b) if isinstance(b, tuple) else [b]
            diff = max(float(np.nanmax(np.abs(u - v) / np.abs(u))) for u, v in zip(pa, pb, strict=True))
            t_ref, t_ours = [], []
            for _ in range(args.repeats):
                t = time.perf_counter()
                ref(x)
                t_ref.append(time.perf_counter() - t)
                t = time.perf_counter()
                ours(x)
                t_ours.append(time.perf_counter() - t)
            row = {"quantities": q, "task": name, "arviz_s": statistics.median(t_ref),
                   "mcmc_stats_s": statistics.median(t_ours), "max_rel_diff": diff}
            row["ratio"] = row["mcmc_stats_s"] / row["arviz_s"]
            rows.append(row)
            print(f"{q:>5} {name:<20} arviz {row['arviz_s']:.3f} s  mcmc_stats {row['mcmc_stats_s']:.3f} s  "
                  f"ratio {row['ratio']:.2f}  max rel diff {diff:.1e}", flush=True)
    command = "python benchmarks/bench_mcmc_stats.py " + " ".join(argv if argv is not None else sys.argv[1:])
    res = {"command": command.strip(), "rows": rows, "arviz": az.__version__}
    md = ["# R-hat, ESS and MCSE of many quantities (`benchmarks/bench_mcmc_stats.py`)", "",
          f"Command: `{res['command']}`; draws of 4 chains x 1000, AR(1) with a tenth of the quantities "
          f"resampled (ties); ArviZ {az.__version__}; one process, alternating, the median of {args.repeats}.", "",
          "| quantities | task | ArviZ | mcmc_stats | ratio | largest relative difference |", "|---|---|---|---|---|---|"]
    md += [f"| {r['quantities']:,} | {r['task']} | {r['arviz_s']:.3f} s | {r['mcmc_stats_s']:.3f} s | "
           f"{r['ratio']:.2f} | {r['max_rel_diff']:.1e} |" for r in rows]
    write(Path(args.out), res, "\n".join(md) + "\n")
    return res


if __name__ == "__main__":
    main()
