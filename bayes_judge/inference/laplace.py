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
:class:`bayes_judge.inference._nutpie.Shear`: in the sampled coordinates the directions' precision at the
mode is ``Bᵀ H_V B = D``, the same scales, no correlation, and nutpie's diagonal adaptation
does the rest.  It is a fixed linear change of variables, so the posterior is exactly the
kernel's; where the mode or a positive-definite ``H_V`` cannot be found, the sampler runs on
the kernel's own coordinates from the given start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._nutpie import Shear

__all__ = ["mode", "laplace_shear", "hessian", "curvature_at", "laplace_draws", "approximation_note",
           "approximate_attrs", "cap_ess", "k_max", "K_MAX"]

#: the largest Pareto k-hat at which importance weights are trusted (Vehtari et al. 2024)
K_MAX = 0.7
#: proposals weighed first (half as many from ``CURVED_FROM`` coordinates on); where their weights
#: are nearly equal (k-hat <= 0.3, ESS >= 90%) the Gaussian's draws are returned as they are.  Each
#: Stein step's pilot is ``PILOT``: pilots of 250 where the first pilot's ESS share was under a
#: quarter weighed 23-45% fewer proposals at 1,000,000 battles without labels, but on the bundled
#: HANNA leaderboard (11 systems, no labels) their steps left an importance ESS of 436 of 4,000
#: (endpoints within 10% of NUTS's width for 91% of the systems) where pilots of 1,000 leave 931
#: (100%).  A step with the curvature at its new mean needs only the pilot's mean gradient: at
#: 1,000,000 battles without labels the moved proposal's pilot keeps an ESS of 735-743 of 1,000
#: from a first pilot of 500 (seeds 1-5), 732-745 from one of 1,000; the halving goes with the
#: curvature (``CURVED_FROM``)
PILOT = 1000
#: otherwise more proposals are weighed until their importance ESS reaches this share of the
#: draws asked for (or all are weighed): at an ESS of 1,000 a 90% interval's endpoint moves by about
#: 2% of its width from one seed to the next
ESS_SHARE = 0.25
#: each round weighs as many proposals as the ESS so far says the target needs (the ESS of weights
#: from one proposal grows in proportion to their number), times this margin, at least a quarter of
#: a pilot more and at most twice as many (where the k-hat is not yet trusted: twice as many).  The
#: loop checks the ESS itself, so a round that falls short only adds one more: at 1,000,000 battles
#: with 10% labels 1.2 overshot the ESS of 1,000 by 15-22% (ESS 1,145-1,215), 1.05 by 0-6%
#: (1,004-1,062) with 12.5% fewer proposals weighed (five seeds)
GROW_MARGIN = 1.05
#: where the pilot's importance ESS is under this share of its proposals, the proposal is moved
#: toward the posterior (:meth:`_Proposal.stein_step`), with at most ``ADAPT_ROUNDS`` pilots
ADAPT_BELOW = 0.5
ADAPT_ROUNDS = 4
#: from this many coordinates on, a Stein step's Gaussian takes the curvature at its new mean
#: (:func:`curvature_at`): the mismatch of the Laplace approximation's covariance, small in each
#: direction, adds up over hundreds of them (1,000,000 battles without labels, 208 coordinates: the
#: first step's pilot keeps an importance ESS of 735-743 of 1,000 against 451-482, and with the
#: pilot at the mode halved (``PILOT``) a refit weighs 1,923 proposals where it weighed 3,250).  In
#: a few dimensions, where a fit takes a second, it is a wash (the bundled leaderboards without
#: labels, 17-18 coordinates, seeds 1-16, ``benchmarks/bench_leaderboard_laplace.py --real --seeds
#: 16 --curved-from 0``: SummEval's endpoints within 10% of NUTS's width for 92% of the systems
#: against 94%, one fit of 16 NOT corrected against four; HANNA 99% either way), and the steps
#: there are as they were
CURVED_FROM = 100
#: the Laplace approximation's share of the proposals once moved (a defensive mixture)
DEFENSIVE = 0.1
#: the spread of that share against the Laplace approximation's (a wider defensive component
#: bounds the weights where the posterior's tails are heavier than either Gaussian's)
WIDEN = 1.5
#: fewer draws than this are returned unweighed (Pareto smoothing needs a tail to fit), and said so
MIN_WEIGHTS = 20


