"""Benchmark: seed-faithful Bayesian Dawid-Skene (Gibbs labels) vs bayes_judge's marginalized DS.

One run, one data set (MT-Bench, 200 items, 8 judges x 2 presentation orders = 16 evaluators,
two simulated generators G0 / G1 with a true win rate of 0.8, seed 003 §4.1), compared on:

* ``baseline``      : Model 1 of seed 003 written directly in PyMC, as the paper describes it:
                      p ~ Beta(1, 1), q0, q1 ~ Beta(2, 1) per evaluator, h_i ~ Bernoulli(p) *not*
                      marginalized, t_ie ~ Bernoulli(h_i ? q0_e : 1 - q1_e); ``pm.sample`` assigns
                      NUTS to (p, q0, q1) and BinaryGibbsMetropolis to h.  4 chains x (tune + draws),
                      cores=2, PyMC defaults otherwise.
* ``ours-numpyro``  : ``bj.win_rate(g, method="dawid-skene", prior="none", swap="split",
                      sampler="numpyro")``, first
                      fit in a fresh process (imports + JAX tracing/compile counted), then a second
                      fit of new data (``assign_generators(df, seed=1)``: 112 verdict patterns
                      against 109; NumPyro pads both to 112 rows, so its compiled program is
                      reused) and a third of that data again with another seed.
* ``ours-nutpie``   : the same call with the package's default ``sampler="nutpie"`` (first and second
                      fit, as for NumPyro).
* ``ours-pymc``     : the same call with ``sampler="pymc"``, first fit in a fresh process.
* ``ours-default``  : ``bj.win_rate(g)`` with no method, prior or swap given: without labels the
                      consensus model on its nutpie fast path (first and second fit).
* BWRS with 10 000 draws + ``win_rate_summary`` (KDE mode), and ``kde_mode`` against
  ``scipy.stats.gaussian_kde`` on a 1e4-point grid for the same draws.

Every MCMC fit runs in its own fresh subprocess, so import and compile costs (PyTensor's C
compile, JAX's tracing) are counted; "wall" is measured inside that process with
``time.perf_counter`` from before the first heavy import to the posterior in hand (data loading,
encoding, model building, compiling and sampling included; interpreter start-up and the ESS
computation afterwards excluded).  ESS/s = ESS bulk / wall.  "fit s" excludes the imports and
the data loading: for the baseline, building the PyMC model and ``pm.sample`` (C compile
included); for ours, the ``bj.win_rate`` call (encoding, numba cache load or compile, sampling,
InferenceData).  PyTensor keeps compiled C modules
on disk; by default each PyMC run gets an empty compile directory (``base_compiledir``), so its
first-use C compile is counted whatever earlier runs left behind.  ``--warm-cache`` uses the
user's compile cache instead; the JSON records how many modules each PyMC run compiled.  The
machine's load average before and after each run is recorded too: other work on the machine
inflates every wall time.

Usage::

    .venv/bin/python benchmarks/bench_dawid_skene.py            # full protocol (several minutes)
    .venv/bin/python benchmarks/bench_dawid_skene.py --quick    # smoke run, few draws

Writes ``benchmarks/results/bench_dawid_skene.json`` (or ``--out``) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = HERE / "results" / "bench_dawid_skene.json"

FULL = {"chains": 4, "draws": 1000, "tune": 1000, "bwrs_draws": 10_000, "repeats": 7, "scipy_repeats": 3}
QUICK = {"chains": 4, "draws": 150, "tune": 150, "bwrs_draws": 10_000, "repeats": 3, "scipy_repeats": 1}


# --------------------------------------------------------------------------------------------
# helpers shared by the workers (imported lazily so that import cost lands inside the timing)
# --------------------------------------------------------------------------------------------


def _data(seed: int = 0):
    import bayes_judge as bj

    df = bj.load_dataset("mtbench")
    return df, bj.assign_generators(df, share=0.8, seed=seed)


def _metrics(post, wall: float) -> dict:
    """ESS / r_hat / means of p, q0, q1 from an xarray posterior Dataset."""
    import warnings

    import arviz as az
    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qs = [v for v in ("q0", "q1", "q") if v in set(post.data_vars)]  # two-coin q0, q1; one-coin / consensus q
        ess = az.ess(post[["p", *qs]], method="bulk")
        rhat = az.rhat(post[["p", *qs]])
    ess_p = float(np.asarray(ess["p"]).ravel()[0])
    min_ess_q = float(min(np.nanmin(ess[v].to_numpy()) for v in qs))
    max_rhat = float(max(np.nanmax(rhat[v].to_numpy()) for v in ("p", *qs)))
    p = post["p"].to_numpy().reshape(post["p"].shape[0], post["p"].shape[1], -1)[..., 0]
    return {
        "wall_s": wall,
        "ess_bulk_p": ess_p,
        "ess_per_s_p": ess_p / wall,
        "min_ess_bulk_q": min_ess_q,
        "min_ess_per_s_q": min_ess_q / wall,
        "max_rhat": max_rhat,
        "rhat_p": float(np.asarray(rhat["p"]).ravel()[0]),
        "p_mean": float(p.mean()),
        "p_mean_per_chain": [float(x) for x in p.mean(axis=1)],
        "n_draws_total": int(p.size),
    }


def _compiledir() -> Path:
    import pytensor

    return Path(pytensor.config.compiledir)


def _count_modules(d: Path) -> int:
    """Compiled C modules (directories holding a shared object) under a PyTensor compiledir."""
    if not d.exists():
        return 0
    n = 0
    for sub in d.iterdir():
        if sub.is_dir() and any(f.suffix == ".so" for f in sub.iterdir() if f.is_file()):
            n += 1
    return n


# --------------------------------------------------------------------------------------------
# workers: each runs in a fresh interpreter and writes one JSON file
# --------------------------------------------------------------------------------------------


def worker_baseline(cfg: dict) -> dict:
    t0 = time.perf_counter()
    import numpy as np
    import pymc as pm

    import bayes_judge as bj

    t_import = time.perf_counter() - t0
    df, g = _data(0)
    data = bj.encode_win_rate(g, swap="split", ties="random", seed=0)
    tot = data.n_first + data.n_second
    if not np.all(tot == 1):
        raise RuntimeError("baseline expects exactly one verdict per (item, evaluator)")
    t_obs = data.n_first.astype("int64")  # 1 = evaluator prefers G0
    U, E = t_obs.shape
    modules_before = _count_modules(_compiledir())

    t_build0 = time.perf_counter()
    with pm.Model(coords={"item": np.arange(U), "judge": data.judges}) as model:
        p = pm.Beta("p", 1.0, 1.0)
        q0 = pm.Beta("q0", 2.0, 1.0, dims="judge")  # P(verdict G0 | h = G0)
        q1 = pm.Beta("q1", 2.0, 1.0, dims="judge")  # P(verdict G1 | h = G1)
        h = pm.Bernoulli("h", p, dims="item")  # 1 = a human prefers G0; not marginalized
        theta = pm.math.switch(pm.math.eq(h, 1)[:, None], q0[None, :], 1.0 - q1[None, :])
        pm.Bernoulli("t", theta, observed=t_obs, dims=("item", "judge"))
    t_build = time.perf_counter() - t_build0

    t_s0 = time.perf_counter()
    idata = pm.sample(
        draws=cfg["draws"],
        tune=cfg["tune"],
        chains=cfg["chains"],
        cores=2,
        random_seed=0,
        progressbar=False,
        compute_convergence_checks=False,
        model=model,
    )
    t_sample = time.perf_counter() - t_s0
    wall = time.perf_counter() - t0

    out = _metrics(idata.posterior, wall)
    out["fit_s"] = t_build + t_sample
    out.update(
        {
            "import_s": t_import,
            "build_s": t_build,
            "pm_sample_s": t_sample,
            "pymc_sampling_time_s": float(idata.sample_stats.attrs.get("sampling_time", float("nan"))),
            "n_items": U,
            "n_evaluators": E,
            "n_random_ties": int(data.n_random_ties),
            "compiledir": str(_compiledir()),
            "compiled_modules_before": modules_before,
            "compiled_modules_after": _count_modules(_compiledir()),
            "sample_stats_vars": sorted(idata.sample_stats.data_vars),
        }
    )
    return out


def _worker_two_fits(cfg: dict, backend: str, default: bool = False) -> dict:
    """First fit in this fresh process, a second fit of new data (the same model; its pattern count
    may differ) and a third of the second's data with another seed (the same shapes throughout).
    ``default``: ``bj.win_rate(g)`` with no method on the verdicts alone (the human column
    dropped: the consensus model), swap='sum'."""
    t0 = time.perf_counter()
    import bayes_judge as bj

    t_import = time.perf_counter() - t0
    kw = dict(method="dawid-skene", prior="none", swap="split", sampler=backend, chains=cfg["chains"],
              draws=cfg["draws"], tune=cfg["tune"], seed=0)
    if default:
        kw = {k: v for k, v in kw.items() if k not in ("method", "prior", "swap")}
    df, g = _data(0)
    if default:  # the judges' verdicts alone: no human column
        g = g.drop(columns="human")
    t_fit = time.perf_counter()
    idata = bj.win_rate(g, **kw)
    fit_s = time.perf_counter() - t_fit
    first = _metrics(idata.posterior, time.perf_counter() - t0)
    first.update({"import_s": t_import, "fit_s": fit_s, "n_patterns": int(idata.attrs.get("n_patterns", -1)),
                  "ds_model": str(idata.attrs.get("ds_model")), "sampler": str(idata.attrs.get("sampler"))})
    g1 = bj.assign_generators(df, share=0.8, seed=1)
    if default:
        g1 = g1.drop(columns="human")
    t1 = time.perf_counter()
    idata2 = bj.win_rate(g1, **kw)
    second = _metrics(idata2.posterior, time.perf_counter() - t1)
    second.update({"fit_s": second["wall_s"], "n_patterns": int(idata2.attrs.get("n_patterns", -1))})
    t2 = time.perf_counter()
    idata3 = bj.win_rate(g1, **{**kw, "seed": 1})
    third = _metrics(idata3.posterior, time.perf_counter() - t2)
    third.update({"fit_s": third["wall_s"], "n_patterns": int(idata3.attrs.get("n_patterns", -1))})
    return {"first": first, "second": second, "third": third}


def worker_ours_numpyro(cfg: dict) -> dict:
    import jax

    from bayes_judge.inference import fit as inference_fit

    out = _worker_two_fits(cfg, "numpyro")
    out["second"]["compiled_models_cached"] = len(inference_fit._CACHE)
    entry = next((e for e in inference_fit._CACHE.values() if e.numpyro is not None), None)
    out["numpyro_programs_compiled"] = len(entry.numpyro.programs) if entry is not None else None
    out.update({"jax_devices": jax.local_device_count(), "xla_flags": os.environ.get("XLA_FLAGS", "")})
    return out


def worker_ours_nutpie(cfg: dict) -> dict:
    """The package's default backend: nutpie NUTS on a numba log-density (first and second fit)."""
    return _worker_two_fits(cfg, "nutpie")


