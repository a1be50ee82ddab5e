import json
import os
import warnings

import numpy as np
import pytest

import bayes_judge as bj
from bayes_judge.analysis.runs import data_hash

pytestmark = pytest.mark.filterwarnings("ignore::bayes_judge.winrate.bwrs.BWRSWarning")


@pytest.fixture(scope="module")
def fit():
    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75], seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bj.win_rate(df, method="bwrs", prior="in-distribution", draws=100, seed=3)


def test_round_trip_keeps_posterior_and_manifest(fit, tmp_path):
    nc = bj.save_run(fit, tmp_path / "sub" / "run1")
    assert nc.name == "run1.nc" and (tmp_path / "sub" / "run1.json").is_file()
    back = bj.load_run(tmp_path / "sub" / "run1.nc")
    np.testing.assert_array_equal(back.posterior["p"], fit.posterior["p"])
    m = json.loads(back.attrs["manifest"])
    assert m["model"] == "bwrs" and m["seed"] == 3 and m["bayes_judge_version"] == bj.__version__
    assert m["data_hash"] == data_hash(fit)
    assert bj.win_rate_summary(back)["p_mean"].iloc[0] == pytest.approx(bj.win_rate_summary(fit)["p_mean"].iloc[0])


def test_same_data_same_hash_other_data_other_hash(fit):
    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75], seed=1)
    again = bj.win_rate(df, method="bwrs", prior="in-distribution", draws=50, seed=9)
    other = bj.win_rate(bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75], seed=2), method="bwrs",
                        prior="in-distribution", draws=50, seed=9)
    assert data_hash(again) == data_hash(fit)
    assert data_hash(other) != data_hash(fit)


def test_incompatible_version_is_refused(fit, tmp_path):
    bj.save_run(fit, tmp_path / "r")
    m = json.loads((tmp_path / "r.json").read_text())
    m["format"] = 99
    (tmp_path / "r.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match="format 99"):
        bj.load_run(tmp_path / "r")


def test_tampered_data_is_refused(fit, tmp_path):
    bj.save_run(fit, tmp_path / "r")
    m = json.loads((tmp_path / "r.json").read_text())
    m["data_hash"] = "0" * 64
    (tmp_path / "r.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match="do not match"):
        bj.load_run(tmp_path / "r")


def test_missing_files_and_no_posterior(tmp_path, fit):
    with pytest.raises(FileNotFoundError, match="not found"):
        bj.load_run(tmp_path / "nothing")
    import arviz as az

    with pytest.raises(ValueError, match="with a posterior"):
        bj.save_run(az.InferenceData(), tmp_path / "x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_folder(fit, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    with pytest.raises(PermissionError, match="not writable"):
        bj.save_run(fit, ro / "r")


def test_unwritable_path_through_a_file(fit, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match="cannot write a run"):
        bj.save_run(fit, blocker / "r")


def test_names_with_dots_do_not_collide(fit, tmp_path):
    bj.save_run(fit, tmp_path / "fit.seed1")
    assert (tmp_path / "fit.seed1.nc").is_file() and not (tmp_path / "fit.nc").exists()
    assert bj.load_run(tmp_path / "fit.seed1").posterior["p"].shape == fit.posterior["p"].shape


def test_a_loaded_run_can_be_saved_over(tmp_path):
    import bayes_judge as bj

    df = bj.simulate_win_rate(30, q0=[0.8], seed=0)
    fit = bj.win_rate(df, method="observed")
    bj.save_run(fit, tmp_path / "r")
    again = bj.load_run(tmp_path / "r")
    bj.save_run(again, tmp_path / "r")  # no file left open by the lazy loader
    assert bj.load_run(tmp_path / "r").posterior["p"].shape == fit.posterior["p"].shape


@pytest.mark.parametrize("which", ["nc", "json"])
def test_a_truncated_run_file_is_a_clear_error_naming_it(tmp_path, which):
    """Issue 31 (8): a truncated .nc or manifest raised h5py's OSError / a JSONDecodeError
    without the path."""
    df = bj.simulate_win_rate(30, p=0.7, q0=[0.8, 0.75], seed=0)
    path = bj.save_run(bj.win_rate(df, method="observed"), tmp_path / "run")
    f = path.with_suffix("." + which)
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=rf"{f.name}.*(truncated|not a)"):
        bj.load_run(path)


def test_list_and_bool_attributes_come_back_as_they_went(tmp_path):
    """netCDF returned a one-element list attribute as a scalar (attrs['pair_first'] 'G0', so [0]
    was its first letter) and refused a bool one with h5netcdf's CompatibilityError."""
    import bayes_judge as bj

    df = bj.simulate_win_rate(30, p=0.7, q0=[0.8], q1=[0.8], seed=1)
    fit = bj.win_rate(df.assign(human=None), method="observed", seed=0)
    fit.attrs["flag"] = True
    back = bj.load_run(bj.save_run(fit, tmp_path / "r"))
    assert back.attrs["pair_first"] == ["G0"] and back.attrs["systems"] == ["G0", "G1"]
    assert back.attrs["flag"] is True and fit.attrs["flag"] is True
