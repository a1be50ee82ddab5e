"""The LLMBar family (Zeng et al. 2024, as staged for Gao et al. 2024), read into the judgments schema.

Each item has an instruction, two outputs and a human label; each evaluator judged every item in
both presentation orders.  In the judgments table the candidates are the outputs
``"output_1"`` / ``"output_2"``; ``a`` is the output shown first (``swap = 1`` shows
``output_2`` first); ``winner`` and ``human`` are in that row's orientation.  A verdict the
authors could not parse, or a rating tie, becomes ``winner = "tie"`` with the reason kept in
``note`` (no row is dropped).  Files: ``data/llmbar/<subset>/{items,judgments}.csv``.

These are the named sets of :func:`bayes_judge.datasets.load` (``bj.load_dataset``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import prefixed
from ._files import read_csv

__all__ = ["SUBSETS", "ALIASES", "ADVERSARIAL", "names", "load", "items"]

#: dataset name -> folder under ``data/llmbar/``
SUBSETS: dict[str, str] = {
    "llmbar_natural": "natural",
    "llmbar_adversarial_gptinst": "adversarial_gptinst",
    "llmbar_adversarial_gptout": "adversarial_gptout",
    "llmbar_adversarial_manual": "adversarial_manual",
    "llmbar_adversarial_neighbor": "adversarial_neighbor",
    "mtbench": "mtbench",
    "llmeval2": "llmeval2",
}
ALIASES: dict[str, str] = {"llmbar_mtbench": "mtbench", "llmbar_llmeval2": "llmeval2", "natural": "llmbar_natural"}
ADVERSARIAL: list[str] = [k for k in SUBSETS if k.startswith("llmbar_adversarial")]


def names() -> list[str]:
    """Names accepted by :func:`load`: the seven sets and ``"llmbar"`` (Natural + Adversarial)."""
    return sorted(SUBSETS) + ["llmbar"]


def _resolve(name: str) -> str:
    name = ALIASES.get(name, name)
    if name not in SUBSETS and name != "llmbar":
        raise ValueError(f"unknown dataset {name!r}; available: {names()}")
    return name


def _read(name: str, file: str) -> pd.DataFrame:
    return read_csv(f"llmbar/{SUBSETS[name]}/{file}")


def _llmbar_parts() -> list[str]:
    return ["llmbar_natural", *ADVERSARIAL]


def items(name: str) -> pd.DataFrame:
    """The items of an LLMBar-family set: item, input, output_1, output_2, human_label (1 / 2).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> items = bj.load_items("llmbar_natural")
    >>> list(items.columns), len(items)
    (['item', 'input', 'output_1', 'output_2', 'human_label'], 100)
    """
    name = _resolve(name)
    if name == "llmbar":
        return pd.concat(
            [prefixed(items(n), n.removeprefix("llmbar_") + ":") for n in _llmbar_parts()],
            ignore_index=True,
        )
    out = _read(name, "items.csv").rename(columns={"item_id": "item"}).copy()
    out["item"] = out["item"].astype(str)
    return out


def load(name: str) -> pd.DataFrame:
    """A bundled real data set as a judgments table.

    Parameters
    ----------
    name : str
        ``"mtbench"`` (200 MT-Bench items, 8 evaluators), ``"llmeval2"`` (200 items, 8
        evaluators), ``"llmbar_natural"`` and the four ``"llmbar_adversarial_*"`` subsets
        (65 evaluators each), or ``"llmbar"``: Natural and Adversarial together (419 items,
        item ids prefixed by the subset).  See :func:`names`.

    Returns
    -------
    pandas.DataFrame
        Columns item, a, b, judge, winner, human (judgments schema) and base_llm, strategy,
        swap, note from the source.  One row per (item, evaluator, presentation order).

    Raises
    ------
    ValueError
        An unknown name.

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.datasets.load("mtbench")
    >>> df.shape, sorted(df["judge"].unique())[:2]
    ((3200, 10), ['ChatGPT/Metrics_Reference', 'ChatGPT/Vanilla_NoRules'])
    """
    name = _resolve(name)
    if name == "llmbar":
        parts = []
        for n in _llmbar_parts():
            d = load(n)
            d["item"] = n.removeprefix("llmbar_") + ":" + d["item"]
            parts.append(d)
        return pd.concat(parts, ignore_index=True)
    its = _read(name, "items.csv")
    j = _read(name, "judgments.csv")
    label = dict(zip(its["item_id"], its["human_label"], strict=True))
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
