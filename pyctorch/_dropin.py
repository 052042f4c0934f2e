"""Top-level torch functions that torch scripts call for their side effects.

Flags that only steer backends pyctorch does not have (TF32, cuDNN, inter-op pools,
compilers) are stored and read back faithfully, so a script that sets them and reads them
runs as under torch; what they cannot change on a CPU-only pyctorch is said in each docstring.
Loaded on first use through pyctorch.__getattr__ (keeping `import pyctorch` fast).
"""

__all__ = ["compile", "get_num_interop_threads", "set_num_interop_threads",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_default_device", "get_default_device",
           "equal", "is_complex", "ravel", "_assert"]

_state = {
    "interop_threads": None,          # None: never set (default: the intra-op thread count)
    "matmul_precision": "highest",
    "deterministic": False,
    "deterministic_warn_only": False,
}


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, **kwargs):
    """torch.compile: a module comes back wrapped in an OptimizedModule, a function in a wrapper; their calls
    run captured, guarded graphs through the backend (Note [Compiled callables] in pyctorch/_dynamo/eval_frame.py).
    With no model, a decorator. Arguments are checked as torch checks them; an unknown backend name raises
    torch's InvalidBackend here, at compile time."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable, **kwargs)
        return decorator
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    import functools
    from ._dynamo.backends import lookup_backend
    from ._dynamo.eval_frame import CompiledCallable, OptimizedModule
    from .nn import Module
    lookup_backend(backend)
    settings = {"backend": backend, "fullgraph": fullgraph, "dynamic": dynamic, "mode": mode, "options": options}
    if isinstance(model, Module):
        return OptimizedModule(model, settings)
    owner = getattr(model, "__self__", None)
    compiled = CompiledCallable(model, module=owner if isinstance(owner, Module) else None, backend=backend,
                                fullgraph=fullgraph, dynamic=dynamic, options=options)

    def compile_wrapper(*args, **kwargs):
        return compiled(*args, **kwargs)
    try:
        functools.update_wrapper(compile_wrapper, model)
    except (AttributeError, TypeError):
        pass
    compile_wrapper._torchdynamo_orig_callable = model
    compile_wrapper._compiled_callable = compiled
    return compile_wrapper


def get_num_interop_threads():
    """The inter-op pool size torch would use. pyctorch runs ops on the calling thread (its
    kernels parallelise inside with OpenMP), so this only reports the stored value."""
    n = _state["interop_threads"]
    if n is None:
        from ._C import get_num_threads
        return get_num_threads()
    return n


def set_num_interop_threads(n):
    """Stores the inter-op thread count (see get_num_interop_threads); like torch, it can be set once."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_interop_threads(): argument 'num' must be int, not {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _state["interop_threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop_threads"] = n


def set_float32_matmul_precision(precision):
    """'highest' (default), 'high' or 'medium'. pyctorch's float32 matmuls always compute in
    full float32 (there is no TF32/bfloat16 fast path on CPU), so any setting gives 'highest'
    numbers; the value is stored and also drives backends.cuda.matmul.allow_tf32, as in torch."""
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision
    _push_matmul_settings()


def _push_matmul_settings():
    """Hands the float32 precision and backends.cuda.matmul's reduced-precision flags to the C GEMMs (the CUDA
    backend's cuBLAS calls read them; the CPU computes float32 in float32 whatever they say)."""
    from . import _C
    from .backends.cuda import matmul

    def flag(value):
        return bool(value[0] if isinstance(value, tuple) else value)
    _C._set_matmul_settings(("highest", "high", "medium").index(_state["matmul_precision"]),
                            flag(matmul.allow_fp16_reduced_precision_reduction),
                            flag(matmul.allow_bf16_reduced_precision_reduction))


def get_float32_matmul_precision():
    return _state["matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Stores the flag. pyctorch's CPU kernels are deterministic for a fixed thread count, so
    no operator raises or warns because of it."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state["deterministic"] = mode
    _state["deterministic_warn_only"] = warn_only if mode else False


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["deterministic_warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0/'default', 1/'warn', 2/'error': the same as use_deterministic_algorithms(False),
    (True, warn_only=True), (True)."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state["deterministic"]:
        return 0
    return 1 if _state["deterministic_warn_only"] else 2


_default_device = None


def set_default_device(device):
    """The device factories without a device= argument (and torch.tensor) make their results on; None: the CPU."""
    global _default_device
    from . import _C
    from ._C import device as _device, _set_default_device
    d = None if device is None else device if isinstance(device, _device) else _device(device)
    if d is not None and d.type == "cuda" and not _C._cuda_built():
        raise AssertionError("Torch not compiled with CUDA enabled")  # refused at once rather than at each factory
    _set_default_device(d)
    _default_device = d


_device_context_stack = []  # the defaults that `with torch.device(...)` blocks entered over, innermost last


def _device_context_enter(device):
    """`with torch.device(d):` (csrc/python/pytypes.c): d is the default device inside the block."""
    previous = _default_device
    set_default_device(device)
    _device_context_stack.append(previous)


def _device_context_exit():
    set_default_device(_device_context_stack.pop())


def get_default_device():
    from ._C import device as _device
    return _default_device if _default_device is not None else _device("cpu")


def _assert(condition, message):
    """torch._assert: `assert condition, message` as a function, which symbolic tracing can record (a one-element
    tensor condition counts by its truth value)."""
    if not condition:
        raise AssertionError(message)


def equal(input, other):
    """True when both tensors have the same shape and elements (torch.equal)."""
    from . import _C as C
    if not isinstance(input, C.Tensor) or not isinstance(other, C.Tensor):
        raise TypeError("equal(): argument 'input' and 'other' must be Tensor")
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all())


def _tensor_arg(name, input):
    from . import _C as C
    if not isinstance(input, C.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def is_complex(input):
    """Whether input's dtype is complex (pyctorch has no complex dtypes yet, so False)."""
    _tensor_arg("is_complex", input)
    return bool(input.dtype.is_complex)


def ravel(input):
    _tensor_arg("ravel", input)
    return input.reshape(-1)
