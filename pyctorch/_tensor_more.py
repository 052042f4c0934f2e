"""Tensor methods and properties torch has only on the class (no torch.<name> function): element-wise Python
callbacks (apply_, map_, map2_), the deprecated out-of-place resize, dim_order, fill_diagonal_, sum_to_size,
module_load, the complex conversions, and the predicates about devices and layouts pyctorch never makes (they are
False, as on a torch build without those devices). pyctorch/_tensor.py attaches them."""
import warnings

from . import _C, _layouts, storage as _storage


# ---- element-wise Python callbacks (CPU only, as in torch) ----

def _check_cpu(self, name):
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _write_values(self, values):
    self.copy_(_C.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def apply_(self, callable):
    """Calls callable on each element and stores what it returns (slow: a Python call per element)."""
    _check_cpu(self, "apply_")
    return _write_values(self, [callable(v) for v in self.reshape(-1).tolist()])


def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]), tensor broadcast to self's shape."""
    _check_cpu(self, "map_")
    other = tensor.expand(self.shape).reshape(-1).tolist()
    return _write_values(self, [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)])


def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self's shape."""
    _check_cpu(self, "map2_")
    xs = x.expand(self.shape).reshape(-1).tolist()
    ys = y.expand(self.shape).reshape(-1).tolist()
    return _write_values(self, [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), xs, ys)])


# ---- shapes ----

def _sizes(args):
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


def _view_resized(self, sizes, name):
    warnings.warn(f"non-inplace {name} is deprecated", UserWarning, stacklevel=3)
    numel = 1
    for s in sizes:
        numel *= s
    if numel != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(sizes)


def resize(self, *sizes):
    """Deprecated out-of-place resize: a view of the same elements in a new shape of the same size."""
    return _view_resized(self, _sizes(sizes), "resize")


def resize_as(self, tensor):
    """Deprecated out-of-place resize_as (see resize)."""
    return _view_resized(self, tuple(tensor.shape), "resize_as")


