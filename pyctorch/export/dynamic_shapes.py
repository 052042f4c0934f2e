"""torch.export.dynamic_shapes: Dim and its helpers (defined in _dynamic.py)."""
from ._dynamic import Dim, dims, _DimHint  # noqa: F401  (torch.export.dynamic_shapes names them)

__all__ = ["Dim", "dims", "ShapesCollection"]


class ShapesCollection:
    """torch.export.ShapesCollection: dynamic shapes given per input tensor (`sc[x] = {0: batch}`), turned into
    the dynamic_shapes argument of export by dynamic_shapes(model, args, kwargs)."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, tensor, shape):
        self._shapes[id(tensor)] = (tensor, shape)

    def __getitem__(self, tensor):
        return self._shapes[id(tensor)][1]

    def __contains__(self, tensor):
        return id(tensor) in self._shapes

    def dynamic_shapes(self, m, args, kwargs=None):
        from pyctorch.utils import _pytree as pytree

        def spec(value):
            entry = self._shapes.get(id(value))
            return None if entry is None else entry[1]
        top = tuple(args) + tuple((kwargs or {}).values())
        return tuple(pytree.tree_map(spec, v) for v in top)
