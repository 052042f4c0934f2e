"""Runs a script under the torch alias with stand-ins for what pyctorch's C layer lacks yet.

Usage: python -m pyctorch.as_torch c_gap_standins.py SCRIPT [args]

transformers needs three things only C can add (pyctorch.dtype objects cannot be made from Python,
and device types are parsed in csrc/python/pytypes.c):
  * torch.complex64, torch.float8_e4m3fn, torch.float8_e5m2 as dtypes (safetensors.torch keys a
    dict by complex64; transformers' cache_utils reads torch.finfo(torch.float8_e4m3fn).max and
    maps float8_e5m2 at import),
  * torch.device("meta") (PreTrainedModel.init_weights compares against it); pyctorch has had the real meta
    device since issue 16's backends, so this stand-in is no longer installed.
None of them is used to make a tensor in these scripts. Each stand-in is installed only while pyctorch
lacks the real one, so once C has them this runner changes nothing (and test_transformers' plain
runs stop skipping). Everything else the libraries touch is pyctorch's own.
"""
import runpy
import sys

import pyctorch

MISSING_DTYPES = [n for n in ("complex64", "float8_e4m3fn", "float8_e5m2") if not hasattr(pyctorch, n)]


def _has_meta_device():
    try:
        pyctorch.device("meta")
        return True
    except RuntimeError:
        return False


HAS_META = _has_meta_device()


class _StandInDtype:
    """Only a name: hashable, printable, never a tensor's dtype."""

    def __init__(self, name):
        self.name = name
        self.is_complex = name.startswith("complex")
        self.is_floating_point = name.startswith("float")
        self.is_signed = True
        self.itemsize = 8 if self.is_complex else 1

    def __repr__(self):
        return "torch." + self.name


class _Float8Info:
    def __init__(self, dtype):  # torch.finfo(torch.float8_e4m3fn) / float8_e5m2
        e4 = dtype.name == "float8_e4m3fn"
        self.bits, self.dtype = 8, dtype.name
        self.max, self.min = (448.0, -448.0) if e4 else (57344.0, -57344.0)
        self.eps, self.tiny = (0.125, 2.0 ** -6) if e4 else (0.25, 2.0 ** -14)
        self.smallest_normal, self.resolution = self.tiny, (1.0 if e4 else 1.0)


def install():
    for name in MISSING_DTYPES:
        setattr(pyctorch, name, _StandInDtype(name))
    if MISSING_DTYPES:
        real_finfo = pyctorch.finfo

        def finfo(dtype=None):
            if isinstance(dtype, _StandInDtype):
                return _Float8Info(dtype)
            return real_finfo() if dtype is None else real_finfo(dtype)
        pyctorch.finfo = finfo
    if not HAS_META:
        real_device = pyctorch.device

        class _MetaDevice:
            type, index = "meta", None

            def __eq__(self, other):
                return isinstance(other, _MetaDevice)

            def __hash__(self):
                return hash("meta")

            def __repr__(self):
                return "device(type='meta')"

        class _DeviceType(type):
            def __instancecheck__(cls, obj):
                return isinstance(obj, (real_device, _MetaDevice))

            def __call__(cls, *args, **kwargs):
                if args and args[0] == "meta":
                    return _MetaDevice()
                return real_device(*args, **kwargs)

        class device(metaclass=_DeviceType):
            pass
        pyctorch.device = device


if __name__ == "__main__":
    install()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
