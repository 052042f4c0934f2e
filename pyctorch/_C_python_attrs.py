"""Private `torch._C` functions that libraries call, written in Python and set on pyctorch._C.

pyctorch._C is the C extension; these attributes need no C (they report state that lives in
Python modules or that pyctorch does not have), so rather than growing the extension they are
added to its module object at import (`install()`, called from pyctorch/__init__.py). Only
names are added that _C does not define itself; those are what popular libraries touch:
  * `_log_api_usage_once(event)`: torchvision and others log API use at construction; pyctorch
    logs nothing, so it does nothing;
  * `_get_tracing_state()` / `_is_tracing()`: None / False, there is no JIT tracer;
  * `_get_cudnn_enabled` / `_set_cudnn_enabled`, `_get_mkldnn_enabled` / `_set_mkldnn_enabled`:
    read and write the stored flags of torch.backends.cudnn / mkldnn (neither library is used);
  * `_get_privateuse1_backend_name()`: torch's default name, "privateuseone";
  * `_jit_set_profiling_executor`, `_jit_set_profiling_mode`, `_jit_override_can_fuse_on_cpu`,
    `_jit_override_can_fuse_on_gpu`, `_jit_set_texpr_fuser_enabled`, `_jit_texpr_fuser_enabled`,
    `_jit_can_fuse_on_cpu`, `_jit_can_fuse_on_gpu`: the JIT executor and fuser switches old test
    harnesses flip; stored and returned as torch does (the setters of the executor and the
    profiling mode return the previous value), with no JIT behind them;
  * `DisableTorchFunction` / `DisableTorchFunctionSubclass`: the guards of the __torch_function__
    protocol, context managers over the state the C half keeps (csrc/python/torch_function.c);
  * `_TensorMeta`: the metaclass of torch's Tensor classes, which Lightning's lazy checkpoint loader names;
    pyctorch's Tensor is a plain C type, so its metaclass, and this name, is `type` itself;
  * `_nn._parse_to(*args, **kwargs)`: the (device, dtype, non_blocking, memory_format) of a `.to(...)`
    call, which nn.Module.to and libraries that mirror it (accelerate, Lightning) use.
"""
import types

_jit_flags = {"profiling_executor": True, "profiling_mode": True, "can_fuse_on_cpu": True,
              "can_fuse_on_gpu": True, "texpr_fuser_enabled": True}


def _log_api_usage_once(event):
    """torch records the first use of an API for telemetry; pyctorch keeps no such log."""


def _get_tracing_state():
    return None


def _is_tracing():
    return False


def _get_cudnn_enabled():
    from .backends import cudnn
    return cudnn.enabled


def _set_cudnn_enabled(enabled):
    from .backends import cudnn
    cudnn.enabled = bool(enabled)


def _get_mkldnn_enabled():
    from .backends import mkldnn
    return mkldnn.enabled


def _set_mkldnn_enabled(enabled):
    from .backends import mkldnn
    mkldnn.enabled = bool(enabled)


def _get_privateuse1_backend_name():
    return "privateuseone"


def _swap_jit_flag(name, value):
    previous, _jit_flags[name] = _jit_flags[name], bool(value)
    return previous


def _jit_set_profiling_executor(value):
    return _swap_jit_flag("profiling_executor", value)


def _jit_set_profiling_mode(value):
    return _swap_jit_flag("profiling_mode", value)


def _jit_override_can_fuse_on_cpu(value):
    _jit_flags["can_fuse_on_cpu"] = bool(value)


def _jit_override_can_fuse_on_gpu(value):
    _jit_flags["can_fuse_on_gpu"] = bool(value)


def _jit_can_fuse_on_cpu():
    return _jit_flags["can_fuse_on_cpu"]


def _jit_can_fuse_on_gpu():
    return _jit_flags["can_fuse_on_gpu"]


def _jit_set_texpr_fuser_enabled(value):
    _jit_flags["texpr_fuser_enabled"] = bool(value)


def _jit_texpr_fuser_enabled():
    return _jit_flags["texpr_fuser_enabled"]


