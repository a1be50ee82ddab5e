"""A start at the mode and a linear preconditioner from the curvature there, for a hand kernel.

nutpie adapts a diagonal mass matrix: it learns each coordinate's scale, not correlations.  In
the leaderboard model one direction couples a few global parameters with many scores (a judge's
accuracy trades against how far apart the systems are: at 1,000,000 comparisons the judges'
accuracies and tie thresholds correlate 0.9 with each other and −0.6 to −0.75 with the scores'
spread), and along it the chains mix slowly (effective sample sizes of 550-700 of 4,000 draws).
:func:`laplace_shear` finds the mode of the log density (L-BFGS on the kernel, some coordinates
held) and, on a few chosen directions ``V`` (unit vectors of the global parameters and the
direction of the scores at the mode), the Laplace approximation's precision ``H_V = −Vᵀ ∇² log p
V`` (central differences of the kernel's gradient, two evaluations a direction).  Its Cholesky
factor ``H_V = L Lᵀ`` gives the map ``B = L⁻ᵀ D^{1/2}`` (``D = diag H_V``) of a
:class:`bayes_judge._nutpie.Shear`: in the sampled coordinates the directions' precision at the
mode is ``Bᵀ H_V B = D``, the same scales, no correlation, and nutpie's diagonal adaptation
does the rest.  It is a fixed linear change of variables, so the posterior is exactly the
kernel's; where the mode or a positive-definite ``H_V`` cannot be found, the sampler runs on
the kernel's own coordinates from the given start.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._nutpie import Shear

__all__ = ["mode", "laplace_shear"]


def mode(logp_grad: Callable, buf: np.ndarray, x0: np.ndarray, free: np.ndarray, *,
         max_iter: int = 500) -> np.ndarray | None:
    """The mode of ``logp_grad`` over the coordinates where ``free`` is True, the others held
    at ``x0`` (L-BFGS-B); None where it fails or does not improve on ``x0``."""
    from scipy.optimize import minimize

    x = np.array(x0, dtype=np.float64)
    g = np.empty_like(x)
    idx = np.flatnonzero(free)

    def neg(y: np.ndarray) -> tuple[float, np.ndarray]:
        x[idx] = y
        lp = logp_grad(x, buf, g)
        if not (np.isfinite(lp) and np.all(np.isfinite(g[idx]))):
            return np.inf, np.zeros(len(idx))
        return -lp, -g[idx]

    start = neg(x0[idx].copy())[0]
    with np.errstate(all="ignore"):
        res = minimize(neg, x0[idx].copy(), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    if not (np.isfinite(res.fun) and res.fun <= start):
        return None
    out = np.array(x0, dtype=np.float64)
    out[idx] = res.x
    return out


def laplace_shear(logp_grad: Callable, buf: np.ndarray, x0: np.ndarray, free: np.ndarray,
                  directions: Callable[[np.ndarray], np.ndarray], *, step: float = 1e-5
                  ) -> tuple[np.ndarray, Shear | None]:
    """The start at the mode and a :class:`~bayes_judge._nutpie.Shear` from the curvature there
    (module docstring).

    Parameters
    ----------
    logp_grad : numba kernel ``(x, buf, grad) -> float``
    buf : its data buffer
    x0 : ndarray, shape (n,)
        The start on the kernel's coordinates; the coordinates where ``free`` is False keep it.
    free : ndarray of bool, shape (n,)
        The coordinates moved to the mode (a hierarchical scale and its raw effects are better
        held: their mode is the degenerate corner σ → 0).
    directions : callable ``x_mode -> (n, k) array``
        The directions to decorrelate, given the mode (orthonormalized here; zero columns dropped).
    step : central-difference step of the Hessian-vector products.

    Returns
    -------
    start : ndarray, shape (n,)
        The mode (``x0`` where none was found).
    shear : Shear or None
    """
    x_mode = mode(logp_grad, buf, x0, free)
    if x_mode is None:
        return np.array(x0, dtype=np.float64), None
    cols = np.asarray(directions(x_mode), dtype=np.float64)
    cols = cols[:, np.linalg.norm(cols, axis=0) > 0]
    if cols.shape[1] == 0:
        return x_mode, None
    V, _ = np.linalg.qr(cols)
    g_hi, g_lo = np.empty_like(x_mode), np.empty_like(x_mode)
    hv = np.empty((V.shape[1], V.shape[1]))
    for a in range(V.shape[1]):
        logp_grad(x_mode + step * V[:, a], buf, g_hi)
        logp_grad(x_mode - step * V[:, a], buf, g_lo)
        hv[:, a] = -V.T @ (g_hi - g_lo) / (2.0 * step)
    h = 0.5 * (hv + hv.T)
    try:
        chol = np.linalg.cholesky(h)
    except np.linalg.LinAlgError:
        return x_mode, None
    if not np.all(np.isfinite(chol)):
        return x_mode, None
    B = np.linalg.solve(chol.T, np.diag(np.sqrt(np.diag(h))))  # L⁻ᵀ D^{1/2}
    return x_mode, Shear(V=np.ascontiguousarray(V), B=B)
