"""How much the no-label default's coverage owes to its prior on the judges' agreement with a human.

The consensus model (``ds_model="consensus"``, the default without labels) lets the judges'
consensus agree with a human with chance ``c = (1 + κ) / 2``, ``κ ~ Beta(3, 1)`` (median c 0.90).
Without labels the verdicts say nothing about κ, so p's interval is as wide as that prior makes
it, and the prior was chosen with the judges of these very sets in view (their consensus agrees
with the humans on 0.68-0.93 of the items): the coverage of ``real_calibration.py`` is partly
in-sample.  This benchmark asks what other priors ``κ ~ Beta(a, 1)`` would have given, on the
same grid (7 sets, 2 protocols, shares 0.5 / 0.65 / 0.8, the same per-draw seeds).

Exact, without refitting.  With ``p ~ U(0, 1)`` and ``κ ~ Beta(a, 1)`` (density ``a κ^{a−1}``),
``(p, κ) -> (p_c, κ)``, ``p_c = ½ + κ (p − ½)``, has Jacobian ``1 / κ``, so the joint density is
``a κ^{a−2}`` on ``m = |2 p_c − 1| ≤ κ ≤ 1``:

    π_a(p_c) = a (1 − m^{a−1}) / (a − 1)           (a = 3: 6 p_c (1 − p_c), Beta(2, 2))
    κ | p_c:  κ^{a−1} ~ U(m^{a−1}, 1)

Without labels the likelihood depends on ``(p_c, q)`` only, so the posterior under prior ``a``
is the fitted (a = 3) posterior of ``p_c`` reweighted by ``π_a(p_c) / π_3(p_c)``, with κ drawn
from its conditional prior.  One fit per draw (``bj.win_rate(df)``, the default, 4 × (500 + 500))
serves every ``a``; the weighted draws are resampled (4000) and summarized like the benchmark
(posterior mean, 90% HDI).

Usage::

    .venv/bin/python benchmarks/consensus_prior_sensitivity.py --reps 20 --out benchmarks/results/consensus_prior_sensitivity
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import real_calibration as rc  # noqa: E402

import bayes_judge as bj  # noqa: E402
from bayes_judge.generative.winrate_models import (  # noqa: E402
    consensus_kappa,
    consensus_p,
    consensus_rate_logpdf,
)

A_VALUES = (1.5, 2.0, 3.0, 5.0, 9.0)


def prior_pc(pc: np.ndarray, a: float) -> np.ndarray:
    """π_a(p_c), the consensus rate's prior under p ~ U(0, 1), κ ~ Beta(a, 1) (the declaration's)."""
    return np.exp(consensus_rate_logpdf(pc, a))


def draw_kappa(pc: np.ndarray, a: float, rng: np.random.Generator) -> np.ndarray:
    """κ | p_c under κ ~ Beta(a, 1), as the declaration draws it from v ~ U(0, 1)."""
    return consensus_kappa(pc, rng.random(pc.shape), a)


def reweighted(pc: np.ndarray, a: float, rng: np.random.Generator, n: int = 4000) -> np.ndarray:
    """Draws of p under κ ~ Beta(a, 1) from draws of p_c under κ ~ Beta(3, 1) (no labels)."""
    w = prior_pc(pc, a) / prior_pc(pc, 3.0)
    idx = rng.choice(pc.size, size=n, p=w / w.sum())
    pcs = pc[idx]
    return consensus_p(pcs, draw_kappa(pcs, a, rng))


def run(sets, protocols, shares, reps, a_values, fit) -> list[dict]:
    import arviz as az

    records = []
    units = [(d, pr, s, r) for pr in protocols for s in shares for r in range(reps) for d in sets]
    t0 = time.perf_counter()
    for n, (d, pr, s, r) in enumerate(units):
        unit = rc.Unit(d, pr, s, r, (0.0,), ("consensus_none",), fit, 0, 4.0, reps)
        task = rc.build_tasks(unit)[0][0]
        idata = bj.win_rate(task.judgments, chains=fit.chains, draws=fit.draws, tune=fit.tune, seed=task.seed)
        assert idata.attrs["ds_model"] == "consensus"
        pc = idata.posterior["p_consensus"].to_numpy().ravel()
        rng = np.random.default_rng([task.seed, 31])
        for a in a_values:
            p = reweighted(pc, a, rng)
            lo, hi = az.hdi(p, hdi_prob=1 - rc.ALPHA)
            lo, hi = max(float(lo), 0.0), min(float(hi), 1.0)
            records.append({"dataset": d, "protocol": pr, "share": s, "rep": r, "a": a, "p_true": task.p_true,
                            "estimate": float(p.mean()), "low": lo, "high": hi,
                            "abs_err": abs(float(p.mean()) - task.p_true),
                            "covered": bool(lo <= task.p_true <= hi), "width": hi - lo})
        print(f"[{n + 1}/{len(units)} {time.perf_counter() - t0:6.0f}s] {pr} {d} share={s} rep={r}", flush=True)
    return records


def tables(df: pd.DataFrame) -> str:
    out = []
    pooled = df.groupby(["protocol", "a"]).agg(coverage=("covered", "mean"), abs_err=("abs_err", "mean"),
                                               width=("width", "mean"), n=("covered", "size")).reset_index()
    per_set = df.groupby(["protocol", "a", "dataset"])["covered"].mean().groupby(["protocol", "a"]).agg(["min", "max"])
    by_share = df.groupby(["protocol", "a", "share"])["abs_err"].mean().unstack("share")
    out.append("| protocol | κ prior | median c | coverage (pooled) | per set (min-max) | mean abs err | "
               "err at share 0.5 / 0.65 / 0.8 | mean width | draws |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for _, row in pooled.iterrows():
        a = row["a"]
        mn, mx = per_set.loc[(row["protocol"], a)]
        e = by_share.loc[(row["protocol"], a)]
        out.append(f"| {row['protocol']} | Beta({a:g}, 1) | {(1 + 0.5 ** (1 / a)) / 2:.3f} | {row['coverage']:.0%} | "
                   f"{mn:.0%}-{mx:.0%} | {row['abs_err']:.3f} | {e[0.5]:.3f} / {e[0.65]:.3f} / {e[0.8]:.3f} | "
                   f"{row['width']:.3f} | {int(row['n'])} |")
    cov = df.groupby(["protocol", "a", "dataset"])["covered"].mean().unstack("dataset")
    cov = cov[[d for d in rc.SETS if d in cov.columns]]
    out += ["", "Coverage per set", "", "| protocol | κ prior | " + " | ".join(rc.SHORT[d] for d in cov.columns) + " |",
            "|---|---|" + "---:|" * len(cov.columns)]
    for (pr, a), row in cov.iterrows():
        out.append(f"| {pr} | Beta({a:g}, 1) | " + " | ".join(f"{v:.0%}" for v in row) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="all")
    ap.add_argument("--protocols", default="all")
    ap.add_argument("--shares", default=",".join(map(str, rc.SHARES)))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--a", default=",".join(f"{a:g}" for a in A_VALUES), help="κ ~ Beta(a, 1), a > 1")
    ap.add_argument("--out", default=str(HERE / "results" / "consensus_prior_sensitivity"))
    args = ap.parse_args(argv)
    sets = list(rc.SETS) if args.sets == "all" else args.sets.split(",")
    protocols = list(rc.PROTOCOLS) if args.protocols == "all" else args.protocols.split(",")
    shares = [float(x) for x in args.shares.split(",")]
    a_values = [float(x) for x in args.a.split(",")]
    if any(a <= 1 for a in a_values):
        raise SystemExit("--a: every a must be > 1 (κ ~ Beta(a, 1))")
    fit = rc.FitSettings(chains=4, draws=500, tune=500)
    command = " ".join(shlex.quote(x) for x in [".venv/bin/python", "benchmarks/consensus_prior_sensitivity.py",
                                                *(argv if argv is not None else sys.argv[1:])])
    t0 = time.perf_counter()
    records = run(sets, protocols, shares, args.reps, a_values, fit)
    df = pd.DataFrame(records)
    table = tables(df)
    head = (f"# Consensus model: sensitivity of the no-label default to its prior on κ\n\nProduced by `{command}`\n\n"
            f"{time.strftime('%Y-%m-%d %H:%M:%S')}; git {rc.environment()['git']}; wall {time.perf_counter() - t0:.0f} s; "
            f"{len(sets)} sets × {len(protocols)} protocols × {len(shares)} shares × {args.reps} draws, one fit each "
            "(the default, κ ~ Beta(3, 1)), every other prior by exact reweighting (see the script's docstring). "
            "90% HDI; Beta(3, 1) is the package's prior.\n\n")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(head + table + "\n")
    out.with_suffix(".json").write_text(json.dumps({"command": command, "records": records}))
    print(table)
    print(f"wrote {out.with_suffix('.md')}, {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
