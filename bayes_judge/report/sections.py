"""The sections of one run's report, each a small function from a fit to :class:`Section` blocks."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from .. import plots
from ..summary import score_summary, verdict_labels, win_rate_summary
from . import diagnostics as dg
from .blocks import FAIL, WARN, Section, Table, Text, fmt, image, key_value_table, table_from_frame
from .inputs import RANKING, WIN_RATE
from .ppc import PPCCheck, ranking_checks, win_rate_checks, win_rate_ppc_applies

__all__ = ["build_sections", "Context"]

PPP_LOW, PPP_HIGH = 0.025, 0.975  # posterior predictive p-values outside flag a misfit
POSITION_WARN = 0.1  # |P(A) - 0.5| above this is highlighted


@dataclass
class Context:
    """One fit and what its sections share: kind, options, and the problems found so far."""

    id: str
    idata: az.InferenceData
    kind: str
    seed: int = 0
    hdi_prob: float = 0.94
    max_draws_ppc: int = 400
    problems: list[str] = field(default_factory=list)

    def section(self, key: str, title: str) -> Section:
        return Section(id=f"{self.id}-{key}", title=title)

    @property
    def attrs(self) -> dict:
        return dict(self.idata.attrs or {})

    @property
    def method(self) -> str:
        return str(self.attrs.get("method") or self.attrs.get("model") or "")


def _list(values, n: int = 8) -> str:
    values = [str(v) for v in values]
    more = f", … ({len(values)} in all)" if len(values) > n else ""
    return ", ".join(values[:n]) + more


# ---------------------------------------------------------------- data summary


def _fit_rows(ctx: Context) -> list[tuple[str, str]]:
    post = ctx.idata["posterior"]
    keys = ("method", "model", "ds_model", "prior", "sampler", "swap", "ties", "seed", "position_bias")
    rows = [(k, fmt(ctx.attrs[k])) for k in keys if k in ctx.attrs]
    rows.append(("chains × draws", f"{post.sizes['chain']} × {post.sizes['draw']}"))
    if "manifest" in ctx.attrs:
        man = json.loads(str(ctx.attrs["manifest"]))
        rows.append(("saved run", f"bayes_judge {man.get('bayes_judge_version', '?')}, "
                                  f"data hash {str(man.get('data_hash', ''))[:12]}"))
    return rows


def _win_rate_data_rows(ctx: Context) -> list[tuple[str, str]]:
    idata = ctx.idata
    post, obs, const = idata["posterior"], idata["observed_data"], idata["constant_data"]
    n_tot = obs["n_first"] + obs["n_second"]
    labels = const["human_label"].to_numpy()
    used = ctx.attrs.get("prior") == "in-distribution"
    systems = np.atleast_1d(ctx.attrs.get("systems", []))
    rows = [
        ("systems", _list(systems)),
        ("pairs", fmt(post.sizes["pair"])),
        ("items (pair × prompt)", fmt(obs.sizes["item"])),
        ("judges", f"{obs.sizes['judge']}: {_list(obs['judge'].to_numpy())}"),
        ("rows of the judgments table", fmt(ctx.attrs.get("n_rows"))),
        ("verdicts in the model", fmt(int(n_tot.sum()))),
        ("ties broken by a coin flip", fmt(ctx.attrs.get("n_random_ties"))),
        ("human labels", f"{int((labels >= 0).sum())} ({'used by' if used else 'not used by'} the model)"),
    ]
    if "n_tie" in const and float(const["n_tie"].sum()) > 0:
        rows.append(("ties left out", fmt(int(const["n_tie"].sum()))))
    return rows


def win_rate_position_bias(idata: az.InferenceData) -> pd.DataFrame | None:
    """P(A) per judge from a ``swap="split"`` fit: the share of verdicts for the system in position A.

    Returns None when the fit stores verdicts only in the pair's orientation.
    """
    judges = [str(j) for j in idata["observed_data"]["judge"].to_numpy()]
    tags = (" [G0 in A]", " [G0 in B]")
    if not any(j.endswith(tags) for j in judges):
        return None
    first = idata["observed_data"]["n_first"].sum("item").to_numpy()
    second = idata["observed_data"]["n_second"].sum("item").to_numpy()
    rows: dict[str, list[float]] = {}
    for e, j in enumerate(judges):
        if not j.endswith(tags):
            continue
        base = j[: -len(tags[0])]
        in_a = first[e] if j.endswith(tags[0]) else second[e]
        acc = rows.setdefault(base, [0.0, 0.0])
        acc[0] += in_a
        acc[1] += first[e] + second[e]
    out = pd.DataFrame(
        {"verdicts": [v[1] for v in rows.values()], "P(A)": [v[0] / v[1] for v in rows.values()]},
        index=pd.Index(list(rows), name="judge"),
    )
    total = out["verdicts"].sum()
    out.loc["all judges"] = [total, float((out["P(A)"] * out["verdicts"]).sum() / total)]
    return out


def _ranking_data_rows(ctx: Context) -> list[tuple[str, str]]:
    post = ctx.idata["posterior"]
    y = ctx.idata["observed_data"]["y"].to_numpy()
    items = pd.unique(np.asarray(post["item"].to_numpy(), dtype=object))
    rows = [
        ("items (contexts)", f"{len(items)}: {_list(items, 4)}"),
        ("candidates", fmt(post.sizes["candidate"])),
        ("comparisons", fmt(int(y.size))),
        ("judges", "not recorded (rankings pool all judges' comparisons)"),
        ("human labels", "not used by ranking models"),
        ("position bias P(A) (hard decisions, ties half)", fmt(float(y.mean()))),
    ]
    if "p" in ctx.idata["observed_data"]:
        rows.append(("mean soft P(A) (p_ij)", fmt(float(ctx.idata["observed_data"]["p"].mean()))))
    if "gamma" in post:
        g = post["gamma"].to_numpy().ravel()
        rows.append(("position-bias shift γ (posterior mean)",
                     f"{g.mean():.3f}, i.e. P(A wins | equal scores) = {1 / (1 + np.exp(-g.mean())):.3f}"))
    return rows


def data_section(ctx: Context) -> Section:
    """Fit settings, data sizes, human labels and position bias."""
    sec = ctx.section("data", "Data summary")
    rows = _fit_rows(ctx)
    if ctx.kind == WIN_RATE:
        rows += _win_rate_data_rows(ctx)
    elif ctx.kind == RANKING:
        rows += _ranking_data_rows(ctx)
    else:
        rows.append(("posterior variables", _list(ctx.idata["posterior"].data_vars)))
    sec.blocks.append(key_value_table(rows))
    if ctx.kind == WIN_RATE:
        bias = win_rate_position_bias(ctx.idata)
        if bias is None:
            sec.blocks.append(Text(
                "Position bias P(A): not available, the fit stores verdicts in the pair's "
                f"orientation (swap={ctx.attrs.get('swap', 'sum')!r}); fit with swap='split' to "
                "see it.", cls="note"))
        else:
            sec.blocks.append(table_from_frame(
                bias, caption="Position bias: share of verdicts for the system shown in position A "
                "(0.5 = no bias; amber beyond 0.5 ± 0.1)",
                cell_cls=lambda c, v: WARN if c == "P(A)" and abs(v - 0.5) > POSITION_WARN else ""))
    return sec


# ---------------------------------------------------------------- convergence


def _diag_cell_cls(c: str, v: object, t: dg.Thresholds = dg.DEFAULT) -> str:
    if not isinstance(v, int | float | np.number) or np.isnan(v):
        return ""
    bad = (c == "r_hat" and v > t.rhat_max) or (c in ("ess_bulk", "ess_tail") and v < t.ess_min)
    bad |= (c == "divergences" and v > 0) or (c == "bfmi" and v < t.bfmi_min)
    return FAIL if bad else ""


def _parameter_table(diag: pd.DataFrame, max_rows: int = 40) -> Table:
    fails = dg.parameter_fail_mask(diag).any(axis=1)
    note = ""
    shown = diag
    if len(diag) > max_rows:
        order = np.lexsort((-diag["r_hat"].fillna(0).to_numpy(), ~fails.to_numpy()))
        shown = diag.iloc[order[:max_rows]]
        note = (f"{len(diag)} parameters; showing the {max_rows} with failures first, then the "
                "largest R̂.")
    return table_from_frame(
        shown.drop(columns="variable"), caption="Parameters", note=note, cell_cls=_diag_cell_cls,
        max_rows=max_rows,
        formats={"r_hat": lambda v: fmt(v, 4)},
    )


def convergence_section(ctx: Context) -> Section:
    """R̂, ESS, MCSE per parameter; divergences and E-BFMI per chain; a sentence per failure."""
    sec = ctx.section("convergence", "Convergence")
    idata = ctx.idata
    var_names = dg.diagnostic_vars(idata)
    if not var_names:
        sec.omitted = "No posterior variables to diagnose."
        return sec
    diag = dg.parameter_diagnostics(idata, var_names)
    chains = dg.chain_diagnostics(idata)
    problems = dg.parameter_problems(diag, idata["posterior"].sizes["chain"], kind=ctx.kind,
                                     independent=chains is None)
    sec.blocks.append(_parameter_table(diag))
    if chains is None:
        sec.blocks.append(Text(
            "No sampler statistics: this fit draws independent samples (no NUTS), so there are no "
            "divergences or E-BFMI to check.", cls="note"))
    else:
        problems += dg.chain_problems(chains)
        sec.blocks.append(table_from_frame(chains, caption="Sampler, per chain", cell_cls=_diag_cell_cls))
    t = dg.DEFAULT
    sec.blocks.append(Text(
        f"Failures (red): R̂ > {t.rhat_max}, bulk or tail ESS < {t.ess_min:.0f}, any divergent "
        f"transition, E-BFMI < {t.bfmi_min}.", cls="note"))
    if problems:
        sec.blocks += [Text(p, cls="fail") for p in problems]
    else:
        sec.blocks.append(Text("All convergence diagnostics pass.", cls="ok"))
    ctx.problems += problems
    return sec


def trace_section(ctx: Context) -> Section:
    """Trace and rank plots of the parameters with the largest R̂."""
    sec = ctx.section("trace", "Trace and rank plots")
    params = plots.worst_parameters(ctx.idata, dg.diagnostic_vars(ctx.idata), max_params=4)
    if not params:
        sec.omitted = "No parameter varies across draws; nothing to plot."
        return sec
    sec.blocks.append(image(
        plots.plot_trace_rank(params), alt="trace and rank plots",
        caption=f"The {len(params)} parameters with the largest R̂. Good mixing: overlapping traces "
        "and flat, similar rank histograms for every chain."))
    return sec


# ---------------------------------------------------------------- estimates


def win_rate_section(ctx: Context) -> Section:
    """Posterior win rates with HDIs against the observed k (win-rate fits)."""
    sec = ctx.section("estimates", "Posterior win rates")
    if ctx.kind != WIN_RATE:
        sec.omitted = "Not a win-rate fit (no posterior p over pairs of systems)."
        return sec
    summ = win_rate_summary(ctx.idata, hdi_prob=ctx.hdi_prob)
    # compare_systems' verdicts, from this summary (compare_systems would recompute it)
    summ["verdict"] = verdict_labels(summ["hdi_low"], summ["hdi_high"], 0.5, list(summ["system_a"]),
                                     list(summ["system_b"]))
    sec.blocks.append(image(plots.plot_win_rates(summ), alt="posterior win rates",
                            caption=f"{ctx.hdi_prob:.0%} HDI of p per pair; crosses: observed k (eq. 4)."))
    cols = ["system_a", "system_b", "p_mean", "p_mode", "hdi_low", "hdi_high", "prob_gt_half",
            "k_observed", "verdict", "r_hat", "ess_bulk"]
    if ctx.method == "bwrs":
        cols.insert(-2, "frac_outside_unit")
        outside = summ[summ["frac_outside_unit"] > 0]
        for pair, row in outside.iterrows():
            msg = (f"BWRS draws of p outside [0, 1] for {pair}: {row['frac_outside_unit']:.1%} of them "
                   "(eq. 11 divides by q0 + q1 − 1, which the label counts let reach 0, so p's mean "
                   "need not exist). The interval shown is clipped to [0, 1] and the centre is the "
                   "median; add labels, or use the default estimator (method=None).")
            sec.blocks.append(Text(msg, cls="fail"))
            ctx.problems.append(msg)
    sec.blocks.append(table_from_frame(summ[cols], caption="bj.win_rate_summary", cell_cls=_diag_cell_cls))
    return sec


def score_section(ctx: Context) -> Section:
    """Score forest with rank intervals and P(best) (ranking fits)."""
    sec = ctx.section("scores", "Scores, ranks and P(best)")
    if ctx.kind != RANKING:
        sec.omitted = "Not a ranking fit (no posterior scores s over candidates)."
        return sec
    summ = score_summary(ctx.idata, hdi_prob=ctx.hdi_prob)
    n_items = summ["item"].nunique()
    shown = min(n_items, 4)
    sec.blocks.append(image(
        plots.plot_score_forest(summ, max_items=4), alt="score forest",
        caption=f"{ctx.hdi_prob:.0%} HDI of each score; right: mean rank [{ctx.hdi_prob:.0%} "
        f"interval] and P(best). Showing {shown} of {n_items} item(s)."))
    sec.blocks.append(table_from_frame(summ, caption="bj.score_summary", index=False,
                                       cell_cls=_diag_cell_cls))
    return sec


# ---------------------------------------------------------------- posterior predictive checks


def _ppc_table(checks: list[PPCCheck], hdi_prob: float, method: str,
               has_gamma: bool = False) -> tuple[pd.DataFrame, list[str]]:
    tail = (1 - hdi_prob) / 2
    frames = []
    for c in checks:
        lo, hi = np.quantile(c.replicated, [tail, 1 - tail], axis=0)
        frames.append(pd.DataFrame({
            "statistic": c.name, "row": c.labels, "observed": c.observed,
            "replicated mean": c.replicated.mean(axis=0), "interval low": lo, "interval high": hi,
            "ppp": c.ppp(),
        }))
    table = pd.concat(frames, ignore_index=True)
    extreme = (table["ppp"] < PPP_LOW) | (table["ppp"] > PPP_HIGH)
    table = table.iloc[np.argsort(-np.abs(table["ppp"].to_numpy() - 0.5), kind="stable")]
    flagged = table[extreme.loc[table.index]]
    problems = []
    for name, block in flagged.groupby("statistic", sort=False):
        rows = ", ".join(f"{r} (observed {fmt(o)}, ppp {p:.3f})" for r, o, p in
                         zip(block["row"][:5], block["observed"][:5], block["ppp"][:5], strict=True))
        problems.append(f"Posterior predictive check '{name}': the model does not reproduce "
                        f"{len(block)} row(s): {rows}. " + _ppc_advice(str(name), method, has_gamma))
    return table, problems


def _ppc_advice(statistic: str, method: str, has_gamma: bool = False) -> str:
    if has_gamma and statistic == "position A wins":
        return ("The fit already has a position-bias shift γ and still does not reproduce the share "
                "won by position A: the judge's position preference is stronger than a constant "
                "score shift can explain (a judge that nearly always picks A). Debias its "
                "probabilities before fitting (compare(..., debias='reweight'), seed 001 eq. 9) or "
                "use a better judge.")
    return _PPC_ADVICE.get((statistic, method)) or _PPC_ADVICE.get(statistic, "")


_PPC_ADVICE: dict = {
    ("agreement with the other judges", "independent"): (
        "Independent raters ignore that judges agree because they see the same true preference; "
        "a model with a latent truth (method='dawid-skene') explains agreement."),
    "agreement with the other judges": (
        "Dawid-Skene assumes the judges err independently given the true label; correlated "
        "errors (e.g. one judge's two presentation orders, swap='split') or a judge with a "
        "position bias break it. Try swap='sum', drop the judge, or add human labels."),
    "wins of the first system": "The fitted p and accuracies do not explain the verdict totals.",
    "wins per candidate": (
        "The scores do not explain these candidates' results; check for judges that disagree "
        "strongly or for intransitive preferences."),
    "position A wins": (
        "The share won by position A is not reproduced: fit with debias=True (a position-bias "
        "shift γ) or check the judge's prompt."),
}


def _has_comparisons(idata: az.InferenceData) -> bool:
    obs, const = getattr(idata, "observed_data", None), getattr(idata, "constant_data", None)
    return obs is not None and const is not None and "y" in obs and "i" in const and "j" in const


def ppc_section(ctx: Context) -> Section:
    """Replicated statistics from posterior draws against the observed ones."""
    sec = ctx.section("ppc", "Posterior predictive checks")
    if ctx.kind == WIN_RATE and win_rate_ppc_applies(ctx.idata):
        checks = win_rate_checks(ctx.idata, max_draws=ctx.max_draws_ppc, seed=ctx.seed)
    elif ctx.kind == RANKING and _has_comparisons(ctx.idata):
        checks = ranking_checks(ctx.idata, max_draws=ctx.max_draws_ppc, seed=ctx.seed)
    else:
        what = f"method={ctx.method!r}" if ctx.method else "this fit"
        sec.omitted = (f"Not applicable: {what} is not a generative model of the individual "
                       "verdicts (checked: Dawid-Skene and independent-raters win rates, Bayesian "
                       "rankings).")
        return sec
    sec.blocks.append(image(_ppc_figure(checks, ctx.hdi_prob), alt="posterior predictive checks",
                            caption=f"{ctx.hdi_prob:.0%} predictive intervals from "
                            f"{checks[0].replicated.shape[0]} replicated data sets (seed {ctx.seed}); "
                            "diamonds: observed (red: outside the interval)."))
    has_gamma = "gamma" in getattr(ctx.idata, "posterior", {})
    table, problems = _ppc_table(checks, ctx.hdi_prob, ctx.method, has_gamma)
    sec.blocks.append(table_from_frame(
        table.set_index("statistic"), caption="Observed vs replicated (ppp = P(T_rep ≥ T_obs))",
        note=f"Sorted by how extreme the ppp is; red: ppp < {PPP_LOW} or > {PPP_HIGH}.",
        cell_cls=lambda c, v: FAIL if c == "ppp" and (v < PPP_LOW or v > PPP_HIGH) else ""))
    sec.blocks += [Text(p, cls="fail") for p in problems]
    if not problems:
        sec.blocks.append(Text("Every checked statistic lies within its predictive interval.", cls="ok"))
    ctx.problems += problems
    return sec


def _ppc_figure(checks: list[PPCCheck], interval: float, max_rows: int = 30):
    heights = [0.9 + 0.3 * min(len(c.labels), max_rows) for c in checks]
    fig = plots.new_figure(9.0, sum(heights) + 0.3)
    axes = np.atleast_1d(fig.subplots(len(checks), 1, height_ratios=heights, squeeze=False)[:, 0])
    for ax, c in zip(axes, checks, strict=True):
        m = min(len(c.labels), max_rows)
        title = c.name + (f" (first {m} of {len(c.labels)})" if m < len(c.labels) else "")
        plots.plot_ppc(c.observed[:m], c.replicated[:, :m], c.labels[:m], title=title,
                       xlabel=c.xlabel, interval=interval, ax=ax)
    return fig


# ---------------------------------------------------------------- prior vs posterior


def _prior_posterior_table(idata: az.InferenceData, var_names: list[str]) -> pd.DataFrame:
    post, const = idata["posterior"], idata["constant_data"]
    dims = ("pair", "judge")
    rows = []
    for var in var_names:
        a = const[f"alpha_{var}"].transpose(*dims).to_numpy()
        b = const[f"beta_{var}"].transpose(*dims).to_numpy()
        x = post[var].transpose("chain", "draw", *dims).to_numpy()
        for g, pair in enumerate(post["pair"].to_numpy()):
            for e, judge in enumerate(post["judge"].to_numpy()):
                s = a[g, e] + b[g, e]
                prior_var = a[g, e] * b[g, e] / (s * s * (s + 1))
                d = x[:, :, g, e].ravel()
                rows.append({"variable": var, "pair": str(pair), "judge": str(judge),
                             "prior mean": a[g, e] / s, "prior sd": np.sqrt(prior_var),
                             "posterior mean": d.mean(), "posterior sd": d.std(ddof=1),
                             "contraction": 1 - d.var(ddof=1) / prior_var})
    return pd.DataFrame(rows).set_index("variable")


_PRIOR_MEANING = {
    "q0": "q0 = P(the judge prefers the pair's first system | a human does)",
    "q1": "q1 = P(the judge prefers the second system | a human does)",
    "q": "q = P(the judge agrees with the human), one accuracy for both classes",
    "k": "k = the judge's own rate of preferring the first system (independent raters)",
}


def prior_posterior_section(ctx: Context) -> Section:
    """Beta priors of the judges' accuracies (or rates) against their posteriors."""
    sec = ctx.section("prior", "Prior vs posterior: judge accuracies")
    var_names = plots.prior_vars(ctx.idata)
    if not var_names:
        sec.omitted = ("Not applicable: the fit stores no Beta priors of judge accuracies "
                       "(constant_data alpha_q0, beta_q0, ...; Dawid-Skene win-rate fits do).")
        return sec
    meaning = "; ".join(_PRIOR_MEANING[v] for v in var_names if v in _PRIOR_MEANING)
    sec.blocks.append(image(
        plots.plot_prior_posterior(ctx.idata, var_names=var_names, interval=ctx.hdi_prob),
        alt="prior vs posterior of the judges' accuracies",
        caption=f"Grey: Beta prior interval and mean; blue: posterior. {meaning}."))
    sec.blocks.append(table_from_frame(
        _prior_posterior_table(ctx.idata, var_names), caption="Contraction = 1 − posterior "
        "variance / prior variance: near 1 the data dominate, near 0 the prior does (amber below "
        "0.2).", cell_cls=lambda c, v: WARN if c == "contraction" and v < 0.2 else ""))
    return sec


SECTIONS: tuple[Callable[[Context], Section], ...] = (
    data_section, convergence_section, trace_section, win_rate_section, score_section,
    ppc_section, prior_posterior_section,
)


def build_sections(ctx: Context) -> list[Section]:
    """Every section of one run, in report order; problems collect in ``ctx.problems``."""
    return [make(ctx) for make in SECTIONS]
