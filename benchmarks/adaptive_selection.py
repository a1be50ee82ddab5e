"""Benchmark: choosing the next comparisons from the posterior (``bj.next_comparisons``) in a loop.

Data: real LLM-judge probabilities with known expert rankings: SummEval (12 abstractive systems x
100 articles, coherence, judge ``gpt-4-0314/rts``) and HANNA (11 story systems x 96 prompts,
coherence, judge ``ChatGPT/1``), every ordered pair of the systems of a prompt judged
(``bj.datasets.summeval.pairs`` / ``hanna.pairs``). The pool is those judgments; a method names a
pair of systems (and the order to show it in), and the loop takes that ordered pair's judgment on
a prompt not yet used for it (a random one).

Loop: the same comparisons to start (a random cycle through the systems, so that every system is
connected), then batches of ``--batch`` chosen by the method,
refitting ``bj.leaderboard(estimand="judges", sampler="laplace")`` after each batch, up to
``--budget`` comparisons. Methods: ``posterior-ranking`` (``goal="ranking"``), ``posterior-top3``
(``goal="top-k", k=3``), ``random`` (a random pair), ``no-repeat`` (every pair once before any
twice, random order), ``round-robin`` (the pairs in a fixed cycle), ``greedy-d-optimal``
(``bj.select_comparisons``, the static design of Liusie et al. 2024 (PoE) eq. 15-17), and
``oracle-ranking``: ``goal="ranking"`` on the current posterior moved to the means of a fit of the
whole pool (the location the loop is learning, handed to it; its spread stays the current
fit's). No user has the oracle: it bounds what choosing by this criterion could gain once the
scores were known, so a margin it does not reach is beyond the criterion on these data.

Counted, per method, set and seed: the comparisons needed until (a) the posterior mean ranks the
systems with Spearman >= the target against the experts' ranking, and (b) the posterior probability
that the top 3 are the pool's top 3 (the judge's ranking from every comparison in the pool) is >= 0.9.
The target of (a) is 0.9, or 95% of what the whole pool reaches where the judge cannot reach 0.9
(it is a judge, not the experts); both are said in the table.

Usage::

    .venv/bin/python benchmarks/adaptive_selection.py                 # both sets, 3 seeds, ~5 min
    .venv/bin/python benchmarks/adaptive_selection.py --sets summeval --seeds 1 --budget 240

Writes ``benchmarks/results/adaptive_selection.{json,md}`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bayes_judge as bj  # noqa: E402
from bayes_judge.datasets import hanna, summeval  # noqa: E402

SETS = {"summeval": (summeval, "gpt-4-0314/rts"), "hanna": (hanna, "ChatGPT/1")}
METHODS = ("posterior-ranking", "posterior-top3", "random", "no-repeat", "round-robin", "greedy-d-optimal",
           "oracle-ranking")


def load(name: str):
    mod, judge = SETS[name]
    pool = mod.pairs("coherence", judge=judge).drop(columns="human", errors="ignore")
    systems = sorted(set(pool["a"]))
    scores = mod.scores("coherence")
    experts = scores[scores["candidate"].isin(systems)].groupby("candidate")["score"].mean()
    return pool.reset_index(drop=True), systems, experts


def fit(rows: pd.DataFrame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bj.leaderboard(rows, estimand="judges", sampler="laplace", pointwise=False, seed=0)


def top3_prob(idata, top: set[str]) -> float:
    s = idata.posterior["s"]
    names = np.asarray(s.coords["system"].to_numpy())
    d = s.to_numpy().reshape(-1, s.shape[-1])
    best = np.argsort(-d, axis=1)[:, :3]
    return float(np.mean([set(names[b]) == top for b in best]))


def moved_to(idata, mean: pd.Series):
    """A copy of a fit whose score draws are moved to ``mean`` (each system's), their spread kept."""
    out = idata.copy()
    s = out.posterior["s"]
    shift = mean[[str(x) for x in s.coords["system"].to_numpy()]].to_numpy() - s.mean(("chain", "draw")).to_numpy()
    out.posterior["s"] = s + shift
    return out


def run(name: str, method: str, seed: int, args, pool, systems, experts, top_pool: set[str], target: float,
        full_mean: pd.Series) -> dict:
    rng = np.random.default_rng(seed)
    by_pair = {k: list(rng.permutation(v)) for k, v in pool.groupby(["a", "b"]).groups.items()}
    pairs = [(a, b) for a in systems for b in systems if a < b]
    taken: list[int] = []

    def take(a: str, b: str) -> None:
        for key in ((a, b), (b, a)):
            if by_pair.get(key):
                taken.append(int(by_pair[key].pop()))
                return

    # the same first comparisons for every method: a random cycle through the systems (connected)
    ring = list(np.random.default_rng(10_000 + seed).permutation(systems))
    for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
        take(str(a), str(b))
    cycle = list(pairs)
    rng.shuffle(cycle)
    # the static design picks distinct pairs (every pair once at most); past them it starts over
    design = bj.select_comparisons(systems, min(args.budget, len(pairs)), method="greedy-d-optimal")
    static = design[["a", "b"]].to_numpy().tolist()
    step = 0
    curve = []
    reached = {"spearman": None, "top3": None}
    while len(taken) < args.budget:
        idata = fit(pool.loc[taken])
        mean = idata.posterior["s"].mean(("chain", "draw")).to_series()
        rho = spearmanr(mean[experts.index], experts).statistic
        p3 = top3_prob(idata, top_pool)
        curve.append((len(taken), float(rho), p3))
        if reached["spearman"] is None and rho >= target:
            reached["spearman"] = len(taken)
        if reached["top3"] is None and p3 >= 0.9:
            reached["top3"] = len(taken)
        if all(v is not None for v in reached.values()):
            break
        if method.startswith(("posterior", "oracle")):
            goal = dict(goal="top-k", k=3) if method == "posterior-top3" else dict(goal="ranking")
            nxt = bj.next_comparisons(moved_to(idata, full_mean) if method == "oracle-ranking" else idata,
                                      args.batch, **goal)
            chosen = list(zip(nxt["a"], nxt["b"], strict=True)) or [pairs[int(rng.integers(len(pairs)))]]
        elif method == "random":
            chosen = [pairs[int(i)] for i in rng.integers(len(pairs), size=args.batch)]
        elif method in ("no-repeat", "round-robin"):
            order = cycle if method == "no-repeat" else pairs
            chosen = [order[(step * args.batch + i) % len(order)] for i in range(args.batch)]
        else:
            chosen = [tuple(static[(step * args.batch + i) % len(static)]) for i in range(args.batch)]
        for a, b in chosen:
            take(a, b)
        step += 1
    return {"set": name, "method": method, "seed": seed, **{f"n_{k}": v for k, v in reached.items()}, "curve": curve}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="summeval,hanna")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--budget", type=int, default=600)
    ap.add_argument("--methods", default=",".join(METHODS), help="which methods to run (comma-separated)")
    ap.add_argument("--out", default=str(HERE / "results" / "adaptive_selection.json"))
    ap.add_argument("--render", metavar="JSON", help="only rewrite the table of an earlier run's JSON")
    args = ap.parse_args(argv)
    if args.render:
        res = json.loads(Path(args.render).read_text())
        for name, info in res["sets"].items():  # runs from before this field: the pool's fit is quick
            if "p_top3_full_pool" not in info:
                info["p_top3_full_pool"] = top3_prob(fit(load(name)[0]), set(info["top3_pool"]))
        Path(args.render).write_text(json.dumps(res, indent=1))
        md = markdown(res, res.get("command", "python benchmarks/adaptive_selection.py"))
        Path(args.render).with_suffix(".md").write_text(md)
        print(md)
        return res
    results: dict = {"args": vars(args), "sets": {}, "runs": []}
    for name in args.sets.split(","):
        pool, systems, experts = load(name)
        full = fit(pool)
        mean = full.posterior["s"].mean(("chain", "draw")).to_series()
        rho_full = float(spearmanr(mean[experts.index], experts).statistic)
        top_pool = set(mean.sort_values(ascending=False).index[:3])
        target = 0.9 if rho_full >= 0.9 / 0.95 else round(0.95 * rho_full, 3)
        results["sets"][name] = {"n_pool": len(pool), "spearman_full_pool": rho_full, "target": target,
                                 "top3_pool": sorted(top_pool), "p_top3_full_pool": top3_prob(full, top_pool)}
        print(f"{name}: {len(pool)} judgments; the whole pool's Spearman with the experts {rho_full:.3f}; "
              f"target {target}", flush=True)
        for method in args.methods.split(","):
            if method not in METHODS:
                raise SystemExit(f"--methods: {method!r} is not one of {', '.join(METHODS)}")
            for seed in range(args.seeds):
                r = run(name, method, seed, args, pool, systems, experts, top_pool, target, mean)
                results["runs"].append(r)
                print(f"  {method:18} seed {seed}: spearman at {r['n_spearman']}, top-3 at {r['n_top3']}", flush=True)
    command = "python benchmarks/adaptive_selection.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results["command"] = command
    out = Path(args.out)
    out.write_text(json.dumps(results, indent=1))
    md = markdown(results, command)
    out.with_suffix(".md").write_text(md)
    print(md)
    return results


