"""Efficiency curves on SummEval: Spearman vs expert scores as the number of comparisons K grows.

Protocol of seed 004 §4.2 / Table 1 / Fig. 1 on the bundled SummEval data:

* candidates: the 12 abstractive summaries of an article (only those have LLM scores; the 4
  extractive systems of the paper's N = 16 have none), so N = 12 and N(N-1) = 132 ordered pairs;
* comparisons: soft probabilities from pointwise LLM scores,
  ``p_ij = sigmoid((s_i - s_j) / tau)`` with tau = 1 score point
  (:func:`bayes_judge.load_summeval_pairs`; the paper's ``P(A) / (P(A) + P(B))`` needs
  pairwise token probabilities these data do not have); hard decisions are ``p > 0.5`` / ties;
* K grid: N ... N(N-1), including K = 20% of N(N-1) (the paper's K = 48 of 240);
* ``random`` selection: ``bj.select_comparisons(..., method="random", seed=...)`` (ordered
  pairs, every candidate at least once, as §4.2), ``--draws`` draws per K and article.  A draw
  whose comparison graph does not connect the 12 candidates cannot be scored by BT / PoE (scores
  of separate components are not comparable; ``bj.rank`` raises), so it is redrawn with the next
  seed: the curves are conditional on a connected design; the acceptance rate per K is reported;
* ``greedy`` selection: ``method="greedy-d-optimal"`` (eq. 15-17), deterministic, one draw, for
  K <= N(N-1)/2 (it picks distinct unordered pairs);
* methods: win-ratio, bt, avg-prob, poe-g-hard, poe-g, poe-bt via ``bj.rank`` with
  ``debias=False``: the probabilities come from pointwise scores, so ``p_ij + p_ji = 1`` and there
  is no position bias to remove (and on the greedy design, whose ``a`` is always the earlier
  system, ``beta = E[p]`` would remove real quality signal instead);
* metric: per article, Spearman between the ranking scores and the expert mean scores (scipy's
  average-rank convention); a constant score vector (all observed comparisons tied, e.g. an
  article whose 12 LLM scores are all equal) counts as 0; averaged over articles (and, with
  ``--aspect all``, over the 4 aspects as Table 1), then mean +- sd over draws.

Reading the numbers: the LLM scores are mostly integers, so about 30% of pairs tie
(``p = 0.5``).  ``p_ij = sigmoid(s_i - s_j)`` is exactly a Bradley-Terry model of the LLM scores,
so PoE-BT recovers the LLM's own order (ties included) from any connected design and is flat at
the full-set value; on the full set every method gives that order.  In between, the other methods
break the LLM's ties by opponent luck, which lowers Spearman against the experts: that is why
their curves stay below the K = N(N-1) value until K reaches it.

Usage::

    .venv/bin/python benchmarks/efficiency_curves.py               # all 100 articles, 4 aspects
    .venv/bin/python benchmarks/efficiency_curves.py --quick       # 10 articles, 3 draws
    .venv/bin/python benchmarks/efficiency_curves.py --aspect coherence --articles 50 --draws 20

Writes ``benchmarks/results/efficiency_curves.json`` and ``.png`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bayes_judge as bj  # noqa: E402
from bayes_judge.datasets import SUMMEVAL_ASPECTS, SUMMEVAL_TAU  # noqa: E402

METHODS = ("win-ratio", "bt", "avg-prob", "poe-g-hard", "poe-g", "poe-bt")
RESULTS = Path(__file__).parent / "results"


def k_grid(n: int) -> list[int]:
    """About 8 values of K from N to N(N-1), including round(0.2 N(N-1))."""
    full = n * (n - 1)
    k20 = round(0.2 * full)
    grid = np.unique(np.round(np.geomspace(n, full, 8)).astype(int))
    grid = set(grid.tolist()) | {k20, full // 2}
    # drop values that crowd k20 / N(N-1)/2 (within 10%) to keep the grid near 8 points
    keep = sorted(grid)
    out: list[int] = []
    for k in keep:
        if k in (n, k20, full // 2, full) or all(abs(k - m) > 0.1 * m for m in (k20, full // 2)):
            out.append(int(k))
    return out


def connected(n: int, a: np.ndarray, b: np.ndarray) -> bool:
    g = sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    return connected_components(g, directed=False)[0] == 1


def random_designs(n: int, k: int, n_articles: int, draws: int, seed: int) -> tuple[np.ndarray, float]:
    """Connected random designs, shape (n_articles * draws, k, 2) of candidate indices."""
    out = np.empty((n_articles * draws, k, 2), dtype=np.int64)
    tried = 0
    for slot in range(n_articles * draws):
        attempt = 0
        while True:
            s = np.random.SeedSequence([seed, k, slot, attempt])
            d = bj.select_comparisons(n, k, method="random", seed=np.random.default_rng(s))
            tried += 1
            a, b = d["a"].to_numpy(), d["b"].to_numpy()
            if connected(n, a, b):
                out[slot, :, 0], out[slot, :, 1] = a, b
                break
            attempt += 1
    return out, n_articles * draws / tried


def spearman_rows(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Row-wise Spearman (average ranks) of two (rows, N) arrays; constant rows give 0.

    Scores equal up to solver rounding (relative 1e-9 of the row's range) count as ties, so
    that e.g. ``poe-g`` and ``avg-prob`` on the full set (affine images, A.3) tie alike.
    """
    from scipy.stats import rankdata

    span = np.ptp(pred, axis=1, keepdims=True)
    pred = np.round((pred - pred.min(axis=1, keepdims=True)) / np.where(span > 0, span, 1.0), 9)
    rp = rankdata(pred, axis=1)
    rt = rankdata(truth, axis=1)
    rp -= rp.mean(axis=1, keepdims=True)
    rt -= rt.mean(axis=1, keepdims=True)
    den = np.sqrt((rp**2).sum(axis=1) * (rt**2).sum(axis=1))
    num = (rp * rt).sum(axis=1)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def score_designs(
    pmat: np.ndarray, truth: np.ndarray, systems: np.ndarray, designs: np.ndarray, reps: int
) -> dict[str, np.ndarray]:
    """Spearman per (rep, article) of every method.

    pmat : (A, N, N) soft probabilities; truth : (A, N) expert means;
    designs : (A * reps, K, 2), row ``r * A + art`` for rep r (or (K, 2) shared by all articles).
    """
    n_art, n = truth.shape
    if designs.ndim == 2:
        designs = np.broadcast_to(designs, (n_art * reps, *designs.shape))
    rows, k = designs.shape[0], designs.shape[1]
    art = np.tile(np.arange(n_art), reps)  # row r * A + a -> article a
    ia, ib = designs[..., 0], designs[..., 1]
    p = pmat[art[:, None], ia, ib]
    item = np.repeat(np.arange(rows), k)
    df = pd.DataFrame(
        {"item": item, "a": systems[ia.ravel()], "b": systems[ib.ravel()], "p_a": p.ravel()}
    )
    out = {}
    for m in METHODS:
        r = bj.rank(df, method=m, debias=False)
        # rank() sorts items numerically; candidates sorted by name inside each item = `systems`
        r = r.sort_values(["item", "candidate"], key=lambda c: c.astype(int) if c.name == "item" else c)
        pred = r["score"].to_numpy().reshape(rows, n)
        out[m] = spearman_rows(pred, truth[art]).reshape(reps, n_art)
    return out


