"""Packed scoring: the prompts of many shared prefixes in one forward pass (the GPU path).

:func:`~bayes_judge.comparator.engine.label_logprobs` batches the prompts of one shared prefix at a
time. On SummEval a prefix (article + first summary) has 15 prompts, so however large the batch, a
forward pass holds ~1,600 tokens, too few to fill a GPU. Here the prompts of many prefixes share a
forward pass:

1. **Prefixes once, in batches.** Each context prefix (the tokens all prompts of an item share) is
   run once; each first-candidate prefix (context + first text) is run once on top of it. Both are
   batched across items and their keys/values kept in a prefix bank, never expanded per row.
2. **Rows of different prefixes.** A scoring pass holds rows (one prompt's tokens after its prefix)
   of any prefixes, sorted by length. Position ids start each row at its prefix length, and a custom
   attention function lets a row see its prefix and its own earlier tokens, so the model computes
   exactly what it would on the whole prompt: in float32 the result equals the one-prompt-per-forward
   loop to ~1e-6 (``tests/comparator/test_packed.py``). Three attention kernels:

   - ``cascade`` (CUDA, half precision; the default there): the pass is one packed sequence, no
     padding. FlashAttention's ragged kernel runs twice: each row causally over its own tokens, and
     the tokens of all rows of a prefix together over that prefix's keys where they lie in the bank
     (no copy); the two are merged by their log-sum-exp. This is the "cascade" or shared-prefix
     attention of FlashInfer and Hydragen.
   - ``varlen``: padded rows, the ragged kernel over each row's prefix copied before its own keys.
   - ``sdpa`` (the CPU, float32): padded rows, torch's attention with a boolean mask.

   Before a ragged kernel is first used on a model, :func:`kernel_agrees` checks it against the
   attention written out in float32 on random inputs of the model's head shape; one that fails
   (another torch's layout or causal alignment) is not used.
3. **Label logits in float32.** The model's head is applied to the last real token's hidden state;
   the label tokens' logits are computed from it in float32 (their rows of the output matrix cast
   once), so a bfloat16 judge's p = sigmoid(ℓ_A − ℓ_B) carries no bfloat16 rounding of the logits
   themselves. The full-vocabulary normaliser (for the label mass) stays in the model's dtype.
4. **Batches sized by memory.** ``batch_size="auto"`` sizes each pass from the free GPU memory and
   the model's shape (:func:`auto_rows`).
5. **Norms fused.** The model's RMS norms run as one kernel each while it scores
   (:func:`~bayes_judge.comparator.fused.fused_norms`, checked against the model's own norm first).

On one H100, bfloat16, SummEval prompts (``benchmarks/results/bench_comparator_gpu.md``): a judge of
Llama-3-8B's shape judges 284 comparisons/s (60% of the compute limit of the tokens a comparison
cannot share; the one-prompt loop: 9), SmolLM2-1.7B's shape 903/s.

Used by :func:`label_logprobs` for decoder-only models whose attention is plain causal attention
over every earlier token (:func:`supports_packing`): no sliding windows shorter than the prompts,
no attention soft-capping, no encoder-decoder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .fused import fused_norms

__all__ = ["supports_packing", "packed_label_logprobs", "auto_rows", "row_bytes", "varlen_available", "kernel_agrees",
           "choose_kernel", "KERNELS"]

_NAME = "bayes_judge_packed"
_STATE = threading.local()
_MAX_ROWS = 1024
_MAX_TOKENS = 32_768  # tokens per pass past which a larger pass gains little on one GPU


def common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of token sequences, leaving every sequence at least one
    token after it."""
    if not seqs:
        return 0
    lengths = np.array([len(s) for s in seqs])
    limit = int(lengths.min()) - 1
    if limit <= 0:
        return 0
    first = np.asarray(seqs[0][:limit])
    n = limit
    for s in seqs[1:]:
        diff = np.nonzero(np.asarray(s[:n]) != first[:n])[0]
        if diff.size:
            n = int(diff[0])
            if n == 0:
                return 0
    return n


_GQA_SDPA = "bayes_judge_sdpa_gqa"

def supports_packing(model, max_len: int = 0) -> bool:
    """Whether ``model`` is a decoder-only LM whose attention the packed path reproduces exactly."""
    cfg = getattr(model, "config", None)
    if cfg is None or getattr(cfg, "is_encoder_decoder", False) or getattr(cfg, "sub_configs", None):
        return False
    if any(getattr(cfg, a, None) for a in ("attn_logit_softcapping", "alibi", "use_alibi")):
        return False
    types = getattr(cfg, "layer_types", None)
    if types is not None and any(t != "full_attention" for t in types):
        return False
    window = getattr(cfg, "sliding_window", None)
    if window and getattr(cfg, "use_sliding_window", True) and window < max_len:
        return False
    layers = _decoder_layers(model)
    return layers is not None and all(hasattr(getattr(lay, "self_attn", None), "layer_idx") for lay in layers)


