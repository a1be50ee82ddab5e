"""End to end with the default judge: texts → comparator → judgments table → ranks / win rates.

The default judge is the embedded SmolLM2-135M-Instruct (``Comparator()``, float32 on CPU), a
small model: the numbers below measure the pipeline on real data, and near-chance quality is
expected and reported as it is.

(1) SummEval (bundled, ``bj.datasets.summeval.texts``), ``--articles`` articles, all 16 summaries
    (``--abstractive`` for the 12 abstractive ones), aspect coherence: every unordered pair in
    both orders (``symmetric=True``, prob mode, template ``summeval-coherence``), stored in a
    SQLite file so that a rerun resumes.  Ranked with ``bj.rank(method=...)`` for poe-bt,
    poe-g, win-ratio and avg-prob, on the raw p and on the position-debiased p
    (``debias="reweight"``, seed 001 eq. 9); Spearman ρ of the scores against the expert means
    (``bj.datasets.summeval.scores``) per article and averaged.  Also: the judge's pairwise accuracy
    against the experts (expert ties left out), P(A) (``df.attrs["position_bias"]``), the mass of
    the label tokens, and ranks from 20 % of the pairs chosen by ``bj.select_comparisons``
    (greedy D-optimal, and random no-repeat for reference), read from the same judgments.  For
    context, the bundled GPT-3.5 pointwise scores (``bj.datasets.summeval.pairs``, 12 abstractive
    systems) ranked the same way.
(2) MT-Bench (bundled LLMBar copy, ``bj.load_items("mtbench")``): ``--mtbench-items`` random
    items (seed 0), template ``instruction`` (LLMBar rules), prob mode, both orders.  Accuracy
    against the human label per row and after swap-and-average, P(A).  Then seed 003's protocol:
    ``bj.assign_generators(share=0.8)`` attributes 80 % of the human-preferred outputs to G0, and
    ``bj.win_rate`` estimates p (true ≈ 0.8) with ``method="observed"`` and
    ``method="dawid-skene", prior="in-distribution"`` (human labels kept on ``--human-ratio``
    of the items), for our judge alone, the 8 bundled LLM judges of ``bj.load_dataset("mtbench")``
    on the same items (the item ids are the same), and all 9 together.

Usage::

    .venv/bin/python benchmarks/e2e_comparator.py                  # ~20-30 min on 2 shared cores
    .venv/bin/python benchmarks/e2e_comparator.py --quick          # 1 article, 20 MT-Bench items
    .venv/bin/python benchmarks/e2e_comparator.py --threads 1      # on a busy 2-core machine

Writes ``benchmarks/results/e2e_comparator.json`` and ``.md``; the judgments stores are
``benchmarks/results/e2e_comparator_{summeval,mtbench}.sqlite`` (``--store-dir``; not for git).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

RANK_METHODS = ("poe-bt", "poe-g", "win-ratio", "avg-prob")
BUNDLED_JUDGES = [f"{m}/{s}" for m in ("ChatGPT", "GPT-4", "LLaMA2", "PaLM2") for s in ("Vanilla_NoRules", "Metrics_Reference")]


def spearman_per_item(ranked, expert) -> dict:
    """Spearman ρ between a rank table's scores and the expert scores, per item."""
    from scipy.stats import spearmanr

    m = ranked.merge(expert[["item", "candidate", "score"]].rename(columns={"score": "expert"}),
                     on=["item", "candidate"], validate="one_to_one")
    out = {}
    for item, s in m.groupby("item", sort=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant scores (every candidate tied): ρ undefined, NaN
            rho = spearmanr(s["score"], s["expert"]).statistic
        out[str(item)] = float(rho)
    return out


def mean(xs) -> float:
    import numpy as np

    xs = [x for x in xs if x == x]
    return float(np.mean(xs)) if xs else float("nan")


def pairwise_accuracy(df, expert) -> dict:
    """Share of rows whose hard decision agrees with the expert means (expert ties left out)."""
    import numpy as np

    s = {(i, c): v for i, c, v in zip(expert["item"], expert["candidate"], expert["score"], strict=True)}
    d = np.array([s[(i, a)] - s[(i, b)] for i, a, b in zip(df["item"], df["a"], df["b"], strict=True)])
    keep = d != 0
    ok = np.where(d > 0, df["winner"].to_numpy() == "a", df["winner"].to_numpy() == "b")
    return {"accuracy": float(ok[keep].mean()), "n": int(keep.sum()), "n_expert_ties": int((~keep).sum())}


def stored_keys(judge, store: Path) -> set:
    """(item, a, b, order) already in the store for this judge (model + template), prob mode."""
    from bayes_judge.comparator.store import JudgmentStore

    if not Path(store).exists():
        return set()
    model_id, template_id = judge._store_ids()
    with JudgmentStore(store, model=model_id, template=template_id) as st:
        d = st.done(judge.mode)
    return set(zip(d["item"], d["a"], d["b"], d["order"], strict=True))


def timed_compare(judge, pairs, texts, contexts, store: Path, progress: bool):
    """judge.compare(symmetric=True) with the store, timed; counts what came from the store."""
    before = stored_keys(judge, store)
    t0 = time.perf_counter()
    df = judge.compare(pairs, texts, contexts, symmetric=True, store=store, progress=progress)
    wall = time.perf_counter() - t0
    n_stored = sum(k in before for k in zip(df["item"], df["pair_a"], df["pair_b"], df["order"], strict=True))
    return df, {"wall_s": wall, "computed": len(df) - n_stored, "from_store": n_stored}


# ----------------------------------------------------------------------------------------------
# (1) SummEval
# ----------------------------------------------------------------------------------------------

def summeval(args, judge, store: Path) -> dict:
    import numpy as np
    import pandas as pd

    import bayes_judge as bj
    from bayes_judge.comparator.bias import debias_position

    systems = None
    if args.abstractive:
        sc = bj.datasets.summeval.scores("coherence", articles=1)
        systems = sorted(sc.loc[sc["system_type"] == "abstractive", "candidate"])
    texts, contexts = bj.datasets.summeval.texts(articles=args.articles, systems=systems)
    expert = bj.datasets.summeval.scores("coherence", articles=args.articles)
    expert = expert[expert["candidate"].isin(texts["candidate"].unique())]
    rows = []
    for item, sub in texts.groupby("item", sort=False):
        cs = sorted(sub["candidate"])
        rows += [(item, a, b) for i, a in enumerate(cs) for b in cs[i + 1:]]
    pairs = pd.DataFrame(rows, columns=["item", "a", "b"])
    df, timing = timed_compare(judge, pairs, texts, contexts, store, args.progress)
    wall = timing["wall_s"]
    pb = df.attrs["position_bias"]
    rw = debias_position(df, "reweight")
    print(f"SummEval: {len(df)} comparisons over {df['item'].nunique()} articles in {wall:.0f} s "
          f"({timing['computed']} computed, {timing['from_store']} from {store}); P(A) {pb['P(A)']:.3f}, "
          f"mean p_a {pb['mean_p_a']:.3f}", flush=True)

    res: dict = {
        "articles": int(df["item"].nunique()), "summaries_per_article": int(texts.groupby("item").size().iloc[0]),
        "comparisons": len(df), "wall_s": wall, **timing, "position_bias": pb,
        "debias_reweight": rw.attrs.get("debias"),
        "label_mass_mean": float(df["label_mass"].mean()) if "label_mass" in df else None,
        "p_a_quantiles": np.quantile(df["p_a"], [0, 0.1, 0.5, 0.9, 1]).tolist(),
        "pairwise_accuracy_raw": pairwise_accuracy(df, expert),
        "pairwise_accuracy_reweight": pairwise_accuracy(rw, expert),
        "swap_consistency": float(_swap_consistency(df)),
        "spearman": {},
    }
    for name, table in (("raw", df), ("reweight", rw)):
        for m in RANK_METHODS:
            r = bj.rank(table, method=m)
            per = spearman_per_item(r, expert)
            res["spearman"][f"{m} / {name}"] = {"per_article": per, "mean": mean(per.values())}

    # 20 % of the pairs, chosen by selection, read from the judgments already made (both orders)
    sel = {}
    for method in ("greedy-d-optimal", "no-repeat"):
        keep = []
        for item, sub in texts.groupby("item", sort=False):
            cs = sorted(sub["candidate"])
            k = int(round(0.2 * len(cs) * (len(cs) - 1) / 2))
            picks = bj.select_comparisons(cs, k, method=method, seed=0)
            keep += [(item, a, b) for a, b in zip(picks["a"], picks["b"], strict=True)]
            keep += [(item, b, a) for a, b in zip(picks["a"], picks["b"], strict=True)]
        keys = set(keep)
        part = df[[k in keys for k in zip(df["item"], df["a"], df["b"], strict=True)]]
        r = bj.rank(part, method="poe-bt")
        per = spearman_per_item(r, expert)
        sel[method] = {"comparisons": len(part), "share_of_pairs": len(part) / len(df), "per_article": per,
                       "mean": mean(per.values())}
    res["subset_20pct_poe_bt_raw"] = sel

    # context: the bundled GPT-3.5 pointwise scores, turned into soft pairs, ranked the same way
    try:
        ref = bj.datasets.summeval.pairs("coherence", articles=list(texts["item"].unique()))
        exp12 = bj.datasets.summeval.scores("coherence", articles=list(texts["item"].unique()))
        per = spearman_per_item(bj.rank(ref, method="poe-bt", debias=False), exp12)
        res["reference_gpt35_pointwise_poe_bt"] = {"per_article": per, "mean": mean(per.values()),
                                                   "systems": 12}
    except Exception as exc:  # noqa: BLE001 - context only
        res["reference_gpt35_pointwise_poe_bt"] = {"error": repr(exc)}
    return res


def _swap_consistency(df) -> float:
    """Share of pairs whose two orders agree (A-first wins in one order ⇔ it loses in the other)."""
    import numpy as np

    p = {(i, a, b): x for i, a, b, x in zip(df["item"], df["a"], df["b"], df["p_a"], strict=True)}
    agree = [(x > 0.5) == (p[(i, b, a)] < 0.5) for (i, a, b), x in p.items() if (i, b, a) in p and a < b]
    return float(np.mean(agree)) if agree else float("nan")


# ----------------------------------------------------------------------------------------------
# (2) MT-Bench
# ----------------------------------------------------------------------------------------------

def mask_labels(g, ratio: float, seed: int):
    """Keep the human label on round(ratio · n) random items (all their rows)."""
    import numpy as np

    items = np.array(sorted(g["item"].unique()))
    keep = set(np.random.default_rng(seed).permutation(items)[: int(round(ratio * len(items)))])
    out = g.copy()
    out["human"] = out["human"].where(out["item"].isin(keep), None)
    return out, len(keep)


def fit(g, **kw):
    import bayes_judge as bj

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        idata = bj.win_rate(g, **kw)
    s = bj.win_rate_summary(idata).iloc[0]
    out = {"p_mean": float(s["p_mean"]), "p_mode": float(s["p_mode"]), "hdi": [float(s["hdi_low"]), float(s["hdi_high"])],
           "k_observed": float(s["k_observed"]), "r_hat": float(s["r_hat"]) if s["r_hat"] == s["r_hat"] else None,
           "system_a": s["system_a"], "warnings": sorted({type(x.message).__name__ for x in w})}
    if "sample_stats" in idata and "diverging" in idata.sample_stats:
        out["divergences"] = int(idata.sample_stats["diverging"].sum())
    return out


def mtbench(args, judge, store: Path) -> dict:
    import numpy as np
    import pandas as pd

    import bayes_judge as bj
    from bayes_judge.comparator.bias import debias_position

    items = bj.load_items("mtbench")
    rng = np.random.default_rng(0)
    pick = np.sort(rng.choice(len(items), size=min(args.mtbench_items, len(items)), replace=False))
    items = items.iloc[pick].reset_index(drop=True)
    texts = {}
    for r in items.itertuples():
        texts[(r.item, "output_1")] = r.output_1
        texts[(r.item, "output_2")] = r.output_2
    contexts = dict(zip(items["item"], items["input"], strict=True))
    pairs = pd.DataFrame({"item": items["item"], "a": "output_1", "b": "output_2"})
    df, timing = timed_compare(judge, pairs, texts, contexts, store, args.progress)
    wall = timing["wall_s"]
    better = dict(zip(items["item"], "output_" + items["human_label"].astype(str), strict=True))
    df["human"] = np.where(df["a"] == df["item"].map(better), "a", "b")
    pb = df.attrs["position_bias"]
    rw = debias_position(df, "reweight")
    acc = float((df["winner"] == df["human"]).mean())
    acc_rw = float((rw["winner"] == rw["human"]).mean())
    # swap-and-average: P(output_1 better) averaged over the two orders
    p1 = np.where(df["a"] == "output_1", df["p_a"], 1 - df["p_a"])
    avg = pd.Series(p1).groupby(df["item"].to_numpy()).mean()
    truth = items.set_index("item")["human_label"].reindex(avg.index)
    acc_avg = float(((avg > 0.5) == (truth == 1)).mean())
    print(f"MT-Bench: {len(df)} comparisons on {len(items)} items in {wall:.0f} s; accuracy {acc:.3f} "
          f"(reweight {acc_rw:.3f}, swap-avg {acc_avg:.3f}), P(A) {pb['P(A)']:.3f}", flush=True)
    res: dict = {
        "items": len(items), "comparisons": len(df), "wall_s": wall, **timing, "position_bias": pb,
        "accuracy_rows": acc, "accuracy_rows_reweight": acc_rw, "accuracy_swap_avg": acc_avg,
        "label_mass_mean": float(df["label_mass"].mean()) if "label_mass" in df else None,
        "human_share_output_1": float((truth == 1).mean()),
    }

    # seed 003 protocol: generators G0 / G1, true p = share
    ours = df[["item", "a", "b", "judge", "winner", "human", "p_a"]].copy()
    ours["judge"] = judge.lm.name
    bundled = bj.load_dataset("mtbench")
    bundled = bundled[bundled["item"].isin(set(items["item"])) & bundled["judge"].isin(BUNDLED_JUDGES)]
    check = bundled.merge(ours[["item", "a", "b", "human"]].drop_duplicates(), on=["item", "a", "b"],
                          suffixes=("", "_ours"))
    res["bundled_human_labels_agree"] = bool((check["human"] == check["human_ours"]).all()) and len(check) == len(bundled)
    acc_b = bundled.assign(ok=bundled["winner"] == bundled["human"]).groupby("judge")["ok"].mean()
    res["bundled_accuracy_rows"] = {k: float(v) for k, v in acc_b.items()}
    cols = ["item", "a", "b", "judge", "winner", "human"]
    both = pd.concat([ours[cols], bundled[cols]], ignore_index=True)
    fits = []
    for rep in range(args.reps):
        g = bj.assign_generators(both, share=0.8, seed=rep)
        p_true = g.attrs["p_true"]
        gm, n_lab = mask_labels(g, args.human_ratio, seed=10_000 + rep)
        lab = gm[gm["human"].notna()].drop_duplicates("item")
        k_h = float(np.mean(np.where(lab["human"] == "a", lab["a"], lab["b"]) == "G0")) if len(lab) else float("nan")
        fits.append({"judges": "none: the human labels DS sees, alone", "method": f"share of G0 wins on {n_lab} labelled items",
                     "rep": rep, "p_true": p_true, "p_mean": k_h, "p_mode": k_h, "hdi": [float("nan")] * 2,
                     "r_hat": None, "n_labelled_items": n_lab})
        for label, judges in ((f"ours ({judge.lm.name})", [judge.lm.name]), ("8 bundled LLM judges", BUNDLED_JUDGES),
                              ("ours + 8 bundled", [judge.lm.name, *BUNDLED_JUDGES])):
            for method, kw in (("observed", {"method": "observed"}),
                               ("dawid-skene, in-distribution", {"method": "dawid-skene", "prior": "in-distribution"})):
                src = g if method == "observed" else gm
                t1 = time.perf_counter()
                try:
                    r = fit(src, judges=judges, systems=["G0", "G1"], seed=rep, **kw)
                except Exception as exc:  # noqa: BLE001 - report and go on
                    r = {"error": repr(exc)}
                r.update({"judges": label, "method": method, "rep": rep, "p_true": p_true,
                          "n_labelled_items": n_lab if method != "observed" else 0, "seconds": time.perf_counter() - t1})
                fits.append(r)
                if "error" in r:
                    print(f"  win rate {label} {method} rep {rep}: ERROR {r['error']}", flush=True)
                else:
                    print(f"  win rate {label:32s} {method:30s} rep {rep}: p_mean {r['p_mean']:.3f} p_mode {r['p_mode']:.3f} "
                          f"(true {p_true:.3f})", flush=True)
    res["win_rate"] = fits
    return res


# ----------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--articles", type=int, default=4, help="SummEval articles (file order)")
    ap.add_argument("--abstractive", action="store_true", help="the 12 abstractive summaries only (default: all 16)")
    ap.add_argument("--mtbench-items", type=int, default=100)
    ap.add_argument("--human-ratio", type=float, default=0.2, help="share of items whose human label the DS prior sees")
    ap.add_argument("--reps", type=int, default=3, help="generator assignments (seeds) for the win-rate fits")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's default)")
    ap.add_argument("--store-dir", type=Path, default=HERE / "results")
    ap.add_argument("--quick", action="store_true", help="1 article, 20 MT-Bench items, 1 rep")
    ap.add_argument("--skip", choices=["summeval", "mtbench"], action="append", default=[])
    ap.add_argument("--progress", action="store_true", help="progress bars")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.articles, args.mtbench_items, args.reps = 1, 20, 1
    args.out = args.out or HERE / "results" / ("e2e_comparator_quick.json" if args.quick else "e2e_comparator.json")

    import torch

    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.models import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    t_all = time.perf_counter()
    lm = load_model()
    res: dict = {"model": lm.name, "torch_threads": torch.get_num_threads(), "load_avg_start": os.getloadavg(),
                 "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    args.store_dir.mkdir(parents=True, exist_ok=True)
    if "summeval" not in args.skip:
        res["summeval"] = summeval(args, Comparator(lm, template="summeval-coherence"),
                                   args.store_dir / "e2e_comparator_summeval.sqlite")
    if "mtbench" not in args.skip:
        res["mtbench"] = mtbench(args, Comparator(lm, template="instruction"),
                                 args.store_dir / "e2e_comparator_mtbench.sqlite")
    res["wall_s"] = time.perf_counter() - t_all
    if args.out.exists():  # a resumed run: keep the timing of the run that computed the comparisons
        try:
            prev = json.loads(args.out.read_text())
        except ValueError:
            prev = {}
        for part in ("summeval", "mtbench"):
            old, new = prev.get(part), res.get(part)
            if old and new and new.get("computed") == 0 and old.get("comparisons") == new.get("comparisons"):
                new["first_run"] = old.get("first_run") or {k: old.get(k) for k in ("wall_s", "computed", "from_store")}
                res["first_run_total_wall_s"] = prev.get("first_run_total_wall_s") or prev.get("wall_s")
    res["load_avg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2, default=str))
    md = markdown(res, " ".join(["benchmarks/e2e_comparator.py", *(argv if argv is not None else sys.argv[1:])]))
    args.out.with_suffix(".md").write_text(md)
    print()
    print(md)
    return res


def _timing(part: dict) -> str:
    first = part.get("first_run")
    now = f"{part['wall_s']:.0f} s this run, {part.get('computed', '?')} computed, {part.get('from_store', 0)} from the store"
    if first and first.get("computed"):
        return f"{first['wall_s']:.0f} s when computed ({first['computed']} comparisons); {now}"
    return now


def _f(x: float) -> str:
    return "undefined" if x != x else f"{x:+.3f}"


def markdown(res: dict, command: str) -> str:
    import pandas as pd

    out = [f"command: `.venv/bin/python {command}`", "",
           f"Judge: {res['model']} (the embedded default, float32 CPU), prob mode, both orders; "
           f"{res['torch_threads']} torch thread(s); load average {res['load_avg_start'][0]:.1f} at start, "
           f"{res['load_avg_end'][0]:.1f} at end; total wall {res['wall_s'] / 60:.1f} min"
           + (f" (resumed from the stores; the run that computed them: {res['first_run_total_wall_s'] / 60:.1f} min)"
              if res.get("first_run_total_wall_s") else "") + ".", ""]
    s = res.get("summeval")
    if s:
        pb = s["position_bias"]
        out += [
            f"## SummEval coherence: {s['articles']} articles × {s['summaries_per_article']} summaries, "
            f"{s['comparisons']} comparisons ({_timing(s)})",
            "",
            f"P(A) = {pb['P(A)']:.3f} (share of comparisons won by the first position; mean p_a {pb['mean_p_a']:.3f}); "
            f"p_a quantiles 0/10/50/90/100 %: {', '.join(f'{x:.3f}' for x in s['p_a_quantiles'])}; "
            f"label-token mass {s['label_mass_mean']:.3f}; both orders agree on {s['swap_consistency']:.1%} of pairs.",
            f"Pairwise accuracy vs the expert means (expert ties left out, n = {s['pairwise_accuracy_raw']['n']}): "
            f"raw {s['pairwise_accuracy_raw']['accuracy']:.3f}, debias=reweight {s['pairwise_accuracy_reweight']['accuracy']:.3f}.",
            "",
        ]
        arts = list(next(iter(s["spearman"].values()))["per_article"])
        out += ["| ranking / p | " + " | ".join(f"art. {k + 1}" for k in range(len(arts))) + " | mean Spearman ρ |",
                "|---|" + "---|" * len(arts) + "---|"]
        for name, v in s["spearman"].items():
            out.append(f"| {name} | " + " | ".join(_f(v["per_article"][a]) for a in arts) + f" | **{_f(v['mean'])}** |")
        for name, v in s["subset_20pct_poe_bt_raw"].items():
            out.append(f"| poe-bt / raw, 20 % of pairs by {name} ({v['comparisons']} comparisons) | "
                       + " | ".join(_f(v["per_article"][a]) for a in arts) + f" | {_f(v['mean'])} |")
        ref = s.get("reference_gpt35_pointwise_poe_bt", {})
        if "mean" in ref:
            out.append("| context: bundled GPT-3.5 pointwise scores → poe-bt (12 abstractive systems) | "
                       + " | ".join(_f(ref["per_article"].get(a, float("nan"))) for a in arts) + f" | {_f(ref['mean'])} |")
        out += ["", "poe-bt / poe-g run with `bj.rank`'s own constant-bias correction (`debias=True`, its default); "
                "'reweight' is the comparator's seed 001 eq. 9 on p before ranking. 'undefined': every candidate "
                "got the same score (e.g. win-ratio when the first position always wins), so ρ has no value; "
                "means are over the articles where it is defined.", ""]
    m = res.get("mtbench")
    if m:
        pb = m["position_bias"]
        out += [
            f"## MT-Bench: {m['items']} items × 2 orders = {m['comparisons']} comparisons ({_timing(m)}), template `instruction`",
            "",
            f"Accuracy vs human: per row {m['accuracy_rows']:.3f}, after debias=reweight {m['accuracy_rows_reweight']:.3f}, "
            f"swap-and-average per item {m['accuracy_swap_avg']:.3f} (output_1 preferred by humans on "
            f"{m['human_share_output_1']:.1%} of these items). P(A) = {pb['P(A)']:.3f} (mean p_a {pb['mean_p_a']:.3f}); "
            f"label-token mass {m['label_mass_mean']:.3f}.",
            "Bundled judges' per-row accuracy on the same items: "
            + ", ".join(f"{k} {v:.3f}" for k, v in m["bundled_accuracy_rows"].items())
            + f" (human labels line up with ours: {m['bundled_human_labels_agree']}).",
            "",
        ]
        d = pd.DataFrame([r for r in m["win_rate"] if "error" not in r])
        if len(d):
            out += ["Win rate of G0 (seed 003 protocol, `assign_generators(share=0.8)`, "
                    f"{d['rep'].nunique()} assignment(s); DS sees human labels on {res['args']['human_ratio']:.0%} of items):", "",
                    "| judges | method | p_mean | p_mode | 94 % HDI (rep 0) | true p | mean \\|p_mean − p\\| | max r_hat |",
                    "|---|---|---|---|---|---|---|---|"]
            for (j, meth), g in d.groupby(["judges", "method"], sort=False):
                h = g.iloc[0]["hdi"]
                rh = g["r_hat"].dropna()
                hdi = "—" if h[0] != h[0] else f"[{h[0]:.3f}, {h[1]:.3f}]"
                out.append(f"| {j} | {meth} | {g['p_mean'].mean():.3f} | {g['p_mode'].mean():.3f} | {hdi} | "
                           f"{g['p_true'].mean():.3f} | {(g['p_mean'] - g['p_true']).abs().mean():.3f} | "
                           f"{(f'{rh.max():.3f}' if len(rh) else '—')} |")
        errs = [r for r in m["win_rate"] if "error" in r]
        if errs:
            out += ["", "Errors: " + "; ".join(f"{r['judges']} {r['method']}: {r['error']}" for r in errs)]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