def k_max(n_proposals: int) -> float:
    """The largest Pareto k-hat trusted from ``n_proposals`` importance weights: ``min(0.7,
    1 − 1/log10 S)`` (Vehtari et al. 2024; 0.67 at 1,000, 0.57 at 200; no trust below 11)."""
    s = int(n_proposals)
    return float(min(K_MAX, 1.0 - 1.0 / np.log10(s))) if s > 10 else 0.0


#: L-BFGS-B's relative tolerance on the log density for :func:`mode`.  SciPy's default (2.2e-9)
#: is relative to the log density's size, about -8e5 at 1,000,000 battles: it stopped where an
#: iteration gained under 2e-3, which on the ridge where a judge's accuracy trades against the
#: scores' spread left a Laplace update (started from the earlier accuracies) at accuracies 1.5×
#: the mode's (``bench_leaderboard_update.py``, no labels: scores 14 posterior sd from a cold fit's).
#: At 1e-14 the cold fit takes 185 iterations, not 112, in the same time, and the update finds the
#: same mode.
MODE_FTOL = 1e-14


def mode(logp_grad: Callable, buf: np.ndarray, x0: np.ndarray, free: np.ndarray, *,
         max_iter: int = 500) -> np.ndarray | None:
    """The mode of ``logp_grad`` over the coordinates where ``free`` is True, the others held
    at ``x0`` (L-BFGS-B, to :data:`MODE_FTOL`); None where it fails or does not improve on ``x0``."""
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
        res = minimize(neg, x0[idx].copy(), jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "ftol": MODE_FTOL})
    if not (np.isfinite(res.fun) and res.fun <= start):
        return None
    out = np.array(x0, dtype=np.float64)
    out[idx] = res.x
    return out


def laplace_shear(logp_grad: Callable, buf: np.ndarray, x0: np.ndarray, free: np.ndarray,
                  directions: Callable[[np.ndarray], np.ndarray], *, step: float = 1e-5
                  ) -> tuple[np.ndarray, Shear | None]:
    """The start at the mode and a :class:`~bayes_judge.inference._nutpie.Shear` from the curvature there
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


def hessian(logp_grad: Callable, buf: np.ndarray, x: np.ndarray, *, step: float = 1e-5,
            threads: int | None = None) -> np.ndarray:
    """``−∇² log p`` at ``x`` by forward differences of the kernel's gradient (``n + 1``
    evaluations, the columns shared among ``threads`` threads: the numba kernels release the GIL),
    symmetrized.

    Forward differences take half the evaluations of central ones; their error, ``step / 2`` times
    the third derivative, is about 1e-5 of the largest entry at the default step (a leaderboard of
    200 systems and 1,000,000 comparisons: the posterior standard deviations it implies within
    2e-4 of the central differences', the importance weights then correcting the Gaussian by far
    more).
    """
    n = x.shape[0]
    h = np.empty((n, n))
    x0 = np.array(x, dtype=np.float64)
    g0 = np.empty(n)
    logp_grad(x0, buf, g0)

    def columns(cols: range) -> None:
        g = np.empty(n)
        xp = x0.copy()
        for i in cols:
            xp[i] = x0[i] + step
            logp_grad(xp, buf, g)
            xp[i] = x0[i]
            h[:, i] = -(g - g0) / step

    _on_threads(columns, n, threads)
    return 0.5 * (h + h.T)


def _on_threads(work: Callable[[range], None], n: int, threads: int | None) -> None:
    """``work`` over ``range(n)`` in strided parts, one per thread (up to 4, at most the CPUs)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    threads = max(1, min(threads or min(4, os.cpu_count() or 1), n))
    if threads == 1:
        work(range(n))
        return
    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(work, [range(i, n, threads) for i in range(threads)]))


