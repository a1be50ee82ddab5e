"""Speed of the no-label win rate in a fresh process, import and data included.

Three workloads: issue 30's targets, 10 pairs of 5 systems × 100 items × 5 judges in both orders
(simulated, ≤ 3 s) and SummEval's 66 pairs × 100 articles × 9 LLM judges (``bayes_judge.datasets
.natural``, ≤ 5 s); and a million rows of one pair (simulated; no consensus model there).  Each is timed as a whole ``python -c`` process (``--rounds`` times, the
median kept) for the default (``estimand="human"``: the bridge), ``estimand="judges"`` and, as
the reference, the consensus Dawid-Skene model that was the default before (NUTS, 4 × 1000).

Usage::

    .venv/bin/python benchmarks/bench_winrate_nolabel.py [--rounds 3] [--no-consensus]

Writes ``benchmarks/results/bench_winrate_nolabel.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "bench_winrate_nolabel"

LOAD = {
    "10 pairs x 100 items x 5 judges": (
        "import numpy as np, pandas as pd\n"
        "rng = np.random.default_rng(0)\n"
        "S = ['s0','s1','s2','s3','s4']\n"
        "rows = [(i, S[x], S[y], f'j{j}', o) for x in range(5) for y in range(x+1, 5) for i in range(100)"
        " for j in range(5) for o in (0, 1)]\n"
        "df = pd.DataFrame(rows, columns=['item','x','y','judge','o'])\n"
        "df['item'] = df['x'] + df['y'] + '-' + df['item'].astype(str)\n"
        "first = df['o'] == 0\n"
        "df['a'] = np.where(first, df['x'], df['y']); df['b'] = np.where(first, df['y'], df['x'])\n"
        "win_x = rng.random(len(df)) < 0.65\n"
        "df['winner'] = np.where(win_x == first, 'a', 'b')\n"
        "df = df[['item','a','b','judge','winner']]\n"
    ),
    "1,000,000 rows: 1 pair x 100,000 items x 5 judges x 2 orders": (
        "df = bj.simulate_win_rate(100000, p=0.7, q0=[0.8, 0.75, 0.9, 0.85, 0.7], swap=True, seed=0)"
        ".drop(columns='human')\n"
    ),
    "SummEval: 66 pairs x 100 articles x 9 judges": (
        "from bayes_judge.datasets import natural\n"
        "df = natural.system_pairs('summeval', 'coherence').assign(human=None)  # no labels\n"
    ),
}
FITS = {
    "default (human, bridge)": "fit = bj.win_rate(df)",
    "estimand='judges'": "fit = bj.win_rate(df, estimand='judges')",
    "consensus model (NUTS, the old default)": (
        "fit = bj.win_rate(df, method='dawid-skene', ds_model='consensus', prior='none')"),
}


def one(load: str, fit: str) -> float:
    code = ("import time; t0 = time.perf_counter()\nimport warnings; warnings.simplefilter('ignore')\n"
            "import bayes_judge as bj\n" + load + fit + "\nbj.win_rate_summary(fit)\n")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-consensus", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for wname, load in LOAD.items():
        for fname, fit in FITS.items():
            if "consensus" in fname and (args.no_consensus or wname.startswith("1,000,000")):
                continue  # (NUTS on a million rows is not the comparison this table makes)
            times = [one(load, fit) for _ in range(args.rounds)]
            rows.append({"workload": wname, "fit": fname, "median_s": statistics.median(times), "runs_s": times})
            print(f"{wname:48s} {fname:42s} {statistics.median(times):7.2f} s", flush=True)
    lines = ["# No-label win rate: a fresh process, import and data included", "",
             f"Command: `python benchmarks/bench_winrate_nolabel.py {' '.join(sys.argv[1:] if argv is None else argv)}`"
             f" ({args.rounds} rounds, median)", "", "| workload | fit | median s | runs |", "|---|---|---|---|"]
    lines += [f"| {r['workload']} | {r['fit']} | {r['median_s']:.2f} | "
              f"{', '.join(f'{t:.2f}' for t in r['runs_s'])} |" for r in rows]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    OUT.with_suffix(".json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
