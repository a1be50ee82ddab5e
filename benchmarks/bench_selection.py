"""Benchmark: greedy D-optimal comparison selection, N = 1000, 5N picks (target <= 10 s).

``bj.select_comparisons(1000, k, method="greedy-d-optimal")`` (seed 004 eq. 15-17, A.6), timed with
``time.perf_counter`` around the whole call (input checks, the striped-diagonal start of eq. 45,
one dense inverse of W̃ᵀW̃, the greedy picks with Sherman-Morrison updates, the DataFrame):

* ``k = 5N``           : 5000 comparisons in all, the N-1 = 999 start links included;
* ``k = (N-1) + 5N``   : the start links plus 5N = 5000 greedy picks.

Each row is the best and the median of ``--repeats`` calls in this process (the first call is a
repeat like the others: nothing is compiled).  The Sherman-Morrison-maintained inverse A after the
last pick is compared with ``numpy.linalg.inv`` of W̃ᵀW̃ (max |ΔA| / max |A|).  For scale, the
three random strategies (seed 001 §3.4) at k = 5N are timed too.  The load average before and
after is recorded: other work on the machine inflates every wall time.

Usage::

    .venv/bin/python benchmarks/bench_selection.py            # N = 1000, 3 repeats
    .venv/bin/python benchmarks/bench_selection.py --n 200 --repeats 1

Writes ``benchmarks/results/bench_selection.json`` (or ``--out``) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bayes_judge.selection import _gram, _greedy, _striped_start, select_comparisons  # noqa: E402

TARGET_S = 10.0


def _time(fn, repeats: int) -> list[float]:
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
    return walls


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "bench_selection.json"
    )
    args = parser.parse_args(argv)
    n, repeats = args.n, args.repeats
    command = (
        ".venv/bin/python benchmarks/bench_selection.py"
        + (f" --n {n}" if n != 1000 else "")
        + (f" --repeats {repeats}" if repeats != 3 else "")
    )
    load_before = os.getloadavg()

    rows = []
    for label, k in (
        ("greedy-d-optimal, k = 5N", 5 * n),
        ("greedy-d-optimal, k = (N-1) + 5N", 6 * n - 1),
    ):
        walls = _time(lambda k=k: select_comparisons(n, k, method="greedy-d-optimal"), repeats)
        rows.append(
            {
                "case": label,
                "method": "greedy-d-optimal",
                "n": n,
                "k": k,
                "greedy_picks": k - (n - 1),
                "best_s": min(walls),
                "median_s": statistics.median(walls),
                "walls_s": walls,
            }
        )
    for method in ("random", "no-repeat", "symmetric"):
        k = 5 * n
        walls = _time(lambda m=method, k=k: select_comparisons(n, k, method=m, seed=0), repeats)
        rows.append(
            {
                "case": f"{method}, k = 5N",
                "method": method,
                "n": n,
                "k": k,
                "greedy_picks": 0,
                "best_s": min(walls),
                "median_s": statistics.median(walls),
                "walls_s": walls,
            }
        )

    # accuracy of the Sherman-Morrison-maintained inverse after 5N greedy picks
    empty = np.zeros(0, dtype=np.intp)
    sa, sb = _striped_start(n, empty, empty)
    ga, gb, a_sm = _greedy(n, sa, sb, 5 * n)
    a_direct = np.linalg.inv(_gram(n, np.concatenate([sa, ga]), np.concatenate([sb, gb])))
    sm_rel_err = float(np.abs(a_sm - a_direct).max() / np.abs(a_direct).max())
    load_after = os.getloadavg()

    result = {
        "command": command,
        "target_s": TARGET_S,
        "rows": rows,
        "sherman_morrison_max_rel_err": sm_rel_err,
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"command: {command}\n")
    print("| case | N | k | greedy picks | best s | median s | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        target = (
            f"<= {TARGET_S:.0f} s: {'met' if r['best_s'] <= TARGET_S else 'MISSED'}"
            if (r["method"] == "greedy-d-optimal")
            else ""
        )
        print(
            f"| {r['case']} | {r['n']} | {r['k']} | {r['greedy_picks']} | {r['best_s']:.3f} "
            f"| {r['median_s']:.3f} | {target} |"
        )
    print(
        f"\nSherman-Morrison A vs direct inverse after {5 * n} greedy picks: "
        f"max |ΔA| / max |A| = {sm_rel_err:.1e}"
    )
    print(
        f"load average before / after: {load_before[0]:.2f} / {load_after[0]:.2f} "
        f"({os.cpu_count()} cores); wrote {args.out}"
    )
    return result


if __name__ == "__main__":
    main()
