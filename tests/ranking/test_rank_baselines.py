import numpy as np
import pandas as pd
import pytest

from bayes_judge.ranking import avg_prob, bradley_terry, encode_ranking, win_ratio


@pytest.fixture
def three():
    """x beats y, y-z tie, z beats x (from B), x beats z; soft p given."""
    return encode_ranking(
        pd.DataFrame(
            {
                "item": 1,
                "a": ["x", "y", "x", "z"],
                "b": ["y", "z", "z", "x"],
                "p_a": [0.9, 0.5, 0.7, 0.4],
            }
        )
    )


def test_win_ratio_is_wins_over_comparisons_eq6(three):
    # x: won vs y, won vs z (0.7), won vs z (0.4 from B) -> 3/3; y: lost, tie -> 0.5/2; z: tie, lost, lost
    np.testing.assert_allclose(win_ratio(three), [1.0, 0.25, 0.5 / 3])


def test_avg_prob_reads_each_side(three):
    np.testing.assert_allclose(avg_prob(three), [(0.9 + 0.7 + 0.6) / 3, (0.1 + 0.5) / 2, (0.5 + 0.3 + 0.4) / 3])


def _hard_data(n=12, k=300, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n)
    i = rng.integers(0, n, k)
    j = (i + rng.integers(1, n, k)) % n
    won = rng.random(k) < 1 / (1 + np.exp(-(s[i] - s[j])))
    df = pd.DataFrame(
        {"item": 1, "a": [f"c{x:02d}" for x in i], "b": [f"c{x:02d}" for x in j],
         "winner": np.where(won, "a", "b"), "sample": np.arange(k)}
    )
    return df, i, j, won


def test_bt_mle_matches_choix_within_1e_6():
    choix = pytest.importorskip("choix")
    df, i, j, won = _hard_data()
    d = encode_ranking(df)
    ours = bradley_terry(d, prior=0.0, tol=1e-12, max_iter=100_000)
    pairs = [(a, b) if w else (b, a) for a, b, w in zip(i, j, won, strict=True)]
    ref = choix.ilsr_pairwise(12, pairs, alpha=0.0, tol=1e-13, max_iter=1000)
    np.testing.assert_allclose(ours, ref - ref.mean(), atol=1e-6)


def test_bt_paper_tolerance_is_close_to_the_fixed_point():
    d = encode_ranking(_hard_data(seed=2)[0])
    np.testing.assert_allclose(bradley_terry(d), bradley_terry(d, tol=1e-11, max_iter=100_000), atol=5e-3)


def test_bt_prior_keeps_an_unbeaten_candidate_finite():
    df = pd.DataFrame({"item": 1, "a": ["x", "x", "y"], "b": ["y", "z", "z"], "winner": ["a", "a", "a"]})
    s = bradley_terry(encode_ranking(df))
    assert np.isfinite(s).all() and s[0] > s[1] > s[2]
    assert s.sum() == pytest.approx(0.0, abs=1e-12)


def test_bt_without_prior_on_a_not_strongly_connected_graph_names_the_components():
    df = pd.DataFrame({"item": 1, "a": ["x", "x", "y"], "b": ["y", "z", "z"], "winner": ["a", "a", "b"]})
    with pytest.raises(ValueError, match=r"not strongly connected.*\{'x'\}"):
        bradley_terry(encode_ranking(df), prior=0.0)


def test_bt_rejects_a_negative_prior():
    with pytest.raises(ValueError, match="prior"):
        bradley_terry(encode_ranking(_hard_data()[0]), prior=-1.0)


def test_bt_warns_when_max_iter_stops_it_early():
    from bayes_judge.ranking import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        bradley_terry(encode_ranking(_hard_data()[0]), max_iter=2)


@pytest.mark.parametrize("prior", ["paper", 0.0])
def test_bt_newton_solver_finds_the_zermelo_maximum(prior):
    rng = np.random.default_rng(7)
    n, k = 30, 600
    s = rng.normal(0, 1, n)
    i = rng.integers(0, n, 2 * k)
    j = rng.integers(0, n, 2 * k)
    keep = i != j
    i, j = i[keep][:k], j[keep][:k]
    y = rng.random(k) < 1 / (1 + np.exp(-(s[i] - s[j])))
    df = pd.DataFrame({"item": 1, "a": [f"c{x}" for x in i], "b": [f"c{x}" for x in j],
                       "winner": np.where(y, "a", "b"), "sample": np.arange(k)})
    data = encode_ranking(df)
    z = bradley_terry(data, prior=prior, tol=1e-12, max_iter=200_000)
    nt = bradley_terry(data, prior=prior, solver="newton", tol=1e-12, max_iter=100)
    np.testing.assert_allclose(nt, z, atol=1e-7)
    with pytest.raises(ValueError, match="solver must be"):
        bradley_terry(data, solver="lbfgs")


