"""Every judgment mode on the embedded default judge, with tiny inputs."""

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.comparator import (
    Comparator,
    ContextTooLongWarning,
    PromptTemplate,
    StoreMismatchError,
    get_template,
)


@pytest.fixture(scope="module")
def judges(lm):
    return {mode: Comparator(lm, mode=mode, n_samples=2, analysis_tokens=10, max_new_tokens=3)
            for mode in ("prob", "sample", "likert", "prepair")}


@pytest.mark.parametrize("mode", ["prob", "sample", "likert", "prepair"])
def test_every_mode_gives_a_valid_judgments_table(judges, tiny, mode):
    texts, pairs, ctx = tiny
    df = judges[mode].compare(pairs, texts, ctx, symmetric=True, progress=False)
    assert len(df) == 6
    checked = bj.validate_judgments(df)
    assert checked["p_a"].between(0, 1).all()
    assert set(df["order"]) == {"ab", "ba"}
    assert df["judge"].iloc[0] == f"SmolLM2-135M-Instruct/summeval-coherence/{mode}"
    assert 0 <= df.attrs["position_bias"]["P(A)"] <= 1
    # shown order: the 'ba' row shows the planned pair reversed
    ba = df[df["order"] == "ba"].iloc[0]
    assert (ba["a"], ba["b"]) == (ba["pair_b"], ba["pair_a"])
    if mode == "sample":
        assert (df[["n_a", "n_b", "n_tie", "n_unparsed"]].sum(axis=1) == 2).all()
    if mode == "likert":  # the pairwise probability is a function of the two pointwise scores
        assert (df["p_a"] > 0.5).eq(df["score_a"] > df["score_b"]).all()


def test_prob_mode_is_eq3_and_deterministic(judges, tiny):
    texts, pairs, ctx = tiny
    a = judges["prob"].compare(pairs, texts, ctx, progress=False)
    b = judges["prob"].compare(pairs, texts, ctx, progress=False)
    pd.testing.assert_series_equal(a["p_a"], b["p_a"])
    assert (a["label_mass"] > 0.5).all()  # the label words carry most of the next-token mass


def test_sampled_mode_is_seeded(lm, tiny):
    texts, pairs, ctx = tiny
    kw = dict(mode="sample", n_samples=2, max_new_tokens=3)
    pairs = pairs.iloc[:2]
    a = Comparator(lm, seed=1, **kw).compare(pairs, texts, ctx, progress=False)
    b = Comparator(lm, seed=1, **kw).compare(pairs.iloc[::-1], texts, ctx, progress=False)
    pd.testing.assert_series_equal(a.set_index(["a", "b"])["p_a"], b.set_index(["a", "b"]).loc[a.set_index(["a", "b"]).index, "p_a"])


def test_likert_scores_are_probability_weighted(judges, tiny):
    texts, pairs, ctx = tiny
    sc = judges["likert"].score([("s", "x"), ("s", "y")], texts, ctx, progress=False)
    probs = sc[[f"p_{k}" for k in range(1, 6)]].to_numpy()
    assert probs.sum(axis=1) == pytest.approx([1, 1])
    assert sc["score"].to_numpy() == pytest.approx(probs @ [1, 2, 3, 4, 5])


def test_prepair_analyses_are_cached_per_output(judges, tiny, tmp_path):
    texts, pairs, ctx = tiny
    store = tmp_path / "prepair.sqlite"
    an = judges["prepair"].analyze([("s", "x"), ("s", "y")], texts, ctx, store=store)
    assert an["analysis"].str.len().gt(0).all()
    df = judges["prepair"].compare(pairs, texts, ctx, store=store, progress=False)
    again = judges["prepair"].analyze([("s", "x"), ("s", "y")], texts, ctx, store=store)
    pd.testing.assert_frame_equal(an, again)
    assert len(df) == 3


