"""torch.nn.functional: conv1d/2d/3d, conv_transpose1d/2d/3d (also exported as
pyctorch.<name>), unfold and fold. The batched problem is the table op `convolution`
(csrc/aten/cpu/conv.c); what torch does in its C++ front functions happens here: unbatched
inputs, padding='same'/'valid'.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import pyctorch as torch


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
