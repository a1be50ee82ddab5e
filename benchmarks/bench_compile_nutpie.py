"""nutpie on a declaration: the compile of ``bayes_judge.inference._compile_nutpie`` against
nutpie's own ``compile_pymc_model``, side by side in one run.

Each variant runs in fresh processes that fit three win-rate declarations on MT-Bench in turn
(``fit_model(..., sampler="nutpie", fast=False)``, 4 × (1000 + 1000) draws, the package's data
path): first with empty numba and PyTensor caches (``NUMBA_CACHE_DIR``, ``PYTENSOR_FLAGS=
base_compiledir``: a fresh install), then a second process on the caches the first one left (a
user's next session).  Each fit's wall time is mostly the compile: the sampling part is timed
apart on a second fit of the same data.  The posterior means of the two variants must agree to
the bit: the same graph, start and seed.

    python benchmarks/bench_compile_nutpie.py            # table + results/bench_compile_nutpie.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODELS = ("dawid-skene", "consensus", "regression")
VARIANTS = ("nutpie's compile_pymc_model", "bayes_judge")


def worker(variant: str) -> dict:
    """Fit each of MODELS twice in this process; time each fit."""
    import warnings

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    import bayes_judge as bj
    from bayes_judge.generative import get_model
    from bayes_judge.inference import Sampling, _compile_nutpie, fit_model
    from bayes_judge.winrate.encode import VerdictPatterns, verdict_patterns

    if variant == VARIANTS[0]:
        import nutpie

        def theirs(model, *, initial_points=None, var_names=None):
            return nutpie.compile_pymc_model(model, backend="numba", initial_points=initial_points,
                                             jitter_rvs=set(), var_names=var_names)

        _compile_nutpie.compile_declaration = theirs
    df = bj.load_dataset("mtbench")
    g = bj.assign_generators(df, share=0.8, seed=0)
    data = bj.encode_win_rate(g, swap="split", ties="random", seed=0)
    coords = {"pair": data.pair_labels, "judge": list(data.judges)}
    pat = verdict_patterns(data, use_labels=True)
    out: dict = {"import_s": time.perf_counter() - t0, "models": {}}
    for name in MODELS:
        spec = get_model(name, "win-rate")
        times, means = [], {}
        for _ in range(2):
            t = time.perf_counter()
            fit = fit_model(spec, pat.arrays(), dims=VerdictPatterns.DIMS, coords=coords, fast=False,
                            sampling=Sampling("nutpie", chains=4, draws=1000, tune=1000, seed=1))
            times.append(time.perf_counter() - t)
            means = {k: fit.posterior[k].mean().item() for k in sorted(fit.posterior) if not k.endswith("__")}
        out["models"][name] = {"first_fit_s": times[0], "refit_s": times[1], "means": means}
    return out


def _run(variant: str, caches: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(caches / "numba"),
           "PYTENSOR_FLAGS": f"base_compiledir={caches / 'pytensor'}"}
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "out.json"
        t = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--worker", variant, "--out", str(out)], cwd=ROOT, env=env,
                       check=True, capture_output=True)
        res = json.loads(out.read_text())
    res["process_s"] = time.perf_counter() - t
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_compile_nutpie.json"))
    ap.add_argument("--worker", choices=VARIANTS)
    args = ap.parse_args()
    if args.worker:
        Path(args.out).write_text(json.dumps(worker(args.worker)))
        return
    results: dict = {}
    with tempfile.TemporaryDirectory() as td:
        for i, variant in enumerate(VARIANTS):
            caches = Path(td) / str(i)
            results[variant] = {state: _run(variant, caches) for state in ("empty caches", "caches kept")}
    rows = ["| variant | caches | " + " | ".join(f"{m}: first fit / refit (s)" for m in MODELS) + " | process (s) |",
            "|---|---|" + "---|" * len(MODELS) + "---|"]
    for variant, by_state in results.items():
        for state, res in by_state.items():
            cells = [f"{res['models'][m]['first_fit_s']:.2f} / {res['models'][m]['refit_s']:.2f}" for m in MODELS]
            rows.append(f"| {variant} | {state} | " + " | ".join(cells) + f" | {res['process_s']:.1f} |")
    same = all(results[VARIANTS[0]][s]["models"][m]["means"] == results[VARIANTS[1]][s]["models"][m]["means"]
               for s in ("empty caches", "caches kept") for m in MODELS)
    table = "\n".join(rows) + f"\n\nposterior means equal to the bit in every cell: {same}"
    print(table)
    Path(args.out).write_text(json.dumps({"results": results, "equal_means": same, "table": table}, indent=1))
    Path(args.out).with_suffix(".md").write_text(
        "# nutpie on a declaration: compile time\n\n`python benchmarks/bench_compile_nutpie.py`\n\n" + table + "\n")


if __name__ == "__main__":
    main()
