"""Self-contained HTML diagnostics reports of fitted win rates, rankings and leaderboards.

``bj.report(idata_or_runs, path)`` writes one HTML file: per run, a data summary, convergence
diagnostics with failures explained, trace and rank plots, the estimates, posterior predictive
checks and priors against posteriors.  The building steps live in submodules: ``inputs`` (what is
accepted), ``diagnostics`` (R-hat, ESS, divergences, E-BFMI), ``ppc`` (replicated data),
``sections`` (one function per section), ``blocks`` (tables and images) and ``core`` (rendering
with the Jinja2 template in ``templates/``).

Every submodule is imported here, so that the name ``bayes_judge.report`` on the package stays
bound to the :func:`report` function (``bj.report``) and never gets rebound to this subpackage.
"""

from . import blocks, core, diagnostics, inputs, ppc, sections
from .core import render_html, report

__all__ = ["report", "render_html", "blocks", "core", "diagnostics", "inputs", "ppc", "sections"]
