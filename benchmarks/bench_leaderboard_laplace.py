"""Benchmark: ``bj.leaderboard(..., sampler="laplace")`` against NUTS at arena scale.

Three workloads of ``--systems`` systems (default 200) and ``--comparisons`` comparisons (default
1,000,000), one vote or verdict per battle (``simulate_leaderboard(design="one-judge")``):

* **votes**: people's votes (judge ``human``: the simulated human preference of every battle),
  Bradley-Terry-Davidson (model ``bt``; LMArena's case);
* **judges + labels**: three LLM judges with different accuracies, position biases and ties, and
  people's label on 10% of the battles (``bt-judges``, ``system_bias=False``);
* **judges, no labels**: the same judges without labels (where the judges' accuracy trades against
  the scores' spread and the posterior's mean lies off its mode: the Laplace fit moves its
  proposal by Stein steps before weighing, and says so).

For each: the Laplace fit's wall time in a fresh process (``python -c``: imports, encoding and fit,
numba's cache warm), its refit time in the same process, NUTS's time (default settings, fresh
process), the share of systems whose 90% interval endpoints are within 10% of NUTS's interval
width of NUTS's, both fits' coverage of the true scores, and the importance weights' Pareto k-hat.

``--stages`` instead times where a Laplace refit's wall time goes (reading and encoding the
table, the judge screening, the mode, the Hessian, the importance weights; the median of
``--repeats`` refits in one process after a first call; and, outside the refit's total, the
``bj.leaderboard_summary`` that reads it), and with ``--vs REPO`` the same for the
package of another checkout (``git worktree add /tmp/old <commit>``) in the same run, alternating,
with the ratio: a speed claim measured side by side.  It also gives the medians of the log densities
the importance weights evaluated (pilots included; a tree before ``info["evaluated"]`` shows none)
and of their importance ESS.

``--real`` instead compares the two on the bundled real leaderboards (SummEval and HANNA
coherence, three judges each, no labels): the judges' errors there are not the model's.  With
``--seeds N`` it fits Laplace with seeds 1..N against one NUTS fit (``--ref-draws`` a chain), and
``--curved-from K`` sets ``laplace.CURVED_FROM`` (0: the curvature at the moved mean in every
dimension, to see what it does where the default leaves it out).

Usage::

    .venv/bin/python benchmarks/bench_leaderboard_laplace.py                    # ~5 min on 2 cores
    .venv/bin/python benchmarks/bench_leaderboard_laplace.py --stages --cases judges+labels --vs /tmp/old
    .venv/bin/python benchmarks/bench_leaderboard_laplace.py --comparisons 100000 --systems 100
    .venv/bin/python benchmarks/bench_leaderboard_laplace.py --real                   # ~1 min
    .venv/bin/python benchmarks/bench_leaderboard_laplace.py --real --seeds 16 --ref-draws 10000 --curved-from 0

Writes ``benchmarks/results/bench_leaderboard_laplace.{json,md}`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bayes_judge.leaderboard.simulate import THREE_JUDGES  # noqa: E402

CASES = {
    "votes": dict(alpha=(3.0,), beta=(0.0,), tau=(0.0,), label_share=1.0, votes=True, kw={}),
    "judges+labels": dict(**THREE_JUDGES, label_share=0.1, votes=False,
                          kw={"system_bias": False, "bridge": False}),  # one joint model for both
    # the model's own posterior (bridge=False): the score bridge would widen both alike
    "judges-no-labels": dict(**THREE_JUDGES, label_share=0.0, votes=False, kw={"bridge": False}),
}

FIT = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import pandas as pd
import bayes_judge as bj
df = pd.read_parquet(sys.argv[1])
kw = json.loads(sys.argv[3])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    idata = bj.leaderboard(df, sampler=sys.argv[2], seed=1, pointwise=False, **kw)
t1 = time.perf_counter()
refit = None
if sys.argv[2] == "laplace":
    t = time.perf_counter(); bj.leaderboard(df, sampler="laplace", seed=2, pointwise=False, **kw); refit = time.perf_counter() - t
s = bj.leaderboard_summary(idata)
s.to_parquet(sys.argv[4])
print(json.dumps({"fresh_s": t1 - t0, "refit_s": refit, "approximate": s.attrs.get("approximate"),
                  "warnings": [str(x.message)[:160] for x in w if issubclass(x.category, RuntimeWarning)]}))
"""


