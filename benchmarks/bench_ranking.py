"""Benchmark: ranking at N = 1000 candidates, one run, fast paths side by side with references.

* (a) Bayesian soft Bradley-Terry (``poe-bt``), N = 1000, K = 10N random comparisons,
  4 chains x (1000 tune + 1000 draws), with :func:`bayes_judge.ranking.bayesian_fast.
  sample_scores_fast` (nutpie + numba) in a fresh subprocess: "process wall" is the subprocess
  wall time seen from outside (interpreter start, imports, data simulation and encoding, numba
  cache load, sampling); "fit wall" is the ``sample_scores_fast`` call alone.  ESS bulk (min /
  median over the N scores) and max r_hat by ArviZ.  Target: process wall <= 30 s.
* (b) the same posterior with ``fit_scores(backend="numpyro")`` in a fresh subprocess, killed after
  ``--numpyro-timeout`` seconds (reported as timed out).
* (c) Gaussian PoE closed form (``poe_gaussian``, seed 004 eq. 12), N = 1000, K = 20N: median of
  ``--repeats`` calls (target <= 50 ms).
* (d) greedy D-optimal selection, ``bj.select_comparisons(1000, 5N)``: median of 3 calls
  (target <= 10 s).
* (e) Bradley-Terry MLE on 1M hard comparisons (N = 1000): ``bradley_terry`` (plain MLE at
  tol 1e-6, and the paper's default: 1/(N-1) prior wins, tol 1e-4) against
  ``evalica.bradley_terry`` (tolerance 1e-6, if installed), median of 3; the RankData is built directly (no
  ``encode_ranking`` of a 1M-row table), evalica gets Python lists of the integer ids (its pyo3 solver rejects numpy 2 arrays).  Agreement: max
  |difference| of the centred log-strengths.

The load average before and after is recorded: other work on the machine inflates wall times.

Usage::

    .venv/bin/python benchmarks/bench_ranking.py

Writes ``benchmarks/results/bench_ranking.json`` (or ``--out``) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def soft_comparisons(n: int, k: int, seed: int):
    """Random soft comparisons ``p = sigmoid(s_i - s_j + eps)``, ``s ~ N(0, 1)``, eps ~ N(0, 0.5^2)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    s = rng.normal(size=n)
    i = rng.integers(0, n, k)
    j = (i + rng.integers(1, n, k)) % n
    p = 1.0 / (1.0 + np.exp(-(s[i] - s[j] + rng.normal(0.0, 0.5, k))))
    names = np.array([f"c{x:04d}" for x in range(n)])
    return pd.DataFrame({"item": "q", "a": names[i], "b": names[j], "p_a": p, "sample": np.arange(k)})


def _worker(name: str, out: Path, n: int, k: int) -> None:
    t0 = time.perf_counter()
    import numpy as np

    from bayes_judge.ranking.encode import encode_ranking

    data = encode_ranking(soft_comparisons(n, k, seed=0))
    kw = dict(chains=4, draws=1000, tune=1000, seed=0)
    t1 = time.perf_counter()
    if name == "nutpie":
        from bayes_judge.ranking.bayesian_fast import sample_scores_fast

        post, stats = sample_scores_fast(data, model="poe-bt", **kw)
        s = post["s"]
        div = int(stats["diverging"].sum())
        steps = float(stats["n_steps"].mean())
    else:
        from bayes_judge.ranking.bayesian import fit_scores

        idata = fit_scores(data, model="poe-bt", backend="numpyro", **kw)
        s = idata.posterior["s"].to_numpy()
        div = int(idata.sample_stats["diverging"].sum())
        steps = float(idata.sample_stats["n_steps"].mean())
    t2 = time.perf_counter()
    import arviz as az

    ds = az.convert_to_dataset({"s": s})
    ess = az.ess(ds, method="bulk")["s"].to_numpy()
    rhat = az.rhat(ds)["s"].to_numpy()
    out.write_text(json.dumps({
        "wall_in_process_s": t2 - t0, "fit_s": t2 - t1, "ess_bulk_min": float(ess.min()),
        "ess_bulk_median": float(np.median(ess)), "r_hat_max": float(rhat.max()),
        "divergences": div, "mean_leapfrog_steps": steps,
    }))


