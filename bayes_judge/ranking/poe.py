"""Product-of-Experts scores from pairwise comparisons (Liusie et al. 2024 (PoE) §3.2-3.5).

Every comparison ``C_k = (i, j, p_ij)`` is an expert on the score difference ``s_i − s_j``
(eq. 4).  Two expert families:

* **Gaussian** (§3.3): ``p(s_i − s_j | p_ij) = N(f_μ(p_ij), f_σ(p_ij))``.  With the anchoring
  expert ``p(s_1 | C_0) = N(0, σ_0²)`` on an item's first candidate the product is Gaussian with
  mean ``μ*_s = (W̃ᵀ Σ̃⁻¹ W̃)⁻¹ W̃ᵀ Σ̃⁻¹ μ̃`` (eq. 8) and covariance ``(W̃ᵀ Σ̃⁻¹ W̃)⁻¹`` (eq. 9);
  with a linear mean ``f_μ(p) = α (p − β)`` and constant variance it is
  ``ŝ = α (W̃ᵀ W̃)⁻¹ W̃ᵀ μ̃`` (eq. 12).
* **Soft Bradley-Terry** (§3.2): ``p(s_i − s_j | p_ij) = σ(s_i − s_j)^{p_ij}
  (1 − σ(s_i − s_j))^{1 − p_ij} / Z_ij`` with ``Z_ij = π / sin(π p_ij)``; the scores are the
  mode (MAP) of the product.

Position bias (§3.5): each expert is shifted, ``p_γ(s_i − s_j | p) = p(s_i − s_j − γ | p)``,
which is ``β = E[p_ij]`` for the linear Gaussian (eq. 13, A.7) and ``γ = −logit(E[p_ij])`` for
soft Bradley-Terry (A.8).

Linear algebra is sparse: ``W̃ᵀ Σ̃⁻¹ W̃`` is a weighted graph Laplacian (A.2, eq. 20-21) plus the
anchor, block-diagonal over items.  Systems with more than ``DENSE_MAX`` candidates are solved
by Jacobi-preconditioned conjugate gradients (``scipy.sparse.linalg.cg``) on the Laplacian,
falling back to a sparse LU; smaller ones densely.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Literal, overload

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.special import expit, log_expit, logit

from ..outcomes import check_connected
from .encode import (
    BiasBy,
    ClippedProbabilityWarning,
    ConvergenceWarning,
    Outcome,
    RankData,
    center_per_item,
    check_finite_scores,
    position_bias,
)
from .mm import mm_iterate

__all__ = ["comparison_matrix", "poe_gaussian", "poe_bt", "DENSE_MAX"]

DENSE_MAX = 200
Clip = Literal["warn", "error", "none"]


def comparison_matrix(data: RankData) -> sp.csr_matrix:
    """The comparison matrix ``W̃`` with the anchoring rows (Liusie et al. 2024 (PoE) eq. 5, A.1 eq. 18).

    Row ``k`` of ``W`` has ``W_ki = 1`` and ``W_kj = −1`` for comparison ``k`` between ``i``
    (position A) and ``j`` (position B).  ``W̃`` prepends one anchoring row per item, a 1 on the
    item's first candidate (§3.3), so that it is full rank when each item is connected.

    Parameters
    ----------
    data : RankData

    Returns
    -------
    scipy.sparse.csr_matrix, shape (G + K, N)
        The ``G`` anchoring rows (one per item, in item order) then the ``K`` comparisons.
    """
    G, K, N = data.n_items, data.n_comparisons, data.n_candidates
    rows = np.concatenate([np.arange(G), G + np.arange(K), G + np.arange(K)])
    cols = np.concatenate([data.offsets[:-1], data.i, data.j])
    vals = np.concatenate([np.ones(G), np.ones(K), -np.ones(K)])
    return sp.csr_matrix((vals, (rows, cols)), shape=(G + K, N))


def _laplacian(data: RankData, w: np.ndarray) -> sp.csr_matrix:
    """``Wᵀ diag(w) W``: the weighted graph Laplacian of the comparisons, shape (N, N)."""
    i, j, N = data.i, data.j, data.n_candidates
    return sp.csr_matrix(
        (np.concatenate([w, w, -w, -w]), (np.concatenate([i, j, i, j]), np.concatenate([i, j, j, i]))),
        shape=(N, N),
    )


def _wt(data: RankData, v: np.ndarray) -> np.ndarray:
    """``Wᵀ v`` for a vector over comparisons, shape (N,)."""
    N = data.n_candidates
    return np.bincount(data.i, weights=v, minlength=N) - np.bincount(data.j, weights=v, minlength=N)


def _solve_anchored(
    data: RankData, w: np.ndarray, rhs: np.ndarray, *, anchor_w: float = 1.0
) -> np.ndarray:
    """Solve ``(Wᵀ diag(w) W + Σ_g anchor_w e_{1g} e_{1g}ᵀ) s = rhs`` (eq. 8 / eq. 12).

    ``rhs = Wᵀ (...)`` sums to zero within every item (each row of ``W`` does), so the anchor
    pins the item's first score to exactly 0 and leaves ``Wᵀ diag(w) W s = rhs``.  Large systems
    are solved on the Laplacian by Jacobi-preconditioned CG and shifted; small ones densely.
    """
    N = data.n_candidates
    first = data.offsets[:-1]
    L = _laplacian(data, w)
    if N <= DENSE_MAX:
        A = L.toarray()
        A[first, first] += anchor_w
        s = np.linalg.solve(A, rhs)
        return s - s[first][data.cand_item]  # exact zeros at the anchors (a no-op in theory)
    # remove the rounding error that takes rhs off the range of L (CG would stagnate on it)
    rhs = center_per_item(data, rhs)
    d = L.diagonal()
    precond = spla.LinearOperator((N, N), matvec=lambda v: v / d, dtype=float)
    s, info = spla.cg(L, rhs, rtol=1e-10, atol=0.0, maxiter=2 * N + 100, M=precond)
    s = s - s[first][data.cand_item]
    res = np.linalg.norm(L @ s - rhs)
    if info != 0 or not res <= 1e-7 * max(float(np.linalg.norm(rhs)), 1e-300):
        anchors = sp.csr_matrix((np.full(len(first), anchor_w), (first, first)), shape=(N, N))
        s = spla.spsolve((L + anchors).tocsc(), rhs)
    return s


@overload
def poe_gaussian(
    data: RankData,
    *,
    outcome: Outcome = ...,
    alpha: float | None = ...,
    beta: float | None = ...,
    sigma2: float | None = ...,
    f_mu: Callable[[np.ndarray], np.ndarray] | None = ...,
    f_sigma: Callable[[np.ndarray], np.ndarray] | None = ...,
    anchor_var: float | None = ...,
    debias: bool | Literal["balanced"] = ...,
    debias_by: BiasBy = ...,
    return_cov: Literal[False] = ...,
) -> np.ndarray: ...


@overload
def poe_gaussian(
    data: RankData,
    *,
    outcome: Outcome = ...,
    alpha: float | None = ...,
    beta: float | None = ...,
    sigma2: float | None = ...,
    f_mu: Callable[[np.ndarray], np.ndarray] | None = ...,
    f_sigma: Callable[[np.ndarray], np.ndarray] | None = ...,
    anchor_var: float | None = ...,
    debias: bool | Literal["balanced"] = ...,
    debias_by: BiasBy = ...,
    return_cov: Literal[True],
) -> tuple[np.ndarray, np.ndarray]: ...


@overload
def poe_gaussian(
    data: RankData,
    *,
    outcome: Outcome = ...,
    alpha: float | None = ...,
    beta: float | None = ...,
    sigma2: float | None = ...,
    f_mu: Callable[[np.ndarray], np.ndarray] | None = ...,
    f_sigma: Callable[[np.ndarray], np.ndarray] | None = ...,
    anchor_var: float | None = ...,
    debias: bool | Literal["balanced"] = ...,
    debias_by: BiasBy = ...,
    return_cov: bool = ...,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...


def poe_gaussian(
    data: RankData,
    *,
    outcome: Outcome = "soft",
    alpha: float | None = None,
    beta: float | None = None,
    sigma2: float | None = None,
    f_mu: Callable[[np.ndarray], np.ndarray] | None = None,
    f_sigma: Callable[[np.ndarray], np.ndarray] | None = None,
    anchor_var: float | None = None,
    debias: bool | Literal["balanced"] = False,
    debias_by: BiasBy = "item",
    return_cov: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Gaussian Product-of-Experts scores (Liusie et al. 2024 (PoE) §3.3-3.5, eq. 8-13).

    Comparison ``k`` is the expert ``N(s_i − s_j; μ_k, σ_k²)`` and the anchoring expert
    ``N(s_1; 0, σ_0²)`` fixes each item's first candidate.  The scores are the mean of the
    product,

    ``ŝ = μ*_s = (W̃ᵀ Σ̃⁻¹ W̃)⁻¹ W̃ᵀ Σ̃⁻¹ μ̃``                                   (eq. 8, 11)

    with ``μ_k = f_μ(p_k)``, ``σ_k² = f_σ(p_k)`` (eq. 6-7).  By default the experts have the
    linear mean ``f_μ(p) = α (p − β)`` and the constant variance ``σ²`` of §3.4, where this is
    ``ŝ = α (W̃ᵀ W̃)⁻¹ W̃ᵀ μ̃`` with ``μ̃ᵀ = [0, p_1 − β, ..., p_K − β]`` (eq. 12).  Since every row
    of ``W`` sums to zero, the anchor makes ``ŝ_1 = 0`` exactly in every item and does not
    change the score differences, whatever ``σ_0²``.

    Parameters
    ----------
    data : RankData
        ``K`` comparisons over ``N`` candidates (all items; the system is block-diagonal).
    outcome : {"soft", "hard"}
        Experts on the probabilities ``p_ij`` (PoE-g) or on the hard decisions ``y_ij``
        (PoE-g-hard, §4.2).
    alpha : float, optional
        Scale ``α`` of the linear mean (§3.4; it only rescales the scores); default 1.
    beta : float, optional
        Offset ``β`` of the linear mean; default 0.5 (an unbiased judge), or ``E[p_ij]`` when
        ``debias=True`` (eq. 13).  Giving both ``beta`` and ``debias=True`` is an error.
    sigma2 : float, optional
        Constant expert variance ``σ²`` (§3.4; it does not change ``ŝ``, only eq. 9); default 1.
    f_mu, f_sigma : callable, optional
        Vectorized ``f_μ(p)`` and ``f_σ(p)`` (mean and variance of the expert given ``p``,
        eq. 6-7) for the general form; ``f_mu`` replaces ``alpha`` / ``beta``, ``f_sigma``
        replaces ``sigma2`` (giving both a function and the parameter it replaces is an
        error).  With ``f_mu`` and ``debias=True`` the experts are shifted by
        ``γ = −E[f_μ(p_ij)]`` so that ``E[s_i − s_j] = 0`` (A.7, eq. 48).
    anchor_var : float, optional
        Variance ``σ_0²`` of the anchoring expert; default ``σ²`` (equal weight, as in eq. 12)
        or 1 with ``f_sigma``.
    debias : bool or "balanced"
        Debias for position bias with ``β = E[p_ij]`` (§3.5, eq. 13, A.7); ``"balanced"``: only in
        the groups whose positions are balanced
        (:func:`~bayes_judge.ranking.encode.position_imbalance`), the others keep ``β = ½``.
    debias_by : {"item", "judge"}
        Estimate ``E[p_ij]`` per (item, judge), as in the paper, or per judge over all items
        (see :func:`~bayes_judge.ranking.encode.position_bias`).
    return_cov : bool
        Also return the posterior covariance ``(W̃ᵀ Σ̃⁻¹ W̃)⁻¹`` (eq. 9) as a dense
        (N, N) array (block-diagonal over items; only for N ≤ 5000).

    Returns
    -------
    scores : ndarray, shape (N,)
        ``ŝ`` on the global candidate index; 0 for each item's first candidate.
    cov : ndarray, shape (N, N)
        Only with ``return_cov=True``.

    References
    ----------
    Liusie et al. 2024 (PoE), §3.3 eq. 5-12, §3.5 eq. 13, A.2, A.5, A.7; Zen et al. (2011).
    """
    x = data.outcome(outcome)
    if f_mu is None:
        if debias and beta is not None:
            raise ValueError("give either beta or debias=True (which sets beta = E[p_ij]), not both")
        b = (position_bias(data, x, by=debias_by, neutral=0.5 if debias == "balanced" else None) if debias
             else (0.5 if beta is None else beta))
        mu = (1.0 if alpha is None else alpha) * (x - b)
    else:
        if beta is not None or alpha is not None:
            raise ValueError("alpha and beta belong to the linear mean; with f_mu give the mean directly")
        mu = np.asarray(f_mu(x), dtype=float)
        if mu.shape != x.shape or not np.isfinite(mu).all():
            raise ValueError(
                f"f_mu must map the ({len(x)},) outcomes to as many finite means; got shape {mu.shape}"
            )
        if debias:
            mu = mu - position_bias(data, mu, by=debias_by, neutral=0.0 if debias == "balanced" else None)
    if f_sigma is None:
        sigma2 = 1.0 if sigma2 is None else sigma2
        if not (np.isfinite(sigma2) and sigma2 > 0):
            raise ValueError(f"sigma2 must be a positive variance, got {sigma2!r}")
        var = np.full(data.n_comparisons, float(sigma2))
        a0 = float(sigma2) if anchor_var is None else anchor_var
    else:
        if sigma2 is not None:
            raise ValueError("sigma2 is the constant variance; with f_sigma give the variances directly")
        var = np.asarray(f_sigma(x), dtype=float)
        if var.shape != x.shape or not (np.isfinite(var).all() and (var > 0).all()):
            raise ValueError(
                f"f_sigma must map the ({len(x)},) outcomes to as many finite positive variances; "
                f"got shape {var.shape}"
            )
        a0 = 1.0 if anchor_var is None else anchor_var
    if not (np.isfinite(a0) and a0 > 0):
        raise ValueError(f"anchor_var must be a positive variance, got {anchor_var!r}")

    w = 1.0 / var
    s = _solve_anchored(data, w, _wt(data, w * mu), anchor_w=1.0 / a0)
    s = check_finite_scores(data, s, "poe-g")
    if not return_cov:
        return s
    N = data.n_candidates
    if N > 5000:
        raise ValueError(f"return_cov builds a dense ({N}, {N}) matrix; only for N <= 5000")
    A = _laplacian(data, w).toarray()
    first = data.offsets[:-1]
    A[first, first] += 1.0 / a0
    return s, np.linalg.inv(A)


