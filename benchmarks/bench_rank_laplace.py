"""Benchmark: ``bj.rank(..., bayesian=True, sampler="laplace")`` against NUTS on real judgments.

Data: the bundled SummEval (12 systems a article, coherence) or HANNA (11 a prompt) judgments of
one judge setting (``benchmarks/leaderboard_real.py``'s first; every ordered pair of the systems
of a prompt, ``p_a`` from the judge's scores), the first ``--articles`` prompts: a soft
Bradley-Terry ranking (``poe-bt``) of every (prompt, system) text, one score a text (12 a
SummEval article, so 40 articles are 480 scores and the position shift: 481 coordinates).

For each checkout (this one, and with ``--vs REPO`` another one's package, e.g. a ``git worktree
add /tmp/old <commit>``, in the same run): Laplace fits with seeds ``1..--seeds`` in one fresh
process, against one NUTS fit of 4 × ``--ref-draws`` draws (made once, by this checkout):
the share of texts whose 90% interval endpoints are within 10% of NUTS's width of NUTS's (mean
and worst seed), the largest gap (mean and worst), the proposals weighed (``info["evaluated"]``),
the importance ESS, the fits the weights left NOT corrected, and the median wall time of a fit
after the first.  From 100 coordinates on a Laplace fit's Stein steps take the curvature at their
new mean (``bayes_judge.inference.laplace.CURVED_FROM``), which this measures on real judges.

Usage::

    .venv/bin/python benchmarks/bench_rank_laplace.py                           # ~1 min
    .venv/bin/python benchmarks/bench_rank_laplace.py --articles 40 --vs /tmp/old

Writes ``benchmarks/results/bench_rank_laplace.{json,md}`` (or ``--out``) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_leaderboard_laplace import write  # noqa: E402

WORKER = r"""
import json, statistics, sys, time, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
import numpy as np, pandas as pd
import bayes_judge as bj
assert bj.__file__.startswith(sys.argv[1]), bj.__file__
from bayes_judge.analysis.summary import score_summary
from bayes_judge.inference import laplace
from leaderboard_real import SETS, load
name, articles, seeds, ref_draws, ref = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
df, _ = load(name)
df = df[df["judge"] == SETS[name]["judges"][0]].drop(columns=["human", "judge"], errors="ignore")
df = df[df["item"].isin(sorted(df["item"].unique())[:articles])]
key = ["item", "candidate"]
if ref.endswith(".new"):  # the NUTS reference, made once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = bj.rank(df, method="poe-bt", bayesian=True, seed=1, chains=4, draws=ref_draws, tune=1000)
    score_summary(nuts, hdi_prob=0.9).to_json(ref[:-4])
b = pd.read_json(ref.removesuffix(".new")).set_index(key)
infos = []
_draws = laplace.laplace_draws
def kept(*a, **k):
    z, info = _draws(*a, **k); infos.append(info); return z, info
laplace.laplace_draws = kept
rows = []
for seed in range(1, seeds + 1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        fit = bj.rank(df, method="poe-bt", bayesian=True, sampler="laplace", seed=seed)
        wall = time.perf_counter() - t
    a = score_summary(fit, hdi_prob=0.9).set_index(key)
    r = b.loc[a.index]
    width = r["hdi_high"] - r["hdi_low"]
    err = np.maximum((a["hdi_low"] - r["hdi_low"]).abs(), (a["hdi_high"] - r["hdi_high"]).abs()) / width
    info = infos[-1]
    rows.append({"wall": wall, "within": float((err <= 0.1).mean()), "gap": float(err.max()),
                 "evaluated": info.get("evaluated", float("nan")), "ess": info["ess_importance"],
                 "not_corrected": not info["resampled"], "coordinates": len(info["mode"])})
print(json.dumps({"rows": len(df), "fits": rows}))
"""


def run(root: Path, args: argparse.Namespace, ref: str) -> dict:
    r = subprocess.run([sys.executable, "-c", WORKER, str(root), str(HERE), args.set, str(args.articles),
                        str(args.seeds), str(args.ref_draws), ref], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    res = json.loads(r.stdout.strip().splitlines()[-1])
    fits = res["fits"]
    return {"checkout": str(root), "rows": res["rows"], "coordinates": fits[0]["coordinates"],
            "within_mean": sum(f["within"] for f in fits) / len(fits), "within_min": min(f["within"] for f in fits),
            "gap_mean": sum(f["gap"] for f in fits) / len(fits), "gap_max": max(f["gap"] for f in fits),
            "evaluated": [f["evaluated"] for f in fits], "ess": [round(f["ess"]) for f in fits],
            "not_corrected": sum(f["not_corrected"] for f in fits),
            "wall_median_s": statistics.median(f["wall"] for f in fits[1:] or fits), "fits": fits}


def markdown(res: dict, command: str) -> str:
    lines = ["# `bj.rank(..., bayesian=True, sampler=\"laplace\")` against NUTS on real judgments "
             "(`benchmarks/bench_rank_laplace.py`)", "",
             f"Command: `{command}`; {res['set']}, the first {res['articles']} prompts, one judge setting, soft "
             f"Bradley-Terry (`poe-bt`); Laplace fit seeds 1-{res['seeds']} against one NUTS fit of 4 × "
             f"{res['ref_draws']} draws; the wall time is the median of the fits after the first; 2 cores.", "",
             "| checkout | judgments | coordinates | endpoints within 10% of NUTS's width: mean (worst) | largest gap / "
             "width: mean (worst) | proposals weighed | importance ESS | NOT corrected | wall |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in res["checkouts"]:
        lines.append(f"| {r['checkout']} | {r['rows']} | {r['coordinates']} | {r['within_mean']:.1%} "
                     f"({r['within_min']:.1%}) | {r['gap_mean']:.3f} ({r['gap_max']:.3f}) | "
                     f"{', '.join(str(e) for e in r['evaluated'])} | {', '.join(str(e) for e in r['ess'])} | "
                     f"{r['not_corrected']} of {len(r['fits'])} | {r['wall_median_s']:.1f} s |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="summeval", choices=["summeval", "hanna"])
    ap.add_argument("--articles", type=int, default=10, help="the first prompts of the set")
    ap.add_argument("--seeds", type=int, default=3, help="Laplace fit seeds 1..N")
    ap.add_argument("--ref-draws", type=int, default=2500, help="the NUTS reference's draws a chain")
    ap.add_argument("--vs", default=None, help="another checkout's folder, run beside this one")
    ap.add_argument("--out", default=None, help="JSON path (default results/bench_rank_laplace.json)")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_rank_laplace.py " + " ".join(argv if argv is not None else sys.argv[1:])
    res: dict = {"set": args.set, "articles": args.articles, "seeds": args.seeds, "ref_draws": args.ref_draws,
                 "checkouts": []}
    with tempfile.TemporaryDirectory() as tmp:
        ref = str(Path(tmp) / "nuts.json")
        for i, root in enumerate([ROOT] + ([Path(args.vs).resolve()] if args.vs else [])):
            res["checkouts"].append(run(root, args, ref + ".new" if i == 0 else ref))
            print(f"{root}: within 10% {res['checkouts'][-1]['within_mean']:.1%}", flush=True)
    write(Path(args.out or HERE / "results" / "bench_rank_laplace.json"), res, markdown(res, command))
    return res


if __name__ == "__main__":
    main()
