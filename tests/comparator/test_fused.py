"""Fused RMS norms: swapped only where they compute the model's own norm, restored after."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bayes_judge.comparator.fused import fusable_norms, fused_norms


def _llama(**kw):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, **kw)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).eval()
    for m in model.modules():  # weights other than ones, so a wrong formula shows
        if type(m).__name__.endswith("RMSNorm"):
            m.weight.data.uniform_(0.5, 1.5)
    return model


class _GemmaLike(torch.nn.Module):
    """An RMS norm of another formula: x̂ · (1 + w)."""

    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(d).uniform_(-0.5, 0.5))
        self.eps = 1e-6

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps) * (1.0 + self.weight.float())).to(x.dtype)


_GemmaLike.__name__ = "GemmaLikeRMSNorm"


def test_fused_norms_compute_the_models_norms_and_are_restored():
    model = _llama()
    ids = torch.randint(0, 64, (2, 9))
    with torch.inference_mode():
        ref = model(ids).logits
        with fused_norms(model) as n:
            assert n == 5  # two a layer, and the final one
            assert all("forward" in m.__dict__ for m in fusable_norms(model))
            got = model(ids).logits
        assert all("forward" not in m.__dict__ for m in model.modules())
        again = model(ids).logits
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-6)
    assert torch.equal(again, ref)


def test_a_norm_of_another_formula_keeps_its_own_forward():
    model = _llama()
    model.model.norm = _GemmaLike(16)
    with fused_norms(model) as n:
        assert n == 4  # the layers' norms only
        assert "forward" not in model.model.norm.__dict__
    hooked = _llama()
    own = hooked.model.norm.forward
    hooked.model.norm.forward = lambda x: own(x)  # a hook already replaced it (accelerate)
    with fused_norms(hooked) as n:
        assert n == 4
    with fused_norms(hooked, enabled=False) as n:
        assert n == 0


def test_bfloat16_norms_round_once():
    model = _llama().to(torch.bfloat16)
    x = torch.randn(4, 7, 16).to(torch.bfloat16) * 4
    norm = model.model.norm
    with torch.inference_mode():
        ref = norm(x).float()
        with fused_norms(model):
            got = norm(x).float()
        exact = torch.nn.functional.rms_norm(x.float(), (16,), norm.weight.float(), norm.variance_epsilon)
    ulp = 2.0 ** (torch.floor(torch.log2(exact.abs().clamp_min(1e-3))) - 7)
    assert float(((got - ref).abs() / ulp).max()) <= 1.0  # at most one bfloat16 step from the eager norm
    assert float((got - exact).abs().mean()) <= float((ref - exact).abs().mean())  # and no farther from float32


@pytest.mark.parametrize("arch, fused", [("Qwen2", 5), ("Qwen3", 9), ("Mistral", 5), ("Gemma", 0), ("Olmo2", 9)])
def test_other_architectures_score_as_their_naive_loop(lm, arch, fused):
    """Per architecture: the norms that compute ``F.rms_norm`` are fused (Qwen3's per-head query and
    key norms too, Olmo2's norms after the projections), Gemma's ``1 + w`` norm is not, and the
    packed scores equal the one-prompt loop in float32 either way."""
    import transformers

    from bayes_judge.comparator.engine import label_logprobs
    from bayes_judge.comparator.models import LoadedModel
    from bayes_judge.comparator.packed import packed_label_logprobs, supports_packing

    cfg = getattr(transformers, f"{arch}Config")(
        vocab_size=len(lm.tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=512)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
    for m in model.modules():  # weights other than their init, so a wrong formula shows
        if type(m).__name__.endswith("RMSNorm"):
            m.weight.data.uniform_(0.5, 1.5)
    judge = LoadedModel(model=model, tokenizer=lm.tokenizer, is_seq2seq=False, name=arch, fingerprint=arch,
                        max_length=512, device="cpu", info={})
    assert supports_packing(model, 64)
    with fused_norms(model) as n:
        assert n == fused
    enc = lm.tokenizer.encode
    context = enc("The article says the cat sat on the mat all day long, and nobody minded at all.")
    prompts = [context + enc(f" Summary {a} against summary {b}: which is better? Answer:") for a in "xyz" for b in "uv"]
    labels = [[enc(" A")[0]], [enc(" B")[0]]]
    naive = np.concatenate([label_logprobs(judge, [[p]], labels, batch_size=1, kv_cache=False, pack=False)[0]
                            for p in prompts])
    packed = packed_label_logprobs(judge, [prompts], labels, subgroups=[[p[len(context)] for p in prompts]],
                                   batch_size=4, min_prefix=4)[0]
    p = lambda lp: 1 / (1 + np.exp(lp[:, 1] - lp[:, 0]))  # noqa: E731
    assert np.abs(p(packed) - p(naive)).max() < 1e-5
