"""Observed win rate k (Gao et al. 2024 eq. 4), per judge and pooled, with its Beta-Bernoulli posterior."""

from __future__ import annotations

import numpy as np

from .encode import WinRateData

__all__ = ["observed_draws"]


def observed_draws(data: WinRateData, *, chains: int, draws: int, seed: int) -> dict[str, np.ndarray]:
    """Posterior draws of each judge's observed win rate and of the pooled k.

    ``k_e = s_k / n_k`` (eq. 4) is the share of judge e's verdicts preferring G0.  Under a
    uniform prior its posterior is ``Beta(s_k + 1, n_k - s_k + 1)`` (Alg. 1 line 16).  The
    pooled ``p`` is the mean over judges of ``k_e`` (Gao et al. 2024 §4.3: "averaged over the results
    of all LLM evaluators combined"); it estimates p only if every judge is perfect (eq. 9).

    Returns
    -------
    dict with ``p`` (chains, draws, P) and ``k`` (chains, draws, P, E); NaN for a judge with no
    verdict on a pair.
    """
    s, n = data.verdict_counts()
    rng = np.random.default_rng(seed)
    k = rng.beta(s + 1, n - s + 1, size=(chains, draws, *s.shape))
    k = np.where(n > 0, k, np.nan)
    return {"p": np.nanmean(k, axis=-1), "k": k}