@pytest.mark.parametrize("prior", ["paper", 0.0])
def test_bt_accelerated_reaches_the_plain_maximum(prior):
    d = encode_ranking(_hard_data(n=20, k=800, seed=3)[0])
    plain = bradley_terry(d, prior=prior, tol=1e-12, max_iter=100_000)
    fast = bradley_terry(d, prior=prior, tol=1e-12, max_iter=100_000, accelerate=True)
    np.testing.assert_allclose(fast, plain, atol=1e-9)
    assert fast.sum() == pytest.approx(0.0, abs=1e-12)


def test_bt_accelerated_matches_choix_within_1e_6():
    choix = pytest.importorskip("choix")
    df, i, j, won = _hard_data()
    ours = bradley_terry(encode_ranking(df), prior=0.0, tol=1e-12, max_iter=100_000, accelerate=True)
    pairs = [(a, b) if w else (b, a) for a, b, w in zip(i, j, won, strict=True)]
    ref = choix.ilsr_pairwise(12, pairs, alpha=0.0, tol=1e-13, max_iter=1000)
    np.testing.assert_allclose(ours, ref - ref.mean(), atol=1e-6)


@pytest.mark.parametrize("tol", [1e-4, 1e-6, 1e-10])
def test_bt_accelerated_needs_no_more_sweeps_than_plain(tol):
    from bayes_judge.ranking.baselines import _pair_totals
    from bayes_judge.ranking.mm import mm_iterate as _mm_iterate

    df = _hard_data(n=60, k=20_000, seed=4)[0]
    d = encode_ranking(df)
    lo, hi, w, n = _pair_totals(d, d.y, np.ones(d.n_comparisons))
    runs = {}
    for acc in (False, True):
        info: dict = {}
        s = _mm_iterate(d, lo, hi, w, n, theta=None, tol=tol, max_iter=100_000, name="bt",
                        accelerate=acc, info=info)
        runs[acc] = s, info["sweeps"]
    assert runs[True][1] <= runs[False][1]
    # both stop within the tolerance band of the same maximum
    best = bradley_terry(d, prior=0.0, tol=1e-13, max_iter=100_000)
    for s, _ in runs.values():
        assert np.abs(s - best).max() < 100 * tol


def test_bt_accelerated_items_ranked_together_equal_items_ranked_alone():
    parts = []
    for g, (n, k, seed) in enumerate([(8, 200, 5), (15, 900, 6), (5, 60, 7)]):
        df = _hard_data(n=n, k=k, seed=seed)[0]
        parts.append(df.assign(item=g, sample=df["sample"] + 10_000 * g))
    together = encode_ranking(pd.concat(parts, ignore_index=True))
    s = bradley_terry(together, accelerate=True, tol=1e-8)
    for g, df in enumerate(parts):
        alone = bradley_terry(encode_ranking(df), accelerate=True, tol=1e-8)
        np.testing.assert_allclose(s[together.cand_item == g], alone, atol=1e-7)


def test_bt_accelerated_warns_when_max_iter_stops_it_early():
    from bayes_judge.ranking import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        bradley_terry(encode_ranking(_hard_data()[0]), max_iter=5, accelerate=True, tol=1e-14)


def test_bradley_terry_weights_equal_repeated_comparisons():
    """weight=k is k copies of the comparison (counts, bootstrap weights); fractional y is a share."""
    from bayes_judge.ranking import bradley_terry, pairs_rank_data

    i, j = np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2])
    y, w = np.array([1.0, 0.0, 1.0, 0.5]), np.array([3.0, 2.0, 1.0, 4.0])
    rep = np.repeat(np.arange(4), w.astype(int))
    expanded = bradley_terry(pairs_rank_data(i[rep], j[rep], y[rep], 3), prior=0.1, tol=1e-10, max_iter=100_000)
    weighted = bradley_terry(pairs_rank_data(i, j, y, 3), prior=0.1, tol=1e-10, max_iter=100_000, weight=w)
    np.testing.assert_allclose(weighted, expanded, atol=1e-8)
    # a comparison of weight 0 is absent
    dropped = bradley_terry(pairs_rank_data(i, j, y, 3), prior=0.1, tol=1e-10, max_iter=100_000,
                            weight=np.r_[w[:3], 0.0])
    np.testing.assert_allclose(dropped, bradley_terry(pairs_rank_data(i[:3], j[:3], y[:3], 3), prior=0.1,
                                                      tol=1e-10, max_iter=100_000, weight=w[:3]), atol=1e-8)
    with pytest.raises(ValueError, match="weight"):
        bradley_terry(pairs_rank_data(i, j, y, 3), weight=np.array([1.0, -1.0, 1.0, 1.0]))
