"""torch.nn.functional: composites over the op table (autograd follows from the ops' formulas)."""
import math

import pyctorch as torch
from . import _reduction as _Reduction

__all__ = ["linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
           "softplus", "elu", "selu", "celu", "relu6", "hardtanh", "mish", "dropout", "mse_loss", "l1_loss", "smooth_l1_loss",
           "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "one_hot", "normalize", "dropout1d", "dropout2d", "dropout3d", "prelu", "bilinear", "kl_div",
           "cosine_similarity", "pairwise_distance", "cosine_embedding_loss"]


def _warn_target_size(input, target):
    if target.size() != input.size():
        import warnings
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


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
    _check_floating(input, "mish_cpu")
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


def _loss_operands(input, target, bool_target=False):
    """input and target as torch's pointwise losses see them: broadcast to one shape (so a 0-d target promotes as a
    tensor); for mse_loss (bool_target), a bool target in the result dtype (its kernel takes it, l1_loss's refuses)."""
    if input.shape != target.shape:
        input, target = torch.broadcast_tensors(input, target)
    if bool_target and target.dtype == torch.bool and input.dtype != torch.bool:
        target = target.to(torch.result_type(input, target))
    return input, target


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_target_size(input, target)
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    input, target = _loss_operands(input, target, bool_target=True)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_target_size(input, target)
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    input, target = _loss_operands(input, target)
    return _reduce((input - target).abs(), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_target_size(input, target)
    input, target = _loss_operands(input, target)
    d = (input - target).abs()
    loss = torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_target_size(input, target)
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    input, target = _loss_operands(input, target)
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


def _check_class_target(input, target, weight):
    """torch's checks of a class-index target for nll_loss / cross_entropy, in its order (Note [nll target
    checks]: batch size, target rank or shape, dtype, then sizes and weight, as torch's nll_loss_nd and kernels)."""
    d = input.dim()
    if d < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {d})")
    if d != 1 and input.size(0) != (target.size(0) if target.dim() else 0):
        raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target batch_size "
                         f"({target.size(0) if target.dim() else 0}).")
    if d == 3 or d > 4:
        expect = [input.size(0)] + list(input.shape[2:])
        if list(target.shape) != expect:
            raise RuntimeError(f"Expected target size {expect}, got {list(target.shape)}")
    if d <= 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if d == 4 and target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    if target.dtype not in (torch.int64, torch.uint8):
        from .._composites import _cpp
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_cpp(target.dtype)}")
    if d > 2 and target.dtype != torch.int64:  # torch's spatial kernel (nll_loss2d) takes Long only
        raise RuntimeError("expected scalar type Long but found Byte")
    if d == 1 and target.dim() == 1 and target.size(0) != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.size(0)}")
    if d == 4 and (target.size(0) != input.size(0) or list(target.shape[1:]) != list(input.shape[2:])):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    classes = input.size(0 if d == 1 else 1)
    if weight is not None and (weight.numel() != classes or (d <= 2 and weight.dim() != 1)):
        if d <= 2:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
        raise RuntimeError("weight tensor should be defined either for all or no classes")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    _check_class_target(input, target, weight)
    out_shape = target.shape if input.dim() > 1 else ()
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
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if input.shape != target.shape:  # class indices: the fused kernel (cpu/cross_entropy.c)
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        if input.dim() == 0:  # torch's log_softmax over the class dim 1 of a 0-d input, before the target checks
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
        _check_class_target(input, target, weight)
        return _cross_entropy_indices(input, target, weight, ignore_index, reduction, max(label_smoothing, 0.0))
    # the same shape: class probabilities
    if not target.is_floating_point():
        from .._composites import _cpp
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_cpp(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    logp = input.log_softmax(class_dim)
    t = target
    if label_smoothing > 0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        t = t * (1 - label_smoothing) + (label_smoothing / n_classes if n_classes else float("nan"))
    prod = logp * t
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = n_classes
        prod = prod * weight.reshape(shape)
    loss = -prod.sum(class_dim)
    if reduction == "mean":  # torch divides by numel / classes: NaN for an empty batch or no classes
        return loss.sum() / (input.numel() / n_classes if n_classes else float("nan"))
    return _reduce(loss, reduction)


def _check_unit_range(input, target):
    """binary_cross_entropy's per-element check (torch's kernel: input then target at the first bad element)."""
    bad_in = ~((input >= 0) & (input <= 1))
    bad_t = ~((target >= 0) & (target <= 1))
    bad = (bad_in | bad_t).reshape(-1)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        which = "input" if bool(bad_in.reshape(-1)[first]) else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if target.dtype != input.dtype:  # torch's kernel takes the target in the input's dtype only
        from .._composites import _cpp
        raise RuntimeError(f"Found dtype {_cpp(target.dtype)} but expected {_cpp(input.dtype)}")
    with torch.no_grad():
        _check_unit_range(input, target)
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        shape = torch.broadcast_shapes(loss.shape, weight.shape)
        if shape != loss.shape:  # torch scales the loss in place by the weight
            raise RuntimeError(f"output with shape {list(loss.shape)} doesn't match the broadcast shape {list(shape)}")
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    if target.dtype == torch.bool:  # torch's formula computes 1 - target first
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if not target.is_floating_point():  # and then writes into a tensor of the target's dtype
        from .._composites import _cpp
        raise RuntimeError(f"result type {_cpp(torch.promote_types(input.dtype, target.dtype))} can't be cast to the "
                           f"desired output type {_cpp(target.dtype)}")
    # log(1 + exp(-|x|)) + max(x, 0) - x * t, with pos_weight scaling the positive term
    log_sig_neg = (-input.abs()).exp().log1p() + (-input).clamp(min=0)  # -log(sigmoid(x))
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * log_sig_neg
    else:
        loss = (1 - target) * input + log_sig_neg
    if weight is not None:
        shape = torch.broadcast_shapes(loss.shape, weight.shape)
        if shape != loss.shape:  # torch scales the loss in place by the weight
            raise RuntimeError(f"output with shape {list(loss.shape)} doesn't match the broadcast shape {list(shape)}")
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
    if size_average is not None or reduce is not None:
        reduction = _Reduction.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        import warnings
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
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
    common = torch.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        from .._composites import _cpp
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_cpp(common)}")
    if x1.dtype != x2.dtype:
        x1, x2 = x1.to(common), x2.to(common)
    return ((x1 / _vector_norm_clamped(x1, dim, eps)) * (x2 / _vector_norm_clamped(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    dim = -1 if max(x1.dim(), x2.dim()) > 0 else 0
    return torch.norm(x1 - x2 + eps, p, dim, keepdim)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
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
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = int(tensor.max())
        if num_classes == -1:
            num_classes = top + 1
        elif num_classes <= top:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = torch.zeros(tuple(tensor.shape) + (num_classes,), dtype=torch.int64)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


# ---- attention ----
# scaled_dot_product_attention runs the fused kernel _flash_attention_cpu (csrc/aten/cpu/attention.c,
# Note [Flash attention on the CPU]) for floating dtypes without dropout, and torch's math path
# (materialised weights) otherwise: dropout, a mask that needs a gradient.

__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]

_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool"}


def _cpp_type(dtype):
    name = str(dtype).split(".")[-1]
    return _CPP_TYPE.get(name, name)


def _attn_broadcast(a, b):
    """Broadcast two batch shapes with torch's message for a mismatch."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a2, b2 = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a2, b2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _safe_softmax(scores):
    """softmax over the last dim where a row of only -inf gives zeros (torch's _safe_softmax)."""
    dead = (scores == -math.inf).all(-1, keepdim=True)
    if bool(dead.any()):
        return scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)
    return scores.softmax(-1)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale):
    """torch's math path: materialises the (..., Tq, Tk) weights; differentiable in every input."""
    tq, tk = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        keep = torch.ones(tq, tk, dtype=torch.bool).tril()
        scores = scores.masked_fill(keep.logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _sdpa_check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_type(query.dtype)} key.dtype: {_cpp_type(key.dtype)} and value.dtype: "
                           f"{_cpp_type(value.dtype)} instead.")
    if not query.dtype.is_floating_point:
        from .._composites import _cpp
        raise RuntimeError(f"expected scalar type Float but found {_cpp(query.dtype)}")
    if attn_mask is not None:
        if attn_mask.dtype != torch.bool and attn_mask.dtype != torch.float32 and attn_mask.dtype != query.dtype:
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_cpp_type(attn_mask.dtype)} and  query.dtype: "
                               f"{_cpp_type(query.dtype)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        if attn_mask.dim() < 2:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{max(attn_mask.dim(), 1)}, "
                             f"{max(attn_mask.dim(), 1) - 1}], but got -2)")
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and query.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{query.dim()}, {query.dim() - 1}], "
                         "but got -3)")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    _sdpa_check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    tq, tk, e, ev = query.shape[-2], key.shape[-2], query.shape[-1], value.shape[-1]
    qb, kb, vb = tuple(query.shape[:-2]), tuple(key.shape[:-2]), tuple(value.shape[:-2])
    rep_k = rep_v = 1
    if enable_gqa:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        rep_k, rep_v = hq // hk, hq // hv
        kb, vb = kb[:-1] + (hq,), vb[:-1] + (hq,)
    # the shape checks of the two batched products of the math path, with their messages
    nb = 1
    for s in _attn_broadcast(qb, kb):
        nb *= s
    if key.shape[-1] != e:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {e}] but got: "
                           f"[{nb}, {key.shape[-1]}].")
    if value.shape[-2] != tk:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {tk}] but got: "
                           f"[{nb}, {value.shape[-2]}].")
    attn_shape = _attn_broadcast(qb, kb) + (tq, tk)
    if attn_mask is not None:
        full = _attn_broadcast(attn_shape, attn_mask.shape)
        if full != attn_shape:
            raise RuntimeError(f"output with shape {list(attn_shape)} doesn't match the broadcast shape {list(full)}")
    fused = (query.dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16) and not dropout_p > 0.0 and
             not (attn_mask is not None and attn_mask.requires_grad and torch.is_grad_enabled()))
    if attn_mask is not None and attn_mask.dtype != torch.bool and attn_mask.dtype != query.dtype:
        # the fused kernel adds a float32 mask to a reduced-precision query's float32 scores as it is
        if not (fused and attn_mask.dtype == torch.float32 and query.dtype in (torch.bfloat16, torch.float16)):
            attn_mask = attn_mask.to(query.dtype)
    if not fused:
        if rep_k > 1:
            key = key.repeat_interleave(rep_k, -3)
        if rep_v > 1:
            value = value.repeat_interleave(rep_v, -3)
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale)
    if attn_mask is not None:
        attn_mask = attn_mask.expand(attn_shape)
    if rep_k > 1 or rep_v > 1:
        # grouped heads without copies: query heads (hq) = (hkv, rep) with kv broadcast along rep
        if rep_k == rep_v:
            hkv = hq // rep_k
            query = query.reshape(qb[:-1] + (hkv, rep_k, tq, e))
            key, value = key.unsqueeze(-3), value.unsqueeze(-3)
            if attn_mask is not None:
                attn_mask = attn_mask.reshape(attn_shape[:-3] + (hkv, rep_k, tq, tk))
        else:  # different groupings for key and value: repeat them
            key = key.repeat_interleave(rep_k, -3) if rep_k > 1 else key
            value = value.repeat_interleave(rep_v, -3) if rep_v > 1 else value
    batch = _attn_broadcast(_attn_broadcast(query.shape[:-2], key.shape[:-2]), value.shape[:-2])
    q = query.expand(batch + (tq, e))
    k = key.expand(batch + (tk, e))
    v = value.expand(batch + (tk, ev))
    if attn_mask is not None:
        attn_mask = attn_mask.expand(batch + (tq, tk))
    out = torch._C._flash_attention_cpu(q, k, v, attn_mask, is_causal, scale)[0]
    if rep_k > 1 and rep_k == rep_v:  # (..., hkv, rep, Tq, Ev) -> (..., hq, Tq, Ev)
        out = out.reshape(batch[:-2] + (hq, tq, ev))
    return out


