"""MT-Bench, AlpacaEval and Arena-Hard judgment files read as they come (fixtures written by hand
in each format, from the benchmarks' own files)."""

from __future__ import annotations

import gzip
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


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


_HUMAN = {"question_id": 81, "model_a": "m1", "model_b": "m2", "winner": "model_a", "judge": "expert_0", "turn": 1}


def test_mt_bench_human_judgments_keep_their_turns_apart(tmp_path):
    """The human-judgment path (question_id, model_a, model_b, winner, judge, turn) ignored `turn`:
    turn 1 and turn 2 of question 81 were one item, counted as repeat samples of one comparison."""
    path = _jsonl(tmp_path / "human.jsonl", _HUMAN, {**_HUMAN, "turn": 2, "winner": "model_b"},
                  {**_HUMAN, "question_id": 82, "judge": "expert_1"})
    got = bj.read_judgments(path)
    assert got["item"].tolist() == ["81/turn1", "81/turn2", "82/turn1"]
    assert "sample" not in got.columns and got["turn"].tolist() == [1, 2, 1]
    pair = json.loads((DATA / "mt_bench_gpt-4_pair.jsonl").read_text().splitlines()[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = bj.read_judgments(_jsonl(tmp_path / "pair.jsonl", pair))
    assert pairs["item"].iloc[0] == "81/turn2" and "81/turn2" in set(got["item"])  # the same ids


@pytest.mark.parametrize("turn", [2.5, True, None])
def test_a_human_judgments_odd_turn_is_named_by_its_row(tmp_path, turn):
    path = _jsonl(tmp_path / "human.jsonl", _HUMAN, {**_HUMAN, "turn": 2}, {**_HUMAN, "turn": turn})
    with pytest.raises(ValueError, match=r"column 'turn' of .*human\.jsonl: row\(s\) 2 hold"):
        bj.read_judgments(path)


def test_a_missing_turn_in_an_integer_column_is_named_by_its_row():
    """A nullable integer turn column with a gap (a table, not a file) took the fast path for whole
    columns of ints and failed inside pandas ("cannot convert NA to integer")."""
    df = pd.DataFrame({"question_id": [81, 81, 82], "model_a": "m1", "model_b": "m2",
                       "winner": ["model_a", "model_b", "tie"], "judge": "expert_1",
                       "turn": pd.array([1, None, 1], dtype="Int64")})
    with pytest.raises(ValueError, match=r"column 'turn' of .*row\(s\) 1 hold"):
        bj.read_judgments(df)


_GAME = {"user_prompt": "p", "judgment": "j", "score": "B>A"}
_ARENA_REC = {"question_id": "q1", "model": "mine", "judge": "gpt-4-1106-preview", "games": [_GAME, _GAME]}


@pytest.mark.parametrize(("game", "found"), [
    ({"verdict": "A>B"}, r"an object with the fields \['verdict'\]"),
    ("B>A", r"a JSON str \('B>A'\)"),
    (None, "null"),
])
def test_an_arena_hard_game_without_a_score_is_a_format_error(tmp_path, game, found):
    """A game that was no object, or had no `score`, was dropped with a warning blaming the judge."""
    path = _jsonl(tmp_path / "ah.jsonl", _ARENA_REC, {**_ARENA_REC, "games": [_GAME, game]})
    with pytest.raises(ValueError, match=rf"line 2: game 2 is {found}, not an object with a 'score'"):
        bj.read_judgments(path)
    with pytest.warns(UserWarning, match="1 verdict"):  # a null score is still the judge's unread verdict
        got = bj.read_judgments(_jsonl(path, {**_ARENA_REC, "games": [_GAME, {**_GAME, "score": None}]}))
    assert len(got) == 1


@pytest.mark.parametrize("turn", [2.5, True, "2.5"])
def test_an_mt_bench_turn_is_never_coerced(tmp_path, turn):
    """"turn": 2.5 read as turn 2 and "turn": true as turn 1."""
    rec = json.loads((DATA / "mt_bench_gpt-4_pair.jsonl").read_text().splitlines()[0])
    path = _jsonl(tmp_path / "mt.jsonl", {**rec, "turn": turn})
    with pytest.raises(ValueError, match=rf"line 1: turn is {turn!r}, not a turn number"):
        bj.read_judgments(path)
    assert bj.read_judgments(_jsonl(path, {**rec, "turn": 2.0}))["item"].iloc[0] == "81/turn2"


_ALPACA = {"instruction": "q1", "generator_1": "ref", "generator_2": "mine", "annotator": "ann", "preference": 2.0}


@pytest.mark.parametrize("pref", [True, False, "2", 3, 0.5])
def test_an_alpaca_eval_preference_of_another_kind_is_named_by_its_record(tmp_path, pref):
    """"preference": true read as p_a 1.0 (a bool passes an int check)."""
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps([_ALPACA, {**_ALPACA, "preference": pref}]))
    with pytest.raises(ValueError, match=rf"record 2: preference is {pref!r}, not a number in \[1, 2\]"):
        bj.read_judgments(path)


def test_an_alpaca_eval_preference_of_0_is_a_draw(tmp_path):
    """AlpacaEval's win rate counts a preference of 0 as a draw, as 1.5; it was refused."""
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps([{**_ALPACA, "preference": p} for p in (0, 0.0, 1.5, 1, 2)]))
    got = bj.read_judgments(path)
    assert got["p_a"].tolist() == [0.5, 0.5, 0.5, 1.0, 0.0]
    assert set(got["a"]) == {"ref"} and set(got["b"]) == {"mine"}  # the file's generator_1 / generator_2


