"""Natural pairs of real systems: do the win-rate intervals cover what people said?

``benchmarks/real_calibration.py`` assigns each item's two outputs at random to two
pseudo-systems, so a judge's errors cannot depend on the system.  Here nothing is reassigned
(:mod:`bayes_judge.datasets.natural`):

* SummEval: the 12 abstractive summarisers, all 66 pairs, 100 articles, 4 aspects; the 9 LLM
  judge settings of ``llm_scores.csv``;
* HANNA: the 11 story writers (10 systems and the human), all 55 pairs, 96 prompts, 6 criteria;
  its 5 LLM judges (each the mean of its 4 evaluation prompts).

One case is one pair of systems on one aspect; its truth is the share of items whose human
mean score prefers the first system (equal means left out).  Every judge's two scores become its
verdict, a tie where equal.  The synthetic protocols of ``real_calibration.py`` (``seed003``,
``length``: 7 LLMBar-family sets, G0's true share 0.5 / 0.65 / 0.8) run beside it, so an
estimator is seen on both.

Estimators, each giving a 90% interval:

* no labels (budget 0): ``default`` (``bj.win_rate(df)``: estimand "human", the bridge),
  ``bridge_loso`` (the bridge with its prior fitted leaving the case's source out: SummEval,
  HANNA or the LLMBar family; the held-out check of the shipped prior), ``observed`` (the judges'
  share k with its interval, seed 003 eq. 4), ``consensus`` (the consensus Dawid-Skene model,
  the default before the bridge; ``--with-consensus``), and ``judges`` (``estimand="judges"``,
  fitted on a random half of each pair's items; its truth is the panel's rate on all of them);
* with labels (natural pairs, budgets > 0; the human-tied items left out of the table): a random
  ``max(2, round(b · n))`` of each pair's items labelled; ``default`` (the label regression),
  ``ppi++`` (PPI++ on the panel's per-item share, ties ½) and ``labels_only`` (Clopper-Pearson).

Usage::

    .venv/bin/python benchmarks/natural_pairs.py                          # the full grid
    .venv/bin/python benchmarks/natural_pairs.py --reps 2 --budgets 0,0.1 --out /tmp/np_quick
    .venv/bin/python benchmarks/natural_pairs.py --fit-prior               # the shipped bridge prior

Writes ``<out>.json`` (every case), ``<out>.md`` (tables) and ``<out>.png``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_calibration as rc  # noqa: E402

import bayes_judge as bj  # noqa: E402
from bayes_judge.datasets import natural  # noqa: E402
from bayes_judge.winrate.bridge import consensus_votes, fit_bridge_prior, panel_scores  # noqa: E402
from bayes_judge.winrate.ppi import labels_only_interval, ppi_mean  # noqa: E402

ALPHA = 0.1
OUT = Path(__file__).resolve().parent / "results" / "natural_pairs"
SYNTH_SETS = tuple(s for s in rc.SETS)
SHARES = (0.5, 0.65, 0.8)


def source_of(set_name: str) -> str:
    """The leave-one-source-out group of a set: summeval, hanna or llmbar."""
    return set_name.split("/")[0] if "/" in set_name else "llmbar"


def _interval(fit) -> pd.DataFrame:
    s = bj.win_rate_summary(fit, hdi_prob=1 - ALPHA)
    return s[["p_mean", "hdi_low", "hdi_high"]].clip(0.0, 1.0)


def _records(proto: str, set_name: str, est: str, budget: float, rep: int, s: pd.DataFrame,
             truth: pd.Series, seconds: float) -> list[dict]:
    s = s.reindex(truth.index)
    t = truth.to_numpy()
    lo, hi, m = (s[c].to_numpy() for c in ("hdi_low", "hdi_high", "p_mean"))
    return [dict(protocol=proto, set=set_name, case=str(c), estimator=est, budget=budget, rep=rep,
                 truth=float(tt), estimate=float(mm), low=float(ll), high=float(hh),
                 covered=bool(ll <= tt <= hh), error=float(abs(mm - tt)), width=float(hh - ll),
                 seconds=seconds / len(t))
            for c, tt, mm, ll, hh in zip(truth.index, t, m, lo, hi, strict=True)]


def _timed(fn):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn()
    return out, time.perf_counter() - t0


def _encoded(df: pd.DataFrame):
    return bj.encode_win_rate(df.assign(human=None), ties="skip")


def cases_of(df: pd.DataFrame, truth: pd.Series, set_name: str) -> list[tuple[str, np.ndarray, float]]:
    """(set, consensus votes, truth) per pair, for :func:`fit_bridge_prior`."""
    d = _encoded(df)
    v = consensus_votes(d.n_first, d.n_second)
    return [(set_name, v[d.unit_pair == j], float(truth[lab])) for j, lab in enumerate(d.pair_labels)
            if lab in truth.index]


def judges_rows(df: pd.DataFrame, proto: str, set_name: str, reps: int, seed: int) -> list[dict]:
    """``estimand="judges"`` fitted on a random half of every pair's items; the truth is the panel's
    rate on all of them."""
    d = bj.encode_win_rate(df.assign(human=None), ties="skip", swap="none")  # every row, as the estimator
    s = panel_scores(d.n_first, d.n_second, d.n_tie)
    full = pd.Series(np.bincount(d.unit_pair, weights=s) / np.bincount(d.unit_pair), index=d.pair_labels)
    key = df["a"].astype(str) + " vs " + df["b"].astype(str) + "\x00" + df["item"].astype(str)
    units = key.unique()
    out = []
    for rep in range(reps):
        rng = np.random.default_rng([seed, rep, 7])
        keep = set(units[rng.random(units.size) < 0.5])
        half = df[key.isin(keep).to_numpy()]
        fit, sec = _timed(lambda half=half, rep=rep: bj.win_rate(half.assign(human=None), estimand="judges", seed=rep))
        out += _records(proto, set_name, "judges", 0.0, rep, _interval(fit), full, sec)
    return out


def no_label_rows(df: pd.DataFrame, truth: pd.Series, proto: str, set_name: str, priors: dict,
                  with_consensus: bool, seed: int) -> list[dict]:
    bare = df.assign(human=None)
    fits = {
        "default": lambda: bj.win_rate(bare, seed=seed),
        "bridge_loso": lambda: bj.win_rate(bare, method="bridge", priors=priors[source_of(set_name)], seed=seed),
        "observed": lambda: bj.win_rate(bare, method="observed", seed=seed),
    }
    if with_consensus:
        fits["consensus"] = lambda: bj.win_rate(bare, method="dawid-skene", ds_model="consensus", prior="none",
                                                chains=4, draws=500, tune=500, seed=seed)
    out = []
    for name, fn in fits.items():
        fit, sec = _timed(fn)
        out += _records(proto, set_name, name, 0.0, 0, _interval(fit), truth, sec)
    return out


def label_rows(df: pd.DataFrame, set_name: str, budgets: list[float], reps: int, seed: int) -> list[dict]:
    """Natural pairs with a share of each pair's items labelled (human-tied items left out)."""
    dec = df[df["human"].notna()]
    truth = natural.truth(dec)
    d = _encoded(dec)
    f = panel_scores(d.n_first, d.n_second, d.n_tie)
    units = dec.drop_duplicates(["item", "a", "b"])[["item", "a", "b", "human"]].reset_index(drop=True)
    pair = units["a"].astype(str) + " vs " + units["b"].astype(str)
    # each unit's panel share and label in the encoded order
    enc = pd.Series(f, index=pd.MultiIndex.from_arrays([np.asarray(d.pair_labels)[d.unit_pair], d.unit_item.astype(str)]))
    f_u = enc.reindex(pd.MultiIndex.from_arrays([pair, units["item"].astype(str)])).to_numpy()
    y_u = (units["human"] == "a").to_numpy(float)
    out = []
    for b in budgets:
        for rep in range(reps):
            rng = np.random.default_rng([seed, int(1000 * b), rep, 11])
            u = rng.random(len(units))
            rank = pd.Series(u).groupby(pair.to_numpy()).rank(method="first").to_numpy()
            n_pair = pair.map(pair.value_counts()).to_numpy()
            lab = rank <= np.maximum(2, np.round(b * n_pair))
            labels = units[lab]
            fit, sec = _timed(lambda labels=labels, rep=rep: bj.win_rate(dec.assign(human=None), human=labels, seed=rep,
                                                                 chains=4, draws=500, tune=500))
            out += _records("natural", set_name, "default", b, rep, _interval(fit), truth, sec)
            rows_p, rows_l = [], []
            for name in truth.index:
                sel = (pair == name).to_numpy()
                li, ui = sel & lab, sel & ~lab
                try:  # PPI refuses labels of one class (its normal interval collapses)
                    r = ppi_mean(y_u[li], f_u[li], f_u[ui], alpha=ALPHA, lam="tuned")
                    rows_p.append((name, r.estimate, r.low, r.high))
                except ValueError:
                    rows_p.append((name, np.nan, np.nan, np.nan))  # refused: kept, left out of the means
                lo = labels_only_interval(y_u[li], alpha=ALPHA)
                rows_l.append((name, lo.estimate, lo.low, lo.high))
            for est, rows in (("ppi++", rows_p), ("labels_only", rows_l)):
                s = pd.DataFrame(rows, columns=["case", "p_mean", "hdi_low", "hdi_high"]).set_index("case").clip(0, 1)
                out += _records("natural", set_name, est, b, rep, s, truth, 0.0)
    return out


