import json
import os
from pathlib import Path

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

# Longest files first.  `make test` hands each worker whole files (`--dist loadfile`) in the
# order collected (`--no-loadscope-reorder`); started longest first, the last files to run are
# short and both workers finish together.  The order is what pays: with it, worksteal and
# loadfile take the same time (benchmarks/results/bench_test_scheduling.md).  Each file's time
# (setup, call and teardown summed) comes from DURATIONS, which `pytest -n 2 --dist loadfile
# --store-durations` rewrites; a file it does not list yet starts first.
DURATIONS = Path(__file__).with_name("durations.json")


def pytest_addoption(parser):
    parser.addoption("--store-durations", action="store_true",
                     help=f"write each test file's time of this run into {DURATIONS.name}")


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) <= 1 or not DURATIONS.is_file():
        return
    seconds = json.loads(DURATIONS.read_text())
    # stable: a file's own tests keep their order; unknown files (infinite) first
    items.sort(key=lambda item: -seconds.get(_file(item.nodeid), float("inf")))


def pytest_configure(config):
    if config.getoption("--store-durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_DurationStore(), "bayes_judge_durations")


class _DurationStore:
    """Sums each file's reported times (on the controller, which sees every worker's reports)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report):
        f = _file(report.nodeid)
        self.seconds[f] = self.seconds.get(f, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        old = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
        new = {**old, **{f: round(t, 1) for f, t in self.seconds.items()}}
        root = DURATIONS.parent.parent  # node ids are relative to the repository root
        new = {f: t for f, t in new.items() if (root / f).is_file()}  # files since removed
        DURATIONS.write_text(json.dumps(dict(sorted(new.items())), indent=1) + "\n")


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
