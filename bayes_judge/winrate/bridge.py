"""Win rates without labels that name their estimand: the judges' own rate, and the human rate
bridged from it with the uncertainty the verdicts cannot remove.

Two estimands of one pair of systems (G0, G1) over the population of items (prompts):

``"judges"``
    ``θ_J``: the rate at which this panel prefers G0, ``E_i[s_i]``, where ``s_i`` is item i's
    share of verdicts for G0 over every judge and presentation order, a tie counting ½ (the kind
    of number Arena-Hard and AlpacaEval report; from verdicts: a ``p_a`` of 0.51 counts as a win,
    where AlpacaEval averages the preference, and Arena-Hard v1 counts ``A>>B`` three times).  The verdicts identify it; its only uncertainty
    is which items were drawn.  Items are the clusters (all judges and orders of an item move
    together): the Bayesian bootstrap (Rubin 1981), ``θ_J = Σ_i w_i s_i``,
    ``w ~ Dirichlet(1, …, 1)``.

``"human"``
    ``p``: the share of the items on which a person prefers G0.  Without labels the verdicts do
    not identify it.  Let ``v_i`` be item i's consensus, its share of *decisive* verdicts for G0
    (ties left out; ½ where every verdict is a tie), and ``π = E_i[v_i]`` the consensus rate.
    The bridge::

        logit p* = λ · logit π + α,      λ ~ LogNormal(log λ_0, s_λ),   α ~ Normal(0, τ)
        p_∞ = ½ + κ_h (p* − ½),          κ_h ~ Beta(a_h, 1)
        p = Binomial(n, p_∞) / n                       (the n items at hand)

    ``λ`` (shared by every pair of a fit: one panel, one kind of human vote) says how far the
    human rate lies from the consensus in either direction: ``λ > 1`` where the judges err at
    random (their rate is attenuated toward ½, Gao et al. 2024 eq. 9), ``λ < 1`` where the human label
    is itself a noisy vote and the judges agree more with each other than people do.  ``α``
    (one per pair) is what the panel's preference for one system's texts (style, length, model
    family) adds or takes away; it is zero only when outputs are assigned to the systems at
    random.  ``κ_h = 2 c_h − 1``, with ``c_h`` the chance that a person's vote on an item agrees
    with people's majority there: the human label is itself a noisy vote, so even a pair whose
    texts differ plainly is not preferred on every item (``a_h = 10``: median c_h 0.97, 5%
    quantile 0.87).  ``π`` carries the item sampling by the same Bayesian bootstrap, with one
    pseudo-item at ½ so that a unanimous panel does not give ``π = 1`` exactly.

The prior (:class:`BridgePrior`) is fitted to the bundled sets with known human truth
(:func:`fit_bridge_prior`: 17 sets, natural pairs of SummEval and HANNA and LLMBar's
random-assignment sets), and ``benchmarks/natural_pairs.py`` checks it leave-one-source-out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logit

__all__ = [
    "BridgePrior",
    "BRIDGE_PRIOR",
    "panel_scores",
    "consensus_votes",
    "judges_draws",
    "bridge",
    "bridge_draws",
    "human_draws",
    "fit_bridge_prior",
    "labels_to_decide",
]


@dataclass(frozen=True)
class BridgePrior:
    """Prior of the bridge from the judges' consensus rate to the human rate (logit scale).

    Attributes
    ----------
    lam_median : float
        Median of ``λ``, the ratio of the human rate's logit to the consensus rate's.
    lam_log_sd : float
        Standard deviation of ``log λ`` (between panels and kinds of human vote).
    tau : float
        Standard deviation of ``α``, the per-pair shift from the panel's preference for one
        system's texts.
    human_a : float
        ``a_h`` of ``κ_h ~ Beta(a_h, 1)``, how far people's own votes agree (``0``: not modelled,
        ``κ_h = 1``).
    """

    lam_median: float = 1.4
    lam_log_sd: float = 0.58
    tau: float = 0.56
    human_a: float = 10.0

    def __post_init__(self) -> None:
        for name in ("lam_median", "lam_log_sd", "tau", "human_a"):
            v = getattr(self, name)
            if not np.isfinite(v) or v < 0 or (name == "lam_median" and v == 0):
                raise ValueError(f"BridgePrior.{name} must be a finite number > 0 (>= 0 for sds), got {v!r}")

    def describe(self) -> str:
        """The prior in one line, as the summaries state it."""
        lo, hi = self.lam_median * np.exp(np.array([-1.645, 1.645]) * self.lam_log_sd)
        text = (f"logit p* = λ·logit π + α; λ ~ LogNormal(log {self.lam_median:g}, {self.lam_log_sd:g}) "
                f"(90%: {lo:.2f}-{hi:.2f}), α ~ Normal(0, {self.tau:g}) per pair")
        if self.human_a:
            c = 0.5 * (1 + 0.05 ** (1 / self.human_a))
            text += f"; p = ½ + κ_h (p* − ½), κ_h ~ Beta({self.human_a:g}, 1) (people agree: c_h ≥ {c:.2f} at 95%)"
        return text

    def scaled(self, factor: float) -> BridgePrior:
        """The same prior with both spreads multiplied by ``factor`` (the sensitivity check)."""
        a = self.human_a / factor if self.human_a else 0.0  # Beta(a, 1): a smaller a is a wider κ_h
        return BridgePrior(self.lam_median, self.lam_log_sd * factor, self.tau * factor, a)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


# fit_bridge_prior on the 17 bundled sets (benchmarks/natural_pairs.py --fit-prior prints it):
# BridgePrior(lam_median=1.4037, lam_log_sd=0.5765, tau=0.5600, human_a=10.0), rounded to two digits
BRIDGE_PRIOR = BridgePrior()


def panel_scores(n_first: np.ndarray, n_second: np.ndarray, n_tie: np.ndarray) -> np.ndarray:
    """Each unit's share of verdicts for G0 over all judges and orders, a tie counting ½, (U,).

    NaN where no judge judged the unit.
    """
    n1, n0, nt = (np.asarray(a, dtype=float).sum(axis=-1) for a in (n_first, n_second, n_tie))
    tot = n1 + n0 + nt
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, (n1 + 0.5 * nt) / np.where(tot > 0, tot, 1.0), np.nan)


def consensus_votes(n_first: np.ndarray, n_second: np.ndarray) -> np.ndarray:
    """Each unit's consensus ``v_i``: its share of decisive verdicts for G0 (ties left out), (U,);
    ½ where no verdict is decisive."""
    n1, n0 = (np.asarray(a, dtype=float).sum(axis=-1) for a in (n_first, n_second))
    tot = n1 + n0
    return np.where(tot > 0, n1 / np.where(tot > 0, tot, 1.0), 0.5)


EXACT_MAX = 5000  # items of a pair up to which the Bayesian bootstrap is drawn exactly


def _bootstrap_means(values: np.ndarray, unit_pair: np.ndarray, n_pairs: int, size: int,
                     rng: np.random.Generator, pseudo: float | str | None = None) -> np.ndarray:
    """Bayesian-bootstrap means of ``values`` within each pair, (size, n_pairs).

    Dirichlet(1, …, 1) weights as normalised Exp(1) draws, one matrix product per pair;
    ``pseudo`` adds one pseudo-unit to every pair: with that value, or (``"uniform"``) with a value
    drawn from Uniform(0, 1) in each draw (one draw of a Dirichlet-process prior of concentration
    1 and that base: the bootstrap of n values alone can only reweigh them).  Above ``EXACT_MAX`` items the
    mean is drawn from its normal limit with the exact variance, ``Var(Σ w_i x_i) = σ²_x / (n + 1)``
    (σ²_x the values' population variance): the same to the third decimal, without an
    ``size × n`` matrix (4000 draws × 100,000 items would be 3.2 GB).
    """
    out = np.empty((size, n_pairs))
    order = np.argsort(unit_pair, kind="stable")
    bounds = np.searchsorted(unit_pair[order], np.arange(n_pairs + 1))
    for j in range(n_pairs):  # a loop over pairs, each vectorized over its items and draws
        x = values[order[bounds[j]:bounds[j + 1]]]
        if x.size == 0:
            raise ValueError(f"pair {j} has no item")
        if isinstance(pseudo, int | float):
            x = np.append(x, float(pseudo))
        if x.size > EXACT_MAX:
            sd = np.sqrt(x.var() / (x.size + 1))
            out[:, j] = np.clip(x.mean() + sd * rng.standard_normal(size), x.min(), x.max())
            continue
        g = rng.standard_exponential((size, x.size))
        num, den, lo, hi = g @ x, g.sum(axis=1), x.min(), x.max()
        if pseudo == "uniform":
            g0 = rng.standard_exponential(size)
            num, den, lo, hi = num + g0 * rng.random(size), den + g0, 0.0, 1.0
        # a weighted mean lies within its values; the clip removes the last bit of rounding (1 + 2e-16)
        out[:, j] = np.clip(num / den, lo, hi)
    return out


def judges_draws(scores: np.ndarray, unit_pair: np.ndarray, n_pairs: int, *, chains: int, draws: int,
                 seed: int) -> np.ndarray:
    """Posterior draws of the judges' rate ``θ_J`` of every pair, (chains, draws, P).

    Parameters
    ----------
    scores : ndarray, shape (U,)
        :func:`panel_scores` of every unit (no NaN).
    unit_pair : ndarray of int, shape (U,)
        The pair of each unit.

    Each pair's bootstrap holds one pseudo-item of unknown value (Uniform(0, 1) in each draw)
    besides its items: a Bayesian bootstrap of n items alone can only reweigh the values it saw,
    so one item, or a few unanimous ones, gave an interval of zero width ([0, 0] for one verdict
    against). The pseudo-item weighs 1/(n + 1) of the mean on average, negligible for the hundreds
    of items of a benchmark; a unanimous panel's interval still reaches its share.
    """
    rng = np.random.default_rng(seed)
    out = _bootstrap_means(np.asarray(scores, float), unit_pair, n_pairs, chains * draws, rng, pseudo="uniform")
    return out.reshape(chains, draws, n_pairs)


def bridge(pi: np.ndarray | float, lam: np.ndarray | float, alpha: np.ndarray | float,
           kappa: np.ndarray | float) -> np.ndarray:
    """The bridge of the module docstring, stated once: ``½ + κ_h (expit(λ logit π + α) − ½)``
    (arrays broadcast)."""
    return 0.5 + kappa * (expit(lam * logit(pi) + alpha) - 0.5)


def bridge_draws(pi: np.ndarray, n_items: np.ndarray, prior: BridgePrior,
                 rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The human rate from draws of the consensus rate ``pi`` (S, P): one draw of λ and κ_h per
    row, one α per row and pair, then the Binomial of the ``n_items`` (P,) at hand.

    Returns ``p`` (S, P), ``lam`` (S, 1), ``alpha`` (S, P) and ``kappa`` (S, 1).
    """
    S, P = pi.shape
    lam = prior.lam_median * np.exp(prior.lam_log_sd * rng.standard_normal((S, 1)))
    alpha = prior.tau * rng.standard_normal((S, P))
    kappa = rng.beta(prior.human_a, 1.0, size=(S, 1)) if prior.human_a else np.ones((S, 1))
    n = np.asarray(n_items)
    p = rng.binomial(n, bridge(pi, lam, alpha, kappa)) / np.maximum(n, 1)
    return {"p": p, "lam": lam, "alpha": alpha, "kappa": kappa}


def human_draws(votes: np.ndarray, unit_pair: np.ndarray, n_pairs: int, *, prior: BridgePrior = BRIDGE_PRIOR,
                chains: int, draws: int, seed: int, n_decisive: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Draws of the human rate ``p`` bridged from the consensus (module docstring), (chains, draws, ·).

    Parameters
    ----------
    votes : ndarray, shape (U,)
        :func:`consensus_votes` of every unit.
    unit_pair : ndarray of int, shape (U,)
    n_pairs : int
    prior : BridgePrior
    n_decisive : ndarray, shape (U,), optional
        Decisive verdicts per unit: when given, ``h_prob`` (chains, draws, U) is returned too,
        the bridge read item by item, with ``π`` replaced by the item's consensus shrunk by one
        pseudo-verdict at ½ (what :func:`bayes_judge.next_labels` ranks).

    Returns
    -------
    dict
        ``p`` (chains, draws, P): the human rate on the items at hand; ``p_consensus`` (π),
        ``alpha`` (α) of every pair; ``lam`` (λ), (chains, draws).
    """
    rng = np.random.default_rng(seed)
    S = chains * draws
    pi = _bootstrap_means(np.asarray(votes, float), unit_pair, n_pairs, S, rng, pseudo=0.5)
    d = bridge_draws(pi, np.bincount(unit_pair, minlength=n_pairs), prior, rng)
    shape = (chains, draws)
    out = {"p": d["p"].reshape(*shape, n_pairs), "p_consensus": pi.reshape(*shape, n_pairs),
           "alpha": d["alpha"].reshape(*shape, n_pairs), "lam": d["lam"].reshape(shape)}
    if n_decisive is not None:
        nd = np.asarray(n_decisive, dtype=float)
        v_shrunk = (np.asarray(votes, float) * nd + 0.5) / (nd + 1.0)
        h = bridge(v_shrunk[None, :], d["lam"], d["alpha"][:, unit_pair], d["kappa"])
        out["h_prob"] = h.reshape(*shape, -1)
    return out


def fit_bridge_prior(cases: Sequence[tuple[str, np.ndarray, float]], *, human_a: float = 10.0) -> BridgePrior:
    """Fit :class:`BridgePrior` to cases with known human truth by maximum marginal likelihood.

    Parameters
    ----------
    cases : sequence of (set name, votes, truth)
        One case per pair of systems: the set it belongs to (cases of one set share ``λ``), the
        :func:`consensus_votes` of its items, and its human win rate on those items.
    human_a : float
        ``a_h`` of the people's agreement ``κ_h ~ Beta(a_h, 1)``, kept as given (the cases do not
        tell it from ``λ``); the fit reads ``κ_h`` at its mean ``a_h / (a_h + 1)``.

    Returns
    -------
    BridgePrior
        ``λ_s`` is fitted per set, ``α`` per case, with a normal approximation on the logit
        scale: ``logit p_c ~ N(logit(½ + κ̄ (expit(λ_s logit π_c) − ½)), τ² + se_c²)`` (``α`` read
        through ``expit`` at ``α = 0``, a first-order approximation), ``se_c²`` the binomial variance of
        the truth and the item sampling of ``π_c``; then ``lam_median`` and ``lam_log_sd`` are the
        mean and sd of ``log λ_s`` over the sets (``λ_s`` floored at 0.3: a set whose judges are no
        better than chance says nothing about the scale) and ``tau`` is pooled.
    """
    by_set: dict[str, list[tuple[float, float, float]]] = {}
    for name, v, t in cases:
        v = np.asarray(v, dtype=float)
        n = v.size
        t = float(np.clip(t, 0.5 / n, 1 - 0.5 / n))
        pi = float(np.clip(v.mean(), 0.5 / n, 1 - 0.5 / n))
        se2 = 1.0 / (n * t * (1 - t)) + v.var() / (n * (pi * (1 - pi)) ** 2)
        by_set.setdefault(name, []).append((logit(pi), logit(t), se2))
    if len(by_set) < 2:
        raise ValueError(f"fit_bridge_prior needs cases of at least 2 sets (λ varies between sets), got {len(by_set)}")
    arrays = {k: np.array(v).T for k, v in by_set.items()}
    kbar = human_a / (human_a + 1.0) if human_a else 1.0

    def nll(theta: np.ndarray) -> float:
        log_tau, *log_lams = theta
        tot = 0.0
        for (lp, lh, se2), ll in zip(arrays.values(), log_lams, strict=True):
            star = expit(np.exp(ll) * lp)
            p_mean = bridge(expit(lp), np.exp(ll), 0.0, kbar)  # the bridge at α = 0 and κ_h at its mean
            mean = logit(p_mean)
            slope = kbar * star * (1 - star) / (p_mean * (1 - p_mean))  # d logit p / dα, for τ
            var = (slope * np.exp(log_tau)) ** 2 + se2
            tot += 0.5 * np.sum(np.log(var) + (lh - mean) ** 2 / var)
        return tot

    x0 = np.r_[np.log(0.4), np.zeros(len(arrays))]
    res = minimize(nll, x0, method="L-BFGS-B", bounds=[(np.log(1e-3), np.log(5.0))] + [(np.log(0.3), np.log(10))] * len(arrays))
    log_lams = res.x[1:]
    return BridgePrior(lam_median=float(np.exp(log_lams.mean())), lam_log_sd=float(log_lams.std(ddof=1)),
                       tau=float(np.exp(res.x[0])), human_a=human_a)


def labels_to_decide(p_mean: np.ndarray, n_items: np.ndarray, z: float = 1.645) -> np.ndarray:
    """Human labels that would decide a pair on their own: the smallest n whose normal interval
    around ``p_mean`` (``z`` = 1.645: 90%) excludes ½, ``(z · sqrt(p (1 − p)) / |p − ½|)²``, capped at
    the pair's items (an upper bound: with the judges' verdicts beside them, fewer labels do)."""
    p = np.asarray(p_mean, dtype=float)
    d = np.abs(p - 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.ceil((z * np.sqrt(p * (1 - p)) / d) ** 2)
    n = np.where(d > 0, n, np.inf)
    return np.minimum(n, np.asarray(n_items, dtype=float))
