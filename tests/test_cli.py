"""The ``bayes-judge`` command line: every subcommand on tiny inputs, bad input, the demo.

Subcommands run in-process through :func:`bayes_judge.cli.main`; one ``--help`` runs the
installed entry point in a subprocess.  The LLM parts (``compare`` and the demo's comparator part)
use the embedded default judge, loaded once for this file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.cli import build_parser, main

SUBCOMMANDS = [["demo"], ["fit"], ["leaderboard"], ["summary"], ["report"], ["select"], ["compare"], ["models", "install"]]


# ---------------------------------------------------------------------------------------------
# fixtures: tiny tables and saved runs, made once for the file
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli_inputs")
    wr = bj.simulate_win_rate(n_items=40, p=0.7, q0=[0.8, 0.9], q1=[0.75, 0.85], seed=1)
    wr.to_csv(d / "winrate.csv", index=False)
    wr.to_parquet(d / "winrate.parquet", index=False)
    rng = np.random.default_rng(0)
    cands = ["c1", "c2", "c3", "c4"]
    rows = [
        (item, a, b, float(np.clip(1 / (1 + np.exp(-(j - i) * 0.8)) + rng.normal(0, 0.1), 0.02, 0.98)))
        for item in ("q1", "q2")
        for i, a in enumerate(cands)
        for j, b in enumerate(cands)
        if i != j
    ]
    pd.DataFrame(rows, columns=["item", "a", "b", "p_a"]).to_csv(d / "rank.csv", index=False)
    (d / "garbage.parquet").write_bytes(b"this is not parquet")
    (d / "notes.xlsx").write_text("x")
    (d / "a_file").write_text("x")
    pd.DataFrame({"item": ["1"], "x": ["G0"], "b": ["G1"], "winner": ["a"]}).to_csv(d / "nocol.csv", index=False)
    # a "run" whose files exist but are not a run
    (d / "fake.nc").write_text("not netcdf")
    (d / "fake.json").write_text("{not json")
    return {p.name: p for p in d.iterdir()} | {"dir": d}


@pytest.fixture(scope="module")
def runs(files, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli_runs")
    fast = ["--draws", "100", "--chains", "2"]
    specs = {
        "obs": [str(files["winrate.csv"]), "--task", "winrate", "--method", "observed"],
        "pbt": [str(files["rank.csv"]), "--task", "rank", "--method", "poe-bt"],
        "bt": [str(files["rank.csv"]), "--task", "rank", "--method", "bt"],
    }
    for name, argv in specs.items():
        assert main(["fit", *argv, *fast, "--out", str(d / name)]) == 0
    return {name: d / name for name in specs}


def _error(capsys, argv: list[str]) -> str:
    """Run ``main(argv)``, expect exit status 2 and exactly one error line; return it."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith("bayes-judge") and ": error: " in last
    return last


# ---------------------------------------------------------------------------------------------
# help
# ---------------------------------------------------------------------------------------------


