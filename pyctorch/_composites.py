"""Functions of the torch namespace (and their Tensor methods) written as composites of the op table.

Each is built from ops that have backward formulas, so autograd follows without formulas of its own.
One section per family; the Tensor methods are listed at the bottom (pyctorch/_tensor.py attaches them). Only _C and math are imported
here (import time matters); nn.functional is imported inside the functions that forward to it.
"""
import math
import warnings

from . import _C

# Note [Python composites]: every function here is an entry of the op table (PCT_COMPOSITE_PY lines of
# csrc/aten/ops_composite_py.def: schema, variants, "module:function"); __all__ (the torch.<name> functions) and the
# Tensor methods below are read from that table, so the table stays the one list of every op.
_TABLE = _C._py_composite_table()
__all__ = [e["name"] for e in _TABLE if "F" in e["variants"]]

_CPP_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
              "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
              "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "complex32": "ComplexHalf",
              "complex64": "ComplexFloat", "complex128": "ComplexDouble", "float8_e5m2": "Float8_e5m2",
              "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2fnuz": "Float8_e5m2fnuz",
              "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e8m0fnu": "Float8_e8m0fnu"}


# ---- shared helpers ----

def _cpp(dtype):
    """torch's C++ name of a dtype (Float, Long, ...), as its error messages spell it."""
    return _CPP_NAMES[str(dtype).split(".")[1]]


_UNSIGNED = (_C.uint16, _C.uint32, _C.uint64)


def _refuse_unsigned(dtype, name):
    """torch's refusal of its limited-support unsigned dtypes by a kernel that lacks them (csrc/aten/ops_unsigned.def
    for the C ops)."""
    if dtype in _UNSIGNED:
        raise NotImplementedError(f'"{name}" not implemented for \'{_cpp(dtype)}\'')


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _check_dim_exists(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _is_float(dtype):
    return dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _type_name(dtype):
    """The C++ type name torch's messages print for a dtype (caffe2's TypeMeta name)."""
    return {_C.float32: "float", _C.float64: "double", _C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16",
            _C.bool: "bool", _C.int64: "long int", _C.int32: "int", _C.int16: "short int", _C.int8: "signed char",
            _C.uint8: "unsigned char"}.get(dtype, str(dtype))


def _is_integral(dtype, include_bool=False):
    return dtype in (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64, _C.uint16, _C.uint32, _C.uint64) or (
        include_bool and dtype == _C.bool)


def _as_tensor(x, like=None):
    if isinstance(x, _C.Tensor):
        return x
    return _C.tensor(x) if like is None else _C.tensor(x, dtype=like.dtype)


def _write_out(result, out, name, inputs=None, dtype_error=None):
    """out= for a composite: torch's checks (no autograd through out=, castable dtype), then a copy. With inputs
    (the tensors of an elementwise op: a TensorIterator op in torch), Note [Elementwise composites' out=]. dtype_error:
    the op takes an out of the result's dtype only; torch's message, formatted with the dtypes' names (r, o: C++ type
    names; R, O: ScalarType names)."""
    if out is None:
        return result
    if result.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if dtype_error is not None and out.dtype != result.dtype:
        raise RuntimeError(dtype_error.format(r=_type_name(result.dtype), o=_type_name(out.dtype),
                                              R=_cpp(result.dtype), O=_cpp(out.dtype)))
    if inputs is not None:
        # Note [Elementwise composites' out=]: torch's elementwise ops check their out against their inputs (partial
        # overlap), which only the composite can do; the rest of the rules come from writing the result through an
        # elementwise identity of the table (x * True keeps every dtype, bool included), whose C out= path applies them
        # as torch's TensorIterator does: an expanded out refused before any resize, the resize and its warning,
        # strides kept, the cast into any dtype the result can be cast to (the result's dtype computed first)
        _check_partial_overlap(out, inputs)
        return _C.mul(result, True, out=out)
    if out.dtype != result.dtype and not _C.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_cpp(result.dtype)} can't be cast to the desired output type "
                           f"{_cpp(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(result.shape)
    out.copy_(result)
    return out


def _non_overlapping_and_dense(t):
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _check_partial_overlap(out, inputs):
    """torch's assert_no_partial_overlap of out with each input (pct_check_written_overlap, csrc/aten/iter.c): dense
    tensors whose memory meets without being the same elements."""
    if out.numel() == 0:
        return
    ob = out.data_ptr()
    oe = ob + out.numel() * out.element_size()
    for t in inputs:
        if not isinstance(t, _C.Tensor) or t is out or t.numel() == 0 or t.device != out.device:
            continue
        ib = t.data_ptr()
        ie = ib + t.numel() * t.element_size()
        if not (ob < ie and ib < oe) or t.untyped_storage().data_ptr() != out.untyped_storage().data_ptr():
            continue
        if not (_non_overlapping_and_dense(out) and _non_overlapping_and_dense(t)):
            continue
        if ob == ib and oe == ie and tuple(t.stride()) == tuple(out.stride()):
            continue
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                           "to a single memory location. Please clone() the tensor before performing the operation.")


def _infer_size(a, b):
    """The broadcast of shapes a and b with torch's message (infer_size) on a mismatch."""
    n = max(len(a), len(b))
    result = []
    for i in range(n):
        da = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        db = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                               f"non-singleton dimension {i}")
        result.append(db if da == 1 else da)
    return result


def _inplace(fn):
    """The in-place form of a composite: computed out of place, copied back (the copy carries autograd)."""
    def method(self, *args, **kwargs):
        result = fn(self, *args, **kwargs)
        if result.dtype != self.dtype and not _C.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_cpp(result.dtype)} can't be cast to the desired output type "
                               f"{_cpp(self.dtype)}")
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        return self.copy_(result)
    method.__name__ = fn.__name__ + "_"
    return method


_RETURN_TYPES = {}


def _return_type(name, fields):
    """torch.return_types.<name>: a named tuple that prints like torch's."""
    tp = _RETURN_TYPES.get(name)
    if tp is None:
        from collections import namedtuple
        tp = namedtuple(name, fields)
        tp.__module__ = "torch.return_types"
        tp.__repr__ = lambda self: ("torch.return_types." + name + "(\n"
                                    + ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self)) + ")")
        _RETURN_TYPES[name] = tp
    return tp


# ---- pointwise ----

