"""Tables read off posterior InferenceData."""

from __future__ import annotations

import json
import warnings

import arviz as az
import numpy as np
import pandas as pd

from ..inference.mcmc_stats import rhat_ess_bulk
from ..winrate.kde import kde_mode
from .wording import HDI_PROB, check_hdi_prob, verdict_labels

__all__ = ["win_rate_summary", "judge_summary", "score_summary", "pairwise_prob", "compare_systems"]


def win_rate_summary(
    idata: az.InferenceData, *, hdi_prob: float = HDI_PROB, by_judge: bool = False
) -> pd.DataFrame:
    """One row per pair of systems: the posterior of p and what the judges observed.

    Parameters
    ----------
    idata : arviz.InferenceData
        The result of :func:`bayes_judge.win_rate`.
    hdi_prob : float
        Mass of the interval (default 0.9, as everywhere in the package).
    by_judge : bool
        For BWRS and observed fits: one row per (pair, judge) from the per-judge estimates
        (``p_judge`` / ``k``), as the seed reports them per evaluator mode, with columns p_mean,
        p_median, p_mode, hdi_low, hdi_high, prob_gt_half, k_observed, frac_outside_unit.  A
        BWRS judge's rows follow the pooled rule below: ``p_mean`` is the median of its eq. 11
        draws and it and the interval are clipped to [0, 1].

    Returns
    -------
    pandas.DataFrame indexed by pair label, with columns
        system_a, system_b : the pair's orientation; p = P(a human prefers system_a)
        p_mean, p_mode : posterior mean and KDE mode of p (Gao et al. 2024 p_mean / p_mode); for BWRS,
            whose eq. 11 draws may leave [0, 1] (a ratio whose mean need not exist), ``p_mean``
            is the draws' median, clipped to [0, 1] as the interval is (``p_median`` unclipped)
        p_median : posterior median of p
        hdi_low, hdi_high : highest-density interval of p; for BWRS clipped to [0, 1]; for the
            no-label human rate (``"bridge"``) the equal-tailed interval (``attrs["interval"]``:
            its draws pile against 0 or 1 where the panel is unanimous, and the highest-density
            interval would then drop the lower tail that the prior is there to keep), and for the
            judges' rate (``"panel"``: with few items its bootstrap density is flat)
        prob_gt_half : P(p > 0.5 | data), the probability that system_a is the better system
        k_observed : observed win rate (eq. 4) averaged over judges, with ties as the fit encoded
            them: left out (``ties="skip"``, the default of the label regression, the bridge and
            PPI) or resolved by coin flips (``ties="random"``: observed, BWRS, Dawid-Skene), so
            one table's k differs by method where it has ties (MT-Bench: 0.73 against 0.65)
        r_hat, ess_bulk : convergence diagnostics of p across chains; ``r_hat`` is NaN with a single
            chain or where p's draws do not vary.  For the estimators that draw independent samples
            (bridge, BWRS, observed, PPI) ``r_hat`` is about 1 by construction and says nothing
            about convergence: it checks MCMC fits only
        frac_outside_unit : share of p draws outside [0, 1] (BWRS, eq. 14)
        frac_q_sum_le_1 : share of (q0, q1) draws with q0 + q1 <= 1 (eq. 14), over the judges that
            gave a verdict on the pair (a judge's q0, q1 on a pair it never judged are its prior)
        method, prior : from the fit
        estimand : ``"human"`` (p is the rate people would give) or ``"judges"`` (the panel's own
            rate), as :func:`bayes_judge.win_rate` was asked
        low_prior_x0.5, high_prior_x0.5, low_prior_x2, high_prior_x2 : no-label human-rate fits
            (``"bridge"``) only: the 90% equal-tailed interval with the bridge prior's spreads halved
            and doubled (its sensitivity); the table's ``attrs`` hold ``estimand_note`` and
            ``bridge_prior`` (the prior, in words)
        labels_to_decide : no-label human-rate fits (``"bridge"``) only: where the interval holds
            ½, the human labels that would decide the pair on their own (0 where it is decided;
            :func:`bayes_judge.next_labels` says which items to label)

    Examples
    --------
    >>> import bayes_judge as bj                                               # doctest: +SKIP
    >>> s = bj.win_rate_summary(bj.win_rate(df), hdi_prob=0.9)                    # doctest: +SKIP
    >>> s[["estimand", "p_mean", "hdi_low", "hdi_high", "labels_to_decide"]]      # doctest: +SKIP
    """
    check_hdi_prob(hdi_prob)
    if not hasattr(idata, "posterior") or "p" not in idata.posterior:
        raise ValueError("win_rate_summary needs an InferenceData with a posterior variable 'p'")
    post = idata.posterior
    if by_judge:
        return _by_judge(idata, hdi_prob)
    p = post["p"]
    pairs = list(p["pair"].to_numpy())
    attrs = idata.attrs if idata.attrs else post.attrs
    # attrs come back from NetCDF as arrays, and a one-element list as a bare string
    first = [str(x) for x in np.atleast_1d(attrs.get("pair_first", [s.split(" vs ")[0] for s in pairs]))]
    second = [str(x) for x in np.atleast_1d(attrs.get("pair_second", [s.split(" vs ")[-1] for s in pairs]))]
    pv = p.to_numpy()  # (chain, draw, pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if attrs.get("interval") == "eti":  # the fit asks for equal tails (its draws pile against 0 or 1)
            tail = (1 - hdi_prob) / 2
            hdi = np.quantile(pv.reshape(-1, len(pairs)), [tail, 1 - tail], axis=0).T
        else:
            hdi = az.hdi(p, hdi_prob=hdi_prob)["p"].to_numpy()
        rhat, ess = rhat_ess_bulk(pv)  # R-hat NaN with one chain
    q_le = np.full(len(pairs), np.nan)
    if "q0" in post and "q1" in post:
        s = (post["q0"] + post["q1"]).transpose("chain", "draw", "pair", "judge").to_numpy()
        le = (s <= 1).mean(axis=(0, 1))  # (pair, judge)
        cells = _verdict_cells(idata, post)
        judged = np.ones(le.shape, dtype=bool) if cells is None else cells > 0
        n_judged = judged.sum(axis=1)
        q_le = np.where(n_judged > 0, (le * judged).sum(axis=1) / np.maximum(n_judged, 1), np.nan)
    k_obs = (
        idata.constant_data["k_observed"].to_numpy()
        if hasattr(idata, "constant_data") and "k_observed" in idata.constant_data
        else np.full(len(pairs), np.nan)
    )
    flat = pv.reshape(-1, len(pairs))
    is_bwrs = attrs.get("method", "") == "bwrs"
    median = np.median(flat, axis=0)
    if is_bwrs:
        hdi = np.clip(hdi, 0.0, 1.0)
    out = pd.DataFrame(
        {
            "system_a": first,
            "system_b": second,
            "p_mean": np.clip(median, 0.0, 1.0) if is_bwrs else flat.mean(axis=0),  # within its clipped interval
            "p_median": median,
            "p_mode": [kde_mode(flat[:, i]) for i in range(len(pairs))],
            "hdi_low": hdi[:, 0],
            "hdi_high": hdi[:, 1],
            "prob_gt_half": (flat > 0.5).mean(axis=0),
            "k_observed": k_obs,
            "r_hat": rhat,
            "ess_bulk": ess,
            "frac_outside_unit": ((flat < 0) | (flat > 1)).mean(axis=0),
            "frac_q_sum_le_1": q_le,
            "method": attrs.get("method", ""),
            "prior": attrs.get("prior", ""),
            "estimand": str(attrs.get("estimand", "human")),
        },
        index=pd.Index(pairs, name="pair"),
    )
    # a human rate whose interval holds ½ is undecided: how many labels would decide it alone
    n_items = np.atleast_1d(attrs.get("n_items", [])).astype(float)
    if out["estimand"].iloc[0] == "human" and n_items.size == len(pairs):
        from ..winrate.bridge import labels_to_decide

        undecided = (out["hdi_low"] <= 0.5) & (out["hdi_high"] >= 0.5)
        from scipy.stats import norm

        z = float(norm.ppf(1 - (1 - hdi_prob) / 2))  # decided at the summary's own interval mass
        out["labels_to_decide"] = np.where(undecided, labels_to_decide(out["p_mean"].to_numpy(), n_items, z=z), 0.0)
    # what a no-label human rate rests on, with the table: the bridge prior and how the 90% interval
    # moves when its spreads are halved / doubled
    sens = prior_sensitivity(idata)
    if sens is not None:
        out = out.join(sens.drop(columns=["fitted_low", "fitted_high"]))
    out.attrs.update({k: str(attrs[k]) for k in ("estimand_note", "bridge_prior") if attrs.get(k)})
    return out