def _decoder_layers(model):
    try:
        dec = model.get_decoder()
    except (AttributeError, NotImplementedError):
        return None
    return getattr(dec, "layers", None)


# -- attention -------------------------------------------------------------------------------------
KERNELS = ("auto", "cascade", "varlen", "sdpa")


@dataclass
class _Pass:
    """What the attention function reads during one packed forward pass."""

    kernel: str                     # "cascade", "varlen" or "sdpa"
    mask: Any = None                # sdpa: (rows, 1, S, P + S) bool, True where a query may attend
    bank: _Bank | None = None       # the prefixes' keys/values
    entry: Any = None               # sdpa: (rows,) bank slot of each row's prefix
    index: dict = field(default_factory=dict)    # varlen / cascade: offsets and gather indices
    capture: dict = field(default_factory=dict)  # layer -> (K, V) of the rows' own tokens
    keep_kv: bool = False


def _attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
               is_causal=None, **kwargs):
    """query (B, heads, S, d), key/value (B, kv_heads, S, d) of the rows' own tokens; returns
    (B, S, heads, d). Each row attends to its prefix in the bank and to its own earlier tokens."""
    st: _Pass = _STATE.current
    if st.keep_kv:
        st.capture[module.layer_idx] = (key, value)
    run = {"cascade": _attention_cascade, "varlen": _attention_varlen, "sdpa": _attention_sdpa}[st.kernel]
    return run(st, module.layer_idx, query, key, value, scaling), None


def _attention_sdpa(st: _Pass, layer: int, query, key, value, scaling):
    """Padded rows: torch's scaled-dot-product attention over [prefix padded to the bank's width,
    own tokens] with a boolean mask; grouped key/value heads repeated as transformers' ``repeat_kv``."""
    import torch

    if st.bank is not None:
        bk, bv = st.bank.padded[layer]
        key = torch.cat([bk.index_select(0, st.entry).transpose(1, 2), key], dim=2)
        value = torch.cat([bv.index_select(0, st.entry).transpose(1, 2), value], dim=2)
    rep = query.shape[1] // key.shape[1]
    if rep > 1:  # kv head i serves query heads i*rep .. (i+1)*rep - 1
        key = key.repeat_interleave(rep, dim=1)
        value = value.repeat_interleave(rep, dim=1)
    out = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=st.mask, scale=scaling)
    return out.transpose(1, 2).contiguous()


def _flash_varlen(q, k, v, cu_q, cu_k, max_q: int, max_k: int, scale, causal: bool = True, lse: bool = False):
    """FlashAttention-2's variable-length kernel as torch ships it: q (T_q, heads, d), k/v (T_k,
    kv_heads, d), sequence r the rows cu[r]:cu[r+1]; causal aligned to the end of each key sequence
    (query i of n_q sees keys 0 .. n_k - n_q + i). With ``lse`` also the log-sum-exp of the scores,
    (heads, T_q) in float32."""
    import torch

    out = torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0, causal, False, scale=scale)
    if not lse:
        return out[0]
    logsumexp = out[1]
    if logsumexp.dim() == 2 and logsumexp.shape == (q.shape[1], q.shape[0]):
        return out[0], logsumexp.float()
    if logsumexp.dim() == 3 and logsumexp.shape[:2] == (len(cu_q) - 1, q.shape[1]):  # older: (seqs, heads, max_q)
        n = (cu_q[1:] - cu_q[:-1]).tolist()
        return out[0], torch.cat([logsumexp[r, :, :n[r]] for r in range(len(n))], dim=1).float()
    raise RuntimeError(f"unexpected log-sum-exp layout {tuple(logsumexp.shape)} from the varlen kernel")


def _attention_varlen(st: _Pass, layer: int, query, key, value, scaling):
    """Padded rows, ragged attention: the real query tokens packed, each row's keys copied as [its
    prefix from the bank, its own tokens]; no mask, grouped heads as they are."""
    ix = st.index
    rows, heads, width, d = query.shape
    kvh = key.shape[1]
    q = query.transpose(1, 2).reshape(rows * width, heads, d).index_select(0, ix["q"])
    own_k = key.transpose(1, 2).reshape(rows * width, kvh, d)
    own_v = value.transpose(1, 2).reshape(rows * width, kvh, d)
    k = own_k.new_empty((ix["total_k"], kvh, d))
    v = own_v.new_empty((ix["total_k"], kvh, d))
    k.index_copy_(0, ix["own_dst"], own_k.index_select(0, ix["q"]))
    v.index_copy_(0, ix["own_dst"], own_v.index_select(0, ix["q"]))
    if st.bank is not None and ix["pre_dst"].numel():
        bk, bv = st.bank.padded[layer]
        k.index_copy_(0, ix["pre_dst"], bk.reshape(-1, kvh, d).index_select(0, ix["pre_src"]))
        v.index_copy_(0, ix["pre_dst"], bv.reshape(-1, kvh, d).index_select(0, ix["pre_src"]))
    out = _flash_varlen(q, k, v, ix["cu_q"], ix["cu_k"], ix["max_q"], ix["max_k"], scaling)
    full = out.new_zeros((rows * width, heads, d))
    full.index_copy_(0, ix["q"], out)
    return full.view(rows, width, heads, d)


