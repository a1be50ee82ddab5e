"""Endpoint judges against a scripted stdlib server on 127.0.0.1: reading log-probabilities, the
request cache, retries, and every bad input as a clear error (the real llama.cpp server is in
test_endpoint_llama.py)."""

from __future__ import annotations

import json
import math
import sqlite3
import time

import numpy as np
import pandas as pd
import pytest
from _servers import MODELS, SERVED, FakeServer, chat_answer, chat_text, free_port

from bayes_judge.comparator import Comparator, PromptTemplate
from bayes_judge.comparator.endpoint import (
    EndpointAuthError,
    EndpointError,
    EndpointModelError,
    EndpointResponseError,
    EndpointUnreachableError,
    LabelTokenError,
    LogprobsFallbackWarning,
    LogprobsUnavailableError,
    MissingLabelsWarning,
    label_probabilities,
)
from bayes_judge.diagnose import UninformativeJudgeWarning

TEXTS = {"x": "The cat sat on the mat.", "y": "Mat cat the on sat.", "z": "A cat was sitting on a mat."}
CTX = {"s": "The cat sat on the mat all day long."}
PAIRS = pd.DataFrame({"item": ["s", "s", "s"], "a": ["x", "x", "y"], "b": ["y", "z", "z"]})
FAST = {"backoff": 0.01, "max_backoff": 0.05, "max_retries": 2, "timeout": 10}


def _lp(p: float) -> float:
    return math.log(p)


def prob_answer(pa: float, pb: float, *, prefix: bool = False) -> dict:
    """A chat answer whose label position lists " A" with pa and " B" with pb (and filler)."""
    alts = [(" A", _lp(pa)), (" B", _lp(pb)), (" C", _lp(0.001))]
    alts.sort(key=lambda t: -t[1])
    toks = [(alts[0][0], alts)]
    if prefix:
        toks = [("Summary", [("Summary", _lp(0.9)), ("A", _lp(0.01))]), *toks]
    return chat_answer(toks)


def by_prompt(answer):
    """Handler: /models lists the served model; chat completions answered by answer(body)."""

    def handler(method, path, body, headers):
        if path.endswith("/models"):
            return 200, MODELS, {}
        if path.endswith("/chat/completions"):
            if body.get("max_tokens") == 1 and "Answer with the letter A." in json.dumps(body):
                return 200, chat_answer([("A", [("A", -0.1), ("B", -3.0)])]), {}
            return 200, answer(body), {}
        return 404, {"error": {"message": "not found"}}, {}

    return handler


def _p_for(body) -> tuple[float, float]:
    """A deterministic (P(A), P(B)) per prompt: shown-first text x gets 0.7, otherwise 0.2."""
    user = body["messages"][-1]["content"]
    first = user.split("Summary A: ")[1].split("\n")[0]
    pa = 0.7 if first == TEXTS["x"] else 0.2
    return pa, 0.9 - pa


# -- reading label probabilities ----------------------------------------------------------------


def test_label_variants_are_summed_and_the_prefix_is_skipped():
    pos = [("A", {"A": _lp(0.3), " A": _lp(0.1), "\u0120A": _lp(0.05), "\u2581A": _lp(0.05), "B": _lp(0.2), "a": _lp(0.1)})]
    lab = label_probabilities(pos, [["A"], ["B"]])
    assert lab["pos"] == 0
    np.testing.assert_allclose(lab["probs"], [0.5, 0.2])  # "a" is another word: case matters
    # the model writes the answer prefix first: the label is read after it
    pos2 = [("Summary", {"Summary": _lp(0.8), "A": _lp(0.001)}), (" B", {" B": _lp(0.6), " A": _lp(0.3)})]
    lab2 = label_probabilities(pos2, [["A"], ["B"]], "Summary")
    assert lab2["pos"] == 1
    np.testing.assert_allclose(lab2["probs"], [0.3, 0.6])
    # a leading whitespace token does not hide the label
    lab3 = label_probabilities([(" ", {" ": _lp(0.5)}), ("B", {"B": _lp(0.4), "A": _lp(0.2)})], [["A"], ["B"]])
    assert lab3["pos"] == 1
    # nothing listed: NaN, never 0.5
    lab4 = label_probabilities([("The", {"The": _lp(0.9)})], [["A"], ["B"]])
    assert lab4["pos"] is None and all(math.isnan(p) for p in lab4["probs"])


# -- prob mode, cache, counts -------------------------------------------------------------------


