"""Bundled real data, read into the judgments schema.

The raw CSV files live unchanged in the repository's ``data/`` folder (provenance in
``data/README.md``); this module is the one script that derives the judgments tables from them.

LLMBar family (Zeng et al. 2024, as staged for seed 003): each item has an instruction, two
outputs and a human label; each evaluator judged every item in both presentation orders.
In the judgments table the candidates are the outputs ``"output_1"`` / ``"output_2"``; ``a`` is
the output shown first (``swap = 1`` shows ``output_2`` first); ``winner`` and ``human`` are in
that row's orientation.  A verdict the authors could not parse, or a rating tie, becomes
``winner = "tie"`` with the reason kept in ``note`` (no row is dropped).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "load_dataset",
    "list_datasets",
    "load_items",
    "assign_generators",
    "data_dir",
    "load_summeval_pairs",
    "load_summeval_scores",
    "summeval_judges",
]

LLMBAR = {
    "llmbar_natural": "natural",
    "llmbar_adversarial_gptinst": "adversarial_gptinst",
    "llmbar_adversarial_gptout": "adversarial_gptout",
    "llmbar_adversarial_manual": "adversarial_manual",
    "llmbar_adversarial_neighbor": "adversarial_neighbor",
    "mtbench": "mtbench",
    "llmeval2": "llmeval2",
}
ALIASES = {"llmbar_mtbench": "mtbench", "llmbar_llmeval2": "llmeval2", "natural": "llmbar_natural"}
LLMBAR_ADVERSARIAL = [k for k in LLMBAR if k.startswith("llmbar_adversarial")]


def data_dir() -> Path:
    """The folder holding the bundled data (``$BAYES_JUDGE_DATA`` overrides)."""
    env = os.environ.get("BAYES_JUDGE_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[1] / "data"
    if not path.is_dir():
        raise FileNotFoundError(
            f"bundled data folder not found at {path}; install bayes_judge from a checkout "
            "(pip install -e .) or set BAYES_JUDGE_DATA to the repository's data/ folder"
        )
    return path


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset`."""
    return sorted(LLMBAR) + ["llmbar"]


def _resolve(name: str) -> str:
    name = ALIASES.get(name, name)
    if name not in LLMBAR and name != "llmbar":
        raise ValueError(f"unknown dataset {name!r}; available: {list_datasets()}")
    return name


@lru_cache(maxsize=16)
def _read(sub: str, file: str) -> pd.DataFrame:
    return pd.read_csv(data_dir() / "llmbar" / sub / file)


def load_items(name: str) -> pd.DataFrame:
    """The items of an LLMBar-family set: item, input, output_1, output_2, human_label (1 / 2)."""
    name = _resolve(name)
    if name == "llmbar":
        return pd.concat(
            [load_items(n).assign(item=lambda d, n=n: n.removeprefix("llmbar_") + ":" + d["item"]) for n in _llmbar_parts()],
            ignore_index=True,
        )
    items = _read(LLMBAR[name], "items.csv").rename(columns={"item_id": "item"}).copy()
    items["item"] = items["item"].astype(str)
    return items


def _llmbar_parts() -> list[str]:
    return ["llmbar_natural", *LLMBAR_ADVERSARIAL]


