"""What runs around every FSDP unit's forward, for FullyShardedDataParallel and fully_shard alike.

A unit is any module with an FSDP state (state_of: the FSDP wrapper itself, or fully_shard's
state object); the state has `_handle` (a FlatParamHandle or None),
`_mixed_precision` and `_root_done`. The outermost unit whose forward runs is the root: at its
first forward it is initialised as such (it keeps its parameters gathered from forward to
backward, as torch's root does, and buffers are cast for mixed precision), it casts floating
inputs to param_dtype, and its whole forward runs under the saved-tensor hooks of Note [Saved
parameter views], so every unit inside can free its parameters after its forward.
"""
import contextlib

import pyctorch as torch
from pyctorch.nn.parallel.distributed import _find_tensors

from . import _saved_params
from .api import ShardingStrategy

_depth = 0  # FSDP forwards running now (nested units)


def state_of(module):
    # an FSDP wrapper is its own state (a class flag, so no instance refers to itself and the wrapper is
    # freed without the cycle collector); fully_shard's state sits in the module's __dict__
    if getattr(type(module), "_is_fsdp_wrapper", False):
        return module
    return module.__dict__.get("_fsdp_state")


def unit_states(module):
    """The FSDP states in module's tree, outermost first."""
    return [s for s in (state_of(m) for m in module.modules()) if s is not None]


def _cast_floats(obj, dtype):
    if isinstance(obj, torch.Tensor):
        return obj.to(dtype) if obj.is_floating_point() else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast_floats(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: _cast_floats(v, dtype) for k, v in obj.items()}
    return obj


def _init_root(state, module):
    if state._root_done:
        return
    for s in unit_states(module):
        s._root_done = True
        s._is_root = s is state
    h = state._handle
    if h is not None and h.strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.HYBRID_SHARD):
        h.reshard_after_forward = False  # its backward comes first: gathering again right away would be waste
    mp = state._mixed_precision
    if mp is not None and mp.buffer_dtype is not None:
        with torch.no_grad():
            for m in module.modules():
                for name, b in list(m._buffers.items()):
                    if b is not None and b.is_floating_point():
                        # (a full state dict gives buffers back in this original dtype, as torch's)
                        m.__dict__.setdefault("_fsdp_buffer_dtypes", {})[name] = b.dtype
                        m._buffers[name] = b.to(mp.buffer_dtype)


def unit_forward(state, module, forward, args, kwargs):
    """forward(*args, **kwargs) with the unit's parameters gathered around it."""
    global _depth
    with contextlib.ExitStack() as stack:
        if _depth == 0:
            _init_root(state, module)
            if torch.is_grad_enabled():
                stack.enter_context(_saved_params.saving_param_views())
            mp = state._mixed_precision
            if mp is not None and mp.param_dtype is not None and mp.cast_root_forward_inputs:
                args, kwargs = _cast_floats(args, mp.param_dtype), _cast_floats(kwargs, mp.param_dtype)
        handle = state._handle
        _depth += 1
        try:
            if handle is not None:
                handle.pre_forward()
            out = forward(*args, **kwargs)
        finally:
            _depth -= 1
            if handle is not None:
                handle.post_forward()
        if handle is not None and torch.is_grad_enabled() and handle.flat_param.requires_grad:
            _register_pre_backward(handle, out)
        return out


def _register_pre_backward(handle, out):
    """handle.pre_backward() once the gradient of any of the unit's outputs arrives."""
    def hook(grad):
        handle.pre_backward()

    for t in _find_tensors(out):
        if t.requires_grad:
            t.register_hook(hook)


def unit_params(root, is_other_unit, ignored_ids):
    """(module, name, parameter) of the parameters a unit at `root` manages: its tree's, in
    named_parameters order, less those inside other units and the ignored ones."""
    out, seen = [], set()

    def visit(m):
        if id(m) in seen or (m is not root and is_other_unit(m)):
            return
        seen.add(id(m))
        for name, p in m._parameters.items():
            if p is not None and id(p) not in ignored_ids:
                out.append((m, name, p))
        for child in m._modules.values():
            if child is not None:
                visit(child)

    visit(root)
    return out
