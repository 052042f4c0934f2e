"""The flat-parameter machinery every FSDP flavour (FullyShardedDataParallel, fully_shard) runs on.

Note [Flat parameter]: the parameters of one FSDP unit are flattened, concatenated in their
modules' order and zero-padded to a multiple of the world size; each rank keeps only its
contiguous 1/world of that vector, `flat_param` (an nn.Parameter). Before the unit's forward the
shards are all-gathered into the unsharded vector and each original parameter name on its module
becomes a view of it (a plain tensor in the module's __dict__, which shadows the registered
Parameter under use_orig_params). The gather goes through _Unshard, an autograd Function, so the
gradient of the whole unit arrives in one call of its backward: there it is reduce-scattered
(summed, divided by the world size) into the shard's gradient, and the gathered vector is freed.
Between forward and backward FULL_SHARD frees it too (Note [Saved parameter views]). The
optimizer therefore steps only the shard, and its state is sharded with it.

Where a gradient lands: without use_orig_params, in flat_param.grad; with use_orig_params (and
fully_shard), each original Parameter keeps its name, its .data is its piece of this rank's
shard (1-D, possibly empty) and its .grad the matching piece of the reduced gradient. Either way
the gradient is accumulated by hand (set when None, else added), so zero_grad(set_to_none=True)
on whichever tensors the optimizer holds behaves as torch's.
"""
import pyctorch as torch
from pyctorch import nn

from .. import distributed_c10d as c10d
from . import _saved_params
from .api import ShardingStrategy

_FREED = torch.empty(0)  # what an original parameter name reads between forwards (no use_orig_params)


def _predivide_factor(world):
    # torch divides before the reduction by the largest power of two f with f * f <= world (and after
    # by world / f), so the sum of many gradients stays further from overflow in low precision
    f = 1
    while world % f == 0 and world / f > f:
        f *= 2
    return f


class _ParamInfo:
    """One original parameter of a unit: where it lives in the flat vector and where it is named."""
    __slots__ = ("param", "places", "shape", "numel", "offset", "local", "local_shape")

    def __init__(self, param, module, name, offset):
        self.param = param
        self.places = [(module, name)]  # more than one when modules share the parameter
        self.shape = tuple(param.shape)
        self.numel = param.numel()
        self.offset = offset
        self.local = (0, 0)  # the part of this rank's shard it covers, in shard coordinates
        self.local_shape = (0,)  # its shape there: 1-D when sharded, the parameter's own when not


class _Unshard(torch.autograd.Function):
    """Returns the gathered flat vector; its backward is the unit's post-backward."""

    @staticmethod
    def forward(ctx, flat_param, handle):
        ctx.handle = handle
        return handle.full.detach()  # a new tensor object: handle.full itself stays out of the graph

    @staticmethod
    def backward(ctx, grad_full):
        ctx.handle.post_backward(grad_full)
        return None, None


