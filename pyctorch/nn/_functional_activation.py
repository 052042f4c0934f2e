"""torch.nn.functional: linear and bilinear, the activations, softmax / log_softmax, dropout
and the feature dropouts, prelu.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import math
import pyctorch as torch


def linear(input, weight, bias=None):
    # with a bias, torch's linear is one addmm over the rows of a 2-d (or contiguous, folded) input: a bfloat16 or
    # float16 result is rounded once from product + bias, not twice as matmul then add would
    if bias is not None and input.dim() >= 2 and (input.dim() == 2 or input.is_contiguous()):
        rows = input if input.dim() == 2 else input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        out = torch.addmm(bias, rows, weight.t())
        return out if input.dim() == 2 else out.view(*input.shape[:-1], out.shape[-1])
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