def test_prob_mode_is_eq3_and_the_store_caches_requests(tmp_path, monkeypatch):
    monkeypatch.setenv("BJ_TEST_KEY", "sk-secret-123")

    with FakeServer(by_prompt(lambda body: prob_answer(*_p_for(body)))) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, api_key_env="BJ_TEST_KEY", concurrency=3,
                           request_options=FAST)
        store = tmp_path / "run.sqlite"
        df = judge.compare(PAIRS, TEXTS, CTX, symmetric=True, store=store, progress=False)
        assert len(df) == 6 and df["status"].eq("ok").all()
        expected = np.where(df["a"] == "x", 0.7 / 0.9, 0.2 / 0.9)  # seed 001 eq. 3
        np.testing.assert_allclose(df["p_a"], expected, rtol=1e-9)
        assert df["judge"].iloc[0] == f"{SERVED}/summeval-coherence/prob"
        ep = df.attrs["endpoint"]
        assert ep["requests"] == 6 and ep["cache_hits"] == 0 and ep["n_missing"] == 0
        assert ep["prompt_tokens"] == 60 and ep["completion_tokens"] == 6 and ep["total_tokens"] == 66
        # the key goes in the header, and nowhere else
        posts = [c for c in srv.calls if c[0] == "POST"]
        assert all(h.get("authorization") == "Bearer sk-secret-123" for *_, h in posts)
        assert b"sk-secret-123" not in store.read_bytes() and "sk-secret-123" not in repr(df.attrs)
        assert "BJ_TEST_KEY" not in repr(df.attrs)
        # every request asks for the label token's log-probabilities, greedily
        body = srv.posts("/chat/completions")[-1]
        assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0
        n_posts = len(srv.calls)
        # rerun: the judgments are stored, nothing is sent
        again = judge.compare(PAIRS, TEXTS, CTX, symmetric=True, store=store, progress=False)
        assert len(srv.calls) == n_posts and again.attrs["endpoint"]["requests"] == 0
        pd.testing.assert_series_equal(again["p_a"], df["p_a"])
        # judgments lost (e.g. killed between the answer and its row): answered from the request cache
        con = sqlite3.connect(store)
        with con:
            con.execute("DELETE FROM judgments WHERE \"order\" = 'ba'")
        con.close()
        third = judge.compare(PAIRS, TEXTS, CTX, symmetric=True, store=store, progress=False)
        assert len(srv.calls) == n_posts
        assert third.attrs["endpoint"]["cache_hits"] == 3 and third.attrs["endpoint"]["requests"] == 0
        pd.testing.assert_series_equal(third["p_a"], df["p_a"])


def test_missing_labels_are_marked_never_filled(tmp_path):
    def answer(body):
        pa, pb = _p_for(body)
        if pa > 0.5:  # B is not among the listed tokens
            return chat_answer([(" A", [(" A", _lp(pa)), (" The", _lp(0.05))])])
        return chat_answer([("The", [("The", _lp(0.9)), ("It", _lp(0.05))])])  # neither label

    with FakeServer(by_prompt(answer)) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, request_options=FAST)
        with pytest.warns(MissingLabelsWarning, match="have no probability"):
            df = judge.compare(PAIRS, TEXTS, CTX, symmetric=True, progress=False)
    assert df["p_a"].isna().all() and df["winner"].isna().all()
    first_x = df["a"] == "x"
    assert set(df.loc[first_x, "status"]) == {"missing_b"} and set(df.loc[~first_x, "status"]) == {"missing"}
    # P(B) < 0.05 (the smallest listed), so p_a > 0.7 / 0.75
    np.testing.assert_allclose(df.loc[first_x, "p_a_low"], 0.7 / 0.75, rtol=1e-5)
    assert df.attrs["endpoint"]["n_missing"] == 6
    assert df.attrs["endpoint"]["status"] == {"missing_b": 2, "missing": 4}
    assert df.attrs["position_bias"] is None and df.attrs["diagnosis"]["n_missing"] == 6


def test_labels_after_the_answer_prefix_the_model_writes(tmp_path):
    with FakeServer(by_prompt(lambda body: prob_answer(*_p_for(body), prefix=True))) as srv:
        df = Comparator(endpoint=srv.url, model=SERVED, request_options=FAST).compare(
            PAIRS, TEXTS, CTX, progress=False)
        assert srv.posts("/chat/completions")[-1]["max_tokens"] > 1  # room for "Summary" + label
    assert (df["label_pos"] == 1).all()
    np.testing.assert_allclose(df["p_a"], np.where(df["a"] == "x", 0.7 / 0.9, 0.2 / 0.9))


