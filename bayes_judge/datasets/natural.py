"""Natural pairs of real systems: SummEval and HANNA read as system-vs-system verdicts.

The win-rate benchmark of :mod:`bayes_judge.datasets.llmbar` assigns each item's two outputs at
random to two pseudo-systems, so a judge's errors cannot depend on the system.  Here nothing is
reassigned: every pair of *real* systems of SummEval (the 12 abstractive summarisers × 100
articles) or HANNA (11 story writers × 96 prompts) is one case, every automatic judge's pointwise
scores of the two texts become its verdict (a tie where equal), and the truth of a case is the
share of items whose human mean score prefers the pair's first system (items where the human
means are equal left out).  A judge that favours one system's style, length or vocabulary then
errs with the system, as real judges do, and the human label is itself a noisy vote.

==============================================  ==================================================
``natural.SOURCES``                             ``{"summeval": aspects, "hanna": criteria}``
``natural.judges(source)``                      the panel: SummEval's 9 LLM settings, HANNA's 5 LLMs
``natural.system_pairs(source, aspect)``        the judgments table of every pair of systems
``natural.truth(df)``                           each pair's human win rate (the truth of a case)
==============================================  ==================================================
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from . import hanna, summeval

__all__ = ["SOURCES", "judges", "system_pairs", "truth", "n_decided"]

SOURCES: dict[str, tuple[str, ...]] = {"summeval": tuple(summeval.ASPECTS), "hanna": tuple(hanna.CRITERIA)}


def judges(source: str) -> dict[str, list[str]]:
    """The judge panel of a source: judge name → the scoring settings averaged into it.

    SummEval: its 9 LLM settings, each its own judge.  HANNA: its 5 LLMs, each the mean of its 4
    evaluation prompts (finer scores, fewer ties; a story any prompt failed is missing).
    """
    if source == "summeval":
        return {j: [j] for j in summeval.judges()}
    if source == "hanna":
        settings = hanna.judges()
        llms = sorted({s.split("/")[0] for s in settings})
        return {llm: [s for s in settings if s.split("/")[0] == llm] for llm in llms}
    raise ValueError(f"source must be one of {sorted(SOURCES)}, got {source!r}")


def system_pairs(
    source: str,
    aspect: str,
    *,
    panel: Sequence[str] | None = None,
    items: int | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every pair of real systems of a source, judged on every item by every judge of its panel.

    Parameters
    ----------
    source : {"summeval", "hanna"}
    aspect : str
        A SummEval aspect or a HANNA criterion (``SOURCES[source]``).
    panel : sequence of str, optional
        Judge names of :func:`judges` to keep (default: all).
    items : int or sequence of str, optional
        All items (default), the first ``n``, or the named articles / prompts.

    Returns
    -------
    pandas.DataFrame
        A judgments table, one row per (item, pair of systems, judge), the pair in sorted order
        (``a`` < ``b``): item, a, b, judge, winner (``"a"`` / ``"b"`` / ``"tie"`` by the judge's
        two scores), human (``"a"`` / ``"b"`` by the human mean scores, None where equal).  Rows
        a judge could not score (HANNA's failed answers) are absent; ``attrs["n_missing"]`` counts
        them.

    Examples
    --------
    >>> from bayes_judge.datasets import natural
    >>> df = natural.system_pairs("summeval", "coherence", items=2)
    >>> df["judge"].nunique(), len(df) // df["judge"].nunique()
    (9, 132)
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {sorted(SOURCES)}, got {source!r}")
    if aspect not in SOURCES[source]:
        raise ValueError(f"{source}: aspect must be one of {SOURCES[source]}, got {aspect!r}")
    groups = judges(source)
    if panel is not None:
        unknown = sorted(set(panel) - set(groups))
        if unknown:
            raise ValueError(f"{source}: unknown judge(s) {unknown}; the panel is {sorted(groups)}")
        groups = {j: groups[j] for j in panel}
    human, llm = _scores(source, aspect, items)
    setting_judge = {s: j for j, settings in groups.items() for s in settings}
    llm = llm[llm["setting"].isin(setting_judge)].assign(judge=lambda d: d["setting"].map(setting_judge))
    # a judge's score of a text: the mean of its settings; missing where any setting failed
    g = llm.groupby(["item", "candidate", "judge"])["score"]
    n_settings = llm["judge"].map({j: len(v) for j, v in groups.items()})
    full = llm.assign(n=n_settings).groupby(["item", "candidate", "judge"])["n"].first()
    judge_score = g.mean().where(g.count() == full).dropna().rename("score").reset_index()
    # every pair of systems (a < b) on every item, every judge that scored both texts
    left = judge_score.rename(columns={"candidate": "a", "score": "s_a"})
    right = judge_score.rename(columns={"candidate": "b", "score": "s_b"})
    out = left.merge(right, on=["item", "judge"])
    out = out[out["a"] < out["b"]]
    h = human.set_index(["item", "candidate"])["score"]
    h_a = h.reindex(pd.MultiIndex.from_frame(out[["item", "a"]])).to_numpy()
    h_b = h.reindex(pd.MultiIndex.from_frame(out[["item", "b"]])).to_numpy()
    d = out["s_a"].to_numpy() - out["s_b"].to_numpy()
    winner = np.where(d > 0, "a", np.where(d < 0, "b", "tie"))
    hum = np.where(h_a > h_b, "a", np.where(h_a < h_b, "b", "")).astype(object)
    hum[hum == ""] = None  # the human means are equal: no label
    out = pd.DataFrame({"item": out["item"].to_numpy(), "a": out["a"].to_numpy(), "b": out["b"].to_numpy(),
                        "judge": out["judge"].to_numpy(), "winner": winner, "human": hum})
    out = out.sort_values(["a", "b", "item", "judge"], kind="stable").reset_index(drop=True)
    n_sys = human.groupby("item")["candidate"].nunique()
    expected = int((n_sys * (n_sys - 1) // 2).sum()) * len(groups)
    out.attrs.update(n_missing=expected - len(out), source=source, aspect=aspect)
    return out


def _scores(source: str, aspect: str, items: int | Sequence[str] | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human mean scores (item, candidate, score) and the judges' scores (item, candidate,
    setting, score) of one source and aspect; a failed LLM answer is left out."""
    if source == "summeval":
        human = summeval.scores(aspect, articles=items)
        human = human[human["system_type"] == "abstractive"]
        s = summeval._read("llm_scores.csv")
        s = s[(s["aspect"] == aspect) & s["doc_id"].isin(human["item"])]
        llm = pd.DataFrame({"item": s["doc_id"].astype(str), "candidate": s["model_id"].astype(str),
                            "setting": s["llm"] + "/" + s["method"], "score": s["score"].astype(float)})
        return human[["item", "candidate", "score"]], llm.dropna(subset=["score"])
    human = hanna.scores(aspect, prompts=items)
    r = hanna._read("llm_ratings.csv")
    r = r[(r["criterion"] == aspect) & r["story_id"].isin(human["story_id"])]
    r = r[r["mean_score"] >= hanna.FAILURE_BELOW]  # the source's failed answers (see hanna.pairs)
    by_story = human.set_index("story_id")
    llm = pd.DataFrame({"item": by_story["item"].reindex(r["story_id"]).to_numpy(),
                        "candidate": by_story["candidate"].reindex(r["story_id"]).to_numpy(),
                        "setting": r["llm"].astype(str) + "/" + r["eval_prompt"].astype(str),
                        "score": r["mean_score"].astype(float).to_numpy()})
    return human[["item", "candidate", "score"]], llm


def truth(df: pd.DataFrame) -> pd.Series:
    """Each pair's human win rate: the share of its items whose human label prefers ``a``.

    Items whose human label is missing (equal human means) are left out.  The table is read as
    :func:`system_pairs` writes it (``a`` < ``b`` on every row); the index names the pair
    ``"a vs b"``, as :func:`bayes_judge.win_rate_summary` does.
    """
    one = df.drop_duplicates(["item", "a", "b"])
    lab = one[one["human"].notna()]
    rate = (lab["human"] == "a").groupby([lab["a"], lab["b"]]).mean()
    rate.index = [f"{a} vs {b}" for a, b in rate.index]
    return rate.rename("p_true")


def n_decided(df: pd.DataFrame) -> pd.Series:
    """Per pair, the number of items with a human label (the truth's denominator)."""
    one = df.drop_duplicates(["item", "a", "b"])
    n = one["human"].notna().groupby([one["a"], one["b"]]).sum()
    n.index = [f"{a} vs {b}" for a, b in n.index]
    return n.astype(np.int64).rename("n_decided")
