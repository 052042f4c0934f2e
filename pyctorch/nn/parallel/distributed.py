"""torch.nn.parallel.DistributedDataParallel over pyctorch.distributed (Gloo on the CPU).

The module is replicated: construction broadcasts rank 0's parameters and buffers; every synced
backward averages the gradients across the process group in buckets launched from the
parameters' post-accumulate-grad hooks while backward still runs (the reducer, Note [DDP
reducer] in pyctorch/distributed/_reducer.py). forward() wraps the module's forward with the
per-iteration steps torch takes: buffers broadcast from rank 0 before it, the reducer armed
after it (with the graph searched for unused parameters under find_unused_parameters).
"""
import inspect
import warnings
import sys
from contextlib import contextmanager

import pyctorch as torch
import pyctorch.distributed as dist
from pyctorch.distributed._reducer import (GradBucket, Reducer, _compute_bucket_assignment_by_size,
                                           _DEFAULT_FIRST_BUCKET_BYTES)
from pyctorch.distributed.algorithms.join import Join, Joinable, JoinHook

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25


def _find_tensors(obj):
    """Every tensor in obj (nested lists, tuples, dicts)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


def _broadcast_coalesced(group, tensors, src):
    """Broadcasts tensors from group rank src: one flat broadcast per dtype, copied back in place."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    with torch.no_grad():
        for ts in by_dtype.values():
            flat = torch.cat([t.detach().reshape(-1) for t in ts])
            dist.broadcast(flat, dist.get_global_rank(group, src), group=group)
            off = 0
            for t in ts:
                n = t.numel()
                t.copy_(flat[off:off + n].view(t.shape))
                off += n


