"""The sections of one run's report, each a small function from a fit to :class:`Section` blocks."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from .. import plots
from ..analysis.summary import score_summary, win_rate_summary
from ..analysis.wording import HDI_PROB, verdict_labels
from . import diagnostics as dg
from .blocks import FAIL, WARN, Section, Table, Text, fmt, image, key_value_table, table_from_frame
from .inputs import LEADERBOARD, RANKING, WIN_RATE
from .ppc import PPCCheck, ranking_checks, win_rate_checks, win_rate_ppc_applies

__all__ = ["build_sections", "Context"]

PPP_LOW, PPP_HIGH = 0.025, 0.975  # posterior predictive p-values outside flag a misfit
POSITION_WARN = 0.1  # |P(A) - 0.5| above this is highlighted
FEW_ITEMS = 10  # a win-rate pair judged on fewer items is named as a problem
PREFERENCE_MAX = 40  # systems shown in a leaderboard's P(i ≻ j) heat map
FOREST_MAX = 50  # systems drawn in a leaderboard's score forest


@dataclass
class Context:
    """One fit and what its sections share: kind, options, and the problems found so far."""

    id: str
    idata: az.InferenceData
    kind: str
    seed: int = 0
    hdi_prob: float = HDI_PROB
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
    if ctx.kind == LEADERBOARD:  # stored as 0 / 1
        rows = [(k, fmt(bool(int(ctx.attrs[k]))) if k == "position_bias" else v) for k, v in rows]
        if "system_bias" in ctx.attrs:
            rows.append(("system_bias", fmt(bool(int(ctx.attrs["system_bias"])))))
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


def uninformative_judges(attrs: dict) -> list[str]:
    """One problem per judge whose verdicts do not depend on the texts (``attrs["judge_diagnosis"]``,
    made by ``win_rate``, ``rank`` and ``leaderboard`` from the table itself)."""
    from ..diagnose import uninformative_judges as flagged

    return [f"Judge {j!r} carries no information about the texts: {why}. Its verdicts move the "
            "results by what they follow, not by the systems; leave it out or use another judge."
            for j, why in flagged(str(attrs.get("judge_diagnosis", "{}"))).items()]


def win_rate_position_bias(idata: az.InferenceData) -> pd.DataFrame | None:
    """P(A) per judge: the share of decided verdicts for the system in position A.

    From a ``swap="split"`` fit's per-order judges, else from the position counts every win-rate
    fit keeps (``attrs["position_counts"]``, the rows as judged).  None when neither is there.
    """
    import json

    judges = [str(j) for j in idata["observed_data"]["judge"].to_numpy()]
    tags = (" [G0 in A]", " [G0 in B]")
    if not any(j.endswith(tags) for j in judges):
        counts = json.loads(str((idata.attrs or {}).get("position_counts", "{}")) or "{}")
        counts = {j: c for j, c in counts.items() if c[1] > 0}
        if not counts:
            return None
        out = pd.DataFrame({"verdicts": [float(c[1]) for c in counts.values()],
                            "P(A)": [c[0] / c[1] for c in counts.values()]},
                           index=pd.Index(list(counts), name="judge"))
        if len(out) > 1:
            total = out["verdicts"].sum()
            out.loc["all judges"] = [total, float((out["P(A)"] * out["verdicts"]).sum() / total)]
        return out
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


def _leaderboard_data_rows(ctx: Context) -> list[tuple[str, str]]:
    idata, a = ctx.idata, ctx.attrs
    post = idata["posterior"]
    systems = [str(x) for x in post["system"].to_numpy()]
    judges = [str(x) for x in post["judge"].to_numpy()] if "judge" in post.coords else []
    rows = [
        ("systems", f"{len(systems)}: {_list(systems)}"),
        ("judges", f"{len(judges)}: {_list(judges)}" if judges else "—"),
        ("rows of the judgments table", fmt(a.get("n_rows"))),
        ("comparisons (prompt × pair of systems)", fmt(a.get("n_comparisons"))),
        ("human labels", fmt(a.get("n_labels"))),
        ("soft verdicts (p_a)", fmt(a.get("n_soft"))),
        ("ties", fmt(a.get("n_ties"))),
        ("cells of the likelihood", fmt(a.get("n_cells"))),
        ("per-prompt difficulty", fmt(bool(int(a.get("difficulty", 0))))),
    ]
    if a.get("covariates"):
        rows.append(("covariates (style control)", str(a["covariates"])))
    if "priors" in a:
        try:
            pri = json.loads(str(a["priors"]))
            rows.append(("priors", "; ".join(
                f"{k}: {v.get('family', '?')}(" + ", ".join(f"{p}={fmt(x)}" for p, x in v.items()
                                                          if p != "family") + ")"
                for k, v in pri.items() if isinstance(v, dict))))
        except (ValueError, AttributeError):
            rows.append(("priors", str(a["priors"])))
    return rows


def leaderboard_position_share(idata: az.InferenceData) -> pd.DataFrame | None:
    """Per judge of a leaderboard fit: verdicts and the share for the answer shown first (A).

    Read from the stored cell counts (``observed_data.v_counts`` with columns ``A, B, tie,
    soft_A, soft_B`` and ``constant_data.cell_judge``); soft verdicts count with their
    probability, ties half.  None when the fit does not store them.
    """
    obs, const = getattr(idata, "observed_data", None), getattr(idata, "constant_data", None)
    if obs is None or const is None or "v_counts" not in obs or "cell_judge" not in const:
        return None
    n = obs["v_counts"].transpose("cell", "outcome").to_numpy().astype(float)
    if n.shape[1] < 5:
        return None
    judge = const["cell_judge"].to_numpy().astype(int)
    post = idata["posterior"]
    names = ([str(x) for x in post["judge"].to_numpy()] if "judge" in post.coords
             else [str(k) for k in range(int(judge.max()) + 1 if judge.size else 0)])
    m = len(names)
    total = np.bincount(judge, weights=n.sum(axis=1), minlength=m)
    first = np.bincount(judge, weights=n[:, 0] + n[:, 3] + 0.5 * n[:, 2], minlength=m)
    ties = np.bincount(judge, weights=n[:, 2], minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = pd.DataFrame({"verdicts": total, "ties": ties, "P(A)": first / total},
                           index=pd.Index(names, name="judge"))
    if m > 1:
        all_tot = float(total.sum())
        out.loc["all judges"] = [all_tot, float(ties.sum()), float(first.sum()) / all_tot if all_tot else np.nan]
    return out


def data_section(ctx: Context) -> Section:
    """Fit settings, data sizes, human labels and position bias."""
    sec = ctx.section("data", "Data summary")
    rows = _fit_rows(ctx)
    if ctx.kind == WIN_RATE:
        rows += _win_rate_data_rows(ctx)
    elif ctx.kind == RANKING:
        rows += _ranking_data_rows(ctx)
    elif ctx.kind == LEADERBOARD:
        rows += _leaderboard_data_rows(ctx)
    else:
        rows.append(("posterior variables", _list(ctx.idata["posterior"].data_vars)))
    sec.blocks.append(key_value_table(rows))
    for msg in uninformative_judges(ctx.attrs):  # every kind; from the table itself: survives any round trip
        sec.blocks.append(Text(msg, cls="fail"))
        ctx.problems.append(msg)
    from ..diagnose import duplicate_message, one_order_message

    one_order = one_order_message(str(ctx.attrs.get("judge_diagnosis", "{}")))
    if one_order:
        sec.blocks.append(Text(f"Position bias not measured: {one_order}.", cls="note"))
    same = duplicate_message(str(ctx.attrs.get("judge_diagnosis", "{}")))
    if same:
        sec.blocks.append(Text(f"Identical judges: {same}.", cls="note"))
    if ctx.kind == LEADERBOARD:
        note = ctx.attrs.get("estimand_note")
        estimand = str(ctx.attrs.get("estimand", "human"))
        sec.blocks.append(Text(f"Estimand: {estimand}" + (f": {note}." if note else
                               ": people's scores." if estimand == "human" else ": the panel's own preference."),
                               cls="note"))
        if ctx.attrs.get("score_bridge"):
            learnt = int(ctx.attrs.get("n_labels", 0) or 0) > 0  # the labels updated it (calibrate_bridge)
            sec.blocks.append(Text(f"Prior of the score bridge{', learnt from the labels' if learnt else ''}: "
                                   f"{ctx.attrs['score_bridge']}.", cls="note"))
        bias = leaderboard_position_share(ctx.idata)
        if bias is not None:
            sec.blocks.append(table_from_frame(
                bias, caption="Observed position preference: share of each judge's verdicts for the "
                "answer shown first (A) (0.5 = none; amber beyond 0.5 ± 0.1)",
                note="Soft verdicts (p_a) count with their probability, ties half. A share away from "
                "0.5 is a position bias only when every system is shown first as often as second; "
                "the model's estimate, β, is in the judges' section.",
                cell_cls=lambda c, v: WARN if c == "P(A)" and abs(v - 0.5) > POSITION_WARN else ""))
    if ctx.kind == WIN_RATE:
        bias = win_rate_position_bias(ctx.idata)
        estimand = str(ctx.attrs.get("estimand", "human"))
        note = ctx.attrs.get("estimand_note")
        sec.blocks.append(Text(f"Estimand: {estimand}" + (f": {note}." if note else
                               ": the rate people would give." if estimand == "human" else "."), cls="note"))
        if ctx.attrs.get("bridge_prior"):
            sec.blocks.append(Text(f"Prior of the no-label human rate: {ctx.attrs['bridge_prior']}.", cls="note"))
        if bias is None:
            sec.blocks.append(Text(
                "Position bias P(A): not available, the table has no verdict that shows which system "
                "was in position A.", cls="note"))
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
    approx = str((idata.attrs or {}).get("approximate", ""))
    if approx:  # draws of the Laplace approximation: no chain ran, so R-hat, ESS and divergences say nothing
        failed = "NOT corrected" in approx
        sec.blocks.append(Text(f"{approx}. R̂, ESS and a sampler's statistics do not apply to these draws (no "
                               "chain ran); the importance weights' Pareto k̂ is the check.", cls="fail" if failed else "note"))
        if failed:
            ctx.problems.append("the Laplace approximation is far from this posterior (Pareto k̂ > 0.7): its "
                                "intervals can be off by more than half their width; fit with NUTS (the default)")
        return sec
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
                            caption=f"{ctx.hdi_prob:.0%} {'equal-tailed interval' if ctx.attrs.get('interval') == 'eti' else 'HDI'} "
                            "of p per pair; crosses: observed k (eq. 4)."))
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
    if "labels_to_decide" in summ.columns:  # a no-label human rate: what would decide an undecided pair
        cols.insert(cols.index("verdict") + 1, "labels_to_decide")
        undecided = summ["labels_to_decide"] > 0
        summ.loc[undecided, "verdict"] = [
            f"{v}; about {int(n)} labels would decide" for v, n in
            zip(summ.loc[undecided, "verdict"], summ.loc[undecided, "labels_to_decide"], strict=True)]
    sec.blocks.append(table_from_frame(summ[cols], caption="bj.win_rate_summary", cell_cls=_diag_cell_cls))
    sec.blocks.extend(_win_rate_limits(ctx, summ))
    return sec


def _win_rate_limits(ctx: Context, summ: pd.DataFrame) -> list:
    """What bounds a win rate's interval, said beside it: the no-label prior's sensitivity, one
    judge alone, pairs judged on few items."""
    out: list = []
    from ..analysis.summary import prior_sensitivity

    pairs = [str(x) for x in ctx.idata["posterior"]["p"]["pair"].to_numpy()]
    sens = prior_sensitivity(ctx.idata)
    if sens is not None:
        rows = {"pair": list(sens.index),
                "as fitted": [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(sens["fitted_low"], sens["fitted_high"],
                                                                        strict=True)]}
        for k in [c[len("low_prior_"):] for c in sens.columns if c.startswith("low_prior_")]:
            rows[f"prior's spreads {k[1:]}×"] = [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in
                                                 zip(sens[f"low_prior_{k}"], sens[f"high_prior_{k}"], strict=True)]
        out.append(table_from_frame(
            pd.DataFrame(rows), index=False,
            caption="Prior sensitivity: 90% equal-tailed interval of p as fitted, and with the bridge prior's "
            "spreads halved and doubled",
            note="Without labels the interval is as wide as the prior says the judges' consensus can lie from "
            "people's; a conclusion that changes across these columns rests on the prior, not on the verdicts."))
    n_items = ctx.attrs.get("n_items")
    if isinstance(n_items, str):
        n_items = json.loads(n_items)
    if n_items is not None and len(n_items) == len(pairs):
        few = [(pr, int(n)) for pr, n in zip(pairs, n_items, strict=True) if int(n) < FEW_ITEMS]
        if few:
            msg = ("Judged on few items: " + ", ".join(f"{pr} ({n})" for pr, n in few[:8])
                   + (f" and {len(few) - 8} more" if len(few) > 8 else "")
                   + f"; with under {FEW_ITEMS} items a pair's interval is wide for want of items, whatever the "
                   "judges say: judge more of its items.")
            out.append(Text(msg, cls="fail"))
            ctx.problems.append(msg)
    judges = ctx.idata["posterior"].coords.get("judge")
    n_judges = len(judges) if judges is not None else len(json.loads(str(ctx.attrs.get("judge_diagnosis") or "{}")))
    if n_judges == 1 and ctx.attrs.get("method") == "bridge":  # people's rate from the verdicts alone
        out.append(Text("One judge and no human label: nothing in the verdicts says how often it errs, so the "
                        "interval of people's rate is the bridge prior's spread around its rate.", cls="note"))
    return out


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


# ---------------------------------------------------------------- leaderboards


def _rank_text(lo: float, hi: float) -> str:
    return f"{lo:.0f}" if lo == hi else f"{lo:.0f}–{hi:.0f}"


def leaderboard_section(ctx: Context) -> Section:
    """Score forest of a leaderboard's systems (best first) with rank intervals, P(best), tiers."""
    from ..leaderboard.summary import leaderboard_summary

    sec = ctx.section("leaderboard", "Leaderboard: scores, ranks and P(best)")
    if ctx.kind != LEADERBOARD:
        sec.omitted = "Not a leaderboard fit (no posterior scores s over systems)."
        return sec
    summ = leaderboard_summary(ctx.idata, hdi_prob=ctx.hdi_prob)
    n = len(summ)
    shown = min(n, FOREST_MAX)
    sec.blocks.append(image(
        plots.plot_leaderboard_forest(summ, hdi_prob=ctx.hdi_prob, max_systems=FOREST_MAX),
        alt="leaderboard score forest",
        caption=f"{ctx.hdi_prob:.0%} HDI of each system's score, sorted by posterior mean "
        f"({'all ' + str(n) if shown == n else f'the best {shown} of {n}'} systems); right: the "
        f"interval, the mean rank [{ctx.hdi_prob:.0%} rank interval] and P(best). Grey bands mark "
        "alternate tiers. σ(s_i − s_j) is the probability that a person prefers system i's answer "
        "to system j's."))
    table = summ.copy()
    table.insert(4, f"{ctx.hdi_prob:.0%} interval", [
        f"[{lo:+.2f}, {hi:+.2f}]" for lo, hi in zip(summ["hdi_low"], summ["hdi_high"], strict=True)])
    table.insert(6, "rank interval", [
        _rank_text(lo, hi) for lo, hi in zip(summ["rank_low"], summ["rank_high"], strict=True)])
    table = table.drop(columns=["hdi_low", "hdi_high", "rank_low", "rank_high"])
    table.index = pd.RangeIndex(1, n + 1, name="#")
    sec.blocks.append(table_from_frame(
        table, caption="bj.leaderboard_summary", cell_cls=_diag_cell_cls,
        note="Tier: systems that the tier's leader does not beat with posterior probability 0.95 "
        "share its tier. Rank 1 is the best.", formats={"r_hat": lambda v: fmt(v, 4)}))
    n_tiers = int(summ["tier"].max())
    top = summ[summ["tier"] == 1]["system"].tolist()
    likely = summ.iloc[int(np.argmax(summ["p_best"].to_numpy()))]  # the table is sorted by mean score
    sec.blocks.append(Text(
        f"{n} systems in {n_tiers} tier(s); the first tier holds {len(top)}: {_list(top)}. "
        f"Most likely best: {likely['system']} with P(best) = {likely['p_best']:.2f}"
        + ("" if likely["system"] == summ["system"].iloc[0] else
           f" (the highest mean score is {summ['system'].iloc[0]}'s, P(best) = {summ['p_best'].iloc[0]:.2f})") + ".",
        cls="note"))
    return sec


