"""Encoder-decoder judges (FlanT5 style): the first decoder token is the answer."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def t5_folder(lm, tmp_path_factory):
    """A tiny randomly initialised T5 with the default judge's tokenizer, saved as a local folder."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    tok = lm.tokenizer
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_ff=64, d_kv=8, num_layers=2, num_heads=4,
                   decoder_start_token_id=tok.pad_token_id, pad_token_id=tok.pad_token_id,
                   eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(cfg)
    out = tmp_path_factory.mktemp("t5")
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


# a randomly initialised model: its label words get almost none of the next token's probability,
# which the judge rightly names (UninformativeJudgeWarning); the test is about the mechanics
@pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning")
def test_seq2seq_modes(t5_folder, tiny):
    import warnings

    import bayes_judge as bj
    from bayes_judge.comparator import Comparator
    from bayes_judge.comparator.endpoint import MissingLabelsWarning

    texts, pairs, ctx = tiny
    judge = Comparator(t5_folder, batch_size=2)
    assert judge.lm.is_seq2seq and not judge.chat
    df = judge.compare(pairs, texts, ctx, symmetric=True, progress=False)
    bj.validate_judgments(df)
    one_by_one = Comparator(judge.lm, batch_size=1).compare(pairs, texts, ctx, symmetric=True, progress=False)
    np.testing.assert_allclose(df["p_a"], one_by_one["p_a"], atol=1e-4)  # padding does not leak
    with warnings.catch_warnings():  # the random model's answers may name no choice: NaN, said (MissingLabelsWarning)
        warnings.simplefilter("ignore", MissingLabelsWarning)
        sampled = Comparator(judge.lm, mode="sample", n_samples=2, max_new_tokens=3).compare(
            pairs.iloc[:1], texts, ctx, progress=False)
    assert sampled[["n_a", "n_b", "n_tie", "n_unparsed"]].sum(axis=1).iloc[0] == 2
    assert (sampled["p_a"].isna() == sampled["n_unparsed"].eq(2)).all()  # none parsed: no probability
