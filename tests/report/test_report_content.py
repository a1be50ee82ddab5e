"""What the report says: sections, omitted notes, highlighted failures, escaping, inputs."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.report import inputs
from bayes_judge.report.sections import win_rate_position_bias


class _Tags(HTMLParser):
    """Collect tags and their attributes."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict]]:
    p = _Tags()
    p.feed(html)
    return p.tags


@pytest.fixture(scope="module")
def html(full_report) -> str:
    return full_report.read_text(encoding="utf-8")


def _run_block(html: str, name: str) -> str:
    """The HTML of one run's section (up to the next run or the comparison)."""
    start = html.index(f'<section class="run" id="{name}')
    nxt = html.find('<section class="run"', start + 1)
    end = nxt if nxt > 0 else html.index('id="model-comparison"')
    return html[start:end]


def test_report_is_self_contained(html):
    tags = _tags(html)
    assert not [t for t, _ in tags if t in ("script", "link", "iframe", "object")]
    for _, attrs in tags:
        for key in ("src", "href"):
            if key in attrs:
                assert attrs[key].startswith(("#", "data:image/png;base64,")), attrs[key]
    assert "http://" not in html and "https://" not in html


def test_run_names_are_escaped(html):
    assert "DS split &lt;MT-Bench&gt;" in html
    assert "<MT-Bench>" not in html


def test_sections_and_omitted_notes(html):
    ds = _run_block(html, "run1-")
    for title in ("Data summary", "Convergence", "Trace and rank plots", "Posterior win rates",
                  "Posterior predictive checks", "Prior vs posterior: judge accuracies"):
        assert f">{title}</h3>" in ds
    assert ds.count('class="omitted"') == 1  # only the ranking section
    assert "Not a ranking fit" in ds

    obs = _run_block(html, "run3-")
    assert "No sampler statistics" in obs
    assert "method=&#39;observed&#39; is not a generative model" in obs
    assert "stores no Beta priors" in obs

    rank = _run_block(html, "run4-")
    assert "Not a win-rate fit" in rank
    assert "stores no Beta priors" in rank
    assert "Scores, ranks and P(best)" in rank


def test_data_summary(html, ds_split_fit):
    ds = _run_block(html, "run1-")
    assert "rows of the judgments table" in ds
    assert re.search(r"human labels</td><td>200 \(not used by the model\)", ds)
    assert "6: ChatGPT/Vanilla_NoRules [G0 in A]" in ds
    # P(A) per judge from the swap="split" judges, and over all judges
    table = win_rate_position_bias(ds_split_fit)
    assert table is not None and "all judges" in table.index
    assert np.all((table["P(A)"] > 0) & (table["P(A)"] < 1))
    assert ">P(A)</th>" in ds

    labelled = _run_block(html, "run2-")
    assert re.search(r"human labels</td><td>120 \(used by the model\)", labelled)
    assert "data hash" in labelled  # read from disk: the manifest is shown
    assert ">P(A)</th>" in labelled  # from the position counts every win-rate fit keeps
    assert "Estimand: human" in labelled

    rank = _run_block(html, "run4-")
    assert "position bias P(A)" in rank and "γ" in rank


def test_failures_are_red_and_explained(html):
    ds = _run_block(html, "run1-")
    assert '<td class="fail num">' in ds
    assert "ESS &lt; 400 (bulk or tail)" in ds and "Increase draws=" in ds
    assert 'class="problems"' in ds and "Problems found" in ds
    assert 'class="badge fail"' in ds


def test_model_comparison_section(html):
    comp = html[html.index('id="model-comparison"'):]
    assert "Model comparison (LOO)" in comp
    assert "elpd_loo" in comp and "dawid-skene" in comp
    assert "LOO is unreliable for observed" in comp
    assert '<td class="fail">yes</td>' in comp


