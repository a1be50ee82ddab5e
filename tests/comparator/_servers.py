"""Servers on 127.0.0.1 for the endpoint tests: llama-cpp-python's OpenAI-compatible server on the
embedded judge's GGUF, and a tiny scripted stdlib fake (401, 429, malformed answers, ...).

Nothing here listens beyond the loopback interface.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"
SERVED = "smollm2"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def gguf_path() -> Path:
    from bayes_judge.comparator.install import DEFAULT_MODEL, MissingModelError, default_model_dir

    p = default_model_dir() / DEFAULT_MODEL["gguf"]
    if not p.is_file():
        raise MissingModelError(f"{p} is missing: run `bayes-judge models install`")
    return p


class LlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1 serving the embedded judge's GGUF as ``smollm2``."""

    def __init__(self, *, logits_all: bool = True, threads: int | None = None, log: Path | None = None,
                 extra: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        # OMP_NUM_THREADS is 1 under pytest-xdist (tests/conftest.py): two spinning threads beside
        # the other worker would slow every completion many times over
        threads = threads or int(os.environ.get("OMP_NUM_THREADS") or min(2, os.cpu_count() or 1))
        self.logits_all, self.threads, self.extra = logits_all, threads, extra
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.start_s = float("nan")

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> LlamaServer:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--model_alias", SERVED,
               "--host", HOST, "--port", str(self.port), "--n_ctx", "2048", "--n_threads", str(self.threads),
               "--n_threads_batch", str(self.threads), "--logits_all", str(self.logits_all).lower(),
               "--verbose", "false", *self.extra]
        t0 = time.perf_counter()
        with open(self.log or os.devnull, "ab") as out:  # the child keeps its own handle
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, "OMP_NUM_THREADS": str(self.threads)})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with {self.proc.returncode}: {self._log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                    if r.status == 200:
                        self.start_s = time.perf_counter() - t0
                        self._smoke()
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not answer within {timeout} s")

    def _log_tail(self) -> str:
        return Path(self.log).read_text(errors="replace")[-2000:] if self.log else ""

    def _smoke(self) -> None:
        """One multi-token completion: a llama.cpp built for the wrong CPU features (AMX kernels on
        a virtualized host, llama.cpp issue 20824) answers ``/models`` and then dies at the first
        prompt; say so here, with the exit status and the log, not as "connection refused" later."""
        req = urllib.request.Request(
            f"{self.url}/completions", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"model": SERVED, "prompt": "The cat sat on the", "max_tokens": 2}).encode())
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                r.read()
        except OSError as err:
            time.sleep(0.5)
            code = self.proc.poll() if self.proc is not None else None
            tail = self._log_tail()
            self.stop()
            raise RuntimeError(
                f"the llama.cpp server answered /models but its first completion failed ({err!r}); "
                f"exit status {code} (negative: killed by that signal); if it segfaulted, llama-cpp-python "
                f"was likely built -march=native from pip's wheel cache: `pip cache remove llama_cpp_python` "
                f"and `make clean install`. Log tail: {tail}") from err

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


Handler = Callable[[str, str, dict, dict], tuple[int, object, dict]]


class FakeServer:
    """A scripted OpenAI-style server: ``handler(method, path, body, headers) -> (status, json or
    bytes, headers)``; requests are recorded in ``calls``; ``in_flight_max`` is the most requests
    handled at once."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.calls: list[tuple[str, str, dict, dict]] = []
        self.lock = threading.Lock()
        self.in_flight = self.in_flight_max = 0
        outer = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # silence
                pass

            def _serve(self, method: str) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                with outer.lock:
                    outer.calls.append((method, self.path, body, headers))
                    outer.in_flight += 1
                    outer.in_flight_max = max(outer.in_flight_max, outer.in_flight)
                try:
                    status, payload, extra = outer.handler(method, self.path, body, headers)
                finally:
                    with outer.lock:
                        outer.in_flight -= 1
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._serve("GET")

            def do_POST(self):
                self._serve("POST")

        self.httpd = ThreadingHTTPServer((HOST, 0), _H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, paid by every test
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def posts(self, path_end: str) -> list[dict]:
        return [b for m, p, b, _ in self.calls if m == "POST" and p.endswith(path_end)]


def chat_answer(tokens: list[tuple[str, list[tuple[str, float]]]], text: str | None = None,
                usage: tuple[int, int] = (10, 1)) -> dict:
    """An OpenAI chat completion with log-probabilities: per position (token, [(alt, logprob)...]);
    the chosen token's logprob is the first alternative's."""
    content = [{"token": t, "logprob": alts[0][1], "bytes": None,
                "top_logprobs": [{"token": a, "logprob": lp, "bytes": None} for a, lp in alts]}
               for t, alts in tokens]
    return {"id": "x", "object": "chat.completion", "model": SERVED,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text if text is not None else "".join(t for t, _ in tokens)},
                         "logprobs": {"content": content}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def chat_text(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "model": SERVED,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}


MODELS = {"object": "list", "data": [{"id": SERVED, "object": "model"}]}