def load_dataset(name: str) -> pd.DataFrame:
    """A bundled real data set as a judgments table.

    Parameters
    ----------
    name : str
        ``"mtbench"`` (200 MT-Bench items, 8 evaluators), ``"llmeval2"`` (200 items, 8
        evaluators), ``"llmbar_natural"`` and the four ``"llmbar_adversarial_*"`` subsets
        (65 evaluators each), or ``"llmbar"``: Natural and Adversarial together (419 items,
        item ids prefixed by the subset).  See :func:`list_datasets`.

    Returns
    -------
    pandas.DataFrame
        Columns item, a, b, judge, winner, human (judgments schema) and base_llm, strategy,
        swap, note from the source.  One row per (item, evaluator, presentation order).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.load_dataset("mtbench")
    >>> df.shape, sorted(df["judge"].unique())[:2]
    ((3200, 10), ['ChatGPT/Metrics_Reference', 'ChatGPT/Vanilla_NoRules'])
    """
    name = _resolve(name)
    if name == "llmbar":
        parts = []
        for n in _llmbar_parts():
            d = load_dataset(n)
            d["item"] = n.removeprefix("llmbar_") + ":" + d["item"]
            parts.append(d)
        return pd.concat(parts, ignore_index=True)
    sub = LLMBAR[name]
    items = _read(sub, "items.csv")
    j = _read(sub, "judgments.csv")
    label = dict(zip(items["item_id"], items["human_label"], strict=True))
    swap = j["swap"].to_numpy()
    a = np.where(swap == 1, "output_2", "output_1")
    b = np.where(swap == 1, "output_1", "output_2")
    # source winner is in the original numbering (1 = output_1); read it in the row's order
    w = j["winner"].to_numpy()
    shown_first = np.where(swap == 1, 2, 1)
    winner = np.where(np.isnan(w), "tie", np.where(w == shown_first, "a", "b"))
    hl = j["item_id"].map(label).to_numpy()
    human = np.where(hl == shown_first, "a", "b")
    note = j["note"].astype(object).where(j["note"].notna(), None)
    return pd.DataFrame(
        {
            "item": j["item_id"].astype(str).to_numpy(),
            "a": a,
            "b": b,
            "judge": j["evaluator"].astype(str).to_numpy(),
            "winner": winner,
            "human": human,
            "base_llm": j["base_llm"].astype(str).to_numpy(),
            "strategy": j["strategy"].astype(str).to_numpy(),
            "swap": swap,
            "note": note.to_numpy(),
        }
    )


def assign_generators(
    df: pd.DataFrame,
    *,
    share: float = 0.8,
    systems: tuple[str, str] = ("G0", "G1"),
    seed: int = 0,
) -> pd.DataFrame:
    """Simulate two generators from a two-candidate data set (seed 003 §4.1).

    For a random ``round(share * n)`` of the n items the human-preferred output is attributed
    to ``systems[0]`` (G0), for the rest to ``systems[1]``, so that the true win rate of G0 is
    ``share`` exactly (eq. 3).  Candidate ids in ``a`` / ``b`` are replaced by system names;
    ``winner`` and ``human`` keep their row orientation, so no verdict changes.

    Parameters
    ----------
    df : judgments table whose items each compare two candidates and carry a human label
    share : the true win rate p of G0 (the seed uses 0.8)
    seed : seed of the random attribution

    Returns
    -------
    pandas.DataFrame, with ``attrs["p_true"]`` the realized win rate and the original
    candidate ids kept in ``cand_a`` / ``cand_b``.
    """
    from .schema import validate_judgments

    v = validate_judgments(df)
    if v["human"].isna().any():
        rows = list(v.index[v["human"].isna()][:8])
        raise ValueError(f"assign_generators needs a human label on every row; missing in rows {rows}")
    preferred = np.where(v["human"] == "a", v["a"], v["b"])
    per_item = pd.DataFrame({"item": v["item"], "pref": preferred}).drop_duplicates()
    if per_item["item"].duplicated().any():
        bad = per_item.loc[per_item["item"].duplicated(), "item"].tolist()[:8]
        raise ValueError(f"assign_generators: contradicting human labels for item(s) {bad}")
    both = pd.concat([v[["item", "a"]].set_axis(["item", "c"], axis=1), v[["item", "b"]].set_axis(["item", "c"], axis=1)])
    both = both.drop_duplicates().groupby("item")["c"].size()
    if (both != 2).any():
        raise ValueError(
            f"assign_generators: item(s) {list(both.index[both != 2][:8])} do not compare exactly two candidates"
        )
    items = per_item["item"].to_numpy()
    n = len(items)
    rng = np.random.default_rng(seed)
    n_g0 = int(round(share * n))
    to_g0 = np.zeros(n, dtype=bool)
    to_g0[rng.permutation(n)[:n_g0]] = True
    pref_to_g0 = dict(zip(items, to_g0, strict=True))
    pref_of = dict(zip(items, per_item["pref"], strict=True))
    g0, g1 = systems
    is_pref_a = v["a"].to_numpy() == v["item"].map(pref_of).to_numpy()
    flag = v["item"].map(pref_to_g0).to_numpy().astype(bool)
    a_is_g0 = is_pref_a == flag
    out = v.copy()
    out["cand_a"], out["cand_b"] = v["a"], v["b"]
    out["a"] = np.where(a_is_g0, g0, g1)
    out["b"] = np.where(a_is_g0, g1, g0)
    out.attrs["p_true"] = n_g0 / n
    return out


# --------------------------------------------------------------------------------------------
# SummEval (seed 004 §4.1): 100 CNN/DM articles, 16 summaries each, expert scores 1-5
# --------------------------------------------------------------------------------------------

