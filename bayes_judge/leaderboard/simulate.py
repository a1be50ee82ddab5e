"""Judgments drawn from the ``bt-judges`` leaderboard model, with the truth kept (tests, benchmarks).

The model is declared in :mod:`bayes_judge.generative.leaderboard_models`; its likelihood reads
counts, which cannot be drawn back into rows, so this is the model's forward process per row::

    s ~ Normal(0, 1), centred;  h ~ Bernoulli(σ(s_A − s_B))            (a person prefers A)
    η = ±α_e + β_e;  v = A, B, tie with σ(η − τ_e), σ(−η − τ_e), the rest

(no per-judge system preference δ: the simulated judges err only by accuracy, position and ties).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["simulate_leaderboard", "THREE_JUDGES"]

#: the three LLM judges of the arena-scale leaderboard benchmarks (the Laplace, NUTS, update and
#: first-run benchmarks, and the tests that fit the same workload small): accuracies ``alpha``,
#: position biases ``beta`` and tie thresholds ``tau``, one each: a sharp judge that favours position
#: A and never ties, a weak one that favours B and ties often, and one between
THREE_JUDGES: dict[str, tuple[float, ...]] = {"alpha": (2.0, 1.0, 1.5), "beta": (0.4, -0.3, 0.1),
                                              "tau": (0.0, 0.5, 0.3)}


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def simulate_leaderboard(
    n_systems: int,
    n_comparisons: int,
    *,
    alpha: Sequence[float] = (2.0, 1.0),
    beta: Sequence[float] = (0.4, -0.3),
    tau: Sequence[float] | float = 0.0,
    label_share: float = 0.0,
    design: str = "both-orders",
    scores: Sequence[float] | None = None,
    systems: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    position: str = "shift",
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.Series]:
    """A judgments table of ``n_comparisons`` random pairs of ``n_systems`` systems, and the true scores.

    Parameters
    ----------
    alpha, beta, tau : per judge (``tau`` may be one number for all)
        Discrimination (accuracy σ(α)), position bias and tie threshold of each judge.
    label_share : float
        Share of comparisons whose human preference is put in the ``human`` column.
    design : {"both-orders", "one-order", "one-judge"}
        Every judge judges every comparison in both orders, or in one random order; or one random
        judge per comparison in a random order (as in an arena: one vote per battle).
    scores : the true scores (default: drawn from Normal(0, 1)); centred either way
    systems, judges : names (default ``S000``, ... and ``j0``, ...)
    position : {"shift", "chance", "close"}
        How a judge's position bias works (issue 34 item 4: the fit must hold under each).
        ``"shift"``: the model's own, ``beta`` added to the judge's ordered-logit score.
        ``"chance"``: with probability ``|beta|`` the judge names its favoured position outright
        (A for ``beta > 0``, B for ``beta < 0``) without reading the texts, and otherwise judges
        with no bias (``|beta| < 1``).  ``"close"``: the shift grows as the two texts come close,
        ``beta · exp(−|s_i − s_j| / 0.5)``, and vanishes between far-apart systems.
    seed : int

    Returns
    -------
    df : DataFrame with item, a, b, judge, winner, human (rows in judge, order, comparison order)
    s : Series, the true (centred) scores by system name ``S000``, ``S001``, ...
    """
    if design not in ("both-orders", "one-order", "one-judge"):
        raise ValueError(f"design must be 'both-orders', 'one-order' or 'one-judge', not {design!r}")
    if position not in ("shift", "chance", "close"):
        raise ValueError(f"position must be 'shift', 'chance' or 'close', not {position!r}")
    if position == "chance" and np.any(np.abs(np.asarray(beta, float)) >= 1):
        raise ValueError(f"position='chance' reads |beta| as a probability below 1, got {list(beta)}")
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 1.0, n_systems) if scores is None else np.array(scores, dtype=float)
    s -= s.mean()
    names = np.array(systems if systems is not None else [f"S{k:03d}" for k in range(n_systems)], dtype=object)
    alpha_, beta_ = np.asarray(alpha, float), np.asarray(beta, float)
    judge_names = np.array(judges if judges is not None else [f"j{e}" for e in range(len(alpha_))], dtype=object)
    if len(s) != n_systems or len(names) != n_systems or len(judge_names) != len(alpha_):
        raise ValueError("scores and systems need n_systems entries, judges one per alpha")
    tau_ = np.broadcast_to(np.asarray(tau, float), alpha_.shape)
    m = n_comparisons
    i = rng.integers(0, n_systems, m)
    j = (i + rng.integers(1, n_systems, m)) % n_systems
    h = rng.random(m) < _sigmoid(s[i] - s[j])  # a person prefers i
    labelled = rng.random(m) < label_share
    item = np.arange(m).astype(str)
    if design == "one-judge":
        rows = [(np.arange(m), rng.integers(0, len(alpha_), m), rng.random(m) < 0.5)]
    else:
        flips = [np.zeros(m, bool), np.ones(m, bool)] if design == "both-orders" else [None]
        rows = [(np.arange(m), np.full(m, e), rng.random(m) < 0.5 if f is None else f)
                for e in range(len(alpha_)) for f in flips]
    parts = []
    none = np.full(m, None, dtype=object)
    for k, e, flip in rows:
        first, second = np.where(flip, j[k], i[k]), np.where(flip, i[k], j[k])
        h_a = np.where(flip, ~h[k], h[k])  # the person prefers the system shown first
        shift = {"shift": 1.0, "chance": 0.0, "close": np.exp(-np.abs(s[i[k]] - s[j[k]]) / 0.5)}[position]
        eta = np.where(h_a, alpha_[e], -alpha_[e]) + beta_[e] * shift
        p_a, p_b = _sigmoid(eta - tau_[e]), _sigmoid(-eta - tau_[e])
        u = rng.random(len(k))
        winner = np.where(u < p_a, "a", np.where(u < p_a + p_b, "b", "tie")).astype(object)
        if position == "chance":  # the favoured position named outright, the texts unread
            blind = rng.random(len(k)) < np.abs(beta_[e])
            winner = np.where(blind, np.where(beta_[e] > 0, "a", "b"), winner)
        parts.append(pd.DataFrame({
            "item": item[k], "a": names[first], "b": names[second], "judge": judge_names[e],
            "winner": winner,
            "human": np.where(labelled[k], np.where(h_a, "a", "b").astype(object), none[k]),
        }))
    return pd.concat(parts, ignore_index=True), pd.Series(s, index=names)
