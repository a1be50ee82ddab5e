"""``bj.read_judgments`` / ``bj.load_judgments``: every format, Chatbot Arena exports, mappings, errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge import readers
from bayes_judge.cli import main


def _table() -> pd.DataFrame:
    """A small judgments table in the package's own names, with covariates and missing cells."""
    return pd.DataFrame({
        "item": ["q1", "q1", "q2", "q3"],
        "a": ["gpt", "llama", "gpt", "llama"],
        "b": ["llama", "gpt", "llama", "gpt"],
        "judge": ["j1", "j1", "j2", "j2"],
        "p_a": [0.8, np.nan, 0.3, 0.5],
        "winner": ["a", "b", "b", "tie"],
        "human": ["a", None, "b", None],
        "len_a": [120, 85, 300, 42],
        "note": ["x", None, None, "long answer"],
    })


def _write(df: pd.DataFrame, path: Path) -> None:
    name = path.name
    if name.endswith((".parquet", ".pq")):
        df.to_parquet(path, index=False)
    elif name.endswith((".jsonl", ".ndjson", ".jsonl.gz")):
        df.to_json(path, orient="records", lines=True)
    elif name.endswith((".json", ".json.gz")):
        df.to_json(path, orient="records")
    else:
        df.to_csv(path, index=False, sep="\t" if ".tsv" in name else ",")


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.parquet", "t.pq", "t.jsonl", "t.ndjson", "t.json",
                                  "t.csv.gz", "t.tsv.gz", "t.jsonl.gz", "t.json.gz"])
def test_each_format_round_trips(tmp_path, name):
    df = _table()
    path = tmp_path / name
    _write(df, path)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"  # pandas compressed it
    got = bj.read_judgments(path)
    pd.testing.assert_frame_equal(got, df, check_dtype=False)
    assert got["item"].tolist() == df["item"].tolist()
    out = bj.validate_judgments(got)
    assert len(out) == len(df) and out["winner"].tolist() == ["a", "b", "b", "tie"]


def test_str_path_and_format_option(tmp_path):
    path = tmp_path / "judgments.txt"
    _table().to_csv(path, index=False)
    pd.testing.assert_frame_equal(bj.read_judgments(str(path), format="csv"), _table(), check_dtype=False)
    raw = tmp_path / "records.dat"
    raw.write_bytes(gzip.compress(b'{"item": 1, "a": "x", "b": "y", "winner": "a"}\n'))
    got = bj.read_judgments(raw, format="ndjson")  # gzip recognized from the content
    assert got.to_dict("records") == [{"item": 1, "a": "x", "b": "y", "winner": "a"}]
    with pytest.raises(ValueError, match="format 'xlsx'.*not one of"):
        bj.read_judgments(path, format="xlsx")


def test_jsonl_and_json_written_by_hand(tmp_path):
    lines = ['{"item": "q1", "a": "m1", "b": "m2", "p_a": 0.7, "meta": {"len": 3}}', "",
             '{"item": "q2", "a": "m2", "b": "m1", "p_a": 0.4, "extra": 1}']
    (tmp_path / "j.jsonl").write_text("\n".join(lines) + "\n")
    got = bj.read_judgments(tmp_path / "j.jsonl")
    assert list(got.columns) == ["item", "a", "b", "p_a", "meta", "extra"]
    assert got["meta"].iloc[0] == {"len": 3} and pd.isna(got["extra"].iloc[0])
    records = [json.loads(s) for s in lines if s]
    (tmp_path / "j.json").write_text(json.dumps(records))
    pd.testing.assert_frame_equal(bj.read_judgments(tmp_path / "j.json"), got)
    assert len(bj.load_judgments(tmp_path / "j.json")) == 2


