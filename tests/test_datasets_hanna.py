"""The bundled HANNA data: human mean ratings, soft pairwise judgments from pointwise LLM scores, texts."""

from __future__ import annotations

import csv
from collections import defaultdict
from functools import cache

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.datasets import _files, hanna

N_SYS = 11  # stories per prompt, one per system
N_PROMPTS = 96


@cache
def _raw(file: str) -> list[dict[str, str]]:
    """A raw CSV file read with the csv module (independent of the loaders' pandas path)."""
    with (_files.root() / "hanna" / file).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return bj.datasets.hanna.pairs("coherence", prompts=5)


def test_scores_shape_and_values():
    s = bj.datasets.hanna.scores("relevance")
    assert s.shape == (N_SYS * N_PROMPTS, 4)
    assert list(s.columns) == ["item", "candidate", "score", "story_id"]
    assert s["item"].nunique() == N_PROMPTS
    assert s.groupby("item")["candidate"].nunique().eq(N_SYS).all()
    assert hanna.CRITERIA == ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")
    for c in hanna.CRITERIA:
        sc = bj.datasets.hanna.scores(c)
        assert sc.shape == s.shape and sc["score"].between(1, 5).all()
        assert (sc["story_id"].to_numpy() == s["story_id"].to_numpy()).all()
    assert set(s["candidate"]) == set(hanna.SYSTEMS)
    assert s["score"].between(1, 5).all()
    assert not s.duplicated(["item", "candidate"]).any()
    assert list(pd.unique(s["item"]))[:3] == ["0", "1", "2"]  # prompt ids in numeric order
    # story_id = 96 * system row + prompt id (the source's layout)
    sys_row = s["candidate"].map({m: i for i, m in enumerate(hanna.SYSTEMS)})
    assert (s["story_id"] == 96 * sys_row + s["item"].astype(int)).all()


def test_scores_equal_raw_rater_means():
    ratings = defaultdict(list)
    for r in _raw("human_ratings.csv"):
        if r["criterion"] == "coherence":
            ratings[int(r["story_id"])].append(int(r["score"]))
    s = bj.datasets.hanna.scores("coherence").set_index("story_id")["score"]
    assert len(ratings) == len(s) == 1056
    assert all(len(v) == 3 for v in ratings.values())
    np.testing.assert_allclose(s.sort_index().to_numpy(), [np.mean(ratings[i]) for i in sorted(ratings)], rtol=0, atol=1e-15)
    # a few rows spelled out: story 0 (prompt 0, Human) rated 4, 5, 2; story 480 (GPT-2) 4, 4, 4
    assert s[0] == pytest.approx(11 / 3) and s[480] == 4.0 and s[105] == pytest.approx(8 / 3)


def test_pairs_shape(pairs):
    assert pairs.shape == (5 * N_SYS * (N_SYS - 1), 9)
    assert list(pairs.columns) == ["item", "a", "b", "judge", "p_a", "winner", "human", "score_a", "score_b"]
    assert list(pd.unique(pairs["item"])) == ["0", "1", "2", "3", "4"]
    per_item = pairs.groupby("item")
    assert per_item["a"].nunique().eq(N_SYS).all()
    assert per_item.size().eq(N_SYS * (N_SYS - 1)).all()
    assert not pairs.duplicated(["item", "a", "b"]).any()
    assert (pairs["a"] != pairs["b"]).all()
    assert (pairs["judge"] == "ChatGPT/1").all()
    assert pairs.attrs == {"n_failed_stories": 0, "failed_stories": [], "n_dropped_pairs": 0}


