"""Every notebook in ``notebooks/`` runs top to bottom without an error.

Each notebook is one test.  It runs on a copy in a temporary folder (nothing is written into the
repository: the notebooks' ``output/`` folder lands there too), in a kernel of the interpreter
running pytest, with small settings so that the whole file takes about two minutes on two idle
CPU cores:

- ``BJ_NOTEBOOK_DRAWS=100``: draws and tuning steps per chain of every sampler;
- ``BJ_NOTEBOOK_SYSTEMS=3``: summaries the local LLM judge compares in notebook 03 (6 ordered
  comparisons instead of 20).

Notebook 03 runs the embedded LLM judge: it needs the ``llm`` extra (skipped without torch) and
the installed model (``bayes-judge models install``, run by ``make test``; missing, it fails with
that instruction, as the comparator tests do).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "bayes-judge-test"
# the longest a single cell may run (nbclient's per-cell timeout), per notebook; measured cell
# times on an idle 2-core machine are 5-10x below these
CELL_TIMEOUT_S = 300
CELL_TIMEOUT_BY_NOTEBOOK = {"03_judging_with_a_local_llm.ipynb": 400}
# notebooks that run the LLM comparator (the `llm` extra and the embedded model)
NEEDS_LLM = {"03_judging_with_a_local_llm.ipynb"}
SETTINGS = {"BJ_NOTEBOOK_DRAWS": "100", "BJ_NOTEBOOK_SYSTEMS": "3"}


def _prepend(path: Path, var: str) -> str:
    old = os.environ.get(var)
    return os.pathsep.join([str(path), old]) if old else str(path)


def test_notebooks_found() -> None:
    names = [p.name for p in NOTEBOOKS]
    expected = [
        "00_quickstart.ipynb",
        "01_win_rate_calibration.ipynb",
        "02_ranking_with_few_comparisons.ipynb",
        "03_judging_with_a_local_llm.ipynb",
        "04_model_comparison.ipynb",
        "05_leaderboard.ipynb",
    ]
    assert all(n in names for n in expected), (
        f"missing notebooks: {sorted(set(expected) - set(names))}"
    )


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A kernelspec for this very interpreter, first on JUPYTER_PATH, and the notebook settings.

    A user-level ``python3`` kernelspec could point at another Python that lacks bayes_judge;
    a private spec in a temporary folder avoids that and installs nothing into the environment.
    """
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "bayes_judge tests",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", _prepend(tmp_path / "jupyter", "JUPYTER_PATH"))
    monkeypatch.setenv("PYTHONPATH", _prepend(ROOT, "PYTHONPATH"))
    for var, value in SETTINGS.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("BAYES_JUDGE_DATA", str(ROOT / "data"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend renders figures
    return tmp_path


def _require_llm() -> None:
    # find_spec, not an import: torch takes seconds to import, and the kernel imports it anyway
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"notebook 03 needs the llm extra ({', '.join(missing)}): pip install -e '.[llm]'"
        )
    from bayes_judge.comparator.install import MissingModelError, default_model_path

    try:
        default_model_path()
    except MissingModelError as err:  # a set-up problem: `make test` installs the model
        pytest.fail(str(err))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, kernel_env: Path) -> None:
    if path.name in NEEDS_LLM:
        _require_llm()
    workdir = kernel_env / "run"
    workdir.mkdir()
    copy = Path(shutil.copy(path, workdir / path.name))
    nb = nbformat.read(copy, as_version=4)
    with_outputs = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count"))
    ]
    assert not with_outputs, f"{path.name}: store notebooks without outputs (cells {with_outputs})"

    client = nbclient.NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT_BY_NOTEBOOK.get(path.name, CELL_TIMEOUT_S),
        allow_errors=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    elapsed = time.perf_counter() - start

    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors, f"{path.name}: {errors[0]['ename']}: {errors[0]['evalue']}"
    print(f"{path.name}: {elapsed:.1f} s")
