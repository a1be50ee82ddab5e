"""The bundled LLMBar family (``bj.datasets.llmbar``) and the ``bj.datasets`` namespace."""

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj

SIZES = {
    "llmbar_natural": (100, 65),
    "llmbar_adversarial_gptinst": (92, 65),
    "llmbar_adversarial_gptout": (47, 65),
    "llmbar_adversarial_manual": (46, 65),
    "llmbar_adversarial_neighbor": (134, 65),
    "mtbench": (200, 8),
    "llmeval2": (200, 8),
}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_every_bundled_set_is_a_valid_judgments_table(name):
    df = bj.load_dataset(name)
    n_items, n_judges = SIZES[name]
    assert df["item"].nunique() == n_items and df["judge"].nunique() == n_judges
    assert len(df) == n_items * n_judges * 2  # every row kept: both orders, ties included
    v = bj.validate_judgments(df)
    assert v["human"].notna().all()


def test_orientation_matches_the_source_items():
    df = bj.load_dataset("mtbench")
    items = bj.load_items("mtbench").set_index("item")
    # human: the label in the row's order points at the output the item says humans preferred
    preferred = np.where(df["human"] == "a", df["a"], df["b"])
    expected = "output_" + df["item"].map(items["human_label"]).astype(str)
    assert (preferred == expected).all()


def test_accuracies_reproduce_the_authors_statistics():
    """correct_False / correct_True of LLMBar's statistics.json: accuracy of the un-swapped and
    swapped queries, recomputed from our table."""
    from bayes_judge.datasets._files import read_csv

    df = bj.load_dataset("mtbench")
    stats = read_csv("llmbar/mtbench/evaluator_statistics.csv").set_index("evaluator")
    for judge, g in df.groupby("judge"):
        for swap, col in ((0, "correct_False"), (1, "correct_True")):
            r = g[g["swap"] == swap]
            correct = int((r["winner"] == r["human"]).sum())
            assert stats.loc[judge, col].startswith(f"{correct} / 200"), (judge, swap)


def test_union_llmbar():
    df = bj.load_dataset("llmbar")
    assert df["item"].nunique() == 419
    assert df["item"].str.startswith(("natural:", "adversarial_")).all()


def test_assign_generators_gives_exact_true_win_rate():
    df = bj.load_dataset("mtbench")
    g = bj.assign_generators(df, share=0.8, seed=3)
    assert g.attrs["p_true"] == 0.8
    d = bj.encode_win_rate(g)
    assert d.pairs == [("G0", "G1")] and (d.label == 1).mean() == 0.8
    # verdicts unchanged: the judge still picks the same output in every row
    picked = np.where(g["winner"] == "a", g["cand_a"], np.where(g["winner"] == "b", g["cand_b"], "tie"))
    picked_src = np.where(df["winner"] == "a", df["a"], np.where(df["winner"] == "b", df["b"], "tie"))
    assert (picked == picked_src).all()
    g2 = bj.assign_generators(df, share=0.8, seed=3)
    pd.testing.assert_frame_equal(g, g2)


def test_assign_generators_needs_labels():
    df = bj.load_dataset("mtbench").assign(human=None)
    with pytest.raises(ValueError, match="human label on every row"):
        bj.assign_generators(df)


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown dataset 'hanna'"):
        bj.load_dataset("hanna")


def test_the_namespace_and_its_top_level_aliases():
    ds = bj.datasets
    assert bj.load_dataset is ds.load is ds.llmbar.load
    assert bj.load_items is ds.items and bj.assign_generators is ds.assign_generators
    assert ds.names() == sorted(SIZES) + ["llmbar"]
    for source, names in ((ds.summeval, ("scores", "pairs", "comparator", "texts", "judges")),
                          (ds.hanna, ("scores", "pairs", "texts", "judges"))):
        assert all(callable(getattr(source, n)) for n in names), source.__name__
    # the per-source loaders live only in the namespace (load_judgments reads the user's own files)
    assert {n for n in bj.__all__ if n.startswith(("load_", "list_"))} == {
        "load_dataset", "load_items", "load_run", "load_judgments"}


def test_aliases_name_the_same_set():
    pd.testing.assert_frame_equal(bj.load_dataset("llmbar_mtbench"), bj.load_dataset("mtbench"))
    pd.testing.assert_frame_equal(bj.load_items("natural"), bj.load_items("llmbar_natural"))


@pytest.mark.parametrize("share", [1.5, -0.2, float("nan"), "0.8"])
def test_assign_generators_refuses_a_share_outside_zero_one(share):
    """share=-0.2 recorded p_true -0.18 while 82% of the items went to G0 (perm[:-2])."""
    df = bj.load_dataset("mtbench")
    with pytest.raises(ValueError, match=r"share is the true win rate of 'G0', a number in \[0, 1\]"):
        bj.assign_generators(df, share=share)
    with pytest.raises(ValueError, match="two different names"):
        bj.assign_generators(df, systems=("X", "X"))