def test_pairs_exact_rows_against_raw_csv(pairs):
    llm = {int(r["story_id"]): float(r["mean_score"]) for r in _raw("llm_ratings.csv")
           if r["llm"] == "ChatGPT" and r["eval_prompt"] == "1" and r["criterion"] == "coherence"}
    # prompt 0: Human (story 0, LLM 2.667, humans 11/3) vs GPT-2 (story 480, LLM 2.0, humans 4.0)
    row = pairs[(pairs["item"] == "0") & (pairs["a"] == "Human") & (pairs["b"] == "GPT-2")].iloc[0]
    assert row["score_a"] == llm[0] == pytest.approx(8 / 3) and row["score_b"] == llm[480] == 2.0
    assert row["p_a"] == pytest.approx(1 / (1 + np.exp(-(8 / 3 - 2.0))), rel=0, abs=1e-15)
    assert row["winner"] == "a" and row["human"] == "b"  # the LLM prefers Human, the raters GPT-2
    # prompt 9: BertGeneration (story 105, LLM 5/3, humans 8/3) vs Human (story 9)
    one = bj.datasets.hanna.pairs("coherence", prompts=["9"])
    row = one[(one["a"] == "BertGeneration") & (one["b"] == "Human")].iloc[0]
    assert row["score_a"] == llm[105] and row["score_b"] == llm[9]
    # every score in the table is the raw mean_score of its story
    sid = bj.datasets.hanna.scores("coherence", prompts=5).set_index(["item", "candidate"])["story_id"]
    a_ids = sid.reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["a"]])).to_numpy()
    assert (pairs["score_a"].to_numpy() == np.array([llm[i] for i in a_ids])).all()


def test_pairs_mapping_orientation_and_human(pairs):
    d = pairs["score_a"] - pairs["score_b"]
    np.testing.assert_allclose(pairs["p_a"], 1 / (1 + np.exp(-d)), rtol=0, atol=1e-15)
    assert (pairs.loc[d == 0, "winner"] == "tie").all() and (pairs.loc[d == 0, "p_a"] == 0.5).all()
    rev = pairs.merge(pairs, left_on=["item", "a", "b"], right_on=["item", "b", "a"], suffixes=("", "_r"))
    assert len(rev) == len(pairs)
    np.testing.assert_allclose(rev["p_a"] + rev["p_a_r"], 1.0, rtol=0, atol=1e-15)
    human = bj.datasets.hanna.scores("coherence", prompts=5).set_index(["item", "candidate"])["score"]
    ha = human.reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["a"]])).to_numpy()
    hb = human.reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["b"]])).to_numpy()
    want = np.where(ha > hb, "a", np.where(ha < hb, "b", None))
    assert (pairs["human"].to_numpy() == want).all()
    v = bj.validate_judgments(pairs)
    assert len(v) == len(pairs) and (v["winner"].to_numpy() == pairs["winner"].to_numpy()).all()


def test_judges_average_and_tau():
    assert len(hanna.judges()) == 20
    assert "ChatGPT/1" in hanna.judges() and "Mistral-7B/4" in hanna.judges()
    one = bj.datasets.hanna.pairs("surprise", judge="Beluga-13B/1", prompts=2)
    other = bj.datasets.hanna.pairs("surprise", judge="ChatGPT/2", prompts=2)
    two = bj.datasets.hanna.pairs("surprise", judge=["Beluga-13B/1", "ChatGPT/2"], prompts=2, tau=2.0)
    assert (two["judge"] == "Beluga-13B/1+ChatGPT/2").all()
    np.testing.assert_allclose(two["score_a"], (one["score_a"] + other["score_a"]) / 2)
    np.testing.assert_allclose(two["p_a"], 1 / (1 + np.exp(-(two["score_a"] - two["score_b"]) / 2)))


