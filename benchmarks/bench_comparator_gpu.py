"""Benchmark: the comparator on one GPU, judges of three sizes, against the naive loop.

Workload: SummEval coherence prompts (``summeval-coherence`` template, the embedded judge's real
tokenizer and chat template): every ordered pair of the 16 summaries of ``--articles`` articles
(240 comparisons an article, ~820 tokens a prompt, ~470 of them the article prefix).

Judges: three shapes built with random weights on the device (nothing is downloaded): SmolLM2-135M
(the embedded judge's architecture), SmolLM2-1.7B, and Llama-3-8B's layers with the 49,152-token
vocabulary of the tokenizer (7.4B parameters), in bfloat16. Each is wrapped as a
:class:`~bayes_judge.comparator.models.LoadedModel` and judged through the public path.

Measured, per judge, in one process:

* **naive**: one prompt per forward pass, the whole prompt, no cache
  (``label_logprobs(lm, [[p]], ..., kv_cache=False, pack=False)``), on the first ``--naive`` prompts;
* **before**: the engine before packing (prompts of one first-candidate prefix per pass, batch 64:
  ``pack=False``) on ``--before-articles`` articles;
* **ours (engine)**: ``label_logprobs(..., batch_size="auto")``, packed, on all the articles
  (tokenization excluded), and with 128 rows a pass;
* **ours (compare)**: ``Comparator(lm).compare(pairs, texts, contexts)`` with its defaults, end to
  end as a user calls it (prompt building, tokenization, the in-memory store);
* comparisons/s, prompt tokens/s, the share of the compute limit, peak GPU memory;
* the compute limit: the bf16 matrix-product rate measured in the same run (8192³) divided by
  2 · n_params FLOP per token (i) of the tokens a comparison cannot share (after its first-candidate
  prefix; the issue's convention) and (ii) of every distinct token the job must run (prefixes
  once, counted in);
* exactness: max |Δp| against the naive loop on the naive prompts: in bfloat16 (packed vs naive
  bf16, and each against the float32 naive loop on the same weights cast up), and in float32
  (packed vs naive, target ≤ 1e-4).

The 135M judge also runs the other modes (``sample`` with batched generation against the
per-prompt loop it replaced, ``likert``, ``prepair``) on one article.

Usage (on a GPU machine; the tokenizer folder is the embedded judge's, saved with
``load_model().tokenizer.save_pretrained(folder)``)::

    python benchmarks/bench_comparator_gpu.py --tokenizer .bench/tokenizer --out benchmarks/results

Writes ``bench_comparator_gpu.json`` and ``bench_comparator_gpu.md`` to ``--out`` (after each judge,
so a run cut short keeps what it measured) and prints the table.

``--ray 1.7B`` instead times ``engine="ray"`` against the in-process run (one actor holding the
GPU, two actors sharing it) on ``--ray-articles`` articles, with the judge saved to a folder that
each actor loads (``bench_comparator_gpu_ray.*``); ``--exact-only N`` measures only bfloat16
against float32 on N prompts per judge (``bench_comparator_gpu_exact.*``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SHAPES = {
    "135M": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                 num_key_value_heads=3, tie_word_embeddings=True, rope_theta=100000.0),
    "1.7B": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=24, num_attention_heads=32,
                 num_key_value_heads=32, tie_word_embeddings=True, rope_theta=130000.0),
    "7.4B": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                 num_key_value_heads=8, tie_word_embeddings=False, rope_theta=500000.0),
}
SHAPES["tiny"] = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, tie_word_embeddings=True, rope_theta=10000.0)  # a CPU smoke test
ARTICLES = {"135M": 12, "1.7B": 12, "7.4B": 8}
NAIVE = {"135M": 32, "1.7B": 32, "7.4B": 24}
DEVICE = "cuda"


def sync():
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def matmul_tflops() -> float:
    import torch

    n = 8192 if DEVICE == "cuda" else 512
    a = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    sync()
    t = time.perf_counter()
    for _ in range(10):
        a @ b
    sync()
    return 10 * 2 * n**3 / (time.perf_counter() - t) / 1e12


def build_judge(shape: str, tokenizer, seed: int = 0):
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    from bayes_judge.comparator.models import LoadedModel

    cfg = LlamaConfig(vocab_size=len(tokenizer), max_position_embeddings=8192, hidden_act="silu",
                      rms_norm_eps=1e-5, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                      pad_token_id=tokenizer.pad_token_id, attn_implementation="sdpa", **SHAPES[shape])
    torch.manual_seed(seed)
    with torch.device(DEVICE):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    model.eval()
    n = sum(p.numel() for p in model.parameters())
    lm = LoadedModel(model=model, tokenizer=tokenizer, is_seq2seq=False, name=f"random-{shape}",
                     fingerprint=f"random-{shape}-seed{seed}", max_length=8192, device=DEVICE,
                     info={"dtype": "bfloat16", "params": n})
    return lm, n


def workload(judge, articles: int):
    import pandas as pd

    from bayes_judge.datasets import summeval

    texts, contexts = summeval.texts(articles=articles)
    rows = []
    for item, sub in texts.groupby("item", sort=False):
        rows += [(item, a, b) for a, b in itertools.permutations(sub["candidate"].tolist(), 2)]
    pairs = pd.DataFrame(rows, columns=["item", "a", "b"])
    t = time.perf_counter()
    plan = judge._plan(pairs, False, None, None)
    ctx = judge._contexts(contexts, list(dict.fromkeys(plan["item"])))
    groups, firsts, _ = judge._pair_prompts(plan, judge._text_lookup(texts), ctx, None)
    tok_s = time.perf_counter() - t
    return pairs, texts, contexts, groups, firsts, tok_s


def token_counts(groups, firsts, min_prefix: int = 8) -> dict:
    """Tokens a comparison cannot share, and every distinct token of the job (prefixes once), from
    the packed engine's own plan (:func:`bayes_judge.comparator.packed.prefix_plan`)."""
    from bayes_judge.comparator.packed import prefix_plan

    suffix = distinct = total = 0
    for prompts, first in zip(groups, firsts, strict=True):
        total += sum(len(p) for p in prompts)
        L0, subs = prefix_plan(prompts, first, min_prefix)
        distinct += L0
        for members, L1 in subs:
            rest = sum(len(prompts[int(m)]) - L1 for m in members)
            suffix += rest
            distinct += (L1 - L0) + rest
    n = sum(len(g) for g in groups)
    return {"n": n, "prompt_tokens": total, "suffix_tokens_per_cmp": suffix / n, "distinct_tokens_per_cmp": distinct / n,
            "prompt_tokens_per_cmp": total / n}


