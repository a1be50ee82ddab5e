"""Every notebook in ``notebooks/`` runs top to bottom without an error.

Each notebook is one test.  It runs on a copy in a temporary folder (nothing is written into the
repository), in a kernel of the interpreter running pytest, with ``BJ_NOTEBOOK_DRAWS=100`` so that
the samplers stay short.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "bayes-judge-test"
CELL_TIMEOUT_S = 600


def _prepend(path: Path, var: str) -> str:
    old = os.environ.get(var)
    return os.pathsep.join([str(path), old]) if old else str(path)


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
    monkeypatch.setenv("BJ_NOTEBOOK_DRAWS", "100")
    monkeypatch.setenv("BAYES_JUDGE_DATA", str(ROOT / "data"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend renders figures
    return tmp_path


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, kernel_env: Path) -> None:
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
        timeout=CELL_TIMEOUT_S,
        allow_errors=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors, f"{path.name}: {errors[0]['ename']}: {errors[0]['evalue']}"