def _attention_cascade(st: _Pass, layer: int, query, key, value, scaling):
    """One packed sequence of rows (batch 1, no padding), rows grouped by prefix. Two ragged
    attentions and a merge, with no copy of any prefix:

    - own tokens: each row causal over its own tokens (sequences = rows);
    - prefix: the tokens of all rows of one prefix, together, over that prefix's keys where they lie
      in the bank (sequences = the bank's prefixes; a prefix no row uses has no queries);
    - merge: softmax over the union of both key sets, from each part's log-sum-exp L:
      o = (e^{L₁} o₁ + e^{L₂} o₂) / (e^{L₁} + e^{L₂}).
    """
    import torch

    ix = st.index
    q = query[0].transpose(0, 1).contiguous()                        # (T, heads, d)
    k = key[0].transpose(0, 1).contiguous()
    v = value[0].transpose(0, 1).contiguous()
    out, l1 = _flash_varlen(q, k, v, ix["cu_own"], ix["cu_own"], ix["max_own"], ix["max_own"], scaling,
                            causal=True, lse=True)
    n = ix["n_pre"]
    if st.bank is not None and n:
        bk, bv = st.bank.packed[layer]
        o2, l2 = _flash_varlen(q[:n], bk, bv, ix["cu_q_pre"], st.bank.cu, ix["max_q_pre"], st.bank.max_len, scaling,
                               causal=False, lse=True)
        w = torch.sigmoid(l2 - l1[:, :n]).T[..., None]  # e^{L₂} / (e^{L₁} + e^{L₂}), (n, heads, 1)
        out[:n] = out[:n].float().lerp_(o2.float(), w)  # in float32, rounded once (out is the kernel's own)
    return out[None]


def _varlen_index(lens: Sequence[int], plens: Sequence[int], slots: Sequence[int], width: int, bank_width: int,
                  device) -> dict:
    """Gather/scatter indices of a varlen pass: rows of ``lens`` own tokens (padded to ``width``)
    after prefixes of ``plens`` tokens in bank ``slots`` (each ``bank_width`` long)."""
    import torch

    lens_a, plens_a = np.asarray(lens, dtype=np.int64), np.asarray(plens, dtype=np.int64)
    klens = lens_a + plens_a
    cu_q = np.concatenate([[0], np.cumsum(lens_a)])
    cu_k = np.concatenate([[0], np.cumsum(klens)])
    r_q = np.repeat(np.arange(len(lens_a)), lens_a)                  # row of each real query token
    pos_q = np.arange(cu_q[-1]) - cu_q[r_q]                          # its position in the row
    r_p = np.repeat(np.arange(len(lens_a)), plens_a)                 # row of each prefix key
    pos_p = np.arange(int(plens_a.sum())) - np.repeat(np.cumsum(plens_a) - plens_a, plens_a)
    slots_a = np.asarray(slots, dtype=np.int64)

    def t(x, dtype=torch.long):
        return torch.as_tensor(np.ascontiguousarray(x), dtype=dtype, device=device)

    return {"q": t(r_q * width + pos_q), "own_dst": t(cu_k[r_q] + plens_a[r_q] + pos_q),
            "pre_src": t(slots_a[r_p] * bank_width + pos_p), "pre_dst": t(cu_k[r_p] + pos_p),
            "cu_q": t(cu_q, torch.int32), "cu_k": t(cu_k, torch.int32), "max_q": int(lens_a.max()),
            "max_k": int(klens.max()), "total_k": int(cu_k[-1])}


def _cascade_order(slots: Sequence[int], has_prefix: Sequence[bool]) -> np.ndarray:
    """Row order of a cascade pass: by bank slot, rows without a prefix last."""
    key = np.where(np.asarray(has_prefix, dtype=bool), np.asarray(slots, dtype=np.int64), np.iinfo(np.int64).max)
    return np.argsort(key, kind="stable")


def _cascade_index(lens: Sequence[int], slots: Sequence[int], has_prefix: Sequence[bool], n_slots: int,
                   device) -> dict:
    """Offsets of a cascade pass whose rows are already in :func:`_cascade_order`."""
    import torch

    lens_a = np.asarray(lens, dtype=np.int64)
    has = np.asarray(has_prefix, dtype=bool)
    cu_own = np.concatenate([[0], np.cumsum(lens_a)])
    per_slot = np.bincount(np.asarray(slots, dtype=np.int64)[has], weights=lens_a[has], minlength=n_slots)
    per_slot = per_slot[:n_slots].astype(np.int64)
    return {"cu_own": torch.as_tensor(cu_own, dtype=torch.int32, device=device), "max_own": int(lens_a.max()),
            "n_pre": int(lens_a[has].sum()),
            "cu_q_pre": torch.as_tensor(np.concatenate([[0], np.cumsum(per_slot)]), dtype=torch.int32, device=device),
            "max_q_pre": int(max(per_slot.max(initial=0), 1))}


