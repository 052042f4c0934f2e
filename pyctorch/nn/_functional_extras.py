"""torch.nn.functional, bound after the main autocast wrapping (functional.py wraps the fp32-listed losses
among them in a second pass): threshold, selu_, celu_, alpha dropout, and the nn
extras: activations, local response norm, extra losses, gumbel softmax, LP pooling and
channel shuffle, all composites of existing ops (autograd follows).

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import math

import pyctorch as torch
from . import _reduction as _Reduction


def threshold(input, threshold, value, inplace=False):
    return torch.threshold_(input, threshold, value) if inplace else torch.threshold(input, threshold, value)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def _check_dropout_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_dropout_p(p)
    return torch.alpha_dropout_(input, p, training) if inplace else torch.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_dropout_p(p)
    if inplace:
        return torch.feature_alpha_dropout_(input, p, training)
    return torch.feature_alpha_dropout(input, p, training)


def _check_floating(input, name):
    if not (input.is_floating_point() or input.is_complex()):
        from .._composites import _cpp
        raise NotImplementedError(f'"{name}" not implemented for \'{_cpp(input.dtype)}\'')


def _write_inplace(input, out):
    """Store `out` into `input` (the in-place form of a composite activation)."""
    return input.copy_(out)


def hardswish(input, inplace=False):
    _check_floating(input, "hardswish_cpu")
    src = input.clone() if inplace else input  # the in-place form must not save the overwritten input
    out = src * (src + 3.0).clamp(0.0, 6.0) / 6.0
    return _write_inplace(input, out) if inplace else out


def hardsigmoid(input, inplace=False):
    _check_floating(input, "hardsigmoid_cpu")
    out = (input + 3.0).clamp(0.0, 6.0) / 6.0
    return _write_inplace(input, out) if inplace else out


def logsigmoid(input):
    _check_floating(input, "log_sigmoid_cpu")
    return -torch.softplus(-input)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    _check_floating(input, "softshrink_check")
    return input - input.clamp(-lambd, lambd)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.dim() if dim < 0 else dim
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    _check_floating(input, "glu_cpu")
    a, b = input.chunk(2, d)
    return a * b.sigmoid()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.ndim)
    return (-input).softmax(dim, dtype=dtype)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    _check_floating(input, "rrelu_with_noise_out_cpu")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    # torch draws one double uniform(lower, upper) per non-positive element, in memory order
    neg = input.detach().contiguous() <= 0
    noise = torch.ones(input.shape, dtype=torch.float64)
    count = int(neg.sum())
    if count:
        noise[neg] = torch.empty(count, dtype=torch.float64).uniform_(lower, upper)
    noise = noise.to(input.dtype)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    sq = input * input
    pad_shape = list(input.shape)
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        pad_shape[1] = before
        parts.append(torch.zeros(pad_shape, dtype=input.dtype))
    parts.append(sq)
    if after:
        pad_shape[1] = after
        parts.append(torch.zeros(pad_shape, dtype=input.dtype))
    padded = torch.cat(parts, 1) if len(parts) > 1 else sq
    # the channel window average (avg_pool over channels, zero padding counted)
    div = padded.narrow(1, 0, channels)
    for j in range(1, size):
        div = div + padded.narrow(1, j, channels)
    div = (div / size * alpha + k).pow(beta)
    return input / div


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    zeros = torch.zeros_like(input)
    margin_part = torch.where(target != 1, (margin - input).clamp_min(0), zeros)
    self_part = torch.where(target != -1, input, zeros)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    return _reduce((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{input.size()}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x = input.reshape(-1, input.shape[-1] if input.dim() else 1)
    y = target.reshape(-1)
    if y.numel() != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {tuple(target.shape)}")
    classes = x.shape[1]
    picked = x.gather(1, y.unsqueeze(1))
    z = (margin - picked + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y].unsqueeze(1)
    z = z * (1 - one_hot(y, classes).to(z.dtype))
    loss = z.sum(1) / classes
    if reduction == "none":
        return loss.reshape(target.shape) if input.dim() == 2 else loss.reshape(())
    return _reduce(loss, reduction)


def _check_triplet_dims(anchor, positive, negative, fmt):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p == n):
        raise RuntimeError(fmt.format(a=a, p=p, n=n))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative,
                        "The anchor, positive, and negative tensors are expected to have the same number of "
                        "dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = torch.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    _check_triplet_dims(anchor, positive, negative,
                        "The anchor, positive, and negative tensors are expected to have the same number of "
                        "dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = torch.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torch.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:  # homoscedastic: one variance per sample
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim
                  and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # clamp for stability without changing the gradient path (torch clamps a clone under no_grad)
    var = var.clone()
    with torch.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    gumbels = -torch.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, pool, max_pool, kernel_numel):
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_numel).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool1d, max_pool1d, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool2d, max_pool2d, kw * kh)


def channel_shuffle(input, groups):
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"sizes {list(input.shape)}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    shape = list(input.shape)
    return (input.reshape([shape[0], groups, c // groups] + shape[2:]).transpose(1, 2)
            .reshape(shape).contiguous())
