import numpy as np
import pandas as pd
import pytest
from scipy.special import logit
from scipy.stats import spearmanr

from bayes_judge.ranking import (
    ClippedProbabilityWarning,
    avg_prob,
    bradley_terry,
    comparison_matrix,
    encode_ranking,
    poe_bt,
    poe_gaussian,
    win_ratio,
)
from bayes_judge.ranking.poe import _wt

# The paper's 4-candidate example, all 6 comparisons (seed 004 A.1 eq. 18)
FOUR = pd.DataFrame(
    {
        "item": 1,
        "a": ["x1", "x1", "x1", "x2", "x2", "x3"],
        "b": ["x2", "x3", "x4", "x3", "x4", "x4"],
        "p_a": [0.7, 0.6, 0.8, 0.4, 0.55, 0.9],
    }
)


def test_comparison_matrix_is_eq18_for_the_four_candidate_example():
    W = comparison_matrix(encode_ranking(FOUR)).toarray()
    eq18 = [[1, 0, 0, 0], [1, -1, 0, 0], [1, 0, -1, 0], [1, 0, 0, -1], [0, 1, -1, 0], [0, 1, 0, -1], [0, 0, 1, -1]]
    np.testing.assert_array_equal(W, eq18)


def test_wtw_has_the_structure_of_a2_eq19():
    W = comparison_matrix(encode_ranking(FOUR))
    eq19 = [[4, -1, -1, -1], [-1, 3, -1, -1], [-1, -1, 3, -1], [-1, -1, -1, 3]]
    np.testing.assert_array_equal((W.T @ W).toarray(), eq19)


def test_wtw_diagonal_counts_comparisons_and_off_diagonal_marks_pairs_eq20_21(simulate):
    df, _ = simulate(15, 40, seed=3, design="ordered")
    d = encode_ranking(df)
    A = (comparison_matrix(d).T @ comparison_matrix(d)).toarray()
    counts = np.bincount(np.concatenate([d.i, d.j]), minlength=15)
    counts[0] += 1  # the anchoring expert on the first candidate
    np.testing.assert_array_equal(np.diag(A), counts)
    made = np.zeros((15, 15), dtype=bool)
    made[d.i, d.j] = made[d.j, d.i] = True
    off = ~np.eye(15, dtype=bool)
    np.testing.assert_array_equal(A[off], np.where(made, -1, 0)[off])


def test_wtw_inverse_on_the_full_set_is_the_a3_closed_form():
    n = 6
    lo, hi = np.triu_indices(n, 1)
    df = pd.DataFrame({"item": 1, "a": [f"x{k}" for k in lo], "b": [f"x{k}" for k in hi], "p_a": 0.6})
    W = comparison_matrix(encode_ranking(df))
    inv = np.full((n, n), 1 + 1 / n)
    inv[0, :] = inv[:, 0] = 1
    inv[np.arange(1, n), np.arange(1, n)] = 1 + 2 / n
    np.testing.assert_allclose(np.linalg.inv((W.T @ W).toarray()), inv, atol=1e-12)


def test_full_set_gaussian_poe_is_an_affine_shift_of_avg_prob_a3(simulate):
    n = 9
    df, _ = simulate(n, seed=4, design="full")
    d = encode_ranking(df)
    s, avg = poe_gaussian(d), avg_prob(d)
    # s = ((N-1)/N) avg-prob + c: each unordered pair is compared twice in the full set
    shift = s - (n - 1) / n * avg
    np.testing.assert_allclose(shift, shift[0], atol=1e-12)
    hard = poe_gaussian(d, outcome="hard") - (n - 1) / n * win_ratio(d)
    np.testing.assert_allclose(hard, hard[0], atol=1e-12)


def test_eq12_anchors_the_first_candidate_at_zero_and_solves_least_squares(simulate):
    df, _ = simulate(10, 30, seed=5)
    d = encode_ranking(df)
    s = poe_gaussian(d, alpha=2.0, beta=0.4)
    assert s[0] == 0.0
    W = comparison_matrix(d).toarray()
    mu = np.concatenate([[0.0], 2.0 * (d.p - 0.4)])
    np.testing.assert_allclose(s, np.linalg.lstsq(W, mu, rcond=None)[0], atol=1e-10)


