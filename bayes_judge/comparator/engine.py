"""Batched forward passes: next-token label probabilities and text generation.

Scoring (:func:`label_logprobs`) is exact with respect to a one-prompt-per-forward loop:

- **Shared-prefix KV cache.** All prompts of one context (one SummEval article: 240 comparisons)
  share their first tokens. The longest common prefix of their *full* tokenizations is run once;
  its key/value cache is then reused by every batch of that context, which only runs the tokens
  after it. Because the prefix is taken on the real token sequences (not on a text split), the
  model sees exactly the tokens it would see one prompt at a time.
- **Padding.** Suffixes are right-padded and the logits are read at each row's last real token
  (``logits_to_keep``): under a causal mask, real tokens never attend to the padding after them,
  so no position ids or masks in the middle of a sequence are needed. Generation, which appends
  tokens, uses left-padding (:func:`generate`).
- **Grouped-query attention under a mask.** A padded batch (or a batch after a cached prefix)
  needs an explicit attention mask; transformers' SDPA path then copies the key/value heads up to
  the query heads (``repeat_kv``) before calling torch, although torch's CPU kernel takes the
  grouped heads with a mask (``enable_gqa``). While scoring on CPU the model's SDPA attention is
  swapped for one that passes the grouped heads (:func:`_gqa_attention`): the same kernel and the
  same results (max |Δp| 0 on SummEval prompts), ~8 % less CPU time per comparison for SmolLM2
  (9 query heads, 3 key/value heads) in an alternated A/B (``benchmarks/bench_comparator.py``).
- Encoder-decoder models (FlanT5) run the prompt through the encoder in right-padded batches and
  read the first answer token from the decoder.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["label_logprobs", "generate"]


_GQA_SDPA = "bayes_judge_sdpa_gqa"


def _sdpa_gqa_forward(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
                      is_causal=None, **kwargs):
    """transformers' SDPA attention, except that a masked call with grouped key/value heads on CPU
    hands the grouped heads to torch (``enable_gqa=True``) instead of repeating them first."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    plain = (attention_mask is None or getattr(module, "num_key_value_groups", 1) <= 1
             or query.device.type != "cpu" or query.shape[2] == 1
             or any(kwargs.get(k) is not None for k in ("position_bias", "cache", "softcap"))
             or kwargs.get("output_attentions", False))
    if plain:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, is_causal=is_causal, **kwargs)
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling, enable_gqa=True)
    return out.transpose(1, 2).contiguous(), None


@contextlib.contextmanager
def _gqa_attention(model):
    """Within the block, a CPU causal LM on transformers' SDPA attention uses
    :func:`_sdpa_gqa_forward` (same masks, same kernel); anything else is left as it is."""
    cfg = getattr(model, "config", None)
    heads, kv_heads = getattr(cfg, "num_attention_heads", None), getattr(cfg, "num_key_value_heads", None)
    use = (cfg is not None and getattr(cfg, "_attn_implementation", None) == "sdpa"
           and not getattr(cfg, "sub_configs", None) and getattr(model.device, "type", None) == "cpu"
           and heads is not None and kv_heads is not None and kv_heads < heads)
    if use:
        try:
            from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask
            from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        except ImportError:  # pragma: no cover - older transformers
            use = False
    if not use:
        yield
        return
    if _GQA_SDPA not in ALL_ATTENTION_FUNCTIONS:
        ALL_ATTENTION_FUNCTIONS.register(_GQA_SDPA, _sdpa_gqa_forward)
        ALL_MASK_ATTENTION_FUNCTIONS.register(_GQA_SDPA, sdpa_mask)
    cfg._attn_implementation = _GQA_SDPA
    try:
        yield
    finally:
        cfg._attn_implementation = "sdpa"


def _pad_right(seqs: Sequence[Sequence[int]], pad: int):
    import torch

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = torch.as_tensor(s, dtype=torch.long)
        mask[r, : len(s)] = 1
    return ids, mask


def _cache_arg(model) -> str:
    """The keyword ``model.forward`` takes the key/value cache under.

    transformers 5.24 renamed ``past_key_values`` to ``cache`` (the old name warns until 5.40);
    older releases only know ``past_key_values``.
    """
    import inspect

    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _output_cache(out):
    """The cache a forward pass returned, under either release's field name."""
    cache = out.get("cache") if "cache" in out else None
    return cache if cache is not None else out.get("past_key_values")


def _expand_cache(prefix_kv, batch: int):
    """A fresh DynamicCache holding the prefix keys/values broadcast to ``batch`` rows."""
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=[(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1))
                                        for k, v in prefix_kv])


def _prefix_kv(model, prefix_ids: Sequence[int]):
    import torch

    if not len(prefix_ids):
        return None

    out = model(input_ids=torch.as_tensor([list(prefix_ids)], device=model.device), use_cache=True,
                logits_to_keep=1)
    cache = _output_cache(out)
    layers = getattr(cache, "layers", None)
    if layers is None or not all(hasattr(layer, "keys") and type(layer).__name__ == "DynamicLayer"
                                 for layer in layers):
        return None  # sliding-window / hybrid caches: fall back to full prompts
    return [(layer.keys, layer.values) for layer in layers]