def synthetic_tables(reps: int, seed: int):
    for name in SYNTH_SETS:
        for proto in ("seed003", "length"):
            for share in SHARES:
                for rep in range(reps):
                    s = int(np.random.SeedSequence([seed, SYNTH_SETS.index(name), proto == "length",
                                                    int(1000 * share), rep]).generate_state(1)[0] % (2**31 - 1))
                    df = rc.assign(name, proto, share, s, 4.0)
                    truth = pd.Series([df.attrs["p_true"]], index=["G0 vs G1"])
                    yield proto, name, rep, df, truth


def prior_cases(tables: dict[str, pd.DataFrame], seed: int) -> list[tuple[str, np.ndarray, float]]:
    """The bridge prior's cases: every pair of every natural set (whatever ``--sets`` runs) and 3
    draws of every synthetic cell; ``tables`` holds natural tables already read."""
    cases = []
    for src, aspects in natural.SOURCES.items():
        for asp in aspects:
            k = f"{src}/{asp}"
            df = tables[k] if k in tables else natural.system_pairs(src, asp)
            cases += cases_of(df, natural.truth(df), k)
    return cases + [c for _, name, _, df, t in synthetic_tables(3, seed + 1) for c in cases_of(df, t, name)]


def run(args) -> list[dict]:
    natural_sets = [(src, asp) for src, aspects in natural.SOURCES.items() for asp in aspects
                    if not args.sets or f"{src}/{asp}" in args.sets or src in args.sets]
    tables = {f"{s}/{a}": natural.system_pairs(s, a) for s, a in natural_sets}
    truths = {k: natural.truth(v) for k, v in tables.items()}
    synth = list(synthetic_tables(args.synth_reps, args.seed)) if args.synthetic else []
    cases = prior_cases(tables, args.seed)
    sources = sorted({source_of(c[0]) for c in cases})
    priors = {s: fit_bridge_prior([c for c in cases if source_of(c[0]) != s]) for s in sources}
    priors.update({s: fit_bridge_prior(cases) for s in ("summeval", "hanna", "llmbar") if s not in priors})
    for s, p in priors.items():
        print(f"bridge prior without {s}: {p.describe()}", flush=True)
    records: list[dict] = []
    for k, df in tables.items():
        t0 = time.perf_counter()
        records += no_label_rows(df, truths[k], "natural", k, priors, args.with_consensus, args.seed)
        records += judges_rows(df, "natural", k, args.reps, args.seed)
        if any(b > 0 for b in args.budgets):
            records += label_rows(df, k, [b for b in args.budgets if b > 0], args.reps, args.seed)
        print(f"{k}: {time.perf_counter() - t0:.1f} s", flush=True)
    for proto, name, rep, df, truth in synth:
        rows = no_label_rows(df, truth, proto, name, priors, False, args.seed + rep)
        records += [dict(r, rep=rep) for r in rows]
        if rep < 2:
            records += [dict(r, rep=rep) for r in judges_rows(df, proto, name, 1, args.seed + rep)]
    return records


