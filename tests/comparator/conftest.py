"""Fixtures for the comparator tests: the embedded default judge, loaded once per session.

`make test` installs the model (`bayes-judge models install`); a missing model is an error with
that instruction, never a skip.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the comparator needs the llm extra: pip install -e '.[llm]'")


@pytest.fixture(scope="session")
def lm():
    from bayes_judge.comparator.install import MissingModelError
    from bayes_judge.comparator.models import load_model

    try:
        return load_model()
    except MissingModelError as err:  # pragma: no cover - set-up problem
        pytest.fail(str(err))


@pytest.fixture(scope="session")
def tiny():
    """Three short candidate texts with one context."""
    import pandas as pd

    texts = {
        "x": "The cat sat on the mat.",
        "y": "Mat cat the on sat.",
        "z": "A cat was sitting on a mat.",
    }
    pairs = pd.DataFrame({"item": ["s", "s", "s"], "a": ["x", "x", "y"], "b": ["y", "z", "z"]})
    return texts, pairs, {"s": "The cat sat on the mat all day long."}


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1, serving the embedded judge's GGUF
    as ``smollm2`` (started once per session, ~2-5 s; stopped at the end)."""
    pytest.importorskip("llama_cpp.server.app", reason="the llama.cpp server tests need llama-cpp-python[server]: "
                        "pip install -e '.[server]' (compiles llama.cpp, ~15 min on 2 cores)")
    from _servers import LlamaServer

    srv = LlamaServer(log=tmp_path_factory.mktemp("llama") / "server.log").start()
    yield srv
    srv.stop()
