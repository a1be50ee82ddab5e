"""An updated posterior from an earlier fit's draws: moved by the map between the two Laplace
approximations and importance-weighted.

When a few battles are added to a leaderboard, the new posterior is the old one a little narrower
and a little moved.  Reweighting the old draws by the new battles' likelihood alone fails: at
1,000,000 battles, 10% more of them move the scores by more than the draws spread
(``benchmarks/results/update_by_reweighting.md``: importance ESS 16 of 4,000, Pareto k-hat 1.97).
Moving the draws first by an affine map ``T`` that carries the old posterior's Laplace
approximation ``N(x̂₀, H₀⁻¹)`` onto the new one's ``N(x̂₁, H₁⁻¹)``, and weighing each moved draw
``y = T(x)`` by ``p₁(y) / p₀(x)`` (the map's Jacobian is a constant), keeps what the old draws
knew of the posterior's shape beyond a Gaussian and corrects the rest.  It is the affine
transformation of posterior draws of Paananen, Piironen, Bürkner & Vehtari (2021), "Implicitly
adaptive importance sampling", Statistics and Computing 31, arXiv:1906.08850 (Section 3), with
the map taken from the two Laplace approximations instead of the weighted moments, and the
weights Pareto-smoothed (Vehtari et al. 2024, "Pareto smoothed importance sampling", JMLR 25).

``T`` is the optimal-transport map between the two Gaussians, ``x ↦ x̂₁ + A (x − x̂₀)`` with the
symmetric ``A = H₀^{1/2} (H₀^{-1/2} H₁⁻¹ H₀^{-1/2})^{1/2} H₀^{1/2}``: a direction in which neither
posterior changes (the scores' common location, which only its prior sees) is left as it is.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gaussian_map", "transport_weights", "resample_within_chains", "MIN_SHARE", "SHIFT_BELOW"]

#: the least importance ESS, as a share of the draws, at which moved draws are kept; below it the
#: update is sampled afresh (at 1,000,000 battles with 10% new the share is 0.97-1.00:
#: ``benchmarks/results/bench_leaderboard_update.md``)
MIN_SHARE = 0.5
#: where the moved draws' importance ESS is under this share of them, they are shifted once more, by
#: their weighted mean's distance from their mean, and weighed again; the shift is kept where the
#: k-hat falls (the first of Paananen et al.'s adaptive transformations, Section 3.2).  The score
#: bridge at 1,000,000 battles with 10% labelled, 10% more: ESS 1,754 → 2,931 of 4,000, k-hat 0.28 →
#: 0.11 (a full covariance match from the weighted draws, 202 coordinates, fell to ESS 2)
SHIFT_BELOW = 0.9


def _sym_sqrt(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam, u = np.linalg.eigh(0.5 * (h + h.T))
    if not (np.all(np.isfinite(lam)) and lam[0] > 0):
        raise np.linalg.LinAlgError("not positive definite")
    return (u * np.sqrt(lam)) @ u.T, (u / np.sqrt(lam)) @ u.T


def gaussian_map(h_from: np.ndarray, h_to: np.ndarray) -> np.ndarray:
    """The linear part ``A`` of the optimal-transport map from ``N(·, h_from⁻¹)`` to
    ``N(·, h_to⁻¹)`` (module docstring): symmetric, ``A h_from⁻¹ A = h_to⁻¹``.

    Parameters
    ----------
    h_from, h_to : ndarray, shape (n, n)
        The two precisions (negative Hessians of the log densities at their modes).

    Raises
    ------
    numpy.linalg.LinAlgError
        Either is not positive definite.
    """
    r_from, r_from_inv = _sym_sqrt(h_from)  # H₀^{1/2}, H₀^{-1/2}
    middle = r_from_inv @ np.linalg.inv(0.5 * (h_to + h_to.T)) @ r_from_inv
    root, _ = _sym_sqrt(middle)
    return r_from @ root @ r_from


def transport_weights(lp_new: np.ndarray, lp_old: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Pareto-smoothed normalized importance weights of moved draws, their Pareto k-hat and
    importance ESS.

    Parameters
    ----------
    lp_new : ndarray, shape (S,)
        ``log p₁(T(x_s))``, the new posterior's log density at each moved draw (up to a constant).
    lp_old : ndarray, shape (S,)
        ``log p₀(x_s)``, the old posterior's at each draw before it moved (up to a constant).
    """
    from .laplace import _psis_weights

    w, k = _psis_weights(np.asarray(lp_new, float), np.asarray(lp_old, float))
    return w, k, float(1.0 / np.sum(w ** 2))


