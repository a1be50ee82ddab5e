"""Leaderboards on real judges with a known human ranking (issue 12, item 4).

Data: the bundled SummEval (12 abstractive systems x 100 articles, coherence) and HANNA (11
story systems incl. the human-written stories x 96 prompts, coherence) judgments of three LLM
judge settings each (``bj.datasets.summeval.pairs`` / ``hanna.pairs``: every ordered pair of the
systems of a prompt, ``p_a`` from the judges' pointwise scores), and the expert ratings of every
(prompt, system).

Truth.  (1) The human system ranking: every system's mean expert score.  (2) The human
Bradley-Terry scores: the maximum-likelihood BT scores fitted to the experts' pairwise
preferences on *all* comparisons (the expert scored one summary higher; equal scores skipped),
on the logit scale of the human preference that ``bj.leaderboard`` reports.

Methods, in one run: ``bj.leaderboard`` (``bt-judges``, with and without the judges' own system
preferences ``system_bias``) on the judges alone and with the human preference of 10% of the
comparisons (the default: the judges alone, their reading bridged to people's by the labels;
``bridge=False``: one model in which each judge reads the label of the comparison it judged);
and the point references on the same judgments:
the labels alone (Bradley-Terry on the labelled comparisons, no judge), win-ratio (share of
decided verdicts won), avg-prob (mean ``p_a`` as the first system), plain
Bradley-Terry MLE on the judges' hard verdicts (ties half) and its bootstrap over comparisons
(100 rounds, as Chatbot Arena's notebook does).

Reported per set and method: Kendall tau with (1); the coverage of (2) by the 90% intervals
(posterior HDI / bootstrap percentile); and the calibration of P(i > j) against the experts'
pairwise preference rate on the comparisons *not* used as labels: mean |predicted - observed|
over system pairs weighted by their comparisons, the same over 10 bins of the prediction (the
expected calibration error), and a binned reliability diagram (png).  The judges'
own BT scores estimate the judges' (attenuated) preference, not the human one: their intervals
are expected to miss (2).

Usage::

    .venv/bin/python benchmarks/leaderboard_real.py                 # both sets, ~2-4 min
    .venv/bin/python benchmarks/leaderboard_real.py --sets summeval --draws 500
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bayes_judge as bj  # noqa: E402
from bayes_judge.datasets import hanna, summeval  # noqa: E402

SETS = {
    "summeval": dict(mod=summeval, aspect="coherence",
                     judges=["gpt-4-0314/rts", "gpt-3.5-turbo-0301/rts", "gpt-3.5-turbo-0301/mcq"]),
    "hanna": dict(mod=hanna, aspect="coherence", judges=["ChatGPT/1", "Beluga-13B/1", "Mistral-7B/1"]),
}


def bt_mle(i: np.ndarray, j: np.ndarray, win: np.ndarray, n: int, weight: np.ndarray | None = None) -> np.ndarray:
    """Centred Bradley-Terry MLE (``bayes_judge.ranking.bradley_terry``): ``win`` in [0, 1] the
    share of i's wins (ties 1/2), ``weight`` games per row; 1e-4 prior wins per game so it exists."""
    from bayes_judge.ranking import bradley_terry, pairs_rank_data

    return bradley_terry(pairs_rank_data(i, j, win, n), prior=1e-4, tol=1e-8, max_iter=100_000, accelerate=True,
                         weight=weight)


def load(name: str) -> tuple[pd.DataFrame, pd.Series]:
    cfg = SETS[name]
    df = pd.concat([cfg["mod"].pairs(cfg["aspect"], judge=j) for j in cfg["judges"]], ignore_index=True)
    scores = cfg["mod"].scores(cfg["aspect"])
    systems = sorted(set(df["a"]))
    human_mean = scores[scores["candidate"].isin(systems)].groupby("candidate")["score"].mean()
    return df, human_mean


