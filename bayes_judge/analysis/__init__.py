"""Analysis of fits: summaries, model comparison, saved runs and calibration checks.

* :mod:`~bayes_judge.analysis.summary`: tables of a fit (``bj.win_rate_summary``,
  ``bj.judge_summary``, ``bj.score_summary``, ``bj.pairwise_prob``, ``bj.compare_systems``);
* :mod:`~bayes_judge.analysis.comparison`: models compared by PSIS-LOO (``bj.compare_models``);
* :mod:`~bayes_judge.analysis.runs`: fits saved to and loaded from disk (``bj.save_run``,
  ``bj.load_run``);
* :mod:`~bayes_judge.analysis.sbc`: simulation-based calibration of the posterior intervals.

The modules are imported on use (nothing here imports them), so that ``import bayes_judge`` stays
light.
"""
