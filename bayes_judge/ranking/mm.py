"""Hunter's (2004) minorize-maximize iteration for Bradley-Terry strengths, shared by the baselines and the PoE."""

from __future__ import annotations

import warnings

import numpy as np

from .encode import (
    ConvergenceWarning,
    RankData,
    center_per_item,
    check_finite_scores,
)

__all__ = ["mm_iterate"]


def mm_iterate(
    data: RankData,
    i: np.ndarray,
    j: np.ndarray,
    w_i: np.ndarray,
    n: np.ndarray,
    *,
    theta: np.ndarray | None,
    tol: float,
    max_iter: int,
    name: str,
    accelerate: bool = False,
    info: dict | None = None,
) -> np.ndarray:
    """Zermelo's iteration (the MM algorithm of Hunter 2004) for Bradley-Terry strengths.

    Comparison ``k`` between ``i[k]`` (position A) and ``j[k]`` was played ``n[k]`` times,
    ``i[k]`` winning ``w_i[k]`` of them (fractional wins allowed), with
    ``P(i beats j) = θ_k π_i / (θ_k π_i + π_j)``.  Returns log-strengths centred per item.
    Every item stops on its own, at the first sweep that moves none of its log-strengths by
    ``tol`` or more (that sweep's result is returned), so that items ranked together equal items
    ranked alone; ``max_iter`` bounds the number of sweeps.

    ``accelerate=True`` runs SQUAREM (Varadhan & Roland 2008, scheme S3) on the sweep map ``F``
    of the centred log-strengths: from ``x0``, ``x1 = F(x0)``, ``x2 = F(x1)``, ``r = x1 − x0``,
    ``v = x2 − 2 x1 + x0``, ``α = min(−‖r‖ / ‖v‖, −1)``, the extrapolation
    ``x' = x0 − 2α r + α² v`` and one stabilising sweep ``F(x')``, kept only where the
    log-likelihood at ``x'`` is not below that at ``x0`` (else the plain ``x2``), so the
    log-likelihood never decreases.  Step length, safeguard and stop are per item.  The fixed
    point and the stopping rule (one plain sweep moving less than ``tol``) are the same.
    ``info["sweeps"]`` receives the number of sweeps when ``info`` is a dict.
    """
    N = data.n_candidates
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    K = len(n)
    wins = np.bincount(i, weights=w_i, minlength=N) + np.bincount(j, weights=n - w_i, minlength=N)
    # pairs sorted by i (as _pair_totals returns them): π_i by np.repeat and the i-side sums by
    # np.add.reduceat, several times faster than a gather and a bincount over runs of equal bins
    by_i = K > 0 and bool(np.all(i[1:] >= i[:-1]))
    if by_i:
        starts = np.flatnonzero(np.concatenate(([True], i[1:] != i[:-1])))
        first_i, run = i[starts], np.diff(np.append(starts, K))
    single = data.n_items == 1
    item_start = data.offsets[:-1]
    cand_item = data.cand_item

    def item_sum(x: np.ndarray) -> np.ndarray:
        return np.array([x.sum()]) if single else np.add.reduceat(x, item_start)

    def item_max(x: np.ndarray) -> np.ndarray:
        return np.array([x.max()]) if single else np.maximum.reduceat(x, item_start)

    def sweep(x: np.ndarray, want_ll: bool = False, check: bool = True):
        """One Zermelo sweep from centred log-strengths ``x``, and the log-likelihood at ``x``
        per item (up to a constant) if ``want_ll``."""
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            pi = np.exp(x)
            d = np.repeat(pi[first_i], run) if by_i else pi[i]
            if theta is not None:
                d *= theta
            d += pi[j]
            ll = None
            if want_ll:
                nlogd = n * np.log(d)
                ll = item_sum(wins * x) - (
                    nlogd.sum() if single
                    else np.bincount(cand_item[i], weights=nlogd, minlength=data.n_items)
                )
            np.divide(n, d, out=d)
            den = np.bincount(j, weights=d, minlength=N)
            d_i = d if theta is None else d * theta
            if by_i:
                den[first_i] += np.add.reduceat(d_i, starts)
            else:
                den += np.bincount(i, weights=d_i, minlength=N)
            new = np.log(wins / den)
            new = new - new.mean() if single else center_per_item(data, new)
        if check:
            check_finite_scores(data, new, name)
        return new, ll

    x = np.zeros(N)
    done = np.zeros(data.n_items, dtype=bool)
    step = np.inf
    sweeps = 0

    def accept(x, new, moved, where=None):
        """Move the running items (``where`` of them) to ``new``; stop those that moved < tol."""
        nonlocal step
        run_ = ~done if where is None else ~done & where
        x = new if run_.all() else np.where(run_[cand_item], new, x)
        if run_.any():
            step = float(moved[run_].max())
        return x, run_ & (moved < tol)

    while sweeps < max_iter and not accelerate:
        new, _ = sweep(x)
        sweeps += 1
        x, fin = accept(x, new, item_max(np.abs(new - x)))
        done |= fin
        if done.all():
            break
    while sweeps < max_iter and accelerate:
        x0 = x
        x1, ll0 = sweep(x0, want_ll=True)
        sweeps += 1
        x, fin = accept(x, x1, item_max(np.abs(x1 - x0)))
        done |= fin
        if done.all() or sweeps == max_iter:
            break
        x2, _ = sweep(x1)
        sweeps += 1
        x, fin = accept(x, x2, item_max(np.abs(x2 - x1)))
        done |= fin
        if done.all() or sweeps == max_iter:
            break
        r = x1 - x0
        v = x2 - x1 - r
        rr, vv = item_sum(r * r), item_sum(v * v)
        alpha = -np.sqrt(np.divide(rr, vv, out=np.ones_like(rr), where=vv > 0))
        a = np.minimum(alpha, -1.0)[cand_item]
        xp = x0 - 2.0 * a * r + a * a * v
        x3, llp = sweep(xp, want_ll=True, check=False)
        sweeps += 1
        bad_x3 = item_sum((~np.isfinite(x3)).astype(float)) > 0
        good = np.isfinite(llp) & (llp >= ll0) & ~bad_x3
        if good.any():
            with np.errstate(invalid="ignore"):
                moved = np.where(good, item_max(np.abs(x3 - xp)), np.inf)
            x, fin = accept(x, x3, moved, where=good)
            done |= fin
            if done.all():
                break
    if info is not None:
        info["sweeps"] = sweeps
    if not done.all():
        warnings.warn(
            f"{name}: no convergence in max_iter={max_iter} sweeps (last change {step:.2e} > "
            f"tol={tol:g}); raise max_iter",
            ConvergenceWarning,
            stacklevel=3,
        )
    return x
