"""The bundled data, installed with the package as ``bayes_judge._bundled`` (package data only).

``pyproject.toml`` maps the import name ``bayes_judge._bundled`` to this folder, and
``bayes_judge.datasets`` reads the files through ``importlib.resources``.  The files and their
provenance are described in ``README.md`` here.
"""
