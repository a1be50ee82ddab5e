"""Judges behind OpenAI-compatible endpoints (llama.cpp, llama-cpp-python, vLLM, SGLang,
``transformers serve``, OpenAI): the HTTP client and the scoring of every comparator mode.

>>> from bayes_judge.comparator import Comparator                                  # doctest: +SKIP
>>> judge = Comparator(endpoint="http://127.0.0.1:8000/v1", model="smollm2",
...                    api_key_env="OPENAI_API_KEY", concurrency=4)
>>> df = judge.compare(pairs, texts, contexts, symmetric=True, store="run.sqlite")
>>> df.attrs["endpoint"]        # requests, cache hits, retries, prompt/completion tokens, misses

How each mode reads an endpoint
-------------------------------
``prob`` (Liusie, Manakul & Gales 2024 eq. 3)
    One request per comparison, greedy, with log-probabilities (chat: ``logprobs=true,
    top_logprobs=k``; completions: ``logprobs=k``). P(label) is the sum of the probabilities of
    the listed tokens whose text, with BPE / SentencePiece space markers (``Ġ``, ``▁``) read as
    spaces and surrounding whitespace stripped, is the label word: "A", " A", "▁A", "ĠA" all count
    for "A". The token read is the first answer token, or, when the model first writes the
    template's answer prefix ("Summary A" after "... Summary A or Summary B?"), the token after
    it (``label_pos`` says which). p = P(A) / (P(A) + P(B)). When a label is not among the top
    ``k`` tokens its probability is unknown (below the smallest listed one): the row gets
    ``p_a = NaN`` and ``status`` ``"missing"`` (neither label), ``"missing_a"`` or
    ``"missing_b"``, with the bound the listed probabilities imply (``p_a_low`` / ``p_a_high``);
    the count is in ``attrs["endpoint"]["n_missing"]`` and a :class:`MissingLabelsWarning` says
    so. Nothing is filled with 0.5.
``sample`` (Liusie, Manakul & Gales 2024 eq. 4-5)
    ``n_samples`` requests per comparison at ``temperature``, each with its own ``seed`` (servers
    that ignore it are not reproducible, but the request cache makes a rerun return the same
    answers); answers parsed as in the local judge; unparseable ones counted (``n_unparsed``);
    a comparison with no parseable answer gets ``p_a = NaN``, ``status = "unparsed"``.
``likert`` / ``prepair``
    Likert: the scale values read like labels (probability-weighted score, Jeong et al. 2024 §3.1); scale
    values missing from the top ``k`` count as 0 (they are below the smallest listed
    probability), a candidate with none of them listed has no score. PRePair: the per-output
    analyses are generated greedily once (cached), then the pairwise prompt is read as ``prob``.

Chat or completions
-------------------
``api="chat"`` (default) sends the template's text as the user message (and its system message);
the server applies the model's chat template, so the answer prefix cannot be appended and the
model writes it itself. ``api="completions"`` sends one prompt string: the template's text
followed by a newline and the answer prefix, or, with ``tokenizer=`` (a local tokenizer folder
or ``.gguf`` file of the served model), the text rendered with that tokenizer's chat template and
the answer prefix appended, which is exactly the prompt the in-process judge scores.

A server that returns no log-probabilities (reasoning models, some llama.cpp versions on
``/v1/completions``) is found by a probe request when the judge is made: ``no_logprobs="raise"``
(default) raises :class:`LogprobsUnavailableError`; ``no_logprobs="sample"`` switches a ``prob``
judge to ``sample`` mode with a :class:`LogprobsFallbackWarning` (its judge name and store key say
``sample``).

Requests, errors, cache
-----------------------
Requests run on ``concurrency`` threads (stdlib ``urllib``; nothing to install). 429, 5xx,
time-outs and dropped connections are retried ``max_retries`` times with exponential back-off
(``backoff`` · 2^k seconds, jittered, capped at ``max_backoff``; a ``Retry-After`` header is
honoured up to the cap); then the run stops with :class:`EndpointUnreachableError` or
:class:`EndpointError`, keeping every judgment already made in the store. Errors that retrying
cannot fix raise at once: :class:`EndpointAuthError` (401/403), :class:`EndpointModelError` (a
model the server does not serve), :class:`EndpointResponseError` (a response without the expected
fields), :class:`EndpointError` (400: context too long, bad parameters; the server's message is
included). The judge checks the server when it is made: an unreachable address fails at once,
naming it.

Every response is kept in the run's store (``requests``: key = hash of endpoint, model, template,
API path and the exact request body); the API key is read from ``api_key_env`` at request time
and is never written to the store or to ``attrs``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from http.client import HTTPException
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ..errors import (  # stdlib-only, shared with the CLI
    EndpointAuthError,
    EndpointError,
    EndpointModelError,
    EndpointResponseError,
    EndpointUnreachableError,
    LogprobsUnavailableError,
)
from .parse import parse_choice

if TYPE_CHECKING:
    from .judge import Judge
    from .store import JudgmentStore

__all__ = [
    "EndpointClient",
    "EndpointJudge",
    "EndpointError",
    "EndpointUnreachableError",
    "EndpointAuthError",
    "EndpointModelError",
    "EndpointResponseError",
    "LogprobsUnavailableError",
    "LabelTokenError",
    "MissingLabelsWarning",
    "LogprobsFallbackWarning",
    "APIS",
    "label_probabilities",
    "request_key",
]

APIS = ("chat", "completions")
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MISSING_P = -1.0  # stored p_first of a judgment with no probability (see store.py)


class LabelTokenError(ValueError):
    """A label word is not one token of the served model's vocabulary."""


