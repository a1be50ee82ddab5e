"""Active labelling: how many human labels ``bj.next_labels`` needs to reach PPI's 30% width.

Issue 13: ``bj.next_labels(idata, n)`` names the n items whose human labels would shrink p's
interval most; this benchmark reports how many labels it needs to reach the width that PPI
reaches with 30% random labels, against the same loop with random labels.

Data.  The 7 LLMBar-family sets of ``benchmarks/real_calibration.py`` (imported as a module: its
``assign`` and ``per_item`` are reused), protocol ``seed003`` (seed 003 §4.1,
``bj.assign_generators``) with G0 share ``--share`` (default 0.8): G0 is given the
human-preferred output of exactly ``round(share * n)`` uniformly drawn items, so the true win
rate ``p = round(share * n) / n`` is known exactly.  Every estimator sees the judges' verdicts on
all n items; the human labels it sees are passed as a ``human=`` table (item, a, b, human from
the first row of each labelled item) and the judgments' ``human`` column is emptied.

Target.  For every draw (set, rep) the items are put in one random order; the first
``round(0.3 n)`` of them are PPI's labels: PPI++ (``bayes_judge.estimators.ppi_mean``, power-tuned
lam, f = the judges' share of verdicts for G0, the other items' f as the unlabelled sample) gives
a 90% interval on them.  The target width W of a set is the mean of these PPI++ widths over the
set's ``--reps`` draws (one 30% draw per rep), the same W for every draw of the set and for both
arms.

Arms.  Both start from the first ``--start`` (4) items of the draw's random order and loop:

1. fit ``bj.win_rate(judgments, human=labels, chains, draws, tune, seed)`` (no method: the
   package's default with labels, the label regression; checked) and read the 90% HDI width
   ``hdi_high - hdi_low`` of ``bj.win_rate_summary(idata, hdi_prob=0.9)``;
2. stop when the width is at most W (the target is *reached* at this label count) or when
   ``round(--cap * n)`` items (50%) are labelled (not reached);
3. otherwise add ``--batch`` items (default ``max(2, round(0.025 n))``; the last batch is cut
   at the cap) and go to 1.

The *active* arm adds the items ``bj.next_labels(idata, n=batch)`` names; the *random* arm adds
the next items of the draw's random order (the ones after the 4 it started from).  Step k of
both arms fits with the same seed.  Recorded per arm: the label count at which the width first
reaches W (or that it did not), and at the stopping point the interval, whether it covers the
true p and the error ``|p_mean - p|``, plus every step's (labels, width, p_mean, interval,
r_hat).  Also fitted per draw: the regression on the same 30% random labels that PPI++ used, its
width, coverage and error (what the default estimator does with PPI's labels).

Seeding: each (set, rep) draws its assignment, its item order and its fit seeds from
``np.random.SeedSequence([seed, set index, 1000 * share, rep, stream])``, so the same flags give
the same numbers, whichever subset of the sets is run (W depends on ``--reps``: it is a mean
over the reps' draws).

Usage::

    .venv/bin/python benchmarks/active_labelling.py --reps 3
    .venv/bin/python benchmarks/active_labelling.py --sets mtbench --reps 1 --batch 20 --out /tmp/al

Writes ``<out>.md`` (tables, the command at the top) and ``<out>.json`` (every draw, every step).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import real_calibration as rc  # noqa: E402

import bayes_judge as bj  # noqa: E402
from bayes_judge.winrate.ppi import ppi_mean  # noqa: E402

ALPHA = 0.1
SETS = rc.SETS
SHORT = rc.SHORT
PROTOCOL = "seed003"
DEFAULT_OUT = HERE / "results" / "active_labelling"
ARMS = ("active", "random")


@dataclass(frozen=True)
class Settings:
    """What a run is: everything that changes its numbers."""

    share: float = 0.8
    ppi_budget: float = 0.3
    start: int = 4
    cap: float = 0.5
    batch: int | None = None  # None: max(2, round(0.025 n))
    chains: int = 2
    draws: int = 500
    tune: int = 500
    seed: int = 0


@dataclass(frozen=True)
class Draw:
    """One (set, rep): the assigned judgments and what the arms need of them."""

    dataset: str
    rep: int
    hidden: pd.DataFrame  # judgments, human column emptied
    first_row: pd.DataFrame  # per item (index: item id as str): a, b, human of its first row
    items: np.ndarray  # item ids (str), the order of f and y
    f: np.ndarray  # judges' share of verdicts for G0
    y: np.ndarray  # 1 = a human prefers G0
    order: np.ndarray  # the draw's random order of the items (indices into items)
    p_true: float
    seeds: dict

    @property
    def n(self) -> int:
        return len(self.items)


def _seed(settings: Settings, dataset: str, rep: int, *stream: int) -> int:
    ss = np.random.SeedSequence(
        [settings.seed, SETS.index(dataset), int(round(1000 * settings.share)), rep, *stream]
    )
    return int(ss.generate_state(1, dtype=np.uint32)[0] % (2**31 - 1))


def fit_seed(settings: Settings, dataset: str, rep: int, step: int) -> int:
    """The seed of step ``step`` of either arm (and of the 30% fit, step -1 → stream 2, 0)."""
    return _seed(settings, dataset, rep, 2, step + 1)


def make_draw(dataset: str, rep: int, settings: Settings) -> Draw:
    seeds = {"assign": _seed(settings, dataset, rep, 0), "order": _seed(settings, dataset, rep, 1)}
    t = rc.assign(dataset, PROTOCOL, settings.share, seeds["assign"], 4.0)
    pi = rc.per_item(t)
    items = pi.index.to_numpy(dtype=object).astype(str)
    p_true = float(t.attrs["p_true"])
    if abs(pi["y"].mean() - p_true) > 1e-12:
        raise AssertionError(f"{dataset} rep {rep}: the labels' mean is not p_true")
    first_row = t.drop_duplicates("item").assign(item=lambda d: d["item"].astype(str)).set_index("item")
    order = np.random.default_rng(seeds["order"]).permutation(len(items))
    return Draw(dataset=dataset, rep=rep, hidden=t.assign(human=None), first_row=first_row[["a", "b", "human"]],
                items=items, f=pi["f"].to_numpy(), y=pi["y"].to_numpy(), order=order, p_true=p_true, seeds=seeds)


def n_ppi(settings: Settings, n: int) -> int:
    return max(2, int(round(settings.ppi_budget * n)))


def n_cap(settings: Settings, n: int) -> int:
    return int(round(settings.cap * n))


def batch_size(settings: Settings, n: int) -> int:
    return settings.batch if settings.batch is not None else max(2, int(round(0.025 * n)))


def ppi_width(d: Draw, settings: Settings) -> dict:
    """PPI++ on the first round(0.3 n) items of the draw's order."""
    mask = np.zeros(d.n, dtype=bool)
    mask[d.order[: n_ppi(settings, d.n)]] = True
    r = ppi_mean(d.y[mask], d.f[mask], d.f[~mask], alpha=ALPHA, lam="tuned")
    return {"n_labels": int(mask.sum()), "estimate": float(r.estimate), "low": float(r.low), "high": float(r.high),
            "width": float(r.high - r.low), "lam": float(r.lam),
            "covers": bool(r.low <= d.p_true <= r.high), "abs_err": float(abs(r.estimate - d.p_true))}


