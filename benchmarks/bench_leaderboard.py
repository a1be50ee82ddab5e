"""Benchmark: ``bj.leaderboard`` at Chatbot Arena scale, with Bradley-Terry references (issue 12, item 3).

Data (every case): M comparisons of N = 200 systems by 3 judges, simulated with vectorized numpy.
True scores ``s ~ Normal(0, 1)``, centred.  Each comparison is a random ordered pair (the order is
the presentation order, A first), judged once by a random judge, on a prompt of its own.  A latent
human preference ``h = A`` with probability ``σ(s_A − s_B)``; judge ``e`` answers through the
``bt-judges`` ordered logit (:mod:`bayes_judge.generative.leaderboard_models`):
``η = ±α_e + β_e`` (+ when h = A), ``P(A) = σ(η − τ)``, ``P(B) = σ(−η − τ)``, a tie otherwise, with
``α = (2.0, 1.5, 1.2)``, ``β = (0.2, −0.1, 0.0)`` and one ``τ`` solved so that 10% of the verdicts
are ties in expectation (the realized share is reported).  A share ``--label-share`` (default 1%)
of the rows also carries the human preference ``h`` in the ``human`` column.  The data of one size
is the same in every case (seeded by the size).

* (a) ``bj.leaderboard(df, seed=0)`` (``bt-judges``, nutpie, 4 chains x (1000 tune + 1000 draws);
  with human labels its default includes each judge's own system preferences ``δ`` (``system_bias``,
  3 x 200 more parameters; the data have none), ``--system-bias off`` drops them) for every size
  of ``--sizes`` (default 1e4, 1e5, 1e6), each in a fresh subprocess, which
  simulates the table, times :func:`bayes_judge.leaderboard.encode_leaderboard` (rows -> cells),
  runs a warm-up fit of the same data (1 chain, 1 + 1 draws, ``pointwise=False``: compiling the
  model to numba, which the full fit then reuses), times one log-density + gradient
  evaluation of the compiled model (nutpie's numba C callback, median of 200 calls at a random
  point), and then the full fit ("full fit": sampling, InferenceData; the call includes its own
  encoding).  "cold call" = warm-up + full fit, what one ``bj.leaderboard`` call in a fresh
  process costs.  A full fit still running after ``--fit-timeout`` seconds (default 600) is
  stopped and the row keeps what was measured before it.  Reported: cells, encode time, the
  walls, the subprocess's peak RSS (``ru_maxrss``: includes the simulated table and the
  encoding; RSS before the warm-up too),
  max r_hat over every sampled variable and over the 200 scores, min bulk ESS over the scores
  (ArviZ, unrounded), the mean number of
  leapfrog steps per draw, and against the true scores (same logit scale, both centred): Kendall
  τ, max |error| of the posterior means and the coverage of the 90% HDIs.  The same for
  ``model="bt"`` (Bradley-Terry-Davidson: the judges' verdicts taken as the preference) on the
  1e6 data (``--bt-size``): its scores are the judges' attenuated preference, so its coverage of
  the human-preference truth is expected to be low.  ``bt-judges`` runs on its registered fast
  path (:mod:`bayes_judge.inference.kernels.leaderboard`, a hand-written numba log-density); the sizes of
  ``--declared-sizes`` (default 1e4) run once more with ``fast=False`` (the declaration compiled
  by nutpie), so that the two are compared in one run.
* (b) References on the same 1e6 data (``--ref-size``), in one more subprocess: plain
  Bradley-Terry on the pooled verdicts (a tie half a win each side, no judge or position terms,
  as Chatbot Arena's ``compute_mle_elo``): ``evalica.bradley_terry`` on the 1M rows (Python lists
  of the integer ids and ``evalica.Winner`` values, tolerance 1e-6; list building untimed) and
  :func:`bayes_judge.ranking.baselines.bradley_terry` (prior 0, SQUAREM, tol 1e-6); then
  Chatbot Arena's bootstrap (rows resampled with replacement, BT refitted, ``--boot`` = 100
  rounds, percentile intervals), done as multinomial weights over the aggregated
  (A, B, verdict) counts (at most 200·199·3 rows): with evalica (``weights=``) and with our
  ``bradley_terry(..., weight=w)`` (Zermelo + SQUAREM on the merged pair counts).  Reported: wall, Kendall τ, max |error|
  and the 90% intervals' coverage of the true scores.  BT on judge verdicts estimates the
  judges' attenuated preference (scores shrunk toward 0), not the human one: its coverage is
  reported as it is.

Target (issue 12): 1,000,000 comparisons, 200 systems, 3 judges, 10% ties, 4 x (1000 + 1000) draws,
cold call <= 60 s wall and <= 2 GB peak RSS, max r_hat <= 1.01, every score's bulk ESS >= 400.
The "target met?" column applies these four checks to every row (the target itself is set at 1e6).

The load average before and after every subprocess is recorded: other work on the machine
inflates wall times (4 chains share the machine's cores).

Usage::

    .venv/bin/python benchmarks/bench_leaderboard.py                     # sizes 1e4, 1e5, 1e6
    .venv/bin/python benchmarks/bench_leaderboard.py --sizes 1e4 --bt-size 0 --ref-size 1e4

Writes ``benchmarks/results/bench_leaderboard.{json,md}`` (or ``--out``) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

N_SYSTEMS = 200
ALPHA = (2.0, 1.5, 1.2)
BETA = (0.2, -0.1, 0.0)
TIE_SHARE = 0.10
N_EVALS = 4 * (1000 + 1000)  # draws of a full fit, warm-up included
TARGET = {"wall_s": 60.0, "rss_gb": 2.0, "r_hat": 1.01, "ess": 400.0}


def _sigmoid(x):
    import numpy as np

    return 1.0 / (1.0 + np.exp(-x))


def tie_threshold(alpha=ALPHA, beta=BETA, share=TIE_SHARE) -> float:
    """The τ giving an expected tie share ``share`` (judges equally likely, P(h = A) = 1/2)."""
    import numpy as np
    from scipy.optimize import brentq

    eta = np.concatenate([np.asarray(alpha) + beta, -np.asarray(alpha) + beta])

    def excess(tau):
        return float(np.mean(_sigmoid(eta + tau) - _sigmoid(eta - tau))) - share

    return float(brentq(excess, 0.0, 20.0))


def simulate(m: int, *, seed: int, label_share: float, n: int = N_SYSTEMS):
    """The judgments table of M comparisons (module docstring; drawn by
    :func:`bayes_judge.leaderboard.simulate.simulate_leaderboard`, one judge per comparison), the
    true scores, the system names, the (A, B, verdict) codes and the facts."""
    import numpy as np

    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    tau = tie_threshold()
    df, s = simulate_leaderboard(n, m, alpha=ALPHA, beta=BETA, tau=tau, label_share=label_share,
                                 design="one-judge", seed=seed)
    names = s.index.to_numpy(dtype=object)
    pos = {k: x for x, k in enumerate(names)}
    a, b = df["a"].map(pos).to_numpy(), df["b"].map(pos).to_numpy()
    code = df["winner"].map({"a": 0, "b": 1, "tie": 2}).to_numpy()
    lab = df["human"].notna().to_numpy()
    facts = {"tau": tau, "tie_share": float(np.mean(code == 2)), "n_labels": int(lab.sum()),
             "human_agreement_labelled": float(np.mean(df["winner"].to_numpy()[lab] == df["human"].to_numpy()[lab]))}
    return df, s.to_numpy(), names, (a, b, code), facts


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kB


def _score_stats(truth, est, lo=None, hi=None) -> dict:
    import numpy as np
    from scipy.stats import kendalltau

    out = {"kendall_tau": float(kendalltau(truth, est).statistic),
           "max_abs_err": float(np.max(np.abs(est - truth))),
           "slope_est_on_truth": float(np.polyfit(truth, est, 1)[0])}
    if lo is not None:
        out["coverage90"] = float(np.mean((truth >= lo) & (truth <= hi)))
        out["mean_width90"] = float(np.mean(hi - lo))
    return out


def _logp_grad_time(compiled=None, repeats: int = 200) -> dict:
    """Median wall of one call of the compiled model's log density + gradient (nutpie's C callback):
    ``compiled`` (a fast path's model) or the last model nutpie compiled from a declaration."""
    import ctypes

    import numpy as np

    from bayes_judge.inference import fit as fit_mod

    if compiled is None:
        entries = [e for e in fit_mod._CACHE.values() if e.nutpie is not None]
        if not entries:
            return {}
        compiled = entries[-1].nutpie
    n_dim = compiled.n_dim
    fn = compiled.compiled_logp_func.ctypes
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 0.3, n_dim)
    grad = np.zeros(n_dim)
    lp = np.zeros(1)
    ud = compiled.user_data
    dptr = ctypes.POINTER(ctypes.c_double)
    user = ctypes.c_void_p(ud.ctypes.data) if fn.argtypes[4] is ctypes.c_void_p else ud.ctypes.data_as(dptr)
    args = (ctypes.c_uint64(n_dim), x.ctypes.data_as(dptr), grad.ctypes.data_as(dptr), lp.ctypes.data_as(dptr), user)
    rc = fn(*args)
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        walls.append(time.perf_counter() - t0)
    return {"logp_grad_ms": float(np.median(walls) * 1e3), "logp_grad_rc": int(rc), "n_dim": int(n_dim)}