def _run_worker(name: str, n: int, k: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--worker-out", str(out),
               "--n", str(n)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"timed_out": True, "timeout_s": timeout}
        wall = time.perf_counter() - t0
        if proc.returncode != 0 or not out.exists():
            return {"error": proc.stderr[-2000:]}
        res = json.loads(out.read_text())
    res["process_wall_s"] = wall
    res["timed_out"] = False
    return res


def _median_time(fn, repeats: int) -> tuple[float, object]:
    walls, val = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        val = fn()
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls), val


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--numpyro-timeout", type=float, default=180.0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_ranking.json")
    parser.add_argument("--worker", choices=["nutpie", "numpyro"], help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    n = args.n
    if args.worker:
        _worker(args.worker, args.worker_out, n, 10 * n)
        return {}
    command = ".venv/bin/python benchmarks/bench_ranking.py" + (f" --n {n}" if n != 1000 else "")
    import numpy as np

    import bayes_judge as bj
    from bayes_judge.ranking import RankData, bradley_terry, encode_ranking, poe_gaussian

    load = [os.getloadavg()]
    res: dict = {"command": command, "n": n, "python": platform.python_version(),
                 "machine": platform.machine(), "cpus": os.cpu_count()}

    # (a), (b) Bayesian soft BT
    res["bayes_nutpie"] = _run_worker("nutpie", n, 10 * n, timeout=600)
    res["bayes_numpyro"] = _run_worker("numpyro", n, 10 * n, timeout=args.numpyro_timeout)

    # (c) Gaussian PoE closed form, K = 20N
    data_g = encode_ranking(soft_comparisons(n, 20 * n, seed=1))
    poe_gaussian(data_g)
    res["poe_gaussian_s"], _ = _median_time(lambda: poe_gaussian(data_g), args.repeats)

    # (d) greedy D-optimal, 5N picks
    res["greedy_d_optimal_s"], _ = _median_time(
        lambda: bj.select_comparisons(n, 5 * n, method="greedy-d-optimal"), 3
    )

    # (e) BT MLE on 1M comparisons
    rng = np.random.default_rng(2)
    M = 1_000_000
    s = rng.normal(size=n)
    i = rng.integers(0, n, M)
    j = (i + rng.integers(1, n, M)) % n
    y = (rng.random(M) < 1.0 / (1.0 + np.exp(-(s[i] - s[j])))).astype(float)
    z = np.zeros(M, dtype=np.int64)
    data_bt = RankData(
        items=["q"], candidates=np.array([f"c{x:04d}" for x in range(n)], dtype=object),
        cand_item=np.zeros(n, dtype=np.int64), offsets=np.array([0, n]), i=i, j=j, p=y, y=y,
        p_given=np.zeros(M, dtype=bool), comp_item=z, judge=z, judges=["j"], row=np.arange(M),
    )
    t_mle, s_mle = _median_time(lambda: bradley_terry(data_bt, prior=0.0, tol=1e-6, max_iter=100_000), 3)
    t_paper, _ = _median_time(lambda: bradley_terry(data_bt), 3)
    t_newton, s_newton = _median_time(
        lambda: bradley_terry(data_bt, prior=0.0, solver="newton", tol=1e-8), 3
    )
    res["bt_1m"] = {"ours_mle_s": t_mle, "ours_paper_s": t_paper, "ours_newton_s": t_newton,
                    "newton_vs_zermelo_max_abs_diff": float(np.abs(s_newton - s_mle).max())}
    try:
        import evalica

        # evalica 0.4.2's Rust extension rejects numpy 2 arrays: hand it lists (built untimed)
        xs, ys = i.tolist(), j.tolist()
        winners = [evalica.Winner.X if v == 1.0 else evalica.Winner.Y for v in y]
        t_ev, r_ev = _median_time(
            lambda: evalica.bradley_terry(xs, ys, winners, tolerance=1e-6, limit=100_000), 3
        )
        sc = r_ev.scores
        ls = np.log(np.asarray([sc[c] for c in range(n)], dtype=float))
        ls -= ls.mean()
        res["bt_1m"].update({"evalica_s": t_ev, "evalica_version": evalica.__version__,
                             "max_abs_diff_log_strength": float(np.abs(ls - s_mle).max())})
    except ImportError:
        res["bt_1m"]["evalica_s"] = None
    load.append(os.getloadavg())
    res["load_avg_before_after"] = load

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2))
    print(f"command: {command}\n")
    print(_table(res))
    return res


