"""pyctorch.utils: hooks, checkpointing (and, as they land, data loading)."""
from . import hooks  # noqa: F401
from . import checkpoint  # noqa: F401
