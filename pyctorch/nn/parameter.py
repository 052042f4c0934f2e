"""nn.Parameter: a Tensor subclass that modules register as a parameter (requires grad by default)."""
from .. import _C


class Parameter(_C.Tensor):
    # results of ops on parameters are plain tensors (torch opts Parameter out of __torch_function__ the same way)
    __torch_function__ = _C._disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if data.is_sparse:
            raise NotImplementedError("pyctorch: a sparse COO Parameter is not supported yet; keep the dense "
                                      "tensor (or the sparse tensor's values) as the Parameter")
        return _C.Tensor._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(_C.Tensor):
    """A tensor that assigning to a module attribute registers as a buffer (torch.nn.Buffer)."""

    __torch_function__ = _C._disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = _C.Tensor._make_subclass(cls, data, data.requires_grad)
        t.persistent = persistent
        return t


# ---------------------------------------------------------------- lazy modules' placeholders
# Note [Uninitialized tensors]: a lazy module holds UninitializedParameter / UninitializedBuffer
# objects (empty tensors) until its first forward learns the shapes; materialize(shape) gives the
# object storage and turns it into its cls_to_become in place, so references held elsewhere (an
# optimizer built before the first forward) stay valid. Until then every torch function, Tensor
# method and operator on them raises torch's ValueError through __torch_function__ (the mixin's
# handler below), except the few torch allows (size, the conversions, copy_) and the properties;
# `shape` raises torch's RuntimeError itself.

class UninitializedTensorMixin:
    """What the uninitialized parameter and buffer share: materialize() and the refusals."""

    def materialize(self, shape, device=None, dtype=None):
        """Allocate (uninitialized) storage of `shape` and become a regular tensor of cls_to_become."""
        dtype = self.data.dtype if dtype is None else dtype
        self.data = _C.empty(shape, dtype=dtype)
        self.__class__ = self._materialized_class()

    @classmethod
    def _materialized_class(cls):
        return cls.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        # a property's getter reaches handlers as a method-wrapper (Tensor.<name>.__get__): allowed, as in torch
        if func in _uninitialized_allowed() or type(func).__name__ == "method-wrapper":
            return super().__torch_function__(func, types, args, {} if kwargs is None else kwargs)
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {func}. This error happens when you are using a "
            f"`LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` objects. When using "
            "LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch functions")

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def _uninitialized_allowed():
    """The Tensor methods an uninitialized parameter or buffer still answers (torch's list)."""
    names = ("size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char", "short", "int",
             "long", "cuda", "cpu", "to", "get_device", "__hash__")
    return [getattr(_C.Tensor, n) for n in names if hasattr(_C.Tensor, n)]


def is_lazy(param):
    """Whether `param` is a placeholder of a lazy module that is still uninitialized."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape a lazy module fills in at its first forward (Note [Uninitialized tensors])."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _C.Tensor._make_subclass(cls, _C.empty(0, dtype=dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.data.dtype)
        return memo[id(self)]


class _MaterializedBuffer(_C.Tensor):
    """What a materialized UninitializedBuffer becomes: Python cannot turn an object of a subclass
    into the C Tensor type itself, so lazy modules swap these for plain tensors once initialized."""

    __torch_function__ = _C._disabled_torch_function_impl


class UninitializedBuffer(UninitializedTensorMixin, _C.Tensor):
    """A buffer whose shape a lazy module fills in at its first forward (Note [Uninitialized tensors])."""

    cls_to_become = _C.Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _C.Tensor._make_subclass(cls, _C.empty(0, dtype=dtype), requires_grad)
        t.persistent = persistent
        return t

    @classmethod
    def _materialized_class(cls):
        return _MaterializedBuffer

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.data.dtype, self.persistent)
        return memo[id(self)]