def _fmt(x, unit="s", nd=2):
    return "—" if x is None else f"{x:.{nd}f} {unit}"


def _table(r: dict) -> str:
    a, b, e = r["bayes_nutpie"], r["bayes_numpyro"], r["bt_1m"]

    def bayes_row(label, x, target):
        if x.get("timed_out"):
            return f"| {label} | timed out after {x['timeout_s']:.0f} s | — | — | — | {target} |"
        if "error" in x:
            return f"| {label} | error | — | — | — | {target} |"
        return (f"| {label} | {x['process_wall_s']:.1f} s (fit {x['fit_s']:.1f} s) | "
                f"{x['ess_bulk_min']:.0f} / {x['ess_bulk_median']:.0f} | {x['r_hat_max']:.3f} | "
                f"{x['divergences']} div, {x['mean_leapfrog_steps']:.1f} steps | {target} |")

    lines = [
        "| case | wall | ESS bulk min / median (s) | r_hat max | sampler | target |",
        "|---|---|---|---|---|---|",
        bayes_row("(a) Bayesian soft-BT N=1000, K=10N, 4x(1000+1000), nutpie+numba", a, "≤ 30 s"),
        bayes_row("(b) same, NumPyro NUTS", b, "reference"),
    ]
    if not (a.get("timed_out") or b.get("timed_out") or "error" in a or "error" in b):
        lines.append(f"| (a)/(b) speed-up | process {b['process_wall_s'] / a['process_wall_s']:.1f}x, "
                     f"fit {b['fit_s'] / a['fit_s']:.1f}x | | | | |")
    lines += [
        "",
        "| case | ours | reference | ratio | target |",
        "|---|---|---|---|---|",
        f"| (c) PoE-Gaussian closed form N=1000, K=20N (median) | {r['poe_gaussian_s'] * 1e3:.1f} ms | — | — | ≤ 50 ms |",
        f"| (d) greedy D-optimal N=1000, 5N picks (median of 3) | {r['greedy_d_optimal_s']:.2f} s | — | — | ≤ 10 s |",
    ]
    ev = e.get("evalica_s")
    ratio = "—" if ev is None else f"{ev / e['ours_mle_s']:.2f}x (evalica / ours)"
    ref = "evalica not installed" if ev is None else f"evalica {e['evalica_version']}: {ev:.3f} s"
    lines.append(f"| (e) BT MLE 1M comparisons, N=1000, Zermelo, prior 0, tol 1e-6 (median of 3) | {e['ours_mle_s']:.3f} s | {ref} | {ratio} | — |")
    lines.append(f"| (e') BT paper default (Zermelo, 1/(N-1) prior wins, tol 1e-4) | {e['ours_paper_s']:.3f} s | — | — | — |")
    ratio_n = "—" if ev is None else f"{ev / e['ours_newton_s']:.2f}x (evalica / ours)"
    lines.append(f"| (e'') BT MLE 1M comparisons, `solver=\"newton\"` (same maximum; max diff vs Zermelo "
                 f"{e['newton_vs_zermelo_max_abs_diff']:.1e}) | {e['ours_newton_s']:.3f} s | {ref} | {ratio_n} | no slower than evalica |")
    if ev is not None:
        lines.append(f"| (e) max abs diff of centred log-strengths, ours vs evalica | {e['max_abs_diff_log_strength']:.1e} | | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