def test_concurrency_is_bounded_and_used():
    def answer(body):
        time.sleep(0.15)
        return prob_answer(*_p_for(body))

    pairs = pd.DataFrame([("s", a, b) for a in TEXTS for b in TEXTS if a < b] * 1, columns=["item", "a", "b"])
    with FakeServer(by_prompt(answer)) as srv:
        Comparator(endpoint=srv.url, model=SERVED, concurrency=3, request_options=FAST).compare(
            pairs, TEXTS, CTX, symmetric=True, progress=False)
        assert 2 <= srv.in_flight_max <= 3


# -- retries ------------------------------------------------------------------------------------


def test_429_and_503_are_retried_with_backoff():
    state = {"n": 0}

    def answer(body):
        return prob_answer(*_p_for(body))

    base = by_prompt(answer)

    def handler(method, path, body, headers):
        if path.endswith("/chat/completions") and body.get("max_tokens", 0) > 1 or (
                path.endswith("/chat/completions") and "Summary A" in json.dumps(body)):
            state["n"] += 1
            if state["n"] == 1:
                return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
            if state["n"] == 2:
                return 503, {"error": {"message": "overloaded"}}, {}
        return base(method, path, body, headers)

    with FakeServer(handler) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, concurrency=1, request_options=FAST)
        df = judge.compare(PAIRS.iloc[:1], TEXTS, CTX, progress=False)
    assert df["status"].eq("ok").all() and df.attrs["endpoint"]["retries"] == 2


def test_retries_are_bounded(tmp_path):
    def handler(method, path, body, headers):
        if path.endswith("/models"):
            return 200, MODELS, {}
        if "Answer with the letter A." in json.dumps(body):
            return 200, chat_answer([("A", [("A", -0.1), ("B", -3.0)])]), {}
        return 503, {"error": {"message": "overloaded"}}, {}

    with FakeServer(handler) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, concurrency=2, request_options=FAST)
        t0 = time.perf_counter()
        with pytest.raises(EndpointError, match="HTTP 503 after 2 retries: overloaded"):
            judge.compare(PAIRS, TEXTS, CTX, store=tmp_path / "r.sqlite", progress=False)
        assert time.perf_counter() - t0 < 5
        n_chat = len(srv.posts("/chat/completions")) - 1
        assert n_chat <= 3 * 3  # each request tried at most 1 + max_retries times


# -- bad input ----------------------------------------------------------------------------------


def test_unreachable_endpoint_fails_fast_naming_the_address():
    url = f"http://127.0.0.1:{free_port()}/v1"
    t0 = time.perf_counter()
    with pytest.raises(EndpointUnreachableError, match=url.replace(".", r"\.")):
        Comparator(endpoint=url, model=SERVED)
    assert time.perf_counter() - t0 < 3


def test_bad_endpoint_arguments():
    with pytest.raises(ValueError, match="not an http"):
        Comparator(endpoint="127.0.0.1:8000/v1", model=SERVED)
    with pytest.raises(ValueError, match="needs model="):
        Comparator(endpoint="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="BJ_UNSET_KEY"):
        Comparator(endpoint="http://127.0.0.1:9/v1", model=SERVED, api_key_env="BJ_UNSET_KEY")
    with pytest.raises(ValueError, match="request_options"):
        Comparator(endpoint="http://127.0.0.1:9/v1", model=SERVED, request_options={"retries": 3})


def test_401_is_an_auth_error(monkeypatch):
    monkeypatch.setenv("BJ_TEST_KEY", "wrong")

    def handler(method, path, body, headers):
        return 401, {"error": {"message": "Incorrect API key provided"}}, {}

    with FakeServer(handler) as srv:
        with pytest.raises(EndpointAuthError, match=r"HTTP 401 \(Incorrect API key provided\); check the key in \$BJ_TEST_KEY"):
            Comparator(endpoint=srv.url, model=SERVED, api_key_env="BJ_TEST_KEY")
        assert len(srv.calls) == 1  # not retried


def test_a_model_the_server_does_not_serve():
    with FakeServer(by_prompt(lambda body: prob_answer(0.5, 0.4))) as srv:
        with pytest.raises(EndpointModelError, match=r"does not serve model 'gpt-judge'; it serves \['smollm2'\]"):
            Comparator(endpoint=srv.url, model="gpt-judge")


@pytest.mark.parametrize("bad", [
    {"id": "x", "object": "chat.completion"},                                   # no choices
    {"choices": []},                                                            # empty choices
    b"<html>502 bad gateway</html>",                                            # not JSON
    {"choices": [{"message": {"content": "A"}, "logprobs": {"content": [{"token": "A"}]}}]},  # no logprob
])
def test_a_response_without_the_expected_fields(bad):
    with FakeServer(by_prompt(lambda body: bad)) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, request_options=FAST)
        with pytest.raises(EndpointResponseError):
            judge.compare(PAIRS.iloc[:1], TEXTS, CTX, progress=False)


