"""Win rates over a million judgment rows: wall time and peak memory (issue: ≤ 4 GB).

Simulates ``--items`` items judged by ``--judges`` judges in both presentation orders
(``2 · items · judges`` rows; 62,500 × 8 × 2 = 1,000,000 by default) with a share of them
human-labelled, fits ``bj.win_rate`` with the recommended estimator, Dawid-Skene without
labels and the no-label default (the consensus model, on the table without its ``human``
column), and reports the wall time of each step and the process's peak resident memory.
The likelihood depends on the data only through the verdict-pattern histogram, and per-item
arrays per draw are left out at this size (``pointwise=None``), so memory stays flat.

Usage::

    .venv/bin/python benchmarks/bench_winrate_scale.py                 # 1,000,000 rows
    .venv/bin/python benchmarks/bench_winrate_scale.py --items 6250    # 100,000 rows

Writes ``benchmarks/results/bench_winrate_scale.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

import bayes_judge as bj

OUT = Path(__file__).resolve().parent / "results" / "bench_winrate_scale"


NOTE = (
    "The simulated judges err independently given the truth, with accuracies that differ by class "
    "(q0 from 0.65 to 0.85 over the judges, q1 the reverse). The consensus model puts p at "
    "1/2 + (p_c - 1/2) / kappa with kappa in (0, 1], so its interval never reaches nearer 1/2 than the "
    "rate p_c at which the judges' consensus prefers G0; it reads p_c through one-coin judges, and "
    "where their accuracies differ by class that reading is biased. At a few hundred items the bias "
    "is within p_c's own uncertainty; at tens of thousands of items it is not, and where the "
    "consensus overstates G0's lead the interval misses the truth from above. Human labels "
    "(the recommended estimator) remove it."
)


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # Linux: KiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=62_500)
    ap.add_argument("--judges", type=int, default=8)
    ap.add_argument("--label-share", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    t = time.perf_counter()
    q = np.linspace(0.65, 0.85, args.judges)
    df = bj.simulate_win_rate(args.items, p=0.7, q0=q, q1=q[::-1], swap=True, seed=args.seed)
    keep = df["item"] % int(round(1 / args.label_share)) == 0
    df["human"] = df["human"].where(keep, None)
    rows.append({"step": f"simulate {len(df):,} rows", "seconds": time.perf_counter() - t, "peak_gb": peak_gb()})
    for name, kw, data in (
        ("win_rate, recommended (label regression)", {}, df),
        ("win_rate, dawid-skene, no labels", dict(method="dawid-skene", prior="none"), df),
        ("win_rate, default with no labels (consensus model)", {}, df.drop(columns="human")),
    ):
        t = time.perf_counter()
        fit = bj.win_rate(data, seed=args.seed, **kw)
        s = bj.win_rate_summary(fit, hdi_prob=0.9).iloc[0]
        rows.append({"step": name, "seconds": time.perf_counter() - t, "peak_gb": peak_gb(),
                     "p_mean": float(s["p_mean"]), "hdi": [float(s["hdi_low"]), float(s["hdi_high"])],
                     "truth": float(df.attrs["truth"]["p_hat"]), "r_hat": float(s["r_hat"]),
                     "n_patterns": int(fit.attrs.get("n_patterns", 0)),
                     "pointwise": "log_likelihood" in fit.groups()})
    lines = ["| step | seconds | peak RSS (GB) | result | 90% interval covers the truth |", "|---|---:|---:|---|---|"]
    for r in rows:
        res = (f"p {r['p_mean']:.3f} [{r['hdi'][0]:.3f}, {r['hdi'][1]:.3f}] (truth {r['truth']:.3f}), "
               f"r_hat {r['r_hat']:.3f}, {r['n_patterns']} patterns" if "p_mean" in r else "")
        covers = ("yes" if r["hdi"][0] <= r["truth"] <= r["hdi"][1] else "no") if "p_mean" in r else ""
        lines.append(f"| {r['step']} | {r['seconds']:.1f} | {r['peak_gb']:.2f} | {res} | {covers} |")
    table = "\n".join(lines) + "\n\n" + NOTE
    print(table)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2))
    OUT.with_suffix(".md").write_text(
        "# Win rates at scale\n\nCommand: `.venv/bin/python benchmarks/bench_winrate_scale.py "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()) + "`\n\n" + table + "\n")


if __name__ == "__main__":
    main()
