"""torch.Tensor, assembled in one place: every Tensor method is found from this file.

The class is the C type pyctorch._C.Tensor (csrc/python/tensor_type.c). Its methods come from, in this order:
1. the op table (csrc/aten/ops*.def): each op with a method variant becomes a method (its in-place variant
   `name_` too), attached by the binding at import (pct_bindings_install, csrc/python/bindings.c);
2. what is written in C: the methods and properties of pct_tensor_methods and pct_tensor_getset
   (csrc/python/tensor_methods.c: shape, grad, requires_grad, item, tolist, numpy, untyped_storage, ...), and the
   type's slots (csrc/python/tensor_type.c: operators, indexing through csrc/python/indexing.c, repr, iteration,
   the buffer protocol); __array_priority__ (csrc/python/module.c);
3. methods written in Python, attached below. Each module lists its methods in TENSOR_METHODS, given only
   where the class has no attribute of that name yet (what the op table or C gives wins over a Python fallback),
   and, where it must replace what the class has, in TENSOR_METHOD_OVERRIDES. The order below is the order of
   attachment; a later step can only fill gaps or replace what it names.
"""
from . import _C
from . import _composites, _composites_more, _tensor_more, _tensor_autograd, _tensor_shared, _tensor_aliases
from . import _linalg_functions, _legacy, _stft, _sparse_ops

Tensor = _C.Tensor  # torch._tensor.Tensor


def _attach(methods):
    """Attach methods ({name: function or property}) where the class has no attribute of that name."""
    _C._add_tensor_methods({name: fn for name, fn in methods.items() if not hasattr(_C.Tensor, name)})


def _attach_overriding(methods):
    """Attach methods, replacing what the class has under those names."""
    _C._add_tensor_methods(methods)


# composites of the op table written in Python (diff, quantile, cov, real/imag, mH, ...)
_attach(_composites.TENSOR_METHODS)
# clamp and clip with tensor bounds (the op table's take scalars only)
_attach_overriding(_composites.TENSOR_METHOD_OVERRIDES)
# the autograd API: backward, register_hook, register_post_accumulate_grad_hook, retain_grad
_attach(_tensor_autograd.TENSOR_METHODS)
# where the memory lives: share_memory_, is_shared, pin_memory, is_pinned
_attach(_tensor_shared.TENSOR_METHODS)
# torch's spellings of pyctorch's ops (arccos, greater, ...), isclose, allclose, equal, where, ravel, new*, ...
_attach(_tensor_aliases.TENSOR_METHODS)
# __format__: a 0-d tensor formats like its Python number
_attach_overriding(_tensor_aliases.TENSOR_METHOD_OVERRIDES)
# linear algebra on torch.linalg: inverse, logdet, qr, lu, lu_solve, matrix_power, pinverse, lstsq, ...
_attach(_linalg_functions.TENSOR_METHODS)
# cholesky with torch's deprecation note
_attach_overriding(_linalg_functions.TENSOR_METHOD_OVERRIDES)
# methods torch has only on the class: apply_/map_, resize, dim_order, fill_diagonal_, sum_to_size, the
# complex conversions, module_load, the device and layout predicates (pyctorch/_tensor_more.py)
_attach(_tensor_more.TENSOR_METHODS)
# stft and istft (composites over the FFT primitives)
_attach(_stft.TENSOR_METHODS)
# the sparse COO methods' strided versions (coalesce, indices, to_sparse, sparse_mask, ...); a sparse tensor
# reaches pyctorch/_sparse_ops.py through its __torch_function__
_attach(_sparse_ops.TENSOR_METHODS)
# type() with the legacy tensor classes (FloatTensor, ...)
_attach_overriding(_legacy.TENSOR_METHOD_OVERRIDES)

# last: the __torch_function__ protocol (pyctorch/overrides.py): Tensor's default handler, as_subclass, and every
# method above behind the check of Note [Torch function check]
from . import overrides as _overrides  # noqa: E402
_attach_overriding(_overrides.tensor_methods())


class _methods_replaced:
    """Context manager: the named Tensor methods replaced while it is open, restored after. Only torch.export's
    capture uses it (pyctorch/export/_trace.py: the C methods that turn a traced tensor into Python values
    refuse, the dtype conversions go through `to`); the class stays assembled here."""

    def __init__(self, methods):
        self.methods = methods

    def __enter__(self):
        self.saved = {name: Tensor.__dict__.get(name) for name in self.methods}
        _attach_overriding(self.methods)
        return self

    def __exit__(self, *exc):
        _attach_overriding({k: v for k, v in self.saved.items() if v is not None})
        return False