def test_same_seed_same_bytes_and_no_open_figures(ds_labels_fit, tmp_path):
    before = plt.get_fignums()
    a = bj.report(ds_labels_fit, tmp_path / "a.html", seed=3, max_draws_ppc=50).read_bytes()
    assert plt.get_fignums() == before  # every figure released
    b = bj.report(ds_labels_fit, tmp_path / "b.html", seed=3, max_draws_ppc=50).read_bytes()
    assert a == b


def test_accepted_inputs(ds_labels_fit, observed_fit, saved_run):
    one = inputs.collect_runs(observed_fit)
    assert [n for n, _ in one] == ["run 1 (observed)"]
    listed = inputs.collect_runs([observed_fit, observed_fit])
    assert [n for n, _ in listed] == ["run 1 (observed)", "run 2 (observed)"]
    named = inputs.collect_runs({"a": observed_fit, "b": str(saved_run)})
    assert [n for n, _ in named] == ["a", "b"]
    paths = inputs.collect_runs([saved_run, saved_run.with_suffix(".json")])
    assert [n for n, _ in paths] == ["ds_labels", "ds_labels #2"]
    assert all(isinstance(i, az.InferenceData) for _, i in paths)
    loaded = paths[0][1]
    np.testing.assert_allclose(loaded.posterior["p"], ds_labels_fit.posterior["p"])


def test_fit_kind(ds_labels_fit, ranking_fit):
    assert inputs.fit_kind(ds_labels_fit) == "win-rate"
    assert inputs.fit_kind(ranking_fit) == "ranking"
    other = az.from_dict(posterior={"mu": np.zeros((2, 10))})
    assert inputs.fit_kind(other) == "other"


def test_generic_fit_gets_generic_sections(tmp_path):
    rng = np.random.default_rng(0)
    idata = az.from_dict(posterior={"mu": rng.normal(size=(2, 100))})
    html = bj.report({"toy": idata}, tmp_path / "toy.html").read_text()
    assert "Not a win-rate fit" in html and "Not a ranking fit" in html
    assert "No sampler statistics" in html


@pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")
def test_an_uninformative_judge_is_a_red_problem(tmp_path):
    """Issue 30: a judge whose verdict follows the position (97% "A" in both orders) read from a
    CSV (no comparator attrs): the report names it as a problem, never a clean bill, and shows
    P(A) from the fit's position counts."""
    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75], swap=True, seed=2).drop(columns="human")
    stuck = df[df["judge"] == "judge0"].assign(judge="stuck")
    stuck["winner"] = np.where(np.random.default_rng(0).random(len(stuck)) < 0.97, "a", "b")
    path = tmp_path / "j.csv"
    pd.concat([df, stuck]).to_csv(path, index=False)
    fit = bj.win_rate(pd.read_csv(path), seed=0)
    out = bj.report({"stuck": fit}, tmp_path / "r.html")
    block = out.read_text(encoding="utf-8")
    assert "Judge &#39;stuck&#39; carries no information about the texts" in block
    assert 'class="badge fail"' in block and "Problems found" in block
    assert ">P(A)</th>" in block and "Estimand: human" in block


def test_names_with_dollar_signs_are_text_not_math(tmp_path):
    """Issue 31 (10): a system named model_$v1_$ crashed matplotlib's math-text parser; balanced
    $ rendered as math italics."""
    df = bj.simulate_win_rate(40, p=0.7, q0=[0.8, 0.75], swap=True, seed=2).drop(columns="human")
    df = df.replace({"a": {"G0": "model_$v1_$", "G1": "$x$"}, "b": {"G0": "model_$v1_$", "G1": "$x$"}})
    fits = {"dollars": bj.win_rate(df, seed=0),
            "board": bj.leaderboard(df, chains=2, draws=100, tune=100, seed=0)}
    out = bj.report(fits, tmp_path / "r.html")
    assert "model_$v1_$" in out.read_text(encoding="utf-8")


