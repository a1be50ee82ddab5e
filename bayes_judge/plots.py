"""Reusable diagnostic plots of fitted win rates and rankings.

Every function returns a :class:`matplotlib.figure.Figure` drawn on the Agg canvas without
touching ``pyplot``'s global state: no figure is registered with ``pyplot``, so nothing has to be
closed and the caller's backend is left alone.  In Jupyter the returned figure displays inline;
``fig.savefig(path)`` writes it.  Functions that take ``ax=`` draw into that axes instead and return
its figure, so panels can be combined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import arviz as az
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure, SubFigure
from scipy import stats

from .analysis.wording import HDI_PROB

__all__ = [
    "new_figure",
    "plot_win_rates",
    "plot_score_forest",
    "plot_ppc",
    "plot_prior_posterior",
    "prior_vars",
    "plot_trace_rank",
    "worst_parameters",
    "plot_leaderboard_forest",
    "plot_preference_matrix",
    "plot_judges",
]

# colours shared by every panel (matplotlib's default cycle, named)
_BLUE, _ORANGE, _RED, _GREY = "#1f77b4", "#ff7f0e", "#d62728", "#7f7f7f"


def new_figure(width: float, height: float) -> Figure:
    """A constrained-layout figure on its own Agg canvas (not registered with ``pyplot``).

    Parameters
    ----------
    width, height : float
        Size in inches.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _target(ax: Axes | None, width: float, height: float) -> tuple[Figure | SubFigure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(width, height)
    return fig, fig.add_subplot()


def _shorten(text: str, n: int = 48) -> str:
    """Cut the middle out of a long label, keeping both ends (ids often differ at the end)."""
    text = str(text)
    if len(text) <= n:
        return text
    head = (n - 1) // 2
    return text[:head] + "…" + text[len(text) - (n - 1 - head):]


def _win_rate_table(data: az.InferenceData | pd.DataFrame) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    from .analysis.summary import win_rate_summary

    return win_rate_summary(data)


@overload
def plot_win_rates(data: az.InferenceData | pd.DataFrame, *, ax: None = None) -> Figure: ...


@overload
def plot_win_rates(data: az.InferenceData | pd.DataFrame, *, ax: Axes) -> Figure | SubFigure: ...


def plot_win_rates(
    data: az.InferenceData | pd.DataFrame, *, ax: Axes | None = None
) -> Figure | SubFigure:
    """Posterior win rate of every pair with its interval, against the observed win rate k.

    Parameters
    ----------
    data : arviz.InferenceData or pandas.DataFrame
        A fit of :func:`bayes_judge.win_rate`, or its :func:`bayes_judge.win_rate_summary`
        (columns ``p_mean``, ``hdi_low``, ``hdi_high``, ``k_observed``; index = pair label).
    ax : matplotlib.axes.Axes, optional
        Draw here instead of in a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One row per pair: the interval of p (line: the summary's, an HDI or equal-tailed as the fit
        states), its posterior mean (dot) and the judges' observed
        win rate k (cross); the dashed line marks p = 0.5 (the systems equally good).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.simulate_win_rate(n_items=50, p=0.7, q0=[0.8, 0.9], seed=1)
    >>> fig = plot_win_rates(bj.win_rate(df, method="observed", draws=100, chains=2))
    >>> fig.axes[0].get_xlabel()
    'P(a human prefers the first system)'
    """
    table = _win_rate_table(data)
    n = len(table)
    fig, ax = _target(ax, 8.0, 1.2 + 0.45 * n)
    y = np.arange(n)[::-1]
    ax.hlines(y, table["hdi_low"], table["hdi_high"], color=_BLUE, lw=2.5, label="interval of p")  # HDI or equal-tailed, as the summary states
    ax.plot(table["p_mean"], y, "o", color=_BLUE, label="posterior mean of p")
    ax.plot(table["k_observed"], y, "x", color=_RED, ms=8, mew=2, label="observed k")
    ax.axvline(0.5, color=_GREY, ls="--", lw=1)
    lo = min(0.0, float(np.nanmin(table["hdi_low"])))
    hi = max(1.0, float(np.nanmax(table["hdi_high"])))
    ax.set_xlim(lo - 0.02, hi + 0.02)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(y, [_shorten(i) for i in table.index])
    judges = "estimand" in table.columns and (table["estimand"] == "judges").all()
    ax.set_xlabel("P(the judges prefer the first system)" if judges else "P(a human prefers the first system)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, fontsize="small")
    return fig


def plot_score_forest(
    data: az.InferenceData | pd.DataFrame, *, items: Sequence[str] | None = None, max_items: int = 4
) -> Figure:
    """Forest of candidate scores per item, annotated with rank intervals and P(best).

    Parameters
    ----------
    data : arviz.InferenceData or pandas.DataFrame
        A Bayesian ranking (:func:`bayes_judge.rank` with ``bayesian=True``) or its
        :func:`bayes_judge.score_summary`.
    items : sequence of str, optional
        Items (contexts) to draw, one panel each.  Default: the first ``max_items``.
    max_items : int
        Most panels drawn when ``items`` is not given.

    Returns
    -------
    matplotlib.figure.Figure
        Per item, candidates sorted by mean rank (best on top): score HDI (line) and mean (dot);
        the right axis gives ``mean rank [rank interval]`` and ``P(best)``.
    """
    if isinstance(data, pd.DataFrame):
        table = data
        _need_columns(table, ("item", "candidate", "mean", "hdi_low", "hdi_high", "mean_rank", "rank_low",
                              "rank_high", "p_best"), "plot_score_forest", "bj.score_summary of a Bayesian ranking")
    else:
        from .analysis.summary import score_summary

        table = score_summary(data)
    all_items = list(pd.unique(table["item"]))
    if items is None and (isinstance(max_items, bool) or not isinstance(max_items, int | np.integer) or max_items < 1):
        raise ValueError(f"max_items must be a positive number of panels, got {max_items!r}")
    chosen = list(items) if items is not None else all_items[:max_items]
    unknown = [i for i in chosen if str(i) not in {str(a) for a in all_items}]
    if not chosen or unknown:
        raise ValueError(f"items: {'none given' if not chosen else f'{unknown[:5]} not in the ranking'}; "
                         f"its items are {[str(a) for a in all_items[:10]]}" + ("..." if len(all_items) > 10 else ""))
    blocks = [table[table["item"].astype(str) == str(i)] for i in chosen]
    heights = [0.6 + 0.32 * len(b) for b in blocks]
    fig = new_figure(9.0, 0.4 + sum(heights))
    axes = np.atleast_1d(fig.subplots(len(blocks), 1, height_ratios=heights, squeeze=False)[:, 0])
    for ax, item, block in zip(axes, chosen, blocks, strict=True):
        _forest_panel(ax, str(item), block.sort_values("mean_rank"))
    axes[-1].set_xlabel("score (sum to zero within the item; higher is better)")
    return fig


def _forest_panel(ax: Axes, item: str, block: pd.DataFrame) -> None:
    n = len(block)
    y = np.arange(n)[::-1]
    ax.hlines(y, block["hdi_low"], block["hdi_high"], color=_BLUE, lw=2.5)
    ax.plot(block["mean"], y, "o", color=_BLUE, ms=5)
    ax.axvline(0.0, color=_GREY, ls=":", lw=1)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(y, [_shorten(c, 24) for c in block["candidate"]])
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    labels = [
        f"rank {m:.1f} [{lo:.0f}, {hi:.0f}]   P(best) {pb:.2f}"
        for m, lo, hi, pb in zip(
            block["mean_rank"], block["rank_low"], block["rank_high"], block["p_best"], strict=True
        )
    ]
    right.set_yticks(y, labels, fontsize="small")
    ax.set_title(f"item {_shorten(item, 70)}", loc="left", fontsize="medium")


@overload
def plot_ppc(
    observed: np.ndarray,
    replicated: np.ndarray,
    labels: Sequence[str],
    *,
    title: str = ...,
    xlabel: str = ...,
    interval: float = ...,
    ax: None = None,
) -> Figure: ...


@overload
def plot_ppc(
    observed: np.ndarray,
    replicated: np.ndarray,
    labels: Sequence[str],
    *,
    title: str = ...,
    xlabel: str = ...,
    interval: float = ...,
    ax: Axes,
) -> Figure | SubFigure: ...


def plot_ppc(
    observed: np.ndarray,
    replicated: np.ndarray,
    labels: Sequence[str],
    *,
    title: str = "",
    xlabel: str = "",
    interval: float = HDI_PROB,
    ax: Axes | None = None,
) -> Figure | SubFigure:
    """Observed statistics against their posterior predictive distribution.

    Parameters
    ----------
    observed : ndarray, shape (m,)
        The statistic on the data, one per label.
    replicated : ndarray, shape (n_draws, m)
        The same statistic on data sets simulated from posterior draws.
    labels : sequence of str, length m
        Row names.
    title, xlabel : str
        Panel title and axis label.
    interval : float
        Mass of the equal-tailed predictive interval drawn.
    ax : matplotlib.axes.Axes, optional
        Draw here instead of in a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One row per label: predictive interval (grey bar), predictive mean (grey tick) and the
        observed value (diamond, red where it falls outside the interval).
    """
    observed = np.asarray(observed, dtype=float)
    replicated = np.asarray(replicated, dtype=float)
    if replicated.ndim != 2 or replicated.shape[1] != observed.size or len(labels) != observed.size:
        raise ValueError(
            f"plot_ppc: observed has {observed.size} values, labels {len(labels)}, replicated shape "
            f"{replicated.shape}; expected (n_draws, {observed.size})"
        )
    m = observed.size
    fig, ax = _target(ax, 8.0, 1.2 + 0.32 * m)
    tail = (1 - interval) / 2
    lo, hi = np.quantile(replicated, [tail, 1 - tail], axis=0)
    y = np.arange(m)[::-1]
    ax.hlines(y, lo, hi, color=_GREY, lw=5, alpha=0.45, label=f"{interval:.0%} predictive interval")
    ax.plot(replicated.mean(axis=0), y, "|", color="#444444", ms=10, mew=2, label="predictive mean")
    outside = (observed < lo) | (observed > hi)
    ax.plot(observed[~outside], y[~outside], "D", color=_BLUE, ms=6, label="observed")
    if outside.any():
        ax.plot(observed[outside], y[outside], "D", color=_RED, ms=7, label="observed (outside)")
    ax.set_ylim(-0.7, m - 0.3)
    ax.set_yticks(y, [_shorten(s, 40) for s in labels], fontsize="small")
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, loc="left", fontsize="medium")
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=4, frameon=False, fontsize="x-small",
              borderaxespad=0.2)
    return fig


