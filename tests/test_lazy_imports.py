"""``import bayes_judge`` is cheap: public names are imported on first use (PEP 562 ``__getattr__``).

The subprocess checks can fail (a heavy module imported at the top level); they time nothing.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import bayes_judge as bj

INIT = Path(bj.__file__)
HEAVY = ("pymc", "jax", "arviz", "numba", "pytensor", "torch")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_bayes_judge_imports_no_heavy_module():
    res = _run("import bayes_judge, sys; "
               f"heavy = [m for m in {HEAVY!r} if m in sys.modules]; "
               "assert not heavy, f'import bayes_judge imported {heavy}'")
    assert res.returncode == 0, res.stderr


def test_every_public_name_resolves():
    for name in bj.__all__:
        assert getattr(bj, name) is not None, name
    assert set(bj.__all__) <= set(dir(bj))
    assert isinstance(bj.datasets, types.ModuleType) and callable(bj.load_dataset)


def test_the_lazy_table_matches_the_type_checking_imports():
    """Each public name is one line in ``_LAZY`` and one import under ``TYPE_CHECKING`` (for mypy)."""
    tree = ast.parse(INIT.read_text())
    (block,) = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    typed: dict[str, str] = {}
    for imp in block.body:
        assert isinstance(imp, ast.ImportFrom)
        for alias in imp.names:
            assert alias.asname, "re-export with `import x as x` so type checkers see it as public"
            if imp.module is None:  # `from . import datasets as datasets`: the subpackage itself
                typed[alias.asname] = f".{alias.name}:"
            else:
                typed[alias.asname] = f"{'.' * imp.level}{imp.module}:{alias.name}"
    lazy = {k: v if ":" in v else f"{v}:{k}" for k, v in bj._LAZY.items()}
    assert typed == lazy
    assert bj.__all__ == ["__version__", *bj._LAZY]


def test_unknown_attribute_is_an_attribute_error():
    try:
        bj.no_such_name  # noqa: B018
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("no AttributeError")


def test_a_subpackage_import_does_not_hide_the_public_function():
    """``bayes_judge.report`` is a subpackage and ``bj.report`` a function: importing the first
    (as the CLI does) must not rebind the second."""
    res = _run("import bayes_judge.report.inputs, bayes_judge as bj, types; "
               "assert callable(bj.report) and not isinstance(bj.report, types.ModuleType), bj.report; "
               "import bayes_judge.datasets.hanna; assert isinstance(bj.datasets, types.ModuleType)")
    assert res.returncode == 0, res.stderr