def test_bad_json_names_the_file_and_line(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"item": 1}\n{"item": 2,\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl: line 2 is not valid JSON"):
        bj.read_judgments(tmp_path / "bad.jsonl")
    (tmp_path / "list.jsonl").write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="line 1 is a JSON list, not an object"):
        bj.read_judgments(tmp_path / "list.jsonl")
    (tmp_path / "obj.json").write_text('{"item": [1, 2]}')
    with pytest.raises(ValueError, match="holds a list of records"):
        bj.read_judgments(tmp_path / "obj.json")
    (tmp_path / "garbage.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match=r"cannot read .*garbage\.parquet as parquet"):
        bj.read_judgments(tmp_path / "garbage.parquet")


# -- Chatbot Arena exports ---------------------------------------------------------------------


def _arena() -> pd.DataFrame:
    return pd.DataFrame({
        "question_id": ["q1", "q2", "q3", "q4", "q5"],
        "model_a": ["gpt-4", "vicuna", "gpt-4", "llama", "vicuna"],
        "model_b": ["vicuna", "gpt-4", "llama", "gpt-4", "llama"],
        "winner": ["model_a", "model_b", "tie", "tie (bothbad)", "model_b"],
        "turn": [1, 1, 2, 1, 1],
        "anony": [True, False, True, True, False],
        "tstamp": [1.68e9, 1.68e9 + 5, 1.68e9 + 9, 1.68e9 + 12, 1.68e9 + 20],
    })


@pytest.mark.parametrize("name", ["arena.jsonl", "arena.csv", "arena.json"])
def test_arena_export(tmp_path, name):
    _write(_arena(), tmp_path / name)
    got = bj.read_judgments(tmp_path / name)
    assert list(got.columns) == ["item", "a", "b", "winner", "turn", "anony", "tstamp", "judge"]
    assert got["item"].tolist() == ["q1", "q2", "q3", "q4", "q5"]
    assert got["a"].tolist() == ["gpt-4", "vicuna", "gpt-4", "llama", "vicuna"]
    assert got["b"].tolist() == ["vicuna", "gpt-4", "llama", "gpt-4", "llama"]
    assert got["winner"].tolist() == ["a", "b", "tie", "tie", "b"]
    assert (got["judge"] == "human").all()
    assert got["turn"].tolist() == [1, 1, 2, 1, 1]  # covariates untouched
    out = bj.validate_judgments(got)
    assert out["winner"].tolist() == ["a", "b", "tie", "tie", "b"] and len(out) == 5
    assert len(bj.load_judgments(tmp_path / name)) == 5


def test_arena_without_question_id_numbers_the_rows_and_keeps_its_voters():
    arena = _arena().drop(columns="question_id").assign(judge=["u1", "u2", "u1", "u3", "u2"])
    got = bj.read_judgments(arena)
    assert got["item"].tolist() == [0, 1, 2, 3, 4]  # each row its own item
    assert got["voter"].tolist() == ["u1", "u2", "u1", "u3", "u2"]  # the export's judge: people
    assert (got["judge"] == "human").all()
    assert "question_id" not in arena.columns and "a" not in arena.columns  # the input is not modified
    bj.validate_judgments(got)


def test_arena_with_own_a_b_columns_is_not_renamed():
    df = _arena().assign(a=["x"] * 5, b=["y"] * 5)
    got = bj.read_judgments(df)
    assert {"model_a", "model_b", "a", "b"} <= set(got.columns)
    assert got["a"].tolist() == ["x"] * 5


def test_unknown_winner_values_are_listed_with_counts():
    df = _arena().assign(winner=["model_a", "model_c", "model_c", "bothbad", "tie"])
    with pytest.raises(ValueError, match=r"'model_c' \(2\), 'bothbad' \(1\).*'tie \(bothbad\)'"):
        bj.read_judgments(df)


def test_winner_case_and_whitespace_variants():
    df = pd.DataFrame({"item": [1, 2, 3, 4, 5], "a": ["x"] * 5, "b": ["y"] * 5,
                       "winner": [" A", "b ", "TIE", "Model_B", "Tie (BothBad)"]})
    got = bj.read_judgments(df)
    assert got["winner"].tolist() == ["a", "b", "tie", "b", "tie"]
    assert got["judge"].tolist() == ["human"] * 5  # Arena spellings of winner: a human vote
    df = pd.DataFrame({"item": [1, 2], "a": ["x"] * 2, "b": ["y"] * 2, "winner": ["a", None]})
    got = bj.read_judgments(df)
    assert got["winner"].iloc[0] == "a" and pd.isna(got["winner"].iloc[1]) and "judge" not in got


def test_model_columns_with_a_probability_are_not_a_human_vote():
    df = pd.DataFrame({"question_id": [1, 2], "model_a": ["x", "y"], "model_b": ["y", "x"],
                       "winner": ["a", "b"], "p_a": [0.9, 0.2]})
    got = bj.read_judgments(df)
    assert "judge" not in got.columns and list(got.columns[:3]) == ["item", "a", "b"]


# -- mapping ---------------------------------------------------------------------------------


def _custom() -> pd.DataFrame:
    return pd.DataFrame({"prompt": ["p1", "p2", "p3"], "left": ["m1", "m2", "m1"],
                         "right": ["m2", "m1", "m3"], "prob": [0.9, 0.1, 0.55], "grader": ["g"] * 3})


@pytest.mark.parametrize("mapping", [
    "item=prompt,a=left,b=right,p_a=prob,judge=grader",
    "  item = prompt , a=left,\tb =right, p_a=prob,judge=grader, ",
    {"item": "prompt", "a": "left", "b": "right", "p_a": "prob", "judge": "grader"},
])
def test_mapping_renames_target_from_source(mapping):
    got = bj.read_judgments(_custom(), mapping=mapping)
    assert list(got.columns) == ["item", "a", "b", "p_a", "judge"]
    assert got["p_a"].tolist() == [0.9, 0.1, 0.55]
    assert bj.validate_judgments(got)["winner"].tolist() == ["a", "b", "a"]


def test_mapping_swap_and_identity():
    df = pd.DataFrame({"item": [1], "a": ["x"], "b": ["y"], "winner": ["a"]})
    got = bj.read_judgments(df, mapping="a=b,b=a,item=item")
    assert got[["a", "b"]].iloc[0].tolist() == ["y", "x"]


@pytest.mark.parametrize("mapping, match", [
    ("a=left,b", r"entry 'b': no '='"),
    ("a=left,b=", r"entry 'b=': empty column name"),
    ("=left", r"entry '=left': empty column name"),
    ("a=lft,b=right", r"entry 'a=lft': column 'lft' is not in"),
    ("a=left,b=left", r"entry 'b=left': column 'left' is already mapped by 'a=left'"),
    ("a=left,a=right", r"entry 'a=right': column 'a' is already mapped by 'a=left'"),
    ("prompt=left", r"entry 'prompt=left': .* already has a column 'prompt'"),
])
def test_mapping_errors_name_the_entry_and_list_the_columns(mapping, match):
    with pytest.raises(ValueError, match=match) as err:
        bj.read_judgments(_custom(), mapping=mapping)
    assert "['prompt', 'left', 'right', 'prob', 'grader']" in str(err.value)


def test_mapping_error_from_a_file_names_the_file(tmp_path):
    path = tmp_path / "custom.csv"
    _custom().to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"not in .*custom\.csv.*'prompt', 'left'"):
        bj.read_judgments(path, mapping="a=model_a")
    with pytest.raises(ValueError, match="names must be strings"):
        bj.read_judgments(path, mapping={"a": 3})


