"""Sparse COO tensors: arithmetic, in-place ops, transpose and masks, products, reductions, and the Tensor
methods of a strided tensor that torch has for sparse ones (Note [Sparse COO as a shell subclass] in
pyctorch/_sparse_coo.py; construction and structure: pyctorch/_sparse_build.py)."""
import math
import numbers

from . import _C
from ._sparse_coo import make, is_sparse
from ._sparse_build import (  # noqa: F401  (sparse_coo_tensor: torch.sparse_coo_tensor)
    _register, _sd, _dense_sizes, _keys, _decode, _sum_groups, _backend_error, _dense_error_name,
    sparse_coo_tensor, to_sparse, to_sparse_coo, coalesce, to_dense)

# ------------------------------------------------------------------ arithmetic

def _merge(indices, values, sizes):
    """Entries with the same index summed, in the order each index first appears (torch's add of sparse
    tensors keeps that order)."""
    unique, inverse = _C.unique(_keys(indices, sizes), sorted=True, return_inverse=True)
    groups = unique.shape[0]
    positions = _C.arange(inverse.shape[0], device=inverse.device)
    first = _C.full((groups,), inverse.shape[0], dtype=_C.int64, device=inverse.device)
    first = first.scatter_reduce(0, inverse, positions, "amin")
    order = first.argsort()
    rank = _C.empty_like(order).scatter_(0, order, _C.arange(groups, device=order.device))
    merged = _sum_groups(values, rank[inverse], groups)
    return _decode(unique.index_select(0, order), sizes), merged


def _check_same_size(name, a, b):
    if tuple(a._sp_size) != tuple(b._sp_size):
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(a._sp_size)} while other has size {list(b._sp_size)} (FYI: dense-sparse "
                           "addition does not currently support broadcasting)")


@_register("add", "__add__")
def add(self, other, *, alpha=1, out=None):
    if out is not None:
        raise RuntimeError("pyctorch: add(out=) is not supported for sparse tensors")
    if not is_sparse(self):
        if not isinstance(self, _C.Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        return self + to_dense(other) * alpha if alpha != 1 else self + to_dense(other)
    if not is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    _check_same_size("add", self, other)
    if _sd(self) != _sd(other):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, but self has "
                           f"{_sd(self)} while other has {_sd(other)}")
    other_values = other._sp_values * alpha if alpha != 1 else other._sp_values
    indices = _C.cat([self._sp_indices, other._sp_indices], 1)
    dtype = _C.result_type(self._sp_values, other_values)
    values = _C.cat([self._sp_values.to(dtype), other_values.to(dtype)])
    both = self._sp_coalesced and other._sp_coalesced
    sizes = self._sp_size[:_sd(self)]
    if both:
        return coalesce(make(indices, values, self._sp_size, False))
    merged_indices, merged_values = _merge(indices, values, sizes)
    return make(merged_indices, merged_values, self._sp_size, False)


@_register("__radd__")
def _radd(self, other):
    return add(other, self) if isinstance(other, _C.Tensor) else add(self, other)


@_register("sub", "__sub__", "subtract")
def sub(self, other, *, alpha=1, out=None):
    if not is_sparse(self):
        return add(self, other, alpha=-alpha, out=out)
    if not is_sparse(other):
        raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")
    return add(self, other, alpha=-alpha, out=out)


@_register("__rsub__")
def _rsub(self, other):
    raise RuntimeError("sub(dense, sparse) with a Python number is not supported: subtract from a tensor")


@_register("neg", "__neg__", "negative")
def neg(self):
    return make(self._sp_indices, -self._sp_values, self._sp_size, self._sp_coalesced)


def _is_scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, _C.Tensor) and not is_sparse(x) and x.dim() == 0)


