"""Autograd Functions the nn modules use (torch.nn.modules._functions): BackwardHookFunction, the identity whose
node carries a module's full backward hooks (see Module.register_full_backward_hook), and SyncBatchNorm, the
statistics and backward of nn.SyncBatchNorm across a process group.

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

from ...autograd.function import Function

__all__ = ["BackwardHookFunction", "SyncBatchNorm"]


class BackwardHookFunction(Function):
    """Identity on its tensor arguments; its node is where a module's backward hooks attach. The outputs of
    arguments that do not require grad are non-differentiable (their gradients arrive as zeros, as torch's)."""

    @staticmethod
    def forward(ctx, *args):
        outs = tuple(a.view_as(a) for a in args)
        ctx.mark_non_differentiable(*[o for a, o in zip(args, outs) if not a.requires_grad])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _channel_view(t, ndim):
    """(C,) -> (1, C, 1, ...) to broadcast against an input of ndim dimensions."""
    return t.view([1, -1] + [1] * (ndim - 2))


class SyncBatchNorm(Function):
    """nn.SyncBatchNorm's training step across the ranks of a group (Note [SyncBatchNorm statistics])."""

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
