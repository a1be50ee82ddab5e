"""Benchmark: ``bj.leaderboard(new_rows, previous=run)`` against a cold fit of all the rows.

``--systems`` systems (200), ``--comparisons`` battles (1,000,000), one verdict a battle by three
judges with different accuracies, position biases and ties; the earlier fit has the first 90% of
the rows, the update adds the last 10%.  Five cases (all but ``labels (default)`` in ``--cases``'
default, which a run names to add it):

* ``no labels``: the judges alone (the default: NUTS, the score bridge on the judges' reading);
* ``labels (default)``: people's label on 10% of the battles, the default fit (the judges alone,
  their reading bridged to people's by the labels: the bridge's own small model, whose draws an
  update moves as it moves the judges');
* ``votes``: people's votes (model ``bt``), each battle's verdict taken as a vote;
* ``labels, joint``: people's label on 10% of the battles in the joint model (``bridge=False``,
  ``system_bias=False``);
* ``labels, system bias``: the same with the judges' own system preferences (``system_bias``, the
  joint model's default with labels), whose hierarchical scale no Laplace approximation covers;

each updated three ways: NUTS's default (the earlier draws moved onto the new posterior and
importance-resampled where their weights hold, :mod:`bayes_judge.inference.transport`, else
sampled afresh), NUTS with ``transport=False``, and ``sampler="laplace"`` (``system_bias=False``;
not in the two cases whose Laplace fit would be the joint model's again),
each against a cold fit of all the rows with the same sampler.  Timed in this process (numba's cache
warm, after a warm-up fit).  The posterior is compared on the scores as sampled (the judges'
reading where a bridge follows): the largest difference of their means between update and cold
fit, in posterior standard deviations, and the range of their standard deviations' ratio; beside
it the same between two cold NUTS fits of different seeds, the Monte Carlo error it is read against.
Where the labels taught a bridge, people's scores from it are compared the same way.

With ``--real``, the bundled real leaderboards instead (SummEval, 12 systems, and HANNA, 11, each
judged by three LLM judge settings: ``benchmarks/leaderboard_real.py``), the judges alone (the
default fit), updated two ways: with the prompts of the last tenth (new battles among the same
systems) and with every battle of one system (a new system, the last by name); with
``--real-labels``, a share of the comparisons labelled by the experts' preference (the default fit
then learns the score bridge from them, and an update moves its draws too); with
``--system-bias``, the judges' own system preferences in the fit (``bridge=False,
system_bias=True``).

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_update.py                 # ~15 min on 2 cores
    .venv/bin/python benchmarks/bench_leaderboard_update.py --comparisons 100000 --cases "no labels"
    .venv/bin/python benchmarks/bench_leaderboard_update.py --cases "labels (default)" --out benchmarks/results/bench_leaderboard_update_default_labels.json
    .venv/bin/python benchmarks/bench_leaderboard_update.py --real --out benchmarks/results/bench_leaderboard_update_real.json
    .venv/bin/python benchmarks/bench_leaderboard_update.py --real --real-labels 0.1 --out benchmarks/results/bench_leaderboard_update_real_labels.json

Writes ``benchmarks/results/bench_leaderboard_update.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CASES = {
    "no labels": {},
    "labels (default)": {},
    "votes": {},
    "labels, joint": {"bridge": False, "system_bias": False},
    "labels, system bias": {"bridge": False},
}


def _table(case: str, df):
    """The battles of one case."""
    if case == "votes":  # each battle's verdict as a person's vote
        return df.drop(columns="human").assign(judge="human")
    if case == "no labels":
        return df.drop(columns="human")
    return df


def _write(args, rows: list, command: str, lines: list[str]) -> dict:
    """The rows as ``--out`` (JSON) and the table beside it (``.md``), printed."""
    res = {"args": vars(args), "rows": rows, "command": command}
    out = Path(args.out)
    out.write_text(json.dumps(res, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return res


def _gap(a, b, var: str) -> tuple[float, float, float]:
    """Largest gap of ``var``'s means (in b's sds) and the range of the sd ratio."""
    x = a.posterior[var].to_numpy().reshape(-1, a.posterior.sizes["system"])
    y = b.posterior[var].to_numpy().reshape(-1, b.posterior.sizes["system"])
    sd = y.std(axis=0)
    ratio = x.std(axis=0) / sd
    return float((abs(x.mean(axis=0) - y.mean(axis=0)) / sd).max()), float(ratio.min()), float(ratio.max())


def _compare(a, b) -> dict:
    """The sampled scores (the judges' reading where a bridge follows) and, where the labels
    taught a bridge, people's scores from it: the largest gap of their means and the sd ratio."""
    var = "s_judges" if "s_judges" in b.posterior else "s"
    gap, lo, hi = _gap(a, b, var)
    out = {"scores": var, "max_mean_diff_sd": gap, "sd_ratio_min": lo, "sd_ratio_max": hi, "bridge_diff_sd": None}
    if "bridge_lambda" in b.posterior:  # the bridge learnt from the labels: sampled in its own right
        out["bridge_diff_sd"] = _gap(a, b, "s")[0]
    return out


def _bridge_path(attrs: dict) -> str:
    """How an update's score bridge ran (labels and the default bridge), from ``updated_from``."""
    said = attrs.get("updated_from", "")
    if "the score bridge's draws moved likewise" in said:
        return "moved"
    _, _, why = said.partition("the score bridge sampled afresh by NUTS: ")
    return f"NUTS afresh ({why})" if why else "—"


def main(argv: list[str] | None = None) -> dict:

    import bayes_judge as bj
    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--new-share", type=float, default=0.1)
    ap.add_argument("--cases", default=";".join(c for c in CASES if c != "labels (default)"), help="separated by ';', of: " + "; ".join(CASES))
    ap.add_argument("--out", default=str(HERE / "results" / "bench_leaderboard_update.json"))
    ap.add_argument("--real", action="store_true", help="the bundled SummEval and HANNA leaderboards instead")
    ap.add_argument("--real-labels", type=float, default=0.0,
                    help="with --real: this share of the comparisons labelled by the experts' preference")
    ap.add_argument("--system-bias", action="store_true",
                    help="with --real: the judges' own system preferences (bridge=False, system_bias=True)")
    args = ap.parse_args(argv)
    if args.real:
        return _real(args, argv)
    sim, _ = simulate_leaderboard(args.systems, args.comparisons, **THREE_JUDGES, design="one-judge",
                                  label_share=0.1, seed=0)
    rows = []
    for case in [c.strip() for c in args.cases.split(";")]:
        df = _table(case, sim)
        cut = int(len(df) * (1 - args.new_share))
        old, new = df.iloc[:cut], df.iloc[cut:]
        base = dict(CASES[case], pointwise=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bj.leaderboard(df.iloc[:20_000], **base)  # warm-up: compiled kernels
            first = bj.leaderboard(old, seed=1, **base)
            t = time.perf_counter()
            cold = bj.leaderboard(df, seed=2, **base)
            t_cold = time.perf_counter() - t
            mc = _compare(bj.leaderboard(df, seed=3, **base), cold)  # two cold fits: the Monte Carlo error
            for how, kw in (("NUTS (default)", {}), ("NUTS, transport=False", {"transport": False})):
                t = time.perf_counter()
                upd = bj.leaderboard(new, previous=first, seed=2, **base, **kw)
                t_upd = time.perf_counter() - t
                rows.append({"case": case, "update": how, "path": upd.attrs["sampler"], "update_s": t_upd,
                             "cold_s": t_cold, "ratio": t_upd / t_cold, **_compare(upd, cold),
                             "cold_vs_cold_diff_sd": mc["max_mean_diff_sd"],
                             "cold_vs_cold_bridge_diff_sd": mc["bridge_diff_sd"],
                             "ess_importance": upd.attrs.get("ess_importance"),
                             "bridge": _bridge_path(upd.attrs),
                             "why_not": upd.attrs["updated_from"].partition("could not serve: ")[2].partition(";")[0]})
                print(rows[-1], flush=True)
            if case in ("no labels", "votes", "labels, joint"):  # none of the hierarchical scale; with labels the joint model's
                lap = dict(base, sampler="laplace", system_bias=False) if case != "votes" else dict(base, sampler="laplace")
                bj.leaderboard(df.iloc[:20_000], **lap)
                first_l = bj.leaderboard(old, seed=1, **lap)
                t = time.perf_counter()
                upd = bj.leaderboard(new, previous=first_l, seed=2, **lap)
                t_upd = time.perf_counter() - t
                t = time.perf_counter()
                cold_l = bj.leaderboard(df, seed=2, **lap)
                t_cold = time.perf_counter() - t
                rows.append({"case": case, "update": "laplace", "path": "laplace", "update_s": t_upd, "cold_s": t_cold,
                             "ratio": t_upd / t_cold, **_compare(upd, cold_l), "cold_vs_cold_diff_sd": None,
                             "cold_vs_cold_bridge_diff_sd": None, "ess_importance": upd.attrs.get("ess_importance"),
                             "bridge": "—", "why_not": ""})
                print(rows[-1], flush=True)
    command = "python benchmarks/bench_leaderboard_update.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = ["# Updating a leaderboard with new battles (`benchmarks/bench_leaderboard_update.py`)", "",
             f"Command: `{command}`; {args.systems} systems, {args.comparisons:,} battles, the last "
             f"{args.new_share:.0%} added to a fit of the rest; 2 cores, one process, kernels compiled. The scores "
             "compared are those sampled (the judges' reading where a bridge follows); 'cold vs cold' is the same "
             "gap between two cold NUTS fits of other seeds.", "",
             "| case | update | how it ran | the bridge learnt from labels | update | cold fit of all rows | update / "
             "cold | largest gap of the score means (posterior sd) | cold vs cold | sd ratio update / cold | people's "
             "scores from the bridge: gap (cold vs cold) | importance ESS |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def num(v, fmt=".3f"):
        return "—" if v is None else format(v, fmt)

    for r in rows:
        how = r["path"] + (f" ({r['why_not']})" if r["why_not"] else "")
        bridged = ("—" if r.get("bridge_diff_sd") is None
                   else f"{num(r['bridge_diff_sd'])} ({num(r.get('cold_vs_cold_bridge_diff_sd'))})")
        lines.append(f"| {r['case']} | {r['update']} | {how} | {r.get('bridge', '—')} | {r['update_s']:.1f} s | "
                     f"{r['cold_s']:.1f} s | {r['ratio']:.2f} | {r['max_mean_diff_sd']:.3f} | "
                     f"{num(r['cold_vs_cold_diff_sd'])} | {r['sd_ratio_min']:.2f}-{r['sd_ratio_max']:.2f} | {bridged} | "
                     f"{num(r['ess_importance'], '.0f')} |")
    return _write(args, rows, command, lines)


def _real(args, argv) -> dict:
    """The update on the bundled real leaderboards (module docstring)."""
    from leaderboard_few_labels import label_table
    from leaderboard_real import comparisons, load

    import bayes_judge as bj

    rows = []
    for name in ("summeval", "hanna"):
        df, _ = load(name)
        lab = label_table(comparisons(df), args.real_labels, 7) if args.real_labels else None
        df = df.drop(columns="human")
        items = sorted(df["item"].unique())
        last = sorted(df["a"].unique())[-1]
        splits = {"new prompts (last 10%)": (df["item"].isin(items[int(0.9 * len(items)):]),
                                             None if lab is None else lab["item"].isin(items[int(0.9 * len(items)):])),
                  f"a new system ({last})": (df["a"].eq(last) | df["b"].eq(last),
                                             None if lab is None else lab["a"].eq(last) | lab["b"].eq(last))}
        opts = {"bridge": False, "system_bias": True} if args.system_bias else {}
        for split, (late, late_lab) in splits.items():
            early_h = {**opts, **({} if lab is None else {"human": lab[~late_lab]})}
            late_h = {} if lab is None else {"human": lab[late_lab]}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                first = bj.leaderboard(df[~late], seed=1, **early_h)
                t = time.perf_counter()
                upd = bj.leaderboard(df[late], previous=first, seed=2, **late_h)
                t_upd = time.perf_counter() - t
                every = {**opts, **({} if lab is None else {"human": lab})}
                t = time.perf_counter()
                cold = bj.leaderboard(df, seed=2, **every)
                t_cold = time.perf_counter() - t
                mc = _compare(bj.leaderboard(df, seed=3, **every), cold)
            rows.append({"set": name, "update": split, "path": upd.attrs["sampler"], "update_s": t_upd,
                         "cold_s": t_cold, "ratio": t_upd / t_cold, **_compare(upd, cold),
                         "cold_vs_cold_diff_sd": mc["max_mean_diff_sd"], "cold_vs_cold_bridge_diff_sd": mc["bridge_diff_sd"],
                         "ess_importance": upd.attrs.get("ess_importance"), "labels": 0 if lab is None else len(lab),
                         "bridge": _bridge_path(upd.attrs), "updated_from": upd.attrs["updated_from"]})
            print(rows[-1], flush=True)
    command = "python benchmarks/bench_leaderboard_update.py " + " ".join(argv if argv is not None else sys.argv[1:])
    what = ("the judges alone (the default fit: NUTS, the score bridge on the judges' reading)" if not args.real_labels
            else f"the experts' preference on {args.real_labels:.0%} of the comparisons as labels (the default fit: the "
                 "judges alone, their reading bridged to people's by the labels; an update adds the labels of its "
                 "prompts or system)")
    if args.system_bias:
        what += ("; with the judges' own system preferences (`bridge=False, system_bias=True`: the judges' reading, "
                 "no bridge)")
    lines = ["# Updating the bundled real leaderboards (`benchmarks/bench_leaderboard_update.py --real`)", "",
             f"Command: `{command}`; {what}, 4 x 1000 draws; the scores compared are the judges' reading, and "
             "people's scores where the labels taught a bridge; 'cold vs cold' is the same gap between two cold fits "
             "of other seeds.", "",
             "| set | update | how it ran | the bridge learnt from labels | update | cold fit of all rows | largest "
             "gap of the score means (posterior sd) | cold vs cold | sd ratio update / cold | people's scores from the "
             "bridge: gap (cold vs cold) | importance ESS |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ess = f"{r['ess_importance']:.0f}" if r["ess_importance"] is not None else "—"
        bridged = ("—" if r["bridge_diff_sd"] is None
                   else f"{r['bridge_diff_sd']:.3f} ({r['cold_vs_cold_bridge_diff_sd']:.3f})")
        lines.append(f"| {r['set']} | {r['update']} | {r['path']} | {r['bridge']} | {r['update_s']:.1f} s | "
                     f"{r['cold_s']:.1f} s | {r['max_mean_diff_sd']:.3f} | {r['cold_vs_cold_diff_sd']:.3f} | "
                     f"{r['sd_ratio_min']:.2f}-{r['sd_ratio_max']:.2f} | {bridged} | {ess} |")
    return _write(args, rows, command, lines)


if __name__ == "__main__":
    main()
