"""Graph passes of pyctorch.fx (torch.fx.passes): shape_prop."""
from . import shape_prop  # noqa: F401
