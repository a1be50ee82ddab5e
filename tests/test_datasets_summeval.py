"""The bundled SummEval data: expert scores and soft pairwise judgments from pointwise LLM scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.datasets import summeval

N_SYS = 12  # abstractive systems, the ones with LLM scores


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return bj.datasets.summeval.pairs("coherence", articles=5)


def test_scores_shape_and_range():
    s = bj.datasets.summeval.scores("relevance")
    assert s.shape == (1600, 4)
    assert list(s.columns) == ["item", "candidate", "score", "system_type"]
    assert s["item"].nunique() == 100
    assert s.groupby("item")["candidate"].nunique().eq(16).all()
    assert s["score"].between(1, 5).all()
    assert (s["system_type"] == "abstractive").sum() == 1200
    assert not s.duplicated(["item", "candidate"]).any()


def test_pairs_shape(pairs):
    assert pairs.shape == (5 * N_SYS * (N_SYS - 1), 9)
    assert pairs["item"].nunique() == 5
    per_item = pairs.groupby("item")
    assert per_item["a"].nunique().eq(N_SYS).all()
    assert per_item.size().eq(N_SYS * (N_SYS - 1)).all()
    assert not pairs.duplicated(["item", "a", "b"]).any()
    assert (pairs["a"] != pairs["b"]).all()


def test_pairs_orientation(pairs):
    rev = pairs.merge(pairs, left_on=["item", "a", "b"], right_on=["item", "b", "a"], suffixes=("", "_r"))
    assert len(rev) == len(pairs)
    np.testing.assert_allclose(rev["p_a"] + rev["p_a_r"], 1.0, rtol=0, atol=1e-15)
    flipped = {"a": "b", "b": "a", "tie": "tie"}
    assert (rev["winner"].map(flipped) == rev["winner_r"]).all()
    known = rev["human"].notna()
    assert (rev.loc[known, "human"].map(flipped) == rev.loc[known, "human_r"]).all()
    assert rev["human"].isna().eq(rev["human_r"].isna()).all()


def test_pairs_mapping_and_human(pairs):
    d = pairs["score_a"] - pairs["score_b"]
    np.testing.assert_allclose(pairs["p_a"], 1 / (1 + np.exp(-d)), rtol=0, atol=1e-15)
    assert (pairs.loc[d == 0, "winner"] == "tie").all()
    expert = bj.datasets.summeval.scores("coherence", articles=5).set_index(["item", "candidate"])["score"]
    ha = expert.reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["a"]])).to_numpy()
    hb = expert.reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["b"]])).to_numpy()
    want = np.where(ha > hb, "a", np.where(ha < hb, "b", None))
    assert (pairs["human"].to_numpy() == want).all()


def test_every_row_valid(pairs):
    v = bj.validate_judgments(pairs)
    assert len(v) == len(pairs)
    assert v["p_a"].between(0, 1).all()
    assert (v["winner"].to_numpy() == pairs["winner"].to_numpy()).all()


def test_all_articles_every_judge_and_aspect():
    for aspect in summeval.ASPECTS:
        df = bj.datasets.summeval.pairs(aspect, judge="gpt-4-0314/rts")
        assert df.shape == (100 * N_SYS * (N_SYS - 1), 9)
        assert np.isfinite(df["p_a"]).all()
    assert len(summeval.judges()) == 9


def test_judge_average_and_tau():
    one = bj.datasets.summeval.pairs(articles=2, judge="gpt-4-0314/rts")
    two = bj.datasets.summeval.pairs(articles=2, judge=["gpt-4-0314/rts", "llama-2-13b-chat-hf/rts"], tau=2.0)
    assert (two["judge"] == "gpt-4-0314/rts+llama-2-13b-chat-hf/rts").all()
    other = bj.datasets.summeval.pairs(articles=2, judge="llama-2-13b-chat-hf/rts")
    np.testing.assert_allclose(two["score_a"], (one["score_a"] + other["score_a"]) / 2)
    np.testing.assert_allclose(two["p_a"], 1 / (1 + np.exp(-(two["score_a"] - two["score_b"]) / 2)))


def test_named_articles_rank():
    ids = list(bj.datasets.summeval.scores(articles=3)["item"].unique())
    df = bj.datasets.summeval.pairs("fluency", articles=ids[1:])
    assert list(pd.unique(df["item"])) == ids[1:]
    r = bj.rank(df, method="poe-g", debias=False)
    assert len(r) == 2 * N_SYS


@pytest.mark.parametrize("aspect", ["coh", "Coherence", "overall", ""])
def test_bad_aspect(aspect):
    with pytest.raises(ValueError, match="unknown SummEval aspect"):
        bj.datasets.summeval.pairs(aspect)
    with pytest.raises(ValueError, match="unknown SummEval aspect"):
        bj.datasets.summeval.scores(aspect)


def test_bad_judge_articles_tau():
    with pytest.raises(ValueError, match="unknown SummEval judge"):
        bj.datasets.summeval.pairs(judge="gpt-5/rts")
    with pytest.raises(ValueError, match="unknown SummEval article"):
        bj.datasets.summeval.pairs(articles=["no-such-doc"])
    with pytest.raises(ValueError, match="articles=0"):
        bj.datasets.summeval.scores(articles=0)
    # an empty selection is an error in every loader (it used to return an empty table)
    for load in (bj.datasets.summeval.scores, bj.datasets.summeval.pairs, bj.datasets.summeval.texts):
        with pytest.raises(ValueError, match=r"articles=\[\] selects no SummEval article"):
            load(articles=[])
    with pytest.raises(ValueError, match="tau"):
        bj.datasets.summeval.pairs(tau=0.0)


# ---------------------------------------------------------------- the embedded judge's pairwise file


@pytest.mark.parametrize("aspect", summeval.ASPECTS)
def test_comparator_pairs_cover_16_summaries_in_both_orders(aspect):
    """The seed 004 §5.1 full set: 240 ordered comparisons of 16 summaries per article."""
    df = bj.datasets.summeval.comparator(aspect)
    assert list(df.columns) == ["item", "a", "b", "judge", "p_a", "winner", "human", "order", "label_mass"]
    n_art = df["item"].nunique()
    assert n_art == 10 and len(df) == 240 * n_art
    assert df.groupby("item")["a"].nunique().eq(16).all()
    assert not df.duplicated(["item", "a", "b"]).any()  # every ordered pair once ...
    flipped = df.rename(columns={"a": "b", "b": "a"})[["item", "a", "b"]]
    assert len(df[["item", "a", "b"]].merge(flipped)) == len(df)  # ... and its reverse too
    assert df["p_a"].between(0, 1).all() and df["label_mass"].between(0, 1).all()
    assert df["judge"].nunique() == 1 and "SmolLM2" in df["judge"].iloc[0]
    # a valid judgments table as it is, whose winner is the one the schema derives from p_a
    derived = bj.validate_judgments(df.drop(columns="winner"))["winner"]
    np.testing.assert_array_equal(bj.validate_judgments(df)["winner"], derived)


def test_comparator_pairs_human_agrees_with_soft_pairs():
    """Two derivations of the expert preference: on the 12 abstractive systems, both loaders
    label every ordered pair alike (ties unlabelled); the extractive ones follow the same rule."""
    df = bj.datasets.summeval.comparator("consistency", articles=3)
    ref = bj.datasets.summeval.pairs("consistency", articles=list(df["item"].unique()))
    both = df.merge(ref, on=["item", "a", "b"], suffixes=("", "_ref"), validate="one_to_one")
    assert len(both) == 3 * 132
    assert both["human"].equals(both["human_ref"])
    assert both["human"].isna().any()  # expert ties (frequent for consistency) stay unlabelled
    assert set(df["human"].dropna()) == {"a", "b"}


def test_comparator_pairs_carry_the_judges_position_bias():
    """Real pairwise probabilities: unlike summeval.pairs, p_ab + p_ba != 1."""
    df = bj.datasets.summeval.comparator("coherence")
    both = df.merge(df, left_on=["item", "a", "b"], right_on=["item", "b", "a"], suffixes=("", "_swap"))
    assert np.abs(both["p_a"] + both["p_a_swap"] - 1).mean() > 0.05
    assert (df["p_a"] > 0.5).mean() > 0.9  # SmolLM2-135M prefers the summary shown first


def test_comparator_pairs_bad_input():
    with pytest.raises(ValueError, match="unknown SummEval aspect"):
        bj.datasets.summeval.comparator("style")
    outside = bj.datasets.summeval.scores("coherence")["item"].unique()[50]
    with pytest.raises(ValueError, match="unknown SummEval comparator article"):
        bj.datasets.summeval.comparator("coherence", articles=[outside])
    with pytest.raises(ValueError, match="articles=11"):
        bj.datasets.summeval.comparator("coherence", articles=11)
