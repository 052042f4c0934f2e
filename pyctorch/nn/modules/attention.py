"""Old import path of MultiheadAttention (torch and pyctorch define it in nn/modules/activation.py);
kept so code and checkpoints that name pyctorch.nn.modules.attention still resolve."""
from .activation import MultiheadAttention  # noqa: F401
from .linear import NonDynamicallyQuantizableLinear  # noqa: F401

__all__ = ["MultiheadAttention"]
