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
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["load_dataset", "list_datasets", "load_items", "assign_generators", "data_dir"]

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
