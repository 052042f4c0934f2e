"""Legacy spellings old scripts use: the typed tensor classes (torch.FloatTensor, ...), Tensor.type with those
classes, and the module-level in-place functions (torch.sin_, ...) of the ops that have a Tensor in-place method.

Note [Legacy tensor types]
torch.FloatTensor and its siblings are not subclasses of Tensor: `FloatTensor(...)` builds an ordinary tensor of
the class's dtype (from data, from sizes, or empty) and `isinstance(t, FloatTensor)` asks whether t is a CPU
tensor of that dtype. Here each is a class whose metaclass gives that call and that instance check; the class
itself also answers the Tensor attributes (`FloatTensor.dtype`, `FloatTensor.sum`) as torch's does.
"""
import numbers

from . import _C
from ._layouts import strided

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]

# class name -> (dtype, c10's name of the dtype in TensorOptions messages)
_TYPES = {
    "FloatTensor": (_C.float32, "float"), "DoubleTensor": (_C.float64, "double"),
    "HalfTensor": (_C.float16, "c10::Half"),
    "BFloat16Tensor": (_C.bfloat16, "c10::BFloat16"), "LongTensor": (_C.int64, "long int"),
    "IntTensor": (_C.int32, "int"), "ShortTensor": (_C.int16, "short int"), "CharTensor": (_C.int8, "signed char"),
    "ByteTensor": (_C.uint8, "unsigned char"), "BoolTensor": (_C.bool, "bool"),
}
_CPP_DTYPE = {dtype: cpp for dtype, cpp in _TYPES.values()}


def _options(dtype):
    return (f"TensorOptions(dtype={_CPP_DTYPE[dtype]}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def _is_size(args):
    return all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args)


class _TensorType(type):
    """The metaclass of the legacy typed tensor classes (Note [Legacy tensor types])."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"

    def __subclasscheck__(cls, sub):
        return type.__subclasscheck__(cls, sub)

    def __getattr__(cls, name):
        return getattr(_C.Tensor, name)

    def __call__(cls, *args, device=None, size=None):
        """torch's legacy constructor: () -> empty, (Tensor) -> an alias of a tensor of this type, (Size or ints)
        -> uninitialized of that size, (data) -> a copy of the data in this dtype."""
        dtype = cls.dtype
        if device is not None and _C.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{_C.device(device).type} was passed")
        if size is not None:
            if args:
                raise TypeError("new() received an invalid combination of arguments")
            return _C.empty(tuple(size), dtype=dtype)
        if not args:
            return _C.empty((0,), dtype=dtype)
        if len(args) == 1:
            a = args[0]
            if isinstance(a, _C.Tensor):
                if a.dtype != dtype or a.device.type != "cpu":
                    raise TypeError(f"expected {_options(dtype)} (got {_options(a.dtype)})")
                return a.view_as(a)
            if isinstance(a, _C.Size):
                return _C.empty(tuple(a), dtype=dtype)
            if isinstance(a, numbers.Number) and not _is_size(args):
                raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
        if _is_size(args):
            for s in args:
                if s < 0:
                    raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(args)}")
            return _C.empty(tuple(int(s) for s in args), dtype=dtype)
        if len(args) == 1:
            return _C.tensor(args[0], dtype=dtype)
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")


def _make(name):
    dtype = _TYPES[name][0]
    return _TensorType(name, (), {"__module__": "pyctorch", "__qualname__": name, "dtype": dtype, "is_cuda": False,
                                  "is_sparse": False, "layout": strided, "__slots__": ()})


for _name in _TYPES:
    globals()[_name] = _make(_name)
del _name

_c_type = _C.Tensor.type


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type: the legacy type name, or a copy converted to a dtype, a type name or a legacy type class."""
    if isinstance(dtype, _TensorType):
        dtype = dtype.dtype
    elif dtype is _C.Tensor:
        dtype = _C.get_default_dtype()
    if dtype is None:
        return _c_type(self)
    return _c_type(self, dtype, non_blocking, **kwargs)


_type.__name__ = _type.__qualname__ = "type"
TENSOR_METHOD_OVERRIDES = {"type": _type}  # over the C method (pyctorch/_tensor.py attaches it)


# ---- module-level in-place functions: torch.sin_(t) is t.sin_() ----
# torch's names (every public name of torch 2.13 that ends in '_' and is the in-place form of an op); those whose
# Tensor method pyctorch has become functions here unless pyctorch already defines them
_INPLACE = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
            "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clip_", "conj_physical_", "cos_",
            "cosh_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_",
            "i0_", "index_put_", "lcm_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
            "negative_", "reciprocal_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_",
            "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")


def _inplace_function(name, method):
    def fn(input, *args, **kwargs):
        if not isinstance(input, _C.Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return method(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "pyctorch"
    fn.__doc__ = f"{name}(input, *args, **kwargs) -> Tensor: input.{name}(*args, **kwargs)."
    return fn


def inplace_functions(namespace):
    """{name: function} for the in-place names `namespace` (the pyctorch module) does not define yet."""
    out = {}
    for name in _INPLACE:
        method = _C.Tensor.__dict__.get(name)
        if name not in namespace and method is not None:
            out[name] = _inplace_function(name, method)
    return out
