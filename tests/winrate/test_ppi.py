"""PPI / PPI++ for a mean and the labels-alone interval, against ppi_py and scipy."""

import numpy as np
import pytest
from scipy import stats

from bayes_judge.winrate.ppi import LabelsOnlyResult, PPIResult, labels_only_interval, ppi_mean

ppi_py = pytest.importorskip("ppi_py")

# the same formulas in floating point: agreement to rounding
RTOL, ATOL = 1e-10, 1e-12


def _data(seed: int, n: int, N: int, kind: str):
    """Seeded labelled / unlabelled samples: binary labels with a noisy judge, or Gaussian."""
    rng = np.random.default_rng(seed)
    m = n + N
    if kind == "binary":
        y = rng.binomial(1, 0.7, m).astype(float)
        # a biased judge: the share of 8 noisy verdicts that prefer G0
        f = rng.binomial(8, np.where(y == 1, 0.75, 0.35)) / 8.0
    else:
        x = rng.normal(size=m)
        y = 2.0 + x + rng.normal(scale=0.5, size=m)
        f = 1.5 + 0.8 * x
    return y[:n], f[:n], f[n:]


def _ref(y, f, fu, alpha, lam):
    est = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)))
    lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=alpha, lam=lam)
    return est, float(np.squeeze(lo)), float(np.squeeze(hi))


CASES = [(seed, n, N, kind) for seed in (0, 1, 2) for n, N in ((5, 60), (30, 400), (200, 2000)) for kind in ("binary", "gaussian")]


@pytest.mark.parametrize(("seed", "n", "N", "kind"), CASES)
@pytest.mark.parametrize("lam", [None, 1.0])
@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_matches_ppi_py(seed, n, N, kind, lam, alpha):
    y, f, fu = _data(seed, n, N, kind)
    r = ppi_mean(y, f, fu, alpha=alpha, lam=lam)
    est, lo, hi = _ref(y, f, fu, alpha, lam)
    assert r.estimate == pytest.approx(est, rel=RTOL, abs=ATOL)
    assert r.low == pytest.approx(lo, rel=RTOL, abs=ATOL)
    assert r.high == pytest.approx(hi, rel=RTOL, abs=ATOL)
    assert (r.n, r.N, r.alpha) == (n, N, alpha)
    z = stats.norm.ppf(1 - alpha / 2)
    assert r.high - r.low == pytest.approx(2 * z * r.se, rel=1e-12)


def test_tuned_string_equals_none_and_lam_is_clipped():
    y, f, fu = _data(3, 40, 500, "binary")
    a, b = ppi_mean(y, f, fu, lam="tuned"), ppi_mean(y, f, fu, lam=None)
    assert a == b
    assert 0.0 <= a.lam <= 1.0
    # anti-correlated predictions: the unclipped weight is negative, the tuned one is 0
    neg = ppi_mean(y, 1.0 - f, 1.0 - fu, lam="tuned")
    assert neg.lam == 0.0
    assert neg.estimate == pytest.approx(y.mean(), rel=1e-12)


def test_lam_zero_is_the_labels_clt_interval_and_constant_predictions_give_lam_zero():
    y, f, fu = _data(4, 25, 300, "binary")
    r = ppi_mean(y, f, fu, lam=0.0)
    assert r.estimate == pytest.approx(y.mean(), rel=1e-12)
    assert r.se == pytest.approx(y.std() / np.sqrt(y.size), rel=1e-12)
    c = ppi_mean(y, np.full(y.size, 0.6), np.full(fu.size, 0.6), lam="tuned")
    assert c.lam == 0.0
    assert c.estimate == pytest.approx(y.mean(), rel=1e-12)


def test_perfect_predictions_make_ppi_the_mean_of_the_predictions():
    y, _, fu = _data(5, 20, 300, "binary")
    r = ppi_mean(y, y, fu, lam=1.0)  # rectifier y - f == 0
    assert r.estimate == pytest.approx(fu.mean(), rel=1e-12)
    assert r.se == pytest.approx(fu.std() / np.sqrt(fu.size), rel=1e-12)


