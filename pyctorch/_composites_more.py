"""More Python composites of the op table (PCT_COMPOSITE_PY lines of csrc/aten/ops_composite_py.def name these as
"pyctorch._composites_more:<function>"): the directional splits, the unsafe_ split spellings, mvlgamma, renorm,
index_reduce, nonzero_static, as_strided_scatter and the small predicates torch has as functions and methods.
Each is written over ops of the table, so autograd, devices and dtypes follow from them (Note [Python composites]
in _composites.py)."""
import warnings

from . import _C
from ._composites import _check_partial_overlap, _cpp, _inplace, _write_out


def _inplace_of_copy(fn):
    """The in-place form of a composite whose backward keeps its input: computed from a clone (so the write into
    self does not invalidate what the backward saved), then copied back (_composites._inplace's checks)."""
    method = _inplace(lambda self, *args, **kwargs: fn(self.clone(), *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


def _split_along(name, input, indices_or_sections, dim, min_dims):
    if input.dim() < min_dims:
        if min_dims == 1:
            raise RuntimeError(f"torch.{name} requires a tensor with at least 1 dimension, but got a tensor with "
                               f"{input.dim()} dimensions!")
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if isinstance(indices_or_sections, bool) or not isinstance(indices_or_sections, (int, list, tuple)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{type(indices_or_sections).__name__}), but expected one of:\n * (Tensor input, int sections)"
                        "\n * (Tensor input, tuple of ints indices)")
    if isinstance(indices_or_sections, int):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{size} is not divisible by the split_size {indices_or_sections}!")
    return _C.tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    """Splits along the columns: dim 1, or dim 0 of a 1-d tensor."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """Splits along the rows (dim 0) of a tensor of 2 or more dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """Splits along the depth (dim 2) of a tensor of 3 or more dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


# torch's unsafe_ spellings compute what split/chunk compute; they differ only in not marking the pieces as views
# for autograd's in-place checks, which pyctorch's views do not need to relax
def unsafe_split(input, split_size, dim=0):
    return _C.split(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _C.split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    return _C.chunk(input, chunks, dim)


def mvlgamma(input, p, *, out=None):
    """The log of the multivariate gamma function (torch.special.multigammaln)."""
    from .special import multigammaln
    result = multigammaln(input, p)
    if out is not None and not _C.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"mvlgamma: result type {_cpp(result.dtype)} can't be cast to the desired output type "
                           f"{_cpp(out.dtype)}")
    return _write_out(result, out, "mvlgamma")


mvlgamma_ = _inplace_of_copy(mvlgamma)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice of input along dim scaled down to p-norm maxnorm where its norm exceeds it."""
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f'"renorm_out" not implemented for \'{_cpp(input.dtype)}\'')
    ndim = input.dim()
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    dim %= ndim
    others = [d for d in range(ndim) if d != dim]
    norm = _C.linalg_vector_norm(input, p, others, keepdim=True)
    # torch's factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm, else 1
    factor = _C.where(norm > maxnorm, maxnorm / (norm + 1e-7), _C.ones_like(norm))
    if out is not None:
        _check_partial_overlap(out, (input,))
    return _write_out(input * factor, out, "renorm", dtype_error=_SAME_DTYPE)


renorm_ = _inplace_of_copy(renorm)

