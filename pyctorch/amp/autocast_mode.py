"""torch.autocast / torch.amp.autocast: regions where listed operators run in a lower
precision (bfloat16 by default on the CPU) or in float32 (Note [Dispatch hooks] in
csrc/autograd/profiler.h; the per-op policies are the list in csrc/autograd/autocast.c).

Operators of the table are cast in C; composite functions that torch lists as single ops
(F.linear, the convolutions, scaled_dot_product_attention, the losses...) are wrapped with the
same policies at the end of pyctorch/nn/functional.py, so their outputs have torch's dtypes."""
import collections.abc
import functools
import warnings

from .. import _C

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_SUPPORTED_DTYPES = ("bfloat16", "float16")


def is_autocast_available(device_type):
    """Whether autocast knows the device type ("cpu", "cuda", ...)."""
    return _C._is_autocast_available(device_type)


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    decorate_autocast.__script_unsupported = "@autocast() decorator is not supported in script mode"
    return decorate_autocast


def _cuda_available():
    from .. import cuda
    return cuda.is_available()


class autocast:
    """Context manager (and decorator) enabling autocast for `device_type`: inside it, matmul,
    linear, convolutions and attention run in `dtype` (torch.bfloat16 by default on the CPU),
    losses and a few precision-sensitive ops in float32, cat/stack in the widest input dtype.
    Gradients flow back through the casts in the inputs' own dtypes. Regions nest;
    autocast(enabled=False) turns it off inside a region. The state is thread-local."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _C.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        self._cache_enabled = _C.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        name = self.device.upper()
        if enabled:
            if self.device == "cuda" and not _cuda_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
            elif str(self.fast_dtype).split(".")[-1] not in _SUPPORTED_DTYPES:
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _C.is_autocast_cache_enabled()
        self.prev = _C.is_autocast_enabled(self.device)
        self.prev_fastdtype = _C.get_autocast_dtype(self.device)
        _C.set_autocast_enabled(self.device, self._enabled)
        _C.set_autocast_dtype(self.device, self.fast_dtype)
        _C.autocast_increment_nesting()
        _C.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if _C.autocast_decrement_nesting() == 0:
            _C.clear_autocast_cache()
        _C.set_autocast_enabled(self.device, self.prev)
        _C.set_autocast_dtype(self.device, self.prev_fastdtype)
        _C.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean to "
                            f"use autocast as a context manager? For example:\n"
                            f"    with torch.autocast(device_type=...):\n"
                            f"        output = model(input)")
        return autocast_decorator(self, func)


class _UnmanagedAutocast(autocast):
    pass


def _enter_autocast(*vals):
    mode = _UnmanagedAutocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode):
    mode.__exit__(None, None, None)


def _cast(value, device_type, dtype):
    """Floating tensors (not float64) of `device_type` inside value (nested containers) cast to dtype."""
    if isinstance(value, _C.Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype is not _C.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the forward of a custom autograd.Function: with `cast_inputs`, inside an
    autocast region the floating inputs are cast to it and forward runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _C.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _C.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_region = _C.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if in_region:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the backward of a custom autograd.Function: runs it with the autocast state
    its forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
