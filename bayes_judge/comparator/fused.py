"""The model's RMS norms as one fused kernel each, while the comparator scores (checked per model).

A transformers RMSNorm (Llama, Mistral, Qwen, SmolLM, ...) runs as six elementwise kernels in eager
mode: a cast to float32, the square, the mean, the reciprocal square root, the product, the cast back,
then the weight. With two norms a layer, they move ~70 bytes a hidden unit a token, about a fifth of
a 7B judge's time on a GPU (``benchmarks/results/bench_comparator_gpu.md``'s profile: elementwise
kernels 28%). :func:`torch.nn.functional.rms_norm` computes the same ``x / sqrt(mean(x²) + eps) · w``
in one kernel on CUDA (and faster on the CPU too), in float32 internally, rounding once where the
eager module rounds before the weight.

:func:`fused_norms` swaps a model's norms for it within a ``with`` block, instance by instance, and
only those whose forward it reproduces: once per model, each norm class's first instance is run on
random inputs in float32 against the fused call with the instance's own weight and epsilon (relative
error < 1e-5). A norm of another formula (Gemma's ``1 + w``, a bias, an offset) fails and keeps its
own forward, as does a module whose forward a hook already replaced (accelerate's device maps).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["fused_norms", "fusable_norms"]

_CHECKED = "_bayes_judge_fused_norms"


def _eps(module) -> float | None:
    for name in ("variance_epsilon", "eps"):
        value = getattr(module, name, None)
        if isinstance(value, float):
            return value
    return None


def _candidate(module) -> bool:
    """An RMS norm with one weight vector and an epsilon, whose forward is still its class's."""
    import torch

    w = getattr(module, "weight", None)
    return (type(module).__name__.endswith("RMSNorm") and isinstance(w, torch.nn.Parameter) and w.ndim == 1
            and _eps(module) is not None and getattr(module, "bias", None) is None
            and "forward" not in module.__dict__ and len(list(module.parameters())) == 1)


def _agrees(module) -> bool:
    """The module's own forward equals ``F.rms_norm`` with its weight and epsilon, in float32."""
    import torch
    import torch.nn.functional as F

    w, eps = module.weight, _eps(module)
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(8, w.shape[0], generator=g)
    x[4:] *= 50.0  # large activations too
    x = x.to(w.device)
    try:
        with torch.inference_mode():
            ref = module(x).float()
            got = F.rms_norm(x, (w.shape[0],), w.float(), eps)
    except (RuntimeError, TypeError, ValueError):
        return False
    return bool(ref.shape == got.shape and ((ref - got).norm() <= 1e-5 * ref.norm()).item())


def fusable_norms(model) -> list:
    """The model's RMS norm modules that :func:`torch.nn.functional.rms_norm` reproduces.

    Each norm class is checked once per model on its first instance (the answer kept on the model);
    every instance of an agreeing class is returned.
    """
    verdicts: dict[type, bool] = model.__dict__.setdefault(_CHECKED, {})
    found = []
    for module in model.modules():
        if not _candidate(module):
            continue
        cls = type(module)
        if cls not in verdicts:
            verdicts[cls] = _agrees(module)
        if verdicts[cls]:
            found.append(module)
    return found


@contextmanager
def fused_norms(model, enabled: bool = True) -> Iterator[int]:
    """Within the block, the model's agreeing RMS norms run ``F.rms_norm`` (one kernel each).

    Yields the number of norms swapped; their own forwards are restored on exit.

    Examples
    --------
    >>> import torch
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> cfg = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
    ...                   num_attention_heads=2, num_key_value_heads=1)
    >>> model = LlamaForCausalLM(cfg).eval()
    >>> with fused_norms(model) as n:
    ...     print(n)
    5
    """
    import torch.nn.functional as F

    swapped = fusable_norms(model) if enabled else []
    for module in swapped:
        shape, eps = (module.weight.shape[0],), _eps(module)

        def forward(x, _m=module, _shape=shape, _eps=eps):
            if x.dtype != _m.weight.dtype:  # a mixed-precision norm keeps its own promotion rules
                return type(_m).forward(_m, x)
            return F.rms_norm(x, _shape, _m.weight, _eps)

        module.forward = forward
    try:
        yield len(swapped)
    finally:
        for module in swapped:
            module.__dict__.pop("forward", None)
