"""Fan a comparator run out over Ray: ``Comparator.compare(..., engine="ray")``.

The comparisons still to judge become a Ray Dataset (one block per ``batch_size`` rows, each row
carrying its texts and context), and ``map_batches`` runs them on a pool of ``num_actors`` actors
that each hold one judge, rebuilt from the driver's :class:`~.comparator.Comparator` settings: a
local model (loaded once per actor) or an endpoint client. Every actor judges its batch exactly as
the in-process engine would (same prompts, same per-comparison seeds) into an in-memory store; the
driver streams the finished batches back and writes them into the run's store as they arrive, so
a run that stops is resumed at batch granularity and the result is the same judgments table as
``engine="local"``. (The request-level cache of endpoint judges lives in the actors' memory; the
driver's store keeps the judgments.)

``ray`` is an optional dependency (``pip install -e '.[ray]'``). Ray is started on first use
(``ray.init()``: a local cluster, or the one named by ``RAY_ADDRESS``) unless already initialized.

Running on a cluster
--------------------
Start a head node (``ray start --head``) and workers (``ray start --address=HEAD:6379``), install
this package and the judge's extras on every node (for the embedded judge, also run
``bayes-judge models install`` there, or pass ``model=`` a path every node can read), then::

    import ray
    ray.init(address="auto")                      # or RAY_ADDRESS=ray://head:10001
    judge = Comparator(model="/shared/models/judge", batch_size=8)
    df = judge.compare(pairs, texts, contexts, symmetric=True, store="run.sqlite", engine="ray",
                       ray_options={"num_actors": 16, "num_cpus": 4, "batch_size": 64})

With GPUs give ``num_gpus=1`` per actor: the pool then has one actor per GPU of the cluster (two
with ``num_gpus=0.5``), each judge on its GPU with the packed path; ``batch_size`` should then be
large (hundreds of comparisons per Ray batch, so each pass fills the GPU). ``attrs["ray"]`` says
how many actors ran and which GPUs they held. An endpoint judge (``Comparator(endpoint=..., model=...)``)
fans out the same way, each actor a client with its own ``concurrency``; the API key is read from
``api_key_env`` in each actor's environment (set it on the nodes, or pass it with
``ray.init(runtime_env={"env_vars": {...}})`` knowing that Ray then records it in the job's
runtime environment).

vLLM on GPUs
------------
For large judges, serve them with vLLM on the GPUs and point the endpoint judge at the servers
(``vllm serve MODEL --max-logprobs 20``; one server per node behind a load balancer, or one
endpoint judge per server), or use Ray Data's own LLM stage (``ray.data.llm``:
``vLLMEngineProcessorConfig`` + ``build_llm_processor``) with the prompts this package builds;
log-probabilities come out of that processor only in recent Ray releases, so check that the label
tokens' ``top_logprobs`` are in its output before relying on ``prob`` mode there.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from .judge import Judge
    from .store import JudgmentStore

__all__ = ["run_ray", "judge_spec"]


def judge_spec(cmp: Judge) -> dict[str, Any]:
    """The keyword arguments that rebuild ``cmp`` in another process (a model object becomes the
    path it was loaded from)."""
    from .models import LoadedModel

    spec = dict(cmp._spec)
    spec["mode"] = cmp.mode
    model = spec.get("model")
    if isinstance(model, LoadedModel):
        src, gguf = model.info.get("source"), model.info.get("gguf_file")
        if src is None:
            raise ValueError("engine='ray' cannot rebuild this judge: its model object does not say where it was loaded from")
        spec["model"] = str(Path(src) / gguf) if gguf else str(src)
    return spec


class _JudgeActor:
    """One judge per actor; ``__call__`` judges a batch of comparisons (pandas in, pandas out)."""

    def __init__(self, spec: dict[str, Any], cls: Callable[..., Judge]) -> None:
        self.cmp = cls(**spec)  # the driver's class, sent by reference (no import back from here)
        self.gpus = importlib.import_module("ray").get_gpu_ids()  # the GPUs Ray gave this actor

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        from .store import JudgmentStore

        cmp = self.cmp
        texts: dict[tuple[str, str], str] = {}
        ctx: dict[str, str | None] = {}
        cols = [batch[c].tolist() for c in ("item", "first", "second", "text_first", "text_second", "context")]
        for item, first, second, t1, t2, context in zip(*cols, strict=True):
            texts[(item, first)], texts[(item, second)] = t1, t2
            ctx[item] = context if isinstance(context, str) else None

        def lookup(item: str, cand: str) -> str:
            return texts[(item, cand)]

        todo = batch[["item", "a", "b", "order", "first", "second"]].reset_index(drop=True)
        model_id, template_id = cmp._store_ids()
        st = JudgmentStore(":memory:", model=model_id, template=template_id, variants=cmp._store_variants())
        try:
            if cmp.endpoint is not None:
                cmp.endpoint.runner(cmp.mode)(cmp, todo, lookup, ctx, st, False)
            else:
                {"prob": cmp._run_prob, "prepair": cmp._run_prob, "sample": cmp._run_sample,
                 "likert": cmp._run_likert}[cmp.mode](todo, lookup, ctx, st, False)
            done = st.done(cmp.mode)
        finally:
            st.close()
        out = todo[["item", "a", "b", "order"]].merge(done, on=["item", "a", "b", "order"], how="left",
                                                      validate="one_to_one")
        out["extra"] = out["extra"].fillna("")
        out["gpus"] = ",".join(str(g) for g in self.gpus)
        return out


def run_ray(
    cmp: Judge,
    todo: pd.DataFrame,
    lookup,
    ctx,
    st: JudgmentStore,
    progress: bool,
    *,
    num_actors: int | None = None,
    batch_size: int = 16,
    num_cpus: float | None = None,
    num_gpus: float = 0,
) -> dict[str, Any]:
    """Judge ``todo`` on a Ray actor pool and write the results into ``st`` as batches finish.

    Parameters
    ----------
    cmp : the driver's judge (its settings are rebuilt in every actor; see :func:`judge_spec`)
    todo : planned comparisons (item, a, b, order, first, second)
    lookup, ctx : the candidate texts and item contexts; the contexts as the driver cut them to fit
        the model on all of each item's planned prompts (``Comparator._fit_contexts``, which warns),
        so that a batch holding a few of an item's comparisons renders the prompts of a local run
        (an actor that cut a context on its own batch judged other prompts, and its warning was lost)
    st : the run's store
    num_actors : actors in the pool (each loads one judge); default: as many as the cluster's
        GPUs hold when ``num_gpus`` > 0 (one judge per GPU with ``num_gpus=1``, two with 0.5),
        else 2
    batch_size : comparisons per Ray batch (per actor call)
    num_cpus, num_gpus : resources per actor; ``num_cpus`` is passed to Ray only when given (Ray
        Data warns when both are set): unset, Ray Data's default applies (one CPU in Ray 2.60)

    Returns
    -------
    dict: ``actors``, ``batch_size``, ``num_cpus`` (None: Ray's default), ``num_gpus`` and ``gpus`` (the GPU ids Ray
    gave the actors that judged, as Ray names them), kept in the table's ``attrs["ray"]``.
    """
    try:
        ray = importlib.import_module("ray")
        ray_data = importlib.import_module("ray.data")
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("engine='ray' needs Ray: pip install -e '.[ray]' (ray[data])") from err
    if (num_actors is not None and num_actors < 1) or batch_size < 1:
        raise ValueError("ray_options: num_actors and batch_size must be at least 1")
    if num_gpus < 0 or (num_cpus is not None and num_cpus < 0):
        raise ValueError("ray_options: num_cpus and num_gpus must not be negative")
    spec = judge_spec(cmp)
    rows = todo[["item", "a", "b", "order", "first", "second"]].reset_index(drop=True).copy()
    rows["text_first"] = [lookup(i, c) for i, c in zip(rows["item"], rows["first"], strict=True)]
    rows["text_second"] = [lookup(i, c) for i, c in zip(rows["item"], rows["second"], strict=True)]
    rows["context"] = [ctx[i] for i in rows["item"]]
    if not ray.is_initialized():
        ray.init()
    if num_gpus > 0:
        have = float(ray.cluster_resources().get("GPU", 0.0))
        if have < num_gpus:
            raise ValueError(f"ray_options asks {num_gpus:g} GPU(s) per actor, but the Ray cluster has {have:g}; "
                             "leave num_gpus at 0 to judge on CPUs")
        if num_actors is None:
            num_actors = max(1, int(have // num_gpus + 1e-9))
    num_actors = 2 if num_actors is None else num_actors
    ray_data.DataContext.get_current().enable_progress_bars = False
    blocks = [rows.iloc[s:s + batch_size] for s in range(0, len(rows), batch_size)]
    ds = ray_data.from_pandas(blocks)
    n = min(num_actors, len(blocks))
    judged = ds.map_batches(_JudgeActor, fn_constructor_kwargs={"spec": spec, "cls": type(cmp)}, batch_size=batch_size,
                            batch_format="pandas", compute=ray_data.ActorPoolStrategy(size=n), num_gpus=num_gpus,
                            **({} if num_cpus is None else {"num_cpus": num_cpus}))
    from .progress import progress_bar

    bar = progress_bar(len(rows), f"{cmp.judge_name} (ray, {n} actors)", progress)
    gpus: set[str] = set()
    try:
        for out in judged.iter_batches(batch_format="pandas", batch_size=None):
            gpus.update(g for s in out["gpus"] for g in str(s).split(",") if g)
            st.add(cmp.mode, [(r.item, r.a, r.b, r.order, float(r.p_first), json.loads(r.extra) if r.extra else None)
                              for r in out.itertuples(index=False)])
            bar.update(len(out))
    finally:
        bar.close()
    return {"actors": n, "batch_size": batch_size, "num_cpus": num_cpus, "num_gpus": num_gpus,
            "gpus": sorted(gpus)}
