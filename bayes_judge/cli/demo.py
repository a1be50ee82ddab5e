"""``bayes-judge demo``: the whole pipeline on bundled data with the embedded default judge.

1. MT-Bench (first: a result with a known truth): calibrated win rates (Gao et al. 2024 protocol,
   true p printed beside them): the recommended label regression and PPI++ on a share of human
   labels, the no-label default (the human rate bridged from the judges' consensus), the judges'
   own rate (``estimand="judges"``), observed k, BWRS, Dawid-Skene without and with
   in-distribution human labels; each row names its estimand.
2. SummEval (coherence): a few articles x abstractive summaries; comparisons chosen by greedy
   D-optimal selection, judged in both orders by the embedded LLM comparator (prob mode,
   resumable SQLite store), ranked by Bayesian PoE-BT; Spearman against the expert scores for
   PoE-BT and for the win ratio on the same comparisons; the judge's position bias P(A); and in
   words what that small judge can and cannot do.
3. One HTML diagnostics report of every saved run, and a summary table.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path
from typing import Any

from ._common import CLIError, check_output, format_table, load_runs

__all__ = ["cmd_demo", "spearman", "summeval_part", "mtbench_part"]

ASPECT = "coherence"
TEMPLATE = "summeval-coherence"


def spearman(x, y) -> float:
    """Spearman's rank correlation; NaN when either side is constant (no ranking to compare)."""
    import numpy as np
    from scipy.stats import rankdata

    rx, ry = rankdata(np.asarray(x, float)), rankdata(np.asarray(y, float))
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def _stored(store: Path) -> int | None:
    """Judgments already in a comparator store (None when it cannot be counted)."""
    import sqlite3

    if not store.is_file():
        return 0
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        try:
            return int(con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return None


def _abstractive_systems(scores) -> list[str]:
    names = scores.loc[scores["system_type"] == "abstractive", "candidate"].unique()
    return sorted(map(str, names), key=lambda s: (len(s), s))  # M8, M9, M10, ...


def summeval_part(args: argparse.Namespace, out_dir: Path, kw: dict, say) -> tuple[dict, list[dict]]:
    """Comparator → judgments → Bayesian PoE-BT ranking; returns the saved runs and summary rows."""
    import numpy as np
    import pandas as pd

    import bayes_judge as bj

    from ..comparator import Comparator
    from ..comparator.planning import plan_pairs

    t0 = time.perf_counter()
    scores = bj.datasets.summeval.scores(ASPECT, articles=args.articles)
    systems = _abstractive_systems(scores)[: args.summaries]
    texts, contexts = bj.datasets.summeval.texts(articles=args.articles, systems=systems)
    n = len(systems)
    k = min(3 * n, n * (n - 1) // 2)
    pairs = plan_pairs(texts[["item", "candidate"]], "greedy-d-optimal", k=k, seed=args.seed)
    items = list(dict.fromkeys(texts["item"]))
    say(f"[2/3] SummEval {ASPECT}: {len(items)} article(s) x {n} abstractive summaries ({', '.join(systems)}); "
        f"{k} pairs per article by greedy D-optimal selection, both orders -> {2 * len(pairs)} LLM comparisons")
    store = out_dir / "summeval_comparisons.sqlite"
    before = _stored(store)
    t = time.perf_counter()
    judge = Comparator(template=TEMPLATE, mode="prob")
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    df = judge.compare(pairs, texts, contexts, symmetric=True, store=store, progress=not args.no_progress)
    t_cmp = time.perf_counter() - t
    after = _stored(store)
    counts = (f"{after - before} new, {len(df) - (after - before)} reused" if before is not None and after is not None
              else "new and reused")
    say(f"      judge {judge.judge_name}: loaded in {t_load:.1f} s; {len(df)} judgments ({counts}; store "
        f"{store}, a rerun reuses it) in {t_cmp:.1f} s")
    judgments = out_dir / "summeval_judgments.csv"
    df.to_csv(judgments, index=False)
    pb = df.attrs["position_bias"]
    say(f"      position bias P(A) = {pb['P(A)']:.3f} (share of comparisons won by the text shown first, "
        f"Liusie, Manakul & Gales 2024 eq. 8; 0.5 = none), mean p_a = {pb['mean_p_a']:.3f}")

    t = time.perf_counter()
    idata = bj.rank(df, method="poe-bt", bayesian=True, **kw)
    run = bj.save_run(idata, out_dir / "summeval_poe-bt")
    post = bj.score_summary(idata)
    wr = bj.rank(df, method="win-ratio")
    t_fit = time.perf_counter() - t
    expert = scores.set_index(["item", "candidate"])["score"]
    cols = {f"article {i + 1}": it for i, it in enumerate(items)}
    rho: dict[str, dict[str, float]] = {"PoE-BT (Bayesian, posterior mean)": {}, "win ratio (hard decisions)": {}}
    for label, it in cols.items():
        p = post[post["item"] == it]
        rho["PoE-BT (Bayesian, posterior mean)"][label] = spearman(
            p["mean"], expert.loc[[(it, c) for c in p["candidate"]]])
        w = wr[wr["item"] == it]
        rho["win ratio (hard decisions)"][label] = spearman(
            w["score"], expert.loc[[(it, c) for c in w["candidate"]]])
    table = pd.DataFrame(rho).T
    table["mean"] = table.mean(axis=1)
    table.index.name = f"Spearman vs expert {ASPECT}"
    say(format_table(table, digits=3))
    if (wr.groupby("item")["score"].agg(lambda x: x.max() - x.min()) == 0).any():
        say("      (nan: every summary won the same share of its comparisons, so the win ratio ranks nothing;"
            " with a position-biased judge only the soft probabilities carry information)")
    say(f"      PoE-BT posterior ({kw['chains']} chains x {kw['draws']} draws) and win ratio in {t_fit:.1f} s; "
        f"run saved: {run}; judgments: {judgments}")
    rows = [{
        "run": "summeval_poe-bt", "fit": f"ranking, poe-bt ({len(df)} LLM judgments)",
        "result": f"Spearman vs experts {_fmt(table.loc[table.index[0], 'mean'])} (win ratio "
                  f"{_fmt(table.loc[table.index[1], 'mean'])}); P(A) = {pb['P(A)']:.2f}",
        "r_hat_max": float(np.nanmax(post["r_hat"])), "ess_bulk_min": float(np.nanmin(post["ess_bulk"])),
    }]
    diag = df.attrs.get("diagnosis") or {}
    why = "; ".join(diag.get("messages") or []) if diag.get("informative") is False else ""
    say("      What the embedded judge can and cannot do: SmolLM2-135M is shipped so that this pipeline runs "
        "offline on a CPU in minutes; it is far too small to judge summaries"
        + (f" (here: {why})" if why else f" (P(A) = {pb['P(A)']:.2f} here)")
        + ", so its ranking need not track the experts'. The machinery is the point: `bayes-judge compare "
        "--model` with a larger local checkpoint, or `--endpoint`, gives judgments worth ranking.")
    say(f"      part 2 took {time.perf_counter() - t0:.1f} s")
    return {"summeval_poe-bt": run}, rows


def _fmt(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.2f}"


def mtbench_part(args: argparse.Namespace, out_dir: Path, kw: dict, say) -> tuple[dict, list[dict]]:
    """Calibrated win rates on bundled MT-Bench judges (Gao et al. 2024 protocol)."""
    import numpy as np
    import pandas as pd

    import bayes_judge as bj

    from ..winrate.bwrs import BWRSWarning

    t0 = time.perf_counter()
    df = bj.load_dataset("mtbench")
    g = bj.assign_generators(df, share=0.8, seed=args.seed)
    p_true = g.attrs["p_true"]
    rng = np.random.default_rng(args.seed)
    items = g["item"].unique()
    labelled = rng.choice(items, size=int(round(args.label_share * len(items))), replace=False)
    g_lab = g.assign(human=g["human"].where(g["item"].isin(labelled), None))
    share = f"{args.label_share:.0%}"
    specs: dict[str, tuple[str, pd.DataFrame, dict[str, Any]]] = {
        f"recommended: label regression ({share} human labels)": ("mtbench_recommended", g_lab, {}),
        f"PPI++ ({share}, reference)": ("mtbench_ppi", g_lab, dict(method="ppi")),
        "default, no labels (human rate, bridge)": ("mtbench_default_no_labels", g.drop(columns="human"), {}),
        "the judges' own rate (estimand='judges')": ("mtbench_judges_rate", g.drop(columns="human"),
                                                     dict(estimand="judges")),
        "observed k": ("mtbench_observed_k", g, dict(method="observed")),
        f"BWRS ({share} human labels)": ("mtbench_bwrs", g_lab, dict(method="bwrs", prior="in-distribution")),
        "Dawid-Skene, no labels": ("mtbench_dawid-skene_no_prior", g, dict(method="dawid-skene", prior="none")),
        f"Dawid-Skene, in-distribution ({share})": (
            "mtbench_dawid-skene_in-distribution", g_lab, dict(method="dawid-skene", prior="in-distribution")),
    }
    say(f"[1/3] MT-Bench: {len(items)} items, {g['judge'].nunique()} LLM judges (both orders, swap-and-sum); "
        f"true win rate p = {p_true}")
    rows, runs, summary = [], {}, []
    for name, (slug, data, opts) in specs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BWRSWarning)  # reported in the table (share outside [0, 1])
            idata = bj.win_rate(data, **opts, **kw)
        s = bj.win_rate_summary(idata, hdi_prob=0.9).iloc[0]
        rows.append({
            "estimator": name, "estimand": idata.attrs.get("estimand", "human"), "p_mean": s["p_mean"], "interval_90": f"[{s['hdi_low']:.3f}, {s['hdi_high']:.3f}]",
            "true p": p_true,
            "covers": ("n/a: another rate" if idata.attrs.get("estimand") == "judges"
                       else "yes" if s["hdi_low"] <= p_true <= s["hdi_high"] else "NO"),
            "|p_mean - p|": abs(s["p_mean"] - p_true), "p outside [0,1]": s["frac_outside_unit"], "r_hat": s["r_hat"],
        })
        runs[slug] = bj.save_run(idata, out_dir / slug)
        summary.append({"run": slug, "fit": f"win rate, {name}",
                        "result": f"p = {s['p_mean']:.3f} [{s['hdi_low']:.3f}, {s['hdi_high']:.3f}] (true {p_true})",
                        "r_hat_max": float(s["r_hat"]), "ess_bulk_min": float(s["ess_bulk"])})
    say(format_table(pd.DataFrame(rows).set_index("estimator")))
    say("      'true p' is the human rate; the judges' rate is what this panel says, not what people would.")
    say("      One draw proves little: benchmarks/results/real_calibration.md and natural_pairs.md measure every "
        "estimator's 90% coverage on real judges with known truth, random pseudo-systems and natural pairs.")
    say(f"      part 1 took {time.perf_counter() - t0:.1f} s; runs saved under {out_dir}/")
    return runs, summary


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole pipeline on bundled data with the embedded default judge (SmolLM2-135M):
    SummEval summaries judged pairwise by the LLM (D-optimal pairs, both orders, resumable store)
    and ranked by Bayesian PoE-BT (Spearman vs experts, position bias); calibrated MT-Bench win
    rates (the recommended label regression, PPI++, the no-label default, observed k, BWRS,
    Dawid-Skene); one HTML report of every saved run. Everything is
    written under --out."""
    import pandas as pd

    import bayes_judge as bj

    for opt, lo in (("draws", 1), ("chains", 1), ("articles", 1), ("summaries", 2)):
        if getattr(args, opt) < lo:
            raise CLIError(f"--{opt} must be at least {lo}, got {getattr(args, opt)}")
    if args.summaries > 12:
        raise CLIError(f"--summaries must be at most 12 (SummEval has 12 abstractive systems), got {args.summaries}")
    if args.articles > 100:
        raise CLIError(f"--articles must be at most 100 (SummEval has 100 articles), got {args.articles}")
    if not 0 <= args.label_share <= 1:
        raise CLIError(f"--label-share must lie in [0, 1], got {args.label_share}")
    if args.no_llm and args.no_mtbench:
        raise CLIError("--no-llm and --no-mtbench together leave nothing to run")
    out_dir = Path(args.out)
    check_output(out_dir / "report.html", "demo output")
    out_dir.mkdir(parents=True, exist_ok=True)

    def say(msg: str = "") -> None:
        print(msg, flush=True)

    t0 = time.perf_counter()
    kw = dict(chains=args.chains, draws=args.draws, tune=args.draws, seed=args.seed)
    runs, summary = {}, []
    # the part with a known truth first (MT-Bench's human win rate); then the embedded LLM judge,
    # which is small and says so
    if args.no_mtbench:
        say("[1/3] MT-Bench win rates: skipped (--no-mtbench)")
    else:
        r, s = mtbench_part(args, out_dir, kw, say)
        runs.update(r)
        summary += s
    say()
    if args.no_llm:
        say("[2/3] SummEval with the LLM judge: skipped (--no-llm)")
    else:
        r, s = summeval_part(args, out_dir, kw, say)
        runs.update(r)
        summary += s
    say()
    t = time.perf_counter()
    saved = load_runs(list(runs.values()))  # read back from the files: the report shows what was saved
    report = bj.report(saved, out_dir / "report.html", title="bayes-judge demo", seed=args.seed)
    say(f"[3/3] report of {len(runs)} runs in {time.perf_counter() - t:.1f} s: {report}")
    say()
    table = pd.DataFrame(summary).set_index("run")
    say(format_table(table, digits=3))
    say()
    say(f"Report: {report}")
    say(f"Total time: {time.perf_counter() - t0:.1f} s")
    return 0