def labels_table(d: Draw, idx: np.ndarray) -> pd.DataFrame:
    lab = d.first_row.loc[d.items[idx]]
    return lab.reset_index().rename(columns={"index": "item"})[["item", "a", "b", "human"]]


def fit(d: Draw, idx: np.ndarray, seed: int, settings: Settings):
    """The default labelled fit on the items ``idx``: (idata, summary dict)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        idata = bj.win_rate(d.hidden, human=labels_table(d, idx), chains=settings.chains,
                            draws=settings.draws, tune=settings.tune, seed=seed)
        row = bj.win_rate_summary(idata, hdi_prob=1 - ALPHA).iloc[0]
    if (str(row["system_a"]), str(row["system_b"])) != (rc.G0, rc.G1):
        raise AssertionError(f"unexpected pair orientation {row['system_a']} vs {row['system_b']}")
    method = idata.attrs.get("method")
    if method != "regression":
        raise AssertionError(f"the default labelled fit is {method!r}, not the label regression")
    lo, hi, pm = float(row["hdi_low"]), float(row["hdi_high"]), float(row["p_mean"])
    return idata, {
        "n_labels": len(idx), "p_mean": pm, "low": lo, "high": hi, "width": hi - lo,
        "covers": bool(lo <= d.p_true <= hi), "abs_err": abs(pm - d.p_true), "r_hat": float(row["r_hat"]),
        "warnings": len(caught), "seconds": time.perf_counter() - t0,
    }


def run_arm(d: Draw, arm: str, target: float, settings: Settings) -> dict:
    """One arm's loop; returns the labels needed to reach ``target`` and the stopping point."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    cap, batch = n_cap(settings, d.n), batch_size(settings, d.n)
    labelled = list(d.order[: settings.start])
    pool = [i for i in d.order if i not in set(labelled)]  # the random arm's next items, in order
    pos = {item: i for i, item in enumerate(d.items)}
    steps: list[dict] = []
    step, error = 0, None
    while True:
        try:
            idata, s = fit(d, np.asarray(labelled), fit_seed(settings, d.dataset, d.rep, step), settings)
        except Exception as e:  # noqa: BLE001 — recorded, the arm stops there
            error = f"{type(e).__name__}: {e}"
            break
        steps.append(s)
        if s["width"] <= target or len(labelled) >= cap:
            break
        k = min(batch, cap - len(labelled))
        if arm == "active":
            prop = bj.next_labels(idata, n=k)
            new = [pos[str(x)] for x in prop["item"]]
            if set(new) & set(labelled) or len(set(new)) != len(new):
                raise AssertionError(f"next_labels proposed labelled or repeated items: {prop['item'].tolist()}")
        else:
            new = [i for i in pool if i not in set(labelled)][:k]
        labelled += new
        step += 1
    last = steps[-1] if steps else {}
    reached = bool(steps) and last["width"] <= target
    return {
        "arm": arm, "reached": reached, "labels_needed": last["n_labels"] if reached else None,
        "n_stop": last.get("n_labels"), "width_stop": last.get("width"), "covers": last.get("covers"),
        "abs_err": last.get("abs_err"), "p_mean": last.get("p_mean"), "low": last.get("low"),
        "high": last.get("high"), "fits": len(steps), "error": error, "steps": steps,
        "labelled": [str(d.items[i]) for i in labelled],
    }