def summarize(rec: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    g = rec.groupby(by)
    return pd.DataFrame({"coverage": g["covered"].mean(), "error": g["error"].mean(), "width": g["width"].mean(),
                         "n": g.size()}).reset_index()


def _md(t: pd.DataFrame) -> str:
    t = t.copy()
    for c in ("coverage",):
        t[c] = (100 * t[c]).round(0).astype(int).astype(str) + "%"
    for c in ("error", "width"):
        t[c] = t[c].map(lambda x: f"{x:.3f}")
    head = "| " + " | ".join(map(str, t.columns)) + " |"
    rule = "|" + "---|" * len(t.columns)
    rows = ["| " + " | ".join(map(str, r)) + " |" for r in t.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


INFORMATIVE = ("llmbar_natural", "mtbench", "llmeval2")


def targets(rec: pd.DataFrame) -> list[str]:
    """Issue 30's targets, each checked cell by cell."""
    def cov(d):
        return d["covered"].mean()

    out = []
    nat = rec[(rec.protocol == "natural") & (rec.budget == 0)]
    d = nat[nat.estimator == "default"]
    per = d.groupby("set")["covered"].mean()
    out.append(f"- no labels, default, natural pooled >= 85%: {cov(d):.0%} ({'met' if cov(d) >= 0.85 else 'MISSED'})")
    out.append(f"- no labels, default, every natural set >= 75%: lowest {per.min():.0%} ({per.idxmin()}) "
               f"({'met' if per.min() >= 0.75 else 'MISSED'})")
    syn = rec[(rec.protocol != "natural") & (rec.budget == 0)]
    if len(syn):
        for proto, g in syn.groupby("protocol"):
            dd, kk = g[g.estimator == "default"], g[g.estimator == "observed"]
            c = cov(dd)
            err = dd.groupby("set")["error"].mean()
            kerr = kk.groupby("set")["error"].mean()
            worse = sorted(err.index[err >= kerr.reindex(err.index)])
            w = dd[dd.set.isin(INFORMATIVE)]["width"].mean()
            out.append(f"- synthetic `{proto}`: coverage >= 88%: {c:.0%} ({'met' if c >= 0.88 else 'MISSED'}); "
                       f"error below k's on every set: {'met' if not worse else 'MISSED on ' + ', '.join(worse)}; "
                       f"width <= 0.35 on the informative sets: {w:.3f} ({'met' if w <= 0.35 else 'MISSED'})")
    j = rec[(rec.estimator == "judges")]
    for proto, g in j.groupby("protocol"):
        out.append(f"- `judges` on `{proto}` >= 88%: {cov(g):.0%} ({'met' if cov(g) >= 0.88 else 'MISSED'})")
    lab = rec[(rec.protocol == "natural") & (rec.budget > 0)]
    for b, g in lab.groupby("budget"):
        s = g.groupby("estimator")[["covered", "error", "width"]].mean()
        if "default" in s.index and "ppi++" in s.index:
            dflt, ppi = s.loc["default"], s.loc["ppi++"]
            ok = dflt.covered >= 0.88 and dflt.error <= ppi.error and dflt.width <= ppi.width
            out.append(f"- {b:.0%} labels: coverage {dflt.covered:.0%}, error {dflt.error:.3f} (PPI++ {ppi.error:.3f}), "
                       f"width {dflt.width:.3f} (PPI++ {ppi.width:.3f}) ({'met' if ok else 'MISSED'})")
    return out


def _wilson(k: int, n: int, z: float = 1.645) -> tuple[float, float]:
    """90% Wilson interval of a binomial share k / n."""
    p, d = k / n, 1 + z * z / n
    c, h = (p + z * z / (2 * n)) / d, z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return float(c - h), float(c + h)


def missed_cells(rec: pd.DataFrame, seed: int = 0) -> list[str]:
    """Why the synthetic cells that miss a target miss it: the coverage's sampling error, the error
    difference from k with a paired bootstrap interval, and what a narrower default would cost
    (each no-label default interval scaled about its estimate by ``f``, on every protocol)."""
    syn = rec[(rec.protocol != "natural") & (rec.budget == 0)]
    d0 = rec[(rec.budget == 0) & (rec.estimator == "default")]
    if not len(syn) or not len(d0):
        return []
    out = ["## Why the missed cells miss", ""]
    for proto, g in syn[syn.estimator == "default"].groupby("protocol"):
        k, n = int(g["covered"].sum()), len(g)
        lo, hi = _wilson(k, n)
        out.append(f"- `{proto}` coverage {k}/{n} = {k / n:.1%}, 90% Wilson interval [{lo:.1%}, {hi:.1%}]: "
                   f"{'the 88% target lies inside it' if lo <= 0.88 <= hi else 'the 88% target lies outside it'}.")
    rng = np.random.default_rng(seed)
    pair = syn[syn.estimator.isin(["default", "observed"])].copy()
    pair["k"] = pair.groupby(["protocol", "set", "estimator"]).cumcount()
    for (proto, s), g in pair.groupby(["protocol", "set"]):
        e = g.pivot_table(index="k", columns="estimator", values="error")
        if not {"default", "observed"} <= set(e.columns) or e["default"].mean() < e["observed"].mean():
            continue
        diff = (e["default"] - e["observed"]).to_numpy()
        boot = rng.choice(diff, (4000, len(diff))).mean(axis=1)
        lo, hi = np.percentile(boot, [5, 95])
        out.append(f"- `{proto}` / {s}: error {e['default'].mean():.3f} against k's {e['observed'].mean():.3f}, "
                   f"difference {diff.mean():+.4f} (90% paired bootstrap over its {len(diff)} cases "
                   f"[{lo:+.4f}, {hi:+.4f}]{': zero inside it' if lo <= 0 <= hi else ''})."
                   + (" On LLMBar's adversarial sets the judges are no better than chance (their verdicts agree "
                      "with people's on 47-57% of decided items), so the verdicts tell no more about people's "
                      "rate than their raw share does." if "adversarial" in s else ""))
    nat, inf = d0.protocol == "natural", (d0.protocol != "natural") & d0.set.isin(INFORMATIVE)
    if not (nat.any() and inf.any()):
        return out + [""]
    out += ["", "What a narrower no-label default would cost: every default interval scaled about its estimate "
            "by f (f = 1 is the shipped default). The width target on the informative synthetic sets needs "
            "f ≈ 0.76; the verdicts alone cannot tell those sets from the natural pairs where the judges' "
            "consensus lies far from people's, so the same f narrows both.", "",
            "| f | natural pooled | lowest natural set | `seed003` | `length` | width, informative synthetic sets |",
            "|---|---|---|---|---|---|"]
    for f in (1.0, 0.9, 0.8, 0.76, 0.7):
        lo, hi = d0.estimate - f * (d0.estimate - d0.low), d0.estimate + f * (d0.high - d0.estimate)
        cov = (lo <= d0.truth) & (d0.truth <= hi)
        per = cov[nat].groupby(d0.set[nat]).mean()
        protos = {p: cov[d0.protocol == p].mean() if (d0.protocol == p).any() else float("nan")
                  for p in ("seed003", "length")}
        sy = {p: "—" if np.isnan(c) else f"{c:.0%}" for p, c in protos.items()}
        out.append(f"| {f:g} | {cov[nat].mean():.0%} | {per.min():.0%} ({per.idxmin()}) | {sy['seed003']} | "
                   f"{sy['length']} | {(hi - lo)[inf].mean():.3f} |")
    return out + [""]


def render(rec: pd.DataFrame, out: Path, args) -> None:
    refused = rec["estimate"].isna()  # PPI++ on labels of one class (its interval would collapse)
    n_refused = rec[refused].groupby("budget").size().to_dict()
    rec = rec[~refused]
    lines = ["# Natural pairs of real systems, beside the synthetic protocols", "",
             f"Command: `python benchmarks/natural_pairs.py {' '.join(args.argv)}`", "",
             "90% intervals; coverage of the truth, mean absolute error of the point estimate, mean width. "
             "`natural`: SummEval and HANNA, every pair of real systems, the truth the human means' share; "
             "`seed003` / `length`: real_calibration.py's random-assignment protocols. `judges` is scored "
             "against the panel's own rate on all items (fitted on a random half).", "",
             "## Targets (issue 30)", "", *targets(rec), "",
             "PPI++ refuses a pair whose labels are all of one class (its normal interval collapses to a "
             "point); those cases are left out of its rows: "
             + (", ".join(f"{n} at {b:.0%} labels" for b, n in sorted(n_refused.items())) or "none") + ".", "",
             *missed_cells(rec),
             "## Pooled, no labels", "", _md(summarize(rec[rec.budget == 0], ["protocol", "estimator"])), ""]
    nat = rec[rec.protocol == "natural"]
    lab = nat[nat.budget > 0]
    if len(lab):
        lines += ["## Natural pairs with labels (pooled)", "", _md(summarize(lab, ["budget", "estimator"])), ""]
    lines += ["## Natural pairs, no labels, by set and aspect", "",
              _md(summarize(nat[nat.budget == 0], ["set", "estimator"])), ""]
    if len(lab):
        lines += ["## Natural pairs with labels, by set and aspect", "",
                  _md(summarize(lab, ["set", "budget", "estimator"])), ""]
    syn = rec[(rec.protocol != "natural")]
    if len(syn):
        lines += ["## Synthetic protocols, no labels, by set", "",
                  _md(summarize(syn, ["protocol", "set", "estimator"])), ""]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = summarize(rec[rec.budget == 0], ["protocol", "estimator"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, col in zip(axes, ("coverage", "width"), strict=True):
        piv = t.pivot(index="estimator", columns="protocol", values=col)
        piv.plot.bar(ax=ax, rot=30)
        ax.set_title(f"no labels: {col} of the 90% interval")
        if col == "coverage":
            ax.axhline(0.9, color="k", ls="--", lw=1)
            ax.set_ylim(0, 1.05)
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=110)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="label draws (and judges' halves) per natural set")
    ap.add_argument("--synth-reps", type=int, default=5, help="draws per synthetic cell")
    ap.add_argument("--budgets", type=lambda s: [float(x) for x in s.split(",")], default=[0, 0.05, 0.1, 0.3])
    ap.add_argument("--sets", type=lambda s: s.split(","), default=None, help="e.g. summeval,hanna/coherence")
    ap.add_argument("--no-synthetic", dest="synthetic", action="store_false")
    ap.add_argument("--with-consensus", action="store_true", help="also the consensus model (NUTS, slow)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--fit-prior", action="store_true", help="print the bridge prior fitted to all 17 sets and stop")
    ap.add_argument("--render", type=Path, help="redraw the tables and plot from this JSON and stop")
    args = ap.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    if args.render:
        saved = json.loads(args.render.read_text())
        args.argv = saved["argv"]
        render(pd.DataFrame(saved["records"]), args.out, args)
        print(args.out.with_suffix(".md").read_text())
        return
    if args.fit_prior:
        print(fit_bridge_prior(prior_cases({}, args.seed)))
        return
    rec = pd.DataFrame(run(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cols = {c: (rec[c].round(4) if rec[c].dtype.kind == "f" else rec[c]).tolist() for c in rec.columns}
    args.out.with_suffix(".json").write_text(json.dumps({"argv": args.argv, "records": cols}, separators=(",", ":")))
    render(rec, args.out, args)
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