def test_general_eq8_weights_experts_by_their_variance_and_eq9_is_the_covariance(simulate):
    df, _ = simulate(10, 30, seed=6)
    d = encode_ranking(df)
    s, cov = poe_gaussian(
        d, f_mu=lambda p: 3.0 * (p - 0.5), f_sigma=lambda p: 0.1 + p * (1 - p), anchor_var=2.0, return_cov=True
    )
    W = comparison_matrix(d).toarray()
    var = np.concatenate([[2.0], 0.1 + d.p * (1 - d.p)])
    mu = np.concatenate([[0.0], 3.0 * (d.p - 0.5)])
    prec = W.T @ (W / var[:, None])
    np.testing.assert_allclose(cov, np.linalg.inv(prec), atol=1e-10)
    np.testing.assert_allclose(s, np.linalg.solve(prec, W.T @ (mu / var)), atol=1e-10)


def test_general_form_with_linear_mean_and_constant_variance_is_eq12(simulate):
    d = encode_ranking(simulate(10, 30, seed=7)[0])
    general = poe_gaussian(d, f_mu=lambda p: p - 0.5, f_sigma=lambda p: np.full_like(p, 0.3), anchor_var=0.3)
    np.testing.assert_allclose(general, poe_gaussian(d), atol=1e-12)


def test_sparse_solver_matches_the_dense_solution(simulate):
    d = encode_ranking(simulate(400, 4000, seed=8)[0])  # above DENSE_MAX: CG on the Laplacian
    W = comparison_matrix(d)
    mu = np.concatenate([[0.0], d.p - 0.5])
    dense = np.linalg.solve((W.T @ W).toarray(), W.T @ mu)
    np.testing.assert_allclose(poe_gaussian(d), dense, atol=1e-8)


def test_soft_bt_with_hard_probabilities_is_hard_bt():
    rng = np.random.default_rng(9)
    n, k = 8, 200
    i = rng.integers(0, n, k)
    j = (i + rng.integers(1, n, k)) % n
    won = rng.random(k) < 0.5 + 0.05 * (i - j)
    df = pd.DataFrame({"item": 1, "a": i, "b": j, "p_a": won.astype(float), "sample": np.arange(k)})
    d = encode_ranking(df)
    np.testing.assert_allclose(
        poe_bt(d, clip="none"), bradley_terry(d, prior=0.0, tol=1e-12, max_iter=100_000), atol=1e-8
    )


def test_bt_prior_wins_are_soft_bt_with_shrunk_probabilities():
    # prior c wins per side = soft BT with p = (y + c) / (1 + 2c), on any graph (§4.2 vs A.4)
    df = pd.DataFrame({"item": 1, "a": ["x", "x", "y", "y"], "b": ["y", "z", "z", "w"], "winner": "a"})
    d = encode_ranking(df)
    c = 1 / 3
    soft = encode_ranking(df.assign(p_a=(1 + c) / (1 + 2 * c)))
    np.testing.assert_allclose(poe_bt(soft), bradley_terry(d, tol=1e-12, max_iter=100_000), atol=1e-8)


def test_newton_and_soft_zermelo_reach_the_same_map(simulate):
    d = encode_ranking(simulate(20, 120, seed=10)[0])
    np.testing.assert_allclose(poe_bt(d), poe_bt(d, solver="mm", tol=1e-12), atol=1e-8)
    np.testing.assert_allclose(
        poe_bt(d, gamma=0.3), poe_bt(d, gamma=0.3, solver="mm", tol=1e-12), atol=1e-8
    )


def test_poe_bt_map_is_a_stationary_point_centred_per_item(simulate):
    d = encode_ranking(simulate(20, 120, seed=11)[0])
    s = poe_bt(d)
    q = 1 / (1 + np.exp(-(s[d.i] - s[d.j])))
    np.testing.assert_allclose(_wt(d, d.p - q), 0.0, atol=1e-9)
    assert s.sum() == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize("method", ["poe-g", "poe-bt"])
def test_recovers_known_scores_on_a_dense_design(simulate, method):
    df, truth = simulate(50, 500, seed=12)
    d = encode_ranking(df)
    s = poe_gaussian(d) if method == "poe-g" else poe_bt(d)
    assert spearmanr(s, truth).statistic > 0.9


@pytest.mark.parametrize("method", ["poe-g", "poe-bt"])
def test_debiasing_removes_a_constant_position_bias(simulate, method):
    # the lower index always sits in position A, and the judge favours A by +1.5 logits
    df, truth = simulate(40, 300, seed=13, design="ordered", bias=1.5, noise=0.3)
    d = encode_ranking(df)
    fit = poe_gaussian if method == "poe-g" else poe_bt
    plain = spearmanr(fit(d), truth).statistic
    debiased = spearmanr(fit(d, debias=True), truth).statistic
    assert debiased > 0.9 and debiased > plain + 0.1


