"""torch.autograd.graph: the node type, for isinstance checks and hooks."""
from .. import _C

Node = _C._Node
__all__ = ["Node"]