def test_coverage_near_nominal_with_many_labels():
    """2000 seeded replications, n = 200 labels: 90% intervals cover within 0.9 ± 0.02
    (3.0 binomial standard errors of a 2000-draw coverage)."""
    rng = np.random.default_rng(7)
    hits_ppi = hits_pp = 0
    reps, n, N, p = 2000, 200, 2000, 0.7
    for _ in range(reps):
        y = rng.binomial(1, p, n + N).astype(float)
        f = rng.binomial(6, np.where(y == 1, 0.7, 0.4)) / 6.0
        a = ppi_mean(y[:n], f[:n], f[n:], lam=1.0)
        b = ppi_mean(y[:n], f[:n], f[n:], lam="tuned")
        hits_ppi += a.low <= p <= a.high
        hits_pp += b.low <= p <= b.high
    assert abs(hits_ppi / reps - 0.9) < 0.02
    assert abs(hits_pp / reps - 0.9) < 0.02


def test_result_is_frozen():
    y, f, fu = _data(0, 10, 50, "binary")
    r = ppi_mean(y, f, fu)
    assert isinstance(r, PPIResult)
    with pytest.raises(AttributeError):
        r.estimate = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([], [], [0.5, 0.6]), {}, "at least 2 labelled"),
        (([1.0], [0.8], [0.5, 0.6]), {}, "at least 2 labelled.*labels_only_interval"),
        (([1.0, 0.0, 1.0], [0.8, 0.2], [0.5, 0.6]), {}, "3 labels and 2 predictions"),
        (([1.0, np.nan], [0.8, 0.2], [0.5, 0.6]), {}, "y_labelled contains 1 NaN.*index 1"),
        (([1.0, 0.0], [0.8, np.inf], [0.5, 0.6]), {}, "f_labelled contains 1 NaN or infinite"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, np.nan, 0.4]), {}, "f_unlabelled contains"),
        (([1.0, 0.0], [0.8, 0.2], [0.5]), {}, "at least 2 unlabelled"),
        (([[1.0, 0.0]], [0.8, 0.2], [0.5, 0.6]), {}, "one-dimensional"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, 0.6]), {"alpha": 0.0}, "alpha must lie strictly"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, 0.6]), {"alpha": 1.0}, "alpha must lie strictly"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, 0.6]), {"alpha": -0.1}, "alpha must lie strictly"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, 0.6]), {"alpha": float("nan")}, "alpha must lie strictly"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, 0.6]), {"lam": "auto"}, "lam must be a number"),
        (([1.0, 0.0], [0.8, 0.2], [0.5, 0.6]), {"lam": float("nan")}, "lam must be finite"),
    ],
)
def test_ppi_bad_inputs(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ppi_mean(*args, **kwargs)


# ---------------------------------------------------------------- labels alone


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 5), (3, 5), (5, 5), (7, 20), (140, 200)])
@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_labels_only_matches_scipy_exact_interval_and_beta_mean(k, n, alpha):
    y = np.r_[np.ones(k), np.zeros(n - k)]
    r = labels_only_interval(y, alpha=alpha)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    assert isinstance(r, LabelsOnlyResult)
    assert (r.k, r.n) == (k, n)
    assert r.low == pytest.approx(ref.low, abs=1e-12)
    assert r.high == pytest.approx(ref.high, abs=1e-12)
    assert r.estimate == pytest.approx(stats.beta(k + 1, n - k + 1).mean(), rel=1e-12)


def test_single_label_is_answered_honestly():
    r = labels_only_interval([1], alpha=0.1)
    assert (r.low, r.high) == (pytest.approx(0.05), 1.0)
    assert r.estimate == pytest.approx(2 / 3)
    r0 = labels_only_interval([False], alpha=0.1)
    assert (r0.low, r0.high) == (0.0, pytest.approx(0.95))


