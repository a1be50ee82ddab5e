"""bayes_judge.plots: every function returns a Figure that pyplot never holds."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

import bayes_judge as bj
from bayes_judge import plots


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    before = plt.get_fignums()
    yield
    assert plt.get_fignums() == before


def _drawn(fig: Figure) -> Figure:
    fig.canvas.draw()  # layout and rendering succeed
    return fig


def test_plot_win_rates_from_fit_and_summary(observed_fit):
    fig = _drawn(plots.plot_win_rates(observed_fit))
    assert isinstance(fig, Figure)
    summ = bj.win_rate_summary(observed_fit)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(summ.index)
    fig2 = plots.plot_win_rates(summ)
    np.testing.assert_allclose(fig2.axes[0].lines[0].get_xdata(), summ["p_mean"])


def test_plot_score_forest(ranking_fit):
    fig = _drawn(plots.plot_score_forest(ranking_fit, max_items=1))
    assert len(fig.axes) == 2  # one item: the forest and its rank-label twin
    labels = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert all(lab.startswith("rank ") and "P(best)" in lab for lab in labels)
    items = list(bj.score_summary(ranking_fit)["item"].unique())
    fig = plots.plot_score_forest(bj.score_summary(ranking_fit), items=items)
    assert len(fig.axes) == 2 * len(items)
    for kw, match in ((dict(items=["nope"]), r"\['nope'\] not in the ranking"), (dict(items=[]), "none given"),
                      (dict(max_items=0), "max_items must be"), (dict(max_items=-1), "max_items must be")):
        with pytest.raises(ValueError, match=match):  # an empty panel, a matplotlib error, the last item dropped
            plots.plot_score_forest(ranking_fit, **kw)


def test_plot_ppc_marks_outside_values_red():
    rep = np.random.default_rng(0).normal(size=(500, 3))
    fig = _drawn(plots.plot_ppc(np.array([0.0, 0.1, 5.0]), rep, ["a", "b", "c"], title="t", xlabel="x"))
    labels = [ln.get_label() for ln in fig.axes[0].lines]
    assert "observed (outside)" in labels
    with pytest.raises(ValueError, match=r"observed has 2 values, labels 3"):
        plots.plot_ppc(np.zeros(2), rep, ["a", "b", "c"])


def test_plot_prior_posterior(ds_labels_fit, observed_fit):
    fig = _drawn(plots.plot_prior_posterior(ds_labels_fit))
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["q0 (90% intervals)", "q1 (90% intervals)"]
    with pytest.raises(ValueError, match="no prior parameters for 'q0'"):
        plots.plot_prior_posterior(observed_fit)


def test_worst_parameters_and_trace_rank(ds_labels_fit):
    params = plots.worst_parameters(ds_labels_fit, ["p", "q0", "q1"], max_params=3)
    assert len(params) == 3
    assert all(x.shape == (2, 200) for x in params.values())
    assert all(name.startswith(("p[", "q0[", "q1[")) for name in params)
    fig = _drawn(plots.plot_trace_rank(params))
    assert len(fig.axes) == 6
    with pytest.raises(ValueError, match="no parameters"):
        plots.plot_trace_rank({})


def test_rank_bars_show_a_chain_in_another_region():
    """Rank bars (as arviz.plot_rank draws them): 20 bins per chain, each chain's densities
    stacked 2/N apart with their mean (1/N) dashed; a shifted chain's ranks pile up at the top."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 200)) + np.array([0.0, 0.0, 0.0, 1.5])[:, None]
    fig = _drawn(plots.plot_trace_rank({"q0[j1]": x}))
    bars = fig.axes[1].patches
    assert len(bars) == 4 * 20
    heights = np.array([b.get_height() for b in bars]).reshape(4, 20)
    bottoms = np.array([b.get_y() for b in bars]).reshape(4, 20)
    np.testing.assert_allclose(bottoms[:, 0], 2 / x.size * np.arange(4))
    np.testing.assert_allclose(heights.mean(axis=1), 1 / x.size)  # a density over N ranks
    assert heights[3, -5:].sum() > 5 * heights[3, :5].sum()  # the shifted chain ranks high
    lines = [ln.get_ydata()[0] for ln in fig.axes[1].lines]
    np.testing.assert_allclose(lines, 2 / x.size * np.arange(4) + 1 / x.size)


def test_shorten_keeps_both_ends():
    s = plots._shorten("dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2 | M14", 24)
    assert len(s) == 24 and s.startswith("dm-test") and s.endswith("| M14")


def test_the_wrong_object_is_named(ranking_fit):
    """A point ranking's table, a ranking fit where a leaderboard is read, and the other way round
    ended in KeyError / AttributeError tracebacks from inside pandas."""
    import pandas as pd

    point = bj.rank(pd.DataFrame({"item": "q", "a": ["x", "y"], "b": ["y", "x"], "p_a": [0.7, 0.4]}),
                    method="win-ratio")
    for call, match in ((lambda: bj.next_comparisons(point, 2), "needs a posterior"),
                        (lambda: plots.plot_score_forest(point), "lacks column"),
                        (lambda: bj.leaderboard_summary(point), "not a leaderboard fit"),
                        (lambda: plots.plot_preference_matrix(ranking_fit), "pass a leaderboard fit"),
                        (lambda: plots.plot_leaderboard_forest(bj.score_summary(ranking_fit)), "lacks column")):
        with pytest.raises(ValueError, match=match):
            call()