def _convergence(idata) -> dict:
    """Unrounded r_hat over every sampled variable and over the scores (the summary's are
    ``az.summary``'s, rounded to 2 decimals), the scores' bulk ESS, and each family's lowest."""
    import arviz as az
    import numpy as np

    rhat, ess = az.rhat(idata), az.ess(idata)
    scores = ess["s"].to_numpy()
    return {"r_hat_max": float(rhat.to_array().max()), "r_hat_scores_max": float(rhat["s"].max()),
            "ess_bulk_min": float(scores.min()), "ess_bulk_median": float(np.median(scores)),
            "ess_min_by_family": {k: round(float(ess[k].min())) for k in ess.data_vars},
            "r_hat_max_by_family": {k: round(float(rhat[k].max()), 4) for k in rhat.data_vars}}


def _worker_fit(out: Path, m: int, model: str, label_share: float, fit_timeout: float,
                system_bias: bool | None, fast: bool = True, shear: bool = True, seeds: tuple[int, ...] = ()) -> None:
    t_start = time.perf_counter()
    import threading

    import numpy as np

    import bayes_judge as bj
    from bayes_judge.inference.kernels import leaderboard as lb_fast
    from bayes_judge.leaderboard import encode_leaderboard

    lb_fast.SHEAR = shear

    compiled: list = []  # the fast paths' nutpie models, for the logp+grad timing
    make_model = lb_fast.make_model

    def keep(*a, **k):
        compiled.append(make_model(*a, **k))
        return compiled[-1]

    lb_fast.make_model = keep  # both kernels' fast paths are made in kernels.leaderboard.build_fast_path
    res: dict = {"rows": m, "model": model, "fast": fast, "shear": shear}
    lock = threading.Lock()

    def dump():
        with lock:  # the peak of the first full fit; the extra seeds' separately
            res["peak_rss_mb" if "seeds" not in res else "peak_rss_after_seeds_mb"] = _rss_mb()
            res["process_s"] = time.perf_counter() - t_start
            out.write_text(json.dumps(res))

    t0 = time.perf_counter()
    df, s_true, names, _, facts = simulate(m, seed=m, label_share=label_share)
    res["simulate_s"] = time.perf_counter() - t0
    res.update(facts)
    t0 = time.perf_counter()
    data = encode_leaderboard(df)
    res["encode_s"] = time.perf_counter() - t0
    res["cells"] = data.n_cells
    res["human_cells"] = len(data.hum_a)
    del data
    res["rss_before_fit_mb"] = _rss_mb()
    dump()

    # warm-up: a one-draw fit of the same data compiles the model (cached for the full fit)
    kw: dict = {} if system_bias is None or model != "bt-judges" else {"system_bias": system_bias}
    kw["fast"] = fast
    if model == "bt-judges":  # the joint model of judges and labels these rows measure (the default
        kw["bridge"] = False  # with labels learns the score bridge from them: leaderboard_few_labels.py)
    t0 = time.perf_counter()
    bj.leaderboard(df, model=model, seed=0, chains=1, draws=1, tune=1, pointwise=False, **kw)
    res["warmup_fit_s"] = time.perf_counter() - t0
    res.update(_logp_grad_time(compiled[-1] if compiled else None))
    res["system_bias"] = model == "bt-judges" and (label_share > 0 if system_bias is None else system_bias)
    dump()

    def watchdog():
        res["fit_timed_out"] = True
        res["fit_killed_after_s"] = fit_timeout
        dump()
        os._exit(3)

    timer = threading.Timer(fit_timeout, watchdog)
    timer.daemon = True
    timer.start()
    t0 = time.perf_counter()
    idata = bj.leaderboard(df, model=model, seed=0, **kw)
    wall = time.perf_counter() - t0
    timer.cancel()
    res["fit_s"] = wall
    res["first_fit_s"] = res["warmup_fit_s"] + wall  # a cold call: compile + this fit
    summ = bj.leaderboard_summary(idata)
    truth = s_true[[int(x[1:]) for x in summ["system"]]]
    res.update(_convergence(idata))
    res["divergences"] = int(idata.sample_stats["diverging"].sum())
    res["mean_leapfrog_steps"] = float(idata.sample_stats["n_steps"].mean())
    res["sampler"] = idata.attrs.get("sampler", "")
    res.update(_score_stats(truth, summ["mean"].to_numpy(), summ["hdi_low"].to_numpy(),
                            summ["hdi_high"].to_numpy()))
    post = idata.posterior
    for k in ("alpha", "beta", "tau", "nu"):
        if k in post:
            res[f"{k}_mean"] = np.asarray(post[k].mean(("chain", "draw"))).round(3).tolist()
    dump()
    res["seeds"] = [{"seed": 0, "fit_s": wall, **_convergence(idata)}]
    for seed in seeds:  # the same data, other seeds: how the convergence figures vary
        timer = threading.Timer(fit_timeout, watchdog)
        timer.daemon = True
        timer.start()
        t0 = time.perf_counter()
        idata = bj.leaderboard(df, model=model, seed=seed, **kw)
        res["seeds"].append({"seed": seed, "fit_s": time.perf_counter() - t0, **_convergence(idata)})
        timer.cancel()
        dump()


