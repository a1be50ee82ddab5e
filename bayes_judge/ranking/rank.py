"""``bj.rank``: scores and ranks of candidates from a judgments table, one block per item."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

import arviz as az
import numpy as np
import pandas as pd

from ..generative.priors import Priors
from ..inference.settings import SAMPLING
from .baselines import avg_prob, bradley_terry, win_ratio
from .encode import BiasBy, RankData, check_finite_scores, encode_ranking
from .poe import Clip, poe_bt, poe_gaussian

__all__ = ["rank", "METHODS", "rank_table", "PositionNotDebiasedWarning"]

Method = Literal["poe-bt", "poe-g", "poe-g-hard", "bt", "win-ratio", "avg-prob"]
METHODS: tuple[str, ...] = ("poe-bt", "poe-g", "poe-g-hard", "bt", "win-ratio", "avg-prob")


def rank_table(data: RankData, scores: np.ndarray) -> pd.DataFrame:
    """Scores on the global candidate index as the ``rank`` result table.

    Parameters
    ----------
    data : RankData
    scores : ndarray, shape (N,)

    Returns
    -------
    pandas.DataFrame
        Columns item, candidate, score, rank (1 = best; equal scores share the best rank of
        their group, "competition" ranking); sorted by item, then rank, then candidate.
    """
    out = pd.DataFrame(
        {
            "item": np.asarray(data.items, dtype=object)[data.cand_item],
            "candidate": data.candidates,
            "score": np.asarray(scores, dtype=float),
        }
    )
    # equal scores up to rounding (1e-10 of the largest): candidates with identical records computed
    # through different float sums must share their rank, not be split by the last bit
    s = out["score"].to_numpy()
    finite = np.isfinite(s)
    scale = max(1.0, float(np.abs(s[finite]).max())) if finite.any() else 1.0
    key = pd.Series(np.where(finite, np.round(s / scale, 10), s), index=out.index)
    out["rank"] = key.groupby(data.cand_item, sort=False).rank(method="min", ascending=False).astype(np.int64)
    order = np.lexsort((data.candidates.astype(str), out["rank"].to_numpy(), data.cand_item))
    return out.iloc[order].reset_index(drop=True)


@overload
def rank(
    df: pd.DataFrame,
    *,
    method: Method = ...,
    debias: bool | None = ...,
    bayesian: Literal[False] = ...,
    candidates: Sequence[str] | Mapping[str, Sequence[str]] | None = ...,
    debias_by: BiasBy = ...,
    clip: Clip = ...,
    eps: float = ...,
    prior: float | Literal["paper"] = ...,
    tol: float | None = ...,
    max_iter: int | None = ...,
    sampler: str = ...,
    priors: Priors | None = ...,
    ties: str = ...,
    chains: int = ...,
    draws: int = ...,
    tune: int = ...,
    seed: int = ...,
    target_accept: float = ...,
) -> pd.DataFrame: ...


@overload
def rank(
    df: pd.DataFrame,
    *,
    method: Method = ...,
    debias: bool | None = ...,
    bayesian: Literal[True],
    candidates: Sequence[str] | Mapping[str, Sequence[str]] | None = ...,
    debias_by: BiasBy = ...,
    clip: Clip = ...,
    eps: float = ...,
    prior: float | Literal["paper"] = ...,
    tol: float | None = ...,
    max_iter: int | None = ...,
    sampler: str = ...,
    priors: Priors | None = ...,
    ties: str = ...,
    chains: int = ...,
    draws: int = ...,
    tune: int = ...,
    seed: int = ...,
    target_accept: float = ...,
) -> az.InferenceData: ...


@overload
def rank(
    df: pd.DataFrame,
    *,
    method: Method = ...,
    debias: bool | None = ...,
    bayesian: bool = ...,
    candidates: Sequence[str] | Mapping[str, Sequence[str]] | None = ...,
    debias_by: BiasBy = ...,
    clip: Clip = ...,
    eps: float = ...,
    prior: float | Literal["paper"] = ...,
    tol: float | None = ...,
    max_iter: int | None = ...,
    sampler: str = ...,
    priors: Priors | None = ...,
    ties: str = ...,
    chains: int = ...,
    draws: int = ...,
    tune: int = ...,
    seed: int = ...,
    target_accept: float = ...,
) -> pd.DataFrame | az.InferenceData: ...


def rank(
    df: pd.DataFrame,
    *,
    method: Method = "poe-bt",
    debias: bool | None = None,
    bayesian: bool = False,
    candidates: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    debias_by: BiasBy = "item",
    clip: Clip = "warn",
    eps: float = 1e-6,
    prior: float | Literal["paper"] = "paper",
    tol: float | None = None,
    max_iter: int | None = None,
    sampler: str = SAMPLING.sampler,
    priors: Priors | None = None,
    ties: str = "davidson",
    chains: int = SAMPLING.chains,
    draws: int = SAMPLING.draws,
    tune: int = SAMPLING.tune,
    seed: int = SAMPLING.seed,
    target_accept: float = SAMPLING.target_accept,
) -> pd.DataFrame | az.InferenceData:
    """Score and rank the candidates of every item from pairwise judgments.

    Every item (context) is ranked on its own; all items are solved together in one
    vectorized / block-diagonal computation.

    ==============  ====================================================================
    method          scores (Liusie et al. 2024 (PoE) §4.2)
    ==============  ====================================================================
    ``poe-bt``      soft Bradley-Terry experts, MAP (§3.2); scores mean zero per item
    ``poe-g``       Gaussian experts, linear mean and constant variance (§3.4, eq. 12);
                    the item's first candidate (by name) is anchored at 0 (§3.3)
    ``poe-g-hard``  ``poe-g`` on the hard decisions instead of the probabilities
    ``bt``          Bradley-Terry MLE by Zermelo, 1/(N−1) prior wins, tol 1e-4 (§4.2);
                    log-strengths, mean zero per item
    ``win-ratio``   share of comparisons won (Liusie, Manakul & Gales 2024 eq. 6), ties count half
    ``avg-prob``    average probability of winning over a candidate's comparisons
    ==============  ====================================================================

    Parameters
    ----------
    df : pandas.DataFrame, shape (K, n_columns)
        A judgments table from any source (validated here): ``item``, ``a``, ``b`` and
        ``p_a`` and / or ``winner``.  Rows without ``p_a`` count as ``p = 1 / 0 / 0.5`` from
        ``winner`` for the soft methods.  Each row is one comparison; judges are pooled.
    method : {"poe-bt", "poe-g", "poe-g-hard", "bt", "win-ratio", "avg-prob"}
    debias : bool or None
        For the PoE methods, remove a constant position bias: ``β = E[p_ij]`` for the
        Gaussian experts (eq. 13, A.7), ``γ = −logit(E[p_ij])`` for soft Bradley-Terry
        (A.8).  On a symmetric set (every comparison in both orders) it leaves ``poe-g``
        unchanged exactly and ``poe-bt`` nearly so.  ``E[p_ij]`` is a bias only where each
        candidate of the group is shown first about as often as second
        (:func:`~bayes_judge.ranking.encode.position_imbalance` at most 0.4); elsewhere it is the
        candidates' score differences (every pair once in alphabetical order; one comparison
        per judge), and removing it reverses or erases the ranking.  ``None`` (default): debias
        the balanced groups, leave the others with a :class:`PositionNotDebiasedWarning`;
        ``True``: an error if a group is unbalanced; ``False``: no debiasing.  Ignored by the
        other methods.  With ``bayesian=True``, ``None`` and ``True`` give the soft / hard BT
        models the latent shift γ (fitted with the scores).
    bayesian : bool
        Posterior over the scores by NUTS instead of a point solution
        (:func:`~bayes_judge.ranking.bayesian.fit_scores`): ``poe-bt`` (soft BT
        pseudo-likelihood), ``poe-g`` / ``poe-g-hard`` (Gaussian experts with priors on α, σ, β),
        ``bt`` (hard BT, Davidson ties).  With ``debias`` the soft / hard BT models get a latent
        position-bias shift γ; the Gaussian model's β already plays that role (eq. 13).  Returns
        InferenceData (read it with :func:`bayes_judge.score_summary`; ``attrs["method"]`` names
        the method); fits of different methods on one table compare by PSIS-LOO on the hard
        decisions with :func:`bayes_judge.compare_models`.
    sampler : {"nutpie", "pymc", "numpyro", "laplace"}
        ``bayesian=True`` only: the NUTS implementation running the model's declaration
        (:mod:`bayes_judge.generative.ranking_models`; nutpie uses its registered fast path), or the
        Laplace approximation (``attrs["approximate"]`` says what its draws approximate; the
        summaries carry it).
    priors : Priors, optional
        ``bayesian=True`` only: the model's priors (default the declaration's; see
        :func:`~bayes_judge.ranking.bayesian.fit_scores`).
    ties, chains, draws, tune, seed, target_accept :
        ``bayesian=True`` only: Davidson ties for ``bt`` (``"davidson"`` or ``"half"``) and the
        NUTS settings (defaults: :data:`bayes_judge.inference.settings.SAMPLING`).
    candidates : sequence of str or mapping item -> sequence of str, optional
        The candidates to rank (see :func:`~bayes_judge.ranking.encode.encode_ranking`).
    debias_by : {"item", "judge"}
        Estimate the bias per (item, judge), as the paper, or per judge over all items.
    clip, eps :
        ``poe-bt`` only: what to do with probabilities outside ``[eps, 1 − eps]``
        (see :func:`~bayes_judge.ranking.poe.poe_bt`).
    prior : float or "paper"
        ``bt`` only: prior wins per side per comparison; "paper" is 1/(N−1).
    tol, max_iter : optional
        Solver settings for ``bt`` (default 1e-4, 10 000) and ``poe-bt`` (1e-9, 100).

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``candidate`` (str), ``score`` (float, higher is better), ``rank``
        (int, 1 = best; ties share the best rank), one block per item, sorted by item then
        rank.  ``attrs["method"]`` names the method.

    Raises
    ------
    ValueError
        Unknown method, an invalid table, an item with fewer than 2 candidates or a
        comparison graph that does not connect an item's candidates (the components are
        named), probabilities at 0 / 1 with ``clip="error"``.
    ValueError
        ``bayesian=True`` with ``win-ratio`` or ``avg-prob`` (no generative model).
    FloatingPointError
        A solver produced non-finite scores (never returned as NaN ranks).

    Examples
    --------
    >>> import pandas as pd
    >>> from bayes_judge.ranking import rank
    >>> df = pd.DataFrame({"item": "q1", "a": ["x", "y", "z"], "b": ["y", "z", "x"],
    ...                    "p_a": [0.9, 0.7, 0.2]})
    >>> rank(df, method="poe-g")[["candidate", "rank"]].to_numpy().tolist()
    [['x', 1], ['y', 2], ['z', 3]]
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {list(METHODS)}")
    _check_options(debias_by, clip, ties, prior, sampler, chains, draws, tune, seed, target_accept)
    data = encode_ranking(df, candidates=candidates)
    from ..diagnose import diagnose_rows

    diagnosis = diagnose_rows(df, "rank")  # both paths: a ranking from a judge that follows the position is said so
    if bayesian:
        if method in ("win-ratio", "avg-prob"):
            raise ValueError(f"bayesian=True needs a generative model: poe-bt, poe-g, poe-g-hard or bt, not {method!r}")
        from .bayesian import fit_scores

        # the latent shift γ has the point path's limits: on unbalanced positions it takes the score
        # differences for a bias (alphabetical pairs: Kendall τ 0.28 with it, 0.95 without); the
        # Gaussian experts' offset β is part of their model (eq. 13), so there it is said, not dropped
        if method in ("poe-bt", "bt"):
            latent = _debias_mode(data, debias, debias_by) is True
        else:
            latent = False
            if debias is not False:
                _warn_gaussian_offset(data, debias_by)
        if method == "poe-g-hard":
            data = dataclasses.replace(data, p=data.y)
        idata = fit_scores(
            data, model="poe-g" if method.startswith("poe-g") else method,
            position_bias=latent, ties=ties, sampler=sampler,
            priors=priors, chains=chains, draws=draws, tune=tune, seed=seed, target_accept=target_accept,
        )
        idata.attrs["method"] = method  # "poe-g-hard" is fit_scores' "poe-g" on y
        idata.attrs["judge_diagnosis"] = diagnosis
        if method == "poe-g-hard":
            idata["log_likelihood"]["c"].attrs["scores"] = (
                "comparisons: hard decisions y as p, Gaussian expert density (Liusie et al. 2024 (PoE) poe-g-hard)"
            )
        return idata
    how = _debias_mode(data, debias, debias_by) if method in ("poe-bt", "poe-g", "poe-g-hard") else False
    if method == "poe-bt":
        kw: dict[str, Any] = {} if tol is None else {"tol": tol}
        s = poe_bt(data, debias=how, debias_by=debias_by, clip=clip, eps=eps, max_iter=max_iter, **kw)
    elif method in ("poe-g", "poe-g-hard"):
        s = poe_gaussian(
            data, outcome="soft" if method == "poe-g" else "hard", debias=how, debias_by=debias_by
        )
    elif method == "bt":
        s = bradley_terry(
            data, prior=prior, tol=1e-4 if tol is None else tol,
            max_iter=10_000 if max_iter is None else max_iter,
        )
    elif method == "win-ratio":
        s = win_ratio(data)
    else:
        s = avg_prob(data)
    out = rank_table(data, check_finite_scores(data, np.asarray(s), method))
    out.attrs["method"] = method
    out.attrs["judge_diagnosis"] = diagnosis
    return out