def p_of(lp):
    import numpy as np

    return 1.0 / (1.0 + np.exp(lp[..., 1] - lp[..., 0]))


def timed(fn):
    import torch

    cuda = DEVICE == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    sync()
    t = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t, torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan")


def run_shape(shape: str, tokenizer, args, peak: float) -> dict:
    import numpy as np
    import torch

    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.engine import label_logprobs
    from bayes_judge.comparator.packed import (
        choose_kernel,
        kernel_agrees,
        packed_label_logprobs,
        varlen_available,
    )

    t0 = time.perf_counter()
    lm, n_params = build_judge(shape, tokenizer)
    judge = Comparator(lm, template="summeval-coherence")
    labels = judge._label_ids
    arts = args.articles or ARTICLES.get(shape, 1)
    pairs, texts, contexts, groups, firsts, tok_s = workload(judge, arts)
    counts = token_counts(groups, firsts)
    res: dict = {"shape": shape, "params": n_params, "articles": arts, "build_s": time.perf_counter() - t0,
                 "tokenize_s": tok_s, **counts}
    print(f"[{shape}] {n_params / 1e9:.2f}B params, {counts['n']} comparisons, "
          f"{counts['prompt_tokens_per_cmp']:.0f} tokens/prompt, {counts['suffix_tokens_per_cmp']:.0f} unshared", flush=True)

    # warm-up (kernels, allocator)
    label_logprobs(lm, groups[:1], labels, subgroups=firsts[:1], batch_size="auto")
    label_logprobs(lm, [groups[0][:2]], labels, batch_size=1, kv_cache=False, pack=False)

    nv = min(args.naive or NAIVE[shape], len(groups[0]))
    sub_prompts, sub_first = groups[0][:nv], firsts[0][:nv]
    naive, t, mem = timed(lambda: np.concatenate([label_logprobs(lm, [[p]], labels, batch_size=1, kv_cache=False,
                                                                 pack=False)[0] for p in sub_prompts]))
    res["naive"] = {"n": nv, "s": t, "cmp_per_s": nv / t, "peak_gib": mem}

    nb = max(1, min(args.before_articles, len(groups)))
    _, t, mem = timed(lambda: label_logprobs(lm, groups[:nb], labels, subgroups=firsts[:nb], batch_size=64, pack=False))
    res["before_b64"] = {"n": sum(len(g) for g in groups[:nb]), "s": t, "peak_gib": mem}
    res["before_b64"]["cmp_per_s"] = res["before_b64"]["n"] / t

    ours, t, mem = timed(lambda: label_logprobs(lm, groups, labels, subgroups=firsts, batch_size="auto"))
    kernel = choose_kernel(lm.model)  # what "auto" took (cached by the warm-up)
    res["ours_auto"] = {"n": counts["n"], "s": t, "cmp_per_s": counts["n"] / t, "peak_gib": mem, "kernel": kernel}
    eager, t, mem = timed(lambda: packed_label_logprobs(lm, groups, labels, subgroups=firsts, fuse_norms=False))
    res["ours_eager_norms"] = {"n": counts["n"], "s": t, "cmp_per_s": counts["n"] / t, "peak_gib": mem, "kernel": kernel}
    _, t, mem = timed(lambda: label_logprobs(lm, groups, labels, subgroups=firsts, batch_size=128))
    res["ours_rows128"] = {"n": counts["n"], "s": t, "cmp_per_s": counts["n"] / t, "peak_gib": mem, "kernel": kernel}
    df, t, mem = timed(lambda: judge.compare(pairs, texts, contexts, progress=False))
    res["ours_compare"] = {"n": len(df), "s": t, "cmp_per_s": len(df) / t, "peak_gib": mem, "kernel": kernel}

    # the attention kernels side by side (same articles), and each one's |dp| against the naive loop
    ns = max(1, min(args.sweep_articles, len(groups)))
    n_sweep = sum(len(g) for g in groups[:ns])
    kernels = ["sdpa"] + [k for k in ("varlen", "cascade") if varlen_available(lm.model) and kernel_agrees(lm.model, k)]
    p_kernel = {}
    for k in kernels:
        _, t, mem = timed(lambda k=k: packed_label_logprobs(lm, groups[:ns], labels, subgroups=firsts[:ns], kernel=k))
        res[f"kernel_{k}"] = {"n": n_sweep, "s": t, "cmp_per_s": n_sweep / t, "peak_gib": mem}
        p_kernel[k] = p_of(packed_label_logprobs(lm, [sub_prompts], labels, subgroups=[sub_first], kernel=k)[0])
    res["profile"] = profile(lambda: label_logprobs(lm, groups[:2], labels, subgroups=firsts[:2], batch_size="auto"))

    for key in ("naive", "before_b64", "ours_auto", "ours_eager_norms", "ours_rows128", "ours_compare", *(f"kernel_{k}" for k in kernels)):
        r = res[key]
        r["prompt_tok_per_s"] = r["cmp_per_s"] * counts["prompt_tokens_per_cmp"]
        r["share_suffix_limit"] = r["cmp_per_s"] * 2 * n_params * counts["suffix_tokens_per_cmp"] / (peak * 1e12)
        r["share_distinct_limit"] = r["cmp_per_s"] * 2 * n_params * counts["distinct_tokens_per_cmp"] / (peak * 1e12)
    res["limit_suffix_cmp_per_s"] = peak * 1e12 / (2 * n_params * counts["suffix_tokens_per_cmp"])
    res["limit_distinct_cmp_per_s"] = peak * 1e12 / (2 * n_params * counts["distinct_tokens_per_cmp"])
    res["speedup_vs_naive"] = res["ours_auto"]["cmp_per_s"] / res["naive"]["cmp_per_s"]

    # exactness: bf16 packed (from the full run) vs naive bf16, and both vs float32 on the same weights
    p_pack_bf = p_of(ours[0][:nv])
    p_naive_bf = p_of(naive)
    lm.model.float()
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    naive32 = np.concatenate([label_logprobs(lm, [[p]], labels, batch_size=1, kv_cache=False, pack=False)[0]
                              for p in sub_prompts])
    pack32 = packed_label_logprobs(lm, [sub_prompts], labels, subgroups=[sub_first], kernel="sdpa")[0]
    p32, pn32 = p_of(pack32), p_of(naive32)
    res["exact"] = {
        "n": nv, "p_range": float(np.ptp(pn32)),
        "f32_packed_vs_naive": float(np.abs(p32 - pn32).max()),
        "bf16_packed_vs_bf16_naive": float(np.abs(p_pack_bf - p_naive_bf).max()),
        "bf16_packed_vs_f32": float(np.abs(p_pack_bf - pn32).max()),
        "bf16_naive_vs_f32": float(np.abs(p_naive_bf - pn32).max()),
        "bf16_eager_norms_vs_bf16_naive": float(np.abs(p_of(eager[0][:nv]) - p_naive_bf).max()),
        "bf16_eager_norms_vs_f32": float(np.abs(p_of(eager[0][:nv]) - pn32).max()),
        **{f"bf16_{k}_vs_bf16_naive": float(np.abs(p_kernel[k] - p_naive_bf).max()) for k in p_kernel},
        **{f"bf16_{k}_vs_f32": float(np.abs(p_kernel[k] - pn32).max()) for k in p_kernel},
    }
    print(f"[{shape}] naive {res['naive']['cmp_per_s']:.1f}/s, before(b64) {res['before_b64']['cmp_per_s']:.1f}/s, "
          f"ours auto {res['ours_auto']['cmp_per_s']:.1f}/s (eager norms {res['ours_eager_norms']['cmp_per_s']:.1f}/s), rows128 {res['ours_rows128']['cmp_per_s']:.1f}/s, "
          f"compare {res['ours_compare']['cmp_per_s']:.1f}/s; limit {res['limit_suffix_cmp_per_s']:.0f}/s; "
          f"exact {res['exact']}", flush=True)

    if shape in ("135M", "tiny") and not args.skip_modes:
        lm.model.to(torch.bfloat16)
        res["modes"] = other_modes(lm, texts, contexts, pairs)
        print(f"[{shape}] modes {res['modes']}", flush=True)
    return res  # the judge goes with this frame; main() empties the CUDA cache


