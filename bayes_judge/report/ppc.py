"""Posterior predictive checks: replicate data sets from posterior draws and compare statistics.

The replicated data come from the fit's declaration (:mod:`bayes_judge.generative`): its observed
variables are drawn given each posterior draw by
:func:`bayes_judge.inference.predictive.posterior_predictive`, on the item-level data the
InferenceData holds (one row per item or comparison).  The posterior draws used are chosen by
``numpy.random.default_rng(seed)`` and thinned so that one replicate array stays below
:data:`MAX_CELLS` numbers; the replicates are seeded by ``seed`` as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import arviz as az
import numpy as np

__all__ = ["PPCCheck", "win_rate_checks", "win_rate_ppc_applies", "ranking_checks", "MAX_CELLS",
           "MAX_JUDGES_PAIRWISE"]

MAX_CELLS = 20_000_000  # replicated draws x observations held at once
MAX_JUDGES_PAIRWISE = 16  # pairwise agreement for at most this many judges (120 pairs)


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


def _draws(post, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The posterior draws ``idx`` (of the chains concatenated) of every parameter, (D, ...);
    per-item quantities (dim ``item``, e.g. ``h_prob``) are left out."""
    out = {}
    for name, da in post.data_vars.items():
        if "item" in da.dims:
            continue
        x = da.to_numpy()
        out[str(name)] = x.reshape(-1, *x.shape[2:])[idx]
    return out


def win_rate_ppc_applies(idata: az.InferenceData) -> bool:
    """True for the win-rate fits that model every verdict: Dawid-Skene and independent raters."""
    post = idata["posterior"]
    method = str((idata.attrs or {}).get("method", ""))
    if method in ("dawid-skene", "hierarchical"):
        return ("q0" in post and "q1" in post) or "q" in post
    return method == "independent" and "k" in post


def _win_rate_spec(idata: az.InferenceData):
    """The declaration of a win-rate fit, read from its method and posterior layout."""
    from ..generative import get_model

    attrs = idata.attrs or {}
    if attrs.get("model"):  # the declaration's name, which every fit records
        return get_model(str(attrs["model"]), "win-rate")
    post = idata["posterior"]  # a run saved before fits recorded it: read the layout
    method = str(attrs.get("method", ""))
    if method == "dawid-skene":
        method = "dawid-skene" if "q0" in post else "consensus" if "p_consensus" in post else "one-coin"
    return get_model(method, "win-rate")


def _win_rate_arrays(idata: az.InferenceData, n_first: np.ndarray, n_second: np.ndarray,
                     label: np.ndarray, pair: np.ndarray) -> dict[str, np.ndarray]:
    """The declaration's data arrays with one row (pattern of weight 1) per item."""
    from ..winrate.encode import VerdictPatterns

    const = idata["constant_data"]
    n_tie = const["n_tie"].to_numpy() if "n_tie" in const else np.zeros_like(n_first)
    U = n_first.shape[0]
    return VerdictPatterns(
        n1=n_first.astype(float), n0=n_second.astype(float), n_tie=n_tie.astype(float),
        label=label.astype(np.int64), pair=pair.astype(np.int64), weight=np.ones(U),
        unit_pattern=np.arange(U),
        items_per_pair=np.bincount(pair, minlength=idata["posterior"].sizes["pair"]).astype(float),
    ).arrays()