def test_resume_skips_what_is_stored(judges, tiny, tmp_path):
    texts, pairs, ctx = tiny
    store = tmp_path / "run.sqlite"
    first = judges["prob"].compare(pairs, texts, ctx, symmetric=True, budget=2, store=store, progress=False)
    assert len(first) == 2
    calls = []
    orig = judges["prob"]._run_prob
    judges["prob"]._run_prob = lambda todo, *a: (calls.append(len(todo)), orig(todo, *a))
    try:
        full = judges["prob"].compare(pairs, texts, ctx, symmetric=True, store=store, progress=False)
    finally:
        del judges["prob"]._run_prob
    assert calls == [4] and len(full) == 6
    pd.testing.assert_frame_equal(full.iloc[:2], first)


def test_debias_records_what_it_did(judges, tiny):
    texts, pairs, ctx = tiny
    with pytest.warns(UserWarning, match=r"assumes a balanced set .* 6 comparison\(s\), 6 judged in both orders"):
        df = judges["prob"].compare(pairs, texts, ctx, symmetric=True, debias="reweight", progress=False)
    rec = df.attrs["debias"][judges["prob"].judge_name]
    assert rec["P(A) after"] == pytest.approx(0.5)
    assert "p_a_raw" in df


def test_plans_from_select_comparisons_feed_the_comparator(judges, tiny):
    texts, _, ctx = tiny
    pairs = bj.select_comparisons(["x", "y", "z"], 2, method="greedy-d-optimal")
    df = judges["prob"].compare(pairs, texts, ctx, progress=False)  # no item column: the one context
    assert len(df) == 2 and set(df["item"]) == {"s"}


# -- bad input ----------------------------------------------------------------------------------
def test_label_words_sharing_a_first_token(lm):
    t = PromptTemplate(name="t", pairwise="{a} or {b}?", labels=(("Answer A",), ("Answer B",)))
    with pytest.raises(ValueError, match="share the first token"):
        Comparator(lm, template=t)


def test_template_missing_b(lm):
    with pytest.raises(ValueError, match=r"missing field\(s\) \{b\}"):
        Comparator(lm, template="Is {a} good?")


def test_too_long_context_truncates_or_raises(lm, tiny):
    texts, pairs, _ = tiny
    long_ctx = {"s": "The cat sat on the mat. " * 200}
    short = Comparator(lm, max_length=300)
    with pytest.warns(ContextTooLongWarning, match="context truncated"):
        df = short.compare(pairs, texts, long_ctx, progress=False)
    assert len(df) == 3
    with pytest.raises(ValueError, match="more than the model's 300"):
        Comparator(lm, max_length=300, on_too_long="raise").compare(pairs, texts, long_ctx, progress=False)
    with pytest.raises(ValueError, match="too long for this model"):
        Comparator(lm, max_length=120).compare(pairs, {**texts, "x": "word " * 200}, long_ctx, progress=False)


def test_empty_and_missing_texts(judges, tiny):
    texts, pairs, ctx = tiny
    with pytest.raises(ValueError, match="candidate 'x' .* is empty"):
        judges["prob"].compare(pairs, {**texts, "x": "  "}, ctx, progress=False)
    with pytest.raises(ValueError, match="no text for candidate 'z'"):
        judges["prob"].compare(pairs, {"x": "a", "y": "b"}, ctx, progress=False)
    # pairs with no item column: the error names no item (the run's one item is a placeholder, '0')
    with pytest.raises(ValueError, match=r"no text for candidate 'z'$"):
        judges["prob"].compare([("x", "z")], {"x": "a", "y": "b"}, "the article", progress=False)
    with pytest.raises(ValueError, match="context of item"):
        judges["prob"].compare(pairs, texts, {"s": ""}, progress=False)
    with pytest.raises(ValueError, match="compared with itself"):
        judges["prob"].compare(pd.DataFrame({"item": ["s"], "a": ["x"], "b": ["x"]}), texts, ctx, progress=False)
    with pytest.raises(ValueError, match="both orders"):
        both = pd.DataFrame({"item": ["s", "s"], "a": ["x", "y"], "b": ["y", "x"]})
        judges["prob"].compare(both, texts, ctx, symmetric=True, progress=False)


