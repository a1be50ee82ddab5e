"""The sampler settings are stated once (issue 32): every entry point and the command line take
their defaults from ``SAMPLING``, and ``Sampling`` checks them in one place."""

from __future__ import annotations

import inspect

import pytest

import bayes_judge as bj
from bayes_judge.analysis.sbc import simulation_based_calibration
from bayes_judge.cli import build_parser
from bayes_judge.inference import SAMPLING, Sampling, fit_model
from bayes_judge.ranking import fit_scores

NAMES = ("sampler", "chains", "draws", "tune", "seed", "target_accept")


@pytest.mark.parametrize("fn", [bj.win_rate, bj.leaderboard, bj.rank, fit_scores, simulation_based_calibration],
                         ids=lambda f: f.__name__)
def test_every_entry_point_takes_the_one_set_of_defaults(fn):
    params = inspect.signature(fn).parameters
    for name in NAMES:
        if fn is bj.leaderboard and name in ("tune", "target_accept"):  # None: SAMPLING's, or the fast path's own
            assert params[name].default is None  # (tests/leaderboard/test_leaderboard.py checks both)
        elif name in params:
            assert params[name].default == getattr(SAMPLING, name), (fn.__name__, name)
    assert "sampling" in inspect.signature(fit_model).parameters


def test_the_command_line_takes_them_too():
    sub = build_parser()._subparsers._group_actions[0].choices
    for cmd, extra in (("fit", ["--task", "winrate"]), ("leaderboard", [])):
        args = sub[cmd].parse_args(["x.csv", "--out", "r", *extra])
        for name in ("sampler", "chains", "draws", "seed"):
            assert getattr(args, name) == getattr(SAMPLING, name), (cmd, name)
        assert args.target_accept is None  # not given: SAMPLING's (fit), or the fast path's own (leaderboard)


@pytest.mark.parametrize(("change", "message"), [
    ({"sampler": "hmc"}, "sampler must be one of"), ({"chains": 0}, "chains must be a positive integer"),
    ({"draws": 2.5}, "draws must be a positive integer"), ({"draws": True}, "draws must be a positive integer"),
    ({"tune": -1}, "tune must be a non-negative integer"), ({"seed": "1"}, "seed must be an integer"),
    ({"target_accept": 1.0}, r"target_accept must be in \(0, 1\)"),
])
def test_bad_settings_are_named_once_for_every_entry_point(change, message):
    with pytest.raises(ValueError, match=message):
        SAMPLING.replace(**change)
    df = bj.simulate_win_rate(20, seed=0)
    with pytest.raises(ValueError, match=message):
        bj.win_rate(df, method="dawid-skene", **change)
    with pytest.raises(ValueError, match=message):
        bj.leaderboard(df, **change)


def test_a_fit_is_handed_one_object():
    with pytest.raises(TypeError, match="sampling must be a Sampling"):
        from bayes_judge.generative import get_model

        fit_model(get_model("independent", "win-rate"), {}, dims={}, coords={}, sampling={"draws": 10})  # type: ignore[arg-type]
    assert Sampling(draws=10).replace(tune=5) == Sampling(draws=10, tune=5)
