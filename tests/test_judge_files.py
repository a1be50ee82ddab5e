"""MT-Bench, AlpacaEval and Arena-Hard judgment files read as they come (fixtures written by hand
in each format, from the benchmarks' own files)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.judge_files import read_framework

DATA = Path(__file__).parent / "data" / "judge_files"


def test_mt_bench_pairs_become_one_row_per_order():
    with pytest.warns(UserWarning, match="1 verdict"):  # the third line's second game is "error"
        df = bj.read_judgments(DATA / "mt_bench_gpt-4_pair.jsonl")
    assert len(df) == 5
    first = df.iloc[0]
    assert (first["item"], first["a"], first["b"], first["winner"], first["order"]) == (
        "81/turn1", "gpt-3.5-turbo", "vicuna-13b-v1.3", "a", "ab")
    second = df.iloc[1]  # g2: model_2 shown first; g2_winner model_1 -> the text shown second won
    assert (second["a"], second["b"], second["winner"], second["order"]) == ("vicuna-13b-v1.3", "gpt-3.5-turbo", "b", "ba")
    assert df.iloc[2]["winner"] == "tie" and df.iloc[2]["judge"] == "gpt-4/pair-v2-multi-turn"
    assert bj.validate_judgments(df).shape[0] == 5


def test_alpaca_eval_preference_becomes_p_a():
    with pytest.warns(UserWarning, match="1 verdict"):  # the third record has no preference
        df = bj.read_judgments(DATA / "alpaca_eval_annotations.json")
    assert list(df["p_a"].round(4)) == [0.1679, 1.0]
    assert set(df["a"]) == {"gpt4_1106_preview"} and set(df["judge"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    bj.validate_judgments(df)


def test_arena_hard_games_against_the_baseline():
    with pytest.warns(UserWarning, match="1 verdict"):  # a null score
        df = bj.read_judgments(DATA / "arena_hard_my-model.jsonl", baseline="gpt-4-0314")
    assert len(df) == 5
    g1, g2 = df.iloc[0], df.iloc[1]
    assert (g1["a"], g1["b"], g1["winner"], g1["strength"]) == ("gpt-4-0314", "my-model-7b", "a", 1)
    assert (g2["a"], g2["b"], g2["winner"], g2["strength"]) == ("my-model-7b", "gpt-4-0314", "b", 3)
    assert df.iloc[2]["winner"] == "tie"
    wr = bj.win_rate(df, estimand="judges", systems=["my-model-7b", "gpt-4-0314"])
    assert wr.attrs["estimand"] == "judges"


def test_the_arena_hard_baseline_can_be_named_everywhere(tmp_path, capsys):
    """load_judgments and the CLI named every Arena-Hard file's baseline gpt-4-0314, whatever it was."""
    from bayes_judge.cli import main

    with pytest.warns(UserWarning, match="1 verdict"):
        df = bj.load_judgments(DATA / "arena_hard_my-model.jsonl", baseline="o3-mini")
    assert set(df["a"]) | set(df["b"]) == {"o3-mini", "my-model-7b"}
    with warnings.catch_warnings():
        warnings.simplefilter("default", UserWarning)
        assert main(["fit", str(DATA / "arena_hard_my-model.jsonl"), "--task", "winrate", "--estimand", "judges",
                     "--baseline", "o3-mini", "--out", str(tmp_path / "run")]) == 0
    assert "o3-mini" in capsys.readouterr().out


def test_the_command_line_reads_them_too(tmp_path, capsys):
    from bayes_judge.cli import main

    with warnings.catch_warnings():  # the command prints its warnings on stderr
        warnings.simplefilter("default", UserWarning)
        assert main(["fit", str(DATA / "mt_bench_gpt-4_pair.jsonl"), "--task", "winrate", "--estimand", "judges",
                     "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr()
    assert "gpt-3.5-turbo vs vicuna-13b-v1.3" in out.out and "1 verdict(s)" in out.err


def test_a_record_missing_a_field_is_named_by_its_line(tmp_path):
    lines = (DATA / "arena_hard_my-model.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    del bad["games"]
    path = tmp_path / "arena_hard.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(bad), lines[2]]) + "\n")
    with pytest.raises(ValueError, match=r"line 2 has no \['games'\]"):
        bj.read_judgments(path, format="arena-hard")
    rec = json.loads((DATA / "mt_bench_gpt-4_pair.jsonl").read_text().splitlines()[0])
    rec["g1_winner"] = "model_3"
    path = tmp_path / "mt.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(ValueError, match="line 1: g1_winner is 'model_3'"):
        bj.read_judgments(path)
    records = json.loads((DATA / "alpaca_eval_annotations.json").read_text())
    del records[1]["generator_2"]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records))
    with pytest.raises(ValueError, match=r"record 2 has no \['generator_2'\]"):
        bj.read_judgments(path, format="alpaca-eval")
    with pytest.raises(ValueError, match="not an MT-Bench, AlpacaEval or Arena-Hard judgment file"):
        read_framework(tmp_path / "x.jsonl") if (tmp_path / "x.jsonl").write_text('{"a": 1}\n') else None
    with pytest.raises(ValueError, match="framework 'helm' is not one of"):
        read_framework(DATA / "mt_bench_gpt-4_pair.jsonl", "helm")


def test_the_judges_rate_of_one_item_is_not_certain():
    """One verdict is not a rate known exactly: the judges' rate of a pair judged on one item had an
    interval of zero width ([0, 0]); a pseudo-item of unknown value widens few-item pairs."""
    one = pd.DataFrame({"item": ["q1", "q1"], "a": ["x", "y"], "b": ["y", "x"], "judge": "j", "winner": ["b", "a"]})
    s = bj.win_rate_summary(bj.win_rate(one, estimand="judges", systems=["x", "y"])).iloc[0]
    assert s["hdi_high"] - s["hdi_low"] > 0.3 and s["hdi_low"] < 0.05


def test_mt_bench_turns_and_question_ids_are_read_or_named(tmp_path):
    """"turn": null was a bare TypeError with no file or line; question_id 81.0 gave item
    "81.0/turn1" beside 81's "81/turn1" (one question split in two)."""
    lines = (DATA / "mt_bench_gpt-4_pair.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    path = tmp_path / "mt.jsonl"
    path.write_text("\n".join([json.dumps({**rec, "turn": None})] + lines[1:]) + "\n")
    with pytest.raises(ValueError, match=r"line 1: turn is None, not a turn number"):
        bj.read_judgments(path, format="mt-bench")
    path.write_text(json.dumps({**rec, "question_id": float(rec["question_id"])}) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = bj.read_judgments(path, format="mt-bench")
    assert got["item"].iloc[0] == f"{int(rec['question_id'])}/turn{rec.get('turn', 1)}"
