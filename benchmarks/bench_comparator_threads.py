"""The embedded judge's CPU threads, side by side on an idle and on a busy machine.

Each run is a fresh process that loads the embedded judge and times ``Comparator.compare`` on
the same SummEval comparisons (coherence prompts of article 0, ``--comparisons`` of them) with
``threads=None`` (torch's default: every core), ``"auto"`` (the cores the load leaves free) and
``1``.  "busy": as many pure-Python busy loops as the machine has cores run beside it (another
job, a test worker); "busy-blas": as many processes of numpy matrix products (another numeric job,
whose BLAS threads spin at their barriers as torch's do).  Rounds alternate the settings; the table gives each one's median and its
ratio to torch's default in the same condition.

Usage::

    .venv/bin/python benchmarks/bench_comparator_threads.py [--comparisons 8] [--rounds 2]

Writes ``benchmarks/results/bench_comparator_threads.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "bench_comparator_threads"

def _busy(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10000))


def _blas(stop) -> None:
    """Another numeric job: matrix products in numpy, whose BLAS threads spin while they wait."""
    import numpy as np

    a = np.random.default_rng(0).random((400, 400))
    while not stop.is_set():
        a @ a


def one(setting: str, n: int) -> float:
    code = f"""
import sys, time, warnings
warnings.simplefilter("ignore")
from bayes_judge.comparator import Comparator
from bayes_judge.datasets import summeval
import pandas as pd
summ, ctx = summeval.texts(articles=1)
item = next(iter(ctx))
cands = sorted(summ["candidate"])[:6]
pairs = pd.DataFrame([(item, a, b) for i, a in enumerate(cands) for b in cands[i + 1:]],
                     columns=["item", "a", "b"]).head({n})
threads = None if {setting!r} == "torch" else ("auto" if {setting!r} == "auto" else int({setting!r}))
judge = Comparator(template="summeval-coherence", threads=threads)
t0 = time.perf_counter()
df = judge.compare(pairs, summ, ctx, progress=False)
print(time.perf_counter() - t0, df.attrs.get("threads"))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return float(out[-2])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--comparisons", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    settings = ["torch", "auto", "1"]
    rows = []
    for condition in ("idle", "busy", "busy-blas"):
        stop, procs = mp.Event(), []
        if condition != "idle":
            load = _busy if condition == "busy" else _blas
            procs = [mp.Process(target=load, args=(stop,)) for _ in range(cores)]
            for p in procs:
                p.start()
            time.sleep(65)  # let the 1-minute load average see them
        times: dict[str, list[float]] = {s: [] for s in settings}
        try:
            for _ in range(args.rounds):
                for s in settings:
                    times[s].append(one(s, args.comparisons))
                    print(f"{condition:9s} threads={s:5s} {times[s][-1]:7.2f} s", flush=True)
        finally:
            stop.set()
            for p in procs:
                p.join()
        base = statistics.median(times["torch"])
        for s in settings:
            m = statistics.median(times[s])
            rows.append({"condition": condition, "threads": s, "median_s": m, "runs_s": times[s],
                         "vs_torch_default": m / base})
    lines = ["# The embedded judge's CPU threads, idle and busy machine", "",
             f"Command: `python benchmarks/bench_comparator_threads.py {' '.join(sys.argv[1:] if argv is None else argv)}`"
             f" ({cores} cores; {args.comparisons} SummEval comparisons a run, each run a fresh process; median of "
             f"{args.rounds} alternating rounds; busy = {cores} pure-Python busy loops beside it; busy-blas = {cores} "
             "processes of numpy matrix products, whose BLAS threads spin while they wait)", "",
             "| machine | threads | median s | runs | time / torch default |", "|---|---|---|---|---|"]
    lines += [f"| {r['condition']} | {r['threads']} | {r['median_s']:.2f} | "
              f"{', '.join(f'{t:.2f}' for t in r['runs_s'])} | {r['vs_torch_default']:.2f} |" for r in rows]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    OUT.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