def _worker_iid(out: Path, n_dim: int, n_first: int, seeds: tuple[int, ...]) -> None:
    """The same sampler and draws on an iid standard normal of ``n_dim`` coordinates: how far the
    max r_hat over that many variables lies above 1 when nothing is wrong with the sampling."""
    import warnings

    import arviz as az
    import nutpie
    import pymc as pm

    warnings.simplefilter("ignore")
    with pm.Model() as model:
        pm.Normal("x", shape=n_dim)
    compiled = nutpie.compile_pymc_model(model)
    res: dict = {"n_dim": n_dim, "n_first": n_first, "seeds": []}
    for seed in seeds:
        tr = nutpie.sample(compiled, chains=4, draws=1000, tune=1000, seed=seed, progress_bar=False,
                           cores=min(4, os.cpu_count() or 1))
        r = az.rhat(tr.posterior)["x"].to_numpy()
        res["seeds"].append({"seed": seed, "r_hat_max": float(r.max()), "r_hat_first_max": float(r[:n_first].max()),
                             "n_above_1.01": int((r > 1.01).sum()),
                             "ess_tail_min": float(az.ess(tr.posterior, method="tail")["x"].min())})
    out.write_text(json.dumps(res))


def _bt_by_evalica(xs, ys, winners, n, weights=None, tol=1e-6):
    import evalica
    import numpy as np

    r = evalica.bradley_terry(xs, ys, winners, weights=weights, tolerance=tol, limit=100_000)
    sc = r.scores
    ls = np.log(np.asarray([sc[c] for c in range(n)], dtype=float))
    return ls - ls.mean()


