"""Bundled real data, read into the judgments schema: one namespace, one module per source.

The raw files live unchanged in the repository's top-level ``data/`` folder (provenance in
``data/README.md``) and are installed with the package (see :mod:`._files`); the modules here
are the one script that derives the tables from them.

Naming: named judgments tables come from :func:`load`; everything else specific to one source is
``bj.datasets.<source>.<what>(...)``, the same verbs for every source.

==============================================  ==================================================
``bj.datasets.load(name)``                      a named set as a judgments table (``bj.load_dataset``)
``bj.datasets.names()``                         the names :func:`load` accepts
``bj.datasets.items(name)``                     the items (texts, human label) of a named set (``bj.load_items``)
``bj.datasets.assign_generators(df)``           two simulated systems with a known win rate (``bj.assign_generators``)
``bj.datasets.llmbar``                          LLMBar, MT-Bench, LLMEval²: the sets behind :func:`load`
``bj.datasets.summeval.scores(aspect)``         expert scores, one row per (article, system)
``bj.datasets.summeval.pairs(aspect)``          soft pairwise judgments from pointwise LLM scores
``bj.datasets.summeval.comparator(aspect)``     the embedded judge's pairwise probabilities
``bj.datasets.summeval.texts()``                summaries and articles, for a comparator run
``bj.datasets.summeval.judges()``               the LLM judge settings, ``ASPECTS``, ``TAU``
``bj.datasets.hanna.scores(criterion)``         human mean scores, one row per (prompt, system)
``bj.datasets.hanna.pairs(criterion)``          soft pairwise judgments from pointwise LLM scores
``bj.datasets.hanna.texts()``                   stories and writing prompts, for a comparator run
``bj.datasets.hanna.judges()``                  the LLM evaluator settings, ``CRITERIA``, ``SYSTEMS``, ``TAU``
==============================================  ==================================================

>>> import bayes_judge as bj
>>> bj.datasets.names()[:2]
['llmbar_adversarial_gptinst', 'llmbar_adversarial_gptout']
>>> bj.datasets.summeval.pairs("coherence", articles=1).shape
(132, 9)
"""

from __future__ import annotations

from . import hanna, llmbar, summeval
from ._generators import assign_generators
from .llmbar import items, load, names

__all__ = ["load", "names", "items", "assign_generators", "llmbar", "summeval", "hanna"]
