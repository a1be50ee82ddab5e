"""The examples in the public docstrings that run without a fit or a model run as written (the
others are marked ``# doctest: +SKIP``), and every function of the API reference has one."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"
NAMES = re.findall(r"^::: ([\w.]+)$", API.read_text(), flags=re.M)


def _object(dotted: str):
    mod, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(mod), name)


@pytest.mark.parametrize("dotted", NAMES)
def test_every_api_entry_has_an_example_that_runs(dotted):
    obj = _object(dotted)
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc or ">>>" in doc, f"{dotted} has no example"
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(obj, dotted, globs={}):
        runner.run(test)
    assert runner.failures == 0, f"{dotted}: {runner.failures} example(s) print something else"


def test_every_public_name_has_an_entry():
    """Every name of ``bj.__all__`` (but the subpackages ``bj.datasets``, ``bj.generative``) is on
    the API page, under the name it is defined with."""
    import bayes_judge as bj

    missing = []
    for name, target in bj._LAZY.items():
        module, _, attr = (target if ":" in target else f"{target}:{name}").partition(":")
        if not attr:  # a subpackage
            continue
        if not any(n.rsplit(".", 1)[-1] == attr for n in NAMES):
            missing.append(name)
    assert missing == []
