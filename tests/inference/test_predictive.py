"""Prior and posterior predictive draws come from the declaration, seeded, shaped as its variables."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_judge.generative import get_model
from bayes_judge.inference import fit_model
from bayes_judge.inference.predictive import posterior_predictive, prior_predictive, replicate
from bayes_judge.inference.settings import Sampling
from bayes_judge.winrate.encode import VerdictPatterns

K, E = 400, 2
COORDS = {"pair": ["G0 vs G1"], "judge": ["j0", "j1"]}


def _design(n_total: int = 1) -> dict:
    """One unlabelled item per row, ``n_total`` verdicts per judge."""
    return VerdictPatterns(
        n1=np.zeros((K, E)), n0=np.full((K, E), float(n_total)), n_tie=np.zeros((K, E)),
        label=np.full(K, -1), pair=np.zeros(K, np.int64), weight=np.ones(K), unit_pattern=np.arange(K),
        items_per_pair=np.array([float(K)]),
    ).arrays()


def test_prior_predictive_is_seeded_and_shaped():
    spec = get_model("dawid-skene", "win-rate")
    kw = dict(dims=VerdictPatterns.DIMS, coords=COORDS, draws=3)
    a = prior_predictive(spec, _design(), seed=1, **kw)
    b = prior_predictive(spec, _design(), seed=1, **kw)
    c = prior_predictive(spec, _design(), seed=2, **kw)
    assert {k: v.shape for k, v in a.items()} == {"p": (3, 1), "q0": (3, 1, E), "q1": (3, 1, E), "t": (3, K, E)}
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["t"], c["t"])
    assert not np.array_equal(a["p"][0], a["p"][1])  # every draw is a fresh one
    # the verdicts follow the drawn parameters: P(t = 1) = p q0 + (1 - p)(1 - q1)
    rate = a["p"][:, :, None] * a["q0"] + (1 - a["p"][:, :, None]) * (1 - a["q1"])
    assert np.all(np.abs(a["t"].mean(axis=1) - rate[:, 0]) < 4 * np.sqrt(0.25 / K))


def test_posterior_predictive_given_parameters():
    spec = get_model("dawid-skene", "win-rate")
    post = {"p": np.array([[1.0], [0.0]]), "q0": np.full((2, 1, E), 1.0), "q1": np.full((2, 1, E), 1.0)}
    out = posterior_predictive(spec, _design(3), dims=VerdictPatterns.DIMS, coords=COORDS, posterior=post, seed=0)
    np.testing.assert_array_equal(out["t"][0], 3)  # h = G0 always, judges always right
    np.testing.assert_array_equal(out["t"][1], 0)
    with pytest.raises(ValueError, match="q1"):
        posterior_predictive(spec, _design(), dims=VerdictPatterns.DIMS, coords=COORDS,
                             posterior={"p": post["p"], "q0": post["q0"]})


def test_replicate_a_fit():
    spec = get_model("poe-bt", "ranking")
    rng = np.random.default_rng(0)
    i, j = np.array([0, 1, 2, 0, 1, 2] * 20), np.array([1, 2, 0, 2, 0, 1] * 20)
    y = (rng.random(i.size) < 0.5).astype(float)
    arrays = {"i": i, "j": j, "p": y, "y": y, "cand_item": np.zeros(3, np.int64), "n_per_item": np.array([3.0])}
    from bayes_judge.ranking.encode import RankData

    fit = fit_model(spec, arrays, dims=RankData.DIMS, coords={"candidate": np.arange(3)},
                    sampling=Sampling(chains=2, draws=50, tune=50, seed=0), options={"position_bias": True})
    a, b = replicate(fit, seed=3), replicate(fit, seed=3)
    assert a["c"].shape == (2, 50, i.size)
    assert set(np.unique(a["c"])) <= {0.0, 1.0}
    np.testing.assert_array_equal(a["c"], b["c"])
