"""bayes_judge: uncertainty-aware evaluation with LLM judges.

Judgments (from an LLM comparator or any judge) go into one tidy table; Bayesian generative
models turn it into posterior win rates with honest uncertainty.

>>> import bayes_judge as bj
>>> df = bj.load_dataset("mtbench")                    # doctest: +SKIP
>>> idata = bj.win_rate(df, method="dawid-skene")      # doctest: +SKIP
>>> bj.win_rate_summary(idata)                         # doctest: +SKIP
"""

__version__ = "0.1.0"

from .datasets import (
    assign_generators,
    list_datasets,
    load_dataset,
    load_hanna_pairs,
    load_hanna_scores,
    load_hanna_texts,
    load_items,
    load_summeval_comparator,
    load_summeval_pairs,
    load_summeval_scores,
    load_summeval_texts,
)
from .model_comparison import compare_models
from .ranking import rank
from .report import report
from .runs import load_run, save_run
from .schema import validate_judgments
from .selection import select_comparisons
from .simulate import simulate_win_rate
from .summary import compare_systems, pairwise_prob, score_summary, win_rate_summary
from .verdicts import encode_win_rate
from .winrate import LabelSwitchingWarning, win_rate

__all__ = [
    "__version__",
    "validate_judgments",
    "load_dataset",
    "load_items",
    "list_datasets",
    "assign_generators",
    "load_summeval_comparator",
    "load_summeval_pairs",
    "load_summeval_scores",
    "load_summeval_texts",
    "load_hanna_scores",
    "load_hanna_pairs",
    "load_hanna_texts",
    "simulate_win_rate",
    "encode_win_rate",
    "win_rate",
    "win_rate_summary",
    "select_comparisons",
    "rank",
    "save_run",
    "load_run",
    "score_summary",
    "pairwise_prob",
    "compare_systems",
    "compare_models",
    "report",
    "LabelSwitchingWarning",
]
