"""pyctorch.utils: hooks, checkpointing (and, as they land, data loading)."""
from . import hooks  # noqa: F401
