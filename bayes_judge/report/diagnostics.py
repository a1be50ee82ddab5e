"""Convergence diagnostics of a fit, with a plain-language sentence for every failure.

Thresholds follow Vehtari et al. (2021, "Rank-normalization, folding, and localization: an
improved R-hat"): R-hat at most 1.01 and a bulk and tail ESS of at least 400 (100 per chain for
four chains); Betancourt (2016) for E-BFMI below 0.3; any divergent transition after warm-up is a
failure.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import arviz as az
import numpy as np
import pandas as pd

from ..inference.convergence import ESS_MIN, RHAT_MAX  # the limits at which every fit warns
from ..inference.mcmc_stats import diagnostics, flat_labels

__all__ = [
    "RHAT_MAX",
    "ESS_MIN",
    "BFMI_MIN",
    "diagnostic_vars",
    "parameter_diagnostics",
    "chain_diagnostics",
    "parameter_problems",
    "chain_problems",
    "Thresholds",
    "DEFAULT",
]

BFMI_MIN = 0.3


@dataclass(frozen=True)
class Thresholds:
    """Limits beyond which a diagnostic counts as a failure."""

    rhat_max: float = RHAT_MAX
    ess_min: float = ESS_MIN
    bfmi_min: float = BFMI_MIN


DEFAULT = Thresholds()

# per-item quantities (Dawid-Skene h_prob) and unidentified raw scores are derived or
# non-identified: their diagnostics say nothing about the fit's quantities of interest
_SKIP = {"h_prob", "s_raw"}
_COLUMNS = ("r_hat", "ess_bulk", "ess_tail", "mcse_mean")


def diagnostic_vars(idata: az.InferenceData) -> list[str]:
    """Posterior variables whose convergence matters: all but per-item and raw quantities."""
    post = idata["posterior"]
    return [str(v) for v in post.data_vars if v not in _SKIP and "item" not in post[v].dims]


def parameter_diagnostics(idata: az.InferenceData, var_names: list[str]) -> pd.DataFrame:
    """R-hat, bulk / tail ESS and MCSE of the mean of every scalar parameter.

    Returns
    -------
    pandas.DataFrame indexed by parameter (``name[coords]``) with columns variable, r_hat,
    ess_bulk, ess_tail, mcse_mean, mean, sd.  Constant or non-finite parameters get NaN.
    """
    post = idata["posterior"]
    parts = []
    for var in var_names:  # NaN where a parameter has a NaN draw (BWRS judges without verdicts); r_hat with 1 chain
        da = post[var].transpose("chain", "draw", ...)
        x = da.to_numpy().reshape(da.sizes["chain"], da.sizes["draw"], -1)
        d = diagnostics(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, sd = x.mean(axis=(0, 1)), x.reshape(-1, x.shape[-1]).std(axis=0, ddof=1)
        parts.append(pd.DataFrame({"variable": var, "mean": mean, "sd": sd, **{k: d[k] for k in _COLUMNS}},
                                  index=pd.Index(flat_labels(var, da), name="parameter")))
    return pd.concat(parts) if parts else pd.DataFrame(columns=["variable", "mean", "sd", *_COLUMNS])


def parameter_fail_mask(diag: pd.DataFrame, t: Thresholds = DEFAULT) -> pd.DataFrame:
    """Boolean frame: which of r_hat, ess_bulk, ess_tail fail their threshold."""
    return pd.DataFrame(
        {
            "r_hat": diag["r_hat"] > t.rhat_max,
            "ess_bulk": diag["ess_bulk"] < t.ess_min,
            "ess_tail": diag["ess_tail"] < t.ess_min,
        },
        index=diag.index,
    )


def _worst(diag: pd.DataFrame, col: str, largest: bool) -> tuple[str, float]:
    s = diag[col].dropna()
    name = s.idxmax() if largest else s.idxmin()
    return str(name), float(s.max() if largest else s.min())


# what a chain stuck in another region usually means, by kind of fit
MODE_HINTS = {
    "win-rate": ("if one chain sits in a different mode (label switching: the judges look worse "
                 "than chance), add human labels (prior='in-distribution') or an OOD prior."),
    "ranking": ("if chains settle on different scores, the comparisons identify them weakly: "
                "add comparisons that connect these candidates."),
    "leaderboard": ("if chains settle on different scores or judge accuracies, the verdicts "
                    "identify them weakly (without human labels, accurate judges of close systems "
                    "and weak judges of distant ones explain the same verdicts): add human labels "
                    "(human=) or comparisons that connect these systems."),
}


def _counts(fails: pd.Series, diag: pd.DataFrame) -> str:
    """'q0: 4 of 6, q1: 3 of 6' — failing parameters per variable."""
    per = fails.groupby(diag["variable"], sort=False).agg(["sum", "size"])
    return ", ".join(f"{v}: {int(r['sum'])} of {int(r['size'])}" for v, r in per.iterrows() if r["sum"])


def parameter_problems(
    diag: pd.DataFrame, n_chains: int, t: Thresholds = DEFAULT, *, kind: str = "",
    independent: bool = False,
) -> list[str]:
    """One sentence per kind of failure (R̂, ESS): where, how badly, and what to do.

    Parameters
    ----------
    diag : pandas.DataFrame
        From :func:`parameter_diagnostics`.
    n_chains : int
    t : Thresholds
    kind : str
        ``"win-rate"``, ``"ranking"`` or ``"leaderboard"``: picks the advice for chains in different modes.
    independent : bool
        The draws are independent samples (BWRS, observed), not a Markov chain: then a failure
        only means too few draws.
    """
    out: list[str] = []
    fails = parameter_fail_mask(diag, t)
    if n_chains < 2:
        out.append(
            "Only one chain was run, so R̂ cannot be computed and chains cannot be compared: "
            "refit with chains=4."
        )
    if fails["r_hat"].any():
        name, val = _worst(diag, "r_hat", largest=True)
        if independent:
            advice = ("These are independent draws, so this only reflects Monte Carlo noise: "
                      "increase draws=.")
        else:
            advice = ("The chains disagree, so these posteriors are not yet reliable. Run longer "
                      "(more tune= and draws=)" + (f"; {MODE_HINTS[kind]}" if kind in MODE_HINTS else "."))
        out.append(
            f"R̂ > {t.rhat_max} for {int(fails['r_hat'].sum())} of {len(diag)} parameters "
            f"({_counts(fails['r_hat'], diag)}; worst {name} = {val:.3f}). {advice}"
        )
    low = fails["ess_bulk"] | fails["ess_tail"]
    if low.any():
        col = "ess_bulk" if fails["ess_bulk"].any() else "ess_tail"
        name, val = _worst(diag[fails[col]], col, largest=False)
        advice = ("Increase draws= (or chains=)" + (
            "." if independent else "; ESS that stays low with many draws points to strong "
            "posterior correlation or a poorly identified parameter."))
        out.append(
            f"ESS < {t.ess_min:.0f} (bulk or tail) for {int(low.sum())} of {len(diag)} parameters "
            f"({_counts(low, diag)}; lowest {col.replace('_', ' ')}: {name} = {val:.0f}): too few "
            f"effective draws for stable means and interval ends. {advice}"
        )
    return out


def chain_diagnostics(idata: az.InferenceData) -> pd.DataFrame | None:
    """Per chain: draws, divergent transitions, E-BFMI, mean acceptance rate, tree size.

    Returns
    -------
    pandas.DataFrame indexed by chain, or None when the fit has no NUTS statistics (BWRS and
    observed draw independent samples).
    """
    stats = getattr(idata, "sample_stats", None)
    if stats is None or "diverging" not in stats:
        return None
    chains = stats["diverging"]["chain"].to_numpy()
    out = pd.DataFrame(index=pd.Index(chains, name="chain"))
    out["draws"] = int(stats.sizes["draw"])
    out["divergences"] = stats["diverging"].sum("draw").to_numpy().astype(int)
    if "energy" in stats:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["bfmi"] = az.bfmi(idata)
    else:
        out["bfmi"] = np.nan
    for src, col in (("acceptance_rate", "mean_accept"), ("accept_prob", "mean_accept")):
        if src in stats:
            out[col] = stats[src].mean("draw").to_numpy()
    for src in ("n_steps", "num_steps", "tree_size"):
        if src in stats:
            out["max_steps"] = stats[src].max("draw").to_numpy().astype(int)
            break
    return out


def chain_fail_mask(chains: pd.DataFrame, t: Thresholds = DEFAULT) -> pd.DataFrame:
    """Boolean frame: chains with divergences, chains with E-BFMI below the threshold."""
    return pd.DataFrame(
        {"divergences": chains["divergences"] > 0, "bfmi": chains["bfmi"] < t.bfmi_min},
        index=chains.index,
    )


def chain_problems(chains: pd.DataFrame, t: Thresholds = DEFAULT) -> list[str]:
    """Sentences for divergent transitions and low E-BFMI, naming the chains."""
    out = []
    f = chain_fail_mask(chains, t)
    if f["divergences"].any():
        which = ", ".join(f"{c} ({int(chains.loc[c, 'divergences'])})" for c in chains.index[f["divergences"]])
        out.append(
            f"Divergent transitions after warm-up in chain(s) {which}: the sampler met regions of "
            "high curvature it could not follow, so the draws may be biased. Refit with a higher "
            "target_accept (e.g. 0.95); if divergences remain, the model needs a stronger prior "
            "or a reparameterization."
        )
    if f["bfmi"].any():
        which = ", ".join(f"{c} ({chains.loc[c, 'bfmi']:.2f})" for c in chains.index[f["bfmi"]])
        out.append(
            f"E-BFMI < {t.bfmi_min} in chain(s) {which}: the momentum resampling explores the "
            "energy distribution poorly (heavy tails, funnel-like geometry). Use a longer warm-up "
            "(tune=) and consider a reparameterization or tighter priors."
        )
    return out