def preference_section(ctx: Context) -> Section:
    """Heat map of P(i ≻ j) = E[σ(s_i − s_j)] between a leaderboard's best systems."""
    sec = ctx.section("preference", "Pairwise preferences P(i ≻ j)")
    if ctx.kind != LEADERBOARD:
        sec.omitted = "Not a leaderboard fit (no posterior scores s over systems)."
        return sec
    n = ctx.idata["posterior"].sizes["system"]
    shown = min(n, PREFERENCE_MAX)
    sec.blocks.append(image(
        plots.plot_preference_matrix(ctx.idata, max_systems=PREFERENCE_MAX),
        alt="pairwise preference probabilities",
        caption="Posterior mean of σ(s_i − s_j) (bj.pairwise_prob(idata, kind='preference')): the "
        "probability that a person prefers row i's answer to column j's on a prompt, for every "
        "pair, including pairs no judge compared. "
        + (f"All {n} systems, best first." if shown == n else
           f"The best {shown} of {n} systems by mean score, best first.")))
    return sec


def judges_section(ctx: Context) -> Section:
    """Each judge's accuracy q and position bias β with intervals (leaderboards)."""
    from ..leaderboard.summary import judge_table

    sec = ctx.section("judges", "Judges: accuracy and position bias")
    if ctx.kind != LEADERBOARD:
        sec.omitted = "Not a leaderboard fit."
        return sec
    table = judge_table(ctx.idata, hdi_prob=ctx.hdi_prob)
    if table.empty or len(table.columns) == 1:
        sec.omitted = (f"The model ({ctx.method or 'unknown'}) has no per-judge accuracy or position "
                       "bias" + ("" if int(ctx.attrs.get("position_bias", 1)) else
                                 " (fitted with position_bias=False)") + ".")
        return sec
    sec.blocks.append(image(
        plots.plot_judges(table), alt="judge accuracy and position bias",
        caption=f"{ctx.hdi_prob:.0%} HDI and posterior mean per judge."))
    share = leaderboard_position_share(ctx.idata)
    shown = table.set_index("judge")
    if share is not None:
        shown.insert(0, "verdicts", share["verdicts"].reindex(shown.index).to_numpy())
        shown["observed P(A)"] = share["P(A)"].reindex(shown.index).to_numpy()

    def cls(col: str, val: object) -> str:
        if not isinstance(val, int | float | np.number) or np.isnan(val):
            return ""
        if col == "q_mean" and val < 0.6:
            return WARN
        return ""

    parts = []
    if "q_mean" in shown:
        parts.append("q = σ(α): the probability that the judge names the answer a person prefers "
                     "(without position bias or ties); 0.5 is chance (amber below 0.6).")
    if "beta_mean" in shown:
        parts.append("β: the judge's shift toward the answer shown first, on the logit scale (0: "
                     "none); β > 0 favours position A.")
    sec.blocks.append(table_from_frame(shown, caption="bj.leaderboard.judge_table", note=" ".join(parts),
                                       cell_cls=cls))
    if "beta_low" in shown:
        biased = shown[(shown["beta_low"] > 0) | (shown["beta_high"] < 0)]
        if len(biased):
            sec.blocks.append(Text(
                f"Position bias detected ({ctx.hdi_prob:.0%} interval of β excludes 0) for "
                f"{len(biased)} judge(s): " + ", ".join(
                    f"{j} (β = {b:+.2f})" for j, b in zip(biased.index, biased["beta_mean"], strict=True))
                + ". The scores are corrected for it: each judge's shift is estimated from the "
                "comparisons it saw in both orders.", cls="note"))
    if "delta" in ctx.idata["posterior"]:
        sec.blocks += _system_bias_blocks(ctx)
    if not int(ctx.attrs.get("position_bias", 1)):
        sec.blocks.append(Text("Fitted with position_bias=False: the scores include whatever position "
                               "preference the judges have.", cls="note"))
    return sec


