"""The packed path (prompts of many prefixes in one pass) against the one-prompt-per-forward loop."""

from __future__ import annotations

import numpy as np
import pytest
from test_engine import _prompts

from bayes_judge.comparator.engine import generate, label_logprobs
from bayes_judge.comparator.packed import (
    auto_rows,
    packed_label_logprobs,
    row_bytes,
    supports_packing,
)


def _labels(lm):
    enc = lambda w: lm.tokenizer.encode(w, add_special_tokens=False)[0]  # noqa: E731
    return [[enc(" A")], [enc(" B")]]


def _p(lp):
    return 1 / (1 + np.exp(lp[:, 1] - lp[:, 0]))


@pytest.fixture(scope="module")
def work(lm):
    prompts, first = _prompts(lm, n=4)  # 12 prompts sharing a context, 4 first candidates
    labels = _labels(lm)
    naive = np.concatenate([label_logprobs(lm, [[p]], labels, batch_size=1, kv_cache=False, pack=False)[0]
                            for p in prompts])
    return prompts, first, labels, naive


@pytest.mark.parametrize("batch_size, window", [(5, None), (3, 4), (64, 100)])
def test_packed_equals_the_naive_loop(lm, work, batch_size, window):
    prompts, first, labels, naive = work
    groups, subs = [prompts[:7], prompts[7:]], [first[:7], first[7:]]
    out = packed_label_logprobs(lm, groups, labels, subgroups=subs, batch_size=batch_size, min_prefix=4,
                                window=window)
    got = np.concatenate(out)
    assert np.abs(_p(got) - _p(naive)).max() <= 1e-4
    assert np.abs(got - naive).max() <= 1e-3  # the label mass too (its normaliser, float32 on the CPU)
    assert np.ptp(_p(naive)) > 1e-3  # the prompts do differ


def test_packed_without_shared_prefixes_and_singletons(lm, work):
    prompts, first, labels, naive = work
    # one group per prompt: no context prefix, no first-candidate prefix; rows of no prefix at all
    out = packed_label_logprobs(lm, [[p] for p in prompts[:5]], labels, batch_size=4)
    assert np.abs(_p(np.concatenate(out)) - _p(naive[:5])).max() <= 1e-4
    # a prefix too short to cache (min_prefix) next to groups that have one
    out = packed_label_logprobs(lm, [prompts[:3], prompts[3:6]], labels, subgroups=[first[:3], first[3:6]],
                                batch_size=4, min_prefix=10_000)
    assert np.abs(_p(np.concatenate(out)) - _p(naive[:6])).max() <= 1e-4


def test_label_logprobs_packs_when_asked_and_reports_every_prompt_once(lm, work):
    prompts, first, labels, naive = work
    seen = []
    out = label_logprobs(lm, [prompts[:5], prompts[5:]], labels, subgroups=[first[:5], first[5:]], batch_size=4,
                         min_prefix=4, pack=True, on_batch=lambda g, idx, lp: seen.extend((g, int(i)) for i in idx))
    assert sorted(seen) == sorted([(0, i) for i in range(5)] + [(1, i) for i in range(len(prompts) - 5)])
    assert np.abs(_p(np.concatenate(out)) - _p(naive)).max() <= 1e-4


def test_auto_rows_follow_memory_and_model_size(lm):
    assert auto_rows(lm.model, 100, 700) == 8  # on the CPU
    small = auto_rows(lm.model, 100, 700, free_bytes=40 * 2**30)
    assert 1 <= auto_rows(lm.model, 100, 700, free_bytes=2**28) < small <= 32_768 // 100
    cfg = lm.model.config
    assert row_bytes(cfg, 100, 700) < row_bytes(cfg, 100, 1400) < row_bytes(cfg, 200, 1400)


def test_packing_is_refused_where_attention_is_not_plain(lm):
    assert supports_packing(lm.model, 4096)
    cfg = lm.model.config
    old = getattr(cfg, "sliding_window", None), getattr(cfg, "use_sliding_window", None)
    try:
        cfg.sliding_window, cfg.use_sliding_window = 512, True
        assert not supports_packing(lm.model, 4096)  # a window shorter than the prompts
        assert supports_packing(lm.model, 300)       # never reached
    finally:
        cfg.sliding_window, cfg.use_sliding_window = old


def test_sampled_rows_do_not_depend_on_their_batch(lm, work):
    prompts, *_ = work
    alone = generate(lm, [prompts[0]], max_new_tokens=3, n_samples=3, temperature=1.0, seeds=[11])
    batched = generate(lm, [prompts[4], prompts[0], prompts[9]], max_new_tokens=3, n_samples=3, temperature=1.0,
                       seeds=[5, 11, 7])
    assert batched[1] == alone[0]
    other = generate(lm, [prompts[0]], max_new_tokens=3, n_samples=3, temperature=1.0, seeds=[12])
    many = generate(lm, [prompts[0]], max_new_tokens=3, n_samples=12, temperature=1.0, seeds=[11])
    assert many[0][:3] == alone[0]
    assert len(set(many[0])) > 1 or other[0] != alone[0]  # the draws are draws
    with pytest.raises(ValueError, match="2 seeds for 1 prompts"):
        generate(lm, [prompts[0]], max_new_tokens=2, n_samples=1, temperature=1.0, seeds=[1, 2])


