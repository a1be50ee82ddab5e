"""The bundled files are package data: read through the resource path a wheel install uses.

``data/`` (the one copy) is installed as ``bayes_judge._bundled`` (``pyproject.toml``:
``package-dir`` and ``package-data``); ``bayes_judge.datasets._files.FILES`` lists every file the
loaders read.  These checks fail when a loader's file would be missing from a wheel.
"""

from __future__ import annotations

import importlib.resources
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from bayes_judge.datasets import _files

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _globbed(package: str) -> set[str]:
    """Files under ``package``'s folder matched by its package-data globs, as setuptools reads them."""
    folder = ROOT / PYPROJECT.get("package-dir", {}).get(package, package.replace(".", "/"))
    return {p.relative_to(folder).as_posix() for pattern in PYPROJECT["package-data"].get(package, [])
            for p in folder.glob(pattern) if p.is_file()}


def test_data_folder_is_the_bundled_package():
    assert PYPROJECT["package-dir"][_files.PACKAGE] == "data"
    assert _files.PACKAGE in PYPROJECT["packages"]
    assert (ROOT / "data" / "__init__.py").is_file()


def test_every_loader_file_is_matched_by_the_package_data_globs():
    shipped = _globbed(_files.PACKAGE)
    missing = sorted(set(_files.FILES) - shipped)
    assert not missing, f"read by the loaders but not in the package-data globs of {_files.PACKAGE}: {missing}"
    # and nothing else: every data file under data/ is either shipped or is documentation/code
    others = {p.relative_to(ROOT / "data").as_posix() for p in (ROOT / "data").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    unshipped = sorted(f for f in others - shipped if not f.endswith((".py", ".md")))
    assert not unshipped, f"data files not in the package-data globs (add them, or to FILES): {unshipped}"
    assert not [f for f in shipped if f.endswith((".py", ".md"))]
    assert shipped == set(_files.FILES), f"shipped but read by no loader: {sorted(shipped - set(_files.FILES))}"


def test_files_are_read_through_the_package_resource(monkeypatch):
    monkeypatch.delenv("BAYES_JUDGE_DATA", raising=False)
    try:
        resource = importlib.resources.files(_files.PACKAGE)
    except ModuleNotFoundError:
        pytest.fail(f"{_files.PACKAGE} is not importable: reinstall the package (pip install -e .)")
    assert _files.root() == resource
    for file in _files.FILES:
        res = resource
        for part in file.split("/"):
            res = res / part
        assert res.is_file(), file
        with res.open(encoding="utf-8") as fh:
            assert fh.readline().strip(), file  # a header line


def test_reading_an_unlisted_file_is_an_error():
    with pytest.raises(ValueError, match="not a bundled data file"):
        _files.read_csv("summeval/derive_smollm2_pairwise.py")


def test_a_bad_data_override_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("BAYES_JUDGE_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="BAYES_JUDGE_DATA"):
        _files.root()


def test_every_package_is_listed():
    """``packages`` is a list (not ``find``): a new folder of bayes_judge/ must be added to it."""
    found = {p.parent.relative_to(ROOT).as_posix().replace("/", ".")
             for p in (ROOT / "bayes_judge").rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(found - set(PYPROJECT["packages"]))
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml, or a wheel lacks them"
    assert set(PYPROJECT["packages"]) - found == {_files.PACKAGE}


@pytest.mark.slow
def test_a_built_wheel_loads_every_bundled_set(tmp_path):
    """Build the wheel from a copy of the sources, install it (no dependencies) and load from it."""
    import shutil

    src = tmp_path / "src"
    for name in ("bayes_judge", "data"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("bayes_judge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = {n.removeprefix("bayes_judge/_bundled/") for n in names if n.startswith("bayes_judge/_bundled/")}
    assert bundled == {*_files.FILES, "__init__.py"}
    subprocess.run([*pip, "install", "--no-deps", "--target", str(tmp_path / "site"), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    code = (
        "import bayes_judge as bj, pathlib, sys\n"
        f"assert pathlib.Path(bj.__file__).is_relative_to({str(tmp_path / 'site')!r}), bj.__file__\n"
        "ds = bj.datasets\n"
        "assert all(len(bj.load_dataset(n)) for n in ds.names())\n"
        "assert len(ds.summeval.pairs()) and len(ds.summeval.comparator()) and len(ds.summeval.texts()[0])\n"
        "assert len(ds.hanna.pairs()) and len(ds.hanna.scores('surprise')) and len(ds.hanna.texts()[0])\n"
        "print(ds._files.root())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "BAYES_JUDGE_DATA"}
    env["PYTHONPATH"] = str(tmp_path / "site")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert Path(res.stdout.strip()) == tmp_path / "site" / "bayes_judge" / "_bundled"
