"""Functions of the torch namespace written in Python on top of the op table."""
from . import _C

__all__ = ["is_tensor", "numel", "is_floating_point", "is_nonzero", "meshgrid", "einsum", "isclose", "allclose", "broadcast_shapes"]


def is_tensor(obj):
    return isinstance(obj, _C.Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors (torch.meshgrid)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=3)  # past the argument check (_arg_check)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    if not tensors:
        return ()
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = [t.numel() for t in order]
    grids = []
    for i, t in enumerate(order):
        view = [1] * len(order)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _einsum_subscript(n):
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def einsum(*args):
    """torch.einsum(equation, *operands) and the sublist form einsum(op1, sub1, op2, sub2, ..., [out])."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], _C.Tensor):
        equation = ",".join("".join(_einsum_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_einsum_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C._einsum(equation, list(operands))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| elementwise, infinities equal to themselves (torch.isclose)."""
    if not isinstance(other, _C.Tensor):
        other = _C.tensor(other, dtype=input.dtype)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    if equal_nan and input.is_floating_point():
        close = close | (input.isnan() & other.isnan())
    if input.dtype == _C.bool:
        return close
    if not input.is_floating_point():
        input, other = input.double(), other.double()
    diff = (input - other).abs()
    tol = atol + rtol * other.abs()
    return close | (input.isfinite() & other.isfinite() & (diff <= tol))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# torch's second names of operators (torch.absolute is torch.abs, Tensor.arccos_ is Tensor.acos_, ...): the
# module functions and the Tensor methods, in-place forms included, are the very same objects
_RENAMES = {"absolute": "abs", "negative": "neg", "greater": "gt", "greater_equal": "ge", "less": "lt",
            "less_equal": "le", "not_equal": "ne", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
            "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "fix": "trunc"}
globals().update({alias: getattr(_C, name) for alias, name in _RENAMES.items()})
__all__ += list(_RENAMES)


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: the function names its size argument split_size_or_sections (Tensor.split: split_size)."""
    return tensor.split(split_size_or_sections, dim)


__all__ += ["split"]


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to (torch.broadcast_shapes)."""
    result = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i, s in enumerate(reversed(shape)):
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
            if i >= len(result):
                result.append(s)
            elif result[i] == 1 or result[i] == s:
                result[i] = s
            elif s != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                                   f"Mismatch is between {list(reversed(result))} and {list(shape)}")
    return _C.Size(reversed(result))


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape (torch.broadcast_tensors)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if not tensors:
        return ()
    shape = list(tensors[0].shape)
    for k, t in enumerate(tensors[1:], 1):
        other = list(t.shape)
        n = max(len(shape), len(other))
        a, b = [1] * (n - len(shape)) + shape, [1] * (n - len(other)) + other
        for d in range(n):
            if a[d] != b[d] and a[d] != 1 and b[d] != 1:
                raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at "
                                   f"non-singleton dimension {d}")
        shape = [y if x == 1 else x for x, y in zip(a, b)]
    return tuple(t.expand(shape) for t in tensors)


__all__ += ["broadcast_tensors"]


# ---- normalization (torch.layer_norm, torch.rms_norm, torch.group_norm, torch.batch_norm, torch.instance_norm) ----
__all__ += ["layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm"]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _C.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if getattr(input, "dtype", None) in (_C.complex64, _C.complex128):
        return _rms_norm_complex(input, normalized_shape, weight, eps)
    return _C._fused_rms_norm(input, normalized_shape, weight, eps)[0]


def _rms_norm_complex(input, normalized_shape, weight, eps):
    """torch's composite rms_norm, which complex inputs take (the fused kernel is real): x * rsqrt(mean(x ** 2) + eps)
    over the normalized dims, the square a complex one (not |x| ** 2), eps that of the real dtype by default; autograd
    follows from the ops."""
    shape = [int(s) for s in ([normalized_shape] if isinstance(normalized_shape, int) else normalized_shape)]
    n = len(shape)
    if n == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if n > input.dim():
        raise ValueError(f"Input tensor must have at least {n} dimensions, but got {input.dim()}")
    if list(input.shape[input.dim() - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape [*{', '.join(map(str, shape))}], "
                           f"but got input of size{list(input.shape)}")
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {shape}")
    if eps is None:
        from ._dtype_info import finfo
        eps = finfo(_C.float32 if input.dtype == _C.complex64 else _C.float64).eps
    dims = list(range(input.dim() - n, input.dim()))
    out = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.type_as(input)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    shape = list(input.shape)
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = shape[0], shape[1]
    if num_groups <= 0 or c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {shape} and num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(p.shape)} and input of shape {shape}")
    hxw = 1
    for s in shape[2:]:
        hxw *= s
    return _C.native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    if not training and (running_mean is None or running_var is None):
        # torch.batch_norm checks this before native_batch_norm's own checks
        raise RuntimeError("%s must be defined in evaluation mode"
                           % ("running_mean" if running_mean is None else "running_var"))
    if input.numel() == 0 and input.dim() >= 2:
        # torch: an empty batch leaves the running statistics alone; the result keeps the graph of the parameters
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return _C.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled=True):
    """Batch norm over (1, N * C, *): each (sample, channel) gets its own statistics; the running
    statistics are the average over the batch of the per-sample ones (torch's composite)."""
    shape = list(input.shape)
    if input.dim() < 2:
        raise RuntimeError(f"instance_norm: expected at least 2 dimensions, got {input.dim()}")
    n, c = shape[0], shape[1]
    x = input.reshape([1, n * c] + shape[2:])
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    out = _C.native_batch_norm(x, w, b, rm, rv, use_input_stats, momentum, eps)[0]
    from .autograd.grad_mode import no_grad
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.reshape(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.reshape(n, c).mean(0))
    return out.reshape(shape)


# Note [Python-level tensor arguments]: torch's TypeError for a non-tensor argument
from ._arg_check import guard as _guard  # noqa: E402
_guard(globals(), {
    "allclose": (None, ("input", "other")), "isclose": (None, ("input", "other")),
    "is_floating_point": (None, ("input",)), "numel": (None, ("input",)), "meshgrid": (None, ("*tensors...",)),
    "group_norm": (None, ("input", "weight", "bias")),
})
