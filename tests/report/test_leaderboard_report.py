"""The report of a leaderboard fit (``bj.leaderboard``): its sections, names, judges and runs.

One small simulated leaderboard (6 systems, 150 prompts, 2 judges that see every comparison in
both orders; one of them favours position A) is fitted once per module, and once more with a
human label on 10% of the comparisons for the report of two runs.
"""

from __future__ import annotations

import re
from html import unescape

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge import plots
from bayes_judge.leaderboard import judge_table
from bayes_judge.leaderboard.simulate import simulate_leaderboard as simulate
from bayes_judge.report import inputs
from bayes_judge.report.sections import leaderboard_position_share

# the joint model's fixtures judge each comparison several times: its warning is asserted in its own test
pytestmark = pytest.mark.filterwarnings("ignore::bayes_judge.leaderboard.board.CountedTwiceWarning")

FAST = {"chains": 2, "draws": 200, "tune": 200, "seed": 0}
SYSTEMS = [f"sys-{k}" for k in range(6)]
STRENGTH = np.linspace(1.2, -1.2, len(SYSTEMS))  # sys-0 best
# judge name -> (accuracy q = sigmoid(alpha), position bias beta toward A)
JUDGES = {"judge-sharp": (0.85, 0.0), "judge-position<A>": (0.75, 1.0)}


def simulate_leaderboard(n_prompts: int = 150, seed: int = 0) -> pd.DataFrame:
    """One random pair of systems per prompt judged by every judge in both orders, drawn from the
    bt-judges model (:func:`bayes_judge.leaderboard.simulate.simulate_leaderboard`); ``human``
    holds the simulated person's preference on every row."""
    q, beta = np.array(list(JUDGES.values())).T
    df, _ = simulate(len(SYSTEMS), n_prompts, alpha=np.log(q / (1 - q)), beta=beta, tau=0.0, label_share=1.0,
                     scores=STRENGTH, systems=SYSTEMS, judges=list(JUDGES), seed=seed)
    return df


@pytest.fixture(scope="module")
def judgments() -> pd.DataFrame:
    return simulate_leaderboard()


@pytest.fixture(scope="module")
def board(judgments):
    """Judges only (the simulated human preference is dropped)."""
    return bj.leaderboard(judgments.drop(columns="human"), **FAST)


