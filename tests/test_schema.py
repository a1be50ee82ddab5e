import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj


def base(**cols):
    d = {"item": [1, 2, 3], "a": ["x", "x", "y"], "b": ["y", "y", "x"], "winner": ["a", "b", "tie"]}
    d.update(cols)
    return pd.DataFrame(d)


def test_normalizes_and_keeps_extra_columns():
    df = base(extra=[1, 2, 3], winner=["A", " b", "TIE"])
    out = bj.validate_judgments(df)
    assert list(out["winner"]) == ["a", "b", "tie"]
    assert list(out["judge"]) == ["judge"] * 3
    assert list(out["item"]) == ["1", "2", "3"]
    assert list(out["extra"]) == [1, 2, 3]
    assert out["human"].isna().all()
    assert df["winner"].tolist() == ["A", " b", "TIE"], "input must not be modified"


def test_winner_derived_from_p_a():
    out = bj.validate_judgments(base(winner=None).drop(columns="winner").assign(p_a=[0.9, 0.1, 0.5]))
    assert list(out["winner"]) == ["a", "b", "tie"]


def test_partial_winner_filled_from_p_a():
    out = bj.validate_judgments(base(winner=["a", None, None], p_a=[0.8, 0.2, 0.5]))
    assert list(out["winner"]) == ["a", "b", "tie"]


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d.iloc[0:0], "empty"),
        (lambda d: d.drop(columns="b"), r"missing required column\(s\) \['b'\]"),
        (lambda d: d.drop(columns="winner"), "'winner' column, a 'p_a' column"),
        (lambda d: d.assign(b=["x", "y", "y"]), r"compared with itself in row\(s\) 0, 2"),
        (lambda d: d.assign(winner=["a", "left", "b"]), r"column 'winner': unknown value\(s\) \['left'\] in row\(s\) 1"),
        (lambda d: d.assign(p_a=[0.2, np.nan, 0.5]).drop(columns="winner"), r"column 'p_a': NaN .* row\(s\) 1"),
        (lambda d: d.assign(p_a=[0.2, 1.5, -0.1]).drop(columns="winner"), r"outside \[0, 1\] in row\(s\) 1, 2"),
        (lambda d: d.assign(p_a=[0.2, np.inf, 0.3]).drop(columns="winner"), r"row\(s\) 1"),
        (lambda d: d.assign(p_a=["0.2", "high", "0.3"]).drop(columns="winner"), r"not a number in row\(s\) 1"),
        (lambda d: d.assign(p_a=[0.9, 0.1, 0.5], winner=["b", "b", "tie"]), r"disagree in row\(s\) 0"),
        (lambda d: d.assign(item=[1, 1, 1], a=["x"] * 3, b=["y"] * 3), r"duplicate judgments: row\(s\) 0, 1, 2"),
        (lambda d: d.assign(human=["a", "maybe", None]), r"column 'human'.*row\(s\) 1"),
        (lambda d: d.assign(item=[1, None, 3]), r"column 'item': missing id in row\(s\) 1"),
        (lambda d: d.assign(judge=["j", None, "j"]), r"column 'judge'.* row\(s\) 1"),
        (lambda d: d.assign(winner=[None, "a", "b"]), r"column 'winner': missing value in row\(s\) 0"),
    ],
)
def test_bad_input_names_column_and_rows(mutate, match):
    with pytest.raises(ValueError, match=match):
        bj.validate_judgments(mutate(base()))


def test_not_a_dataframe():
    with pytest.raises(ValueError, match="pandas DataFrame"):
        bj.validate_judgments([{"item": 1}])


def test_repeats_allowed_with_sample_column():
    df = base(item=[1, 1, 1], a=["x"] * 3, b=["y"] * 3, sample=[0, 1, 2])
    assert len(bj.validate_judgments(df)) == 3
    with pytest.raises(ValueError, match="duplicate"):
        bj.validate_judgments(df.assign(sample=[0, 0, 1]))


def test_both_orders_are_not_duplicates():
    df = base(item=[1, 1, 2], a=["x", "y", "x"], b=["y", "x", "y"])
    assert len(bj.validate_judgments(df)) == 3