def sum_to_size(self, *size):
    """self summed down to size, which must broadcast to self's shape."""
    size = _sizes(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    result = self.sum(tuple(range(lead))) if lead else self
    keep = tuple(i for i, s in enumerate(size) if s == 1 and result.shape[i] != 1)
    if keep:
        result = result.sum(keep, keepdim=True)
    return result


def _stride_order(self, ambiguity_check):
    """The dims from outermost to innermost in memory (torch's elementwise output permutation for one tensor),
    and whether the order is not determined by the strides."""
    ndim = self.dim()
    if ndim == 0:
        return [], False
    if ndim == 1:
        return [0], False
    contiguous = self.is_contiguous()
    # (a 5-d channels_last_3d tensor takes the general order below, which gives the same permutation)
    channels_last = ndim == 4 and self.is_contiguous(memory_format=_layouts.channels_last)
    if contiguous and not channels_last:
        return list(range(ndim)), False
    if channels_last and not contiguous:
        return [0, *range(2, ndim), 1], False
    shape, strides = tuple(self.shape), self.stride()

    def at_least(a, b):
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def order(a, b):
        """> 0: a is inner to b; < 0: b is inner; 0: undetermined."""
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if at_least(shape[b], shape[a]) else 1
        if at_least(sb, sa):
            return -1
        return 1 if at_least(sa, sb) else 0

    perm = list(range(ndim - 1, -1, -1))  # innermost first while sorting
    for i in range(1, ndim):
        moving = i
        for j in range(i - 1, -1, -1):
            c = order(perm[j], perm[moving])
            if c > 0:
                perm[j], perm[moving] = perm[moving], perm[j]
                moving = j
            elif c < 0:
                break
    ambiguous = bool(ambiguity_check) and any(order(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1))
    return perm[::-1], ambiguous


def dim_order(self, *, ambiguity_check=False):
    """The dims of self from outermost to innermost in memory."""
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(isinstance(f, _layouts.memory_format) for f in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check_multiple = ambiguity_check if isinstance(ambiguity_check, bool) else True
    strides = self.stride()
    multiple = any(a == b for a, b in zip(strides, strides[1:])) or any(s == 1 for s in self.shape)
    if check_multiple and multiple and sum(bool(self.is_contiguous(memory_format=f)) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    perm, ambiguous = _stride_order(self, ambiguity_check)
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal (of a 2-d tensor, or of a tensor whose dims are all equal); wrap continues a tall
    matrix's diagonal after each block of N+1 rows."""
    ndim = self.dim()
    if ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if ndim > 2 and any(s != self.shape[0] for s in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    step = sum(self.stride())
    if n:
        self.as_strided((n,), (step,), self.storage_offset()).fill_(fill_value)
    if wrap and ndim == 2 and self.shape[0] > self.shape[1] + 1:
        rows, cols = self.shape
        # the diagonal restarts every cols + 1 rows
        for start in range(cols + 1, rows, cols + 1):
            m = min(cols, rows - start)
            self.as_strided((m,), (step,), self[start:].storage_offset()).fill_(fill_value)
    return self


# ---- conversions and state ----

def as_strided_(self, size, stride, storage_offset=None):
    """self re-viewed in place as as_strided(size, stride, storage_offset) of its own storage."""
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return self.set_(self.untyped_storage(), offset, tuple(size), tuple(stride))


def cfloat(self, memory_format=None):
    return self.to(_C.complex64) if memory_format is None else self.to(_C.complex64, memory_format=memory_format)


def cdouble(self, memory_format=None):
    return self.to(_C.complex128) if memory_format is None else self.to(_C.complex128, memory_format=memory_format)


def chalf(self, memory_format=None):
    return self.to(_C.complex32) if memory_format is None else self.to(_C.complex32, memory_format=memory_format)


def const_data_ptr(self):
    """The address of the first element (the same as data_ptr: pyctorch has no copy-on-write storages)."""
    return self.data_ptr()


def to_dense(self, dtype=None, *, masked_grad=None):
    """A strided tensor is already dense: self, or a copy in dtype."""
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def dequantize(self):
    """A tensor that is not quantized: itself if it is floating point, else a float32 copy (as torch)."""
    return self if self.is_floating_point() else self.to(_C.float32)


def module_load(self, other, assign=False):
    """How nn.Module.load_state_dict maps a state-dict value onto a parameter or buffer when it swaps them."""
    return other.detach() if assign else self.copy_(other).detach()


def is_set_to(self, tensor):
    """True when both tensors view the same storage with the same offset, sizes and strides."""
    return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
            and self.storage_offset() == tensor.storage_offset() and tuple(self.shape) == tuple(tensor.shape)
            and self.stride() == tensor.stride())


def _name(self):
    return None


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _grad_dtype(self):
    if not self.is_leaf:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self.dtype


def _false(self):
    return False


def is_nonzero(self):
    """The truth of a one-element tensor (torch.is_nonzero)."""
    from . import is_nonzero as function
    return function(self)


def reinforce(self, reward):
    raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead.\n"
                       "See https://pytorch.org/docs/main/distributions.html")


def solve(self, other):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.solve` is "
                       "deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed "
                       "and does not return the LU factorization.")


def xpu(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError("Torch not compiled with XPU enabled")


def mtia(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError("Torch not compiled with MTIA enabled")


def ipu(self, device=None, non_blocking=False, memory_format=None):
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


TENSOR_METHODS = {
    "as_strided_": as_strided_, "apply_": apply_, "map_": map_, "map2_": map2_, "resize": resize, "resize_as": resize_as,
    "sum_to_size": sum_to_size, "dim_order": dim_order, "fill_diagonal_": fill_diagonal_,
    "cfloat": cfloat, "cdouble": cdouble, "chalf": chalf, "const_data_ptr": const_data_ptr,
    "to_dense": to_dense, "dequantize": dequantize, "module_load": module_load, "is_set_to": is_set_to,
    "is_nonzero": is_nonzero, "reinforce": reinforce,
    "storage": _storage.storage_of, "storage_type": _storage.storage_type_of, "solve": solve, "xpu": xpu, "mtia": mtia, "ipu": ipu,
    "name": property(_name), "volatile": property(_volatile),
    "grad_dtype": property(_grad_dtype),
}
# the devices and layouts pyctorch never makes
TENSOR_METHODS.update({name: property(_false) for name in (
    "is_xla", "is_xpu", "is_ipu", "is_maia", "is_mkldnn", "is_mtia", "is_vulkan", "is_sparse_csr")})