def run_case(name: str, args, tmp: Path) -> dict:
    import numpy as np
    import pandas as pd

    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    c = CASES[name]
    df, truth = simulate_leaderboard(args.systems, args.comparisons, alpha=c["alpha"], beta=c["beta"], tau=c["tau"],
                                     design="one-judge", label_share=c["label_share"], seed=args.seed)
    if c["votes"]:  # people's own preference as the votes (the simulated human column), no judge between
        df = df.assign(winner=df["human"], judge="human").drop(columns=["human", "p_a"], errors="ignore")
    elif c["label_share"] == 0:
        df = df.drop(columns="human")
    path = tmp / "df.parquet"
    df.to_parquet(path)
    out: dict = {"case": name, "rows": len(df)}
    summaries = {}
    for sampler in ("laplace", "nutpie"):
        spath = tmp / f"{sampler}.parquet"
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", FIT, str(path), sampler, json.dumps(c["kw"]), str(spath)],
                           capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        res = json.loads(r.stdout.strip().splitlines()[-1])
        res["process_s"] = time.perf_counter() - t
        out[sampler] = res
        summaries[sampler] = pd.read_parquet(spath).set_index("system")
    a, b = summaries["laplace"], summaries["nutpie"].loc[summaries["laplace"].index]
    width = b["hdi_high"] - b["hdi_low"]
    err = np.maximum((a["hdi_low"] - b["hdi_low"]).abs(), (a["hdi_high"] - b["hdi_high"]).abs()) / width
    t = truth[a.index]
    out["share_within_10pct"] = float((err <= 0.1).mean())
    out["max_endpoint_err"] = float(err.max())
    out["coverage_laplace"] = float(((a["hdi_low"] <= t) & (t <= a["hdi_high"])).mean())
    out["coverage_nuts"] = float(((b["hdi_low"] <= t) & (t <= b["hdi_high"])).mean())
    print(f"{name}: laplace {out['laplace']['fresh_s']:.1f} s fresh / {out['laplace']['refit_s']:.1f} s refit, "
          f"NUTS {out['nutpie']['fresh_s']:.1f} s; within 10%: {out['share_within_10pct']:.0%}; coverage "
          f"{out['coverage_laplace']:.1%} vs {out['coverage_nuts']:.1%}", flush=True)
    return out


STAGES = r"""
import functools, importlib, json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import pandas as pd
import bayes_judge as bj
assert bj.__file__.startswith(sys.argv[1]), bj.__file__
mods = {m: importlib.import_module(m) for m in ("bayes_judge.inference.laplace", "bayes_judge.leaderboard.encode",
                                                "bayes_judge.leaderboard.board", "bayes_judge.diagnose")}
spent = {}
def timed(mod, name, label):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
        return r
    setattr(mod, name, g)
    return g
lap, enc, board, diag = mods.values()
board.encode_leaderboard = timed(enc, "encode_leaderboard", "read and encode")
timed(diag, "diagnose_rows", "judge screening")
timed(lap, "mode", "mode")
timed(lap, "hessian", "Hessian")
timed(lap, "_logp_many", "importance weights")
infos = []  # each fit's importance-weight counts (a tree before info["evaluated"] reports none)
_draws = lap.laplace_draws
def kept(*a, **k):
    z, info = _draws(*a, **k); infos.append(info); return z, info
lap.laplace_draws = kept
df = pd.read_parquet(sys.argv[2]); kw = json.loads(sys.argv[3])
bj.leaderboard(df, sampler="laplace", seed=0, pointwise=False, **kw)  # compiles, caches
rows = []
for i in range(int(sys.argv[4])):
    spent.clear(); t = time.perf_counter()
    idata = bj.leaderboard(df, sampler="laplace", seed=i + 1, pointwise=False, **kw)
    total = time.perf_counter() - t
    t = time.perf_counter(); bj.leaderboard_summary(idata); summary = time.perf_counter() - t
    rows.append({"total": total, **spent, "then leaderboard_summary": summary,
                 **({"n evaluated": infos[-1]["evaluated"]} if "evaluated" in infos[-1] else {}),
                 "n importance ESS": infos[-1]["ess_importance"]})
print(json.dumps({k: statistics.median(r.get(k, 0.0) for r in rows) for k in rows[0]}))
"""