class FlatParamHandle:
    def __init__(self, entries, group, strategy, mixed_precision=None, use_orig_params=False,
                 sync_module_states=False):
        """entries: (module, name, parameter) in the unit's order; a parameter met again is shared."""
        self.group = group
        self.world = group.size()
        self.rank = group.rank()
        self.strategy = strategy
        self.sharded = strategy != ShardingStrategy.NO_SHARD and self.world > 1
        self.use_orig_params = use_orig_params
        mp = mixed_precision
        self.param_dtype = mp.param_dtype if mp is not None else None
        self.reduce_dtype = (mp.reduce_dtype or mp.param_dtype) if mp is not None else None
        self.keep_low_precision_grads = bool(mp is not None and mp.keep_low_precision_grads)
        self.reshard_after_forward = strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.HYBRID_SHARD)
        self.full = None  # the gathered flat vector while it exists
        self.summoned = None  # (full, saved module state) inside summon_full_params
        self.requires_grad_sync = True  # False under no_sync: gradients wait, unreduced, in self._unreduced
        self._unreduced = None

        self.infos, by_id = [], {}
        offset = 0
        for module, name, p in entries:
            if id(p) in by_id:
                by_id[id(p)].places.append((module, name))
                continue
            info = by_id[id(p)] = _ParamInfo(p, module, name, offset)
            self.infos.append(info)
            offset += info.numel
        dtypes = {i.param.dtype for i in self.infos}
        if len(dtypes) != 1:
            raise ValueError(f"FSDP requires uniform dtype within a unit but got {sorted(map(str, dtypes))}")
        requires = {i.param.requires_grad for i in self.infos}
        if len(requires) != 1 and not use_orig_params:
            raise ValueError("FSDP requires uniform requires_grad within a unit when use_orig_params=False")
        self.numel = offset
        shards = self.world if self.sharded else 1
        self.shard_size = -(-offset // shards)
        self.padded_numel = self.shard_size * shards
        pad = self.padded_numel - offset
        self.split_sizes = [i.numel for i in self.infos] + ([pad] if pad else [])
        self.module_param_order = {}  # module -> its _parameters keys as built (summon restores this order)
        for module, _, _ in entries:
            self.module_param_order.setdefault(module, list(module._parameters))

        with torch.no_grad():
            flat = torch.cat([i.param.detach().reshape(-1) for i in self.infos] +
                             ([torch.zeros(pad, dtype=self.infos[0].param.dtype)] if pad else []))
            if sync_module_states:
                c10d.broadcast(flat, c10d.get_global_rank(group, 0), group=group)
            start = self.rank * self.shard_size if self.sharded else 0
            shard = flat[start:start + self.shard_size].clone()
        self.flat_param = nn.Parameter(shard, requires_grad=any(requires))
        self._shard_start = start
        for info in self.infos:
            lo = min(max(info.offset - start, 0), self.shard_size)
            hi = min(max(info.offset + info.numel - start, 0), self.shard_size)
            info.local = (lo, max(lo, hi))
            info.local_shape = info.shape if not self.sharded else (info.local[1] - lo,)
        self._rest()

    # -- the states of the original names ----------------------------------------------------------
    def _rest(self):
        """The sharded state: the gathered vector dropped, the original names back at rest."""
        self.installed = False
        for info in self.infos:
            for module, name in info.places:
                if self.use_orig_params:
                    module.__dict__.pop(name, None)
                else:
                    module._parameters.pop(name, None)
                    module.__dict__[name] = _FREED
            if not self.use_orig_params:
                info.param.data = _FREED  # (the original values live on in the flat shard only)
            else:
                lo, hi = info.local
                info.param.data = self.flat_param.data[lo:hi].view(info.local_shape)

    def _install(self, views):
        for info, view in zip(self.infos, views):
            for module, name in info.places:
                module.__dict__[name] = view
        self.installed = True

    def _views(self, full):
        parts = torch.split(full, self.split_sizes)
        return [parts[k].view(info.shape) for k, info in enumerate(self.infos)]

    # -- gathering and freeing ---------------------------------------------------------------------
    def _gather(self, dtype=None):
        """The unsharded flat vector (in dtype, default the shard's own), without autograd."""
        with torch.no_grad():
            src = self.flat_param.detach()
            if dtype is not None and dtype != src.dtype:
                src = src.to(dtype)
            if not self.sharded:
                return src
            out = torch.empty(self.padded_numel, dtype=src.dtype)
            c10d.all_gather_into_tensor(out, src, group=self.group)
            return out

    def _ensure_gathered(self):
        if self.full is None:
            self.full = self._gather(self.param_dtype)
            if self.sharded:
                _saved_params.register(self.full, self)
        return self.full

    def reshard(self):
        if self.full is not None and self.sharded:
            _saved_params.unregister(self.full)
        self.full = None
        self._rest()

    def gathered_for_backward(self):
        """The unit's gathered vector for a backward that needs parameter values (re-gathered if
        forward freed it)."""
        return self._ensure_gathered()

    # -- one iteration -----------------------------------------------------------------------------
    def pre_forward(self):
        self._ensure_gathered()
        if torch.is_grad_enabled() and self.flat_param.requires_grad:
            full = _Unshard.apply(self.flat_param, self)
        else:
            full = self.full
        self._install(self._views(full))

    def pre_backward(self):
        """Before the unit's backward: its names read the gathered parameters again, for code that
        runs the module's forward inside backward. pyctorch's activation checkpointing recomputes
        its function with grad enabled and back-propagates through the recomputed graph, so the
        views must lead to an _Unshard node again (whose backward reduces what that inner backward
        gives; the forward's node reduces the rest, if anything reaches it)."""
        if not self.installed:
            self._ensure_gathered()
            with torch.enable_grad():
                self._install(self._views(_Unshard.apply(self.flat_param, self)))

    def post_forward(self):
        if self.reshard_after_forward or not torch.is_grad_enabled():
            self.reshard()

    def post_backward(self, grad_full):
        with torch.no_grad():
            if self._unreduced is not None:  # what backwards under no_sync left
                grad_full = grad_full + self._unreduced
                self._unreduced = None
            if not self.requires_grad_sync:
                self._unreduced = grad_full.clone()
            else:
                grad = self._reduce(grad_full)
                if not self.keep_low_precision_grads and grad.dtype != self.flat_param.dtype:
                    grad = grad.to(self.flat_param.dtype)
                self._accumulate(grad)
        self.reshard()

    def _reduce(self, grad_full):
        """This rank's shard of the gradient averaged over the group."""
        g = grad_full.contiguous()
        if self.reduce_dtype is not None and g.dtype != self.reduce_dtype:
            g = g.to(self.reduce_dtype)
        if self.world == 1:
            return g
        pre = _predivide_factor(self.world)
        g = g / pre if pre != 1 else g.clone()
        if self.sharded:
            out = torch.empty(self.shard_size, dtype=g.dtype)
            c10d.reduce_scatter_tensor(out, g, group=self.group)
        else:
            out = g
            c10d.all_reduce(out, group=self.group)
        post = self.world / pre
        return out.div_(post) if post != 1 else out

    def _accumulate(self, grad):
        if self.use_orig_params:
            targets = [(i.param, grad[i.local[0]:i.local[1]].view(i.local_shape)) for i in self.infos
                       if i.param.requires_grad]
        else:
            targets = [(self.flat_param, grad)]
        for p, g in targets:
            if p.grad is None:
                p.grad = g
            else:
                p.grad.add_(g)

    def local_grads(self):
        """The gradients this rank holds for the unit (what its optimizer steps)."""
        if self.use_orig_params:
            return [i.param.grad for i in self.infos if i.param.grad is not None]
        return [self.flat_param.grad] if self.flat_param.grad is not None else []

    def local_params(self):
        return [i.param for i in self.infos] if self.use_orig_params else [self.flat_param]

    # -- summon_full_params ------------------------------------------------------------------------
    def summon(self):
        """Exposes the original Parameters, their data the gathered values (in the shard's dtype)."""
        full = self._gather()
        views = self._views(full)
        saved = {}
        for info, view in zip(self.infos, views):
            info.param.data = view
            for module, name in info.places:
                module.__dict__.pop(name, None)
                if not self.use_orig_params:
                    saved[module] = dict(module._parameters)
        for module in saved:
            params = dict(saved[module])
            params.update({n: i.param for i in self.infos for m, n in i.places if m is module})
            order = self.module_param_order[module]
            module._parameters.clear()
            module._parameters.update({k: params[k] for k in order if k in params})
            module._parameters.update({k: v for k, v in params.items() if k not in module._parameters})
        self.summoned = (full, saved)
        return full

    def unsummon(self, writeback):
        full, saved = self.summoned
        self.summoned = None
        if writeback and full.untyped_storage().data_ptr() != self.flat_param.untyped_storage().data_ptr():
            with torch.no_grad():
                self.flat_param.copy_(full[self._shard_start:self._shard_start + self.shard_size])
        for module, params in saved.items():
            module._parameters.clear()
            module._parameters.update(params)
        self._rest()

    def fqn_pieces(self):
        """(info, local 1-D piece of the shard) per original parameter."""
        return [(i, self.flat_param.detach()[i.local[0]:i.local[1]].view(i.local_shape)) for i in self.infos]