def test_model_paths_that_are_not_models(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Comparator(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is not a model: it has no config.json"):
        Comparator(tmp_path / "empty")
    (tmp_path / "weights.bin").write_bytes(b"0")
    with pytest.raises(ValueError, match="not a .gguf file"):
        Comparator(tmp_path / "weights.bin")


def test_store_of_another_template_is_refused(lm, tiny, tmp_path):
    texts, pairs, ctx = tiny
    store = tmp_path / "run.sqlite"
    Comparator(lm).compare(pairs, texts, ctx, store=store, budget=1, progress=False)
    other = Comparator(lm, template="summeval-fluency")
    with pytest.raises(StoreMismatchError, match="allow_mixed=True"):
        other.compare(pairs, texts, ctx, store=store, progress=False)
    df = other.compare(pairs, texts, ctx, store=store, allow_mixed=True, budget=1, progress=False)
    assert len(df) == 1


def test_bad_options(lm):
    with pytest.raises(ValueError, match="mode must be one of"):
        Comparator(lm, mode="vote")
    with pytest.raises(ValueError, match="on_too_long"):
        Comparator(lm, on_too_long="drop")
    with pytest.raises(ValueError, match="has no pointwise prompt"):
        Comparator(lm, template="{a} or {b}?", mode="likert")


def test_a_store_reused_with_changed_texts_judges_them_again(lm, tiny, tmp_path):
    """Stored judgments made on other texts or another context are judged again (with a warning),
    never returned for the new texts; the others are reused."""
    from bayes_judge.comparator.store import StoreChangedWarning

    texts, pairs, ctx = tiny
    store = tmp_path / "run.sqlite"
    Comparator(lm).compare(pairs, texts, ctx, symmetric=True, store=store, progress=False)
    changed = dict(texts, x="Purple elephants compute taxes on Jupiter.")
    fresh = Comparator(lm).compare(pairs, changed, ctx, symmetric=True, progress=False)
    with pytest.warns(StoreChangedWarning, match=r"4 result\(s\) .* other texts or contexts"):  # x's 2 pairs, 2 orders
        again = Comparator(lm).compare(pairs, changed, ctx, symmetric=True, store=store, progress=False)
    np.testing.assert_allclose(again["p_a"], fresh["p_a"], atol=1e-4)  # other batches: the last digits
    other_ctx = {"s": "A completely different article about markets."}
    with pytest.warns(StoreChangedWarning, match=r"6 result\(s\)"):
        Comparator(lm).compare(pairs, changed, other_ctx, symmetric=True, store=store, progress=False)
    likert = tmp_path / "likert.sqlite"  # a setting that changes the verdicts: its own results in the file
    wide = Comparator(lm, mode="likert", tau=1.0).compare(pairs, texts, ctx, store=likert, progress=False)
    sharp = Comparator(lm, mode="likert", tau=0.1).compare(pairs, texts, ctx, store=likert, progress=False)
    fresh = Comparator(lm, mode="likert", tau=0.1).compare(pairs, texts, ctx, progress=False)
    np.testing.assert_allclose(sharp["p_a"], fresh["p_a"], atol=1e-4)  # threads on a busy CPU: the last digits
    assert not np.allclose(sharp["p_a"], wide["p_a"])
    again = Comparator(lm, mode="likert", tau=1.0).compare(pairs, texts, ctx, store=likert, progress=False)
    np.testing.assert_allclose(again["p_a"], wide["p_a"])


def test_input_forms_are_read_or_refused_by_name(lm):
    """Texts with item ids as floats, a contexts table, and the forms refused with what is wrong."""
    texts = pd.DataFrame({"item": [1.0, 1.0, 1.0], "candidate": ["A", "B", "C"],
                          "text": ["The cat sat.", "Dog runs.", "A cat sat."]})
    pairs = pd.DataFrame({"item": [1, 1], "a": ["A", "A"], "b": ["B", "C"]})
    judge = Comparator(lm)
    by_dict = judge.compare(pairs, texts, {"1": "Cats sit on mats."}, progress=False)
    by_table = judge.compare(pairs, texts, pd.DataFrame({"item": [1], "context": ["Cats sit on mats."]}),
                             progress=False)
    np.testing.assert_allclose(by_table["p_a"], by_dict["p_a"], atol=1e-4)  # threads="auto" follows the load
    floats = judge.compare(pairs.assign(item=[1.0, 1.0]), texts, {"1": "Cats sit on mats."}, progress=False)
    assert floats["item"].tolist() == ["1", "1"]  # pairs' ids read as the texts' and the judgments' are
    np.testing.assert_allclose(floats["p_a"], by_dict["p_a"], atol=1e-4)
    ctx = {"1": "Cats sit on mats."}
    with pytest.raises(ValueError, match=r"\('1', 'A'\)\] have two different texts"):
        judge.compare(pairs, pd.concat([texts, texts.iloc[:1].assign(text="other")]), ctx, progress=False)
    with pytest.raises(ValueError, match="is not a string but int 5"):
        judge.compare(pairs, {"A": 5, "B": "b", "C": "c"}, ctx, progress=False)
    with pytest.raises(TypeError, match="contexts must be one string, a mapping"):
        judge.compare(pairs, texts, ["Cats sit on mats."], progress=False)
    for bad in (2.5, True):
        with pytest.raises(ValueError, match="budget must be a whole number"):
            judge.compare(pairs, texts, ctx, budget=bad, progress=False)
    with pytest.raises(ValueError, match="debias must be None"):
        judge.compare(pairs, texts, ctx, debias="yes", progress=False)


def test_sampled_answers_that_never_parse_give_no_probability(lm, tiny, tmp_path):
    """Local sample mode: a comparison with no parseable answer is NaN (stored as -1, status
    'unparsed'), named in a MissingLabelsWarning, never a guessed tie of 0.5."""
    import sqlite3

    from bayes_judge.comparator.endpoint import MissingLabelsWarning

    texts, pairs, ctx = tiny
    never = get_template("summeval-coherence").with_(choices=(("qqq",), ("www",), ("eee",)))
    judge = Comparator(lm, template=never, mode="sample", n_samples=2, max_new_tokens=3)
    store = tmp_path / "run.sqlite"
    with pytest.warns(MissingLabelsWarning, match=r"3 of 3 comparisons .* no parseable sampled answer"):
        df = judge.compare(pairs, texts, ctx, store=store, progress=False)
    assert df["p_a"].isna().all() and df["winner"].isna().all()
    assert df["status"].eq("unparsed").all() and df["n_unparsed"].eq(2).all()
    with sqlite3.connect(store) as con:
        assert [p for (p,) in con.execute("SELECT p_first FROM judgments")] == [-1.0] * 3
    with pytest.warns(MissingLabelsWarning, match="3 of 3"):  # read back from the store the same way
        again = judge.compare(pairs, texts, ctx, store=store, progress=False)
    assert again["p_a"].isna().all()
    parsed = Comparator(lm, mode="sample", n_samples=2, max_new_tokens=3).compare(pairs, texts, ctx, progress=False)
    assert parsed["status"].eq("ok").all() and parsed["p_a"].notna().all()


def test_a_store_reused_with_other_settings_judges_again_or_refuses(lm, tiny, tmp_path, monkeypatch):
    """chat (how the prompts are rendered) is the store's variant: another setting is judged again,
    kept apart in the same file; the same setting reads the store. Another dtype is another model
    fingerprint, another set of sampled answers' words another template: both refused."""
    from bayes_judge.comparator.models import _fingerprint, load_model

    texts, pairs, ctx = tiny
    store = tmp_path / "run.sqlite"
    chat = Comparator(lm).compare(pairs, texts, ctx, store=store, progress=False)
    fresh = Comparator(lm, chat=False).compare(pairs, texts, ctx, progress=False)
    assert not np.allclose(fresh["p_a"], chat["p_a"], atol=1e-3)
    again = Comparator(lm, chat=False).compare(pairs, texts, ctx, store=store, progress=False)
    np.testing.assert_allclose(again["p_a"], fresh["p_a"], atol=1e-4)
    for setting, want in ((False, fresh), (None, chat), (True, chat)):  # now stored: nothing judged
        judge = Comparator(lm, chat=setting)
        monkeypatch.setattr(judge, "_run_prob", lambda *a: pytest.fail("judged what the store holds"))
        pd.testing.assert_series_equal(judge.compare(pairs, texts, ctx, store=store, progress=False)["p_a"],
                                       want["p_a"])
    words = get_template("summeval-coherence").with_(choices=(("first",), ("second",), ("tie",)))
    with pytest.raises(StoreMismatchError, match="with template 'summeval-coherence@"):
        Comparator(lm, template=words, mode="sample").compare(pairs, texts, ctx, store=store, progress=False)

    class Config:
        def to_dict(self):
            return {"hidden_size": 8}

    assert _fingerprint(None, "m", Config(), "float32") == _fingerprint(None, "m", Config())
    assert lm.info["dtype"] == "float32" and "-" not in lm.fingerprint  # fingerprints of existing stores
    half = load_model(dtype="bfloat16")
    assert half.fingerprint == lm.fingerprint + "-bfloat16"
    with pytest.raises(StoreMismatchError, match="-bfloat16"):
        Comparator(half).compare(pairs, texts, ctx, store=store, progress=False)


def test_missing_ids_and_doubled_columns_are_refused_before_judging(lm, tiny, monkeypatch):
    """A NaN / None id in the pairs or the texts table is named up front (it was judged, then lost
    as 'nan': an internal error after all the work); so is a table with two columns of one name."""
    texts, pairs, ctx = tiny
    judge = Comparator(lm)
    monkeypatch.setattr(judge, "_run_prob", lambda *a: pytest.fail("judged before refusing"))
    bad_pairs = [
        (pairs.assign(item=["s", np.nan, "s"]), r"pairs: 1 row\(s\) have no item id .*row\(s\) \[1\]"),
        (pairs.assign(a=[None, "x", "y"]), r"no a id .*\[0\]"),
        (pairs.assign(b=["y", "z", np.nan], a=["x", np.nan, "y"]), r"2 row\(s\) have no a / b id .*\[1, 2\]"),
    ]
    for bad, msg in bad_pairs:
        with pytest.raises(ValueError, match=msg):
            judge.compare(bad, texts, ctx, progress=False)
    table = pd.DataFrame({"item": ["s", "s", np.nan, "s"], "candidate": ["x", "y", "z", None],
                          "text": ["The cat sat.", "Mat cat.", "A cat sat.", "Cats."]})
    with pytest.raises(ValueError, match=r"texts table: 2 row\(s\) have no item / candidate id .*\[2, 3\]"):
        judge.compare(pairs, table, ctx, progress=False)
    doubled = pd.DataFrame([["s", "x", "The cat sat.", "other"]], columns=["item", "candidate", "text", "text"])
    with pytest.raises(ValueError, match=r"texts table has more than one column named \['text'\]"):
        judge.compare(pairs, doubled, ctx, progress=False)
    with pytest.raises(ValueError, match=r"pairs table has more than one column named \['a'\]"):
        judge.compare(pd.concat([pairs, pairs[["a"]]], axis=1), texts, ctx, progress=False)


LONG = {"s": " ".join(f"Sentence {i}: the cat sat on the mat all day long." for i in range(40))}
UNEVEN = {"x": "The cat sat.", "y": "Cat mat sat.",
          "z": "A cat was sitting on a mat, and it stayed there for a very long time while the sun moved "
               "across the sky and the birds sang outside the window of the little house."}


def test_the_context_cut_depends_on_the_plan_only(lm, tmp_path):
    """An item's context is cut on all of its planned prompts: a run stopped by budget= and resumed
    equals one run (the cut was sized on the comparisons judged in each call); a store judged with
    another max_length (another cut) is judged again, not returned."""
    from bayes_judge.comparator.store import StoreChangedWarning

    pairs = [("s", "x", "y"), ("s", "x", "z"), ("s", "y", "z")]
    judge = Comparator(lm, max_length=300)
    with pytest.warns(ContextTooLongWarning, match="context truncated"):
        one = judge.compare(pairs, UNEVEN, LONG, progress=False)
    store = tmp_path / "run.sqlite"
    with pytest.warns(ContextTooLongWarning):
        judge.compare(pairs, UNEVEN, LONG, budget=1, store=store, progress=False)
    with pytest.warns(ContextTooLongWarning):
        resumed = judge.compare(pairs, UNEVEN, LONG, store=store, progress=False)
    np.testing.assert_allclose(resumed["p_a"], one["p_a"], atol=1e-4)
    wide = tmp_path / "wide.sqlite"
    Comparator(lm).compare(pairs, UNEVEN, LONG, store=wide, progress=False)  # the whole context fits
    with (pytest.warns(ContextTooLongWarning, match=r"context truncated for 1 item\(s\) .* 's' to \d+ tokens"),
          pytest.warns(StoreChangedWarning, match=r"3 result\(s\)")):
        narrow = judge.compare(pairs, UNEVEN, LONG, store=wide, progress=False)
    np.testing.assert_allclose(narrow["p_a"], one["p_a"], atol=1e-4)
    # a budget that reaches item s only needs nothing of item t (no context given for it yet)
    later = [*pairs, ("t", "x", "y")]
    with pytest.warns(ContextTooLongWarning):
        first = judge.compare(later, UNEVEN, LONG, budget=2, progress=False)
    np.testing.assert_allclose(first["p_a"], one["p_a"][:2], atol=1e-4)
    with pytest.raises(ValueError, match=r"no context for item\(s\) \['t'\]"):
        judge.compare(later, UNEVEN, LONG, progress=False)


def test_contexts_for_a_template_without_context_are_named_as_ignored(lm, tiny):
    texts, pairs, ctx = tiny
    judge = Comparator(lm, template="Which is better? A: {a} B: {b}")
    plain = judge.compare(pairs, texts, progress=False)
    with pytest.warns(UserWarning, match=r"template 'custom' has no \{context\} field, so the judge never sees them"):
        given = judge.compare(pairs, texts, ctx, progress=False)
    pd.testing.assert_series_equal(given["p_a"], plain["p_a"])
    with pytest.warns(UserWarning, match="has no {context} field"):
        judge.compare(pairs, texts, "one context for all", progress=False)


def test_debiasing_a_run_judged_in_one_order_warns(judges, tiny):
    texts, pairs, ctx = tiny
    with pytest.warns(UserWarning, match=r"3 comparison\(s\), 0 judged in both orders.* or leave debias off"):
        df = judges["prob"].compare(pairs, texts, ctx, debias="threshold", progress=False)
    assert df["p_a"].isna().all() and df["winner"].notna().all()


def test_label_words_the_model_does_not_say_are_named(lm, tiny):
    """prob mode: label words with almost no next-token probability (median label_mass < 0.05) make
    p_a noise, said with the median; label_mass keeps its significant digits (6 decimals made them 0)."""
    from bayes_judge.diagnose import UninformativeJudgeWarning

    texts, pairs, _ = tiny
    yes_no = PromptTemplate(name="yn", pairwise="Is text one better than text two?\nText one: {a}\nText two: {b}",
                            labels=((" yes",), (" no",)))
    with pytest.warns(UninformativeJudgeWarning, match=r"yn/prob: the label words \[\[' yes'\], \[' no'\]\] get a "
                                                        r"median probability of [0-9.e-]+ .*below 0.05"):
        df = Comparator(lm, template=yes_no).compare(pairs, texts, progress=False)
    mass = df["label_mass"].to_numpy()
    assert (mass > 0).all() and mass.max() < 1e-4
    assert not np.allclose(mass, mass.round(6), rtol=0, atol=1e-9)  # not cut to 6 decimals