@_register("mul", "__mul__", "__rmul__", "multiply")
def mul(self, other, *, out=None):
    if not is_sparse(self):
        self, other = other, self
    if _is_scalar(other):
        return make(self._sp_indices, self._sp_values * other, self._sp_size, self._sp_coalesced)
    if is_sparse(other):
        _check_same_size("mul", self, other)
        a, b = coalesce(self), coalesce(other)
        sizes = a._sp_size[:_sd(a)]
        indices = _C.cat([a._sp_indices, b._sp_indices], 1)
        unique, inverse, counts = _C.unique(_keys(indices, sizes), sorted=True, return_inverse=True,
                                            return_counts=True)
        na = a._sp_values.shape[0]
        left = _sum_groups(a._sp_values, inverse[:na], unique.shape[0])
        right = _sum_groups(b._sp_values, inverse[na:], unique.shape[0])
        both = (counts == 2).nonzero().reshape(-1)
        return make(_decode(unique.index_select(0, both), sizes),
                    left.index_select(0, both) * right.index_select(0, both), a._sp_size, True)
    if tuple(other.shape) != tuple(self._sp_size):
        raise RuntimeError(f"mul(sparse, dense): the dense operand must have the sparse tensor's shape "
                           f"{list(self._sp_size)} (or be a scalar), but got {list(other.shape)}")
    picked = other[tuple(self._sp_indices)]
    return make(self._sp_indices, self._sp_values * picked, self._sp_size, self._sp_coalesced)


@_register("div", "__truediv__", "true_divide", "divide")
def div(self, other, *, rounding_mode=None, out=None):
    if not is_sparse(self) or not _is_scalar(other):
        raise RuntimeError("div(sparse, x): x must be a Python number or a 0-d dense tensor")
    return make(self._sp_indices, _C.div(self._sp_values, other, rounding_mode=rounding_mode), self._sp_size,
                self._sp_coalesced)


def _unary(name):
    def op(self):
        s = coalesce(self)
        return make(s._sp_indices, getattr(s._sp_values, name)(), s._sp_size, True)
    op.__name__ = name
    return op


for _name in ("abs", "sqrt", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh", "expm1", "log1p", "sign",
              "sgn", "trunc", "floor", "ceil", "round", "square", "relu"):
    _register(_name)(_unary(_name))


# ------------------------------------------------------------------ in place

def _assign(self, result):
    """self takes result's indices, values and flag (the in-place ops of a sparse self)."""
    self._sp_indices, self._sp_values, self._sp_coalesced = result._sp_indices, result._sp_values, \
        result._sp_coalesced
    return self


@_register("add_", "__iadd__")
def add_(self, other, *, alpha=1):
    if not is_sparse(self):
        return self.add_(to_dense(other), alpha=alpha)
    result = add(self, other, alpha=alpha)
    if result.dtype != self.dtype:
        raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type {self.dtype}")
    return _assign(self, result)


@_register("sub_", "__isub__", "subtract_")
def sub_(self, other, *, alpha=1):
    if not is_sparse(self):
        return self.sub_(to_dense(other), alpha=alpha)
    if not is_sparse(other):
        raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")
    return add_(self, other, alpha=-alpha)


@_register("mul_", "__imul__", "multiply_")
def mul_(self, other):
    if not is_sparse(self):
        raise RuntimeError("mul_(dense, sparse): the result would be sparse; use mul (out of place) instead")
    if _is_scalar(other):
        self._sp_values.mul_(other)
    else:
        _assign(self, mul(self, other))
    self._sp_coalesced = self._sp_values.shape[0] < 2  # torch's in-place mul drops the flag
    return self


@_register("div_", "__itruediv__", "true_divide_", "divide_")
def div_(self, other, *, rounding_mode=None):
    if not _is_scalar(other):
        raise RuntimeError("div_(sparse, x): x must be a Python number or a 0-d dense tensor")
    self._sp_values.div_(other, rounding_mode=rounding_mode)
    return self


@_register("neg_", "negative_")
def neg_(self):
    self._sp_values.neg_()
    return self


@_register("zero_")
def zero_(self):
    return sparse_resize_and_clear_(self, self._sp_size, _sd(self), self._sp_values.dim() - 1)


@_register("index_select")
def index_select(self, dim, index):
    ndim, sd = len(self._sp_size), _sd(self)
    dim = dim % ndim
    size = list(self._sp_size)
    size[dim] = index.shape[0]
    if dim >= sd:
        return make(self._sp_indices, self._sp_values.index_select(dim - sd + 1, index), size, False)
    matches = (self._sp_indices[dim].unsqueeze(1) == index.reshape(1, -1)).nonzero()
    entry, position = matches[:, 0], matches[:, 1]
    indices = self._sp_indices.index_select(1, entry).clone()
    indices[dim] = position
    return make(indices, self._sp_values.index_select(0, entry), size, False)


