"""``bj.report``: one self-contained HTML diagnostics report for one or more fits."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.wording import HDI_PROB, check_hdi_prob
from .blocks import FAIL, Run, Section, Text, table_from_frame
from .inputs import LEADERBOARD, RunInput, check_output_path, collect_runs, fit_kind
from .sections import Context, build_sections

__all__ = ["report", "render_html"]

TEMPLATE = "report.html"


def _slug(text: str, k: int) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]
    return f"run{k}-{s}" if s else f"run{k}"


def _answer(ctx: Context) -> str:
    """The run's answer in one line, for the overview: the win rates, the leaders, the best texts."""
    from ..analysis.summary import score_summary, win_rate_summary
    from ..leaderboard import leaderboard_summary
    from .inputs import RANKING, WIN_RATE

    pct = f"{ctx.hdi_prob:.0%}"
    try:
        if ctx.kind == WIN_RATE:
            s = win_rate_summary(ctx.idata, hdi_prob=ctx.hdi_prob)
            who = {"human": "people's rate", "judges": "the judges' rate"}.get(str(ctx.attrs.get("estimand", "")), "")
            parts = [f"{r.system_a} over {r.system_b}: {r.p_mean:.2f} [{r.hdi_low:.2f}, {r.hdi_high:.2f}]"
                     for r in s.head(3).itertuples()]
            more = f"; … ({len(s)} pairs)" if len(s) > 3 else ""
            return "; ".join(parts) + more + (f" ({who}, {pct} interval)" if who else f" ({pct} interval)")
        if ctx.kind == LEADERBOARD:
            s = leaderboard_summary(ctx.idata, hdi_prob=ctx.hdi_prob)
            top = ", ".join(f"{k + 1}. {r.system} (P(best) {r.p_best:.2f})" for k, r in enumerate(s.head(3).itertuples()))
            return top + (f", … ({len(s)} systems)" if len(s) > 3 else "") + (
                " — approximate (Laplace)" if ctx.attrs.get("approximate") else "")
        if ctx.kind == RANKING:
            s = score_summary(ctx.idata, hdi_prob=ctx.hdi_prob)
            best = s.sort_values("p_best", ascending=False).groupby("item", sort=False).head(1).head(3)
            parts = [f"{r.item}: {r.candidate} (P(best) {r.p_best:.2f})" for r in best.itertuples()]
            n_items = s["item"].nunique()
            return "best: " + "; ".join(parts) + (f"; … ({n_items} items)" if n_items > 3 else "")
    except (KeyError, ValueError, AttributeError):  # a fit without what its summary needs: no answer line
        return "—"
    return "—"


def _headline(ctx: Context) -> list[tuple[str, str]]:
    post = ctx.idata["posterior"]
    return [
        ("answer", _answer(ctx)),
        ("kind", ctx.kind),
        ("method", ctx.method or "—"),
        ("chains × draws", f"{post.sizes['chain']} × {post.sizes['draw']}"),
    ]


def _comparison_section(comparison: pd.DataFrame) -> Section:
    """The az.compare-style table of ``bj.compare_models``, with LOO warnings highlighted."""
    sec = Section(id="model-comparison", title="Model comparison (LOO)")
    if comparison.empty:
        sec.omitted = "The comparison table is empty."
        return sec

    def cls(col: str, val: object) -> str:
        bad = (col == "warning" and bool(val) is True) or (
            col == "n_pareto_k_high" and isinstance(val, int | float | np.number) and val > 0
        ) or (col == "verdict" and "unreliable" in str(val))
        return FAIL if bad else ""

    attrs = comparison.attrs or {}
    what = "; ".join(f"{k}: {attrs[k]}" for k in ("scores", "var_name", "ic") if k in attrs)
    sec.blocks.append(table_from_frame(
        comparison, caption="Expected log predictive density by PSIS-LOO, best model first",
        note=(f"Compared on {what}. " if what else "") + "elpd_diff is the difference to the "
        "best model and dse its standard error: differences within about two dse are not "
        "meaningful.", cell_cls=cls))
    if "warning" in comparison.columns:
        bad = [str(i) for i, w in zip(comparison.index, comparison["warning"], strict=True) if bool(w)]
        if bad:
            sec.blocks.append(Text(
                f"LOO is unreliable for {', '.join(bad)}: some Pareto k values exceed 0.7, so "
                "single observations dominate the estimate. Treat the ranking of these models "
                "with caution, or use K-fold cross-validation.", cls="fail"))
    return sec