def prior_sensitivity(idata: az.InferenceData) -> pd.DataFrame | None:
    """How a no-label human rate's 90% equal-tailed interval moves with the bridge prior: per pair
    (index), ``fitted_low`` / ``fitted_high`` as fitted and ``low_prior_x0.5`` … ``high_prior_x2``
    with the prior's spreads halved and doubled (``attrs["prior_sensitivity"]``, computed by
    :func:`bayes_judge.win_rate` on the same consensus draws); None for other fits. The one reader
    of it for the summary, the report and the CLI."""
    sens = json.loads(str((idata.attrs or {}).get("prior_sensitivity") or "{}"))
    if not sens:
        return None
    p = idata["posterior"]["p"]
    pairs = [str(x) for x in p["pair"].to_numpy()]
    q = np.quantile(p.to_numpy().reshape(-1, len(pairs)), [0.05, 0.95], axis=0)
    out = pd.DataFrame({"fitted_low": q[0], "fitted_high": q[1]}, index=pd.Index(pairs, name="pair"))
    for key, bounds in sens.items():
        b = np.asarray(bounds, dtype=float).reshape(-1, 2)
        if len(b) == len(pairs):
            out[f"low_prior_{key}"], out[f"high_prior_{key}"] = b[:, 0], b[:, 1]
    return out


