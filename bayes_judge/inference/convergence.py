"""Did the sampler converge? One warning, raised by every NUTS fit, printed by the CLI.

Thresholds (Vehtari et al. 2021, "Rank-normalization, folding, and localization: an improved
R-hat", arXiv:1903.08008; ArviZ's defaults): split-R̂ above ``RHAT_MAX`` (1.01), a bulk effective
sample size below ``ESS_MIN`` (400, i.e. 100 a chain for 4 chains) or any divergent transition.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

__all__ = ["SamplerConvergenceWarning", "convergence_problems", "warn_unconverged", "RHAT_MAX", "ESS_MIN",
           "LabelSwitchingWarning", "warn_label_switching"]

RHAT_MAX = 1.01
ESS_MIN = 400.0


class SamplerConvergenceWarning(UserWarning):
    """The NUTS fit has not converged: R̂ too high, too few effective draws or divergences.

    The fit's ``attrs["convergence"]`` repeats the message; ``bj.report`` shows every number.
    """


def convergence_problems(idata, var_names: Sequence[str]) -> list[str]:
    """What is wrong with the draws of ``var_names`` (an empty list when nothing is)."""
    from .mcmc_stats import rhat_ess_bulk

    post = idata["posterior"]
    names = [v for v in var_names if v in post]
    out: list[str] = []
    for v in names:  # NaN (a constant quantity, such as p of a pair whose items are all labelled) is no problem
        r, e = rhat_ess_bulk(post[v].transpose("chain", "draw", ...).to_numpy())  # r_hat NaN with one chain
        e, r = e[np.isfinite(e)], r[np.isfinite(r)]
        if e.size and e.min() < ESS_MIN:
            out.append(f"{v}: bulk ESS {e.min():.0f} < {ESS_MIN:.0f}")
        if r.size and r.max() > RHAT_MAX:
            out.append(f"{v}: r_hat {r.max():.3f} > {RHAT_MAX}")
    if "sample_stats" in idata.groups() and "diverging" in idata["sample_stats"]:
        n_div = int(idata["sample_stats"]["diverging"].sum())
        if n_div:
            out.append(f"{n_div} divergent transition(s)")
    return out


def warn_unconverged(idata, var_names: Sequence[str], where: str) -> None:
    """Warn with :class:`SamplerConvergenceWarning` and record ``attrs["convergence"]`` when the
    draws of ``var_names`` have not converged."""
    problems = convergence_problems(idata, var_names)
    if not problems:
        return
    msg = (f"{where}: the sampler has not converged ({'; '.join(problems)}): the intervals may be wrong. "
           "Run more draws= and tune=, raise target_accept (divergences), or look at bj.report")
    idata.attrs["convergence"] = msg
    warnings.warn(msg, SamplerConvergenceWarning, stacklevel=3)


class LabelSwitchingWarning(UserWarning):
    """Chains of a Dawid-Skene fit disagree on which class the judges favour.

    Raised by ``bj.win_rate`` for the models whose registry entry names accuracies (Dawid-Skene's
    two coins, one coin, the consensus and hierarchical models): the chains sit in mirrored modes,
    or disagree on whether a judge beats chance.

    Examples
    --------
    >>> import warnings, bayes_judge as bj
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", bj.LabelSwitchingWarning)   # a mirrored mode becomes an error
    ...     issubclass(bj.LabelSwitchingWarning, UserWarning)
    True
    """


def warn_label_switching(q0: np.ndarray, q1: np.ndarray, pair_labels: Sequence[str], judges: Sequence[str], *,
                         chains: bool = True) -> None:
    """Warn when the chains of a Dawid-Skene-like fit sit in different modes (label switching):
    ``q0``, ``q1`` (chain, draw, pair, judge) the model's accuracies (one coin: the same array twice).

    Warn when chains sit in different modes: sign of mean(q0 + q1 - 1) per chain and pair
    (``chains=False``: draws unfolded from the symmetric model visit both mirrored modes by
    design; only a judge's own local modes are looked for)."""
    if q0.shape[0] < 2:
        return
    mode = np.sign((q0 + q1 - 1).mean(axis=(1, 3)))  # (chain, pair)
    split = (mode.max(axis=0) != mode.min(axis=0)).nonzero()[0] if chains else np.array([], dtype=int)
    if split.size:
        pairs = [pair_labels[i] for i in split]
        warnings.warn(
            f"Dawid-Skene: chains disagree on which class the judges favour for {pairs} "
            "(label switching: some chains have mean q0 + q1 < 1). r_hat of p will be large; "
            "the judges may be near chance. Add human labels (prior='in-distribution') or an "
            "OOD prior.",
            LabelSwitchingWarning,
            stacklevel=3,
        )
        return
    # local modes of one judge: chains agree overall but not on whether judge e beats chance
    # (a quantity merely centred near 0 also flips sign between chains: require that the chains'
    # means sit apart by more than twice the within-chain spread, i.e. separate modes)
    d = q0 + q1 - 1
    m, sd = d.mean(axis=1), d.std(axis=1).mean(axis=0)  # (chain, pair, judge), (pair, judge)
    split_modes = (np.sign(m).max(axis=0) != np.sign(m).min(axis=0)) & (np.ptp(m, axis=0) > 2 * sd)
    pj = split_modes.nonzero()
    if pj[0].size:
        where = sorted({(pair_labels[a], str(judges[e])) for a, e in zip(*pj, strict=True)})
        warnings.warn(
            f"Dawid-Skene: chains disagree on whether judge(s) beat chance (q0 + q1 > 1) for "
            f"{where[:6]}: the posterior has several modes (one judge adversarial, or the others) "
            "and r_hat will be large. Look at that judge's verdicts; add human labels "
            "(prior='in-distribution') or an OOD prior.",
            LabelSwitchingWarning,
            stacklevel=3,
        )
