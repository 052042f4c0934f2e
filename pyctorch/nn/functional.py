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
