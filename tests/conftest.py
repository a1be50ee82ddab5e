import os

import numpy as np
import pandas as pd
import pytest

# One thread per pytest-xdist worker when several share the machine: torch's OpenMP pool,
# OpenBLAS and llama.cpp size themselves to every core and spin at each barrier for a thread
# whose core the other worker holds (`pytest -n 2 --durations=0`: notebook 03, which runs the
# local judge, 64.9 s before this and 15.9 s after).  Set before any test module imports torch,
# so that subprocesses (notebook kernels, servers, Ray workers) inherit it.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def tiny():
    """Two systems, two judges, four items, both presentation orders for judge j1."""
    return pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 3, 4, 1, 2],
            "a": ["x", "y", "x", "y", "y", "x", "x", "x"],
            "b": ["y", "x", "y", "x", "x", "y", "y", "y"],
            "judge": ["j1", "j1", "j1", "j1", "j1", "j1", "j2", "j2"],
            "winner": ["a", "b", "a", "a", "b", "b", "a", "b"],
        }
    )


def _load_benchmark(name: str):
    """A script of ``benchmarks/`` imported as a module (registered under its name, once)."""
    import importlib.util
    import sys
    from pathlib import Path

    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def load_benchmark():
    """The loader of ``benchmarks/`` scripts as modules (:func:`_load_benchmark`)."""
    return _load_benchmark