class MissingLabelsWarning(UserWarning):
    """Some comparisons got no probability (labels missing from the top log-probabilities, or no
    parseable sampled answer); their ``p_a`` is NaN and ``status`` says why."""


class LogprobsFallbackWarning(UserWarning):
    """The endpoint gives no log-probabilities; the ``prob`` judge samples answers instead."""


# ---------------------------------------------------------------------------------------------
# reading log-probabilities
# ---------------------------------------------------------------------------------------------

def _norm(token: str) -> str:
    """A token's text with BPE / SentencePiece markers read as whitespace, then stripped."""
    return token.replace("\u0120", " ").replace("\u2581", " ").replace("\u010a", "\n").strip()


def _positions(choice: dict) -> list[tuple[str, dict[str, float]]] | None:
    """(chosen token, {token: logprob of the top alternatives}) per generated position, from the
    OpenAI chat format (``logprobs.content``) or the completions format (``tokens`` +
    ``top_logprobs`` dicts, which llama-cpp-python also returns for chat). None when the
    response has no log-probabilities; :class:`EndpointResponseError` when they are malformed."""
    lp = choice.get("logprobs")
    if lp is None:
        return None
    try:
        if isinstance(lp, dict) and lp.get("content") is not None:
            out = []
            for pos in lp["content"]:
                top: dict[str, float] = {}
                for alt in pos.get("top_logprobs") or []:
                    t, v = str(alt["token"]), float(alt["logprob"])
                    top[t] = max(top.get(t, -math.inf), v)  # a token string listed twice: keep one
                t0 = str(pos["token"])
                top.setdefault(t0, float(pos["logprob"]))
                out.append((t0, top))
            return out
        if isinstance(lp, dict) and lp.get("tokens") is not None:
            tops = lp.get("top_logprobs") or [None] * len(lp["tokens"])
            out = []
            for t0, top_d, v0 in zip(lp["tokens"], tops, lp.get("token_logprobs") or [None] * len(lp["tokens"]),
                                     strict=False):
                top = {str(k): float(v) for k, v in (top_d or {}).items()}
                if v0 is not None:
                    top.setdefault(str(t0), float(v0))
                out.append((str(t0), top))
            return out
        if isinstance(lp, dict) and "content" in lp:  # {"content": null}
            return None
    except (KeyError, TypeError, ValueError) as err:
        raise EndpointResponseError(f"malformed log-probabilities in the response ({err!r}): {str(lp)[:300]}") from err
    raise EndpointResponseError(f"unrecognized log-probabilities in the response: {str(lp)[:300]}")


def label_probabilities(
    positions: Sequence[tuple[str, dict[str, float]]],
    label_words: Sequence[Sequence[str]],
    prefix: str = "",
) -> dict[str, Any]:
    """Probabilities of label words at the answer position of a greedy, log-prob'd answer.

    Parameters
    ----------
    positions : per generated token, (chosen token, {token: logprob}) (see the module docstring)
    label_words : one set of words per label (e.g. ``[["A"], ["B"]]`` or the scale values)
    prefix : the template's answer prefix; the position right after it counts as the answer
        token when the model writes it

    Returns
    -------
    dict with ``probs`` (per label: summed probability, NaN when no variant is listed), ``pos``
    (the position read; None when no position lists a label), ``min_listed`` (the smallest
    listed probability there: a bound on any unlisted label) and ``listed`` (count of listed
    alternatives).
    """
    targets = [{w.strip() for w in words} for words in label_words]
    pref = "".join(prefix.split()).casefold()
    before = ""
    candidates = []
    for k, (tok, _) in enumerate(positions):
        if "".join(before.split()).casefold() in ("", pref):
            candidates.append(k)
        before += tok.replace("\u0120", " ").replace("\u2581", " ").replace("\u010a", "\n")
    best: dict[str, Any] = {"probs": [math.nan] * len(targets), "pos": None, "min_listed": math.nan, "listed": 0}
    for k in reversed(candidates):  # the last answer position that lists a label
        top = positions[k][1]
        probs = []
        for tg in targets:
            ps = [math.exp(v) for t, v in top.items() if _norm(t) in tg]
            probs.append(float(sum(ps)) if ps else math.nan)
        if any(not math.isnan(p) for p in probs):
            listed = [math.exp(v) for v in top.values()]
            return {"probs": probs, "pos": k, "min_listed": float(min(listed)), "listed": len(listed)}
    return best