def _flash_attention_double_backward(grads, grad_out, query, key, value, attn_mask, is_causal, scale, grad_logsumexp,
                                     output_mask):
    """The gradient of _flash_attention_cpu_backward (double backward), composite: with
    S = scale Q K^T + mask, P = softmax(S), dP = dO V^T, D = rowsum(P dP) - glse and
    dS = P (dP - D), the backward computed dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO.
    Given the incoming (gQ, gK, gV), W = scale (gQ K^T + Q gK^T) and U = W P, u = rowsum(U):
        grad dP = U - u P,  grad P = W (dP - D) - u dP + dO gV^T,  grad S = softmax backward,
    from which every input's gradient follows (out and logsumexp get none: their effect is
    counted through query/key/value, which they are functions of)."""
    if query.dtype in (torch.bfloat16, torch.float16):  # in float32, as the kernels (logsumexp is float32)
        widen = lambda t: t if t is None or t.dtype in (torch.bool, torch.float32) else t.float()  # noqa: E731
        res = _flash_attention_double_backward([widen(g) for g in grads], widen(grad_out), widen(query), widen(key),
                                               widen(value), widen(attn_mask), is_causal, scale, grad_logsumexp,
                                               output_mask)
        return tuple(r if r is None or i == 4 else r.to(query.dtype) for i, r in enumerate(res))
    gq, gk, gv = grads
    tq, tk = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        scores = scores.masked_fill(torch.ones(tq, tk, dtype=torch.bool).tril().logical_not(), -math.inf)
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not(), -math.inf) if attn_mask.dtype == torch.bool \
            else scores + attn_mask
    p = _safe_softmax(scores)
    dp = grad_out @ value.transpose(-2, -1)
    d = (p * dp).sum(-1, keepdim=True)
    if grad_logsumexp is not None:
        d = d - grad_logsumexp.unsqueeze(-1)
    ds = p * (dp - d)
    w = (gq @ key.transpose(-2, -1) + query @ gk.transpose(-2, -1)) * s
    u_mat = w * p
    u = u_mat.sum(-1, keepdim=True)
    g_dp = u_mat - u * p
    g_p = w * (dp - d) - u * dp + grad_out @ gv.transpose(-2, -1)
    g_s = p * (g_p - (p * g_p).sum(-1, keepdim=True))
    g_out = g_dp @ value + p @ gv
    g_q = (g_s @ key + ds @ gk) * s
    g_k = (g_s.transpose(-2, -1) @ query + ds.transpose(-2, -1) @ gq) * s
    g_v = g_dp.transpose(-2, -1) @ grad_out
    g_lse = u.squeeze(-1) if grad_logsumexp is not None else None
    return g_out, g_q, g_k, g_v, g_lse


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, torch.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) becomes an additive float mask of target_type; float masks pass."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != torch.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        import warnings
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.")
    if not is_float:
        mask = torch.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (L, N, E) inputs, False for unbatched (L, E) ones; AssertionError otherwise."""
    if query.dim() == 3:
        if not (key.dim() == 3 and value.dim() == 3):
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if not (key.dim() == 2 and value.dim() == 2):
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection_packed(q, k, v, w, b=None):
    e = q.size(-1)
    if k is v:
        if q is k:  # self-attention: one product
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    if w_q.shape != (eq, eq):
        raise AssertionError(f"expecting query weights shape of {(eq, eq)}, but got {tuple(w_q.shape)}")
    if w_k.shape != (eq, ek):
        raise AssertionError(f"expecting key weights shape of {(eq, ek)}, but got {tuple(w_k.shape)}")
    if w_v.shape != (eq, ev):
        raise AssertionError(f"expecting value weights shape of {(eq, ev)}, but got {tuple(w_v.shape)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _pad_last(x):
    """x with one zero column appended to its last dim (F.pad(x, (0, 1)))."""
    return torch.cat([x, torch.zeros(tuple(x.shape[:-1]) + (1,), dtype=x.dtype)], dim=-1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch's multi-head attention on (L, N, E) or unbatched (L, E) inputs. need_weights=True goes
    through the materialised weights (returned, averaged over heads by default); need_weights=False
    through scaled_dot_product_attention (the fused kernel)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint alone drives scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q/k/v_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = torch.cat([k, bias_k.repeat(1, bsz, 1)])
        v = torch.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads or static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k of shape ({bsz * num_heads}, *, {head_dim}), but got "
                                 f"{tuple(static_k.shape)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads or static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v of shape ({bsz * num_heads}, *, {head_dim}), but got "
                                 f"{tuple(static_v.shape)}")
        v = static_v
    if add_zero_attn:
        zero = torch.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k = torch.cat([k, zero], dim=1)
        v = torch.cat([v, zero], dim=1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            weights = torch.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = torch.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = torch.bmm(weights, v)
        out = out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
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
    """cross_entropy with class-index targets (already checked by _check_class_target): log_softmax + nll in one
    fused op over (rows, C)."""
    r = _REDUCTIONS[reduction]
    if input.ndim == 1:
        x, t = input.unsqueeze(0), target.reshape(1)
    elif input.ndim == 2:
        x, t = input, target
    else:
        x, t = input.movedim(1, -1).reshape(-1, input.shape[1]), target.reshape(-1)
    loss = torch._C._cross_entropy_loss(x, t, weight, r, ignore_index, float(label_smoothing))[0]
    if r == 0:
        return loss.reshape(target.shape if input.ndim > 1 else ())
    return loss


# ---- pooling, padding, interpolation ----
# Thin wrappers over the table ops of csrc/aten/ops_pool.def, with torch's Python-level
# argument handling (return_indices, None entries of adaptive output sizes, F.interpolate's
# output-size and scale rules).
import warnings as _warnings

from pyctorch import _C as _C_pool

__all__ += ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d",
            "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "pad",
            "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]


def _needs_grad(input):
    return input.requires_grad and torch.is_grad_enabled()


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _C_pool.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return _C_pool.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C_pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _C_pool.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return _C_pool.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    if _needs_grad(input):  # the indices are kept for backward instead of recomputed there
        return _C_pool.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]
    return _C_pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


avg_pool1d = _C_pool.avg_pool1d
avg_pool2d = _C_pool.avg_pool2d
adaptive_avg_pool1d = _C_pool.adaptive_avg_pool1d


def _list_with_default(out_size, defaults):
    """torch's: None entries of an output size take the input's size."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool2d(input, output_size):
    return _C_pool.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _C_pool.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r = _C_pool.adaptive_max_pool1d(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _C_pool.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    r = _C_pool.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()))
    return r if return_indices else r[0]


