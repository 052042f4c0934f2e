"""torch.distributed.fsdp.fully_shard (FSDP2) over the same flat-parameter machinery as
FullyShardedDataParallel.

fully_shard(module) makes module one FSDP unit of the parameters that no earlier fully_shard'ed
submodule took, and changes its class to FSDP<Class> (a subclass that also derives from
FSDPModule), as torch does. Where torch makes each parameter a DTensor sharded on dim 0, here the
parameters stay plain nn.Parameters under their own names whose data is this rank's piece of
the unit's flat shard (1-D, possibly empty) -- FullyShardedDataParallel's use_orig_params
layout -- and their .grad the matching piece of the averaged gradient. So optimizers built on
module.parameters() step only the local shard; what needs a global view of the parameters
(torch.nn.utils.clip_grad_norm_ over them, a state dict of full tensors) must go through the
unit (FSDPModule.clip_grad_norm_ is not torch API; use FullyShardedDataParallel there).
"""
import functools
from dataclasses import dataclass

from .. import distributed_c10d as c10d
from . import _runtime
from ._flat_param import FlatParamHandle
from .api import MixedPrecision, ShardingStrategy

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy", "UnshardHandle",
           "register_fsdp_forward_method"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading (the default)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Sharded parameters on the CPU: where pyctorch keeps them anyway (nothing moves)."""
    pin_memory: bool = True


class _UnitState:
    def __init__(self, handle, mixed_precision):
        self._handle = handle
        self._mixed_precision = mixed_precision
        self._root_done = False
        self._is_root = None
        self._in_summon = False


class FSDPModule:
    """The methods fully_shard adds to a module's class."""

    def forward(self, *args, **kwargs):
        inner = super(FSDPModule, self).forward
        return _runtime.unit_forward(self._fsdp_state, self, inner, args, kwargs)

    def reshard(self):
        """Frees the gathered parameters now."""
        if self._fsdp_state._handle is not None:
            self._fsdp_state._handle.reshard()

    def unshard(self, async_op=False):
        """Gathers the parameters now (the next forward uses them without gathering again). The
        gather is synchronous; with async_op the returned handle's wait() has nothing left to do."""
        if self._fsdp_state._handle is not None:
            self._fsdp_state._handle._ensure_gathered()
        return UnshardHandle() if async_op else None

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """False: backward accumulates unreduced gradients locally (torch's no_sync); the next synced
        backward reduces them together with its own."""
        for m in (self.modules() if recurse else [self]):
            s = _runtime.state_of(m)
            if s is not None and s._handle is not None:
                s._handle.requires_grad_sync = bool(requires_gradient_sync)

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        for m in (self.modules() if recurse else [self]):
            s = _runtime.state_of(m)
            if s is not None and s._handle is not None and not s._is_root:
                s._handle.reshard_after_forward = bool(reshard_after_forward)


class UnshardHandle:
    """What FSDPModule.unshard(async_op=True) returns."""

    def wait(self):
        return None


def register_fsdp_forward_method(module, method_name):
    """Makes module.<method_name> (a method other than forward, e.g. generate) run with the unit's
    parameters gathered, as forward does."""
    state = _runtime.state_of(module)
    if state is None:
        return
    method = getattr(module, method_name)

    def gathered(*args, **kwargs):
        return _runtime.unit_forward(state, module, method, args, kwargs)

    setattr(module, method_name, gathered)


@functools.lru_cache(maxsize=None)
def _fsdp_class(cls):
    return type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(), ignored_params=None):
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("fully_shard of a list of modules (one group) is not supported by pyctorch yet")
    if mesh is not None or shard_placement_fn is not None:
        raise NotImplementedError("fully_shard(mesh=..., shard_placement_fn=...) is not supported by pyctorch yet: "
                                  "it shards over the default process group, flat")
    group = c10d._get_default_group()
    strategy = ShardingStrategy.SHARD_GRAD_OP if reshard_after_forward is False else ShardingStrategy.FULL_SHARD
    mp = MixedPrecision(param_dtype=mp_policy.param_dtype, reduce_dtype=mp_policy.reduce_dtype,
                        cast_root_forward_inputs=mp_policy.cast_forward_inputs)
    if mp.param_dtype is None and mp.reduce_dtype is None:
        mp = None
    ignored_ids = {id(p) for p in (ignored_params or ())}
    entries = _runtime.unit_params(module, _runtime.state_of, ignored_ids)
    handle = FlatParamHandle(entries, group, strategy, mp, use_orig_params=True) if entries else None
    module.__dict__["_fsdp_state"] = _UnitState(handle, mp)
    module.__class__ = _fsdp_class(type(module))
    return module
