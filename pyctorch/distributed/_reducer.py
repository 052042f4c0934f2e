"""The gradient reducer of DistributedDataParallel (torch's C++ Reducer, here in Python over the
Gloo collectives): bucket assignment, GradBucket, and the per-iteration state machine.

Note [DDP reducer]: parameters are grouped into flat buckets (one dtype per bucket). After a
forward that will be followed by a synced backward, prepare_for_backward() arms the reducer; each
parameter's post-accumulate-grad hook copies its gradient into its slot of the bucket (scaled by
1/world_size unless a comm hook does the averaging) and, once every slot of a bucket is filled and
all earlier buckets are launched, the bucket's all-reduce (or comm hook) is launched with
async_op, so communication overlaps the rest of backward. When the last bucket is launched a
final callback is queued on the autograd engine; it waits for every bucket and writes the
reduced values back to each parameter's .grad (or makes .grad a view of the bucket with
gradient_as_bucket_view). Buckets launch in index order on every rank, so all ranks issue the
same collectives in the same order.

Bucket layout as torch: the first iteration uses one bucket for everything (unless
find_unused_parameters), then buckets are rebuilt once in the order gradients became ready,
with a small first bucket (1 MiB) and bucket_cap_mb for the rest; rank 0's order is broadcast
so every rank builds the same buckets. With find_unused_parameters the buckets follow the
reversed parameter order from the start and are never rebuilt; parameters that the forward did
not reach contribute zeros, and a parameter unused on every rank keeps its .grad untouched.
"""
import sys
import weakref

import pyctorch as _torch

from . import distributed_c10d as _c10d

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def _compute_bucket_assignment_by_size(tensors, bucket_size_limit, expect_sparse_gradient=(), tensor_indices=()):
    """(bucket_indices, per_bucket_size_limits): tensors grouped by dtype and device, in the order
    given, a bucket closed once its bytes reach the current limit (the limits advance one per
    closed bucket and stay at the last); without tensor_indices the buckets are sorted by the
    smallest index they hold."""
    limits = list(bucket_size_limit)
    if not limits:
        raise RuntimeError("bucket_size_limits must not be empty")
    result = []
    open_buckets = {}  # (dtype, device) -> [indices, bytes, limit]
    limit_pos = {}
    for i, t in enumerate(tensors):
        index = tensor_indices[i] if len(tensor_indices) else i
        if len(expect_sparse_gradient) and expect_sparse_gradient[index]:
            result.append(([index], sys.maxsize))
            continue
        key = (t.dtype, str(t.device))
        b = open_buckets.setdefault(key, [[], 0, 0])
        b[0].append(index)
        b[1] += t.numel() * t.element_size()
        pos = limit_pos.setdefault(key, 0)
        b[2] = limits[pos]
        if b[1] >= b[2]:
            result.append((b[0], b[2]))
            del open_buckets[key]
            limit_pos[key] = min(pos + 1, len(limits) - 1)
    for b in open_buckets.values():
        result.append((b[0], b[2]))
    if not len(tensor_indices):
        result.sort(key=lambda r: min(r[0]))
    return [r[0] for r in result], [r[1] for r in result]


class GradBucket:
    """torch.distributed.GradBucket: what a DDP comm hook receives. buffer() is the flat tensor of
    the bucket's gradients (in gradients()/parameters() order); set_buffer replaces it."""

    def __init__(self, index, buffer, gradients, parameters, offsets, is_last):
        self._index = index
        self._buffer = buffer
        self._gradients = gradients
        self._parameters = parameters
        self._offsets = offsets
        self._is_last = is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._is_last

    def set_buffer(self, buffer):
        self._buffer = buffer

    def __repr__(self):
        return f"<torch.distributed.GradBucket object at {hex(id(self))}>"


class _Bucket:
    __slots__ = ("indices", "buffer", "views", "offsets", "pending", "future", "size_limit")

    def __init__(self, params, indices, size_limit):
        self.indices = indices
        self.size_limit = size_limit
        total = sum(params[i].numel() for i in indices)
        p0 = params[indices[0]]
        self.buffer = _torch.zeros(total, dtype=p0.dtype, device=p0.device)
        self.views, self.offsets = [], []
        off = 0
        for i in indices:
            n = params[i].numel()
            self.views.append(self.buffer[off:off + n].view(params[i].shape))
            self.offsets.append(off)
            off += n
        self.pending = len(indices)
        self.future = None


def _is_alias(a, b):
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.dtype == b.dtype and a.stride() == b.stride()


def _future_tensor(value):
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise RuntimeError("Expected a single tensor from the communication hook's future, "
                               f"got a list of {len(value)}")
        value = value[0]
    if not isinstance(value, _torch.Tensor):
        raise RuntimeError("The communication hook's future must hold a tensor or a list of one tensor")
    return value