# torch's message for an out= of another dtype than the result's, where only the same dtype is taken
_SAME_DTYPE = "Expected out tensor to have dtype {r}, but got {o} instead"
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
_index_reduce_warned = [False]


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """input with source's slices reduced into the slices index names along dim (prod, mean, amax or amin)."""
    if not _index_reduce_warned[0]:
        _index_reduce_warned[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{_cpp(index.dtype)} and size: {list(index.shape)}")
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_cpp(index.dtype)}")
    ndim = max(input.dim(), 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    dim %= ndim
    if source.dim() != input.dim() or (source.dim() and index.numel() != source.shape[dim]):
        raise RuntimeError(f"index_reduce_(): Index should have dimension 1 or 0 (got {index.dim()}) and source "
                           f"should have shape matching input except along dim {dim}: input {list(input.shape)}, "
                           f"source {list(source.shape)}, index {list(index.shape)}")
    if getattr(input, "dtype", None) in (_C.complex64, _C.complex128):  # what torch's kernels refuse on complex
        if not include_self:
            raise NotImplementedError(f"\"index_reduce_func_exclude_input_init\" not implemented for "
                                      f"'{_cpp(input.dtype)}'")
        if reduce in ("amax", "amin"):
            raise NotImplementedError(f'"{"maximum" if reduce == "amax" else "minimum"}_cpu" not implemented for '
                                      f"'{_cpp(input.dtype)}'")
    on_meta = input.device.type == "meta" or index.device.type == "meta"
    if index.numel() and not on_meta and (int(index.min()) < -input.shape[dim] or int(index.max()) >= input.shape[dim]):
        raise IndexError("index out of range in self")
    # the same reduction as scatter_reduce with the index repeated across every other dim of source
    view = [1] * source.dim()
    if source.dim():
        view[dim] = -1
    index = index.to(device=input.device)
    spread = index.to(_C.int64).remainder(max(input.shape[dim], 1)).reshape(view).expand(source.shape) \
        if source.dim() else index.to(_C.int64).reshape(())
    result = _C.scatter_reduce(input, dim, spread, source, reduce, include_self=include_self)
    if out is not None:
        _check_partial_overlap(out, (input, index, source))
    return _write_out(result, out, "index_reduce", dtype_error=_SAME_DTYPE)


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    # from a clone: scatter_reduce's backward keeps its input, which the write into input would invalidate
    return input.copy_(index_reduce(input.clone(), dim, index, source, reduce, include_self=include_self))


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """The indices of input's nonzero elements, cut or padded with fill_value to exactly size rows."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.device.type == "meta":  # the shape is static: no values needed
        result = _C.empty((size, input.dim()), dtype=_C.int64, device=input.device)
        return _write_out(result, out, "nonzero_static",
                          dtype_error="nonzero_static: Expected out tensor to have scalar type Long but got scalar "
                                      "type{O}")
    found = _C.nonzero(input)
    if found.shape[0] >= size:
        result = found[:size]
    else:
        pad = _C.full((size - found.shape[0], found.shape[1]), fill_value, dtype=_C.int64, device=input.device)
        result = _C.cat((found, pad), 0)
    return _write_out(result, out, "nonzero_static",
                      dtype_error="nonzero_static: Expected out tensor to have scalar type Long but got scalar type{O}")


def is_same_size(input, other):
    """True when both tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def is_inference(input):
    """True for a tensor made under torch.inference_mode."""
    return input.is_inference_flag


def is_distributed(input):
    """Always False: a pyctorch tensor is never a distributed (THD) tensor."""
    return False


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src written into its as_strided(size, stride, storage_offset) view."""
    result = input.clone()
    view = result.as_strided(size, stride, storage_offset if storage_offset is not None else input.storage_offset())
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return result


def _xor_fold(bits):
    """Xor of the last dim of an int64 tensor, folded in halves."""
    while bits.shape[-1] > 1:
        n = bits.shape[-1]
        if n % 2:
            bits = _C.cat((bits, _C.zeros(bits.shape[:-1] + (1,), dtype=_C.int64, device=bits.device)), -1)
            n += 1
        bits = _C.bitwise_xor(bits[..., :n // 2], bits[..., n // 2:])
    if bits.shape[-1] == 0:
        return _C.zeros(bits.shape[:-1], dtype=_C.int64, device=bits.device)
    return bits[..., 0]


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The xor of the elements' 64-bit patterns (floats as float64, integers as int64), as uint64, over dim."""
    if mode != 0:
        raise RuntimeError(f"hash_tensor only supports mode=0 (xor_reduction), but got mode={mode}")
    if input.is_complex():
        raise RuntimeError(f'"hash_tensor" not implemented for \'{_cpp(input.dtype)}\'')
    wide = input.to(_C.float64) if input.is_floating_point() else input.to(_C.int64)
    bits = wide.view(_C.int64)
    ndim = input.dim()
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        dims = list(range(ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        for d in dims:
            if not -max(ndim, 1) <= d < max(ndim, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                                 f"{max(ndim, 1) - 1}], but got {d})")
        dims = sorted({d % max(ndim, 1) for d in dims}) if ndim else []
    if input.numel() == 0:
        if dim is None:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
        for d in dims:
            if input.shape[d] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    kept = [d for d in range(ndim) if d not in dims]
    moved = bits.permute(kept + dims) if ndim else bits
    reduced = 1
    for d in dims:
        reduced *= input.shape[d]
    flat = moved.reshape(tuple(moved.shape[:len(kept)]) + (reduced,))
    result = _xor_fold(flat)
    if keepdim:
        result = result.reshape([1 if d in dims else input.shape[d] for d in range(ndim)])
    return result.view(_C.uint64)


# Note [Python-level tensor arguments] (pyctorch/_arg_check.py): torch's TypeError for a non-tensor argument
from ._arg_check import guard as _guard  # noqa: E402
_guard(globals(), {
    **{n: (None, ("input",)) for n in ("hsplit", "vsplit", "dsplit", "unsafe_split", "unsafe_split_with_sizes",
                                       "unsafe_chunk", "mvlgamma", "mvlgamma_", "renorm", "renorm_", "nonzero_static",
                                       "is_inference", "is_distributed", "hash_tensor")},
    "index_reduce": (None, ("input", "index", "source")), "index_reduce_": (None, ("input", "index", "source")),
    "is_same_size": (None, ("input", "other")), "as_strided_scatter": (None, ("input", "src")),
})