# ------------------------------------------------------------------ shape

@_register("transpose", "swapaxes", "swapdims")
def transpose(self, dim0, dim1):
    ndim = len(self._sp_size)
    d0, d1 = dim0 % max(ndim, 1), dim1 % max(ndim, 1)
    sd = _sd(self)
    size = list(self._sp_size)
    size[d0], size[d1] = size[d1], size[d0]
    if d0 == d1:
        return make(self._sp_indices, self._sp_values, size, self._sp_coalesced)
    if d0 < sd and d1 < sd:
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        return make(self._sp_indices[order], self._sp_values, size, False)
    raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sd}, d0: {d0}, "
                       f"d1: {d1}")


@_register("t")
def t(self):
    ndim = len(self._sp_size)
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return self if ndim < 2 else transpose(self, 0, 1)


@_register("sparse_mask")
def sparse_mask(self, mask):
    if not is_sparse(mask):
        raise _backend_error("sparse_mask", self)
    if tuple(self.shape) != tuple(mask._sp_size):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} "
                           f"but mask has size {list(mask._sp_size)}")
    dense = to_dense(self) if is_sparse(self) else self
    return make(mask._sp_indices, dense[tuple(mask._sp_indices)], mask._sp_size, mask._sp_coalesced)


def _set_shell_size(self, size):
    with _C.DisableTorchFunctionSubclass():
        self.set_(self.untyped_storage(), 0, tuple(size), (0,) * len(size))
    self._sp_size = _C.Size(tuple(size))


@_register("sparse_resize_")
def sparse_resize_(self, size, sparse_dim, dense_dim):
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}), "
                           f"but got {len(size)}")
    hint = " You could try sparse_resize_and_clear_() for an empty sparse tensor of this size."
    old_sd, old_dd = _sd(self), self._sp_values.dim() - 1
    if self._sp_values.shape[0] > 0:
        if sparse_dim != old_sd:
            raise RuntimeError(f"changing the number of sparse dimensions (from {old_sd} to {sparse_dim}) on a "
                               "non-empty sparse tensor is not supported." + hint)
        if dense_dim != old_dd:
            raise RuntimeError(f"changing the number of dense dimensions (from {old_dd} to {dense_dim}) on a "
                               "non-empty sparse tensor is not supported." + hint)
        old_sparse, new_sparse = list(self._sp_size[:old_sd]), list(size[:sparse_dim])
        if any(n < o for n, o in zip(new_sparse, old_sparse)):
            raise RuntimeError(f"shrinking the size of sparse dimensions (from {old_sparse} to {new_sparse}) on a "
                               "non-empty sparse tensor is not supported." + hint)
        if tuple(size[sparse_dim:]) != _dense_sizes(self):
            raise RuntimeError(f"pyctorch: changing the dense sizes (from {list(_dense_sizes(self))} to "
                               f"{list(size[sparse_dim:])}) of a non-empty sparse tensor is not supported")
    else:
        self._sp_indices = _C.zeros((sparse_dim, 0), dtype=_C.int64, device=self._sp_indices.device)
        self._sp_values = _C.zeros((0,) + size[sparse_dim:], dtype=self._sp_values.dtype,
                                   device=self._sp_values.device)
    _set_shell_size(self, size)
    return self


@_register("sparse_resize_and_clear_")
def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}), "
                           f"but got {len(size)}")
    self._sp_indices = _C.zeros((sparse_dim, 0), dtype=_C.int64, device=self._sp_indices.device)
    self._sp_values = _C.zeros((0,) + size[sparse_dim:], dtype=self._sp_values.dtype,
                               device=self._sp_values.device)
    self._sp_coalesced = True
    _set_shell_size(self, size)
    return self


@_register("resize_as_sparse_")
def resize_as_sparse_(self, the_template):
    if not is_sparse(self):
        raise _backend_error("resize_as_sparse_", self)
    if not is_sparse(the_template):
        raise _backend_error("resize_as_sparse_", the_template)
    return sparse_resize_(self, the_template._sp_size, _sd(the_template), the_template._sp_values.dim() - 1)


# ------------------------------------------------------------------ products

def _check_matrix(name, t, which):
    size = t._sp_size if is_sparse(t) else t.shape
    if len(size) != 2:
        raise RuntimeError(f"{name}: {which} must be a matrix, got {len(size)}-D tensor")
    return size