def _environment():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("bayes_judge.report", "templates"),
        autoescape=jinja2.select_autoescape(["html"], default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(runs: Sequence[Run], *, title: str, comparison: Section | None = None) -> str:
    """Render the report page from built runs (the Jinja2 template autoescapes every value).

    Parameters
    ----------
    runs : sequence of Run
    title : str
    comparison : Section, optional

    Returns
    -------
    str
        The HTML document.
    """
    from .._version import __version__

    return _environment().get_template(TEMPLATE).render(
        title=title, runs=runs, comparison=comparison, version=__version__,
    )


def _build_run(k: int, name: str, idata, *, seed: int, hdi_prob: float | None, max_draws_ppc: int) -> Run:
    kind = fit_kind(idata)
    if hdi_prob is None:
        hdi_prob = HDI_PROB
    ctx = Context(_slug(name, k), idata, kind, seed=seed, hdi_prob=hdi_prob,
                  max_draws_ppc=max_draws_ppc)
    sections = build_sections(ctx)
    return Run(id=ctx.id, name=name, kind=ctx.kind, headline=_headline(ctx), problems=ctx.problems,
               sections=sections)


def report(
    idata_or_runs: RunInput | Sequence[RunInput] | Mapping[str, RunInput],
    path: str | os.PathLike,
    *,
    comparison: pd.DataFrame | None = None,
    title: str = "bayes_judge diagnostics report",
    seed: int = 0,
    hdi_prob: float | None = None,
    max_draws_ppc: int = 400,
) -> Path:
    """Write one self-contained HTML diagnostics report of one or more fits.

    Every run gets its own section with: a data summary (items, judges, human labels, position
    bias P(A) where the stored data allow it); a convergence table (R̂, bulk and tail ESS, MCSE
    of the mean; divergences and E-BFMI per chain) with failures in red and a sentence on what to
    do; trace and rank plots; posterior win rates with intervals against the observed k
    (win-rate fits) or a score forest with rank intervals and P(best) (rankings); posterior
    predictive checks; and the judges' accuracy priors against their posteriors (Dawid-Skene).
    A leaderboard (:func:`bayes_judge.leaderboard`) gets, after the data summary, convergence and
    trace plots: a forest of its systems' scores sorted by mean with rank intervals, P(best) and
    tiers; the heat map of P(i ≻ j), the probability that a person prefers system i's answer
    (the best 40 systems); and each judge's accuracy and position bias.  Sections that do not
    apply to a fit are replaced by a one-line note.  Plots are PNGs embedded as ``data:`` URIs:
    the file needs nothing else to display.

    Parameters
    ----------
    idata_or_runs : InferenceData, path, list of them, or dict name -> either
        Fits from :func:`bayes_judge.win_rate`, :func:`bayes_judge.rank` (``bayesian=True``) or
        :func:`bayes_judge.leaderboard`, or runs saved by :func:`bayes_judge.save_run`
        (``NAME.nc`` / ``NAME.json``, read with :func:`bayes_judge.load_run`).  A dict's keys
        name the runs.
    path : str or os.PathLike
        The HTML file to write; missing folders are created.
    comparison : pandas.DataFrame, optional
        An ``az.compare``-style table (e.g. from ``bj.compare_models``), shown as the section
        "Model comparison (LOO)".
    title : str
        Page title.
    seed : int
        Seed of the posterior predictive simulations (draw thinning and replicated data).
    hdi_prob : float, optional
        Mass of the intervals shown; default 0.9, as every summary
        (:data:`bayes_judge.analysis.wording.HDI_PROB`).
    max_draws_ppc : int
        Most posterior draws replicated per posterior predictive check.

    Returns
    -------
    pathlib.Path
        The written file.

    Raises
    ------
    TypeError
        ``idata_or_runs`` or one of its entries is not an InferenceData or a path; ``path`` is
        not a path; ``comparison`` is not a DataFrame.
    ValueError
        No runs; a run without a posterior group; a saved run this version cannot read (e.g.
        written by an incompatible version: the message names the run and the format);
        ``path`` is an existing folder or cannot be created or written (e.g. it lies under a
        file); ``hdi_prob`` outside (0, 1).
    FileNotFoundError
        A saved run's ``.nc`` or ``.json`` file is missing.

    See Also
    --------
    bayes_judge.plots : the figures of the report, one function each.
    win_rate_summary, score_summary : the tables of the report.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(n_items=60, p=0.7, q0=[0.8, 0.9], seed=1)
    >>> fit = bj.win_rate(df, method="dawid-skene", chains=2, draws=200, tune=200)
    >>> bj.report({"DS": fit}, "report.html")                       # doctest: +SKIP
    PosixPath('report.html')
    """
    out = check_output_path(path)
    if comparison is not None and not isinstance(comparison, pd.DataFrame):
        raise TypeError(f"report: comparison must be a pandas DataFrame (az.compare style), got "
                        f"{type(comparison).__name__}")
    if hdi_prob is not None:
        check_hdi_prob(hdi_prob, "report: ")
    if not isinstance(seed, int | np.integer):
        raise TypeError(f"report: seed must be an int, got {type(seed).__name__}")
    import matplotlib as mpl

    # names are text, never math: a system called "model_$v1_$" must not reach mathtext's parser
    with mpl.rc_context({"text.parse_math": False}):
        runs = [
            _build_run(k, name, idata, seed=int(seed), hdi_prob=hdi_prob, max_draws_ppc=max_draws_ppc)
            for k, (name, idata) in enumerate(collect_runs(idata_or_runs), start=1)
        ]
    comp = None if comparison is None else _comparison_section(comparison)
    page = render_html(runs, title=title, comparison=comp)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as err:
        raise ValueError(f"report: cannot write {out}: {err}") from err
    return out
