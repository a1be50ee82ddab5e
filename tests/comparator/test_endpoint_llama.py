"""Endpoint judges against a REAL OpenAI-compatible server: llama-cpp-python's, on 127.0.0.1,
serving the embedded judge's GGUF (SmolLM2-135M-Instruct, Q4_1).

Agreement with the in-process judge. The in-process judge runs a float32 de-quantized copy of the
same GGUF weights, so the weights are identical; llama.cpp multiplies Q4_1 weights by activations
it quantizes to 8 bits per block of 32 (Q8_1), which moves every logit a little, and more so the
longer the prompt. Measured: on these ~90-token prompts, |Δ logit p| ≤ 0.12 on the completions API
(identical prompt tokens; max |Δp| 0.019, mean 0.006) and ≤ 0.2 on the chat API (the server renders
the chat template itself; max |Δp| 0.045, mean 0.020); on ~670-token SummEval prompts
(benchmarks/bench_endpoint.py) ≤ 0.24 with llama-cpp-python and ≤ 0.38 with llama.cpp's
llama-server, whose prompt cache and batched slots change the arithmetic again (max |Δp| 0.05 and
0.08). The tolerance is stated on the log-odds scale, where this noise is additive:
|Δ logit p| ≤ 0.35 for these short prompts, i.e. |Δp| ≤ 0.35 · p(1 − p) ≤ 0.09.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from _servers import SERVED, LlamaServer

from bayes_judge.comparator import Comparator, PromptTemplate, get_template
from bayes_judge.comparator.endpoint import (
    EndpointModelError,
    EndpointUnreachableError,
    LabelTokenError,
    LogprobsFallbackWarning,
    LogprobsUnavailableError,
    MissingLabelsWarning,
)

TEXTS = {"x": "The cat sat on the mat.", "y": "Mat cat the on sat.", "z": "A cat was sitting on a mat."}
CTX = {"s": "The cat sat on the mat all day long."}
PAIRS = pd.DataFrame([("s", a, b) for a in TEXTS for b in TEXTS if a < b], columns=["item", "a", "b"])
LOGIT_TOL = 0.35
LETTER = PromptTemplate(name="letter",
                        pairwise=get_template("summeval-coherence").pairwise + " Answer with the letter A or B only.",
                        labels=(("A", " A"), ("B", " B")))
FAST = {"backoff": 0.05, "max_backoff": 0.2, "max_retries": 2, "timeout": 60}
# SmolLM2-135M answers "A" whatever the order: every run here is (rightly) diagnosed uninformative;
# the first test checks that both judges say so
pytestmark = pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")


def _logit(p):
    p = np.asarray(p, float)
    return np.log(p) - np.log1p(-p)


def _agree(local: pd.DataFrame, remote: pd.DataFrame) -> dict:
    assert (local[["item", "a", "b", "order"]].to_numpy() == remote[["item", "a", "b", "order"]].to_numpy()).all()
    assert remote["status"].eq("ok").all()
    dp = np.abs(local["p_a"].to_numpy() - remote["p_a"].to_numpy())
    dl = np.abs(_logit(local["p_a"]) - _logit(remote["p_a"]))
    return {"max_dp": float(dp.max()), "mean_dp": float(dp.mean()), "max_dlogit": float(dl.max())}


def test_completions_api_agrees_with_the_in_process_judge(lm, llama_server):
    local = Comparator(lm).compare(PAIRS, TEXTS, CTX, symmetric=True, progress=False)
    judge = Comparator(endpoint=llama_server.url, model=SERVED, api="completions", tokenizer=lm.tokenizer)
    remote = judge.compare(PAIRS, TEXTS, CTX, symmetric=True, progress=False)
    got = _agree(local, remote)
    print(f"completions API vs in-process: {got}")
    assert got["max_dlogit"] <= LOGIT_TOL, got
    assert got["mean_dp"] <= 0.02, got
    # the server scored the very prompts the in-process judge scored (same tokens)
    prompts = [lm.tokenizer.apply_chat_template([{"role": "user", "content": get_template("summeval-coherence").pairwise.format(
        context=CTX["s"], a=TEXTS[f], b=TEXTS[s])}], tokenize=False, add_generation_prompt=True) + "Summary"
        for f, s in zip(remote["a"], remote["b"], strict=True)]
    n_tokens = sum(len(lm.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts)
    assert remote.attrs["endpoint"]["prompt_tokens"] == n_tokens
    assert remote.attrs["endpoint"]["label_check"] == "one token each by the local tokenizer"
    assert local.attrs["diagnosis"]["position_determined"] == remote.attrs["diagnosis"]["position_determined"] == 1.0


def test_chat_api_agrees_with_the_in_process_chat_judge(lm, llama_server):
    local = Comparator(lm, template=LETTER).compare(PAIRS, TEXTS, CTX, symmetric=True, progress=False)
    remote = Comparator(endpoint=llama_server.url, model=SERVED, template=LETTER).compare(
        PAIRS, TEXTS, CTX, symmetric=True, progress=False)
    got = _agree(local, remote)
    print(f"chat API vs in-process: {got}")
    assert got["max_dlogit"] <= LOGIT_TOL, got
    assert (remote["label_pos"] == 0).all()
    assert remote.attrs["endpoint"]["label_check"] == "one token each by the server's tokenizer"


def test_sample_likert_prepair_modes(llama_server):
    kw = dict(endpoint=llama_server.url, model=SERVED, n_samples=2, max_new_tokens=4, analysis_tokens=8)
    one = PAIRS.iloc[:1]
    s = Comparator(mode="sample", **kw).compare(one, TEXTS, CTX, progress=False)
    assert (s[["n_a", "n_b", "n_tie", "n_unparsed"]].sum(axis=1) == 2).all()
    likert_tpl = get_template("summeval-coherence").with_(score_prefix="Score: ", name="likert-space")
    lk = Comparator(mode="likert", template=likert_tpl, **kw).compare(one, TEXTS, CTX, progress=False)
    assert lk["status"].eq("ok").all() and lk["p_a"].between(0, 1).all()
    assert ((lk["p_a"] > 0.5) == (lk["score_a"] > lk["score_b"])).all()
    with warnings.catch_warnings():  # after an analysis the model may be so sure of "A" that " B"
        warnings.simplefilter("ignore", MissingLabelsWarning)  # is not among the top 20: marked
        pp = Comparator(mode="prepair", **kw).compare(one, TEXTS, CTX, progress=False)
    row = pp.iloc[0]
    assert row["status"] in ("ok", "missing_b", "missing_a", "missing")
    assert (row["status"] == "ok") == np.isfinite(row["p_a"])
    if row["status"] == "missing_b":
        assert 0.5 < row["p_a_low"] <= 1
    assert pp.attrs["endpoint"]["requests"] == 3  # two analyses, one judgment


def test_real_server_bad_input(llama_server):
    # llama-cpp-python answers any model name; the judge checks GET /v1/models first
    with pytest.raises(EndpointModelError, match=r"does not serve model 'gpt-4o'; it serves \['smollm2'\]"):
        Comparator(endpoint=llama_server.url, model="gpt-4o")
    tpl = PromptTemplate(name="rare", pairwise="{a} or {b}?", labels=(("Zyxwvut",), ("B",)))
    with pytest.raises(LabelTokenError, match="'Zyxwvut' is 5 tokens for the server's tokenizer"):
        Comparator(endpoint=llama_server.url, model=SERVED, template=tpl)


@pytest.fixture
def own_server(tmp_path):
    srv = LlamaServer(log=tmp_path / "server.log").start()
    yield srv
    srv.stop()


def _count(path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_server_killed_mid_run_then_restarted_loses_and_duplicates_nothing(own_server, tmp_path):
    texts = {c: f"Candidate {c} says the meeting moved to {d}." for c, d in
             zip("pqrs", ["Monday", "noon", "Friday", "May"], strict=True)}
    ctx = {"doc": "The weekly meeting was moved from Monday to Friday at noon."}
    pairs = pd.DataFrame([("doc", a, b) for a in texts for b in texts if a < b], columns=["item", "a", "b"])
    n = 2 * len(pairs)
    store = tmp_path / "run.sqlite"
    judge = Comparator(endpoint=own_server.url, model=SERVED, template=LETTER, concurrency=1, request_options=FAST)
    failure: list[BaseException] = []

    def run():
        try:
            judge.compare(pairs, texts, ctx, symmetric=True, store=store, progress=False)
        except BaseException as err:  # noqa: BLE001 - inspected below
            failure.append(err)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 120
    while not store.exists() or _count(store) < 2:
        assert worker.is_alive(), f"the run ended before the server could be killed: {failure}"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    own_server.kill()
    worker.join(60)
    assert not worker.is_alive()
    assert len(failure) == 1 and isinstance(failure[0], EndpointUnreachableError), failure
    assert own_server.url in str(failure[0])
    before = _count(store)
    assert 2 <= before < n

    own_server.start()  # same port
    resumed_judge = Comparator(endpoint=own_server.url, model=SERVED, template=LETTER, concurrency=2,
                               request_options=FAST)
    resumed = resumed_judge.compare(pairs, texts, ctx, symmetric=True, store=store, progress=False)
    ep = resumed.attrs["endpoint"]
    assert ep["n_judged_now"] == n - before and ep["requests"] + ep["cache_hits"] == n - before
    assert len(resumed) == n and _count(store) == n
    assert not resumed.duplicated(["item", "a", "b"]).any()
    fresh = resumed_judge.compare(pairs, texts, ctx, symmetric=True, progress=False)
    np.testing.assert_allclose(resumed["p_a"], fresh["p_a"], atol=1e-6)


def test_a_server_without_logprobs_errors_or_falls_back(tmp_path):
    srv = LlamaServer(logits_all=False, threads=1, log=tmp_path / "server.log").start()
    try:
        # llama-cpp-python started with --logits_all false answers HTTP 500 "logprobs is not supported"
        with pytest.raises(LogprobsUnavailableError, match="returns no log-probabilities"):
            Comparator(endpoint=srv.url, model=SERVED)
        with pytest.warns(LogprobsFallbackWarning):
            judge = Comparator(endpoint=srv.url, model=SERVED, no_logprobs="sample", n_samples=2, max_new_tokens=4)
        df = judge.compare(PAIRS.iloc[:1], TEXTS, CTX, progress=False)
        assert judge.judge_name == f"{SERVED}/summeval-coherence/sample"
        assert (df[["n_a", "n_b", "n_tie", "n_unparsed"]].sum(axis=1) == 2).all()
    finally:
        srv.stop()