def _system_bias_blocks(ctx: Context, max_rows: int = 15) -> list:
    """The judges' largest own preferences for systems, δ (judge × system), beyond the human one."""
    post = ctx.idata["posterior"]
    delta = post["delta"]
    if set(delta.dims) != {"chain", "draw", "judge", "system"}:
        return []
    hdi = az.hdi(delta, hdi_prob=ctx.hdi_prob)["delta"]
    table = pd.DataFrame({
        "judge": np.repeat([str(j) for j in delta["judge"].to_numpy()], delta.sizes["system"]),
        "system": np.tile([str(x) for x in delta["system"].to_numpy()], delta.sizes["judge"]),
        "delta_mean": delta.mean(("chain", "draw")).transpose("judge", "system").to_numpy().ravel(),
        "delta_low": hdi.sel(hdi="lower").transpose("judge", "system").to_numpy().ravel(),
        "delta_high": hdi.sel(hdi="higher").transpose("judge", "system").to_numpy().ravel(),
    })
    table["excludes 0"] = (table["delta_low"] > 0) | (table["delta_high"] < 0)
    table = table.iloc[np.argsort(-np.abs(table["delta_mean"].to_numpy()), kind="stable")]
    n_sure = int(table["excludes 0"].sum())
    labelled = int(ctx.attrs.get("n_labels", 0) or 0)
    note = ("δ: the judge's own preference for a system beyond the human one, on the logit scale of "
            "its verdicts (centred per judge; δ > 0: the judge favours the system more than people "
            "do). Human labels tell δ apart from the human scores" + (
                "; this fit has none, so only the prior and the judges' disagreement bound it."
                if not labelled else "."))
    return [
        table_from_frame(table.head(max_rows).set_index("judge"),
                         caption=f"Judges' own system preferences δ: the {min(max_rows, len(table))} "
                         f"largest of {len(table)}", note=note,
                         cell_cls=lambda c, v: WARN if c == "excludes 0" and bool(v) else ""),
        Text(f"{n_sure} of {len(table)} (judge, system) preferences have a {ctx.hdi_prob:.0%} interval "
             "that excludes 0.", cls="note"),
    ]