def test_help_subprocess():
    exe = Path(sys.executable).with_name("bayes-judge")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "bayes_judge.cli"]
    res = subprocess.run([*cmd, "fit", "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "--task" in res.stdout and "--out RUN" in res.stdout
    assert res.stdout.strip().splitlines()[-1].startswith("Example: bayes-judge fit ")


def test_help_imports_no_heavy_module():
    """``--help`` builds every parser without importing the libraries the commands need."""
    code = (
        "import sys\n"
        "from bayes_judge.cli import main\n"
        "for argv in (['--help'], ['fit', '--help'], ['demo', '--help'], ['compare', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as e:\n"
        "        assert e.code == 0, (argv, e.code)\n"
        "heavy = [m for m in ('pymc', 'jax', 'arviz', 'numba', 'pytensor', 'torch', 'scipy', 'pandas')\n"
        "         if m in sys.modules]\n"
        "assert not heavy, f'bayes-judge --help imported {heavy}'\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("cmd", SUBCOMMANDS, ids=" ".join)
def test_help_every_subcommand_ends_with_example(cmd, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*cmd, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out.splitlines()[-1].startswith(f"Example: bayes-judge {' '.join(cmd)}")
    # every option is explained
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[cmd[0]]
    if len(cmd) > 1:
        sub = sub._subparsers._group_actions[0].choices[cmd[1]]
    for action in sub._actions:
        assert action.help, f"{' '.join(cmd)}: option {action.option_strings or action.dest} has no help"


def test_option_values_match_the_package():
    from bayes_judge import selection, winrate
    from bayes_judge.cli import commands
    from bayes_judge.ranking.rank import METHODS as RANK_METHODS
    from bayes_judge.winrate import encode as verdicts

    assert commands.WINRATE_METHODS == winrate.METHODS
    assert commands.ESTIMANDS == winrate.ESTIMANDS
    assert commands.PRIORS == winrate.PRIORS
    assert commands.DS_MODELS == winrate.DS_MODELS
    assert commands.SWAP_MODES == verdicts.SWAP_MODES
    assert commands.TIE_MODES == verdicts.TIE_MODES
    assert commands.SELECT_METHODS == selection.METHODS
    assert set(commands.RANK_METHODS) == set(RANK_METHODS) - {"win-ratio", "avg-prob"}


# ---------------------------------------------------------------------------------------------
# fit, summary, report, select
# ---------------------------------------------------------------------------------------------


def test_fit_winrate_saves_a_run(files, tmp_path, capsys):
    out = tmp_path / "sub" / "ds"
    code = main(["fit", str(files["winrate.parquet"]), "--task", "winrate", "--method", "dawid-skene",
                 "--draws", "100", "--chains", "2", "--seed", "3", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "G0 vs G1" in text and "p_mean" in text and f"{out}.nc" in text
    idata = bj.load_run(out)
    manifest = json.loads(idata.attrs["manifest"])
    assert manifest["model"] == "dawid-skene" and manifest["seed"] == 3
    assert manifest["shape"] == {"chains": 2, "draws": 100}


def test_fit_transfer_reads_several_ood_files(files, tmp_path, capsys):
    srcs = []
    for i in range(2):
        f = tmp_path / f"src{i}.csv"
        bj.simulate_win_rate(n_items=60, p=0.5, q0=[0.8, 0.9], q1=[0.75, 0.85], seed=20 + i).to_csv(f, index=False)
        srcs += ["--ood", str(f)]
    target = tmp_path / "target.csv"
    pd.read_csv(files["winrate.csv"]).assign(human=None).to_csv(target, index=False)
    out = tmp_path / "tr"
    assert main(["fit", str(target), "--task", "winrate", "--method", "transfer", *srcs,
                 "--draws", "100", "--chains", "2", "--out", str(out)]) == 0
    idata = bj.load_run(out)
    assert idata.attrs["method"] == "transfer" and list(idata.attrs["transfer_sources"]) == ["src0", "src1"]
    msg = _error(capsys, ["fit", str(target), "--task", "winrate", "--method", "dawid-skene", *srcs,
                          "--out", str(tmp_path / "never")])
    assert "several --ood files are read by --method transfer only" in msg


@pytest.mark.filterwarnings("default::bayes_judge.diagnose.UninformativeJudgeWarning")
def test_fit_names_the_estimand_and_an_uninformative_judge(tmp_path, capsys):
    """Issue 30: a judge whose verdict follows the position (the embedded judge's failure) is
    named with its reason by `fit` and by `summary` of the saved run, whatever route the table
    took (here a CSV written without the comparator's attrs); the estimand and prior are said."""
    df = bj.simulate_win_rate(80, p=0.7, q0=[0.8, 0.75], swap=True, seed=2).drop(columns="human")
    stuck = df[df["judge"] == "judge0"].assign(judge="stuck")
    stuck["winner"] = np.where(np.random.default_rng(0).random(len(stuck)) < 0.97, "a", "b")  # position-driven
    path = tmp_path / "j.csv"
    pd.concat([df, stuck]).to_csv(path, index=False)
    out = tmp_path / "run"
    assert main(["fit", str(path), "--task", "winrate", "--out", str(out), "--draws", "100", "--chains", "2"]) == 0
    cap = capsys.readouterr()
    text = cap.out
    assert "warning: win_rate: 1 of 3 judge(s) carry no information" in cap.err
    assert "estimand: human" in text and "prior: logit p* = λ·logit π + α" in text
    assert "UNINFORMATIVE JUDGE stuck" in text and "follows the position" in text
    assert "UNINFORMATIVE JUDGE judge0" not in text
    # the prior's sensitivity for every pair, and the labels that would decide it
    fit = bj.load_run(out)
    sens = json.loads(fit.attrs["prior_sensitivity"])
    pair = str(fit.posterior["pair"].to_numpy()[0])
    assert "prior sensitivity (90% equal-tailed intervals: as fitted; with the bridge prior's spreads 0.5x and 2x):" in text
    assert f"  {pair}: [" in text and f"[{sens['x2'][0][0]:.3f}, {sens['x2'][0][1]:.3f}]" in text
    assert "labels_to_decide" in text
    assert main(["summary", str(out)]) == 0
    again = capsys.readouterr().out
    assert "UNINFORMATIVE JUDGE stuck" in again and "labels_to_decide" in again
    assert main(["fit", str(path), "--task", "winrate", "--estimand", "judges", "--out", str(tmp_path / "j2"),
                 "--draws", "100", "--chains", "2"]) == 0
    assert "estimand: judges" in capsys.readouterr().out


def test_fit_rank_runs(runs, capsys):
    idata = bj.load_run(runs["pbt"])
    assert idata.attrs["method"] == "poe-bt"
    assert set(bj.score_summary(idata)["candidate"]) == {"c1", "c2", "c3", "c4"}
    s = bj.score_summary(idata)
    best = s.loc[s.groupby("item")["mean_rank"].idxmin(), "candidate"]
    assert set(best) == {"c1"}  # c1 wins its comparisons in the simulated table


def test_summary_prints_and_writes_csv(runs, tmp_path, capsys):
    csv = tmp_path / "s" / "summary.csv"
    assert main(["summary", str(runs["obs"]), f"{runs['pbt']}.nc", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "== obs (win-rate, observed" in out and "== pbt (ranking, poe-bt)" in out
    # each judge of the win-rate run (docs/questions.md answers "how good is each judge" with summary)
    assert "acc_g0" in out and "p_first" in out and "agreement" in out
    t = pd.read_csv(csv)
    assert set(t["run"]) == {"obs", "pbt"}
    assert (t["kind"] == "win-rate").sum() == 1 and (t["kind"] == "ranking").sum() == 8
    assert {"p_mean", "mean", "p_best", "r_hat"} <= set(t.columns)


def test_report_with_compare(runs, tmp_path, capsys):
    html = tmp_path / "r" / "report.html"
    assert main(["report", str(runs["pbt"]), str(runs["bt"]), "--out", str(html), "--compare"]) == 0
    out = capsys.readouterr().out
    assert "Model comparison" in out and "elpd_loo" in out and str(html) in out
    page = html.read_text()
    assert "Model comparison (LOO)" in page and "pbt" in page and "bt" in page


def test_report_without_compare(runs, tmp_path, capsys):
    html = tmp_path / "report.html"
    assert main(["report", str(runs["obs"]), "--out", str(html)]) == 0
    assert html.stat().st_size > 1000
    assert "Model comparison" not in capsys.readouterr().out


def test_select_from_list_and_file(files, tmp_path, capsys):
    out = tmp_path / "pairs.csv"
    assert main(["select", "--candidates", "M8, M9,M10,M11", "-k", "5", "--item", "doc1", "--out", str(out)]) == 0
    pairs = pd.read_csv(out, dtype=str)
    assert list(pairs.columns) == ["item", "a", "b"] and len(pairs) == 5
    assert set(pairs["item"]) == {"doc1"}
    assert len({frozenset(p) for p in zip(pairs["a"], pairs["b"], strict=True)}) == 5
    # continue from what was judged: no pair repeated, all 6 pairs of 4 candidates covered
    cfile = tmp_path / "cands.txt"
    cfile.write_text("# systems\nM8\nM9\n\nM10\nM11\n")
    out2 = tmp_path / "more.parquet"
    assert main(["select", "--candidates-file", str(cfile), "-k", "1", "--method", "no-repeat",
                 "--existing", str(out), "--item", "doc1", "--out", str(out2)]) == 0
    more = pd.read_parquet(out2)
    seen = {frozenset(p) for p in zip(pairs["a"], pairs["b"], strict=True)}
    assert len(more) == 1 and frozenset(more.iloc[0][["a", "b"]]) not in seen
    assert "1 new comparisons (no-repeat) among 4 candidates, after 5 existing" in capsys.readouterr().out


def test_select_symmetric(tmp_path):
    out = tmp_path / "pairs.csv"
    assert main(["select", "--candidates", "x,y,z", "-k", "4", "--method", "symmetric", "--out", str(out)]) == 0
    pairs = pd.read_csv(out)
    assert len(pairs) == 4 and set(zip(pairs["a"], pairs["b"], strict=True)) == {
        (b, a) for a, b in zip(pairs["a"], pairs["b"], strict=True)}


# ---------------------------------------------------------------------------------------------
# bad input: one line, exit status 2
# ---------------------------------------------------------------------------------------------


def test_fit_bad_input(files, runs, capsys):
    d = files["dir"]
    out = ["--out", str(d / "never")]
    msg = _error(capsys, ["fit", str(d / "missing.csv"), "--task", "winrate", *out])
    assert "missing.csv not found" in msg
    msg = _error(capsys, ["fit", str(files["garbage.parquet"]), "--task", "winrate", *out])
    assert "cannot read judgments table" in msg and "garbage.parquet" in msg
    msg = _error(capsys, ["fit", str(files["notes.xlsx"]), "--task", "winrate", *out])
    assert "unsupported file type '.xlsx'" in msg
    msg = _error(capsys, ["fit", str(files["winrate.csv"]), "--task", "winrate", "--method", "magic", *out])
    assert "invalid choice: 'magic'" in msg
    msg = _error(capsys, ["fit", str(files["rank.csv"]), "--task", "rank", "--method", "bwrs", *out])
    assert "not a Bayesian ranking method" in msg
    msg = _error(capsys, ["fit", str(files["rank.csv"]), "--task", "rank", "--prior", "ood", *out])
    assert "--prior applies to --task winrate only" in msg
    msg = _error(capsys, ["fit", str(files["winrate.csv"]), "--task", "winrate",
                          "--out", str(files["a_file"] / "run")])
    assert "is a file, not a folder" in msg
    msg = _error(capsys, ["fit", str(files["nocol.csv"]), "--task", "winrate", *out])
    assert "'a'" in msg  # the schema names the missing column
    msg = _error(capsys, ["fit", str(files["winrate.csv"]), "--task", "winrate", "--draws", "0", *out])
    assert "--draws must be at least 1" in msg
    assert not (d / "never.nc").exists()


def test_summary_and_report_bad_input(files, runs, capsys):
    d = files["dir"]
    msg = _error(capsys, ["summary", str(files["winrate.csv"])])
    assert "is a table, not a saved run: fit it first" in msg
    msg = _error(capsys, ["summary", str(d / "fake")])
    assert "is not a readable run" in msg
    msg = _error(capsys, ["summary", str(runs["obs"]), "--csv", str(d)])
    assert "is an existing folder" in msg
    msg = _error(capsys, ["report", str(runs["obs"]), "--out", str(files["a_file"] / "r.html")])
    assert "is a file, not a folder" in msg
    msg = _error(capsys, ["report", str(runs["obs"]), "--out", str(d / "r.html"), "--compare"])
    assert "--compare needs at least 2 runs" in msg
    msg = _error(capsys, ["report", str(runs["obs"]), str(runs["pbt"]), "--out", str(d / "r.html"), "--compare"])
    assert "log-likelihood" in msg or "no log_likelihood" in msg
    msg = _error(capsys, ["report", str(d / "nope"), "--out", str(d / "r.html")])
    assert "nope.nc not found" in msg


def test_select_bad_input(files, tmp_path, capsys):
    out = ["--out", str(tmp_path / "p.csv")]
    msg = _error(capsys, ["select", "--candidates", "a,b,c", "-k", "9", "--method", "no-repeat", *out])
    assert "k" in msg and "3" in msg
    msg = _error(capsys, ["select", "--candidates", "a,b,c", "-k", "2", "--method", "best", *out])
    assert "invalid choice: 'best'" in msg
    msg = _error(capsys, ["select", "--candidates-file", str(tmp_path / "none.txt"), "-k", "2", *out])
    assert "none.txt not found" in msg
    msg = _error(capsys, ["select", "--candidates", "a", "-k", "1", *out])
    assert "at least 2 are needed" in msg
    msg = _error(capsys, ["select", "--candidates", "a,b,c", "-k", "2", "--out", str(files["a_file"] / "p.csv")])
    assert "is a file, not a folder" in msg
    msg = _error(capsys, ["select", "--candidates", "a,b,c", "-k", "2", "--existing", str(files["garbage.parquet"]),
                          *out])
    assert "cannot read existing judgments" in msg
    # an option that does not apply is an error, never silently ignored
    for extra, said in ((["--top", "1"], "--top applies with --from"), (["--pair", "a,b"], "--pair applies with --from"),
                        (["--goal", "top-k"], "--goal applies with --from only")):
        assert said in _error(capsys, ["select", "--candidates", "a,b,c", "-k", "2", *extra, *out])
    msg = _error(capsys, ["select", "--from", str(tmp_path / "run"), "-k", "2", "--existing", str(tmp_path / "x.csv"),
                          *out])
    assert "--existing does not apply with --from" in msg
    msg = _error(capsys, ["select", "--from", str(tmp_path / "run"), "-k", "2", "--goal", "ranking", "--pair", "a,b",
                          *out])
    assert "--pair applies with --from and --goal pair only" in msg


def test_debug_shows_the_traceback(files):
    with pytest.raises(FileNotFoundError):
        main(["--debug", "fit", str(files["dir"] / "missing.csv"), "--task", "winrate", "--out", "x"])


# ---------------------------------------------------------------------------------------------
# the demo and the LLM comparator
# ---------------------------------------------------------------------------------------------


def test_demo_without_llm(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--no-llm", "--draws", "60", "--chains", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "skipped (--no-llm)" in text and "Dawid-Skene, in-distribution (30%)" in text
    assert "Total time:" in text and f"Report: {out / 'report.html'}" in text
    assert (out / "report.html").is_file()
    assert "default, no labels (human rate, bridge)" in text and "estimand='judges'" in text
    for slug in ("observed_k", "bwrs", "dawid-skene_no_prior", "dawid-skene_in-distribution", "default_no_labels"):
        bj.load_run(out / f"mtbench_{slug}")
    msg_args = ["demo", "--summaries", "20", "--out", str(out)]
    with pytest.raises(SystemExit) as exc:
        main(msg_args)
    assert exc.value.code == 2 and "--summaries must be at most 12" in capsys.readouterr().err


@pytest.fixture(scope="module")
def cached_judge():
    """Load the default judge once for this file: the Comparators made by the commands reuse it."""
    pytest.importorskip("torch", reason="the comparator needs the llm extra: pip install -e '.[llm]'")
    from bayes_judge.comparator import comparator as comparator_module
    from bayes_judge.comparator.install import MissingModelError
    from bayes_judge.comparator.models import load_model

    try:
        lm = load_model()
    except MissingModelError as err:  # pragma: no cover - set-up problem (`make models`)
        pytest.fail(str(err))
    mp = pytest.MonkeyPatch()
    mp.setattr(comparator_module, "load_model", lambda model=None, **kw: lm if model is None else load_model(model, **kw),
               raising=False)
    yield lm
    mp.undo()


def test_compare_command(cached_judge, tmp_path, capsys):
    texts = pd.DataFrame({
        "item": ["s", "s", "s"], "candidate": ["x", "y", "z"],
        "text": ["The cat sat on the mat.", "Mat cat the on sat.", "A cat was sitting on a mat."],
        "article": "The cat sat on the mat all day long.",
    })
    texts.to_csv(tmp_path / "texts.csv", index=False)
    main(["select", "--candidates", "x,y,z", "-k", "2", "--item", "s", "--out", str(tmp_path / "pairs.csv")])
    out = tmp_path / "judgments.csv"
    assert main(["compare", str(tmp_path / "texts.csv"), "--context-col", "article", "--pairs",
                 str(tmp_path / "pairs.csv"), "--symmetric", "--no-progress", "--out", str(out)]) == 0
    assert "4 judgments by SmolLM2-135M-Instruct/summeval-coherence/prob" in capsys.readouterr().out
    df = bj.validate_judgments(pd.read_csv(out))
    assert len(df) == 4 and df["p_a"].between(0, 1).all()
    # the judgments feed `fit` directly
    assert main(["fit", str(out), "--task", "rank", "--draws", "50", "--chains", "2",
                 "--out", str(tmp_path / "run")]) == 0


def test_compare_refuses_an_item_with_two_contexts(tmp_path, capsys):
    texts = pd.DataFrame({"item": ["s", "s"], "candidate": ["x", "y"], "text": ["The cat sat.", "Stocks fell."],
                          "article": ["The cat sat on the mat.", "Stock markets fell today."]})
    texts.to_csv(tmp_path / "texts.csv", index=False)
    with pytest.raises(SystemExit):
        main(["compare", str(tmp_path / "texts.csv"), "--context-col", "article", "--no-progress",
              "--out", str(tmp_path / "j.csv")])
    assert "holds different contexts for item(s) ['s']" in capsys.readouterr().err
    assert not (tmp_path / "j.csv").exists()


def test_demo_llm_part_on_a_tiny_slice(cached_judge, tmp_path, capsys):
    out = tmp_path / "demo"
    argv = ["demo", "--articles", "1", "--summaries", "3", "--no-mtbench", "--draws", "60", "--chains", "2",
            "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "1 article(s) x 3 abstractive summaries (M8, M9, M10)" in text
    assert "6 judgments (6 new" in text and "position bias P(A) =" in text
    assert "PoE-BT (Bayesian, posterior mean)" in text and "win ratio (hard decisions)" in text
    assert (out / "summeval_comparisons.sqlite").is_file() and (out / "report.html").is_file()
    judged = pd.read_csv(out / "summeval_judgments.csv")
    assert len(judged) == 6 and set(judged["order"]) == {"ab", "ba"}
    # a rerun takes every judgment from the store (and rewrites the runs)
    assert main(argv) == 0
    assert "6 judgments (0 new" in capsys.readouterr().out
    assert bj.load_run(out / "summeval_poe-bt").attrs["method"] == "poe-bt"


def test_summary_of_a_leaderboard_run_prints_names_and_ranks(tmp_path, capsys):
    """Issue 32: `summary` on a leaderboard run printed no system names or ranks; every command
    shows 90% intervals by default."""
    df = bj.simulate_win_rate(40, p=0.7, q0=[0.8, 0.75], swap=True, seed=1).drop(columns="human")
    path = tmp_path / "j.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "lb"
    assert main(["leaderboard", str(path), "--out", str(out), "--draws", "100", "--chains", "2"]) == 0
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "system" in text and "rank_mean" in text and "G0" in text and "G1" in text
    assert build_parser().parse_args(["summary", "x"]).hdi_prob == 0.9
    assert build_parser().parse_args(["report", "x", "--out", "r.html"]).hdi_prob == 0.9


def test_fit_reads_human_labels_from_their_own_file_and_target_accept(tmp_path, capsys):
    """Issue 32: `fit` had no --human and no --target-accept (which the report tells users to raise)."""
    df = bj.simulate_win_rate(60, p=0.7, q0=[0.8, 0.75], swap=True, seed=4)
    judg, lab = tmp_path / "j.csv", tmp_path / "h.csv"
    df.drop(columns="human").to_csv(judg, index=False)
    df[df["item"].astype(int) < 15][["item", "a", "b", "human"]].drop_duplicates(["item"]).to_csv(lab, index=False)
    out = tmp_path / "run"
    assert main(["fit", str(judg), "--task", "winrate", "--human", str(lab), "--target-accept", "0.9",
                 "--draws", "100", "--chains", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "win rate, regression (prior in-distribution)" in text
    with pytest.raises(SystemExit):
        main(["fit", str(judg), "--task", "winrate", "--target-accept", "1.5", "--out", str(tmp_path / "x")])
    assert "--target-accept must lie in (0, 1)" in capsys.readouterr().err


def test_compare_reads_a_texts_table_through_map_and_takes_batch_size(cached_judge, tmp_path, capsys):
    """Issue 32: `--map` on every command that reads a table; `--batch-size auto` (the default)."""
    texts = pd.DataFrame({"doc": ["s", "s"], "system": ["x", "y"], "article": "The cat sat on the mat all day.",
                          "summary": ["The cat sat on the mat.", "Mat cat the on sat."]})
    texts.to_csv(tmp_path / "texts.csv", index=False)
    out = tmp_path / "judgments.csv"
    assert main(["compare", str(tmp_path / "texts.csv"), "--map", "item=doc,candidate=system,text=summary",
                 "--context-col", "article", "--no-progress", "--batch-size", "3", "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == 1
    assert build_parser().parse_args(["compare", "t.csv", "--out", "o.csv"]).batch_size == "auto"
    assert "name no column" in _error(capsys, ["compare", str(tmp_path / "texts.csv"), "--map", "item=nope",
                                              "--out", str(tmp_path / "j2.csv")])
    assert "--batch-size must be auto or a positive number" in _error(
        capsys, ["compare", str(tmp_path / "texts.csv"), "--map", "item=doc,candidate=system,text=summary",
                 "--context-col", "article", "--batch-size", "many", "--out", str(tmp_path / "j3.csv")])


def test_fit_takes_hdi_prob(files, tmp_path, capsys):
    assert build_parser().parse_args(["fit", "x.csv", "--task", "rank", "--out", "r"]).hdi_prob == 0.9
    assert "--hdi-prob must lie in [0.01, 1)" in _error(
        capsys, ["fit", str(files["winrate.csv"]), "--task", "winrate", "--hdi-prob", "1.5", "--out", str(tmp_path / "r")])


def test_leaderboard_laplace_from_the_shell(tmp_path, capsys):
    """Issue 34: `bayes-judge leaderboard --sampler laplace` says its draws are approximate."""
    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    df, _ = simulate_leaderboard(8, 2000, alpha=(3.0,), beta=(0.0,), tau=(0.4,), design="one-judge", seed=2)
    path = tmp_path / "votes.csv"
    df.drop(columns="human").assign(judge="human").to_csv(path, index=False)
    assert main(["leaderboard", str(path), "--sampler", "laplace", "--out", str(tmp_path / "lb")]) == 0
    out = capsys.readouterr().out
    assert "APPROXIMATE: Laplace approximation" in out and "S000" in out


def test_compare_counts_are_checked(tmp_path, capsys):
    texts = pd.DataFrame({"item": ["s", "s"], "candidate": ["x", "y"], "text": ["a", "b"]})
    texts.to_csv(tmp_path / "t.csv", index=False)
    base = ["compare", str(tmp_path / "t.csv"), "--out", str(tmp_path / "o.csv")]
    assert "--threads must be auto or torch or a positive number, got 'lots'" in _error(capsys, [*base, "--threads", "lots"])
    assert "--threads must be at least 1, got 0" in _error(capsys, [*base, "--threads", "0"])
    assert "--batch-size must be at least 1, got -2" in _error(capsys, [*base, "--batch-size", "-2"])


def test_select_from_a_saved_run_asks_the_posterior(tmp_path, capsys):
    """Issue 34: `bayes-judge select --from RUN --goal top-k --top 3` = bj.next_comparisons (the top 2
    of this fit is settled, and asks for nothing)."""
    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    df, _ = simulate_leaderboard(6, 800, alpha=(3.0,), beta=(0.0,), tau=(0.0,), design="one-judge", seed=4)
    path = tmp_path / "votes.csv"
    df.drop(columns="human").assign(judge="human").to_csv(path, index=False)
    assert main(["leaderboard", str(path), "--sampler", "laplace", "--out", str(tmp_path / "lb")]) == 0
    capsys.readouterr()
    out = tmp_path / "next.csv"
    assert main(["select", "--from", str(tmp_path / "lb"), "-k", "4", "--goal", "top-k", "--top", "3",
                 "--out", str(out)]) == 0
    assert "chosen from the posterior" in capsys.readouterr().out
    pairs = pd.read_csv(out)
    assert len(pairs) == 4 and {"a", "b", "gain", "p_a"} <= set(pairs.columns)
    assert "needs k between" in _error(capsys, ["select", "--from", str(tmp_path / "lb"), "-k", "2", "--goal",
                                                "top-k", "--out", str(tmp_path / "x.csv")])
    assert main(["select", "--from", str(tmp_path / "lb"), "-k", "2", "--item", "q9", "--out", str(out)]) == 0
    assert pd.read_csv(out)["item"].tolist() == ["q9", "q9"]  # --item writes its column, as its help says


def test_select_names_the_item_it_works_on(tmp_path, capsys):
    """`select --from RUN --goal pair --item` could not name the item of a ranking whose items share
    candidate names; `--existing` of several items without --item pooled them into one design, and a
    mistyped --item dropped every existing row, silently."""
    rows = [dict(item=it, a=a, b=b, p_a=p) for it in ("q1", "q2")
            for a, b, p in (("x", "y", 0.8), ("y", "x", 0.3), ("y", "z", 0.6), ("z", "y", 0.4), ("x", "z", 0.9))]
    path = tmp_path / "j.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert main(["fit", str(path), "--task", "rank", "--draws", "100", "--tune", "100", "--chains", "2",
                 "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    out = tmp_path / "next.csv"
    assert main(["select", "--from", str(tmp_path / "r"), "-k", "1", "--goal", "pair", "--pair", "x,y",
                 "--item", "q2", "--out", str(out)]) == 0
    assert pd.read_csv(out)["item"].astype(str).tolist() == ["q2"]
    assert "say which one's comparisons count with --item" in _error(
        capsys, ["select", "--candidates", "x,y,z", "-k", "2", "--existing", str(path), "--out", str(tmp_path / "s.csv")])
    assert "is not an item of --existing" in _error(
        capsys, ["select", "--candidates", "x,y,z", "-k", "2", "--existing", str(path), "--item", "q9",
                 "--out", str(tmp_path / "s.csv")])


def test_a_bad_row_is_named_by_its_file_line(tmp_path, capsys):
    """Issue 32: errors name file lines, not 0-based frame rows."""
    path = tmp_path / "j.csv"
    path.write_text("item,a,b,winner\nq1,x,y,a\nq2,x,z,b\nq3,y,y,a\n")
    msg = _error(capsys, ["fit", str(path), "--task", "winrate", "--out", str(tmp_path / "r")])
    assert "j.csv" in msg and "compared with itself in line(s) 4" in msg


def test_compare_refuses_what_it_would_judge_wrongly_before_judging(tmp_path, capsys):
    """A second text column judged the word "text" against itself (--text-col beside a 'text'
    column, or --map onto an existing column); a missing item dropped its rows; --out onto the
    texts or the store overwrote them; a .json --out failed after all the judging; pairs without
    an item column named no text."""
    texts = pd.DataFrame({"item": ["q1", "q1"], "candidate": ["x", "y"], "text": ["LONG X", "LONG Y"],
                          "summary": ["The cat sat on the mat.", "Mat cat the on sat."]})
    path = tmp_path / "t.csv"
    texts.to_csv(path, index=False)
    out = ["--out", str(tmp_path / "o.csv")]
    assert "--text-col 'summary' while the file also has a column 'text'" in _error(
        capsys, ["compare", str(path), "--text-col", "summary", *out])
    assert "would rename onto a column" in _error(capsys, ["compare", str(path), "--map", "text=summary", *out])
    assert "is the TEXTS file" in _error(capsys, ["compare", str(path), "--out", str(path)])
    store = tmp_path / "s.csv"  # a store may have any name
    store.write_bytes(b"")
    assert "is the --store file" in _error(capsys, ["compare", str(path), "--store", str(store), "--out", str(store)])
    assert "unsupported file type '.json'" in _error(capsys, ["compare", str(path), "--out", str(tmp_path / "o.json")])
    gap = tmp_path / "gap.csv"
    pd.DataFrame({"item": ["q1", "q1", None, None], "candidate": ["x", "y", "x", "y"],
                  "text": ["a b", "c d", "e f", "g h"]}).to_csv(gap, index=False)
    assert "missing item in row(s) [3, 4] (counted from 1, after the header)" in _error(capsys, ["compare", str(gap), *out])
    two = tmp_path / "two.csv"
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "candidate": ["x", "y", "x", "y"],
                  "text": ["a b", "c d", "e f", "g h"]}).to_csv(two, index=False)
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame({"a": ["x"], "b": ["y"]}).to_csv(pairs, index=False)
    assert "the pairs name no item, and" in _error(capsys, ["compare", str(two), "--pairs", str(pairs), *out])
    assert "'all' takes no K" in _error(capsys, ["compare", str(two), "--pairs", "all:5", *out])
    assert "item 'q1': " in _error(capsys, ["compare", str(two), "--pairs", "greedy-d-optimal:3", *out])
    assert not (tmp_path / "o.csv").exists() and path.read_text().startswith("item,candidate,text,summary")


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_max_rows_must_be_a_positive_number(value, tmp_path, capsys):
    """--max-rows 0 printed an empty table with "(5 more rows)"; a negative one cut rows silently."""
    with pytest.raises(SystemExit) as exc:
        main(["summary", str(tmp_path / "run"), "--max-rows", value])
    assert exc.value.code == 2 and "--max-rows: must be" in capsys.readouterr().err


def test_summary_of_a_table_says_it_is_not_a_run(tmp_path, capsys):
    """`summary judgments.csv` said "file judgments.csv.nc not found"."""
    path = tmp_path / "j.csv"
    pd.DataFrame({"item": [1], "a": ["x"], "b": ["y"], "winner": ["a"]}).to_csv(path, index=False)
    assert "is a table, not a saved run: fit it first" in _error(capsys, ["summary", str(path)])


def test_compare_refuses_options_its_setting_would_ignore(tmp_path, capsys):
    """--samples outside sample mode and --concurrency without an endpoint were ignored silently;
    --samples 0 was reported as 'n_samples and max_new_tokens must be at least 1'."""
    texts = pd.DataFrame({"item": ["s", "s"], "candidate": ["x", "y"], "text": ["a b", "c d"]})
    texts.to_csv(tmp_path / "t.csv", index=False)
    base = ["compare", str(tmp_path / "t.csv"), "--out", str(tmp_path / "o.csv")]
    assert "--samples applies to --mode sample" in _error(capsys, [*base, "--samples", "3"])
    assert "--concurrency applies to --endpoint judges only" in _error(capsys, [*base, "--concurrency", "8"])
    assert "--samples must be at least 1, got 0" in _error(capsys, [*base, "--mode", "sample", "--samples", "0"])


def test_leaderboard_updates_a_saved_run_from_the_shell(tmp_path, capsys):
    """Issue 34: `bayes-judge leaderboard NEW --previous RUN --out RUN2` = bj.leaderboard(new,
    previous=RUN): the updated run counts both fits' comparisons and adds the new system; the same
    rows again are refused (each counts once), as is a previous run that is not one."""
    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    df, _ = simulate_leaderboard(6, 1200, alpha=(3.0,), beta=(0.0,), tau=(0.0,), design="one-judge", seed=3)
    df = df.drop(columns="human").assign(judge="human")
    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    df.iloc[:1000].to_csv(old, index=False)
    extra = df.iloc[1000:].assign(b=lambda d: d["b"].where(d.index % 2 == 0, "S_new"))
    extra.to_csv(new, index=False)
    assert main(["leaderboard", str(old), "--sampler", "laplace", "--out", str(tmp_path / "lb")]) == 0
    capsys.readouterr()
    assert main(["leaderboard", str(new), "--previous", str(tmp_path / "lb"), "--sampler", "laplace",
                 "--out", str(tmp_path / "lb2")]) == 0
    assert "S_new" in capsys.readouterr().out
    up = bj.load_run(tmp_path / "lb2")
    assert up.attrs["n_rows"] == 1200 and "S_new" in up.posterior["system"].values
    assert "counted" in _error(capsys, ["leaderboard", str(new), "--previous", str(tmp_path / "lb2"),
                                        "--sampler", "laplace", "--out", str(tmp_path / "lb3")])
    assert "not found" in _error(capsys, ["leaderboard", str(new), "--previous", str(tmp_path / "nothing"),
                                          "--out", str(tmp_path / "lb4")])
    # with NUTS the earlier draws are moved onto the update's posterior, and the output says so;
    # --no-transport samples it afresh
    nuts = ["--chains", "2", "--draws", "300"]
    assert main(["leaderboard", str(old), *nuts, "--out", str(tmp_path / "n1")]) == 0
    capsys.readouterr()
    assert main(["leaderboard", str(new), "--previous", str(tmp_path / "n1"), *nuts, "--out", str(tmp_path / "n2")]) == 0
    assert "importance-resampled within each chain" in capsys.readouterr().out
    assert bj.load_run(tmp_path / "n2").attrs["sampler"].startswith("transport")
    assert main(["leaderboard", str(new), "--previous", str(tmp_path / "n1"), *nuts, "--no-transport",
                 "--out", str(tmp_path / "n3")]) == 0
    assert bj.load_run(tmp_path / "n3").attrs["sampler"] == "nutpie (fast path)"
