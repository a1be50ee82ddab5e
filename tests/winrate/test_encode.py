import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj


def test_orientation_and_swap_and_sum(tiny):
    d = bj.encode_win_rate(tiny, swap="sum", ties="skip")
    assert d.pairs == [("x", "y")] and d.judges == ["j1", "j2"]
    assert list(d.unit_item) == ["1", "2", "3", "4"]
    # j1: item 1: x (a) then x (b, shown second) -> G0 twice -> G0; item 2: x then y -> tie
    # item 3: (y, x) winner b -> x -> G0; item 4: (x, y) winner b -> y -> G1
    np.testing.assert_array_equal(d.n_first[:, 0], [1, 0, 1, 0])
    np.testing.assert_array_equal(d.n_second[:, 0], [0, 0, 0, 1])
    np.testing.assert_array_equal(d.n_tie[:, 0], [0, 1, 0, 0])
    # j2 judged items 1 (x) and 2 (y)
    np.testing.assert_array_equal(d.n_first[:, 1], [1, 0, 0, 0])
    np.testing.assert_array_equal(d.n_second[:, 1], [0, 1, 0, 0])


def test_swap_none_counts_every_row(tiny):
    d = bj.encode_win_rate(tiny, swap="none", ties="skip")
    np.testing.assert_array_equal(d.n_first[:, 0], [2, 1, 1, 0])
    np.testing.assert_array_equal(d.n_second[:, 0], [0, 1, 0, 1])
    assert d.n_first.sum() + d.n_second.sum() + d.n_tie.sum() == len(tiny)


def test_swap_split_makes_one_judge_per_order(tiny):
    d = bj.encode_win_rate(tiny, swap="split", ties="skip")
    assert d.judges == ["j1 [G0 in A]", "j1 [G0 in B]", "j2 [G0 in A]"]
    assert d.n_first.sum() + d.n_second.sum() == len(tiny)


def test_random_ties_are_seeded_and_counted(tiny):
    d1 = bj.encode_win_rate(tiny, swap="sum", ties="random", seed=3)
    d2 = bj.encode_win_rate(tiny, swap="sum", ties="random", seed=3)
    assert d1.n_random_ties == 1 and d1.n_tie.sum() == 0
    np.testing.assert_array_equal(d1.n_first, d2.n_first)
    assert d1.n_first[1, 0] + d1.n_second[1, 0] == 1


def test_systems_order_flips_orientation(tiny):
    d = bj.encode_win_rate(tiny, systems=["y", "x"], swap="sum", ties="skip")
    assert d.pairs == [("y", "x")]
    np.testing.assert_array_equal(d.n_second[:, 0], [1, 0, 1, 0])
    np.testing.assert_allclose(d.k_observed()[0], [1 / 3, 0.5])


def test_three_systems_give_three_pairs():
    df = bj.simulate_win_rate(30, p=0.6, q0=[0.8], systems=("A", "B"), seed=1)
    df2 = bj.simulate_win_rate(30, p=0.6, q0=[0.8], systems=("A", "C"), seed=2)
    df3 = bj.simulate_win_rate(30, p=0.6, q0=[0.8], systems=("C", "B"), seed=3)
    d = bj.encode_win_rate(pd.concat([df, df2, df3]), swap="none")
    assert d.pairs == [("A", "B"), ("A", "C"), ("B", "C")]
    assert np.bincount(d.unit_pair).tolist() == [30, 30, 30]
    # C vs B was simulated with C as G0: in pair (B, C) it is the second system
    lab = d.label[d.unit_pair == 2]
    assert lab.mean() == pytest.approx(1 - np.mean(df3.attrs["truth"]["h"]))


def test_human_column_oriented(tiny):
    df = tiny.assign(human=["a", "b", "b", "a", "b", "a", "a", "b"])  # x, x, y, y, x, x
    d = bj.encode_win_rate(df)
    np.testing.assert_array_equal(d.label, [1, 0, 1, 1])


def test_contradicting_human_labels(tiny):
    df = tiny.assign(human=["a", "a", None, None, None, None, None, None])  # item 1: x then y
    with pytest.raises(ValueError, match=r"contradicting human labels for item\(s\) \['1'\]"):
        bj.encode_win_rate(df)


def test_external_human_labels(tiny):
    h = pd.DataFrame({"item": [1, 4], "a": ["y", "x"], "b": ["x", "y"], "human": ["b", "b"]})
    d = bj.encode_win_rate(tiny, human=h)
    np.testing.assert_array_equal(d.label, [1, -1, -1, 0])


def test_human_labels_for_items_not_in_table(tiny):
    h = pd.DataFrame({"item": [1, 99], "a": ["x", "x"], "b": ["y", "y"], "human": ["a", "a"]})
    with pytest.raises(ValueError, match=r"comparison\(s\) .* not have: \[\('99', 'x', 'y'\)\]"):
        bj.encode_win_rate(tiny, human=h)