def _worker_ref(out: Path, m: int, label_share: float, boot: int) -> None:
    import numpy as np

    from bayes_judge.ranking import bradley_terry, pairs_rank_data

    n = N_SYSTEMS
    df, s_true, _, (a, b, code), facts = simulate(m, seed=m, label_share=label_share)
    del df
    res: dict = {"rows": m, **facts}
    y = np.array([1.0, 0.0, 0.5])[code]
    rd = pairs_rank_data(a, b, y, n)
    t0 = time.perf_counter()
    s_ours = bradley_terry(rd, prior=0.0, tol=1e-6, max_iter=100_000, accelerate=True)
    res["ours_point"] = {"wall_s": time.perf_counter() - t0, **_score_stats(s_true, s_ours)}

    # aggregated (A, B, verdict) counts: the likelihood's sufficient statistics
    key = (a * n + b) * 3 + code
    cnt = np.bincount(key, minlength=n * n * 3)
    keep = np.flatnonzero(cnt)
    ka, kb, kc, kn = keep // 3 // n, keep // 3 % n, keep % 3, cnt[keep].astype(float)
    res["aggregated_rows"] = len(keep)
    rng = np.random.default_rng(1)

    # ours, bootstrap: Zermelo + SQUAREM on the (A, B, verdict) counts, multinomial row weights
    rd_cells = pairs_rank_data(ka, kb, np.array([1.0, 0.0, 0.5])[kc], n)

    def ours_weighted(w):
        return bradley_terry(rd_cells, prior=0.0, tol=1e-6, max_iter=100_000, accelerate=True, weight=w)

    t0 = time.perf_counter()
    draws = np.array([ours_weighted(rng.multinomial(m, kn / m).astype(float)) for _ in range(boot)])
    wall = time.perf_counter() - t0
    lo_q, hi_q = np.quantile(draws, [0.05, 0.95], axis=0)
    res["ours_bootstrap"] = {"wall_s": wall, "rounds": boot,
                             **_score_stats(s_true, draws.mean(axis=0), lo_q, hi_q)}
    try:
        import evalica
    except ImportError:
        res["evalica"] = None
    else:
        res["evalica_version"] = evalica.__version__
        win = [evalica.Winner.X, evalica.Winner.Y, evalica.Winner.Draw]
        xs, ys, ws = a.tolist(), b.tolist(), [win[c] for c in code.tolist()]  # untimed: evalica takes lists
        t0 = time.perf_counter()
        s_ev = _bt_by_evalica(xs, ys, ws, n)
        res["evalica_point"] = {"wall_s": time.perf_counter() - t0, **_score_stats(s_true, s_ev),
                                "max_abs_diff_vs_ours": float(np.abs(s_ev - s_ours).max())}
        del xs, ys, ws
        axs, ays, aws = ka.tolist(), kb.tolist(), [win[c] for c in kc.tolist()]
        rng = np.random.default_rng(1)  # the same resamples as ours
        t0 = time.perf_counter()
        draws = np.array([_bt_by_evalica(axs, ays, aws, n, weights=rng.multinomial(m, kn / m).astype(float).tolist())
                          for _ in range(boot)])
        wall = time.perf_counter() - t0
        lo_q, hi_q = np.quantile(draws, [0.05, 0.95], axis=0)
        res["evalica_bootstrap"] = {"wall_s": wall, "rounds": boot,
                                    **_score_stats(s_true, draws.mean(axis=0), lo_q, hi_q)}
    res["peak_rss_mb"] = _rss_mb()
    out.write_text(json.dumps(res))