def varlen_available(model) -> bool:
    """Whether the ragged kernels can run this model: CUDA, half precision, FlashAttention in torch."""
    import torch

    dtype = next(model.parameters()).dtype
    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", 1)
    hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    return (model.device.type == "cuda" and dtype in (torch.bfloat16, torch.float16) and hd <= 256
            and hasattr(torch.ops.aten, "_flash_attention_forward"))


class _Packed:
    """Within the block the model's attention is :func:`_attention` (restored after)."""

    def __init__(self, model, fuse_norms: bool = True):
        self.cfg = model.config
        self.norms = fused_norms(model, fuse_norms)

    def __enter__(self):
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        if _NAME not in ALL_ATTENTION_FUNCTIONS:
            ALL_ATTENTION_FUNCTIONS.register(_NAME, _attention)
        # no mask function is registered under this name: transformers then builds no mask
        self.old = self.cfg._attn_implementation
        self.cfg._attn_implementation = _NAME
        try:
            self.n_fused = self.norms.__enter__()
        except BaseException:
            self.cfg._attn_implementation = self.old
            raise
        return self

    def __exit__(self, *exc):
        self.cfg._attn_implementation = self.old
        _STATE.current = None
        self.norms.__exit__(*exc)


# -- the prefix bank -------------------------------------------------------------------------------
@dataclass
class _Entry:
    """A cached prefix: its parent's keys/values, then its own ``kv`` (per layer, (n, kv_heads, d))."""

    parent: _Entry | None
    kv: list
    length: int  # parent's length + own tokens

    def full(self, layer: int):
        """(length, kv_heads, d) keys and values of the whole prefix in one layer."""
        import torch

        chain: list = []
        node: _Entry | None = self
        while node is not None:
            chain.append(node.kv[layer])
            node = node.parent
        if len(chain) == 1:
            return chain[0]
        chain.reverse()
        return torch.cat([k for k, _ in chain]), torch.cat([v for _, v in chain])


class _Bank:
    """The keys/values of some prefixes, built once for a window's passes.

    ``padded`` (sdpa, varlen): per layer (entries + 1, P_max, kv_heads, d), each entry
    left-aligned, the last slot zeros for rows without a prefix. ``packed`` (cascade): per layer
    (Σ lengths, kv_heads, d), entry i the rows ``cu[i]:cu[i+1]``.
    """

    def __init__(self, entries: Sequence[_Entry], n_layers: int, packed: bool = False):
        import torch

        self.slot = {id(e): i for i, e in enumerate(entries)}
        self.empty = len(entries)
        self.width = self.max_len = max(e.length for e in entries)
        lengths = np.asarray([e.length for e in entries], dtype=np.int64)
        ref = entries[0].kv[0][0]
        self.cu = torch.as_tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32, device=ref.device)
        self.padded: list = []
        self.packed: list = []
        for layer in range(n_layers):
            full = [e.full(layer) for e in entries]
            if packed:
                self.packed.append((torch.cat([k for k, _ in full]), torch.cat([v for _, v in full])))
                continue
            k = torch.zeros((len(entries) + 1, self.width, ref.shape[1], ref.shape[2]), dtype=ref.dtype,
                            device=ref.device)
            v = torch.zeros_like(k)
            for i, (fk, fv) in enumerate(full):
                k[i, : fk.shape[0]] = fk
                v[i, : fv.shape[0]] = fv
            self.padded.append((k, v))

    @staticmethod
    def of(parents: Sequence[_Entry | None], n_layers: int, packed: bool = False) -> _Bank | None:
        used = list({id(p): p for p in parents if p is not None}.values())
        return _Bank(used, n_layers, packed) if used else None


# -- one pass --------------------------------------------------------------------------------------
def _pass_state(kernel: str, lens: Sequence[int], parents: Sequence[_Entry | None], bank: _Bank | None,
                device) -> tuple[_Pass, np.ndarray, Any, Any]:
    """A pass's attention state, the row order its inputs take, and its token layout:
    (state, order, ids-builder inputs: width or None for one packed sequence, position ids)."""
    import torch

    n = len(lens)
    has = [p is not None for p in parents]
    plens = [p.length if p is not None else 0 for p in parents]
    slots = [bank.slot[id(p)] if (bank is not None and p is not None) else (bank.empty if bank is not None else 0)
             for p in parents]
    st = _Pass(kernel=kernel, bank=bank)
    if kernel == "cascade":
        order = _cascade_order(slots, has)
        st.index = _cascade_index([lens[i] for i in order], [slots[i] for i in order], [has[i] for i in order],
                                  bank.empty if bank is not None else 0, device)
        pos = np.concatenate([plens[i] + np.arange(lens[i]) for i in order])
        return st, order, None, torch.as_tensor(pos[None], device=device)
    order = np.arange(n)
    width = max(lens)
    ar = torch.arange(width, device=device)
    plen = torch.as_tensor(plens, device=device)
    if kernel == "varlen":
        st.index = _varlen_index(lens, plens, slots, width, bank.width if bank is not None else 0, device)
    else:
        mask = (ar[None, :, None] >= ar[None, None, :]).expand(n, width, width)  # causal within the row
        if bank is not None:
            st.entry = torch.as_tensor(slots, device=device)
            pre = torch.arange(bank.width, device=device)[None, None, :] < plen[:, None, None]  # (n, 1, P)
            mask = torch.cat([pre.expand(n, width, bank.width), mask], dim=2)
        st.mask = mask[:, None]
    return st, order, width, plen[:, None] + ar[None, :]