def prior_vars(idata: az.InferenceData) -> list[str]:
    """Posterior variables over (pair, judge) whose Beta prior is stored in ``constant_data``.

    Dawid-Skene stores ``alpha_q0``, ``beta_q0``, ``alpha_q1``, ``beta_q1`` (one-coin:
    ``alpha_q``, ``beta_q``); independent raters ``alpha_k``, ``beta_k``.
    """
    const = getattr(idata, "constant_data", None)
    if const is None:
        return []
    post = idata["posterior"]
    return [
        str(v) for v in post.data_vars  # ArviZ names variables with str
        if f"alpha_{v}" in const and f"beta_{v}" in const and set(post[v].dims) >= {"pair", "judge"}
    ]


def _prior_params(idata: az.InferenceData, var: str) -> tuple[np.ndarray, np.ndarray]:
    if var not in prior_vars(idata):
        raise ValueError(
            f"plot_prior_posterior: no prior parameters for {var!r} (constant_data alpha_{var} and "
            f"beta_{var}); Dawid-Skene and independent-raters win-rate fits store them"
        )
    const, dims = idata["constant_data"], ("pair", "judge")
    return (const[f"alpha_{var}"].transpose(*dims).to_numpy(),
            const[f"beta_{var}"].transpose(*dims).to_numpy())


