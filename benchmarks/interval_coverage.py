"""Calibration of the posterior intervals: simulation-based coverage and SBC rank histograms.

For each model, ``--n-sims`` replications (default 200): parameters drawn from the model's own
prior with an explicit seed, one data set simulated from the model's likelihood, a fit with the
public API and the default fast backend (nutpie; package defaults 4 chains x (1000 tune + 1000
draws)), and for every scalar parameter: does the central 90% interval (equal-tailed 5%-95%, and
the 90% HDI) cover the truth, and the rank of the truth among L = 99 thinned posterior draws
(simulation-based calibration, Talts et al. 2018).  The simulation and the fits live in
:mod:`bayes_judge.analysis.sbc` (shared with ``tests/test_coverage.py``); see its docstring for the exact
generative stories.  In short:

* ``ds``: Dawid-Skene Model 1, ``bj.win_rate(method="dawid-skene", prior="none")``, 3 judges x 100
  items of one pair of systems; p ~ Beta(1, 1), q0, q1 ~ Beta(2, 1) (the package's ``ds_prior``),
  truncated to the region R = {sum_e (q0_e + q1_e - 1) > 0} that the package identifies (prior
  mean start, LabelSwitchingWarning on that sign); rejected prior draws are counted.
* ``ds-full``: the same with the untruncated prior: a truth in the mirror region (share
  P(not R) = 4.8% for 3 judges) is reported in the mirrored mode (1 - p, 1 - q1, 1 - q0).
* ``softbt``: Bayesian soft Bradley-Terry, ``bj.rank(method="poe-bt", bayesian=True)`` (with the
  default position bias gamma): s_raw ~ N(0, 1), scores centred per item, gamma ~ N(0, 1);
  3 items x 6 candidates, every ordered pair twice (180 comparisons); hard outcomes
  y ~ Bernoulli(sigmoid(s_i - s_j + gamma)) passed as p_a, where the pseudo-likelihood is exact.

The 95% interval of a pooled coverage is Clopper-Pearson for one scalar per fit, cluster-robust
(fits independent, scalars of one fit correlated) for a group.  ``sbc p`` is the smallest
chi-square p-value of rank uniformity over the group's scalars (20 bins), times their number
(Bonferroni).

Usage::

    .venv/bin/python benchmarks/interval_coverage.py                      # 200 sims each, ~10 min on 2 cores
    .venv/bin/python benchmarks/interval_coverage.py --quick              # 20 sims, 500 draws (smoke run)
    .venv/bin/python benchmarks/interval_coverage.py --models softbt --n-sims 50

Writes ``benchmarks/results/coverage.json`` (gitignored), ``coverage.md`` and
``sbc_<model>.png`` (``coverage_quick.*`` / ``sbc_<model>_quick.png`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bayes_judge.analysis.sbc import (  # noqa: E402
    MODELS,
    SBCResult,
    binomial_band,
    default_bins,
    rank_bins,
    simulation_based_calibration,
)

TITLES = {
    "ds": "Dawid-Skene (prior='none'), truth from the prior truncated to the identified region",
    "ds-full": "Dawid-Skene (prior='none'), truth from the whole prior (label switching possible)",
    "softbt": "Bayesian soft Bradley-Terry (poe-bt, position bias gamma), hard outcomes",
}


NOTES = """## How to read this

* **ds** draws the truth from the Dawid-Skene prior truncated to R = {sum_e (q0_e + q1_e - 1) > 0}.
  The likelihood is invariant under (p, q0, q1) -> (1 - p, 1 - q1, 1 - q0); the package picks
  the mode through the Beta(2, 1) prior on the q's, chains started at the prior mean and a
  `LabelSwitchingWarning` on the sign of mean_e(q0 + q1 - 1), i.e. it reports the posterior under
  the prior restricted to R.  That is the model this row calibrates.
* **ds-full** draws from the whole prior, the same replications as **ds** except where the first
  prior draw fell outside R (`truth_outside_R`; P(not R) = 4.8% for 3 judges under Beta(2, 1)).
  There the fit reports the mirrored mode (`posterior_mode_disagrees_with_truth`) and covers the
  truth only where the judges are near chance and the interval is wide (`eti90_outside_R`).