def test_failed_answers_are_counted_not_silently_dropped():
    # ChatGPT/1 failed (mean_score < 1) on 3 empathy stories: 761, 983, 1003
    df = bj.datasets.hanna.pairs("empathy")
    assert df.attrs["n_failed_stories"] == 3
    assert sorted(f["story_id"] for f in df.attrs["failed_stories"]) == [761, 983, 1003]
    assert df.attrs["n_dropped_pairs"] == 3 * 2 * (N_SYS - 1)
    assert len(df) == N_PROMPTS * N_SYS * (N_SYS - 1) - 60
    sizes = df.groupby("item").size()
    assert sorted(sizes[sizes < 110].index) == ["23", "43", "89"]
    assert (sizes[sizes < 110] == 90).all()
    assert not ((df["item"] == "89") & ((df["a"] == "XLNet") | (df["b"] == "XLNet"))).any()
    assert (df[["score_a", "score_b"]] >= 1).all().all()
    with pytest.raises(ValueError, match="3 HANNA stories with a failed LLM answer"):
        bj.datasets.hanna.pairs("empathy", on_failure="raise")
    # the raw file agrees: values below 1 for every setting together number 1051
    assert sum(float(r["mean_score"]) < 1 for r in _raw("llm_ratings.csv")) == 1051
    many = bj.datasets.hanna.pairs("coherence", judge="Mistral-7B/1")
    assert many.attrs["n_failed_stories"] == 28
    assert len(many) + many.attrs["n_dropped_pairs"] == N_PROMPTS * N_SYS * (N_SYS - 1)


def test_texts():
    texts, contexts = bj.datasets.hanna.texts(prompts=[3, "0"])
    assert list(contexts) == ["3", "0"]
    assert texts.shape == (2 * N_SYS, 3) and list(texts.columns) == ["item", "candidate", "text"]
    raw = {int(r["story_id"]): r for r in _raw("stories.csv")}
    human0 = texts[(texts["item"] == "0") & (texts["candidate"] == "Human")]["text"].item()
    assert human0 == raw[0]["story"]
    assert contexts["0"] == raw[0]["prompt"] and contexts["3"] == raw[3]["prompt"]
    sub, ctx = bj.datasets.hanna.texts(prompts=1, systems=["GPT-2", "Human"])
    assert sorted(sub["candidate"]) == ["GPT-2", "Human"] and list(ctx) == ["0"]
    allt, allc = bj.datasets.hanna.texts()
    assert len(allt) == 1056 and len(allc) == N_PROMPTS


def test_rank_a_prompt():
    df = bj.datasets.hanna.pairs("complexity", prompts=["7"])
    r = bj.rank(df, method="poe-bt", debias=False)
    assert len(r) == N_SYS and set(r["candidate"]) == set(hanna.SYSTEMS)


@pytest.mark.parametrize("criterion", ["coh", "Coherence", "fluency", ""])
def test_bad_criterion(criterion):
    with pytest.raises(ValueError, match="unknown HANNA criterion"):
        bj.datasets.hanna.scores(criterion)
    with pytest.raises(ValueError, match="unknown HANNA criterion"):
        bj.datasets.hanna.pairs(criterion)


@pytest.mark.parametrize("judge", ["ChatGPT", "ChatGPT/5", "gpt-3.5-turbo-0301/rts", []])
def test_bad_judge(judge):
    with pytest.raises(ValueError, match="unknown HANNA judge"):
        bj.datasets.hanna.pairs(judge=judge)


def test_bad_prompts_tau_failure_systems():
    with pytest.raises(ValueError, match="unknown HANNA prompt"):
        bj.datasets.hanna.pairs(prompts=["96"])
    with pytest.raises(ValueError, match="unknown HANNA prompt"):
        bj.datasets.hanna.scores(prompts=["dm-test-1"])
    with pytest.raises(ValueError, match=r"prompts=\[\] selects no HANNA prompt"):
        bj.datasets.hanna.texts(prompts=[])
    with pytest.raises(ValueError, match="prompts=0"):
        bj.datasets.hanna.scores(prompts=0)
    with pytest.raises(ValueError, match="prompts=97"):
        bj.datasets.hanna.pairs(prompts=97)
    with pytest.raises(ValueError, match="tau"):
        bj.datasets.hanna.pairs(tau=-1.0)
    with pytest.raises(ValueError, match="on_failure"):
        bj.datasets.hanna.pairs(on_failure="ignore")
    with pytest.raises(ValueError, match="unknown HANNA system"):
        bj.datasets.hanna.texts(prompts=1, systems=["GPT-3"])
