"""Reading a leaderboard fit: one row per system, pairwise preference probabilities, tiers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..analysis.wording import HDI_PROB

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az
    import pandas as pd

__all__ = ["leaderboard_summary", "pairwise_prob", "judge_table"]


def _check(idata: az.InferenceData) -> None:
    if not hasattr(idata, "groups") or "posterior" not in idata.groups():
        raise ValueError(f"not a leaderboard fit but a {type(idata).__name__}; pass what bj.leaderboard(...) returns "
                         "(or bj.load_run of a saved one)")
    if getattr(idata, "attrs", {}).get("task") != "leaderboard" and "posterior" in idata.groups():
        if idata["posterior"].attrs.get("task") != "leaderboard":
            raise ValueError("not a leaderboard fit (attrs task != 'leaderboard'); use bj.leaderboard(...)")


def _scores(idata: az.InferenceData) -> tuple[np.ndarray, list[str]]:
    _check(idata)
    s = idata["posterior"]["s"]
    systems = [str(x) for x in s["system"].to_numpy()]
    return s.to_numpy().reshape(-1, len(systems)), systems


def _tiers(draws: np.ndarray, order: np.ndarray, prob: float) -> np.ndarray:
    """Tier of every system: a new tier starts at the first system that the current tier's leader
    beats with posterior probability ``prob`` (scores ordered by mean)."""
    tier = np.empty(len(order), dtype=int)
    t, lead = 1, order[0]
    for k in order:
        if np.mean(draws[:, lead] > draws[:, k]) >= prob:
            t, lead = t + 1, k
        tier[k] = t
    return tier


def leaderboard_summary(idata: az.InferenceData, *, hdi_prob: float = HDI_PROB, tier_prob: float = 0.95) -> pd.DataFrame:
    """One row per system, best first.

    Columns: ``system``; ``mean``, ``sd``, ``hdi_low``, ``hdi_high`` of the score ``s`` (logit
    scale of the human preference: σ(s_i − s_j) is the probability a person prefers system i's
    answer to system j's); ``rank_mean``, ``rank_low``, ``rank_high`` (central ``hdi_prob``
    interval of the rank, 1 = best); ``p_best``; ``tier`` (systems in one tier cannot be told
    apart from the tier's leader at ``tier_prob``); ``r_hat``, ``ess_bulk`` (of the sampled scores:
    ``s_judges`` where the score bridge carried them over; the worse of ``s_judges`` and ``s`` where
    the bridge was learnt from labels, both sampled).  ``attrs["estimand"]``:
    ``"human"`` (people's preference) or ``"judges"`` (the panel's own, :func:`bayes_judge.leaderboard`);
    ``attrs["estimand_note"]`` and ``attrs["score_bridge"]``, for people's scores read through
    judges without labels: which scores, and the prior that widened them (:mod:`bayes_judge.leaderboard.bridge`);
    ``attrs["approximate"]``, for a fit with ``sampler="laplace"``: what the draws approximate.

    Examples
    --------
    >>> import bayes_judge as bj                                        # doctest: +SKIP
    >>> idata = bj.leaderboard(battles, sampler="laplace")                  # doctest: +SKIP
    >>> bj.leaderboard_summary(idata)[["system", "mean", "hdi_low", "hdi_high", "p_best", "tier"]]  # doctest: +SKIP
    """
    import arviz as az
    import pandas as pd

    from ..analysis.wording import check_hdi_prob
    from ..inference.laplace import cap_ess
    from ..inference.mcmc_stats import rhat_ess_bulk

    check_hdi_prob(hdi_prob, "leaderboard_summary: ")
    if not 0.5 < tier_prob < 1:
        raise ValueError(f"tier_prob must be in (0.5, 1); got {tier_prob}")
    draws, systems = _scores(idata)
    n = len(systems)
    ranks = n - np.argsort(np.argsort(draws, axis=1), axis=1)  # 1 = best
    lo_q, hi_q = (1 - hdi_prob) / 2, 1 - (1 - hdi_prob) / 2
    hdi = az.hdi(idata["posterior"]["s"], hdi_prob=hdi_prob)["s"].to_numpy()
    best = np.bincount(np.argmax(draws, axis=1), minlength=n) / len(draws)
    mean = draws.mean(axis=0)
    order = np.argsort(-mean, kind="stable")
    # the sampler's convergence is the sampled scores': a bridged s adds independent draws of the
    # bridge's prior, which would dilute R-hat and inflate the ESS of an unconverged reading
    sampled = "s_judges" if "s_judges" in idata["posterior"] else "s"
    r_hat, ess = rhat_ess_bulk(idata["posterior"][sampled].transpose("chain", "draw", ...).to_numpy())
    if "bridge_lambda" in idata["posterior"]:  # a bridge learnt from labels is sampled too: the worse of the two
        r2, e2 = rhat_ess_bulk(idata["posterior"]["s"].transpose("chain", "draw", ...).to_numpy())
        r_hat, ess = np.fmax(r_hat, r2), np.fmin(ess, e2)
    out = pd.DataFrame({
        "system": systems, "mean": mean, "sd": draws.std(axis=0, ddof=1),
        "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1],
        "rank_mean": ranks.mean(axis=0), "rank_low": np.quantile(ranks, lo_q, axis=0, method="lower"),
        "rank_high": np.quantile(ranks, hi_q, axis=0, method="higher"), "p_best": best,
        "tier": _tiers(draws, order, tier_prob),
        "r_hat": r_hat, "ess_bulk": cap_ess(ess, idata.attrs or {}),
    })
    out = out.iloc[order].reset_index(drop=True)
    out.attrs["hdi_prob"] = float(hdi_prob)  # the mass of its intervals (plot_leaderboard_forest labels them)
    out.attrs["estimand"] = str((idata.attrs or {}).get("estimand", "human"))
    for key in ("estimand_note", "score_bridge"):  # which scores, and the prior that widened them
        if (idata.attrs or {}).get(key):
            out.attrs[key] = str(idata.attrs[key])
    approx = (idata.attrs or {}).get("approximate") or idata["posterior"].attrs.get("approximate")
    if approx:  # a Laplace fit: the summary says its intervals are approximate
        out.attrs["approximate"] = str(approx)
    return out


def pairwise_prob(idata: az.InferenceData, *, kind: str = "preference") -> pd.DataFrame:
    """P(i ≻ j) for every pair of systems, as a square table (rows i, columns j).

    ``kind="preference"``: the posterior mean of σ(s_i − s_j), the probability that a person
    prefers system i's answer to system j's on a prompt (Bradley-Terry).  ``kind="order"``: the
    posterior probability that s_i > s_j (how sure the ranking of the two is).
    """
    import pandas as pd

    draws, systems = _scores(idata)
    diff = draws[:, :, None] - draws[:, None, :]
    if kind == "preference":
        val = (1.0 / (1.0 + np.exp(-diff))).mean(axis=0)
    elif kind == "order":
        val = (diff > 0).mean(axis=0)
    else:
        raise ValueError(f"kind must be 'preference' or 'order', not {kind!r}")
    np.fill_diagonal(val, np.nan)
    out = pd.DataFrame(val, index=pd.Index(systems, name="system"), columns=systems)
    out.attrs["kind"] = kind  # what its values are (plot_preference_matrix titles it by this)
    return out


def judge_table(idata: az.InferenceData, *, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
    """Per judge: accuracy ``q`` = σ(α) (P(the judge names the answer a person prefers), no
    position bias, no tie) and position bias ``beta`` (logit shift toward A), means and
    intervals; empty columns where the model has no such parameter."""
    import arviz as az
    import pandas as pd

    post = idata["posterior"]
    judges = [str(x) for x in post["judge"].to_numpy()] if "judge" in post.coords else []
    out = pd.DataFrame({"judge": judges})
    for var in ("q", "beta"):
        if var in post:
            h = az.hdi(post[var], hdi_prob=hdi_prob)[var].to_numpy()
            out[f"{var}_mean"] = post[var].mean(("chain", "draw")).to_numpy()
            out[f"{var}_low"], out[f"{var}_high"] = h[:, 0], h[:, 1]
    return out
