"""The one reader of outcomes (bayes_judge.outcomes) and the encoders that read through it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_judge.leaderboard.encode import encode_leaderboard
from bayes_judge.outcomes import check_connected, read_label_table, read_outcomes
from bayes_judge.ranking.encode import encode_ranking
from bayes_judge.winrate.encode import encode_win_rate


def test_a_swapped_row_is_turned_to_the_canonical_orientation():
    df = pd.DataFrame({"item": [1, 1], "a": ["x", "y"], "b": ["y", "x"], "winner": ["a", "a"],
                       "human": ["b", "a"], "judge": ["j", "j"]})
    o = read_outcomes(df)
    assert o.names == ["x", "y"]
    assert o.first.tolist() == [0, 0] and o.second.tolist() == [1, 1]
    assert o.a_first.tolist() == [True, False]
    assert o.outcome.tolist() == [1, -1]  # row 1: y (shown first) won, so the canonical first x lost
    assert o.human.tolist() == [-1, -1]  # the human preferred y (second) in both rows
    # position A's view is the table as given
    assert o.a.tolist() == [0, 1] and o.b.tolist() == [1, 0]
    assert o.outcome_a.tolist() == [1, 1] and o.human_a.tolist() == [-1, 1]
    assert o.pair.tolist() == [1, 1]


def test_human_labels_are_oriented_with_the_row():
    df = pd.DataFrame({"item": [1, 2, 3], "a": ["x", "y", "y"], "b": ["y", "x", "x"], "winner": "a",
                       "human": ["a", "a", None]})
    o = read_outcomes(df)
    # row 0: human prefers x (first); row 1: human prefers y (second); row 2: no label
    assert o.human.tolist() == [1, -1, 0]


def test_a_tie_is_zero_and_scores_one_half():
    df = pd.DataFrame({"item": [1, 2], "a": ["y", "x"], "b": ["x", "y"], "winner": ["tie", "b"]})
    o = read_outcomes(df)
    assert o.outcome.tolist() == [0, -1]
    assert o.outcome_a.tolist() == [0, -1]
    np.testing.assert_array_equal(o.score, [0.5, 0.0])
    assert not o.p_given.any() and np.isnan(o.p).all()


def test_soft_probability_is_flipped_with_the_orientation():
    df = pd.DataFrame({"item": [1, 2, 3], "a": ["y", "x", "y"], "b": ["x", "y", "x"],
                       "p_a": [0.8, 0.3, np.nan], "winner": ["a", "b", "b"]})
    o = read_outcomes(df)
    np.testing.assert_allclose(o.p[:2], [0.2, 0.3])  # P(x better): 1 - 0.8 on the swapped row
    assert np.isnan(o.p[2])
    np.testing.assert_array_equal(o.p_a[:2], [0.8, 0.3])  # the column as given, bit for bit
    np.testing.assert_array_equal(o.p_given, [True, True, False])
    np.testing.assert_allclose(o.score, [0.2, 0.3, 1.0])  # row 2: y shown first lost, so x won
    np.testing.assert_array_equal(o.score_a, [0.8, 0.3, 0.0])
    assert o.outcome.tolist() == [-1, -1, 1]


def test_a_given_order_orients_the_pairs():
    df = pd.DataFrame({"item": [1, 2], "a": ["x", "y"], "b": ["y", "x"], "p_a": [0.9, 0.4]})
    o = read_outcomes(df, names=["y", "x", "w"])
    assert o.names == ["y", "x", "w"]
    assert o.a_first.tolist() == [False, True]
    assert o.outcome.tolist() == [-1, -1]
    np.testing.assert_allclose(o.p, [0.1, 0.4])
    back = o.reordered(["x", "y"])
    assert back.a_first.tolist() == [True, False]
    np.testing.assert_array_equal(back.p_a, [0.9, 0.4])
    with pytest.raises(ValueError, match=r"the table compares \['y'\], which are not listed"):
        read_outcomes(df, names=["x", "w"])
    with pytest.raises(ValueError, match="duplicate names"):
        read_outcomes(df, names=["x", "y", "x"])


def test_a_bad_winner_value_is_named():
    df = pd.DataFrame({"item": [1, 2, 3], "a": "x", "b": "y", "winner": ["a", "left", "b"]})
    with pytest.raises(ValueError, match=r"column 'winner': unknown value\(s\) \['left'\] in row\(s\) 1"):
        read_outcomes(df)


def test_an_out_of_range_probability_is_named():
    df = pd.DataFrame({"item": [1, 2], "a": "x", "b": "y", "p_a": [0.5, 1.5]})
    with pytest.raises(ValueError, match=r"column 'p_a': probability outside \[0, 1\] in row\(s\) 1"):
        read_outcomes(df)


def test_check_connected_names_the_components():
    names = np.array(["x", "y", "z", "w"], dtype=object)
    check_connected(4, np.array([0, 1, 2]), np.array([1, 2, 3]), names=names)  # a path: connected
    with pytest.raises(ValueError, match=r"2 groups that are never compared with each other: \['x', 'y'\]; \['z', 'w'\]"):
        check_connected(4, np.array([0, 2]), np.array([1, 3]), names=names)
    # two items, each connected on its own: fine; one item split: named
    group = np.array([0, 0, 1, 1])
    check_connected(4, np.array([0, 2]), np.array([1, 3]), names=names, group=group, groups=["i1", "i2"])
    with pytest.raises(ValueError, match=r"item 'i1': 2 components \{'x'\} and \{'y'\}"):
        check_connected(4, np.array([2]), np.array([3]), names=names, group=group, groups=["i1", "i2"])
    with pytest.raises(ValueError, match="bt: .*not strongly connected"):
        check_connected(4, np.array([0, 2]), np.array([1, 3]), names=names, group=group,
                        groups=["i1", "i2"], directed=True, what="bt: ")


def _table(seed: int) -> pd.DataFrame:
    """Three systems judged on every pair of every item, both orders, two judges, ties and probabilities."""
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(6):
        for a, b in [("x", "y"), ("y", "x"), ("y", "z"), ("z", "x")]:
            for judge in ("j1", "j2"):
                rows.append({"item": str(item), "a": a, "b": b, "judge": judge})
    df = pd.DataFrame(rows)
    df["winner"] = rng.choice(["a", "b", "tie"], len(df), p=[0.5, 0.35, 0.15])
    p = np.where(df["winner"] == "a", 0.75, np.where(df["winner"] == "b", 0.2, 0.5))
    p[df["judge"].to_numpy() == "j2"] = np.nan  # judge 2 gives hard verdicts only
    df["p_a"] = p
    lo_wins = {(i, s, t): bool(rng.random() < 0.5) for i in df["item"].unique() for s, t in
               [("x", "y"), ("y", "z"), ("x", "z")]}
    lo = np.where(df["a"] < df["b"], df["a"], df["b"])
    hi = np.where(df["a"] < df["b"], df["b"], df["a"])
    lw = np.array([lo_wins[k] for k in zip(df["item"], lo, hi, strict=True)])
    df["human"] = np.where(lw == (df["a"].to_numpy() == lo), "a", "b")
    df.loc[df["item"].isin(["4", "5"]), "human"] = None
    return df


def _by_pair(first: np.ndarray, second: np.ndarray, values: np.ndarray, names: list[str]) -> dict:
    out: dict = {}
    for f, s, v in zip(first, second, values, strict=True):
        key = (names[f], names[s])
        out[key] = out.get(key, 0.0) + np.asarray(v, dtype=float)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_the_three_encoders_agree_on_one_table(seed):
    df = _table(seed)
    o = read_outcomes(df)
    hard = ~o.p_given
    expected = _by_pair(o.first[hard], o.second[hard],
                        np.column_stack([o.outcome == 1, o.outcome == -1, o.outcome == 0])[hard], o.names)
    expected_soft = _by_pair(o.first[~hard], o.second[~hard], o.p[~hard], o.names)

    # leaderboard: cells (system in A, system in B) -> turned to (first, second)
    lb = encode_leaderboard(df)
    a_first = lb.sys_a < lb.sys_b
    first, second = np.minimum(lb.sys_a, lb.sys_b), np.maximum(lb.sys_a, lb.sys_b)
    n = lb.n
    counts = np.column_stack([np.where(a_first, n[:, 0], n[:, 1]), np.where(a_first, n[:, 1], n[:, 0]), n[:, 2]])
    got = _by_pair(first, second, counts, lb.systems)
    got_soft = _by_pair(first, second, np.where(a_first, n[:, 3], n[:, 4]), lb.systems)
    assert got.keys() == expected.keys()
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k])
        np.testing.assert_allclose(got_soft[k], expected_soft[k])

    # ranking: one comparison per row, in the row's own orientation
    rk = encode_ranking(df)
    ci, cj = rk.candidates[rk.i], rk.candidates[rk.j]
    a_first_rk = ci < cj
    names = sorted(set(ci) | set(cj))
    code = {s: k for k, s in enumerate(names)}
    f = np.array([code[min(s, t)] for s, t in zip(ci, cj, strict=True)])
    s_ = np.array([code[max(s, t)] for s, t in zip(ci, cj, strict=True)])
    y_first = np.where(a_first_rk, rk.y, 1.0 - rk.y)
    p_first = np.where(a_first_rk, rk.p, 1.0 - rk.p)
    hard_rk = ~rk.p_given
    got_rk = _by_pair(f[hard_rk], s_[hard_rk],
                      np.column_stack([y_first == 1, y_first == 0, y_first == 0.5])[hard_rk], names)
    got_rk_soft = _by_pair(f[~hard_rk], s_[~hard_rk], p_first[~hard_rk], names)
    for k in expected:
        np.testing.assert_allclose(got_rk[k], expected[k])
        np.testing.assert_allclose(got_rk_soft[k], expected_soft[k])

    # win rates: every row one observation, ties left out and counted
    wr = encode_win_rate(df, swap="none", ties="skip")
    n_first = np.bincount(wr.unit_pair, weights=wr.n_first.sum(axis=1))
    n_second = np.bincount(wr.unit_pair, weights=wr.n_second.sum(axis=1))
    n_tie = np.bincount(wr.unit_pair, weights=wr.n_tie.sum(axis=1))
    # the win-rate encoder thresholds a probability at 0.5: compare with the outcomes of all rows
    all_rows = _by_pair(o.first, o.second, np.column_stack([o.outcome == 1, o.outcome == -1, o.outcome == 0]),
                        o.names)
    for k, (s, t) in enumerate(wr.pairs):
        np.testing.assert_allclose([n_first[k], n_second[k], n_tie[k]], all_rows[(s, t)])

    # human labels: one per comparison, the same in both encoders that read them
    unit_label = {(wr.pairs[p], i): lab for p, i, lab in zip(wr.unit_pair, wr.unit_item, wr.label, strict=True)}
    for row in range(len(df)):
        key = ((o.names[o.first[row]], o.names[o.second[row]]), df["item"].iloc[row])
        expect = {1: 1, -1: 0, 0: -1}[int(o.human[row])]
        assert unit_label[key] == expect
    # the leaderboard's cells: rows per cell (a hard row counts once in n_A + n_B + n_tie, a soft
    # one once in soft_A + soft_B), labelled "first preferred" / "second preferred" in the cell's h
    rows = lb.n.sum(axis=1)
    h_first = np.where(lb.h == 0, 0, np.where((lb.h == 1) == a_first, 1, -1))
    for sign in (1, -1):
        got_h = _by_pair(first[h_first == sign], second[h_first == sign], rows[h_first == sign], lb.systems)
        want_h = _by_pair(o.first[o.human == sign], o.second[o.human == sign],
                          np.ones(int((o.human == sign).sum())), o.names)
        assert got_h.keys() == want_h.keys()
        for k in want_h:
            np.testing.assert_allclose(got_h[k], want_h[k])
    assert lb.hum_n.sum() == (wr.label >= 0).sum()
    assert lb.hum_n[:, 0].sum() == (wr.label == 1).sum()  # the label cells are oriented (first, second)


def test_a_label_table_is_oriented_and_deduplicated():
    lab = pd.DataFrame({"item": [1, 1, 2], "a": ["y", "y", "x"], "b": ["x", "x", "y"], "human": ["a", "a", "B "]})
    out = read_label_table(lab, ["x", "y"])
    # item 1: y shown first and preferred, so the canonical first (x) lost; the repeat is dropped
    assert out.to_dict("list") == {"item": ["1", "2"], "first": [0, 0], "second": [1, 1],
                                   "first_wins": [False, False]}


_TABLE = pd.DataFrame({"item": [1, 1, 2, 2], "a": ["x", "y", "x", "y"], "b": ["y", "x", "y", "x"],
                       "judge": "j", "winner": ["a", "b", "b", "a"]})


@pytest.mark.parametrize(("bad", "message"), [
    (pd.DataFrame({"item": [1], "a": ["x"], "human": ["a"]}), r"missing column\(s\) \['b'\]"),
    (pd.DataFrame({"item": [1], "a": ["x"], "b": ["y"], "human": ["x"]}), r"must be 'a' or 'b'; got \['x'\]"),
    (pd.DataFrame({"item": [1], "a": ["x"], "b": ["y"], "human": [None]}), r"must be 'a' or 'b'"),
    (pd.DataFrame({"item": [1], "a": ["x"], "b": ["NOPE"], "human": ["a"]}), r"not in the judgments table: \['NOPE'\]"),
    (pd.DataFrame({"item": [1, 1], "a": ["x", "y"], "b": ["y", "x"], "human": ["a", "a"]}),
     r"contradict each other on 1 comparison"),
    ([("x", "y")], "must be a DataFrame"),
])
def test_win_rates_and_leaderboards_read_label_tables_alike(bad, message):
    """One reader of label tables: the same bad table gets the same error from both encoders."""
    with pytest.raises(ValueError, match=message):
        encode_win_rate(_TABLE, human=bad)
    with pytest.raises(ValueError, match=message):
        encode_leaderboard(_TABLE, human=bad)
