"""Derive ``smollm2_pairwise.csv``: the embedded judge's pairwise probabilities on SummEval.

The package's default comparator, SmolLM2-135M-Instruct (``Comparator()``, prob mode: seed 001
eq. 3, ``p = P(w_A) / (P(w_A) + P(w_B))`` from the next token), judges all 16 summaries of the
first ``--articles`` articles (file order of ``summaries.csv``) for each SummEval aspect with the
``summeval-<aspect>`` template: every unordered pair in both orders, 16 · 15 = 240 ordered
comparisons per (article, aspect), the full set of seed 004 §5.1 (N = 16, K = 240).

Each aspect's judgments go to a resumable SQLite store (``--store-dir``, default
``models/derive/``; git-ignored): an interrupted run resumes where it stopped.  The table
written holds one row per judgment: item (doc id), aspect, a, b (shown first, second), order
(``"ab"``: the pair as planned, ``"ba"``: swapped), judge, p_a, label_mass (the probability
of the two label tokens together).  Probabilities are float32 forward passes, batched; a rerun
in another batch layout can differ in the 6th decimal.

Usage (from the repository root, with the ``llm`` extra and ``bayes-judge models install``)::

    .venv/bin/python data/summeval/derive_smollm2_pairwise.py                 # 10 articles x 4 aspects
    .venv/bin/python data/summeval/derive_smollm2_pairwise.py --articles 2 --aspects coherence

``--model`` runs another judge the same way (a local transformers folder or ``.gguf`` file, as
``Comparator(model=...)``; on a GPU when there is one) and ``--out`` names its table; read such a
table with ``benchmarks/efficiency_curves.py --judgments FILE``.

Read it with :func:`bayes_judge.datasets.summeval.comparator`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import bayes_judge as bj  # noqa: E402

COLUMNS = ["item", "aspect", "a", "b", "order", "judge", "p_a", "label_mass"]


def main(argv: list[str] | None = None) -> pd.DataFrame:
    from bayes_judge.comparator import Comparator

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=10, help="first n articles (default 10)")
    ap.add_argument("--aspects", default="all", help="comma-separated aspects, or 'all' (default)")
    ap.add_argument("--model", default=None, help="another judge: a local folder or .gguf file (default: the embedded one)")
    ap.add_argument("--store-dir", type=Path, default=ROOT / "models" / "derive")
    ap.add_argument("--out", type=Path, default=HERE / "smollm2_pairwise.csv")
    args = ap.parse_args(argv)
    aspects = list(bj.datasets.summeval.ASPECTS) if args.aspects == "all" else args.aspects.split(",")
    texts, contexts = bj.datasets.summeval.texts(articles=args.articles)
    pairs = pd.DataFrame(
        [(item, a, b) for item, g in texts.groupby("item", sort=False)
         for a, b in itertools.combinations(sorted(g["candidate"]), 2)],
        columns=["item", "a", "b"],
    )
    args.store_dir.mkdir(parents=True, exist_ok=True)
    lm, parts = None, []
    for aspect in aspects:
        t0 = time.perf_counter()
        judge = Comparator(lm if lm is not None else args.model, template=f"summeval-{aspect}")
        lm = judge.lm
        name = "smollm2" if args.model is None else Path(args.model).stem
        df = judge.compare(pairs, texts=texts, contexts=contexts, symmetric=True,
                           store=args.store_dir / f"summeval_{name}_{aspect}.sqlite", progress=False)
        parts.append(df.assign(aspect=aspect)[COLUMNS])
        print(f"{aspect}: {len(df)} comparisons, P(A) = {df.attrs['position_bias']['P(A)']:.3f}, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    out = pd.concat(parts, ignore_index=True)
    out.to_csv(args.out, index=False, float_format="%.7g")
    print(f"wrote {args.out} ({len(out)} rows)")
    return out


if __name__ == "__main__":
    main()