@pytest.mark.parametrize("n", [2, 10, 40])
def test_labels_only_exact_coverage_is_at_least_nominal(n):
    """Coverage computed exactly (sum over k of the binomial pmf) on a grid of true shares."""
    intervals = [labels_only_interval(np.r_[np.ones(k), np.zeros(n - k)], alpha=0.1) for k in range(n + 1)]
    for p in np.linspace(0.01, 0.99, 99):
        cover = sum(stats.binom.pmf(k, n, p) for k, r in enumerate(intervals) if r.low <= p <= r.high)
        assert cover >= 0.9 - 1e-9


@pytest.mark.parametrize(
    ("y", "alpha", "match"),
    [
        ([], 0.1, "at least one label"),
        ([1, 0.5], 0.1, "0 / 1 labels.*index 1"),
        ([1, 2], 0.1, "0 / 1 labels"),
        ([1, np.nan], 0.1, "NaN"),
        ([1, 0], 0.0, "alpha must lie strictly"),
        ([1, 0], 1.2, "alpha must lie strictly"),
    ],
)
def test_labels_only_bad_inputs(y, alpha, match):
    with pytest.raises(ValueError, match=match):
        labels_only_interval(y, alpha=alpha)


def test_labels_of_one_class_are_refused_not_collapsed():
    """Issue 31 (2): two or more labels of one class gave p = 1.0 [1.0, 1.0]."""
    import bayes_judge as bj
    from bayes_judge.winrate.ppi import ppi_mean

    with pytest.raises(ValueError, match="all 3 labels are 1"):
        ppi_mean(np.ones(3), np.ones(3), np.ones(10))
    df = bj.simulate_win_rate(60, p=0.95, q0=[0.9, 0.9], seed=1)
    df = df.assign(human=df["human"].where(df["item"].astype(int) < 12))
    if df.loc[df["human"].notna(), "human"].nunique() > 1:  # make the few labels one class
        df.loc[df["human"].notna(), "human"] = np.where(df.loc[df["human"].notna(), "a"] == "G0", "a", "b")
    with pytest.raises(ValueError, match="ppi, pair G0 vs G1: ppi_mean: all"):
        bj.win_rate(df, method="ppi")


def test_ppi_with_a_few_labels_is_refused():
    """Two labels the judges happened to match gave PPI 0.650 [0.621, 0.681] for a truth of 0.80."""
    import bayes_judge as bj

    df = bj.simulate_win_rate(300, p=0.85, q0=[0.75] * 3, seed=4)
    two = df.assign(human=df["human"].where(df["item"].astype(int).isin([0, 6])))
    with pytest.raises(ValueError, match="has 2 human label.*needs at least 10"):
        bj.win_rate(two, method="ppi")


def test_the_ppi_interval_stays_within_zero_and_one():
    """A rate near 1 gave PPI++'s normal interval past 1 (e.g. [0.93, 1.04]): cut to [0, 1]."""
    import bayes_judge as bj

    df = bj.simulate_win_rate(80, p=0.97, q0=[0.9, 0.9], seed=3)
    lab = df["item"].astype(int) < 30
    df = df.assign(human=df["human"].where(lab))
    assert df.loc[lab, "human"].nunique() == 2  # both classes: PPI answers
    fit = bj.win_rate(df, method="ppi", seed=0)
    est, se = fit.attrs["ppi_estimate"][0], fit.attrs["ppi_se"][0]
    assert est + 1.645 * se > 1.0  # the normal interval itself leaves [0, 1]
    s = bj.win_rate_summary(fit, hdi_prob=0.9)
    assert 0.0 <= s["hdi_low"].iloc[0] <= s["hdi_high"].iloc[0] <= 1.0
    # equal tails: the lower end is PPI's own (an HDI of the clipped draws moved it up, 0.927 -> 0.937)
    assert s["hdi_low"].iloc[0] == pytest.approx(est - 1.645 * se, abs=0.01)
