"""``bj.next_comparisons``: the comparisons worth making next, chosen from a fit's posterior.

Static designs (``bj.select_comparisons``, greedy D-optimal: Liusie et al. 2024 (PoE) eq. 15-17)
choose pairs before any verdict is in. Here the choice reads the posterior of a fit
(``bj.leaderboard`` or ``bj.rank(..., bayesian=True)``): each candidate pair (i, j) is scored by

    gain(i, j) = w_goal(i, j) · ½ log(1 + f_ij · cᵀ Σ c),     c = e_i − e_j,

the expected information one more verdict gives on the score difference s_i − s_j under a Gaussian
approximation of the posterior (Σ the scores' posterior covariance from the draws; f_ij the Fisher
information of one Bradley-Terry verdict, E[σ(Δ)(1 − σ(Δ))], times (2q − 1)² for a judge of
accuracy q; for the Gaussian experts of ``poe-g``, ``p ~ N(α Δ + β, σ²)``, it is α²/σ² and the
position offset β − ½ is read on the probability scale), weighted by how much that difference
matters to the ``goal``:

- ``"ranking"``: the probability that i and j are ordered wrongly, 2 · min(P(i ≻ j), P(j ≻ i))
  (1 for a coin flip, 0 for a pair already decided);
- ``"top-k"``: the probability that exactly one of i, j is in the top k (the pairs that decide
  who is in; weighting it also by the pair's open order, as ``"ranking"`` does, named the pool's
  top 3 with lower posterior probability in ``benchmarks/adaptive_selection.py``: 0.12 / 0.10
  against 0.18 / 0.23 at 480 comparisons on SummEval / HANNA);
- ``"pair"``: the expected reduction of the variance of one given difference s_a − s_b (its
  information, not w · gain).

A batch of ``n`` is chosen greedily: after each pick, Σ takes the rank-one update of that verdict
(Σ ← Σ − f Σ c cᵀ Σ / (1 + f cᵀ Σ c)), so the batch does not pick the same pair n times. For a judge
with a position bias the pair is shown in the order whose verdict is least predictable (p closest
to ½), where it tells most. This is the batch analogue of the posterior-driven choice of Chatbot
Arena's active sampling and of "Ask the Right Comparison" (Xu et al. 2026), with a cheap proxy
of the expected information gain; ``benchmarks/adaptive_selection.py`` measures it in a loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az

__all__ = ["next_comparisons", "GOALS"]

GOALS = ("ranking", "top-k", "pair")
#: posterior draws read (evenly thinned): enough for probabilities to ±0.02, and (draws x pairs)
#: arrays of 160 MB at 200 systems rather than 640 MB
MAX_DRAWS = 1000


def _scores(idata: az.InferenceData) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Score draws (S, N), the names, and the group (item) of each score."""
    if not hasattr(idata, "groups") or "posterior" not in idata.groups():
        raise ValueError(f"next_comparisons needs a posterior (bj.leaderboard(...) or bj.rank(..., bayesian=True)), "
                         f"not a {type(idata).__name__}" + (" such as a point ranking's table" if
                                                            isinstance(idata, pd.DataFrame) else ""))
    post = idata["posterior"]
    if "s" not in post:
        raise ValueError("next_comparisons needs a fit with scores s: bj.leaderboard(...) or "
                         "bj.rank(..., bayesian=True)")
    # a leaderboard without labels keeps the judges' reading beside people's scores (the score
    # bridge): more judged comparisons sharpen the reading, never the bridge's own spread
    s = post["s_judges"] if "s_judges" in post else post["s"]
    dim = s.dims[-1]
    draws = s.to_numpy().reshape(-1, s.shape[-1])
    if "candidate_id" in s.coords:  # a ranking fit: candidates within items
        names = [str(c) for c in s.coords["candidate_id"].to_numpy()]
        groups = np.asarray([str(g) for g in s.coords["item"].to_numpy()])
    else:
        names = [str(c) for c in s.coords[dim].to_numpy()]
        groups = np.zeros(len(names), dtype=object)
    return draws, names, groups


def _gaussian_experts(idata: az.InferenceData) -> tuple[float, float, float] | None:
    """For a Gaussian-experts ranking (``poe-g``, ``poe-g-hard``: ``p ~ N(α Δ + β, σ²)``, Liusie et
    al. 2024 (PoE) eq. 12-13): (α, the Fisher information α²/σ² of one verdict on Δ, the position
    offset in score units (β − ½)/α), posterior means; None for the Bradley-Terry fits."""
    if str(idata.attrs.get("method", "")) not in ("poe-g", "poe-g-hard"):
        return None
    post = idata["posterior"]
    a, b, sd = (post[v].to_numpy().ravel() for v in ("alpha", "beta", "sigma"))
    return float(a.mean()), float((a ** 2 / sd ** 2).mean()), float(((b - 0.5) / a).mean())