pad = _C_pool.pad


def _is_integer(x):
    if isinstance(x, int):
        return True
    return isinstance(x, torch.Tensor) and not x.is_floating_point()


_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """torch's F.interpolate for 3-d (linear, nearest, nearest-exact, area) and 4-d (bilinear,
    nearest, nearest-exact, area) inputs. As in torch, a given scale_factor is also the scale the
    kernel uses for the source index (unless recompute_scale_factor is True), and the output
    size is int(size * scale_factor)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size) for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if output_size is None:
        # torch's output size: the product truncated to an integer; the scales stay the kernel's
        # scales unless recompute_scale_factor asks for in / out
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        if recompute_scale_factor:
            scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
                         "a 4-D tensor as input")
    scales = scale_factors if scale_factors is not None else [None] * max(dim, 0)
    if mode in ("nearest", "nearest-exact", "linear", "bilinear") and input.dim() in (3, 4) and \
            (mode not in ("linear", "bilinear") or input.dim() == (3 if mode == "linear" else 4)):
        if antialias:
            raise NotImplementedError("interpolate: antialias=True is not supported by pyctorch yet")
        exact = mode == "nearest-exact"
        if input.dim() == 3 and mode != "linear":
            fn = _C_pool._upsample_nearest_exact1d if exact else _C_pool.upsample_nearest1d
            return fn(input, output_size, scales[0])
        if input.dim() == 4 and mode != "bilinear":
            fn = _C_pool._upsample_nearest_exact2d if exact else _C_pool.upsample_nearest2d
            return fn(input, output_size, scales[0], scales[1])
        if mode == "linear":
            return _C_pool.upsample_linear1d(input, output_size, align_corners, scales[0])
        return _C_pool.upsample_bilinear2d(input, output_size, align_corners, scales[0], scales[1])
    if mode == "area" and input.dim() == 3:
        return adaptive_avg_pool1d(input, output_size)
    if mode == "area" and input.dim() == 4:
        return adaptive_avg_pool2d(input, output_size)
    if mode in ("bicubic", "trilinear", "lanczos") and input.dim() == {"bicubic": 4, "lanczos": 4, "trilinear": 5}[mode] \
            or (input.dim() == 5 and mode in ("nearest", "nearest-exact", "area")):
        raise NotImplementedError(f"interpolate: mode '{mode}' for {input.dim()}-D input is not supported by pyctorch yet")
    for d, m, need in ((3, "bilinear", 4), (3, "trilinear", 5), (4, "linear", 3), (4, "trilinear", 5), (5, "linear", 3),
                       (5, "bilinear", 4)):
        if input.dim() == d and mode == m:
            raise NotImplementedError(f"Got {d}D input, but {m} mode needs {need}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              f"modes: {_INTERP_MODES} (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                   stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                   stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
# ---- convolution ----
# torch.conv1d/2d/3d, conv_transpose1d/2d/3d (also exported as pyctorch.<name>), unfold and fold.
# The batched problem is the table op `convolution` (csrc/aten/cpu/conv.c); what torch does in its
# C++ front functions happens here: unbatched inputs, padding='same'/'valid'.

__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold"]


def _conv_list(value, n):
    """An int or a sequence as the list the op takes (lengths are checked there, as in torch)."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, bool) or not isinstance(value, int):
        if hasattr(value, "__index__") and not isinstance(value, bool):
            return [value.__index__()] * n
        return value  # the op raises torch's TypeError
    return [value] * n


