"""``bj.next_comparisons``: the comparisons worth making next, chosen from a fit's posterior.

Static designs (``bj.select_comparisons``, greedy D-optimal: Liusie et al. 2024 (PoE) eq. 15-17)
choose pairs before any verdict is in. Here the choice reads the posterior of a fit
(``bj.leaderboard`` or ``bj.rank(..., bayesian=True)``): each candidate pair (i, j) is scored by
(for the ``"ranking"`` goal; ``"top-k"`` and ``"pair"`` below)

    gain(i, j) = w_goal(i, j) · ½ log(1 + f_ij · cᵀ Σ c),     c = e_i − e_j,

the expected information one more verdict gives on the score difference Δ = s_i − s_j under a
Gaussian approximation of the posterior (Σ the scores' posterior covariance from the draws), with
f_ij the Fisher information of one verdict ``v`` on Δ, in the order the pair is shown, read from
the fit's own likelihood and averaged over the posterior draws θ:

    f_ij = E_θ[ Σ_v (∂P_v/∂Δ)² / P_v ]

- ``bt-judges`` (the leaderboard default, Gao et al. 2024 Model 1): a judge of accuracy
  q = σ(α), position bias β, own system preference δ and tie threshold τ reads the human
  preference h, ``P(h = A) = σ(Δ)``, so ``P_v = σ(Δ) P(v | A) + σ(−Δ) P(v | B)`` with
  ``P(A | h) = σ(η − τ)``, ``P(B | h) = σ(−η − τ)``, ``η = ±α + β + δ_a − δ_b`` (+ when h = A)
  and ``∂P_v/∂Δ = σ(Δ) σ(−Δ) (P(v | A) − P(v | B))``;
- Davidson's ``bt`` (a leaderboard's ``model="bt"``; a ranking's ``bt`` and ``poe-bt``, with
  ν = 0 without ties): ``P_A, P_T, P_B ∝ e^x, ν, e^{−x}``, ``x = (Δ + β)/2`` (β a ranking's γ), so
  ``f = ¼ [P_A (2 P_B + P_T)² + P_B (2 P_A + P_T)² + P_T (P_A − P_B)²]``, σ(Δ + β) σ(−Δ − β)
  without ties;
- the Gaussian experts of ``poe-g``, ``p ~ N(α Δ + β, σ²)`` (Liusie et al. 2024 (PoE) eq. 12-13):
  ``f = α²/σ²``, and the predicted ``p`` is its mean α Δ + β.

A leaderboard's verdict probabilities are those of a judge drawn at random from the fit's judges
(the mean of each judge's, draw by draw), or of the one named by ``judge=``; a new comparison is
read on a prompt of the median difficulty (``u = 0``) and with covariates at 0. The weight says
how much that difference matters to the ``goal``:

- ``"ranking"``: the probability that i and j are ordered wrongly, 2 · min(P(i ≻ j), P(j ≻ i))
  (1 for a coin flip, 0 for a pair already decided);
- ``"top-k"``: the information one verdict gives on who of i and j is in the top k,
  w = I(M; v) nats, M = (i in the top k, j in the top k), read from the draws as particles:
  I = H(v) − Σ_M P(M) H(v | M), with P(M) the share of draws of each of M's four values and
  P(v | M) the mean of the verdict's probability over them (a Gaussian expert's verdict read by
  its side of ½). M is what the verdict can move of the top-k set T, so I(M; v) ≤ I(T; v); T
  itself has a value of its own in nearly every draw once there are tens of systems, where the
  particles' estimate of I(T; v) becomes the verdict's information on every parameter. The gain
  is w itself for the first pick and w · ℓ(cᵀΣc) / ℓ(cᵀΣ₀c), ℓ(x) = ½ log(1 + f_ij x), once the
  batch's earlier picks have narrowed Δ. Pairs that never straddle the boundary in any draw tell
  nothing (a settled top k asks for nothing). In ``benchmarks/adaptive_selection.py``
  (``benchmarks/results/adaptive_selection_8seeds.md``: 8 seeds, 480 comparisons) the posterior
  probability of the pool's top 3 reaches 0.13 / 0.15 (SummEval / HANNA), against 0.06 / 0.14 with
  the weight this replaced (the straddle probability times the members' openness) and
  0.08 / 0.11 for random pairs (per seed the sd is 0.03-0.07: the gaps to random are about
  two standard errors); the ranking goal gives 0.16 / 0.16 on that measure (not explained);
- ``"pair"``: the expected reduction of the variance of one given difference s_a − s_b (its
  information, not w · gain).

A batch of ``n`` is chosen greedily: after each pick, Σ takes the rank-one update of that verdict
(Σ ← Σ − f Σ c cᵀ Σ / (1 + f cᵀ Σ c)), so the batch does not pick the same pair n times. A pair is
shown in the order whose verdict is least predictable, |P_A − P_B| smallest (``p_a`` nearest ½
for a judge that never ties), with the same verdict probabilities as f_ij, which is read in that
order. This is the batch analogue of the posterior-driven choice of Chatbot Arena's active
sampling and of "Ask the Right Comparison" (Xu et al. 2026), with a cheap proxy of the expected
information gain; ``benchmarks/adaptive_selection.py`` measures it in a loop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.special import expit

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az

__all__ = ["next_comparisons", "GOALS"]

GOALS = ("ranking", "top-k", "pair")
#: posterior draws read (evenly thinned): enough for probabilities to ±0.02, and (draws x pairs)
#: arrays of 160 MB at 200 systems rather than 640 MB
MAX_DRAWS = 1000
#: (draws x pairs) values per block of the verdict probabilities (32 MB an array)
_BLOCK = 4_000_000
_TINY = np.finfo(float).tiny


def _load(idata: Any) -> Any:
    """A saved run's path read with :func:`bayes_judge.load_run`; anything else as it is."""
    if isinstance(idata, str | os.PathLike):
        from .analysis.runs import load_run

        return load_run(idata)
    return idata


