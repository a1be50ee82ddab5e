"""bayes_judge: uncertainty-aware evaluation with LLM judges.

Judgments (from an LLM comparator or any judge) go into one tidy table; Bayesian generative
models turn it into posterior win rates with honest uncertainty.

>>> import bayes_judge as bj
>>> df = bj.load_dataset("mtbench")                    # doctest: +SKIP
>>> idata = bj.win_rate(df, method="dawid-skene")      # doctest: +SKIP
>>> bj.win_rate_summary(idata)                         # doctest: +SKIP

References (cited in the docstrings by first author and year, with the equation or section):

* Liusie, Manakul & Gales 2024: A. Liusie, P. Manakul, M. J. F. Gales. LLM Comparative Assessment:
  Zero-shot NLG Evaluation through Pairwise Comparisons using Large Language Models. EACL 2024,
  arXiv:2307.07889.
* Jeong et al. 2024: H. Jeong, C. Park, J. Hong, J. Choo. PRePair: Pointwise Reasoning Enhance
  Pairwise Evaluating for Robust Instruction-Following Assessments. arXiv:2406.12319.
* Gao et al. 2024: Y. Gao, G. Xu, Z. Wang, A. Cohan. Bayesian Calibration of Win Rate Estimation
  with LLM Evaluators. arXiv:2411.04424.
* Liusie et al. 2024 (PoE): A. Liusie, V. Raina, Y. Fathullah, M. Gales. Efficient LLM Comparative
  Assessment: a Product of Experts Framework for Pairwise Comparisons. arXiv:2405.05894.

The public names are imported on first use (PEP 562), so that ``import bayes_judge`` and
``bayes-judge --help`` do not pay for PyMC, ArviZ, JAX and numba.  To add a public name, add one
line to ``_LAZY`` (and the same import under ``TYPE_CHECKING``, for type checkers).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

# public name -> "module" (the attribute of the same name) or "module:attribute"; a function
# named like a subpackage (rank, report) is imported from the module that defines it
_LAZY: dict[str, str] = {
    "validate_judgments": ".schema",
    "read_judgments": ".readers",
    "load_judgments": ".readers",
    "datasets": ".datasets:",
    "generative": ".generative:",
    "load_dataset": ".datasets:load",
    "load_items": ".datasets:items",
    "assign_generators": ".datasets",
    "simulate_win_rate": ".winrate.simulate",
    "encode_win_rate": ".winrate.encode",
    "win_rate": ".winrate.estimate",
    "transfer_sources": ".winrate.estimate",
    "win_rate_summary": ".analysis.summary",
    "judge_summary": ".analysis.summary",
    "next_labels": ".winrate.labelling",
    "select_comparisons": ".selection",
    "next_comparisons": ".next_comparisons",
    "rank": ".ranking.rank",
    "save_run": ".analysis.runs",
    "load_run": ".analysis.runs",
    "score_summary": ".analysis.summary",
    "leaderboard": ".leaderboard.board",
    "leaderboard_summary": ".leaderboard.summary",
    "pairwise_prob": ".analysis.summary",
    "compare_systems": ".analysis.summary",
    "compare_models": ".analysis.comparison",
    "report": ".report.core",
    "LabelSwitchingWarning": ".winrate.estimate",
}

if TYPE_CHECKING:  # the same names, for type checkers (tests/test_lazy_imports.py compares them)
    from . import datasets as datasets
    from . import generative as generative
    from .analysis.comparison import compare_models as compare_models
    from .analysis.runs import load_run as load_run
    from .analysis.runs import save_run as save_run
    from .analysis.summary import compare_systems as compare_systems
    from .analysis.summary import judge_summary as judge_summary
    from .analysis.summary import pairwise_prob as pairwise_prob
    from .analysis.summary import score_summary as score_summary
    from .analysis.summary import win_rate_summary as win_rate_summary
    from .datasets import assign_generators as assign_generators
    from .datasets import items as load_items  # noqa: F401 - in __all__ through _LAZY
    from .datasets import load as load_dataset  # noqa: F401 - in __all__ through _LAZY
    from .leaderboard.board import leaderboard as leaderboard
    from .leaderboard.summary import leaderboard_summary as leaderboard_summary
    from .next_comparisons import next_comparisons as next_comparisons
    from .ranking.rank import rank as rank
    from .readers import load_judgments as load_judgments
    from .readers import read_judgments as read_judgments
    from .report.core import report as report
    from .schema import validate_judgments as validate_judgments
    from .selection import select_comparisons as select_comparisons
    from .winrate.encode import encode_win_rate as encode_win_rate
    from .winrate.estimate import LabelSwitchingWarning as LabelSwitchingWarning
    from .winrate.estimate import transfer_sources as transfer_sources
    from .winrate.estimate import win_rate as win_rate
    from .winrate.labelling import next_labels as next_labels
    from .winrate.simulate import simulate_win_rate as simulate_win_rate

__all__ = ["__version__", *_LAZY]


if not TYPE_CHECKING:  # hidden from type checkers, so that they flag a name missing above

    def __getattr__(name: str) -> Any:
        """Import a public name on first use (and keep it, so this runs once per name)."""
        target = _LAZY.get(name)
        if target is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name, __name__)
        value = module if target.endswith(":") else getattr(module, attr or name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """This package's module type: a public name shadows the subpackage of the same name.

    Importing a submodule binds it on its parent (``bayes_judge.report`` = the subpackage), which
    would hide the public function ``bj.report`` once anything imported ``bayes_judge.report.*``
    first.  Such a binding is dropped, so the name keeps resolving to the public object; the
    subpackage stays importable as ``bayes_judge.report`` (``sys.modules``).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}"
                and name in _LAZY and _LAZY[name] != f".{name}:"):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
