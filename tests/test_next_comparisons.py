"""bj.next_comparisons: the posterior-driven choice of what to judge next."""

from __future__ import annotations

import importlib

import arviz as az
import numpy as np
import pandas as pd
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
    got = bj.next_comparisons(idata, 20, goal="top-k", k=1)
    # every pair once (12 < 20): x1's contenders for the top first (1.0 and 0.9); x2's best (A, three
    # logits ahead) is nearly settled, so its pairs tell little about its top 1
    assert len(got) == 12 and got.attrs["reason"].startswith("there are only 12 pairs to compare")
    first = got.iloc[0]
    assert first["item"] == "x1" and set(first[["a", "b"]]) == {"A", "B"}
    assert (got.loc[got["item"] == "x2", "gain"] < 0.15 * first["gain"]).all()
    with pytest.raises(ValueError, match="several items .*say which with item="):
        bj.next_comparisons(idata, 1, goal="pair", pair=("A", "B"))
    one = bj.next_comparisons(idata, 1, goal="pair", pair=("A", "B"), item="x2")
    assert one["item"].iloc[0] == "x2" and set(one.iloc[0][["a", "b"]]) == {"A", "B"}


def test_gaussian_expert_fits_predict_on_their_own_scale():
    """poe-g's β is an offset of p (½ for no bias) and p is linear in Δ: read as a logit shift it made
    every prediction σ(Δ + 0.5) (P(z beats y) 0.51 where the data say 0.3, and z was shown first).
    Its own prediction is the mean p = α Δ + β; the judge has no position bias here (β ≈ ½), so
    either order is as unpredictable as the other."""
    import pandas as pd

    import bayes_judge as bj

    df = pd.DataFrame({"item": "q", "a": ["x", "y", "y", "z", "x", "z"], "b": ["y", "x", "z", "y", "z", "x"],
                       "p_a": [0.8, 0.2, 0.7, 0.3, 0.9, 0.1]})
    fit = bj.rank(df, method="poe-g", bayesian=True, chains=2, draws=300, tune=300, seed=0)
    out = bj.next_comparisons(fit, 3).set_index(["a", "b"])
    assert (("y", "z") in out.index) != (("z", "y") in out.index)  # proposed once, in one order
    y_first = out.loc[("y", "z"), "p_a"] if ("y", "z") in out.index else 1 - out.loc[("z", "y"), "p_a"]
    assert 0.6 < y_first < 0.85  # the judge gave 0.7 and 1 − 0.3
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


def _lap(df, **kw):
    return bj.leaderboard(df.drop(columns="human"), bridge=False, sampler="laplace", chains=2, draws=1000, seed=0,
                          pointwise=False, **kw)


def _kept(fit, name):
    """A posterior variable's draws (S, ...) at the draws next_comparisons reads."""
    import importlib

    v = fit.posterior[name]
    x = v.to_numpy().reshape(-1, *v.shape[2:])
    cap = importlib.import_module("bayes_judge.next_comparisons").MAX_DRAWS
    return x[np.linspace(0, len(x) - 1, cap).astype(int)] if len(x) > cap else x


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.fixture(scope="module")
def two_judges():
    """A bt-judges fit of two judges: j0 of accuracy σ(1), position bias 0.8 and ties (τ 0.5); j1 of
    accuracy σ(2), bias −0.5, never a tie."""
    df, _ = simulate_leaderboard(6, 2000, alpha=(1.0, 2.0), beta=(0.8, -0.5), tau=(0.5, 0.0), design="one-judge",
                                 seed=2)
    return _lap(df)