def _judge_factor(idata: az.InferenceData) -> tuple[float, float]:
    """(mean (2q − 1)² over the judges, the position bias of the mean judge on the logit scale)
    of a Bradley-Terry fit (the leaderboard's ``beta``, a ranking's ``gamma``)."""
    post = idata["posterior"]
    factor = float(((2 * post["q"] - 1) ** 2).mean()) if "q" in post else 1.0
    bias = 0.0
    for name in ("beta", "gamma"):
        if name in post:
            bias = float(post[name].mean())
    return factor, bias


def next_comparisons(idata: az.InferenceData, n: int, *, goal: str = "ranking", k: int | None = None,
                     pair: tuple[str, str] | None = None, item: str | None = None) -> pd.DataFrame:
    """The ``n`` comparisons that most reduce the posterior uncertainty of ``goal`` (module docstring).

    Parameters
    ----------
    idata : a fit of :func:`bayes_judge.leaderboard` or :func:`bayes_judge.rank` (``bayesian=True``;
        pairs are then within an item)
    n : how many comparisons (a batch to judge before the next refit)
    goal : ``"ranking"`` (the whole order), ``"top-k"`` (who is in the top ``k``) or ``"pair"``
        (the difference of ``pair = (a, b)``)
    k : the top-k's k (of each item, for a ranking fit of several items)
    pair : the two systems of ``goal="pair"``
    item : for ``goal="pair"`` on a ranking fit whose items share candidate names: the pair's item

    Returns
    -------
    pandas.DataFrame
        One row per comparison, best first: ``a``, ``b`` (the order to show them in), ``item``
        (ranking fits), ``gain`` (the weighted expected information, nats), ``weight`` (the goal's
        weight of the pair), ``p_a`` (the predicted probability that ``a`` wins as shown). Fewer
        than ``n`` rows, or none, when fewer comparisons would tell anything (one system, every
        pair decided); ``attrs["reason"]`` says why.

    Examples
    --------
    >>> import bayes_judge as bj                                   # doctest: +SKIP
    >>> idata = bj.leaderboard(battles, sampler="laplace")         # doctest: +SKIP
    >>> bj.next_comparisons(idata, 50, goal="top-k", k=3)          # doctest: +SKIP
    """
    if goal not in GOALS:
        raise ValueError(f"goal must be one of {GOALS}, not {goal!r}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if k is not None and (goal != "top-k" or isinstance(k, bool) or not isinstance(k, int | np.integer)):
        raise ValueError(f"k= is the whole number of goal='top-k' (got k={k!r}, goal={goal!r})")
    if pair is not None and goal != "pair":
        raise ValueError(f"pair= belongs to goal='pair', not goal={goal!r}")
    if item is not None and goal != "pair":
        raise ValueError(f"item= says which item holds goal='pair''s pair; goal={goal!r} ranks within every item")
    draws, names, groups = _scores(idata)
    if len(draws) > MAX_DRAWS:  # the per-pair quantities are (draws x pairs): 4000 x 19,900 would be 640 MB each
        draws = draws[np.linspace(0, len(draws) - 1, MAX_DRAWS).astype(int)]
    N = len(names)
    group_ids = list(dict.fromkeys(groups))
    largest = max(int((groups == g).sum()) for g in group_ids) if group_ids else 0
    if goal == "top-k" and (k is None or not 1 <= int(k) < largest):
        raise ValueError(f"goal='top-k' needs k between 1 and {largest - 1} (the number of systems less one), "
                         f"got {k!r}")
    pair_at: list[int] = []
    if goal == "pair":
        if pair is None or len(pair) != 2 or any(p not in names for p in pair) or pair[0] == pair[1]:
            raise ValueError(f"goal='pair' needs pair=(a, b), two different systems of {names[:10]}"
                             + ("..." if N > 10 else ""))
        where = [g for g in group_ids if all(((groups == g) & (np.asarray(names) == p)).any() for p in pair)
                 and (item is None or str(g) == str(item))]
        if len(where) != 1:
            raise ValueError(f"goal='pair': {pair[0]!r} and {pair[1]!r} are candidates of "
                             + (f"several items {where[:5]}; say which with item=" if where else
                                f"no item{'' if item is None else ' ' + repr(item)} together"))
        pair_at = [int(np.flatnonzero((groups == where[0]) & (np.asarray(names) == p))[0]) for p in pair]
    empty = pd.DataFrame(columns=["a", "b", "item", "gain", "weight", "p_a"])
    ii, jj = [], []
    for g in dict.fromkeys(groups):
        idx = np.flatnonzero(groups == g)
        a, b = np.triu_indices(len(idx), 1)
        ii.append(idx[a])
        jj.append(idx[b])
    i, j = np.concatenate(ii) if ii else np.empty(0, int), np.concatenate(jj) if jj else np.empty(0, int)
    if i.size == 0:
        empty.attrs["reason"] = "fewer than two systems (in any item): there is nothing to compare"
        return empty
    diff = draws[:, i] - draws[:, j]                                # (S, P)
    p_ij = (diff > 0).mean(axis=0)
    gauss = _gaussian_experts(idata)
    if gauss is not None:  # p linear in Δ with Gaussian noise: the same information for every pair
        slope, info, bias = gauss
        fisher = np.full(i.size, info)
    else:
        factor, bias = _judge_factor(idata)
        sig = 1.0 / (1.0 + np.exp(-diff))
        fisher = factor * (sig * (1 - sig)).mean(axis=0)            # (P,)
    if goal == "ranking":
        weight = 2.0 * np.minimum(p_ij, 1.0 - p_ij)
    elif goal == "top-k":  # the pair straddles the boundary (its information on Δ discounts a settled one)
        kk = int(k)  # type: ignore[arg-type]
        top = np.zeros(draws.shape, dtype=bool)
        for g in group_ids:  # ranks within each item (a ranking fit's items are separate rankings)
            cols = np.flatnonzero(groups == g)
            ranks = np.argsort(np.argsort(-draws[:, cols], axis=1), axis=1)  # 0 = best, per draw
            top[:, cols] = ranks < kk
        weight = (top[:, i] ^ top[:, j]).mean(axis=0)
    else:
        weight = np.ones(i.size)
    cov = np.cov(draws, rowvar=False).reshape(N, N)
    ab = None
    if goal == "pair":
        ab = np.zeros(N)
        ab[pair_at[0]], ab[pair_at[1]] = 1.0, -1.0
    chosen: list[int] = []
    gains: list[float] = []
    for _ in range(min(int(n), i.size)):
        var = cov[i, i] + cov[j, j] - 2 * cov[i, j]                 # cᵀ Σ c of every pair
        if goal == "pair":
            assert ab is not None
            sc = cov @ ab                                           # Σ c_ab
            cross = sc[i] - sc[j]                                   # c_ijᵀ Σ c_ab
            v_ab = float(ab @ sc)
            reduction = fisher * cross ** 2 / (1.0 + fisher * var)
            gain = 0.5 * np.log(v_ab / np.maximum(v_ab - reduction, 1e-300)) if v_ab > 0 else np.zeros(i.size)
        else:
            gain = weight * 0.5 * np.log1p(fisher * np.maximum(var, 0.0))
        if chosen:
            gain[chosen] = -np.inf
        best = int(np.argmax(gain))
        if not gain[best] > 1e-6:
            break
        chosen.append(best)
        gains.append(float(gain[best]))
        c = np.zeros(N)
        c[i[best]], c[j[best]] = 1.0, -1.0
        sc = cov @ c
        cov = cov - fisher[best] * np.outer(sc, sc) / (1.0 + fisher[best] * float(c @ sc))
    if not chosen:
        bridged = "s_judges" in idata["posterior"]
        empty.attrs["reason"] = (
            "the judges' reading is settled for this goal (no judged comparison changes it by more than 1e-6 "
            "nats), but people's scores still carry the score bridge's spread: only human labels narrow that "
            "(bj.compare_systems says which pairs it leaves open)" if bridged else
            "every pair is already decided for this goal (no comparison changes its posterior by more than "
            "1e-6 nats)")
        return empty
    sel = np.asarray(chosen)
    mean_diff = diff[:, sel].mean(axis=0)
    # show in the order whose verdict is least predictable: |Δ + β| smallest (β in Δ's units)
    flip = np.abs(-mean_diff + bias) < np.abs(mean_diff + bias)
    a_idx = np.where(flip, j[sel], i[sel])
    b_idx = np.where(flip, i[sel], j[sel])
    shown = np.where(flip, -mean_diff, mean_diff) + bias
    out = pd.DataFrame({
        "a": [names[x] for x in a_idx], "b": [names[x] for x in b_idx],
        "item": [groups[x] for x in a_idx] if "candidate_id" in idata["posterior"]["s"].coords else None,
        "gain": gains, "weight": weight[sel],
        "p_a": np.clip(0.5 + slope * shown, 0.0, 1.0) if gauss is not None else 1.0 / (1.0 + np.exp(-shown)),
    })
    if out["item"].isna().all():
        out = out.drop(columns="item")
    if len(out) < n:
        out.attrs["reason"] = (f"there are only {i.size} pairs to compare, each proposed once" if len(out) == i.size
                               else f"only {len(out)} comparison(s) tell anything for this goal; the other pairs are "
                               "decided")
    return out
