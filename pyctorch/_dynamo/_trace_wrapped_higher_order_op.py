"""torch._dynamo._trace_wrapped_higher_order_op: the names libraries import from it.

`TransformGetItemToIndex` is, in torch, a TorchFunctionMode that keeps `t[i]` with a 0-d index
tensor as an index op under vmap (used by transformers' masking_utils for vmapped mask functions).
pyctorch's vmap already keeps indexing with batched index tensors an index op (its batching rule
for __getitem__, Note [vmap batching rules]), so the mode passes every call through.
"""
from ..overrides import BaseTorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(BaseTorchFunctionMode):
    """A mode under which `t[i]` with tensor indices stays an index op (pyctorch's indexing already does)."""
