"""torch.nn.functional: pooling, padding and interpolation, thin wrappers over the table ops
of csrc/aten/ops_pool.def with torch's Python-level argument handling (return_indices, None
entries of adaptive output sizes, F.interpolate's output-size and scale rules).

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import pyctorch as torch

import warnings as _warnings

from . import _interp_weights

from pyctorch import _C as _C_pool


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


def _complex_by_parts(fn, input, *args):
    """fn(input, *args) for a complex64/complex128 input, where fn is linear in input and its kernel is real only
    (the 3-d adaptive average pool; torch computes it on complex tensors): fn of the real and imaginary parts,
    joined. Autograd follows from real, imag and complex."""
    if getattr(input, "dtype", None) not in (torch.complex64, torch.complex128):
        return fn(input, *args)
    return torch.complex(fn(input.real, *args), fn(input.imag, *args))


def _adaptive_avg_pool_complex(fn, kernel, input, output_size, nd):
    """torch's adaptive average pools take a complex input only where every output size is 1 (a mean over the pooled
    dims, which has a complex kernel); otherwise its pool kernel refuses the dtype."""
    if getattr(input, "dtype", None) not in (torch.complex64, torch.complex128):
        return fn(input, output_size)
    sizes = [output_size] * nd if isinstance(output_size, int) else list(output_size)
    if any(s != 1 for s in sizes):
        name = {torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble"}[input.dtype]
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
    return _complex_by_parts(fn, input, output_size)


def adaptive_avg_pool1d(input, output_size):
    return _C_pool.adaptive_avg_pool1d(input, output_size)


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
    bicubic, nearest, nearest-exact, area; antialias for bilinear and bicubic) inputs. As in torch,
    a given scale_factor is also the scale the kernel uses for the source index (unless
    recompute_scale_factor is True), and the output size is int(size * scale_factor)."""
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
    if input.dim() == 4 and (mode == "bicubic" or antialias and mode == "bilinear"):
        return _resample_by_matrices(input, output_size, scales, mode, align_corners, antialias)
    if mode in ("nearest", "nearest-exact", "linear", "bilinear") and input.dim() in (3, 4) and \
            (mode not in ("linear", "bilinear") or input.dim() == (3 if mode == "linear" else 4)):
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
    if mode in ("trilinear", "lanczos") and input.dim() == {"lanczos": 4, "trilinear": 5}[mode] \
            or (input.dim() == 5 and mode in ("nearest", "nearest-exact", "area")):
        raise NotImplementedError(f"interpolate: mode '{mode}' for {input.dim()}-D input is not supported by pyctorch yet")
    for d, m, need in ((3, "bilinear", 4), (3, "trilinear", 5), (4, "linear", 3), (4, "trilinear", 5), (5, "linear", 3),
                       (5, "bilinear", 4)):
        if input.dim() == d and mode == m:
            raise NotImplementedError(f"Got {d}D input, but {m} mode needs {need}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              f"modes: {_INTERP_MODES} (got {mode})")


def _check_2d_sizes(input, output_size):
    """torch's upsample_2d_common_check and the non-empty check of its 2-d kernels."""
    (ih, iw), (oh, ow) = input.shape[2:], output_size
    if not (ih > 0 and iw > 0 and oh > 0 and ow > 0):
        raise RuntimeError("Input and output sizes should be greater than 0, but got "
                           f"input (H: {ih}, W: {iw}) output (H: {oh}, W: {ow})")
    if input.size(1) == 0:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes {list(input.shape)}")


def _resample_by_matrices(input, output_size, scales, mode, align_corners, antialias):
    """4-d bicubic, and anti-aliased bilinear / bicubic: x @ Mw^T, then Mh @ that, with the per-axis matrices of
    _interp_weights (its docstring: why dense matrices). float16 / bfloat16 (bicubic only, as torch) in float32,
    rounded once; uint8 as torch: each axis that changes size in turn, in fixed point, rounded to uint8."""
    _check_2d_sizes(input, output_size)
    dtype = input.dtype
    if dtype not in (torch.float32, torch.float64, torch.uint8) and \
            (antialias or dtype not in (torch.float16, torch.bfloat16)):
        from .._composites import _cpp
        kernel = "compute_index_ranges_weights" if antialias else "compute_indices_weights_cubic"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_cpp(dtype)}\'')
    in_hw = list(input.shape[2:])
    if dtype == torch.uint8:
        y = input.double()
        for axis in (1, 0):  # W, then H: torch's order, which its rounding in between makes matter
            if in_hw[axis] != output_size[axis]:
                m, bits = _interp_weights.int16_matrix(in_hw[axis], output_size[axis], mode, antialias,
                                                       align_corners, scales[axis])
                y = _resample_axis(y, torch.from_numpy(m).to(y.device), axis)  # integer sums, exact in float64
                y = torch.floor((y + (1 << (bits - 1))) / (1 << bits)).clamp(0, 255)
        return y.to(torch.uint8)
    work = torch.float64 if dtype == torch.float64 else torch.float32
    fwd, bwd = _interp_weights.pass_matrices(in_hw, output_size, mode, antialias, align_corners, scales,
                                             str(dtype).split(".")[1])

    def resample(x, mats):
        for axis in (1, 0):
            if mats[axis] is not None:
                x = _resample_axis(x, torch.from_numpy(mats[axis]).to(x.device), axis)
        return x if x is not input else x.clone()

    x = input.to(work)
    y = resample(x, fwd)
    if any(a is not b for a, b in zip(fwd, bwd)) and _needs_grad(input):
        # torch's gradient is not its forward's here (pass_matrices): the values of one, the gradient of the other
        g = resample(x, bwd)
        y = g + (y - g).detach()
    return y.to(dtype)


def _resample_axis(x, m, axis):
    """m (out, in) applied along H (axis 0) or W (axis 1) of an (N, C, H, W) tensor."""
    return torch.matmul(m, x) if axis == 0 else torch.matmul(x, m.transpose(0, 1))


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