# ---------------------------------------------------------------- posterior predictive checks


def _ppc_table(checks: list[PPCCheck], hdi_prob: float, method: str,
               has_gamma: bool = False, labels_hint: str = "") -> tuple[pd.DataFrame, list[str]]:
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
                        f"{len(block)} row(s): {rows}. " + _ppc_advice(str(name), method, has_gamma)
                        + (" " + labels_hint if labels_hint and name in _CORRELATION_CHECKS else ""))
    return table, problems


_CORRELATION_CHECKS = ("agreement with the other judges", "agreement between two judges", "order consistency")


def labels_needed(p: float, n_items: int, width: float, z: float = 1.6449) -> int:
    """Human labels on a random sample of ``n_items`` items that give the labels alone a normal
    interval of ``width`` around a win rate near ``p`` (``z``: 1.6449 for 90%), with the
    finite-population correction (``p`` is the share of *these* items a human prefers G0 on):
    ``n0 = (2 z)² p (1 − p) / width²``, ``n = n0 / (1 + (n0 − 1) / n_items)``, at most ``n_items``."""
    n0 = (2.0 * z) ** 2 * p * (1.0 - p) / width**2
    return int(min(n_items, math.ceil(n0 / (1.0 + (n0 - 1.0) / max(n_items, 1)))))


