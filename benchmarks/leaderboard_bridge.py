"""People's leaderboard scores without labels: how far the judges' reading lies from the experts'.

A leaderboard fitted on LLM judges alone (``bj.leaderboard``, model ``bt-judges``, no human
labels) reads people's Bradley-Terry scores through the judges' accuracies.  On real panels the
experts' scores are a multiple of the judges' reading (λ, one per panel), off by a residual per
system (the judges' taste for one system's texts, sd τ).  This script measures both on every
aspect of the bundled SummEval (4 aspects, 12 systems × 100 articles, three LLM judge settings)
and HANNA (6 criteria, 11 writers × 96 prompts, three LLMs), fits the prior of the score bridge
(:mod:`bayes_judge.leaderboard.bridge`) and scores its 90% intervals against the experts'
Bradley-Terry scores, with the prior fitted on the other dataset (leave one source out) and on
all ten panels, beside the judges' reading as it is.  A synthetic protocol runs beside it:
simulated leaderboards whose judges err independently of the system (λ = 1, τ = 0 by
construction), where the bridge must not lose coverage.

Usage::

    .venv/bin/python benchmarks/leaderboard_bridge.py               # ~3 min on 2 cores
    .venv/bin/python benchmarks/leaderboard_bridge.py --fit-prior   # print the fitted prior only
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from leaderboard_real import comparisons, human_bt, markdown_table  # noqa: E402

import bayes_judge as bj  # noqa: E402
from bayes_judge.datasets import hanna, summeval  # noqa: E402
from bayes_judge.leaderboard.bridge import (  # noqa: E402
    SCORE_BRIDGE,
    ScoreBridge,
    bridge_scores,
    fit_score_bridge,
)
from bayes_judge.leaderboard.simulate import simulate_leaderboard  # noqa: E402

SOURCES = {
    "summeval": (summeval, summeval.ASPECTS, ["gpt-4-0314/rts", "gpt-3.5-turbo-0301/rts", "gpt-3.5-turbo-0301/mcq"]),
    "hanna": (hanna, hanna.CRITERIA, ["ChatGPT/1", "Beluga-13B/1", "Mistral-7B/1"]),
}


def panels(args) -> list[dict]:
    """Every (source, aspect): the judges-only leaderboard's score draws and the experts' BT scores."""
    out = []
    for src, (mod, aspects, judges) in SOURCES.items():
        for aspect in aspects:
            df = pd.concat([mod.pairs(aspect, judge=j) for j in judges], ignore_index=True)
            systems = sorted(set(df["a"]))
            truth = human_bt(comparisons(df), systems)
            idata = bj.leaderboard(df.drop(columns="human"), bridge=False, seed=args.seed, draws=args.draws,
                                   tune=args.draws)
            s = idata["posterior"]["s"].sel(system=systems).to_numpy().reshape(-1, len(systems))
            out.append({"source": src, "aspect": aspect, "systems": systems, "s": s, "truth": truth - truth.mean()})
            print(f"  {src}/{aspect}: {len(systems)} systems, {len(df)} rows", file=sys.stderr)
    return out


def simulated(args) -> list[dict]:
    """Leaderboards whose judges follow the model (errors independent of the system)."""
    out = []
    for k in range(args.synth_reps):
        df, true = simulate_leaderboard(12, 3000, alpha=(1.5, 1.0, 0.6), beta=(0.3, -0.2, 0.1), seed=100 + k)
        idata = bj.leaderboard(df.drop(columns="human", errors="ignore"), bridge=False, seed=args.seed,
                               draws=args.draws, tune=args.draws)
        systems = list(true.index)
        s = idata["posterior"]["s"].sel(system=systems).to_numpy().reshape(-1, len(systems))
        t = true.to_numpy()
        out.append({"source": "simulated", "aspect": f"rep{k}", "systems": systems, "s": s, "truth": t - t.mean()})
    return out


def score(panel: dict, prior: ScoreBridge | None, seed: int) -> dict:
    s = panel["s"]
    draws = s if prior is None else bridge_scores(s, prior, np.random.default_rng(seed))
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
    t = panel["truth"]
    # Kendall tau of the posterior mean with the truth, and the share of pairs whose order is right
    m = draws.mean(axis=0)
    from scipy.stats import kendalltau

    return {"coverage": float(np.mean((lo <= t) & (t <= hi))), "error": float(np.mean(np.abs(m - t))),
            "width": float(np.mean(hi - lo)), "kendall_tau": float(kendalltau(m, t).statistic),
            "n": len(t)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synth-reps", type=int, default=8)
    ap.add_argument("--fit-prior", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args()

    real = panels(args)
    fitted = {p["source"] + "/" + p["aspect"]: fit_score_bridge([(p["s"].mean(axis=0), p["truth"])], reach=None)
              for p in real}
    prior_all = fit_score_bridge([(p["s"].mean(axis=0), p["truth"]) for p in real])
    print("prior fitted on all ten panels:", prior_all.describe(), prior_all.to_json())
    print("their own λ, τ:", fit_score_bridge([(p["s"].mean(axis=0), p["truth"]) for p in real], reach=None).describe())
    if args.fit_prior:
        return
    synth = simulated(args)
    rows = []
    for p in real + synth:
        case = f"{p['source']}/{p['aspect']}"
        others = [(q["s"].mean(axis=0), q["truth"]) for q in real if q["source"] != p["source"]]
        loso = fit_score_bridge(others)  # the simulated panels: the natural prior as it is
        lam_tau = fitted.get(case)
        for method, prior in (("judges' reading (no bridge)", None), ("bridge, default prior", SCORE_BRIDGE),
                              ("bridge, prior leaving the source out", loso)):
            rows.append({"protocol": "simulated" if p["source"] == "simulated" else "natural", "case": case,
                         "method": method, **score(p, prior, args.seed),
                         "lambda_hat": np.nan if lam_tau is None else lam_tau.lam_median,
                         "tau_hat": np.nan if lam_tau is None else lam_tau.tau_median})
    res = pd.DataFrame(rows)
    pooled = (res.groupby(["protocol", "method"])
              .apply(lambda g: pd.Series({"coverage": np.average(g["coverage"], weights=g["n"]),
                                          "error": np.average(g["error"], weights=g["n"]),
                                          "width": np.average(g["width"], weights=g["n"]),
                                          "kendall_tau": g["kendall_tau"].mean(), "panels": len(g)}),
                     include_groups=False).reset_index())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/leaderboard_bridge.py" + (f" --draws {args.draws}" if args.draws != 1000 else "")
    md = ["# People's leaderboard scores without labels: the score bridge", "", f"Command: `{cmd}`", "",
          "90% intervals of each system's score against the experts' Bradley-Terry scores (natural: every aspect "
          "of SummEval and HANNA, three LLM judges each, no labels) or the simulated truth (judges that follow the "
          "model). Scores centred; error = mean |posterior mean - truth|; width = mean interval width.", "",
          f"Default prior: {SCORE_BRIDGE.describe()}", "", f"Prior fitted on all ten panels: {prior_all.describe()}", "",
          "## Pooled", "", markdown_table(pooled), "", "## Every panel", "",
          markdown_table(res), ""]
    (out / "leaderboard_bridge.md").write_text("\n".join(md))
    (out / "leaderboard_bridge.json").write_text(json.dumps(
        {"command": cmd, "default_prior": SCORE_BRIDGE.describe(), "prior_all": prior_all.describe(),
         "pooled": pooled.to_dict("records"), "cases": res.to_dict("records")}, indent=1, default=float))
    print(pooled.to_string(index=False))


if __name__ == "__main__":
    main()
