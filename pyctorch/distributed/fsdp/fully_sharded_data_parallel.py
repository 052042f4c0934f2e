"""torch.distributed.fsdp.FullyShardedDataParallel over the flat-parameter machinery (Note [Flat
parameter] in _flat_param.py) and Gloo.

A FullyShardedDataParallel wraps a module as `_fsdp_wrapped_module`; auto_wrap_policy first wraps
chosen submodules as FSDP units of their own, and each unit flattens the parameters no inner unit
took. Without use_orig_params the flat shard is registered as `_flat_param` on the wrapped module
(so `parameters()` gives the shards, as torch's) and the original parameter names read the
gathered views during forward; with use_orig_params the original Parameters stay registered and
hold their pieces of the shard.
"""
import contextlib

import pyctorch as torch
from pyctorch import nn
from pyctorch.nn.utils.clip_grad import clip_grads_with_norm_, get_total_norm

from .. import distributed_c10d as c10d
from . import _runtime, _state_dict
from ._flat_param import FlatParamHandle
from .api import (BackwardPrefetch, CPUOffload, FullStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                  StateDictSettings, StateDictType, LocalStateDictConfig, FullOptimStateDictConfig)
from .wrap import _recursive_wrap

__all__ = ["FullyShardedDataParallel"]

_HYBRID_AS = {ShardingStrategy.HYBRID_SHARD: ShardingStrategy.FULL_SHARD,
              ShardingStrategy._HYBRID_SHARD_ZERO2: ShardingStrategy.SHARD_GRAD_OP}
_DEFAULT_CONFIG = {StateDictType.FULL_STATE_DICT: FullStateDictConfig, StateDictType.SHARDED_STATE_DICT:
                   ShardedStateDictConfig, StateDictType.LOCAL_STATE_DICT: LocalStateDictConfig}