def worker_ours_default(cfg: dict) -> dict:
    """What a user without labels gets: ``bj.win_rate(g)`` (the consensus model, its nutpie fast path)."""
    return _worker_two_fits(cfg, "nutpie", default=True)


def worker_ours_pymc(cfg: dict) -> dict:
    t0 = time.perf_counter()
    import pymc  # noqa: F401  (import cost counted, as in the baseline)

    import bayes_judge as bj

    t_import = time.perf_counter() - t0
    modules_before = _count_modules(_compiledir())
    df, g = _data(0)
    t_fit = time.perf_counter()
    idata = bj.win_rate(g, method="dawid-skene", prior="none", swap="split", sampler="pymc",
                        chains=cfg["chains"], draws=cfg["draws"], tune=cfg["tune"], seed=0)
    fit_s = time.perf_counter() - t_fit
    wall = time.perf_counter() - t0
    out = _metrics(idata.posterior, wall)
    out.update({"import_s": t_import, "fit_s": fit_s, "n_patterns": int(idata.attrs.get("n_patterns", -1)),
                "compiledir": str(_compiledir()), "compiled_modules_before": modules_before,
                "compiled_modules_after": _count_modules(_compiledir())})
    return out


def _median_time(fn, repeats: int) -> tuple[float, list[float]]:
    import statistics

    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), ts