def test_p_a_is_the_judged_models_own_prediction(two_judges):
    """p_a was σ(Δ + β̄), the judge's accuracy ignored: 0.255 where the fit's own P(judge says A) was 0.471.
    It is σ(Δ) P(A | people prefer A) + σ(−Δ) P(A | people prefer B) with the ordered logit
    P(A | h) = σ(±α + β − τ), per draw, averaged over draws and judges (or one judge=), and the pair is
    shown in the order whose verdict is least predictable."""
    fit = two_judges
    assert list(fit.posterior["tau"].coords["tie_judge"].to_numpy()) == ["j0"]
    s, alpha, beta, tau = (_kept(fit, v) for v in ("s", "alpha", "beta", "tau"))
    tau = np.column_stack([tau[:, 0], np.zeros(len(tau))])       # j1 never ties
    names = list(fit.posterior["system"].to_numpy())

    def verdict(a, b, e):  # (P_A, P_B) of judge e, a shown first, per draw
        w = _sig(s[:, names.index(a)] - s[:, names.index(b)])
        pa = [w * _sig(alpha[:, x] + beta[:, x] - tau[:, x]) + (1 - w) * _sig(-alpha[:, x] + beta[:, x] - tau[:, x])
              for x in e]
        pb = [w * _sig(-alpha[:, x] - beta[:, x] - tau[:, x]) + (1 - w) * _sig(alpha[:, x] - beta[:, x] - tau[:, x])
              for x in e]
        return np.mean(pa), np.mean(pb)

    for judge, e in ((None, [0, 1]), ("j0", [0]), ("j1", [1])):
        out = bj.next_comparisons(fit, 6, judge=judge)
        assert len(out) >= 3
        for a, b, p_a in out[["a", "b", "p_a"]].itertuples(index=False):
            pa, pb = verdict(a, b, e)
            assert p_a == pytest.approx(pa, abs=1e-9)
            ra, rb = verdict(b, a, e)
            assert abs(pa - pb) <= abs(ra - rb)                      # the least predictable order
        if judge == "j0":  # the old σ(Δ + β̄) is far off for this judge of accuracy 0.73
            a, b = out.iloc[0][["a", "b"]]
            d = s[:, names.index(a)] - s[:, names.index(b)]
            assert abs(_sig(d + beta[:, 0]).mean() - out.iloc[0]["p_a"]) > 0.05
    with pytest.raises(ValueError, match="judge='j7' is not a judge of this fit; its judges are"):
        bj.next_comparisons(fit, 2, judge="j7")
    with pytest.raises(ValueError, match="this fit has no judges"):
        bj.next_comparisons(_fake([0.0, 1.0], [1.0, 1.0]), 1, judge="j0")


def test_a_judges_own_system_preferences_enter_its_prediction():
    """With system_bias=True (NUTS), judge e's η = ±α_e + β_e + δ_{e,a} − δ_{e,b}."""
    df, _ = simulate_leaderboard(5, 800, alpha=(1.5, 2.0), beta=(0.5, -0.3), tau=(0.4, 0.0), design="one-judge", seed=1)
    fit = bj.leaderboard(df.drop(columns="human"), bridge=False, system_bias=True, chains=2, draws=300, tune=300,
                         seed=0, pointwise=False)
    s, alpha, beta, tau, delta = (_kept(fit, v) for v in ("s", "alpha", "beta", "tau", "delta"))
    names = list(fit.posterior["system"].to_numpy())
    out = bj.next_comparisons(fit, 4, judge="j0")
    assert len(out) >= 2
    for a, b, p_a in out[["a", "b", "p_a"]].itertuples(index=False):
        i, j = names.index(a), names.index(b)
        w, shift = _sig(s[:, i] - s[:, j]), beta[:, 0] + delta[:, 0, i] - delta[:, 0, j]
        want = w * _sig(alpha[:, 0] + shift - tau[:, 0]) + (1 - w) * _sig(-alpha[:, 0] + shift - tau[:, 0])
        assert p_a == pytest.approx(want.mean(), abs=1e-9)


def test_p_a_of_davidsons_model_is_its_own_not_a_logit_shift():
    """model="bt" with ties: P(A) = e^x / (e^x + e^{−x} + ν), x = (Δ + β)/2, not σ(Δ + β)."""
    df, _ = simulate_leaderboard(4, 600, alpha=(2.0,), beta=(0.6,), tau=(1.0,), scores=[0.0, 0.15, 0.3, 0.45],
                                 design="one-judge", seed=4)
    fit = _lap(df, model="bt")
    s, beta, nu = _kept(fit, "s"), _kept(fit, "beta")[:, 0], _kept(fit, "nu")[:, 0]
    names = list(fit.posterior["system"].to_numpy())
    out = bj.next_comparisons(fit, 4)
    assert len(out) == 4
    for a, b, p_a in out[["a", "b", "p_a"]].itertuples(index=False):
        x = 0.5 * (s[:, names.index(a)] - s[:, names.index(b)] + beta)
        want = np.exp(x) / (np.exp(x) + np.exp(-x) + nu)
        assert p_a == pytest.approx(want.mean(), abs=1e-9)
        assert abs(_sig(2 * x).mean() - p_a) > 0.05                  # the old σ(Δ + β)