def run_unit(d: Draw, target: float, settings: Settings) -> dict:
    """Both arms and the regression on PPI's 30% labels for one draw."""
    t0 = time.perf_counter()
    m30 = n_ppi(settings, d.n)
    try:
        _, reg30 = fit(d, d.order[:m30], fit_seed(settings, d.dataset, d.rep, -1), settings)
    except Exception as e:  # noqa: BLE001
        reg30 = {"error": f"{type(e).__name__}: {e}"}
    arms = {arm: run_arm(d, arm, target, settings) for arm in ARMS}
    return {
        "dataset": d.dataset, "rep": d.rep, "n": d.n, "p_true": d.p_true, "seeds": d.seeds,
        "target_width": target, "ppi": ppi_width(d, settings), "regression_30": reg30,
        "n_30": m30, "cap": n_cap(settings, d.n), "batch": batch_size(settings, d.n),
        "start": settings.start, **{a: arms[a] for a in ARMS}, "wall_s": time.perf_counter() - t0,
    }


def run(sets, reps: int, settings: Settings, progress: bool = True) -> list[dict]:
    records = []
    for name in sets:
        draws = [make_draw(name, r, settings) for r in range(reps)]
        target = float(np.mean([ppi_width(d, settings)["width"] for d in draws]))
        for d in draws:
            rec = run_unit(d, target, settings)
            records.append(rec)
            if progress:
                a, r = rec["active"], rec["random"]
                print(f"{SHORT[name]:>13} rep {d.rep}: n={d.n} W={target:.3f} "
                      f"active {_needed(a, rec['cap'])} random {_needed(r, rec['cap'])} "
                      f"({rec['wall_s']:.0f} s)", flush=True)
    return records


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------


def _needed(arm: dict, cap: int) -> str:
    if arm.get("error") and not arm["steps"]:
        return "failed"
    return str(arm["labels_needed"]) if arm["reached"] else f">{cap}"


def _count(rec: dict, arm: str) -> int:
    """Labels the arm needed; an arm that stopped at the cap counts the cap (a lower bound)."""
    a = rec[arm]
    return a["labels_needed"] if a["reached"] else rec["cap"]


def _mean(xs) -> float:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return float(np.mean(xs)) if xs else math.nan


def _frac(xs) -> str:
    xs = [bool(x) for x in xs if x is not None]
    return f"{sum(xs)}/{len(xs)}" if xs else "–"


def _labels_cell(recs: list[dict], arm: str) -> str:
    c = [_count(r, arm) for r in recs]
    pct = [100 * _count(r, arm) / r["n"] for r in recs]
    ge = "≥" if not all(r[arm]["reached"] for r in recs) else ""
    return f"{ge}{np.mean(c):.1f} ({ge}{np.mean(pct):.1f}%)"