def worker_bwrs(cfg: dict) -> dict:
    import warnings

    import numpy as np
    from scipy.stats import gaussian_kde

    import bayes_judge as bj
    from bayes_judge.winrate.kde import kde_grid, kde_mode

    df, g = _data(0)
    n = cfg["bwrs_draws"]
    warnings.simplefilter("ignore")

    def fit():
        return bj.win_rate(g, method="bwrs", prior="in-distribution", chains=1, draws=n)

    idata = fit()
    bj.win_rate_summary(idata)  # warm-up
    t_fit, ts_fit = _median_time(fit, cfg["repeats"])
    t_sum, ts_sum = _median_time(lambda: bj.win_rate_summary(idata), cfg["repeats"])
    t_both, ts_both = _median_time(lambda: bj.win_rate_summary(fit()), cfg["repeats"])
    summ = bj.win_rate_summary(idata)

    # the algorithm alone on encoded data: Alg. 1 draws, eq. 11, pooling and the KDE mode
    from bayes_judge.winrate.bwrs import bwrs_draws

    enc = bj.encode_win_rate(g)
    counts = enc.accuracy_counts()

    def core():
        d = bwrs_draws(enc, counts, chains=1, draws=n, seed=0)
        return kde_mode(d["p"].ravel())

    core()
    t_core, ts_core = _median_time(core, cfg["repeats"])

    draws = idata.posterior["p"].to_numpy().ravel()
    grid_n = 10_000
    kde_mode(draws, grid_size=grid_n)  # warm-up
    t_ours, ts_ours = _median_time(lambda: kde_mode(draws, grid_size=grid_n), cfg["repeats"])
    mode_ours = kde_mode(draws, grid_size=grid_n)
    grid, _ = kde_grid(draws, grid_size=grid_n)

    def scipy_mode():
        dens = gaussian_kde(draws)(grid)
        return float(grid[int(np.argmax(dens))])

    t_sp, ts_sp = _median_time(scipy_mode, cfg["scipy_repeats"])
    mode_sp = scipy_mode()
    return {
        "n_draws": int(draws.size),
        "bwrs_fit_median_s": t_fit, "bwrs_fit_all_s": ts_fit,
        "summary_median_s": t_sum, "summary_all_s": ts_sum,
        "fit_plus_summary_median_s": t_both, "fit_plus_summary_all_s": ts_both,
        "core_median_s": t_core, "core_all_s": ts_core,
        "p_mean": float(summ["p_mean"].iloc[0]), "p_mode_summary": float(summ["p_mode"].iloc[0]),
        "kde_grid_points": grid_n,
        "kde_mode_median_s": t_ours, "kde_mode_all_s": ts_ours, "kde_mode": mode_ours,
        "scipy_kde_median_s": t_sp, "scipy_kde_all_s": ts_sp, "scipy_mode": mode_sp,
        "mode_abs_diff": abs(mode_ours - mode_sp), "grid_step": float(grid[1] - grid[0]),
    }