def _to_float(input):
    """Integral and bool inputs computed in the default float dtype, as torch's int-to-float ops do (complex ones
    stay complex)."""
    return input if input.is_floating_point() or input.is_complex() else input.to(_C.get_default_dtype())


def _no_complex(input, name):
    if input.is_complex():
        raise RuntimeError(f"{name} is not supported for complex tensors.")


def deg2rad(input, *, out=None):
    _no_complex(input, "deg2rad")
    return _write_out(_to_float(input) * (math.pi / 180.0), out, "deg2rad", (input,))


def rad2deg(input, *, out=None):
    _no_complex(input, "rad2deg")
    return _write_out(_to_float(input) * (180.0 / math.pi), out, "rad2deg", (input,))


deg2rad_ = _inplace(deg2rad)
rad2deg_ = _inplace(rad2deg)


def positive(input):
    if input.dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def logaddexp2(input, other, *, out=None):
    """log2(2^input + 2^other) through logaddexp on the natural-log scale."""
    dtype = _C.result_type(input, other)
    if not _is_float(dtype):
        raise NotImplementedError(f"\"logaddexp2_cpu\" not implemented for '{_cpp(dtype)}'")
    ln2 = math.log(2.0)
    result = _C.logaddexp(input.to(dtype) * ln2, other.to(dtype) * ln2) / ln2
    return _write_out(result, out, "logaddexp2", (input, other))


def ldexp(input, other, *, out=None):
    """input * 2 ** other, in the promoted floating dtype (the default one for integers)."""
    dtype = _C.result_type(input, other)
    if not _is_float(dtype) and not dtype.is_complex:
        dtype = _C.get_default_dtype()
    return _write_out(input.to(dtype) * _C.pow(2.0, other.to(dtype)), out, "ldexp", (input, other))