def _verdict_cells(idata: az.InferenceData, post) -> np.ndarray | None:
    """Verdicts of every (pair, judge) of a win-rate fit, shape (P, E), in the posterior's order.

    Summed from ``observed_data`` ``n_first + n_second`` (item, judge) over the items of each pair
    (``constant_data["item_pair"]``); else 1 where ``constant_data["k_judge"]`` is finite (a judge
    with verdicts on the pair) and 0 where it is NaN; None where the fit stores neither.
    """
    pairs, judges = post["pair"].to_numpy(), post["judge"].to_numpy()
    P, E = len(pairs), len(judges)
    obs = idata["observed_data"] if "observed_data" in idata.groups() else None
    const = idata["constant_data"] if "constant_data" in idata.groups() else None
    if const is None:
        return None
    if (obs is not None and "n_first" in obs and "n_second" in obs and "item_pair" in const
            and set(obs["n_first"].dims) == {"item", "judge"}):  # as the package's fits store them
        tot = (obs["n_first"] + obs["n_second"]).transpose("item", "judge")
        if [str(j) for j in tot["judge"].to_numpy()] == [str(j) for j in judges]:
            pair = const["item_pair"].to_numpy().astype(int)
            out = np.zeros((P, E))
            np.add.at(out, pair, tot.to_numpy())
            return out
    if "k_judge" in const and const["k_judge"].shape == (P, E):
        return np.isfinite(const["k_judge"].transpose("pair", "judge").to_numpy()).astype(float)
    return None