class _TorchFunctionGuard:
    """Sets the protocol's per-thread state for the block and restores the previous one after it."""

    _state = 0

    def __enter__(self):
        from . import _C
        state = _C._get_torch_function_state()
        self._previous = _C._set_torch_function_state(max(state, self._state))
        return self

    def __exit__(self, *exc):
        from . import _C
        _C._set_torch_function_state(self._previous)
        return False


class DisableTorchFunctionSubclass(_TorchFunctionGuard):
    """torch._C.DisableTorchFunctionSubclass: __torch_function__ of subclasses off in the block (modes stay on)."""

    _state = 1


class DisableTorchFunction(_TorchFunctionGuard):
    """torch._C.DisableTorchFunction: __torch_function__ off in the block, subclasses and modes alike."""

    _state = 2


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n")


def _parse_to(*args, **kwargs):
    """torch._C._nn._parse_to: (device, dtype, non_blocking, memory_format) of to()'s three signatures."""
    from . import _C, _layouts

    def invalid():
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        return TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                         + _TO_SIGNATURES)

    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format", "tensor"}
    if unknown:
        raise invalid()
    device = dtype = None
    rest = list(args)
    if rest and isinstance(rest[0], _C.Tensor):
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
    elif "tensor" in kwargs:
        device, dtype = kwargs["tensor"].device, kwargs["tensor"].dtype
    else:
        if rest and (rest[0] is None or isinstance(rest[0], (str, int, _C.device))) and not isinstance(rest[0], bool):
            device = rest.pop(0)
        elif "device" in kwargs:
            device = kwargs["device"]
        if rest and isinstance(rest[0], _C.dtype):
            dtype = rest.pop(0)
        elif "dtype" in kwargs:
            dtype = kwargs["dtype"]
    non_blocking = rest.pop(0) if rest else kwargs.get("non_blocking", False)
    copy = rest.pop(0) if rest else kwargs.get("copy", False)
    if rest or not isinstance(non_blocking, bool) or not isinstance(copy, bool):
        raise invalid()
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise invalid()
    memory_format = kwargs.get("memory_format")
    if memory_format is not None and not isinstance(memory_format, _layouts.memory_format):
        raise invalid()
    if copy:
        raise RuntimeError(".to() does not accept copy argument")
    if device is not None and not isinstance(device, _C.device):
        device = _C.device(device)
    return device, dtype, non_blocking, memory_format


_nn = types.SimpleNamespace(_parse_to=_parse_to)

_NAMES = ("_nn", "_log_api_usage_once", "_get_tracing_state", "_is_tracing", "_get_cudnn_enabled",
          "_set_cudnn_enabled", "_get_mkldnn_enabled", "_set_mkldnn_enabled",
          "_get_privateuse1_backend_name", "_jit_set_profiling_executor", "_jit_set_profiling_mode",
          "_jit_override_can_fuse_on_cpu", "_jit_override_can_fuse_on_gpu", "_jit_can_fuse_on_cpu",
          "_jit_can_fuse_on_gpu", "_jit_set_texpr_fuser_enabled", "_jit_texpr_fuser_enabled",
          "DisableTorchFunctionSubclass", "DisableTorchFunction", "_TensorMeta")


_TensorMeta = type  # type(pyctorch.Tensor): see the module docstring


def install(c_module):
    """Set each missing name on the extension module (a name _C defines itself is kept)."""
    from ._zip_container import PyTorchFileReader, PyTorchFileWriter  # torch._C's spellings of the classes
    for name, value in (("PyTorchFileReader", PyTorchFileReader), ("PyTorchFileWriter", PyTorchFileWriter)):
        if not hasattr(c_module, name):
            setattr(c_module, name, value)
    for name in _NAMES:
        if not hasattr(c_module, name):
            setattr(c_module, name, globals()[name])
    # torch._C._nn's spellings of the sliding-block ops (F.unfold / F.fold call them)
    _nn.im2col, _nn.col2im = c_module._im2col, c_module._col2im
