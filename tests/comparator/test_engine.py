"""Batched scoring with the shared-prefix KV cache equals a one-prompt-per-forward loop."""

import numpy as np
import pytest

from bayes_judge.comparator.engine import (
    _cache_arg,
    _output_cache,
    label_logprobs,
)
from bayes_judge.comparator.packed import common_prefix_len


def test_common_prefix_len():
    assert common_prefix_len([[1, 2, 3, 4], [1, 2, 5, 6], [1, 2, 3]]) == 2
    assert common_prefix_len([[1, 2, 3], [1, 2, 3]]) == 2  # leaves one token to run
    assert common_prefix_len([[1], [1, 2]]) == 0
    assert common_prefix_len([[7, 2], [1, 2]]) == 0
    assert common_prefix_len([]) == 0


def test_cache_keyword_follows_the_installed_transformers():
    """5.24 renamed ``past_key_values`` to ``cache``; the old name raises a FutureWarning there."""

    class New:
        def forward(self, input_ids=None, cache=None, use_cache=None, **kwargs): ...

    class Old:
        def forward(self, input_ids=None, past_key_values=None, use_cache=None, **kwargs): ...

    assert _cache_arg(New()) == "cache"
    assert _cache_arg(Old()) == "past_key_values"
    assert _output_cache({"logits": 0, "cache": "c"}) == "c"
    assert _output_cache({"logits": 0, "past_key_values": "p"}) == "p"
    assert _output_cache({"logits": 0}) is None


def _prompts(lm, n=4):
    tok = lm.tokenizer
    ctx = "Passage: " + " ".join(f"Sentence {k} talks about the weather in town." for k in range(6))
    summaries = [f"Summary number {k}: the weather was {w}." for k, w in enumerate(["fine", "wet", "cold and grey", "hot"][:n])]
    prompts, first = [], []
    for i in range(n):
        for j in range(n):
            if i != j:
                msg = f"{ctx}\n\nSummary A: {summaries[i]}\n\nSummary B: {summaries[j]}\n\nWhich is better?"
                s = tok.apply_chat_template([{"role": "user", "content": msg}], tokenize=False,
                                            add_generation_prompt=True) + "Summary"
                prompts.append(tok(s, add_special_tokens=False)["input_ids"])
                first.append(i)
    return prompts, first


def test_cached_batched_equals_naive(lm):
    prompts, first = _prompts(lm, n=3)
    labels = [[lm.tokenizer.encode(" A", add_special_tokens=False)[0]],
              [lm.tokenizer.encode(" B", add_special_tokens=False)[0]]]
    naive = np.concatenate([label_logprobs(lm, [[p]], labels, batch_size=1, kv_cache=False)[0] for p in prompts])
    fast = label_logprobs(lm, [prompts], labels, subgroups=[first], batch_size=4, min_prefix=4)[0]
    plain_batched = label_logprobs(lm, [prompts], labels, batch_size=4, kv_cache=False)[0]
    p = lambda lp: 1 / (1 + np.exp(lp[:, 1] - lp[:, 0]))  # noqa: E731
    np.testing.assert_allclose(p(fast), p(naive), atol=1e-4)
    np.testing.assert_allclose(p(plain_batched), p(naive), atol=1e-4)
    assert np.ptp(p(naive)) > 1e-4  # the prompts do differ


def test_callback_reports_every_prompt_once(lm):
    prompts, first = _prompts(lm, n=3)
    labels = [[330], [389]]
    seen = []
    label_logprobs(lm, [prompts[:3], prompts[3:]], labels, subgroups=[first[:3], first[3:]], batch_size=2,
                   on_batch=lambda g, idx, lp: seen.extend((g, int(i)) for i in idx))
    assert sorted(seen) == sorted([(0, i) for i in range(3)] + [(1, i) for i in range(3)])


@pytest.mark.parametrize("bad", [[[1, 2]], [[0], [1, 2]]])
def test_label_sets_are_given_as_token_lists(lm, bad):
    prompts, _ = _prompts(lm, n=2)
    out = label_logprobs(lm, [prompts], bad, batch_size=2)[0]
    assert out.shape == (2, len(bad)) and np.isfinite(out).all()
