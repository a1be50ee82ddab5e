"""Leaderboards on real judges with a known human ranking (SummEval, HANNA; slow)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("leaderboard_real", ROOT / "benchmarks" / "leaderboard_real.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["leaderboard_real"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_bt_mle_matches_a_known_case():
    mod = _bench()
    # two systems, i wins 3 of 4: s_i - s_j = log 3
    s = mod.bt_mle(np.array([0, 0, 0, 0]), np.array([1, 1, 1, 1]), np.array([1.0, 1.0, 1.0, 0.0]), 2)
    assert np.isclose(s[0] - s[1], np.log(3), atol=1e-3)  # 1e-4 prior wins per game


@pytest.mark.slow
def test_summeval_labels_make_the_leaderboard_honest():
    """With 10% human labels the judges' own system preferences are told apart from the human
    scores: the 90% intervals cover the experts' BT scores for most systems, the ranking agrees
    with the experts better than the judges' plain Bradley-Terry, and P(i > j) is better calibrated."""
    mod = _bench()

    class Args:
        label_share, draws, bootstrap, seed = 0.1, 400, 20, 0

    rows, _ = mod.run_set("summeval", Args())
    by = {r["method"]: r for r in rows}
    ours, bt = by["leaderboard, 10% labels"], by["BT on judges (MLE + bootstrap)"]
    assert ours["coverage_90"] >= 0.75, ours
    assert ours["kendall_tau"] > bt["kendall_tau"] and ours["kendall_tau"] >= 0.8
    assert ours["calibration_error"] < bt["calibration_error"]
    assert by["leaderboard, 10% labels, no system bias"]["coverage_90"] < ours["coverage_90"]