def _forward(model, rows: Sequence[Sequence[int]], parents: Sequence[_Entry | None], pad: int, *,
             bank: _Bank | None = None, keep_kv: bool, head: Callable | None, kernel: str = "sdpa"):
    """One packed pass over ``rows`` (token lists after their ``parents``' prefixes, whose keys and
    values ``bank`` holds; built here when not given), with attention ``kernel``.

    Returns the new entries (``keep_kv``) or ``head(last_hidden)`` (the last real token's hidden
    state per row, (rows, hidden)), in the order of ``rows``.
    """
    import torch

    dev = model.device
    n_layers = len(_decoder_layers(model))
    lens = [len(r) for r in rows]
    if bank is None and any(p is not None for p in parents):
        bank = _Bank.of(parents, n_layers, packed=kernel == "cascade")
    st, order, width, pos = _pass_state(kernel, lens, parents, bank, dev)
    st.keep_kv = keep_kv
    if width is None:  # one packed sequence
        ids = torch.as_tensor(np.concatenate([np.asarray(rows[i], dtype=np.int64) for i in order])[None])
    else:
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : lens[i]] = torch.as_tensor(r, dtype=torch.long)
    _STATE.current = st
    try:
        out = model.get_decoder()(input_ids=ids.to(dev), position_ids=pos, use_cache=False)
    finally:
        _STATE.current = None
    plens = [p.length if p is not None else 0 for p in parents]
    if width is None:
        starts = np.empty(len(rows), dtype=np.int64)
        starts[order] = np.concatenate([[0], np.cumsum([lens[i] for i in order])])[:-1]
    if keep_kv:
        new = []
        for i, p in enumerate(parents):
            kv = []
            for layer in range(n_layers):
                k, v = st.capture[layer]
                if width is None:
                    sl = slice(int(starts[i]), int(starts[i]) + lens[i])
                    kv.append((k[0, :, sl].transpose(0, 1).contiguous(), v[0, :, sl].transpose(0, 1).contiguous()))
                else:
                    kv.append((k[i, :, :lens[i]].transpose(0, 1).contiguous(),
                               v[i, :, :lens[i]].transpose(0, 1).contiguous()))
            new.append(_Entry(parent=p, kv=kv, length=plens[i] + lens[i]))
        return new
    if width is None:
        last = torch.as_tensor(starts + np.asarray(lens) - 1, device=dev)
        hidden = out.last_hidden_state[0, last]
    else:
        last = torch.as_tensor(lens, device=dev) - 1
        hidden = out.last_hidden_state[torch.arange(len(rows), device=dev), last]
    assert head is not None
    return head(hidden)


def _label_head(model, label_sets: Sequence[Sequence[int]]) -> Callable:
    """hidden (rows, d) -> (rows, n_labels) log P(label): label logits in float32, the vocabulary's
    normaliser in the model's dtype; the model's own logits where its head is not a plain matrix."""
    import torch

    head = model.get_output_embeddings()
    cfg = model.config
    plain = (isinstance(head, torch.nn.Linear)
             and not any(getattr(cfg, a, None) not in (None, 1, 1.0)
                         for a in ("final_logit_softcapping", "logit_scale", "logits_scaling")))
    flat = sorted({t for s in label_sets for t in s})
    col = {t: i for i, t in enumerate(flat)}
    w32 = head.weight[flat].float() if plain else None
    b32 = head.bias[flat].float() if plain and head.bias is not None else None

    def run(hidden):
        if plain:
            full = head(hidden).float()
            norm = torch.logsumexp(full, dim=-1, keepdim=True)
            lab = hidden.float() @ w32.T
            if b32 is not None:
                lab = lab + b32
            logp = lab - norm
            cols = [[col[t] for t in s] for s in label_sets]
        else:  # pragma: no cover - heads with scaling or soft-capping
            logp = torch.log_softmax(model.lm_head(hidden).float(), dim=-1)
            cols = [list(s) for s in label_sets]
        return torch.stack([torch.logsumexp(logp[:, c], dim=-1) for c in cols], dim=1).cpu().numpy()

    return run


