"""HANNA (Chhun et al. 2022; Liusie et al. 2024 (PoE) §4.1): 96 story prompts × 11 systems = 1056 stories.

Each story has 3 human ratings (1-5) on 6 criteria and pointwise scores from 20 LLM evaluator
settings.  Files under ``data/hanna/``: ``stories.csv``, ``human_ratings.csv``,
``llm_ratings.csv``.

>>> import bayes_judge as bj
>>> pairs = bj.datasets.hanna.pairs("coherence", prompts=1)   # soft pairs from LLM scores
>>> human = bj.datasets.hanna.scores("coherence", prompts=1)  # the truth to rank against
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._common import check_judges, check_tau, select_ids, soft_pairs
from ._files import read_csv

__all__ = ["CRITERIA", "SYSTEMS", "TAU", "FAILURE_BELOW", "judges", "scores", "pairs", "texts"]

CRITERIA: tuple[str, ...] = ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")
# the story-generation systems, in the source's row order (story_id // 96)
SYSTEMS: tuple[str, ...] = (
    "Human", "BertGeneration", "CTRL", "GPT", "GPT-2 (tag)", "GPT-2", "RoBERTa", "XLNet", "Fusion", "HINT", "TD-VAE",
)
TAU: float = 1.0
FAILURE_BELOW: float = 1.0  # an LLM mean_score below 1 averages in a failed answer (coded -1)


def _read(file: str) -> pd.DataFrame:
    return read_csv(f"hanna/{file}")


def _check_criterion(criterion: str) -> str:
    if criterion not in CRITERIA:
        raise ValueError(f"unknown HANNA criterion {criterion!r}; expected one of {list(CRITERIA)}")
    return criterion


def _prompts(prompts: int | Sequence[str | int] | None) -> list[str]:
    """HANNA prompt ids (as str) in id order: all 96, the first ``n``, or the ones named."""
    order = [str(p) for p in sorted(pd.unique(_read("stories.csv")["prompt_id"]))]
    return select_ids(order, prompts, noun="prompt", dataset="HANNA")


def _stories(keep: list[str]) -> pd.DataFrame:
    s = _read("stories.csv")
    s = s.assign(item=s["prompt_id"].astype(str))
    s = s[s["item"].isin(keep)]
    pos = pd.Index(keep).get_indexer(pd.Index(s["item"]))
    order = np.lexsort((s["model"].astype(str).to_numpy(), pos))
    return s.iloc[order].reset_index(drop=True)


def judges() -> list[str]:
    """The 20 pointwise LLM evaluator settings of HANNA, as ``"<llm>/<eval_prompt>"``."""
    s = _read("llm_ratings.csv")
    return sorted(pd.unique(s["llm"].astype(str) + "/" + s["eval_prompt"].astype(str)))


def scores(criterion: str = "coherence", *, prompts: int | Sequence[str | int] | None = None) -> pd.DataFrame:
    """Human mean scores of the HANNA stories, one row per (prompt, system).

    Parameters
    ----------
    criterion : {"relevance", "coherence", "empathy", "surprise", "engagement", "complexity"}
        The HANNA criterion (Liusie et al. 2024 (PoE) uses coherence COH, complexity CMP, surprise SUR).
    prompts : int or sequence of str, optional
        All 96 writing prompts (default), the first ``n`` by id, or the named prompt ids
        (``"0"`` ... ``"95"``; ints are accepted).

    Returns
    -------
    pandas.DataFrame, shape (11 * n_prompts, 4)
        Columns item (the prompt id as str), candidate (the system that wrote the story:
        ``"Human"``, ``"GPT-2"``, ``"HINT"``, ...; see ``SYSTEMS``), score (mean of the
        3 human ratings, 1 to 5, higher is better), story_id.  Sorted by prompt id then
        candidate.

    Raises
    ------
    ValueError
        Unknown criterion or prompt id.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> bj.datasets.hanna.scores("surprise", prompts=2).shape
    (22, 4)
    """
    criterion = _check_criterion(criterion)
    keep = _prompts(prompts)
    st = _stories(keep)
    h = _read("human_ratings.csv")
    h = h[h["criterion"] == criterion].groupby("story_id")["score"].agg(["mean", "size"])
    h = h.reindex(st["story_id"])
    if h["mean"].isna().any() or (h["size"] != 3).any():
        bad = h.index[h["mean"].isna() | (h["size"] != 3)][:5].tolist()
        raise ValueError(f"HANNA data: story id(s) {bad} lack the 3 human ratings of {criterion!r}")
    return pd.DataFrame(
        {
            "item": st["item"].to_numpy(dtype=object),
            "candidate": st["model"].astype(str).to_numpy(dtype=object),
            "score": h["mean"].to_numpy(dtype=float),
            "story_id": st["story_id"].to_numpy(dtype=np.int64),
        }
    )


def pairs(
    criterion: str = "coherence",
    *,
    judge: str | Sequence[str] = "ChatGPT/1",
    prompts: int | Sequence[str | int] | None = None,
    tau: float = TAU,
    on_failure: str = "skip",
) -> pd.DataFrame:
    """Soft pairwise judgments between the 11 stories of every HANNA prompt.

    Like :func:`bayes_judge.datasets.summeval.pairs`: the data hold *pointwise* LLM scores (the mean of an
    LLM's repeated 1-5 answers for one story, criterion and evaluation prompt), so a pair gets
    ``p_ij = sigmoid((s_i − s_j) / tau)`` (equal scores give 0.5, a tie); no position bias
    (``p_ij + p_ji = 1``), rank with ``debias=False``.

    Failed answers.  The source codes an LLM answer it could not use as ``-1`` and stores the
    mean over the repeats, failures included, so a ``mean_score`` below 1 (1051 of 126 720
    values; 14 for the 4 ChatGPT settings, 253 for Mistral-7B/1) averages in at least one
    failure and is no score on the 1-5 scale.  Such a story is treated as *missing* for that
    judge and criterion: with ``on_failure="skip"`` (default) every pair that involves it is
    left out, and the count is recorded, never silently: ``df.attrs["n_failed_stories"]``,
    ``df.attrs["failed_stories"]`` (list of dicts item, candidate, story_id, judge,
    mean_score) and ``df.attrs["n_dropped_pairs"]``; the prompt then has 10 candidates and 90
    rows.  ``on_failure="raise"`` raises instead.  A failure averaged with high valid answers
    (e.g. ``(−1 + 5 + 5) / 3 = 3``) cannot be told apart from a valid mean and is kept.

    Parameters
    ----------
    criterion : {"relevance", "coherence", "empathy", "surprise", "engagement", "complexity"}
    judge : str or sequence of str
        The LLM evaluator setting ``"<llm>/<eval_prompt>"``, one of the 20 of
        :func:`judges`: llm in Beluga-13B, ChatGPT, Llama-13B, Mistral-7B, OrcaPlatypus;
        eval_prompt 1-4.  A sequence averages the listed settings' scores first; a story
        failed by any of them is missing.  The ``judge`` column joins the names with ``"+"``.
    prompts : int or sequence of str, optional
        All 96 prompts (default), the first ``n`` by id, or the named prompt ids.
    tau : float
        Temperature of the mapping, in score points (> 0).
    on_failure : {"skip", "raise"}
        What to do with a story whose LLM score contains a failure (see above).

    Returns
    -------
    pandas.DataFrame, shape (110 * n_prompts − dropped, 9)
        A judgments table with one row per *ordered* pair of distinct stories of a prompt
        (11 · 10 = 110 per prompt): item (prompt id), a, b (system names), judge, p_a,
        winner (``"a"`` / ``"b"`` / ``"tie"`` from ``p_a``), human (``"a"`` / ``"b"`` by the
        mean of the 3 human ratings of ``criterion``, None where the means are equal),
        score_a, score_b (the LLM mean scores used).

    Raises
    ------
    ValueError
        Unknown criterion, judge setting or prompt id; ``tau <= 0``; an unknown
        ``on_failure``; a failed LLM score with ``on_failure="raise"``.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.datasets.hanna.pairs("coherence", prompts=1)
    >>> df.shape, df["a"].nunique(), df.attrs["n_failed_stories"]
    ((110, 9), 11, 0)
    """
    criterion = _check_criterion(criterion)
    check_tau(tau)
    if on_failure not in ("skip", "raise"):
        raise ValueError(f"on_failure must be 'skip' or 'raise', got {on_failure!r}")
    settings = check_judges(judge, judges(), "HANNA")
    keep = _prompts(prompts)
    human = scores(criterion, prompts=keep)

    r = _read("llm_ratings.csv")
    setting = r["llm"].astype(str) + "/" + r["eval_prompt"].astype(str)
    r = r.assign(judge=setting)[setting.isin(settings) & (r["criterion"] == criterion)]
    r = r[r["story_id"].isin(human["story_id"])]
    if r.duplicated(["story_id", "judge"]).any() or len(r) != len(human) * len(settings):
        raise ValueError(f"HANNA data: not exactly one LLM score per story for judge {judge!r}, {criterion!r}")
    failed = r[r["mean_score"] < FAILURE_BELOW]
    by_story = human.set_index("story_id")[["item", "candidate"]]
    failed_rows = [
        {"item": by_story.at[sid, "item"], "candidate": by_story.at[sid, "candidate"], "story_id": int(sid),
         "judge": j, "mean_score": float(m)}
        for sid, j, m in zip(failed["story_id"], failed["judge"], failed["mean_score"], strict=True)
    ]
    failed_ids = set(failed["story_id"].tolist())
    if failed_ids and on_failure == "raise":
        raise ValueError(
            f"{len(failed_ids)} HANNA stor{'y' if len(failed_ids) == 1 else 'ies'} with a failed LLM answer "
            f"(mean_score < 1) for judge {judge!r}, {criterion!r}, e.g. {failed_rows[:3]}; "
            "use on_failure='skip' to leave their pairs out"
        )
    llm = r.groupby("story_id")["mean_score"].mean()

    sid = human["story_id"].to_numpy()
    ok = ~np.isin(sid, list(failed_ids))
    frame = human.assign(llm=llm.reindex(sid).to_numpy(), human=human["score"])[ok]
    out = soft_pairs(frame, tau=tau, judge="+".join(settings))
    n_all = human.groupby("item", sort=False).size()
    n_ok = frame.groupby("item", sort=False).size().reindex(n_all.index, fill_value=0)
    n_dropped = int((n_all * (n_all - 1) - n_ok * (n_ok - 1)).sum())
    out.attrs["n_failed_stories"] = len(failed_ids)
    out.attrs["failed_stories"] = failed_rows
    out.attrs["n_dropped_pairs"] = int(n_dropped)
    return out


def texts(
    prompts: int | Sequence[str | int] | None = None, *, systems: Sequence[str] | None = None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The HANNA stories and their writing prompts, for a comparator run.

    Parameters
    ----------
    prompts : int or sequence of str, optional
        All 96 prompts (default), the first ``n`` by id, or the named prompt ids.
    systems : sequence of str, optional
        Keep only these systems (names as in ``SYSTEMS``); default all 11.

    Returns
    -------
    texts : DataFrame with columns item (prompt id), candidate (system name), text (the story),
        sorted by prompt id then candidate
    contexts : dict prompt id → writing prompt text

    Examples
    --------
    >>> import bayes_judge as bj
    >>> texts, contexts = bj.datasets.hanna.texts(prompts=1)
    >>> len(texts), len(contexts)
    (11, 1)
    """
    keep = _prompts(prompts)
    full = _stories(keep)
    ctx = full.groupby("item", sort=False)["prompt"].agg(["first", "nunique"])
    if (ctx["nunique"] != 1).any():
        raise ValueError(f"HANNA data: prompt text differs within prompt id(s) {ctx.index[ctx['nunique'] != 1][:5].tolist()}")
    st = full
    if systems is not None:
        wanted = [str(s) for s in systems]
        unknown = sorted(set(wanted) - set(SYSTEMS))
        if unknown or not wanted:
            raise ValueError(f"unknown HANNA system(s) {unknown}; expected some of {list(SYSTEMS)}")
        st = st[st["model"].isin(wanted)]
    texts = pd.DataFrame(
        {
            "item": st["item"].to_numpy(dtype=object),
            "candidate": st["model"].astype(str).to_numpy(dtype=object),
            "text": st["story"].astype(str).to_numpy(dtype=object),
        }
    )
    return texts.reset_index(drop=True), {p: str(ctx.at[p, "first"]) for p in keep}