def plot_prior_posterior(
    idata: az.InferenceData,
    *,
    var_names: Sequence[str] | None = None,
    interval: float = HDI_PROB,
    max_rows: int = 30,
) -> Figure:
    """Beta prior against the posterior of every judge's accuracies of a Dawid-Skene fit.

    Parameters
    ----------
    idata : arviz.InferenceData
        A Dawid-Skene fit of :func:`bayes_judge.win_rate`: posterior ``q0``, ``q1`` over
        (pair, judge) and their Beta priors in ``constant_data`` (``alpha_q0``, ``beta_q0``, ...).
    var_names : sequence of str, optional
        Variables to draw, one panel each.  Default: every one with a stored prior
        (:func:`prior_vars`: ``q0``, ``q1``; one-coin ``q``; independent raters ``k``).
    interval : float
        Mass of the equal-tailed intervals drawn.
    max_rows : int
        Most (pair, judge) rows drawn per panel.

    Returns
    -------
    matplotlib.figure.Figure
        One row per (judge, pair): the prior interval (wide grey bar) with its mean (grey tick)
        and the posterior interval (blue line) with its mean (dot).  A posterior as wide as its
        prior means the data said little about that accuracy.

    Raises
    ------
    ValueError
        The fit stores no prior parameters (BWRS, observed, rankings).
    """
    if var_names is None:
        var_names = prior_vars(idata) or ["q0"]  # "q0" only to raise the error below
    params = {var: _prior_params(idata, var) for var in var_names}
    post = idata["posterior"]
    pairs = [str(g) for g in post["pair"].to_numpy()]
    judges = [str(j) for j in post["judge"].to_numpy()]
    rows = [(g, e) for e in range(len(judges)) for g in range(len(pairs))][:max_rows]
    labels = [judges[e] + (f" | {pairs[g]}" if len(pairs) > 1 else "") for g, e in rows]
    fig = new_figure(4.0 * len(var_names) + 2.5, 1.1 + 0.3 * len(rows))
    axes = fig.subplots(1, len(var_names), squeeze=False, sharey=True)[0]
    y = np.arange(len(rows))[::-1]
    tail = (1 - interval) / 2
    for ax, var in zip(axes, var_names, strict=True):
        alpha, beta = params[var]
        a = np.array([alpha[g, e] for g, e in rows])
        b = np.array([beta[g, e] for g, e in rows])
        draws = post[var].transpose("chain", "draw", "pair", "judge").to_numpy()
        draws = draws.reshape(-1, len(pairs), len(judges))
        x = np.stack([draws[:, g, e] for g, e in rows], axis=1)
        ax.hlines(y, stats.beta.ppf(tail, a, b), stats.beta.ppf(1 - tail, a, b), color=_GREY, lw=6,
                  alpha=0.35, label="prior")
        ax.plot(a / (a + b), y, "|", color=_GREY, ms=12, mew=2)
        lo, hi = np.nanquantile(x, [tail, 1 - tail], axis=0)
        ax.hlines(y, lo, hi, color=_BLUE, lw=2, label="posterior")
        ax.plot(np.nanmean(x, axis=0), y, "o", color=_BLUE, ms=4)
        ax.set_xlim(0, 1)
        ax.set_title(f"{var} ({interval:.0%} intervals)", loc="left", fontsize="medium")
        ax.set_xlabel("accuracy" if var.startswith("q") else "probability")
    axes[0].set_ylim(-0.7, len(rows) - 0.3)
    axes[0].set_yticks(y, [_shorten(t, 44) for t in labels], fontsize="small")
    axes[-1].legend(loc="lower left", fontsize="x-small")
    return fig


