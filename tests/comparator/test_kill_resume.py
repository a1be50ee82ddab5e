"""A comparator run killed with SIGKILL resumes with no judgment lost or duplicated."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from bayes_judge.comparator import Comparator

TEXTS = {c: f"Candidate {c} says the meeting moved to {d}." for c, d in zip("pqrst", ["Monday", "noon", "Friday", "May", "two"], strict=True)}
CONTEXT = {"doc": "The weekly meeting was moved from Monday to Friday at noon."}

SCRIPT = textwrap.dedent(
    """
    import itertools, sys
    import pandas as pd
    from bayes_judge.comparator import Comparator
    texts = {texts!r}
    pairs = pd.DataFrame([("doc", a, b) for a, b in itertools.combinations(sorted(texts), 2)], columns=["item", "a", "b"])
    Comparator(batch_size=1).compare(pairs, texts, {context!r}, symmetric=True, store=sys.argv[1], progress=False)
    """
)


def _count(path) -> int:
    if not os.path.exists(path):
        return 0
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        con.close()


# SmolLM2 says "A" for every one of these comparisons: the run is (rightly) diagnosed uninformative
@pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")
def test_sigkill_then_resume(lm, tmp_path):
    store = tmp_path / "run.sqlite"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(texts=TEXTS, context=CONTEXT))
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, str(script), str(store)], stderr=err)
    deadline = time.monotonic() + 240
    while _count(store) < 3:
        assert proc.poll() is None, f"the run ended before it could be killed: {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, "no judgment stored within 240 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = _count(store)
    assert 3 <= before < 20, f"{before} judgments stored when killed"

    import itertools

    import pandas as pd

    pairs = pd.DataFrame([("doc", a, b) for a, b in itertools.combinations(sorted(TEXTS), 2)], columns=["item", "a", "b"])
    judge = Comparator(lm, batch_size=4)
    ran = []
    orig = judge._run_prob
    judge._run_prob = lambda todo, *a: (ran.append(len(todo)), orig(todo, *a))
    resumed = judge.compare(pairs, TEXTS, CONTEXT, symmetric=True, store=store, progress=False)
    assert ran == [20 - before]  # only what was missing was judged
    assert len(resumed) == 20 and _count(store) == 20
    assert not resumed.duplicated(["item", "a", "b"]).any()
    fresh = Comparator(lm, batch_size=4).compare(pairs, TEXTS, CONTEXT, symmetric=True, progress=False)
    np.testing.assert_allclose(resumed["p_a"], fresh["p_a"], atol=1e-4)
