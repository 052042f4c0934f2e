"""Sparse COO tensors (torch.sparse_coo layout), written in Python over dense ops.

Note [Sparse COO as a shell subclass]: a sparse tensor is a `SparseCooTensor`, a Tensor subclass whose own C tensor
is a shell on the meta device (a 0-d meta zero expanded to the sparse shape: no memory, no data) that carries
only the shape and dtype; the device is the values' device. The data lives in two plain tensors: `_sp_indices` (int64, sparse_dim x nnz) and `_sp_values`
(nnz x dense dims), with a coalesced flag. Every op reaches `SparseCooTensor.__torch_function__`, which runs the
sparse implementation registered under the op's name (pyctorch/_sparse_build.py, _sparse_ops.py), lets the shape/dtype queries read
the shell, and raises torch's NotImplementedError ("Could not run 'aten::<op>' ... 'SparseCPU' backend") for
anything else, so nothing ever computes on the shell (and what bypasses the protocol, a C factory such as
torch.tensor(sparse), meets a meta tensor that has no data to read, never plausible zeros). The implementations are built from differentiable dense
ops on the values, so autograd flows through a sparse operand's values to whatever made them; a sparse leaf
(requires_grad=True) keeps a leaf values tensor and its `.grad` is the sparse tensor of that values' gradient.
"""
from . import _C, _layouts

sparse_coo = _layouts.sparse_coo

# name -> implementation(*args, **kwargs); filled by pyctorch/_sparse_build.py and _sparse_ops.py
SPARSE_IMPLS = {}

# what the shell answers truthfully (shape, dtype, device and the predicates about them)
_SHELL_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "is_floating_point", "is_complex",
    "is_signed", "__len__", "is_inference", "__hash__", "__sizeof__"})
_SHELL_PROPERTIES = frozenset({
    "shape", "dtype", "ndim", "is_quantized", "is_mps", "is_xpu",
    "is_mkldnn", "is_nested", "itemsize", "names", "is_sparse_csr", "_version", "output_nr", "_base",
    "is_xla", "is_ipu", "is_vulkan", "is_maia", "is_mtia", "name"})


def _backend(device):
    return "SparseCUDA" if device.type == "cuda" else "SparseCPU"


def not_implemented(op_name, device):
    return NotImplementedError(
        f"Could not run 'aten::{op_name}' with arguments from the '{_backend(device)}' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the selective/custom build "
        "process (if using custom build).")


def _func_name(func):
    """(name, is_property) of what reached __torch_function__."""
    name = getattr(func, "__name__", None)
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        fget = getattr(owner, "fget", None)
        return (getattr(owner, "__name__", None) or getattr(fget, "__name__", None)), True
    return name, False


def _flatten(args, kwargs):
    out = []
    for a in list(args) + list((kwargs or {}).values()):
        out.extend(a if isinstance(a, (list, tuple)) else [a])
    return out


class SparseCooTensor(_C.Tensor):
    """A tensor of layout torch.sparse_coo (Note [Sparse COO as a shell subclass])."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name, is_property = _func_name(func)
        if is_property and name in _SHELL_PROPERTIES or not is_property and name in _SHELL_METHODS:
            with _C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        impl = SPARSE_IMPLS.get(name)
        if impl is not None:
            return impl(*args, **kwargs)
        sparse = [a for a in _flatten(args, kwargs) if isinstance(a, SparseCooTensor)]
        op = name.strip("_") if name and name.startswith("__") else name
        raise not_implemented(op, sparse[0].device if sparse else _C.device("cpu"))

    # ---- what the C properties cannot know ----
    @property
    def layout(self):
        return sparse_coo

    @property
    def is_sparse(self):
        return True

    @property
    def device(self):
        return self._sp_values.device

    @property
    def is_cpu(self):
        return self._sp_values.device.type == "cpu"

    @property
    def is_cuda(self):
        return self._sp_values.device.type == "cuda"

    @property
    def is_meta(self):
        return False

    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._sp_values.requires_grad = flag

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    @property
    def is_leaf(self):
        return self._sp_values.is_leaf

    @property
    def grad(self):
        g = self._sp_values.grad
        if g is None:
            return None
        from ._sparse_build import leaf_grad
        return leaf_grad(self, g)

    @grad.setter
    def grad(self, value):
        if value is None:
            self._sp_values.grad = None
        elif isinstance(value, SparseCooTensor) and value._sp_indices.shape == self._sp_indices.shape and \
                bool((value._sp_indices == self._sp_indices).all()):
            self._sp_values.grad = value._sp_values
        else:
            raise RuntimeError("pyctorch: a sparse tensor's .grad can only be set to None or to a sparse tensor "
                               "with the same indices")

    @property
    def data(self):
        return make(self._sp_indices, self._sp_values.detach(), self._sp_size, self._sp_coalesced)

    def __repr__(self, *, tensor_contents=None):
        from ._sparse_str import sparse_repr
        return sparse_repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        from ._sparse_build import _rebuild_sparse_tensor  # what torch writes: torch._utils._rebuild_sparse_tensor
        return (_rebuild_sparse_tensor, (sparse_coo, (self._sp_indices, self._sp_values.detach(),
                                                      tuple(self._sp_size), self._sp_coalesced)))

    def __deepcopy__(self, memo):
        out = make(self._sp_indices.clone(), self._sp_values.detach().clone(), self._sp_size, self._sp_coalesced)
        if self._sp_values.requires_grad:
            out._sp_values.requires_grad_(True)
        memo[id(self)] = out
        return out

    def __format__(self, spec):
        return repr(self) if not spec else object.__format__(self, spec)


def make(indices, values, size, coalesced):
    """The sparse tensor of these (already checked) indices and values."""
    shell = _C.zeros((), dtype=values.dtype, device="meta").expand(tuple(size))
    out = shell.as_subclass(SparseCooTensor)
    out._sp_indices = indices
    out._sp_values = values
    out._sp_size = _C.Size(tuple(size))
    out._sp_coalesced = bool(coalesced) or indices.shape[1] < 2
    return out


def is_sparse(t):
    return isinstance(t, SparseCooTensor)