def ldexp_(input, other):
    return input.mul_(_C.pow(2.0, other))


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0; the denominator is made safe first so the gradient at 0 is 0, not NaN."""
    x = _to_float(input)
    zero = x == 0
    px = _C.where(zero, 1.0, x) * math.pi
    return _write_out(_C.where(zero, 1.0, px.sin() / px), out, "sinc", (input,))


sinc_ = _inplace(sinc)


def heaviside(input, values, *, out=None):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    _refuse_unsigned(input.dtype, "heaviside_cpu")
    with _no_grad():
        result = _C.where(input == 0, values, (input > 0).to(input.dtype))
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _write_out(result, out, "heaviside", (input, values))


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


_INT_OF_FLOAT = {}


def _bits_dtype(dtype):
    if not _INT_OF_FLOAT:
        _INT_OF_FLOAT.update({_C.float64: _C.int64, _C.float32: _C.int32, _C.float16: _C.int16,
                              _C.bfloat16: _C.int16})
    return _INT_OF_FLOAT[dtype]


def nextafter(input, other, *, out=None):
    """The next representable value after input toward other, in the promoted dtype: one step of the
    bit pattern (the bits of a float order like the value within each sign)."""
    dtype = _C.result_type(input, other)
    if not _is_float(dtype):
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_cpp(dtype)}'")
    shape = _infer_size(list(input.shape), list(other.shape))
    with _no_grad():
        a = input.to(dtype).expand(shape).contiguous()
        b = other.to(dtype).expand(shape)
        step = _C.where((b > a) == (a > 0), 1, -1).to(_bits_dtype(dtype))
        result = (a.view(_bits_dtype(dtype)) + step).view(dtype)
        tiny = _C.tensor(1, dtype=_bits_dtype(dtype), device=a.device).view(dtype)  # the smallest subnormal
        result = _C.where(a == 0, _C.where(b > 0, tiny, -tiny), result)
        result = _C.where(a == b, b, result)
        result = _C.where(a.isnan() | b.isnan(), math.nan, result)
    return _write_out(result, out, "nextafter", (input, other))


nextafter_ = _inplace(nextafter)


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, |mantissa| in [0.5, 1); 0, inf and NaN give
    (input, 0). Computed in float64, which holds every float dtype's values and exponents exactly."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.double()
    regular = x.isfinite() & (x != 0)
    with _no_grad():
        e = _C.where(regular, x.abs(), 1.0).log2().floor() + 1
        # scale by 2^-e in two halves: 2^-e alone overflows for subnormal x
        half = (e / 2).floor()
        m = x * _C.pow(2.0, -half) * _C.pow(2.0, half - e)
        big, small = m.abs() >= 1, (m.abs() < 0.5) & regular  # log2 rounding near powers of two
        e = e + big.double() - small.double()
    # the mantissa as x times constants, so its gradient is grad * 2^-exponent (torch's formula); 2^-e again in two
    # halves, applied one after the other (their product overflows for a subnormal x)
    half = (e / 2).floor()
    mantissa = _C.where(regular, x * _C.pow(2.0, -half) * _C.pow(2.0, half - e), x).to(input.dtype)
    exponent = _C.where(regular, e, 0.0).to(_C.int32)
    if out is not None:
        if out[0].dtype != input.dtype:
            raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {_type_name(input.dtype)} but got "
                               f"{_type_name(out[0].dtype)}")
        if _is_float(out[1].dtype) or out[1].dtype == _C.bool:
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got {_type_name(out[1].dtype)}")
        _write_out(mantissa, out[0], "frexp")
        _write_out(exponent, out[1], "frexp")
        mantissa, exponent = out
    return _return_type("frexp", ["mantissa", "exponent"])(mantissa, exponent)


def _tetragamma(x):
    """polygamma(2, x), the derivative of _trigamma (its backward formula): the reflection
    psi2(x) = psi2(1 - x) - 2 pi^3 cos(pi x) / sin(pi x)^3 below 1/2, ten steps of the recurrence
    psi2(y) = psi2(y + 1) - 2 / y^3, then the asymptotic series at y + 10."""
    reflect = x < 0.5
    y = _C.where(reflect, 1 - x, x)
    acc = _C.zeros_like(y)
    for k in range(10):
        acc = acc - 2 / (y + k).pow(3)
    z = 1 / (y + 10)
    z2 = z * z
    series = -z2 * (1 + z * (1 + z * (0.5 - z2 * (1.0 / 6 - z2 * (1.0 / 6 - z2 * (0.3 - z2 * 5.0 / 6))))))
    value = acc + series
    px = x * math.pi
    return _C.where(reflect, value - 2 * math.pi ** 3 * px.cos() / px.sin().pow(3), value)


def isneginf(input, *, out=None):
    result = input == -math.inf if input.is_floating_point() else _C.zeros_like(input, dtype=_C.bool)
    if out is not None and out.dtype != _C.bool:
        raise RuntimeError("isneginf does not support non-boolean outputs.")
    return _write_out(result, out, "isneginf", (input,))


def isposinf(input, *, out=None):
    result = input == math.inf if input.is_floating_point() else _C.zeros_like(input, dtype=_C.bool)
    if out is not None and out.dtype != _C.bool:
        raise RuntimeError("isposinf does not support non-boolean outputs.")
    return _write_out(result, out, "isposinf", (input,))


def isreal(input):
    if input.dtype.is_complex:
        return imag(input) == 0
    return _C.ones_like(input, dtype=_C.bool)


def _clamp_tensor(input, bound, keep):
    """clamp against a tensor bound: input where keep(input, bound) or input is NaN, else the bound."""
    dtype = _C.result_type(input, bound)
    x, b = input.to(dtype), bound.to(dtype)
    return _C.where(keep(x, b) | x.isnan(), x, b)


_clamp_scalar, _clip_scalar = _C.clamp, _C.clip


def _clamp_tensor_bounds(input, min, max):
    """clamp with tensor bounds (torch's clamp.Tensor overload): broadcast over all three, NaN from any of them, the
    upper bound winning where min > max, and torch's gradients: the input where min <= x <= max, min where x < min
    and min < max, max where x > max or max < min (a tie of min == max above x gives no gradient at all)."""
    value = input.detach()
    if min is not None:
        value = _C.maximum(value, min.detach())
    if max is not None:
        value = _C.minimum(value, max.detach())
    ok = value == value  # a NaN anywhere stays NaN, with no gradient
    keep = ok
    if min is not None:
        keep = keep & (input >= min)
    if max is not None:
        keep = keep & (input <= max)
    result = value.detach()
    if max is not None:
        take_max = (input > max) if min is None else ((input > max) | (max < min))
        result = _C.where(ok & take_max, max, result)
    if min is not None:
        take_min = (input < min) if max is None else ((input < min) & (min < max))
        result = _C.where(ok & take_min, min, result)
    return _C.where(keep, input, result)


def _clamp_args(name, input, min, max):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if any(v is not None and not isinstance(v, _C.Tensor) for v in (min, max)):
        got = ", ".join("NoneType" if v is None else "Tensor" if isinstance(v, _C.Tensor) else type(v).__name__
                        for v in (input, min, max))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        f" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                        f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


def _clamp_with(name, scalar_op, scalar_inplace):
    def clamp(input, min=None, max=None, *, out=None):
        if not isinstance(min, _C.Tensor) and not isinstance(max, _C.Tensor):
            return scalar_op(input, min, max, out=out)
        _clamp_args(name, input, min, max)
        return _write_out(_clamp_tensor_bounds(input, min, max), out, name)

    def clamp_(input, min=None, max=None):
        if not isinstance(min, _C.Tensor) and not isinstance(max, _C.Tensor):
            return scalar_inplace(input, min, max)
        _clamp_args(name, input, min, max)
        result = _clamp_tensor_bounds(input, min, max)
        if tuple(result.shape) != tuple(input.shape):
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        if result.dtype != input.dtype and not _C.can_cast(result.dtype, input.dtype):
            raise RuntimeError(f"result type {_cpp(result.dtype)} can't be cast to the desired output type "
                               f"{_cpp(input.dtype)}")
        return input.copy_(result)

    clamp.__name__, clamp_.__name__ = name, name + "_"
    return clamp, clamp_


# torch.clamp / clip and their methods: the C op takes Number bounds; tensor bounds come here
clamp, clamp_ = _clamp_with("clamp", _clamp_scalar, _C.Tensor.clamp_)
clip, clip_ = _clamp_with("clip", _clip_scalar, _C.Tensor.clip_)


def clamp_min(input, min, *, out=None):
    if isinstance(min, _C.Tensor):
        _refuse_unsigned(_C.result_type(input, min), "maximum_cpu")
        return _write_out(_clamp_tensor(input, min, lambda x, b: x >= b), out, "clamp_min", (input, min))
    return _C.clamp(input, min=min, out=out)


def clamp_max(input, max, *, out=None):
    if isinstance(max, _C.Tensor):
        _refuse_unsigned(_C.result_type(input, max), "minimum_cpu")
        return _write_out(_clamp_tensor(input, max, lambda x, b: x <= b), out, "clamp_max", (input, max))
    return _C.clamp(input, max=max, out=out)


def clamp_min_(input, min):
    return input.copy_(clamp_min(input, min)) if isinstance(min, _C.Tensor) else input.clamp_(min=min)


def clamp_max_(input, max):
    return input.copy_(clamp_max(input, max)) if isinstance(max, _C.Tensor) else input.clamp_(max=max)


# Note [Complex and float8 dtypes] (csrc/aten/dtype.h): a real tensor is its own real part and conjugate (torch
# returns the very tensor); a complex one's real and imaginary parts are views of its storage (view_as_real's
# columns). conj() computes the conjugate (conj_physical) where torch returns a lazy view with its conjugate bit:
# values, dtype, autograd and printing match, is_conj() is False and the result does not share the input's memory.
def real(input):
    if input.dtype.is_complex:
        return _C.view_as_real(input).select(-1, 0)
    return input


def imag(input):
    if input.dtype.is_complex:
        return _C.view_as_real(input).select(-1, 1)
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def conj(input):
    if input.dtype.is_complex:
        return _C.conj_physical(input)
    return input


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_conj(input):
    return False


def _check_complex_parts(name, a, b, first, second):
    for pos, (arg, what) in enumerate(((a, first), (b, second)), 1):
        if not isinstance(arg, _C.Tensor):
            raise TypeError(f"{name}(): argument '{what}' (position {pos}) must be Tensor, not {type(arg).__name__}")
    floats = (_C.float16, _C.float32, _C.float64)
    if a.dtype not in floats or b.dtype not in floats:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_cpp(a.dtype)}"
                           f" and {_cpp(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_cpp(a.dtype)} but got scalar type "
                           f"{_cpp(b.dtype)} for second argument")


def _check_complex_out(out, part):
    """torch's complex/polar take an out= of exactly the complex dtype of their parts."""
    if out is None:
        return
    want = part.dtype.to_complex()
    if out.dtype != want:
        raise RuntimeError(f"Expected object of scalar type {_cpp(want)} but got scalar type {_cpp(out.dtype)} for "
                           "argument 'out'")


def complex(real, imag, *, out=None):
    """torch.complex: real + i imag, broadcast, of the complex dtype of their (equal) float dtype."""
    _check_complex_parts("complex", real, imag, "real", "imag")
    from .functional import broadcast_tensors
    _check_complex_out(out, real)
    r, i = broadcast_tensors(real, imag)
    return _write_out(_C.view_as_complex(_C.stack([r, i], -1)), out, "complex", (real, imag))


def polar(abs, angle, *, out=None):
    """torch.polar: abs * (cos(angle) + i sin(angle))."""
    _check_complex_parts("polar", abs, angle, "abs", "angle")
    from .functional import broadcast_tensors
    if abs.dtype == _C.float16:  # torch's polar kernels take float and double only
        raise NotImplementedError(f"\"polar_cpu\" not implemented for '{_cpp(abs.dtype)}'")
    _check_complex_out(out, abs)
    r, a = broadcast_tensors(abs, angle)
    return _write_out(_C.view_as_complex(_C.stack([r * a.cos(), r * a.sin()], -1)), out, "polar", (abs, angle))


def is_neg(input):
    return False


def adjoint(input):
    if input.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {input.dim()}-D tensor.")
    return conj(input.transpose(-2, -1))


def _imag(self):
    return imag(self)


def _matrix_h(self):
    if self.dim() == 0:
        import warnings
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return conj(self)
    if self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{hint}")
    return conj(self.transpose(0, 1))


def _batched_h(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return conj(self.transpose(-2, -1))


# ---- shapes and indexing ----

def _atleast(tensors, fn, name):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(_check_tensor(t, name)) for t in tensors[0])
    if len(tensors) == 1:
        return fn(_check_tensor(tensors[0], name))
    return tuple(fn(_check_tensor(t, name)) for t in tensors)


def _check_tensor(t, name):
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(t).__name__}), but "
                        "expected one of:\n * (Tensor input)\n * (tuple of Tensors tensors)")
    return t


