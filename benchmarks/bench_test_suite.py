"""The default test run against the suite of a baseline commit, like for like, back to back.

Issue 10 asks for a default test run at least 30% faster than the suite of the commit it was
filed on (``c86e79d``), with no loss of what the tests check.  This script measures it:

* **baseline**: a git worktree of ``--base`` (in a temporary folder, the judge model linked in),
  run as its own ``make test`` ran, plain ``pytest`` in one process, with ``PYTHONPATH`` set to
  the worktree and ``-W ignore::FutureWarning`` (today's libraries warn where it had none);
* **head**: today's versions of the baseline's test files, plus the tests that replaced its
  per-backend sync checks (``--replacements``), run as ``make test`` runs today (its pytest
  options, read from the ``Makefile``), less the tests of later issues (``-k``, ``--later``);

both with ``BJ_SKIP_BROWSER=1`` (the baseline has no browser set-up) and a fresh, empty
``NUMBA_CACHE_DIR`` (as a clean clone in CI).  The pair runs ``--rounds`` times, alternating, so
that the machine's drift falls on both.  The ratio head / baseline is the figure to read.

    python benchmarks/bench_test_suite.py             # table + results/bench_test_suite.json

``--head-options`` (repeatable) runs the head side with other pytest options, to compare
schedulings side by side; ``--no-baseline`` leaves the baseline out, e.g.::

    python benchmarks/bench_test_suite.py --no-baseline --rounds 2 \\
        --head-options "-n 2 --dist worksteal" --head-options "-n 2 --dist loadfile --no-loadscope-reorder" \\
        --out benchmarks/results/bench_test_scheduling.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REPLACEMENTS = "tests/generative/test_agreement.py,tests/inference/test_fastpaths.py"
LATER = "not leaderboard and not fit_transfer_reads"  # issues 11 and 12's tests inside the old files


def make_test_options(makefile: Path = ROOT / "Makefile") -> list[str]:
    """The pytest options of the ``make test`` recipe (``-n 2 --dist ...``)."""
    recipe = makefile.read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    line = next(x for x in recipe.splitlines() if "-m pytest" in x and not x.strip().startswith("#"))
    return line.split("-m pytest", 1)[1].split()


def _run(cmd: list[str], cwd: Path, env: dict) -> dict:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|deselected|error)", last)}
    return {"wall_s": wall, "rc": proc.returncode, "summary": last, **counts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="c86e79d")
    ap.add_argument("--replacements", default=REPLACEMENTS)
    ap.add_argument("--later", default=LATER, help="pytest -k expression that leaves out later issues' tests")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--head-options", action="append", default=None, metavar="OPTS",
                    help="pytest options of a head run (repeat to compare schedulings); default: make test's")
    ap.add_argument("--no-baseline", action="store_true", help="run the head side(s) only")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_test_suite.json"))
    args = ap.parse_args()

    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", args.base, "tests"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    files = [f for f in files if re.search(r"/test_[^/]*\.py$", f)]
    missing = [f for f in files if not (ROOT / f).is_file()]
    if missing:
        raise SystemExit(f"test files of {args.base} missing today: {missing}")
    head_files = files + [f for f in args.replacements.split(",") if f]
    variants = [o.split() for o in args.head_options] if args.head_options else [make_test_options()]
    heads = ["head"] if len(variants) == 1 else [f"head `{' '.join(v)}`" for v in variants]
    sides = ([] if args.no_baseline else ["baseline"]) + heads
    python = sys.executable
    results: list[dict] = []
    with tempfile.TemporaryDirectory() as td:
        wt = Path(td) / "base"
        subprocess.run(["git", "worktree", "add", "-f", "--detach", str(wt), args.base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            models = ROOT / "models"
            for m in models.iterdir() if models.is_dir() else []:
                if m.is_dir() and not (wt / "models" / m.name).exists():
                    (wt / "models" / m.name).symlink_to(m)
            for r in range(args.rounds):
                for side in sides:
                    env = {**os.environ, "BJ_SKIP_BROWSER": "1", "NUMBA_CACHE_DIR": tempfile.mkdtemp(dir=td)}
                    if side == "baseline":
                        env["PYTHONPATH"] = str(wt)
                        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::FutureWarning"]
                        res = _run(cmd, wt, env)
                    else:
                        options = variants[heads.index(side)]
                        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options,
                               *head_files, "-k", args.later]
                        res = _run(cmd, ROOT, env)
                        res["options"] = options
                    res.update(side=side, round=r)
                    print(f"round {r} {side}: {res['wall_s']:.1f} s  ({res['summary']})", flush=True)
                    results.append(res)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=ROOT, capture_output=True)
            subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)

    header = ["round"] + [f"{s} (s)" for s in sides] + ([f"{h} / baseline" for h in heads] if "baseline" in sides else [])
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in range(args.rounds):
        got = {x["side"]: x for x in results if x["round"] == r}
        cells = [str(r)] + [f"{got[s]['wall_s']:.1f} ({got[s].get('passed', 0)} passed)" for s in sides]
        if "baseline" in sides:
            cells += [f"{got[h]['wall_s'] / got['baseline']['wall_s']:.2f}" for h in heads]
        rows.append("| " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    print(table)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    Path(args.out).write_text(json.dumps({"base": args.base, "head": head, "head_options": variants, "runs": results,
                                          "table": table}, indent=1))
    opts = "; ".join(f"`{' '.join(v)}`" for v in variants)
    Path(args.out).with_suffix(".md").write_text(
        f"# Default test run against `{args.base}`, like for like (head `{head}`)\n\n"
        f"`python {shlex.join(['benchmarks/bench_test_suite.py', *sys.argv[1:]])}` (module docstring: what each "
        f"side runs; head with the pytest options {opts})\n\n"
        f"{table}\n")


if __name__ == "__main__":
    main()