def resample_within_chains(w: np.ndarray, chains: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of systematic resampling within each chain, in the chain's order.

    Parameters
    ----------
    w : ndarray, shape (chains × draws,)
        Importance weights of the draws, chain by chain.
    chains : int
    rng : the generator of the resampling's one uniform a chain

    Returns
    -------
    ndarray of int, shape (chains, draws)
        Flat indices into ``w``: each chain's draws repeated in proportion to their weights
        within it, in order, so that a repeated draw sits beside itself and an ESS read off the
        chain counts it once.
    """
    w = np.asarray(w, float).reshape(chains, -1)
    draws = w.shape[1]
    out = np.empty((chains, draws), dtype=np.int64)
    for c in range(chains):  # a loop over the chains (4), each vectorized over its draws
        cw = np.cumsum(w[c] / w[c].sum())
        u = (rng.random() + np.arange(draws)) / draws
        out[c] = c * draws + np.minimum(np.searchsorted(cw, u), draws - 1)
    return out


def transport_draws(old: tuple, new: tuple, x_old: np.ndarray, *, kept: np.ndarray | None = None,
                    n_new: int | None = None, seed: int = 0, weigh_old: tuple | None = None,
                    weigh_new: tuple | None = None, lp_old: np.ndarray | None = None,
                    held: np.ndarray | None = None, threads: int | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """The earlier posterior's draws moved onto the new one, and their importance weights.

    Where the new posterior has coordinates the earlier one had not (a new system's score), the
    earlier coordinates are moved onto the new Laplace approximation's marginal of them, and the
    new ones drawn from its conditional given the moved ones, ``u ~ N(x̂ᵤ − Hᵤᵤ⁻¹ Hᵤᵥ (yᵥ − x̂ᵥ),
    Hᵤᵤ⁻¹)``, whose density enters the weights: ``p₁(y) / (p₀(x) N(u | yᵥ))``.

    Parameters
    ----------
    old, new : (kernel, buffer)
        The two posteriors' log densities on the same coordinates, cells in double precision (the
        modes and the curvatures there, :func:`bayes_judge.inference.laplace.hessian`).
    x_old : ndarray, shape (S, n₀)
        The earlier draws on the earlier kernel's coordinates.
    kept : ndarray of int, shape (n₀,), optional
        Where those coordinates sit among the new kernel's ``n_new`` (default: the same, in order).
    seed : the new coordinates' draws
    weigh_old, weigh_new : (kernel, buffer), optional
        The same densities as the samplers evaluate them (single-precision cells where the table
        qualifies): the weights need log densities only.  Default ``old`` and ``new``.
    lp_old : ndarray, shape (S,), optional
        ``log p₀`` at the draws (up to a constant), as the earlier sampler recorded it; default
        evaluated here.
    held : ndarray of int, optional
        Earlier coordinates that the map leaves as they are (a hierarchical scale, whose mode is a
        boundary: no Laplace approximation of it exists).  The modes and curvatures are then those
        of the other coordinates with the held ones at their draws' median ``r``, and each draw's
        other coordinates move between its own conditional modes, ``x̂ − H_FF⁻¹ H_Fh (h − r)``
        before and after: the map stays affine with a constant Jacobian, and the weights correct
        what the linear conditional modes miss.

    Returns
    -------
    y : ndarray, shape (S, n_new)
        The moved draws ``x̂₁ + A (x − x̂₀)`` (:func:`gaussian_map`; with new coordinates, onto
        their marginal, and the new ones drawn as above).
    lp_new : ndarray, shape (S,)
        ``log p₁(y)`` (``weigh_new``'s).
    w : ndarray, shape (S,)
        Their Pareto-smoothed normalized weights ``∝ p₁(y) / p₀(x)``.
    info : dict
        ``pareto_k``, ``ess_importance``, ``shift`` (how far the mode moved, in the earlier
        Laplace approximation's standard deviations), ``n_grad`` (gradients for the modes and
        curvatures) and ``mean_shifted`` (whether the draws were shifted once more by their
        weighted mean, :data:`SHIFT_BELOW`).

    Raises
    ------
    ValueError
        No mode was found, or a curvature is not positive definite (no Laplace approximation to
        map between): the caller samples afresh.
    """
    from .laplace import _logp_many, hessian, mode

    (k0, b0), (k1, b1) = old, new
    x_old = np.asarray(x_old, dtype=np.float64)
    n0 = x_old.shape[1]
    n1 = n0 if n_new is None else int(n_new)
    v = np.arange(n0) if kept is None else np.asarray(kept, dtype=np.int64)
    u = np.setdiff1d(np.arange(n1), v)
    hv = np.zeros(0, dtype=np.int64) if held is None else np.asarray(held, dtype=np.int64)  # among the old coordinates
    f0, f1 = np.ones(n0, dtype=bool), np.ones(n1, dtype=bool)
    f0[hv], f1[v[hv]] = False, False
    start0 = x_old.mean(axis=0)
    start0[hv] = np.median(x_old[:, hv], axis=0)  # r: where the held coordinates sit for both modes
    m0 = mode(k0, b0, start0, f0, max_iter=2000)
    m1 = None
    if m0 is not None:
        start = np.zeros(n1)
        start[v] = m0
        m1 = mode(k1, b1, start, f1, max_iter=2000)
    if m0 is None or m1 is None:
        raise ValueError("no mode of the earlier or the new posterior was found from the earlier draws")
    h0, h1 = hessian(k0, b0, m0, threads=threads), hessian(k1, b1, m1, threads=threads)
    F0, F1 = np.flatnonzero(f0), np.flatnonzero(f1)
    H0, H1 = h0[np.ix_(F0, F0)], h1[np.ix_(F1, F1)]  # the free coordinates' precisions given the held ones
    try:
        # each draw's conditional modes given its held coordinates: x̂_F − H_FF⁻¹ H_Fh (h − r)
        dh = x_old[:, hv] - m0[hv]
        M0 = m0[F0] - dh @ np.linalg.solve(H0, h0[np.ix_(F0, hv)]).T
        M1 = m1[F1] - dh @ np.linalg.solve(H1, h1[np.ix_(F1, v[hv])]).T
    except np.linalg.LinAlgError:
        raise ValueError("a posterior's curvature at its mode is singular") from None
    where1 = np.full(n1, -1, dtype=np.int64)
    where1[F1] = np.arange(len(F1))
    vf, uf = where1[v[F0]], where1[u]  # the earlier free coordinates and the new ones, among the new free
    xf = x_old[:, F0]
    y = np.empty((len(x_old), n1))
    y[:, v[hv]] = x_old[:, hv]  # the held coordinates stay
    yf = np.empty((len(x_old), len(F1)))
    lq_new = 0.0  # log N(u | y_v), up to a constant, where there are new coordinates
    try:
        if len(u) == 0:
            yf[:, vf] = M1[:, vf] + (xf - M0) @ gaussian_map(H0, H1[np.ix_(vf, vf)])  # the map is symmetric
        else:  # onto the new marginal of the earlier coordinates, then the new ones given them
            cov1 = np.linalg.inv(H1)
            yf[:, vf] = M1[:, vf] + (xf - M0) @ gaussian_map(H0, np.linalg.inv(cov1[np.ix_(vf, vf)]))
            h_uu = H1[np.ix_(uf, uf)]
            chol = np.linalg.cholesky(h_uu)
            mean_u = M1[:, uf] - np.linalg.solve(h_uu, H1[np.ix_(uf, vf)] @ (yf[:, vf] - M1[:, vf]).T).T
            eps = np.random.default_rng(seed).standard_normal((len(x_old), len(u)))
            yf[:, uf] = mean_u + np.linalg.solve(chol.T, eps.T).T  # L⁻ᵀ ε ~ N(0, H_uu⁻¹)
            lq_new = -0.5 * np.einsum("ij,ij->i", eps, eps)
    except np.linalg.LinAlgError:
        raise ValueError("a posterior's curvature at its mode is not positive definite") from None
    y[:, F1] = yf
    kw1, bw1 = weigh_new or new
    lp_new = _logp_many(kw1, bw1, y, threads)
    if lp_old is None:
        kw0, bw0 = weigh_old or old
        lp_old = _logp_many(kw0, bw0, x_old, threads)
    w, k, ess = transport_weights(lp_new, lp_old + lq_new)
    shifted = False
    if ess < SHIFT_BELOW * len(y):  # the weighted mean's distance, moved by once (SHIFT_BELOW)
        y2 = y + (w @ y - y.mean(axis=0))
        lp2 = _logp_many(kw1, bw1, y2, threads)
        w2, k2, ess2 = transport_weights(lp2, lp_old + lq_new)
        if k2 < k:
            y, lp_new, w, k, ess, shifted = y2, lp2, w2, k2, ess2, True
    d = m1[v] - m0
    info = {"pareto_k": k, "ess_importance": ess, "shift": float(np.sqrt(max(d @ h0 @ d, 0.0))),
            "n_grad": n0 + n1 + 2, "new_coordinates": len(u), "mean_shifted": shifted}
    return y, lp_new, w, info