def _reference_varlen(align_end: bool = True, lse_ok: bool = True):
    """FlashAttention's varlen kernel written out row by row (the CPU has no FlashAttention): causal
    aligned to the end of each row's keys, or, to check the self-test, to their start; and its
    log-sum-exp, or (``lse_ok=False``) zeros in its place."""
    import torch

    def run(q, k, v, cu_q, cu_k, max_q, max_k, scale, causal=True, lse=False):
        out, lses = [], []
        for r in range(len(cu_q) - 1):
            qr = q[cu_q[r]:cu_q[r + 1]].transpose(0, 1).float()     # (H, n_q, d)
            kr, vr = (x[cu_k[r]:cu_k[r + 1]].transpose(0, 1).float() for x in (k, v))
            rep = qr.shape[0] // kr.shape[0]
            kr, vr = kr.repeat_interleave(rep, 0), vr.repeat_interleave(rep, 0)
            nq, nk = qr.shape[1], kr.shape[1]
            shift = nk - nq if align_end else 0
            mask = torch.arange(nk)[None, :] <= torch.arange(nq)[:, None] + shift
            if not causal:
                mask = torch.ones_like(mask)
            scores = (qr @ kr.transpose(1, 2)) * scale
            scores = scores.masked_fill(~mask, float("-inf"))
            lses.append(torch.logsumexp(scores, -1))                 # (H, n_q)
            out.append((torch.softmax(scores, -1) @ vr).transpose(0, 1).to(q.dtype))
        o, ls = torch.cat(out), torch.cat(lses, dim=1)
        return (o, ls if lse_ok else torch.zeros_like(ls)) if lse else o

    return run


@pytest.mark.parametrize("kernel", ["varlen", "cascade"])
def test_ragged_kernels_equal_the_naive_loop(lm, work, monkeypatch, kernel):
    from bayes_judge.comparator import packed

    monkeypatch.setattr(packed, "_flash_varlen", _reference_varlen())
    prompts, first, labels, naive = work
    out = packed_label_logprobs(lm, [prompts[:7], prompts[7:]], labels, subgroups=[first[:7], first[7:]],
                                batch_size=5, min_prefix=4, kernel=kernel)
    assert np.abs(_p(np.concatenate(out)) - _p(naive)).max() <= 1e-4
    out = packed_label_logprobs(lm, [[p] for p in prompts[:4]], labels, batch_size=3, kernel=kernel)
    assert np.abs(_p(np.concatenate(out)) - _p(naive[:4])).max() <= 1e-4
    seen = []  # rows reordered inside a pass (cascade groups them by prefix) still report their own index
    out = packed_label_logprobs(lm, [prompts[:6], prompts[6:]], labels, subgroups=[first[:6], first[6:]],
                                batch_size=64, min_prefix=4, kernel=kernel,  # noqa: E501
                                on_batch=lambda g, idx, lp: seen.extend(zip([g] * len(idx), idx.tolist(), _p(lp), strict=True)))
    ref = {(g, i): x for g, (lo, hi) in enumerate([(0, 6), (6, 12)]) for i, x in enumerate(_p(naive[lo:hi]))}
    assert max(abs(x - ref[(g, i)]) for g, i, x in seen) <= 1e-4 and len(seen) == 12


def test_kernel_self_check_catches_a_misaligned_kernel(lm, monkeypatch):
    from bayes_judge.comparator import packed

    monkeypatch.setattr(packed, "_flash_varlen", _reference_varlen())
    monkeypatch.setitem(lm.model.__dict__, "_bayes_judge_kernels", {})
    assert packed.kernel_agrees(lm.model, "cascade") and packed.kernel_agrees(lm.model, "varlen")
    assert packed.kernel_agrees(lm.model, "sdpa")
    # causal aligned to the start of the keys: varlen (prefix and own keys in one sequence) is wrong,
    # cascade (own tokens alone: as many keys as queries) is not affected
    monkeypatch.setattr(packed, "_flash_varlen", _reference_varlen(align_end=False))
    monkeypatch.setitem(lm.model.__dict__, "_bayes_judge_kernels", {})
    with pytest.warns(RuntimeWarning, match="the varlen attention kernel is not used: its attention differs"):
        assert not packed.kernel_agrees(lm.model, "varlen")
    assert packed.kernel_agrees(lm.model, "cascade")
    # a log-sum-exp that is not the scores' (another layout, say): cascade's merge is wrong
    monkeypatch.setattr(packed, "_flash_varlen", _reference_varlen(lse_ok=False))
    monkeypatch.setitem(lm.model.__dict__, "_bayes_judge_kernels", {})
    with pytest.warns(RuntimeWarning, match="the cascade attention kernel is not used"):
        assert not packed.kernel_agrees(lm.model, "cascade")
    assert not packed.varlen_available(lm.model)  # float32 on the CPU
    assert packed.choose_kernel(lm.model) == "sdpa"
    with pytest.raises(ValueError, match="kernel must be one of"):
        packed_label_logprobs(lm, [[[1, 2, 3]]], [[1], [2]], kernel="flash")


@pytest.mark.parametrize("fuse", [True, False])
def test_packed_scores_equal_the_naive_loop_with_and_without_fused_norms(lm, work, fuse):
    prompts, first, labels, naive = work
    got = packed_label_logprobs(lm, [prompts], labels, subgroups=[first], batch_size=5, fuse_norms=fuse)[0]
    assert np.abs(_p(got) - _p(naive)).max() < 1e-5
    assert not any("forward" in m.__dict__ for m in lm.model.modules())