def _beta_interval(k: np.ndarray, n: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and equal-tailed interval of Beta(1 + k, 1 + n − k): a share with a uniform prior."""
    from scipy import stats

    a, b = 1.0 + k, 1.0 + n - k
    tail = (1 - prob) / 2
    return a / (a + b), stats.beta.ppf(tail, a, b), stats.beta.ppf(1 - tail, a, b)


def judge_summary(idata: az.InferenceData, *, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
    """One row per judge: accuracy on each class, position bias and agreement, with intervals.

    Parameters
    ----------
    idata : arviz.InferenceData
        A win-rate fit (:func:`bayes_judge.win_rate`).
    hdi_prob : float
        Mass of the intervals.

    Returns
    -------
    pandas.DataFrame indexed by judge, with columns
        acc_g0, acc_g0_low, acc_g0_high : accuracy on items a human prefers G0 (q0 of Gao et al. 2024
            eq. 5): the posterior of q0 where the model has it (pooled over pairs, each pair weighted
            by the judge's verdicts on it: a pair the judge never judged, whose q0 is its prior, does
            not count), else the
            Beta(1 + agree, 1 + disagree) posterior from the labelled items; for the consensus
            model (``ds_model="consensus"``) ``q c + (1 − q)(1 − c)``, its accuracy on the
            consensus ``q`` carried through the consensus's agreement ``c`` with a human
        acc_g1, acc_g1_low, acc_g1_high : the same for G1 (q1, eq. 6)
        n_labelled_verdicts : verdicts on labelled items (the basis of a label-based accuracy)
        p_first, p_first_low, p_first_high : P(the judge names the first-shown answer), Liusie, Manakul & Gales 2024
            eq. 8 (0.5: no position bias), from the decided rows of comparisons it saw in both
            orders (NaN where it saw none: a system always shown first makes that share its win
            rate, not a position bias)
        agreement, agreement_low, agreement_high : share of items on which the judge's verdict
            agrees with the majority of the other judges (items with a decided majority); NaN where
            the judge shares no such item with the other judges (one judge alone, say)
        source : "posterior" (accuracies from the model's q), "labels", or "none" (no model
            accuracy and no labelled verdict: the accuracies are NaN; fit ``method="dawid-skene"``
            or add labels)

    Examples
    --------
    >>> import bayes_judge as bj                                              # doctest: +SKIP
    >>> bj.judge_summary(bj.win_rate(df))[["acc_g0", "acc_g1", "p_first", "agreement"]]  # doctest: +SKIP
    """
    import json

    check_hdi_prob(hdi_prob)
    if not hasattr(idata, "observed_data") or "n_first" not in idata.observed_data:
        raise ValueError("judge_summary needs a win-rate fit of bj.win_rate (observed n_first / n_second)")
    judges = [str(j) for j in idata.observed_data["judge"].to_numpy()]
    n1 = idata.observed_data["n_first"].to_numpy()
    n0 = idata.observed_data["n_second"].to_numpy()
    lab = idata["constant_data"]["human_label"].to_numpy() if "human_label" in idata["constant_data"] else np.full(n1.shape[0], -1)
    out = pd.DataFrame(index=pd.Index(judges, name="judge"))
    post = idata["posterior"]
    q0 = post["q0"] if "q0" in post else post["q"] if "q" in post else None
    q1 = post["q1"] if "q1" in post else post["q"] if "q" in post else None
    if (idata.attrs or {}).get("model") == "consensus":  # q is the accuracy on the consensus
        c = post["agreement"]
        q0 = q1 = post["q"] * c + (1.0 - post["q"]) * (1.0 - c)
    tail = (1 - hdi_prob) / 2
    z1, z0 = lab == 1, lab == 0
    for cls, qv, sel, agree in (("g0", q0, z1, n1), ("g1", q1, z0, n0)):
        if qv is not None:
            x = _pooled_accuracy(idata, qv, len(judges))
            ok = np.isfinite(x).all(axis=0)  # a judge with no verdict on any pair: unknown
            m, lo, hi = (np.full(len(judges), np.nan) for _ in range(3))
            if ok.any():
                m[ok] = x[:, ok].mean(axis=0)
                lo[ok], hi[ok] = np.quantile(x[:, ok], [tail, 1 - tail], axis=0)
            out[f"acc_{cls}"], out[f"acc_{cls}_low"], out[f"acc_{cls}_high"] = m, lo, hi
        else:
            k, n = agree[sel].sum(axis=0), (n1 + n0)[sel].sum(axis=0)
            m, lo, hi = (np.where(n > 0, x, np.nan) for x in _beta_interval(k, n, hdi_prob))  # no label: unknown
            out[f"acc_{cls}"], out[f"acc_{cls}_low"], out[f"acc_{cls}_high"] = m, lo, hi
    out["n_labelled_verdicts"] = (n1 + n0)[lab >= 0].sum(axis=0)
    attrs = idata.attrs or {}
    counts = json.loads(str(attrs.get("position_counts", "{}")) or "{}")
    base = [j.split(" [G0 in ")[0] for j in judges]
    ka = np.array([counts.get(b, [np.nan, np.nan])[0] for b in base], dtype=float)
    na = np.array([counts.get(b, [np.nan, np.nan])[1] for b in base], dtype=float)
    out["p_first"], out["p_first_low"], out["p_first_high"] = (
        np.where(na > 0, x, np.nan) for x in _beta_interval(ka, na, hdi_prob))
    vote = np.sign(n1 - n0)  # (item, judge): +1 G0, -1 G1, 0 tie or no verdict
    others = vote.sum(axis=1, keepdims=True) - vote
    has = (vote != 0) & (others != 0)
    k = ((np.sign(others) == vote) & has).sum(axis=0).astype(float)
    n = has.sum(axis=0).astype(float)
    out["agreement"], out["agreement_low"], out["agreement_high"] = (
        np.where(n > 0, x, np.nan) for x in _beta_interval(k, n, hdi_prob))  # nothing shared: unknown
    out["source"] = "posterior" if q0 is not None else np.where(out["n_labelled_verdicts"] > 0, "labels", "none")
    return out


def _pooled_accuracy(idata: az.InferenceData, qv, n_judges: int) -> np.ndarray:
    """Draws of each judge's accuracy pooled over pairs, shape (draws, E).

    Each pair counts by the judge's verdicts on it (:func:`_verdict_cells`), so a pair it never
    judged, where its accuracy is the prior's, counts nothing; NaN for a judge with no verdict.
    Without the counts (a fit that stores none) the pairs count equally.
    """
    if "pair" not in qv.dims:
        return qv.to_numpy().reshape(-1, n_judges)
    q = qv.transpose("chain", "draw", "pair", "judge").to_numpy()
    q = q.reshape(-1, q.shape[-2], q.shape[-1])  # (draws, P, E)
    cells = _verdict_cells(idata, qv)
    w = np.ones(q.shape[1:]) if cells is None else cells
    total = w.sum(axis=0)  # (E,)
    x = np.einsum("dpe,pe->de", q, w) / np.where(total > 0, total, 1.0)
    x[:, total <= 0] = np.nan
    return x


def _by_judge(idata: az.InferenceData, hdi_prob: float) -> pd.DataFrame:
    post = idata["posterior"]
    var = "p_judge" if "p_judge" in post else "k" if "k" in post else None
    if var is None:
        raise ValueError(
            "by_judge=True needs per-judge win rates (method='bwrs' or 'observed'); "
            "a Dawid-Skene fit has one p per pair"
        )
    rows = []
    k_judge = idata["constant_data"]["k_judge"]
    attrs = idata.attrs if idata.attrs else post.attrs
    is_bwrs = attrs.get("method", "") == "bwrs"
    for pair in post["pair"].to_numpy():
        for judge in post["judge"].to_numpy():
            x = post[var].sel(pair=pair, judge=judge).to_numpy().ravel()
            if not np.isfinite(x).any():
                continue
            lo, hi = az.hdi(x, hdi_prob=hdi_prob)
            median = float(np.median(x))
            if is_bwrs:  # the pooled rule: eq. 11's ratio has heavy tails, its mean need not exist
                lo, hi = float(np.clip(lo, 0.0, 1.0)), float(np.clip(hi, 0.0, 1.0))
            rows.append(
                {
                    "pair": pair,
                    "judge": judge,
                    "p_mean": float(np.clip(median, 0.0, 1.0)) if is_bwrs else x.mean(),  # as its clipped interval
                    "p_median": median,
                    "p_mode": kde_mode(x),
                    "hdi_low": lo,
                    "hdi_high": hi,
                    "prob_gt_half": (x > 0.5).mean(),
                    "k_observed": float(k_judge.sel(pair=pair, judge=judge)),
                    "frac_outside_unit": ((x < 0) | (x > 1)).mean(),
                }
            )
    return pd.DataFrame(rows).set_index(["pair", "judge"])


def _hdi_columns(x: np.ndarray, hdi_prob: float) -> np.ndarray:
    """Highest-density interval of every column of ``x`` (draws, m) at once, shape (m, 2).

    The narrowest window holding ``floor(hdi_prob * n)`` sorted draws, as ``az.hdi`` computes
    it for unimodal draws, vectorized over columns.
    """
    xs = np.sort(x, axis=0)
    n = xs.shape[0]
    k = int(np.floor(hdi_prob * n))
    widths = xs[k:] - xs[: n - k]
    start = np.argmin(widths, axis=0)
    cols = np.arange(xs.shape[1])
    return np.stack([xs[start, cols], xs[start + k, cols]], axis=1)


# bound on draws x pairs held in memory at once by the pairwise summaries (float64: ~160 MB)
_PAIRWISE_BLOCK = 20_000_000


def _score_blocks(idata: az.InferenceData):
    if not hasattr(idata, "posterior") or "s" not in idata.posterior or "candidate" not in idata.posterior["s"].dims:
        raise ValueError("needs a ranking InferenceData with a posterior variable 's' over dim 'candidate' "
                         "(bj.rank(..., bayesian=True))")
    s = idata.posterior["s"]
    items = np.asarray(s["item"].to_numpy(), dtype=object)
    cands = np.asarray(s["candidate_id"].to_numpy(), dtype=object)
    flat = s.to_numpy().reshape(-1, s.shape[-1])  # (draws, N)
    return flat, items, cands


def score_summary(idata: az.InferenceData, *, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
    """Per candidate: posterior mean and sd of the score, HDI, mean rank and its interval, P(best).

    Parameters
    ----------
    idata : arviz.InferenceData
        A Bayesian ranking (``bj.rank(..., bayesian=True)``), scores ``s`` over dim ``candidate``.
    hdi_prob : float
        Mass of the score HDI and of the equal-tailed rank interval.

    Returns
    -------
    pandas.DataFrame with columns item, candidate, mean, sd, hdi_low, hdi_high, mean_rank,
    rank_low, rank_high, p_best, r_hat, ess_bulk; sorted by item and mean rank (rank 1 = best,
    computed within the item for every draw).

    Examples
    --------
    >>> import bayes_judge as bj                                               # doctest: +SKIP
    >>> post = bj.rank(df, method="poe-bt", bayesian=True)                        # doctest: +SKIP
    >>> bj.score_summary(post, hdi_prob=0.9)[["candidate", "mean", "rank_low", "rank_high", "p_best"]]  # doctest: +SKIP
    """
    check_hdi_prob(hdi_prob)
    from ..inference.laplace import cap_ess
    flat, items, cands = _score_blocks(idata)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdi = az.hdi(idata["posterior"]["s"], hdi_prob=hdi_prob)["s"].to_numpy()
        rhat, ess = rhat_ess_bulk(idata["posterior"]["s"].transpose("chain", "draw", ...).to_numpy())
    ranks = np.empty_like(flat)
    for item in pd.unique(items):
        cols = np.flatnonzero(items == item)
        order = np.argsort(-flat[:, cols], axis=1)
        r = np.empty_like(order)
        np.put_along_axis(r, order, np.arange(1, cols.size + 1)[None, :], axis=1)
        ranks[:, cols] = r
    tail = (1 - hdi_prob) / 2
    out = pd.DataFrame(
        {
            "item": items,
            "candidate": cands,
            "mean": flat.mean(axis=0),
            "sd": flat.std(axis=0, ddof=1),
            "hdi_low": hdi[:, 0],
            "hdi_high": hdi[:, 1],
            "mean_rank": ranks.mean(axis=0),
            "rank_low": np.quantile(ranks, tail, axis=0, method="lower"),  # ranks are whole numbers
            "rank_high": np.quantile(ranks, 1 - tail, axis=0, method="higher"),
            "p_best": (ranks == 1).mean(axis=0),
            "r_hat": rhat,
            "ess_bulk": cap_ess(ess, idata.attrs or {}),  # a resampled Laplace fit's draws repeat
        }
    )
    # items in the fit's order (numeric ids numerically: 9 before 10), not as text
    out["_at"] = pd.Index(pd.unique(items)).get_indexer(items)
    return _approximate_note(idata, out.sort_values(["_at", "mean_rank"], kind="stable").drop(columns="_at")
                             .reset_index(drop=True))


def pairwise_prob(idata: az.InferenceData, *, item: str | None = None, kind: str = "order") -> pd.DataFrame:
    """Matrix of P(s_i > s_j | data) between the candidates of one item (or the systems of a leaderboard).

    Parameters
    ----------
    idata : arviz.InferenceData
        A Bayesian ranking, or a leaderboard (:func:`bayes_judge.leaderboard`).
    item : str, optional
        Which item (context); required when the ranking has several.
    kind : {"order", "preference"}
        ``"order"``: P(s_i > s_j), how sure the order of the two is; ``"preference"`` (leaderboards
        only): the posterior mean of σ(s_i − s_j), the probability that a person prefers system i's
        answer to system j's.

    Returns
    -------
    pandas.DataFrame, shape (N, N), rows i and columns j named by candidate; the diagonal is NaN.

    Examples
    --------
    >>> import bayes_judge as bj                                              # doctest: +SKIP
    >>> bj.pairwise_prob(idata, kind="preference").round(2)    # P(i's answer is preferred to j's)  # doctest: +SKIP
    """
    if idata.attrs.get("task") == "leaderboard":

        from ..leaderboard.summary import pairwise_prob as board_pairwise

        return board_pairwise(idata, kind=kind)
    if kind != "order":
        raise ValueError(f"kind={kind!r} applies to leaderboards only; a within-item ranking has kind='order'")
    flat, items, cands = _score_blocks(idata)
    uniq = list(pd.unique(items))
    if item is None:
        if len(uniq) > 1:
            raise ValueError(f"the ranking has {len(uniq)} items; choose one with item= (e.g. {uniq[0]!r})")
        item = uniq[0]
    if str(item) not in [str(u) for u in uniq]:
        raise ValueError(f"item {item!r} is not in the ranking (items: {uniq[:8]})")
    cols = np.flatnonzero(items.astype(str) == str(item))
    x = flat[:, cols]
    n = cols.size
    prob = np.empty((n, n))
    step = max(1, _PAIRWISE_BLOCK // (x.shape[0] * n))  # rows per block, bounded memory
    for r in range(0, n, step):
        prob[r : r + step] = (x[:, r : r + step, None] > x[:, None, :]).mean(axis=0)
    np.fill_diagonal(prob, np.nan)
    names = [str(c) for c in cands[cols]]
    out = pd.DataFrame(prob, index=pd.Index(names, name="i"), columns=pd.Index(names, name="j"))
    out.attrs["kind"] = "order"
    return out


def compare_systems(idata: az.InferenceData, *, hdi_prob: float = HDI_PROB, max_pairs: int = 5000) -> pd.DataFrame:
    """Which system (or candidate) is better, and how sure we are.

    For a win-rate fit (:func:`bayes_judge.win_rate`): one row per pair with the posterior of
    the win rate p, P(system_a better) = P(p > 0.5) and a verdict that says "cannot tell apart"
    when the HDI of p contains 0.5.  For a Bayesian ranking (:func:`bayes_judge.rank` with
    ``bayesian=True``): one row per pair of candidates of an item with the posterior of the score
    difference s_a − s_b, P(a ≻ b) and the verdict at 0.  For a leaderboard
    (:func:`bayes_judge.leaderboard`): the same per pair of systems, plus ``p_prefer``, the
    probability that a person prefers system_a's answer (posterior mean of σ(s_a − s_b)).
    ``max_pairs`` (leaderboards): the most pairs tabled (N(N−1)/2 of them); larger boards are
    refused unless it is raised.  A Laplace fit's ``attrs["approximate"]`` is carried over.

    Returns
    -------
    pandas.DataFrame with columns item (rankings), system_a, system_b, estimate (p or s_a − s_b
    mean), hdi_low, hdi_high, prob_a_better, verdict.

    Examples
    --------
    >>> import bayes_judge as bj                                              # doctest: +SKIP
    >>> bj.compare_systems(idata)      # P(a better), with "cannot tell apart" where the interval covers it  # doctest: +SKIP
    """
    check_hdi_prob(hdi_prob, "compare_systems: ")  # every branch (the ranking and leaderboard ones read it raw)
    return _approximate_note(idata, _compare_table(idata, hdi_prob, max_pairs))


def _approximate_note(idata: az.InferenceData, out: pd.DataFrame) -> pd.DataFrame:
    """A summary table keeps a Laplace fit's ``attrs["approximate"]`` (what its draws approximate)."""
    note = (idata.attrs or {}).get("approximate") or idata["posterior"].attrs.get("approximate")
    if note:
        out.attrs["approximate"] = str(note)
    return out


def _compare_table(idata: az.InferenceData, hdi_prob: float, max_pairs: int) -> pd.DataFrame:
    post = getattr(idata, "posterior", None)
    if idata.attrs.get("task") == "leaderboard":
        return _compare_leaderboard(idata, hdi_prob=hdi_prob, max_pairs=max_pairs)
    if post is not None and "p" in post and "pair" in post["p"].dims:
        s = win_rate_summary(idata, hdi_prob=hdi_prob)
        return pd.DataFrame(
            {
                "system_a": s["system_a"],
                "system_b": s["system_b"],
                "estimate": s["p_mean"],
                "hdi_low": s["hdi_low"],
                "hdi_high": s["hdi_high"],
                "prob_a_better": s["prob_gt_half"],
                "verdict": verdict_labels(s["hdi_low"], s["hdi_high"], 0.5, list(s["system_a"]), list(s["system_b"])),
            },
            index=s.index,
        )
    flat, items, cands = _score_blocks(idata)
    rows = []
    for item in pd.unique(items):
        cols = np.flatnonzero(items == item)
        ia, ib = np.triu_indices(cols.size, k=1)
        if flat.shape[0] * ia.size > _PAIRWISE_BLOCK:
            raise ValueError(
                f"compare_systems: item {item!r} has {ia.size} candidate pairs x {flat.shape[0]} draws; "
                "use bj.score_summary (rank intervals, P(best)) or bj.pairwise_prob for large items"
            )
        d = flat[:, cols[ia]] - flat[:, cols[ib]]  # (draws, pairs)
        hdi = _hdi_columns(d, hdi_prob)
        a, b = list(cands[cols[ia]]), list(cands[cols[ib]])
        rows.append(
            pd.DataFrame(
                {
                    "item": item,
                    "system_a": a,
                    "system_b": b,
                    "estimate": d.mean(axis=0),
                    "hdi_low": hdi[:, 0],
                    "hdi_high": hdi[:, 1],
                    "prob_a_better": (d > 0).mean(axis=0),
                    "verdict": verdict_labels(hdi[:, 0], hdi[:, 1], 0.0, a, b),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _compare_leaderboard(idata: az.InferenceData, *, hdi_prob: float = HDI_PROB, max_pairs: int = 5000) -> pd.DataFrame:
    """Every pair of systems (ordered by mean score, better first): the score difference's mean and
    interval, ``prob_a_better`` = P(s_a > s_b), ``p_prefer`` = E[σ(s_a − s_b)] and a verdict."""
    s = idata["posterior"]["s"]
    systems = [str(x) for x in s["system"].to_numpy()]
    draws = s.to_numpy().reshape(-1, len(systems))
    order = np.argsort(-draws.mean(axis=0), kind="stable")
    ia, ib = np.triu_indices(len(systems), k=1)
    if ia.size > max_pairs:
        raise ValueError(f"{ia.size} pairs of systems; use bj.leaderboard_summary (tiers, rank intervals) or "
                         "bj.pairwise_prob for large leaderboards, or raise max_pairs")
    a, b = order[ia], order[ib]
    d = draws[:, a] - draws[:, b]
    hdi = np.asarray([az.hdi(d[:, k], hdi_prob=hdi_prob) for k in range(d.shape[1])]).reshape(-1, 2)
    names_a, names_b = [systems[k] for k in a], [systems[k] for k in b]
    return pd.DataFrame({
        "system_a": names_a, "system_b": names_b, "estimate": d.mean(axis=0), "hdi_low": hdi[:, 0],
        "hdi_high": hdi[:, 1], "prob_a_better": (d > 0).mean(axis=0),
        "p_prefer": (1.0 / (1.0 + np.exp(-d))).mean(axis=0),
        "verdict": verdict_labels(hdi[:, 0], hdi[:, 1], 0.0, names_a, names_b),
    })