AT = (60, 120, 240, 480)  # budgets at which the curves are read


def _at(curve: list, n: int, col: int) -> float:
    """The curve's value (1: Spearman, 2: P(top 3)) at the last refit with at most ``n`` comparisons."""
    vals = [c[col] for c in curve if c[0] <= n]
    return float(vals[-1]) if vals else float("nan")


def markdown(res: dict, command: str) -> str:
    budget = res["args"]["budget"]
    lines = ["# Choosing the next comparisons from the posterior (`benchmarks/adaptive_selection.py`)", "",
             f"Command: `{command}`. Comparisons needed (mean over seeds; a seed that does not get there within "
             f"{budget} counts as {budget}, and the count of those is in brackets), refitting "
             "`bj.leaderboard(estimand=\"judges\", sampler=\"laplace\")` after every batch.", ""]
    for name, info in res["sets"].items():
        lines += [f"## {name}", "",
                  f"{info['n_pool']} judgments in the pool; every one of them ranks the systems at Spearman "
                  f"{info['spearman_full_pool']:.3f} with the experts, so the target is {info['target']}; the pool's "
                  f"top 3: {', '.join(info['top3_pool'])}, to which a fit of the whole pool gives posterior probability "
                  f"{info['p_top3_full_pool']:.2f}" + (" (a method that draws a subset of this pool is not expected to pass 0.9)"
                                                      if info["p_top3_full_pool"] < 0.9 else "") + ".", "",
                  "| method | to Spearman >= target | to P(top 3) >= 0.9 | Spearman at " + " / ".join(map(str, AT))
                  + " | P(top 3) at " + " / ".join(map(str, AT)) + " |", "|---|---|---|---|---|"]
        for method in METHODS:
            runs = [r for r in res["runs"] if r["set"] == name and r["method"] == method]
            if not runs:
                continue
            cells = []
            for key in ("n_spearman", "n_top3"):
                vals = [r[key] if r[key] is not None else budget for r in runs]
                miss = sum(r[key] is None for r in runs)
                cells.append(f"{np.mean(vals):.0f}" + (f" [{miss} not reached]" if miss else ""))
            for col in (1, 2):  # the curves at fixed budgets: steadier than a first crossing
                at = [np.mean([_at(r["curve"], n, col) for r in runs]) for n in AT]
                cells.append(" / ".join(f"{v:.2f}" for v in at))
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
