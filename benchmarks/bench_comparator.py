"""Benchmark: the comparator's batched, shared-prefix-cached scoring against a naive loop.

Workload: SummEval prompts (``summeval-coherence`` template, chat-formatted) for the default
judge (``Comparator()`` / ``load_model()``: the embedded SmolLM2-135M-Instruct under ``models/``,
float32 on CPU).  One article has 16 summaries, so 16 · 15 = 240 ordered comparisons of about
580-730 tokens each, sharing a ~470-token prefix (chat header + article).

* **naive**: one pair per forward pass, full prompt, batch 1, no cache:
  ``label_logprobs(lm, [[prompt]], labels, batch_size=1, kv_cache=False)`` per prompt (the
  prompt token ids are the ones the comparator builds; tokenization is not timed, which favours
  the naive loop).  Run on a random subset of ``--subset`` comparisons of the first article
  (a full forward is seconds on 2 shared cores).
* **ours**: ``Comparator(lm).compare(pairs, texts, contexts)`` with its defaults (batch 8, the
  shared-prefix KV cache: the article prefix once per article, then one prefix per first
  candidate), timed end to end as the user calls it (prompt building, tokenization, the
  in-memory store).  Run on the same subset and on all comparisons of ``--articles`` articles.

The two are interleaved (naive, ours-subset, ours-full, naive, ...) for ``--rounds`` rounds,
since the machine is shared; the load average is recorded around every measurement.  Reported:
comparisons/s; prompt tokens/s (the prompts' total length / wall time, the rate a user sees);
tokens actually run through the model (a forward pre-hook counts ``input_ids``, padding
included); achieved model FLOP/s, as 2 · n_params · tokens run / time and, more precisely, as
2 · (non-embedding params) · tokens run + attention (4 · hidden · attended keys per token and
layer) + the LM head on the kept logits; and torch float32 GEMM GFLOP/s at the model's shapes and
at 2048³ with the same thread count.  Exactness: max |Δp| of ours against the naive loop on the
subset (asserted ≤ 1e-4).

Breakdown (on the comparisons of the first ``--sweep-firsts`` first candidates of article 1, so
that the per-first-candidate prefix is used as in a full run): batch size 1, 4, 8, 16; cache off
(batch 8); eager attention; the other thread count (ours, and the naive loop on 6 comparisons);
bfloat16 weights (a separate model load; p moves by ~3e-2, so it is reported, not used); and an
alternated A/B (``--ab-rounds``) of the engine's grouped-query attention against transformers'
SDPA with ``repeat_kv`` (the engine before that change).  Wall and CPU time are both recorded:
CPU time is less sensitive to the other processes on a shared machine.

Usage::

    .venv/bin/python benchmarks/bench_comparator.py                 # ~20-30 min on 2 shared cores
    .venv/bin/python benchmarks/bench_comparator.py --quick         # a few minutes
    .venv/bin/python benchmarks/bench_comparator.py --articles 2 --subset 24 --rounds 2

Writes ``benchmarks/results/bench_comparator.json`` (``--out``) and ``bench_comparator.md``
(beside it), and prints the tables.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TOL = 1e-4


# ----------------------------------------------------------------------------------------------
# counting what the model runs
# ----------------------------------------------------------------------------------------------

class ModelCounter:
    """Counts tokens and FLOPs of every forward pass of a causal LM (forward pre-hook)."""

    def __init__(self, model):
        cfg = model.config
        self.hidden = int(cfg.hidden_size)
        self.layers = int(cfg.num_hidden_layers)
        self.vocab = int(cfg.vocab_size)
        self.n_params = sum(p.numel() for p in model.parameters())
        emb = model.get_input_embeddings().weight.numel()
        head = model.get_output_embeddings()
        tied = head is None or head.weight is model.get_input_embeddings().weight
        # parameters used once per token in the decoder layers (norms included, negligible)
        self.n_layer_params = self.n_params - emb - (0 if tied else head.weight.numel())
        self.model = model
        self.reset()

    def reset(self) -> None:
        self.forwards = self.tokens_run = self.tokens_real = 0
        self.flops_layers = self.flops_attn = self.flops_head = 0.0

    def _hook(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            return
        b, s = ids.shape
        past = kwargs.get("past_key_values")
        off = int(past.get_seq_length()) if past is not None and hasattr(past, "get_seq_length") else 0
        mask = kwargs.get("attention_mask")
        real = int(mask[:, off:].sum()) if mask is not None else b * s
        keep = kwargs.get("logits_to_keep", 0)
        if hasattr(keep, "numel"):
            kept = int(keep.numel())
        else:
            kept = int(keep) if keep else s
        self.forwards += 1
        self.tokens_run += b * s
        self.tokens_real += real
        self.flops_layers += 2.0 * self.n_layer_params * b * s
        # attended keys summed over the s query positions of a row: s·off + s(s+1)/2
        keys = s * off + s * (s + 1) / 2
        self.flops_attn += 4.0 * self.hidden * keys * b * self.layers
        self.flops_head += 2.0 * self.hidden * self.vocab * b * kept

    @contextlib.contextmanager
    def count(self):
        self.reset()
        h = self.model.register_forward_pre_hook(self._hook, with_kwargs=True)
        try:
            yield self
        finally:
            h.remove()

    def stats(self) -> dict:
        return {
            "forwards": self.forwards, "tokens_run": self.tokens_run, "tokens_real": self.tokens_real,
            "flops_2NT": 2.0 * self.n_params * self.tokens_run,
            "flops_model": self.flops_layers + self.flops_attn + self.flops_head,
            "flops_attn": self.flops_attn,
        }


# ----------------------------------------------------------------------------------------------
# GEMM throughput
# ----------------------------------------------------------------------------------------------

def gemm_gflops(shapes, repeats: int = 5) -> list[dict]:
    """float32 (m × k) @ (k × n): best and median GFLOP/s of ``repeats`` calls after a warm-up."""
    import torch

    out = []
    for m, k, n in shapes:
        a, b = torch.randn(m, k), torch.randn(k, n)
        a @ b
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            a @ b
            ts.append(time.perf_counter() - t0)
        f = 2.0 * m * k * n
        out.append({"shape": f"({m}×{k})·({k}×{n})", "gflops_best": f / min(ts) / 1e9,
                    "gflops_median": f / statistics.median(ts) / 1e9})
    return out


# ----------------------------------------------------------------------------------------------
# the workload
# ----------------------------------------------------------------------------------------------

def build(judge, articles: int):
    """All ordered pairs of the first ``articles`` SummEval articles and their prompt token ids."""
    import pandas as pd

    import bayes_judge as bj

    texts, contexts = bj.datasets.summeval.texts(articles=articles)
    rows = []
    for item, sub in texts.groupby("item", sort=False):
        rows += [(item, a, b) for a, b in itertools.permutations(sub["candidate"].tolist(), 2)]
    pairs = pd.DataFrame(rows, columns=["item", "a", "b"])
    plan = judge._plan(pairs, False, None, None)
    ctx = judge._contexts(contexts, list(dict.fromkeys(plan["item"])))
    groups, _, subs = judge._pair_prompts(plan, judge._text_lookup(texts), ctx, None)
    ids = {}
    for prompts, sub in zip(groups, subs, strict=True):
        for p, i, a, b in zip(prompts, sub["item"], sub["first"], sub["second"], strict=True):
            ids[(i, a, b)] = p
    return pairs, texts, contexts, ids


def p_of(lp):
    import numpy as np

    return 1.0 / (1.0 + np.exp(lp[..., 1] - lp[..., 0]))


def run_naive(judge, counter, ids, keys) -> dict:
    from bayes_judge.comparator.engine import label_logprobs

    load0 = os.getloadavg()[0]
    with counter.count():
        t0, c0 = time.perf_counter(), time.process_time()
        p = {k: float(p_of(label_logprobs(judge.lm, [[ids[k]]], judge._label_ids, batch_size=1,
                                          kv_cache=False)[0][0])) for k in keys}
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall_s": wall, "cpu_s": cpu, "n": len(keys), "prompt_tokens": sum(len(ids[k]) for k in keys),
            "load_before": load0, "load_after": os.getloadavg()[0], **counter.stats(), "p": p}


def run_ours(judge, counter, pairs, texts, contexts, ids) -> dict:
    load0 = os.getloadavg()[0]
    with counter.count():
        t0, c0 = time.perf_counter(), time.process_time()
        df = judge.compare(pairs, texts, contexts, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    p = {(i, a, b): float(x) for i, a, b, x in zip(df["item"], df["a"], df["b"], df["p_a"], strict=True)}
    return {"wall_s": wall, "cpu_s": cpu, "n": len(df), "prompt_tokens": sum(len(ids[k]) for k in p),
            "load_before": load0, "load_after": os.getloadavg()[0], **counter.stats(), "p": p}


def rates(r: dict) -> dict:
    w = r["wall_s"]
    return {"cmp_per_s": r["n"] / w, "s_per_cmp": w / r["n"], "cpu_s_per_cmp": r["cpu_s"] / r["n"], "prompt_tok_per_s": r["prompt_tokens"] / w,
            "run_tok_per_s": r["tokens_run"] / w, "gflops_2NT": r["flops_2NT"] / w / 1e9,
            "gflops_model": r["flops_model"] / w / 1e9}


def max_dp(p, ref) -> float:
    common = [k for k in p if k in ref]
    return max(abs(p[k] - ref[k]) for k in common) if common else float("nan")


def strip(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "p"}


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--articles", type=int, default=1, help="SummEval articles for ours on all pairs (240 each)")
    ap.add_argument("--subset", type=int, default=24, help="random comparisons of article 1 for the naive loop")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (naive, ours-subset, ours-full)")
    ap.add_argument("--sweep-firsts", type=int, default=2, help="first candidates whose 15 comparisons each form the breakdown set")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's default)")
    ap.add_argument("--quick", action="store_true", help="small subset, one round, full set = the breakdown set, short sweep")
    ap.add_argument("--no-sweep", action="store_true", help="skip the breakdown")
    ap.add_argument("--ab-rounds", type=int, default=3, help="alternated rounds of the engine-change A/B")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.subset, args.rounds = min(args.subset, 6), 1
    args.out = args.out or HERE / "results" / ("bench_comparator_quick.json" if args.quick else "bench_comparator.json")

    import numpy as np
    import torch

    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator import engine as eng
    from bayes_judge.comparator.models import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    t_load = time.perf_counter()
    lm = load_model()
    t_load = time.perf_counter() - t_load
    judge = Comparator(lm)
    counter = ModelCounter(lm.model)
    pairs, texts, contexts, ids = build(judge, args.articles)
    art1 = pairs["item"].iloc[0]
    p1 = pairs[pairs["item"] == art1].reset_index(drop=True)
    rng = np.random.default_rng(args.seed)
    sub_idx = np.sort(rng.choice(len(p1), size=min(args.subset, len(p1)), replace=False))
    subset = p1.iloc[sub_idx].reset_index(drop=True)
    sub_keys = list(zip(subset["item"], subset["a"], subset["b"], strict=True))
    firsts = list(dict.fromkeys(p1["a"]))[: args.sweep_firsts]
    sweep = p1[p1["a"].isin(firsts)].reset_index(drop=True)
    full = sweep if args.quick else pairs
    lengths = np.array([len(v) for v in ids.values()])
    prefix = eng.common_prefix_len([ids[k] for k in ids if k[0] == art1])

    res: dict = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
                    "cpu_count": os.cpu_count(), "torch_threads": threads, "load_avg_start": os.getloadavg(),
                    "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "omp_num_threads": os.environ.get("OMP_NUM_THREADS")},
        "model": {"name": lm.name, "dtype": lm.info.get("dtype"), "attn": lm.model.config._attn_implementation,
                  "n_params": counter.n_params, "n_layer_params": counter.n_layer_params, "load_s": t_load},
        "workload": {"articles": args.articles, "comparisons_full": len(full), "subset": len(subset),
                     "sweep": len(sweep), "prompt_tokens_mean": float(lengths.mean()),
                     "prompt_tokens_min": int(lengths.min()), "prompt_tokens_max": int(lengths.max()),
                     "article1_shared_prefix_tokens": int(prefix), "batch_size": judge.batch_size,
                     "template": judge.template.name},
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
    print(f"model {lm.name} ({counter.n_params / 1e6:.1f}M params, {res['model']['dtype']}, "
          f"{res['model']['attn']}), {threads} threads, load avg {os.getloadavg()}", flush=True)
    print(f"prompts: {len(ids)} of {lengths.mean():.0f} tokens on average ({lengths.min()}-{lengths.max()}); "
          f"article prefix {prefix} tokens", flush=True)

    hidden = int(lm.model.config.hidden_size)
    inter = int(getattr(lm.model.config, "intermediate_size", 4 * hidden))
    shapes = [(700, hidden, hidden), (1024, hidden, hidden), (1024, hidden, inter), (2048, 2048, 2048)]
    res["gemm_start"] = gemm_gflops(shapes)
    print("GEMM GFLOP/s (best):", ", ".join(f"{g['shape']} {g['gflops_best']:.0f}" for g in res["gemm_start"]), flush=True)

    # warm-up (first calls allocate)
    run_ours(judge, counter, subset.iloc[:2], texts, contexts, ids)
    run_naive(judge, counter, ids, sub_keys[:1])

    rounds = []
    for r in range(args.rounds):
        rn = run_naive(judge, counter, ids, sub_keys)
        print(f"round {r + 1}: naive {rn['n']} cmp {rn['wall_s']:.1f} s (load {rn['load_before']:.1f})", flush=True)
        rs = run_ours(judge, counter, subset, texts, contexts, ids)
        print(f"round {r + 1}: ours subset {rs['n']} cmp {rs['wall_s']:.1f} s, max|dp| {max_dp(rs['p'], rn['p']):.1e}", flush=True)
        rf = run_ours(judge, counter, full, texts, contexts, ids)
        print(f"round {r + 1}: ours full {rf['n']} cmp {rf['wall_s']:.1f} s, max|dp| on subset {max_dp(rf['p'], rn['p']):.1e}", flush=True)
        rounds.append({"naive": rn, "ours_subset": rs, "ours_full": rf})
    naive_p = rounds[0]["naive"]["p"]
    dps = {"ours_subset_vs_naive": max(max_dp(x["ours_subset"]["p"], x["naive"]["p"]) for x in rounds),
           "ours_full_vs_naive": max(max_dp(x["ours_full"]["p"], x["naive"]["p"]) for x in rounds),
           "naive_rounds": max(max_dp(x["naive"]["p"], naive_p) for x in rounds)}
    res["max_abs_dp"] = dps
    res["p_subset_range"] = [min(naive_p.values()), max(naive_p.values())]
    speed = {
        "full_vs_naive": [x["naive"]["wall_s"] / x["naive"]["n"] / (x["ours_full"]["wall_s"] / x["ours_full"]["n"]) for x in rounds],
        "subset_vs_naive": [x["naive"]["wall_s"] / x["ours_subset"]["wall_s"] for x in rounds],
        "full_vs_naive_cpu": [x["naive"]["cpu_s"] / x["naive"]["n"] / (x["ours_full"]["cpu_s"] / x["ours_full"]["n"]) for x in rounds],
        "subset_vs_naive_cpu": [x["naive"]["cpu_s"] / x["ours_subset"]["cpu_s"] for x in rounds],
    }
    res["speedup"] = {k: {"per_round": v, "median": statistics.median(v)} for k, v in speed.items()}
    res["rounds"] = [{k: {**strip(v), **rates(v)} for k, v in x.items()} for x in rounds]
    res["gemm_after_rounds"] = gemm_gflops(shapes)

    # ------------------------------------------------------------------ breakdown
    sweep_rows, ab_rows = [], []
    if not args.no_sweep:
        ref = None

        def variant(name, jdg, note="", cnt=None, log=True):
            nonlocal ref
            r = run_ours(jdg, cnt or counter, sweep, texts, contexts, ids)
            if ref is None:
                ref = r["p"]
            dp = max_dp(r["p"], ref)
            row = {"variant": name, "note": note, **strip(r), **rates(r), "max_abs_dp_vs_ref": dp}
            if log:
                sweep_rows.append(row)
            print(f"sweep {name:46s} {r['wall_s']:7.1f} s (cpu {r['cpu_s']:6.1f} s) {row['cmp_per_s']:.3f} cmp/s  "
                  f"{row['prompt_tok_per_s']:6.0f} tok/s  max|dp| {dp:.1e}  (load {r['load_before']:.1f})", flush=True)
            return row

        variant("ours, batch 8 (default; reference)", judge)
        for bs in ((1, 16) if args.quick else (1, 4, 16)):
            variant(f"ours, batch {bs}", Comparator(lm, batch_size=bs))
        if not args.quick:
            variant("cache off, batch 8", Comparator(lm, kv_cache=False))
            lm.model.set_attn_implementation("eager")
            try:
                variant("ours, batch 8, eager attention", judge)
            finally:
                lm.model.set_attn_implementation("sdpa")
            other = 1 if threads != 1 else 2
            torch.set_num_threads(other)
            try:
                variant(f"ours, batch 8, {other} thread(s)", judge)
                rn = run_naive(judge, counter, ids, sub_keys[:6])
                sweep_rows.append({"variant": f"naive, {other} thread(s), 6 comparisons of the subset", "note": "",
                                   **strip(rn), **rates(rn), "max_abs_dp_vs_ref": max_dp(rn["p"], naive_p)})
                print(f"sweep naive at {other} thread(s): {rn['wall_s'] / rn['n']:.2f} s/cmp", flush=True)
            finally:
                torch.set_num_threads(threads)
            lm16 = load_model(dtype="bfloat16")
            j16, c16 = Comparator(lm16), ModelCounter(lm16.model)
            run_ours(j16, c16, sweep.iloc[:2], texts, contexts, ids)  # warm-up
            variant("ours, batch 8, bfloat16 weights", j16, "p differs; not exact", cnt=c16)
            del lm16, j16, c16

            # A/B of the engine change (grouped-query attention under a mask), alternated
            new_attn = eng._gqa_attention
            configs = {"engine now (GQA attention under the mask)": new_attn,
                       "before: transformers SDPA (repeat_kv)": contextlib.nullcontext}
            try:
                for rep in range(args.ab_rounds):
                    for name, att in configs.items():
                        eng._gqa_attention = att
                        row = variant(f"A/B {rep + 1}: {name}", judge, log=False)
                        ab_rows.append({"config": name, "round": rep + 1, **row})
            finally:
                eng._gqa_attention = new_attn
        variant("ours, batch 8 (default, again)", judge)
    res["breakdown"] = sweep_rows
    res["engine_ab"] = ab_rows
    res["load_avg_end"] = os.getloadavg()

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2, default=str))
    md = markdown(res, " ".join(["benchmarks/bench_comparator.py", *(argv if argv is not None else sys.argv[1:])]))
    args.out.with_suffix(".md").write_text(md)
    print()
    print(md)
    assert dps["ours_subset_vs_naive"] <= TOL and dps["ours_full_vs_naive"] <= TOL, f"results differ from the naive loop: {dps}"
    for row in sweep_rows:
        if "bfloat16" not in row["variant"]:
            assert row["max_abs_dp_vs_ref"] <= TOL, f"{row['variant']}: max |dp| {row['max_abs_dp_vs_ref']}"
    return res


def markdown(res: dict, command: str) -> str:
    rounds = res["rounds"]
    w = res["workload"]

    def med(kind, key):
        return statistics.median(x[kind][key] for x in rounds)

    lines = [
        f"command: `.venv/bin/python {command}`",
        "",
        f"Model {res['model']['name']} ({res['model']['n_params'] / 1e6:.1f}M params, {res['model']['dtype']}, "
        f"{res['model']['attn']} attention), torch {res['machine']['torch']}, {res['machine']['torch_threads']} threads "
        f"on {res['machine']['cpu_count']} CPUs shared with other work (load average at start "
        f"{res['machine']['load_avg_start'][0]:.1f}, end {res['load_avg_end'][0]:.1f}).",
        f"Workload: SummEval {w['template']}, {w['articles']} article(s) → {w['comparisons_full']} ordered comparisons; "
        f"prompts {w['prompt_tokens_mean']:.0f} tokens on average ({w['prompt_tokens_min']}-{w['prompt_tokens_max']}), "
        f"shared article prefix {w['article1_shared_prefix_tokens']} tokens. Naive loop on a random subset of "
        f"{w['subset']} comparisons of article 1; {len(rounds)} interleaved round(s), medians shown.",
        "",
        "| run | comparisons | wall (s) | cmp/s | s/cmp | CPU s/cmp | prompt tok/s | tokens run | model GFLOP/s (2·N·T) | model GFLOP/s (layers+attn+head) | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    names = {"naive": "naive: 1 pair/forward, batch 1, no cache", "ours_subset": "ours (Comparator defaults), same subset",
             "ours_full": "ours (Comparator defaults), all pairs"}
    for kind, label in names.items():
        r0 = rounds[0][kind]
        lines.append(
            f"| {label} | {r0['n']} | {med(kind, 'wall_s'):.1f} | {med(kind, 'cmp_per_s'):.3f} | {med(kind, 's_per_cmp'):.2f} | "
            f"{med(kind, 'cpu_s_per_cmp'):.2f} | "
            f"{med(kind, 'prompt_tok_per_s'):.0f} | {r0['tokens_run']} | {med(kind, 'gflops_2NT'):.1f} | "
            f"{med(kind, 'gflops_model'):.1f} | {med(kind, 'load_before'):.1f} |")
    sp, dp = res["speedup"], res["max_abs_dp"]
    lines += [
        "",
        f"**Speed-up (per comparison), ours on all pairs vs naive: {sp['full_vs_naive']['median']:.1f}x** "
        f"(rounds: {', '.join(f'{x:.1f}x' for x in sp['full_vs_naive']['per_round'])}; target ≥ 5x); "
        f"ours on the same subset: {sp['subset_vs_naive']['median']:.1f}x "
        f"(rounds: {', '.join(f'{x:.1f}x' for x in sp['subset_vs_naive']['per_round'])}). "
        f"By CPU time (less sensitive to the other processes): all pairs {sp['full_vs_naive_cpu']['median']:.1f}x "
        f"(rounds: {', '.join(f'{x:.1f}x' for x in sp['full_vs_naive_cpu']['per_round'])}), same subset "
        f"{sp['subset_vs_naive_cpu']['median']:.1f}x.",
        "",
        f"**max |Δp| vs the naive loop: {max(dp['ours_subset_vs_naive'], dp['ours_full_vs_naive']):.1e}** "
        f"(subset run {dp['ours_subset_vs_naive']:.1e}, full run on the subset's comparisons {dp['ours_full_vs_naive']:.1e}; "
        f"tolerance 1e-4; naive p over the subset ranges {res['p_subset_range'][0]:.3f}-{res['p_subset_range'][1]:.3f}).",
        "",
        f"float32 GEMM at {res['machine']['torch_threads']} threads, GFLOP/s best (median) of 5, before / after the rounds:",
        "",
        "| shape | before | after |",
        "|---|---|---|",
    ]
    for a, b in zip(res["gemm_start"], res["gemm_after_rounds"], strict=True):
        lines.append(f"| {a['shape']} | {a['gflops_best']:.0f} ({a['gflops_median']:.0f}) | {b['gflops_best']:.0f} ({b['gflops_median']:.0f}) |")
    lines += [
        "",
        "N·T: 2 · n_params · tokens run (the brief's estimate); layers+attn+head: 2 · non-embedding params · tokens run "
        "+ 4 · hidden · attended keys · layers + 2 · hidden · vocab per kept logit row. Tokens run include padding; "
        "prompt tok/s is the prompts' total length over the wall time (what the user sees).",
    ]
    if res["breakdown"]:
        lines += [
            "",
            f"Breakdown on {w['sweep']} comparisons of article 1 (all comparisons of its first "
            f"{res['args']['sweep_firsts']} first candidates), one run each in this order:",
            "",
            "| variant | wall (s) | CPU (s) | cmp/s | prompt tok/s | tokens run (real) | forwards | model GFLOP/s | max \\|Δp\\| vs reference | load avg |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in res["breakdown"]:
            lines.append(f"| {r['variant']}{' (' + r['note'] + ')' if r['note'] else ''} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                         f"{r['cmp_per_s']:.3f} | {r['prompt_tok_per_s']:.0f} | {r['tokens_run']} ({r['tokens_real']}) | {r['forwards']} | "
                         f"{r['gflops_model']:.1f} | {r['max_abs_dp_vs_ref']:.1e} | {r['load_before']:.1f} |")
        lines += ["", "naive rows: max |Δp| against the main naive run; bfloat16: against the float32 reference."]
    if res.get("engine_ab"):
        ab = res["engine_ab"]
        names = list(dict.fromkeys(r["config"] for r in ab))
        base = statistics.median(r["cpu_s"] for r in ab if r["config"] == names[-1])
        lines += [
            "",
            f"Engine changes, A/B on the same {w['sweep']} comparisons, {max(r['round'] for r in ab)} alternated rounds "
            "(medians; speed-up by CPU time against 'before'):",
            "",
            "| engine | wall (s) | CPU (s) | tokens run | forwards | speed-up (CPU) | max \\|Δp\\| vs reference |",
            "|---|---|---|---|---|---|---|",
        ]
        for n in names:
            rs = [r for r in ab if r["config"] == n]
            cpu = statistics.median(r["cpu_s"] for r in rs)
            lines.append(f"| {n} | {statistics.median(r['wall_s'] for r in rs):.1f} | {cpu:.1f} | {rs[0]['tokens_run']} | "
                         f"{rs[0]['forwards']} | {base / cpu:.2f}x | {max(r['max_abs_dp_vs_ref'] for r in rs):.1e} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