def _labels_hint(idata: az.InferenceData) -> str:
    """How many human labels settle a win rate whose judges err together (from the fit's p̂)."""
    post = getattr(idata, "posterior", None)
    const = getattr(idata, "constant_data", None)
    if post is None or "p" not in post or const is None or "item_pair" not in const:
        return ""
    p = np.atleast_1d(post["p"].mean(("chain", "draw")).to_numpy())
    items = np.bincount(const["item_pair"].to_numpy().astype(int), minlength=p.size)
    g = int(np.argmax(p * (1 - p) * (items > 0)))  # the pair nearest 1/2 needs the most
    n_items, pg = int(items[g]), float(np.clip(p[g], 0.05, 0.95))
    n2, n1 = labels_needed(pg, n_items, 0.2), labels_needed(pg, n_items, 0.1)
    return (f"Human labels settle it: at p ≈ {pg:.2f} over {n_items} items, {n2} labelled items give the "
            f"labels alone a 90% interval about 0.2 wide and {n1} one about 0.1 wide; bj.win_rate(df) with "
            "them in a human column (the label regression) also uses the judges, and on 7 real judge "
            "sets its 90% intervals covered the truth 94-96% of the time with 5-30% of the items "
            "labelled (benchmarks/results/real_calibration_labels20.md). bj.next_labels(idata, n) "
            "names the items to label first.")


