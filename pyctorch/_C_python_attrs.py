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
    protocol, context managers over the state the C half keeps (csrc/python/torch_function.c).
"""

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


_NAMES = ("_log_api_usage_once", "_get_tracing_state", "_is_tracing", "_get_cudnn_enabled",
          "_set_cudnn_enabled", "_get_mkldnn_enabled", "_set_mkldnn_enabled",
          "_get_privateuse1_backend_name", "_jit_set_profiling_executor", "_jit_set_profiling_mode",
          "_jit_override_can_fuse_on_cpu", "_jit_override_can_fuse_on_gpu", "_jit_can_fuse_on_cpu",
          "_jit_can_fuse_on_gpu", "_jit_set_texpr_fuser_enabled", "_jit_texpr_fuser_enabled",
          "DisableTorchFunctionSubclass", "DisableTorchFunction")


def install(c_module):
    """Set each missing name on the extension module (a name _C defines itself is kept)."""
    for name in _NAMES:
        if not hasattr(c_module, name):
            setattr(c_module, name, globals()[name])