def _pair_probability(lab: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """p = P(A) / (P(A) + P(B)) (Liusie, Manakul & Gales 2024 eq. 3), or (MISSING_P, status and bounds)."""
    pa, pb = lab["probs"]
    extra: dict[str, Any] = {"label_pos": lab["pos"]}
    if not math.isnan(pa) and not math.isnan(pb):
        extra.update(status="ok", label_mass=round(pa + pb, 6))
        return pa / (pa + pb), extra
    m = lab["min_listed"]
    if math.isnan(pa) and math.isnan(pb):
        extra["status"] = "missing"
    elif math.isnan(pb):  # P(B) < m
        extra.update(status="missing_b", p_a_low=round(pa / (pa + m), 6), label_mass=round(pa, 6))
    else:
        extra.update(status="missing_a", p_a_high=round(m / (m + pb), 6), label_mass=round(pb, 6))
    return MISSING_P, extra


def request_key(endpoint: str, model: str, template: str, path: str, body: dict) -> str:
    """The request cache key: sha256 over endpoint, model, template, API path and exact body."""
    blob = json.dumps({"endpoint": endpoint, "model": model, "template": template, "path": path, "body": body},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------------

@dataclass
class Usage:
    """Counters of one client (thread-safe increments)."""

    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **kw: int) -> None:
        with self._lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + int(v))

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {k: getattr(self, k) for k in ("requests", "retries", "cache_hits", "prompt_tokens",
                                                  "completion_tokens")}


def _error_message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body[:300].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:500]
    return str(data)[:500]