* `label_switch_warnings`: fits whose chains settled in modes with different signs of
  mean_e(q0 + q1 - 1) (r_hat ~1.5, bulk ESS < 10).  Seen when a judge is worse than chance
  (q0 + q1 < 1 for that judge) although the truth is inside R: the posterior then has separate
  local modes (one judge adversarial and the others good, or the reverse) and NUTS chains from one
  starting point can end in different ones; a few more fits (`fits r_hat >1.1`) split between
  local modes of the same sign, which the warning does not catch but r_hat does.  The pooled draws
  of such a fit are wide and usually cover the truth.
* **softbt** simulates hard outcomes y ~ Bernoulli(sigmoid(s_i - s_j + gamma)) passed as p_a in
  {0, 1}: the fractional-Bernoulli pseudo-likelihood of poe-bt is then the exact Bradley-Terry
  likelihood, so its posterior is exact and SBC applies.  For soft p_ij the model has no
  generative story and no calibration claim is made.  Scores are compared centred within each
  item, as the model reports them.
* The SBC ranks use L = 99 draws thinned evenly from the 4 x 1000 pooled draws (every ~40th),
  which keeps autocorrelation (DS bulk ESS ~800-1300 of 4000) from piling ranks at the ends.
"""


def _fmt_cov(c: float, lo: float, hi: float) -> str:
    return f"{100 * c:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def table_rows(res: SBCResult) -> list[dict]:
    out = []
    for r in res.summary().to_dict(orient="records"):
        out.append({
            "model": r["model"], "group": r["group"], "scalars": r["scalars"], "fits": r["fits"],
            "ETI 90% cover [95% CI]": _fmt_cov(r["eti90"], r["eti_ci_low"], r["eti_ci_high"]),
            "HDI 90% cover [95% CI]": _fmt_cov(r["hdi90"], r["hdi_ci_low"], r["hdi_ci_high"]),
            "ETI per scalar min-max": f"{100 * r['eti_min_scalar']:.1f}-{100 * r['eti_max_scalar']:.1f}",
            "SBC p (Bonf.)": f"{r['sbc_p_min_bonf']:.3f}",
            "divergences (fits)": f"{r['divergences']} ({r['fits_with_div']})",
            "r_hat median / max": f"{r['r_hat_median']:.4f} / {r['r_hat_max']:.3f}",
            "fits r_hat >1.01 / >1.1": f"{r['fits_r_hat_gt_1.01']} / {r['fits_r_hat_gt_1.1']}",
            "ESS bulk median": f"{r['ess_bulk_median']:.0f}",
            "wall/fit s": f"{r['wall_per_fit_s']:.2f}",
            "wall total s": f"{r['wall_total_s']:.0f}",
        })
    return out


def markdown_table(rows: list[dict]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(cols))) + "|"]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def ds_mode_breakdown(res: SBCResult) -> dict:
    """DS: coverage split by whether the truth lies in the identified region R."""
    f = res.flags
    out = {
        "label_switch_warnings": int(np.sum(f["label_switch_warning"])),
        "posterior_mode_disagrees_with_truth": int(np.sum(~f["mode_agrees"])),
        "truth_outside_R": int(np.sum(~f["in_region"])),
        "rejected_prior_draws": int(res.settings.get("rejected_prior_draws", 0)),
    }
    for name, sel in (("in_R", f["in_region"]), ("outside_R", ~f["in_region"])):
        if sel.any():
            out[f"eti90_{name}"] = float(res.cover_eti[sel].mean())
            out[f"hdi90_{name}"] = float(res.cover_hdi[sel].mean())
            out[f"eti90_p_{name}"] = float(res.cover_eti[sel, 0].mean())
    return out


def plot_ranks(res: SBCResult, path: Path) -> None:
    """SBC rank histograms with the 99% band of a uniform histogram (Talts et al. 2018, Fig. 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n, L = res.n_fits, res.n_rank_draws
    B = default_bins(n, L)
    names = np.asarray(res.names)
    if res.model.startswith("ds"):
        panels = [(nm, [i]) for i, nm in enumerate(names)]
        pooled = ("all 7 scalars pooled", list(range(len(names))))
    else:
        g0 = [i for i, nm in enumerate(names) if nm.startswith("s[q0 |")]
        panels = [("gamma", [len(names) - 1])] + [(names[i], [i]) for i in g0]
        pooled = (f"all {len(names) - 1} scores pooled", list(range(len(names) - 1)))
    panels = panels[:7] + [pooled]
    fig, axes = plt.subplots(2, 4, figsize=(14, 6.2), sharex=True)
    for ax, (title, cols) in zip(axes.ravel(), panels, strict=False):
        counts = rank_bins(res.rank[:, cols], L, B).sum(axis=1)
        tot = n * len(cols)
        lo, hi = binomial_band(tot, B, 0.99)
        edges = np.arange(B + 1) * (L + 1) / B
        ax.axhspan(lo, hi, color="0.88", zorder=0, label="99% band, uniform")
        ax.bar(edges[:-1], counts, width=(L + 1) / B, align="edge", color="C0", alpha=0.55,
               edgecolor="C0", zorder=2)
        for y in (lo, hi):
            ax.axhline(y, color="0.35", lw=0.8, ls="--", zorder=3)
        ax.axhline(tot / B, color="0.2", lw=0.8, zorder=3)
        ax.set_title(title + (" *" if len(cols) > 1 else ""), fontsize=9)
        ax.set_xlim(0, L + 1)
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel(f"rank of truth among L = {L} draws")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.suptitle(
        f"SBC rank histograms: {TITLES[res.model]}\n{n} fits, {B} bins; grey: 99% band of Binomial(n, 1/{B}) "
        "per bin (* pooled panel: the band assumes independent scalars; the scalars of one fit are correlated)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-sims", type=int, default=None, help="replications per model (default 200; 20 with --quick)")
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--draws", type=int, default=None, help="draws (and tune) per chain (default 1000; 500 with --quick)")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--rank-draws", type=int, default=99, help="L, thinned draws the truth is ranked among")
    parser.add_argument("--models", default="ds,ds-full,softbt", help=f"comma-separated, of {MODELS}")
    parser.add_argument("--replicate-seeds", default="1,2",
                        help="extra seeds for --replicate-models, pooled with the main run in a "
                             "replication table (default '1,2'; '' for none; none with --quick)")
    parser.add_argument("--replicate-models", default="ds,ds-full")
    parser.add_argument("--quick", action="store_true", help="20 sims, 500 draws; writes *_quick outputs")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in MODELS]
    if bad:
        parser.error(f"unknown model(s) {bad}; choose from {MODELS}")
    n_sims = args.n_sims or (20 if args.quick else 200)
    draws = args.draws or (500 if args.quick else 1000)
    suffix = "_quick" if args.quick else ""
    args.out_dir.mkdir(parents=True, exist_ok=True)

    load_before = os.getloadavg()
    t_all = time.perf_counter()
    results: dict[str, SBCResult] = {}
    for m in models:
        print(f"[{m}] {n_sims} sims, {args.chains} chains x ({draws} tune + {draws} draws) ...", flush=True)

        def progress(k, n, sec, m=m):
            if (k + 1) % 20 == 0 or k + 1 == n:
                print(f"  [{m}] {k + 1}/{n} ({sec:.2f} s last fit)", flush=True)

        results[m] = simulation_based_calibration(
            m, n_sims=n_sims, seed=args.seed, chains=args.chains, draws=draws, tune=draws,
            n_rank_draws=args.rank_draws, progress=progress,
        )
    rep_seeds = [] if args.quick else [int(x) for x in args.replicate_seeds.split(",") if x.strip()]
    rep_models = [m for m in (x.strip() for x in args.replicate_models.split(",")) if m in models]
    pooled: dict[str, SBCResult] = {}
    for m in rep_models if rep_seeds else []:
        runs = [results[m]]
        for s in rep_seeds:
            print(f"[{m}] replication, seed {s}: {n_sims} sims ...", flush=True)
            runs.append(simulation_based_calibration(
                m, n_sims=n_sims, seed=s, chains=args.chains, draws=draws, tune=draws,
                n_rank_draws=args.rank_draws,
            ))
        pooled[m] = SBCResult.concat(runs)
    wall = time.perf_counter() - t_all
    load_after = os.getloadavg()

    rows = [r for m in models for r in table_rows(results[m])]
    table = markdown_table(rows)
    print()
    print(table)
    extra = {}
    for m in models:
        res = results[m]
        if m.startswith("ds"):
            extra[m] = ds_mode_breakdown(res)
            print(f"\n[{m}] {extra[m]}")
        if res.failed:
            print(f"[{m}] failed fits: {res.failed}")
        plot_ranks(res, args.out_dir / f"sbc_{m.replace('-', '_')}{suffix}.png")

    rep_table = ""
    if pooled:
        rep_rows = []
        for m, res in pooled.items():
            for r in table_rows(res):
                r["model"] = f"{m} (seeds {args.seed},{','.join(map(str, rep_seeds))})"
                rep_rows.append(r)
        rep_table = markdown_table(rep_rows)
        print("\nreplication (main run pooled with the extra seeds):\n" + rep_table)
        for m, res in pooled.items():
            if m.startswith("ds"):
                extra[m + " pooled"] = ds_mode_breakdown(res)
                print(f"[{m} pooled] {extra[m + ' pooled']}")

    cmd = "python benchmarks/interval_coverage.py " + " ".join(sys.argv[1:] if argv is None else argv)
    record = {
        "command": cmd.strip(),
        "wall_s": wall,
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "models": {m: {**results[m].to_dict(), **({"ds_modes": extra[m]} if m in extra else {})} for m in models},
        "replication": {m: {**res.to_dict(), **({"ds_modes": extra[m + " pooled"]} if m + " pooled" in extra else {})}
                        for m, res in pooled.items()},
    }
    (args.out_dir / f"coverage{suffix}.json").write_text(json.dumps(record, indent=1))

    md = [f"# Calibration of the posterior intervals (`benchmarks/interval_coverage.py`{' --quick' if args.quick else ''})", ""]
    md += [f"Command: `{record['command']}`; seed {args.seed}; {n_sims} simulated data sets per model; "
           f"every fit {args.chains} chains x ({draws} tune + {draws} draws), nutpie backend; "
           f"L = {args.rank_draws} thinned draws for the SBC ranks.  Total wall {wall:.0f} s on "
           f"{os.cpu_count()} cores (load average {load_before[0]:.2f} before, {load_after[0]:.2f} after).", ""]
    md += ["Coverage in % of the truth by the central 90% intervals (target 86-94%); 95% interval of "
           "the coverage estimate in brackets (Clopper-Pearson for one scalar per fit, cluster-robust "
           "over fits for a group).  `SBC p`: smallest chi-square p-value of rank uniformity over the "
           "group's scalars times their number (Bonferroni).", ""]
    md += [table, ""]
    if pooled:
        md += [f"Replication: the same models with seeds {', '.join(map(str, rep_seeds))} pooled with the "
               f"main run ({n_sims * (1 + len(rep_seeds))} fits each):", "", rep_table, ""]
        for m, res in pooled.items():
            ps = res.per_scalar()
            md += [f"Pooled {m}, per scalar: " + "; ".join(
                f"{r.name} ETI {100 * r.eti90:.1f}%, SBC p {r.sbc_p:.2f}" for r in ps.itertuples()), ""]
            if m + " pooled" in extra:
                md += [f"Pooled {m}, label switching: `{json.dumps(extra[m + ' pooled'])}`", ""]
    for m in models:
        md += [f"## {m}: {TITLES[m]}", "", f"Design: `{json.dumps({k: v for k, v in results[m].settings.items() if k not in ('model',)})}`", ""]
        if m in extra:
            md += [f"Label switching: `{json.dumps(extra[m])}`", ""]
        ps = results[m].per_scalar()
        md += ["| scalar | ETI 90% | HDI 90% | SBC p | max r_hat | min ESS bulk |", "|---|---:|---:|---:|---:|---:|"]
        md += [f"| {r.name} | {100 * r.eti90:.1f} | {100 * r.hdi90:.1f} | {r.sbc_p:.3f} | {r.r_hat_max:.3f} | {r.ess_bulk_min:.0f} |"
               for r in ps.itertuples()]
        md += ["", f"![SBC ranks](sbc_{m.replace('-', '_')}{suffix}.png)", ""]
    md += [NOTES]
    (args.out_dir / f"coverage{suffix}.md").write_text("\n".join(md))
    print(f"\nwall {wall:.0f} s; wrote {args.out_dir / f'coverage{suffix}.json'}, coverage{suffix}.md, sbc_*{suffix}.png")
    return record


if __name__ == "__main__":
    main()
