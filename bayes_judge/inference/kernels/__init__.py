"""The hand-written kernels: log-densities and gradients of declared models, compiled by numba.

Each module here is a speed-up for one or more models declared in :mod:`bayes_judge.generative`,
never their definition: the same posterior, checked against the declaration's own compiled
log-density and gradient by ``tests/inference/test_fastpaths.py``.  Each lists what it serves in
``FAST_PATHS``, a dict ``(task, model) -> fast path`` (the calling convention is in
:mod:`bayes_judge.inference.fastpaths`).

========================  =====================================================================
module                    serves
========================  =====================================================================
``dawid_skene``           win rate: two-coin Dawid-Skene, the verdict patterns counted once
``one_coin``              win rate: one-coin and consensus Dawid-Skene
``regression``            win rate: the label regression
``ranking``               ranking: ``poe-bt``, ``poe-g``, ``bt`` (with their Laplace fits)
``leaderboard``           leaderboard: ``bt-judges`` (and the machinery both leaderboard kernels share)
``leaderboard_bt``        leaderboard: ``bt`` on people's votes
``bridge``                leaderboard: the score bridge learnt from labels (not a declared model:
                          :func:`bayes_judge.leaderboard.bridge.calibrate_bridge`'s own PyMC model)
========================  =====================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["builtin_fast_paths"]


def builtin_fast_paths() -> dict[tuple[str, str], Callable[..., Any]]:
    """Every kernel of this package by ``(task, model)``."""
    from . import dawid_skene, leaderboard, leaderboard_bt, one_coin, ranking, regression

    out: dict[tuple[str, str], Callable[..., Any]] = {}
    for module in (dawid_skene, one_coin, regression, ranking, leaderboard, leaderboard_bt):
        out.update(module.FAST_PATHS)
    return out
