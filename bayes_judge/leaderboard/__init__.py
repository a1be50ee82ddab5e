"""Leaderboards: systems ranked across prompts by several judges (and people), Gao et al. 2024 and Liusie et al. 2024 (PoE) joined.

>>> import bayes_judge as bj                                   # doctest: +SKIP
>>> idata = bj.leaderboard(df)                                 # judgments of systems across prompts
>>> bj.leaderboard_summary(idata)                              # score, rank interval, p_best, tier
>>> bj.pairwise_prob(idata)                                    # P(a person prefers i's answer to j's)
"""

from .board import LEADERBOARD_MODELS, PositionBiasNotIdentifiedError, leaderboard
from .encode import LeaderboardData, encode_leaderboard, position_identified
from .summary import judge_table, leaderboard_summary, pairwise_prob

__all__ = [
    "leaderboard", "leaderboard_summary", "pairwise_prob", "judge_table", "encode_leaderboard",
    "LeaderboardData", "position_identified", "LEADERBOARD_MODELS", "PositionBiasNotIdentifiedError",
]