class EndpointClient:
    """A small OpenAI-compatible HTTP client (stdlib only): retries, back-off, usage counters.

    Parameters
    ----------
    base_url : the API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions``,
        ``/completions`` and ``/models`` are appended)
    model : the served model name sent with every request
    api_key_env : name of the environment variable holding the API key (read per request; the
        key is sent as ``Authorization: Bearer``); None sends none
    timeout : seconds per request (connect and read)
    max_retries : retries of a request after 429 / 5xx / time-outs / dropped connections
    backoff, max_backoff : first back-off and its cap (seconds); the k-th retry waits
        ``min(max_backoff, backoff · 2^k)`` times a jitter in [0.5, 1]
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = None, timeout: float = 120.0,
                 max_retries: int = 4, backoff: float = 0.5, max_backoff: float = 8.0) -> None:
        parsed = urllib.parse.urlparse(str(base_url))
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"endpoint {base_url!r} is not an http(s) URL such as http://127.0.0.1:8000/v1")
        if not isinstance(model, str) or not model:
            raise ValueError("an endpoint judge needs model= naming the served model (see GET /v1/models)")
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise ValueError(f"api_key_env={api_key_env!r}: that environment variable is not set or empty")
        if max_retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError("max_retries must be >= 0, timeout > 0 and backoff >= 0")
        # credentials in the URL (http://user:pw@host/v1) go into a Basic Authorization header and
        # out of the address: urllib cannot send them from the URL, and no message repeats them
        self._basic: str | None = None
        if parsed.username is not None or parsed.password is not None:
            import base64

            user = urllib.parse.unquote(parsed.username or "")
            pw = urllib.parse.unquote(parsed.password or "")
            self._basic = base64.b64encode(f"{user}:{pw}".encode()).decode()
            host = parsed.hostname or ""
            host = f"[{host}]" if ":" in host else host
            parsed = parsed._replace(netloc=host + (f":{parsed.port}" if parsed.port else ""))
            base_url = urllib.parse.urlunparse(parsed)
        self.base_url = str(base_url).rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout, self.max_retries, self.backoff, self.max_backoff = float(timeout), int(max_retries), float(backoff), float(max_backoff)
        self.usage = Usage()
        self._rng = random.Random(0)

    @property
    def root(self) -> str:
        """The server root (the base URL without a trailing ``/v1``)."""
        return self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise EndpointAuthError(f"the environment variable {self.api_key_env} holding the API key is empty")
            h["Authorization"] = f"Bearer {key}"
        elif self._basic is not None:
            h["Authorization"] = f"Basic {self._basic}"
        return h

    def _once(self, method: str, url: str, body: dict | None, timeout: float) -> tuple[int, bytes, dict]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers=self._headers())
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, resp.read(), dict(resp.headers)
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read(), dict(err.headers or {})

    def request(self, method: str, path: str, body: dict | None = None, *, retries: int | None = None,
                timeout: float | None = None, root: bool = False, retry_unreachable: bool = True) -> dict:
        """One API call with retries; returns the decoded JSON object. ``retry_unreachable=False``
        raises :class:`EndpointUnreachableError` at the first failed connection (fail fast)."""
        url = (self.root if root else self.base_url) + path
        retries = self.max_retries if retries is None else retries
        timeout = self.timeout if timeout is None else timeout
        attempt = 0
        while True:
            retry_after = None
            try:
                status, raw, headers = self._once(method, url, body, timeout)
            except (urllib.error.URLError, ConnectionError, TimeoutError, HTTPException, OSError) as err:
                reason = getattr(err, "reason", err)
                problem: Exception = EndpointUnreachableError(
                    f"cannot reach the endpoint {self.base_url} ({method} {url}: {reason!r}); "
                    "is the server running and the address right?")
            else:
                if 200 <= status < 300:
                    try:
                        got = json.loads(raw)
                    except ValueError as err:
                        raise EndpointResponseError(
                            f"{method} {url} answered {status} with a body that is not JSON: {raw[:200]!r}") from err
                    if not isinstance(got, dict):
                        raise EndpointResponseError(f"{method} {url} answered with JSON that is not an object: {raw[:200]!r}")
                    return got
                msg = _error_message(raw)
                if status in (401, 403):
                    hint = (f"check the key in ${self.api_key_env}" if self.api_key_env
                            else "pass api_key_env= naming the environment variable that holds the key")
                    raise EndpointAuthError(f"{self.base_url} refused the request with HTTP {status} ({msg}); {hint}")
                if status == 404 and "model" in msg.lower():
                    raise EndpointModelError(f"{self.base_url} does not serve model {self.model!r}: {msg}")
                if status not in _RETRY_STATUS:
                    raise EndpointError(f"{method} {url} failed with HTTP {status}: {msg}")
                problem = EndpointError(f"{method} {url} failed with HTTP {status} after {attempt} retries: {msg}")
                ra = headers.get("Retry-After") or headers.get("retry-after")
                try:
                    retry_after = float(ra) if ra is not None else None
                except ValueError:
                    retry_after = None
            if attempt >= retries or (isinstance(problem, EndpointUnreachableError) and not retry_unreachable):
                if isinstance(problem, EndpointUnreachableError) and attempt:
                    problem = EndpointUnreachableError(f"{problem} (gave up after {attempt} retries)")
                raise problem
            wait_s = min(self.max_backoff, self.backoff * 2 ** attempt) * (0.5 + 0.5 * self._rng.random())
            if retry_after is not None:
                wait_s = min(self.max_backoff, max(wait_s, retry_after))
            attempt += 1
            self.usage.add(retries=1)
            time.sleep(wait_s)

    def models(self) -> list[str] | None:
        """Served model ids (``GET /models``), or None when the server does not list them.

        Fails fast (no retry, 10 s) with :class:`EndpointUnreachableError` naming the address when
        nothing answers; a server that answers 503 while it loads its model is waited for (retries)."""
        try:
            got = self.request("GET", "/models", timeout=min(self.timeout, 10.0), retry_unreachable=False)
        except EndpointModelError:
            return None
        except EndpointError as err:
            if isinstance(err, EndpointUnreachableError | EndpointAuthError):
                raise
            if "HTTP 404" in str(err) or "HTTP 405" in str(err):
                return None
            raise
        data = got.get("data")
        if not isinstance(data, list):
            raise EndpointResponseError(f"GET {self.base_url}/models: no 'data' list in {str(got)[:200]}")
        return [str(m.get("id")) for m in data if isinstance(m, dict)]

    def check_model(self) -> list[str] | None:
        """Fail fast: the server is reachable and serves :attr:`model` (when it lists its models)."""
        served = self.models()
        if served is not None and self.model not in served:
            raise EndpointModelError(
                f"{self.base_url} does not serve model {self.model!r}; it serves {served[:10]}")
        return served

    def tokenize(self, text: str) -> list[int] | None:
        """Token ids of ``text`` by the server's own tokenizer (llama.cpp ``/tokenize``, vLLM
        ``/tokenize``, llama-cpp-python ``/extras/tokenize``), or None where none is offered."""
        tries: list[tuple[str, dict[str, Any]]] = [
            ("/tokenize", {"content": text, "prompt": text, "model": self.model, "add_special_tokens": False}),
            ("/extras/tokenize", {"input": text, "model": self.model}),
        ]
        for path, body in tries:
            try:
                got = self.request("POST", path, body, retries=0, timeout=min(self.timeout, 10.0), root=True)
            except EndpointUnreachableError:
                raise
            except EndpointError:
                continue
            toks = got.get("tokens")
            if isinstance(toks, list):
                return [int(t["id"]) if isinstance(t, dict) else int(t) for t in toks]
        return None


# ---------------------------------------------------------------------------------------------
# the judge
# ---------------------------------------------------------------------------------------------

@dataclass
class _Req:
    """One request to make (or read from the cache), and what its answer is for."""

    key: str
    path: str
    body: dict
    tag: Any


class EndpointJudge:
    """Runs a :class:`~bayes_judge.comparator.Comparator`'s modes against an endpoint.

    Made by ``Comparator(endpoint=..., model=...)``; see the module docstring for the behaviour.

    Parameters
    ----------
    client : :class:`EndpointClient`
    api : ``"chat"`` or ``"completions"``
    concurrency : requests in flight at once
    top_logprobs : alternatives asked per position (OpenAI allows up to 20 on chat, 5 on
        completions; vLLM ``--max-logprobs``, default 20)
    tokenizer : optional local tokenizer (folder or ``.gguf``) of the served model: renders
        completions prompts with its chat template and checks that label words are one token
    no_logprobs : ``"raise"`` or ``"sample"`` (see the module docstring)
    check : contact the server when made (models, label tokens, log-probabilities)
    """

    def __init__(self, client: EndpointClient, template, *, api: str = "chat", concurrency: int = 4,
                 top_logprobs: int = 20, tokenizer: Any = None, no_logprobs: str = "raise",
                 check: bool = True) -> None:
        if api not in APIS:
            raise ValueError(f"api must be one of {APIS}, not {api!r}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        if not 1 <= top_logprobs <= 100:
            raise ValueError(f"top_logprobs must be between 1 and 100, not {top_logprobs}")
        if no_logprobs not in ("raise", "sample"):
            raise ValueError(f"no_logprobs must be 'raise' or 'sample', not {no_logprobs!r}")
        self.client, self.template, self.api = client, template, api
        self.concurrency, self.top_logprobs, self.no_logprobs = int(concurrency), int(top_logprobs), no_logprobs
        # a path (str or Path) is loaded; only an object is a tokenizer already (a str has .encode too)
        as_path = isinstance(tokenizer, str | os.PathLike)
        self.tokenizer = _load_tokenizer(tokenizer) if as_path or (tokenizer is not None and not hasattr(tokenizer, "encode")) else tokenizer
        self.served: list[str] | None = None
        self.label_check = "not run"
        self.probe_error: str | None = None
        if check:
            self.served = client.check_model()

    @property
    def path(self) -> str:
        return "/chat/completions" if self.api == "chat" else "/completions"

    @property
    def name(self) -> str:
        return self.client.model

    def store_model_id(self) -> str:
        return f"endpoint:{self.client.base_url}#{self.client.model}#{self.api}"

    # -- checks made when the judge is made ------------------------------------------------
    def check_labels(self, sets: Sequence[Sequence[str]], what: str) -> None:
        """Each label word must be one token (by the local tokenizer, else the server's), and the
        label sets must not share a word."""
        words = [{w.strip() for w in s} for s in sets]
        for s, ws in zip(sets, words, strict=True):
            for w in ws:
                if not w:
                    raise LabelTokenError(f"{what}: {list(s)} holds a word that is only whitespace")
                if len(w.split()) > 1:
                    raise LabelTokenError(
                        f"{what}: {w!r} is several words, so several tokens; an endpoint judge reads one "
                        "answer token. Put the shared part in the template's answer_prefix (e.g. "
                        "answer_prefix='Summary', labels=((' A',), (' B',))).")
        for i in range(len(words)):
            for j in range(i + 1, len(words)):
                if words[i] & words[j]:
                    raise LabelTokenError(f"{what}: {list(sets[i])} and {list(sets[j])} share {sorted(words[i] & words[j])}")
        count: Callable[[str], int | None]
        if self.tokenizer is not None:
            tok = self.tokenizer

            def count(w: str) -> int | None:
                return len(tok.encode(w, add_special_tokens=False))
            source = "the local tokenizer"
        else:
            base = self.client.tokenize("")
            if base is None:
                self.label_check = "unchecked (the server offers no tokenize endpoint)"
                return

            def count(w: str) -> int | None:
                got = self.client.tokenize(w)
                return None if got is None else len(got) - len(base)
            source = "the server's tokenizer"
        for ws in words:
            for w in sorted(ws):
                n = count(w)
                if n is not None and n != 1:
                    raise LabelTokenError(
                        f"{what}: {w!r} is {n} tokens for {source}, so its probability cannot be read "
                        f"from one answer token; choose label words that are single tokens (e.g. 'A' / 'B')")
        self.label_check = f"one token each by {source}"

    def probe_logprobs(self) -> bool:
        """Does the endpoint return log-probabilities? (one tiny greedy request)"""
        body = self._body("Answer with the letter A.", "", max_tokens=1, logprobs=True)
        try:
            got = self.client.request("POST", self.path, body, retries=1)
        except (EndpointUnreachableError, EndpointAuthError, EndpointModelError):
            raise
        except EndpointError as err:  # llama-cpp-python without logits_all: HTTP 500 "logprobs is not supported"
            if "logprob" in str(err).lower():
                self.probe_error = str(err)
                return False
            raise
        self.client.usage.add(requests=1, **_tokens(got))
        choice = _choice(got, self.path)
        return _positions(choice) is not None

    # -- prompts ----------------------------------------------------------------------------
    def _prompt(self, text: str, answer_prefix: str) -> str:
        if self.tokenizer is not None and getattr(self.tokenizer, "chat_template", None):
            msgs = ([{"role": "system", "content": self.template.system}] if self.template.system else [])
            msgs.append({"role": "user", "content": text})
            return self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) + answer_prefix
        return text + ("\n" + answer_prefix if answer_prefix else "\n")

    def _body(self, text: str, answer_prefix: str, *, max_tokens: int, logprobs: bool,
              temperature: float = 0.0, seed: int | None = None) -> dict:
        body: dict[str, Any] = {"model": self.client.model, "max_tokens": int(max_tokens),
                                "temperature": float(temperature)}
        if self.api == "chat":
            msgs = ([{"role": "system", "content": self.template.system}] if self.template.system else [])
            msgs.append({"role": "user", "content": text})
            body["messages"] = msgs
            if logprobs:
                body.update(logprobs=True, top_logprobs=self.top_logprobs)
        else:
            body["prompt"] = self._prompt(text, answer_prefix)
            if logprobs:
                body["logprobs"] = self.top_logprobs
        if seed is not None:
            body["seed"] = int(seed)
        return body

    def _label_tokens(self, answer_prefix: str) -> int:
        """Tokens to generate so that the label follows an answer prefix the model writes itself."""
        if self.api == "chat" and answer_prefix.strip():
            return 2 + len(answer_prefix.split()) + sum(not c.isalnum() and not c.isspace() for c in answer_prefix)
        return 1

    def _req(self, template_id: str, body: dict, tag: Any) -> _Req:
        return _Req(request_key(self.client.base_url, self.client.model, template_id, self.path, body), self.path, body, tag)

    # -- running requests -------------------------------------------------------------------
    def fetch(self, reqs: Sequence[_Req], st: JudgmentStore, on_result: Callable[[_Req, dict], None],
              template_id: str) -> None:
        """Answer every request, from the store's cache or the endpoint (``concurrency`` threads);
        ``on_result`` runs in the calling thread as each answer arrives (so that the store is only
        touched from one thread). On an error the requests in flight finish, the rest is cancelled,
        and the error is raised: what was answered is kept."""
        cached = st.responses(r.key for r in reqs)
        todo = []
        for r in reqs:
            if r.key in cached:
                self.client.usage.add(cache_hits=1)
                on_result(r, cached[r.key])
            else:
                todo.append(r)
        if not todo:
            return
        # the same request twice (e.g. PRePair analyses shared by pairs) is sent once
        by_key: dict[str, list[_Req]] = {}
        for r in todo:
            by_key.setdefault(r.key, []).append(r)
        first = [rs[0] for rs in by_key.values()]

        def call(r: _Req) -> dict:
            got = self.client.request("POST", r.path, r.body)
            self.client.usage.add(requests=1, **_tokens(got))
            _choice(got, r.path)  # fail on a response without choices before it is cached
            return got

        error: BaseException | None = None
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(first)),
                                thread_name_prefix="bayes-judge-endpoint") as pool:
            it = iter(first)
            running: dict[Future, _Req] = {}

            def refill() -> None:
                while error is None and len(running) < 2 * self.concurrency:
                    nxt = next(it, None)
                    if nxt is None:
                        return
                    running[pool.submit(call, nxt)] = nxt

            refill()
            while running:
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for fut in done:
                    r = running.pop(fut)
                    try:
                        got = fut.result()
                    except BaseException as err:  # noqa: BLE001 - re-raised below, after the others land
                        if error is None:
                            error = err
                        continue
                    st.add_response(r.key, endpoint=self.client.base_url, model=self.client.model,
                                    template=template_id, path=r.path, request=r.body, response=got)
                    for same in by_key[r.key]:
                        on_result(same, got)
                refill()
        if error is not None:
            raise error

    # -- modes ------------------------------------------------------------------------------
    def run_prob(self, cmp: Judge, todo: pd.DataFrame, lookup, ctx, st: JudgmentStore, progress: bool) -> None:
        tpl = cmp.template
        analyses = self.analyses(cmp, todo, lookup, ctx, st) if cmp.mode == "prepair" else None
        _, template_id = cmp._store_ids()
        max_tokens = self._label_tokens(tpl.answer_prefix)
        labels = [[w.strip() for w in s] for s in tpl.labels]
        reqs = []
        for item, a, b, order, first, second in _rows(todo):
            fields = {"a": lookup(item, first), "b": lookup(item, second)}
            if ctx[item] is not None:
                fields["context"] = ctx[item]
            if analyses is not None:
                fields.update(analysis_a=analyses[(item, first)], analysis_b=analyses[(item, second)])
                text = cast(str, tpl.prepair).format(**fields)
            else:
                text = cast(str, tpl.pairwise).format(**fields)
            body = self._body(text, tpl.answer_prefix, max_tokens=max_tokens, logprobs=True)
            reqs.append(self._req(template_id, body, (item, a, b, order)))
        bar = _bar(cmp, len(reqs), progress)

        def on_result(req: _Req, got: dict) -> None:
            choice = _choice(got, req.path)
            pos = _positions(choice)
            if pos is None:
                raise LogprobsUnavailableError(
                    f"{self.client.base_url} answered without log-probabilities, which mode {cmp.mode!r} needs; "
                    "use mode='sample' (or no_logprobs='sample')")
            lab = label_probabilities(pos, labels, tpl.answer_prefix)
            p, extra = _pair_probability(lab)
            st.add(cmp.mode, [(*req.tag, p, extra)])
            bar.update(1)

        try:
            self.fetch(reqs, st, on_result, template_id)
        finally:
            bar.close()

    def run_sample(self, cmp: Judge, todo: pd.DataFrame, lookup, ctx, st: JudgmentStore, progress: bool) -> None:
        tpl = cmp.template
        _, template_id = cmp._store_ids()
        prefix = tpl.answer_prefix if self.api == "completions" else ""
        reqs = []
        answers: dict[tuple[str, str, str, str], list[str | None]] = {}
        for item, a, b, order, first, second in _rows(todo):
            fields = {"a": lookup(item, first), "b": lookup(item, second)}
            if ctx[item] is not None:
                fields["context"] = ctx[item]
            text = cast(str, tpl.pairwise).format(**fields)
            key = (item, a, b, order)
            answers[key] = [None] * cmp.n_samples
            for k in range(cmp.n_samples):
                body = self._body(text, tpl.answer_prefix, max_tokens=cmp.max_new_tokens + (
                    self._label_tokens(tpl.answer_prefix) - 1), logprobs=False, temperature=cmp.temperature,
                    seed=cmp._seed_for(*key, str(k)))
                reqs.append(self._req(template_id, body, (key, k)))
        bar = _bar(cmp, len(todo), progress)

        def on_result(req: _Req, got: dict) -> None:
            key, k = req.tag
            answers[key][k] = _text(_choice(got, req.path), req.path)
            got_all = [a for a in answers[key] if a is not None]
            if len(got_all) == len(answers[key]):
                parsed = [parse_choice(t, tpl.choices, prefix=prefix) for t in got_all]
                n = {c: sum(x == c for x in parsed) for c in ("a", "b", "tie")}
                n_ok = n["a"] + n["b"] + n["tie"]
                extra: dict[str, Any] = {"n_a": n["a"], "n_b": n["b"], "n_tie": n["tie"],
                                         "n_unparsed": len(parsed) - n_ok, "status": "ok" if n_ok else "unparsed"}
                if not n_ok:
                    extra["answers"] = got_all[:3]
                p = (n["a"] + 0.5 * n["tie"]) / n_ok if n_ok else MISSING_P  # Liusie, Manakul & Gales 2024 eq. 5
                st.add(cmp.mode, [(*key, p, extra)])
                bar.update(1)

        try:
            self.fetch(reqs, st, on_result, template_id)
        finally:
            bar.close()

    def scores(self, cmp: Judge, cands: pd.DataFrame, lookup, ctx, st: JudgmentStore,
               progress: bool) -> pd.DataFrame:
        """Probability-weighted Likert scores (Jeong et al. 2024 §3.1) of (item, candidate) rows."""
        tpl = cmp.template
        if tpl.pointwise is None:
            raise ValueError(f"template {tpl.name!r} has no pointwise prompt")
        _, template_id = cmp._store_ids()
        keys = list(zip(cands["item"], cands["candidate"], strict=True))
        cached = st.pointwise("likert", keys)
        need = [k for k in keys if k not in cached]
        scale_words = [[str(v)] for v in tpl.scale]
        scale = np.asarray(tpl.scale, float)
        max_tokens = self._label_tokens(tpl.score_prefix)
        reqs = []
        for i, c in dict.fromkeys(need):
            fields = {"text": lookup(i, c)}
            if ctx[i] is not None:
                fields["context"] = ctx[i]
            body = self._body(tpl.pointwise.format(**fields), tpl.score_prefix, max_tokens=max_tokens, logprobs=True)
            reqs.append(self._req(template_id, body, (i, c)))
        bar = _bar(cmp, len(reqs), progress, f"{self.name}/{tpl.name}/likert")

        def on_result(req: _Req, got: dict) -> None:
            pos = _positions(_choice(got, req.path))
            if pos is None:
                raise LogprobsUnavailableError(
                    f"{self.client.base_url} answered without log-probabilities, which Likert scoring needs")
            lab = label_probabilities(pos, scale_words, tpl.score_prefix)
            probs = np.nan_to_num(np.asarray(lab["probs"], float), nan=0.0)
            mass = float(probs.sum())
            value: dict[str, Any] = {"label_pos": lab["pos"], "label_mass": mass,
                                     "n_scale_missing": int(np.isnan(lab["probs"]).sum())}
            if mass > 0:
                w = probs / mass
                value.update(score=float(w @ scale), probs=w.round(8).tolist(), status="ok")
            else:
                value.update(score=None, probs=[None] * len(scale), status="missing")
            st.add_pointwise("likert", [(req.tag[0], req.tag[1], json.dumps(value))])
            bar.update(1)

        try:
            self.fetch(reqs, st, on_result, template_id)
        finally:
            bar.close()
        from .store import likert_table

        return likert_table(tpl.scale, keys, st.pointwise("likert", keys))

    def run_likert(self, cmp: Judge, todo: pd.DataFrame, lookup, ctx, st: JudgmentStore, progress: bool) -> None:
        cands = pd.concat([todo[["item", "first"]].set_axis(["item", "candidate"], axis=1),
                           todo[["item", "second"]].set_axis(["item", "candidate"], axis=1)]).drop_duplicates()
        sc = self.scores(cmp, cands, lookup, ctx, st, progress)
        s = {(i, c): v for i, c, v in zip(sc["item"], sc["candidate"], sc["score"], strict=True)}
        rows: list[tuple[str, str, str, str, float, dict | None]] = []
        for item, a, b, order, first, second in _rows(todo):
            sa, sb = s[(item, first)], s[(item, second)]
            if math.isnan(sa) or math.isnan(sb):
                rows.append((item, a, b, order, MISSING_P, {"score_a": None if math.isnan(sa) else sa,
                                                            "score_b": None if math.isnan(sb) else sb,
                                                            "status": "missing"}))
            else:
                d = (sa - sb) / cmp.tau
                rows.append((item, a, b, order, 1.0 / (1.0 + math.exp(-d)),
                             {"score_a": sa, "score_b": sb, "status": "ok"}))
        st.add(cmp.mode, rows)

    def analyses(self, cmp: Judge, todo: pd.DataFrame, lookup, ctx, st: JudgmentStore) -> dict[tuple[str, str], str]:
        """PRePair's pointwise analyses (greedy, ``analysis_tokens``), cached per (item, candidate)."""
        tpl = cmp.template
        if tpl.analysis is None:
            raise ValueError(f"template {tpl.name!r} has no analysis prompt (PRePair)")
        _, template_id = cmp._store_ids()
        keys = list(dict.fromkeys(list(zip(todo["item"], todo["first"], strict=True))
                                  + list(zip(todo["item"], todo["second"], strict=True))))
        cached = st.pointwise("analysis", keys)
        reqs = []
        for i, c in keys:
            if (i, c) in cached:
                continue
            fields = {"text": lookup(i, c)}
            if ctx[i] is not None:
                fields["context"] = ctx[i]
            body = self._body(tpl.analysis.format(**fields), "", max_tokens=cmp.analysis_tokens, logprobs=False)
            reqs.append(self._req(template_id, body, (i, c)))

        def on_result(req: _Req, got: dict) -> None:
            text = _text(_choice(got, req.path), req.path).strip() or "(no analysis)"
            st.add_pointwise("analysis", [(req.tag[0], req.tag[1], text)])

        self.fetch(reqs, st, on_result, template_id)
        return st.pointwise("analysis", keys)

    def runner(self, mode: str):
        return {"prob": self.run_prob, "prepair": self.run_prob, "sample": self.run_sample,
                "likert": self.run_likert}[mode]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _rows(todo: pd.DataFrame) -> list[tuple[str, str, str, str, str, str]]:
    """(item, a, b, order, first, second) of every planned comparison, as strings."""
    return list(zip(*(todo[c].astype(str).tolist() for c in ("item", "a", "b", "order", "first", "second")), strict=True))


def _load_tokenizer(path: Any):
    from pathlib import Path

    from transformers import AutoTokenizer

    p = Path(path).expanduser()
    if p.is_file() and p.suffix == ".gguf":
        return AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name)
    return AutoTokenizer.from_pretrained(str(p))


def _choice(got: dict, path: str) -> dict:
    choices = got.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise EndpointResponseError(f"the response to {path} has no 'choices' list: {str(got)[:300]}")
    return choices[0]


def _text(choice: dict, path: str) -> str:
    if path.endswith("chat/completions"):
        msg = choice.get("message")
        text = msg.get("content") if isinstance(msg, dict) else None
    else:
        text = choice.get("text")
    if text is None:
        text = ""  # a model that answered nothing (or only with reasoning / tool calls): unparseable
    if not isinstance(text, str):
        raise EndpointResponseError(f"the response to {path} has a non-text answer: {str(choice)[:300]}")
    return text


def _tokens(got: dict) -> dict[str, int]:
    u = got.get("usage") if isinstance(got, dict) else None
    if not isinstance(u, dict):
        return {}
    return {"prompt_tokens": int(u.get("prompt_tokens") or 0), "completion_tokens": int(u.get("completion_tokens") or 0)}


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(cmp: Judge, total: int, progress: bool, desc: str | None = None):
    if not progress or not total:
        return _NoBar()
    from .progress import progress_bar

    return progress_bar(total, desc or cmp.judge_name, progress)


def usage_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    out = {k: after[k] - before.get(k, 0) for k in after}
    out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
    return out