SUMMEVAL_ASPECTS: tuple[str, ...] = ("coherence", "consistency", "fluency", "relevance")
SUMMEVAL_TAU: float = 1.0


@lru_cache(maxsize=4)
def _read_summeval(file: str) -> pd.DataFrame:
    return pd.read_csv(data_dir() / "summeval" / file)


def _check_aspect(aspect: str) -> str:
    if aspect not in SUMMEVAL_ASPECTS:
        raise ValueError(f"unknown SummEval aspect {aspect!r}; expected one of {list(SUMMEVAL_ASPECTS)}")
    return aspect


def _summeval_articles(articles: int | Sequence[str] | None) -> list[str]:
    """Article (doc) ids in file order: all, the first ``n``, or the ones named."""
    order = list(pd.unique(_read_summeval("summaries.csv")["doc_id"]))
    if articles is None:
        return order
    if isinstance(articles, int | np.integer) and not isinstance(articles, bool):
        if not 1 <= articles <= len(order):
            raise ValueError(f"articles={articles}: expected between 1 and {len(order)} articles")
        return order[: int(articles)]
    if isinstance(articles, str):
        articles = [articles]
    wanted = [str(a) for a in articles]
    unknown = sorted(set(wanted) - set(order))
    if unknown:
        raise ValueError(f"unknown SummEval article id(s) {unknown[:5]}")
    return list(dict.fromkeys(wanted))


def summeval_judges() -> list[str]:
    """The pointwise LLM judge settings of the SummEval data, as ``"<llm>/<method>"``."""
    s = _read_summeval("llm_scores.csv")
    return sorted(pd.unique(s["llm"] + "/" + s["method"]))


def load_summeval_scores(aspect: str = "coherence", *, articles: int | Sequence[str] | None = None) -> pd.DataFrame:
    """Expert mean scores of the SummEval summaries, one row per (article, system).

    Parameters
    ----------
    aspect : {"coherence", "consistency", "fluency", "relevance"}
        The SummEval aspect (seed 004 §4.1: COH, CON, FLU, REL).
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
    >>> bj.load_summeval_scores("fluency", articles=2).shape
    (32, 4)
    """
    aspect = _check_aspect(aspect)
    keep = _summeval_articles(articles)
    s = _read_summeval("summaries.csv")
    s = s[s["doc_id"].isin(keep)]
    out = pd.DataFrame(
        {
            "item": s["doc_id"].astype(str).to_numpy(),
            "candidate": s["model_id"].astype(str).to_numpy(),
            "score": s[f"expert_mean_{aspect}"].astype(float).to_numpy(),
            "system_type": s["system_type"].astype(str).to_numpy(),
        }
    )
    art = pd.Index(keep).get_indexer(out["item"])
    order = np.lexsort((out["candidate"].to_numpy(), art))
    return out.iloc[order].reset_index(drop=True)