def test_the_answer_comes_first(html):
    """Issue 32: the overview opens the page with each run's answer (win rates with their
    intervals, the leaders, the best texts); the contents follow; in each run the estimates come
    before the data and the diagnostics."""
    overview = html[html.index('<section id="overview">'):html.index('<nav class="toc"')]
    assert "<th>answer</th>" in overview and re.search(r"over \S+: 0\.\d\d \[0\.\d\d, [01]\.\d\d\]", overview)
    assert html.index('<section id="overview">') < html.index('<nav class="toc"') < html.index('<section class="run"')
    first_run = re.search(r'<section class="run" id="([^"]+)"', html).group(1)
    block = _run_block(html, first_run)
    sections = re.findall(r'<section class="sub" id="[^"]+-([a-z-]+)"', block) or re.findall(
        rf'id="{first_run}-([a-z-]+)"', block)
    assert sections and sections[0] in ("estimates", "scores", "leaderboard"), sections


def test_a_laplace_fit_is_reported_by_its_own_check(tmp_path):
    """Draws of the Laplace approximation are not judged by R-hat and ESS (no chain ran): the report
    shows the approximation's verdict, and one that failed (k-hat > 0.7) is a problem, never 'all
    checks pass'."""
    import warnings

    from bayes_judge.leaderboard.simulate import THREE_JUDGES, simulate_leaderboard

    # judges of unequal accuracy, no labels, 375 battles a system: k-hat 1.2, no Gaussian follows
    lb, _ = simulate_leaderboard(40, 15000, **THREE_JUDGES,
                                 design="one-judge", seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bj.leaderboard(lb.drop(columns="human"), sampler="laplace", system_bias=False)
    assert "NOT corrected" in fit.attrs["approximate"]
    html = (bj.report({"lap": fit}, tmp_path / "r.html")).read_text()
    assert "all checks pass" not in html and "All convergence diagnostics pass" not in html
    assert "far from this posterior" in html and "Sampler, per chain" not in html


def test_a_no_label_win_rate_shows_its_prior_sensitivity_labels_to_decide_and_limits(tmp_path):
    """Issue 30: without labels the report shows how the interval moves with the bridge prior,
    how many labels would decide an undecided pair, names a pair judged on 3 items as a problem,
    and says why one judge's interval is the prior's."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        for j in range(3):
            w = "a" if rng.random() < 0.7 else "b"
            rows += [dict(item=i, a="A", b="B", judge=f"j{j}", winner=w),
                     dict(item=i, a="B", b="A", judge=f"j{j}", winner="b" if w == "a" else "a")]
    for i in range(3):
        for j, w in (("j0", "a"), ("j1", "b")):
            rows += [dict(item=100 + i, a="C", b="D", judge=j, winner=w),
                     dict(item=100 + i, a="D", b="C", judge=j, winner="b" if w == "a" else "a")]
    df = pd.DataFrame(rows)
    fit = bj.win_rate(df, seed=0)
    sens = json.loads(fit.attrs["prior_sensitivity"])
    block = bj.report({"nolabel": fit}, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Prior sensitivity: 90% equal-tailed interval" in block
    assert "90% equal-tailed interval of p per pair" in block  # the bridge's interval, not an HDI
    lo, hi = sens["x2"][0]
    assert f"[{lo:.3f}, {hi:.3f}]" in block  # the A vs B row, prior twice as wide
    n = int(bj.win_rate_summary(fit).loc["C vs D", "labels_to_decide"])
    assert f"cannot tell apart; about {n} labels would decide" in block
    assert "Judged on few items: C vs D (3)" in block and 'class="badge fail"' in block
    assert "One judge and no human label" not in block
    one = bj.win_rate(df[df["judge"] == "j0"], seed=0)
    assert "One judge and no human label" in bj.report({"one": one}, tmp_path / "o.html").read_text(encoding="utf-8")
    # one judge with labels: the labels calibrate it, nothing to say
    lab = bj.simulate_win_rate(80, p=0.7, q0=[0.85], seed=2)
    with_labels = bj.win_rate(lab, seed=0, chains=2, draws=200, tune=200)
    assert "One judge and no human label" not in bj.report({"lab": with_labels}, tmp_path / "l.html").read_text(
        encoding="utf-8")