def set_rows(records: list[dict]) -> list[dict]:
    rows = []
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["dataset"], []).append(r)
    for name, recs in [*groups.items(), ("pooled", records)]:
        rows.append({
            "set": SHORT.get(name, name), "draws": len(recs),
            "n": recs[0]["n"] if name != "pooled" else None,
            "W": _mean(r["target_width"] for r in recs) if name != "pooled" else None,
            "reg30_width": _mean(r["regression_30"].get("width") for r in recs),
            "n30": _mean(r["n_30"] for r in recs), "pct30": _mean(100 * r["n_30"] / r["n"] for r in recs),
            "active": _labels_cell(recs, "active"), "random": _labels_cell(recs, "random"),
            "active_reached": _frac(r["active"]["reached"] for r in recs),
            "random_reached": _frac(r["random"]["reached"] for r in recs),
            "wins": (sum(_count(r, "active") < _count(r, "random") for r in recs),
                     sum(_count(r, "active") == _count(r, "random") for r in recs),
                     sum(_count(r, "active") > _count(r, "random") for r in recs)),
            "cov_active": _frac(r["active"]["covers"] for r in recs),
            "cov_random": _frac(r["random"]["covers"] for r in recs),
            "cov_reg30": _frac(r["regression_30"].get("covers") for r in recs),
            "cov_ppi": _frac(r["ppi"]["covers"] for r in recs),
            "err_active": _mean(r["active"]["abs_err"] for r in recs),
            "err_random": _mean(r["random"]["abs_err"] for r in recs),
            "err_reg30": _mean(r["regression_30"].get("abs_err") for r in recs),
            "err_ppi": _mean(r["ppi"]["abs_err"] for r in recs),
            "total_active": sum(_count(r, "active") for r in recs),
            "total_random": sum(_count(r, "random") for r in recs),
            "total_30": sum(r["n_30"] for r in recs),
        })
    return rows


