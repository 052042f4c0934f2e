"""torch.nn.functional: composites over the op table (autograd follows from the ops' formulas)."""
import math

import pyctorch as torch

__all__ = ["linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
           "softplus", "elu", "relu6", "hardtanh", "mish", "dropout", "mse_loss", "l1_loss", "smooth_l1_loss",
           "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "one_hot", "normalize"]


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def linear(input, weight, bias=None):
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def relu(input, inplace=False):
    return input.clamp_(min=0) if inplace else input.clamp(min=0)


def relu_(input):
    return input.clamp_(min=0)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    out = torch.where(input > 0, input, input * negative_slope)
    if inplace:
        with torch.no_grad():
            input.copy_(out)
        return input
    return out


def elu(input, alpha=1.0, inplace=False):
    return torch.where(input > 0, input, alpha * input.expm1())


def gelu(input, approximate="none"):
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + inner.tanh())
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return 0.5 * input * (1.0 + (input * (1.0 / math.sqrt(2.0))).erf())


def silu(input, inplace=False):
    return input * input.sigmoid()


def mish(input, inplace=False):
    return input * softplus(input).tanh()


def softplus(input, beta=1.0, threshold=20.0):
    scaled = input * beta
    soft = (scaled.exp().log1p()) / beta
    return torch.where(scaled > threshold, input, soft)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.ndim)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.ndim)
    return input.log_softmax(dim, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * torch.zeros_like(input)
    # torch's CPU dropout: a Bernoulli(1 - p) mask scaled by 1 / (1 - p), drawn with bernoulli_
    noise = torch.empty_like(input).bernoulli_(1 - p).div_(1 - p)
    if inplace:
        return input.mul_(noise)
    return input * noise


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce((input - target).abs(), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    d = (input - target).abs()
    loss = torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def _class_dim_last(x):
    # (N, C, d1, ...) -> (N * d1 * ..., C)
    if x.ndim <= 2:
        return x.reshape(-1, x.shape[-1]) if x.ndim == 2 else x.reshape(1, -1)
    return x.movedim(1, -1).reshape(-1, x.shape[1])


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim >= 2 and target.shape[0] != input.shape[0] or input.ndim == 1 and target.ndim != 0:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    out_shape = target.shape
    logp = _class_dim_last(input)
    t = target.reshape(-1).long()
    valid = t != ignore_index
    safe = torch.where(valid, t, torch.zeros_like(t))
    if bool(((safe < 0) | (safe >= logp.shape[1])).any()):
        bad = int(safe[(safe < 0) | (safe >= logp.shape[1])][0])
        raise IndexError(f"Target {bad} is out of bounds.")
    picked = -logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = weight[safe] if weight is not None else torch.ones_like(picked)
    w = torch.where(valid, w, torch.zeros_like(w))
    loss = picked * w
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    if not target.is_floating_point():  # class indices: the fused kernel (cpu/cross_entropy.c)
        return _cross_entropy_indices(input, target, weight, ignore_index, reduction, label_smoothing)
    class_dim = 0 if input.ndim == 1 else 1
    logp = input.log_softmax(class_dim)
    n_classes = input.shape[class_dim]
    if target.is_floating_point():  # class probabilities
        t = target
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * t
        if weight is not None:
            shape = [1] * input.ndim
            shape[class_dim] = n_classes
            prod = prod * weight.reshape(shape)
        loss = -prod.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (loss.numel() if input.ndim > 1 else 1)
        return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    # log(1 + exp(-|x|)) + max(x, 0) - x * t, with pos_weight scaling the positive term
    log_sig_neg = (-input.abs()).exp().log1p() + (-input).clamp(min=0)  # -log(sigmoid(x))
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * log_sig_neg
    else:
        loss = (1 - target) * input + log_sig_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes < 0:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    out = torch.zeros(tuple(tensor.shape) + (num_classes,), dtype=torch.int64)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


# ---- normalization, embedding ----
__all__ += ["layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm", "embedding"]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return torch.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return torch.rms_norm(input, normalized_shape, weight, eps)


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size(torch.Size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:])))
    return torch.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.shape)
    return torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input.shape)
    return torch.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if sparse and weight.requires_grad and torch.is_grad_enabled():
        raise NotImplementedError("pyctorch: sparse gradients are not supported; F.embedding(sparse=True) (and "
                                  "nn.Embedding(sparse=True)) would need torch.sparse tensors. Use sparse=False.")
    if max_norm is not None:
        # torch renormalizes the looked-up rows in place first, without recording it
        input = input.contiguous()
        with torch.no_grad():
            torch.embedding_renorm_(weight, input, max_norm, norm_type)
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _cross_entropy_indices(input, target, weight, ignore_index, reduction, label_smoothing):
    """cross_entropy with class-index targets: log_softmax + nll in one fused op over (rows, C)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    r = _REDUCTIONS[reduction]
    if input.ndim == 0:
        raise RuntimeError("cross_entropy: expected an input with at least 1 dimension (C), got a 0-d tensor")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported")
        x, t = input.unsqueeze(0), target.reshape(1)
    elif input.ndim == 2:
        x, t = input, target
    else:
        if target.ndim == 0 or target.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0] if target.ndim else 0}).")
        expect = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != expect:
            raise RuntimeError(f"Expected target size {expect}, got {list(target.shape)}")
        x, t = input.movedim(1, -1).reshape(-1, input.shape[1]), target.reshape(-1)
    loss = torch._C._cross_entropy_loss(x, t, weight, r, ignore_index, float(label_smoothing))[0]
    return loss.reshape(target.shape) if r == 0 else loss