def test_human_label_ids_are_read_as_the_tables(tiny):
    """Item ids as floats (a merge, a missing value) name the same items as the table's integers."""
    h = pd.DataFrame({"item": [1.0, 4.0], "a": ["y", "x"], "b": ["x", "y"], "human": ["b", "b"]})
    np.testing.assert_array_equal(bj.encode_win_rate(tiny, human=h).label, [1, -1, -1, 0])


def test_judges_argument_checked(tiny):
    with pytest.raises(ValueError, match="an empty list chooses no judge"):
        bj.encode_win_rate(tiny, judges=[])
    with pytest.raises(ValueError, match=r"\['j1'\] named more than once"):
        bj.encode_win_rate(tiny, judges=["j1", "j1"])
    assert bj.encode_win_rate(tiny, judges="j1").judges == ["j1"]  # one name, not its letters


def test_judge_that_never_judged(tiny):
    with pytest.raises(ValueError, match=r"\['j9'\] never judged"):
        bj.encode_win_rate(tiny, judges=["j1", "j9"])


def test_judge_with_only_ties():
    df = pd.DataFrame({"item": [1, 2, 1], "a": ["x", "x", "x"], "b": ["y", "y", "y"],
                       "judge": ["j1", "j1", "j2"], "winner": ["a", "b", "tie"]})
    with pytest.raises(ValueError, match=r"\['j2'\] never gave a verdict"):
        bj.encode_win_rate(df, ties="skip")


def test_unknown_system_in_systems(tiny):
    with pytest.raises(ValueError, match=r"not in systems"):
        bj.encode_win_rate(tiny, systems=["x", "z"])
    with pytest.raises(ValueError, match=r"\['z'\] never appear"):
        bj.encode_win_rate(tiny, systems=["x", "y", "z"])


def test_bad_modes(tiny):
    with pytest.raises(ValueError, match="swap must be"):
        bj.encode_win_rate(tiny, swap="both")
    with pytest.raises(ValueError, match="ties must be"):
        bj.encode_win_rate(tiny, ties="coin")


def test_pair_without_verdicts_is_an_error():
    df = pd.DataFrame({"item": [1, 2, 3], "a": ["x", "x", "x"], "b": ["y", "y", "z"],
                       "judge": ["j1", "j1", "j2"], "winner": ["a", "b", "a"]})
    with pytest.raises(ValueError, match=r"pair\(s\) \['x vs z'\] have no verdict"):
        bj.encode_win_rate(df, judges=["j1"])


def test_swap_and_sum_sums_probabilities():
    """Seed 003 App. B sums the judge's scores: 0.95 for x shown first, 0.45 for y shown first."""
    df = pd.DataFrame({"item": [1, 1], "a": ["x", "y"], "b": ["y", "x"], "p_a": [0.95, 0.55]})
    d = bj.encode_win_rate(df, swap="sum", ties="skip")
    np.testing.assert_array_equal(d.n_first, [[1.0]])


def test_tie_flips_do_not_depend_on_row_order():
    df = bj.simulate_win_rate(200, p=0.5, q0=[0.6, 0.6], swap=True, seed=4)
    df.loc[df.index % 3 == 0, "winner"] = "tie"
    a = bj.encode_win_rate(df, swap="none", seed=1)
    b = bj.encode_win_rate(df.sample(frac=1, random_state=0), swap="none", seed=1)
    np.testing.assert_array_equal(a.n_first, b.n_first)


def test_pair_labels_stay_distinct_when_names_hold_vs():
    rows = [{"item": i, "a": a, "b": b, "winner": "a" if i % 3 else "b"}
            for i in range(12) for a, b in [("x vs y", "z"), ("x", "y vs z")]]
    labels = bj.encode_win_rate(pd.DataFrame(rows)).pair_labels
    assert len(set(labels)) == 2 and "'x vs y' vs 'z'" in labels
    assert bj.encode_win_rate(pd.DataFrame(rows[::2])).pair_labels == ["x vs y vs z"]  # no clash: unquoted


def test_a_judge_whose_orders_cancel_is_named_as_such():
    """A judge whose two orders disagree on every item was refused as one that "never gave a verdict:
    every one of their rows is a tie or missing", for a table with no tie."""
    rows = [dict(item=i, a=a, b=b, judge="j1", winner=w)
            for i, a, b, w in [(0, "X", "Y", "a"), (0, "Y", "X", "a"), (1, "X", "Y", "b"), (1, "Y", "X", "b")]]
    rows += [dict(item=i, a=a, b=b, judge="j2", winner="a" if a == "X" else "b")
             for i in (0, 1) for a, b in (("X", "Y"), ("Y", "X"))]
    with pytest.raises(ValueError, match=r"\['j1'\] gave verdicts, but on every item its two presentation orders "
                                         r"disagree.*swap='none'"):
        bj.win_rate(pd.DataFrame(rows))