def test_one_system_keeps_one_name_across_int_and_float_columns():
    """Issue 31 (3): pandas turns an int id column into floats after a NaN or a merge; system 1
    must stay one system, not "1" and "1.0" (two half-data pairs)."""
    df = pd.DataFrame({"item": [1, 2, 3], "a": [1, 2, 1], "b": [2.0, 1.0, 3.5], "winner": ["a", "b", "a"]})
    out = bj.validate_judgments(df)
    assert out["a"].tolist() == ["1", "2", "1"] and out["b"].tolist() == ["2", "1", "3.5"]
    mixed = pd.DataFrame({"item": [1, 2], "a": pd.Series([1, 2.0], dtype=object), "b": ["x", "y"], "winner": ["a", "a"]})
    assert bj.validate_judgments(mixed)["a"].tolist() == ["1", "2"]
    fit = bj.win_rate(pd.concat([df.assign(judge="j0"), df.assign(judge="j1")]), method="observed")
    assert set(fit.attrs["systems"]) == {"1", "2", "3.5"}


@pytest.mark.parametrize("a, match", [
    (["gpt-4", "gpt-4 ", "x"], r"differ only by surrounding whitespace \[\['gpt-4', 'gpt-4 '\]\]"),
    (["gpt-4", "  ", "x"], r"empty id in row\(s\) 1"),
    (["gpt-4", "", "x"], r"empty id in row\(s\) 1"),
])
def test_system_names_that_are_empty_or_differ_by_whitespace_are_refused(a, match):
    df = pd.DataFrame({"item": [1, 2, 3], "a": a, "b": ["y", "y", "y"], "winner": ["a", "b", "a"]})
    with pytest.raises(ValueError, match=match):
        bj.validate_judgments(df)


def test_items_that_differ_by_whitespace_are_refused():
    """An item typed twice ("q1" and "q1 ") would split its two presentation orders into two items."""
    df = pd.DataFrame({"item": ["q1", "q1 ", "q2", "q2"], "a": ["x", "y", "x", "y"], "b": ["y", "x", "y", "x"],
                       "winner": ["a", "b", "a", "a"]})
    with pytest.raises(ValueError, match=r"'item': ids that differ only by surrounding whitespace \[\['q1', 'q1 '\]\]"):
        bj.validate_judgments(df)
    assert len(bj.validate_judgments(df.assign(item=["", "", "q2", "q2"]))) == 4  # an empty item id is one item


def test_ids_mixing_texts_and_whole_floats_stay_one_id():
    """An object column holding texts and floats ("mixed") fell through to str(): 2.0 became "2.0"
    beside the int 2's "2", and one candidate became two."""
    import bayes_judge as bj
    from bayes_judge.schema import ids_as_text

    assert ids_as_text(pd.Series([2.0, "y", 2, 2.5], dtype=object)).tolist() == ["2", "y", "2", "2.5"]
    df = pd.DataFrame({"item": "q", "a": [2.0, "y", "z"], "b": ["y", 2, 2], "p_a": [0.7, 0.4, 0.3]})
    assert sorted(bj.rank(df, method="win-ratio")["candidate"]) == ["2", "y", "z"]
    two = pd.concat([pd.DataFrame({"item": [1, 1], "a": ["x", "y"], "b": ["y", "z"], "p_a": [0.6, 0.7]}),
                     pd.DataFrame({"item": ["2", 1.0], "a": ["x", "x"], "b": ["y", "z"], "p_a": [0.6, 0.8]})])
    assert sorted(bj.validate_judgments(two)["item"].unique()) == ["1", "2"]


@pytest.mark.parametrize("col", [
    pd.Series(np.r_[np.arange(20_000) % 300, 7].astype(float) + np.r_[np.zeros(20_000), 0.5]),  # floats, one not whole
    pd.Series(np.r_[np.arange(20_000) % 300, -0.0, 2.0**60]),
    pd.Series(np.arange(20_000) % 300, dtype=np.uint16),
])
def test_long_id_columns_read_value_by_value_give_the_rows_strings(col):
    """A long numeric id column is formatted once per distinct value, not per row: the very
    strings of the row-by-row reading."""
    from bayes_judge.schema import _ids_as_text, ids_as_text

    kind = col.dtype.kind
    inferred = pd.api.types.infer_dtype(col, skipna=True) if kind == "O" else ""
    fast, slow = ids_as_text(col), _ids_as_text(col, kind, inferred)
    assert fast.dtype == object and fast.index.equals(col.index)
    assert fast.fillna("<NA>").tolist() == slow.fillna("<NA>").tolist()
    assert fast.iloc[301] == "1"  # whole floats as integers


