"""Posterior predictive checks: replicate data sets from posterior draws and compare statistics.

Everything is simulated in NumPy from one ``numpy.random.default_rng(seed)``; draws are thinned
so that one replicate array stays below :data:`MAX_CELLS` numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import arviz as az
import numpy as np

__all__ = ["PPCCheck", "win_rate_checks", "win_rate_ppc_applies", "ranking_checks", "MAX_CELLS"]

MAX_CELLS = 20_000_000  # replicated draws x observations held at once


@dataclass(frozen=True)
class PPCCheck:
    """One statistic: observed values (m,), replicated values (draws, m), row labels."""

    name: str
    xlabel: str
    labels: list[str]
    observed: np.ndarray
    replicated: np.ndarray

    def ppp(self) -> np.ndarray:
        """Posterior predictive p-value P(T_rep >= T_obs), ties counted half; shape (m,)."""
        gt = (self.replicated > self.observed).mean(axis=0)
        eq = (self.replicated == self.observed).mean(axis=0)
        return gt + 0.5 * eq


def _draw_index(n_total: int, per_draw: int, max_draws: int, rng: np.random.Generator) -> np.ndarray:
    n = int(min(n_total, max_draws, max(1, MAX_CELLS // max(per_draw, 1))))
    return np.sort(rng.choice(n_total, size=n, replace=False))


def _flat(da) -> np.ndarray:
    x = da.to_numpy()
    return x.reshape(-1, *x.shape[2:])


def win_rate_ppc_applies(idata: az.InferenceData) -> bool:
    """True for the win-rate fits that model every verdict: Dawid-Skene and independent raters."""
    post = idata["posterior"]
    method = str((idata.attrs or {}).get("method", ""))
    if method in ("dawid-skene", "hierarchical"):
        return ("q0" in post and "q1" in post) or "q" in post
    return method == "independent" and "k" in post


def _first_prob(post, idx: np.ndarray, pair: np.ndarray, label: np.ndarray, rng) -> np.ndarray:
    """(D, U, E) probability that judge e prefers the pair's first system on item u, per draw."""
    if "q0" not in post and "q" not in post:  # independent raters: a fixed rate per judge
        return _flat(post["k"])[idx][:, pair, :]
    q0 = _flat(post["q0" if "q0" in post else "q"])[idx]
    q1 = _flat(post["q1" if "q1" in post else "q"])[idx]
    p = _flat(post["p"])[idx]
    h = rng.random((idx.size, pair.size)) < p[:, pair]  # (D, U): a human prefers the first system
    h = np.where(label >= 0, label == 1, h)
    return np.where(h[..., None], q0[:, pair, :], 1.0 - q1[:, pair, :])


def win_rate_checks(idata: az.InferenceData, *, max_draws: int = 400, seed: int = 0) -> list[PPCCheck]:
    """Replicate a win-rate fit's verdicts and compare agreement rates and win counts.

    Dawid-Skene (two-coin; one-coin with ``q0 = q1 = q``): for every posterior draw and every
    item u of pair g, the human label ``h ~ Bernoulli(p_g)`` (kept at the human label where the
    fit observed it, ``prior="in-distribution"``), then judge e's verdicts for the pair's first
    system ``~ Binomial(n_ue, q0 if h else 1 - q1)`` with the observed number of verdicts
    ``n_ue``.  Independent raters: ``~ Binomial(n_ue, k_ge)``.

    Returns
    -------
    list of PPCCheck
        ``agreement``: per judge, the share of its verdicts that agree with the majority of the
        other judges on the item (items where they are tied left out), when there are two or
        more judges; ``wins``: per pair, the number of verdicts for the pair's first system.

    Raises
    ------
    ValueError
        The fit is not one of these models (see :func:`win_rate_ppc_applies`).
    """
    if not win_rate_ppc_applies(idata):
        raise ValueError("win_rate_checks needs a Dawid-Skene or independent-raters fit of bj.win_rate")
    rng = np.random.default_rng(seed)
    obs = idata["observed_data"]
    n_first = obs["n_first"].to_numpy()
    n_tot = n_first + obs["n_second"].to_numpy()
    pair = idata["constant_data"]["item_pair"].to_numpy().astype(int)
    label = idata["constant_data"]["human_label"].to_numpy().astype(int)
    if str((idata.attrs or {}).get("prior", "")) != "in-distribution":
        label = np.full_like(label, -1)
    post = idata["posterior"]
    n_total = post.sizes["chain"] * post.sizes["draw"]
    idx = _draw_index(n_total, n_tot.size, max_draws, rng)
    prob = _first_prob(post, idx, pair, label, rng)
    rep_first = rng.binomial(n_tot.astype(np.int64), np.clip(prob, 0.0, 1.0)).astype(float)

    judges = [str(j) for j in post["judge"].to_numpy()]
    pairs = [str(g) for g in post["pair"].to_numpy()]
    checks = []
    if len(judges) >= 2:
        checks.append(
            PPCCheck(
                name="agreement with the other judges",
                xlabel="share of the judge's verdicts that agree with the majority of the other judges",
                labels=judges,
                observed=_agreement(n_first[None], n_tot)[0],
                replicated=_agreement(rep_first, n_tot),
            )
        )
    checks.append(
        PPCCheck(
            name="wins of the first system",
            xlabel="verdicts for the pair's first system (all judges)",
            labels=pairs,
            observed=_wins_per_pair(n_first[None], pair, len(pairs))[0],
            replicated=_wins_per_pair(rep_first, pair, len(pairs)),
        )
    )
    return checks