def load_summeval_pairs(
    aspect: str = "coherence",
    *,
    judge: str | Sequence[str] = "gpt-3.5-turbo-0301/rts",
    articles: int | Sequence[str] | None = None,
    tau: float = SUMMEVAL_TAU,
) -> pd.DataFrame:
    """Soft pairwise judgments between the 12 abstractive SummEval systems of every article.

    The SummEval data carry *pointwise* LLM scores (1 to 5, one per summary and judge setting),
    not pairwise probabilities.  Seed 004 obtains ``p_ij`` from a pairwise prompt as
    ``P(A) / (P(A) + P(B))`` over the answer tokens (§4.2, "LLM Pairwise Probability
    Calculation"), which needs token probabilities these data do not have.  We therefore map
    the two pointwise scores ``s_i``, ``s_j`` of a pair to

    .. math:: p_{ij} = \\sigma\\big((s_i - s_j) / \\tau\\big),\\qquad \\tau = 1 \\text{ by default},

    the Bradley-Terry probability (seed 004 eq. 2) of the score difference in units of ``τ``
    score points: equal scores give 0.5 (a tie for the hard decision), a 1-point gap 0.731, a
    4-point gap 0.982.  ``p_ij + p_ji = 1`` exactly in meaning (up to one rounding), so the
    table carries no position bias; rank it with ``debias=False``.

    Parameters
    ----------
    aspect : {"coherence", "consistency", "fluency", "relevance"}
    judge : str or sequence of str
        The LLM judge setting ``"<llm>/<method>"`` (see :func:`summeval_judges`; e.g.
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
    >>> df = bj.load_summeval_pairs("coherence", articles=1)
    >>> df.shape, df["a"].nunique()
    ((132, 9), 12)
    """
    from scipy.special import expit

    aspect = _check_aspect(aspect)
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a positive number of score points, got {tau!r}")
    judges = [judge] if isinstance(judge, str) else [str(j) for j in judge]
    known = summeval_judges()
    unknown = [j for j in judges if j not in known]
    if unknown or not judges:
        raise ValueError(f"unknown SummEval judge setting(s) {unknown}; available: {known}")
    keep = _summeval_articles(articles)

    s = _read_summeval("llm_scores.csv")
    setting = s["llm"] + "/" + s["method"]
    s = s[setting.isin(judges) & (s["aspect"] == aspect) & s["doc_id"].isin(keep)]
    llm = s.groupby(["doc_id", "model_id"])["score"].agg(["mean", "size"])
    if llm["mean"].isna().any() or (llm["size"] != len(judges)).any():
        bad = llm.index[llm["mean"].isna() | (llm["size"] != len(judges))][:5].tolist()
        raise ValueError(f"missing LLM score for (article, system) {bad} with judge {judge!r}")
    llm = llm["mean"]

    expert = load_summeval_scores(aspect, articles=keep)
    expert = expert[expert["system_type"] == "abstractive"]
    systems = np.sort(expert["candidate"].unique())
    n_art, n_sys = len(keep), len(systems)
    if len(expert) != n_art * n_sys:
        raise ValueError("SummEval data: not every article has every abstractive system")
    # (article, system) grids in article order x sorted system ids
    idx = pd.MultiIndex.from_product([keep, systems])
    llm_grid = llm.reindex(idx).to_numpy().reshape(n_art, n_sys)
    if np.isnan(llm_grid).any():
        raise ValueError(f"missing LLM scores for judge {judge!r} on aspect {aspect!r}")
    hum_grid = expert.set_index(["item", "candidate"])["score"].reindex(idx).to_numpy().reshape(n_art, n_sys)

    ii, jj = np.nonzero(~np.eye(n_sys, dtype=bool))  # ordered pairs i != j
    d = (llm_grid[:, ii] - llm_grid[:, jj]) / tau  # (articles, pairs)
    # p_ij = sigma(d); written as 1 - sigma(|d|) for d < 0 so that p_ij + p_ji = 1 to rounding
    up = expit(np.abs(d))
    p = np.where(d >= 0, up, 1.0 - up)
    h = hum_grid[:, ii] - hum_grid[:, jj]
    human = np.where(h > 0, "a", np.where(h < 0, "b", None)).astype(object)
    n_pairs = len(ii)
    return pd.DataFrame(
        {
            "item": np.repeat(np.asarray(keep, dtype=object), n_pairs),
            "a": np.tile(systems[ii], n_art).astype(object),
            "b": np.tile(systems[jj], n_art).astype(object),
            "judge": "+".join(judges),
            "p_a": p.ravel(),
            "winner": np.where(d > 0, "a", np.where(d < 0, "b", "tie")).ravel().astype(object),
            "human": pd.Series(human.ravel(), dtype=object),  # None where the experts tie
            "score_a": llm_grid[:, ii].ravel(),
            "score_b": llm_grid[:, jj].ravel(),
        }
    )


def load_summeval_texts(*, articles: int | Sequence[str] | None = None,
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
    >>> texts, contexts = bj.load_summeval_texts(articles=1)
    >>> len(texts), len(contexts)
    (16, 1)
    """
    keep = _summeval_articles(articles)
    s = _read_summeval("summaries.csv")
    s = s[s["doc_id"].isin(keep)]
    if systems is not None:
        unknown = sorted(set(map(str, systems)) - set(s["model_id"]))
        if unknown:
            raise ValueError(f"unknown SummEval system id(s) {unknown}")
        s = s[s["model_id"].isin(list(map(str, systems)))]
    texts = pd.DataFrame({"item": s["doc_id"].astype(str).to_numpy(),
                          "candidate": s["model_id"].astype(str).to_numpy(),
                          "text": s["summary"].astype(str).to_numpy()})
    art = _read_summeval("articles.csv")
    ctx = dict(zip(art["doc_id"].astype(str), art["article"].astype(str), strict=True))
    return texts.reset_index(drop=True), {d: ctx[d] for d in keep}