def _run_worker(args: list[str], timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker-out", str(out), *args]
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
            err = None if proc.returncode == 0 else proc.stderr[-3000:]
            timed_out = False
        except subprocess.TimeoutExpired:
            err, timed_out = f"killed after {timeout:.0f} s", True
        wall = time.perf_counter() - t0
        res = json.loads(out.read_text()) if out.exists() else {}
    res.update({"process_wall_s": wall, "timed_out": timed_out, "load_before_after": [load0, os.getloadavg()]})
    if err:
        res["error"] = err
    return res


def _mem_available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return float(line.split()[1]) / 1024.0
    return float("nan")


def _size(x: str) -> int:
    return int(float(x))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6", help="comparisons per fit, comma-separated")
    parser.add_argument("--bt-size", default="1e6", help="size of the model='bt' row (0: none)")
    parser.add_argument("--declared-sizes", default="1e4",
                        help="sizes fitted once more without the fast path (comma-separated; 0: none)")
    parser.add_argument("--ref-size", default="1e6", help="size of the BT references (0: none)")
    parser.add_argument("--label-share", type=float, default=0.01)
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--system-bias", choices=["auto", "on", "off"], default="auto",
                        help="bt-judges' system_bias (auto: the API default, on when there are human labels)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per subprocess, seconds")
    parser.add_argument("--fit-timeout", type=float, default=600.0,
                        help="stop a full fit after this many seconds (its partial measurements are kept)")
    parser.add_argument("--no-shear-sizes", default="1e6",
                        help="sizes fitted once more without the Laplace shear and mode start (0: none)")
    parser.add_argument("--seeds", default="1,2,3,4,5",
                        help="more seeds of the full fit at --target-size, with and without the shear, and of the "
                             "iid-normal reference (empty: none)")
    parser.add_argument("--target-size", default="1e6", help="the size the extra seeds run at")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_leaderboard.json")
    parser.add_argument("--worker", choices=["fit", "ref", "iid"], help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--worker-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker-model", default="bt-judges", help=argparse.SUPPRESS)
    parser.add_argument("--worker-declared", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-no-shear", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-seeds", default="", help=argparse.SUPPRESS)
    parser.add_argument("--worker-first", type=int, default=N_SYSTEMS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    worker_seeds = tuple(int(x) for x in args.worker_seeds.split(",") if x.strip())
    if args.worker == "fit":
        _worker_fit(args.worker_out, args.worker_size, args.worker_model, args.label_share, args.fit_timeout,
                    {"auto": None, "on": True, "off": False}[args.system_bias], not args.worker_declared,
                    not args.worker_no_shear, worker_seeds)
        return {}
    if args.worker == "iid":
        _worker_iid(args.worker_out, args.worker_size, args.worker_first, (0, *worker_seeds))
        return {}
    if args.worker == "ref":
        _worker_ref(args.worker_out, args.worker_size, args.label_share, args.boot)
        return {}

    sizes = [_size(x) for x in args.sizes.split(",") if x.strip()]
    bt_size, ref_size = _size(args.bt_size), _size(args.ref_size)
    command = ".venv/bin/python benchmarks/bench_leaderboard.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    common = ["--label-share", str(args.label_share), "--fit-timeout", str(args.fit_timeout),
              "--system-bias", args.system_bias]
    res: dict = {"command": command, "python": platform.python_version(), "machine": platform.machine(),
                 "cpus": os.cpu_count(), "n_systems": N_SYSTEMS, "alpha": ALPHA, "beta": BETA,
                 "tau": tie_threshold(), "label_share": args.label_share, "target": TARGET,
                 "load_avg_before": os.getloadavg(), "fits": [], "skipped": []}

    def save():
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=2))

    target_size = _size(args.target_size)
    seeds = ["--worker-seeds", args.seeds] if args.seeds.strip() else []
    rss_per_row = None
    for m in sizes:
        if rss_per_row is not None and m >= 5_000_000:
            need = rss_per_row * m
            avail = _mem_available_mb()
            if need > 0.8 * avail:
                res["skipped"].append(f"{m:.0e} rows: about {need / 1024:.1f} GB needed (extrapolated from the "
                                      f"largest fit's peak RSS), {avail / 1024:.1f} GB available")
                print(res["skipped"][-1], flush=True)
                continue
        print(f"fitting bt-judges on {m:,} comparisons ...", flush=True)
        r = _run_worker(["--worker", "fit", "--worker-size", str(m), *common, *(seeds if m == target_size else [])],
                        args.timeout)
        res["fits"].append(r)
        if r.get("peak_rss_mb"):
            rss_per_row = r["peak_rss_mb"] / m if m >= 100_000 else rss_per_row
        save()
    for m in [_size(x) for x in args.declared_sizes.split(",") if x.strip()]:
        if m:
            print(f"fitting bt-judges on {m:,} comparisons without the fast path ...", flush=True)
            res["fits"].append(_run_worker(["--worker", "fit", "--worker-size", str(m), "--worker-declared", *common],
                                           args.timeout))
            save()
    for m in [_size(x) for x in args.no_shear_sizes.split(",") if x.strip()]:
        if m:
            print(f"fitting bt-judges on {m:,} comparisons without the shear ...", flush=True)
            res["fits"].append(_run_worker(["--worker", "fit", "--worker-size", str(m), "--worker-no-shear", *common,
                                            *(seeds if m == target_size else [])], args.timeout))
            save()
    dims = [r["n_dim"] for r in res["fits"] if r.get("rows") == target_size and "n_dim" in r]
    if dims:
        print(f"iid normal of {dims[0]} coordinates ...", flush=True)
        res["iid"] = _run_worker(["--worker", "iid", "--worker-size", str(dims[0]), *seeds], args.timeout)
        save()
    if bt_size:
        print(f"fitting bt on {bt_size:,} comparisons ...", flush=True)
        res["fits"].append(_run_worker(["--worker", "fit", "--worker-size", str(bt_size), "--worker-model", "bt",
                                        *common], args.timeout))
        save()
    if ref_size:
        print(f"BT references on {ref_size:,} comparisons ...", flush=True)
        res["references"] = _run_worker(["--worker", "ref", "--worker-size", str(ref_size), "--label-share",
                                         str(args.label_share), "--boot", str(args.boot)], args.timeout)
    res["load_avg_after"] = os.getloadavg()
    save()
    md = _tables(res)
    args.out.with_suffix(".md").write_text(md + "\n")
    print(md)
    return res


