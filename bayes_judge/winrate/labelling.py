"""Active labelling: which items' human labels would shrink the win rate's interval most."""

from __future__ import annotations

from collections.abc import Sequence

import arviz as az
import numpy as np
import pandas as pd

__all__ = ["next_labels"]


def next_labels(idata: az.InferenceData, n: int, *, pairs: Sequence[str] | None = None) -> pd.DataFrame:
    """The ``n`` unlabelled items whose human labels would shrink p's interval most.

    For a win-rate fit whose model has per-item posteriors ``h_prob`` (P(a human prefers G0 on
    the item | θ); the regression and Dawid-Skene models), the score of unlabelled item i is the
    expected drop of the posterior variance of its pair's win rate p once its label y_i is
    known, computed from the posterior draws without a refit (importance reweighting)::

        score_i = Var(p) − Σ_{y ∈ {0, 1}} P(y_i = y) Var(p | y_i = y)
        P(y_i = 1) = E[h_i];  draws reweighted by w_s ∝ h_is (y = 1) or 1 − h_is (y = 0)
        p_s | y_i = y  =  p_s + (y − h_is) / N          (the item's own share, now known)

    so an item counts both for its own Bernoulli uncertainty and for what its label teaches the
    model about θ (a label on a verdict pattern the model is unsure how to read moves every
    item that shares it).  Items are taken greedily, one per verdict pattern (items with equal
    ``h_prob`` draws) before any pattern's second, so that a batch spreads over the patterns.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit of :func:`bayes_judge.win_rate` with ``h_prob`` in its posterior
        (``pointwise=True``, the default for small data).
    n : int
        How many items to propose (at most the number of unlabelled items).
    pairs : sequence of str, optional
        Propose items of these pairs only (their labels in ``win_rate_summary``'s index), e.g.
        the undecided ones: ``s.index[s.labels_to_decide > 0]``. Default: every pair.

    Returns
    -------
    pandas.DataFrame with columns item, pair, h_mean (posterior P(G0 preferred)), score; in
    the order to label them.

    Examples
    --------
    >>> import bayes_judge as bj                                          # doctest: +SKIP
    >>> fit = bj.win_rate(df)                                                 # doctest: +SKIP
    >>> bj.next_labels(fit, 5)        # the five items whose labels help most # doctest: +SKIP
    >>> s = bj.win_rate_summary(fit)                                          # doctest: +SKIP
    >>> bj.next_labels(fit, 20, pairs=s.index[s.labels_to_decide > 0])  # to decide  # doctest: +SKIP
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
    mean = draws.mean(axis=0)
    p_draws = idata.posterior["p"].to_numpy().reshape(draws.shape[0], -1)[:, pair]  # (S, U): each item's pair
    n_pair = np.bincount(pair)[pair].astype(float)
    score = p_draws.var(axis=0) - sum(
        _reweighted_var(p_draws + (y - draws) / n_pair, w) * (mean if y else 1 - mean)
        for y, w in ((1, draws), (0, 1.0 - draws))
    )
    # items sharing a verdict pattern share their h_prob draws exactly: group by them
    group = np.unique(draws.T, axis=0, return_inverse=True)[1].reshape(-1)
    pairs_of = [pair_names[j] for j in pair]
    # several pairs: the fit's item coordinate is "pair | item"; the item to label is the item id
    items = [i[len(pr) + 3:] if i.startswith(f"{pr} | ") else i for i, pr in zip(items, pairs_of, strict=True)]
    keep = unl
    if pairs is not None:
        if isinstance(pairs, str):  # one pair's label, not its characters
            pairs = [pairs]
        wanted = [str(x) for x in (pairs.tolist() if hasattr(pairs, "tolist") else list(pairs))]
        unknown = sorted(set(wanted) - set(pair_names))
        if unknown:
            raise ValueError(f"pairs: {unknown[:5]} are not pairs of this fit (its pairs: {pair_names[:8]})")
        keep = unl & np.isin(np.asarray(pairs_of, dtype=object), wanted)
        if not keep.any():
            return pd.DataFrame({"item": [], "pair": [], "h_mean": [], "score": []})
    df = pd.DataFrame({"item": items, "pair": pairs_of, "h_mean": mean, "score": score, "group": group})[keep]
    df = df.sort_values("score", ascending=False, kind="stable")
    df["round"] = df.groupby("group").cumcount()
    df = df.sort_values(["round", "score"], ascending=[True, False], kind="stable")
    return df.head(int(n))[["item", "pair", "h_mean", "score"]].reset_index(drop=True)


def _reweighted_var(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Variance of each column of ``x`` (S, U) under draw weights ``w`` (S, U), shape (U,)."""
    tot = w.sum(axis=0)
    w = w / np.where(tot > 0, tot, 1.0)
    m = (w * x).sum(axis=0)
    return (w * (x - m) ** 2).sum(axis=0)
