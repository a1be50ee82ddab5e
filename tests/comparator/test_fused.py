"""Fused RMS norms: swapped only where they compute the model's own norm, restored after."""

from __future__ import annotations

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


def test_bfloat16_norms_round_once(monkeypatch):
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
