"""Two simulated generators from a two-candidate data set (Gao et al. 2024 §4.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["assign_generators"]


def assign_generators(
    df: pd.DataFrame,
    *,
    share: float = 0.8,
    systems: tuple[str, str] = ("G0", "G1"),
    seed: int = 0,
) -> pd.DataFrame:
    """Simulate two generators from a two-candidate data set (Gao et al. 2024 §4.1).

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

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.assign_generators(bj.load_dataset("mtbench"), share=0.8, seed=0)
    >>> df.attrs["p_true"]
    0.8
    """
    from ..schema import validate_judgments

    if isinstance(share, bool) or not isinstance(share, int | float | np.integer | np.floating) or not 0 <= share <= 1:
        raise ValueError(f"share is the true win rate of {systems[0]!r}, a number in [0, 1]; got {share!r}")
    if len(systems) != 2 or str(systems[0]) == str(systems[1]):
        raise ValueError(f"systems must be two different names, got {systems!r}")
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
