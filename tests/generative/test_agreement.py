"""One agreement test per declared model: every sampler samples the same posterior.

nutpie (on the declaration, and on the registered fast path where there is one), PyMC's NUTS
and NumPyro's NUTS run the same PyMC declaration; posterior means of every sampled parameter
agree within their Monte Carlo standard errors (MCSE from ESS).
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

import bayes_judge as bj
from bayes_judge.generative import list_models
from bayes_judge.inference import fast_path, fit_model
from bayes_judge.inference.settings import Sampling
from bayes_judge.winrate.encode import VerdictPatterns, verdict_patterns

KW = dict(chains=2, draws=600, tune=600, seed=1)


@pytest.fixture(scope="module")
def win_rate_case():
    df = bj.simulate_win_rate(160, p=0.65, q0=[0.85, 0.7, 0.8], q1=[0.7, 0.8, 0.75], seed=5)
    df = df.assign(human=df["human"].where(df["item"] % 4 == 0, None))
    data = bj.encode_win_rate(df, ties="skip")
    return data


def _mean_mcse(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and its MCSE per scalar, from (chains, draws, ...) draws."""
    flat = draws.reshape(draws.shape[0], draws.shape[1], -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ess = np.array([float(az.ess(flat[:, :, i], method="mean")) for i in range(flat.shape[2])])
    return flat.mean(axis=(0, 1)), flat.std(axis=(0, 1)) / np.sqrt(ess)


def _variants(task: str, name: str, arrays=None, priors=None) -> list[tuple[str, bool]]:
    """nutpie, PyMC and NumPyro on the declaration, and nutpie's fast path where it takes the case."""
    out = [("nutpie", False), ("pymc", False), ("numpyro", False)]
    fp = fast_path(task, name)
    if fp is not None and (arrays is None or getattr(fp, "accepts", lambda p, o, a: True)(priors, {}, arrays)):
        out.insert(0, ("nutpie", True))
    return out


BUILTIN = ("dawid-skene", "one-coin", "consensus", "independent", "regression")


def _agree(spec, pat, coords, variants) -> None:
    """Fit ``pat`` with every (sampler, fast) of ``variants``; posterior means agree with the first's."""
    fits = {}
    for sampler, fast in variants:
        fit = fit_model(spec, pat.arrays(), dims=VerdictPatterns.DIMS, coords=coords,
                        sampling=Sampling(sampler, **KW), fast=fast)
        assert fit.fast == fast
        fits[(sampler, fast)] = fit
    ref_key = next(iter(fits))
    ref = fits[ref_key]
    for key, fit in fits.items():
        if key == ref_key:
            continue
        for var in ref.posterior:
            if var.endswith("__"):
                continue
            ma, sa = _mean_mcse(ref.posterior[var])
            mb, sb = _mean_mcse(fit.posterior[var])
            tol = 4.5 * np.sqrt(sa**2 + sb**2) + 1e-3
            assert (np.abs(ma - mb) < tol).all(), (spec.name, key, var, ma, mb, tol)
        assert fit.stats["diverging"].sum() <= 0.01 * fit.stats["diverging"].size, (spec.name, key)


@pytest.mark.parametrize("name", BUILTIN)
def test_samplers_agree(name, win_rate_case):
    """Every sampler on labelled data (a quarter of the items).  The consensus model's fast path is
    written for unlabelled data only: it is checked on the same data unlabelled against nutpie on
    the declaration, the program already compiled for the labelled fit (the declaration's other
    samplers agree on the labelled data)."""
    from bayes_judge.generative import get_model

    assert {m.name for m in list_models("win-rate")} >= set(BUILTIN)
    data = win_rate_case
    coords = {"pair": data.pair_labels, "judge": list(data.judges)}
    spec = get_model(name, "win-rate")
    pat = verdict_patterns(data, use_labels=True)
    variants = _variants("win-rate", name, pat.arrays(), spec.default_priors())
    assert (("nutpie", True) in variants) == (name in ("dawid-skene", "one-coin", "regression"))
    _agree(spec, pat, coords, variants)
    if name == "consensus":
        # _agree asserts that the fast path, not the declaration, ran with fast=True
        _agree(spec, verdict_patterns(data, use_labels=False), coords, [("nutpie", False), ("nutpie", True)])
