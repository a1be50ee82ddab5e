"""Seeded generators of judgments with known truth, for recovery tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["simulate_win_rate"]


def simulate_win_rate(
    n_items: int = 200,
    *,
    p: float = 0.8,
    q0: float | Sequence[float] | np.ndarray = (0.8, 0.75, 0.7),
    q1: float | Sequence[float] | np.ndarray | None = None,
    systems: tuple[str, str] = ("G0", "G1"),
    swap: bool = False,
    human: bool = True,
    seed: int = 0,
) -> pd.DataFrame:
    """Judgments of E judges on n comparisons of two systems, drawn from Model 1 of Gao et al. 2024.

    ``h_i ~ Bernoulli(p)`` decides whether a human prefers ``systems[0]`` (G0); judge e then
    prefers G0 with probability ``q0[e]`` when h_i = G0 and ``1 - q1[e]`` otherwise.

    Parameters
    ----------
    n_items : number of comparisons n
    p : true win rate of G0 over G1 (eq. 1)
    q0, q1 : per-judge accuracies (eq. 5-6); a scalar means one judge; q1 defaults to q0
    systems : names of (G0, G1)
    swap : if True every judge sees every item in both orders (two rows, independent verdicts)
    human : fill the ``human`` column with the true labels
    seed : seed of ``numpy.random.default_rng``

    Returns
    -------
    pandas.DataFrame in the judgments schema, with ``attrs["truth"]`` holding p, q0, q1, the
    drawn labels ``h`` (1 = G0) and the sample win rate ``p_hat`` (eq. 3).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(100, p=0.7, q0=[0.8, 0.9], q1=[0.75, 0.85], seed=0)
    >>> sorted(df.columns)[:4]
    ['a', 'b', 'human', 'item']
    """
    acc0 = np.atleast_1d(np.asarray(q0, dtype=float))
    acc1 = acc0.copy() if q1 is None else np.atleast_1d(np.asarray(q1, dtype=float))
    if acc0.shape != acc1.shape:
        raise ValueError(f"q0 and q1 need one value per judge; got {acc0.size} and {acc1.size}")
    if not (0 <= p <= 1) or ((acc0 < 0) | (acc0 > 1) | (acc1 < 0) | (acc1 > 1)).any():
        raise ValueError("p, q0 and q1 must lie in [0, 1]")
    if n_items < 1:
        raise ValueError("n_items must be positive")
    rng = np.random.default_rng(seed)
    E = acc0.size
    h = rng.random(n_items) < p  # True: human prefers G0
    orders = (0, 1) if swap else (0,)
    g0, g1 = systems
    frames = []
    for order in orders:
        prob_g0 = np.where(h[:, None], acc0[None, :], 1 - acc1[None, :])  # (n, E)
        says_g0 = rng.random((n_items, E)) < prob_g0
        a, b = (g0, g1) if order == 0 else (g1, g0)
        g0_in_a = order == 0
        winner = np.where(says_g0 == g0_in_a, "a", "b")
        hum = np.where(h == g0_in_a, "a", "b")
        frames.append(
            pd.DataFrame(
                {
                    "item": np.repeat(np.arange(n_items), E),
                    "a": a,
                    "b": b,
                    "judge": np.tile([f"judge{e}" for e in range(E)], n_items),
                    "winner": winner.ravel(),
                    "human": np.repeat(hum, E) if human else None,
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    df.attrs["truth"] = {"p": p, "q0": acc0.tolist(), "q1": acc1.tolist(), "h": h.astype(int).tolist(), "p_hat": float(h.mean())}
    return df
