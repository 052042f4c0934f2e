"""torch.nn.functional: composites over the op table (autograd follows from the ops' formulas)."""
import math

import pyctorch as torch

__all__ = ["linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
           "softplus", "elu", "selu", "celu", "relu6", "hardtanh", "mish", "dropout", "mse_loss", "l1_loss", "smooth_l1_loss",
           "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "one_hot", "normalize", "dropout1d", "dropout2d", "dropout3d", "prelu", "bilinear", "kl_div",
           "cosine_similarity", "pairwise_distance", "cosine_embedding_loss"]


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
    return input.relu_() if inplace else torch.relu(input)


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else torch.hardtanh(input, min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return input.leaky_relu_(negative_slope) if inplace else torch.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return input.elu_(alpha) if inplace else torch.elu(input, alpha)


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return input.elu_(alpha, scale) if inplace else torch.elu(input, alpha, scale)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return input.elu_(alpha, 1.0, 1.0 / alpha) if inplace else torch.elu(input, alpha, 1.0, 1.0 / alpha)


def gelu(input, approximate="none"):
    return torch.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else torch.silu(input)


def mish(input, inplace=False):
    out = input * torch.softplus(input).tanh()
    if inplace:
        with torch.no_grad():
            input.copy_(out)
        return input
    return out


def softplus(input, beta=1.0, threshold=20.0):
    return torch.softplus(input, beta, threshold)


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
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    lp = _class_dim_last(logp)
    t = target.reshape(-1).long()
    valid = t != ignore_index
    per = -(lp * weight.reshape(1, -1)).sum(1) if weight is not None else -lp.sum(1)
    per = torch.where(valid, per, torch.zeros_like(per))
    if reduction == "none":
        smooth = per.reshape(target.shape)
    elif reduction == "sum":
        smooth = per.sum()
    else:
        if weight is not None:
            safe = torch.where(valid, t, torch.zeros_like(t))
            denom = torch.where(valid, weight[safe], torch.zeros_like(weight[safe])).sum()
        else:
            denom = valid.sum()
        smooth = per.sum() / denom
    return (1 - label_smoothing) * nll + (label_smoothing / n_classes) * smooth


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


def _feature_dropout(input, p, training, inplace):
    """torch's feature dropout over the first two dims: one Bernoulli(1 - p) draw per (sample, channel)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    if p == 1.0:
        noise = torch.zeros(shape, dtype=input.dtype)
    else:
        noise = torch.empty(shape, dtype=input.dtype).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _batched_feature_dropout(input, p, training, inplace, batched_dim):
    """dropout1d/3d: an input without the batch dim is dropped as one sample."""
    if input.dim() == batched_dim:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(input.unsqueeze(0), p, training, inplace)
    return input if inplace else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _batched_feature_dropout(input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    import warnings
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "3D or 4D inputs).")
    if input.dim() == 3:
        # torch reads a 3-D input as (N, C, L), not as an unbatched (C, H, W)
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.")
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (4, 5):
        import warnings
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "4D or 5D inputs).")
        return _feature_dropout(input, p, training, inplace)
    return _batched_feature_dropout(input, p, training, inplace, 5)


def prelu(input, weight):
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    w = weight
    if input.dim() >= 2 and weight.numel() != 1:
        w = weight.reshape((-1,) + (1,) * (input.dim() - 2))
    elif weight.numel() == 1:
        w = weight.reshape(())
    return torch.where(input > 0, input, w * input)


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b over the last dims: one GEMM for x1 A, then a product-sum with x2."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {tuple(input1.shape[:-1])} and "
                           f"{tuple(input2.shape[:-1])}")
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): weight of shape {tuple(weight.shape)} does not match input1 of size "
                           f"{input1.shape[-1]} and input2 of size {input2.shape[-1]}")
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_f,))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if reduction == "mean":
        import warnings
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = torch.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def _vector_norm_clamped(x, dim, eps):
    n = torch.linalg.vector_norm(x, 2, dim=dim, keepdim=True)
    with torch.no_grad():
        clamped = n.clamp(min=eps)
    return n + (clamped - n).detach()  # the value of torch's no-grad clamp_min_, its gradient unclamped


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    shape = torch.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    if x1.dtype != x2.dtype:
        common = torch.promote_types(x1.dtype, x2.dtype)
        x1, x2 = x1.to(common), x2.to(common)
    return ((x1 / _vector_norm_clamped(x1, dim, eps)) * (x2 / _vector_norm_clamped(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    dim = -1 if max(x1.dim(), x2.dim()) > 0 else 0
    return torch.norm(x1 - x2 + eps, p, dim, keepdim)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if input1.dim() != input2.dim() or input1.dim() not in (1, 2):
        raise RuntimeError(f"cosine_embedding_loss: expected 1D or 2D inputs of one rank, got {input1.dim()}D and "
                           f"{input2.dim()}D")
    eps = 1e-12
    dim = input1.dim() - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = torch.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    loss = torch.where(target == 1, pos, zeros) + torch.where(target == -1, neg, zeros)
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