# -- sizing ----------------------------------------------------------------------------------------
def row_bytes(config, suffix_len: int, prefix_len: int, dtype_bytes: int = 2) -> float:
    """Peak accelerator bytes one row of a packed pass needs beyond the weights.

    Its activations (``suffix_len`` tokens: the hidden state a few times over, the MLP's three
    intermediate tensors, and its keys/values in every layer, kept when a prefix is captured) and,
    in one layer's attention, its prefix gathered from the bank, its keys/values appended and
    repeated to every query head, the mask, and the scores should torch pick its math kernel.
    """
    d = getattr(config, "hidden_size", 1024)
    ffn = getattr(config, "intermediate_size", 4 * d)
    heads = getattr(config, "num_attention_heads", 16)
    kvh = getattr(config, "num_key_value_heads", None) or heads
    hd = getattr(config, "head_dim", None) or d // heads
    layers = getattr(config, "num_hidden_layers", 24)
    keys = prefix_len + suffix_len
    act = suffix_len * ((10 * d + 3 * ffn) + layers * 2 * kvh * hd) * dtype_bytes
    kv = keys * 2 * (2 * kvh * hd + heads * hd) * dtype_bytes
    scores = suffix_len * keys * (heads * 4 + 1)
    return float(act + kv + scores)


def auto_rows(model, suffix_len: int, prefix_len: int, *, free_bytes: int | None = None) -> int:
    """Rows per packed pass: 8 on the CPU; on CUDA as many as half the free memory holds
    (:func:`row_bytes`), at most 32,768 tokens a pass (past which one GPU gains little) and 1,024
    rows."""
    import torch

    if free_bytes is None:
        if model.device.type != "cuda":
            return 8
        free_bytes = torch.cuda.mem_get_info(model.device)[0]
    size = next(model.parameters()).element_size()
    rows = int(0.5 * free_bytes // row_bytes(model.config, suffix_len, prefix_len, size))
    return max(min(rows, _MAX_TOKENS // max(suffix_len, 1), _MAX_ROWS), 1)


def _batches(lengths: np.ndarray, prefix: np.ndarray, rows_for: Callable[[int, int], int]):
    """Index batches over rows sorted by length; each at most ``rows_for(max_len, max_prefix)`` rows."""
    order = np.argsort(lengths, kind="stable")
    out, start = [], 0
    while start < len(order):
        end = start + 1
        while end < len(order):
            s = int(lengths[order[end]])
            p = int(prefix[order[start:end + 1]].max())
            if end + 1 - start > rows_for(s, p):
                break
            end += 1
        out.append(order[start:end])
        start = end
    return out


def kernel_agrees(model, kernel: str) -> bool:
    """Once per model and kernel: the kernel computes the packed attention this module defines.

    Random queries, keys and values in the model's head shape, dtype and device, for rows with a
    prefix, with a two-level prefix and without one, go through ``kernel`` and through the same
    attention written out in float32; the relative error must stay under 2% (half precision's is
    ~0.5%). A torch whose FlashAttention is missing, returns another layout, or aligns its causal
    mask differently fails, and the next kernel is used (with a warning).
    """
    import warnings

    import torch

    done = model.__dict__.setdefault("_bayes_judge_kernels", {})
    if kernel in done:
        return bool(done[kernel])
    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", 1)
    kvh = getattr(cfg, "num_key_value_heads", None) or heads
    d = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    dtype, dev = next(model.parameters()).dtype, model.device
    g = torch.Generator(device="cpu").manual_seed(0)

    def rnd(*shape):
        return torch.randn(*shape, generator=g).to(device=dev, dtype=dtype)

    e0 = _Entry(parent=None, kv=[(rnd(64, kvh, d), rnd(64, kvh, d))], length=64)
    e1 = _Entry(parent=e0, kv=[(rnd(40, kvh, d), rnd(40, kvh, d))], length=104)
    lens, parents = [26, 11, 39, 7], [e0, None, e1, e0]
    own = [(rnd(n, heads, d), rnd(n, kvh, d), rnd(n, kvh, d)) for n in lens]  # q, k, v per row
    scale = d ** -0.5
    ref = []
    for (q, k, v), p in zip(own, parents, strict=True):
        if p is not None:
            pk, pv = p.full(0)
            k, v = torch.cat([pk, k]), torch.cat([pv, v])
        q, k, v = (x.float().transpose(0, 1) for x in (q, k, v))
        k, v = k.repeat_interleave(heads // kvh, 0), v.repeat_interleave(heads // kvh, 0)
        nq, nk = q.shape[1], k.shape[1]
        mask = torch.arange(nk, device=dev)[None, :] <= torch.arange(nq, device=dev)[:, None] + (nk - nq)
        ref.append(torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale).transpose(0, 1))
    try:
        bank = _Bank.of(parents, 1, packed=kernel == "cascade")
        st, order, width, _ = _pass_state(kernel, lens, parents, bank, dev)
        if width is None:
            q, k, v = (torch.cat([own[i][j] for i in order]).transpose(0, 1)[None] for j in range(3))
        else:
            q, k, v = (torch.zeros((len(lens), x, width, d), device=dev, dtype=dtype) for x in (heads, kvh, kvh))
            for i, (qi, ki, vi) in enumerate(own):
                q[i, :, :lens[i]], k[i, :, :lens[i]], v[i, :, :lens[i]] = (qi.transpose(0, 1), ki.transpose(0, 1),
                                                                           vi.transpose(0, 1))
        run = {"cascade": _attention_cascade, "varlen": _attention_varlen, "sdpa": _attention_sdpa}[kernel]
        with torch.inference_mode():
            out = run(st, 0, q, k, v, scale)
        if width is None:
            starts = np.concatenate([[0], np.cumsum([lens[i] for i in order])])
            got: list = [None] * len(lens)
            for j, i in enumerate(order):
                got[i] = out[0, starts[j]:starts[j + 1]]
        else:
            got = [out[i, :lens[i]] for i in range(len(lens))]
        err = float(torch.cat([(a.float() - b).flatten() for a, b in zip(got, ref, strict=True)]).norm()
                    / torch.cat([b.flatten() for b in ref]).norm())
        ok, why = err < 0.02, f"its attention differs from the reference by {err:.1%}"
    except (RuntimeError, TypeError, ValueError, IndexError) as e:  # depends on the torch build
        ok, why = False, f"it failed: {e}"
    if not ok:
        warnings.warn(f"the {kernel} attention kernel is not used: {why}", RuntimeWarning, stacklevel=3)
    done[kernel] = ok
    return ok


def choose_kernel(model) -> str:
    """``"cascade"`` where FlashAttention's ragged kernel runs and passes :func:`kernel_agrees`, then
    ``"varlen"``, else ``"sdpa"`` (the only one on the CPU and in float32)."""
    if varlen_available(model):
        for k in ("cascade", "varlen"):
            if kernel_agrees(model, k):
                return k
    return "sdpa"


# -- the whole job ---------------------------------------------------------------------------------
def packed_label_logprobs(
    lm,
    groups: Sequence[Sequence[Sequence[int]]],
    label_sets: Sequence[Sequence[int]],
    *,
    subgroups: Sequence[Sequence] | None = None,
    batch_size: int | str = "auto",
    min_prefix: int = 8,
    on_batch: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
    window: int | None = None,
    kernel: str = "auto",
    fuse_norms: bool = True,
) -> list[np.ndarray]:
    """:func:`~bayes_judge.comparator.engine.label_logprobs` with passes packed across prefixes.

    Same arguments and result. ``batch_size`` is the most rows per pass (``"auto"``:
    :func:`auto_rows`); ``window`` the prompts whose prefixes are held at once (default: three
    passes' worth, and at most 15% of the free GPU memory in prefixes). ``kernel``: the attention
    kernel: ``"cascade"`` (one packed sequence, FlashAttention's ragged kernel twice, over the own
    tokens and over each prefix where it lies in the bank, merged by log-sum-exp), ``"varlen"``
    (padded rows, the ragged kernel over copied prefixes), ``"sdpa"`` (padded rows, torch's attention
    with a mask), or ``"auto"`` (:func:`choose_kernel`). ``fuse_norms``: the model's RMS norms run as
    one kernel each (:func:`~bayes_judge.comparator.fused.fused_norms`; checked against the model's
    own norm first).

    Examples
    --------
    >>> from bayes_judge.comparator.models import load_model                      # doctest: +SKIP
    >>> lm = load_model("path/to/judge", device="cuda")                              # doctest: +SKIP
    >>> lp = packed_label_logprobs(lm, groups, [[id_A], [id_B]], subgroups=firsts)  # doctest: +SKIP
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, not {kernel!r}")
    import torch

    model, pad = lm.model, lm.tokenizer.pad_token_id
    head = _label_head(model, label_sets)
    results = [np.empty((len(p), len(label_sets))) for p in groups]
    fixed = None if batch_size == "auto" else int(batch_size)
    free = torch.cuda.mem_get_info(model.device)[0] if model.device.type == "cuda" else None

    def rows_for(s: int, p: int) -> int:  # free memory read once: the bank's growth is in the half left
        return fixed if fixed is not None else auto_rows(model, s, p, free_bytes=free)

    # plan: per group, a context prefix, first-candidate prefixes, and each prompt's prefix node
    plans = [prefix_plan(prompts, subgroups[g] if subgroups is not None else None, min_prefix)
             for g, prompts in enumerate(groups)]
    if window is None:  # three passes' worth of typical rows
        suffix = [len(groups[g][int(m)]) - L1 for g, (_, subs) in enumerate(plans) for members, L1 in subs
                  for m in members]
        prefix = [L1 for _, subs in plans for members, L1 in subs for _ in members]
        window = 3 * rows_for(int(np.median(suffix or [1])), int(np.median(prefix or [0])))
    per_window = window

    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", 1)
    kv_token = (2 * len(_decoder_layers(model)) * (getattr(cfg, "num_key_value_heads", None) or heads)
                * (getattr(cfg, "head_dim", None) or cfg.hidden_size // heads) * next(model.parameters()).element_size())
    bank_cap = 0.15 * free if free is not None else float("inf")  # a window's prefix bank, in bytes

    def bank_bytes(g: int) -> float:  # its slots (one per prefix) padded to the longest prompt
        return (len(plans[g][1]) + 1) * max(len(p) for p in groups[g]) * kv_token

    with torch.inference_mode(), _Packed(model, fuse_norms):
        if kernel == "auto":
            kernel = choose_kernel(model)
        g0 = 0
        while g0 < len(groups):
            g1, n, mem = g0, 0, 0.0
            while g1 < len(groups) and (n == 0 or (n + len(groups[g1]) <= per_window
                                                   and mem + bank_bytes(g1) <= bank_cap)):
                n += len(groups[g1])
                mem += bank_bytes(g1)
                g1 += 1
            _window(model, pad, groups, plans, range(g0, g1), head, rows_for, results, on_batch, kernel)
            g0 = g1
    return results


def prefix_plan(prompts: Sequence[Sequence[int]], keys: Sequence | None, min_prefix: int = 8
                ) -> tuple[int, list[tuple[np.ndarray, int]]]:
    """The shared prefixes of one item's prompts: ``L0`` tokens shared by all (0 when shorter than
    ``min_prefix``), and per key (first candidate) its members and the length ``L1`` of their
    shared prefix (``L0`` where it adds fewer than ``min_prefix`` tokens)."""
    codes = np.zeros(len(prompts), dtype=int)
    if keys is not None:
        codes = np.unique(np.asarray([str(k) for k in keys]), return_inverse=True)[1]

    L0 = common_prefix_len(prompts) if len(prompts) > 1 else 0
    L0 = L0 if L0 >= min_prefix else 0
    subs = []
    for key in np.unique(codes):
        members = np.nonzero(codes == key)[0]
        L1 = common_prefix_len([prompts[int(m)] for m in members]) if len(members) > 1 else 0
        subs.append((members, L1 if L1 - L0 >= min_prefix else L0))
    return L0, subs


def _run_prefixes(model, pad, rows, parents, rows_for, kernel):
    """Entries for prefix token lists ``rows`` on top of ``parents``, in memory-sized passes."""
    out: list[_Entry | None] = [None] * len(rows)
    lengths = np.asarray([len(r) for r in rows])
    plen = np.asarray([p.length if p is not None else 0 for p in parents])
    for idx in _batches(lengths, plen, rows_for):
        new = _forward(model, [rows[i] for i in idx], [parents[i] for i in idx], pad, keep_kv=True, head=None,
                       kernel=kernel)
        for i, e in zip(idx, new, strict=True):
            out[int(i)] = e
    return out


def _window(model, pad, groups, plans, gs, head, rows_for, results, on_batch, kernel) -> None:
    # 1. context prefixes, batched across the window's groups
    ctx_groups = [g for g in gs if plans[g][0] > 0]
    ctx = dict(zip(ctx_groups, _run_prefixes(model, pad, [groups[g][0][:plans[g][0]] for g in ctx_groups],
                                             [None] * len(ctx_groups), rows_for, kernel), strict=True))
    # 2. first-candidate prefixes on top of them
    ext_rows, ext_parents, ext_keys = [], [], []
    for g in gs:
        L0, subs = plans[g]
        for s, (members, L1) in enumerate(subs):
            if L1 > L0:
                ext_rows.append(groups[g][int(members[0])][L0:L1])
                ext_parents.append(ctx.get(g))
                ext_keys.append((g, s))
    ext = dict(zip(ext_keys, _run_prefixes(model, pad, ext_rows, ext_parents, rows_for, kernel),
                   strict=True))
    # 3. every prompt's tokens after its prefix, packed across the window
    units, rows, parents = [], [], []
    for g in gs:
        L0, subs = plans[g]
        for s, (members, L1) in enumerate(subs):
            node = ext.get((g, s), ctx.get(g))
            L = L1 if (g, s) in ext else (L0 if g in ctx else 0)
            for m in members:
                units.append((g, int(m)))
                rows.append(groups[g][int(m)][L:])
                parents.append(node)
    lengths = np.asarray([len(r) for r in rows])
    plen = np.asarray([p.length if p is not None else 0 for p in parents])
    bank = _Bank.of(parents, len(_decoder_layers(model)), packed=kernel == "cascade")  # once for the window
    for idx in _batches(lengths, plen, rows_for):
        lp = _forward(model, [rows[i] for i in idx], [parents[i] for i in idx], pad, bank=bank, keep_kv=False,
                      head=head, kernel=kernel)
        got: dict[int, list] = {}
        for j, i in enumerate(idx):
            g, m = units[int(i)]
            results[g][m] = lp[j]
            got.setdefault(g, []).append((m, j))
        if on_batch is not None:
            for g, pairs in got.items():
                ms = np.asarray([m for m, _ in pairs])
                on_batch(g, ms, lp[[j for _, j in pairs]])
