"""bayes_judge: uncertainty-aware evaluation with LLM judges.

Judgments (from an LLM comparator or any judge) go into one tidy table; Bayesian generative
models turn it into posterior win rates with honest uncertainty.

>>> import bayes_judge as bj
>>> df = bj.load_dataset("mtbench")                    # doctest: +SKIP
>>> idata = bj.win_rate(df, method="dawid-skene")      # doctest: +SKIP
>>> bj.win_rate_summary(idata)                         # doctest: +SKIP
"""

__version__ = "0.1.0"

import os as _os
import sys as _sys

# NumPyro runs chains in parallel only on as many JAX devices as chains; on a CPU that means
# asking XLA for several host devices before JAX starts (numpyro.set_host_device_count does
# the same).  An XLA_FLAGS the user set, or a JAX already imported, is left alone.
if "jax" not in _sys.modules and "xla_force_host_platform_device_count" not in _os.environ.get("XLA_FLAGS", ""):
    _os.environ["XLA_FLAGS"] = (
        _os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    ).strip()

from .datasets import assign_generators, list_datasets, load_dataset, load_items
from .schema import validate_judgments
from .simulate import simulate_win_rate
from .summary import win_rate_summary
from .verdicts import encode_win_rate
from .winrate import LabelSwitchingWarning, win_rate

__all__ = [
    "__version__",
    "validate_judgments",
    "load_dataset",
    "load_items",
    "list_datasets",
    "assign_generators",
    "simulate_win_rate",
    "encode_win_rate",
    "win_rate",
    "win_rate_summary",
    "LabelSwitchingWarning",
]