def worst_parameters(
    idata: az.InferenceData, var_names: Sequence[str], *, max_params: int = 4
) -> dict[str, np.ndarray]:
    """The scalar parameters with the largest R-hat (smallest bulk ESS breaks ties).

    Parameters
    ----------
    idata : arviz.InferenceData
    var_names : sequence of str
        Posterior variables to consider.
    max_params : int

    Returns
    -------
    dict
        ``"name[coords]"`` -> draws of shape (chain, draw), worst first.  Constant and
        non-finite parameters are left out.
    """
    from .inference.mcmc_stats import flat_labels, rhat_ess_bulk

    post = idata["posterior"][list(var_names)]
    entries: list[tuple[float, float, str, np.ndarray]] = []
    for var in var_names:
        da = post[var].transpose("chain", "draw", ...)
        arr = da.to_numpy().reshape(da.sizes["chain"], da.sizes["draw"], -1)
        r, e = rhat_ess_bulk(arr)  # R-hat NaN with one chain: ordered by ESS alone
        for k, name in enumerate(flat_labels(str(var), da)):
            x = arr[..., k]
            if not np.isfinite(x).all() or np.ptp(x) == 0:
                continue
            entries.append((-np.nan_to_num(r[k]), np.nan_to_num(e[k], nan=np.inf), name, x))
    entries.sort(key=lambda t: (t[0], t[1]))
    return {name: x for _, _, name, x in entries[:max_params]}