def test_a_label_word_of_several_tokens():
    tpl = PromptTemplate(name="multi", pairwise="{a} or {b}? Answer Summary A or Summary B.",
                         labels=(("Summary A",), ("Summary B",)))
    with FakeServer(by_prompt(lambda body: prob_answer(0.5, 0.4))) as srv:
        with pytest.raises(LabelTokenError, match="'Summary A' is several words"):
            Comparator(endpoint=srv.url, model=SERVED, template=tpl)


def test_a_label_word_of_several_tokens_by_the_servers_tokenizer():
    def handler(method, path, body, headers):
        if path == "/extras/tokenize":  # llama-cpp-python's route: one id per character
            return 200, {"tokens": list(range(len(body["input"])))}, {}
        if path == "/tokenize":
            return 404, {"detail": "Not Found"}, {}
        return by_prompt(lambda b: prob_answer(0.5, 0.4))(method, path, body, headers)

    tpl = PromptTemplate(name="long", pairwise="{a} or {b}?", labels=(("First",), ("Second",)))
    with FakeServer(handler) as srv:
        with pytest.raises(LabelTokenError, match="'First' is 5 tokens for the server's tokenizer"):
            Comparator(endpoint=srv.url, model=SERVED, template=tpl)
        judge = Comparator(endpoint=srv.url, model=SERVED)  # " A" / " B": one token each
        assert judge.endpoint.label_check == "one token each by the server's tokenizer"


# -- no log-probabilities -----------------------------------------------------------------------


def _no_logprobs_server(answer_text: str = "Summary A"):
    def handler(method, path, body, headers):
        if path.endswith("/models"):
            return 200, MODELS, {}
        return 200, chat_text(answer_text), {}

    return FakeServer(handler)


def test_no_logprobs_raises_or_falls_back_to_sampling(tmp_path):
    with _no_logprobs_server() as srv:
        with pytest.raises(LogprobsUnavailableError, match="use mode='sample' or no_logprobs='sample'"):
            Comparator(endpoint=srv.url, model=SERVED)
        with pytest.raises(LogprobsUnavailableError, match="likert"):
            Comparator(endpoint=srv.url, model=SERVED, mode="likert")
        with pytest.warns(LogprobsFallbackWarning, match="3 sampled answers"):
            judge = Comparator(endpoint=srv.url, model=SERVED, no_logprobs="sample", n_samples=3)
        assert judge.mode == "sample" and judge.judge_name.endswith("/sample")
        df = judge.compare(PAIRS.iloc[:1], TEXTS, CTX, progress=False)
        assert df[["n_a", "n_b", "n_unparsed"]].iloc[0].tolist() == [3, 0, 0] and df["p_a"].iloc[0] == 1.0
        seeds = [b["seed"] for b in srv.posts("/chat/completions") if "seed" in b]
        assert len(set(seeds)) == 3  # one seed per sample


def test_sampled_answers_unparseable_are_counted_not_guessed():
    with _no_logprobs_server("I cannot decide.") as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, mode="sample", n_samples=2)
        with pytest.warns(MissingLabelsWarning, match="unparsed"):
            df = judge.compare(PAIRS.iloc[:2], TEXTS, CTX, progress=False)
    assert df["p_a"].isna().all() and (df["n_unparsed"] == 2).all() and (df["status"] == "unparsed").all()


# -- the judge carries no information -----------------------------------------------------------


def test_a_judge_that_always_says_A_is_flagged():
    texts = {c: f"Candidate text number {c}." for c in "pqrstu"}
    pairs = pd.DataFrame([("s", a, b) for a in texts for b in texts if a < b], columns=["item", "a", "b"])
    with FakeServer(by_prompt(lambda body: prob_answer(0.8, 0.1))) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, request_options=FAST)
        with pytest.warns(UninformativeJudgeWarning, match="nearly constant"):
            df = judge.compare(pairs, texts, CTX, symmetric=True, progress=False)
    d = df.attrs["diagnosis"]
    assert d["checked"] and d["informative"] is False
    assert {"constant", "position-determined"} <= set(d["flags"]) and d["position_determined"] == 1.0