def exactness(shape: str, tokenizer, n: int) -> dict:
    """bfloat16 against float32 on ``n`` prompts of one article: |Δp| of each path (the naive loop,
    the packed path with each attention kernel, with eager norms) from the float32 naive loop on the
    same weights cast up, as mean, 95th percentile and max (a random-weight judge amplifies rounding,
    so one prompt's maximum says little)."""
    import numpy as np

    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.engine import label_logprobs
    from bayes_judge.comparator.packed import kernel_agrees, packed_label_logprobs, varlen_available

    lm, _ = build_judge(shape, tokenizer)
    judge = Comparator(lm, template="summeval-coherence")
    labels = judge._label_ids
    _, _, _, groups, firsts, _ = workload(judge, 1)
    prompts, first = groups[0][:n], firsts[0][:n]

    def naive():
        return p_of(np.concatenate([label_logprobs(lm, [[q]], labels, batch_size=1, kv_cache=False, pack=False)[0]
                                    for q in prompts]))

    paths = {"naive": naive()}
    kernels = ["sdpa"] + [k for k in ("varlen", "cascade") if varlen_available(lm.model) and kernel_agrees(lm.model, k)]
    for k in kernels:
        paths[f"packed_{k}"] = p_of(packed_label_logprobs(lm, [prompts], labels, subgroups=[first], kernel=k)[0])
        paths[f"packed_{k}_eager_norms"] = p_of(packed_label_logprobs(lm, [prompts], labels, subgroups=[first],
                                                                      kernel=k, fuse_norms=False)[0])
    lm.model.float()
    ref = naive()
    out = {"shape": shape, "n": len(prompts), "p_sd": float(np.std(ref))}
    for name, p in paths.items():
        d = np.abs(p - ref)
        out[name] = {"mean": float(d.mean()), "p95": float(np.quantile(d, 0.95)), "max": float(d.max())}
    print(f"[{shape}] exactness vs float32 ({len(prompts)} prompts): "
          + "; ".join(f"{k} mean {v['mean']:.4f} p95 {v['p95']:.4f} max {v['max']:.4f}"
                      for k, v in out.items() if isinstance(v, dict)), flush=True)
    return out