def _conv_batch(input, n, name):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, "
                           f"but got input of size: {list(input.shape)}")
    return input.ndim == n + 1


def _conv_same(input, weight, bias, stride, dilation, groups, n):
    """padding='same': symmetric padding where the total is even; otherwise pad by the larger half on
    both sides and drop the leading extra outputs (stride is 1, so that is one output per unit)."""
    stride = _conv_list(stride, n)
    if any(s != 1 for s in (stride if len(stride) != 1 else stride * n)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dil = _conv_list(dilation, n)
    dil = dil * n if len(dil) == 1 else dil
    ks = weight.shape[2:]
    if len(dil) != len(ks):  # let the op report the mismatch
        return torch.convolution(input, weight, bias, stride, [0] * n, dil, False, [0] * n, groups)
    total = [d * (k - 1) for d, k in zip(dil, ks)]
    left = [t // 2 for t in total]
    right = [t - l for t, l in zip(total, left)]
    if left != right:
        import warnings
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                      "copy of the input be created", UserWarning, stacklevel=4)
    out = torch.convolution(input, weight, bias, stride, right, dil, False, [0] * n, groups)
    for i, (l, r) in enumerate(zip(left, right)):
        if r != l:
            out = out.narrow(2 + i, r - l, out.shape[2 + i] - (r - l))
    return out


def _conv_nd(input, weight, bias, stride, padding, dilation, groups, n, name):
    unbatched = _conv_batch(input, n, name)
    if unbatched:
        input = input.unsqueeze(0)
    if isinstance(padding, str):
        if padding == "valid":
            out = torch.convolution(input, weight, bias, _conv_list(stride, n), [0] * n, _conv_list(dilation, n),
                                    False, [0] * n, groups)
        elif padding == "same":
            out = _conv_same(input, weight, bias, stride, dilation, groups, n)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        out = torch.convolution(input, weight, bias, _conv_list(stride, n), _conv_list(padding, n),
                                _conv_list(dilation, n), False, [0] * n, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, n, name):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    unbatched = _conv_batch(input, n, name)
    if unbatched:
        input = input.unsqueeze(0)
    out = torch.convolution(input, weight, bias, _conv_list(stride, n), _conv_list(padding, n),
                            _conv_list(dilation, n), True, _conv_list(output_padding, n), groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                              "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                              "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                              "conv_transpose3d")


def _conv_double_backward(grads, grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
                          groups, output_mask):
    """The backward of convolution_backward (ops_conv.def). The convolution is bilinear in (input, weight):
    with ggI, ggW, ggb the incoming gradients of (grad_input, grad_weight, grad_bias),
      d grad_output = conv(ggI, W) + conv(I, ggW) + ggb,  d input = grad_input(gO, ggW),  d weight = grad_weight(ggI, gO)."""
    ggi, ggw, ggb = (tuple(grads) + (None, None, None))[:3]
    args = (stride, padding, dilation, transposed, output_padding, groups)
    g_go = g_i = g_w = None
    if output_mask[0]:
        if ggi is not None:
            g_go = torch.convolution(ggi, weight, None, *args)
        if ggw is not None:
            t = torch.convolution(input, ggw, None, *args)
            g_go = t if g_go is None else g_go + t
        if ggb is not None:
            t = ggb.reshape([1, -1] + [1] * (grad_output.ndim - 2))
            g_go = t.expand(grad_output.shape) if g_go is None else g_go + t
    if output_mask[1] and ggw is not None:
        g_i = torch.convolution_backward(grad_output, input, ggw, None, *args, [True, False, False])[0]
    if output_mask[2] and ggi is not None:
        g_w = torch.convolution_backward(grad_output, ggi, weight, None, *args, [False, True, False])[1]
    return g_go, g_i, g_w


def _pair_arg(value):
    return list(value) if isinstance(value, (list, tuple)) else [value, value]


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    return torch._C._im2col(input, _pair_arg(kernel_size), _pair_arg(dilation), _pair_arg(padding), _pair_arg(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    return torch._C._col2im(input, _pair_arg(output_size), _pair_arg(kernel_size), _pair_arg(dilation),
                            _pair_arg(padding), _pair_arg(stride))


# ---- autocast (issue 6: mixed precision) ----
# Functions torch's CPU autocast lists as single ops but which are compositions here: inside a
# torch.autocast("cpu") region their floating inputs are cast like an op of the table
# (csrc/autograd/autocast.c, through its weight cache) and their bodies run with autocast off,
# as torch runs an op below its Autocast key; outside a region the wrapper costs one C call.
# Ops of the table (matmul, mm, convolution, cat...) are cast by the dispatcher itself.
def _autocast_composite(fn, lower):
    import functools
    C = torch._C
    active, cast, Tensor, set_enabled = C._autocast_cpu_active, C._autocast_cast, C.Tensor, C.set_autocast_enabled

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        dtype = active()
        if dtype is None:
            return fn(*args, **kwargs)
        if not lower:
            dtype = C.float32
        args = [cast(a, dtype) if isinstance(a, Tensor) else a for a in args]
        kwargs = {k: cast(v, dtype) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
        set_enabled("cpu", False)
        try:
            return fn(*args, **kwargs)
        finally:
            set_enabled("cpu", True)

    wrapper.__wrapped_autocast__ = fn
    return wrapper


def _autocast_wrap_functional():
    # (the convolutions need no wrapper: they reach the convolution op, which the dispatcher casts)
    lower = ("linear", "prelu", "scaled_dot_product_attention")
    fp32 = ("mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
            "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "hinge_embedding_loss",
            "poisson_nll_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
            "multilabel_margin_loss", "ctc_loss", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d",
            "adaptive_max_pool3d")
    g = globals()
    for names, is_lower in ((lower, True), (fp32, False)):
        for name in names:
            if name in g and not hasattr(g[name], "__wrapped_autocast__"):
                g[name] = _autocast_composite(g[name], is_lower)


_autocast_wrap_functional()


# ---- torch-namespace composites (pyctorch/_composites.py): threshold, hardshrink, alpha dropout, pixel shuffle ----
__all__ += ["threshold", "threshold_", "hardshrink", "selu_", "celu_", "alpha_dropout", "feature_alpha_dropout",
            "pixel_shuffle", "pixel_unshuffle"]
from .._composites import pixel_shuffle, pixel_unshuffle, hardshrink, threshold_  # noqa: E402,F401


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


# ---- nn extras ----
# Activations, local response norm, extra losses, gumbel softmax, LP pooling and channel shuffle, all
# composites of existing ops (autograd follows).
__all__ += ["hardswish", "hardsigmoid", "logsigmoid", "softsign", "tanhshrink", "softshrink", "glu", "softmin",
            "rrelu", "rrelu_", "elu_", "leaky_relu_", "hardtanh_", "local_response_norm", "margin_ranking_loss",
            "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
            "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss",
            "gumbel_softmax", "lp_pool1d", "lp_pool2d", "channel_shuffle"]


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


# Note [Python-level tensor arguments]: torch's TypeError for a non-tensor argument (op names as torch's messages)
from .._arg_check import guard as _guard  # noqa: E402
_guard(globals(), {
    "alpha_dropout": (None, ("input",)), "feature_alpha_dropout": (None, ("input",)),
    "celu_": (None, ("input",)), "elu_": (None, ("input",)), "selu_": (None, ("input",)), "relu_": (None, ("input",)),
    "hardtanh_": (None, ("input",)), "leaky_relu_": (None, ("input",)), "rrelu_": (None, ("input",)),
    "threshold_": (None, ("input",)), "conv1d": (None, ("input", "weight", "bias")),
    "conv2d": (None, ("input", "weight", "bias")), "conv3d": (None, ("input", "weight", "bias")),
    "cosine_similarity": (None, ("x1", "x2")), "pairwise_distance": (None, ("x1", "x2")),
    "cross_entropy": ("cross_entropy_loss", ("input", "target", "weight")),
    "nll_loss": ("nll_loss_nd", ("input", "target", "weight")), "kl_div": (None, ("input", "target")),
    "multi_margin_loss": (None, ("input", "target", "weight")),
    "multilabel_soft_margin_loss": ("log_sigmoid", ("input",)),
    "hardsigmoid": (None, ("input",)), "hardswish": (None, ("input",)), "mish": (None, ("input",)),
    "logsigmoid": ("log_sigmoid", ("input",)), "softshrink": (None, ("input",)), "rrelu": (None, ("input",)),
    "threshold": (None, ("input",)), "linear": (None, ("input", "weight", "bias")),
    "bilinear": (None, ("input1", "input2", "weight", "bias")),
    "max_pool1d": (None, ("input",)), "max_pool2d": (None, ("input",)),
    "max_pool1d_with_indices": (None, ("input",)), "max_pool2d_with_indices": (None, ("input",)),
    "one_hot": (None, ("input",)), "poisson_nll_loss": (None, ("input", "target")),
    "prelu": (None, ("input", "weight")),
    "scaled_dot_product_attention": (None, ("query", "key", "value", "attn_mask")),
    "triplet_margin_loss": (None, ("anchor", "positive", "negative")),
    "batch_norm": (None, ("input", "running_mean?", "running_var?", "weight", "bias")),
    "channel_shuffle": (None, ("input",)), "cosine_embedding_loss": (None, ("input1", "input2", "target")),
})