def stages(args) -> dict:
    """Median stage times of Laplace refits, this checkout and ``--vs`` alternating (module doc)."""
    import numpy as np

    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    repos = {"this checkout": str(ROOT)} | ({"--vs " + args.vs: str(Path(args.vs).resolve())} if args.vs else {})
    res: dict = {"systems": args.systems, "comparisons": args.comparisons, "repeats": args.repeats, "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            c = CASES[name]
            df, _ = simulate_leaderboard(args.systems, args.comparisons, alpha=c["alpha"], beta=c["beta"],
                                         tau=c["tau"], design="one-judge", label_share=c["label_share"], seed=args.seed)
            if c["votes"]:
                df = df.assign(winner=df["human"], judge="human").drop(columns=["human", "p_a"], errors="ignore")
            elif c["label_share"] == 0:
                df = df.drop(columns="human")
            path = Path(tmp) / "df.parquet"
            df.to_parquet(path)
            got: dict = {k: [] for k in repos}
            for _ in range(args.rounds):  # alternating, so both see the same machine
                for label, repo in repos.items():
                    r = subprocess.run([sys.executable, "-c", STAGES, repo, str(path), json.dumps(c["kw"]),
                                        str(args.repeats)], capture_output=True, text=True, cwd=tmp)
                    if r.returncode != 0:
                        raise RuntimeError(r.stderr[-2000:])
                    got[label].append(json.loads(r.stdout.strip().splitlines()[-1]))
            med = {label: {k: float(np.median([g[k] for g in runs])) for k in runs[0]} for label, runs in got.items()}
            res["cases"].append({"case": name, "stages": med})
    return res


def stages_markdown(res: dict, command: str) -> str:
    labels = list(res["cases"][0]["stages"])
    lines = ["# Where a Laplace refit's time goes (`benchmarks/bench_leaderboard_laplace.py --stages`)", "",
             f"Command: `{command}`; {res['systems']} systems, {res['comparisons']:,} comparisons; the median of "
             f"{res['repeats']} refits a process (after a first call), processes alternating; 2 cores.", "",
             "| case | stage | " + " | ".join(labels) + (" | ratio |" if len(labels) == 2 else ""),
             "|---|---|" + "---|" * len(labels) + ("---|" if len(labels) == 2 else "")]
    for case in res["cases"]:
        st = case["stages"]
        for k in st[labels[0]]:
            vals = [st[lb].get(k, 0.0) for lb in labels]
            ratio = f" {vals[0] / vals[1]:.2f} |" if len(labels) == 2 and vals[1] > 0 else (" — |" if len(labels) == 2 else "")
            fmt = "{:,.0f}" if k.startswith("n ") else "{:.2f} s"  # counts: log densities weighed, their ESS
            lines.append(f"| {case['case']} | {k.removeprefix('n ')} | " + " | ".join(fmt.format(v) for v in vals)
                         + " |" + ratio)
    return "\n".join(lines) + "\n"


def markdown(res: dict, command: str) -> str:
    lines = ["# `sampler=\"laplace\"` against NUTS (`benchmarks/bench_leaderboard_laplace.py`)", "",
             f"Command: `{command}`; {res['systems']} systems, {res['comparisons']:,} comparisons, one per battle; "
             "2 cores; wall times of a fresh process (imports, encoding, fit; numba's cache warm) and of a refit.", "",
             "| case | Laplace, fresh process | Laplace, refit | NUTS, fresh process | endpoints within 10% of NUTS's width "
             "| largest gap / width | 90% coverage of the true scores: Laplace / NUTS | the fit's own verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in res["cases"]:
        verdict = (r["laplace"]["approximate"] or "").split("), ", 1)[-1].split(";")[0]
        lines.append(f"| {r['case']} | {r['laplace']['fresh_s']:.1f} s | {r['laplace']['refit_s']:.1f} s | "
                     f"{r['nutpie']['fresh_s']:.1f} s | {r['share_within_10pct']:.0%} | {r['max_endpoint_err']:.2f} | "
                     f"{r['coverage_laplace']:.1%} / {r['coverage_nuts']:.1%} | {verdict} |")
    return "\n".join(lines) + "\n"


REAL = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[2])
import bayes_judge as bj
from bayes_judge.inference import laplace
from leaderboard_real import load
name, seeds, ref_draws, curved_from = sys.argv[1], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if curved_from:
    laplace.CURVED_FROM = int(curved_from)
df, _ = load(name)
df = df.drop(columns=[c for c in ("human",) if c in df.columns])
out = {"rows": len(df), "laplace": [], "laplace_s": [], "approximate": []}
for sampler, seed in [("laplace", s) for s in range(1, seeds + 1)] + [("nutpie", 1)]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = time.perf_counter()
        fit = bj.leaderboard(df, sampler=sampler, bridge=False, seed=seed, pointwise=False,
                             **({} if sampler == "laplace" else {"draws": ref_draws}))
        dt = time.perf_counter() - t
    s = bj.leaderboard_summary(fit)[["system", "hdi_low", "hdi_high"]].to_dict("list")
    if sampler == "laplace":
        out["laplace"].append(s)
        out["laplace_s"].append(dt)
        out["approximate"].append(fit.attrs["approximate"])
    else:
        out["nutpie"], out["nutpie_s"] = s, dt
print(json.dumps(out))
"""


def run_real(name: str, *, seeds: int = 1, ref_draws: int = 1000, curved_from: int | None = None) -> dict:
    """Laplace (fit seeds ``1..seeds``) against one NUTS fit (``ref_draws`` a chain) on a bundled
    real leaderboard (``benchmarks/leaderboard_real.py``'s judges, no labels, ``bridge=False``),
    one fresh process; ``curved_from`` sets ``laplace.CURVED_FROM`` there (from how many
    coordinates on a Stein step takes the curvature at its new mean)."""
    import numpy as np
    import pandas as pd

    r = subprocess.run([sys.executable, "-c", REAL, name, str(HERE), str(seeds), str(ref_draws),
                        "" if curved_from is None else str(curved_from)], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    res = json.loads(r.stdout.strip().splitlines()[-1])
    b = pd.DataFrame(res["nutpie"]).set_index("system")
    within, gaps = [], []
    for fit in res["laplace"]:
        a = pd.DataFrame(fit).set_index("system")
        ref = b.loc[a.index]
        width = ref["hdi_high"] - ref["hdi_low"]
        err = np.maximum((a["hdi_low"] - ref["hdi_low"]).abs(), (a["hdi_high"] - ref["hdi_high"]).abs()) / width
        within.append(float((err <= 0.1).mean()))
        gaps.append(float(err.max()))
    out = {"case": name, "rows": res["rows"], "systems": len(b), "seeds": len(within),
           "laplace_s": float(np.median(res["laplace_s"])), "nutpie_s": res["nutpie_s"],
           "share_within_10pct": float(np.mean(within)), "share_within_10pct_min": float(np.min(within)),
           "max_endpoint_err": float(np.mean(gaps)), "max_endpoint_err_max": float(np.max(gaps)),
           "not_corrected": sum("NOT corrected" in a for a in res["approximate"]),
           "approximate": res["approximate"][0], "per_seed": {"within": within, "largest_gap": gaps}}
    print(f"{name}: within 10%: {out['share_within_10pct']:.0%}, largest {out['max_endpoint_err']:.2f}", flush=True)
    return out


def real_markdown(res: dict, command: str) -> str:
    seeds = res["cases"][0].get("seeds", 1)
    lines = ["# `sampler=\"laplace\"` against NUTS on real judges (`benchmarks/bench_leaderboard_laplace.py --real`)",
             "", f"Command: `{command}`; the judges of `benchmarks/leaderboard_real.py` (coherence, every ordered "
             "pair of systems per text, three judges each), no human labels, `bridge=False` (the model's own "
             "posterior); one fresh process a set, 2 cores."
             + (f" Laplace fit seeds 1-{seeds} against one NUTS fit: the mean over seeds (the worst seed in "
                "brackets); the Laplace time is their median; the verdict is seed 1's." if seeds > 1 else ""), "",
             "| set | judgments | systems | Laplace | NUTS | endpoints within 10% of NUTS's width | largest gap / width "
             "| NOT corrected | the fit's own verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res["cases"]:
        verdict = r["approximate"].split("), ", 1)[-1].removesuffix("; not NUTS draws")
        many = r.get("seeds", 1) > 1
        within = f"{r['share_within_10pct']:.0%}" + (f" ({r['share_within_10pct_min']:.0%})" if many else "")
        gap = f"{r['max_endpoint_err']:.2f}" + (f" ({r['max_endpoint_err_max']:.2f})" if many else "")
        lines.append(f"| {r['case']} | {r['rows']} | {r['systems']} | {r['laplace_s']:.1f} s | {r['nutpie_s']:.1f} s | "
                     f"{within} | {gap} | {r.get('not_corrected', 0)} of {r.get('seeds', 1)} | {verdict} |")
    return "\n".join(lines) + "\n"


def write(out: Path, res: dict, md: str) -> None:
    """``res`` to ``out`` (JSON) and ``md`` beside it (``.md``), and ``md`` printed."""
    out.write_text(json.dumps(res, indent=1))
    out.with_suffix(".md").write_text(md)
    print(md)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="JSON path (default results/bench_leaderboard_laplace[_stages].json)")
    ap.add_argument("--stages", action="store_true", help="time a refit's stages instead (module doc)")
    ap.add_argument("--vs", default=None, help="with --stages: another checkout's folder, timed beside this one")
    ap.add_argument("--repeats", type=int, default=3, help="with --stages: refits a process")
    ap.add_argument("--rounds", type=int, default=2, help="with --stages: processes per checkout, alternating")
    ap.add_argument("--real", action="store_true", help="the bundled real leaderboards instead (SummEval, HANNA)")
    ap.add_argument("--seeds", type=int, default=1, help="with --real: Laplace fit seeds 1..N against one NUTS fit")
    ap.add_argument("--ref-draws", type=int, default=1000, help="with --real: the NUTS fit's draws a chain")
    ap.add_argument("--curved-from", type=int, default=None,
                    help="with --real: laplace.CURVED_FROM (0: every Stein step takes the curvature at its new mean)")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_leaderboard_laplace.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.real:
        res = {"cases": [run_real(name, seeds=args.seeds, ref_draws=args.ref_draws, curved_from=args.curved_from)
                         for name in ("summeval", "hanna")]}
        write(Path(args.out or HERE / "results" / "bench_leaderboard_laplace_real.json"), res,
              real_markdown(res, command))
        return res
    if args.stages:
        res = stages(args)
        write(Path(args.out or HERE / "results" / "bench_leaderboard_laplace_stages.json"), res,
              stages_markdown(res, command))
        return res
    args.out = args.out or str(HERE / "results" / "bench_leaderboard_laplace.json")
    res = {"systems": args.systems, "comparisons": args.comparisons, "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            res["cases"].append(run_case(name, args, Path(tmp)))
    write(Path(args.out), res, markdown(res, command))
    return res


if __name__ == "__main__":
    main()