def win_rate_checks(idata: az.InferenceData, *, max_draws: int = 400, seed: int = 0) -> list[PPCCheck]:
    """Replicate a win-rate fit's verdicts and compare agreement rates and win counts.

    The verdicts are redrawn by the declaration's observed ``t``
    (:mod:`bayes_judge.generative.winrate_models`) given every posterior draw, one item per row.
    Dawid-Skene (two-coin, one-coin, hierarchical): for every item u of pair g, the human label
    ``h ~ Bernoulli(p_g)`` (kept at the human label where the fit observed it,
    ``prior="in-distribution"``), then judge e's verdicts for the pair's first system
    ``~ Binomial(n_ue, q0 if h else 1 - q1)`` with the observed number of verdicts ``n_ue``.
    Independent raters: ``~ Binomial(n_ue, k_ge)``.

    Returns
    -------
    list of PPCCheck
        ``agreement with the other judges``: per judge, the share of its verdicts that agree with
        the majority of the other judges on the item (items where they are tied left out), when
        there are two or more judges; ``agreement between two judges``: per pair of judges, the
        share of the items both decided on which they name the same system (3 to
        :data:`MAX_JUDGES_PAIRWISE` judges); ``order consistency``: per judge with items judged in
        both presentation orders as two verdicts (``swap="none"``), the share of those items on
        which both verdicts name the same system; ``wins``: per pair of systems, the number of
        verdicts for the pair's first system.  Observed agreement or consistency above the
        replicated values means the judges' errors are correlated (with each other, or between a
        judge's two orders) beyond the model's conditional independence.

    Raises
    ------
    ValueError
        The fit is not one of these models (see :func:`win_rate_ppc_applies`).
    """
    if not win_rate_ppc_applies(idata):
        raise ValueError("win_rate_checks needs a Dawid-Skene or independent-raters fit of bj.win_rate")
    from ..inference.predictive import posterior_predictive
    from ..winrate.encode import VerdictPatterns

    rng = np.random.default_rng(seed)
    obs = idata["observed_data"]
    n_first, n_second = obs["n_first"].to_numpy(), obs["n_second"].to_numpy()
    n_tot = n_first + n_second
    pair = idata["constant_data"]["item_pair"].to_numpy().astype(int)
    label = idata["constant_data"]["human_label"].to_numpy().astype(int)
    if str((idata.attrs or {}).get("prior", "")) != "in-distribution":
        label = np.full_like(label, -1)
    post = idata["posterior"]
    n_total = post.sizes["chain"] * post.sizes["draw"]
    idx = _draw_index(n_total, n_tot.size, max_draws, rng)
    spec = _win_rate_spec(idata)
    judges = [str(j) for j in post["judge"].to_numpy()]
    pairs = [str(g) for g in post["pair"].to_numpy()]
    rep = posterior_predictive(
        spec, _win_rate_arrays(idata, n_first, n_second, label, pair), dims=VerdictPatterns.DIMS,
        coords={"pair": pairs, "judge": judges}, posterior=_draws(post, idx), seed=seed,
    )
    rep_first = rep[spec.observed[0]].astype(float)  # (D, U, E) verdicts for the first system
    checks = []
    if len(judges) >= 2:
        observed = _agreement(n_first[None], n_tot)[0]
        met = np.isfinite(observed)  # judges with an item the others decided
        if met.any():
            checks.append(
                PPCCheck(
                    name="agreement with the other judges",
                    xlabel="share of the judge's verdicts that agree with the majority of the other judges",
                    labels=[j for j, m in zip(judges, met, strict=True) if m],
                    observed=observed[met],
                    replicated=_agreement(rep_first, n_tot)[:, met],
                )
            )
    if 3 <= len(judges) <= MAX_JUDGES_PAIRWISE:
        ea, eb = np.triu_indices(len(judges), k=1)
        observed = _pair_agreement(n_first[None], n_tot, ea, eb)[0]
        met = np.isfinite(observed)  # pairs that decided some item together
        ea, eb = ea[met], eb[met]
        if ea.size:
            checks.append(
                PPCCheck(
                    name="agreement between two judges",
                    xlabel="share of the items on which the two judges name the same system",
                    labels=[f"{judges[i]} & {judges[j]}" for i, j in zip(ea, eb, strict=True)],
                    observed=observed[met],
                    replicated=_pair_agreement(rep_first, n_tot, ea, eb),
                )
            )
    if (n_tot == 2).any():  # both presentation orders kept as two verdicts (swap="none")
        both = (n_tot == 2).any(axis=0)
        checks.append(
            PPCCheck(
                name="order consistency",
                xlabel="share of the judge's items judged in both orders on which both verdicts name the same system",
                labels=[j for j, b in zip(judges, both, strict=True) if b],
                observed=_order_consistency(n_first[None], n_tot)[0][both],
                replicated=_order_consistency(rep_first, n_tot)[:, both],
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


def _item_verdict(first: np.ndarray, n_tot: np.ndarray) -> np.ndarray:
    """(D, U, E) verdicts for G0 -> (D, U, E) int8: +1 the judge's verdicts on the item favour
    G0, -1 G1, 0 tied or none."""
    return np.sign(2 * first - n_tot).astype(np.int8)


def _pair_agreement(first: np.ndarray, n_tot: np.ndarray, ea: np.ndarray, eb: np.ndarray) -> np.ndarray:
    """(D, U, E) verdicts for G0 -> (D, P): for every pair of judges (ea[k], eb[k]), the share of
    the items on which both name a system (not tied) that they name the same one.

    Given the true preference, Dawid-Skene's judges agree with chance
    q_e q_e' + (1 − q_e)(1 − q_e'); judges whose errors are correlated agree more often than that.
    """
    v = _item_verdict(first, n_tot)
    a, b = v[..., ea], v[..., eb]  # (D, U, P)
    counted = (a != 0) & (b != 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((a == b) & counted).sum(axis=1) / counted.sum(axis=1)


def _order_consistency(first: np.ndarray, n_tot: np.ndarray) -> np.ndarray:
    """(D, U, E) verdicts for G0 -> (D, E): over the items a judge judged in both presentation
    orders (two verdicts, no tie), the share on which both verdicts name the same system.

    The model's two verdicts are independent given the true preference (consistent with chance
    q² + (1 − q)²); a judge whose two orders err together is more consistent than that, a judge
    swayed by position less.
    """
    two = n_tot == 2  # (U, E)
    same = two & ((first == 0) | (first == 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return same.sum(axis=1) / two.sum(axis=0)


def _wins_per_pair(first: np.ndarray, pair: np.ndarray, n_pairs: int) -> np.ndarray:
    per_unit = first.sum(axis=-1)  # (D, U)
    out = np.zeros((first.shape[0], n_pairs))
    for g in range(n_pairs):
        out[:, g] = per_unit[:, pair == g].sum(axis=1)
    return out


def _ranking_design(idata: az.InferenceData, post, model: str):
    """The ranking declaration's data arrays and options of a fit, from its InferenceData."""
    import pandas as pd

    from ..ranking.encode import RankData

    n_cand = post.sizes["candidate"]
    items = post["item"].to_numpy() if "item" in post.coords else np.zeros(n_cand)
    cand_item = pd.factorize(items)[0].astype(np.int64)  # candidates of an item are contiguous
    arrays = {
        "i": idata["constant_data"]["i"].to_numpy().astype(np.int64),
        "j": idata["constant_data"]["j"].to_numpy().astype(np.int64),
        "p": idata["observed_data"]["p"].to_numpy().astype(np.float64),
        "y": idata["observed_data"]["y"].to_numpy().astype(np.float64),
        "cand_item": cand_item,
        "n_per_item": np.bincount(cand_item).astype(np.float64),
    }
    if model == "poe-g":
        options: dict = {"w": float((idata.attrs or {}).get("centring_w", 1.0))}
    else:
        options = {"position_bias": "gamma" in post}
        if model == "bt":
            options["ties"] = "nu" in post
    return arrays, RankData.DIMS, {"candidate": np.arange(n_cand)}, options


def ranking_checks(idata: az.InferenceData, *, max_draws: int = 400, seed: int = 0) -> list[PPCCheck]:
    """Replicate a Bayesian ranking's comparisons and compare win counts per candidate.

    Each comparison k between the candidates i (position A) and j (position B) is redrawn by the
    declaration's observed ``c`` (:mod:`bayes_judge.generative.ranking_models`) given the
    posterior draws: position A wins with probability ``sigmoid(s_i - s_j + gamma)`` (soft /
    hard Bradley-Terry; Davidson ties when the fit has ``nu``), or, for the Gaussian experts,
    when ``p_rep ~ Normal(alpha d + beta, sigma)`` exceeds 1/2.  Ties count half a win.

    Returns
    -------
    list of PPCCheck
        ``wins``: per candidate, comparisons won; ``position A``: share of comparisons won by
        the candidate shown first (checks the position-bias part of the model).
    """
    from ..generative import get_model
    from ..inference.predictive import posterior_predictive

    rng = np.random.default_rng(seed)
    y = idata["observed_data"]["y"].to_numpy().astype(float)
    i = idata["constant_data"]["i"].to_numpy().astype(int)
    j = idata["constant_data"]["j"].to_numpy().astype(int)
    post = idata["posterior"]
    model = str((idata.attrs or {}).get("model", "poe-bt"))
    n_total = post.sizes["chain"] * post.sizes["draw"]
    idx = _draw_index(n_total, y.size, max_draws, rng)
    spec = get_model(model, "ranking")
    arrays, dims, coords, options = _ranking_design(idata, post, model)
    rep = posterior_predictive(spec, arrays, dims=dims, coords=coords, posterior=_draws(post, idx),
                               options=options, seed=seed)[spec.observed[0]]
    if model == "poe-g":  # replicated p_ij -> decision, as the observed y reads p_a
        rep = np.where(rep > 0.5, 1.0, np.where(rep < 0.5, 0.0, 0.5))
    y_rep = rep.astype(float)
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
