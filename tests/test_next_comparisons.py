"""bj.next_comparisons: the posterior-driven choice of what to judge next."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

import bayes_judge as bj
from bayes_judge.leaderboard.simulate import simulate_leaderboard


def _fake(means, sds, beta=None, draws=2000, seed=0):
    """A posterior of independent normal scores (and a position bias), as a leaderboard fit has."""
    rng = np.random.default_rng(seed)
    s = rng.normal(means, sds, size=(draws, len(means)))[None]
    post = {"s": s}
    dims = {"s": ["system"]}
    if beta is not None:
        post["beta"] = np.full((1, draws, 1), beta)
        dims["beta"] = ["judge"]
    return az.from_dict(posterior=post, coords={"system": [f"S{x}" for x in range(len(means))], "judge": ["j"]},
                        dims=dims)


def test_top_k_asks_about_the_boundary_and_ranking_about_the_close_pairs():
    idata = _fake([2.0, 1.9, 0.0, -0.05, -3.0], [0.3] * 5)
    top = bj.next_comparisons(idata, 1, goal="top-k", k=1)
    assert set(top.iloc[0][["a", "b"]]) == {"S0", "S1"}          # who is first
    rank = bj.next_comparisons(idata, 2, goal="ranking")
    assert {frozenset(r) for r in rank[["a", "b"]].to_numpy()} == {frozenset({"S0", "S1"}), frozenset({"S2", "S3"})}
    assert (rank["weight"] > 0.5).all() and rank["gain"].is_monotonic_decreasing


def test_a_batch_spreads_over_pairs_and_the_pair_goal_reads_its_difference():
    idata = _fake([0.0, 0.1, 0.2, 0.3], [1.0] * 4)
    batch = bj.next_comparisons(idata, 6, goal="ranking")
    assert len(batch) == 6 and len({frozenset(r) for r in batch[["a", "b"]].to_numpy()}) == 6  # every pair once
    one = bj.next_comparisons(idata, 1, goal="pair", pair=("S0", "S3"))
    assert set(one.iloc[0][["a", "b"]]) == {"S0", "S3"}


def test_the_order_shown_counters_the_position_bias():
    idata = _fake([0.5, 0.0], [0.5, 0.5], beta=0.8)  # the judge prefers position A by 0.8 logits
    row = bj.next_comparisons(idata, 1, goal="ranking").iloc[0]
    assert (row["a"], row["b"]) == ("S1", "S0")  # the weaker shown first: p_a = σ(−0.5 + 0.8), nearer ½
    assert abs(row["p_a"] - 0.5) < abs(1 / (1 + np.exp(-1.3)) - 0.5)


def test_honest_empty_answers():
    decided = bj.next_comparisons(_fake([5.0, 0.0, -5.0], [0.05] * 3), 3, goal="ranking")
    assert decided.empty and "already decided" in decided.attrs["reason"]
    single = bj.next_comparisons(_fake([0.0], [1.0]), 3)
    assert single.empty and "fewer than two systems" in single.attrs["reason"]
    few = bj.next_comparisons(_fake([3.0, 2.9, -9.0], [0.2] * 3), 3, goal="ranking")
    assert len(few) == 1 and "only 1 comparison" in few.attrs["reason"]


def test_bad_input():
    idata = _fake([0.0, 1.0, 2.0], [1.0] * 3)
    with pytest.raises(ValueError, match="goal must be one of"):
        bj.next_comparisons(idata, 2, goal="best")
    with pytest.raises(ValueError, match="needs k between 1 and 2"):
        bj.next_comparisons(idata, 2, goal="top-k", k=3)
    with pytest.raises(ValueError, match="needs pair=\\(a, b\\)"):
        bj.next_comparisons(idata, 2, goal="pair", pair=("S0", "S9"))
    with pytest.raises(ValueError, match="n must be a positive integer"):
        bj.next_comparisons(idata, 0)
    with pytest.raises(ValueError, match="needs a fit with scores s"):
        bj.next_comparisons(az.from_dict(posterior={"x": np.zeros((1, 10))}), 2)


def test_on_real_fits_a_leaderboard_and_a_ranking():
    df, _ = simulate_leaderboard(8, 1500, alpha=(3.0,), beta=(0.3,), tau=(0.0,), design="one-judge", seed=3)
    lb = bj.leaderboard(df.drop(columns="human"), sampler="laplace", pointwise=False)
    nxt = bj.next_comparisons(lb, 5, goal="top-k", k=3)
    assert len(nxt) == 5 and set(nxt["a"]) | set(nxt["b"]) <= set(lb.posterior["system"].to_numpy())
    # without labels the scores are bridged; more judged comparisons sharpen the judges' reading only
    assert "s_judges" in lb.posterior
    reading = bj.leaderboard(df.drop(columns="human"), sampler="laplace", pointwise=False, bridge=False)
    assert nxt.equals(bj.next_comparisons(reading, 5, goal="top-k", k=3))
    from bayes_judge.diagnose import UninformativeJudgeWarning

    with pytest.warns(UninformativeJudgeWarning, match="rank: 1 of 1 judge"):  # the embedded 135M judge: position-driven
        ranking = bj.rank(bj.datasets.summeval.comparator("coherence", articles=2), method="poe-bt", bayesian=True,
                          sampler="laplace")
    assert "judge_diagnosis" in ranking.attrs
    nxt = bj.next_comparisons(ranking, 10)
    assert "item" in nxt and (nxt.groupby("item").size() > 0).all()  # pairs within an item


def _two_items():
    """A Bayesian ranking of candidates A-D in each of two items (names shared), x1 and x2."""
    import pandas as pd

    rng = np.random.default_rng(0)
    strength = {"x1": dict(A=1.0, B=0.9, C=0.0, D=-1.0), "x2": dict(A=3.0, B=0.0, C=-0.1, D=-3.0)}
    rows = []
    for item, st in strength.items():
        for a in st:
            for b in st:
                if a != b:
                    for k in range(3):
                        rows.append({"item": item, "a": a, "b": b, "sample": k,
                                     "p_a": float(np.clip(1 / (1 + np.exp(st[b] - st[a])) + rng.normal(0, 0.05), 0.02, 0.98))})
    return bj.rank(pd.DataFrame(rows), method="poe-bt", bayesian=True, sampler="laplace", seed=0)


def test_ranking_fits_of_several_items_choose_within_each_item():
    idata = _two_items()
    s = idata.posterior["s"]
    got = bj.next_comparisons(idata, 20, goal="top-k", k=1)
    assert len(got) == 12 and got.attrs["reason"] == "there are only 12 pairs to compare, each proposed once"
    import importlib

    d = s.to_numpy().reshape(-1, s.shape[-1])
    cap = importlib.import_module("bayes_judge.next_comparisons").MAX_DRAWS  # the draws it reads
    d = d[np.linspace(0, len(d) - 1, cap).astype(int)] if len(d) > cap else d
    items = np.asarray([str(g) for g in s.coords["item"].to_numpy()])
    names = np.asarray([str(c) for c in s.coords["candidate_id"].to_numpy()])
    x1 = np.flatnonzero(items == "x1")
    best = x1[np.argmax(d[:, x1], axis=1)]  # x1's best in each draw, within x1 alone
    a, b = (int(x1[names[x1] == c][0]) for c in ("A", "B"))
    want = np.mean((best == a) ^ (best == b))
    row = got[(got["item"] == "x1") & (got[["a", "b"]].apply(frozenset, axis=1) == frozenset({"A", "B"}))]
    assert row["weight"].iloc[0] == pytest.approx(want)
    with pytest.raises(ValueError, match="several items .*say which with item="):
        bj.next_comparisons(idata, 1, goal="pair", pair=("A", "B"))
    one = bj.next_comparisons(idata, 1, goal="pair", pair=("A", "B"), item="x2")
    assert one["item"].iloc[0] == "x2" and set(one.iloc[0][["a", "b"]]) == {"A", "B"}


def test_gaussian_expert_fits_predict_on_their_own_scale():
    """poe-g's β is an offset of p (½ for no bias) and p is linear in Δ: read as a logit shift it made
    every prediction σ(Δ + 0.5) (P(z beats y) 0.51 where the data say 0.3, and z was shown first)."""
    import pandas as pd

    import bayes_judge as bj

    df = pd.DataFrame({"item": "q", "a": ["x", "y", "y", "z", "x", "z"], "b": ["y", "x", "z", "y", "z", "x"],
                       "p_a": [0.8, 0.2, 0.7, 0.3, 0.9, 0.1]})
    fit = bj.rank(df, method="poe-g", bayesian=True, chains=2, draws=300, tune=300, seed=0)
    out = bj.next_comparisons(fit, 3).set_index(["a", "b"])
    assert ("y", "z") in out.index and ("z", "y") not in out.index
    assert 0.6 < out.loc[("y", "z"), "p_a"] < 0.85  # the judge gave 0.7 and 1 − 0.3
    assert (out["p_a"].between(0, 1)).all()


def test_options_of_other_goals_are_refused():
    """k=2.5 ran as k=2, n=True as one comparison, and pair= / k= / item= were ignored by goals that
    do not read them."""
    import pandas as pd
    import pytest

    import bayes_judge as bj

    df = pd.DataFrame({"item": "q", "a": ["x", "y", "y", "z", "x", "z"], "b": ["y", "x", "z", "y", "z", "x"],
                       "p_a": [0.8, 0.2, 0.7, 0.3, 0.9, 0.1]})
    fit = bj.rank(df, bayesian=True, chains=2, draws=100, tune=100, seed=0)
    for kw, match in ((dict(n=True), "n must be a positive integer"),
                      (dict(n=2, goal="top-k", k=1.5), "k= is the whole number"),
                      (dict(n=2, goal="ranking", k=1), "k= is the whole number"),
                      (dict(n=2, pair=("x", "y")), "pair= belongs to goal='pair'"),
                      (dict(n=2, item="q"), "item= says which item")):
        with pytest.raises(ValueError, match=match):
            bj.next_comparisons(fit, **kw)


def test_a_bridged_leaderboard_says_only_labels_can_decide_what_is_left():
    """On a leaderboard bridged to people's scores, next_comparisons read the judges' settled reading
    and said 'every pair is already decided' while compare_systems left half the pairs open."""
    import arviz as az
    import numpy as np
    import xarray as xr

    import bayes_judge as bj

    rng = np.random.default_rng(0)
    reading = np.array([3.0, 0.0, -3.0]) + 1e-4 * rng.standard_normal((2, 200, 3))  # decided
    people = np.array([0.5, 0.0, -0.5]) + rng.standard_normal((2, 200, 3))          # open
    post = xr.Dataset({"s": (("chain", "draw", "system"), people), "s_judges": (("chain", "draw", "system"), reading)},
                      coords={"chain": [0, 1], "draw": np.arange(200), "system": ["A", "B", "C"]})
    idata = az.InferenceData(posterior=post)
    idata.attrs.update(task="leaderboard", model="bt-judges")
    out = bj.next_comparisons(idata, 2)
    assert out.empty and "only human labels narrow that" in out.attrs["reason"]