def ray_rates(shape: str, tokenizer, args) -> dict:
    """``engine="ray"`` against the in-process run on one judge saved to a folder (item 5 of the
    issue): the same comparisons judged in this process, by one Ray actor holding the GPU, and by
    two actors sharing it (``num_gpus`` 1 and 0.5; on the CPU smoke test, one and two CPU actors).

    Each run is timed end to end (actors start and load the judge from the folder inside it) and,
    for Ray, also from the first batch's arrival to the last (the rate once the actors judge: the
    comparisons after the first batch over that span). |Δp| against the in-process run says the
    actors judged the same prompts (bfloat16 batches of other sizes round differently)."""
    import shutil
    import tempfile

    lm, n_params = build_judge(shape, tokenizer)
    folder = Path(tempfile.mkdtemp(prefix=f"judge-{shape}-"))  # removed at the end (3.4 GB at 1.7B)
    try:
        return _ray_rates(lm, n_params, folder, shape, tokenizer, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _ray_rates(lm, n_params: int, folder: Path, shape: str, tokenizer, args) -> dict:
    import numpy as np
    import ray

    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.store import JudgmentStore

    lm.model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    del lm
    if DEVICE == "cuda":
        import torch

        torch.cuda.empty_cache()
    t = time.perf_counter()
    judge = Comparator(model=str(folder), device=DEVICE, template="summeval-coherence")
    load_s = time.perf_counter() - t
    arts = args.ray_articles
    pairs, texts, contexts, *_ = workload(judge, arts)
    first = pairs[pairs["item"] == pairs["item"].iloc[0]]
    judge.compare(first, texts, contexts, progress=False)  # warm-up (kernels, allocator)
    local, t_local, _ = timed(lambda: judge.compare(pairs, texts, contexts, progress=False))
    if DEVICE == "cuda":  # the in-process run's cached blocks go back to the GPU for the actors
        import torch

        torch.cuda.empty_cache()
    res: dict = {"shape": shape, "params": n_params, "articles": arts, "n": len(local), "load_s": load_s,
                 "batch_size": args.ray_batch,
                 "in_process": {"s": t_local, "cmp_per_s": len(local) / t_local}}
    print(f"[ray {shape}] in-process {len(local)} comparisons in {t_local:.1f} s ({len(local) / t_local:.0f}/s); "
          f"load {load_s:.1f} s", flush=True)

    gpu = DEVICE == "cuda"
    ray.init(num_cpus=args.ray_cpus, num_gpus=1 if gpu else 0, include_dashboard=False, log_to_driver=False,
             _node_ip_address="127.0.0.1")
    arrivals: list[tuple[float, int]] = []
    add = JudgmentStore.add

    def add_timed(self, mode, rows):  # the driver's store: one call per finished Ray batch
        arrivals.append((time.perf_counter(), len(rows)))
        return add(self, mode, rows)

    runs = ({"one actor, num_gpus=1": {"num_gpus": 1}, "two actors, num_gpus=0.5": {"num_gpus": 0.5}} if gpu
            else {"one actor": {"num_actors": 1}, "two actors": {"num_actors": 2}})
    key = ["item", "a", "b"]
    try:
        JudgmentStore.add = add_timed  # type: ignore[method-assign]
        for name, opts in runs.items():
            arrivals.clear()
            t0 = time.perf_counter()
            out = judge.compare(pairs, texts, contexts, progress=False, engine="ray",
                                ray_options={**opts, "batch_size": args.ray_batch})
            wall = time.perf_counter() - t0
            if not arrivals:
                raise RuntimeError(f"{name}: no Ray batch reached the driver's store")
            t1, tn = arrivals[0][0], arrivals[-1][0]
            rest = sum(n for _, n in arrivals[1:])
            both = local.merge(out, on=key, suffixes=("_local", "_ray"), validate="one_to_one")
            r = {"s": wall, "cmp_per_s": len(out) / wall, "first_batch_s": t1 - t0,
                 "steady_cmp_per_s": rest / (tn - t1) if tn > t1 else float("nan"), "batches": len(arrivals),
                 "actors": out.attrs["ray"]["actors"], "gpus": out.attrs["ray"]["gpus"],
                 "max_dp_vs_in_process": float(np.abs(both["p_a_local"] - both["p_a_ray"]).max()), "n": len(out)}
            res[name] = r
            print(f"[ray {shape}] {name}: {r['cmp_per_s']:.0f}/s end to end ({wall:.1f} s, first batch after "
                  f"{r['first_batch_s']:.1f} s), {r['steady_cmp_per_s']:.0f}/s after it; actors {r['actors']} "
                  f"gpus {r['gpus']}; max |dp| vs in-process {r['max_dp_vs_in_process']:.2g}", flush=True)
    finally:
        JudgmentStore.add = add  # type: ignore[method-assign]
        ray.shutdown()
    return res


def profile(fn) -> dict:
    """Share of GPU kernel time by kind (matrix products, attention, copies/gathers, other) over fn()."""
    if DEVICE != "cuda":
        return {}
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as prof

    with prof(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        sync()
    kinds = {"matmul": ("gemm", "matmul", "cutlass", "sm90_xmma", "nvjet", "cublas"),
             "attention": ("flash", "fmha", "attention", "softmax"),
             "copy_gather": ("index", "copy", "cat", "gather", "scatter", "elementwise_kernel_with_index",
                             "repeat", "fill", "zero")}
    tot: dict[str, float] = {k: 0.0 for k in (*kinds, "other")}
    top = []
    for e in p.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0.0)
        if not t or e.key.startswith(("aten::", "cuda", "ProfilerStep")):
            continue
        name = e.key.lower()
        kind = next((k for k, keys in kinds.items() if any(x in name for x in keys)), "other")
        tot[kind] += t
        top.append((t, e.key[:90]))
    total = sum(tot.values()) or 1.0
    top.sort(reverse=True)
    return {"share": {k: v / total for k, v in tot.items()}, "gpu_ms": total / 1e3,
            "top": [{"us": t, "kernel": k} for t, k in top[:8]]}


def other_modes(lm, texts, contexts, pairs) -> dict:
    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.engine import generate

    one = pairs[pairs["item"] == pairs["item"].iloc[0]]
    out = {}
    judge = Comparator(lm, mode="sample", n_samples=5, max_new_tokens=8, template="summeval-coherence")
    df, t, mem = timed(lambda: judge.compare(one, texts, contexts, progress=False))
    out["sample_batched"] = {"n": len(df), "cmp_per_s": len(df) / t, "peak_gib": mem}
    plan = judge._plan(one.iloc[:8], False, None, None)
    ctx = judge._contexts(contexts, list(dict.fromkeys(plan["item"])))
    groups, _, _ = judge._pair_prompts(plan, judge._text_lookup(texts), ctx, None)
    prompts = [p for g in groups for p in g]
    _, t, _ = timed(lambda: [generate(lm, [p], max_new_tokens=8, n_samples=5, temperature=1.0, seed=k)
                             for k, p in enumerate(prompts)])
    out["sample_per_prompt_loop"] = {"n": len(prompts), "cmp_per_s": len(prompts) / t}
    for mode in ("likert", "prepair"):
        j = Comparator(lm, mode=mode, template="summeval-coherence", analysis_tokens=48)
        df, t, mem = timed(lambda j=j: j.compare(one, texts, contexts, progress=False))
        out[mode] = {"n": len(df), "cmp_per_s": len(df) / t, "peak_gib": mem}
    return out


def markdown(res: dict, command: str) -> str:
    lines = [
        "# The comparator on one GPU (`benchmarks/bench_comparator_gpu.py`)", "",
        f"Command: `{command}`", "",
        f"Card: {res['device']}; torch {res['torch']}, transformers {res['transformers']}; "
        f"bf16 matrix products measured at {res['matmul_tflops']:.0f} TFLOP/s (8192³, this run).", "",
        "Workload: SummEval coherence prompts, every ordered pair of the 16 summaries per article, the embedded "
        "judge's tokenizer and chat template; judges of three shapes with random weights, bfloat16. "
        "Comparisons/s (cmp/s); the compute limit is the measured matrix-product rate over 2 · params FLOP per "
        "token the comparison cannot share (after its first-candidate prefix).", "",
        "| judge | params | cmp | tokens/prompt (unshared) | naive loop | before (b64) | ours auto (engine) | "
        "ours, eager norms | ours 128 rows | ours `compare` (end to end) | × naive | limit | share of limit | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["shapes"]:
        lines.append(
            f"| {r['shape']} | {r['params'] / 1e9:.2f}B | {r['n']} | {r['prompt_tokens_per_cmp']:.0f} "
            f"({r['suffix_tokens_per_cmp']:.0f}) | {r['naive']['cmp_per_s']:.1f} | {r['before_b64']['cmp_per_s']:.1f} | "
            f"{r['ours_auto']['cmp_per_s']:.1f} | {r.get('ours_eager_norms', {}).get('cmp_per_s', float('nan')):.1f} | "
            f"{r['ours_rows128']['cmp_per_s']:.1f} | {r['ours_compare']['cmp_per_s']:.1f} | "
            f"{r['speedup_vs_naive']:.1f}× | {r['limit_suffix_cmp_per_s']:.0f} | {r['ours_auto']['share_suffix_limit']:.0%} "
            f"(distinct tokens: {r['ours_auto']['share_distinct_limit']:.0%}) | {r['ours_auto']['peak_gib']:.1f} |")
    lines += ["", "Prompt tokens/s (ours auto): " + ", ".join(
        f"{r['shape']} {r['ours_auto']['prompt_tok_per_s']:,.0f}" for r in res["shapes"]), "",
        "Exactness: max |Δp| on the first prompts of article 1 (float32 = the same weights cast up).", "",
        "| judge | prompts | float32 packed vs naive | bf16 packed vs bf16 naive | bf16 packed vs float32 | "
        "bf16 naive vs float32 | bf16 packed, eager norms: vs bf16 naive / vs float32 |", "|---|---|---|---|---|---|---|"]
    for r in res["shapes"]:
        e = r["exact"]
        lines.append(f"| {r['shape']} | {e['n']} | {e['f32_packed_vs_naive']:.1e} | {e['bf16_packed_vs_bf16_naive']:.3f} | "
                     f"{e['bf16_packed_vs_f32']:.3f} | {e['bf16_naive_vs_f32']:.3f} | "
                     f"{e.get('bf16_eager_norms_vs_bf16_naive', float('nan')):.3f} / "
                     f"{e.get('bf16_eager_norms_vs_f32', float('nan')):.3f} |")
    lines += ["", "Attention kernels side by side (engine, packed, batch auto, first articles; |Δp| against the "
              "bf16 naive loop and the float32 one):", "",
              "| judge | kernel | cmp/s | share of limit | peak GiB | max Δp vs bf16 naive | max Δp vs float32 |",
              "|---|---|---|---|---|---|---|"]
    for r in res["shapes"]:
        for k in ("sdpa", "varlen", "cascade"):
            if f"kernel_{k}" in r:
                x, e = r[f"kernel_{k}"], r["exact"]
                lines.append(f"| {r['shape']} | {k} | {x['cmp_per_s']:.1f} | {x['share_suffix_limit']:.0%} | {x['peak_gib']:.1f} | "
                             f"{e.get(f'bf16_{k}_vs_bf16_naive', float('nan')):.3f} | {e.get(f'bf16_{k}_vs_f32', float('nan')):.3f} |")
    lines += ["", "GPU time by kind of kernel (profiler, two articles, the default path):", ""]
    for r in res["shapes"]:
        if r.get("profile"):
            sh = r["profile"]["share"]
            lines.append(f"- {r['shape']} ({r['ours_auto'].get('kernel')}): " + ", ".join(f"{k} {v:.0%}" for k, v in sh.items())
                         + f"; top: {r['profile']['top'][0]['kernel'] if r['profile']['top'] else ''}")
    modes = next((r["modes"] for r in res["shapes"] if "modes" in r), None)
    if modes:
        lines += ["", "Other modes, 135M, one article (240 comparisons): " + "; ".join(
            f"{k} {v['cmp_per_s']:.1f} cmp/s" for k, v in modes.items())]
    return "\n".join(lines) + "\n"


def markdown_exact(res: dict, command: str) -> str:
    names = [k for k in res["exact"][0] if isinstance(res["exact"][0][k], dict)] if res["exact"] else []
    lines = ["# bfloat16 against float32, per path (`benchmarks/bench_comparator_gpu.py --exact-only`)", "",
             f"Command: `{command}`", "", f"Card: {res['device']}; torch {res['torch']}, transformers {res['transformers']}.",
             "", "|Δp| of each bfloat16 path from the float32 naive loop on the same random weights (mean / 95th "
             "percentile / max over the prompts; sd of the float32 p in brackets).", "",
             "| judge | prompts | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for r in res["exact"]:
        lines.append(f"| {r['shape']} (sd {r['p_sd']:.2f}) | {r['n']} | " + " | ".join(
            f"{r[k]['mean']:.4f} / {r[k]['p95']:.4f} / {r[k]['max']:.4f}" for k in names) + " |")
    return "\n".join(lines) + "\n"


def markdown_ray(res: dict, command: str) -> str:
    lines = ["# `engine=\"ray\"` against the in-process run (`benchmarks/bench_comparator_gpu.py --ray`)", "",
             f"Command: `{command}`", "", f"Card: {res['device']}; torch {res['torch']}, transformers "
             f"{res['transformers']}, ray {res.get('ray_version', '?')}.", "",
             "One random-weight judge saved to a folder and loaded by `Comparator(model=folder)`; SummEval coherence, "
             "every ordered pair of 16 summaries per article. End to end: the whole `compare` call (Ray's actors "
             "start and load the judge inside it). After the first batch: the comparisons after the first finished "
             "Ray batch over the span to the last one (the actors' judging rate).", ""]
    for r in res["ray"]:
        lines += [f"Judge {r['shape']} ({r['params'] / 1e9:.2f}B), {r['n']} comparisons, Ray batches of "
                  f"{r['batch_size']}; loading the judge in-process: {r['load_s']:.1f} s.", "",
                  "| run | cmp/s end to end | wall s | first batch after s | cmp/s after the first batch | "
                  "actors | GPUs (Ray ids) | max \\|Δp\\| vs in-process |", "|---|---|---|---|---|---|---|---|",
                  f"| in-process | {r['in_process']['cmp_per_s']:.0f} | {r['in_process']['s']:.1f} | | | | | |"]
        for name, x in r.items():
            if isinstance(x, dict) and "actors" in x:
                lines.append(f"| {name} | {x['cmp_per_s']:.0f} | {x['s']:.1f} | {x['first_batch_s']:.1f} | "
                             f"{x['steady_cmp_per_s']:.0f} | {x['actors']} | {','.join(x['gpus']) or '-'} | "
                             f"{x['max_dp_vs_in_process']:.2g} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer", default=None, help="tokenizer folder (default: the embedded judge's)")
    ap.add_argument("--shapes", default="7.4B,1.7B,135M")
    ap.add_argument("--articles", type=int, default=None)
    ap.add_argument("--naive", type=int, default=None)
    ap.add_argument("--before-articles", type=int, default=2)
    ap.add_argument("--sweep-articles", type=int, default=2)
    ap.add_argument("--skip-modes", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--exact-only", type=int, default=0, metavar="N",
                    help="only the bfloat16-vs-float32 exactness, on N prompts per judge (bench_comparator_gpu_exact.*)")
    ap.add_argument("--ray", default="", metavar="SHAPES",
                    help="only engine='ray' against the in-process run, for these judges (bench_comparator_gpu_ray.*)")
    ap.add_argument("--ray-articles", type=int, default=40)
    ap.add_argument("--ray-batch", type=int, default=480, help="comparisons per Ray batch (two articles: 480)")
    ap.add_argument("--ray-cpus", type=int, default=4, help="CPUs of the local Ray cluster")
    ap.add_argument("--cpu-smoke", action="store_true", help="a tiny random judge on the CPU (checks the script)")
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = "cpu" if args.cpu_smoke else "cuda"

    import torch
    import transformers
    from transformers import AutoTokenizer

    if DEVICE == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark runs on a GPU (the CPU has benchmarks/bench_comparator.py)")
    if args.tokenizer:
        tok = AutoTokenizer.from_pretrained(args.tokenizer)
    else:
        from bayes_judge.comparator.models import load_model

        tok = load_model(device="cpu").tokenizer
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    peak = matmul_tflops()
    res = {"device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu", "torch": torch.__version__,
           "transformers": transformers.__version__, "python": platform.python_version(), "matmul_tflops": peak}
    command = "python benchmarks/bench_comparator_gpu.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"{res['device']}: bf16 matmul {peak:.0f} TFLOP/s", flush=True)
    if args.ray:
        import ray

        res["ray_version"] = ray.__version__
        stem, render, part = "bench_comparator_gpu_ray", markdown_ray, "ray"
    elif args.exact_only:
        stem, render, part = "bench_comparator_gpu_exact", markdown_exact, "exact"
    else:
        stem, render, part = "bench_comparator_gpu", markdown, "shapes"
    res[part] = []
    for shape in (args.ray or args.shapes).split(","):
        try:
            if args.ray:
                res["ray"].append(ray_rates(shape, tok, args))
            elif args.exact_only:
                res["exact"].append(exactness(shape, tok, args.exact_only))
            else:
                res["shapes"].append(run_shape(shape, tok, args, peak))
        except Exception as err:  # a failed shape is recorded; the others still run
            import traceback

            traceback.print_exc()
            res.setdefault("failed", {})[shape] = f"{type(err).__name__}: {err}"
        if DEVICE == "cuda":  # the judge went with its frame
            import gc

            gc.collect()
            torch.cuda.empty_cache()
        (out / f"{stem}.json").write_text(json.dumps(res, indent=1))  # after each judge: a cut run keeps them
        (out / f"{stem}.md").write_text(render(res, command))
    print(render(res, command))
    return res


if __name__ == "__main__":
    main()
