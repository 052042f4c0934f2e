"""Sparse COO tensors: construction, conversion, structure and copies (Note [Sparse COO as a shell subclass]
in pyctorch/_sparse_coo.py). The arithmetic, products and reductions are in pyctorch/_sparse_ops.py.

Everything is written with differentiable dense ops on the values (index_add, index_select, advanced indexing),
so gradients reach the values as torch's do. Registered by name in SPARSE_IMPLS: the name a call reaches
__torch_function__ under (torch.mm and Tensor.mm are both "mm")."""
import math

from . import _C
from ._sparse_coo import SPARSE_IMPLS, make, sparse_coo, is_sparse

def _register(*names):
    def deco(fn):
        for name in names:
            SPARSE_IMPLS[name] = fn
        return fn
    return deco


def _sd(s):
    return s._sp_indices.shape[0]


def _dense_sizes(s):
    return tuple(s._sp_size[_sd(s):])


def _keys(indices, sizes):
    """Row-major linear index of each column of indices over the sparse sizes."""
    keys = _C.zeros(indices.shape[1], dtype=_C.int64, device=indices.device)
    stride = 1
    for d in range(len(sizes) - 1, -1, -1):
        keys = keys + indices[d] * stride
        stride *= int(sizes[d])
    return keys


def _decode(keys, sizes):
    rows, stride = [], 1
    for d in range(len(sizes) - 1, -1, -1):
        rows.append(_C.div(keys, stride, rounding_mode="floor") % int(sizes[d]))
        stride *= int(sizes[d])
    if not rows:
        return _C.zeros((0, keys.shape[0]), dtype=_C.int64, device=keys.device)
    return _C.stack(rows[::-1])


def _sum_groups(values, inverse, groups):
    out = _C.zeros((groups,) + tuple(values.shape[1:]), dtype=values.dtype, device=values.device)
    return out.index_add(0, inverse, values)


def _dense_error_name(name):
    return RuntimeError(f"{name} expected sparse coordinate tensor layout but got Strided")


def _backend_error(name, t):
    backend = "CUDA" if t.device.type == "cuda" else "CPU"
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build).")