def test_likert_scores_are_probability_weighted_from_the_top_logprobs():
    def answer(body):
        text = body["messages"][-1]["content"]
        good = TEXTS["x"] in text
        probs = [("4", 0.6), ("5", 0.3), ("3", 0.05)] if good else [("2", 0.5), ("1", 0.4), ("Score", 0.05)]
        return chat_answer([(probs[0][0], [(t, _lp(p)) for t, p in probs])])

    with FakeServer(by_prompt(answer)) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, mode="likert", request_options=FAST)
        sc = judge.score([("s", "x"), ("s", "y")], TEXTS, CTX, progress=False)
        df = judge.compare(PAIRS.iloc[:1], TEXTS, CTX, symmetric=True, progress=False)
    # E[k] under the listed scale values renormalized (G-Eval, seed 002 §3.1); "Score" is no value
    np.testing.assert_allclose(sc["score"], [(4 * 0.6 + 5 * 0.3 + 3 * 0.05) / 0.95, (2 * 0.5 + 1 * 0.4) / 0.9])
    assert (sc["status"] == "ok").all()
    d = (sc["score"][0] - sc["score"][1])
    np.testing.assert_allclose(df["p_a"], [1 / (1 + math.exp(-d)), 1 / (1 + math.exp(d))])


def test_debiasing_keeps_rows_without_a_probability():
    def answer(body):
        pa, pb = _p_for(body)
        if pa < 0.5:
            return chat_answer([("The", [("The", _lp(0.9))])])
        return prob_answer(pa, pb)

    with FakeServer(by_prompt(answer)) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, request_options=FAST)
        with pytest.warns(MissingLabelsWarning), pytest.warns(UserWarning, match="assumes a balanced set"):
            df = judge.compare(PAIRS, TEXTS, CTX, symmetric=True, progress=False, debias="threshold")
    ok = df["status"] == "ok"
    assert ok.sum() == 2 and df.loc[~ok, "p_a"].isna().all() and df.loc[~ok, "winner"].isna().all()
    assert df.loc[ok, "winner"].isin(["a", "b", "tie"]).all() and "p_a_raw" in df.columns
    assert next(iter(df.attrs["debias"].values()))["n"] == 2


def test_a_server_still_loading_its_model_is_waited_for():
    state = {"n": 0}
    base = by_prompt(lambda body: prob_answer(0.6, 0.3))

    def handler(method, path, body, headers):
        if path.endswith("/models") and state["n"] < 2:  # llama.cpp's llama-server while it loads
            state["n"] += 1
            return 503, {"error": {"message": "Loading model", "code": 503}}, {}
        return base(method, path, body, headers)

    with FakeServer(handler) as srv:
        judge = Comparator(endpoint=srv.url, model=SERVED, request_options=FAST)
    assert state["n"] == 2 and judge.endpoint.served == [SERVED]


def test_a_tokenizer_given_as_a_path_string_is_loaded():
    """Issue 31 (12): tokenizer="path/to/model.gguf", as the README documents; a str has .encode,
    so it was taken for a tokenizer object and failed at the first label check."""
    from bayes_judge.comparator import get_template
    from bayes_judge.comparator.endpoint import EndpointClient, EndpointJudge
    from bayes_judge.comparator.install import default_model_dir

    ggufs = sorted(default_model_dir().glob("*.gguf"))
    if not ggufs:
        pytest.skip("the embedded judge is not installed (make models)")
    path = ggufs[0]
    client = EndpointClient("http://127.0.0.1:9/v1", "served")
    for given in (str(path), path):
        judge = EndpointJudge(client, get_template("summeval-coherence"), api="completions", tokenizer=given,
                              check=False)
        assert not isinstance(judge.tokenizer, str | type(path))
        assert len(judge.tokenizer.encode("First", add_special_tokens=False)) >= 1


def test_credentials_in_the_url_become_a_header_and_never_reach_a_message():
    """Issue 31 (11): http://user:pw@host/v1 failed with a wrong "cannot reach" diagnosis that
    repeated the password."""
    import base64

    from bayes_judge.comparator import EndpointUnreachableError
    from bayes_judge.comparator.endpoint import EndpointClient

    c = EndpointClient("http://alice:s3cr%40t@127.0.0.1:9/v1", "served", max_retries=0, timeout=2)
    assert c.base_url == "http://127.0.0.1:9/v1"
    assert c._headers()["Authorization"] == "Basic " + base64.b64encode(b"alice:s3cr@t").decode()
    with pytest.raises(EndpointUnreachableError) as err:
        c.request("GET", "/models", retry_unreachable=False)
    assert "s3cr" not in str(err.value) and "alice" not in str(err.value)