def _labelled(judgments: pd.DataFrame, **kw):
    """The judgments with a human label on 10% of the comparisons (15 of 150 prompts)."""
    prompts = judgments["item"].unique()
    labelled = set(np.random.default_rng(1).choice(prompts, size=len(prompts) // 10, replace=False))
    human = (judgments[judgments["item"].isin(labelled)]
             .drop_duplicates("item")[["item", "a", "b", "human"]])
    return bj.leaderboard(judgments.drop(columns="human"), human=human, **FAST, **kw)


@pytest.fixture(scope="module")
def board_labelled(judgments):
    return _labelled(judgments)


@pytest.fixture(scope="module")
def html(board, tmp_path_factory) -> str:
    path = bj.report(board, tmp_path_factory.mktemp("lb") / "leaderboard.html")
    return path.read_text(encoding="utf-8")


def _section(html: str, key: str) -> str:
    """The HTML of the first run's section ``key`` (up to the next section)."""
    start = re.search(rf'<section id="run1-[^"]*-{key}">', html).start()
    end = html.find("<section id=", start + 1)
    return html[start:end if end > 0 else len(html)]


def test_fit_kind_is_leaderboard(board):
    assert board.attrs["task"] == "leaderboard"
    assert inputs.fit_kind(board) == "leaderboard"


def test_sections_of_a_leaderboard(html):
    for title in ("Data summary", "Convergence", "Trace and rank plots",
                  "Leaderboard: scores, ranks and P(best)", "Pairwise preferences P(i ≻ j)",
                  "Judges: accuracy and position bias", "Posterior predictive checks"):
        assert f">{title}</h3>" in html, title
    # the win-rate, ranking and Beta-prior sections are not shown for a leaderboard
    for title in ("Posterior win rates", "Scores, ranks and P(best)</h3>",
                  "Prior vs posterior: judge accuracies"):
        assert f">{title}" not in html, title
    # the only section left out is the posterior predictive check, with its reason
    assert html.count('class="omitted"') == 1
    assert "Not available for leaderboards yet" in _section(html, "ppc")
    assert html.count('src="data:image/png;base64,') == 4  # trace, forest, heat map, judges


def test_leaderboard_section_lists_systems_best_first(html, board):
    sec = _section(html, "leaderboard")
    assert "90% HDI" in sec and "rank interval" in sec and "90% interval" in sec
    for name in SYSTEMS:
        assert f"<td>{name}</td>" in sec
    summ = bj.leaderboard_summary(board)
    rows = re.findall(r"<td>(sys-\d)</td>", sec)
    assert rows == list(summ["system"])  # sorted by posterior mean, as leaderboard_summary
    assert summ["mean"].is_monotonic_decreasing
    # the table shows the interval and the rank interval as text
    lo, hi = summ.loc[0, "hdi_low"], summ.loc[0, "hdi_high"]
    assert f"[{lo:+.2f}, {hi:+.2f}]" in sec
    r_lo, r_hi = summ.loc[0, "rank_low"], summ.loc[0, "rank_high"]
    assert (f"<td>{r_lo:.0f}–{r_hi:.0f}</td>" in sec) or (r_lo == r_hi and f"<td>{r_lo:.0f}</td>" in sec)
    assert f"Most likely best: {summ.loc[summ['p_best'].idxmax(), 'system']}" in sec


def test_preference_section(html):
    sec = _section(html, "preference")
    assert "kind=&#39;preference&#39;" in sec
    assert "All 6 systems, best first." in sec


def test_judges_table(html, board):
    sec = _section(html, "judges")
    assert "bj.leaderboard.judge_table" in sec
    assert "judge-sharp" in sec
    assert "judge-position&lt;A&gt;" in sec and "judge-position<A>" not in html  # escaped
    for col in ("q_mean", "q_low", "q_high", "beta_mean", "beta_low", "beta_high", "observed P(A)"):
        assert f"<th>{col}</th>" in sec
    # the biased judge's position bias is found and said in words
    table = judge_table(board, hdi_prob=0.9).set_index("judge")
    assert table.loc["judge-position<A>", "beta_low"] > 0
    assert "Position bias detected" in sec and "judge-position&lt;A&gt; (β = +" in sec
    if "delta" in board.posterior:  # each judge's own preference for systems (system_bias)
        assert "Judges&#39; own system preferences δ" in sec
        assert "<th>delta_mean</th>" in sec


def test_data_summary_and_convergence(html):
    data = _section(html, "data")
    assert "<td>6: sys-0, sys-1, sys-2, sys-3, sys-4, sys-5</td>" in data
    assert "<td>comparisons (prompt × pair of systems)</td><td>150</td>" in data
    assert "Observed position preference" in data
    # judges only: which scores, and the prior that carries the judges' reading over to people's
    text = unescape(data)
    assert "Estimand: human: people's scores without labels" in text
    assert "Prior of the score bridge:" in text and "LogNormal(log 1.35, 0.42)" in text
    conv = _section(html, "convergence")
    for col in ("r_hat", "ess_bulk", "ess_tail", "divergences", "bfmi"):
        assert f"<th>{col}</th>" in conv
    assert "s[sys-0]" in conv and "q[judge-sharp]" in conv and "beta[judge-sharp]" in conv


def test_position_share_from_counts(board, judgments):
    share = leaderboard_position_share(board)
    for judge in JUDGES:
        rows = judgments[judgments["judge"] == judge]
        assert share.loc[judge, "verdicts"] == len(rows)
        assert share.loc[judge, "P(A)"] == pytest.approx((rows["winner"] == "a").mean())
    assert share.loc["all judges", "verdicts"] == len(judgments)


def test_report_of_two_leaderboards_and_a_saved_run(board, board_labelled, judgments, tmp_path):
    # by default the labels calibrate the score bridge: the judges' reading and λ, τ are kept
    post = board_labelled.posterior
    assert {"s_judges", "bridge_lambda", "bridge_tau"} <= set(post)
    # the joint model (bridge=False): labels turn the judges' system preferences on; σ_δ = |u| is
    # kept, the signed u (whose sign, with delta_raw's, is arbitrary) is not
    joint = _labelled(judgments, bridge=False)
    assert "delta" in joint.posterior and "system_bias_signed" not in joint.posterior
    assert (joint.posterior["system_bias_sd"] >= 0).all()
    saved = bj.save_run(board_labelled, tmp_path / "runs" / "labelled")
    path = bj.report({"judges only": board, "10% human labels": board_labelled,
                      "saved <labelled>": saved, "joint": joint}, tmp_path / "two.html", hdi_prob=0.8)
    html = path.read_text(encoding="utf-8")
    assert html.count('<section class="run"') == 4
    assert html.count(">Leaderboard: scores, ranks and P(best)</h3>") == 4
    assert html.count(">Judges: accuracy and position bias</h3>") == 4
    assert "Prior of the score bridge, learnt from the labels:" in unescape(html)  # the calibrated fit says so
    assert "80% HDI" in html and "90% HDI" not in html  # an explicit hdi_prob applies to leaderboards
    assert "saved &lt;labelled&gt;" in html
    assert "<td>human labels</td><td>15</td>" in html


def test_leaderboard_next_to_other_fits(board, ranking_fit, tmp_path):
    html = bj.report({"board": board, "ranking": ranking_fit}, tmp_path / "mixed.html").read_text(
        encoding="utf-8")
    board_part = html[html.index('<section class="run" id="run1-'):html.index('<section class="run" id="run2-')]
    rank_part = html[html.index('<section class="run" id="run2-'):]
    assert "Leaderboard: scores, ranks and P(best)" in board_part and "90% HDI" in board_part
    assert "Leaderboard" not in rank_part and "90% HDI" in rank_part  # one default for every kind


def test_large_leaderboard_shows_the_best_40(tmp_path):
    """120 systems (posterior only, as a model without judges): the heat map keeps the best 40,
    the forest the best 50, and the judges' section says why it is empty."""
    import arviz as az
    import xarray as xr

    rng = np.random.default_rng(0)
    names = [f"model-{k:03d}" for k in range(120)]
    s = rng.normal(np.linspace(2, -2, 120), 0.3, size=(2, 100, 120))
    idata = az.InferenceData(posterior=xr.Dataset(
        {"s": (("chain", "draw", "system"), s)},
        coords={"chain": [0, 1], "draw": np.arange(100), "system": names}))
    idata.attrs.update(task="leaderboard", model="bt")
    html = bj.report(idata, tmp_path / "big.html").read_text(encoding="utf-8")
    assert "The best 40 of 120 systems by mean score" in html
    assert "the best 50 of 120" in html
    assert "has no per-judge accuracy or position bias" in html

    fig = plots.plot_preference_matrix(idata, max_systems=40)
    assert len(fig.axes[0].get_xticklabels()) == 40
    assert fig.axes[0].get_yticklabels()[0].get_text() == "model-000"
    fig = plots.plot_leaderboard_forest(idata, max_systems=10)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == "model-000"
    assert len(fig.axes[0].get_yticklabels()) == 10


def test_plots_of_a_fit(board):
    table = judge_table(board)
    fig = plots.plot_judges(table)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["accuracy q", "position bias β"]
    pp = bj.pairwise_prob(board, kind="preference")
    fig = plots.plot_preference_matrix(pp)
    assert len(fig.axes[0].texts) == 6 * 5  # annotated off the diagonal
    with pytest.raises(ValueError, match="no q_\\* or beta_\\* columns"):
        plots.plot_judges(table[["judge"]])
    # the title says what a table holds, the legend its own interval mass
    order = bj.pairwise_prob(board, kind="order")
    assert plots.plot_preference_matrix(order).axes[0].get_title(loc="left").startswith("P(row i's score is above")
    assert plots.plot_preference_matrix(pp).axes[0].get_title(loc="left").startswith("P(a person prefers")
    half = plots.plot_leaderboard_forest(bj.leaderboard_summary(board, hdi_prob=0.5))
    assert "50% interval of the score" in [t.get_text() for t in half.legends[0].get_texts()]


def test_most_likely_best_is_the_system_of_highest_p_best(board):
    """The table is sorted by mean score; the note named its first row 'most likely best' even
    where another system has the higher P(best) (a wide posterior that is often on top)."""
    from bayes_judge.report.sections import Context, leaderboard_section

    idata = board.copy()
    s = idata.posterior["s"]
    rng = np.random.default_rng(0)
    vals = np.full(s.shape, -3.0) + 0.01 * rng.standard_normal(s.shape)
    vals[..., 0] = 1.0  # sys-0: the highest mean, best only where sys-1 falls low
    vals[..., 1] = np.where(rng.random(s.shape[:2]) < 0.7, 1.2, 0.2)  # mean 0.9, best in ~70% of draws
    idata.posterior["s"] = s.copy(data=vals)
    summ = bj.leaderboard_summary(idata)
    assert summ["system"].iloc[0] == "sys-0" and summ["p_best"].idxmax() == summ.index[summ["system"] == "sys-1"][0]
    sec = leaderboard_section(Context("run1", idata, "leaderboard"))
    note = " ".join(getattr(b, "text", "") for b in sec.blocks)
    assert "Most likely best: sys-1 with P(best) = 0.7" in note
    assert "the highest mean score is sys-0's" in note
