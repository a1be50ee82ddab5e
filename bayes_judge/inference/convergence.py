"""Did the sampler converge? One warning, raised by every NUTS fit, printed by the CLI.

Thresholds (Vehtari et al. 2021, "Rank-normalization, folding, and localization: an improved
R-hat", arXiv:1903.08008; ArviZ's defaults): split-R̂ above ``RHAT_MAX`` (1.01), a bulk effective
sample size below ``ESS_MIN`` (400, i.e. 100 a chain for 4 chains) or any divergent transition.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

__all__ = ["SamplerConvergenceWarning", "convergence_problems", "warn_unconverged", "RHAT_MAX", "ESS_MIN"]

RHAT_MAX = 1.01
ESS_MIN = 400.0


class SamplerConvergenceWarning(UserWarning):
    """The NUTS fit has not converged: R̂ too high, too few effective draws or divergences.

    The fit's ``attrs["convergence"]`` repeats the message; ``bj.report`` shows every number.
    """


def convergence_problems(idata, var_names: Sequence[str]) -> list[str]:
    """What is wrong with the draws of ``var_names`` (an empty list when nothing is)."""
    import arviz as az

    post = idata["posterior"]
    names = [v for v in var_names if v in post]
    out: list[str] = []
    if not names:
        return out
    n_chains = post.sizes.get("chain", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ess = az.ess(post[names], method="bulk")
        rhat = az.rhat(post[names]) if n_chains > 1 else None
    for v in names:  # NaN (a constant quantity, such as p of a pair whose items are all labelled) is no problem
        e = np.asarray(ess[v].to_numpy(), dtype=float)
        e = e[np.isfinite(e)]
        if e.size and e.min() < ESS_MIN:
            out.append(f"{v}: bulk ESS {e.min():.0f} < {ESS_MIN:.0f}")
        if rhat is not None:
            r = np.asarray(rhat[v].to_numpy(), dtype=float)
            r = r[np.isfinite(r)]
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
