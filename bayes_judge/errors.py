"""Exceptions shared by the comparator and the command line, importable without pandas or torch.

The CLI reports these as one-line user errors (an unreachable server, a refused key, a model the
server does not serve, a malformed answer) without importing the comparator.
"""

from __future__ import annotations

__all__ = [
    "EndpointError",
    "EndpointUnreachableError",
    "EndpointAuthError",
    "EndpointModelError",
    "EndpointResponseError",
    "LogprobsUnavailableError",
]


class EndpointError(RuntimeError):
    """An OpenAI-compatible endpoint answered with an error that retrying cannot fix."""


class EndpointUnreachableError(EndpointError):
    """No connection to the endpoint (refused, unknown host, time-outs after every retry)."""


class EndpointAuthError(EndpointError):
    """The endpoint refused the credentials (HTTP 401 / 403)."""


class EndpointModelError(EndpointError):
    """The endpoint does not serve the requested model."""


class EndpointResponseError(EndpointError):
    """A response without the expected fields (choices, text, log-probabilities)."""


class LogprobsUnavailableError(EndpointError):
    """The endpoint returns no log-probabilities, which the requested mode needs."""
