import importlib

import numpy as np
import pandas as pd
import pytest

from bayes_judge.ranking import METHODS, ClippedProbabilityWarning, rank
from bayes_judge.ranking.rank import PositionNotDebiasedWarning


def test_result_has_one_sorted_block_per_item_with_rank_one_best(simulate):
    df = pd.concat([simulate(6, 30, seed=1, item="q2")[0], simulate(5, 25, seed=2, item="q1")[0]])
    out = rank(df, method="poe-g")
    assert list(out.columns) == ["item", "candidate", "score", "rank"]
    assert out["item"].tolist() == ["q1"] * 5 + ["q2"] * 6
    for _, block in out.groupby("item"):
        assert block["rank"].tolist() == list(range(1, len(block) + 1))
        assert block["score"].is_monotonic_decreasing
    assert out["rank"].dtype == np.int64 and out.attrs["method"] == "poe-g"


def test_equal_scores_share_the_best_rank():
    df = pd.DataFrame({"item": 1, "a": ["x", "y", "z"], "b": ["y", "z", "x"], "winner": ["a", "a", "a"]})
    out = rank(df, method="win-ratio")
    assert out["rank"].tolist() == [1, 1, 1] and out["candidate"].tolist() == ["x", "y", "z"]


@pytest.mark.filterwarnings("ignore::bayes_judge.ranking.ClippedProbabilityWarning")
@pytest.mark.parametrize("method", ["poe-g", "poe-bt", "bt", "win-ratio"])
def test_identical_records_share_a_rank_through_rounding(method):
    """y and z have the same record; poe-g's float sums give -0.49999999999999994 and -0.5."""
    df = pd.DataFrame({"item": "q", "a": ["x", "y", "x", "z", "y", "z"], "b": ["y", "x", "z", "x", "z", "y"],
                       "winner": ["a", "b", "a", "b", "tie", "tie"]})
    out = rank(df, method=method).set_index("candidate")["rank"]
    assert out.to_dict() == {"x": 1, "y": 2, "z": 2}


