"""torch.testing.make_tensor for pyctorch: torch's value ranges, argument checks and RNG use.

Values come from the same generator calls torch makes (randint for bool/integer dtypes,
uniform_ for floating dtypes), so after the same manual_seed pyctorch and torch give the same
tensor.
"""
import collections.abc
import math
import warnings

__all__ = ["make_tensor"]


def _names(*names):
    return frozenset(names)


_INTEGRAL = _names("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_FLOATING = _names("float16", "bfloat16", "float32", "float64")
_COMPLEX = _names("complex32", "complex64", "complex128")


def _name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def _bounds(dtype, low, high, lowest, highest_exclusive, default_low, default_high):
    """Applies the defaults, checks the interval and clamps it to what `dtype` can hold."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    name = _name(dtype)
    if low == high and (name in _FLOATING or name in _COMPLEX):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
                      "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest_exclusive})")
    low = min(max(low, lowest), highest_exclusive)
    high = min(max(high, lowest), highest_exclusive)
    if name == "bool" or name in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def _in_memory_format(t, memory_format):
    """A copy of `t` laid out in `memory_format` (built from a permuted buffer: channels-last strides)."""
    from .. import _layouts
    if memory_format is _layouts.preserve_format or memory_format is _layouts.contiguous_format:
        return t.clone()  # `t` is freshly made and contiguous
    if memory_format is _layouts.channels_last or memory_format is _layouts.channels_last_3d:
        rank = 4 if memory_format is _layouts.channels_last else 5
        if t.dim() != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format")
        return t.contiguous(memory_format=memory_format)
    raise RuntimeError(f"pyctorch does not implement memory_format={memory_format} yet")


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` with values drawn uniformly from [low, high), as torch.testing.make_tensor.

    Defaults: bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floating [-9, 9); given
    bounds are clamped to the dtype's finite range. noncontiguous=True returns a view with
    doubled last-dimension stride (ignored below two elements); exclude_zero replaces zeros by 1
    (bool, integers) or finfo(dtype).tiny (floating); memory_format lays the result out in that
    format (exclusive with noncontiguous).
    """
    import pyctorch
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    name = _name(dtype)
    if requires_grad and (name == "bool" or name in _INTEGRAL):
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    numel = 1
    for size in shape:
        numel *= size
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        shape = shape[:-1] + (2 * shape[-1],)

    if name == "bool":
        low, high = _bounds(dtype, low, high, 0, 2, 0, 2)
        result = pyctorch.randint(low, high, shape, device=device, dtype=dtype)
    elif name in _INTEGRAL:
        info = pyctorch.iinfo(dtype)
        low, high = _bounds(dtype, low, high, info.min, info.max + (1 if name != "int64" else 0), -9, 10)
        result = pyctorch.randint(low, high, shape, device=device, dtype=dtype)
    elif name in _FLOATING:
        info = pyctorch.finfo(dtype)
        low, high = _bounds(dtype, low, high, info.min, info.max, -9, 9)
        result = pyctorch.empty(shape, device=device, dtype=dtype)
        if high - low >= info.max:  # the width would overflow: draw half-width, then double
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = _in_memory_format(result, memory_format)
    if exclude_zero:
        result[result == 0] = 1 if (name == "bool" or name in _INTEGRAL) else pyctorch.finfo(dtype).tiny
    if name in _FLOATING:
        result.requires_grad = requires_grad
    return result