def _check_options(debias_by: str, clip: str, ties: str, prior: object, sampler: str, chains: int, draws: int,
                   tune: int, seed: int, target_accept: float) -> None:
    """Every option's value, whether or not this method reads it (a misspelt one was ignored where
    it did not apply, and came back as a ranking)."""
    from ..inference.settings import Sampling

    if debias_by not in ("item", "judge"):
        raise ValueError(f"debias_by must be 'item' or 'judge', got {debias_by!r}")
    if clip not in ("warn", "error", "none"):
        raise ValueError(f"clip must be 'warn', 'error' or 'none', got {clip!r}")
    if ties not in ("davidson", "half"):
        raise ValueError(f"ties must be 'davidson' or 'half', got {ties!r}")
    if prior != "paper" and (isinstance(prior, bool) or not isinstance(prior, int | float) or not prior >= 0):
        raise ValueError(f"prior must be 'paper' or a number of prior wins >= 0, got {prior!r}")
    Sampling(sampler, chains, draws, tune, seed, target_accept)  # its own checks, named


def _warn_gaussian_offset(data: RankData, by: BiasBy) -> None:
    """The Bayesian Gaussian experts always fit their offset β (eq. 13); where positions are
    unbalanced it holds score differences too, and the fit says so."""
    import warnings

    from .encode import BALANCE_TOL, position_imbalance

    imb = position_imbalance(data, by=by)
    if (imb > BALANCE_TOL).any():
        warnings.warn(f"rank: {int((imb > BALANCE_TOL).sum())} of {imb.size} groups show their candidates in "
                      f"unbalanced positions (imbalance up to {imb.max():.2f}): the Gaussian experts' offset β "
                      "(eq. 13) takes part of the score differences for a position bias; judge both orders, or "
                      "use method='poe-bt' (whose shift is then left out)", PositionNotDebiasedWarning, stacklevel=3)