WORKERS = {
    "baseline": worker_baseline,
    "ours-numpyro": worker_ours_numpyro,
    "ours-nutpie": worker_ours_nutpie,
    "ours-default": worker_ours_default,
    "ours-pymc": worker_ours_pymc,
    "bwrs": worker_bwrs,
}


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------


def _run_worker(name: str, cfg: dict, env_extra: dict | None = None, timeout: float = 3600) -> dict:
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "out.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name,
               "--worker-out", str(out), "--worker-cfg", json.dumps(cfg)]
        env = {**os.environ, **(env_extra or {})}
        load0 = os.getloadavg()
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-8000:])
            raise RuntimeError(f"worker {name} failed with exit code {proc.returncode}")
        res = json.loads(out.read_text())
    res["process_wall_s"] = wall  # interpreter start + worker + metrics, seen from outside
    res["loadavg_before"], res["loadavg_after"] = list(load0), list(os.getloadavg())
    # PyMC announces its step assignment on stderr (">NUTS: [...]", ">BinaryGibbsMetropolis: [...]")
    res["sampler_log"] = [ln.strip() for ln in proc.stderr.splitlines()
                          if ln.strip().startswith((">", "CompoundStep", "NUTS:", "Multiprocess", "Sequential",
                                                    "Sampling ", "There were", "The rhat"))]
    return res


