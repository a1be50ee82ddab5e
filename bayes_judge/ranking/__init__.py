"""Ranking from pairwise comparisons: baselines, Bradley-Terry and Product-of-Experts scores.

Liusie et al. 2024 (PoE) (PoE framework) and Liusie, Manakul & Gales 2024 eq. 6 (win-ratio).  A judgments table is encoded once
(:func:`encode_ranking`), every item at once on a global candidate index; the scoring functions
return one score per candidate and :func:`rank` turns them into a table of ranks per item.
"""

from .baselines import avg_prob, bradley_terry, win_ratio
from .bayesian import fit_scores
from .encode import (
    ClippedProbabilityWarning,
    ConvergenceWarning,
    RankData,
    encode_ranking,
    pairs_rank_data,
    position_bias,
)
from .poe import comparison_matrix, poe_bt, poe_gaussian
from .rank import METHODS, rank, rank_table

__all__ = [
    "RankData",
    "pairs_rank_data",
    "encode_ranking",
    "position_bias",
    "ClippedProbabilityWarning",
    "ConvergenceWarning",
    "win_ratio",
    "avg_prob",
    "bradley_terry",
    "comparison_matrix",
    "poe_gaussian",
    "poe_bt",
    "rank",
    "rank_table",
    "METHODS",
    "fit_scores",
]
