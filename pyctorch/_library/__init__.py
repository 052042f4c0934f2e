"""torch._library: the registries behind torch.library (opaque types)."""
from . import opaque_object  # noqa: F401
