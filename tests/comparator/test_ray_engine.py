"""``compare(..., engine="ray")``: the comparisons as a Ray Dataset, ``map_batches`` over two actors
that each hold a judge, on a local two-CPU Ray cluster; the judgments equal the in-process run's."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="the Ray engine needs the 'ray' extra: pip install -e '.[ray]'")

from bayes_judge.comparator import Comparator, PromptTemplate, get_template  # noqa: E402

pytestmark = [
    # SmolLM2 says "A" whatever the order: diagnosed (rightly) as uninformative, in both engines
    pytest.mark.filterwarnings("ignore::bayes_judge.diagnose.UninformativeJudgeWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster with two CPU workers and two logical GPUs (Ray's resources, not devices:
    it schedules by them and sets each actor's CUDA_VISIBLE_DEVICES), no dashboard, node address
    127.0.0.1, no usage reporting."""
    old = os.environ.get("RAY_USAGE_STATS_ENABLED")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("RAY_USAGE_STATS_ENABLED", None)
        else:
            os.environ["RAY_USAGE_STATS_ENABLED"] = old


def test_ray_fan_out_equals_the_in_process_run(lm, tiny, ray_cluster, tmp_path):
    texts, pairs, ctx = tiny
    local = Comparator(lm).compare(pairs, texts, ctx, symmetric=True, progress=False)
    judge = Comparator(lm)  # the actors rebuild it from the folder it was loaded from
    store = tmp_path / "ray.sqlite"
    fanned = judge.compare(pairs, texts, ctx, symmetric=True, store=store, progress=False, engine="ray",
                           ray_options={"num_actors": 2, "batch_size": 3})
    cols = ["item", "a", "b", "judge", "winner", "order", "pair_a", "pair_b"]
    pd.testing.assert_frame_equal(fanned[cols], local[cols])
    # batches of 3 instead of one batch of 6 change the float sums in the last digits only
    np.testing.assert_allclose(fanned["p_a"], local["p_a"], atol=1e-4)
    np.testing.assert_allclose(fanned["label_mass"], local["label_mass"], atol=1e-5)
    assert fanned.attrs["diagnosis"]["flags"] == local.attrs["diagnosis"]["flags"]
    # resumable like the local engine: a rerun on the store judges nothing
    again = judge.compare(pairs, texts, ctx, symmetric=True, store=store, progress=False, engine="ray")
    pd.testing.assert_series_equal(again["p_a"], fanned["p_a"])


def test_one_actor_per_gpu(lm, tiny, ray_cluster):
    texts, pairs, ctx = tiny
    local = Comparator(lm).compare(pairs, texts, ctx, progress=False)
    fanned = Comparator(lm).compare(pairs, texts, ctx, progress=False, engine="ray",
                                    ray_options={"num_gpus": 1, "batch_size": 1})
    run = fanned.attrs["ray"]
    assert run["actors"] == 2 and run["num_gpus"] == 1  # the cluster's two GPUs, one judge each
    assert run["gpus"] and set(run["gpus"]) <= {"0", "1"}
    np.testing.assert_allclose(fanned["p_a"], local["p_a"], atol=1e-4)
    half = Comparator(lm).compare(pairs, texts, ctx, symmetric=True, progress=False, engine="ray",
                                  ray_options={"num_gpus": 0.5, "num_cpus": 0.5, "batch_size": 1})
    assert half.attrs["ray"]["actors"] == 4  # two judges on each of the two GPUs (6 batches to share)
    assert "ray" not in local.attrs


def test_ray_cuts_a_long_context_as_one_local_run_and_says_so(lm, ray_cluster):
    """The driver cuts each item's context on all of its planned prompts and warns; the actors'
    one-comparison batches then judge the prompts of the local run (each batch cut its own before)."""
    from bayes_judge.comparator import ContextTooLongWarning

    long_ctx = {"s": " ".join(f"Sentence {i}: the cat sat on the mat all day long." for i in range(40))}
    texts = {"x": "The cat sat.", "y": "Cat mat sat.",
             "z": "A cat was sitting on a mat, and it stayed there for a very long time while the sun moved "
                  "across the sky and the birds sang outside the window of the little house."}
    pairs = [("s", "x", "y"), ("s", "x", "z"), ("s", "y", "z")]
    with pytest.warns(ContextTooLongWarning, match="context truncated"):
        local = Comparator(lm, max_length=300).compare(pairs, texts, long_ctx, progress=False)
    with pytest.warns(ContextTooLongWarning, match="context truncated"):
        fanned = Comparator(lm, max_length=300).compare(pairs, texts, long_ctx, progress=False, engine="ray",
                                                        ray_options={"num_actors": 1, "batch_size": 1})
    np.testing.assert_allclose(fanned["p_a"], local["p_a"], atol=1e-4)


def test_bad_ray_options(lm, tiny, ray_cluster):
    texts, pairs, ctx = tiny
    with pytest.raises(ValueError, match="engine must be"):
        Comparator(lm).compare(pairs, texts, ctx, engine="dask", progress=False)
    with pytest.raises(ValueError, match="num_actors and batch_size"):
        Comparator(lm).compare(pairs, texts, ctx, engine="ray", ray_options={"num_actors": 0}, progress=False)
    with pytest.raises(ValueError, match="asks 4 GPU.* per actor, but the Ray cluster has 2"):
        Comparator(lm).compare(pairs, texts, ctx, engine="ray", ray_options={"num_gpus": 4}, progress=False)


@pytest.mark.slow
def test_ray_actors_holding_endpoint_clients(llama_server, tiny, ray_cluster):
    texts, pairs, ctx = tiny
    letter = PromptTemplate(name="letter", pairwise=get_template("summeval-coherence").pairwise
                            + " Answer with the letter A or B only.", labels=(("A", " A"), ("B", " B")))
    judge = Comparator(endpoint=llama_server.url, model="smollm2", template=letter)
    local = judge.compare(pairs, texts, ctx, symmetric=True, progress=False)
    fanned = judge.compare(pairs, texts, ctx, symmetric=True, progress=False, engine="ray",
                           ray_options={"num_actors": 2, "batch_size": 2})
    assert fanned["status"].eq("ok").all()
    np.testing.assert_allclose(fanned["p_a"], local["p_a"], atol=1e-9)
