"""Benchmark: a leaderboard's first fit after installing, numba's cache empty.

``--systems`` systems (200) and ``--comparisons`` battles (1,000,000) judged by three judges (as
``bench_leaderboard_laplace.py``'s ``judges-no-labels`` case), fitted by ``bj.leaderboard`` in a
fresh process whose ``NUMBA_CACHE_DIR`` is a new empty folder (every kernel compiles: the first
run after ``pip install``), with NUTS and with ``sampler="laplace"``; then once more with that
cache warm.  With ``--vs`` another checkout is timed the same way, the two alternating
(``--rounds``), so that both see the same machine.  Wall times of the whole process (imports,
reading, compiling, fitting).

Usage::

    .venv/bin/python benchmarks/bench_first_run.py --vs /tmp/old --rounds 2     # ~10 min on 2 cores

Writes ``benchmarks/results/bench_first_run.{json,md}`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

FIT = r"""
import sys, warnings
sys.path.insert(0, sys.argv[1])
import pandas as pd
import bayes_judge as bj
assert bj.__file__.startswith(sys.argv[1]), bj.__file__
df = pd.read_parquet(sys.argv[2])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    bj.leaderboard(df, sampler=sys.argv[3], seed=1, pointwise=False, bridge=False)
"""


def timed_process(cmd: list[str], env: dict | None = None) -> float:
    """Wall seconds of a fresh process running ``cmd`` (in the temporary folder); its error, if it fails."""
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return time.perf_counter() - t


def timed(repo: str, path: Path, sampler: str, cache: str) -> float:
    return timed_process([sys.executable, "-c", FIT, repo, str(path), sampler],
                         env={**os.environ, "NUMBA_CACHE_DIR": cache})


def main(argv: list[str] | None = None) -> dict:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--samplers", default="nutpie,laplace")
    ap.add_argument("--vs", default=None, help="another checkout, timed beside this one")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_first_run.json"))
    args = ap.parse_args(argv)
    repos = {"this checkout": str(ROOT)} | ({f"--vs {args.vs}": str(Path(args.vs).resolve())} if args.vs else {})
    res: dict = {"systems": args.systems, "comparisons": args.comparisons, "rounds": args.rounds,
                 "command": "python benchmarks/bench_first_run.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        df, _ = simulate_leaderboard(args.systems, args.comparisons, **THREE_JUDGES, design="one-judge", label_share=0.0, seed=0)
        path = Path(tmp) / "df.parquet"
        df.drop(columns="human").to_parquet(path)
        got: dict = {}
        for rnd in range(args.rounds):
            for sampler in args.samplers.split(","):
                for label, repo in repos.items():
                    cache = tempfile.mkdtemp(dir=tmp)
                    first = timed(repo, path, sampler, cache)
                    warm = timed(repo, path, sampler, cache)
                    got.setdefault((sampler, label), []).append((first, warm))
                    print(f"round {rnd + 1} {sampler} {label}: first run {first:.1f} s, cache warm {warm:.1f} s",
                          flush=True)
    for (sampler, label), runs in got.items():
        res["rows"].append({"sampler": sampler, "checkout": label, "first_s": [r[0] for r in runs],
                            "warm_s": [r[1] for r in runs], "first_median_s": float(np.median([r[0] for r in runs])),
                            "warm_median_s": float(np.median([r[1] for r in runs]))})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    md = markdown(res)
    out.with_suffix(".md").write_text(md)
    print(md)
    return res


def markdown(res: dict) -> str:
    lines = ["# A leaderboard's first fit, numba's cache empty (`benchmarks/bench_first_run.py`)", "",
             f"Command: `{res['command']}`; {res['systems']} systems, {res['comparisons']:,} comparisons by three "
             "judges, no labels; wall time of a fresh process (imports, reading, compiling, fitting), its "
             "`NUMBA_CACHE_DIR` a new empty folder, then once more with that cache warm; checkouts alternating, "
             f"{res['rounds']} round(s); 2 cores.", "",
             "| sampler | checkout | first run | cache warm | first runs, each |", "|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['sampler']} | {r['checkout']} | {r['first_median_s']:.1f} s | {r['warm_median_s']:.1f} s | "
                     + " / ".join(f"{x:.1f}" for x in r["first_s"]) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