def test_a_long_id_column_with_a_missing_value_is_read_row_by_row():
    """The value-by-value path needs every row to hold a value: a missing one leaves it (it stays
    missing, for the caller's own check to name)."""
    from bayes_judge.schema import ids_as_text

    out = ids_as_text(pd.Series(np.r_[np.arange(20_000) % 300, np.nan]))
    assert out.isna().sum() == 1 and out.iloc[301] == "1"


@pytest.mark.parametrize("seed", range(4))
def test_the_packed_duplicate_key_finds_what_pandas_finds(seed):
    """The id columns' codes packed into one integer mark the very rows ``DataFrame.duplicated``
    marks (mixed radix: item 12 with system 3 is not item 1 with system 23)."""
    from bayes_judge.schema import KEY_COLUMNS, _duplicated

    rng = np.random.default_rng(seed)
    n = 400
    out = pd.DataFrame({"item": rng.choice(["1", "12", "123", "2", "23"], n), "a": rng.choice(["3", "23", "x"], n),
                        "b": rng.choice(["y", "1", "z2"], n), "judge": rng.choice(["j", "j2"], n)})
    coded = {c: pd.factorize(out[c]) for c in KEY_COLUMNS}
    expect = out.duplicated(list(KEY_COLUMNS), keep=False).to_numpy()
    assert expect.any() and not expect.all()
    assert np.array_equal(_duplicated(out, list(KEY_COLUMNS), coded), expect)
    out["sample"] = rng.integers(0, 2, n)  # repeats numbered: coded too
    coded["sample"] = pd.factorize(out["sample"])
    key = [*KEY_COLUMNS, "sample"]
    assert np.array_equal(_duplicated(out, key, coded), out.duplicated(key, keep=False).to_numpy())


def test_a_missing_sample_is_a_value_of_its_own_in_the_duplicate_key():
    """factorize codes a missing value -1, which packed into the key collided with another row's
    (item 'p', sample NaN read as item 'o', sample 1.0): two distinct rows called repeats."""
    df = pd.DataFrame({"item": ["o", "o", "p"], "a": "x", "b": "y", "winner": "a", "sample": [0.0, 1.0, np.nan]})
    assert len(bj.validate_judgments(df)) == 3
    with pytest.raises(ValueError, match="duplicate judgments"):
        bj.validate_judgments(pd.concat([df, df.iloc[[1]]], ignore_index=True))


@pytest.mark.parametrize("column", [
    ["x", "y", "x", "z"],  # object strings
    pd.array(["x", "y", "x", "z"], dtype="string[pyarrow]"),  # Arrow strings (a Parquet file's)
    [1, 2, 1, 30],  # integers
    [1.0, 2.0, 1.0, 30.5],  # floats: 1.0 reads "1", 30.5 stays
    [1, "1", 2.0, True],  # mixed: 1, "1" and 2.0 read alike; True is its own id, not 1
])
def test_the_validation_codes_are_the_normalized_ids(column):
    """``coded_judgments`` codes each id column once for the readers; its codes and uniques give
    back the validated table's column, value for value, whatever the column's dtype (a hash table
    codes ``1`` and ``True`` alike, so mixed objects are read as text first)."""
    from bayes_judge.schema import coded_judgments, ids_as_text

    n = len(column)
    df = pd.DataFrame({"item": pd.Series(column), "a": pd.Series(column), "b": [f"b{i}" for i in range(n)],
                       "judge": pd.Series(column), "winner": "a"})
    out, coded = coded_judgments(df)
    for c in ("item", "a", "judge"):
        codes, uniq = coded[c]
        assert out[c].tolist() == list(uniq[codes]) == ids_as_text(pd.Series(column)).tolist()
        assert len(set(uniq.tolist())) == len(uniq)  # one code per id
    assert coded_judgments(df.drop(columns="judge"))[1]["judge"][1].tolist() == ["judge"]


