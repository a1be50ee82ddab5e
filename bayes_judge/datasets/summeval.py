"""SummEval (Liusie et al. 2024 (PoE) §4.1): 100 CNN/DM articles, 16 summaries each, expert scores 1-5.

Files under ``data/summeval/``: ``summaries.csv`` (the summaries and their expert means),
``articles.csv`` (the source articles), ``llm_scores.csv`` (pointwise LLM scores of the 12
abstractive systems), ``smollm2_pairwise.csv`` (the embedded judge's pairwise probabilities,
written by ``data/summeval/derive_smollm2_pairwise.py``).

>>> import bayes_judge as bj
>>> pairs = bj.datasets.summeval.pairs("coherence", articles=1)   # soft pairs from LLM scores
>>> expert = bj.datasets.summeval.scores("coherence", articles=1)  # the truth to rank against
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._common import check_judges, check_tau, preference, select_ids, soft_pairs
from ._files import read_csv

__all__ = ["ASPECTS", "TAU", "judges", "scores", "pairs", "comparator", "texts"]

ASPECTS: tuple[str, ...] = ("coherence", "consistency", "fluency", "relevance")
TAU: float = 1.0


def _read(file: str) -> pd.DataFrame:
    return read_csv(f"summeval/{file}")


def _check_aspect(aspect: str) -> str:
    if aspect not in ASPECTS:
        raise ValueError(f"unknown SummEval aspect {aspect!r}; expected one of {list(ASPECTS)}")
    return aspect


def _articles(articles: int | Sequence[str] | None) -> list[str]:
    """Article (doc) ids in file order: all, the first ``n``, or the ones named."""
    order = list(pd.unique(_read("summaries.csv")["doc_id"]))
    return select_ids(order, articles, noun="article", dataset="SummEval")


def judges() -> list[str]:
    """The pointwise LLM judge settings of the SummEval data, as ``"<llm>/<method>"``."""
    s = _read("llm_scores.csv")
    return sorted(pd.unique(s["llm"] + "/" + s["method"]))


def scores(aspect: str = "coherence", *, articles: int | Sequence[str] | None = None) -> pd.DataFrame:
    """Expert mean scores of the SummEval summaries, one row per (article, system).

    Parameters
    ----------
    aspect : {"coherence", "consistency", "fluency", "relevance"}
        The SummEval aspect (Liusie et al. 2024 (PoE) §4.1: COH, CON, FLU, REL).
    articles : int or sequence of str, optional
        All 100 articles (default), the first ``n`` in file order, or the named doc ids.

    Returns
    -------
    pandas.DataFrame, shape (16 * n_articles, 4)
        Columns item (the article's doc id), candidate (system id ``M0`` ... ``M23``), score
        (mean of the 3 expert ratings, 1 to 5, higher is better), system_type
        (``"abstractive"`` for the 12 systems with LLM scores, ``"extractive"`` for M0, M1, M2,
        M5).  Sorted by article (file order) then candidate.

    Raises
    ------
    ValueError
        Unknown aspect or article id.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> bj.datasets.summeval.scores("fluency", articles=2).shape
    (32, 4)
    """
    aspect = _check_aspect(aspect)
    keep = _articles(articles)
    s = _read("summaries.csv")
    s = s[s["doc_id"].isin(keep)]
    out = pd.DataFrame(
        {
            "item": s["doc_id"].astype(str).to_numpy(),
            "candidate": s["model_id"].astype(str).to_numpy(),
            "score": s[f"expert_mean_{aspect}"].astype(float).to_numpy(),
            "system_type": s["system_type"].astype(str).to_numpy(),
        }
    )
    art = pd.Index(keep).get_indexer(pd.Index(out["item"]))
    order = np.lexsort((out["candidate"].to_numpy(), art))
    return out.iloc[order].reset_index(drop=True)


def pairs(
    aspect: str = "coherence",
    *,
    judge: str | Sequence[str] = "gpt-3.5-turbo-0301/rts",
    articles: int | Sequence[str] | None = None,
    tau: float = TAU,
) -> pd.DataFrame:
    """Soft pairwise judgments between the 12 abstractive SummEval systems of every article.

    The SummEval data carry *pointwise* LLM scores (1 to 5, one per summary and judge setting),
    not pairwise probabilities.  Liusie et al. 2024 (PoE) obtains ``p_ij`` from a pairwise prompt as
    ``P(A) / (P(A) + P(B))`` over the answer tokens (§4.2, "LLM Pairwise Probability
    Calculation"), which needs token probabilities these data do not have.  We therefore map
    the two pointwise scores ``s_i``, ``s_j`` of a pair to

    .. math:: p_{ij} = \\sigma\\big((s_i - s_j) / \\tau\\big),\\qquad \\tau = 1 \\text{ by default},

    the Bradley-Terry probability (Liusie et al. 2024 (PoE) eq. 2) of the score difference in units of ``τ``
    score points: equal scores give 0.5 (a tie for the hard decision), a 1-point gap 0.731, a
    4-point gap 0.982.  ``p_ij + p_ji = 1`` exactly in meaning (up to one rounding), so the
    table carries no position bias; rank it with ``debias=False``.

    Parameters
    ----------
    aspect : {"coherence", "consistency", "fluency", "relevance"}
    judge : str or sequence of str
        The LLM judge setting ``"<llm>/<method>"`` (see :func:`judges`; e.g.
        ``"gpt-4-0314/rts"``, ``"llama-2-13b-chat-hf/rts"``).  A sequence averages the scores of
        the listed settings first (finer probabilities, fewer ties); the ``judge`` column then
        joins the names with ``"+"``.
    articles : int or sequence of str, optional
        All 100 articles (default), the first ``n`` in file order, or the named doc ids.
    tau : float
        Temperature of the mapping, in score points (> 0).

    Returns
    -------
    pandas.DataFrame, shape (132 * n_articles, 9)
        A judgments table with one row per *ordered* pair of distinct systems of an article
        (12 · 11 = 132 per article): item (doc id), a, b (system ids), judge, p_a
        (``p_ab`` above), winner (``"a"`` / ``"b"`` / ``"tie"`` from ``p_a``), human
        (``"a"`` / ``"b"`` by the expert means of ``aspect``, None where they are equal),
        score_a, score_b (the LLM scores used).

    Raises
    ------
    ValueError
        Unknown aspect, judge setting or article id; ``tau <= 0``; a missing LLM score.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.datasets.summeval.pairs("coherence", articles=1)
    >>> df.shape, df["a"].nunique()
    ((132, 9), 12)
    """
    aspect = _check_aspect(aspect)
    check_tau(tau)
    settings = check_judges(judge, judges(), "SummEval")
    keep = _articles(articles)

    s = _read("llm_scores.csv")
    setting = s["llm"] + "/" + s["method"]
    s = s[setting.isin(settings) & (s["aspect"] == aspect) & s["doc_id"].isin(keep)]
    llm = s.groupby(["doc_id", "model_id"])["score"].agg(["mean", "size"])
    if llm["mean"].isna().any() or (llm["size"] != len(settings)).any():
        bad = llm.index[llm["mean"].isna() | (llm["size"] != len(settings))][:5].tolist()
        raise ValueError(f"missing LLM score for (article, system) {bad} with judge {judge!r}")
    llm_mean = llm["mean"]

    expert = scores(aspect, articles=keep)
    expert = expert[expert["system_type"] == "abstractive"]
    systems = np.sort(expert["candidate"].unique())
    n_art, n_sys = len(keep), len(systems)
    if len(expert) != n_art * n_sys:
        raise ValueError("SummEval data: not every article has every abstractive system")
    # (article, system) grids in article order x sorted system ids
    idx = pd.MultiIndex.from_product([keep, systems])
    grid = pd.DataFrame({
        "item": idx.get_level_values(0), "candidate": idx.get_level_values(1),
        "llm": llm_mean.reindex(idx).to_numpy(),
        "human": expert.set_index(["item", "candidate"])["score"].reindex(idx).to_numpy(),
    })
    if grid["llm"].isna().any():
        raise ValueError(f"missing LLM scores for judge {judge!r} on aspect {aspect!r}")
    return soft_pairs(grid, tau=tau, judge="+".join(settings))  # human: None where the experts tie


def comparator(
    aspect: str = "coherence", *, articles: int | Sequence[str] | None = None
) -> pd.DataFrame:
    """The embedded judge's pairwise probabilities between all 16 SummEval summaries of an article.

    Real pairwise LLM judgments, as Liusie et al. 2024 (PoE) §5.1 uses them (N = 16, the full set K = 240 per
    article): SmolLM2-135M-Instruct, the package's default comparator, in prob mode
    (``p = P(w_A) / (P(w_A) + P(w_B))``, Liusie, Manakul & Gales 2024 eq. 3) with the ``summeval-<aspect>``
    template, every pair in both orders, for the first 10 articles.  Unlike
    :func:`pairs` these probabilities carry the judge's position bias
    (``p_ab + p_ba != 1``): rank them with ``debias=True``.  The file,
    ``data/summeval/smollm2_pairwise.csv``, is written by
    ``data/summeval/derive_smollm2_pairwise.py`` (provenance in ``data/README.md``).

    Parameters
    ----------
    aspect : {"coherence", "consistency", "fluency", "relevance"}
        The aspect the judge was asked about, and the expert scores ``human`` is read from.
    articles : int or sequence of str, optional
        All judged articles (default), the first ``n`` of them, or the named doc ids.

    Returns
    -------
    pandas.DataFrame, shape (240 * n_articles, 9)
        A judgments table: item (doc id), a, b (system ids, ``a`` shown first), judge, p_a,
        winner (from ``p_a``: ``"a"`` above 0.5, ``"b"`` below, ``"tie"`` at 0.5), human
        (``"a"`` / ``"b"`` by the expert means, None where they are equal), order (``"ab"`` as
        planned, ``"ba"`` swapped), label_mass (the probability of the two label tokens).

    Raises
    ------
    ValueError
        Unknown aspect, or an article the file does not cover.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.datasets.summeval.comparator("coherence", articles=1)
    >>> df.shape, df["a"].nunique()
    ((240, 9), 16)
    """
    aspect = _check_aspect(aspect)
    raw = _read("smollm2_pairwise.csv")
    keep = select_ids(list(pd.unique(raw["item"])), articles, noun="article", dataset="SummEval comparator")
    df = raw[(raw["aspect"] == aspect) & raw["item"].isin(keep)]
    df = df.iloc[np.argsort(pd.Index(keep).get_indexer(pd.Index(df["item"])), kind="stable")]
    expert = scores(aspect, articles=keep).set_index(["item", "candidate"])["score"]
    h = (expert.reindex(pd.MultiIndex.from_arrays([df["item"], df["a"]])).to_numpy()
         - expert.reindex(pd.MultiIndex.from_arrays([df["item"], df["b"]])).to_numpy())
    p = df["p_a"].to_numpy()
    return pd.DataFrame(
        {
            "item": df["item"].to_numpy(dtype=object),
            "a": df["a"].to_numpy(dtype=object),
            "b": df["b"].to_numpy(dtype=object),
            "judge": df["judge"].to_numpy(dtype=object),
            "p_a": p,
            "winner": np.where(p > 0.5, "a", np.where(p < 0.5, "b", "tie")).astype(object),
            "human": preference(h),
            "order": df["order"].to_numpy(dtype=object),
            "label_mass": df["label_mass"].to_numpy(),
        }
    )


def texts(*, articles: int | Sequence[str] | None = None,
                        systems: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """The SummEval texts, for a comparator run: summaries and their source articles.

    Parameters
    ----------
    articles : int or sequence of str, optional
        All 100 articles (default), the first ``n`` in file order, or the named doc ids.
    systems : sequence of str, optional
        Keep only these system ids (e.g. the 12 abstractive ones); default all 16.

    Returns
    -------
    texts : DataFrame with columns item (doc id), candidate (system id), text (the summary)
    contexts : dict doc id → article text

    Examples
    --------
    >>> import bayes_judge as bj
    >>> texts, contexts = bj.datasets.summeval.texts(articles=1)
    >>> len(texts), len(contexts)
    (16, 1)
    """
    keep = _articles(articles)
    s = _read("summaries.csv")
    s = s[s["doc_id"].isin(keep)]
    if systems is not None:
        unknown = sorted(set(map(str, systems)) - set(s["model_id"]))
        if unknown:
            raise ValueError(f"unknown SummEval system id(s) {unknown}")
        s = s[s["model_id"].isin(list(map(str, systems)))]
    texts = pd.DataFrame({"item": s["doc_id"].astype(str).to_numpy(),
                          "candidate": s["model_id"].astype(str).to_numpy(),
                          "text": s["summary"].astype(str).to_numpy()})
    art = _read("articles.csv")
    ctx = dict(zip(art["doc_id"].astype(str), art["article"].astype(str), strict=True))
    return texts.reset_index(drop=True), {d: ctx[d] for d in keep}


