"""torch.finfo / torch.iinfo: numeric limits of floating and integer dtypes."""
from . import _C

# bits, eps, max, smallest normal, resolution (10 ** -decimal digits of precision)
_FLOAT_INFO = {
    "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
    "bfloat16": (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
    "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
    "float64": (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
    # the float8 formats, as torch 2.13 reports them (e5m2fnuz's eps and e8m0fnu's min included)
    "float8_e4m3fn": (8, 0.125, 448.0, 0.015625, 1.0),
    "float8_e5m2": (8, 0.25, 57344.0, 6.103515625e-05, 1.0),
    "float8_e4m3fnuz": (8, 0.125, 240.0, 0.0078125, 1.0),
    "float8_e5m2fnuz": (8, 0.125, 57344.0, 3.0517578125e-05, 1.0),
    "float8_e8m0fnu": (8, 1.0, 1.7014118346046923e38, 5.877471754111438e-39, 1.0),
}
# a complex dtype's limits are those of its real parts
_COMPLEX_REAL = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}
_INT_INFO = {
    "uint8": (8, 0, 255),
    "int8": (8, -128, 127),
    "int16": (16, -32768, 32767),
    "int32": (32, -2147483648, 2147483647),
    "int64": (64, -9223372036854775808, 9223372036854775807),
    "uint16": (16, 0, 65535),
    "uint32": (32, 0, 4294967295),
    "uint64": (64, 0, 18446744073709551615),
    "bool": (8, 0, 1),
}


def _name(dtype):
    return repr(dtype).split(".", 1)[1]


class finfo:
    """Machine limits of a floating dtype (defaults to the default dtype)."""

    def __init__(self, type=None):
        dtype = _C.get_default_dtype() if type is None else type
        name = _name(dtype)
        name = _COMPLEX_REAL.get(name, name)
        if name not in _FLOAT_INFO:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle '{dtype}'")
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _FLOAT_INFO[name]
        # e8m0fnu has no sign: its smallest value is its smallest normal
        self.min = self.smallest_normal if name == "float8_e8m0fnu" else -self.max
        self.tiny = self.smallest_normal
        self.dtype = name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, type):
        name = _name(type)
        if name not in _INT_INFO:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'")
        self.bits, self.min, self.max = _INT_INFO[name]
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
