"""torch.distributed._functional_collectives: collectives that return new tensors.

pyctorch's collectives complete before they return (no AsyncCollectiveTensor), so `wait_tensor` hands
its tensor back and each function here is the in-place collective on a copy. `group` is a
ProcessGroup or None (the default group); torch's mesh and rank-list forms need DeviceMesh, which
pyctorch does not have yet.
"""
from . import distributed_c10d as _c10d

__all__ = ["wait_tensor", "all_reduce", "all_gather_tensor", "broadcast", "all_to_all_single",
           "all_to_all_single_autograd"]


def _group(group):
    if group is None or isinstance(group, _c10d.ProcessGroup):
        return group
    raise NotImplementedError("pyctorch's functional collectives take a ProcessGroup (or None); "
                              f"{type(group).__name__} groups (DeviceMesh, rank lists) are not implemented yet")


def _reduce_op(op):
    return op if not isinstance(op, str) else getattr(_c10d.ReduceOp, op.upper())


def wait_tensor(tensor):
    """The tensor itself: pyctorch's collectives have finished when they return."""
    return tensor


def all_reduce(self, reduceOp, group, tag=""):
    out = self.clone()
    _c10d.all_reduce(out, op=_reduce_op(reduceOp), group=_group(group))
    return out


def all_gather_tensor(self, gather_dim, group, tag=""):
    g = _group(group)
    world = _c10d.get_world_size(g)
    out = self.new_empty((world * self.shape[0],) + tuple(self.shape[1:]))
    _c10d.all_gather_into_tensor(out, self.contiguous(), group=g)
    if gather_dim != 0:
        import pyctorch
        out = pyctorch.cat(out.chunk(world, dim=0), dim=gather_dim)
    return out


def broadcast(self, src, group, tag=""):
    out = self.clone()
    _c10d.broadcast(out, src=src, group=_group(group))
    return out


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    """Rank i's `input_split_sizes[j]` rows go to rank j; the result has sum(output_split_sizes) rows."""
    g = _group(group)
    rows = self.shape[0] if output_split_sizes is None else sum(output_split_sizes)
    out = self.new_empty((rows,) + tuple(self.shape[1:]))
    _c10d.all_to_all_single(out, self.contiguous(), output_split_sizes=output_split_sizes,
                            input_split_sizes=input_split_sizes, group=g)
    return out


def _all_to_all_function():
    from ..autograd import Function

    class _AllToAllSingle(Function):
        @staticmethod
        def forward(ctx, input, output_split_sizes, input_split_sizes, group):
            ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
            return all_to_all_single(input, output_split_sizes, input_split_sizes, group)

        @staticmethod
        def backward(ctx, grad):
            out_sizes, in_sizes = ctx.splits  # the gradient travels back: the splits swap roles
            return all_to_all_single(grad, in_sizes, out_sizes, ctx.group), None, None, None

    return _AllToAllSingle


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=""):
    """all_to_all_single that backpropagates (the gradient takes the reverse exchange)."""
    return _all_to_all_function().apply(self, output_split_sizes, input_split_sizes, group)