class _DDPJoinHook(JoinHook):
    """What a joined rank does while others still train: shadow DDP's collectives of one
    iteration (bucket rebuild, buffer sync, the sync flag, zero gradients for every bucket, the
    used-parameter map); at the end, copy the model of the last rank to join to every rank."""

    def __init__(self, ddp, divide_by_initial_world_size):
        if not isinstance(ddp, DistributedDataParallel):
            raise AssertionError("DDP join hook requires passing in a DistributedDataParallel instance as the "
                                 f"state, got {type(ddp).__name__}")
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        ddp.reducer.rebuild_buckets()
        ddp._check_and_sync_module_buffers()
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        ddp._match_all_reduce_for_bwd_pass()
        if ddp.find_unused_parameters:
            used = torch.zeros(len(ddp.reducer.params), dtype=torch.int32)
            dist.all_reduce(used, group=ddp.process_group)

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    """Data parallelism across processes: each rank runs `module` on its own batch and, in
    backward, the gradients are averaged over the process group, so every rank takes the same
    optimizer step as one process on the concatenated batch."""

    _active_ddp_module = None

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        Joinable.__init__(self)
        if (delay_all_reduce_named_params is not None) != (param_to_hook_all_reduce is not None):
            raise ValueError("delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at the "
                             "same time.")
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel({name}=...) is not supported by pyctorch yet")
        self.process_group = dist._get_default_group() if process_group is None else process_group
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self._module_parameters = [p for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        device_types = {p.device.type for p in self._module_parameters}
        if len(device_types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type of devices, but "
                             f"input module parameters locate in {device_types}.")
        self.device_type = next(iter(device_types))
        self.is_multi_device_module = len({p.device for p in self._module_parameters}) > 1
        if device_ids or output_device:
            devices = {p.device for p in self._module_parameters}
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.device_ids = None
        self.output_device = None
        self.static_graph = False
        self.dim = dim
        self.module = module
        self.device = self._module_parameters[0].device
        if broadcast_buffers is not None:
            if forward_sync_buffers is not None:
                warnings.warn("Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
                              "`broadcast_buffers` is deprecated and its value is ignored when "
                              "`forward_sync_buffers` is provided.", FutureWarning, stacklevel=2)
            else:
                warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: "
                              "unlike `broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers "
                              "at init. If you rely on buffers NOT being synced at init (e.g. rank-local buffers), "
                              "keep using `broadcast_buffers=False` until `init_sync_buffers` is available.",
                              FutureWarning, stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            init_sync_buffers = True
        else:
            self.forward_sync_buffers = True if broadcast_buffers is None else broadcast_buffers
            init_sync_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.mixed_precision = None
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. "
                          "Please avoid using it.", FutureWarning, stacklevel=2)
        self.broadcast_bucket_size = 250 * _MB
        is_default_cap = bucket_cap_mb is None
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_CAP_MB if is_default_cap else bucket_cap_mb) * _MB)
        self._first_bucket_bytes_cap = _DEFAULT_FIRST_BUCKET_BYTES if is_default_cap else self.bucket_bytes_cap
        self.bucket_bytes_cap_default = self._first_bucket_bytes_cap < self.bucket_bytes_cap
        self.skip_all_reduce_unused_params = skip_all_reduce_unused_params
        self._divide_by_initial_world_size = True
        parameters = self._build_params_for_reducer()
        if init_sync:
            self._verify_param_shape_across_processes(parameters)
            states = [p for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
            if init_sync_buffers:
                states += [b for n, b in module.named_buffers() if n not in self.parameters_to_ignore]
            _broadcast_coalesced(self.process_group, states, 0)
        self._ddp_init_helper(parameters, static_graph)
        self._has_rebuilt_buckets = False
        if static_graph:
            self._set_static_graph()

    # -- construction -------------------------------------------------------------------------
    def _build_params_for_reducer(self):
        seen, params = set(), []
        for mname, m in self.module.named_modules():
            for pname, p in m.named_parameters(recurse=False):
                full = f"{mname}.{pname}" if mname else pname
                if p.requires_grad and full not in self.parameters_to_ignore and id(p) not in seen:
                    seen.add(id(p))
                    params.append(p)
        self._assign_modules_buffers()
        return params

    def _assign_modules_buffers(self):
        self.named_module_buffers = {n: b for n, b in self.module.named_buffers()
                                     if n not in self.parameters_to_ignore}
        self.modules_buffers = list(self.named_module_buffers.values())

    def _verify_param_shape_across_processes(self, parameters):
        """Every rank must hold the same parameter shapes; compared through an all-gather."""
        shapes = [tuple(p.shape) for p in parameters]
        gathered = [None] * self.process_group.size()
        dist.all_gather_object(gathered, shapes, group=self.process_group)
        mine = self.process_group.rank()
        for r, theirs in enumerate(gathered):
            if len(theirs) != len(shapes):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {mine} has {len(shapes)} "
                                   f"params, while rank {r} has inconsistent {len(theirs)} params.")
            for i, (a, b) in enumerate(zip(shapes, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank {mine} has a parameter "
                                       f"{i} of shape {list(a)}, while rank {r} has shape {list(b)}.")

    def _ddp_init_helper(self, parameters, static_graph):
        if static_graph or not self.find_unused_parameters:
            limits = [sys.maxsize]  # one bucket for the first iteration, rebuilt afterwards
        elif self.bucket_bytes_cap_default:
            limits = [self._first_bucket_bytes_cap, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        indices, size_limits = _compute_bucket_assignment_by_size(parameters, limits)
        self.reducer = Reducer(parameters, list(reversed(indices)), list(reversed(size_limits)), self.process_group,
                               self.bucket_bytes_cap, self.find_unused_parameters, self.gradient_as_bucket_view,
                               self._first_bucket_bytes_cap)

    def _set_static_graph(self):
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.", stacklevel=2)
            return
        self.static_graph = True
        self.reducer.static_graph = True
        self.reducer.find_unused = False  # a static graph is searched once, in the first backward (Note [Static graph])

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module, params_and_buffers_to_ignore):
        module._ddp_params_and_buffers_to_ignore = params_and_buffers_to_ignore

    # -- forward ----------------------------------------------------------------------------------
    @contextmanager
    def no_sync(self):
        """Inside the context, backward accumulates gradients locally; the first synced backward
        after it reduces the accumulated gradients. The forward must run inside the context."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @classmethod
    def _get_active_ddp_module(cls):
        return cls._active_ddp_module

    @contextmanager
    def _inside_ddp_forward(self):
        old = DistributedDataParallel._active_ddp_module
        DistributedDataParallel._active_ddp_module = self
        try:
            yield
        finally:
            DistributedDataParallel._active_ddp_module = old

    def _pre_forward(self, *inputs, **kwargs):
        grad = torch.is_grad_enabled()
        if grad and self.require_backward_grad_sync:
            self.reducer.prepare_for_forward()
        work = Join.notify_join_context(self)
        self.reducer.div_factor = self.reducer.world_size
        if work is not None and not self._divide_by_initial_world_size:
            work.wait()
            self.reducer.div_factor = int(work.result()[0].item())
        if grad and self.reducer.rebuild_buckets():
            self._has_rebuilt_buckets = True
        if self.will_sync_module_buffers():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        return inputs, kwargs

    def _post_forward(self, output):
        if torch.is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            if self.find_unused_parameters and not self.static_graph:
                self.reducer.prepare_for_backward(_find_tensors(output))
            else:
                self.reducer.prepare_for_backward([])
        else:
            self.require_forward_param_sync = False
        return output

    def forward(self, *inputs, **kwargs):
        inputs, kwargs = self._pre_forward(*inputs, **kwargs)
        with self._inside_ddp_forward():
            output = self.module(*inputs, **kwargs)
        return self._post_forward(output)

    def train(self, mode=True):
        super().train(mode)
        return self

    # -- buffers ----------------------------------------------------------------------------------
    def will_sync_module_buffers(self):
        return self.require_forward_param_sync and self.forward_sync_buffers and len(self.modules_buffers) > 0

    def _find_common_rank(self, input_rank, rank_cond):
        rank = torch.tensor([input_rank if rank_cond else -1], device=self.device)
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. This indicates a bug "
                             "in PyTorch, please report an issue.")
        return rank.item()

    def _sync_buffers(self):
        with torch.no_grad():
            if self._join_config.enable:
                src = self._find_common_rank(self.process_group.rank(), True)
            else:
                src = 0
            self._assign_modules_buffers()
            _broadcast_coalesced(self.process_group, self.modules_buffers, src)

    def _check_and_sync_module_buffers(self):
        if self.will_sync_module_buffers():
            src = self._find_common_rank(self.process_group.rank(), False)
            self._assign_modules_buffers()
            _broadcast_coalesced(self.process_group, self.modules_buffers, src)

    # -- join ---------------------------------------------------------------------------------------
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """The join context manager for uneven inputs across ranks (see algorithms.join.Join)."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, divide_by_initial_world_size=kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        flag = (torch.ones if not is_joined_rank and self.require_backward_grad_sync else torch.zeros)(
            1, device=self.device)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return flag.item() != 0
        return None

    def _match_all_reduce_for_bwd_pass(self):
        r = self.reducer
        futures = []
        for b in range(len(r.buckets)):
            bucket = r._grad_bucket(b)
            zeros = torch.zeros_like(bucket.buffer())
            bucket = GradBucket(b, zeros, [zeros[o:o + g.numel()].view(g.shape) for o, g in
                                           zip(bucket._offsets, bucket._gradients)],
                                bucket._parameters, bucket._offsets, bucket.is_last())
            if r.comm_hook is None:
                futures.append(dist.all_reduce(zeros, group=self.process_group, async_op=True))
            else:
                futures.append(r.comm_hook(r.comm_hook_state, bucket))
        for f in futures:
            f.wait()

    def _sync_final_model(self, is_last_joiner):
        self._authoritative_rank = self._find_common_rank(self.process_group.rank(), is_last_joiner)
        states = [p for n, p in self.module.named_parameters() if n not in self.parameters_to_ignore]
        if self.forward_sync_buffers:
            states += [b for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]
        _broadcast_coalesced(self.process_group, states, self._authoritative_rank)

    # -- communication hooks -------------------------------------------------------------------------
    def _check_comm_hook(self, hook):
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        if sig.parameters["bucket"].annotation not in (inspect.Parameter.empty, GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if sig.return_annotation is not inspect.Signature.empty and \
                sig.return_annotation != torch.futures.Future[torch.Tensor]:
            raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")
        if getattr(hook, "__name__", None) in ("bf16_compress_hook", "bf16_compress_wrapper_hook") and \
                not dist.is_nccl_available():  # as torch: the bfloat16 hooks need CUDA and NCCL (or XPU and XCCL)
            raise TypeError("BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL")

    def register_comm_hook(self, state, hook):
        """hook(state, bucket: GradBucket) -> Future: replaces the averaging all-reduce of every
        bucket. The future's value (a tensor, or a list of one tensor, of the bucket's size) is
        written back to the parameters' gradients. Only one hook, registered before training."""
        self._check_comm_hook(hook)
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self.reducer.comm_hook = hook
        self.reducer.comm_hook_state = state

    def _get_ddp_logging_data(self):
        return {"world_size": self.process_group.size(), "bucket_cap_bytes": self.bucket_bytes_cap,
                "find_unused_parameters": self.find_unused_parameters,
                "gradient_as_bucket_view": self.gradient_as_bucket_view, "has_rebuilt_buckets":
                int(self.reducer.has_rebuilt), "num_buckets_reduced": len(self.reducer.buckets)}

    def _bucket_indices(self):
        """The parameter indices of each bucket, in launch order (pyctorch's, for tests)."""
        return [list(b.indices) for b in self.reducer.buckets]