def test_csv_ids_are_read_as_text_also_through_a_mapping(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("qid,sys1,sys2,winner\n001,1,2,a\n002,2,1,B\n")
    got = bj.read_judgments(path, mapping="item=qid,a=sys1,b=sys2")
    assert got["item"].tolist() == ["001", "002"] and got["a"].tolist() == ["1", "2"]
    assert got["winner"].tolist() == ["a", "b"]


# -- probability-looking columns ---------------------------------------------------------------


def test_probability_looking_column_warns_and_is_not_used():
    df = _custom().rename(columns={"prompt": "item", "left": "a", "right": "b"}).assign(winner="a")
    with pytest.warns(UserWarning, match=r"'prob'.*pass mapping p_a=prob if it is the judge's P\(a better\)"):
        got = bj.read_judgments(df)
    assert "p_a" not in got.columns and got["prob"].tolist() == [0.9, 0.1, 0.55]


def test_binary_or_out_of_range_or_mapped_columns_do_not_warn():
    # pytest turns warnings into errors here: none may be raised
    df = pd.DataFrame({"item": [1, 2, 3], "a": ["x"] * 3, "b": ["y"] * 3, "winner": ["a", "b", "a"],
                       "flag": [0, 1, 1], "bflag": [0.0, 1.0, np.nan], "ok": [True, False, True],
                       "length": [0.5, 3.0, 10.0], "empty": [np.nan] * 3})
    bj.read_judgments(df)
    bj.read_judgments(_custom(), mapping="item=prompt,a=left,b=right,p_a=prob")
    bj.read_judgments(df.assign(score=[0.2, 0.4, 0.9], p_a=[0.6, 0.3, 0.8]))


# -- files, errors, rows -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["notes.xlsx", "noext", "t.parquet.gz"])
def test_unsupported_suffix(tmp_path, name):
    path = tmp_path / name
    path.write_text("x")
    with pytest.raises(ValueError, match="unsupported file type") as err:
        bj.read_judgments(path)
    assert str(path) in str(err.value) and ".jsonl" in str(err.value) and ".parquet" in str(err.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.csv not found"):
        bj.read_judgments(tmp_path / "nope.csv")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        bj.read_judgments(tmp_path)
    with pytest.raises(ValueError, match="file path or a pandas DataFrame"):
        bj.read_judgments(42)
    with pytest.raises(ValueError, match="format= applies to files"):
        bj.read_judgments(_table(), format="csv")


@pytest.mark.parametrize("name", ["rows.csv", "rows.parquet", "rows.jsonl"])
def test_every_row_kept_in_order(tmp_path, name):
    df = pd.DataFrame({"question_id": [f"q{i}" for i in range(8)],
                       "model_a": ["x", "y"] * 4, "model_b": ["y", "x"] * 4,
                       "winner": ["model_a", "tie", None, "model_b"] * 2,
                       "len_a": [1.0, np.nan, 3.0, np.nan, 5.0, 6.0, np.nan, 8.0],
                       "comment": [None, "c", None, None, "d", None, None, None]})
    df = pd.concat([df, df.iloc[[2]]], ignore_index=True)  # a duplicate row stays too
    _write(df, tmp_path / name)
    got = bj.read_judgments(tmp_path / name)
    assert len(got) == len(df) == 9
    assert got["item"].tolist() == df["question_id"].tolist()
    np.testing.assert_array_equal(got["len_a"].to_numpy(), df["len_a"].to_numpy())
    assert got["comment"].isna().tolist() == df["comment"].isna().tolist()


def test_dataframe_index_is_kept():
    df = _table().set_axis([10, 11, 12, 13])
    assert bj.read_judgments(df).index.tolist() == [10, 11, 12, 13]
    assert bj.load_judgments(df).index.tolist() == [0, 1, 2, 3]


def test_load_judgments_validates():
    with pytest.raises(ValueError, match="compared with itself"):
        bj.load_judgments(pd.DataFrame({"item": [1], "a": ["x"], "b": ["x"], "winner": ["a"]}))


def test_public_names():
    assert bj.read_judgments is readers.read_judgments and bj.load_judgments is readers.load_judgments


# -- the command line --------------------------------------------------------------------------


def _arena_like_csv(path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 30
    left = np.where(np.arange(n) % 2 == 0, "gpt", "llama")
    right = np.where(left == "gpt", "llama", "gpt")
    gpt_wins = rng.random(n) < 0.7
    winner = np.where(gpt_wins == (left == "gpt"), "model_a", "model_b").astype(object)
    winner[[3, 11]] = ["tie", "tie (bothbad)"]
    pd.DataFrame({"question_id": [f"q{i}" for i in range(n)], "left": left, "right": right,
                  "winner": winner, "len_left": rng.integers(10, 500, n)}).to_csv(path, index=False)


def test_cli_fit_reads_an_arena_style_csv_with_map(tmp_path, capsys):
    path = tmp_path / "arena.csv"
    _arena_like_csv(path)
    out = tmp_path / "run"
    code = main(["fit", str(path), "--map", "a=left, b=right", "--task", "winrate", "--method", "observed",
                 "--draws", "50", "--chains", "1", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "30 judgments" in text and "gpt vs llama" in text
    assert bj.load_run(out).posterior["p"].sizes["pair"] == 1


def test_cli_bad_map_is_one_error_line(tmp_path, capsys):
    path = tmp_path / "arena.csv"
    _arena_like_csv(path)
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(path), "--map", "a=lft,b=right", "--task", "winrate", "--out", str(tmp_path / "r")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bayes-judge fit: error: mapping entry 'a=lft'" in err[0]
    assert "judgments table" in err[0] and "'question_id', 'left', 'right'" in err[0]
    assert not (tmp_path / "r.nc").exists()


def test_a_csv_cut_inside_its_last_number_is_refused(tmp_path):
    """Issue 31 (4): cut inside its last number, a CSV loaded with another p_a (0.93 → 0.0)."""
    path = tmp_path / "j.csv"
    pd.DataFrame({"item": [1, 2], "a": ["x", "x"], "b": ["y", "y"], "judge": ["j", "k"], "p_a": [0.4, 0.93]}).to_csv(
        path, index=False)
    full = path.read_bytes()
    assert bj.read_judgments(path)["p_a"].tolist() == [0.4, 0.93]
    path.write_bytes(full[:-3])  # "...,0." : the last number cut
    with pytest.raises(ValueError, match="does not end with a line break.*'2,x,y,k,0.'"):
        bj.read_judgments(path)
    # gzip'd: the same cut text compressed whole (it read as p_a 0.0, winner 'b'), and a cut stream
    import gzip

    gz = tmp_path / "j.csv.gz"
    gz.write_bytes(gzip.compress(full))
    assert bj.read_judgments(gz)["p_a"].tolist() == [0.4, 0.93]
    gz.write_bytes(gzip.compress(full[:-3]))
    with pytest.raises(ValueError, match="does not end with a line break.*'2,x,y,k,0.'"):
        bj.read_judgments(gz)
    gz.write_bytes(gzip.compress(full)[:-12])
    with pytest.raises(ValueError, match="gzip stream is incomplete"):
        bj.read_judgments(gz)


def _arena_rows(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    models = ["gpt-4", "claude-v1", "vicuna-13b", "alpaca-13b"]
    strength = dict(zip(models, [1.5, 1.0, 0.3, -0.5], strict=True))
    rows = []
    for i in range(n):
        a, b = rng.choice(models, 2, replace=False)
        pa = 1 / (1 + np.exp(-(strength[a] - strength[b])))
        u = rng.random()
        w = "tie" if u < 0.1 else ("model_a" if u < 0.1 + 0.9 * pa else "model_b")
        rows.append({"question_id": f"q{i % 25}", "model_a": a, "model_b": b, "winner": w,
                     "judge": f"arena_user_{rng.integers(1000)}", "turn": 1})
    return rows


def test_the_real_arena_export_reads_its_judge_column_as_voters(tmp_path):
    """Issue 31 (13): the real Chatbot Arena export has a `judge` column of user ids; they are
    people, one judge ("human"), and repeated votes on one prompt and pair are samples."""
    path = tmp_path / "arena.json"
    rows = _arena_rows(300, 0)
    rows.append(dict(rows[0], judge="arena_user_other"))  # a second person, same prompt and pair
    path.write_text(json.dumps(rows))
    df = bj.load_judgments(path)
    assert set(df["judge"]) == {"human"} and df["voter"].str.startswith("arena_user_").all()
    assert "sample" in df.columns and df["sample"].max() >= 1
    fit = bj.leaderboard(df, chains=2, draws=200, tune=200, seed=0)
    assert fit.attrs["model"] == "bt" and fit.attrs["estimand"] == "human"
    assert bj.leaderboard_summary(fit)["system"].iloc[0] == "gpt-4"


def test_the_kaggle_arena_format_reads_its_one_hot_winner(tmp_path):
    rows = _arena_rows(40, 1)
    kaggle = pd.DataFrame({"id": range(40), "model_a": [r["model_a"] for r in rows],
                           "model_b": [r["model_b"] for r in rows], "prompt": ["..."] * 40,
                           "winner_model_a": [int(r["winner"] == "model_a") for r in rows],
                           "winner_model_b": [int(r["winner"] == "model_b") for r in rows],
                           "winner_tie": [int(r["winner"] == "tie") for r in rows]})
    path = tmp_path / "train.csv"
    kaggle.to_csv(path, index=False)
    df = bj.load_judgments(path)
    expect = [{"model_a": "a", "model_b": "b", "tie": "tie"}[r["winner"]] for r in rows]
    assert df["winner"].tolist() == expect and set(df["judge"]) == {"human"}
    bad = kaggle.assign(winner_tie=1)
    bad.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"exactly one 1 per row.*row\(s\) 0"):
        bj.load_judgments(path)


def test_an_llm_judges_file_in_model_a_model_b_columns_stays_the_judges(tmp_path):
    """model_a / model_b with a judge column naming an LLM and plain winner labels is a judge's file:
    its verdicts are that judge's, never people's votes (with or without a mapping)."""
    df = pd.DataFrame({"item": [1, 1, 2, 2], "model_a": ["m1", "m2", "m1", "m2"], "model_b": ["m2", "m1", "m2", "m1"],
                       "judge": "gpt-4o", "winner": ["a", "b", "a", "a"]})
    path = tmp_path / "j.csv"
    df.to_csv(path, index=False)
    for got in (bj.read_judgments(path), bj.read_judgments(path, mapping="a=model_a,b=model_b"), bj.read_judgments(df)):
        assert set(got["judge"]) == {"gpt-4o"} and "voter" not in got.columns
    # the real export (voter ids in `judge`) and Arena's winner spelling still mean people
    voters = df.assign(judge=["arena_user_1", "arena_user_2"] * 2)
    assert set(bj.read_judgments(voters)["judge"]) == {"human"}
    spelled = df.assign(winner=["model_a", "model_b", "model_a", "tie"]).drop(columns="judge")
    assert set(bj.read_judgments(spelled)["judge"]) == {"human"}
    # Arena's winner spelling in an LLM judge's file (lmsys' mt_bench gpt4_pair layout): still the judge's
    judged = df.assign(winner=["model_a", "model_b", "model_a", "tie (bothbad)"])
    got = bj.read_judgments(judged)
    assert set(got["judge"]) == {"gpt-4o"} and "voter" not in got.columns
    assert got["winner"].tolist() == ["a", "b", "a", "tie"]


def test_ids_named_none_or_na_stay_names_in_a_csv(tmp_path):
    """pandas reads "None", "NA", "null" as missing by default; as a system, judge or item id they are
    names (a baseline called "None"), and only an empty cell is a missing id. p_a keeps pandas' NA."""
    path = tmp_path / "na.csv"
    path.write_text("item,a,b,judge,winner,p_a\nNA,None,gpt-4,null,b,NA\n2,gpt-4,None,null,a,0.7\n")
    got = bj.read_judgments(path)
    assert got["a"].tolist() == ["None", "gpt-4"] and got["item"].tolist() == ["NA", "2"]
    assert got["judge"].tolist() == ["null", "null"] and np.isnan(got["p_a"].iloc[0])
    path.write_text("item,a,b,winner\n1,,gpt-4,b\n")
    with pytest.raises(ValueError, match=r"column 'a': missing id in row\(s\) 0"):
        bj.validate_judgments(bj.read_judgments(path))


def test_a_delimiter_ending_every_row_does_not_shift_the_columns(tmp_path):
    """pandas took the first column as the index when each row had one field more than the header:
    item read x, a read y, ..., and the errors named the wrong columns."""
    path = tmp_path / "t.csv"
    path.write_text("item,a,b,judge,winner\n1,x,y,j,a,\n2,y,x,j,b,\n")
    got = bj.read_judgments(path)
    assert got[["item", "a", "b", "judge", "winner"]].values.tolist() == [["1", "x", "y", "j", "a"],
                                                                          ["2", "y", "x", "j", "b"]]
    path.write_text("item,a,b,judge,winner\n1,x,y,j,a,zz\n2,y,x,j,b,\n")  # a real extra value: never dropped
    with pytest.raises(ValueError, match=r"row\(s\) \[0\] hold one value more than the header's 5 columns \(e.g. 'zz'\)"):
        bj.read_judgments(path)
    path.write_text("item,a,b,judge,winner\n1,x,y,j,a,zz,ww\n")
    with pytest.raises(ValueError, match="two or more values beyond the header"):
        bj.read_judgments(path)


def test_ids_pandas_wrote_as_floats_read_as_in_memory(tmp_path):
    """A CSV of float-written ids (1.0, 2.0) named system "1.0" where the same table in memory or in
    Parquet has "1"; labels keyed 1 then matched no system. Other text ids keep their text."""
    df = pd.DataFrame({"item": [1, 2, 3, 4], "a": [1.0, 2.0, 1.0, 2.0], "b": [2.0, 1.0, 2.0, 1.0],
                       "winner": list("abaa")})
    df.to_csv(tmp_path / "f.csv", index=False)
    df.to_parquet(tmp_path / "f.parquet", index=False)
    csv, pq = bj.read_judgments(tmp_path / "f.csv"), bj.read_judgments(tmp_path / "f.parquet")
    assert csv[["a", "b"]].values.tolist() == bj.validate_judgments(pq)[["a", "b"]].values.tolist()
    assert set(csv["a"]) == {"1", "2"}
    other = pd.DataFrame({"item": ["007", "008"], "a": ["v1.0", "x"], "b": ["y", "1.0"], "winner": ["a", "b"]})
    other.to_csv(tmp_path / "g.csv", index=False)
    got = bj.read_judgments(tmp_path / "g.csv")
    assert got[["item", "a", "b"]].values.tolist() == [["007", "v1.0", "y"], ["008", "x", "1.0"]]


@pytest.mark.parametrize("name", ["j.json", "j.ndjson", "j.jsonl.gz", "j.json.gz", "j.csv.gz", "j.tsv", "j.parquet",
                                  "lines.json"])
def test_summary_of_any_judgments_table_says_it_is_not_a_run(tmp_path, capsys, name):
    """`summary j.json` (or .ndjson, .jsonl.gz) said "file j.nc not found"; only .csv, .tsv,
    .parquet, .pq and .jsonl were recognized as tables."""
    path = tmp_path / name
    if name == "lines.json":  # JSON Lines in a .json file
        path.write_text('{"item": 1, "a": "x", "b": "y", "winner": "a"}\n')
    else:
        _write(_table(), path)
    with pytest.raises(SystemExit):
        main(["summary", str(path)])
    assert "is a table, not a saved run: fit it first" in capsys.readouterr().err


def test_summary_of_a_run_manifest_without_its_netcdf_still_names_the_missing_file(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"format": 1, "model": "bt"}, indent=2))
    with pytest.raises(SystemExit):
        main(["summary", str(path)])
    err = capsys.readouterr().err
    assert "run.nc not found" in err and "is a table" not in err