def _clip_probabilities(p: np.ndarray, *, clip: Clip, eps: float) -> np.ndarray:
    if not 0 < eps < 0.5:
        raise ValueError(f"eps must be in (0, 0.5), got {eps!r}")
    if clip == "none":
        return p
    outside = (p < eps) | (p > 1 - eps)
    if not outside.any():
        return p
    n_exact = int(((p == 0) | (p == 1)).sum())
    msg = (
        f"poe-bt: {int(outside.sum())} of {len(p)} probabilities p_ij lie outside "
        f"[{eps:g}, 1 - {eps:g}] ({n_exact} exactly 0 or 1); the soft Bradley-Terry expert "
        "(Z_ij = π / sin(π p_ij)) is defined only for 0 < p_ij < 1"
    )
    if clip == "error":
        raise ValueError(msg + "; clip them yourself, pass clip='warn', or use method='bt' for hard decisions")
    if clip != "warn":
        raise ValueError(f"clip must be 'warn', 'error' or 'none', got {clip!r}")
    warnings.warn(msg + f"; clipped to [{eps:g}, 1 - {eps:g}]", ClippedProbabilityWarning, stacklevel=3)
    return np.clip(p, eps, 1 - eps)


def _soft_bt_objective(d: np.ndarray, p: np.ndarray) -> float:
    """Σ_k p log σ(d) + (1 − p) log σ(−d): the log of the product of experts (up to Z)."""
    return float(np.sum(p * log_expit(d) + (1.0 - p) * log_expit(-d)))