# ------------------------------------------------------------------ construction

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor of these indices (sparse_dim x nnz) and values (nnz x dense sizes)."""
    if not isinstance(indices, _C.Tensor):
        indices = _C.tensor(indices, device=device)
    if not isinstance(values, _C.Tensor):
        values = _C.tensor(values, dtype=dtype, device=device)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if device is not None:
        values, indices = values.to(device), indices.to(device)
    indices = indices.to(_C.int64)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional (nnz x dense sizes), but got a 0-d tensor")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    sparse_dim, dense_dim = indices.shape[0], values.dim() - 1
    if size is None:
        if indices.shape[1] == 0:
            sparse_sizes = [0] * sparse_dim
        else:
            sparse_sizes = [int(m) + 1 for m in indices.amax(1).tolist()]
        size = tuple(sparse_sizes) + tuple(values.shape[1:])
    else:
        size = tuple(int(n) for n in size)
        if len(size) != sparse_dim + dense_dim:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
        if tuple(values.shape[1:]) != size[sparse_dim:]:
            raise RuntimeError(f"values has incorrect size, expected {[values.shape[0]] + list(size[sparse_dim:])}"
                               f", got {list(values.shape)}")
    if check_invariants and indices.shape[1] > 0:
        low, high = indices.amin(1).tolist(), indices.amax(1).tolist()
        for d in range(sparse_dim):
            if low[d] < 0:
                raise RuntimeError(f"found negative index {low[d]} for dim {d}")
            if high[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {high[d]}")
    if requires_grad:
        values = values.detach().requires_grad_(True)  # a leaf: its .grad is sparse (SparseCooTensor.grad)
    elif values.requires_grad:
        values = values.view_as(values)  # made from values in a graph: not a leaf, as in torch
    return make(indices, values, size, bool(is_coalesced))


def _rebuild_sparse_tensor(layout, data):
    """What torch.save writes for a sparse tensor (torch._utils._rebuild_sparse_tensor)."""
    if layout is not sparse_coo and getattr(layout, "_name", None) != "sparse_coo":
        raise RuntimeError(f"pyctorch: cannot load a sparse tensor of layout {layout}")
    indices, values, size = data[:3]
    return sparse_coo_tensor(indices, values, size, is_coalesced=data[3] if len(data) > 3 else None)


def _dense_to_sparse(t, sparse_dim):
    ndim = t.dim()
    if sparse_dim < 0 or sparse_dim > ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{ndim}] range, but {sparse_dim} "
                           "is given")
    if sparse_dim == 0:
        return make(_C.zeros((0, 1), dtype=_C.int64, device=t.device), t.unsqueeze(0), t.shape, True)
    nonzero = t != 0
    if ndim > sparse_dim:
        nonzero = nonzero.reshape(tuple(t.shape[:sparse_dim]) + (-1,)).any(-1)
    indices = nonzero.nonzero().t().contiguous()
    values = t[tuple(indices)]
    return make(indices, values, t.shape, True)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """This tensor in the sparse COO layout (torch.sparse_coo; the compressed layouts are not implemented)."""
    if sparse_dim is not None and not isinstance(sparse_dim, int):
        layout, sparse_dim = sparse_dim, None
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"pyctorch: to_sparse supports layout=torch.sparse_coo only, got {layout}")
    if blocksize is not None:
        raise RuntimeError("to_sparse: blocksize is only for the block sparse layouts (torch.sparse_bsr/bsc)")
    if dense_dim is not None:
        sparse_dim = self.dim() - dense_dim
    if is_sparse(self):
        if sparse_dim is not None and sparse_dim != _sd(self):
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return self
    return _dense_to_sparse(self, self.dim() if sparse_dim is None else sparse_dim)


def to_sparse_coo(self):
    return to_sparse(self)


# ------------------------------------------------------------------ structure

@_register("coalesce")
def coalesce(self):
    if self._sp_coalesced:
        return self
    sizes = self._sp_size[:_sd(self)]
    unique, inverse = _C.unique(_keys(self._sp_indices, sizes), sorted=True, return_inverse=True)
    values = _sum_groups(self._sp_values, inverse, unique.shape[0])
    return make(_decode(unique, sizes), values, self._sp_size, True)


@_register("indices")
def indices(self):
    if not self._sp_coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return self._sp_indices


@_register("values")
def values(self):
    if not self._sp_coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return self._sp_values


_register("_indices")(lambda self: self._sp_indices)
_register("_values")(lambda self: self._sp_values)
_register("_nnz")(lambda self: self._sp_values.shape[0])
_register("is_coalesced")(lambda self: self._sp_coalesced)
_register("sparse_dim")(_sd)
_register("dense_dim")(lambda self: self._sp_values.dim() - 1)
_register("to_sparse")(to_sparse)
_register("to_sparse_coo")(to_sparse_coo)


@_register("_coalesced_")
def _coalesced_(self, coalesced):
    self._sp_coalesced = bool(coalesced)
    return self


@_register("to_dense", "_to_dense")
def to_dense(self, dtype=None, *, masked_grad=None):
    sizes = self._sp_size[:_sd(self)]
    values = self._sp_values if dtype is None else self._sp_values.to(dtype)
    flat = _sum_groups(values, _keys(self._sp_indices, sizes), math.prod(sizes))
    return flat.reshape(tuple(self._sp_size))


@_register("stride")
def _stride(self, dim=None):
    strides = (0,) * len(self._sp_size)  # torch reports zeros for a sparse tensor
    return strides if dim is None else strides[dim]


@_register("is_contiguous")
def _is_contiguous(self, memory_format=None):
    return False


@_register("data_ptr")
def _data_ptr(self):
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


@_register("numpy")
def _numpy(self, *, force=False):
    raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")


@_register("reshape")
def _reshape(self, *shape):
    raise RuntimeError("reshape is not implemented for sparse tensors")


# ------------------------------------------------------------------ copies, dtype, device, autograd

@_register("clone")
def clone(self, *, memory_format=None):
    return make(self._sp_indices.clone(), self._sp_values.clone(), self._sp_size, self._sp_coalesced)


@_register("detach")
def detach(self):
    return make(self._sp_indices, self._sp_values.detach(), self._sp_size, self._sp_coalesced)


@_register("detach_")
def detach_(self):
    self._sp_values = self._sp_values.detach()
    return self


@_register("requires_grad_")
def requires_grad_(self, requires_grad=True):
    self._sp_values.requires_grad_(requires_grad)
    return self


@_register("to")
def to(self, *args, **kwargs):
    values = self._sp_values.to(*args, **kwargs)
    indices = self._sp_indices.to(values.device)
    if values is self._sp_values and indices is self._sp_indices:
        return self
    return make(indices, values, self._sp_size, self._sp_coalesced)


@_register("get_device")
def _get_device(self):
    return self._sp_values.get_device()


@_register("type")
def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return self._sp_values.type().replace("torch.", "torch.sparse.", 1)
    if isinstance(dtype, str):
        dtype = dtype.replace("torch.sparse.", "torch.", 1)
    return make(self._sp_indices, self._sp_values.type(dtype, non_blocking), self._sp_size, self._sp_coalesced)


def _converter(dtype_name):
    def convert(self, memory_format=None):
        return to(self, getattr(_C, dtype_name))
    return convert


for _name, _dtype_name in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                           ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"), ("bool", "bool")):
    _register(_name)(_converter(_dtype_name))
_register("cpu")(lambda self, memory_format=None: to(self, "cpu"))


def leaf_grad(self, grad_values):
    """A sparse leaf's .grad: the gradient with respect to its dense equivalent at its pattern, one entry per
    distinct index (the entries of a repeated index all receive that same gradient, as torch gives it)."""
    if self._sp_coalesced:
        return make(self._sp_indices, grad_values, self._sp_size, True)
    sizes = self._sp_size[:_sd(self)]
    unique, inverse = _C.unique(_keys(self._sp_indices, sizes), sorted=True, return_inverse=True)
    positions = _C.arange(inverse.shape[0], device=inverse.device)
    first = _C.full((unique.shape[0],), inverse.shape[0], dtype=_C.int64, device=inverse.device)
    first = first.scatter_reduce(0, inverse, positions, "amin")
    return make(_decode(unique, sizes), grad_values.index_select(0, first), self._sp_size, True)
