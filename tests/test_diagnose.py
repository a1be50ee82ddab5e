"""Does a judge carry information? The checks of bayes_judge.diagnose on tables with
known behaviour."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from bayes_judge.diagnose import (
    UninformativeJudgeWarning,
    diagnose_judgments,
    warn_if_uninformative,
)


def _table(p_ab, p_ba, *, n_texts=8, seed=0):
    """All pairs of n_texts candidates in both orders; p_ab(i, j) / p_ba(i, j) give p_a when i / j
    is shown first."""
    rows = []
    for i in range(n_texts):
        for j in range(i + 1, n_texts):
            rows.append(("s", f"c{i}", f"c{j}", "ab", p_ab(i, j)))
            rows.append(("s", f"c{j}", f"c{i}", "ba", p_ba(i, j)))
    return pd.DataFrame(rows, columns=["item", "a", "b", "order", "p_a"]).assign(judge="j")


def _sigmoid(x):
    return 1 / (1 + math.exp(-x))


def test_an_informative_judge_raises_no_flag():
    rng = np.random.default_rng(0)
    quality = rng.normal(size=8)
    noise = rng.normal(scale=0.3, size=(8, 8, 2))
    # P(i better) depends on the quality difference; a mild position bias of +0.3 logits
    df = _table(lambda i, j: _sigmoid(quality[i] - quality[j] + 0.3 + noise[i, j, 0]),
                lambda i, j: _sigmoid(quality[j] - quality[i] + 0.3 + noise[i, j, 1]))
    d = diagnose_judgments(df)
    assert d["checked"] and d["flags"] == [] and d["informative"] is True
    assert d["n_pairs_both_orders"] == 28 and d["order_correlation"] > 0.8


def test_always_A_is_position_determined_and_order_inconsistent():
    rng = np.random.default_rng(1)
    # p_a depends on the pair (e.g. its length), not on which text is where: SmolLM2 on SummEval
    level = rng.uniform(0.6, 0.8, size=(8, 8))
    df = _table(lambda i, j: level[i, j], lambda i, j: level[i, j] + 0.01)
    d = diagnose_judgments(df)
    assert d["flags"] == ["position-determined", "order-inconsistent"]
    assert d["position_determined"] == 1.0 and d["dominant_position"] == "first" and d["order_correlation"] < -0.9
    assert d["informative"] is False and len(d["messages"]) == 2


def test_constant_and_saturated():
    const = _table(lambda i, j: 0.71, lambda i, j: 0.71)
    assert diagnose_judgments(const)["flags"] == ["constant", "position-determined"]
    # a confident judge that is right: saturated (soft models read 0 / 1 as certain), still informative
    sat = _table(lambda i, j: 0.999 if i < j else 0.001, lambda i, j: 0.001 if i < j else 0.999)
    d = diagnose_judgments(sat)
    assert d["flags"] == ["saturated"] and d["informative"] is True and d["share_saturated"] == 1.0
    assert "hard verdicts" in d["messages"][0]


def test_too_few_rows_are_not_diagnosed_and_missing_rows_are_counted():
    small = _table(lambda i, j: 0.9, lambda i, j: 0.9, n_texts=3)  # 6 rows, all "A"
    d = diagnose_judgments(small)
    assert not d["checked"] and d["flags"] == [] and d["informative"] is None
    with_nan = _table(lambda i, j: 0.9, lambda i, j: float("nan"))
    d2 = diagnose_judgments(with_nan)
    assert d2["n_missing"] == 28 and d2["n_scored"] == 28 and d2["n_pairs_both_orders"] == 0
    with pytest.raises(ValueError, match="p_a"):
        diagnose_judgments(pd.DataFrame({"a": ["x"]}))


def test_the_warning_names_the_judge_and_the_check():
    d = diagnose_judgments(_table(lambda i, j: 0.71, lambda i, j: 0.71))
    with pytest.warns(UninformativeJudgeWarning, match=r"judge 'm/t/prob': p_a is nearly constant .*attrs\['diagnosis'\]"):
        warn_if_uninformative(d, "m/t/prob")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_uninformative(diagnose_judgments(_table(lambda i, j: 0.9, lambda i, j: 0.9, n_texts=3)), "m")


def test_diagnose_table_reads_a_large_judge_on_a_share_of_its_items():
    import numpy as np

    import bayes_judge as bj
    from bayes_judge.diagnose import MAX_ROWS, diagnose_table

    df = bj.simulate_win_rate(15_000, p=0.7, q0=[0.8, 0.8], swap=True, seed=0).drop(columns="human")
    stuck = df["judge"] == "judge1"
    df.loc[stuck, "winner"] = np.where(np.random.default_rng(1).random(stuck.sum()) < 0.97, "a", "b")
    d = diagnose_table(df)
    assert d["judge0"]["n"] <= MAX_ROWS and d["judge0"]["informative"] is True
    assert d["judge1"]["informative"] is False and "position-determined" in d["judge1"]["flags"]


def test_a_large_tables_copies_are_found_on_rows_every_judge_read():
    """Over ``MAX_ROWS`` rows each judge is read on a share of the items, and the copies' check on a
    smaller share of all the items: the smaller share's items are among every judge's own (one
    random order of the items), so copies of a judge are still compared on their shared rows, and a
    judge with fewer rows is read whole."""
    import bayes_judge as bj
    from bayes_judge.diagnose import MAX_ROWS, diagnose_table

    base = bj.simulate_win_rate(12_000, p=0.8, q0=[0.75], swap=True, seed=3).drop(columns="human")
    small = bj.simulate_win_rate(300, p=0.8, q0=[0.75], swap=True, seed=4).drop(columns="human")
    df = pd.concat([base.assign(judge="j0"), base.assign(judge="j1"), small.assign(judge="few")], ignore_index=True)
    assert (df["judge"] == "j0").sum() > MAX_ROWS
    d = diagnose_table(df)
    assert d["j0"]["identical_to"] == ["j1"] and d["j1"]["identical_to"] == ["j0"] and "identical_to" not in d["few"]
    assert MAX_ROWS * 0.9 <= d["j0"]["n"] <= MAX_ROWS * 1.1 and d["few"]["n"] == len(small)


def test_a_large_judge_on_few_items_far_down_the_order_is_still_read():
    """A judge's share is a cut-off on one random order of all the items; a judge of 25,000 rows on
    the one item that order ranks last was left with no row and vanished from the diagnosis (its
    flags and warnings silently gone): it keeps at least its first item."""
    from bayes_judge.diagnose import MAX_ROWS, _item_rank, diagnose_table

    rng = np.random.default_rng(0)
    items = np.repeat(np.arange(100), 20)
    rank, _ = _item_rank(pd.Series(items))
    last = int(items[np.argmax(rank)])
    n1, n2 = 25_000, len(items)
    df = pd.DataFrame({"item": np.r_[items, np.full(n1, last)], "a": rng.choice(["x", "y"], n1 + n2), "b": "z",
                       "p_a": rng.random(n1 + n2).round(3), "judge": ["j2"] * n2 + ["j1"] * n1})
    d = diagnose_table(df)
    assert sorted(d) == ["j1", "j2"] and d["j1"]["n"] == n1 > MAX_ROWS and d["j2"]["n"] == n2


def test_judges_are_named_as_the_validation_names_them_and_a_missing_judge_is_none():
    """The diagnosis names a judge as every table the package reads does (1.0 -> "1"); ids that a
    hash table codes alike but that read differently stay apart (1 and True), and rows without a
    judge are no judge's."""
    from bayes_judge.diagnose import diagnose_table

    base = pd.DataFrame({"item": np.repeat(np.arange(20), 2), "a": ["x", "y"] * 20, "b": ["y", "x"] * 20,
                         "p_a": np.linspace(0.1, 0.9, 40)})
    mixed = pd.concat([base.assign(judge=j) for j in (1.0, True, "k")] + [base.assign(judge=None)],
                      ignore_index=True)
    d = diagnose_table(mixed)
    assert sorted(d) == ["1", "True", "k"] and all(d[j]["n"] == 40 for j in d)