def test_gaussian_debiasing_is_exact_for_an_additive_bias(simulate):
    df, _ = simulate(30, 200, seed=14, design="ordered")
    shifted = df.assign(p_a=0.9 * df["p_a"] + 0.08)
    s0 = poe_gaussian(encode_ranking(df.assign(p_a=0.9 * df["p_a"])), debias=True)
    np.testing.assert_allclose(poe_gaussian(encode_ranking(shifted), debias=True), s0, atol=1e-12)


def test_newton_stops_at_round_off_without_a_convergence_warning():
    """A design where the objective flattens to round-off before the step falls below tol.

    The Armijo search used to halve every step to nothing there, spend all 100 iterations and
    warn "did not converge" at a solution 2e-9 from the maximum; warnings are errors here.
    """
    rng = np.random.default_rng(1)
    n = 25
    s = rng.normal(size=n)
    lo, hi = np.triu_indices(n, 1)
    pick = rng.choice(len(lo), 150, replace=False)
    i, j = lo[pick], hi[pick]
    p = 1 / (1 + np.exp(-(s[i] - s[j] + 1.2)))
    d = encode_ranking(pd.DataFrame({"item": 1, "a": [f"c{x:02d}" for x in i],
                                     "b": [f"c{x:02d}" for x in j], "p_a": p}))
    np.testing.assert_allclose(poe_bt(d, debias=True),
                               poe_bt(d, debias=True, solver="mm", tol=1e-13, max_iter=10**6), atol=1e-8)


def test_debias_leaves_the_gaussian_solution_unchanged_on_a_symmetric_set(simulate):
    df, _ = simulate(12, seed=15, design="full", bias=0.8)
    d = encode_ranking(df)
    assert d.is_symmetric()
    np.testing.assert_allclose(poe_gaussian(d, debias=True), poe_gaussian(d), atol=1e-12)


def test_poe_bt_debias_uses_gamma_minus_logit_mean_p_a8(simulate):
    d = encode_ranking(simulate(20, 100, seed=16, bias=0.7)[0])
    np.testing.assert_allclose(
        poe_bt(d, debias=True), poe_bt(d, gamma=-logit(d.p.mean())), atol=1e-12
    )


def test_poe_bt_clips_zero_and_one_with_a_warning_or_refuses():
    df = pd.DataFrame({"item": 1, "a": ["x", "y", "x"], "b": ["y", "z", "z"], "p_a": [1.0, 0.7, 0.0]})
    d = encode_ranking(df)
    with pytest.warns(ClippedProbabilityWarning, match="2 exactly 0 or 1"):
        s = poe_bt(d)
    assert np.isfinite(s).all()
    with pytest.raises(ValueError, match="defined only for 0 < p_ij < 1"):
        poe_bt(d, clip="error")


def test_poe_bt_without_clipping_refuses_a_map_that_does_not_exist():
    df = pd.DataFrame({"item": 1, "a": ["x", "y"], "b": ["y", "z"], "p_a": [1.0, 0.7]})
    with pytest.raises(ValueError, match="not strongly connected"):
        poe_bt(encode_ranking(df), clip="none")


def test_sparse_lu_fallback_when_cg_fails_gives_the_same_solution(simulate, monkeypatch):
    import bayes_judge.ranking.poe as poe

    d = encode_ranking(simulate(300, 3000, seed=17)[0])
    by_cg = poe_gaussian(d)
    monkeypatch.setattr(poe.spla, "cg", lambda A, b, **kw: (np.zeros_like(b), 1))
    np.testing.assert_allclose(poe_gaussian(d), by_cg, atol=1e-8)


def test_general_form_rejects_non_positive_variances(simulate):
    d = encode_ranking(simulate(5, 10, seed=18)[0])
    with pytest.raises(ValueError, match="f_sigma"):
        poe_gaussian(d, f_sigma=lambda p: p - 0.5)


def test_general_form_refuses_the_parameters_it_replaces(simulate):
    """f_mu replaces alpha and beta, f_sigma replaces sigma2: giving both is an error, not a no-op."""
    d = encode_ranking(simulate(5, 10, seed=18)[0])
    f_mu, f_sigma = (lambda p: p - 0.5), (lambda p: np.full_like(p, 0.3))
    for kw in ({"alpha": 2.0}, {"beta": 0.4}):
        with pytest.raises(ValueError, match="with f_mu give the mean directly"):
            poe_gaussian(d, f_mu=f_mu, **kw)
    with pytest.raises(ValueError, match="with f_sigma give the variances directly"):
        poe_gaussian(d, f_sigma=f_sigma, sigma2=2.0)
    # the linear form still takes them, with the defaults of eq. 12
    np.testing.assert_allclose(poe_gaussian(d, alpha=1.0, sigma2=1.0), poe_gaussian(d))
