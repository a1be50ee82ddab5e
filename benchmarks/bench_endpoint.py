"""Benchmark: the endpoint judge at 1, 4 and 16 concurrent requests against local OpenAI-compatible
servers, and the Ray fan-out against the in-process comparator, on the same SummEval comparisons.

Workload: the first SummEval article (``data/summeval``), its summaries by the first ``--systems``
systems, the first ``--pairs`` ordered comparisons (``summeval-coherence``; prompts ~600-700
tokens). Every judge scores the same prompts: the endpoint judges use the completions API with
the embedded judge's tokenizer (``tokenizer=``), which renders the prompt exactly as the
in-process judge does, so p_a can be compared row by row (the servers run the Q4_1 GGUF, the
in-process judge its float32 de-quantized copy; see tests/comparator/test_endpoint_llama.py).

Servers (127.0.0.1 only, ``--threads`` threads each, started and stopped here):

* ``llama-cpp-python``: ``python -m llama_cpp.server`` (the ``server`` extra). It holds one model
  behind a lock, so concurrent requests queue: concurrency can only hide the HTTP and tokenizer
  overheads.
* ``llama.cpp llama-server`` (optional, ``--llama-server PATH``): the native server with
  ``--parallel 16`` slots and continuous batching, so that concurrent requests are decoded in one
  batch. Not shipped by llama-cpp-python; build it from the llama.cpp sources vendored in its
  sdist (``cmake -B build -DLLAMA_BUILD_SERVER=ON && cmake --build build --target llama-server``).

Ray: ``Comparator(lm).compare(..., engine="ray")`` on a local cluster of ``--threads`` CPUs, one
actor per CPU (each with one torch thread), against the in-process run (all threads, batch 8,
shared-prefix KV cache). ``ray.init`` is timed separately.

Stub server (``--stub-only``, also run after the servers above unless ``--no-stub``): on this
machine the real servers have no spare compute (2 CPUs, already used by one request), so they
cannot show what the client's concurrency buys where the server has the slots. A loopback
OpenAI-compatible stub (stdlib ``ThreadingHTTPServer`` on 127.0.0.1, port 0) answers
``/v1/models``, ``/v1/chat/completions`` and ``/v1/completions`` after a fixed service time
(``--service-ms``, default 100 ms, ``time.sleep``: a GPU server's latency) with at most
``--slots`` requests served at once (a semaphore, default 16; the rest wait in line) and a
deterministic answer (P(A) from a hash of the prompt, as top log-probabilities). The endpoint
judge (chat API, no local model or tokenizer) judges ``--stub-pairs`` comparisons (default 64)
at each concurrency; the ideal speed-up is min(concurrency, slots). No model download, no
llama.cpp: seconds. Its table is a separate section of ``bench_endpoint.md`` (the section after
the marker line is replaced; the llama rows above it are kept) and ``bench_endpoint_stub.json``.

Each configuration runs ``--rounds`` times in turn (the machine is shared); medians are reported
with the load average. Writes ``benchmarks/results/bench_endpoint.json`` and ``.md`` and prints
the table::

    .venv/bin/python benchmarks/bench_endpoint.py                     # ~5-10 min on 2 cores
    .venv/bin/python benchmarks/bench_endpoint.py --pairs 12 --rounds 1 --no-ray
    .venv/bin/python benchmarks/bench_endpoint.py --llama-server /path/to/llama-server
    .venv/bin/python benchmarks/bench_endpoint.py --stub-only         # ~20 s, no model needed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "comparator"))  # _servers: the test suite's server helpers

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

SERVED = "smollm2"
STUB_MARK = "<!-- stub server section: written by `bench_endpoint.py --stub-only` (or a full run); kept by --no-stub -->"


def workload(systems: int, n_pairs: int):
    s = pd.read_csv(ROOT / "data" / "summeval" / "summaries.csv")
    art = pd.read_csv(ROOT / "data" / "summeval" / "articles.csv")
    doc = str(art["doc_id"].iloc[0])
    s = s[s["doc_id"] == doc].sort_values("model_id")
    s = s[s["model_id"].isin(sorted(set(s["model_id"]))[:systems])]
    texts = dict(zip(s["model_id"].astype(str), s["summary"].astype(str), strict=True))
    ids = sorted(texts)
    pairs = pd.DataFrame([(doc, a, b) for a in ids for b in ids if a != b], columns=["item", "a", "b"]).iloc[:n_pairs]
    return pairs, texts, {doc: str(art["article"].iloc[0])}


def logit(p):
    p = np.asarray(p, float)
    return np.log(p) - np.log1p(-p)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def timed(fn):
    l0, t0, c0 = load(), time.perf_counter(), time.process_time()
    out = fn()
    return out, {"wall_s": time.perf_counter() - t0, "driver_cpu_s": time.process_time() - c0,
                 "load_before": l0, "load_after": load()}


class NativeServer:
    """llama.cpp's own llama-server with parallel slots (continuous batching)."""

    def __init__(self, binary: str, threads: int, slots: int, log: Path) -> None:
        from _servers import free_port, gguf_path

        self.port = free_port()
        self.cmd = [binary, "-m", str(gguf_path()), "--alias", SERVED, "--host", "127.0.0.1", "--port", str(self.port),
                    "-t", str(threads), "-tb", str(threads), "--parallel", str(slots), "-c", str(1024 * slots),
                    "--no-webui"]
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.start_s = float("nan")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> NativeServer:
        t0 = time.perf_counter()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(600):
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited: {self.log.read_text()[-1500:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                    if r.status == 200:
                        self.start_s = time.perf_counter() - t0
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("llama-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


class StubServer:
    """A loopback OpenAI-compatible server with a fixed service time and ``slots`` parallel slots.

    ``GET /v1/models`` lists ``smollm2``; ``POST /v1/chat/completions`` and ``/v1/completions``
    wait for a slot (semaphore), sleep ``service_s`` (the simulated GPU time of one request) and
    answer one greedy token with top log-probabilities: P(A) = p, P(B) = 1 - p (times 0.9; two
    filler tokens share the rest), p in [0.05, 0.95] from a hash of the prompt, so the same
    prompt always gets the same answer. Anything else answers 404 (so the judge finds no server
    tokenizer and leaves the label words unchecked). ``in_flight_max`` is the most requests in
    service at once, ``waiting_max`` the most that queued for a slot."""

    def __init__(self, service_s: float = 0.1, slots: int = 16) -> None:
        self.service_s, self.slots = float(service_s), int(slots)
        self.sem = threading.BoundedSemaphore(self.slots)
        self.lock = threading.Lock()
        self.in_flight = self.in_flight_max = self.waiting = self.waiting_max = self.requests = 0
        outer = self

        class _H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # silence
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": SERVED, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else {}
                path = self.path.rstrip("/")
                if path not in ("/v1/chat/completions", "/v1/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self._send(200, outer.serve(path, body))

        class _Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128  # listen backlog (default 5): a full backlog drops SYNs, retried after 1 s

        self.httpd = _Server(("127.0.0.1", 0), _H)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def reset(self) -> None:
        with self.lock:
            self.in_flight_max = self.waiting_max = self.requests = 0

    def serve(self, path: str, body: dict) -> dict:
        with self.lock:
            self.waiting += 1
            self.waiting_max = max(self.waiting_max, self.waiting)
        with self.sem:
            with self.lock:
                self.waiting -= 1
                self.in_flight += 1
                self.in_flight_max = max(self.in_flight_max, self.in_flight)
                self.requests += 1
            try:
                time.sleep(self.service_s)
            finally:
                with self.lock:
                    self.in_flight -= 1
        prompt = body.get("prompt") if path.endswith("/completions") and "prompt" in body else body.get("messages")
        text = json.dumps(prompt, sort_keys=True, ensure_ascii=False)
        u = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2 ** 64
        p = 0.05 + 0.9 * u
        top = [("A", math.log(0.9 * p)), ("B", math.log(0.9 * (1 - p))), ("The", math.log(0.06)), ("Both", math.log(0.04))]
        top.sort(key=lambda t: -t[1])
        usage = {"prompt_tokens": len(text) // 4, "completion_tokens": 1, "total_tokens": len(text) // 4 + 1}
        tok, lp = top[0]
        if path.endswith("chat/completions"):
            k = int(body.get("top_logprobs") or 0)
            content = [{"token": tok, "logprob": lp, "bytes": None,
                        "top_logprobs": [{"token": t, "logprob": v, "bytes": None} for t, v in top[:k]]}]
            choice = {"index": 0, "message": {"role": "assistant", "content": tok},
                      "logprobs": {"content": content} if body.get("logprobs") else None, "finish_reason": "length"}
            return {"id": "stub", "object": "chat.completion", "model": SERVED, "choices": [choice], "usage": usage}
        k = int(body.get("logprobs") or 0)
        lps = {"tokens": [tok], "token_logprobs": [lp], "top_logprobs": [dict(top[:k])], "text_offset": [0]} if k else None
        choice = {"index": 0, "text": tok, "logprobs": lps, "finish_reason": "length"}
        return {"id": "stub", "object": "text_completion", "model": SERVED, "choices": [choice], "usage": usage}


def stub_runs(args, concurrencies) -> tuple[list[dict], dict]:
    """The endpoint judge (chat API, no local model) at each concurrency against the stub."""
    from bayes_judge.comparator import Comparator

    n_pairs = args.stub_pairs
    systems = next(s for s in range(2, 17) if s * (s - 1) >= n_pairs)
    pairs, texts, ctx = workload(systems, n_pairs)
    rows: list[dict] = []
    meta = {"stub_service_ms": args.service_ms, "stub_slots": args.slots, "stub_systems": systems,
            "stub_comparisons": len(pairs)}
    with StubServer(args.service_ms / 1000, args.slots) as srv:
        t0 = time.perf_counter()
        Comparator(endpoint=srv.url, model=SERVED, concurrency=1)  # the probes: models, tokenize (404), logprobs
        meta["stub_judge_setup_s"] = time.perf_counter() - t0
        ref = None
        for r in range(args.rounds):
            for c in concurrencies:
                judge = Comparator(endpoint=srv.url, model=SERVED, concurrency=c)
                srv.reset()
                df, t = timed(lambda judge=judge: judge.compare(pairs, texts, ctx, progress=False))
                ep = df.attrs["endpoint"]
                p = df["p_a"].to_numpy(float)
                ref = p if ref is None else ref
                rows.append({"engine": f"stub ({args.slots} slots, {args.service_ms:g} ms/request)", "api": "chat",
                             "concurrency": c, "round": r, "n": len(df), **t, "requests": ep["requests"],
                             "server_requests": srv.requests, "in_flight_max": srv.in_flight_max,
                             "waiting_max": srv.waiting_max, "n_missing": ep["n_missing"],
                             "max_dp": float(np.max(np.abs(p - ref)))})
                print(f"  stub c={c:>2} round {r}: {t['wall_s']:.2f} s, {len(df) / t['wall_s']:.1f} cmp/s, "
                      f"server in flight ≤ {srv.in_flight_max}, missing {ep['n_missing']} "
                      f"(load {t['load_before']}→{t['load_after']})")
    return rows, meta


def stub_section(args, rows: list[dict], meta: dict, command: str) -> tuple[list[str], pd.DataFrame]:
    res = pd.DataFrame(rows)
    sm = (res.groupby(["engine", "concurrency"], sort=False)
          .agg(n=("n", "first"), wall_s=("wall_s", "median"), driver_cpu_s=("driver_cpu_s", "median"),
               requests=("server_requests", "first"), in_flight_max=("in_flight_max", "max"),
               max_dp=("max_dp", "max"), n_missing=("n_missing", "max"), load=("load_before", "median"),
               rounds=("round", "count")).reset_index())
    sm["cmp_per_s"] = sm["n"] / sm["wall_s"]
    base = float(sm.loc[sm["concurrency"] == sm["concurrency"].min(), "cmp_per_s"].iloc[0])
    sm["x_vs_sequential"] = sm["cmp_per_s"] / base
    sm["ideal_x"] = [min(c, args.slots) / min(sm["concurrency"].min(), args.slots) for c in sm["concurrency"]]
    n = meta["stub_comparisons"]
    md = [STUB_MARK, "", "## Client concurrency where the server has the slots (loopback stub server)", "",
          f"command: `{command}`", "",
          f"The rows above are limited by the server: on this {os.cpu_count()}-CPU machine one request already uses "
          "every core, so concurrent requests only queue. This table isolates the client: an OpenAI-compatible stub "
          f"on 127.0.0.1 (stdlib `ThreadingHTTPServer`) serves each `/v1/chat/completions` request in a fixed "
          f"{args.service_ms:g} ms (`time.sleep`, standing for a GPU server's latency) with {args.slots} parallel slots "
          "(a semaphore; further requests wait) and a deterministic answer (P(A) from a hash of the prompt, as top "
          f"log-probabilities). The endpoint judge (`Comparator(endpoint=..., model=\"{SERVED}\", concurrency=k)`, "
          f"chat API, no local model) judges {n} ordered SummEval comparisons (summeval-coherence, first article, "
          f"{meta['stub_systems']} systems), one request each; medians of {args.rounds} round(s). Ideal × = "
          "min(concurrency, slots); the shortfall is the client's own cost (a new HTTP connection, JSON and the "
          f"result bookkeeping per request on a shared {os.cpu_count()}-CPU machine). max |Δp| is against the "
          "sequential run (the answers do not depend on the concurrency).", "",
          "| server | concurrency | comparisons | requests | wall (s) | cmp/s | × sequential | ideal × | "
          "server max in flight | client CPU (ms/cmp) | missing | max \\|Δp\\| | load avg |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sm.itertuples():
        md.append(f"| {r.engine} | {r.concurrency} | {r.n} | {r.requests} | {r.wall_s:.2f} | {r.cmp_per_s:.1f} | "
                  f"{r.x_vs_sequential:.2f} | {r.ideal_x:.0f} | {r.in_flight_max} | "
                  f"{1000 * r.driver_cpu_s / r.n:.1f} | {r.n_missing} | {r.max_dp:.2g} | {r.load:.1f} |")
    md += ["", f"Judge set-up (probes: models, tokenize → 404, one log-probabilities request): "
           f"{meta['stub_judge_setup_s']:.2f} s."]
    return md, sm


def write_stub(args, rows: list[dict], meta: dict, command: str, md_path: Path) -> list[str]:
    """Write bench_endpoint_stub.json; return the markdown section."""
    section, sm = stub_section(args, rows, meta, command)
    js = md_path.with_name(md_path.stem + "_stub.json")
    js.write_text(json.dumps({"meta": {"command": command, "python": platform.python_version(), "cpus": os.cpu_count(),
                                       **meta}, "runs": rows, "summary": sm.to_dict("records")},
                             indent=1, default=float))
    return section


def split_md(md_path: Path) -> tuple[str, str]:
    """(the llama / Ray part, the stub section) of an existing bench_endpoint.md."""
    text = md_path.read_text() if md_path.is_file() else ""
    i = text.find(STUB_MARK)
    return (text, "") if i < 0 else (text[:i].rstrip("\n") + "\n", text[i:])


def endpoint_runs(name, url, lm, pairs, texts, ctx, ref, concurrencies, rounds):
    from bayes_judge.comparator import Comparator

    rows = []
    api = "completions"
    try:
        judge = Comparator(endpoint=url, model=SERVED, api=api, tokenizer=lm.tokenizer)
    except Exception as err:  # noqa: BLE001 - e.g. no logprobs on /v1/completions: use chat
        print(f"  {name}: completions API unusable ({err}); chat API instead (prompts then differ from the in-process ones)")
        api = "chat"
    for r in range(rounds):
        for c in concurrencies:
            judge = Comparator(endpoint=url, model=SERVED, api=api, tokenizer=lm.tokenizer if api == "completions" else None,
                               concurrency=c)
            df, t = timed(lambda judge=judge: judge.compare(pairs, texts, ctx, progress=False))
            ep = df.attrs["endpoint"]
            p = df["p_a"].to_numpy(float)
            dp = np.abs(p - ref)
            rows.append({"engine": name, "api": api, "concurrency": c, "round": r, "n": len(df), **t,
                         "requests": ep["requests"], "prompt_tokens": ep["prompt_tokens"], "n_missing": ep["n_missing"],
                         "max_dp": float(np.nanmax(dp)), "mean_dp": float(np.nanmean(dp)),
                         "max_dlogit": float(np.nanmax(np.abs(logit(p) - logit(ref))))})
            print(f"  {name} c={c:>2} round {r}: {t['wall_s']:.1f} s, {len(df) / t['wall_s']:.2f} cmp/s, "
                  f"max|Δp| {rows[-1]['max_dp']:.4f} (load {t['load_before']}→{t['load_after']})")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=6, help="summaries of the first article (default 6)")
    ap.add_argument("--pairs", type=int, default=24, help="ordered comparisons judged per run (default 24)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--llama-server", default=os.environ.get("LLAMA_SERVER"), help="path of llama.cpp's llama-server")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--stub-only", action="store_true",
                    help="only the loopback stub server (client concurrency; no model, no llama.cpp)")
    ap.add_argument("--no-stub", action="store_true", help="skip the stub server (its md section is kept)")
    ap.add_argument("--stub-pairs", type=int, default=64, help="comparisons judged against the stub (default 64)")
    ap.add_argument("--service-ms", type=float, default=100.0, help="stub service time per request (default 100)")
    ap.add_argument("--slots", type=int, default=16, help="requests the stub serves at once (default 16)")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_endpoint.json"))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # SmolLM2 is diagnosed uninformative here; that is not what is measured
    command = " ".join([Path(sys.executable).name, *sys.argv])
    md_path = Path(args.out).with_suffix(".md")
    md_path.parent.mkdir(parents=True, exist_ok=True)
    if args.stub_only:
        conc = [int(c) for c in args.concurrency.split(",")]
        rows, smeta = stub_runs(args, conc)
        section = write_stub(args, rows, smeta, command, md_path)
        main_md, _ = split_md(md_path)
        md_path.write_text((main_md.rstrip("\n") + "\n\n" if main_md.strip() else "") + "\n".join(section) + "\n")
        print("\n".join(section))
        return 0
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import torch
    from _servers import LlamaServer

    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.models import load_model

    torch.set_num_threads(args.threads)
    conc = [int(c) for c in args.concurrency.split(",")]
    pairs, texts, ctx = workload(args.systems, args.pairs)
    lm = load_model()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    logs = Path(tempfile.mkdtemp(prefix="bench_endpoint_"))  # the servers' logs
    print(f"server logs in {logs}")
    rows: list[dict] = []
    meta = {"command": command, "python": platform.python_version(),
            "torch": torch.__version__, "cpus": os.cpu_count(), "threads": args.threads, "n_comparisons": len(pairs),
            "systems": args.systems, "template": "summeval-coherence"}
    try:
        import llama_cpp

        meta["llama_cpp_python"] = llama_cpp.__version__
    except ImportError:
        llama_cpp = None

    # in-process reference (and its timing)
    ref = None
    for r in range(args.rounds):
        df, t = timed(lambda: Comparator(lm).compare(pairs, texts, ctx, progress=False))
        ref = df["p_a"].to_numpy(float) if ref is None else ref
        rows.append({"engine": "in-process (torch, batch 8, KV cache)", "api": "-", "concurrency": 1, "round": r,
                     "n": len(df), **t, "max_dp": 0.0, "mean_dp": 0.0, "max_dlogit": 0.0})
        print(f"  in-process round {r}: {t['wall_s']:.1f} s")
    assert ref is not None
    prompt_tokens = None

    if llama_cpp is not None:
        srv = LlamaServer(threads=args.threads, log=logs / "llama-cpp-python.log").start()
        meta["llama_cpp_python_start_s"] = srv.start_s
        try:
            got = endpoint_runs("llama-cpp-python server", srv.url, lm, pairs, texts, ctx, ref, conc, args.rounds)
            rows += got
            prompt_tokens = got[0]["prompt_tokens"]
        finally:
            srv.stop()
    if args.llama_server:
        nat = NativeServer(args.llama_server, args.threads, max(conc), logs / "llama-server.log").start()
        meta["llama_server"] = args.llama_server
        meta["llama_server_start_s"] = nat.start_s
        try:
            rows += endpoint_runs(f"llama.cpp llama-server (--parallel {max(conc)})", nat.url, lm, pairs, texts, ctx,
                                  ref, conc, args.rounds)
        finally:
            nat.stop()

    if not args.no_ray:
        import ray

        _, t_init = timed(lambda: ray.init(num_cpus=args.threads, include_dashboard=False, _node_ip_address="127.0.0.1",
                                           log_to_driver=False, configure_logging=False))
        meta["ray"] = ray.__version__
        meta["ray_init_s"] = t_init["wall_s"]
        try:
            for r in range(args.rounds):
                judge = Comparator(lm)
                df, t = timed(lambda judge=judge: judge.compare(
                    pairs, texts, ctx, progress=False, engine="ray",
                    ray_options={"num_actors": args.threads, "num_cpus": 1, "batch_size": max(1, len(pairs) // (2 * args.threads))}))
                dp = np.abs(df["p_a"].to_numpy(float) - ref)
                rows.append({"engine": f"ray ({args.threads} actors x 1 CPU)", "api": "-", "concurrency": args.threads,
                             "round": r, "n": len(df), **t, "max_dp": float(dp.max()), "mean_dp": float(dp.mean()),
                             "max_dlogit": float(np.abs(logit(df["p_a"]) - logit(ref)).max())})
                print(f"  ray round {r}: {t['wall_s']:.1f} s, max|Δp| {dp.max():.2e}")
        finally:
            ray.shutdown()

    res = pd.DataFrame(rows)
    summary = (res.groupby(["engine", "api", "concurrency"], sort=False)
               .agg(n=("n", "first"), wall_s=("wall_s", "median"), max_dp=("max_dp", "max"), mean_dp=("mean_dp", "mean"),
                    max_dlogit=("max_dlogit", "max"),
                    load=("load_before", "median"), rounds=("round", "count")).reset_index())
    summary["cmp_per_s"] = summary["n"] / summary["wall_s"]
    base = {}
    for e, g in summary.groupby("engine", sort=False):
        base[e] = float(g.loc[g["concurrency"] == g["concurrency"].min(), "cmp_per_s"].iloc[0])
    inproc = float(summary.loc[summary["engine"].str.startswith("in-process"), "cmp_per_s"].iloc[0])
    summary["x_vs_sequential"] = [r.cmp_per_s / base[r.engine] for r in summary.itertuples()]
    summary["x_vs_in_process"] = summary["cmp_per_s"] / inproc
    if prompt_tokens:
        meta["prompt_tokens_per_comparison"] = prompt_tokens / len(pairs)
    out.write_text(json.dumps({"meta": meta, "runs": rows, "summary": summary.to_dict("records")}, indent=1, default=float))
    md = [f"command: `{meta['command']}`", "",
          f"{len(pairs)} ordered SummEval comparisons (summeval-coherence, first article, {args.systems} systems"
          + (f", ~{meta['prompt_tokens_per_comparison']:.0f} prompt tokens each" if prompt_tokens else "")
          + f"); {args.threads} threads per server / {args.threads} CPUs for Ray on a {os.cpu_count()}-CPU machine shared "
          f"with other work; medians of {args.rounds} round(s). Servers on 127.0.0.1 serve the Q4_1 GGUF; the in-process "
          "judge runs its float32 de-quantized copy; max |Δp| is against the in-process p_a.", "",
          "| engine | API | concurrency | comparisons | wall (s) | cmp/s | × sequential | × in-process | max \\|Δp\\| | mean \\|Δp\\| | max \\|Δ logit p\\| | load avg |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        md.append(f"| {r.engine} | {r.api} | {r.concurrency} | {r.n} | {r.wall_s:.1f} | {r.cmp_per_s:.2f} | "
                  f"{r.x_vs_sequential:.2f} | {r.x_vs_in_process:.2f} | {r.max_dp:.2g} | {r.mean_dp:.2g} | "
                  f"{r.max_dlogit:.2g} | {r.load:.1f} |")
    extra = [f"{k}: {v:.1f} s" for k, v in meta.items() if k.endswith("_s") and isinstance(v, float)]
    md += ["", "Start-up: " + ", ".join(extra) + "." if extra else ""]
    _, stub_md = split_md(md_path)  # kept when the stub is not rerun
    if not args.no_stub:
        srows, smeta = stub_runs(args, conc)
        stub_md = "\n".join(write_stub(args, srows, smeta, command, md_path)) + "\n"
    md_path.write_text("\n".join(md) + "\n" + ("\n" + stub_md if stub_md else ""))
    print("\n".join(md))
    if stub_md:
        print("\n" + stub_md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