def _rank_bars(ax, x: np.ndarray, bins: int = 20) -> None:
    """Rank bars of draws ``x`` (chain, draw) on ``ax``, as :func:`arviz.plot_rank` (``kind="bars"``)
    draws them (Vehtari et al. 2021, rank plots): the draws of all chains ranked together, one
    histogram of each chain's ranks (density), stacked with its mean as a dashed line.

    Drawn with numpy: ArviZ bins the ranks with a numba function that compiles, 3-4 s per input
    dtype, wherever numba's on-disk cache does not hold it yet (a fresh install, a read-only
    site-packages, a new ``NUMBA_CACHE_DIR``): the first report paid it.
    """
    from scipy.stats import rankdata

    ranks = rankdata(x, method="average").reshape(x.shape)
    edges = np.histogram_bin_edges(ranks, bins=bins, range=(0, ranks.size))
    centres, width, gap = (edges[1:] + edges[:-1]) / 2, edges[1] - edges[0], 2 / ranks.size
    ticks = []
    for c, row in enumerate(ranks):
        counts, _ = np.histogram(row, bins=edges, density=True)
        ticks.append(c * gap)
        ax.bar(centres, counts, bottom=ticks[-1], width=width, color=f"C{c}", edgecolor=ax.get_facecolor())
        ax.axhline(y=ticks[-1] + counts.mean(), color="k", linestyle="--", lw=0.8)
    ax.set_yticks(ticks, [str(c) for c in range(len(ticks))])


def plot_trace_rank(params: dict[str, np.ndarray]) -> Figure:
    """Trace (left) and rank bars (right, as :func:`arviz.plot_rank` draws them) of scalar parameters.

    Parameters
    ----------
    params : dict
        Name -> draws of shape (chain, draw), e.g. from :func:`worst_parameters`.

    Returns
    -------
    matplotlib.figure.Figure
        One row per parameter (rank bars: :func:`_rank_bars`).  Well-mixed chains overlap in the trace and have flat, similar
        rank histograms; a chain whose ranks pile up at one end explores another region.
    """
    if not params:
        raise ValueError("plot_trace_rank: no parameters to draw")
    n = len(params)
    fig = new_figure(10.0, 0.5 + 1.8 * n)
    fig.set_layout_engine(None)  # fixed margins: constrained layout doubles the drawing time here
    axes = fig.subplots(n, 2, squeeze=False, width_ratios=[1.4, 1.0])
    fig.subplots_adjust(left=0.06, right=0.98, top=1 - 0.35 / fig.get_figheight(),
                        bottom=0.45 / fig.get_figheight(), hspace=0.55, wspace=0.12)
    for row, (name, x) in enumerate(params.items()):
        ax = axes[row, 0]
        for c in range(x.shape[0]):
            ax.plot(x[c], lw=0.6, color=f"C{c}", alpha=0.85)
        ax.set_title(_shorten(name, 70), loc="left", fontsize="small")
        ax.tick_params(labelsize="small")
    for ax, x in zip(axes[:, 1], params.values(), strict=True):
        _rank_bars(ax, x)
        ax.set_title("rank bars per chain", loc="left", fontsize="small")
        ax.set_ylabel("chain", fontsize="small")
        ax.tick_params(labelsize="small")
    axes[-1, 0].set_xlabel("draw", fontsize="small")
    axes[-1, 1].set_xlabel("rank of the draw among all chains", fontsize="small")
    return fig


# ---------------------------------------------------------------- leaderboards


def _need_columns(table: pd.DataFrame, cols: Sequence[str], where: str, what: str) -> None:
    """A table passed to a plot has the columns the plot reads, or an error names them."""
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ValueError(f"{where}: the table lacks column(s) {missing}; pass {what}")


def _leaderboard_table(data: az.InferenceData | pd.DataFrame, hdi_prob: float) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        _need_columns(data, ("system", "mean", "hdi_low", "hdi_high", "rank_mean", "rank_low", "rank_high", "p_best"),
                      "plot_leaderboard_forest", "bj.leaderboard_summary of a leaderboard fit")
        return data
    from .leaderboard.summary import leaderboard_summary

    return leaderboard_summary(data, hdi_prob=hdi_prob)


