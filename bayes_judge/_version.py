"""The package's version, stated once (pyproject.toml reads it; runs and reports record it)."""

__version__ = "0.1.0"
