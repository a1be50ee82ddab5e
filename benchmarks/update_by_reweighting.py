"""Benchmark: could a leaderboard update reweight the earlier posterior instead of refitting?

An update that read only the new battles would weigh each draw of the earlier posterior by the new
battles' likelihood, ``w ∝ p(new | θ)``: the posterior of all the rows, if the weights hold.  This
script measures whether they do at the size of ``bench_leaderboard_update.py`` (``--systems``
200, ``--comparisons`` 1,000,000 battles by three judges, 10% labelled; the earlier fit has the
first 90%, ``sampler="laplace"``, ``system_bias=False``): the log weight of each of its draws is
the log density of all the rows less that of the first 90% (the prior cancels), evaluated by the
fits' own kernels.  It prints the log weights' variance, their importance ESS and Pareto k-hat,
and how many of the (A, B, judge) places the new battles touch (the cells of the unlabelled
verdicts, what an update's fit must read either way).

Usage::

    .venv/bin/python benchmarks/update_by_reweighting.py       # ~1 min on 2 cores

Writes ``benchmarks/results/update_by_reweighting.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main(argv: list[str] | None = None) -> dict:
    import numpy as np

    import bayes_judge as bj
    from bayes_judge.inference import laplace as lap
    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--new-share", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(HERE / "results" / "update_by_reweighting.json"))
    args = ap.parse_args(argv)

    df, _ = simulate_leaderboard(args.systems, args.comparisons, **THREE_JUDGES, design="one-judge", label_share=0.1, seed=args.seed)
    fits: list[dict] = []
    inner = lap.laplace_draws

    def kept(kernel, buf, x0, **kw):  # the fit's kernel and its draws, on the kernel's coordinates
        z, info = inner(kernel, buf, x0, **kw)
        fits.append({"kernel": kernel, "buf": buf, "z": z})
        return z, info

    lap.laplace_draws = kept
    try:
        n_old = int(round(len(df) * (1 - args.new_share)))
        kw = dict(sampler="laplace", pointwise=False, bridge=False, system_bias=False, seed=1)
        bj.leaderboard(df.iloc[:n_old], **kw)
        bj.leaderboard(df, **kw)
    finally:
        lap.laplace_draws = inner
    old, full = fits
    z = old["z"].reshape(-1, old["z"].shape[-1])
    if z.shape[1] != full["z"].shape[-1]:
        raise RuntimeError("the two fits have different coordinates (a system only in the new rows?)")
    lw = lap._logp_many(full["kernel"], full["buf"], z, None) - lap._logp_many(old["kernel"], old["buf"], z, None)
    w = np.exp(lw - lw.max())
    w /= w.sum()
    _, k = lap._psis_weights(lw, np.zeros_like(lw))
    new = df.iloc[n_old:]

    def cells(d):
        return set(zip(d["a"], d["b"], d["judge"], strict=True))

    res = {"systems": args.systems, "comparisons": args.comparisons, "new_share": args.new_share,
           "dimensions": int(z.shape[1]), "draws": int(len(z)), "distinct_draws": int(len(np.unique(z, axis=0))),
           "var_log_weight": float(lw.var()), "ess": float(1.0 / np.sum(w ** 2)), "pareto_k": float(k),
           "cells": len(cells(df)), "cells_touched": len(cells(new))}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    md = "\n".join([
        "# Could an update reweight the earlier posterior? (`benchmarks/update_by_reweighting.py`)", "",
        f"Command: `python benchmarks/update_by_reweighting.py {' '.join(argv if argv is not None else sys.argv[1:])}`; "
        f"{res['systems']} systems, {res['comparisons']:,} battles by three judges, 10% labelled; the earlier fit has the "
        f"first {1 - res['new_share']:.0%} (`sampler=\"laplace\"`, `system_bias=False`), the new battles the rest.", "",
        "| dimensions | earlier draws (distinct) | variance of the log weights | importance ESS | Pareto k-hat "
        "| (A, B, judge) places the new battles touch |", "|---|---|---|---|---|---|",
        f"| {res['dimensions']} | {res['draws']:,} ({res['distinct_draws']:,}) | {res['var_log_weight']:.1f} | "
        f"{res['ess']:.1f} | {res['pareto_k']:.2f} | {res['cells_touched']:,} of {res['cells']:,} |", ""])
    out.with_suffix(".md").write_text(md)
    print(md)
    return res


if __name__ == "__main__":
    main()
