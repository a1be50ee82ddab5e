"""The Dawid-Skene family of annotation models."""

from . import dawid_skene

__all__ = ["dawid_skene"]