def atleast_1d(*tensors):
    return _atleast(tensors, lambda t: t.reshape(1) if t.dim() == 0 else t, "atleast_1d")


def atleast_2d(*tensors):
    return _atleast(tensors, lambda t: t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t,
                    "atleast_2d")


def _to_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.reshape(1, -1, 1)
    if t.dim() == 2:
        return t.unsqueeze(-1)
    return t


def atleast_3d(*tensors):
    return _atleast(tensors, _to_3d, "atleast_3d")


def column_stack(tensors, *, out=None):
    if len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _C.hstack(columns, out=out)


def row_stack(tensors, *, out=None):
    return _C.vstack(tensors, out=out)


def block_diag(*tensors):
    """The tensors (0-d: 1x1, 1-d: one row) along the diagonal: each row block is padded with zeros to the
    full width, so gradients flow back through the pads."""
    dtype = _C.get_default_dtype() if not tensors else None
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        dtype = t.dtype if dtype is None else _C.promote_types(dtype, t.dtype)
    blocks = [t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    if not blocks:
        return _C.empty(1, 0, dtype=dtype)
    rows, left = [], 0
    for b in blocks:
        cols = b.shape[1]
        rows.append(_C.constant_pad_nd(b.to(dtype), [left, width - left - cols]))
        left += cols
    return _C.cat(rows, 0)


def _check_1d(t):
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        _check_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    from .functional import meshgrid
    grids = meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of a 1-D tensor's elements, in lexicographic order of positions."""
    _check_1d(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _C.empty(0, dtype=input.dtype, device=input.device)
    import itertools
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = [i for combo in pick(range(input.shape[0]), r) for i in combo]
    flat = input.index_select(0, _C.tensor(index, dtype=_C.int64, device=input.device))
    return flat.reshape(-1, r)


def _tri_indices(row, col, offset, dtype, device, layout, name, keep):
    if dtype is None:
        dtype = _C.int64
    if not _is_integral(dtype):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_cpp(dtype)}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    i = _C.arange(row).unsqueeze(1)
    j = _C.arange(col)
    # computed on the host from the arguments alone, then moved (a meta device keeps the shape)
    return _C.nonzero(keep(j - i, offset)).t().contiguous().to(dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False):
    return _tri_indices(row, col, offset, dtype, device, layout, "tril_indices", lambda d, o: d <= o)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False):
    return _tri_indices(row, col, offset, dtype, device, layout, "triu_indices", lambda d, o: d >= o)


def diagflat(input, offset=0):
    return _C.diag(input.reshape(-1), offset)