def _scores(idata: az.InferenceData) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Score draws (S, N), the names, and the group (item) of each score."""
    if not hasattr(idata, "groups") or "posterior" not in idata.groups():
        raise ValueError(f"next_comparisons needs a posterior (bj.leaderboard(...), bj.rank(..., bayesian=True) "
                         f"or the path of a run saved by bj.save_run), not a {type(idata).__name__}"
                         + (" such as a point ranking's table" if isinstance(idata, pd.DataFrame) else ""))
    post = idata["posterior"]
    if "s" not in post:
        raise ValueError("next_comparisons needs a fit with scores s: bj.leaderboard(...) or "
                         "bj.rank(..., bayesian=True)")
    # a leaderboard without labels keeps the judges' reading beside people's scores (the score
    # bridge): more judged comparisons sharpen the reading, never the bridge's own spread; the
    # reading is also the Δ of the judges' likelihood, draw by draw
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


@dataclass(frozen=True)
class _Verdicts:
    """A fit's likelihood of one verdict, per kept draw (S) and judge (E).

    ``kind``: ``"bt-judges"``, ``"davidson"`` or ``"gaussian"``; ``shift``: the position bias β
    (a ranking's γ); ``alpha``: bt-judges' α (poe-g's slope); ``tie``: bt-judges' τ or Davidson's
    ν (0 for a judge that never ties); ``tied``: (E,) which judges tie; ``delta``: bt-judges'
    δ (S, E, N) or None; ``sigma``: poe-g's noise sd."""

    kind: str
    shift: np.ndarray
    alpha: np.ndarray
    tie: np.ndarray
    tied: np.ndarray
    delta: np.ndarray | None
    sigma: np.ndarray


def _verdicts(idata: az.InferenceData, keep: np.ndarray, judge: str | None) -> _Verdicts:
    """The verdict model of a fit (module docstring), its parameters at the kept draws ``keep``;
    the judges' parameters of every judge, or of ``judge`` alone."""
    post = idata["posterior"]
    attrs = idata.attrs or {}
    judges = [str(x) for x in post.coords["judge"].to_numpy()] if "judge" in post.coords else []
    if judge is not None:
        if not judges:
            raise ValueError(f"judge={judge!r} picks one judge of a leaderboard fit; this fit has no judges")
        if str(judge) not in judges:
            raise ValueError(f"judge={judge!r} is not a judge of this fit; its judges are {judges[:10]}"
                             + ("..." if len(judges) > 10 else ""))
    E = max(len(judges), 1)
    S = keep.size

    def per_judge(name: str) -> np.ndarray:
        """``name``'s draws (S, E): per judge, per tie judge (0 for the others) or one for all."""
        if name not in post:
            return np.zeros((S, E))
        v = post[name]
        rest = [d for d in v.dims if d not in ("chain", "draw")]
        arr = v.transpose("chain", "draw", *rest).to_numpy().reshape(-1, int(np.prod(v.shape[2:], dtype=int)))[keep]
        if "judge" in rest:
            return arr
        if "tie_judge" in rest:
            out = np.zeros((S, E))
            out[:, [judges.index(str(t)) for t in v.coords["tie_judge"].to_numpy()]] = arr
            return out
        return np.repeat(arr[:, :1], E, axis=1)

    delta = None
    if str(attrs.get("method", "")) in ("poe-g", "poe-g-hard"):
        kind, tie_name = "gaussian", ""
    elif "alpha" in post and "q" in post:
        kind, tie_name = "bt-judges", "tau"
        if "delta" in post:
            d = post["delta"].transpose("chain", "draw", "judge", ...).to_numpy()
            delta = d.reshape(-1, *d.shape[2:])[keep]
    else:
        kind, tie_name = "davidson", "nu"
    shift = per_judge("gamma") if "gamma" in post else per_judge("beta")
    alpha, tie = per_judge("alpha"), per_judge(tie_name) if tie_name else np.zeros((S, E))
    sigma = per_judge("sigma")[:, 0] if kind == "gaussian" else np.zeros(S)
    tied = np.zeros(E, dtype=bool)
    if tie_name and tie_name in post:  # the judges that say "tie" (dim tie_judge), or all (a ranking's one ν)
        v = post[tie_name]
        ties = {str(t) for t in v.coords["tie_judge"].to_numpy()} if "tie_judge" in v.dims else None
        tied[:] = [ties is None or name in ties for name in judges] if judges else True
    if judge is not None:
        e = [judges.index(str(judge))]
        shift, alpha, tie, tied = shift[:, e], alpha[:, e], tie[:, e], tied[e]
        delta = None if delta is None else delta[:, e]
    return _Verdicts(kind, shift, alpha, tie, tied, delta, sigma)


def _outcomes(m: _Verdicts, e: int, d: np.ndarray, a: np.ndarray, b: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P_A, P_B, the Fisher information on Δ) of judge ``e``'s verdict on ``a`` shown before
    ``b``, each (S, pairs), from Δ = s_a − s_b ``d`` (S, pairs) (module docstring)."""
    shift = m.shift[:, e, None]
    if m.kind == "gaussian":  # p ~ N(α Δ + β, σ²): its mean, and α²/σ²
        alpha = m.alpha[:, e, None]
        p = alpha * d + shift
        return p, 1.0 - p, np.broadcast_to(alpha ** 2 / m.sigma[:, None] ** 2, d.shape)
    if m.kind == "davidson":  # P_A, P_T, P_B ∝ e^x, ν, e^{−x}: log Z = |x| + log(1 + e^{−2|x|} + ν e^{−|x|})
        x = 0.5 * (d + shift)
        nu = m.tie[:, e, None]
        ax = np.abs(x)
        log_z = ax + np.log1p(np.exp(-2.0 * ax) + nu * np.exp(-ax))
        pa, pb, pt = np.exp(x - log_z), np.exp(-x - log_z), nu * np.exp(-log_z)
        return pa, pb, 0.25 * (pa * (2 * pb + pt) ** 2 + pb * (2 * pa + pt) ** 2 + pt * (pa - pb) ** 2)
    # bt-judges: the judge's ordered logit given each human preference, marginalized over it
    alpha, tau = m.alpha[:, e, None], m.tie[:, e, None]
    if m.delta is not None:
        shift = shift + m.delta[:, e, a] - m.delta[:, e, b]
    eta_a, eta_b = alpha + shift, -alpha + shift
    a1, a0 = expit(eta_a - tau), expit(eta_b - tau)          # P(v = A | h = A), P(v = A | h = B)
    b1, b0 = expit(-eta_a - tau), expit(-eta_b - tau)        # P(v = B | h = A), P(v = B | h = B)
    w = expit(d)
    pa, pb = w * a1 + (1.0 - w) * a0, w * b1 + (1.0 - w) * b0
    ga, gb = w * (1.0 - w) * (a1 - a0), w * (1.0 - w) * (b1 - b0)   # ∂P_A/∂Δ, ∂P_B/∂Δ
    fisher = ga ** 2 / np.maximum(pa, _TINY) + gb ** 2 / np.maximum(pb, _TINY)
    if m.tied[e]:  # P_T = 1 − P_A − P_B, ∂P_T/∂Δ = −(∂P_A/∂Δ + ∂P_B/∂Δ)
        fisher = fisher + (ga + gb) ** 2 / np.maximum(1.0 - pa - pb, _TINY)
    return pa, pb, fisher


def _judged(m: _Verdicts, d: np.ndarray, a: np.ndarray, b: np.ndarray, *, sides: bool = False
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P_A, P_B, f) of a verdict on ``a`` shown before ``b``, per draw (S, pairs), for a judge
    drawn at random from the fit's judges (the mean over them), from Δ ``d`` (S, pairs). With
    ``sides``, a Gaussian expert's verdict is read by its side of ½: P(p > ½ | θ) = Φ((α Δ + β − ½) / σ)."""
    from scipy.special import ndtr

    E = m.shift.shape[1]
    pa, pb, f = np.zeros_like(d), np.zeros_like(d), np.zeros_like(d)
    for e in range(E):
        x, y, fe = _outcomes(m, e, d, a, b)
        if sides and m.kind == "gaussian":
            x = ndtr((x - 0.5) / m.sigma[:, None])
            y = 1.0 - x
        pa, pb, f = pa + x, pb + y, f + fe
    return pa / E, pb / E, f / E


def _predict(m: _Verdicts, draws: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """(6, P): P_A, P_B and f of every pair shown as (i, j), then as (j, i), each the mean over
    the draws and the judges; computed in blocks of pairs (draws x pairs arrays of ``_BLOCK``)."""
    out = np.zeros((6, i.size))
    step = max(1, _BLOCK // max(draws.shape[0], 1))
    for lo in range(0, i.size, step):
        at = slice(lo, lo + step)
        a, b = i[at], j[at]
        d = draws[:, a] - draws[:, b]
        for k, (x, y, dd) in enumerate(((a, b, d), (b, a, -d))):
            for r, v in enumerate(_judged(m, dd, x, y)):
                out[3 * k + r, at] = v.mean(axis=0)
    return out


def _set_information(m: _Verdicts, draws: np.ndarray, a: np.ndarray, b: np.ndarray, top: np.ndarray) -> np.ndarray:
    """I(M; v), nats: the mutual information between one verdict v on ``a`` shown before ``b``
    (each (P,)) and M = (a in the top k, b in the top k), the posterior draws as particles:
    ``top`` (S, N) says who is in the top k in each draw, ``I = H(v) − Σ_M P(M) H(v | M)``, with
    ``P(v | M)`` the mean of the verdict's probability over the draws of M (a judge drawn at random
    from the fit's judges, as in :func:`_predict`). M is what the verdict can move of the top-k
    set T (a function of T, so I(M; v) ≤ I(T; v)), and its four values keep the particles'
    upward bias small where T's many values (a distinct T in nearly every draw at 60 systems)
    would make the estimate the verdict's information on every parameter. A Gaussian expert's
    verdict is read by its side of ½ (a lower bound)."""
    S = draws.shape[0]
    out = np.zeros(a.size)
    step = max(1, _BLOCK // max(S, 1))
    for lo in range(0, a.size, step):
        at = slice(lo, lo + step)
        pa, pb, _ = _judged(m, draws[:, a[at]] - draws[:, b[at]], a[at], b[at], sides=True)
        member = 2 * top[:, a[at]].astype(np.int8) + top[:, b[at]]               # M's value per draw (S, P)
        masks = [member == v for v in range(4)]
        n_m = np.stack([mk.sum(axis=0) for mk in masks])                        # draws of each M (4, P)
        h_v = np.zeros(pa.shape[1])
        h_vm = np.zeros(pa.shape[1])
        for pv in (pa, pb, np.clip(1.0 - pa - pb, 0.0, 1.0)):
            marg = pv.mean(axis=0)                                              # P(v)
            h_v -= marg * np.log(np.maximum(marg, _TINY))
            for mk, n in zip(masks, n_m, strict=True):
                cond = np.where(n > 0, (pv * mk).sum(axis=0) / np.maximum(n, 1), 0.0)  # P(v | M)
                h_vm -= n / S * cond * np.log(np.maximum(cond, _TINY))
        out[at] = np.maximum(h_v - h_vm, 0.0)
    return out


def next_comparisons(idata: az.InferenceData | str | os.PathLike, n: int, *, goal: str = "ranking",
                     k: int | None = None, pair: tuple[str, str] | None = None, item: str | None = None,
                     judge: str | None = None) -> pd.DataFrame:
    """The ``n`` comparisons that most reduce the posterior uncertainty of ``goal`` (module docstring).

    Parameters
    ----------
    idata : a fit of :func:`bayes_judge.leaderboard` or :func:`bayes_judge.rank` (``bayesian=True``;
        pairs are then within an item), or the path of one saved by :func:`bayes_judge.save_run`
        (read with :func:`bayes_judge.load_run`)
    n : how many comparisons (a batch to judge before the next refit)
    goal : ``"ranking"`` (the whole order), ``"top-k"`` (who is in the top ``k``) or ``"pair"``
        (the difference of ``pair = (a, b)``)
    k : the top-k's k (of each item, for a ranking fit of several items)
    pair : the two systems of ``goal="pair"``
    item : for ``goal="pair"`` on a ranking fit whose items share candidate names: the pair's item
    judge : for a leaderboard fit: the judge that will make the comparisons; its own accuracy,
        position bias and tie threshold predict the verdicts (default: a judge drawn at random from
        the fit's judges, the mean of their verdict probabilities)

    Returns
    -------
    pandas.DataFrame
        One row per comparison, best first: ``a``, ``b`` (the order to show them in), ``item``
        (ranking fits), ``gain`` (the weighted expected information, nats), ``weight`` (the goal's
        weight w_goal of the pair, module docstring), ``p_a`` (the fit's own predicted probability
        that the judge names ``a``, shown first: P(v = A), the mean over the posterior draws and
        the judges; a Gaussian expert's mean ``p``). Fewer than ``n`` rows, or none, when fewer
        comparisons would tell anything (one system, every pair decided, a settled top k);
        ``attrs["reason"]`` says why.

    Examples
    --------
    >>> import bayes_judge as bj                                   # doctest: +SKIP
    >>> idata = bj.leaderboard(battles, sampler="laplace")         # doctest: +SKIP
    >>> bj.next_comparisons(idata, 50, goal="top-k", k=3)          # doctest: +SKIP
    >>> bj.next_comparisons("runs/arena", 50, judge="gpt-4o")      # doctest: +SKIP
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
    fit: az.InferenceData = _load(idata)
    draws, names, groups = _scores(fit)
    keep = np.arange(len(draws))
    if len(draws) > MAX_DRAWS:  # the per-pair quantities are (draws x pairs): 4000 x 19,900 would be 640 MB each
        keep = np.linspace(0, len(draws) - 1, MAX_DRAWS).astype(int)
        draws = draws[keep]
    model = _verdicts(fit, keep, judge)
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
    # the verdict probabilities in both orders; each pair is shown (and its f read) in the order
    # whose verdict is least predictable, |P_A − P_B| smallest
    pa_ij, pb_ij, f_ij, pa_ji, pb_ji, f_ji = _predict(model, draws, i, j)
    flip = np.abs(pa_ji - pb_ji) < np.abs(pa_ij - pb_ij)
    fisher = np.where(flip, f_ji, f_ij)
    p_shown = np.where(flip, pa_ji, pa_ij)
    weight = np.ones(i.size)
    if goal == "ranking":
        p_ij = (draws[:, i] > draws[:, j]).mean(axis=0)
        weight = 2.0 * np.minimum(p_ij, 1.0 - p_ij)
    cov = np.cov(draws, rowvar=False).reshape(N, N)
    if goal == "top-k":  # what a verdict says of who of the pair is in the top k
        kk = int(k)  # type: ignore[arg-type]
        top = np.zeros(draws.shape, dtype=bool)
        for g in group_ids:  # ranks within each item (a ranking fit's items are separate rankings)
            cols = np.flatnonzero(groups == g)
            ranks = np.argsort(np.argsort(-draws[:, cols], axis=1), axis=1)  # 0 = best, per draw
            top[:, cols] = ranks < kk
        at = np.flatnonzero((top[:, i] ^ top[:, j]).any(axis=0))   # pairs that straddle the boundary in some draw
        weight = np.zeros(i.size)                                   # I(M; v): module docstring
        weight[at] = _set_information(model, draws, np.where(flip, j, i)[at], np.where(flip, i, j)[at], top)
        var0 = cov[i, i] + cov[j, j] - 2 * cov[i, j]
        base = 0.5 * np.log1p(fisher * np.maximum(var0, 0.0))      # the Gaussian information before the batch
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
        elif goal == "top-k":  # I(M; v), discounted as the batch's earlier picks narrow Δ
            left = 0.5 * np.log1p(fisher * np.maximum(var, 0.0))
            gain = np.where(base > 1e-12, weight * np.minimum(left / np.maximum(base, 1e-12), 1.0), 0.0)
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
        bridged = "s_judges" in fit["posterior"]
        settled = f": who is in the top {k} is settled" if goal == "top-k" else ""
        empty.attrs["reason"] = (
            "the judges' reading is settled for this goal (no judged comparison changes it by more than 1e-6 "
            "nats), but people's scores still carry the score bridge's spread: only human labels narrow that "
            "(bj.compare_systems says which pairs it leaves open)" if bridged else
            f"every pair is already decided for this goal{settled} (no comparison changes its posterior by more "
            "than 1e-6 nats)")
        return empty
    sel = np.asarray(chosen)
    a_idx = np.where(flip[sel], j[sel], i[sel])
    b_idx = np.where(flip[sel], i[sel], j[sel])
    out = pd.DataFrame({
        "a": [names[x] for x in a_idx], "b": [names[x] for x in b_idx],
        "item": [groups[x] for x in a_idx] if "candidate_id" in fit["posterior"]["s"].coords else None,
        "gain": gains, "weight": weight[sel],
        "p_a": np.clip(p_shown[sel], 0.0, 1.0),
    })
    if out["item"].isna().all():
        out = out.drop(columns="item")
    if len(out) < n:
        told = len(out)
        out.attrs["reason"] = (
            ("there is only 1 pair to compare, proposed once" if i.size == 1 else
             f"there are only {i.size} pairs to compare, each proposed once") if told == i.size else
            f"only {told} comparison{'' if told == 1 else 's'} tell{'s' if told == 1 else ''} anything for this "
            f"goal; the other pairs are decided")
    return out