def test_a_gzipped_json_list_names_records_not_lines(tmp_path):
    """A .json.gz AlpacaEval file said "line 3" for record 3 (the unit came from the last suffix)."""
    path = tmp_path / "annotations.json.gz"
    text = json.dumps([_ALPACA, _ALPACA, {**_ALPACA, "generator_2": None}], indent=1)
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(ValueError, match=r"annotations\.json\.gz: record 3 has no \['generator_2'\]"):
        bj.read_judgments(path)
    lines = tmp_path / "annotations.json"  # JSON Lines in a .json file: its errors name lines
    lines.write_text(json.dumps(_ALPACA) + "\n" + json.dumps({**_ALPACA, "preference": True}) + "\n")
    with pytest.raises(ValueError, match="line 2: preference is True"):
        read_framework(lines)


@pytest.mark.parametrize(("name", "file", "rows"), [
    ("mt_bench", "mt_bench_gpt-4_pair.jsonl", 5), ("MT_Bench", "mt_bench_gpt-4_pair.jsonl", 5),
    ("alpaca_eval", "alpaca_eval_annotations.json", 2), ("arena_hard", "arena_hard_my-model.jsonl", 5),
])
def test_benchmark_format_names_with_underscores(name, file, rows):
    """format="mt_bench" was "not one of ['csv', 'json', ...]"; read_framework called directly
    still wanted the hyphen."""
    from bayes_judge.judge_files import read_framework

    with pytest.warns(UserWarning, match="1 verdict"):
        assert len(bj.read_judgments(DATA / file, format=name)) == rows
    with pytest.warns(UserWarning, match="1 verdict"):
        assert len(read_framework(DATA / file, name)) == rows


def test_an_unknown_format_lists_the_benchmarks_too():
    """format="alpacaeval" listed only csv, json, ... as the valid formats."""
    with pytest.raises(ValueError, match=r"format 'alpacaeval' .*not one of \['csv'.*'alpaca-eval', 'arena-hard', "
                                         r"'mt-bench'\]"):
        bj.read_judgments(DATA / "alpaca_eval_annotations.json", format="alpacaeval")


@pytest.mark.parametrize(("name", "content", "fmt"), [
    ("empty.jsonl", b"", None), ("blank.jsonl", b"\n\n", None), ("empty.json", b"", None),
    ("list.json", b"[]", None), ("list.json.gz", gzip.compress(b"[]"), None),
    ("empty.jsonl", b"", "mt-bench"), ("list.json", b"[]", "alpaca_eval"),
], ids=["empty-jsonl", "blank-jsonl", "empty-json", "list-json", "list-json-gz", "mt-bench", "alpaca_eval"])
def test_a_file_with_no_records_is_an_error(tmp_path, name, content, fmt):
    """An empty .jsonl or a .json holding [] read as an empty table; a 0-byte .json was "not valid JSON"."""
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match="the file has no records") as err:
        bj.read_judgments(path, format=fmt)
    assert str(err.value).count(str(path)) == 1


def test_the_skipped_verdicts_warning_points_at_the_caller():
    """The warning was attributed to readers.py (a fixed stacklevel one frame short)."""
    for read in (lambda: bj.read_judgments(DATA / "mt_bench_gpt-4_pair.jsonl"),
                 lambda: bj.read_judgments(DATA / "mt_bench_gpt-4_pair.jsonl", format="mt-bench"),
                 lambda: bj.load_judgments(DATA / "arena_hard_my-model.jsonl"),
                 lambda: read_framework(DATA / "alpaca_eval_annotations.json")):
        with pytest.warns(UserWarning, match="1 verdict") as caught:
            read()
        assert [w.filename for w in caught] == [__file__]
