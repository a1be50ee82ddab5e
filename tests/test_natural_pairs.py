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


def test_missed_cells_explains_with_sampling_error_and_the_cost_of_narrowing():
    import natural_pairs as bench

    rows = []
    # natural: 10 cases, the truth 0.15 above the estimate: inside the interval at f = 1 (0.2 above
    # it), outside at f = 0.7 (0.14)
    for _ in range(10):
        rows.append(dict(protocol="natural", set="s/a", estimator="default", budget=0.0, truth=0.6,
                         estimate=0.45, low=0.25, high=0.65, covered=True, error=0.15, width=0.4))
    # synthetic (seed003 only): 20 informative cases, 17 covered; k's error below the default's
    for i in range(20):
        cov = i < 17
        rows.append(dict(protocol="seed003", set="mtbench", estimator="default", budget=0.0, truth=0.5,
                         estimate=0.5 if cov else 0.9, low=0.3 if cov else 0.8, high=0.7 if cov else 0.95,
                         covered=cov, error=0.0 if cov else 0.4, width=0.4 if cov else 0.15))
        rows.append(dict(protocol="seed003", set="mtbench", estimator="observed", budget=0.0, truth=0.5,
                         estimate=0.55, low=0.54, high=0.56, covered=False, error=0.05, width=0.02))
    lines = "\n".join(bench.missed_cells(pd.DataFrame(rows)))
    lo, hi = bench._wilson(17, 20)
    assert lo < 0.85 < hi and f"17/20 = 85.0%, 90% Wilson interval [{lo:.1%}, {hi:.1%}]" in lines
    assert "error 0.060 against k's 0.050, difference +0.0100" in lines
    f1 = next(x for x in lines.splitlines() if x.startswith("| 1 |"))
    f07 = next(x for x in lines.splitlines() if x.startswith("| 0.7 |"))
    assert f1.startswith("| 1 | 100% | 100% (s/a) | 85% |") and f07.startswith("| 0.7 | 0% | 0% (s/a) | 85% |")
    assert f1.endswith("| 85% | — | 0.362 |") and f07.endswith("| 85% | — | 0.254 |")  # (17·0.4 + 3·0.15) / 20