def laplace_draws(logp_grad: Callable, buf: np.ndarray, x0: np.ndarray, *, chains: int, draws: int, seed: int,
                  importance: bool = True, threads: int | None = None, scale: float = 1.0,
                  weigh: tuple[Callable, np.ndarray] | None = None) -> tuple[np.ndarray, dict]:
    """Draws of the Laplace approximation ``N(x̂, H⁻¹)`` of the kernel's density on its
    (unconstrained) coordinates: ``x̂`` its mode (:func:`mode`, L-BFGS from ``x0``), ``H`` the
    negative Hessian there (:func:`hessian`).

    With ``importance`` (default) the Gaussian is the proposal of Pareto-smoothed importance
    resampling (Vehtari et al. 2024, "Pareto smoothed importance sampling", JMLR 25): each proposal
    is weighted by ``p(x) / q(x)`` (one evaluation of the kernel each, on ``threads`` threads), the
    weights' tail is smoothed (ArviZ's ``psislw``), and ``chains × draws`` draws are taken from the
    weighted proposals by systematic resampling. This removes most of the Gaussian's error where
    the posterior is skewed (a judge's accuracy against the scores' spread: the mode's scores are
    pulled in); the Pareto ``k̂`` of the weights says how far to trust it. Above ``K_MAX`` (0.7) the
    weights are not trusted either, and the Gaussian's own draws are returned (``info["resampled"]``
    False): the caller should say the approximation failed. The first ``PILOT`` proposals (half as
    many from ``CURVED_FROM`` coordinates on) are weighed first; where their weights are nearly
    equal the Gaussian is taken as it is (``info["gaussian"]``) and the other proposals are not
    weighed.  Where their importance ESS is under ``ADAPT_BELOW`` (half) of them, the posterior
    leans away from the Gaussian in some direction (in the leaderboard without labels the scores'
    volume grows with their spread, and the mean sits two standard deviations from the mode along
    it: an ESS of 4-60 of 1,000 proposals), and the proposal is moved toward it by Stein steps
    from the pilot's own gradients (:meth:`_Proposal.stein_step`, from ``CURVED_FROM``
    coordinates on with the curvature at the moved mean, :func:`curvature_at`; a fresh pilot each,
    kept where its ESS is higher and its k-hat no higher (or under 0.5), else tried again at half
    the length; ``ADAPT_ROUNDS`` pilots at most, and none once one more pilot of the kept proposal
    would complete the ESS asked for;
    ``info["adapted"]`` counts the steps kept, ``info["tries"]`` the pilots).  Every pilot's weighed
    draws, of a step kept or not, stay in a pool (:class:`_Pool`: each proposal's self-normalized
    weights, those with a trusted k-hat mixed in proportion to their ESS).  Then the kept
    proposal's draws weighed grow (to what the ESS so far says is needed, ``GROW_MARGIN``; doubling
    at most) until the pool's importance ESS reaches ``ESS_SHARE`` (¼) of the draws and the kept
    proposal's k-hat is trusted (``info["proposals"]`` says how many draws the pool holds,
    ``info["pooled"]`` of how many proposals, ``info["evaluated"]`` how many were weighed in all,
    the pilots left out for an untrusted k-hat included), and the draws are resampled from the pool.
    ``weigh``, a kernel and its
    buffer of the same density on the same coordinates, evaluates the weights instead of
    ``logp_grad``: the leaderboard's kernel with its cells in single precision, about 1.8× faster
    (``benchmarks/bench_leaderboard_precision.py``); its rounding, about 1e-8 of the log density,
    is far below the spread of the log weights, while the mode and the curvature (differences of
    gradients) stay in double precision.

    Returns the draws, shape (chains, draws, n), and ``{"mode", "logp_mode", "min_eig", "n_grad",
    "pareto_k", "ess_importance", "resampled", "gaussian", "proposals", "evaluated", "adapted", "shift",
    "tries", "pooled"}`` (``pareto_k`` the largest of the pooled proposals'; ``pareto_k`` and
    ``ess_importance`` NaN without ``importance``).

    Raises
    ------
    ValueError
        No mode was found from ``x0``, or ``H`` is not positive definite there (a flat direction:
        the model is not identified, or its mode is a boundary such as a hierarchical scale at 0).
    """
    n = x0.shape[0]
    x_mode = mode(logp_grad, buf, np.asarray(x0, dtype=np.float64), np.ones(n, dtype=bool), max_iter=2000)
    if x_mode is None:
        raise ValueError("the Laplace approximation found no mode of the posterior from its start; use NUTS")
    h = hessian(logp_grad, buf, x_mode, threads=threads)
    eig = np.linalg.eigvalsh(h)
    if not (np.all(np.isfinite(h)) and eig[0] > 0):
        raise ValueError(f"the posterior's curvature at its mode is not positive definite (smallest eigenvalue "
                         f"{eig[0]:.3g}): the Laplace approximation does not exist here; use NUTS")
    chol = np.linalg.cholesky(h)  # H = L Lᵀ, so x̂ + L⁻ᵀ ε ~ N(x̂, H⁻¹)
    total = chains * draws
    rng = np.random.default_rng(seed)
    g = np.empty(n)
    lp_mode = float(logp_grad(x_mode, buf, g))
    info = {"mode": x_mode, "logp_mode": lp_mode, "min_eig": float(eig[0]), "n_grad": n + 1,
            "pareto_k": float("nan"), "ess_importance": float("nan"), "resampled": False, "gaussian": False,
            "proposals": 0, "evaluated": 0, "adapted": 0, "shift": 0.0, "tries": 0, "pooled": 1}
    from scipy.linalg import solve_triangular

    A0 = solve_triangular(chol.T, np.eye(n), lower=False) * scale  # z = x̂ + A0 ε
    prop = _Proposal.laplace(n)
    eps, eps1, lq = prop.draw(rng, total)
    z = gaussian = x_mode + eps @ A0.T
    if not importance or total < MIN_WEIGHTS:  # too few to weigh (PSIS fits a tail to them)
        info["unchecked"] = importance
        return z.reshape(chains, draws, n), info
    w_kern, w_buf = weigh if weigh is not None else (logp_grad, buf)

    # a pilot first (PILOT proposals; half as many where a step takes the curvature, which needs only
    # its mean gradient): where the Gaussian already is the posterior (weights nearly equal) the
    # other proposals need no weighing
    curved = n >= CURVED_FROM  # the steps take the curvature at their new mean
    m = min(total, PILOT // 2 if curved else PILOT)
    lp, grad = _logp_many(w_kern, w_buf, z[:m], threads, gradients=True)
    w, k = _psis_weights(lp, lq[:m])
    ess = 1.0 / np.sum(w ** 2)
    evaluated = m
    info["proposals"] = info["evaluated"] = evaluated
    if k <= 0.3 and ess >= 0.9 * m:
        info.update(pareto_k=k, ess_importance=ess * total / m, gaussian=True)
        return z.reshape(chains, draws, n), info
    # far from Gaussian: move the proposal toward the posterior along the direction its log weights
    # rise (ADAPT_ROUNDS at most, each a fresh pilot, kept where its ESS is higher and its weights'
    # tail no heavier).  Every pilot's weighed draws stay in the pool (_Pool): a step's pilot is
    # an importance sample of its own proposal whether or not the step is kept
    pool = _Pool()
    pool.add(z[:m], w, k)
    cur, tries, damp = 0, 0, 1.0  # cur: the pool's entry of the kept proposal
    target = ESS_SHARE * total
    # (and only while growing the kept proposal, trusted, to twice its draws within the total would
    # not complete the pool: a step then costs a pilot where the growth costs less)
    def grows_enough() -> bool:
        return k <= k_max(m) and pool.ess(but=cur) + ess * min(2 * m, total) / m >= target

    def curvature(mean: np.ndarray) -> np.ndarray:  # a moved proposal's, at its mean
        return curvature_at(logp_grad, buf, x_mode, A0, mean, threads=threads)

    while ess < ADAPT_BELOW * m and tries < ADAPT_ROUNDS and not grows_enough():
        tries += 1
        new, _ = prop.stein_step(eps1[:m], grad @ A0, damp=damp, curvature=curvature if curved else None)
        if new is prop:
            break
        m_n = min(total, PILOT)
        eps_n, eps1_n, lq_n = new.draw(rng, m_n)  # a pilot's worth; more once it is kept and needed
        z_n = x_mode + eps_n @ A0.T
        lp_n, grad_n = _logp_many(w_kern, w_buf, z_n, threads, gradients=True)
        evaluated += m_n
        w_n, k_n = _psis_weights(lp_n, lq_n)
        ess_n = 1.0 / np.sum(w_n ** 2)
        pool.add(z_n, w_n, k_n)
        if not (ess_n / m_n > ess / m and k_n <= max(k, 0.5)):
            damp /= 2.0  # overshot (the log weights curve away from their linear tilt): a shorter step
            continue
        prop, eps, eps1, lq, z, lp, grad, w, k, ess = new, eps_n, eps1_n, lq_n, z_n, lp_n, grad_n, w_n, k_n, ess_n
        m = m_n
        cur = len(pool.z) - 1
        info["adapted"] += 1
        damp = 1.0
    info["tries"] = tries
    info["shift"] = float(np.linalg.norm(prop.m))  # the moved Gaussian's mean, in the Laplace approximation's sds

    def extend(size: int) -> None:  # the kept proposal's draws, up to ``size``
        nonlocal eps, eps1, lq, z
        if len(z) < size:
            e, e1, q = prop.draw(rng, size - len(z))
            eps, eps1, lq, z = np.r_[eps, e], np.r_[eps1, e1], np.r_[lq, q], np.r_[z, x_mode + e @ A0.T]

    # more of the kept proposal's draws until the pool's importance ESS is ESS_SHARE of the draws and
    # the kept proposal's k-hat is trusted (a k-hat from fewer weights is the noisier): as many as the
    # ESS so far says are needed, with a margin (doubling weighed 2,000 where 1,550-1,650 reach it at
    # 1M battles with labels)
    others = pool.ess(but=cur)
    while m < total and (others + ess < target or k > k_max(m)):
        need = GROW_MARGIN * m * (target - others) / max(ess, 1.0) if k <= k_max(m) else 2.0 * m
        m2 = int(min(total, 2 * m, max(m + PILOT // 4, np.ceil(need))))
        extend(m2)
        lp = np.concatenate([lp, _logp_many(w_kern, w_buf, z[m:m2], threads)])
        evaluated += m2 - m
        m = m2
        w, k = _psis_weights(lp, lq[:m])
        ess = 1.0 / np.sum(w ** 2)
    pool.set(cur, z[:m], w, k)
    info.update(pareto_k=k, ess_importance=float(ess), proposals=m, evaluated=evaluated, pooled=1)
    if k <= k_max(m):  # else the weights cannot be trusted either: the proposal's own draws, flagged
        zs, w_all, used = pool.weights()
        info.update(pareto_k=float(max(pool.k[i] for i in used)), ess_importance=pool.ess(),
                    proposals=int(sum(len(pool.z[i]) for i in used)), pooled=len(used))
        u = (rng.random() + np.arange(total)) / total  # systematic resampling
        idx = np.minimum(np.searchsorted(np.cumsum(w_all), u), len(zs) - 1)
        z = zs[rng.permutation(idx)]
        info["resampled"] = True
    else:  # the Gaussian at the mode, as the note says (not a moved proposal whose weights failed too)
        z = gaussian
    return z.reshape(chains, draws, n), info


class _Proposal:
    """The proposal on the Laplace approximation's standardized coordinates ``ε``
    (``z = x̂ + L⁻ᵀ ε``, where the Laplace approximation is ``N(0, I)``).

    After Stein steps it is the defensive mixture (Hesterberg 1995, "Weighted average importance
    sampling and defensive mixture distributions", Technometrics 37) ``(1 − δ) N(m, B Bᵀ) + δ N(0,
    w² I)``: the moved Gaussian, and the Laplace approximation widened by ``w`` (``WIDEN``) on every
    ``1/δ``-th proposal (``DEFENSIVE``): in a few dimensions it covers a tail the move would cut
    (a Gaussian-experts ranking's moved proposal had k-hat 0.87 at 4,000 proposals without it, and
    the move is now rejected there), and a pilot whose move cut a tail shows it in its k-hat; in
    hundreds of dimensions its proposals carry next to no weight (a leaderboard's: about 1e-8 of
    it), so the move costs a tenth of the proposals weighed.  Before any step it is ``N(0, I)``.
    """

    def __init__(self, m: np.ndarray, B: np.ndarray, logdet: float, share: float) -> None:
        self.m, self.B, self.logdet, self.share = m, B, logdet, share

    @classmethod
    def laplace(cls, n: int) -> _Proposal:
        return cls(np.zeros(n), np.eye(n), 0.0, 0.0)

    def draw(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` proposals: ``ε`` (size, n), the moved Gaussian's own standardized coordinates
        ``ε₁ = B⁻¹(ε − m)``, and ``log q(ε)`` up to a constant."""
        e = rng.standard_normal((size, len(self.m)))
        if self.share == 0.0:
            return e, e, -0.5 * np.einsum("ij,ij->i", e, e)
        base = np.arange(size) % round(1.0 / self.share) == 0  # the Laplace approximation's proposals
        w = WIDEN
        eps = np.where(base[:, None], w * e, self.m + e @ self.B.T)  # a wider Laplace approximation, or the moved one
        eps1 = e.copy()
        eps1[base] = np.linalg.solve(self.B, (eps[base] - self.m).T).T
        lq = np.logaddexp(np.log1p(-self.share) - 0.5 * np.einsum("ij,ij->i", eps1, eps1) - self.logdet,
                          np.log(self.share) - 0.5 * np.einsum("ij,ij->i", eps, eps) / w ** 2 - len(self.m) * np.log(w))
        return eps, eps1, lq

    def stein_step(self, eps1: np.ndarray, grad: np.ndarray, *, damp: float = 1.0,
                   curvature: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[_Proposal, float]:
        """The moved Gaussian moved by one more step toward the Gaussian that matches the posterior.

        In its own standardized coordinates ``ε₁`` the log weight ``ℓ(ε₁) = log p + ½|ε₁|²`` (up to
        a constant) has, by Stein's identity, the mean gradient ``b = E[∇ℓ] = E[Bᵀ∇_ε log p + ε₁]``
        and, along ``u = b/|b|``, the mean curvature ``c = E[(uᵀ∇ℓ)(uᵀε₁)]`` (from the proposals'
        own gradients, no extra evaluation; the Laplace approximation's proposals of a mixture are
        left out, as they are not its draws).  The Gaussian tilted by ``exp(bᵀε₁ + ½ c (uᵀε₁)²)``
        is Gaussian again: precision ``1 − c`` along ``u`` (clipped to [¼, 1]: never narrower,
        so a tail is not cut), mean ``(I − c uuᵀ)⁻¹ b``.  Where the posterior leans off the mode in
        one direction (a judge's accuracy against the scores' spread, where the scores' volume
        grows with their spread) this moves the proposal onto it.

        With ``curvature`` (``m ↦ P``, the negative Hessian of ``log p`` at ``ε = m``, shape (n, n);
        :func:`curvature_at`) the moved Gaussian also takes the posterior's curvature at its new
        mean, where the mass is, in every direction (one more Hessian, ``n + 1`` gradients, against
        a pilot's ``PILOT`` evaluations): on the coordinates of the Gaussian widened along ``u``,
        ``B``, its precision ``Bᵀ P B = U diag(λ) Uᵀ`` with ``λ`` clipped at 1, so it is nowhere
        narrower than that Gaussian (a tail the curvature at one point would cut: unclipped, on the
        bundled SummEval leaderboard without labels, more fits failed their k-hat than before);
        where ``P`` is not finite or not positive definite there, the widened Gaussian as it is.
        ``laplace_draws`` passes it from ``CURVED_FROM`` coordinates on (measured there).

        Parameters
        ----------
        eps1 : (S, n) the proposals' ``ε₁``
        grad : (S, n) ``∇_ε log p`` at them (the kernel's gradient times ``L⁻ᵀ``)

        Returns the new proposal and the length of the step (in the moved Gaussian's standard
        deviations).
        """
        own = (np.arange(len(eps1)) % round(1.0 / self.share) != 0) if self.share else slice(None)
        e1 = eps1[own]
        gw = grad[own] @ self.B + e1  # ∇ℓ at each of the moved Gaussian's proposals
        b = gw.mean(axis=0)
        size = float(np.linalg.norm(b))
        if not np.isfinite(size) or size == 0:
            return self, 0.0
        u = b / size
        c = float(np.mean((gw @ u) * (e1 @ u)))
        p_u = float(np.clip(1.0 - c, 0.25, 1.0))
        step = damp * (b + (1.0 / p_u - 1.0) * u * (u @ b))
        mean = self.m + self.B @ step
        widen = 1.0 / np.sqrt(p_u) - 1.0
        B = self.B + widen * np.outer(self.B @ u, u)
        logdet = self.logdet + float(np.log1p(widen))
        if curvature is not None:  # its precision on B's coordinates, Bᵀ P B = U diag(λ) Uᵀ, clipped at 1
            P = B.T @ curvature(mean) @ B
            if np.all(np.isfinite(P)):
                lam, U = np.linalg.eigh(0.5 * (P + P.T))
                if lam[0] > 0:  # else not positive definite there: B as it is
                    lam = np.minimum(lam, 1.0)
                    B, logdet = B @ (U / np.sqrt(lam)), logdet - 0.5 * float(np.sum(np.log(lam)))
        return _Proposal(mean, B, logdet, DEFENSIVE), float(np.linalg.norm(step))


def curvature_at(logp_grad: Callable, buf: np.ndarray, x_mode: np.ndarray, A: np.ndarray, mean: np.ndarray, *,
                 threads: int | None = None) -> np.ndarray:
    """The negative Hessian of ``log p`` at ``ε = mean`` on the Laplace approximation's standardized
    coordinates ``ε`` (``x = x̂ + A ε``): ``Aᵀ H(x̂ + A m) A`` (:func:`hessian`, ``n + 1``
    gradients), shape (n, n); the identity at the mode where ``A = L⁻ᵀ`` (``H(x̂) = L Lᵀ``)."""
    return A.T @ hessian(logp_grad, buf, x_mode + A @ mean, threads=threads) @ A


class _Pool:
    """The weighed draws of every proposal tried (the Laplace approximation's pilot, each Stein
    step's pilot, kept or not, and the kept proposal's draws), combined.

    Each proposal's draws are an importance sample of the posterior on their own (Pareto-smoothed
    weights ``w_j``, normalized within it, importance ESS ``n_j``); those whose k-hat is trusted
    (:func:`k_max` of their number) are mixed in proportion to their ESS, ``λ_j = n_j / Σ n``: the
    weighted mean of independent estimates, each weighed by its precision, whose ESS is ``Σ n_j``.
    At 1,000,000 battles without labels the pilots of the steps carry ESS shares of 0.35-0.5, so the
    pool needs far fewer new proposals than the kept proposal's draws alone would.
    """

    def __init__(self) -> None:
        self.z: list[np.ndarray] = []
        self.w: list[np.ndarray] = []
        self.k: list[float] = []

    def add(self, z: np.ndarray, w: np.ndarray, k: float) -> None:
        self.z.append(z)
        self.w.append(w)
        self.k.append(float(k))

    def set(self, i: int, z: np.ndarray, w: np.ndarray, k: float) -> None:
        self.z[i], self.w[i], self.k[i] = z, w, float(k)

    def trusted(self) -> list[int]:
        return [i for i in range(len(self.z)) if self.k[i] <= k_max(len(self.z[i]))]

    def ess(self, *, but: int | None = None) -> float:
        """The pool's importance ESS (that of ``but`` left out)."""
        return float(sum(1.0 / np.sum(self.w[i] ** 2) for i in self.trusted() if i != but))

    def weights(self) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """The trusted proposals' draws, stacked (S, n), their normalized weights (S,), and which."""
        used = self.trusted()
        n_eff = np.array([1.0 / np.sum(self.w[i] ** 2) for i in used])
        lam = n_eff / n_eff.sum()
        w = np.concatenate([lam[j] * self.w[i] for j, i in enumerate(used)])
        return np.concatenate([self.z[i] for i in used]), w / w.sum(), used


def _psis_weights(lp: np.ndarray, lq: np.ndarray) -> tuple[np.ndarray, float]:
    """Pareto-smoothed normalized importance weights of proposals with log density ``lp`` and
    proposal log density ``lq`` (each up to a constant), and their Pareto k-hat."""
    import arviz as az

    lw = np.where(np.isfinite(lp), lp - lq, -np.inf)
    slw, k = az.psislw(lw - lw.max())
    w = np.exp(slw - slw.max())
    return w / w.sum(), float(k)


def _logp_many(logp_grad: Callable, buf: np.ndarray, xs: np.ndarray, threads: int | None, *,
               gradients: bool = False) -> Any:
    """The kernel's log density at each row of ``xs`` (the numba kernels release the GIL), and with
    ``gradients`` its gradients, shape ``xs.shape``."""
    out = np.empty(xs.shape[0])
    grads = np.empty(xs.shape) if gradients else None

    def part(rows: range) -> None:
        g = np.empty(xs.shape[1])
        for r in rows:
            out[r] = logp_grad(np.ascontiguousarray(xs[r]), buf, g if grads is None else grads[r])

    _on_threads(part, xs.shape[0], threads)
    return (out, grads) if gradients else out


def approximate_attrs(info: dict, n_draws: int, *, why_not: str = "") -> dict:
    """A Laplace fit's ``attrs``: ``approximate`` (:func:`approximation_note`) and, where the draws
    were resampled from weighted proposals, ``ess_importance`` (their effective sample size: the
    draws repeat proposals, so an ESS read off them overstates it; :func:`cap_ess`)."""
    out: dict = {"approximate": approximation_note(info, n_draws, why_not=why_not)}
    if info.get("resampled"):
        out["ess_importance"] = round(float(info["ess_importance"]), 1)
    return out


def cap_ess(ess: np.ndarray, attrs: dict) -> np.ndarray:
    """An ESS read off a fit's draws, at most the importance ESS of a resampled Laplace fit."""
    cap = attrs.get("ess_importance")
    return np.asarray(ess, dtype=float) if cap is None else np.fmin(np.asarray(ess, dtype=float), float(cap))


def approximation_note(info: dict, n_draws: int, *, why_not: str = "") -> str:
    """What a Laplace fit's draws are, in one sentence for ``attrs["approximate"]`` (and a
    ``RuntimeWarning`` where the importance weights say the Gaussian is far from the posterior;
    ``why_not`` names the likely cause)."""
    k, ess = info["pareto_k"], info["ess_importance"]
    k_top = k_max(info.get("proposals") or n_draws)
    if info.get("unchecked"):
        note = (f"NOT checked: {n_draws} draws are too few to weigh against the posterior (at least "
                f"{MIN_WEIGHTS}), so nothing says how far this Gaussian is from it")
        import warnings

        warnings.warn(f"sampler='laplace': {n_draws} draws are too few to check the Gaussian against the posterior "
                      f"(at least {MIN_WEIGHTS}); its intervals are unchecked: ask for more draws",
                      RuntimeWarning, stacklevel=3)
    elif info.get("gaussian"):
        note = (f"checked by importance weights on {min(n_draws, PILOT)} draws (Pareto k-hat {k:.2f}, nearly equal "
                "weights): the posterior is Gaussian here, no correction needed")
    elif info["resampled"]:
        m = info.get("proposals") or n_draws
        moved = (f" from the Gaussian moved {info['shift']:.1f} of its standard deviations toward the posterior in "
                 f"{info['adapted']} Stein step(s)") if info.get("adapted") else ""
        if info.get("pooled", 1) > 1:
            moved += f", the {info['pooled'] - 1} other Gaussian(s) tried on the way pooled in"
        note = (f"corrected by Pareto-smoothed importance resampling (k-hat {k:.2f}, importance ESS {ess:.0f} of "
                f"{m} proposals{moved}, resampled to {n_draws} draws)")
    else:
        note = (f"NOT corrected: the importance weights' Pareto k-hat is {k:.2f} (> {k_top:.2f}), so this posterior is "
                f"far from Gaussian{why_not} and these intervals can be off by more than half their width")
        import warnings

        warnings.warn(f"sampler='laplace': the Gaussian approximation is far from this posterior (Pareto k-hat "
                      f"{k:.2f} > {k_top:.2f}); its intervals can be off by more than half their width: sample with "
                      "NUTS (the default)", RuntimeWarning, stacklevel=3)
    return ("Laplace approximation (a Gaussian at the posterior's mode, the curvature there as precision), "
            f"{note}; not NUTS draws")