class Reducer:
    """dist.Reducer as DDP drives it (see Note [DDP reducer])."""

    def __init__(self, params, bucket_indices, size_limits, process_group, bucket_bytes_cap, find_unused_parameters,
                 gradient_as_bucket_view, first_bucket_bytes_cap, static_graph=False):
        self.params = list(params)
        self.group = process_group
        self.world_size = process_group.size()
        self.div_factor = self.world_size  # the number of active ranks under join(divide_by_initial_world_size=False)
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_bytes_cap = first_bucket_bytes_cap
        self.find_unused = bool(find_unused_parameters)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.static_graph = bool(static_graph)
        self.static_used = None  # static_graph: how many ranks used each parameter in the first iteration
        self.static_unused = []  # static_graph: the parameters this rank did not use then
        self.comm_hook = None
        self.comm_hook_state = None
        self.expect_hooks = False
        self.require_finalize = False  # a hook of this iteration ran; _finalize_backward must run
        self.has_rebuilt = False
        self.ready_order = []
        self.num_iterations = 0
        self._init_buckets(bucket_indices, size_limits)
        self._handles = []
        ref = weakref.ref(self)
        for i, p in enumerate(self.params):
            def hook(param, i=i):
                r = ref()
                if r is not None:
                    r._autograd_hook(i)
            self._handles.append(p.register_post_accumulate_grad_hook(hook))

    def _init_buckets(self, bucket_indices, size_limits):
        self.buckets = [_Bucket(self.params, list(ix), lim) for ix, lim in zip(bucket_indices, size_limits)]
        self.locate = {}
        for b, bucket in enumerate(self.buckets):
            for pos, i in enumerate(bucket.indices):
                self.locate[i] = (b, pos)

    def remove_hooks(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    # -- one iteration --------------------------------------------------------------------------
    def prepare_for_forward(self):
        self._ensure_prior_reduction_finished()

    def _ensure_prior_reduction_finished(self):
        # as torch: only a backward that reached DDP's hooks and did not finish is an error (a
        # forward with no backward after it, e.g. an evaluation with grad enabled, is not)
        if self.require_finalize:
            missing = " ".join(str(i) for i, r in enumerate(self.ready) if not r)
            raise RuntimeError(_UNFINISHED_REDUCTION + f"\nParameter indices which did not receive grad for rank "
                               f"{self.group.rank()}: {missing}\n In addition, you can set the environment "
                               "variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information "
                               "about which particular parameters did not receive gradient on this rank as part "
                               "of this error")

    def rebuild_buckets(self):
        """Rebuilds the buckets once, after the first synced iteration, in the order gradients
        became ready (rank 0's order); True if it did."""
        self._ensure_prior_reduction_finished()
        if self.has_rebuilt or (self.find_unused and not self.static_graph) or not self.ready_order:
            return False
        order = _torch.tensor(self.ready_order + [-1] * (len(self.params) - len(self.ready_order)), dtype=_torch.int64)
        _c10d.broadcast(order, 0, group=self.group)
        order = [i for i in order.tolist() if i >= 0]
        limits = [self.first_bucket_bytes_cap, self.bucket_bytes_cap]
        indices, size_limits = _compute_bucket_assignment_by_size([self.params[i] for i in order], limits,
                                                                  tensor_indices=order)
        self._init_buckets(indices, size_limits)
        self.has_rebuilt = True
        self.ready_order = []
        return True

    def prepare_for_backward(self, outputs):
        self._ensure_prior_reduction_finished()
        self.expect_hooks = True
        self.next_bucket = 0
        self.ready = [False] * len(self.params)
        for b in self.buckets:
            b.pending = len(b.indices)
            b.future = None
        self.unused = []
        self.marked_unused = False
        self.local_used = None
        self.used_work = None
        self.delayed = False
        if self.find_unused:
            self.local_used = _torch.zeros(len(self.params), dtype=_torch.int32)
            reached = _reached_variables(outputs)
            self.unused = [i for i, p in enumerate(self.params) if id(p) not in reached]
        elif self.static_graph and self.static_used is None:
            self.local_used = _torch.zeros(len(self.params), dtype=_torch.int32)
        elif self.static_graph:
            self.unused = list(self.static_unused)

    def _autograd_hook(self, index):
        if not self.expect_hooks:
            return  # no_sync, or a backward not preceded by a synced forward
        if self.static_graph and self.static_used is None:
            # Note [Static graph]: the first iteration only records which parameters are used; the
            # reduction of every bucket runs once backward has finished (_delay_all_reduce), and
            # later iterations treat the parameters unused here as find_unused_parameters would,
            # without searching the graph
            if self.local_used[index].item():
                raise RuntimeError("Your training graph has changed in this iteration, e.g., one parameter is "
                                   "used twice or more times in this backward pass; static_graph does not support "
                                   "a parameter whose hook runs more than once in the first iteration (pyctorch).")
            self.local_used[index] = 1
            self.ready_order.append(index)
            if not self.delayed:
                self.delayed = True
                _torch.autograd.Variable._execution_engine.queue_callback(self._delay_all_reduce)
            return
        if not self.has_rebuilt and not self.find_unused:
            self.ready_order.append(index)
        if self.find_unused:
            self.local_used[index] = 1
        if not self.marked_unused:
            self.marked_unused = True
            for u in self.unused:  # (empty unless find_unused_parameters or a static graph)
                self._mark_ready(u)
        self._mark_ready(index)

    def _delay_all_reduce(self):
        _c10d.all_reduce(self.local_used, group=self.group)
        used_here = set(self.ready_order)
        self.static_unused = [i for i in range(len(self.params)) if i not in used_here]
        self.static_used = self.local_used.tolist()  # (now the count of ranks using each parameter)
        self.ready_order += self.static_unused  # the rebuilt buckets hold every parameter
        for i in range(len(self.params)):
            self._mark_ready(i)

    def _mark_ready(self, index):
        if self.ready[index]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of the following "
                "reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model "
                "parameters are not shared across multiple concurrent forward-backward passes. or try to use "
                "_set_static_graph() as a workaround if this module graph does not change during training loop."
                "2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple "
                "`checkpoint` functions to wrap the same part of your model, it would result in the same set of "
                "parameters been used by different reentrant backward passes multiple times, and hence marking "
                "a variable ready multiple times. DDP does not support such use cases in default. You can try to "
                "use _set_static_graph() as a workaround if your module graph does not change over iterations.")
        self.ready[index] = True
        self.require_finalize = True
        b, pos = self.locate[index]
        bucket = self.buckets[b]
        view = bucket.views[pos]
        p = self.params[index]
        grad = p.grad
        with _torch.no_grad():
            if grad is None:
                view.zero_()
            elif not _is_alias(grad, view):
                if self.comm_hook is None:
                    _torch.mul(grad, 1.0 / self.div_factor, out=view)
                else:
                    view.copy_(grad)
                if self.gradient_as_bucket_view:
                    p.grad = view
            elif self.comm_hook is None:
                view.div_(self.div_factor)
        bucket.pending -= 1
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._launch(self.next_bucket)
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            if self.find_unused:
                self.used_work = _c10d.all_reduce(self.local_used, group=self.group, async_op=True)
            _torch.autograd.Variable._execution_engine.queue_callback(self._finalize_backward)

    def _grad_bucket(self, b):
        bucket = self.buckets[b]
        return GradBucket(b, bucket.buffer, list(bucket.views), [self.params[i] for i in bucket.indices],
                          list(bucket.offsets), b == len(self.buckets) - 1)

    def _launch(self, b):
        bucket = self.buckets[b]
        if self.comm_hook is None:
            bucket.future = _c10d.all_reduce(bucket.buffer, group=self.group, async_op=True).get_future()
        else:
            bucket.future = self.comm_hook(self.comm_hook_state, self._grad_bucket(b))

    def _finalize_backward(self):
        self.expect_hooks = False
        self.require_finalize = False
        self.num_iterations += 1
        used = None
        if self.find_unused:
            self.used_work.wait()
            used = self.local_used.tolist()
        elif self.static_graph:
            used = self.static_used
        with _torch.no_grad():
            for bucket in self.buckets:
                result = _future_tensor(bucket.future.wait())
                bucket.future = None
                if result.numel() != bucket.buffer.numel():
                    raise RuntimeError(f"The communication hook returned a tensor of {result.numel()} elements "
                                       f"for a bucket of {bucket.buffer.numel()}")
                flat = result.reshape(-1)
                for pos, i in enumerate(bucket.indices):
                    if used is not None and used[i] == 0:
                        continue  # unused on every rank: .grad stays as it was
                    p = self.params[i]
                    view = bucket.views[pos]
                    out = flat[bucket.offsets[pos]:bucket.offsets[pos] + view.numel()].view(view.shape)
                    if self.gradient_as_bucket_view:
                        if not _is_alias(out, view):
                            view.copy_(out)
                        if p.grad is None or not _is_alias(p.grad, view):
                            p.grad = view
                    elif p.grad is None:
                        p.grad = out.clone()
                    else:
                        p.grad.copy_(out)


def _reached_variables(outputs):
    """ids of the leaf tensors whose AccumulateGrad nodes the outputs' graph reaches."""
    seen, found = set(), set()
    stack = [t.grad_fn for t in outputs if isinstance(t, _torch.Tensor) and t.grad_fn is not None]
    for t in outputs:
        if isinstance(t, _torch.Tensor) and t.grad_fn is None and t.requires_grad:
            found.add(id(t))
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            found.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return found


_UNFINISHED_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs participate "
    "in calculating loss. \nIf you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` function. Please include "
    "the loss function and the structure of the return value of `forward` of your module when reporting this "
    "issue (e.g. list, dict, iterable).")