def plot_leaderboard_forest(
    data: az.InferenceData | pd.DataFrame, *, hdi_prob: float = 0.9, max_systems: int = 50
) -> Figure:
    """Forest of a leaderboard's system scores, best on top, with rank intervals as text.

    Parameters
    ----------
    data : arviz.InferenceData or pandas.DataFrame
        A fit of :func:`bayes_judge.leaderboard`, or its :func:`bayes_judge.leaderboard_summary`
        (columns ``system``, ``mean``, ``hdi_low``, ``hdi_high``, ``rank_mean``, ``rank_low``,
        ``rank_high``, ``p_best``; ``tier`` optional).
    hdi_prob : float
        Mass of the score and rank intervals when ``data`` is a fit (a summary table brings its
        own); also the legend's label.
    max_systems : int
        Most systems drawn: the best ``max_systems`` by mean score.

    Returns
    -------
    matplotlib.figure.Figure
        One row per system, sorted by posterior mean score: the score interval (line) and mean
        (dot) on the logit scale of the human preference (σ(s_i − s_j) is the probability that a
        person prefers system i's answer to system j's); the right axis gives the interval as
        numbers, ``rank mean [rank interval]`` and ``P(best)``.  Alternating bands mark the tiers
        (systems a tier's leader does not beat with posterior probability 0.95).
    """
    if max_systems < 1:
        raise ValueError(f"plot_leaderboard_forest: max_systems must be at least 1, got {max_systems}")
    table = _leaderboard_table(data, hdi_prob).sort_values("mean", ascending=False, kind="stable")
    n_all = len(table)
    table = table.iloc[:max_systems]
    n = len(table)
    fig = new_figure(10.0, 1.3 + 0.3 * n)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    if "tier" in table.columns:
        tiers = table["tier"].to_numpy()
        for k in np.flatnonzero(tiers % 2 == 0):
            ax.axhspan(y[k] - 0.5, y[k] + 0.5, color=_GREY, alpha=0.12, lw=0)
    mass = table.attrs.get("hdi_prob") if isinstance(data, pd.DataFrame) else hdi_prob  # a table's own mass
    ax.hlines(y, table["hdi_low"], table["hdi_high"], color=_BLUE, lw=2.5,
              label=f"{mass:.0%} interval of the score" if mass is not None else "interval of the score")
    ax.plot(table["mean"], y, "o", color=_BLUE, ms=5, label="posterior mean")
    ax.axvline(0.0, color=_GREY, ls=":", lw=1)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(y, [_shorten(s, 28) for s in table["system"]], fontsize="small")
    ax.set_xlabel("score s (logit of the human preference; scores sum to zero)")
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    labels = [
        f"[{lo:+.2f}, {hi:+.2f}]  rank {m:5.1f} {f'[{rl:.0f}–{rh:.0f}]':<9} P(best) {pb:.2f}"
        for lo, hi, m, rl, rh, pb in zip(
            table["hdi_low"], table["hdi_high"], table["rank_mean"], table["rank_low"],
            table["rank_high"], table["p_best"], strict=True
        )
    ]
    right.set_yticks(y, labels, fontsize="small", family="monospace")
    title = "systems by posterior mean score" + (
        f" (the best {n} of {n_all})" if n < n_all else "")
    ax.set_title(title, loc="left", fontsize="medium")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2, frameon=False,
               fontsize="x-small")
    return fig


def _preference_table(data: az.InferenceData | pd.DataFrame, max_systems: int) -> tuple[pd.DataFrame, int]:
    """The square P(i ≻ j) table of the best ``max_systems`` systems (by mean score), and N."""
    if isinstance(data, pd.DataFrame):
        if list(data.index) != list(data.columns):
            raise ValueError("plot_preference_matrix: the table must be square with the same systems "
                             "as rows and columns (bj.pairwise_prob)")
        strength = data.mean(axis=1, skipna=True).sort_values(ascending=False, kind="stable")
        order = list(strength.index[:max_systems])
        out = data.loc[order, order]
        out.attrs = dict(data.attrs)
        return out, len(data)
    from .leaderboard.summary import pairwise_prob

    if "posterior" not in data.groups() or "s" not in data["posterior"] or "system" not in data["posterior"]["s"].coords:
        raise ValueError("plot_preference_matrix: pass a leaderboard fit (scores over systems) or a square table "
                         "such as bj.pairwise_prob's; a within-item ranking is drawn by plot_score_forest")
    s = data["posterior"]["s"]
    mean = s.mean(("chain", "draw")).to_numpy()
    systems = [str(x) for x in s["system"].to_numpy()]
    top = np.argsort(-mean, kind="stable")[:max_systems]
    sub = az.InferenceData(posterior=data["posterior"][["s"]].isel(system=top))
    sub.attrs["task"] = "leaderboard"
    table = pairwise_prob(sub, kind="preference")
    return table, len(systems)