@pytest.mark.parametrize("dtype", [object, "string[pyarrow]", "category"])
def test_labels_are_normalized_value_by_value_whatever_the_dtype(dtype):
    """``winner`` / ``human`` spellings are read once each (a million verdicts have a handful):
    stripped and lower-cased, None where missing, the rows' own index kept, and an unknown value
    named with its row."""
    from bayes_judge.schema import _normalize_label

    col = pd.Series([" A", "b ", "TIE", None, "a"], index=[5, 6, 7, 8, 9], dtype=dtype)
    out, (codes, labels) = _normalize_label(col, "winner", ("a", "b", "tie"), allow_na=True)
    assert out.tolist() == ["a", "b", "tie", None, "a"] and out.index.tolist() == [5, 6, 7, 8, 9]
    assert out.dtype == object and codes[3] == -1
    assert [labels[c] if c >= 0 else None for c in codes] == out.tolist()  # the codes say the same labels
    with pytest.raises(ValueError, match=r"column 'human': unknown value\(s\) \['TIE'\] in row\(s\) 7"):
        _normalize_label(col, "human", ("a", "b"), allow_na=True)
    with pytest.raises(ValueError, match=r"column 'winner': missing value in row\(s\) 8"):
        _normalize_label(col, "winner", ("a", "b", "tie"), allow_na=False)


def test_a_column_the_validation_reads_given_twice_is_named():
    """Two ``winner`` columns (a careless concat) failed inside pandas with no column named; a
    duplicated column the validation does not read is left alone."""
    df = pd.concat([base(), base()[["winner"]]], axis=1)
    with pytest.raises(ValueError, match=r"column\(s\) \['winner'\] more than once"):
        bj.validate_judgments(df)
    extra = pd.concat([base(), pd.DataFrame({"note": [1, 2, 3]}), pd.DataFrame({"note": [4, 5, 6]})], axis=1)
    assert len(bj.validate_judgments(extra)) == 3


def test_the_label_signs_read_from_the_codes_are_the_rows_own():
    """``read_outcomes`` reads ``winner`` and ``human`` from their few coded labels, not row by row:
    the same signs as row by row, also where some winners are derived from ``p_a`` (those codes are
    then not kept) and where a label is missing."""
    from bayes_judge.outcomes import label_sign
    from bayes_judge.schema import coded_judgments

    df = pd.DataFrame({"item": [1, 2, 3, 4, 5], "a": ["x", "y", "x", "y", "x"], "b": ["y", "x", "y", "x", "y"],
                       "winner": [" A", "b", "TIE", "a", None], "p_a": [0.9, 0.2, 0.5, 0.7, 0.1],
                       "human": ["a", None, "B", "b", "a"]})
    v, coded = coded_judgments(df)
    assert "winner" not in coded  # row 5's winner comes from its p_a
    assert label_sign(v["human"], coded["human"]).tolist() == label_sign(v["human"]).tolist() == [1, 0, -1, -1, 1]
    v, coded = coded_judgments(df.dropna(subset=["winner"]))
    assert label_sign(v["winner"], coded["winner"]).tolist() == label_sign(v["winner"]).tolist() == [1, -1, 0, 1]


def test_a_key_column_distinct_on_every_row_means_no_duplicates_and_is_not_hashed_again():
    """Every row an item of its own (an arena's battle ids): no row repeats another's key, found
    without hashing the packed key; one repeated item is still caught."""
    from bayes_judge.schema import _duplicated, coded_judgments

    df = pd.DataFrame({"item": range(6), "a": list("xyxyxy"), "b": list("yxyxyx"), "winner": list("ababab")})
    v, coded = coded_judgments(df)
    assert not _duplicated(v, ["item", "a", "b", "judge"], coded).any()
    with pytest.raises(ValueError, match="duplicate"):
        coded_judgments(df.assign(item=[0, 1, 2, 3, 4, 4], a=list("xyxyxx"), b=list("yxyxyy")))
