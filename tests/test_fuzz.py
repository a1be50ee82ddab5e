"""Random bad and odd tables against the readers, the validator and the win rate (issue 31).

The property: every input gives either a ``ValueError`` that names what is wrong (a column, a
row, a judge, a file) or an answer whose interval lies in [0, 1] and holds what the data say,
never a traceback from a library and never a silent coin flip.  A few hundred examples run by
default; ``-m slow`` runs thousands.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayes_judge as bj

# the default run draws the same examples every time (a red CI run is then a real change, not a
# lucky draw); -m slow explores new ones
FAST = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ids as users' files have them: ints, floats, unicode, whitespace variants, empty, missing
IDS = st.one_of(
    st.sampled_from(["gpt-4", "gpt-4 ", " gpt-4", "claude", "Claude", "llama", "", "  ", "模型", "naïve", "a$b$"]),
    st.integers(-3, 5), st.sampled_from([1.0, 2.0, 2.5, float("nan")]), st.none(),
)
WINNERS = st.one_of(st.sampled_from(["a", "b", "tie", "A", " b ", "TIE", "model_a", "x", ""]), st.none(),
                    st.floats(allow_nan=True))
PROBS = st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.0, 0.5, 1.0, float("nan"), float("inf")]), st.none())
HUMAN = st.one_of(st.sampled_from(["a", "b", "B", "tie", "maybe"]), st.none())
MESSAGE_WORDS = ("column", "row", "judge", "pair", "table", "item", "label", "system", "verdict", "id")


@st.composite
def tables(draw, max_rows: int = 12) -> pd.DataFrame:
    n = draw(st.integers(0, max_rows))
    cols: dict = {}
    for name, strat in (("item", IDS), ("a", IDS), ("b", IDS), ("judge", IDS)):
        if name == "judge" and draw(st.booleans()):
            continue
        if name != "judge" and draw(st.integers(0, 19)) == 0:
            continue  # a required column missing, now and then
        cols[name] = draw(st.lists(strat, min_size=n, max_size=n))
    if draw(st.booleans()):
        cols["winner"] = draw(st.lists(WINNERS, min_size=n, max_size=n))
    if draw(st.booleans()):
        cols["p_a"] = draw(st.lists(PROBS, min_size=n, max_size=n))
    if draw(st.booleans()):
        cols["human"] = draw(st.lists(HUMAN, min_size=n, max_size=n))
    return pd.DataFrame(cols, index=range(n)) if cols else pd.DataFrame(index=range(n))


def _named(err: Exception) -> bool:
    return any(w in str(err).lower() for w in MESSAGE_WORDS)


def _check_validate(df: pd.DataFrame) -> None:
    try:
        out = bj.validate_judgments(df)
    except ValueError as err:  # a clear error that names what is wrong
        assert _named(err), str(err)
        return
    assert len(out) == len(df)  # nothing dropped
    assert out["winner"].isin(["a", "b", "tie"]).all()
    for c in ("a", "b", "judge"):
        assert (out[c].str.strip() != "").all()
    assert (out["a"] != out["b"]).all()


@FAST
@given(tables())
def test_validate_errors_name_the_problem_or_keep_every_row(df):
    _check_validate(df)


@pytest.mark.slow
@SLOW
@given(tables(max_rows=40))
def test_validate_long(df):
    _check_validate(df)


@FAST
@given(tables(), st.integers(0, 400), st.sampled_from(["csv", "tsv", "jsonl", "json"]))
def test_files_cut_anywhere_are_read_or_refused_clearly(tmp_path_factory, df, cut, fmt):
    """A table written to a file and cut at any byte: read with every row it holds, or refused
    with a ValueError that names the file (never a parser's traceback, never a changed value)."""
    path = tmp_path_factory.mktemp("fz") / f"j.{fmt}"
    if fmt in ("csv", "tsv"):
        df.to_csv(path, index=False, sep="," if fmt == "csv" else "\t")
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        path.write_text(json.dumps(json.loads(df.to_json(orient="records"))))
    data = path.read_bytes()
    path.write_bytes(data[: min(cut, len(data))] if cut < len(data) else data)
    try:
        got = bj.read_judgments(path)
    except ValueError as err:
        assert str(path.name) in str(err) or _named(err), str(err)
        return
    except UnicodeDecodeError:  # a cut inside a multi-byte character: pandas' own decoder
        return
    if cut >= len(data) and len(df):
        assert len(got) == len(df)


@st.composite
def verdict_tables(draw) -> pd.DataFrame:
    """Valid tables with odd shapes: few items, one judge, ties, one-sided or constant judges."""
    n_items = draw(st.integers(2, 12))
    n_judges = draw(st.integers(1, 3))
    systems = draw(st.lists(st.sampled_from(["s0", "s1", "s2"]), min_size=2, max_size=3, unique=True))
    kind = draw(st.sampled_from(["random", "ties", "first", "constant"]))
    rows = []
    for i in range(n_items):
        for j in range(n_judges):
            x, y = systems[0], systems[1 + (i % (len(systems) - 1))]
            for a, b in ((x, y), (y, x)):
                if kind == "ties" and j == 0:
                    w = "tie"
                elif kind == "first" and j == 0:
                    w = "a"
                elif kind == "constant" and j == 0:
                    w = "a" if a == x else "b"
                else:
                    w = draw(st.sampled_from(["a", "b", "tie"]))
                rows.append({"item": f"i{i}", "a": a, "b": b, "judge": f"j{j}", "winner": w})
    return pd.DataFrame(rows)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(verdict_tables(), st.sampled_from(["human", "judges"]))
def test_win_rate_answers_honestly_or_says_why(df, estimand):
    _check_win_rate(df, estimand)


@pytest.mark.slow
@SLOW
@given(verdict_tables(), st.sampled_from(["human", "judges"]))
def test_win_rate_long(df, estimand):
    _check_win_rate(df, estimand)


def _check_win_rate(df: pd.DataFrame, estimand: str) -> None:
    from bayes_judge.comparator import UninformativeJudgeWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = bj.win_rate(df, estimand=estimand, chains=1, draws=200, seed=0)
        except ValueError as err:
            assert _named(err), str(err)
            return
    s = bj.win_rate_summary(fit, hdi_prob=0.9)
    assert ((s["hdi_low"] >= 0) & (s["hdi_high"] <= 1) & (s["hdi_low"] <= s["hdi_high"])).all()
    assert np.isfinite(s["p_mean"]).all()
    diag = json.loads(fit.attrs["judge_diagnosis"])
    if any(d["informative"] is False for d in diag.values()):  # never silent about a judge that says nothing
        assert any(issubclass(w.category, UninformativeJudgeWarning) for w in caught)
    if estimand == "judges":  # the panel's own share lies inside its interval
        for pair, row in s.iterrows():
            first, second = row["system_a"], row["system_b"]
            sub = df[df["a"].isin([first, second]) & df["b"].isin([first, second])]
            share = np.where(sub["winner"] == "tie", 0.5, (sub["winner"] == "a") == (sub["a"] == first)).astype(float)
            by_item = pd.Series(share).groupby(sub["item"].to_numpy()).mean().mean()
            # a unanimous share (0 or 1) lies at the edge of the posterior: its equal-tailed
            # interval ends just short of it (the pseudo-item of unknown value), never far
            edge = by_item in (0.0, 1.0) and min(abs(by_item - row["hdi_low"]), abs(by_item - row["hdi_high"])) <= 0.05
            assert row["hdi_low"] - 1e-9 <= by_item <= row["hdi_high"] + 1e-9 or edge, pair
