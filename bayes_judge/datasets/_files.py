"""Where the bundled data files are, and reading them.

The raw files live once, unchanged, in the repository's top-level ``data/`` folder (provenance in
``data/README.md``).  ``pyproject.toml`` ships that folder inside the package as
``bayes_judge._bundled`` (``package-dir`` maps the name to ``data/``, ``package-data`` globs pick
the CSV files), so the same resource path serves a wheel install (``site-packages/bayes_judge/
_bundled/...``) and an editable one (setuptools' editable finder maps the name to ``data/``).

Every file a loader reads is listed in :data:`FILES`; ``tests/test_datasets_files.py`` checks that
each one is matched by the package-data globs and readable through the resource path.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

__all__ = ["PACKAGE", "FILES", "root", "read_csv"]

#: the import name under which ``data/`` is installed
PACKAGE = "bayes_judge._bundled"

_LLMBAR_SUBSETS = ("natural", "adversarial_gptinst", "adversarial_gptout", "adversarial_manual",
                   "adversarial_neighbor", "mtbench", "llmeval2")

#: every bundled file the loaders (and their tests) read, relative to ``data/``
FILES: tuple[str, ...] = (
    *(f"llmbar/{s}/{f}" for s in _LLMBAR_SUBSETS
      for f in ("items.csv", "judgments.csv", "evaluator_statistics.csv")),
    "summeval/summaries.csv",
    "summeval/articles.csv",
    "summeval/llm_scores.csv",
    "summeval/smollm2_pairwise.csv",
    "hanna/stories.csv",
    "hanna/human_ratings.csv",
    "hanna/llm_ratings.csv",
)


def root() -> Traversable:
    """The folder holding the bundled data.

    ``$BAYES_JUDGE_DATA`` overrides it; otherwise it is the package resource
    ``bayes_judge._bundled`` (a wheel or editable install), or, when bayes_judge is imported from
    a checkout that was never installed, the checkout's ``data/`` folder.

    Raises
    ------
    FileNotFoundError
        ``$BAYES_JUDGE_DATA`` is not a folder, or no bundled data can be found.
    """
    env = os.environ.get("BAYES_JUDGE_DATA")
    if env:
        path = Path(env)
        if not path.is_dir():
            raise FileNotFoundError(f"BAYES_JUDGE_DATA={env!r} is not a folder; unset it to read the "
                                    "data bundled with bayes_judge")
        return path
    try:
        return resources.files(PACKAGE)
    except ModuleNotFoundError:
        checkout = Path(__file__).resolve().parents[2] / "data"  # a source tree on sys.path
        if (checkout / "__init__.py").is_file():
            return checkout
        raise FileNotFoundError(
            f"bundled data not found: {PACKAGE} is not installed; reinstall bayes_judge "
            "(pip install . or pip install -e .) or set BAYES_JUDGE_DATA to the repository's data/ folder"
        ) from None


@lru_cache(maxsize=32)
def read_csv(file: str) -> pd.DataFrame:
    """A bundled CSV file, ``file`` relative to ``data/`` (one of :data:`FILES`), read once.

    The table is cached and shared: callers copy before they modify it.
    """
    if file not in FILES:
        raise ValueError(f"{file!r} is not a bundled data file; add it to FILES (and the package-data globs)")
    res = root()
    for part in file.split("/"):
        res = res / part
    with resources.as_file(res) as path:
        return pd.read_csv(path)
