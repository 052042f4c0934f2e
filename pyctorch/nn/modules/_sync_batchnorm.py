"""nn.SyncBatchNorm: batch norm whose training statistics cover the whole batch across the ranks of
a process group, and the autograd function that makes its backward match.

Note [SyncBatchNorm on the CPU]
torch's SyncBatchNorm raises ValueError for CPU tensors once a process group is initialized (it
only syncs on accelerators). pyctorch's collectives run on the CPU through Gloo, so here the CPU
path syncs: everything else follows torch (no sync in eval mode, without an initialized process
group, or in a group of one; plain F.batch_norm then).

Note [SyncBatchNorm statistics]
Each rank sends (mean, biased variance, count) of its shard in one all_gather; the global mean and
variance are combined as in parallel variance (Chan et al.): M2 = sum(n_i * (var_i + (mean_i -
mean)^2)). Gathering per-rank moments instead of all-reducing sums and sums of squares avoids the
cancellation of E[x^2] - E[x]^2, and a rank with an empty shard takes part with count 0.
Backward: each rank reduces sum(dy) and sum(dy * (x - mean)) over its shard, those two are summed
over the group (one all_reduce), and grad_input follows from them exactly as on one process. The
weight and bias gradients stay local: DDP averages them like any other parameter's.
"""
import pyctorch as torch

from ...autograd import Function
from .batchnorm import _BatchNorm
from .. import functional as F

__all__ = ["SyncBatchNorm"]


def _channel_view(t, ndim):
    """(C,) -> (1, C, 1, ...) to broadcast against an input of ndim dimensions."""
    return t.view([1, -1] + [1] * (ndim - 2))


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, group, world_size):
        import pyctorch.distributed as dist
        input = input.contiguous()
        channels, ndim = input.shape[1], input.dim()
        dims = [d for d in range(ndim) if d != 1]
        count = input.numel() // channels if channels else 0
        if count > 0:
            var, mean = torch.var_mean(input, dims, unbiased=False)
        else:
            var = mean = torch.zeros(channels, dtype=input.dtype)
        local = torch.cat([mean, var, torch.tensor([float(count)], dtype=input.dtype)])
        gathered = [torch.empty_like(local) for _ in range(world_size)]
        dist.all_gather(gathered, local, group=group)
        stats = torch.stack(gathered)                      # (world, 2C + 1)
        means, variances, counts = stats[:, :channels], stats[:, channels:2 * channels], stats[:, 2 * channels:]
        total = counts.sum()
        n = float(total)
        mean = (means * counts).sum(0) / total
        var = ((variances + (means - mean) ** 2) * counts).sum(0) / total
        if running_mean is not None:
            with torch.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1)) if n > 1 else var
            with torch.no_grad():
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
        invstd = torch.rsqrt(var + eps)
        ctx.save_for_backward(input, weight, mean, invstd)
        ctx.group, ctx.total = group, n
        out = (input - _channel_view(mean, ndim)) * _channel_view(invstd, ndim)
        if weight is not None:
            out = out * _channel_view(weight, ndim)
        if bias is not None:
            out = out + _channel_view(bias, ndim)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        import pyctorch.distributed as dist
        input, weight, mean, invstd = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        ndim, channels = input.dim(), input.shape[1]
        dims = [d for d in range(ndim) if d != 1]
        if input.numel() > 0:
            xmu = input - _channel_view(mean, ndim)
            sum_dy = grad_out.sum(dims)
            sum_dy_xmu = (grad_out * xmu).sum(dims)
        else:
            xmu = input
            sum_dy = sum_dy_xmu = torch.zeros(channels, dtype=input.dtype)
        grad_input = grad_weight = grad_bias = None
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = sum_dy_xmu * invstd
        if ctx.needs_input_grad[2]:
            grad_bias = sum_dy
        if ctx.needs_input_grad[0]:
            # every rank must join this all_reduce, an empty shard too (see Note [SyncBatchNorm statistics])
            both = torch.cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(both, group=ctx.group)
            mean_dy = both[:channels] / ctx.total
            mean_dy_xmu = both[channels:] / ctx.total
            scale = invstd if weight is None else invstd * weight
            grad_input = (grad_out - _channel_view(mean_dy, ndim)
                          - xmu * _channel_view(invstd * invstd * mean_dy_xmu, ndim)) * _channel_view(scale, ndim)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_buffers else None
        running_var = self.running_var if use_buffers else None
        group, world_size = self._sync_group() if bn_training and self.training else (None, 1)
        if world_size < 2:  # eval, not distributed, or alone in the group
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                                self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean, running_var, self.eps,
                                            factor, group, world_size)

    def _sync_group(self):
        import pyctorch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            return None, 1
        group = self.process_group or dist.group.WORLD
        return group, dist.get_world_size(group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replaces every BatchNorm*d in module (or module itself) by a SyncBatchNorm sharing its
        parameters and running-statistics buffers; returns the converted module."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                converted.weight, converted.bias = module.weight, module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