def test_the_screening_reads_the_codes_a_reader_already_has():
    """The leaderboard hands the screening the item and judge codes its reading computed (at 1M
    rows the items' coding was 0.15 s of the screening's 0.3 s): the diagnosis is the one the
    screening computes itself, and codes of other rows are ignored."""
    import bayes_judge as bj
    from bayes_judge.diagnose import MAX_ROWS, diagnose_table
    from bayes_judge.schema import coded_judgments

    df = bj.simulate_win_rate(15_000, p=0.7, q0=[0.8, 0.8], swap=True, seed=0).drop(columns="human")
    v, coded = coded_judgments(df)
    assert len(v) > MAX_ROWS
    ids = {"item": coded["item"], "judge": coded["judge"]}
    assert diagnose_table(v, ids=ids) == diagnose_table(v)
    short = {k: (c[:10], u) for k, (c, u) in ids.items()}
    assert diagnose_table(v, ids=short) == diagnose_table(v)


def test_identical_judges_are_found_and_agreeing_strong_judges_are_not(tmp_path):
    """Copies of one judge (5 of them narrowed Dawid-Skene's interval to [0.61, 0.73] for a truth of
    0.86) are named; two accurate judges of a plain pair that agree on every item by chance are not."""
    import bayes_judge as bj
    from bayes_judge.diagnose import DuplicateJudgesWarning, identical_judges

    base = bj.simulate_win_rate(200, p=0.85, q0=[0.7], seed=5)
    copies = pd.concat([base.assign(judge=f"j{i}") for i in range(3)], ignore_index=True)
    t = copies.assign(p_a=np.where(copies["winner"] == "a", 1.0, np.where(copies["winner"] == "b", 0.0, 0.5)))
    assert identical_judges(t[["item", "a", "b", "judge", "p_a"]]) == {"j0": ["j1", "j2"], "j1": ["j0", "j2"],
                                                                      "j2": ["j0", "j1"]}
    plain = bj.simulate_win_rate(100, p=1.0, q0=[1.0, 1.0], seed=1)  # both always right on a one-sided pair
    tp = plain.assign(p_a=(plain["winner"] == "a").astype(float))
    assert identical_judges(tp[["item", "a", "b", "judge", "p_a"]]) == {}
    with pytest.warns(DuplicateJudgesWarning, match="j0 = j1 = j2"):
        fit = bj.leaderboard(copies.drop(columns="human"), estimand="judges", position_bias=False,
                             sampler="laplace", chains=2, draws=100)
    # kept with the run: the CLI's notes and the report say it after the warning is gone
    from bayes_judge.cli.commands import run_notes

    assert any(line.startswith("IDENTICAL JUDGES: judges with identical verdicts") for line in run_notes(fit))
    html = bj.report(fit, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Identical judges: judges with identical verdicts on every comparison they share: j0 = j1 = j2" in html


def test_a_table_judged_in_one_order_says_its_position_bias_is_not_measured(tmp_path, capsys):
    """Judges naming position A 66% of the time, seen in one order only: the default said 0.70 [0.45,
    0.91] for a truth of 0.23, and nothing said the position bias could not be measured."""
    import bayes_judge as bj
    from bayes_judge.cli import main
    from bayes_judge.diagnose import one_order_message

    one = bj.simulate_win_rate(60, p=0.3, q0=[0.8, 0.75], seed=1)  # G0 always shown first
    fit = bj.win_rate(one.assign(human=None), seed=0)
    assert one_order_message(fit.attrs["judge_diagnosis"])
    assert main(["summary", str(bj.save_run(fit, tmp_path / "r"))]) == 0
    assert "POSITION BIAS NOT MEASURED" in capsys.readouterr().out
    both = bj.simulate_win_rate(60, p=0.3, q0=[0.8, 0.75], seed=1, swap=True)
    assert one_order_message(bj.win_rate(both.assign(human=None), seed=0).attrs["judge_diagnosis"]) is None


def test_a_winner_only_judge_beside_soft_judges_is_diagnosed():
    """A table with p_a for some judges read every judge's p_a: a judge that gave only winners
    (always 'a', both orders) had no p_a, was scored on nothing and passed as informative."""
    from bayes_judge.diagnose import diagnose_table

    rng = np.random.default_rng(0)
    rows = []
    for i in range(60):
        for a, b in (("x", "y"), ("y", "x")):
            p = float(np.clip(rng.normal(0.7 if a == "x" else 0.3, 0.1), 0.01, 0.99))
            rows.append(dict(item=i, a=a, b=b, judge="soft", p_a=p, winner=None))
            rows.append(dict(item=i, a=a, b=b, judge="hard", p_a=np.nan, winner="a"))
    d = diagnose_table(pd.DataFrame(rows))
    assert "constant" in d["hard"]["flags"] and not d["hard"]["informative"]
    assert d["soft"]["informative"] and d["hard"]["n"] == 120
