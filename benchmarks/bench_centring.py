"""Which parameterization of the Bayesian Gaussian PoE's scores samples better, by SNR.

:func:`bayes_judge.ranking.bayesian.fit_scores` samples the same prior ``s_raw ~ Normal(0,
sigma_s)`` either non-centred (``s_raw`` and ``alpha``) or centred (``alpha s_raw``), and chooses
by the pilot signal-to-noise ratio of :func:`~bayes_judge.ranking.bayesian.gaussian_centring`
(centred from ``CENTRING_SNR`` = 4 up).  This script fits simulated designs across the SNR range
in both parameterizations, same data and seed, and prints min bulk ESS (over the scores and
``alpha``), max r_hat and divergences of each, and which one the automatic rule picks.

Designs: ``p = 0.5 + shrink (sigmoid(s_i - s_j) - 0.5) + Normal(0, noise)`` clipped to
[0.01, 0.99], ``s ~ Normal(0, 1)``, random ordered pairs (the design of ``tests/ranking``).

Usage::

    .venv/bin/python benchmarks/bench_centring.py                      # nutpie, 2 x 1000 draws
    .venv/bin/python benchmarks/bench_centring.py --sampler numpyro    # slower, ~12 s a fit

Writes ``benchmarks/results/bench_centring.json`` and ``.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import arviz as az  # noqa: E402

from bayes_judge.ranking import encode_ranking  # noqa: E402
from bayes_judge.ranking.bayesian import CENTRING_SNR, fit_scores, gaussian_centring  # noqa: E402

# (N, K, shrink, noise): from near-chance judges to informative designs
DESIGNS = [(16, 24, 0.1, 0.10), (16, 48, 0.1, 0.10), (16, 48, 0.3, 0.10), (30, 90, 0.4, 0.10),
           (16, 48, 0.5, 0.10), (16, 48, 0.7, 0.10), (16, 48, 1.0, 0.10), (16, 26, 0.5, 0.05),
           (6, 120, 1.0, 0.0), (50, 500, 1.0, 0.05)]


def design(n: int, k: int, shrink: float, noise: float, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.normal(0, 1, n)
    i = rng.integers(0, n, k)
    j = (i + rng.integers(1, n, k)) % n
    p = 0.5 + shrink * (1 / (1 + np.exp(-(s[i] - s[j]))) - 0.5) + rng.normal(0, noise, k)
    return pd.DataFrame({"item": "q", "a": [f"c{x:02d}" for x in i], "b": [f"c{x:02d}" for x in j],
                         "p_a": np.clip(p, 0.01, 0.99), "sample": np.arange(k)})


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", default="nutpie", choices=["nutpie", "numpyro", "pymc"])
    ap.add_argument("--draws", type=int, default=1000, help="draws and tuning steps per chain (2 chains)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_centring.json")
    args = ap.parse_args(argv)
    rows = []
    t0 = time.perf_counter()
    for n, k, shrink, noise in DESIGNS:
        data = encode_ranking(design(n, k, shrink, noise))
        w_auto, snr = gaussian_centring(data)
        row = {"N": n, "K": k, "shrink": shrink, "noise": noise, "snr": snr,
               "auto": "centred" if w_auto == 0 else "non-centred"}
        for name in ("non-centred", "centred"):
            idata = fit_scores(data, model="poe-g", centring=name, sampler=args.sampler, chains=2,
                               draws=args.draws, tune=args.draws, seed=1, pointwise=False)
            sm = az.summary(idata, var_names=["s", "alpha"], round_to="none")
            row[name] = {"ess_min": float(sm["ess_bulk"].min()), "r_hat_max": float(sm["r_hat"].max()),
                         "divergences": int(idata.sample_stats["diverging"].sum())}
        better = "centred" if row["centred"]["ess_min"] > row["non-centred"]["ess_min"] else "non-centred"
        row["better"] = better
        rows.append(row)
        print(f"N={n} K={k} snr={snr:.1f} done", file=sys.stderr)
    wall = time.perf_counter() - t0
    command = "benchmarks/bench_centring.py" + ("" if argv is None else " " + " ".join(argv))
    head = ("| N | K | shrink | noise | pilot SNR | non-centred: min ESS, r_hat, div | "
            "centred: min ESS, r_hat, div | ESS ratio (better / other) | rule picks |")
    lines = [head, "|" + "---|" * 9]
    for r in sorted(rows, key=lambda r: r["snr"]):
        nc, c = r["non-centred"], r["centred"]
        ratio = max(nc["ess_min"], c["ess_min"]) / max(min(nc["ess_min"], c["ess_min"]), 1.0)
        pick = r["auto"] + (" (better)" if r["auto"] == r["better"] else " (worse)")
        lines.append(f"| {r['N']} | {r['K']} | {r['shrink']} | {r['noise']} | {r['snr']:.1f} | "
                     f"{nc['ess_min']:.0f}, {nc['r_hat_max']:.3f}, {nc['divergences']} | "
                     f"{c['ess_min']:.0f}, {c['r_hat_max']:.3f}, {c['divergences']} | "
                     f"{ratio:.1f}x {r['better']} | {pick} |")
    table = "\n".join(lines)
    text = (f"# Gaussian PoE: centred vs non-centred scores by SNR\n\nCommand: `.venv/bin/python {command}` "
            f"(sampler {args.sampler}, 2 x ({args.draws} + {args.draws}) draws, {wall:.0f} s); the rule "
            f"samples centred from SNR {CENTRING_SNR:g} up.\n\n{table}\n")
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": command, "sampler": args.sampler, "rows": rows, "wall_s": wall}, indent=2))
    args.out.with_suffix(".md").write_text(text)
    return {"rows": rows}


if __name__ == "__main__":
    main()
