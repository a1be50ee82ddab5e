"""Real-data checks against seed 003's tables (protocol of §4.1; see benchmarks/reproduce_winrate.py)."""

import warnings

import numpy as np
import pytest

import bayes_judge as bj

SHARED8 = [f"{m}/{s}" for m in ("ChatGPT", "GPT-4", "LLaMA2", "PaLM2") for s in ("Vanilla_NoRules", "Metrics_Reference")]
LLMBAR8 = [f"{m}/{s}" for m in ("GPT-4", "PaLM2") for s in ("Vanilla_NoRules", "Metrics_Reference", "Metrics", "Reference")]
# Seed 003 Table 3, Dawid-Skene no prior, |p_mode - p|: where the seed beat observed k
SEED_DS_MODE = {"llmbar": 0.138, "llmeval2": 0.156}


def table3_errors(name, judges, reps=10):
    df = bj.load_dataset(name)
    ds, k = [], []
    for rep in range(reps):
        g = bj.assign_generators(df, share=0.8, seed=rep)
        # explicit: the package's default on a fully labelled table is the label regression
        fit = bj.win_rate(g, method="dawid-skene", ds_model="two-coin", prior="none", judges=judges, seed=rep)
        assert fit.attrs["model"] == "dawid-skene"
        s = bj.win_rate_summary(fit).iloc[0]
        ds.append(abs(s["p_mode"] - 0.8))
        k.append(abs(s["k_observed"] - 0.8))
    return np.mean(ds), np.mean(k)


@pytest.mark.parametrize("name, judges", [("llmbar", LLMBAR8), ("llmeval2", SHARED8)])
def test_dawid_skene_no_prior_at_least_as_good_as_seed(name, judges):
    ds, k = table3_errors(name, judges)
    assert ds < k, (ds, k)  # calibration helps, as in the seed
    assert ds <= SEED_DS_MODE[name], (ds, SEED_DS_MODE[name])


@pytest.mark.slow
@pytest.mark.parametrize("name, judges", [("llmbar", LLMBAR8), ("llmeval2", SHARED8), ("mtbench", SHARED8)])
def test_thirty_percent_labels_beat_k(name, judges):
    """Seed 003 §5.2: a prior data ratio of 30% suffices for both BWRS and Dawid-Skene."""
    df = bj.load_dataset(name)
    err = {"bwrs": [], "ds": [], "k": []}
    for rep in range(5):
        g = bj.assign_generators(df, share=0.8, seed=rep)
        items = np.random.default_rng(100 + rep).permutation(g["item"].unique())[: int(0.3 * g["item"].nunique())]
        g = g.assign(human=g["human"].where(g["item"].isin(items), None))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = bj.win_rate_summary(bj.win_rate(g, method="bwrs", prior="in-distribution", judges=judges, chains=1, draws=10_000, seed=rep)).iloc[0]
        d = bj.win_rate_summary(bj.win_rate(g, method="dawid-skene", prior="in-distribution", judges=judges, seed=rep)).iloc[0]
        err["bwrs"].append(abs(b["p_mode"] - 0.8))
        err["ds"].append(abs(d["p_mode"] - 0.8))
        err["k"].append(abs(d["k_observed"] - 0.8))
    m = {key: np.mean(v) for key, v in err.items()}
    assert m["bwrs"] < m["k"] and m["ds"] < m["k"], m
