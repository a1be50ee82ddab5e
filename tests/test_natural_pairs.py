"""benchmarks/natural_pairs.py on a small grid, and the natural-pairs reader it uses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from bayes_judge.datasets import natural

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def test_system_pairs_reads_every_pair_of_real_systems():
    df = natural.system_pairs("hanna", "coherence", items=3)
    assert df["judge"].nunique() == 5 and (df["a"] < df["b"]).all()
    assert df.groupby(["item", "judge"]).size().max() == 55  # 11 systems, every pair once
    t = natural.truth(df)
    one = df.drop_duplicates(["item", "a", "b"])
    first = one[(one["a"] == "BertGeneration") & (one["b"] == "CTRL") & one["human"].notna()]
    assert t["BertGeneration vs CTRL"] == pytest.approx((first["human"] == "a").mean())
    assert natural.n_decided(df)["BertGeneration vs CTRL"] == len(first)
    with pytest.raises(ValueError, match="aspect must be one of"):
        natural.system_pairs("summeval", "surprise")
    with pytest.raises(ValueError, match="unknown judge"):
        natural.system_pairs("hanna", "coherence", panel=["GPT-9"])


@pytest.mark.slow
def test_benchmark_small_grid(tmp_path):
    import natural_pairs as bench

    out = tmp_path / "np"
    bench.main(["--sets", "summeval/fluency", "--reps", "1", "--synth-reps", "1", "--budgets", "0,0.3",
                "--out", str(out)])
    rec = pd.DataFrame(json.loads(out.with_suffix(".json").read_text())["records"])
    assert {"default", "bridge_loso", "observed", "judges", "ppi++", "labels_only"} <= set(rec["estimator"])
    nat = rec[(rec.protocol == "natural") & (rec.budget == 0)]
    assert nat[nat.estimator == "default"]["covered"].mean() >= 0.8
    assert nat[nat.estimator == "observed"]["covered"].mean() < 0.5
    assert "## Targets (issue 30)" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").stat().st_size > 0