def _last_token_logprobs(model, ids, mask, label_sets, cache=None, offset: int = 0):
    """log-softmax over the vocabulary at each row's last real token, summed per label set."""
    import torch

    last = mask.sum(1) - 1  # index within this (suffix) batch
    keep, inv = torch.unique(last, return_inverse=True)
    kw = {}
    if cache is not None:
        kw[_cache_arg(model)] = cache
        full_mask = torch.cat([torch.ones((ids.shape[0], offset), dtype=mask.dtype), mask], dim=1)
    else:
        full_mask = mask
    out = model(input_ids=ids.to(model.device), attention_mask=full_mask.to(model.device),
                use_cache=cache is not None, logits_to_keep=keep.to(model.device), **kw)
    logits = out.logits[torch.arange(ids.shape[0]), inv.to(out.logits.device)].float()
    logp = torch.log_softmax(logits, dim=-1)
    return torch.stack([torch.logsumexp(logp[:, list(s)], dim=-1) for s in label_sets], dim=1).cpu().numpy()


def _extend(model, prefix_kv, tokens: Sequence[int]):
    """The prefix cache extended by ``tokens`` (batch 1); the input cache is left unchanged."""
    import torch

    if not len(tokens):
        return prefix_kv
    cache = _expand_cache(prefix_kv, 1)
    off = prefix_kv[0][0].shape[-2]
    model(input_ids=torch.as_tensor([list(tokens)], device=model.device), **{_cache_arg(model): cache},
          attention_mask=torch.ones((1, off + len(tokens)), dtype=torch.long, device=model.device),
          use_cache=True, logits_to_keep=1)
    return [(layer.keys, layer.values) for layer in cache.layers]


def label_logprobs(
    lm,
    groups: Sequence[Sequence[Sequence[int]]],
    label_sets: Sequence[Sequence[int]],
    *,
    subgroups: Sequence[Sequence] | None = None,
    batch_size: int | str = 8,
    kv_cache: bool = True,
    min_prefix: int = 8,
    decoder_prefix: Sequence[int] = (),
    on_batch: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
    pack: bool | None = None,
) -> list[np.ndarray]:
    """Log-probabilities of label sets as the next token after each prompt.

    Parameters
    ----------
    lm : :class:`~bayes_judge.comparator.models.LoadedModel`
    groups : prompts as token-id lists, grouped by shared context (a group shares a KV prefix)
    label_sets : token ids per label; a label's probability is the sum over its tokens
    subgroups : optional key per prompt within each group (e.g. the candidate shown first): the
        prompts of one key share a longer prefix (context + first candidate), cached once per key
        on top of the group's prefix
    batch_size : rows per forward pass; ``"auto"``: sized from the free GPU memory (8 on the CPU)
    kv_cache : reuse shared prefixes (causal LMs); ``False`` runs every prompt in full
    min_prefix : shortest shared prefix (tokens) worth caching
    decoder_prefix : encoder-decoder models: decoder tokens after the start token (answer prefix)
    on_batch : called after every forward pass with (group index, prompt indices, log-probs)
    pack : pack the prompts of many prefixes into each pass (:mod:`.packed`); default on CUDA,
        for models the packed path supports (:func:`~.packed.supports_packing`)

    Returns
    -------
    list of (n_prompts_in_group, n_labels) arrays of log P(label | prompt).

    Examples
    --------
    >>> from bayes_judge.comparator.engine import label_logprobs      # doctest: +SKIP
    >>> lp = label_logprobs(lm, [prompts], [[id_A], [id_B]], batch_size="auto")[0]  # doctest: +SKIP
    >>> p_a = 1 / (1 + np.exp(lp[:, 1] - lp[:, 0]))                      # doctest: +SKIP
    """
    import torch

    from .packed import common_prefix_len, packed_label_logprobs, supports_packing

    model, pad = lm.model, lm.tokenizer.pad_token_id
    use_cache = kv_cache and not lm.is_seq2seq
    if pack is None:
        pack = use_cache and getattr(model.device, "type", "cpu") == "cuda"
    longest = max((len(p) for g in groups for p in g), default=0)
    if pack and use_cache and supports_packing(model, longest):
        return packed_label_logprobs(lm, groups, label_sets, subgroups=subgroups, batch_size=batch_size,
                                     min_prefix=min_prefix, on_batch=on_batch)
    if batch_size == "auto":
        batch_size = 8
    batch_size = int(batch_size)
    results = []
    with torch.inference_mode(), _gqa_attention(model):
        for g, prompts in enumerate(groups):
            res = np.empty((len(prompts), len(label_sets)))
            keys = np.zeros(len(prompts), dtype=int)
            if subgroups is not None and use_cache:
                keys = np.unique(np.asarray([str(k) for k in subgroups[g]]), return_inverse=True)[1]
            L0 = common_prefix_len(prompts) if use_cache and len(prompts) > 1 else 0
            kv0 = _prefix_kv(model, prompts[0][:L0]) if L0 >= min_prefix else None
            if kv0 is None:
                L0 = 0
            for key in np.unique(keys):
                members = np.nonzero(keys == key)[0]
                kv, L = kv0, L0
                if kv0 is not None and len(members) > 1:
                    L1 = common_prefix_len([prompts[int(m)] for m in members])
                    if L1 - L0 >= min_prefix:
                        kv, L = _extend(model, kv0, prompts[members[0]][L0:L1]), L1
                order = members[np.argsort([len(prompts[int(m)]) for m in members], kind="stable")]
                for start in range(0, len(order), batch_size):
                    rows = order[start:start + batch_size]
                    ids, mask = _pad_right([prompts[r][L:] for r in rows], pad)
                    if lm.is_seq2seq:
                        dec = torch.as_tensor([[model.config.decoder_start_token_id, *decoder_prefix]] * len(rows))
                        out = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device),
                                    decoder_input_ids=dec.to(model.device))
                        logp = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
                        lp = torch.stack([torch.logsumexp(logp[:, list(s)], dim=-1) for s in label_sets], 1).cpu().numpy()
                    else:
                        cache = _expand_cache(kv, len(rows)) if kv is not None else None
                        lp = _last_token_logprobs(model, ids, mask, label_sets, cache=cache, offset=L)
                    res[rows] = lp
                    if on_batch is not None:
                        on_batch(g, rows, lp)
            results.append(res)
    return results