def poe_bt(
    data: RankData,
    *,
    outcome: Outcome = "soft",
    gamma: float | None = None,
    debias: bool | Literal["balanced"] = False,
    debias_by: BiasBy = "item",
    clip: Clip = "warn",
    eps: float = 1e-6,
    solver: Literal["newton", "mm"] = "newton",
    tol: float = 1e-9,
    max_iter: int | None = None,
) -> np.ndarray:
    """Soft Bradley-Terry Product-of-Experts scores, PoE-BT (Liusie et al. 2024 (PoE) §3.2, §3.5, A.4, A.8).

    The scores are the mode of

    ``p(s | C_{1:K}) ∝ Π_k σ(s_i − s_j − γ)^{p_ij} (1 − σ(s_i − s_j − γ))^{1 − p_ij} / Z_ij``

    with ``Z_ij = π / sin(π p_ij)`` (eq. 4 with the §3.2 expert, shifted by γ as in eq. 55).
    This is the Bradley-Terry likelihood with fractional wins (A.4, eq. 28): concave in ``s``,
    with a unique mode up to a shift when ``0 < p_ij < 1`` and each item is connected.  The
    shift is fixed by centring every item's scores at mean zero (the paper leaves it free).

    Parameters
    ----------
    data : RankData
        ``K`` comparisons over ``N`` candidates (all items).
    outcome : {"soft", "hard"}
        Experts on ``p_ij`` or on the hard decisions ``y_ij`` (clipped like any 0 / 1).
    gamma : float, optional
        A known position bias ``γ`` (default 0; with ``debias=True``, estimated).
    debias : bool or "balanced"
        Set ``γ = −logit(E[p_ij])`` (A.8) from the clipped probabilities; ``"balanced"``: only in
        the groups whose positions are balanced, the others keep ``γ = 0``.
    debias_by : {"item", "judge"}
        Where ``E[p_ij]`` is estimated (see :func:`~bayes_judge.ranking.encode.position_bias`).
    clip : {"warn", "error", "none"}
        Probabilities outside ``[eps, 1 − eps]`` (in particular exactly 0 or 1, where ``Z_ij``
        is undefined) are clipped with a :class:`ClippedProbabilityWarning`, or refused with a
        ValueError.  ``"none"`` keeps them: the mode is then the hard Bradley-Terry MLE on
        those comparisons, which exists only if every item's win graph is strongly connected
        (checked).
    eps : float
        Clipping bound.
    solver : {"newton", "mm"}
        Newton's method with a backtracking line search, each step one sparse solve with the
        weighted Laplacian ``Wᵀ diag(σ'(d)) W`` (quadratic convergence; the default), or the
        soft Zermelo / MM iteration (Hunter 2004) with fractional wins.
    tol : float
        Newton: stop when the largest score step is below ``tol``; MM: when no score moves by
        more than ``tol`` in one sweep.
    max_iter : int, optional
        Default 100 Newton steps or 100 000 MM sweeps; a ``ConvergenceWarning`` when reached.

    Returns
    -------
    ndarray, shape (N,)
        MAP scores ``ŝ``, mean zero within every item.

    Raises
    ------
    ValueError
        ``clip="error"`` with probabilities to clip; a MAP that does not exist
        (``clip="none"``).
    FloatingPointError
        If the solver produces non-finite scores.

    References
    ----------
    Liusie et al. 2024 (PoE), §3.2 eq. 4, §3.5, A.4 eq. 22-28, A.8 eq. 52-60; Hunter (2004).
    """
    if solver not in ("newton", "mm"):
        raise ValueError(f"solver must be 'newton' or 'mm', got {solver!r}")
    if clip not in ("warn", "error", "none"):
        raise ValueError(f"clip must be 'warn', 'error' or 'none', got {clip!r}")
    p = _clip_probabilities(np.asarray(data.outcome(outcome), dtype=float), clip=clip, eps=eps)
    if debias and gamma is not None:
        raise ValueError("give either gamma or debias=True (which sets gamma = -logit(E[p_ij])), not both")
    if debias:
        m = position_bias(data, p, by=debias_by, neutral=0.5 if debias == "balanced" else None)
        if np.any((m <= 0) | (m >= 1)):
            raise ValueError("debias: E[p_ij] is 0 or 1 in some group, so gamma = -logit(E[p]) is infinite")
        g = -logit(m)
    else:
        g = np.full(data.n_comparisons, 0.0 if gamma is None else float(gamma))
    if clip == "none" and np.any((p <= 0) | (p >= 1)):
        beat_i, beat_j = p > 0, p < 1
        check_connected(
            data.n_candidates,
            np.concatenate([data.i[beat_i], data.j[beat_j]]),
            np.concatenate([data.j[beat_i], data.i[beat_j]]),
            names=data.candidates, group=data.cand_item, groups=data.items, directed=True, what="poe-bt: ",
        )

    if solver == "mm":
        s = mm_iterate(
            data, data.i, data.j, p, np.ones_like(p), theta=np.exp(-g), tol=tol,
            max_iter=100_000 if max_iter is None else max_iter, name="poe-bt",
        )
        return check_finite_scores(data, s, "poe-bt")

    s = np.zeros(data.n_candidates)
    f = _soft_bt_objective(-g, p)
    n_iter = 100 if max_iter is None else max_iter
    size = np.inf
    for _ in range(n_iter):
        q = expit(s[data.i] - s[data.j] - g)
        grad = _wt(data, p - q)
        step = center_per_item(data, _solve_anchored(data, np.maximum(q * (1.0 - q), 1e-300), grad))
        check_finite_scores(data, step, "poe-bt (Newton step)")
        size = float(np.max(np.abs(step)))
        slope = float(grad @ step)  # the Newton decrement squared: twice the predicted gain
        if size < tol or slope <= 1e-13 * max(1.0, abs(f)):
            # converged, or the predicted gain is at round-off level in f, where a line search
            # can no longer tell a better point (it would halve the step to nothing)
            return check_finite_scores(data, s + step, "poe-bt")
        # Armijo backtracking on the concave objective
        t = 1.0
        while True:
            s_new = s + t * step
            f_new = _soft_bt_objective(s_new[data.i] - s_new[data.j] - g, p)
            if f_new >= f + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        s, f = s_new, f_new
    warnings.warn(
        f"poe-bt: Newton did not converge in max_iter={n_iter} steps "
        f"(last step {size:.2e} > tol={tol:g})",
        ConvergenceWarning,
        stacklevel=2,
    )
    return check_finite_scores(data, s, "poe-bt")