def comparisons(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (prompt, unordered pair) with the experts' preference (lo wins: 1, 0, or NaN)."""
    one = df.drop_duplicates(["item", "a", "b"])
    one = one[one["a"] < one["b"]]
    lo_wins = one["human"].map({"a": 1.0, "b": 0.0})
    return pd.DataFrame({"item": one["item"].to_numpy(), "lo": one["a"].to_numpy(), "hi": one["b"].to_numpy(),
                         "lo_wins": lo_wins.to_numpy()})


def human_bt(cmp: pd.DataFrame, systems: list[str]) -> np.ndarray:
    c = cmp.dropna(subset=["lo_wins"])
    idx = pd.Index(systems)
    return bt_mle(idx.get_indexer(c["lo"]), idx.get_indexer(c["hi"]), c["lo_wins"].to_numpy(), len(systems))


def judge_bt(df: pd.DataFrame, systems: list[str], weight: np.ndarray | None = None) -> np.ndarray:
    idx = pd.Index(systems)
    win = df["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    return bt_mle(idx.get_indexer(df["a"]), idx.get_indexer(df["b"]), win, len(systems), weight)


def diagnostics(idata) -> dict:
    """Max r_hat over every sampled variable, the scores' min bulk ESS, unrounded (ArviZ;
    ``leaderboard_summary``'s come from ``az.summary``, rounded to 2 decimals), the divergent
    transitions and the acceptance target the chains ran with."""
    import arviz as az

    return {"max_r_hat": float(az.rhat(idata).to_array().max()),
            "min_ess": float(az.ess(idata, var_names=["s"])["s"].min()),
            "divergences": int(idata.sample_stats["diverging"].sum()) if "sample_stats" in idata.groups() else 0,
            "target_accept": idata.attrs.get("target_accept", float("nan"))}


N_BINS = 10


def calibration(pred: pd.DataFrame, held: pd.DataFrame) -> tuple[float, float, pd.DataFrame]:
    """Weighted mean |P(lo > hi) predicted - the experts' rate| over system pairs, the binned
    (reliability-diagram) error, and the pairs with their bin.

    Binned: the held-out comparisons are grouped by their pair's prediction into ``N_BINS`` equal
    bins of [0, 1]; the error is the comparison-weighted mean over bins of |mean prediction -
    the experts' rate in the bin| (the expected calibration error, ECE).  Pairs with few
    comparisons are noisy one by one; bins pool them.
    """
    h = held.dropna(subset=["lo_wins"]).groupby(["lo", "hi"])["lo_wins"].agg(["mean", "size"]).reset_index()
    p = np.array([pred.loc[a, b] for a, b in zip(h["lo"], h["hi"], strict=True)])
    h["pred"] = p
    err = float(np.average(np.abs(h["pred"] - h["mean"]), weights=h["size"]))
    h["bin"] = np.minimum((h["pred"] * N_BINS).astype(int), N_BINS - 1)
    b = reliability_bins(h)
    ece = float(np.average(np.abs(b["pred"] - b["rate"]), weights=b["size"]))
    return err, ece, h


def reliability_bins(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per prediction bin: comparison-weighted mean prediction, the experts' rate, comparisons."""
    w = pairs["size"]
    g = pairs.assign(wp=pairs["pred"] * w, wr=pairs["mean"] * w).groupby("bin")
    out = pd.DataFrame({"size": g["size"].sum()})
    out["pred"] = g["wp"].sum() / out["size"]
    out["rate"] = g["wr"].sum() / out["size"]
    return out.reset_index()


def run_set(name: str, args) -> tuple[list[dict], dict]:
    df, human_mean = load(name)
    systems = sorted(set(df["a"]))
    cmp = comparisons(df)
    truth_bt = human_bt(cmp, systems)
    truth_rank = human_mean.reindex(systems).to_numpy()
    rng = np.random.default_rng(args.seed)
    labelled = rng.random(len(cmp)) < args.label_share
    lab = cmp[labelled]
    held = cmp[~labelled]
    rows, curves = [], {}
    judges_only = df.drop(columns=["human"])
    lab_table = pd.DataFrame({"item": lab["item"], "a": lab["lo"], "b": lab["hi"],
                              "human": np.where(lab["lo_wins"] == 1.0, "a", "b")})[lab["lo_wins"].notna().to_numpy()]

    def record(method, scores, low=None, high=None, pred=None, wall=np.nan, extra=None):
        tau = kendalltau(scores, truth_rank).statistic
        cov = float(np.mean((low <= truth_bt) & (truth_bt <= high))) if low is not None else np.nan
        err = ece = np.nan
        if pred is not None:
            err, ece, pairs = calibration(pred, held)
            curves[method] = pairs
        rows.append({"set": name, "method": method, "kendall_tau": tau, "coverage_90": cov,
                     "mean_width": float(np.mean(high - low)) if low is not None else np.nan,
                     "calibration_error": err, "calibration_error_binned": ece, "wall_s": wall, **(extra or {})})

    pct = f"{args.label_share:.0%} labels"
    for label, human, sb, br in (("leaderboard, judges only", None, True, None),
                                 ("leaderboard, judges only, no system bias", None, False, None),
                                 (f"leaderboard, {pct} (default: the bridge learnt from them)", lab_table, None, None),
                                 (f"leaderboard, {pct}, bridge=False", lab_table, True, False),
                                 (f"leaderboard, {pct}, bridge=False, no system bias", lab_table, False, False)):
        t = time.perf_counter()
        idata = bj.leaderboard(judges_only, human=human, system_bias=sb, bridge=br, seed=args.seed, draws=args.draws,
                               tune=args.draws, target_accept=args.target_accept)
        wall = time.perf_counter() - t
        summ = bj.leaderboard_summary(idata, hdi_prob=0.9).set_index("system").reindex(systems)
        pred = bj.pairwise_prob(idata, kind="preference")
        q = idata["posterior"]["q"].mean(("chain", "draw")).to_numpy()
        record(label, summ["mean"].to_numpy(), summ["hdi_low"].to_numpy(), summ["hdi_high"].to_numpy(), pred, wall,
               {**diagnostics(idata), "judge_q": ", ".join(f"{v:.2f}" for v in q)})

    # the human labels alone (no judge): Bradley-Terry on the labelled comparisons
    t = time.perf_counter()
    alone = lab_table.assign(judge="human", winner=lab_table["human"]).drop(columns="human")
    idata = bj.leaderboard(alone, model="bt", position_bias=False, seed=args.seed, draws=args.draws, tune=args.draws)
    summ = bj.leaderboard_summary(idata, hdi_prob=0.9).set_index("system").reindex(systems)
    record(f"labels alone ({pct}, BT)", summ["mean"].to_numpy(), summ["hdi_low"].to_numpy(),
           summ["hdi_high"].to_numpy(), bj.pairwise_prob(idata, kind="preference"), time.perf_counter() - t,
           diagnostics(idata))

    t = time.perf_counter()
    decided = df[df["winner"] != "tie"]
    win_ratio = (pd.concat([decided.loc[decided.winner == "a", "a"], decided.loc[decided.winner == "b", "b"]])
                 .value_counts().reindex(systems, fill_value=0)
                 / pd.concat([decided["a"], decided["b"]]).value_counts().reindex(systems))
    record("win-ratio", win_ratio.to_numpy(), wall=time.perf_counter() - t)
    avg = pd.concat([df.groupby("a")["p_a"].mean(), (1 - df.groupby("b")["p_a"].mean())], axis=1).mean(axis=1)
    record("avg-prob", avg.reindex(systems).to_numpy())
    t = time.perf_counter()
    s_bt = judge_bt(df, systems)
    wall_bt = time.perf_counter() - t
    # bootstrap over comparisons (Arena's notebook: rows resampled with replacement, 100 rounds)
    t = time.perf_counter()
    boots = np.array([judge_bt(df, systems, rng.multinomial(len(df), np.full(len(df), 1 / len(df))).astype(float))
                      for _ in range(args.bootstrap)])
    wall_boot = time.perf_counter() - t
    lo, hi = np.quantile(boots, [0.05, 0.95], axis=0)
    d = s_bt[:, None] - s_bt[None, :]
    pred_bt = pd.DataFrame(1 / (1 + np.exp(-d)), index=systems, columns=systems)
    record("BT on judges (MLE + bootstrap)", s_bt, lo, hi, pred_bt, wall_bt + wall_boot,
           {"bootstrap_s": round(wall_boot, 2)})
    meta = {"systems": len(systems), "prompts": int(df["item"].nunique()), "rows": len(df),
            "labels": int(len(lab_table)), "judges": SETS[name]["judges"],
            "human_bt_spread": float(truth_bt.max() - truth_bt.min())}
    return rows, {"meta": meta, "curves": curves}


def markdown_table(table: pd.DataFrame) -> str:
    def fmt(v):
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def plot(curves: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4.5), squeeze=False)
    for ax, (name, c) in zip(axes[0], curves.items(), strict=True):
        for method, pairs in c["curves"].items():
            dots = ax.scatter(pairs["pred"], pairs["mean"], s=np.sqrt(pairs["size"]), alpha=0.15)
            b = reliability_bins(pairs)
            ax.plot(b["pred"], b["rate"], "o-", color=dots.get_facecolor()[0][:3], ms=4, label=method)
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set(title=f"{name}: reliability of P(i > j)", xlabel=f"predicted ({N_BINS} bins; faint: system pairs)",
               ylabel="experts' preference rate (held out)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="summeval,hanna")
    ap.add_argument("--label-share", type=float, default=0.1)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--bootstrap", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-accept", type=float, default=None,
                    help="NUTS's acceptance target for every leaderboard fit (default: bj.leaderboard's own)")
    ap.add_argument("--label-seeds", type=int, default=1,
                    help="draws of the labelled comparisons (seeds seed, seed + 1, ...): one draw of 1%% of the "
                         "comparisons is a handful of labels a system, and its coverage is one draw's")
    ap.add_argument("--out", default=str(HERE / "results" / "leaderboard_real"))
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    rows, curves = [], {}
    for name in args.sets.split(","):
        for k in range(args.label_seeds):
            r, c = run_set(name, argparse.Namespace(**{**vars(args), "seed": args.seed + k}))
            rows += [dict(row, label_seed=args.seed + k) for row in r]
            curves.setdefault(name, c)  # the reliability diagram of the first draw
    table = pd.DataFrame(rows)
    over_seeds = []
    if args.label_seeds > 1:
        g = table.groupby(["set", "method"], sort=False)
        pooled = pd.DataFrame({"coverage_90 (mean)": g["coverage_90"].mean(), "min": g["coverage_90"].min(),
                               "max": g["coverage_90"].max(), "mean_width": g["mean_width"].mean(),
                               "kendall_tau": g["kendall_tau"].mean(), "draws": g.size()}).reset_index()
        pooled = pooled[pooled["coverage_90 (mean)"].notna()]
        over_seeds = [f"Over the {args.label_seeds} draws of the labels (seeds {args.seed}-{args.seed + args.label_seeds - 1}; "
                      "every row of each draw below):", "", markdown_table(pooled), ""]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/leaderboard_real.py " + " ".join(sys.argv[1:])
    md = [f"command: `{cmd.strip()}`", "",
          "Kendall tau: with the experts' mean scores per system. coverage_90: share of the human BT scores "
          "(MLE on the experts' pairwise preferences, all comparisons) inside the 90% intervals. "
          "calibration_error: weighted mean |P(i > j) - the experts' preference rate| over system pairs on the "
          "comparisons not used as labels; calibration_error_binned: the same over 10 bins of the prediction "
          "(ECE; the reliability diagram's points).", "",
          *over_seeds,
          markdown_table(table), "",
          *(f"- {k}: {json.dumps(v['meta'])}" for k, v in curves.items()),
          f"- load average before/after: {load0:.1f} / {os.getloadavg()[0]:.1f}"]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    out.with_suffix(".json").write_text(json.dumps({"rows": rows, "meta": {k: v["meta"] for k, v in curves.items()}},
                                                   indent=1, default=float))
    plot(curves, out.with_suffix(".png"))
    print("\n".join(md))


if __name__ == "__main__":
    main()