class FullyShardedDataParallel(nn.Module):
    """Shards a module's parameters across the process group (see the module docstring)."""

    _is_fsdp_wrapper = True  # (_runtime.state_of)

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None, auto_wrap_policy=None,
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE, mixed_precision=None, ignored_modules=None,
                 param_init_fn=None, device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None, device_mesh=None):
        super().__init__()
        if device_mesh is not None:
            raise NotImplementedError("FullyShardedDataParallel(device_mesh=...) is not supported by pyctorch yet")
        if isinstance(process_group, tuple):  # HYBRID_SHARD's (intra-node, inter-node) pair: one node here
            process_group = process_group[0]
        group = c10d._get_default_group() if process_group is None else process_group
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        strategy = _HYBRID_AS.get(strategy, strategy)
        self.process_group = group
        self.sharding_strategy = strategy
        self.cpu_offload = cpu_offload or CPUOffload()
        self.backward_prefetch = backward_prefetch
        self.forward_prefetch = forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self.mixed_precision = mixed_precision
        self._use_orig_params = use_orig_params
        self._ignored_modules = set(ignored_modules or ())
        ignored_params = [p for m in self._ignored_modules for p in m.parameters()]
        ignored_params += [s for s in (ignored_states or ()) if isinstance(s, torch.Tensor)]
        self._ignored_modules |= {s for s in (ignored_states or ()) if isinstance(s, nn.Module)}
        ignored_params += [p for m in self._ignored_modules for p in m.parameters()]
        ignored_ids = {id(p) for p in ignored_params}
        if param_init_fn is not None:
            param_init_fn(module)

        if auto_wrap_policy is not None:
            kwargs = dict(process_group=group, sharding_strategy=strategy, cpu_offload=cpu_offload,
                          backward_prefetch=backward_prefetch, mixed_precision=mixed_precision,
                          ignored_modules=self._ignored_modules, device_id=device_id,
                          sync_module_states=sync_module_states, forward_prefetch=forward_prefetch,
                          limit_all_gathers=limit_all_gathers, use_orig_params=use_orig_params)
            _recursive_wrap(module, auto_wrap_policy, lambda m: FullyShardedDataParallel(m, **kwargs),
                            lambda m: isinstance(m, FullyShardedDataParallel), self._ignored_modules, ignored_ids,
                            only_wrap_children=True)
        self._fsdp_wrapped_module = module
        d = self.__dict__
        d["_root_done"] = False
        d["_is_root"] = None
        d["_mixed_precision"] = mixed_precision
        d["_state_dict_type"] = StateDictType.FULL_STATE_DICT
        d["_state_dict_config"] = FullStateDictConfig()
        d["_in_summon"] = False
        entries = _runtime.unit_params(module, _runtime.state_of, ignored_ids)
        handle = FlatParamHandle(entries, group, strategy, mixed_precision, use_orig_params,
                                 sync_module_states) if entries else None
        d["_handle"] = handle
        if handle is not None and not use_orig_params:
            module.register_parameter(_state_dict.FLAT_PARAM, handle.flat_param)
        if sync_module_states:
            for _, b in module.named_buffers():
                c10d.broadcast(b, c10d.get_global_rank(group, 0), group=group)

    # -- the wrapper ---------------------------------------------------------------------------
    @property
    def module(self):
        return self._fsdp_wrapped_module

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_fsdp_wrapped_module":
                raise
            return getattr(self._fsdp_wrapped_module, name)

    def __getitem__(self, key):
        return self._fsdp_wrapped_module.__getitem__(key)

    def forward(self, *args, **kwargs):
        return _runtime.unit_forward(self, self, self._fsdp_wrapped_module, args, kwargs)

    @property
    def params(self):
        return self._handle.local_params() if self._handle is not None else []

    def named_parameters(self, *args, **kwargs):
        """Inside summon_full_params: the original parameters under the unwrapped model's names."""
        for name, p in super().named_parameters(*args, **kwargs):
            if not self._in_summon:
                yield name, p
            elif name.rsplit(".", 1)[-1] != _state_dict.FLAT_PARAM:
                yield _state_dict.clean_key(name), p

    def named_buffers(self, *args, **kwargs):
        for name, b in super().named_buffers(*args, **kwargs):
            yield (_state_dict.clean_key(name) if self._in_summon else name), b

    @contextlib.contextmanager
    def no_sync(self):
        """Backwards inside keep their gradients unreduced (unsharded, per unit, as torch's do); the
        first backward after it reduces them together with its own."""
        handles = [s._handle for s in _runtime.unit_states(self) if s._handle is not None]
        for h in handles:
            h.requires_grad_sync = False
        try:
            yield
        finally:
            for h in handles:
                h.requires_grad_sync = True

    @staticmethod
    def fsdp_modules(module, root_only=False):
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return [m for m in units if m._is_root is not False] if root_only else units

    # -- summon_full_params --------------------------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False, offload_to_cpu=False,
                           with_grads=False):
        """Within the context the original parameters hold their full values (every rank gathers;
        rank0_only and offload_to_cpu change nothing on the CPU); with writeback, changes to them are
        copied back into the shards on exit."""
        if with_grads:
            raise NotImplementedError("summon_full_params(with_grads=True) is not supported by pyctorch yet")
        if rank0_only and writeback:
            raise ValueError("writeback=True and rank0_only=True is not supported, as model parameter shapes will "
                             "be different across ranks, and writing to them can lead to inconsistencies across "
                             "ranks when the context is exited.")
        states = _runtime.unit_states(module) if recurse else [_runtime.state_of(module)]
        states = [s for s in states if s is not None and s._handle is not None and s._handle.summoned is None]
        for s in states:
            s._handle.summon()
            s.__dict__["_in_summon"] = True
        try:
            yield
        finally:
            for s in reversed(states):
                s._handle.unsummon(writeback)
                s.__dict__["_in_summon"] = False

    # -- state dicts ---------------------------------------------------------------------------
    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        units = FullyShardedDataParallel.fsdp_modules(module)
        prev = StateDictSettings(units[0]._state_dict_type, units[0]._state_dict_config,
                                 optim_state_dict_config or FullOptimStateDictConfig()) if units else None
        config = state_dict_config or _DEFAULT_CONFIG[state_dict_type]()
        for m in units:
            m.__dict__["_state_dict_type"] = state_dict_type
            m.__dict__["_state_dict_config"] = config
        return prev

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        prev = FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config)
        try:
            yield
        finally:
            if prev is not None:
                FullyShardedDataParallel.set_state_dict_type(module, prev.state_dict_type, prev.state_dict_config)

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args or destination is not None or prefix:  # reached from an enclosing module's state_dict
            return super().state_dict(*args, destination=destination, prefix=prefix, keep_vars=keep_vars)
        kind = self._state_dict_type
        if kind == StateDictType.FULL_STATE_DICT:
            return _state_dict.full_state_dict(self, self._state_dict_config,
                                               FullyShardedDataParallel.summon_full_params)
        if kind == StateDictType.SHARDED_STATE_DICT:
            return _state_dict.sharded_state_dict(self)
        return super().state_dict(keep_vars=keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        kind = self._state_dict_type
        if kind == StateDictType.FULL_STATE_DICT:
            return _state_dict.load_full_state_dict(self, state_dict, strict,
                                                    FullyShardedDataParallel.summon_full_params)
        if kind == StateDictType.SHARDED_STATE_DICT:
            return _state_dict.load_sharded_state_dict(self, state_dict, strict)
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    # -- gradient clipping ---------------------------------------------------------------------
    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clips the gradients of every shard in this tree by the norm over all ranks' shards (the
        norm of the unsharded gradient); returns that total norm."""
        if self._is_root is False:
            raise RuntimeError("`clip_grad_norm_()` should only be called on the root FSDP instance")
        norm_type = float(norm_type)
        sharded, replicated, params = [], [], []
        managed = set()
        for s in _runtime.unit_states(self):
            h = s._handle
            if h is None:
                continue
            (sharded if h.sharded else replicated).extend(h.local_grads())
            params.extend(h.local_params())
            managed.update(id(p) for p in h.local_params())
        others = [p for p in self.parameters() if id(p) not in managed]  # ignored parameters: not sharded
        params += others
        replicated += [p.grad for p in others if p.grad is not None]
        with torch.no_grad():
            local = get_total_norm(sharded, norm_type).to(torch.float32)
            rest = get_total_norm(replicated, norm_type).to(torch.float32)
            if norm_type == float("inf"):
                c10d.all_reduce(local, op=c10d.ReduceOp.MAX, group=self.process_group)
                total = torch.maximum(local, rest)
            else:
                local = local ** norm_type
                c10d.all_reduce(local, group=self.process_group)
                total = (local + rest ** norm_type) ** (1.0 / norm_type)
            clip_grads_with_norm_(params, max_norm, total)
        grads = sharded + replicated
        return total.to(grads[0].dtype) if grads else total


def _optim_state_dict_not_supported(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"FullyShardedDataParallel.{name} is not supported by pyctorch yet: save the "
                                  "optimizer of each rank (its state is the state of that rank's shards)")
    refuse.__name__ = name
    return staticmethod(refuse)


for _name in ("optim_state_dict", "optim_state_dict_to_load", "full_optim_state_dict", "sharded_optim_state_dict",
              "shard_full_optim_state_dict", "scatter_full_optim_state_dict", "rekey_optim_state_dict",
              "flatten_sharded_optim_state_dict"):
    setattr(FullyShardedDataParallel, _name, _optim_state_dict_not_supported(_name))
del _name

