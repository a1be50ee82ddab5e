import numpy as np
import pandas as pd
import pytest

from bayes_judge.ranking import encode_ranking, rank


def test_global_index_is_item_then_sorted_candidate():
    df = pd.DataFrame(
        {"item": ["q2", "q1", "q1"], "a": ["y", "b", "a"], "b": ["x", "a", "c"], "p_a": [0.3, 0.6, 0.9]}
    )
    d = encode_ranking(df)
    assert d.items == ["q1", "q2"]
    assert d.candidates.tolist() == ["a", "b", "c", "x", "y"]
    assert d.offsets.tolist() == [0, 3, 5] and d.cand_item.tolist() == [0, 0, 0, 1, 1]
    assert d.i.tolist() == [4, 1, 0] and d.j.tolist() == [3, 0, 2]
    assert d.comp_item.tolist() == [1, 0, 0]


def test_soft_outcome_from_p_a_else_from_winner():
    df = pd.DataFrame(
        {
            "item": 1,
            "a": ["x", "y", "x", "z"],
            "b": ["y", "z", "z", "x"],
            "p_a": [0.8, np.nan, np.nan, 0.5],
            "winner": ["a", "b", "tie", "tie"],
        }
    )
    d = encode_ranking(df)
    np.testing.assert_array_equal(d.p, [0.8, 0.0, 0.5, 0.5])
    np.testing.assert_array_equal(d.y, [1.0, 0.0, 0.5, 0.5])
    np.testing.assert_array_equal(d.p_given, [True, False, False, True])


def test_integer_items_are_ordered_numerically():
    df = pd.DataFrame({"item": [10, 2, 10, 2], "a": ["x", "x", "y", "y"], "b": ["y", "y", "x", "x"], "winner": "a"})
    assert encode_ranking(df).items == ["2", "10"]


def test_disconnected_graph_error_names_item_and_components():
    df = pd.DataFrame({"item": "art7", "a": ["x", "z"], "b": ["y", "w"], "p_a": [0.6, 0.4]})
    with pytest.raises(ValueError, match="not connect") as err:
        encode_ranking(df)
    msg = str(err.value)
    assert "'art7'" in msg and "2 components" in msg
    assert "{'x', 'y'}" in msg and "{'w', 'z'}" in msg


def test_listed_candidate_never_compared_is_its_own_component():
    df = pd.DataFrame({"item": 1, "a": ["x"], "b": ["y"], "p_a": [0.6]})
    with pytest.raises(ValueError, match=r"\{'z'\}"):
        encode_ranking(df, candidates=["x", "y", "z"])


def test_fewer_than_two_candidates_is_an_error():
    df = pd.DataFrame({"item": 1, "a": ["x"], "b": ["y"], "p_a": [0.6]})
    with pytest.raises(ValueError, match="at least 2 candidates"):
        encode_ranking(df, candidates=["x"])
    with pytest.raises(ValueError, match="at least 2 candidates"):
        rank(df, candidates={"1": []})


def test_unlisted_candidate_in_a_row_is_an_error_not_dropped():
    df = pd.DataFrame({"item": 1, "a": ["x", "x"], "b": ["y", "z"], "p_a": [0.6, 0.7]})
    with pytest.raises(ValueError, match=r"row\(s\) \[1\]"):
        encode_ranking(df, candidates=["x", "y"])


def test_self_comparison_is_rejected():
    df = pd.DataFrame({"item": 1, "a": ["x", "y"], "b": ["x", "x"], "p_a": [0.6, 0.7]})
    with pytest.raises(ValueError, match="compared with itself"):
        rank(df)


def test_is_symmetric_reads_both_orders_per_judge():
    df = pd.DataFrame({"item": 1, "a": ["x", "y"], "b": ["y", "x"], "p_a": [0.6, 0.3]})
    assert encode_ranking(df).is_symmetric()
    assert not encode_ranking(df.iloc[:1]).is_symmetric()