def plot_preference_matrix(
    data: az.InferenceData | pd.DataFrame, *, max_systems: int = 40, annotate: bool | None = None
) -> Figure:
    """Heat map of P(i ≻ j): the probability that a person prefers system i's answer to j's.

    Parameters
    ----------
    data : arviz.InferenceData or pandas.DataFrame
        A fit of :func:`bayes_judge.leaderboard` (the posterior mean of σ(s_i − s_j), as
        ``bj.pairwise_prob(idata, kind="preference")``), or such a square table.
    max_systems : int
        Most systems drawn: the best ``max_systems`` by posterior mean score (for a table: by
        mean row value).
    annotate : bool, optional
        Write the value in every cell; default when at most 15 systems are drawn.

    Returns
    -------
    matplotlib.figure.Figure
        Rows i and columns j sorted best first; red above 0.5 (the row's system preferred), blue
        below; the diagonal is blank.
    """
    if max_systems < 2:
        raise ValueError(f"plot_preference_matrix: max_systems must be at least 2, got {max_systems}")
    table, n_all = _preference_table(data, max_systems)
    n = len(table)
    annotate = n <= 15 if annotate is None else annotate
    side = min(12.0, 2.5 + 0.32 * n)
    fig = new_figure(side + 1.5, side)
    ax = fig.add_subplot()
    values = table.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(values), vmin=0.0, vmax=1.0, cmap="RdBu_r")
    names = [_shorten(s, 24) for s in table.index]
    size = "small" if n <= 25 else "x-small"
    ax.set_xticks(range(n), names, rotation=90, fontsize=size)
    ax.set_yticks(range(n), names, fontsize=size)
    ax.set_xlabel("system j")
    ax.set_ylabel("system i")
    if annotate:
        for i in range(n):
            for j in range(n):
                if np.isfinite(values[i, j]):
                    ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize="x-small",
                            color="white" if abs(values[i, j] - 0.5) > 0.3 else "black")
    kind = table.attrs.get("kind", "preference") if isinstance(data, pd.DataFrame) else "preference"
    title = {"preference": "P(a person prefers row i's answer to column j's)",
             "order": "P(row i's score is above column j's): how sure the order is"}.get(kind, "P(i ≻ j)")
    if n < n_all:
        title += f": the best {n} of {n_all} systems"
    ax.set_title(title, loc="left", fontsize="medium")
    fig.colorbar(im, ax=ax, shrink=0.8, label="P(i ≻ j)")
    return fig


def plot_judges(table: pd.DataFrame) -> Figure:
    """Each judge's accuracy ``q`` and position bias ``beta`` with their intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`bayes_judge.leaderboard.judge_table`: column ``judge`` and, where the model has
        them, ``q_mean``, ``q_low``, ``q_high``, ``beta_mean``, ``beta_low``, ``beta_high``.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per parameter, one row per judge: accuracy on [0.5, 1] (P(the judge names the
        answer a person prefers), no position bias), position bias as a logit shift toward the
        answer shown first (0: none).

    Raises
    ------
    ValueError
        The table has neither ``q`` nor ``beta`` columns.
    """
    panels = [v for v in ("q", "beta") if f"{v}_mean" in table.columns]
    if not panels:
        raise ValueError("plot_judges: the table has no q_* or beta_* columns (bj.leaderboard.judge_table)")
    n = len(table)
    fig = new_figure(4.2 * len(panels) + 2.0, 1.1 + 0.3 * n)
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    y = np.arange(n)[::-1]
    for ax, var in zip(axes, panels, strict=True):
        ax.hlines(y, table[f"{var}_low"], table[f"{var}_high"], color=_BLUE, lw=2.5)
        ax.plot(table[f"{var}_mean"], y, "o", color=_BLUE, ms=5)
        if var == "q":
            ax.axvline(0.5, color=_GREY, ls="--", lw=1)
            ax.set_xlim(0.48, 1.01)
            ax.set_xlabel("accuracy q = P(names the preferred answer)")
        else:
            ax.axvline(0.0, color=_GREY, ls="--", lw=1)
            ax.set_xlabel("position bias β (logit shift toward A)")
        ax.set_title("accuracy q" if var == "q" else "position bias β", loc="left", fontsize="medium")
    axes[0].set_ylim(-0.7, n - 0.3)
    axes[0].set_yticks(y, [_shorten(j, 36) for j in table["judge"]], fontsize="small")
    return fig
