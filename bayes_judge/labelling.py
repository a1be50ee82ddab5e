"""Active labelling: which items' human labels would shrink the win rate's interval most."""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd

__all__ = ["next_labels"]


def next_labels(idata: az.InferenceData, n: int) -> pd.DataFrame:
    """The ``n`` unlabelled items whose human labels would shrink p's interval most.

    For a win-rate fit whose model has per-item posteriors ``h_prob`` (P(a human prefers G0 on
    the item | parameters); the regression and Dawid-Skene models), an unlabelled item adds to
    the variance of the finite-population win rate p (the share of the N items a human prefers
    G0 on) through two terms: its own Bernoulli variance ``E[h](1 − E[h])``, which its label
    removes outright, and the parameter uncertainty ``Var_θ(h_prob)`` of its verdict pattern,
    which a label there reduces for every item sharing the pattern.  The score of item i is::

        score_i = E[h_i](1 − E[h_i]) + m_i Var_θ(h_prob_i) / (1 + l_i)

    with ``m_i`` the unlabelled items sharing i's verdicts (same ``h_prob`` draws) and ``l_i``
    the labelled ones.  Items are taken greedily, one per pattern before any pattern's second,
    so that a batch spreads over the verdict patterns.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit of :func:`bayes_judge.win_rate` with ``h_prob`` in its posterior
        (``pointwise=True``, the default for small data).
    n : int
        How many items to propose (at most the number of unlabelled items).

    Returns
    -------
    pandas.DataFrame with columns item, pair, h_mean (posterior P(G0 preferred)), score; in
    the order to label them.
    """
    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not hasattr(idata, "posterior") or "h_prob" not in idata.posterior:
        raise ValueError(
            "next_labels needs per-item posteriors 'h_prob': a win-rate fit of the regression or "
            "Dawid-Skene models with pointwise=True"
        )
    h = idata.posterior["h_prob"]
    draws = h.to_numpy().reshape(-1, h.shape[-1])  # (S, U)
    items = [str(x) for x in h["item"].to_numpy()]
    label = idata["constant_data"]["human_label"].to_numpy()
    pair = idata["constant_data"]["item_pair"].to_numpy()
    pair_names = [str(x) for x in idata.posterior["pair"].to_numpy()]
    unl = label < 0
    if not unl.any():
        raise ValueError("every item is labelled: there is nothing left to propose")
    mean, var = draws.mean(axis=0), draws.var(axis=0)
    # items sharing a verdict pattern share their h_prob draws exactly: group by them
    key = pd.Series([hash(draws[:, i].tobytes()) for i in range(draws.shape[1])])
    group = key.groupby(key).ngroup().to_numpy()
    m = np.bincount(group, weights=unl.astype(float))[group]
    lab = np.bincount(group, weights=(~unl).astype(float))[group]
    score = mean * (1 - mean) + m * var / (1 + lab)
    df = pd.DataFrame({"item": items, "pair": [pair_names[j] for j in pair], "h_mean": mean,
                       "score": score, "group": group})[unl]
    df = df.sort_values("score", ascending=False, kind="stable")
    df["round"] = df.groupby("group").cumcount()
    df = df.sort_values(["round", "score"], ascending=[True, False], kind="stable")
    return df.head(int(n))[["item", "pair", "h_mean", "score"]].reset_index(drop=True)