def _ppc_advice(statistic: str, method: str, has_gamma: bool = False) -> str:
    if has_gamma and statistic == "position A wins":
        return ("The fit already has a position-bias shift γ and still does not reproduce the share "
                "won by position A: the judge's position preference is stronger than a constant "
                "score shift can explain (a judge that nearly always picks A). Debias its "
                "probabilities before fitting (compare(..., debias='reweight'), Liusie, Manakul & Gales 2024 eq. 9) or "
                "use a better judge.")
    return _PPC_ADVICE.get((statistic, method)) or _PPC_ADVICE.get(statistic, "")


_PPC_ADVICE: dict = {
    ("agreement with the other judges", "independent"): (
        "Independent raters ignore that judges agree because they see the same true preference; "
        "a model with a latent truth (method='dawid-skene') explains agreement."),
    "agreement with the other judges": (
        "Dawid-Skene assumes the judges err independently given the true label; correlated "
        "errors (e.g. one judge's two presentation orders, swap='split') or a judge with a "
        "position bias break it, and the win rate's interval is then too narrow. Try swap='sum' "
        "or drop the judge; without labels, the consensus model (bj.win_rate(df) with no method) "
        "does not trust the judges' agreement."),
    "agreement between two judges": (
        "These judges agree more (or less) often than judges that err independently given the "
        "true label would: their errors are correlated, so their agreement is counted as more "
        "evidence than it is, and the win rate's interval is too narrow."),
    "order consistency": (
        "A judge's two presentation orders agree more often than two independent verdicts would "
        "(its errors repeat across orders: swap='sum' counts them as one verdict) or less often "
        "(position bias: fit swap='sum', or debias the judge)."),
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
    elif ctx.kind == LEADERBOARD:
        sec.omitted = ("Not available for leaderboards yet: the report's checks replicate win-rate "
                       "and ranking data. The fit stores the pointwise log-likelihood of its cells "
                       "(log_likelihood group, unless pointwise=False) for az.loo and az.compare.")
        return sec
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
    hint = _labels_hint(ctx.idata) if ctx.kind == WIN_RATE else ""
    table, problems = _ppc_table(checks, ctx.hdi_prob, ctx.method, has_gamma, hint)
    sec.blocks.append(table_from_frame(
        table.set_index("statistic"), caption="Observed vs replicated (ppp = P(T_rep ≥ T_obs))",
        note=f"Sorted by how extreme the ppp is; red: ppp < {PPP_LOW} or > {PPP_HIGH}.",
        cell_cls=lambda c, v: FAIL if c == "ppp" and (v < PPP_LOW or v > PPP_HIGH) else ""))
    sec.blocks += [Text(p, cls="fail") for p in problems]
    if not problems:
        sec.blocks.append(Text("Every checked statistic lies within its predictive interval.", cls="ok"))
    if ctx.kind == WIN_RATE:
        summed = _swap_sum_note(ctx.idata)
        if summed:
            sec.blocks.append(Text(summed, cls="note"))
    ctx.problems += problems
    return sec


def _swap_sum_note(idata: az.InferenceData) -> str:
    """What a swap-and-sum fit cannot check: its two presentation orders were merged."""
    attrs = idata.attrs or {}
    if attrs.get("swap") != "sum" or "n_random_ties" not in attrs:
        return ""
    obs = getattr(idata, "observed_data", None)
    cells = int(((obs["n_first"] + obs["n_second"]) > 0).sum()) if obs is not None and "n_first" in obs else 0
    share = f" ({int(attrs['n_random_ties']) / cells:.0%})" if cells else ""
    return (f"Order consistency is not checked: the fit summed each judge's two presentation orders "
            f"(swap='sum'), and {int(attrs['n_random_ties'])} of its {cells} item verdicts{share} were "
            "split between the orders or tied and broken by a coin flip. Refit with swap='none' to "
            "check the orders' consistency against the model.")


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


#: report order: the answer first (the estimates), then the data and its judges' quality, then
#: the diagnostics
SECTIONS: tuple[Callable[[Context], Section], ...] = (
    win_rate_section, score_section, data_section, convergence_section, trace_section,
    ppc_section, prior_posterior_section,
)


LEADERBOARD_SECTIONS: tuple[Callable[[Context], Section], ...] = (
    leaderboard_section, judges_section, preference_section, data_section, convergence_section,
    trace_section, ppc_section,
)


def build_sections(ctx: Context) -> list[Section]:
    """Every section of one run, in report order; problems collect in ``ctx.problems``.

    Win-rate fits, rankings and other fits get :data:`SECTIONS` (those that do not apply say so
    in a line); leaderboards get :data:`LEADERBOARD_SECTIONS`, their own estimates in place of the
    win-rate, ranking and Beta-prior sections.
    """
    makers = LEADERBOARD_SECTIONS if ctx.kind == LEADERBOARD else SECTIONS
    return [make(ctx) for make in makers]
