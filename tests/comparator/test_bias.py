import numpy as np
import pandas as pd
import pytest

from bayes_judge.comparator.bias import debias_position, position_bias


def _biased(seed=0, n=400, shift=1.2):
    """n pairs (x, y), each judged in both orders (a, b: shown first, second)."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0, 1.5, n)
    p_ab = 1 / (1 + np.exp(-(d + shift)))     # judge favours position A
    p_ba = 1 / (1 + np.exp(-(-d + shift)))
    return pd.DataFrame({"item": np.repeat(np.arange(n), 2), "a": np.tile(["x", "y"], n), "b": np.tile(["y", "x"], n),
                         "judge": "j", "p_a": np.column_stack([p_ab, p_ba]).ravel()})


def test_position_bias_is_eq8():
    df = pd.DataFrame({"p_a": [0.9, 0.6, 0.4, 0.5]})
    pb = position_bias(df)
    assert pb["P(A)"] == pytest.approx((1 + 1 + 0 + 0.5) / 4)
    assert pb["P(A)"] + pb["P(B)"] == pytest.approx(1)


@pytest.mark.parametrize("method", ["reweight", "threshold"])
def test_debiasing_balances_positions(method):
    df = _biased()
    assert position_bias(df)["P(A)"] > 0.7
    out = debias_position(df, method)
    rec = out.attrs["debias"]["j"]
    assert rec["P(A) after"] == pytest.approx(0.5, abs=0.01)
    assert (out["p_a_raw"] == df["p_a"]).all()
    if method == "threshold":  # the decisions are the verdicts; the raw probability stays in p_a_raw
        assert out["p_a"].isna().all() and out["winner"].isin(["a", "b", "tie"]).all()
    # the debiased table is read by the estimators (threshold's p_a beside its new winner was refused)
    import bayes_judge as bj

    assert bj.win_rate(out.drop(columns=["p_a_raw"]), estimand="judges", seed=0).attrs["estimand"] == "judges"
    assert rec["n_both_orders"] == len(df)


def test_reweighting_equals_threshold_decisions():
    """eq. 9 with alpha = (1 - tau) / tau decides exactly as eq. 10 with threshold tau."""
    df = _biased(seed=3)
    rw, th = debias_position(df, "reweight"), debias_position(df, "threshold")
    tau = rw.attrs["debias"]["j"]["tau"]
    alpha = rw.attrs["debias"]["j"]["alpha"]
    p = df["p_a"].to_numpy()
    np.testing.assert_allclose(rw["p_a"], alpha * p / (alpha * p + 1 - p))
    assert (rw["winner"] == th["winner"]).all()
    assert alpha == pytest.approx((1 - tau) / tau)


def test_bad_input():
    with pytest.raises(ValueError, match="p_a"):
        position_bias(pd.DataFrame({"winner": ["a"]}))
    with pytest.raises(ValueError, match="reweight"):
        debias_position(_biased(), "median")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        position_bias(pd.DataFrame({"p_a": [1.2]}))


@pytest.mark.parametrize("method", ["reweight", "threshold"])
def test_debiasing_an_unbalanced_or_small_set_warns(method):
    """The median threshold assumes both orders of every pair and enough of them: a set judged in
    one order (its verdicts turned into ties and flips) or of a few comparisons is named."""
    balanced = _biased(n=200)
    one_order = balanced[balanced["a"] == "x"]  # the same pairs, each shown one way only
    with pytest.warns(UserWarning, match=r"assumes a balanced set .* 'j': 200 comparison\(s\), 0 judged in both orders"):
        out = debias_position(one_order, method)
    assert out.attrs["debias"]["j"]["n_both_orders"] == 0
    with pytest.warns(UserWarning, match=r"'j': 6 comparison\(s\), 6 judged in both orders"):
        debias_position(balanced.iloc[:6], method)
    two = pd.concat([balanced, one_order.assign(judge="k")])
    with pytest.warns(UserWarning, match=r"1 group\(s\) are not: 'k'"):
        debias_position(two, method)
    with pytest.warns(UserWarning, match=r"all: 3 comparison\(s\), \? judged"):  # no a / b: only the size is known
        debias_position(pd.DataFrame({"p_a": [0.9, 0.6, 0.4]}), method)
    debias_position(balanced, method)  # 400 comparisons, all in both orders: no warning (they are errors here)
    # one pair judged both ways beside 200 judged one way is not a balanced set
    nearly = pd.concat([one_order, balanced[balanced["a"] == "y"].iloc[:2]])  # two pairs shown both ways
    with pytest.warns(UserWarning, match=r"'j': 202 comparison\(s\), 4 judged in both orders"):
        debias_position(nearly, method)