def _f(x, fmt=".3f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def tables(records: list[dict]) -> str:
    rows = set_rows(records)
    out = [
        "**Labels needed to reach W** (mean over draws; count (% of the set's items); ≥: some draw stopped at",
        "the 50% cap without reaching W and counts the cap; pooled: mean of the per-draw %, totals below)",
        "",
        "| set | n | draws | W (PPI++ @30%) | regression width @30% | 30% of n | active | random | reached active / random | active <, =, > random |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['set']} | {r['n'] if r['n'] is not None else '–'} | {r['draws']} | {_f(r['W'])} | {_f(r['reg30_width'])} "
            f"| {r['n30']:.0f} ({r['pct30']:.0f}%) | {r['active']} | {r['random']} "
            f"| {r['active_reached']} / {r['random_reached']} | {r['wins'][0]}, {r['wins'][1]}, {r['wins'][2]} |"
        )
    p = rows[-1]
    out += [
        "",
        f"Total labels over all {p['draws']} draws: active {p['total_active']}, random {p['total_random']}, "
        f"PPI's 30% {p['total_30']} (caps counted where W was not reached).",
        "",
        "**At the stopping point**: coverage of the 90% interval of p and mean |p̂ − p| (and, for",
        "reference, the regression and PPI++ on the same 30% random labels)",
        "",
        "| set | coverage active | coverage random | coverage regression @30% | coverage PPI++ @30% | err active | err random | err regression @30% | err PPI++ @30% |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['set']} | {r['cov_active']} | {r['cov_random']} | {r['cov_reg30']} | {r['cov_ppi']} "
            f"| {_f(r['err_active'])} | {_f(r['err_random'])} | {_f(r['err_reg30'])} | {_f(r['err_ppi'])} |"
        )
    return "\n".join(out)


def draw_table(records: list[dict]) -> str:
    out = ["| set | rep | n | p | W | PPI++ width (this draw) | regression width @30% | active: labels (width at stop) | random: labels (width at stop) | fits active / random |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        a, b = r["active"], r["random"]
        out.append(
            f"| {SHORT[r['dataset']]} | {r['rep']} | {r['n']} | {r['p_true']:.3f} | {r['target_width']:.3f} "
            f"| {r['ppi']['width']:.3f} | {_f(r['regression_30'].get('width'))} "
            f"| {_needed(a, r['cap'])} ({_f(a['width_stop'])}) | {_needed(b, r['cap'])} ({_f(b['width_stop'])}) "
            f"| {a['fits']} / {b['fits']} |"
        )
    return "\n".join(out)


def problems(records: list[dict]) -> list[str]:
    out = []
    for r in records:
        for arm in ARMS:
            if r[arm]["error"]:
                out.append(f"- {SHORT[r['dataset']]} rep {r['rep']} {arm}: {r[arm]['error']}")
            bad = [s for s in r[arm]["steps"] if s["r_hat"] > 1.05]
            if bad:
                out.append(f"- {SHORT[r['dataset']]} rep {r['rep']} {arm}: {len(bad)} fit(s) with r_hat > 1.05")
        if "error" in r["regression_30"]:
            out.append(f"- {SHORT[r['dataset']]} rep {r['rep']} regression @30%: {r['regression_30']['error']}")
    return out


def write_markdown(path: Path, payload: dict) -> None:
    st, recs = payload["settings"], payload["records"]
    env = payload["environment"]
    fits = sum(r[a]["fits"] for r in recs for a in ARMS) + len(recs)
    probs = problems(recs)
    parts = [
        "# Active labelling: labels needed to reach PPI's 30% width",
        "",
        f"Produced by `{payload['command']}`",
        "",
        f"{payload['created']}; git {env['git']}; {env['platform']}, Python {env['python']}; "
        f"total wall time {payload['wall_s']:.0f} s ({fits} fits).",
        "",
        f"Sets {', '.join(SHORT[s] for s in st['sets'])}; protocol {PROTOCOL}, G0 share {st['share']}; "
        f"{st['reps']} draw(s) per set; start {st['start']} random labels, batch "
        f"{st['batch'] if st['batch'] is not None else 'max(2, round(0.025 n))'}, cap {st['cap']:.0%} of the items; "
        f"fits {st['chains']} chains × ({st['tune']} tune + {st['draws']} draws) of the default labelled "
        f"estimator (the label regression); seed {st['seed']}.",
        "",
        "How it works: see the docstring of `benchmarks/active_labelling.py`.  In short: W is the mean",
        "width of PPI++'s 90% interval with 30% random labels over a set's draws; each arm starts from 4",
        "random labels, fits the default labelled estimator, and adds a batch of labels (named by",
        "`bj.next_labels` in the active arm, the next random items in the random arm) until its 90% HDI",
        "is at most W wide or half of the items are labelled.  Both arms use the same draws, the same",
        "first 4 labels and the same fit seeds.",
        "",
        "## Per set and pooled",
        "",
        tables(recs),
        "",
        "## Per draw",
        "",
        draw_table(recs),
        "",
        "## Problems",
        "",
        *(probs or ["None: no failed fit, no fit with r_hat > 1.05."]),
        "",
    ]
    path.write_text("\n".join(parts))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="all", help=f"comma-separated, or 'all': {', '.join(SETS)}")
    ap.add_argument("--reps", type=int, default=3, help="draws per set (default 3)")
    ap.add_argument("--share", type=float, default=0.8, help="true win rate of G0 (default 0.8)")
    ap.add_argument("--batch", type=int, default=None, help="labels added per step (default max(2, round(0.025 n)))")
    ap.add_argument("--start", type=int, default=4, help="random labels to start from (default 4)")
    ap.add_argument("--cap", type=float, default=0.5, help="stop at this share of items labelled (default 0.5)")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output path without suffix")
    args = ap.parse_args(argv)
    command = " ".join(shlex.quote(a) for a in
                       [".venv/bin/python", "benchmarks/active_labelling.py", *(sys.argv[1:] if argv is None else argv)])
    sets = list(SETS) if args.sets == "all" else [s.strip() for s in args.sets.split(",") if s.strip()]
    bad = [s for s in sets if s not in SETS]
    if bad:
        raise SystemExit(f"unknown set(s) {bad}; choose from {list(SETS)}")
    if args.batch is not None and args.batch < 1:
        raise SystemExit("--batch must be a positive integer")
    settings = Settings(share=args.share, start=args.start, cap=args.cap, batch=args.batch, chains=args.chains,
                        draws=args.draws, tune=args.tune, seed=args.seed)
    t0 = time.perf_counter()
    records = run(sets, args.reps, settings)
    payload = {"command": command, "created": time.strftime("%Y-%m-%d %H:%M:%S"), "environment": rc.environment(),
               "settings": {**settings.__dict__, "sets": sets, "reps": args.reps, "protocol": PROTOCOL, "alpha": ALPHA},
               "wall_s": time.perf_counter() - t0, "records": records}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(rc._jsonable(payload), indent=None, separators=(",", ":")))
    write_markdown(out.with_suffix(".md"), payload)
    print()
    print(tables(records))
    print(f"\nwrote {out.with_suffix('.md')}, {out.with_suffix('.json')}")
    return payload


if __name__ == "__main__":
    main()
