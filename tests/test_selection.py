"""Comparison selection: greedy D-optimal (seed 004 §3.6, A.6) and random / no-repeat / symmetric
(seed 001 §3.4)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from bayes_judge.selection import (
    _gram,
    _greedy,
    _rank_ordered,
    _rank_unordered,
    _striped_start,
    _unrank_ordered,
    _unrank_unordered,
    _w_tilde,
    select_comparisons,
)

EMPTY = np.zeros(0, dtype=np.intp)


def _det(n, a, b):
    w = _w_tilde(n, np.asarray(a), np.asarray(b))
    return np.linalg.det(w.T @ w)


def _unordered(df):
    return {frozenset(p) for p in zip(df["a"], df["b"], strict=True)}


# ---------------------------------------------------------------- greedy D-optimal


def test_striped_diagonal_start_is_eq45():
    """With no comparisons, the start links give W̃ of seed 004 eq. 45 (N = 4)."""
    a, b = _striped_start(4, EMPTY, EMPTY)
    expected = np.array([[1, 0, 0, 0], [1, -1, 0, 0], [0, 1, -1, 0], [0, 0, 1, -1]], dtype=float)
    np.testing.assert_array_equal(_w_tilde(4, a, b), expected)
    df = select_comparisons(["w", "x", "y", "z"], 3)
    assert df.values.tolist() == [["w", "x"], ["x", "y"], ["y", "z"]]


def test_striped_start_chains_components_of_existing():
    # components {0, 2}, {1, 3}, {4}: chained by their first candidates, 0-1 then 1-4
    a, b = _striped_start(5, np.array([0, 1]), np.array([2, 3]))
    assert list(zip(a, b, strict=True)) == [(0, 1), (1, 4)]


def test_gram_is_w_tilde_t_w_tilde():
    a, b = np.array([0, 1, 2, 0, 1, 0]), np.array([1, 2, 3, 3, 3, 1])  # (0, 1) repeated
    w = _w_tilde(4, a, b)
    np.testing.assert_array_equal(_gram(4, a, b), w.T @ w)


@pytest.mark.parametrize("n", [4, 6, 7])
def test_greedy_maximizes_det_at_every_step(n):
    """Brute force: at each step the pick maximizes det(W̃ᵀW̃) over all pairs not yet compared."""
    sa, sb = _striped_start(n, EMPTY, EMPTY)
    a, b = sa.tolist(), sb.tolist()
    n_picks = n * (n - 1) // 2 - len(a)
    ga, gb, _ = _greedy(n, np.array(a), np.array(b), n_picks)
    for i, j in zip(ga, gb, strict=True):
        done = {frozenset(p) for p in zip(a, b, strict=True)}
        dets = {
            p: _det(n, a + [p[0]], b + [p[1]])
            for p in itertools.combinations(range(n), 2)
            if frozenset(p) not in done
        }
        assert frozenset((int(i), int(j))) not in done
        np.testing.assert_allclose(dets[(int(i), int(j))], max(dets.values()), rtol=1e-9)
        a.append(int(i))
        b.append(int(j))


def test_greedy_from_existing_maximizes_det():
    n = 6
    existing = pd.DataFrame({"a": [0, 0, 2, 3, 1], "b": [1, 2, 3, 4, 5], "judge": "j"})
    df = select_comparisons(n, 3, existing=existing)
    a, b = list(existing["a"]), list(existing["b"])
    for i, j in zip(df["a"], df["b"], strict=True):
        done = {frozenset(p) for p in zip(a, b, strict=True)}
        dets = [
            _det(n, a + [p], b + [q])
            for p, q in itertools.combinations(range(n), 2)
            if frozenset((p, q)) not in done
        ]
        np.testing.assert_allclose(_det(n, a + [i], b + [j]), max(dets), rtol=1e-9)
        a.append(i)
        b.append(j)


def test_sherman_morrison_inverse_matches_direct_inverse():
    n = 30
    sa, sb = _striped_start(n, EMPTY, EMPTY)
    ga, gb, a_inv = _greedy(n, sa, sb, 60)
    direct = np.linalg.inv(_gram(n, np.concatenate([sa, ga]), np.concatenate([sb, gb])))
    np.testing.assert_allclose(a_inv, direct, rtol=1e-9, atol=1e-11)


def test_greedy_counts_start_and_excludes_existing():
    n = 8
    df = select_comparisons(n, 12)
    assert len(df) == 12
    assert df.iloc[: n - 1].values.tolist() == [[i, i + 1] for i in range(n - 1)]
    assert len(_unordered(df)) == 12
    more = select_comparisons(n, 5, existing=df)
    assert len(more) == 5
    assert not _unordered(more) & _unordered(df)
    # continuing never needs start links: the greedy picks keep the design's det maximal
    # (ties may be broken differently than in one call of size 17, so compare determinants)
    a, b = list(df["a"]), list(df["b"])
    for i, j in zip(more["a"], more["b"], strict=True):
        best = max(
            _det(n, a + [p], b + [q])
            for p, q in itertools.combinations(range(n), 2)
            if frozenset((p, q)) not in {frozenset(x) for x in zip(a, b, strict=True)}
        )
        np.testing.assert_allclose(_det(n, a + [i], b + [j]), best, rtol=1e-9)
        a.append(i)
        b.append(j)


def test_greedy_with_connected_existing_adds_no_start_links():
    existing = pd.DataFrame({"a": ["p", "q", "r"], "b": ["q", "r", "s"]})
    df = select_comparisons(["p", "q", "r", "s"], 1, existing=existing)
    # S_ij = |i - j| on the chain: the two ends; balanced orientation shows s first, as
    # `existing` showed p first once and s never
    assert df.values.tolist() == [["s", "p"]]
    assert select_comparisons(["p", "q", "r", "s"], 1, existing=existing, orient="index").values.tolist() == [["p", "s"]]


def test_greedy_can_exhaust_all_pairs():
    df = select_comparisons(5, 10)
    assert len(_unordered(df)) == 10


# ---------------------------------------------------------------- random, no-repeat, symmetric


@pytest.mark.parametrize("n,k", [(10, 5), (11, 6), (50, 30), (6, 30)])
def test_random_covers_every_candidate_no_ordered_repeat(n, k):
    df = select_comparisons(n, k, method="random", seed=3)
    assert len(df) == k
    assert set(df["a"]) | set(df["b"]) == set(range(n))
    assert not df.duplicated().any()
    assert (df["a"] != df["b"]).all()


def test_random_counts_existing_for_coverage():
    existing = pd.DataFrame({"a": [0, 1, 2], "b": [1, 2, 3]})
    df = select_comparisons(6, 1, method="random", existing=existing, seed=0)
    assert set(df.iloc[0]) == {4, 5}


def test_random_may_use_both_orders_but_not_existing_ones():
    existing = pd.DataFrame({"a": [0, 1], "b": [1, 2]})
    df = select_comparisons(3, 4, method="random", existing=existing, seed=0)
    assert set(zip(df["a"], df["b"], strict=True)) == {(1, 0), (2, 1), (0, 2), (2, 0)}


@pytest.mark.parametrize("n,k", [(10, 20), (10, 45), (40, 100)])
def test_no_repeat_never_repeats_an_unordered_pair(n, k):
    df = select_comparisons(n, k, method="no-repeat", seed=1)
    assert len(df) == k
    assert len(_unordered(df)) == k
    assert (df["a"] != df["b"]).all()


def test_no_repeat_orders_by_coin():
    df = select_comparisons(200, 4000, method="no-repeat", seed=0)
    assert 0.45 < (df["a"] < df["b"]).mean() < 0.55


def test_symmetric_gives_both_orders_of_each_pair():
    df = select_comparisons(8, 20, method="symmetric", seed=2)
    assert len(df) == 20
    ordered = list(zip(df["a"], df["b"], strict=True))
    for t in range(0, 20, 2):
        assert ordered[t + 1] == ordered[t][::-1]
    assert len(set(ordered)) == 20
    assert len(_unordered(df)) == 10


def test_unordered_methods_avoid_existing_pairs():
    existing = pd.DataFrame({"a": [1, 0], "b": [0, 2]})
    for method, k in (("no-repeat", 4), ("symmetric", 8)):
        df = select_comparisons(5, k, method=method, existing=existing, seed=0)
        assert not _unordered(df) & _unordered(existing)


@pytest.mark.parametrize("method", ["random", "no-repeat", "symmetric", "greedy-d-optimal"])
def test_deterministic_under_seed(method):
    one = select_comparisons([f"c{i}" for i in range(30)], 40, method=method, seed=7)
    two = select_comparisons([f"c{i}" for i in range(30)], 40, method=method, seed=7)
    pd.testing.assert_frame_equal(one, two)
    if method != "greedy-d-optimal":
        other = select_comparisons([f"c{i}" for i in range(30)], 40, method=method, seed=8)
        assert not one.equals(other)


def test_seed_accepts_a_generator():
    rng = np.random.default_rng(0)
    df = select_comparisons(5, 4, method="no-repeat", seed=rng)
    assert len(df) == 4


def test_ids_are_returned_as_given():
    df = select_comparisons(["x", "y", "z"], 3, method="random", seed=0)
    assert set(df["a"]) | set(df["b"]) == {"x", "y", "z"}


def test_pair_ranking_roundtrip():
    n = 37
    idx = np.arange(n * (n - 1) // 2)
    i, j = _unrank_unordered(idx, n)
    assert (i < j).all() and (j < n).all()
    np.testing.assert_array_equal(_rank_unordered(i, j, n), idx)
    idx = np.arange(n * (n - 1))
    i, j = _unrank_ordered(idx, n)
    assert (i != j).all()
    np.testing.assert_array_equal(_rank_ordered(i, j, n), idx)
    big = 200_000  # float rounding near the end of the triangle
    last = np.array([big * (big - 1) // 2 - 1, big * (big - 1) // 2 - 2])
    i, j = _unrank_unordered(last, big)
    assert i.tolist() == [big - 2, big - 3] and j.tolist() == [big - 1, big - 1]


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "method,k,match",
    [
        ("no-repeat", 11, r"k=11 .* 10 distinct unordered pairs"),
        ("greedy-d-optimal", 11, r"k=11 .* 10 distinct unordered pairs"),
        ("random", 21, r"k=21 .* 20 distinct ordered comparisons"),
        ("symmetric", 22, r"k=22 .* 20 distinct ordered comparisons"),
    ],
)
def test_k_larger_than_distinct_pairs(method, k, match):
    with pytest.raises(ValueError, match=match):
        select_comparisons(5, k, method=method)


def test_k_larger_than_pairs_left_after_existing():
    existing = pd.DataFrame({"a": [0, 1], "b": [1, 0]})  # one unordered pair, both orders
    with pytest.raises(ValueError, match=r"k=3 .* 2 distinct unordered pairs .* 1 already"):
        select_comparisons(3, 3, method="no-repeat", existing=existing)


@pytest.mark.parametrize("candidates", [1, 0, -3, ["only"], []])
def test_fewer_than_two_candidates(candidates):
    with pytest.raises(ValueError, match="at least 2 candidates"):
        select_comparisons(candidates, 1)


def test_duplicate_candidate_ids():
    with pytest.raises(ValueError, match=r"duplicate candidate id\(s\) \['b'\]"):
        select_comparisons(["a", "b", "c", "b"], 2)


@pytest.mark.parametrize("candidates", ["abc", 2.5, True])
def test_candidates_of_wrong_type(candidates):
    with pytest.raises(ValueError, match="candidates must be"):
        select_comparisons(candidates, 1)


def test_existing_unknown_candidate():
    existing = pd.DataFrame({"a": ["x", "q"], "b": ["y", "x"]}, index=[10, 11])
    with pytest.raises(
        ValueError, match=r"column 'a' names unknown candidate\(s\) \['q'\] in row\(s\) \[11\]"
    ):
        select_comparisons(["x", "y", "z"], 1, existing=existing)


def test_existing_self_comparison():
    existing = pd.DataFrame({"a": [0, 2], "b": [1, 2]})
    with pytest.raises(ValueError, match=r"row\(s\) \[1\] compare a candidate with itself"):
        select_comparisons(4, 1, existing=existing, method="random")


def test_existing_without_columns():
    with pytest.raises(ValueError, match=r"missing column\(s\) \['b'\]"):
        select_comparisons(4, 1, existing=pd.DataFrame({"a": [0]}))
    with pytest.raises(ValueError, match="existing must be a DataFrame"):
        select_comparisons(4, 1, existing=[(0, 1)])


@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one(k):
    with pytest.raises(ValueError, match=f"k must be at least 1, got k={k}"):
        select_comparisons(5, k)


@pytest.mark.parametrize("k", [2.0, "3", True])
def test_k_not_an_integer(k):
    with pytest.raises(ValueError, match="k must be an integer"):
        select_comparisons(5, k)


def test_unknown_method():
    with pytest.raises(ValueError, match="method='d-optimal' is not one of"):
        select_comparisons(5, 2, method="d-optimal")


def test_symmetric_odd_k():
    with pytest.raises(ValueError, match="k=3 is odd"):
        select_comparisons(5, 3, method="symmetric")


def test_greedy_k_too_small_to_connect():
    with pytest.raises(ValueError, match="takes 4 comparisons"):
        select_comparisons(5, 3)
    existing = pd.DataFrame({"a": [0, 2], "b": [1, 3]})  # components {0,1}, {2,3}, {4}
    with pytest.raises(ValueError, match="leaves 3 components.*takes 2 comparisons"):
        select_comparisons(5, 1, existing=existing)


def test_random_k_too_small_to_cover():
    with pytest.raises(ValueError, match=r"7 candidate\(s\) are in no comparison.*at least 4"):
        select_comparisons(7, 3, method="random")


def test_lazy_greedy_matches_full_scan_of_eq17():
    """N above the lazy batch: every pick attains the max of eq. 17 over all uncompared pairs."""
    n = 40
    sa, sb = _striped_start(n, EMPTY, EMPTY)
    ga, gb, _ = _greedy(n, sa, sb, 120)
    a, b = list(sa), list(sb)
    for i, j in zip(ga, gb, strict=True):
        inv = np.linalg.inv(_gram(n, np.array(a), np.array(b)))
        d = np.diag(inv)
        score = d[:, None] + d[None, :] - 2 * inv
        score[np.tril_indices(n)] = -np.inf
        score[np.minimum(a, b), np.maximum(a, b)] = -np.inf
        assert np.isfinite(score[i, j])
        np.testing.assert_allclose(score[i, j], score.max(), rtol=1e-10)
        a.append(i)
        b.append(j)


def test_greedy_balanced_orientation_spreads_positions():
    """Every candidate is shown first about as often as second; the pairs are the same as with
    orient="index" (D-optimality ignores orientation) and only their order within a row differs."""
    n, k = 30, 90
    bal = select_comparisons(n, k)
    idx = select_comparisons(n, k, orient="index")
    key = lambda d: sorted(map(tuple, np.sort(d[["a", "b"]].to_numpy(), axis=1).tolist()))  # noqa: E731
    assert key(bal) == key(idx)
    lead = np.bincount(bal["a"], minlength=n) - np.bincount(bal["b"], minlength=n)
    lead_idx = np.bincount(idx["a"], minlength=n) - np.bincount(idx["b"], minlength=n)
    assert np.abs(lead).max() <= 2 and np.abs(lead).mean() < 1
    assert np.abs(lead_idx).max() >= 4  # what balancing fixes: the earliest ids always first
    with pytest.raises(ValueError, match="orient='sorted' is not one of"):
        select_comparisons(n, k, orient="sorted")


def test_candidates_that_a_judgments_table_would_merge_or_refuse_are_refused():
    """NaN was returned in a pair, and 1 beside "1" gave the pair [1, '1'], refused once judged as
    'a candidate compared with itself'."""
    import numpy as np

    import bayes_judge as bj

    with pytest.raises(ValueError, match=r"missing id\(s\) at position\(s\) \[2\]"):
        bj.select_comparisons(["x", "y", np.nan], 2)
    with pytest.raises(ValueError, match=r"ids \[1, '1'\] are one candidate"):
        bj.select_comparisons([1, "1", 2], 2)
    assert len(bj.select_comparisons([1, 2, 3], 2)) == 2


def test_existing_comparisons_from_a_validated_table_match_integer_candidates():
    """A validated judgments table holds ids as text: existing=bj.validate_judgments(t) beside
    candidates 0..3 was refused as "unknown candidate(s) ['0', '1']"."""
    import bayes_judge as bj

    t = pd.DataFrame({"item": "q", "a": [0, 1], "b": [1, 2], "winner": ["a", "b"]})
    fresh = bj.select_comparisons(4, 3, method="greedy-d-optimal", existing=bj.validate_judgments(t))
    done = {frozenset(p) for p in [(0, 1), (1, 2)]}
    assert len(fresh) == 3 and not any(frozenset((a, b)) in done for a, b in zip(fresh["a"], fresh["b"], strict=True))
