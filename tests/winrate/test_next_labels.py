"""bj.next_labels scores an item by the expected drop of Var(p) once its label is known."""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj


def _fit(h: np.ndarray, p: np.ndarray, label: np.ndarray):
    """A win-rate-like InferenceData with h_prob (1, S, U), p (1, S, 1), one pair."""
    U = h.shape[1]
    return az.from_dict(
        posterior={"h_prob": h[None], "p": p[None, :, None]},
        constant_data={"human_label": label, "item_pair": np.zeros(U, dtype=int)},
        coords={"item": [f"i{k}" for k in range(U)], "pair": ["G0 vs G1"]},
        dims={"h_prob": ["item"], "p": ["pair"], "human_label": ["item"], "item_pair": ["item"]},
    )


def test_score_is_the_expected_variance_drop():
    rng = np.random.default_rng(0)
    S, U = 4000, 6
    theta = rng.normal(0, 1, S)  # a parameter the labels would teach
    h = np.column_stack([
        np.full(S, 0.5),                     # i0: a coin, independent of theta
        1 / (1 + np.exp(-2 * theta)),        # i1: its label says much about theta
        1 / (1 + np.exp(-0.2 * theta)),      # i2: little
        np.full(S, 0.99),                    # i3: almost sure
        np.full(S, 0.5), np.full(S, 0.5),
    ])
    p = (h.sum(axis=1) + 0.3 * theta) / U  # p moves with theta
    label = np.array([-1, -1, -1, -1, 1, 0])
    out = bj.next_labels(_fit(h, p, label), 4).set_index("item")
    # brute force for item i1
    i = 1
    var = p.var()
    exp_var = 0.0
    for y, w in ((1, h[:, i]), (0, 1 - h[:, i])):
        x = p + (y - h[:, i]) / U
        w = w / w.sum()
        m = (w * x).sum()
        exp_var += (h[:, i].mean() if y else 1 - h[:, i].mean()) * (w * (x - m) ** 2).sum()
    np.testing.assert_allclose(out.loc["i1", "score"], var - exp_var, rtol=1e-10)
    assert out.index[0] == "i1"  # the informative label first
    assert out.loc["i1", "score"] > out.loc["i2", "score"] > out.loc["i3", "score"]
    assert out.loc["i0", "score"] > out.loc["i3", "score"]  # a coin's own variance still counts
    assert not {"i4", "i5"} & set(out.index)  # labelled items are never proposed


def test_items_of_a_several_pair_fit_are_named_by_their_own_ids():
    """A fit of several pairs holds items as "pair | item": next_labels gave that string as the item
    to label, which matches no row of the user's table."""
    rng = np.random.default_rng(1)
    rows = []
    for a, b in (("A", "B"), ("A", "C")):
        for i in range(30):
            human = ("a" if rng.random() < 0.7 else "b") if i < 6 else None  # q0-q5 labelled
            for j in range(3):
                w = "a" if rng.random() < 0.7 else "b"
                rows.append(dict(item=f"q{i}", a=a, b=b, judge=f"j{j}", winner=w, human=human))
    fit = bj.win_rate(pd.DataFrame(rows), method="dawid-skene", chains=2, draws=200, tune=200, seed=0)
    out = bj.next_labels(fit, 6)
    assert set(out["pair"]) <= {"A vs B", "A vs C"}
    assert all(i.startswith("q") and " | " not in i for i in out["item"])
    assert not set(out["item"]) & {f"q{i}" for i in range(6)}  # labelled already
    # the items of chosen pairs only (the undecided ones, say)
    only = bj.next_labels(fit, 6, pairs=pd.Index(["A vs C"]))
    assert len(only) == 6 and set(only["pair"]) == {"A vs C"}
    pd.testing.assert_frame_equal(bj.next_labels(fit, 6, pairs="A vs C"), only)  # one label, not its letters
    with pytest.raises(ValueError, match=r"pairs: \['B vs C'\] are not pairs of this fit"):
        bj.next_labels(fit, 3, pairs=["B vs C"])
