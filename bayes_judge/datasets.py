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
    "load_summeval_comparator",
    "summeval_judges",
    "load_hanna_scores",
    "load_hanna_pairs",
    "load_hanna_texts",
    "hanna_judges",
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
            [_prefixed(load_items(n), n.removeprefix("llmbar_") + ":") for n in _llmbar_parts()],
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
    cands = pd.concat([v[["item", "a"]].set_axis(["item", "c"], axis=1), v[["item", "b"]].set_axis(["item", "c"], axis=1)])
    both = cands.drop_duplicates().groupby("item")["c"].size()
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


def _prefixed(df: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """``df`` with ``prefix`` before every item id."""
    return df.assign(item=prefix + df["item"].astype(str))


def _preference(diff: np.ndarray) -> pd.Series:
    """``"a"`` where ``diff > 0``, ``"b"`` where ``diff < 0``, None at a tie or a missing value."""
    out = np.full(len(diff), None, dtype=object)
    out[diff > 0] = "a"
    out[diff < 0] = "b"
    return pd.Series(out, dtype="object")


def _select_ids(order: list[str], wanted, *, noun: str, dataset: str) -> list[str]:
    """Ids of a bundled data set: all (``None``), the first ``n`` of ``order``, or the ones named.

    Named ids keep the caller's order (duplicates dropped); an empty list or an unknown id is an
    error that names the ids, so that no call silently selects nothing.
    """
    if wanted is None:
        return order
    if isinstance(wanted, int | np.integer) and not isinstance(wanted, bool):
        if not 1 <= wanted <= len(order):
            raise ValueError(f"{noun}s={wanted}: expected between 1 and {len(order)} {noun}s")
        return order[: int(wanted)]
    if isinstance(wanted, str):
        wanted = [wanted]
    names = [str(a) for a in wanted]
    unknown = sorted(set(names) - set(order))
    if unknown or not names:
        raise ValueError(
            f"unknown {dataset} {noun} id(s) {unknown[:5]}; ids are {order[0]!r} ... {order[-1]!r}"
            if unknown else f"{noun}s=[] selects no {dataset} {noun}; give ids, a count or None for all"
        )
    return list(dict.fromkeys(names))


def _check_judges(judge: str | Sequence[str], known: list[str], dataset: str) -> list[str]:
    """The judge setting(s) asked for, each one of ``known``."""
    judges = [judge] if isinstance(judge, str) else [str(j) for j in judge]
    unknown = [j for j in judges if j not in known]
    if unknown or not judges:
        raise ValueError(f"unknown {dataset} judge setting(s) {unknown}; available: {known}")
    return judges


def _check_tau(tau: float) -> None:
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a positive number of score points, got {tau!r}")


def _soft_pairs(frame: pd.DataFrame, *, tau: float, judge: str) -> pd.DataFrame:
    """Every ordered pair of distinct candidates within each item, from pointwise scores.

    ``frame`` has one row per (item, candidate) with columns item, candidate, llm (the LLM's
    score) and human (the human score), each item's rows contiguous, in the order wanted.
    ``p_ij = sigma((llm_i - llm_j) / tau)``, written as ``1 - sigma(|d|)`` for ``d < 0`` so
    that ``p_ij + p_ji = 1`` to rounding; pairs come item by item, then row-major (``i`` then
    ``j``), as ``np.nonzero(~np.eye(n))``.  Vectorized over items of any sizes.
    """
    from scipy.special import expit

    item = frame["item"].to_numpy(dtype=object)
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    sizes = np.diff(np.r_[starts, len(item)])
    n_row = np.repeat(sizes, sizes)  # the size of each row's item
    start_row = np.repeat(starts, sizes)
    a = np.repeat(np.arange(len(item)), n_row)  # each row against every row of its item
    block = np.repeat(np.cumsum(n_row) - n_row, n_row)
    b = start_row[a] + (np.arange(len(a)) - block)
    a, b = a[a != b], b[a != b]
    s = frame["llm"].to_numpy(dtype=float)
    hs = frame["human"].to_numpy(dtype=float)
    c = frame["candidate"].to_numpy(dtype=object)
    d = (s[a] - s[b]) / tau
    up = expit(np.abs(d))
    h = hs[a] - hs[b]
    return pd.DataFrame(
        {
            "item": item[a],
            "a": c[a],
            "b": c[b],
            "judge": judge,
            "p_a": np.where(d >= 0, up, 1.0 - up),
            "winner": np.where(d > 0, "a", np.where(d < 0, "b", "tie")).astype(object),
            "human": _preference(h),
            "score_a": s[a],
            "score_b": s[b],
        }
    )


def _summeval_articles(articles: int | Sequence[str] | None) -> list[str]:
    """Article (doc) ids in file order: all, the first ``n``, or the ones named."""
    order = list(pd.unique(_read_summeval("summaries.csv")["doc_id"]))
    return _select_ids(order, articles, noun="article", dataset="SummEval")


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
    art = pd.Index(keep).get_indexer(pd.Index(out["item"]))
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
    aspect = _check_aspect(aspect)
    _check_tau(tau)
    judges = _check_judges(judge, summeval_judges(), "SummEval")
    keep = _summeval_articles(articles)

    s = _read_summeval("llm_scores.csv")
    setting = s["llm"] + "/" + s["method"]
    s = s[setting.isin(judges) & (s["aspect"] == aspect) & s["doc_id"].isin(keep)]
    llm = s.groupby(["doc_id", "model_id"])["score"].agg(["mean", "size"])
    if llm["mean"].isna().any() or (llm["size"] != len(judges)).any():
        bad = llm.index[llm["mean"].isna() | (llm["size"] != len(judges))][:5].tolist()
        raise ValueError(f"missing LLM score for (article, system) {bad} with judge {judge!r}")
    llm_mean = llm["mean"]

    expert = load_summeval_scores(aspect, articles=keep)
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
    return _soft_pairs(grid, tau=tau, judge="+".join(judges))  # human: None where the experts tie


def load_summeval_comparator(
    aspect: str = "coherence", *, articles: int | Sequence[str] | None = None
) -> pd.DataFrame:
    """The embedded judge's pairwise probabilities between all 16 SummEval summaries of an article.

    Real pairwise LLM judgments, as seed 004 §5.1 uses them (N = 16, the full set K = 240 per
    article): SmolLM2-135M-Instruct, the package's default comparator, in prob mode
    (``p = P(w_A) / (P(w_A) + P(w_B))``, seed 001 eq. 3) with the ``summeval-<aspect>``
    template, every pair in both orders, for the first 10 articles.  Unlike
    :func:`load_summeval_pairs` these probabilities carry the judge's position bias
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
    >>> df = bj.load_summeval_comparator("coherence", articles=1)
    >>> df.shape, df["a"].nunique()
    ((240, 9), 16)
    """
    aspect = _check_aspect(aspect)
    raw = _read_summeval("smollm2_pairwise.csv")
    keep = _select_ids(list(pd.unique(raw["item"])), articles, noun="article", dataset="SummEval comparator")
    df = raw[(raw["aspect"] == aspect) & raw["item"].isin(keep)]
    df = df.iloc[np.argsort(pd.Index(keep).get_indexer(pd.Index(df["item"])), kind="stable")]
    expert = load_summeval_scores(aspect, articles=keep).set_index(["item", "candidate"])["score"]
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
            "human": _preference(h),
            "order": df["order"].to_numpy(dtype=object),
            "label_mass": df["label_mass"].to_numpy(),
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


# --------------------------------------------------------------------------------------------
# HANNA (Chhun et al. 2022; seed 004 §4.1): 96 story prompts × 11 systems = 1056 stories,
# 3 human ratings (1-5) on 6 criteria, pointwise scores from 20 LLM evaluator settings
# --------------------------------------------------------------------------------------------

HANNA_CRITERIA: tuple[str, ...] = ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")
# the story-generation systems, in the source's row order (story_id // 96)
HANNA_SYSTEMS: tuple[str, ...] = (
    "Human", "BertGeneration", "CTRL", "GPT", "GPT-2 (tag)", "GPT-2", "RoBERTa", "XLNet", "Fusion", "HINT", "TD-VAE",
)
HANNA_TAU: float = 1.0
HANNA_FAILURE_BELOW: float = 1.0  # an LLM mean_score below 1 averages in a failed answer (coded -1)


@lru_cache(maxsize=4)
def _read_hanna(file: str) -> pd.DataFrame:
    return pd.read_csv(data_dir() / "hanna" / file)


def _check_criterion(criterion: str) -> str:
    if criterion not in HANNA_CRITERIA:
        raise ValueError(f"unknown HANNA criterion {criterion!r}; expected one of {list(HANNA_CRITERIA)}")
    return criterion


def _hanna_prompts(prompts: int | Sequence[str | int] | None) -> list[str]:
    """HANNA prompt ids (as str) in id order: all 96, the first ``n``, or the ones named."""
    order = [str(p) for p in sorted(pd.unique(_read_hanna("stories.csv")["prompt_id"]))]
    return _select_ids(order, prompts, noun="prompt", dataset="HANNA")


def _hanna_stories(keep: list[str]) -> pd.DataFrame:
    s = _read_hanna("stories.csv")
    s = s.assign(item=s["prompt_id"].astype(str))
    s = s[s["item"].isin(keep)]
    pos = pd.Index(keep).get_indexer(pd.Index(s["item"]))
    order = np.lexsort((s["model"].astype(str).to_numpy(), pos))
    return s.iloc[order].reset_index(drop=True)


def hanna_judges() -> list[str]:
    """The 20 pointwise LLM evaluator settings of HANNA, as ``"<llm>/<eval_prompt>"``."""
    s = _read_hanna("llm_ratings.csv")
    return sorted(pd.unique(s["llm"].astype(str) + "/" + s["eval_prompt"].astype(str)))


def load_hanna_scores(criterion: str = "coherence", *, prompts: int | Sequence[str | int] | None = None) -> pd.DataFrame:
    """Human mean scores of the HANNA stories, one row per (prompt, system).

    Parameters
    ----------
    criterion : {"relevance", "coherence", "empathy", "surprise", "engagement", "complexity"}
        The HANNA criterion (seed 004 uses coherence COH, complexity CMP, surprise SUR).
    prompts : int or sequence of str, optional
        All 96 writing prompts (default), the first ``n`` by id, or the named prompt ids
        (``"0"`` ... ``"95"``; ints are accepted).

    Returns
    -------
    pandas.DataFrame, shape (11 * n_prompts, 4)
        Columns item (the prompt id as str), candidate (the system that wrote the story:
        ``"Human"``, ``"GPT-2"``, ``"HINT"``, ...; see ``HANNA_SYSTEMS``), score (mean of the
        3 human ratings, 1 to 5, higher is better), story_id.  Sorted by prompt id then
        candidate.

    Raises
    ------
    ValueError
        Unknown criterion or prompt id.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> bj.load_hanna_scores("surprise", prompts=2).shape
    (22, 4)
    """
    criterion = _check_criterion(criterion)
    keep = _hanna_prompts(prompts)
    st = _hanna_stories(keep)
    h = _read_hanna("human_ratings.csv")
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


def load_hanna_pairs(
    criterion: str = "coherence",
    *,
    judge: str | Sequence[str] = "ChatGPT/1",
    prompts: int | Sequence[str | int] | None = None,
    tau: float = HANNA_TAU,
    on_failure: str = "skip",
) -> pd.DataFrame:
    """Soft pairwise judgments between the 11 stories of every HANNA prompt.

    Like :func:`load_summeval_pairs`: the data hold *pointwise* LLM scores (the mean of an
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
        :func:`hanna_judges`: llm in Beluga-13B, ChatGPT, Llama-13B, Mistral-7B, OrcaPlatypus;
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
    >>> df = bj.load_hanna_pairs("coherence", prompts=1)
    >>> df.shape, df["a"].nunique(), df.attrs["n_failed_stories"]
    ((110, 9), 11, 0)
    """
    criterion = _check_criterion(criterion)
    _check_tau(tau)
    if on_failure not in ("skip", "raise"):
        raise ValueError(f"on_failure must be 'skip' or 'raise', got {on_failure!r}")
    judges = _check_judges(judge, hanna_judges(), "HANNA")
    keep = _hanna_prompts(prompts)
    human = load_hanna_scores(criterion, prompts=keep)

    r = _read_hanna("llm_ratings.csv")
    setting = r["llm"].astype(str) + "/" + r["eval_prompt"].astype(str)
    r = r.assign(judge=setting)[setting.isin(judges) & (r["criterion"] == criterion)]
    r = r[r["story_id"].isin(human["story_id"])]
    if r.duplicated(["story_id", "judge"]).any() or len(r) != len(human) * len(judges):
        raise ValueError(f"HANNA data: not exactly one LLM score per story for judge {judge!r}, {criterion!r}")
    failed = r[r["mean_score"] < HANNA_FAILURE_BELOW]
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
    out = _soft_pairs(frame, tau=tau, judge="+".join(judges))
    n_all = human.groupby("item", sort=False).size()
    n_ok = frame.groupby("item", sort=False).size().reindex(n_all.index, fill_value=0)
    n_dropped = int((n_all * (n_all - 1) - n_ok * (n_ok - 1)).sum())
    out.attrs["n_failed_stories"] = len(failed_ids)
    out.attrs["failed_stories"] = failed_rows
    out.attrs["n_dropped_pairs"] = int(n_dropped)
    return out


def load_hanna_texts(
    prompts: int | Sequence[str | int] | None = None, *, systems: Sequence[str] | None = None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The HANNA stories and their writing prompts, for a comparator run.

    Parameters
    ----------
    prompts : int or sequence of str, optional
        All 96 prompts (default), the first ``n`` by id, or the named prompt ids.
    systems : sequence of str, optional
        Keep only these systems (names as in ``HANNA_SYSTEMS``); default all 11.

    Returns
    -------
    texts : DataFrame with columns item (prompt id), candidate (system name), text (the story),
        sorted by prompt id then candidate
    contexts : dict prompt id → writing prompt text

    Examples
    --------
    >>> import bayes_judge as bj
    >>> texts, contexts = bj.load_hanna_texts(prompts=1)
    >>> len(texts), len(contexts)
    (11, 1)
    """
    keep = _hanna_prompts(prompts)
    full = _hanna_stories(keep)
    ctx = full.groupby("item", sort=False)["prompt"].agg(["first", "nunique"])
    if (ctx["nunique"] != 1).any():
        raise ValueError(f"HANNA data: prompt text differs within prompt id(s) {ctx.index[ctx['nunique'] != 1][:5].tolist()}")
    st = full
    if systems is not None:
        wanted = [str(s) for s in systems]
        unknown = sorted(set(wanted) - set(HANNA_SYSTEMS))
        if unknown or not wanted:
            raise ValueError(f"unknown HANNA system(s) {unknown}; expected some of {list(HANNA_SYSTEMS)}")
        st = st[st["model"].isin(wanted)]
    texts = pd.DataFrame(
        {
            "item": st["item"].to_numpy(dtype=object),
            "candidate": st["model"].astype(str).to_numpy(dtype=object),
            "text": st["story"].astype(str).to_numpy(dtype=object),
        }
    )
    return texts.reset_index(drop=True), {p: str(ctx.at[p, "first"]) for p in keep}