def rot90(input, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = _wrap_dim(dims[0], input.dim()), _wrap_dim(dims[1], input.dim())
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def take_along_dim(input, indices, dim=None, *, out=None):
    if indices.dtype != _C.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {_cpp(indices.dtype)}")
    if dim is None:
        return _write_out(input.reshape(-1).gather(0, indices.reshape(-1)), out, "take_along_dim",
                          dtype_error="Expected out tensor to have dtype {r}, but got {o} instead")
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    dim = _wrap_dim(dim, input.dim())
    sizes = list(input.shape)
    sizes[dim] = indices.shape[dim]
    shape = _infer_size(sizes, list(indices.shape))
    index = indices.expand(shape)
    shape[dim] = input.shape[dim]
    return _write_out(input.expand(shape).gather(dim, index), out, "take_along_dim",
                          dtype_error="Expected out tensor to have dtype {r}, but got {o} instead")


def narrow_copy(input, dim, start, length, *, out=None):
    return _write_out(input.narrow(dim, start, length).contiguous().clone(), out, "narrow_copy", dtype_error=(
        "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error message be improved?  "
        "If so, please report an enhancement request to PyTorch.)"))


def _scatter_view(input, src, view_of):
    """A copy of input with view_of(copy) overwritten by src (autograd: CopySlices through copy_)."""
    result = input.clone()
    view = view_of(result)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return result


def select_scatter(input, src, dim, index):
    return _scatter_view(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    dim = _wrap_dim(dim, input.dim())
    key = (slice(None),) * dim + (slice(start, end, step),)
    return _scatter_view(input, src, lambda t: t[key])


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_view(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The n-th forward difference along dim (bool: inequality), after prepending/appending."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for extra in (prepend, append):
        if extra is not None and extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    dim = _wrap_dim(dim, input.dim())
    x = input
    if prepend is not None or append is not None:
        x = _C.cat([t for t in (prepend, input, append) if t is not None], dim)
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = hi != lo if x.dtype == _C.bool else hi - lo
    if x is input and out is None:
        x = input.clone()  # torch's order 0 is a copy, never the input itself
    return _write_out(x, out, "diff")


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is in test_elements, compared in their promoted dtype: an equality table for small
    inputs, a binary search in the sorted test elements otherwise."""
    if not isinstance(elements, _C.Tensor) and not isinstance(test_elements, _C.Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (Number, Number)")
    dtype = _C.result_type(elements, test_elements)
    for t in (elements, test_elements):
        if isinstance(t, _C.Tensor) and t.dtype == _C.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    _refuse_unsigned(dtype, "isin_default_cpu")
    device = (elements if isinstance(elements, _C.Tensor) else test_elements).device
    e = _C.tensor(elements, dtype=dtype, device=device) if not isinstance(elements, _C.Tensor) else elements.to(dtype)
    t = (_C.tensor(test_elements, dtype=dtype, device=device) if not isinstance(test_elements, _C.Tensor)
         else test_elements.to(dtype))
    t = t.reshape(-1)
    if t.numel() == 0 or e.numel() == 0:
        found = _C.zeros_like(e, dtype=_C.bool)
    elif e.numel() * t.numel() <= (1 << 20):
        found = (e.unsqueeze(-1) == t).any(-1)
    else:
        sorted_t = t.sort().values
        pos = _C.searchsorted(sorted_t, e.reshape(-1)).clamp(max=t.numel() - 1)
        found = (sorted_t.gather(0, pos) == e.reshape(-1)).reshape(e.shape)
    return ~found if invert else found


# ---- linear algebra and distances ----

def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along dim (default: the first dim of size 3, deprecated in torch)."""
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning,
                      stacklevel=3)  # past the argument check (_arg_check)
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {_cpp(input.dtype)} but found {_cpp(other.dtype)}")
    d = _wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    _refuse_unsigned(input.dtype, "cross")
    a0, a1, a2 = input.unbind(d)
    b0, b1, b2 = other.unbind(d)
    result = _C.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)
    return _write_out(result, out, "cross", dtype_error="Expected out tensor to have dtype {r}, but got {o} instead")


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]: one GEMM over the batch laid side by side."""
    # torch sizes the result (batch1.size(1), batch2.size(2)) before its checks: too few dims is an IndexError
    _check_dim_exists(1, batch1.dim())
    _check_dim_exists(2, batch2.dim())
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b, n, m = batch1.shape
    if batch2.shape[0] != b:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {batch2.shape[0]}")
    if batch2.shape[1] != m:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{m} and {batch2.shape[1]}x{batch2.shape[2]})")
    p = batch2.shape[2]
    lhs = batch1.transpose(0, 1).reshape(n, b * m)
    rhs = batch2.reshape(b * m, p)
    return _C.addmm(input, lhs, rhs, beta=beta, alpha=alpha, out=out)


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    return input.copy_(addbmm(input, batch1, batch2, beta=beta, alpha=alpha))


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2); beta == 0 ignores input (NaN included)."""
    for i, v in enumerate((vec1, vec2), 1):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument vec{i}, but got {v.dim()}-D")
    prod = _C.outer(vec1, vec2)
    base = input.expand(prod.shape)
    if beta == 0:
        result = prod * alpha if alpha != 1 else prod + _C.zeros_like(base)
    else:
        result = _C.add(base * beta if beta != 1 else base, prod, alpha=alpha)
    return _write_out(result, out, "addr")


def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    return input.copy_(addr(input, vec1, vec2, beta=beta, alpha=alpha))


def _chain_order(dims):
    """Optimal parenthesization of a matrix chain (dims[i] x dims[i+1] for matrix i), as linalg.multi_dot."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


_MULTI_DOT_DTYPE = "multi_dot(): expected out tensor to have dtype {r} but got {o}"


def chain_matmul(*matrices, out=None):
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    import warnings
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=3)  # past the argument check (_arg_check)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return _write_out(matrices[0].clone(), out, "chain_matmul", dtype_error=_MULTI_DOT_DTYPE)
    for i in range(len(matrices) - 1):
        a, b = matrices[i], matrices[i + 1]
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                               f"{list(b.shape)} cannot be multiplied")
    split = _chain_order([matrices[0].shape[0]] + [m.shape[1] for m in matrices])

    def product(i, j):
        if i == j:
            return matrices[i]
        k = split[i][j]
        return product(i, k).mm(product(k + 1, j))
    return _write_out(product(0, len(matrices) - 1), out, "chain_matmul", dtype_error=_MULTI_DOT_DTYPE)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (*, P, M) and x2 (*, R, M). For p = 2 on larger inputs (or when
    asked) torch's matmul form |a|^2 - 2 a.b + |b|^2, clamped at 1e-30 before the square root."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not _is_float(t.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_cpp(t.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_cpp(x1.dtype)} but found {_cpp(x2.dtype)}")
    batch = _infer_size(list(x1.shape[:-2]), list(x2.shape[:-2]))
    a = x1.expand(batch + list(x1.shape[-2:]))
    b = x2.expand(batch + list(x2.shape[-2:]))
    mode = _CDIST_MODES[compute_mode]
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    by_mm = p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25)))
    if not by_mm and x1.dtype not in (_C.float32, _C.float64):  # torch's direct kernel: float and double only
        raise NotImplementedError(f"\"cdist\" not implemented for '{_cpp(x1.dtype)}'")
    if by_mm:
        na = a.pow(2).sum(-1, keepdim=True)
        nb = b.pow(2).sum(-1, keepdim=True)
        lhs = _C.cat([-2 * a, na, _C.ones_like(na)], -1)
        rhs = _C.cat([b, _C.ones_like(nb), nb], -1)
        return lhs.matmul(rhs.transpose(-2, -1)).clamp(min=1e-30).sqrt()
    return _C.linalg_vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, -1)


def dist(input, other, p=2):
    diff = input - other
    if not (_is_float(diff.dtype) or diff.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {_cpp(diff.dtype)} "
                           "instead.")
    return _C.linalg_vector_norm(diff, p)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from .nn.functional import pairwise_distance as f
    return f(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    from .nn.functional import cosine_similarity as f
    return f(x1, x2, dim, eps)


# ---- statistics ----

def _check_weights(w, name, num_observations, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} "
                           "dimensions")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {num_observations}")
    if integral and not _is_integral(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with {_cpp(w.dtype)} dtype")
    if not integral and not _is_float(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{_cpp(w.dtype)} dtype")
    if bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows of input (variables) over its columns (observations)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    num_observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", num_observations, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", num_observations, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = num_observations
        avg = x.sum(1) / w_sum
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=3)  # past the argument check (_arg_check)
        norm_factor = norm_factor * 0
    xm = x - avg.unsqueeze(1)
    c = xm.mm((xm if w is None else xm * w).t().conj())  # the conjugate transpose: a Hermitian covariance
    if isinstance(norm_factor, _C.Tensor):
        return _C.true_divide(c, norm_factor).squeeze()
    if norm_factor == 0:
        return (c / 0.0).squeeze()
    return (c / norm_factor).squeeze()


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.is_complex():  # torch clips the real and imaginary parts each
        return complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


def _zeros_except(y, dim):
    shape = [s for i, s in enumerate(y.shape) if i != dim]
    return _C.zeros(shape, dtype=y.dtype if y.is_floating_point() else _C.get_default_dtype(), device=y.device)


def _trapezoid_dx(x, y, dim, name):
    """The spacings x[i+1] - x[i] along dim, shaped to broadcast against y's pairs."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0] - 1
        return (x[1:] - x[:-1]).reshape(shape)
    return diff(x, dim=dim)