def _agreement(first: np.ndarray, n_tot: np.ndarray) -> np.ndarray:
    """(D, U, E) verdicts for G0 -> (D, E): share of each judge's verdicts that agree with the
    majority of the *other* judges on the item (items where the others are tied left out)."""
    others_first = first.sum(axis=-1, keepdims=True) - first  # (D, U, E)
    others_tot = n_tot.sum(axis=-1, keepdims=True) - n_tot  # (U, E)
    majority = np.sign(2 * others_first - others_tot)  # +1 G0, -1 G1, 0 tied or no verdicts
    agree = np.where(majority > 0, first, np.where(majority < 0, n_tot - first, 0.0))
    counted = np.where(majority != 0, n_tot, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return agree.sum(axis=1) / counted.sum(axis=1)


def _wins_per_pair(first: np.ndarray, pair: np.ndarray, n_pairs: int) -> np.ndarray:
    per_unit = first.sum(axis=-1)  # (D, U)
    out = np.zeros((first.shape[0], n_pairs))
    for g in range(n_pairs):
        out[:, g] = per_unit[:, pair == g].sum(axis=1)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _outcomes(post, idx: np.ndarray, i: np.ndarray, j: np.ndarray, model: str, rng) -> np.ndarray:
    """Replicated outcomes y_rep (D, K): 1 position A wins, 0 position B wins, 0.5 tie."""
    s = _flat(post["s"])[idx]
    d = s[:, i] - s[:, j]
    if "gamma" in post:
        d = d + _flat(post["gamma"])[idx][:, None]
    if model == "poe-g":
        alpha, beta, sigma = (_flat(post[k])[idx][:, None] for k in ("alpha", "beta", "sigma"))
        p_rep = alpha * d + beta + sigma * rng.standard_normal(d.shape)
        return np.where(p_rep > 0.5, 1.0, np.where(p_rep < 0.5, 0.0, 0.5))
    u = rng.random(d.shape)
    if "nu" in post:  # Davidson ties
        nu = _flat(post["nu"])[idx][:, None]
        ea, eb = np.exp(0.5 * d), np.exp(-0.5 * d)
        z = ea + eb + nu
        return np.where(u < ea / z, 1.0, np.where(u < (ea + nu) / z, 0.5, 0.0))
    return (u < _sigmoid(d)).astype(float)


def ranking_checks(idata: az.InferenceData, *, max_draws: int = 400, seed: int = 0) -> list[PPCCheck]:
    """Replicate a Bayesian ranking's comparisons and compare win counts per candidate.

    Each comparison k between the candidates i (position A) and j (position B) is redrawn from
    the model with the posterior scores: position A wins with probability
    ``sigmoid(s_i - s_j + gamma)`` (soft / hard Bradley-Terry; Davidson ties when the fit has
    ``nu``), or, for the Gaussian experts, when ``p_rep ~ Normal(alpha d + beta, sigma)`` exceeds
    1/2.  Ties count half a win.

    Returns
    -------
    list of PPCCheck
        ``wins``: per candidate, comparisons won; ``position A``: share of comparisons won by
        the candidate shown first (checks the position-bias part of the model).
    """
    rng = np.random.default_rng(seed)
    y = idata["observed_data"]["y"].to_numpy().astype(float)
    i = idata["constant_data"]["i"].to_numpy().astype(int)
    j = idata["constant_data"]["j"].to_numpy().astype(int)
    post = idata["posterior"]
    model = str((idata.attrs or {}).get("model", "poe-bt"))
    n_total = post.sizes["chain"] * post.sizes["draw"]
    idx = _draw_index(n_total, y.size, max_draws, rng)
    y_rep = _outcomes(post, idx, i, j, model, rng)
    n_cand = post.sizes["candidate"]
    labels = [str(c) for c in post["candidate"].to_numpy()]
    return [
        PPCCheck(
            name="wins per candidate",
            xlabel="comparisons won (ties count half)",
            labels=labels,
            observed=_wins_per_candidate(y[None], i, j, n_cand)[0],
            replicated=_wins_per_candidate(y_rep, i, j, n_cand),
        ),
        PPCCheck(
            name="position A wins",
            xlabel="share of comparisons won by the candidate in position A",
            labels=["all comparisons"],
            observed=np.array([y.mean()]),
            replicated=y_rep.mean(axis=1, keepdims=True),
        ),
    ]


def _wins_per_candidate(y: np.ndarray, i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """(D, K) outcomes -> (D, n) wins: y counts for candidate i, 1 - y for candidate j."""
    d = y.shape[0]
    offset = (np.arange(d) * n)[:, None]
    wins = np.bincount((i[None, :] + offset).ravel(), weights=y.ravel(), minlength=d * n)
    wins += np.bincount((j[None, :] + offset).ravel(), weights=(1.0 - y).ravel(), minlength=d * n)
    return wins.reshape(d, n)
