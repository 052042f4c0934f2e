"""ShapeProp: run a GraphModule on example inputs and record each tensor value's metadata in
node.meta['tensor_meta'] (and the value's type in node.meta['type'])."""
import collections

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


# torch's field order; a namedtuple so it unpacks, prints and pickles as torch's does.
TensorMetadata = collections.namedtuple(
    "TensorMetadata", ["shape", "dtype", "requires_grad", "stride", "memory_format", "is_quantized", "qparams"])


def _extract_tensor_metadata(t):
    import pyctorch
    memory_format = None
    for fmt in (pyctorch.contiguous_format, pyctorch.channels_last, pyctorch.channels_last_3d):
        try:
            if t.is_contiguous(memory_format=fmt):
                memory_format = fmt
                break
        except (TypeError, RuntimeError):
            continue
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), memory_format, False, {})


class ShapeProp(Interpreter):
    """ShapeProp(gm).propagate(*example_inputs) fills node.meta['tensor_meta'] for tensor-valued nodes."""

    def run_node(self, n):
        import pyctorch
        result = super().run_node(n)
        found = [False]

        def extract(obj):
            if isinstance(obj, pyctorch.Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)