def _sparse_dense_mm(a, b):
    if _sd(a) != 2:
        raise RuntimeError(f"mm: the sparse operand must have 2 sparse dimensions, got {_sd(a)}")
    n, k = _check_matrix("mm", a, "self")
    bk, m = _check_matrix("mm", b, "mat2")
    if bk != k:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {k}, got {bk}")
    rows, cols = a._sp_indices[0], a._sp_indices[1]
    values = a._sp_values
    dtype = _C.result_type(values, b)
    contrib = values.to(dtype).unsqueeze(1) * b.to(dtype).index_select(0, cols)
    out = _C.zeros((n, m), dtype=dtype, device=b.device)
    return out.index_add(0, rows, contrib)


@_register("mm")
def mm(self, mat2, *, out=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("pyctorch: torch.sparse.mm(reduce=) is not implemented")
    if is_sparse(self) and not is_sparse(mat2):
        return _sparse_dense_mm(self, mat2)
    if not is_sparse(self) and is_sparse(mat2):
        return _sparse_dense_mm(t(mat2), self.t()).t()
    # sparse @ sparse: the structural product's pattern, the values through the dense product
    n, k = _check_matrix("mm", self, "self")
    k2, m = _check_matrix("mm", mat2, "mat2")
    if k != k2:
        raise RuntimeError(f"mm: self and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    product = _sparse_dense_mm(self, to_dense(mat2))
    ones_a = make(self._sp_indices, _C.ones(self._sp_values.shape[0]), self._sp_size, False)
    pattern = _sparse_dense_mm(ones_a, to_dense(make(mat2._sp_indices, _C.ones(mat2._sp_values.shape[0]),
                                                     mat2._sp_size, False))) != 0
    indices = pattern.nonzero().t().contiguous()
    return make(indices, product[tuple(indices)], (n, m), True)


@_register("matmul", "__matmul__")
def matmul(self, other, *, out=None):
    if is_sparse(self) and not is_sparse(other) and other.dim() == 1:
        return mm(self, other.unsqueeze(1)).squeeze(1)
    if not is_sparse(self) and self.dim() == 1:
        return mm(self.unsqueeze(0), other).squeeze(0)
    return mm(self, other)


@_register("__rmatmul__")
def _rmatmul(self, other):
    return matmul(other, self)


@_register("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if is_sparse(input):
        raise NotImplementedError("pyctorch: addmm with a sparse input (self) is not implemented; use sspaddmm")
    product = mm(mat1, mat2)
    return input * beta + product * alpha if (beta != 1 or alpha != 1) else input + product


# ------------------------------------------------------------------ reductions

@_register("sum")
def sparse_sum(input, dim=None, keepdim=False, dtype=None):
    if not is_sparse(input):
        return input.sum() if dim is None else input.sum(dim, dtype=dtype)
    if keepdim:
        raise RuntimeError("pyctorch: sum(keepdim=True) is not supported for sparse tensors")
    values = input._sp_values if dtype is None else input._sp_values.to(dtype)
    if dim is None:
        return values.sum()
    ndim, sd = len(input._sp_size), _sd(input)
    dims = sorted({d % ndim for d in ([dim] if isinstance(dim, int) else dim)})
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    sparse_dims = [d for d in dims if d < sd]
    if dense_dims:
        values = values.sum(dense_dims)
    if len(sparse_dims) == sd:
        return values.sum(0)
    keep = [d for d in range(sd) if d not in sparse_dims]
    size = [input._sp_size[d] for d in range(ndim) if d not in dims]
    indices = input._sp_indices[keep]
    sizes = [input._sp_size[d] for d in keep]
    unique, inverse = _C.unique(_keys(indices, sizes), sorted=True, return_inverse=True)
    return make(_decode(unique, sizes), _sum_groups(values, inverse, unique.shape[0]), size, True)


def _softmax(input, dim, dtype, log):
    if not is_sparse(input):
        raise RuntimeError("torch.sparse.softmax: input must be a sparse tensor")
    s = coalesce(input)
    values = s._sp_values if dtype is None else s._sp_values.to(dtype)
    ndim, sd = len(s._sp_size), _sd(s)
    dim = dim % ndim
    if dim >= sd:
        out = values.log_softmax(dim - sd + 1) if log else values.softmax(dim - sd + 1)
        return make(s._sp_indices, out, s._sp_size, True)
    others = [d for d in range(sd) if d != dim]
    groups, inverse = _C.unique(_keys(s._sp_indices[others], [s._sp_size[d] for d in others]),
                                return_inverse=True)
    n = groups.shape[0]
    index = inverse.reshape((-1,) + (1,) * (values.dim() - 1)).expand(values.shape)
    peak = _C.full((n,) + tuple(values.shape[1:]), -math.inf, dtype=values.dtype, device=values.device)
    peak = peak.scatter_reduce(0, index, values.detach(), "amax").index_select(0, inverse)
    shifted = values - peak
    exp = shifted.exp()
    total = _sum_groups(exp, inverse, n).index_select(0, inverse)
    out = shifted - total.log() if log else exp / total
    return make(s._sp_indices, out, s._sp_size, True)


@_register("_sparse_softmax")
def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, log=False)


@_register("_sparse_log_softmax")
def log_softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, log=True)


# ------------------------------------------------------------------ the Tensor methods on a strided tensor

def _dense_only(name, fn):
    """A Tensor method whose strided version is fn (a sparse tensor reaches SPARSE_IMPLS first)."""
    fn.__name__ = fn.__qualname__ = name
    return fn


def _coalesce_dense(self):
    raise _dense_error_name("coalesce")


def _indices_dense(self):
    raise _dense_error_name("indices")


def _values_dense(self):
    raise RuntimeError("values expected sparse tensor layout but got Strided")


def _is_coalesced_dense(self):
    raise _dense_error_name("is_coalesced")


def _backend_only(name):
    def method(self, *args, **kwargs):
        raise _backend_error(name, self)
    return _dense_only(name, method)


def _sparse_mask_dense(self, mask):
    if not is_sparse(mask):
        raise _backend_error("sparse_mask", self)
    return sparse_mask(self, mask)


def smm(input, mat2):
    """Sparse input @ dense mat2 as a sparse tensor: every column of each row input holds an entry in."""
    if not is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    dense = mm(input, mat2)
    rows = _C.unique(input._sp_indices[0], sorted=True)
    cols = _C.arange(dense.shape[1], device=dense.device)
    indices = _C.stack([rows.repeat_interleave(dense.shape[1]), cols.repeat(rows.shape[0])])
    return make(indices, dense.index_select(0, rows).reshape(-1), (input._sp_size[0], dense.shape[1]), False)


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), sparse, the entries of input first (uncoalesced)."""
    if not is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    product = smm(mat1, mat2)
    if tuple(product._sp_size) != tuple(input._sp_size):
        raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 0 size {product._sp_size[0]}, got "
                           f"{input._sp_size[0]}" if product._sp_size[0] != input._sp_size[0] else
                           f"sspaddmm: Argument #1: Expected dim 1 size {product._sp_size[1]}, got "
                           f"{input._sp_size[1]}")
    indices = _C.cat([input._sp_indices, product._sp_indices], 1)
    values = _C.cat([input._sp_values * beta, product._sp_values * alpha])
    return make(indices, values, input._sp_size, False)


TENSOR_METHODS = {
    "coalesce": _dense_only("coalesce", _coalesce_dense),
    "indices": _dense_only("indices", _indices_dense),
    "values": _dense_only("values", _values_dense),
    "is_coalesced": _dense_only("is_coalesced", _is_coalesced_dense),
    "sparse_dim": _dense_only("sparse_dim", lambda self: 0),
    "dense_dim": _dense_only("dense_dim", lambda self: self.dim()),
    "_indices": _backend_only("_indices"),
    "_values": _backend_only("_values"),
    "_nnz": _backend_only("_nnz"),
    "sparse_resize_": _backend_only("sparse_resize_"),
    "sparse_resize_and_clear_": _backend_only("sparse_resize_and_clear_"),
    "resize_as_sparse_": _backend_only("resize_as_sparse_"),
    "to_sparse": to_sparse,
    "to_sparse_coo": to_sparse_coo,
    "sparse_mask": _dense_only("sparse_mask", _sparse_mask_dense),
    "smm": smm,
    "sspaddmm": sspaddmm,
}
_register("smm")(smm)
_register("sspaddmm")(sspaddmm)
