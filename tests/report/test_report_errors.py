"""Bad input to bj.report: each a clear error naming the problem."""

from __future__ import annotations

import json

import arviz as az
import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj


@pytest.fixture
def no_posterior():
    return az.from_dict(observed_data={"y": np.ones(5)})


def test_run_without_posterior(no_posterior, tmp_path):
    with pytest.raises(ValueError, match=r"run 'run 1' has no posterior group \(groups: observed_data\)"):
        bj.report(no_posterior, tmp_path / "r.html")
    with pytest.raises(ValueError, match="run 'broken' has no posterior group"):
        bj.report({"ok": az.from_dict(posterior={"mu": np.zeros((2, 5))}), "broken": no_posterior},
                  tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


def test_output_under_a_file(observed_fit, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    with pytest.raises(ValueError, match=r"afile is a file, not a folder"):
        bj.report(observed_fit, afile / "report.html")
    with pytest.raises(ValueError, match=r"afile is a file, not a folder"):
        bj.report(observed_fit, afile / "deeper" / "report.html")


def test_output_is_a_folder(observed_fit, tmp_path):
    with pytest.raises(ValueError, match=r"is an existing folder; give a file name"):
        bj.report(observed_fit, tmp_path)


def test_missing_folders_are_created(tmp_path):
    toy = az.from_dict(posterior={"mu": np.random.default_rng(0).normal(size=(2, 50))})
    out = bj.report(toy, tmp_path / "a" / "b" / "report.html")
    assert out.is_file() and out.parent.name == "b"


def test_output_path_type(observed_fit):
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got int"):
        bj.report(observed_fit, 3)


def test_run_written_by_incompatible_version(observed_fit, tmp_path):
    nc = bj.save_run(observed_fit, tmp_path / "old")
    manifest = json.loads(nc.with_suffix(".json").read_text())
    manifest.update(format=99, bayes_judge_version="9.0.0")
    nc.with_suffix(".json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"cannot read run .*old\.nc.*format 99 \(written by bayes_judge 9\.0\.0\)"):
        bj.report(nc, tmp_path / "r.html")
    with pytest.raises(ValueError, match="format 99"):
        bj.report({"old": str(nc)}, tmp_path / "r.html")


def test_run_file_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"cannot read run .*nothing.*NAME\.nc plus NAME\.json"):
        bj.report(tmp_path / "nothing.nc", tmp_path / "r.html")


def test_wrong_types(observed_fit, tmp_path):
    with pytest.raises(TypeError, match=r"entry 2 is a DataFrame; expected an arviz.InferenceData"):
        bj.report([observed_fit, pd.DataFrame()], tmp_path / "r.html")
    with pytest.raises(TypeError, match=r"run 'x' is a int"):
        bj.report({"x": 1}, tmp_path / "r.html")
    with pytest.raises(TypeError, match=r"idata_or_runs is a int"):
        bj.report(5, tmp_path / "r.html")
    with pytest.raises(TypeError, match="comparison must be a pandas DataFrame"):
        bj.report(observed_fit, tmp_path / "r.html", comparison={"a": 1})


def test_no_runs(tmp_path):
    with pytest.raises(ValueError, match="no runs to report"):
        bj.report([], tmp_path / "r.html")
    with pytest.raises(ValueError, match="no runs to report"):
        bj.report({}, tmp_path / "r.html")


def test_bad_hdi_prob(observed_fit, tmp_path):
    for bad in (1.5, 0.001):
        with pytest.raises(ValueError, match=r"hdi_prob must lie in \[0.01, 1\)"):
            bj.report(observed_fit, tmp_path / "r.html", hdi_prob=bad)
