import sqlite3

import pytest

from bayes_judge.comparator.store import JudgmentStore, StoreMismatchError


def test_rows_are_never_duplicated(tmp_path):
    path = tmp_path / "run.sqlite"
    with JudgmentStore(path, model="m", template="t") as st:
        assert st.add("prob", [("i", "a", "b", "ab", 0.7, None), ("i", "a", "b", "ba", 0.4, {"k": 1})]) == 2
        assert st.add("prob", [("i", "a", "b", "ab", 0.1, None)]) == 0  # kept unchanged
    with JudgmentStore(path, model="m", template="t") as st:
        done = st.done("prob")
    assert len(done) == 2
    assert done.set_index("order").loc["ab", "p_first"] == 0.7


def test_another_judge_is_refused_unless_asked(tmp_path):
    path = tmp_path / "run.sqlite"
    JudgmentStore(path, model="m", template="t").close()
    with pytest.raises(StoreMismatchError, match="written by model 'm'"):
        JudgmentStore(path, model="other", template="t")
    with pytest.raises(StoreMismatchError, match="template 't'"):
        JudgmentStore(path, model="m", template="t2")
    JudgmentStore(path, model="other", template="t", allow_mixed=True).close()


def test_pointwise_cache(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite", model="m", template="t") as st:
        st.add_pointwise("analysis", [("i", "c", "good")])
        assert st.pointwise("analysis", [("i", "c"), ("i", "d")]) == {("i", "c"): "good"}


def test_bad_store_paths(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        JudgmentStore(tmp_path, model="m", template="t")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="not a bayes_judge store"):
        JudgmentStore(junk, model="m", template="t")
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    with pytest.raises(ValueError, match="cannot open the store"):
        JudgmentStore(blocker / "run.sqlite", model="m", template="t")
    assert sqlite3.sqlite_version