def load(aspect: str, judge: str, articles: int, tau: float):
    pairs = bj.load_summeval_pairs(aspect, judge=judge, articles=articles, tau=tau)
    systems = np.sort(pairs["a"].unique()).astype(object)
    arts = list(pd.unique(pairs["item"]))
    n = len(systems)
    ai = pd.Index(arts).get_indexer(pairs["item"])
    si = pd.Index(systems).get_indexer(pairs["a"])
    sj = pd.Index(systems).get_indexer(pairs["b"])
    pmat = np.full((len(arts), n, n), 0.5)
    pmat[ai, si, sj] = pairs["p_a"].to_numpy()
    sc = bj.load_summeval_scores(aspect, articles=arts)
    sc = sc[sc["system_type"] == "abstractive"]
    truth = (
        sc.set_index(["item", "candidate"])["score"]
        .reindex(pd.MultiIndex.from_product([arts, systems]))
        .to_numpy()
        .reshape(len(arts), n)
    )
    return pmat, truth, systems


def ordering_check(row: dict[str, float], tol: float) -> tuple[bool, list[str]]:
    """Seed 004 Table 1 at K = 20%: PoE-BT ~ PoE-g > avg-prob > BT > win-ratio."""
    g, b, a, bt, w = row["poe-g"], row["poe-bt"], row["avg-prob"], row["bt"], row["win-ratio"]
    checks = [
        (abs(b - g) <= tol, f"PoE-BT ≈ PoE-g (|{b:.3f} − {g:.3f}| = {abs(b - g):.3f} ≤ {tol})"),
        (min(b, g) > a, f"PoE-BT, PoE-g > avg-prob ({min(b, g):.3f} > {a:.3f})"),
        (a > bt, f"avg-prob > BT ({a:.3f} > {bt:.3f})"),
        (bt > w, f"BT > win-ratio ({bt:.3f} > {w:.3f})"),
    ]
    return all(c for c, _ in checks), [("holds: " if c else "FAILS: ") + s for c, s in checks]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=100, help="first n articles (default all 100)")
    parser.add_argument("--draws", type=int, default=20, help="random draws per K and article")
    parser.add_argument("--aspect", default="all", choices=["all", *SUMMEVAL_ASPECTS])
    parser.add_argument("--judge", default="gpt-3.5-turbo-0301/rts", help="LLM judge setting")
    parser.add_argument("--tau", type=float, default=SUMMEVAL_TAU, help="p = sigmoid(Δscore / tau)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tol", type=float, default=0.01, help="'≈' tolerance in Spearman")
    parser.add_argument("--quick", action="store_true", help="10 articles, 3 draws, coherence")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG")
    parser.add_argument("--out", type=Path, default=RESULTS / "efficiency_curves.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.articles, args.draws, args.aspect = min(args.articles, 10), min(args.draws, 3), "coherence"
    aspects = list(SUMMEVAL_ASPECTS) if args.aspect == "all" else [args.aspect]

    t0 = time.perf_counter()
    data = {a: load(a, args.judge, args.articles, args.tau) for a in aspects}
    _, truth0, systems = data[aspects[0]]
    n_art, n = truth0.shape
    grid = k_grid(n)
    k20 = round(0.2 * n * (n - 1))
    curves: dict[str, dict[str, dict[str, list]]] = {"random": {}, "greedy": {}}
    accept = {}
    for k in grid:
        designs, accept[k] = random_designs(n, k, n_art, args.draws, args.seed)
        greedy = None
        if n - 1 <= k <= n * (n - 1) // 2:
            g = bj.select_comparisons(list(range(n)), k, method="greedy-d-optimal")
            greedy = g[["a", "b"]].to_numpy().astype(np.int64)
        for sel, des, reps in (("random", designs, args.draws), ("greedy", greedy, 1)):
            if des is None:
                continue
            per_aspect = [score_designs(*data[a][:2], systems, des, reps) for a in aspects]
            for m in METHODS:
                # mean over articles and aspects per draw -> mean and sd over draws
                per_draw = np.mean([r[m].mean(axis=1) for r in per_aspect], axis=0)
                c = curves[sel].setdefault(m, {"k": [], "mean": [], "sd": []})
                c["k"].append(k)
                c["mean"].append(float(per_draw.mean()))
                c["sd"].append(float(per_draw.std(ddof=1)) if reps > 1 else 0.0)
        print(f"K={k:4d} done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    wall = time.perf_counter() - t0

    def at(sel: str, k: int) -> dict[str, float]:
        return {m: curves[sel][m]["mean"][curves[sel][m]["k"].index(k)] for m in METHODS}

    ok, lines = ordering_check(at("random", k20), args.tol)
    # table
    head = "| K | sel | " + " | ".join(METHODS) + " |"
    md = [head, "|" + "---|" * (len(METHODS) + 2)]
    for k in grid:
        for sel in ("random", "greedy"):
            if k not in curves[sel][METHODS[0]]["k"]:
                continue
            vals = at(sel, k)
            mark = " (20%)" if k == k20 else ""
            md.append(f"| {k}{mark} | {sel} | " + " | ".join(f"{vals[m]:.3f}" for m in METHODS) + " |")
    table = "\n".join(md)
    verdict = (
        f"Seed 004 Table 1 ordering at K = {k20} (20% of {n * (n - 1)}), random selection: "
        + ("HOLDS" if ok else "DOES NOT HOLD") + "\n" + "\n".join("  - " + s for s in lines)
    )
    setting = (
        f"SummEval, aspects {', '.join(aspects)}; judge {args.judge}, p = sigmoid(Δscore / {args.tau}); "
        f"N = {n} abstractive systems, {n_art} articles, {args.draws} random draws per K "
        f"(connected designs; acceptance {', '.join(f'{k}: {accept[k]:.2f}' for k in grid)}); "
        f"debias=False; runtime {wall:.0f} s"
    )
    print(setting + "\n\nMean Spearman vs expert mean scores (rows: K, selection)\n\n" + table + "\n\n" + verdict)

    result = {
        "setting": {
            "aspects": aspects, "judge": args.judge, "tau": args.tau, "n_candidates": n,
            "articles": n_art, "draws": args.draws, "seed": args.seed, "k_grid": grid, "k_20pct": k20,
            "debias": False, "random_acceptance": {str(k): v for k, v in accept.items()},
        },
        "curves": curves,
        "ordering_at_20pct": {"holds": ok, "checks": lines, "values": at("random", k20)},
        "table_md": table,
        "runtime_s": wall,
        "python": platform.python_version(),
        "command": "benchmarks/efficiency_curves.py " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if not args.no_plot:
        plot(curves, k20, setting, args.out.with_suffix(".png"))
    return result


def plot(curves: dict, k20: int, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    colors = dict(zip(METHODS, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for m in METHODS:
        c = curves["random"][m]
        k, mu, sd = np.array(c["k"]), np.array(c["mean"]), np.array(c["sd"])
        ax.plot(k, mu, "-o", ms=3, color=colors[m], label=f"{m} (random)")
        ax.fill_between(k, mu - sd, mu + sd, color=colors[m], alpha=0.15)
        g = curves["greedy"].get(m)
        if g and g["k"]:
            ax.plot(g["k"], g["mean"], "--", color=colors[m], alpha=0.8)
    ax.axvline(k20, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("K, comparisons per article (log scale); dashed: greedy D-optimal")
    ax.set_ylabel("mean Spearman vs expert scores")
    ax.set_title("\n".join(title.split("; ")[:3]), fontsize=8)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
