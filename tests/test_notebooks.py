"""Every notebook in ``notebooks/`` runs top to bottom without an error.

Each notebook is one test.  It runs on a copy in a temporary folder (nothing is written into the
repository: the notebooks' ``output/`` folder lands there too), in a kernel of the interpreter
running pytest, with small settings:

- ``BJ_NOTEBOOK_DRAWS=100``: draws and tuning steps per chain of every sampler;
- ``BJ_NOTEBOOK_SYSTEMS=3``: summaries the local LLM judge compares in notebook 03 (6 ordered
  comparisons instead of 20).

The notebooks of one test worker share one kernel, as a user runs them one after another in a
Jupyter session: before each notebook, ``%reset -f`` empties the namespace (so a notebook that
uses a name it does not import or define still fails), figures are closed and the working folder
becomes the notebook's own.  What a fresh kernel would pay again for each notebook, the imports
(PyMC, ArviZ, torch) and the compiled samplers, is paid once per worker
(``pytest tests/test_notebooks.py --durations=0`` gives each notebook's time).  A notebook that
fails restarts the kernel, so the next one starts clean.

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
# run before each notebook, in the shared kernel (module docstring)
FRESH = """\
%reset -f
import os as _os, matplotlib.pyplot as _plt
_plt.close("all")
_os.chdir({workdir!r})
del _os, _plt
"""


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


class SharedKernel:
    """One kernel of this interpreter, with the notebook settings, started on first use.

    A user-level ``python3`` kernelspec could point at another Python that lacks bayes_judge;
    a private spec in a temporary folder (first on ``JUPYTER_PATH`` while the kernel starts)
    avoids that and installs nothing into the environment.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.km = None
        spec = root / "jupyter" / "kernels" / KERNEL
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

    def manager(self):
        """The kernel's manager, an asynchronous one as nbclient's own: with a blocking client, a
        cell that times out would leave nbclient waiting on the kernel's output for ever."""
        if self.km is None:
            env = dict(os.environ, **SETTINGS)
            env["JUPYTER_PATH"] = _prepend(self.root / "jupyter", "JUPYTER_PATH")
            env["PYTHONPATH"] = _prepend(ROOT, "PYTHONPATH")
            env["BAYES_JUDGE_DATA"] = str(ROOT / "data")
            env.pop("MPLBACKEND", None)  # the kernel's inline backend renders figures
            starter = nbclient.NotebookClient(nbformat.v4.new_notebook(), kernel_name=KERNEL)
            with pytest.MonkeyPatch.context() as mp:  # the kernelspec is looked up at start
                mp.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
                self.km = starter.create_kernel_manager()
                starter.start_new_kernel(cwd=str(self.root), env=env)
        return self.km

    def shutdown(self) -> None:
        if self.km is not None:
            from jupyter_core.utils import run_sync

            run_sync(self.km.shutdown_kernel)(now=True)
            self.km = None


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    shared = SharedKernel(tmp_path_factory.mktemp("notebooks"))
    yield shared
    shared.shutdown()


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
def test_notebook_runs(path: Path, kernel: SharedKernel, tmp_path: Path) -> None:
    if path.name in NEEDS_LLM:
        _require_llm()
    workdir = tmp_path / "run"
    workdir.mkdir()
    copy = Path(shutil.copy(path, workdir / path.name))
    nb = nbformat.read(copy, as_version=4)
    with_outputs = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count"))
    ]
    assert not with_outputs, f"{path.name}: store notebooks without outputs (cells {with_outputs})"
    nb.cells.insert(0, nbformat.v4.new_code_cell(FRESH.format(workdir=str(workdir))))

    client = nbclient.NotebookClient(
        nb,
        km=kernel.manager(),
        timeout=CELL_TIMEOUT_BY_NOTEBOOK.get(path.name, CELL_TIMEOUT_S),
        allow_errors=False,
    )
    start = time.perf_counter()
    try:
        client.execute()  # raises CellExecutionError on the first failing cell
    except BaseException:
        kernel.shutdown()  # the next notebook starts in a fresh kernel
        raise
    finally:
        if client.kc is not None:
            client.kc.stop_channels()
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
