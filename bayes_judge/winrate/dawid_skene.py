"""Prior parameters of Gao et al. 2024's Dawid-Skene: the "no prior" Beta(2, 1) and the OOD prior.

The model itself is declared once in :mod:`bayes_judge.generative.winrate_models`
(``"dawid-skene"``, ``"one-coin"``, ``"independent"``); its hand-written nutpie kernel is the
registered fast path :mod:`bayes_judge.inference.kernels.dawid_skene`.  This module builds the prior
parameters that Gao et al. 2024 derives from data: eq. 12-13 from a labelled out-of-distribution set
(:func:`ood_prior`), per (pair, judge) (:func:`ds_prior`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .encode import WinRateData

__all__ = ["DSPrior", "ds_prior", "ood_prior", "NO_PRIOR_Q"]

NO_PRIOR_Q = (2.0, 1.0)  # Gao et al. 2024 §4.3 "No prior": alpha_q = 2, beta_q = 1


@dataclass(frozen=True)
class DSPrior:
    """Beta prior parameters, each of shape (P, E) (q's) or (P,) (p)."""

    alpha_p: np.ndarray
    beta_p: np.ndarray
    alpha_q0: np.ndarray
    beta_q0: np.ndarray
    alpha_q1: np.ndarray
    beta_q1: np.ndarray

    def mean(self) -> dict[str, np.ndarray]:
        return {
            "p": self.alpha_p / (self.alpha_p + self.beta_p),
            "q0": self.alpha_q0 / (self.alpha_q0 + self.beta_q0),
            "q1": self.alpha_q1 / (self.alpha_q1 + self.beta_q1),
        }


def ood_prior(ood: WinRateData, judges: list[str], pooled: bool = False) -> tuple[np.ndarray, ...]:
    """Normalized Beta priors for q0, q1 from a labelled OOD set, Gao et al. 2024 eq. 12-13.

    For judge e with counts n0, s0, n1, s1 pooled over the OOD set's pairs and labelled items::

        q0^e ~ Beta((2 s0 + 2) / (n0 + 2), (2 n0 - 2 s0 + 2) / (n0 + 2))     (eq. 12)
        q1^e ~ Beta((2 s1 + 2) / (n1 + 2), (2 n1 - 2 s1 + 2) / (n1 + 2))     (eq. 13)

    The parameters sum to 2: the prior mean is (s + 1)/(n + 2) with the weight of two
    observations, so an OOD set cannot overwhelm the in-distribution data.  With ``pooled``
    (the one-coin model's single accuracy q^e) both classes' counts are summed first,
    ``s = s0 + s1``, ``n = n0 + n1``, and the same prior is returned for q0 and q1.

    Returns
    -------
    alpha_q0, beta_q0, alpha_q1, beta_q1 : ndarray, shape (E,)
        NaN for judges that the OOD set lacks.
    """
    if not (ood.label >= 0).any():
        raise ValueError("ood: the OOD set has no human labels ('human' column is empty)")
    shared = [j for j in judges if j in ood.judges]
    if not shared:
        raise ValueError(
            f"ood: no judge of the data ({judges}) appears in the OOD set ({ood.judges}); "
            "the OOD prior needs the same judges' verdicts on labelled items"
        )
    c = {k: v.sum(axis=0) for k, v in ood.accuracy_counts().items()}  # pooled over OOD pairs
    if pooled:
        c = {"s0": c["s0"] + c["s1"], "n0": c["n0"] + c["n1"]}
        c.update(s1=c["s0"], n1=c["n0"])
    idx = [ood.judges.index(j) if j in ood.judges else -1 for j in judges]
    out = []
    for s, n in (("s0", "n0"), ("s1", "n1")):
        s_e = np.array([c[s][i] if i >= 0 else np.nan for i in idx])
        n_e = np.array([c[n][i] if i >= 0 else np.nan for i in idx])
        out += [(2 * s_e + 2) / (n_e + 2), (2 * n_e - 2 * s_e + 2) / (n_e + 2)]
    return tuple(out)


def ds_prior(
    data: WinRateData,
    prior: str = "none",
    ood: WinRateData | None = None,
    q_prior: tuple[float, float] = NO_PRIOR_Q,
    one_coin: bool = False,
) -> DSPrior:
    """Prior parameters of Model 1 for every (pair, judge).

    ``"none"`` and ``"in-distribution"`` use Beta(2, 1) on every q (Gao et al. 2024 §4.3); ``"ood"``
    uses eq. 12-13 from the OOD set, and Beta(2, 1) for a judge the OOD set lacks.
    p ~ Beta(1, 1) always.  ``one_coin``: the one-coin model's q^e, whose OOD prior pools both
    classes (:func:`ood_prior` with ``pooled=True``); the q0 fields then hold q's prior and the
    q1 fields repeat it.
    """
    P, E = len(data.pairs), len(data.judges)
    a0 = np.full((P, E), q_prior[0])
    b0 = np.full((P, E), q_prior[1])
    a1, b1 = a0.copy(), b0.copy()
    if prior == "ood":
        if ood is None:
            raise ValueError("prior='ood' needs an ood= table of labelled judgments")
        oa0, ob0, oa1, ob1 = ood_prior(ood, data.judges, pooled=one_coin)
        have = ~np.isnan(oa0)
        a0[:, have], b0[:, have] = oa0[have], ob0[have]
        a1[:, have], b1[:, have] = oa1[have], ob1[have]
    return DSPrior(np.ones(P), np.ones(P), a0, b0, a1, b1)
