"""Simulation-based calibration (SBC) of the package's Bayesian models.

For ``n_sims`` replications: draw the parameters and a data set jointly from the prior predictive
of the model's declaration (:func:`bayes_judge.inference.predictive.prior_predictive`: the
declaration's priors and the ``random`` functions of its observed distributions, the same PyMC
model the fit then samples), fit the data set with the public API (fast ``nutpie`` backend) and
record, for every scalar parameter, whether the central 90% intervals cover the truth and the rank
of the truth among ``L`` thinned posterior draws (Talts, Betancourt, Simpson, Vehtari, Gelman 2018,
"Validating Bayesian inference algorithms with simulation-based calibration").  If the sampler
draws from the exact posterior of the declaration, every interval covers the truth with its
nominal probability and every rank is uniform on ``0..L``.

Models (``model=``):

``"ds"``  the declaration ``"dawid-skene"`` (:func:`bayes_judge.win_rate`,
    ``method="dawid-skene"``, ``prior="none"``) with its default priors ``p ~ Beta(1, 1)``,
    ``q0_e, q1_e ~ Beta(2, 1)`` (those ``prior="none"`` fits with).  ``n_items`` unlabelled
    comparisons of one pair of systems, one verdict of each of ``n_judges`` judges per item, drawn
    by the declaration's observed ``t`` (``h_i ~ Bernoulli(p)`` summed out).  The likelihood is
    invariant under label switching ``(p, q0, q1) -> (1 - p, 1 - q1, 1 - q0)``; the package
    identifies the mode through the Beta(2, 1) prior, chains started at the prior mean and
    :class:`bayes_judge.winrate.LabelSwitchingWarning` on the sign of ``mean_e(q0_e + q1_e - 1)``.
    Its sampler therefore targets the posterior under the prior *truncated* to
    ``R = {sum_e (q0_e + q1_e - 1) > 0}`` (R and its mirror image partition the space), so
    ``"ds"`` draws the truth from that truncated prior (rejection of prior predictive draws; the
    share rejected is recorded) and ``"ds-full"`` from the whole prior, where a truth in the mirror
    region cannot be recovered by a sampler that stays in R.

``"softbt"``  the declaration ``"poe-bt"`` with ``position_bias=True`` (:func:`bayes_judge.rank`,
    ``method="poe-bt"``, ``bayesian=True``, ``debias=True``) with its default priors
    (:class:`bayes_judge.generative.ranking_models.SoftBTPriors`): ``s_raw ~ Normal(0, 1)``
    i.i.d., scores ``s`` = ``s_raw`` centred within each item, position bias
    ``gamma ~ Normal(0, 1)``.  The model's likelihood is the fractional-Bernoulli
    pseudo-likelihood ``p log sigma(d) + (1 - p) log sigma(-d)``, ``d = s_i - s_j + gamma``, which
    is a proper likelihood only for ``p`` in {0, 1}: there it is hard Bradley-Terry.  The
    declaration's observed ``c`` draws exactly those hard outcomes,
    ``y ~ Bernoulli(sigma(s_i - s_j + gamma))``, passed as ``p_a = y``, for which the fitted
    density is the exact posterior.  (For soft ``p`` there is no generative story whose exact
    posterior the model is, and SBC does not apply.)  Design: ``n_groups`` items with
    ``n_candidates`` candidates each, every ordered pair judged ``reps`` times (both positions,
    so ``gamma`` is identified).  The truth is compared as the sampler reports it: ``s`` centred
    within each item.

Example::

    from bayes_judge.analysis.sbc import simulation_based_calibration
    res = simulation_based_calibration("ds", n_sims=200, seed=0)
    res.summary()        # coverage of the 90% ETI / HDI per parameter group
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..inference.mcmc_stats import rhat_ess_bulk
from ..inference.settings import SAMPLING

__all__ = [
    "MODELS",
    "SBCResult",
    "simulation_based_calibration",
    "central_interval",
    "hdi_interval",
    "sbc_ranks",
    "binomial_band",
    "uniformity_pvalues",
    "default_bins",
    "rank_bins",
]

MODELS = ("ds", "ds-full", "softbt")


# --------------------------------------------------------------------------- interval helpers


def central_interval(x: np.ndarray, prob: float = 0.9) -> np.ndarray:
    """Equal-tailed interval of every column of ``x`` (draws, m): quantiles (1 -+ prob) / 2.

    Returns
    -------
    ndarray, shape (m, 2)
    """
    lo, hi = np.quantile(x, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return np.stack([lo, hi], axis=1)


def hdi_interval(x: np.ndarray, prob: float = 0.9) -> np.ndarray:
    """Highest-density interval of every column of ``x`` (draws, m), as ``arviz.hdi`` computes it
    for unimodal draws: the narrowest window of ``floor(prob * n)`` + 1 sorted draws.

    Returns
    -------
    ndarray, shape (m, 2)
    """
    xs = np.sort(x, axis=0)
    n = xs.shape[0]
    k = int(np.floor(prob * n))
    start = np.argmin(xs[k:] - xs[: n - k], axis=0)
    cols = np.arange(xs.shape[1])
    return np.stack([xs[start, cols], xs[start + k, cols]], axis=1)


def sbc_ranks(draws: np.ndarray, truth: np.ndarray, n_rank_draws: int) -> np.ndarray:
    """Rank of the truth among ``L = n_rank_draws`` thinned draws, in ``0..L``, per column.

    ``draws`` is (chains, draws, m); the chains are concatenated and ``L`` draws taken at evenly
    spaced positions (thinning by ``chains * draws / L``, which keeps autocorrelation from
    bunching the ranks).
    """
    flat = draws.reshape(-1, draws.shape[-1])
    if n_rank_draws > flat.shape[0]:
        raise ValueError(f"n_rank_draws={n_rank_draws} exceeds the {flat.shape[0]} posterior draws")
    idx = np.round(np.linspace(0, flat.shape[0] - 1, n_rank_draws)).astype(np.int64)
    return (flat[idx] < truth[None, :]).sum(axis=0)


def binomial_band(n: int, n_bins: int, level: float = 0.99) -> tuple[float, float]:
    """Central ``level`` interval of one bin's count when ``n`` uniform ranks fall in ``n_bins``
    equal bins (Binomial(n, 1 / n_bins)), the band of Talts et al. (2018) Fig. 1."""
    from scipy.stats import binom

    a = (1 - level) / 2
    return float(binom.ppf(a, n, 1 / n_bins)), float(binom.ppf(1 - a, n, 1 / n_bins))


def rank_bins(ranks: np.ndarray, n_rank_draws: int, n_bins: int) -> np.ndarray:
    """Counts of ranks (n, m) in ``n_bins`` equal bins of the ``L + 1`` values ``0..L``.

    ``(L + 1)`` must be a multiple of ``n_bins`` so that every bin holds equally many values.
    """
    if (n_rank_draws + 1) % n_bins:
        raise ValueError(f"L + 1 = {n_rank_draws + 1} is not a multiple of n_bins = {n_bins}")
    b = np.asarray(ranks) * n_bins // (n_rank_draws + 1)
    return np.stack([np.bincount(b[:, j], minlength=n_bins) for j in range(b.shape[1])], axis=1)


def default_bins(n: int, n_rank_draws: int, max_bins: int = 20) -> int:
    """The most equal bins (at most ``max_bins``) that divide the ``L + 1`` rank values and
    expect at least 5 of ``n`` ranks each (the chi-square rule of thumb)."""
    for b in range(min(max_bins, max(1, n // 5)), 0, -1):
        if (n_rank_draws + 1) % b == 0:
            return b
    return 1


def uniformity_pvalues(ranks: np.ndarray, n_rank_draws: int, n_bins: int) -> np.ndarray:
    """Chi-square test of uniform ranks, one p-value per column of ``ranks`` (n, m)."""
    from scipy.stats import chisquare

    counts = rank_bins(ranks, n_rank_draws, n_bins)
    return np.atleast_1d(chisquare(counts, axis=0).pvalue)


# --------------------------------------------------------------------------- result


@dataclass
class SBCResult:
    """Per-replication records of one SBC run; ``n`` fits, ``m`` scalar parameters.

    Attributes
    ----------
    model : one of :data:`MODELS`
    names, groups : list of str, length m — the scalar's name and its parameter group
    truth, rank : (n, m) — the drawn value and its rank among ``n_rank_draws`` thinned draws
    cover_eti, cover_hdi : (n, m) bool — the 90% equal-tailed / highest-density interval covers it
    r_hat, ess_bulk : (n, m)
    divergences : (n,) int — divergent transitions of each fit
    wall_s : (n,) float — seconds per replication (simulate + fit + records)
    flags : dict of (n,) arrays — model-specific: for DS ``label_switch_warning`` and
        ``mode_agrees`` (the posterior mean of ``sum_e(q0 + q1 - 1)`` has the truth's sign),
        ``in_region`` (the truth lies in R)
    failed : list of (replication, message) for fits that raised
    settings : dict — everything needed to reproduce the run
    """

    model: str
    names: list[str]
    groups: list[str]
    truth: np.ndarray
    rank: np.ndarray
    cover_eti: np.ndarray
    cover_hdi: np.ndarray
    r_hat: np.ndarray
    ess_bulk: np.ndarray
    divergences: np.ndarray
    wall_s: np.ndarray
    n_rank_draws: int
    prob: float
    flags: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)

    @property
    def n_fits(self) -> int:
        return int(self.truth.shape[0])

    def group_columns(self, group: str | None) -> np.ndarray:
        g = np.asarray(self.groups)
        return np.arange(len(g)) if group in (None, "all") else np.nonzero(g == group)[0]

    def coverage(self, group: str | None = None, kind: str = "eti") -> dict:
        """Pooled coverage of a parameter group, with a 95% interval for it.

        With one scalar per fit the count is Binomial(n, coverage): Clopper-Pearson interval.
        With ``m > 1`` scalars per fit the indicators of one fit are correlated (one data set),
        the fits independent: the interval is mean +- 1.96 SE of the per-fit coverage fractions
        (cluster-robust), SE never below the independent-binomial value ``sqrt(c(1-c)/(n m))``.
        """
        from scipy.stats import binomtest

        cols = self.group_columns(group)
        cov = (self.cover_eti if kind == "eti" else self.cover_hdi)[:, cols]
        n, m = cov.shape
        c = float(cov.mean())
        if m == 1:
            ci = binomtest(int(cov.sum()), n).proportion_ci(0.95, method="exact")
            lo, hi = float(ci.low), float(ci.high)
        else:
            per_fit = cov.mean(axis=1)
            se = max(per_fit.std(ddof=1), np.sqrt(c * (1 - c) / m)) / np.sqrt(n)
            lo, hi = max(0.0, c - 1.96 * se), min(1.0, c + 1.96 * se)
        per_scalar = cov.mean(axis=0)
        return {"coverage": c, "ci_low": lo, "ci_high": hi, "n_fits": n, "n_scalars": m,
                "min_scalar": float(per_scalar.min()), "max_scalar": float(per_scalar.max())}

    def summary(self, n_bins: int | None = None) -> pd.DataFrame:
        """One row per parameter group (and ``all``): coverage of the 90% ETI and HDI with 95%
        intervals, the smallest per-scalar chi-square p-value of rank uniformity (times the
        number of scalars, Bonferroni), fits, divergences, r_hat and wall time.  ``n_bins``
        defaults to :func:`default_bins`."""
        n_bins = n_bins or default_bins(self.n_fits, self.n_rank_draws)
        rows = []
        groups = list(dict.fromkeys(self.groups))
        for g in [*groups, "all"] if len(groups) > 1 else groups:
            cols = self.group_columns(g)
            eti, hdi = self.coverage(g, "eti"), self.coverage(g, "hdi")
            pv = uniformity_pvalues(self.rank[:, cols], self.n_rank_draws, n_bins)
            rows.append({
                "model": self.model,
                "group": g,
                "scalars": len(cols),
                "fits": self.n_fits,
                "eti90": eti["coverage"], "eti_ci_low": eti["ci_low"], "eti_ci_high": eti["ci_high"],
                "eti_min_scalar": eti["min_scalar"], "eti_max_scalar": eti["max_scalar"],
                "hdi90": hdi["coverage"], "hdi_ci_low": hdi["ci_low"], "hdi_ci_high": hdi["ci_high"],
                "sbc_p_min_bonf": float(min(1.0, pv.min() * len(cols))),
                "divergences": int(self.divergences.sum()),
                "fits_with_div": int((self.divergences > 0).sum()),
                "r_hat_median": float(np.median(self.r_hat[:, cols])),
                "r_hat_max": float(np.max(self.r_hat[:, cols])),
                "fits_r_hat_gt_1.01": int((self.r_hat[:, cols].max(axis=1) > 1.01).sum()),
                "fits_r_hat_gt_1.1": int((self.r_hat[:, cols].max(axis=1) > 1.1).sum()),
                "ess_bulk_median": float(np.median(self.ess_bulk[:, cols])),
                "wall_per_fit_s": float(np.median(self.wall_s)),
                "wall_total_s": float(self.wall_s.sum()),
            })
        return pd.DataFrame(rows)

    def per_scalar(self, n_bins: int | None = None) -> pd.DataFrame:
        """Coverage and rank-uniformity p-value of every scalar parameter."""
        n_bins = n_bins or default_bins(self.n_fits, self.n_rank_draws)
        pv = uniformity_pvalues(self.rank, self.n_rank_draws, n_bins)
        return pd.DataFrame({
            "model": self.model, "name": self.names, "group": self.groups,
            "eti90": self.cover_eti.mean(axis=0), "hdi90": self.cover_hdi.mean(axis=0),
            "sbc_p": pv, "r_hat_max": self.r_hat.max(axis=0),
            "ess_bulk_min": self.ess_bulk.min(axis=0),
        })

    @classmethod
    def concat(cls, results: list[SBCResult]) -> SBCResult:
        """Pool the fits of several runs of one model (e.g. different seeds) into one result."""
        first = results[0]
        if any(r.model != first.model or r.names != first.names or r.n_rank_draws != first.n_rank_draws
               for r in results):
            raise ValueError("concat needs runs of the same model, scalars and n_rank_draws")

        def cat(name):
            return np.concatenate([getattr(r, name) for r in results])

        flags = {k: np.concatenate([r.flags[k] for r in results]) for k in first.flags}
        failed = [(f"{r.settings.get('seed')}:{i}", msg) for r in results for i, msg in r.failed]
        settings = {**first.settings, "seeds": [r.settings.get("seed") for r in results]}
        if "rejected_prior_draws" in settings:
            settings["rejected_prior_draws"] = sum(r.settings["rejected_prior_draws"] for r in results)
        return cls(
            model=first.model, names=first.names, groups=first.groups, truth=cat("truth"),
            rank=cat("rank"), cover_eti=cat("cover_eti"), cover_hdi=cat("cover_hdi"),
            r_hat=cat("r_hat"), ess_bulk=cat("ess_bulk"), divergences=cat("divergences"),
            wall_s=cat("wall_s"), n_rank_draws=first.n_rank_draws, prob=first.prob, flags=flags,
            failed=failed, settings=settings,
        )

    def to_dict(self) -> dict:
        """JSON-ready record: settings, summary, per-scalar table, ranks and coverage flags."""
        return {
            "model": self.model,
            "settings": self.settings,
            "n_fits": self.n_fits,
            "n_rank_draws": self.n_rank_draws,
            "interval_prob": self.prob,
            "failed": [[str(i), str(m)] for i, m in self.failed],
            "summary": self.summary().to_dict(orient="records"),
            "per_scalar": self.per_scalar().to_dict(orient="records"),
            "names": self.names,
            "groups": self.groups,
            "flags": {k: np.asarray(v).tolist() for k, v in self.flags.items()},
            "rank": self.rank.tolist(),
            "truth": self.truth.tolist(),
            "cover_eti": self.cover_eti.astype(int).tolist(),
            "cover_hdi": self.cover_hdi.astype(int).tolist(),
            "divergences": self.divergences.tolist(),
            "r_hat_max_per_fit": self.r_hat.max(axis=1).tolist(),
            "ess_bulk_min_per_fit": self.ess_bulk.min(axis=1).tolist(),
            "wall_s": self.wall_s.tolist(),
        }


# --------------------------------------------------------------------------- models


class _DS:
    """Dawid-Skene: the declaration ``"dawid-skene"`` on ``n_items`` unlabelled items, one verdict
    per judge each, drawn by its prior predictive and fitted by ``bj.win_rate``."""

    group_order = ("p", "q0", "q1")

    def __init__(self, *, n_judges: int = 3, n_items: int = 100, identified: bool = True):
        from ..generative import get_model
        from ..winrate.encode import VerdictPatterns

        self.E, self.n_items, self.identified = n_judges, n_items, identified
        self.spec = get_model("dawid-skene", "win-rate")
        self.prior = self.spec.default_priors()  # what win_rate(prior="none") fits with
        self.judges = [f"judge{e}" for e in range(n_judges)]
        self.names = ["p"] + [f"q0[{j}]" for j in self.judges] + [f"q1[{j}]" for j in self.judges]
        self.groups = ["p"] + ["q0"] * n_judges + ["q1"] * n_judges
        self.rejected = 0
        K, E = n_items, n_judges
        design = VerdictPatterns(  # one row per item: its verdicts are drawn, not read
            n1=np.zeros((K, E)), n0=np.ones((K, E)), n_tie=np.zeros((K, E)), label=np.full(K, -1),
            pair=np.zeros(K, np.int64), weight=np.ones(K), unit_pattern=np.arange(K),
            items_per_pair=np.array([float(K)]),
        )
        self.design: dict[str, Any] = {
            "arrays": design.arrays(), "dims": VerdictPatterns.DIMS, "priors": self.prior,
            "coords": {"pair": ["G0 vs G1"], "judge": self.judges},
        }

    def settings(self) -> dict:
        return {"n_judges": self.E, "n_items": self.n_items, "identified_prior": self.identified,
                "prior": {k: [float(v) for v in pr.params().values()] for k, pr in self.prior.items()},
                "rejected_prior_draws": self.rejected,
                "simulation": "prior predictive of the declaration 'dawid-skene'"}

    def draw(self, seed: int) -> tuple[np.ndarray, pd.DataFrame]:
        from ..inference.predictive import prior_predictive

        for attempt in range(10_000):
            d = prior_predictive(self.spec, **self.design, var_names=("p", "q0", "q1", "t"), seed=(seed, attempt))
            theta = np.concatenate([d["p"][0, :1], d["q0"][0, 0], d["q1"][0, 0]])
            if not self.identified or (d["q0"][0, 0] + d["q1"][0, 0] - 1).sum() > 0:
                break
            self.rejected += 1
        says_g0 = d["t"][0] == 1  # (items, judges): one verdict each
        df = pd.DataFrame({
            "item": np.repeat(np.arange(self.n_items), self.E), "a": "G0", "b": "G1",
            "judge": np.tile(self.judges, self.n_items), "winner": np.where(says_g0.ravel(), "a", "b"),
        })
        return theta, df

    def fit(self, df: pd.DataFrame, seed: int, chains: int, draws: int, tune: int):
        from ..winrate.estimate import win_rate

        idata = win_rate(df, method="dawid-skene", prior="none", sampler="nutpie",
                         chains=chains, draws=draws, tune=tune, seed=seed)
        post = idata["posterior"]
        assert list(post["judge"].values) == self.judges
        for name in ("q0", "q1"):  # the fit used the prior the data were drawn from
            for par, val in getattr(self.prior, name).params().items():
                assert np.allclose(idata["constant_data"][f"{par}_{name}"].values, val)
        x = np.concatenate([post["p"].values[..., :1], post["q0"].values[..., 0, :],
                            post["q1"].values[..., 0, :]], axis=-1)
        return x, int(idata["sample_stats"]["diverging"].values.sum())

    def flags(self, theta: np.ndarray, x: np.ndarray) -> dict:
        E = self.E
        z_true = (theta[1:1 + E] + theta[1 + E:] - 1).sum()
        z_post = (x[..., 1:1 + E] + x[..., 1 + E:] - 1).sum(axis=-1).mean()
        return {"in_region": bool(z_true > 0), "mode_agrees": bool(np.sign(z_true) == np.sign(z_post))}


class _SoftBT:
    """Soft Bradley-Terry with position bias: the declaration ``"poe-bt"`` on every ordered pair of
    ``n_candidates`` candidates of ``n_groups`` items, ``reps`` times, drawn by its prior predictive
    (``c``: hard outcomes, passed as ``p_a``) and fitted by ``bj.rank``."""

    group_order = ("s", "gamma")

    def __init__(self, *, n_groups: int = 3, n_candidates: int = 6, reps: int = 2):
        from ..generative import get_model
        from ..ranking.encode import RankData, encode_ranking

        self.spec = get_model("poe-bt", "ranking")
        self.prior = self.spec.default_priors()  # what rank(bayesian=True) fits with
        self.G, self.N, self.reps = n_groups, n_candidates, reps
        ii, jj = np.nonzero(~np.eye(n_candidates, dtype=bool))
        cands = np.asarray([f"c{c}" for c in range(n_candidates)])
        self.table = pd.DataFrame({
            "item": np.repeat([f"q{g}" for g in range(n_groups)], reps * len(ii)),
            "a": np.tile(cands[ii], n_groups * reps), "b": np.tile(cands[jj], n_groups * reps),
            "p_a": 0.5, "sample": np.tile(np.repeat(np.arange(reps), len(ii)), n_groups),
        })
        data = encode_ranking(self.table)
        self.row = data.row
        self.names = [f"s[{data.items[g]} | {c}]" for g, c in zip(data.cand_item, data.candidates, strict=True)]
        self.names.append("gamma")
        self.groups = ["s"] * data.n_candidates + ["gamma"]
        self.design: dict[str, Any] = {
            "arrays": data.arrays(), "dims": RankData.DIMS, "priors": self.prior,
            "coords": {"candidate": np.arange(data.n_candidates)}, "options": {"position_bias": True},
        }

    def settings(self) -> dict:
        return {"n_groups": self.G, "n_candidates": self.N, "reps": self.reps,
                "comparisons": len(self.table), "sigma_s": float(self.prior.scores.sigma),  # type: ignore[attr-defined]
                "gamma_mu": float(self.prior.gamma.mu), "gamma_sd": float(self.prior.gamma.sigma),  # type: ignore[attr-defined]
                "outcome": "hard y ~ Bernoulli(sigmoid(s_i - s_j + gamma)) as p_a",
                "simulation": "prior predictive of the declaration 'poe-bt' (position_bias=True)"}

    def draw(self, seed: int) -> tuple[np.ndarray, pd.DataFrame]:
        from ..inference.predictive import prior_predictive

        d = prior_predictive(self.spec, **self.design, var_names=("s", "gamma", "c"), seed=seed)
        df = self.table.copy()
        p_a = np.empty(len(df))
        p_a[self.row] = d["c"][0]
        df["p_a"] = p_a
        return np.concatenate([d["s"][0], d["gamma"][:1]]), df

    def fit(self, df: pd.DataFrame, seed: int, chains: int, draws: int, tune: int):
        from ..ranking import rank

        idata = rank(df, method="poe-bt", bayesian=True, debias=True, sampler="nutpie",
                     chains=chains, draws=draws, tune=tune, seed=seed)
        post = idata["posterior"]
        got = [f"s[{g} | {c}]" for g, c in zip(post["item"].values, post["candidate_id"].values, strict=True)]
        assert got == self.names[:-1], got
        x = np.concatenate([post["s"].values, post["gamma"].values[..., None]], axis=-1)
        return x, int(idata["sample_stats"]["diverging"].values.sum())

    def flags(self, theta: np.ndarray, x: np.ndarray) -> dict:
        return {}


def _make(model: str, options: dict):
    if model == "ds":
        return _DS(identified=True, **options)
    if model == "ds-full":
        return _DS(identified=False, **options)
    if model == "softbt":
        return _SoftBT(**options)
    raise ValueError(f"model must be one of {MODELS}, got {model!r}")


# --------------------------------------------------------------------------- driver


def simulation_based_calibration(
    model: str = "ds",
    *,
    n_sims: int = 200,
    seed: int = SAMPLING.seed,
    chains: int = SAMPLING.chains,
    draws: int = SAMPLING.draws,
    tune: int = SAMPLING.tune,
    n_rank_draws: int = 99,
    prob: float = 0.9,
    progress=None,
    **options,
) -> SBCResult:
    """Run SBC for one model (see the module docstring for the models and their simulation).

    Parameters
    ----------
    model : {"ds", "ds-full", "softbt"}
    n_sims : number of replications (prior draw -> data set -> fit)
    seed : replication ``k`` takes the seeds of its prior predictive draw and of its fit from
        ``default_rng(SeedSequence([seed, k]))``, so a replication does not depend on ``n_sims``
    chains, draws, tune : NUTS settings of every fit (the package defaults)
    n_rank_draws : L, the number of thinned posterior draws the truth is ranked among
    prob : interval probability (0.9)
    progress : optional callable ``progress(k, n_sims, seconds)`` after every replication
    **options : design of the simulated data sets: ``n_judges``, ``n_items`` (DS);
        ``n_groups``, ``n_candidates``, ``reps`` (soft BT)

    Returns
    -------
    SBCResult
    """
    from ..inference.convergence import LabelSwitchingWarning

    m = _make(model, options)
    if chains * draws < n_rank_draws:
        raise ValueError(f"chains * draws = {chains * draws} < n_rank_draws = {n_rank_draws}")
    rec: dict[str, list] = {k: [] for k in ("truth", "rank", "eti", "hdi", "rhat", "ess", "div", "wall")}
    flags: dict[str, list] = {}
    failed = []
    for k in range(n_sims):
        t0 = time.perf_counter()
        rng = np.random.default_rng(np.random.SeedSequence([seed, k]))
        data_seed, fit_seed = (int(v) for v in rng.integers(0, 2**31 - 1, size=2))
        theta, df = m.draw(data_seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                x, div = m.fit(df, fit_seed, chains, draws, tune)
            except (ValueError, FloatingPointError) as err:
                failed.append((k, f"{type(err).__name__}: {err}"))
                continue
        flat = x.reshape(-1, x.shape[-1])
        eti = central_interval(flat, prob)
        hdi = hdi_interval(flat, prob)
        rhat, ess = rhat_ess_bulk(x)
        rec["truth"].append(theta)
        rec["rank"].append(sbc_ranks(x, theta, n_rank_draws))
        rec["eti"].append((eti[:, 0] <= theta) & (theta <= eti[:, 1]))
        rec["hdi"].append((hdi[:, 0] <= theta) & (theta <= hdi[:, 1]))
        rec["rhat"].append(rhat)
        rec["ess"].append(ess)
        rec["div"].append(div)
        f = m.flags(theta, x)
        if model.startswith("ds"):
            f["label_switch_warning"] = any(issubclass(w.category, LabelSwitchingWarning) for w in caught)
        f["other_warnings"] = sum(not issubclass(w.category, LabelSwitchingWarning) for w in caught)
        for name, v in f.items():
            flags.setdefault(name, []).append(v)
        rec["wall"].append(time.perf_counter() - t0)
        if progress is not None:
            progress(k, n_sims, rec["wall"][-1])
    if not rec["truth"]:
        raise RuntimeError(f"every one of the {n_sims} fits failed: {failed[:3]}")
    settings = {"model": model, "n_sims": n_sims, "seed": seed, "chains": chains, "draws": draws,
                "tune": tune, "n_rank_draws": n_rank_draws, "prob": prob, **m.settings()}
    return SBCResult(
        model=model, names=list(m.names), groups=list(m.groups),
        truth=np.array(rec["truth"]), rank=np.array(rec["rank"], dtype=np.int64),
        cover_eti=np.array(rec["eti"]), cover_hdi=np.array(rec["hdi"]),
        r_hat=np.array(rec["rhat"]), ess_bulk=np.array(rec["ess"]),
        divergences=np.array(rec["div"], dtype=np.int64), wall_s=np.array(rec["wall"]),
        n_rank_draws=n_rank_draws, prob=prob,
        flags={k: np.array(v) for k, v in flags.items()}, failed=failed, settings=settings,
    )
