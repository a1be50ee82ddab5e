"""Fits and reports shared by the report tests: each made once per session, with few draws."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from cdp_browser import ENSURE_SCRIPT, Browser, chromium_path

import bayes_judge as bj

SKIP_BROWSER = os.environ.get("BJ_SKIP_BROWSER") == "1"
ARTIFACTS_DEFAULT = "/tmp/bayes_judge_artifacts"
FAST = {"chains": 2, "draws": 200, "tune": 200, "seed": 0}


@pytest.fixture(scope="session")
def ds_split_fit():
    """Dawid-Skene on MT-Bench (three judges), each presentation order its own judge, so that
    position bias is visible."""
    judges = ["ChatGPT/Vanilla_NoRules", "GPT-4/Vanilla_NoRules", "LLaMA2/Vanilla_NoRules"]
    return bj.win_rate(bj.load_dataset("mtbench"), method="dawid-skene", prior="none", swap="split", judges=judges,
                       **FAST)


@pytest.fixture(scope="session")
def ds_labels_fit():
    """Dawid-Skene on simulated data with human labels observed (in-distribution prior); every item
    judged in both orders, so that the judges' position bias is told apart from the systems."""
    df = bj.simulate_win_rate(n_items=120, p=0.7, q0=[0.8, 0.85, 0.75], swap=True, seed=2)
    return bj.win_rate(df, method="dawid-skene", prior="in-distribution", **FAST)


@pytest.fixture(scope="session")
def observed_fit():
    """The observed win rate k with its Beta posterior: independent draws, no sampler stats."""
    df = bj.simulate_win_rate(n_items=80, p=0.65, q0=[0.8, 0.9], seed=3)
    return bj.win_rate(df, method="observed", chains=2, draws=200, seed=0)


@pytest.fixture(scope="session")
def ranking_fit():
    """Bayesian soft Bradley-Terry on two SummEval articles (24 candidates)."""
    df = bj.datasets.summeval.pairs("coherence", articles=2)
    return bj.rank(df, method="poe-bt", bayesian=True, **FAST)


@pytest.fixture(scope="session")
def comparison_table() -> pd.DataFrame:
    """An az.compare-style table as bj.compare_models will return it; one model has a LOO warning."""
    return pd.DataFrame(
        {
            "rank": [0, 1], "elpd_loo": [-402.3, -415.8], "p_loo": [4.1, 2.2],
            "elpd_diff": [0.0, 13.5], "weight": [0.93, 0.07], "se": [11.2, 10.9],
            "dse": [0.0, 4.4], "warning": [False, True], "scale": ["log", "log"],
        },
        index=pd.Index(["dawid-skene", "observed"], name="model"),
    )


@pytest.fixture(scope="session")
def saved_run(ds_labels_fit, tmp_path_factory) -> Path:
    """The labelled Dawid-Skene fit saved with bj.save_run (NAME.nc + NAME.json)."""
    return bj.save_run(ds_labels_fit, tmp_path_factory.mktemp("runs") / "ds_labels")


@pytest.fixture(scope="session")
def full_report(ds_split_fit, observed_fit, ranking_fit, saved_run, comparison_table, tmp_path_factory):
    """One report with every kind of run (one read from disk) and a model comparison."""
    runs = {
        "DS split <MT-Bench>": ds_split_fit,
        "DS labelled (saved run)": saved_run,
        "observed k": observed_fit,
        "PoE-BT ranking": ranking_fit,
    }
    path = tmp_path_factory.mktemp("report") / "sub" / "report.html"
    return bj.report(runs, path, comparison=comparison_table)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where test artifacts (screenshots, reports) are kept: $BJ_ARTIFACTS_DIR or /tmp."""
    out = Path(os.environ.get("BJ_ARTIFACTS_DIR") or ARTIFACTS_DEFAULT)
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="session")
def keep(artifacts_dir):
    """``keep(path)`` copies a file into the artifacts folder and returns the copy."""

    def copy(path: Path) -> Path:
        dest = artifacts_dir / path.name
        shutil.copyfile(path, dest)
        return dest

    return copy


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium driven over the DevTools pipe; a missing browser fails the test."""
    if SKIP_BROWSER:
        pytest.skip("BJ_SKIP_BROWSER=1: headless-browser checks skipped")
    exe = chromium_path()
    if exe is None:
        pytest.fail(
            f"Chromium not found (looked for /usr/bin/chromium): run {ENSURE_SCRIPT} to install "
            "it, or set BJ_SKIP_BROWSER=1 to skip the browser checks",
            pytrace=False,
        )
    with Browser(exe) as b:
        yield b
