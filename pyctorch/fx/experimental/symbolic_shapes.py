"""torch.fx.experimental.symbolic_shapes: the error raised when Python needs a traced tensor's data."""
from pyctorch.export._trace import GuardOnDataDependentSymNode

__all__ = ["GuardOnDataDependentSymNode"]