def test_the_information_is_the_verdicts_fisher_information():
    """f = Σ_v (∂P_v/∂Δ)² / P_v of the verdict's own probabilities (checked by finite differences):
    bt-judges with a tie threshold and system preferences, and Davidson's ties."""
    nc = importlib.import_module("bayes_judge.next_comparisons")
    rng = np.random.default_rng(0)
    S, h = 50, 1e-6
    d = rng.normal(0, 2, (S, 3))
    a, b = np.array([0, 1, 2]), np.array([1, 2, 0])
    judged = nc._Verdicts("bt-judges", shift=rng.normal(0, 1, (S, 2)), alpha=rng.uniform(0.2, 3, (S, 2)),
                          tie=np.column_stack([rng.uniform(0.1, 1, S), np.zeros(S)]), tied=np.array([True, False]),
                          delta=rng.normal(0, 0.5, (S, 2, 3)), sigma=np.zeros(S))
    davidson = nc._Verdicts("davidson", shift=rng.normal(0, 1, (S, 1)), alpha=np.zeros((S, 1)),
                            tie=rng.uniform(0, 2, (S, 1)), tied=np.array([True]), delta=None, sigma=np.zeros(S))
    for m, e in ((judged, 0), (judged, 1), (davidson, 0)):
        pa, pb, f = nc._outcomes(m, e, d, a, b)
        up, down = nc._outcomes(m, e, d + h, a, b), nc._outcomes(m, e, d - h, a, b)
        grads = [(u - v) / (2 * h) for u, v in zip(up[:2], down[:2], strict=True)]
        probs = [pa, pb, 1 - pa - pb]
        grads.append(-grads[0] - grads[1])
        want = sum(g ** 2 / p for g, p in zip(grads, probs, strict=True) if (p > 1e-12).all())
        np.testing.assert_allclose(f, want, rtol=1e-5, atol=1e-10)


def test_a_settled_top_k_asks_for_nothing():
    """Two systems 6 logits apart, k=1: the straddling pair was proposed with weight 1.0 although the top 1
    was certain; goal="ranking" said "every pair is already decided"."""
    df, _ = simulate_leaderboard(2, 400, alpha=(2.0,), beta=(0.2,), scores=[-3.0, 3.0], design="one-judge", seed=3)
    fit = _lap(df)
    top = bj.next_comparisons(fit, 1, goal="top-k", k=1)
    assert top.empty and "every pair is already decided" in top.attrs["reason"]
    assert "who is in the top 1 is settled" in top.attrs["reason"]
    assert bj.next_comparisons(fit, 1, goal="ranking").empty
    # S0 is in the top 2 and S3 out in every draw; S1 and S2 contend for the second place. Their
    # verdict decides the set; S0 against S1 hardly (S1 loses to S0 either way); S0 against S3 not at all
    fake = _fake([3.0, 0.0, -0.05, -9.0], [0.05, 0.3, 0.3, 0.05])
    got = bj.next_comparisons(fake, 6, goal="top-k", k=2).set_index(["a", "b"])
    gain = {frozenset(ab): x for ab, x in got["gain"].items()}
    assert max(gain, key=gain.get) == frozenset({"S1", "S2"}) and frozenset({"S0", "S3"}) not in gain
    assert gain.get(frozenset({"S0", "S1"}), 0.0) < 0.1 * gain[frozenset({"S1", "S2"})]


def test_the_top_k_weight_is_the_verdicts_information_on_the_set():
    """Two systems whose difference is +c or −c, half the draws each: the top 1 is the sign, a
    verdict (Bradley-Terry, no ties, no position bias) says A with σ(±c), so its information on
    the top 1 is log 2 − H(σ(c)) nats, and the first pick's gain is exactly that."""
    c, draws = 1.2, 1000  # no more than the draws it reads (MAX_DRAWS): none thinned away
    s = np.zeros((1, draws, 2))
    s[0, ::2] = [c / 2, -c / 2]
    s[0, 1::2] = [-c / 2, c / 2]
    fit = az.from_dict(posterior={"s": s}, coords={"system": ["S0", "S1"]}, dims={"s": ["system"]})
    q = 1 / (1 + np.exp(-c))
    want = np.log(2) + q * np.log(q) + (1 - q) * np.log(1 - q)
    got = bj.next_comparisons(fit, 1, goal="top-k", k=1)
    assert got["gain"].iloc[0] == pytest.approx(want, rel=1e-9)
    assert got["weight"].iloc[0] == pytest.approx(want, rel=1e-9)


def test_the_top_k_information_stays_at_the_boundary_among_many_systems():
    """60 systems, k=10: a distinct top 10 in nearly every draw. Read on the whole set, the
    particles' information became the verdict's information on the difference: pairs far below the
    boundary (S30 against S31, which straddle it in a few draws) scored as high as the boundary's
    own. On the two members' places in the top 10 they score next to nothing."""
    means = np.linspace(3.0, -3.0, 60)
    fit = _fake(means, [0.6] * 60, draws=1000)
    got = bj.next_comparisons(fit, 8, goal="top-k", k=10)
    ranks = got[["a", "b"]].map(lambda x: int(x[1:]))
    assert ranks.min(axis=1).between(5, 14).all() and ranks.max(axis=1).between(7, 16).all()  # around S9 | S10
    nc = importlib.import_module("bayes_judge.next_comparisons")
    draws = fit.posterior["s"].to_numpy().reshape(-1, 60)
    top = np.argsort(np.argsort(-draws, axis=1), axis=1) < 10
    m = nc._verdicts(fit, np.arange(draws.shape[0]), None)
    info = nc._set_information(m, draws, np.array([9, 30, 45]), np.array([10, 31, 46]), top)
    assert info[0] > 0.02 and info[1] < 0.02 * info[0] and info[2] < 1e-12  # (45, 46): out in every draw