@pytest.mark.parametrize("method", [m for m in METHODS if m != "poe-bt"] + ["poe-bt"])
def test_items_ranked_together_equal_items_ranked_alone(simulate, method):
    parts = [simulate(7, 40, seed=s, item=f"art{s}", prefix="sys")[0] for s in (3, 4, 5)]
    together = rank(pd.concat(parts, ignore_index=True), method=method)
    alone = pd.concat([rank(p, method=method) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(together, alone, atol=1e-7, check_exact=False)


def test_hard_decisions_only_table_ranks_with_every_method():
    df = pd.DataFrame(
        {"item": 1, "a": ["x", "y", "z", "x"], "b": ["y", "z", "x", "z"], "winner": ["a", "a", "b", "tie"]}
    )
    for method in METHODS:
        if method == "poe-bt":
            with pytest.warns(ClippedProbabilityWarning):
                out = rank(df, method=method)
        else:
            out = rank(df, method=method)
        assert out["candidate"].tolist()[0] == "x"


def test_string_ids_from_any_source_work():
    df = pd.DataFrame(
        {
            "item": ["news/Ärtikel 1"] * 4,
            "a": ["gpt-4o (2024-05)", "M11", 17, "gpt-4o (2024-05)"],
            "b": ["M11", 17, "gpt-4o (2024-05)", 17],
            "judge": ["llama-3 | summeval-coh", "llama-3 | summeval-coh", "human:ann#3", "human:ann#3"],
            "p_a": [0.8, 0.6, 0.3, 0.7],
        }
    )
    with pytest.warns(PositionNotDebiasedWarning):  # two comparisons per judge: nothing to debias by
        out = rank(df)
    assert set(out["candidate"]) == {"gpt-4o (2024-05)", "M11", "17"}
    assert out["item"].unique().tolist() == ["news/Ärtikel 1"]
    assert out.iloc[0]["candidate"] == "gpt-4o (2024-05)"


def test_unknown_method_is_an_error_naming_the_choices():
    df = pd.DataFrame({"item": 1, "a": ["x"], "b": ["y"], "p_a": [0.6]})
    with pytest.raises(ValueError, match=r"unknown method 'elo'.*'poe-bt'"):
        rank(df, method="elo")


def test_bayesian_needs_a_generative_model():
    df = pd.DataFrame({"item": 1, "a": ["x"], "b": ["y"], "p_a": [0.6]})
    with pytest.raises(ValueError, match="bayesian=True needs a generative model"):
        rank(df, method="win-ratio", bayesian=True)


def test_bayesian_rank_returns_posterior_scores():
    import bayes_judge as bj

    df = pd.DataFrame({"item": "q", "a": ["x", "y", "z", "x"], "b": ["y", "z", "x", "z"],
                       "p_a": [0.9, 0.8, 0.15, 0.85]})
    idata = bj.rank(df, method="poe-g-hard", bayesian=True, chains=2, draws=200, tune=200)
    s = bj.score_summary(idata)
    assert list(s["candidate"]) == ["x", "y", "z"]
    assert "beta" in idata.posterior and "gamma" not in idata.posterior
    np.testing.assert_array_equal(idata.observed_data["p"], [1.0, 1.0, 0.0, 1.0])


def test_disconnected_graph_through_rank_names_the_components():
    df = pd.DataFrame({"item": 1, "a": ["x", "z"], "b": ["y", "w"], "p_a": [0.6, 0.4]})
    with pytest.raises(ValueError, match=r"\{'x', 'y'\}"):
        rank(df, method="bt")


def test_poe_bt_warns_on_zero_and_one_or_errors_with_clip_error():
    df = pd.DataFrame({"item": 1, "a": ["x", "y"], "b": ["y", "z"], "p_a": [1.0, 0.6]})
    with pytest.warns(ClippedProbabilityWarning, match="clipped"):
        out = rank(df, method="poe-bt", debias=False)
    assert out["candidate"].tolist() == ["x", "y", "z"]
    with pytest.raises(ValueError, match="exactly 0 or 1"):
        rank(df, method="poe-bt", clip="error", debias=False)


def test_non_finite_scores_raise_instead_of_nan_ranks(monkeypatch):
    rank_module = importlib.import_module("bayes_judge.ranking.rank")
    monkeypatch.setattr(rank_module, "poe_gaussian", lambda d, **kw: np.full(d.n_candidates, np.nan))
    df = pd.DataFrame({"item": 1, "a": ["x"], "b": ["y"], "p_a": [0.6]})
    with pytest.raises(FloatingPointError, match="non-finite scores for 2 candidate"):
        rank(df, method="poe-g", debias=False)


def test_a_ranking_from_a_position_driven_judge_is_said_so():
    """The embedded 135M judge names the first text nearly always: rank says so on both paths."""
    import json

    import bayes_judge as bj
    from bayes_judge.diagnose import UninformativeJudgeWarning

    df = bj.datasets.summeval.comparator("coherence", articles=1)
    with pytest.warns(UninformativeJudgeWarning, match="rank: 1 of 1 judge"):
        out = rank(df, method="poe-g")
    assert any(d.get("informative") is False for d in json.loads(out.attrs["judge_diagnosis"]).values())
    informative = pd.DataFrame({"item": "q", "a": ["x", "y", "x", "z", "y", "z"], "b": ["y", "x", "z", "x", "z", "y"],
                                "p_a": [0.9, 0.1, 0.8, 0.2, 0.7, 0.3]})
    assert json.loads(rank(informative, method="poe-g").attrs["judge_diagnosis"])  # diagnosed, and no warning


def test_unbalanced_positions_are_not_debiased_away():
    """β = E[p] (PoE A.7) is a position bias only where the positions are balanced: every pair once
    in alphabetical order reversed the ranking (B, D, A, C, E), one comparison per judge erased it
    (every score 0), a chain a-b, b-c put z above y."""
    import itertools

    sc = {"A": 5, "B": 4.5, "C": 3, "D": 2.8, "E": 1}
    df = pd.DataFrame([dict(item="q", a=a, b=b, p_a=1 / (1 + np.exp(-(sc[a] - sc[b]))))
                       for a, b in itertools.combinations(sorted(sc), 2)])
    for method in ("poe-bt", "poe-g", "poe-g-hard"):
        with pytest.warns(PositionNotDebiasedWarning, match=r"1 of 1 .*imbalance up to 0.60"):
            assert rank(df, method=method)["candidate"].tolist() == list("ABCDE")
        with pytest.raises(ValueError, match="debias=True: 1 of 1"):
            rank(df, method=method, debias=True)
    three = pd.DataFrame({"item": "q", "a": ["x", "y", "z"], "b": ["y", "z", "x"], "judge": ["j1", "j2", "j3"],
                          "p_a": [0.9, 0.8, 0.05]})
    with pytest.warns(PositionNotDebiasedWarning, match="3 of 3"):
        out = rank(three)
    assert out["candidate"].tolist() == ["x", "y", "z"] and out["rank"].tolist() == [1, 2, 3]
    chain = pd.DataFrame({"item": "q", "a": ["x", "y"], "b": ["y", "z"], "p_a": [0.9, 0.6]})
    with pytest.warns(PositionNotDebiasedWarning):
        assert rank(chain)["candidate"].tolist() == ["x", "y", "z"]
    # both orders of every pair: balanced, debiased as the paper, no warning; a position bias is removed
    both = pd.concat([df, df.rename(columns={"a": "b", "b": "a"}).assign(p_a=1 - df["p_a"])], ignore_index=True)
    biased = both.assign(p_a=np.clip(both["p_a"] + 0.1, 0.01, 0.99))
    for method in ("poe-bt", "poe-g"):
        fair = rank(both, method=method).set_index("candidate")["score"]
        shifted = rank(biased, method=method).set_index("candidate")["score"]
        assert shifted.index.tolist() == list("ABCDE")
        np.testing.assert_allclose(shifted.to_numpy(), fair.to_numpy(), atol=0.25)


def test_interval_masses_too_small_to_hold_a_draw_are_refused():
    """hdi_prob below ~1/draws gave a point interval at the lowest draw (away from the mean) and a
    compare_systems verdict contradicting P(a better); compare_systems checked it on win rates only."""
    import bayes_judge as bj

    df = pd.DataFrame({"item": "q", "a": ["x", "y"], "b": ["y", "x"], "p_a": [0.8, 0.3]})
    post = rank(df, bayesian=True, chains=2, draws=100, tune=100, seed=0)
    for bad in (0, 0.001, 1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"hdi_prob must lie in \[0.01, 1\)"):
            bj.compare_systems(post, hdi_prob=bad)
        with pytest.raises(ValueError, match=r"hdi_prob must lie in \[0.01, 1\)"):
            bj.score_summary(post, hdi_prob=bad)


def test_position_imbalance_of_known_designs():
    """B_g = Σ_c |n_A(c) − n_B(c)| / (2 K_g) per (item, judge) group, counted over the (group,
    candidate) pairs that occur (a dense groups x candidates table was 1.9 GB at 2,000 items)."""
    import itertools

    from bayes_judge.ranking.encode import encode_ranking, position_imbalance

    alpha = [dict(item="alpha", a=a, b=b, p_a=0.6) for a, b in itertools.combinations("ABCDE", 2)]
    both = [dict(item="both", a=a, b=b, p_a=0.6) for a, b in itertools.permutations("xyz", 2)]
    one = [dict(item="one", a="u", b="v", p_a=0.6)]
    d = encode_ranking(pd.DataFrame(alpha + both + one))
    np.testing.assert_allclose(position_imbalance(d), [0.6, 0.0, 1.0])  # items in their sorted order
    assert d.items == ["alpha", "both", "one"]


@pytest.mark.parametrize("kw, match", [
    (dict(method="bt", debias_by="bogus"), "debias_by must be"),
    (dict(debias=False, debias_by="bogus"), "debias_by must be"),
    (dict(sampler="bogus"), "sampler must be one of"),
    (dict(method="bt", ties="bogus"), "ties must be"),
    (dict(method="bt", clip="bogus"), "clip must be"),
    (dict(method="win-ratio", prior=-1), "prior must be"),
])
def test_option_values_are_checked_where_the_method_does_not_read_them(kw, match):
    """A misspelt option was ignored where the method does not read it and came back as a ranking."""
    df = pd.DataFrame({"item": "q", "a": ["x", "y"], "b": ["y", "x"], "p_a": [0.7, 0.4]})
    with pytest.raises(ValueError, match=match):
        rank(df, **kw)