def _machine() -> dict:
    import importlib.metadata as md

    vers = {}
    for pkg in ("numpy", "scipy", "pymc", "pytensor", "jax", "jaxlib", "numpyro", "arviz", "bayes_judge"):
        try:
            vers[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            vers[pkg] = None
    cpu = platform.processor()
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "bayes_judge"], cwd=ROOT,
                                    capture_output=True, text=True).stdout.strip())
    except OSError:
        commit, dirty = None, None
    return {
        "cpu_count": os.cpu_count(),
        "sched_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": vers,
        "git_commit": commit,
        "bayes_judge_worktree_dirty": dirty,
    }


def _fmt(x, nd=1):
    if x is None:
        return "-"
    if isinstance(x, float):
        if x != x:
            return "nan"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.{nd}f}"
    return str(x)


def _table(res: dict) -> str:
    base = res["baseline"]
    rows = [
        ("baseline: PyMC, h sampled by BinaryGibbsMetropolis (fresh process)", base),
        ("ours nutpie (default sampler): first fit (fresh process)", res["ours_nutpie"]["first"]),
        ("ours nutpie: second fit, new data, same process", res["ours_nutpie"]["second"]),
        ("ours nutpie: third fit, the second's data again", res["ours_nutpie"]["third"]),
        ("ours numpyro: first fit (fresh process, import + JIT)", res["ours_numpyro"]["first"]),
        (f"ours numpyro: second fit, new data ({res['ours_numpyro']['first']['n_patterns']} -> "
         f"{res['ours_numpyro']['second']['n_patterns']} patterns; programs compiled in all: "
         f"{res['ours_numpyro'].get('numpyro_programs_compiled')}), same process", res["ours_numpyro"]["second"]),
        ("ours numpyro: third fit, the second's data again, another seed", res["ours_numpyro"]["third"]),
        ("ours pymc sampler: first fit (fresh process)", res["ours_pymc"]),
        ("no-label default `bj.win_rate(g)` (consensus model, nutpie): first fit (fresh process)",
         res["ours_default"]["first"]),
        ("no-label default: second fit, new data, same process", res["ours_default"]["second"]),
    ]
    head = ("| run | wall s | ESS bulk p | ESS/s p | min ESS/s q (q0, q1 or q) | max r_hat | p mean | ESS/s p vs baseline "
            "| fit s (no imports) | ESS/s p, fit | vs baseline, fit |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    base_fit = base["ess_bulk_p"] / base["fit_s"]
    for name, r in rows:
        ratio = r["ess_per_s_p"] / base["ess_per_s_p"] if base["ess_per_s_p"] > 0 else float("nan")
        fit_rate = r["ess_bulk_p"] / r["fit_s"]
        lines.append(
            f"| {name} | {_fmt(r['wall_s'])} | {_fmt(r['ess_bulk_p'], 0)} | {_fmt(r['ess_per_s_p'])} | "
            f"{_fmt(r['min_ess_per_s_q'], 2)} | {_fmt(r['max_rhat'], 3)} | {_fmt(r['p_mean'], 3)} | "
            f"{_fmt(ratio)}x | {_fmt(r['fit_s'])} | {_fmt(fit_rate)} | {_fmt(fit_rate / base_fit)}x |"
        )
    b = res["bwrs"]
    lines += [
        "",
        f"| BWRS / KDE ({b['n_draws']} draws; median of repeats after warm-up) | seconds |",
        "|---|---:|",
        f"| `win_rate(method='bwrs', prior='in-distribution', chains=1, draws={b['n_draws']})` | "
        f"{b['bwrs_fit_median_s']:.4f} |",
        f"| `win_rate_summary(idata)` (KDE mode, 4096-pt grid) | {b['summary_median_s']:.4f} |",
        f"| both together | {b['fit_plus_summary_median_s']:.4f} |",
        f"| Algorithm 1 alone (draws of q0, q1, k for 8 judges, eq. 11, pooling, KDE mode) | {b['core_median_s']:.4f} |",
        f"| `kde_mode`, {b['kde_grid_points']}-pt grid (mode {b['kde_mode']:.4f}) | {b['kde_mode_median_s']:.4f} |",
        f"| `scipy.stats.gaussian_kde` on the same {b['kde_grid_points']}-pt grid (mode {b['scipy_mode']:.4f}) | "
        f"{b['scipy_kde_median_s']:.4f} |",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: few MCMC draws, few repeats")
    ap.add_argument("--out", type=Path, default=None, help=f"JSON output (default {DEFAULT_OUT})")
    ap.add_argument("--warm-cache", action="store_true",
                    help="use the user's PyTensor compile cache (default: an empty one per PyMC run)")
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    ap.add_argument("--worker-cfg", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        res = WORKERS[args.worker](json.loads(args.worker_cfg))
        Path(args.worker_out).write_text(json.dumps(res))
        return 0

    cfg = dict(QUICK if args.quick else FULL)
    out_path = args.out or (DEFAULT_OUT.with_name("bench_dawid_skene_quick.json") if args.quick else DEFAULT_OUT)
    command = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.executable, ROOT)
                                                 if sys.executable.startswith(str(ROOT)) else sys.executable,
                                                 os.path.relpath(__file__, ROOT), *(argv or sys.argv[1:])])
    print(f"command: {command}", flush=True)
    print(f"protocol: {cfg}", flush=True)

    cold_dirs: list[tempfile.TemporaryDirectory] = []

    def pymc_env() -> dict:
        if args.warm_cache:
            return {}
        d = tempfile.TemporaryDirectory(prefix="pytensor_cold_")
        cold_dirs.append(d)
        flags = os.environ.get("PYTENSOR_FLAGS", "")
        return {"PYTENSOR_FLAGS": (flags + "," if flags else "") + f"base_compiledir={d.name}"}

    t_all = time.perf_counter()
    res: dict = {"command": command, "protocol": cfg, "quick": args.quick, "cold_cache": not args.warm_cache,
                 "machine": _machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    for key, name, env in (("ours_nutpie", "ours-nutpie", None), ("ours_default", "ours-default", None),
                           ("ours_numpyro", "ours-numpyro", None),
                           ("bwrs", "bwrs", None),
                           ("ours_pymc", "ours-pymc", "pymc"), ("baseline", "baseline", "pymc")):
        print(f"running {name} ...", flush=True)
        res[key] = _run_worker(name, cfg, pymc_env() if env else None)
        r = res[key].get("first", res[key])
        if "wall_s" in r:
            print(f"  {name}: wall {r['wall_s']:.1f} s, ESS p {r['ess_bulk_p']:.0f}, r_hat max {r['max_rhat']:.3f}",
                  flush=True)
    for d in cold_dirs:
        d.cleanup()
    res["total_wall_s"] = time.perf_counter() - t_all

    base = res["baseline"]["ess_per_s_p"]
    res["ratio_ess_per_s_p_vs_baseline"] = {
        "ours_nutpie_first": res["ours_nutpie"]["first"]["ess_per_s_p"] / base,
        "ours_nutpie_second": res["ours_nutpie"]["second"]["ess_per_s_p"] / base,
        "ours_numpyro_first": res["ours_numpyro"]["first"]["ess_per_s_p"] / base,
        "ours_numpyro_second": res["ours_numpyro"]["second"]["ess_per_s_p"] / base,
        "ours_pymc_first": res["ours_pymc"]["ess_per_s_p"] / base,
        "ours_default_first": res["ours_default"]["first"]["ess_per_s_p"] / base,
        "ours_default_second": res["ours_default"]["second"]["ess_per_s_p"] / base,
    }
    table = _table(res)
    res["table_markdown"] = table
    print()
    print(table)
    for key in ("baseline", "ours_pymc"):
        r = res[key]
        added = r["compiled_modules_after"] - r["compiled_modules_before"]
        print(f"\n{key}: PyTensor compile cache {'default (warm)' if args.warm_cache else 'empty dir per run (cold)'}; "
              f"{r['compiled_modules_before']} modules before, {added} compiled during the run"
              + (" (cache warm for this model)" if added == 0 else ""))
    print("load average (1 min) before/after each run on "
          f"{os.cpu_count()} cores: "
          + ", ".join(f"{k} {res[k]['loadavg_before'][0]:.1f}/{res[k]['loadavg_after'][0]:.1f}"
                      for k in ("ours_nutpie", "ours_default", "ours_numpyro", "bwrs", "ours_pymc", "baseline")))
    print("baseline step methods: " + "; ".join(x for x in res["baseline"]["sampler_log"] if x.startswith(">")))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(res, indent=2) + "\n")
    print(f"\nwrote {os.path.relpath(out_path, ROOT)} (total {res['total_wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