def test_a_saved_run_is_read_from_its_path(tmp_path):
    """bj.next_comparisons("runs/x", 3) said it needs a posterior, "not a str"."""
    idata = _fake([0.0, 0.3, 0.6], [0.5] * 3, beta=0.4)
    path = bj.save_run(idata, tmp_path / "run")
    want = bj.next_comparisons(idata, 3)
    for p in (str(tmp_path / "run"), path):
        pd.testing.assert_frame_equal(bj.next_comparisons(p, 3), want)
    with pytest.raises(FileNotFoundError, match="not found"):
        bj.next_comparisons(str(tmp_path / "nope"), 3)


def test_the_reasons_count_in_the_singular_and_the_plural():
    one = bj.next_comparisons(_fake([0.0, 0.1], [1.0, 1.0]), 3)
    assert len(one) == 1 and one.attrs["reason"] == "there is only 1 pair to compare, proposed once"
    few = bj.next_comparisons(_fake([3.0, 2.9, 2.8, -9.0], [0.2] * 4), 6, goal="ranking")
    assert len(few) == 3 and few.attrs["reason"].startswith("only 3 comparisons tell anything")
    single = bj.next_comparisons(_fake([3.0, 2.9, -9.0], [0.2] * 3), 3, goal="ranking")
    assert single.attrs["reason"].startswith("only 1 comparison tells anything")


@pytest.mark.parametrize("model", ["bt-judges", "bt"])
def test_the_verdict_probabilities_are_the_declared_likelihood(model):
    """next_comparisons restates each leaderboard model's verdict likelihood to predict; here the
    restatement is checked against the declaration itself: the probability table of the declared
    model's judgment cells (A, B, tie), at a point of every parameter (position bias, ties, a
    judge's own system preferences), equals ``_outcomes`` at the same values, cell by cell."""
    from bayes_judge.generative import get_model
    from bayes_judge.inference.fit import _build
    from bayes_judge.leaderboard.encode import LeaderboardData, encode_leaderboard

    nc = importlib.import_module("bayes_judge.next_comparisons")
    df = pd.DataFrame({"item": ["i1", "i2", "i3", "i4"], "a": ["X", "X", "Y", "Z"], "b": ["Y", "Y", "X", "X"],
                       "judge": "j", "winner": ["A", "tie", "B", "A"]})
    data = encode_leaderboard(df)
    arrays = data.arrays()
    coords = {**data.coords(), "tie_judge": ["j"]}
    options = {"position_bias": True, "tie_judges": (0,), "n_judges": 1}
    if model == "bt-judges":
        options["system_bias"] = True
    spec = get_model(model, "leaderboard")
    pm_model = _build(spec, arrays, LeaderboardData.DIMS, coords, spec.default_priors(), False, options)
    # log P of each cell's outcomes (cell, outcome), as a function of the value variables
    table = pm_model.replace_rvs_by_values([pm_model["v"].owner.inputs[2]])[0]
    s_raw, beta, tie, alpha = np.array([0.7, -0.2, 0.1]), 0.4, 0.5, 1.3
    z, u = np.array([0.3, -1.0, 0.5]), -0.6     # a judge's own preferences: δ = u (z − z̄), u its signed scale
    point = {"s_raw": s_raw, "beta": np.array([beta]), "alpha_log__": np.log([alpha]), "tau_log__": np.log([tie]),
             "nu_log__": np.log([tie]), "system_bias_signed": np.array(u), "delta_raw": z[None]}
    names = {v.name for v in pm_model.value_vars}
    fn = pm_model.compile_fn(table, inputs=pm_model.value_vars, on_unused_input="ignore")
    want = np.exp(np.asarray(fn({k: v for k, v in point.items() if k in names})))[:, :3]
    s = s_raw - s_raw.mean()
    a, b = np.asarray(arrays["sys_a"]), np.asarray(arrays["sys_b"])
    delta = (u * (z - z.mean()))[None, None] if model == "bt-judges" else None  # the fit's own `delta`
    m = nc._Verdicts("bt-judges" if model == "bt-judges" else "davidson", np.full((1, 1), beta),
                     np.full((1, 1), alpha), np.full((1, 1), tie), np.array([True]), delta, np.zeros(1))
    pa, pb, _ = nc._outcomes(m, 0, (s[a] - s[b])[None], a, b)
    np.testing.assert_allclose(np.c_[pa[0], pb[0], 1.0 - pa[0] - pb[0]], want, rtol=1e-10, atol=1e-12)
