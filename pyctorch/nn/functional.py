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
