"""People's leaderboard scores from LLM judges and a few human labels, on every bundled panel.

``leaderboard_real.py`` measures one aspect of each dataset; ``leaderboard_bridge.py`` every
aspect without labels.  Here every aspect of SummEval (4 aspects, 12 systems × 100 articles) and
HANNA (6 criteria, 11 writers × 96 prompts), three LLM judges each, with a share of the
comparisons labelled by the experts' preference (``--shares``, several draws of the labelled
comparisons each), against the experts' Bradley-Terry scores on all comparisons
(``leaderboard_real.human_bt``).  Methods, each a 90% interval per system:

* ``default``: ``bj.leaderboard(judges, human=labels)`` as it comes: the judges alone, their
  reading carried over by the score bridge whose λ and per-system ε the labels update
  (:func:`bayes_judge.leaderboard.bridge.calibrate_bridge`);
* ``bridge=False``: the default before it, one model of judges and labels where each judge reads
  the label of the comparison it judged (``bt-judges`` with the judges' own system preferences);
* ``labels alone``: Bradley-Terry on the labelled comparisons (``model="bt"``, no judge);
* ``no labels``: the judges alone, bridged (``bj.leaderboard(judges)``; the same in every draw).

Usage::

    .venv/bin/python benchmarks/leaderboard_few_labels.py                        # ~10 min on 2 cores
    .venv/bin/python benchmarks/leaderboard_few_labels.py --shares 0.01 --label-draws 2

Writes ``benchmarks/results/leaderboard_few_labels.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from leaderboard_bridge import SOURCES  # noqa: E402
from leaderboard_real import comparisons, human_bt, markdown_table  # noqa: E402

import bayes_judge as bj  # noqa: E402


def interval(idata, systems: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean and 90% interval of the centred scores of the systems the fit has (labels alone may
    miss a system no label names), and which of ``systems`` those are."""
    have = np.isin(systems, idata["posterior"]["s"].coords["system"].values)
    sel = [s for s, h in zip(systems, have, strict=True) if h]
    s = idata["posterior"]["s"].sel(system=sel).to_numpy().reshape(-1, len(sel))
    s = s - s.mean(axis=1, keepdims=True)
    lo, hi = np.quantile(s, [0.05, 0.95], axis=0)
    return s.mean(axis=0), lo, hi, have


def record(rows: list, base: dict, method: str, est, truth: np.ndarray, seconds: float) -> None:
    m, lo, hi, have = est
    truth = truth[have] - truth[have].mean()
    from scipy.stats import kendalltau

    rows.append({**base, "method": method, "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
                 "error": float(np.mean(np.abs(m - truth))), "width": float(np.mean(hi - lo)),
                 "kendall_tau": float(kendalltau(m, truth).statistic), "n": len(truth), "seconds": seconds})


def label_table(cmp: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lab = cmp[(rng.random(len(cmp)) < share) & cmp["lo_wins"].notna().to_numpy()]
    return pd.DataFrame({"item": lab["item"], "a": lab["lo"], "b": lab["hi"],
                         "human": np.where(lab["lo_wins"] == 1.0, "a", "b")})


def fit(fn):
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn()
    return out, time.perf_counter() - t


def run(args) -> list[dict]:
    rows: list[dict] = []
    kw = dict(draws=args.draws, tune=args.draws)
    for src, (mod, aspects, judges) in SOURCES.items():
        for aspect in aspects:
            df = pd.concat([mod.pairs(aspect, judge=j) for j in judges], ignore_index=True)
            systems = sorted(set(df["a"]))
            cmp = comparisons(df)
            truth = human_bt(cmp, systems)
            truth = truth - truth.mean()
            judges_only = df.drop(columns="human")
            panel = {"source": src, "aspect": aspect}
            idata, sec = fit(lambda jo=judges_only: bj.leaderboard(jo, seed=args.seed, **kw))
            record(rows, {**panel, "share": 0.0, "draw": 0, "labels": 0}, "no labels", interval(idata, systems),
                   truth, sec)
            for share in args.shares:
                for k in range(args.label_draws):
                    lab = label_table(cmp, share, 1000 * k + int(1e4 * share))
                    base = {**panel, "share": share, "draw": k, "labels": len(lab)}
                    idata, sec = fit(lambda jo=judges_only, lab=lab, k=k: bj.leaderboard(jo, human=lab, seed=k, **kw))
                    record(rows, base, "default (bridge learnt from the labels)", interval(idata, systems), truth, sec)
                    idata, sec = fit(lambda jo=judges_only, lab=lab, k=k: bj.leaderboard(jo, human=lab, bridge=False,
                                                                                         seed=k, **kw))
                    record(rows, base, "bridge=False (judges read each label)", interval(idata, systems), truth, sec)
                    alone = lab.assign(judge="human", winner=lab["human"]).drop(columns="human")
                    idata, sec = fit(lambda alone=alone, k=k: bj.leaderboard(alone, model="bt", position_bias=False,
                                                                             seed=k, **kw))
                    record(rows, base, "labels alone", interval(idata, systems), truth, sec)
            print(f"  {src}/{aspect} done", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shares", type=lambda s: [float(x) for x in s.split(",")], default=[0.01, 0.1])
    ap.add_argument("--label-draws", type=int, default=3)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(HERE / "results" / "leaderboard_few_labels"))
    args = ap.parse_args()
    rows = run(args)
    rec = pd.DataFrame(rows)
    g = rec.groupby(["share", "method"], sort=False)
    pooled = pd.DataFrame({"coverage": g["coverage"].mean(), "lowest panel": rec.groupby(
        ["share", "method", "source", "aspect"], sort=False)["coverage"].mean().groupby(["share", "method"]).min(),
        "error": g["error"].mean(), "width": g["width"].mean(), "kendall_tau": g["kendall_tau"].mean(),
        "fits": g.size(), "seconds": g["seconds"].mean()}).reset_index()
    per = rec.groupby(["share", "method", "source", "aspect"], sort=False)[
        ["coverage", "error", "width", "labels"]].mean().reset_index()
    cmd = "python benchmarks/leaderboard_few_labels.py " + " ".join(sys.argv[1:])
    md = ["# People's leaderboard scores from judges and a few labels, every bundled panel", "",
          f"Command: `{cmd.strip()}`", "",
          "90% intervals of each system's centred score against the experts' Bradley-Terry scores on all "
          "comparisons; 10 panels (SummEval's 4 aspects, 12 systems; HANNA's 6 criteria, 11 writers), three LLM "
          f"judges each; {args.label_draws} draws of the labelled comparisons per share. Coverage pooled over "
          "systems, panels and draws; lowest panel: the lowest of the panels' mean coverage.", "",
          "## Pooled", "", markdown_table(pooled), "", "## Every panel (mean over the draws)", "",
          markdown_table(per), ""]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text("\n".join(md))
    out.with_suffix(".json").write_text(json.dumps({"command": cmd, "rows": rows}, indent=1, default=float))
    print("\n".join(md))


if __name__ == "__main__":
    main()