class PositionNotDebiasedWarning(UserWarning):
    """Some (item, judge) groups of a ranking were not debiased: their positions are unbalanced."""


def _debias_mode(data: RankData, debias: bool | None, by: BiasBy) -> bool | Literal["balanced"]:
    """What the PoE solvers are told: debias every group, only the balanced ones, or none; the
    unbalanced groups are refused (``debias=True``) or named in a warning (``None``)."""
    import warnings

    from .encode import BALANCE_TOL, position_imbalance

    if debias is False:
        return False
    if debias is not True and debias is not None:
        raise ValueError(f"debias must be True, False or None, got {debias!r}")
    imb = position_imbalance(data, by=by)
    bad = int((imb > BALANCE_TOL).sum())
    if not bad:
        return True
    where = "(item, judge) groups" if by == "item" else "judges"
    why = (f"{bad} of {imb.size} {where} show their candidates in unbalanced positions (imbalance up to "
           f"{imb.max():.2f}; at most {BALANCE_TOL} is read as a bias): their mean probability E[p] holds "
           "the candidates' score differences, not only a position bias")
    if debias is True:
        raise ValueError(f"debias=True: {why}. Judge every pair in both orders (or a balanced design), "
                         "pass debias=False, or debias=None to debias the balanced groups only")
    warnings.warn(f"rank: position bias not removed where it cannot be told apart: {why}; those groups "
                  "are ranked as judged (judge both orders to debias them; debias=False silences this)",
                  PositionNotDebiasedWarning, stacklevel=3)
    return "balanced"
