"""Benchmark: ``bj.leaderboard(new_rows, previous=run)`` against a cold fit of all the rows.

``--systems`` systems (200), ``--comparisons`` battles (1,000,000), one verdict a battle by three
judges with different accuracies, position biases and ties, people's label on 10% (as in
``bench_leaderboard_laplace.py``); the earlier fit has the first 90% of the rows, the update adds
the last 10%. Timed in this process (numba's cache warm, after a warm-up fit): the update and a
cold fit of all the rows, with NUTS (the default sampler) and with ``sampler="laplace"``
(``system_bias=False``); and the largest difference of the scores' posterior means between the
two, in posterior standard deviations, and the ratio of their standard deviations.

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_update.py          # ~4 min on 2 cores
    .venv/bin/python benchmarks/bench_leaderboard_update.py --comparisons 100000

Writes ``benchmarks/results/bench_leaderboard_update.{json,md}``.
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


def main(argv: list[str] | None = None) -> dict:

    import bayes_judge as bj
    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--new-share", type=float, default=0.1)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_leaderboard_update.json"))
    args = ap.parse_args(argv)
    df, _ = simulate_leaderboard(args.systems, args.comparisons, **THREE_JUDGES, design="one-judge", label_share=0.1, seed=0)
    cut = int(len(df) * (1 - args.new_share))
    old, new = df.iloc[:cut], df.iloc[cut:]
    rows = []
    # the joint model of judges and labels for both (with labels the default learns the score
    # bridge from them, a second model sampled by NUTS)
    for label, kw in (("NUTS", {"bridge": False}), ("laplace", {"sampler": "laplace", "system_bias": False})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bj.leaderboard(df.iloc[:20_000], pointwise=False, **kw)  # warm-up: compiled kernels
            first = bj.leaderboard(old, seed=1, pointwise=False, **kw)
            t = time.perf_counter()
            upd = bj.leaderboard(new, previous=first, seed=2, pointwise=False, **kw)
            t_upd = time.perf_counter() - t
            t = time.perf_counter()
            cold = bj.leaderboard(df, seed=2, pointwise=False, **kw)
            t_cold = time.perf_counter() - t
        a = bj.leaderboard_summary(upd).set_index("system")
        b = bj.leaderboard_summary(cold).set_index("system").loc[a.index]
        row = {"sampler": label, "update_s": t_upd, "cold_s": t_cold, "ratio": t_upd / t_cold,
               "max_mean_diff_sd": float(((a["mean"] - b["mean"]).abs() / b["sd"]).max()),
               "sd_ratio_min": float((a["sd"] / b["sd"]).min()), "sd_ratio_max": float((a["sd"] / b["sd"]).max())}
        rows.append(row)
        print(row, flush=True)
    command = "python benchmarks/bench_leaderboard_update.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = ["# Updating a leaderboard with new battles (`benchmarks/bench_leaderboard_update.py`)", "",
             f"Command: `{command}`; {args.systems} systems, {args.comparisons:,} battles, the last "
             f"{args.new_share:.0%} added to a fit of the rest; 2 cores, one process, kernels compiled.", "",
             "| sampler | update | cold fit of all rows | update / cold | largest gap of the score means (posterior sd) "
             "| sd ratio update / cold |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['sampler']} | {r['update_s']:.1f} s | {r['cold_s']:.1f} s | {r['ratio']:.2f} | "
                     f"{r['max_mean_diff_sd']:.3f} | {r['sd_ratio_min']:.2f}-{r['sd_ratio_max']:.2f} |")
    out = Path(args.out)
    res = {"args": vars(args), "rows": rows, "command": command}
    out.write_text(json.dumps(res, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return res


if __name__ == "__main__":
    main()