def _row_gumbel(seeds: Sequence[int], n_samples: int, temperature: float, device):
    """A logits processor for greedy decoding that samples: it returns scores / T + Gumbel noise, the
    noise of row (prompt r, sample j) drawn from its own generator seeded by (seeds[r], j), so
    argmax is an exact draw from softmax(scores / T) and a row's draws do not depend on the other
    rows of its batch (Gumbel-max trick)."""
    import torch
    from transformers import LogitsProcessor

    gens = []
    for s in seeds:
        for j in range(n_samples):
            g = torch.Generator(device=device)
            g.manual_seed((int(s) * 1_000_003 + j) % (2**63 - 1))
            gens.append(g)

    class RowGumbel(LogitsProcessor):
        def __call__(self, input_ids, scores):
            u = torch.stack([torch.rand(scores.shape[-1], generator=g, device=scores.device, dtype=torch.float32)
                             for g in gens])
            gumbel = -torch.log(-torch.log(u.clamp(1e-12, 1 - 1e-7)))
            return scores.float() / temperature + gumbel

    return RowGumbel()


def generate(
    lm,
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    n_samples: int = 1,
    temperature: float = 1.0,
    seed: int | None = None,
    seeds: Sequence[int] | None = None,
) -> list[list[str]]:
    """Generate ``n_samples`` continuations per prompt (left-padded batch for causal LMs).

    Greedy when ``n_samples == 1`` and ``temperature == 0``; sampled otherwise. With ``seeds`` (one
    per prompt) each prompt's samples come from its own random streams (:func:`_row_gumbel`), the
    same whichever prompts share its batch; with ``seed`` alone torch's RNG is seeded once inside a
    forked RNG state (the caller's global state is untouched).
    """
    import torch

    tok, model = lm.tokenizer, lm.model
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, p in enumerate(prompts):
        if lm.is_seq2seq:
            ids[r, : len(p)] = torch.as_tensor(p)
            mask[r, : len(p)] = 1
        else:
            ids[r, width - len(p):] = torch.as_tensor(p)
            mask[r, width - len(p):] = 1
    sample = temperature > 0
    kw: dict = dict(max_new_tokens=max_new_tokens, num_return_sequences=n_samples, pad_token_id=tok.pad_token_id)
    if sample and seeds is not None:
        if len(seeds) != len(prompts):
            raise ValueError(f"{len(seeds)} seeds for {len(prompts)} prompts")
        kw.update(do_sample=False, temperature=None, top_k=None, top_p=None, num_return_sequences=1,
                  logits_processor=[_row_gumbel(seeds, n_samples, temperature, model.device)])
        ids, mask = ids.repeat_interleave(n_samples, 0), mask.repeat_interleave(n_samples, 0)
    elif sample:
        kw.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    else:
        kw.update(do_sample=False, temperature=None, top_k=None, top_p=None)
    with torch.inference_mode(), torch.random.fork_rng(devices=[]):
        if seed is not None:
            torch.manual_seed(seed)
        out = model.generate(input_ids=ids.to(model.device), attention_mask=mask.to(model.device), **kw)
    new = out if lm.is_seq2seq else out[:, width:]
    texts = tok.batch_decode(new, skip_special_tokens=True)
    return [texts[r * n_samples:(r + 1) * n_samples] for r in range(len(prompts))]
