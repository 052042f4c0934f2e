"""torch._dynamo._trace_wrapped_higher_order_op: the names libraries import from it.

`TransformGetItemToIndex` is, in torch, a TorchFunctionMode that keeps `t[i]` with a 0-d index
tensor as an index op under vmap (used by transformers' masking_utils for vmapped mask functions).
pyctorch has no vmap, so the class exists for the import and says what is missing when entered.
"""

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    """Context manager; entering it raises NotImplementedError (no torch function modes in pyctorch)."""

    def __enter__(self):
        raise NotImplementedError("pyctorch does not implement torch function modes (TorchFunctionMode) "
                                  "yet: torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex")

    def __exit__(self, *exc):
        return False
