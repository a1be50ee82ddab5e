import arviz as az
import numpy as np
import pandas as pd
import pytest


def simulate_comparisons(
    n: int,
    k: int | None = None,
    *,
    seed: int,
    design: str = "random",
    bias: float = 0.0,
    noise: float = 0.5,
    item: str = "q",
    prefix: str = "c",
) -> tuple[pd.DataFrame, np.ndarray]:
    """Seeded soft comparisons with known scores s ~ N(0, 1).

    ``p_ij = σ(s_i − s_j + bias + ε)``, ε ~ N(0, noise²).  Designs: ``"random"`` (k ordered pairs,
    random positions), ``"full"`` (all n(n−1) ordered pairs), ``"ordered"`` (k distinct pairs,
    the lower index always in position A: a position bias then favours low indices).
    Candidate ids are zero-padded so that sorting them keeps the truth's order.
    """
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n)
    if design == "full":
        i, j = np.nonzero(~np.eye(n, dtype=bool))
    elif design == "random":
        i = rng.integers(0, n, k)
        j = (i + rng.integers(1, n, k)) % n
    elif design == "ordered":
        lo, hi = np.triu_indices(n, 1)
        pick = rng.choice(len(lo), size=k, replace=False)
        i, j = lo[pick], hi[pick]
    else:
        raise ValueError(design)
    p = 1.0 / (1.0 + np.exp(-(s[i] - s[j] + bias + rng.normal(0.0, noise, len(i)))))
    width = len(str(n))
    df = pd.DataFrame(
        {
            "item": item,
            "a": [f"{prefix}{x:0{width}d}" for x in i],
            "b": [f"{prefix}{x:0{width}d}" for x in j],
            "p_a": p,
            "sample": np.arange(len(i)),
        }
    )
    return df, s


@pytest.fixture
def simulate():
    return simulate_comparisons


def assert_same_posterior_mean(a: np.ndarray, b: np.ndarray, *, z: float = 4.5, name: str = "") -> None:
    """Two samplers' posterior means agree within Monte Carlo error.

    ``a``, ``b`` : (chains, draws, ...) draws of the same quantity.  Each mean's standard error is
    ``sd / sqrt(ESS)`` (ArviZ's bulk ESS per element); the difference must stay below ``z`` times
    the standard error of the difference.  A fixed tolerance would ignore how well each sampler
    mixed: a sampler with ESS 30 passes or fails it by luck.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ess = [np.atleast_1d(az.ess(az.convert_to_dataset({"x": v}))["x"].to_numpy()) for v in (a, b)]
    var = [v.reshape(-1, *v.shape[2:]).var(0) for v in (a, b)]
    se = np.sqrt(var[0] / ess[0] + var[1] / ess[1])
    diff = np.abs(a.mean((0, 1)) - b.mean((0, 1)))
    assert np.all(diff < z * se), (name, diff, se, ess)


@pytest.fixture
def same_posterior_mean():
    return assert_same_posterior_mean