def _check_x(x, dx, name):
    if x is not None and not isinstance(x, _C.Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got x of type {type(x).__name__}")
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both x and dx")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim, with sample points x or a constant spacing dx (default 1)."""
    _check_x(x, dx, "trapezoid")
    dim = _check_dim_exists(dim, y.dim())
    n = y.shape[dim]
    if n == 0:
        return _zeros_except(y, dim)
    if x is None:
        ends = y.select(dim, 0) + y.select(dim, -1)
        return (y.sum(dim) - ends * 0.5) * (1 if dx is None else dx)
    spacing = _trapezoid_dx(x, y, dim, "trapezoid")
    return ((y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * spacing).sum(dim) / 2.0


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along dim (one fewer element than y)."""
    _check_x(x, dx, "cumulative_trapezoid")
    dim = _check_dim_exists(dim, y.dim())
    n = y.shape[dim]
    if n == 0:
        return _to_float(y).clone()
    pairs = y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)
    if x is None:
        return ((1 if dx is None else dx) / 2.0 * pairs).cumsum(dim)
    return (pairs * _trapezoid_dx(x, y, dim, "cumulative_trapezoid")).cumsum(dim) / 2.0


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, out, ignore_nan, name):
    """Sort along dim, then read (and interpolate between) the ranks q * (count - 1); a row with a NaN gives NaN
    (quantile) or has its NaNs left out (nanquantile)."""
    if not isinstance(q, _C.Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = _C.tensor(q, dtype=input.dtype, device=input.device)
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if q.dtype != input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    # torch reads q's values on the CPU only (elsewhere that would wait for the device; meta has none)
    if q.device.type == "cpu" and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x = input.reshape(-1)
    else:
        dim = _wrap_dim(dim, input.dim())
        x = input.movedim(dim, -1)
    values = x.sort(-1).values
    n = values.shape[-1]
    with _no_grad():
        qs = q.reshape(-1)
        nan = values.isnan()
        if ignore_nan:
            ranks = qs * ((~nan).sum(-1, keepdim=True) - 1).to(q.dtype)
            ranks = ranks.clamp(min=0)
        else:
            ranks = (qs * (n - 1)).expand(list(values.shape[:-1]) + [qs.numel()])
            ranks = _C.where(nan.any(-1, keepdim=True), float(n - 1), ranks)
        if interpolation == "lower":
            ranks = ranks.floor()
        elif interpolation == "higher":
            ranks = ranks.ceil()
        elif interpolation == "nearest":
            ranks = ranks.round()
        below = ranks.to(_C.int64)
        above = ranks.ceil().to(_C.int64)
        weights = ranks - below.to(ranks.dtype) if interpolation != "midpoint" else _C.full_like(ranks, 0.5)
    result = values.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        result = result.lerp(values.gather(-1, above), weights)
    # result: (rest..., len(q)) -> (len(q), rest...), the q dim dropped for a scalar q
    result = result.movedim(-1, 0)
    if dim is None:
        result = result.reshape([qs.numel()] + ([1] * input.dim() if keepdim else []))
    elif keepdim:
        result = result.unsqueeze(dim + 1)
    if q.dim() == 0:
        result = result.squeeze(0)
    return _write_out(result, out, name, dtype_error="quantile() out tensor must be same dtype as the input tensor")


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, out, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, out, True, "nanquantile")


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """Counts (or summed weights) of input in bins: equal-width bins over range (default: input's min to max),
    or the given bin edges; each value goes to the bin whose left edge is the last one <= it, the last bin
    closed on the right; values outside the edges are left out."""
    if input.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_cpp(input.dtype)}'")
    x = input.reshape(-1)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{[x.numel(), 1]} and weight with shape {list(weight.shape)}")
    if isinstance(bins, _C.Tensor):
        edges = bins
        nbins = edges.numel() - 1
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel() == 0:
            lo, hi = 0.0, 1.0
        else:
            lo, hi = float(x.min()), float(x.max())
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               "dimension 0")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _C.linspace(lo, hi, bins + 1, dtype=input.dtype)
        nbins = bins
    with _no_grad():
        hist = _C.zeros(max(nbins, 0), dtype=input.dtype)
        if nbins > 0 and x.numel() > 0:
            inside = (x >= edges[0]) & (x <= edges[-1])
            if isinstance(bins, _C.Tensor):
                pos = _C.searchsorted(edges.contiguous(), x.contiguous(), right=True) - 1
            else:
                # equal widths: the bin from the value's offset, then moved by one where rounding put the value
                # on the wrong side of the (linspace) edge it is compared with
                xs = x if bool(inside.all()) else _C.where(inside, x, lo)  # NaN has no bin index
                pos = ((xs - lo) * (nbins / (hi - lo))).floor().clamp(0, nbins - 1).to(_C.int64)
                pos = pos - (xs < edges.gather(0, pos)).to(_C.int64)
                pos = pos + (xs >= edges.gather(0, (pos + 1).clamp(max=nbins))).to(_C.int64)
            pos = pos.clamp(0, nbins - 1)
            w = inside.to(input.dtype) if weight is None else _C.where(inside, weight.reshape(-1).to(input.dtype), 0.0)
            hist = _C.bincount(pos, weights=w, minlength=nbins).to(input.dtype)
        if density:
            hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    if out is not None:
        _write_out(hist, out[0], "histogram")
        _write_out(edges, out[1], "histogram")
        hist, edges = out
    return _return_type("histogram", ["hist", "bin_edges"])(hist, edges)


# ---- windows ----

def _window(name, length, dtype, layout, device, requires_grad, make):
    """The checks and 0/1-length cases of the window functions; make(n) builds a longer one."""
    if dtype is None:
        dtype = _C.get_default_dtype()
    if not _is_float(dtype):
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={dtype})")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    if length == 0:
        w = _C.empty(0, dtype=dtype, device=device)
    elif length == 1:
        w = _C.ones(1, dtype=dtype, device=device)
    else:
        w = make(_C.arange(length, dtype=dtype, device=device))
    return w.requires_grad_(requires_grad) if requires_grad else w


def _periodic(make, periodic):
    """A periodic window is the symmetric window one sample longer, without its last sample."""
    if not periodic:
        return make
    return lambda n: make(_C.arange(n.numel() + 1, dtype=n.dtype, device=n.device))[:-1]


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    def make(n):
        return (n * (2 * math.pi / (n.numel() - 1))).cos() * -beta + alpha
    return _window("hamming_window", window_length, dtype, layout, device, requires_grad, _periodic(make, periodic))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    def make(n):
        return (n * (2 * math.pi / (n.numel() - 1))).cos() * -0.5 + 0.5
    return _window("hann_window", window_length, dtype, layout, device, requires_grad, _periodic(make, periodic))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def make(n):
        w = n * (2.0 / (n.numel() - 1))
        return _C.where(n < (n.numel() - 1) // 2 + 1, w, 2 - w)
    return _window("bartlett_window", window_length, dtype, layout, device, requires_grad, _periodic(make, periodic))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def make(n):
        w = n * (math.pi / (n.numel() - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _window("blackman_window", window_length, dtype, layout, device, requires_grad, _periodic(make, periodic))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    def make(n):
        half = (n.numel() - 1) / 2.0
        r = ((n - half) / half).pow(2)
        return _C.i0((1 - r).clamp(min=0).sqrt() * beta) / _C.i0(_C.tensor(beta, dtype=n.dtype, device=n.device))
    return _window("kaiser_window", window_length, dtype, layout, device, requires_grad, _periodic(make, periodic))


# ---- activations, pixel shuffle and dropout ----

def _pixel_check(input, name, factor_name, r):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           "dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor_name}, but got {r}")
    return list(input.shape[:-3]), input.shape[-3], input.shape[-2], input.shape[-1]


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    lead, c, h, w = _pixel_check(input, "pixel_shuffle", "upscale_factor", r)
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    x = x.permute(list(range(k)) + [k, k + 3, k + 1, k + 4, k + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    lead, c, h, w = _pixel_check(input, "pixel_unshuffle", "downscale_factor", r)
    for side, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r != 0:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                               f"input.size({d})={size} is not divisible by {r}")
    k = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    x = x.permute(list(range(k)) + [k, k + 2, k + 4, k + 1, k + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])


def relu_(input):
    return input.relu_()


def selu(input):
    from .nn.functional import selu as f
    return f(input)


def selu_(input):
    from .nn.functional import selu as f
    return f(input, inplace=True)


def celu(input, alpha=1.0):
    from .nn.functional import celu as f
    return f(input, alpha)


def celu_(input, alpha=1.0):
    from .nn.functional import celu as f
    return f(input, alpha, inplace=True)


def _check_threshold(input, threshold):
    """torch converts threshold to the compute type with its range check (float for float16/bfloat16): the fill of an
    empty tensor of that type does the same check."""
    if input.dtype == _C.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    low = input.dtype in (_C.float16, _C.bfloat16)
    _C.empty(0, dtype=_C.float32 if low else input.dtype).fill_(threshold)


def threshold(input, threshold, value, *, out=None):
    """value where input <= threshold, else input (value cast to input's dtype)."""
    _check_threshold(input, threshold)
    # torch's threshold checks no memory overlap (its TensorIterator is told not to): no inputs to check against
    return _write_out(input.masked_fill(input <= threshold, value), out, "threshold", ())


def threshold_(input, threshold, value):
    _check_threshold(input, threshold)
    return input.masked_fill_(input <= threshold, value)


def hardshrink(input, lambd=0.5, *, out=None):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"hardshrink_cpu\" not implemented for '{_cpp(input.dtype)}'")
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_cpp(out.dtype)} but expected {_cpp(input.dtype)}")
    return _write_out(input.masked_fill((input >= -lambd) & (input <= lambd), 0), out, "hardshrink", (input,))


def prelu(input, weight):
    from .nn.functional import prelu as f
    return f(input, weight)


def _dropout_noise(input, p, feature):
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    else:
        shape = list(input.shape)
    return _C.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _dropout_impl(input, p, train, feature, alpha, inplace):
    """torch's CPU dropout family: a Bernoulli(1 - p) mask per element (per (sample, channel) for feature
    dropout), scaled to keep the mean; alpha dropout keeps SELU's mean and variance instead (dropped
    values go to SELU's negative saturation)."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = _C.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    noise = _dropout_noise(input, p, feature)
    if not alpha:
        noise = noise.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    selu_alpha = 1.7580993408473766  # SELU's scale * alpha
    a = 1.0 / math.sqrt((selu_alpha * selu_alpha * p + 1) * (1 - p))
    b = (noise - 1) * (selu_alpha * a) + selu_alpha * a * p
    noise = noise * a
    return input.mul_(noise).add_(b) if inplace else input * noise + b


def _dropout_variant(name, feature, alpha, inplace):
    def fn(input, p, train):
        return _dropout_impl(input, p, train, feature, alpha, inplace)
    fn.__name__ = fn.__qualname__ = name
    return fn


# torch.dropout(input, p, train) and its alpha / feature / in-place forms
dropout = _dropout_variant("dropout", False, False, False)
dropout_ = _dropout_variant("dropout_", False, False, True)
alpha_dropout = _dropout_variant("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout_variant("alpha_dropout_", False, True, True)
feature_dropout = _dropout_variant("feature_dropout", True, False, False)
feature_dropout_ = _dropout_variant("feature_dropout_", True, False, True)
feature_alpha_dropout = _dropout_variant("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout_variant("feature_alpha_dropout_", True, True, True)


# ---- Tensor methods ----

def _method_quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return quantile(self, q, dim, keepdim, interpolation=interpolation)


def _method_nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return nanquantile(self, q, dim, keepdim, interpolation=interpolation)


heaviside_ = _inplace(heaviside)


def _impl(entry):
    """The function an entry's "module:function" names (this module's own, or another one's)."""
    module, _, name = entry["impl"].partition(":")
    if module == __name__:
        return globals()[name]
    import importlib
    return getattr(importlib.import_module(module), name)


# the table's functions written in other modules (pyctorch._composites_more) are bound here too, so that __all__
# names every torch.<name> of the table
for _entry in _TABLE:
    if "F" in _entry["variants"] and _entry["name"] not in globals():
        globals()[_entry["name"]] = _impl(_entry)

# the Tensor methods of the table's M entries; the method forms that differ from the function (no out=) and the
# attributes that are no ops (Tensor.real, .imag, .H, .mH) are named here
_METHOD_FORMS = {"quantile": _method_quantile, "nanquantile": _method_nanquantile}
# these replace _tensor_aliases' scalar-only forms: torch also takes a tensor bound
_REPLACING = ("clamp_min", "clamp_max", "clamp", "clamp_", "clip", "clip_")
_METHODS = {e["name"]: _METHOD_FORMS.get(e["name"]) or _impl(e) for e in _TABLE
            if "M" in e["variants"] and e["name"] not in _REPLACING}
_METHODS.update({"real": property(real), "imag": property(_imag), "mH": property(_batched_h), "H": property(_matrix_h)})
# pyctorch/_tensor.py attaches TENSOR_METHODS (guarded, below) and these
TENSOR_METHOD_OVERRIDES = {e["name"]: _impl(e) for e in _TABLE if e["name"] in _REPLACING and "M" in e["variants"]}

# Note [Python-level tensor arguments]: torch's TypeError for a non-tensor argument (the Tensor methods above
# are checked only where they take tensors besides self)
from ._arg_check import guard as _guard, guard_methods as _guard_methods  # noqa: E402
_TENSOR_ARGS = {
    "hardshrink": (None, ("input",)), "pixel_unshuffle": (None, ("input",)), "pixel_shuffle": (None, ("input",)),
    "threshold": (None, ("input",)), "threshold_": (None, ("input",)), "addr": (None, ("input", "vec1", "vec2")),
    "adjoint": (None, ("input",)), "block_diag": (None, ("*tensors",)), "cartesian_prod": (None, ("*tensors",)),
    "cdist": (None, ("x1", "x2")), "celu_": (None, ("input",)), "chain_matmul": (None, ("*matrices...",)),
    "clamp_max_": (None, ("input",)), "clamp_min_": (None, ("input",)), "combinations": (None, ("input",)),
    "conj": (None, ("input",)), "corrcoef": (None, ("input",)),
    "cosine_similarity": (None, ("x1", "x2")), "cov": (None, ("input", "fweights", "aweights")),
    "cross": (None, ("input", "other")), "cumulative_trapezoid": (None, ("y",)), "deg2rad": (None, ("input",)),
    "deg2rad_": (None, ("input",)), "diagflat": (None, ("input",)), "diagonal_scatter": (None, ("input", "src")),
    "diff": (None, ("input", "prepend", "append")), "frexp": (None, ("input",)),
    "heaviside": (None, ("input", "values")), "histogram": (None, ("input", "weight")),
    "is_conj": (None, ("input",)), "is_neg": (None, ("input",)), "isneginf": (None, ("input",)),
    "isposinf": (None, ("input",)), "isreal": (None, ("input",)), "ldexp_": (None, ("input",)),
    "ldexp": (None, ("input",)), "nanquantile": (None, ("input",)), "quantile": (None, ("input",)),
    "pairwise_distance": (None, ("x1", "x2")), "positive": (None, ("input",)), "prelu": (None, ("input", "weight")),
    "rad2deg": (None, ("input",)), "rad2deg_": (None, ("input",)), "real": (None, ("input",)),
    "relu_": (None, ("input",)), "resolve_conj": (None, ("input",)), "resolve_neg": (None, ("input",)),
    "rot90": (None, ("input",)), "selu_": (None, ("input",)), "sinc": (None, ("input",)), "sinc_": (None, ("input",)),
    "slice_scatter": (None, ("input", "src")), "take_along_dim": (None, ("input", "indices")),
    "trapezoid": (None, ("y",)), "trapz": (None, ("y",)), "dist": (None, ("input", "other")),
    "logaddexp2": (None, ("input", "other")), "nextafter": (None, ("input", "other")),
    "nextafter_": (None, ("input", "other")),
}
_guard(globals(), _TENSOR_ARGS)
_METHOD_TENSOR_ARGS = {name: _TENSOR_ARGS.get(name, (None, ())) for name in _METHODS}
_METHOD_TENSOR_ARGS.update({
    "addr_": ("addr_", ("input", "vec1", "vec2")), "heaviside_": ("heaviside_", ("input", "values")),
    "addbmm": (None, ("input", "batch1", "batch2")), "addbmm_": ("addbmm_", ("input", "batch1", "batch2")),
    "select_scatter": (None, ("input", "src")), "ldexp_": ("ldexp_", ("input", "other")),
    "ldexp": (None, ("input", "other")),
})
_GUARDED_METHODS = _guard_methods(_METHODS, _METHOD_TENSOR_ARGS)
TENSOR_METHODS = {name: _GUARDED_METHODS.get(name, fn) for name, fn in _METHODS.items()}