def _target(r: dict) -> str:
    if r.get("fit_timed_out"):
        return f"no (wall > {r['fit_killed_after_s']:.0f} s)"
    if "first_fit_s" not in r or "r_hat_max" not in r:
        return "no (did not finish)"
    miss = []
    if r["first_fit_s"] > TARGET["wall_s"]:
        miss.append("wall")
    if r["peak_rss_mb"] / 1024 > TARGET["rss_gb"]:
        miss.append("memory")
    if r["r_hat_max"] > TARGET["r_hat"]:
        miss.append("r_hat")
    if r["ess_bulk_min"] < TARGET["ess"]:
        miss.append("ESS")
    return "yes" if not miss else "no (" + ", ".join(miss) + ")"


def _path(r: dict) -> str:
    """How a row was sampled: the fast path (a hand-written kernel) or the compiled declaration."""
    fast = "fast path" in r["sampler"] if r.get("sampler") else r.get("fast", True)
    return (", fast path" + ("" if r.get("shear", True) else ", no shear")) if fast else ", declaration"


def _seed_table(res: dict) -> list[str]:
    """(c) max r_hat across seeds at the target size, with and without the shear, and on an iid
    normal of the same dimension."""
    rows = [r for r in res["fits"] if len(r.get("seeds", [])) > 1]
    iid = res.get("iid", {})
    if not rows:
        return []
    lim = TARGET["r_hat"]
    out = ["", f"(c) Convergence across seeds at {rows[0]['rows']:,} rows (the same data; seed 0 is the row above)",
           "", "| fit | seeds | max r_hat, every variable | ≤ 1.01 | max r_hat, scores (iid: first "
           f"{iid.get('n_first', N_SYSTEMS)}) | ≤ 1.01 | lowest ESS by family (median over seeds) | full fit |",
           "|---|---|---|---|---|---|---|---|"]
    def vals(sd: list, key: str) -> str:
        return ", ".join(f"{x[key]:.4f}" for x in sd) + f" | {sum(x[key] <= lim for x in sd)}"

    for r in rows:
        sd = r["seeds"]
        fam = {k: sorted(x["ess_min_by_family"][k] for x in sd)[len(sd) // 2] for k in sd[0]["ess_min_by_family"]}
        out.append(f"| {r['model']}{' + δ' if r.get('system_bias') else ''}{_path(r)} | {len(sd)} "
                   f"| {vals(sd, 'r_hat_max')} | {vals(sd, 'r_hat_scores_max')} "
                   f"| {', '.join(f'{k} {v}' for k, v in fam.items())} "
                   f"| {min(x['fit_s'] for x in sd):.1f}-{max(x['fit_s'] for x in sd):.1f} s |")
    if iid.get("seeds"):
        sd = iid["seeds"]
        tail = [x["ess_tail_min"] for x in sd]
        out.append(f"| iid Normal(0, 1), {iid['n_dim']} coordinates, nutpie | {len(sd)} "
                   f"| {vals(sd, 'r_hat_max')} | {vals(sd, 'r_hat_first_max')} "
                   f"| lowest tail ESS {min(tail):.0f}-{max(tail):.0f} | — |")
    out += ["", "The iid normal is the same sampler and draws (4 x (1000 + 1000), nutpie) on independent standard "
            "normals of the model's dimension: nothing is wrong with its sampling, so its max r_hat over that many "
            "variables is the diagnostic's own spread at this number of draws."]
    return out


def _g(r: dict, k: str, fmt: str, suffix: str = "") -> str:
    v = r.get(k)
    return "—" if v is None else f"{v:{fmt}}{suffix}"


def _tables(res: dict) -> str:
    lines = [
        f"command: `{res['command']}`", "",
        f"N = {res['n_systems']} systems, 3 judges (α = {res['alpha']}, β = {res['beta']}, τ = {res['tau']:.3f}), "
        f"{res['label_share']:.0%} of rows human-labelled; 4 chains x (1000 tune + 1000 draws), nutpie; "
        f"{res['cpus']} CPUs; load average before {res['load_avg_before'][0]:.2f}, "
        f"after {res['load_avg_after'][0]:.2f}.", "",
        "(a) `bj.leaderboard`, one fresh subprocess per row", "",
        "| model | rows | cells (+ human) | parameters | ties | encode | warm-up (compile) | full fit | cold call "
        "| logp+grad "
        "| leapfrog/draw | logp-bound CPU "
        "| peak RSS (before fit) | max r_hat (scores) | min ESS bulk | Kendall τ | max abs err | 90% HDI coverage "
        "| target met? |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    steps = {}  # leapfrog steps per draw of a completed full fit, per model (for the rows without one)
    for r in res["fits"]:
        if "mean_leapfrog_steps" in r:
            steps.setdefault((r["model"], r.get("fast", True)), r["mean_leapfrog_steps"])
    for r in res["fits"]:
        if "rows" not in r:
            lines.append(f"| ? | | | | | | error: {r.get('error', '')[-200:]!r} | | | | | | | | | | | |")
            continue
        status = " (killed)" if r.get("timed_out") else (" (error)" if r.get("error") and not r.get("fit_timed_out")
                                                          else "")
        full = (f"stopped after {r['fit_killed_after_s']:.0f} s" if r.get("fit_timed_out")
                else _g(r, "fit_s", ".1f", " s"))
        n_steps, star = r.get("mean_leapfrog_steps"), ""
        key = (r["model"], r.get("fast", True))
        if n_steps is None and key in steps:
            n_steps, star = steps[key], "*"
        cpu = (f"{N_EVALS * n_steps * r['logp_grad_ms'] / 1e3:.0f} s{star}"
               if n_steps is not None and "logp_grad_ms" in r else "—")
        lines.append(
            f"| {r['model']}{' + δ' if r.get('system_bias') else ''}{_path(r)}{status} | {r['rows']:,} "
            f"| {r.get('cells', 0):,} (+{r.get('human_cells', 0):,}) | {_g(r, 'n_dim', 'd')} "
            f"| {_g(r, 'tie_share', '.1%')} | {_g(r, 'encode_s', '.2f', ' s')} | {_g(r, 'warmup_fit_s', '.1f', ' s')} "
            f"| {full} | {_g(r, 'first_fit_s', '.1f', ' s')} | {_g(r, 'logp_grad_ms', '.2f', ' ms')} "
            f"| {_g(r, 'mean_leapfrog_steps', '.1f')} | {cpu} "
            f"| {r.get('peak_rss_mb', 0) / 1024:.2f} GB ({r.get('rss_before_fit_mb', 0) / 1024:.2f}) "
            f"| {_g(r, 'r_hat_max', '.4f')} ({_g(r, 'r_hat_scores_max', '.4f')}) | {_g(r, 'ess_bulk_min', '.0f')} | {_g(r, 'kendall_tau', '.3f')} "
            f"| {_g(r, 'max_abs_err', '.3f')} | {_g(r, 'coverage90', '.1%')} | {_target(r)} |")
    for s in res.get("skipped", []):
        lines.append(f"\nskipped: {s}")
    lines += ["", "warm-up: `bj.leaderboard(df, chains=1, draws=1, tune=1, pointwise=False)` in a fresh process "
              "(encoding, compiling the model to numba, a draw); full fit: `bj.leaderboard(df, seed=0)` after it "
              "(4 x (1000 + 1000), the compiled model reused); cold call = warm-up + full fit. logp+grad: one "
              "evaluation of the compiled log density and gradient (median of 200). A full fit still running after "
              "`--fit-timeout` seconds is stopped. logp-bound CPU: "
              f"{N_EVALS:,} draws (4 chains x 2000, warm-up included) x leapfrog/draw x logp+grad, the CPU "
              "seconds of gradient evaluations alone, with the post-warm-up leapfrog/draw (warm-up draws take "
              "more; * that of the completed fit of the same model); divided by the free cores, about a lower "
              "bound of the wall. Target: cold call ≤ 60 s, "
              "peak RSS ≤ 2 GB, max r_hat ≤ 1.01, min ESS ≥ 400 (set at 1e6 rows)."]
    ref = res.get("references")
    if ref:
        lines += ["", f"(b) Bradley-Terry references on the same {ref.get('rows', 0):,} rows "
                  f"(pooled verdicts, tie = half a win; {ref.get('aggregated_rows', 0):,} aggregated "
                  f"(A, B, verdict) rows; peak RSS {ref.get('peak_rss_mb', 0) / 1024:.2f} GB)", "",
                  "| method | wall | Kendall τ | max abs err | slope of estimate on truth | 90% interval coverage |",
                  "|---|---|---|---|---|---|"]
        labels = [("evalica_point", f"evalica {ref.get('evalica_version', '')} `bradley_terry`, all rows, tol 1e-6"),
                  ("ours_point", "bayes_judge `bradley_terry` (prior 0, SQUAREM, tol 1e-6)"),
                  ("evalica_bootstrap", f"Arena bootstrap, {ref.get('ours_bootstrap', {}).get('rounds', 0)} rounds, "
                                        "evalica with multinomial weights"),
                  ("ours_bootstrap", "Arena bootstrap, same resamples, our Zermelo + SQUAREM on weighted counts")]
        for k, label in labels:
            x = ref.get(k)
            if not x:
                continue
            cov = f"{x['coverage90']:.1%} (mean width {x['mean_width90']:.3f})" if "coverage90" in x else "—"
            lines.append(f"| {label} | {x['wall_s']:.2f} s | {x['kendall_tau']:.3f} | {x['max_abs_err']:.3f} "
                         f"| {x['slope_est_on_truth']:.3f} | {cov} |")
        if ref.get("error"):
            lines.append(f"\nreferences: error {ref['error'][-500:]!r}")
        lines += ["", "Plain BT on judge verdicts estimates the judges' attenuated preference, not the human one "
                  "(slope < 1): its intervals are narrow around the wrong values, hence the coverage."]
    lines += _seed_table(res)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
