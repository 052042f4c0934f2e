"""Temporary patches that let symbolic tracing see calls it cannot intercept otherwise.

Note [Tracing torch functions]
torch records `torch.relu(proxy)` through the __torch_function__ protocol: every torch function checks its
arguments for an override. pyctorch's functions are C functions without that check, and given a Proxy they
would raise a TypeError. So, for the duration of Tracer.trace() (and only then), every public callable of
the namespaces in _names.TORCH_NAMESPACES (pyctorch, pyctorch.nn.functional, pyctorch.linalg,
pyctorch.special, pyctorch.fft, where imported) is replaced in its module by a recording wrapper: called with
a Proxy anywhere in its arguments (lists and dicts included, as for torch.cat([a, b])) it records a
call_function node whose target is the original function; called with anything else it calls the
original. Under the torch alias these are the same module objects, so `torch.relu` and `F.relu` are patched
too. Everything is restored when trace() returns or raises.
Functions imported by name (`from torch import relu`) are bound in the importing module's globals, not
reached through the namespaces: patch_imported_torch_functions() wraps them too, in the globals of the
traced function and of the forward of every traced-through module class.
What this cannot reach (torch's protocol does): torch functions held elsewhere (a class attribute, a
closure, a helper module's globals), and pyctorch-internal calls made by code that does run while tracing,
such as the forward of a non-leaf module that calls _C directly; torch.fx.wrap("name") at module scope of
such a helper covers the first case. Nor can it reach the methods of a real tensor given
a Proxy argument (`self.buffer.add(proxy)`, recorded by torch as call_method): pyctorch.Tensor is an immutable
C type, so its methods cannot be swapped for the trace, and the call raises pyctorch's TypeError. Operators
are fine (`self.buffer + proxy`: the tensor's __add__ declines and Proxy.__radd__ records operator.add), as
are `torch.add(self.buffer, proxy)` and `proxy.add(self.buffer)`.
The same patcher wraps the functions registered with torch.fx.wrap() in the globals they were registered
from, and the Module.__call__ / Module.__getattr__ hooks of the tracer.
"""
import sys

from ._names import TORCH_NAMESPACES, is_torch_function
from .node import map_aggregate
from .proxy import Proxy

__all__ = ["Patcher", "find_proxy", "recording_wrapper", "patch_torch_namespaces"]

# Callables that inspect or configure rather than compute: they must see the Proxy itself (is_tensor says
# False, as with torch) or never meet one; wrapping them would only cost time.
_NOT_RECORDED = frozenset({"is_tensor", "is_storage", "get_default_dtype", "set_default_dtype", "manual_seed",
                           "seed", "initial_seed", "get_rng_state", "set_rng_state", "set_printoptions",
                           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
                           "install_as_torch", "load", "save", "compile", "device", "Size", "dtype"})


_FUNCTION_TYPES = frozenset({"function", "builtin_function", "builtin_function_or_method", "_torch_function_wrapper"})


def find_proxy(args, kwargs):
    """The first Proxy found in the (nested) arguments, or None."""
    found = []

    def check(x):
        if not found and isinstance(x, Proxy):
            found.append(x)
        return x
    map_aggregate(args, check)
    if not found:
        map_aggregate(kwargs, check)
    return found[0] if found else None


class _RecordingFunction:
    """The stand-in for a function while tracing: records a call_function node (target: the original) when
    any argument is a Proxy, else calls the original. It compares and hashes equal to the original, so code
    running during a trace or a Transformer that checks `node.target == torch.relu` still matches."""

    def __init__(self, original, is_wrapped):
        self._pyctorch_fx_original = original
        self._is_wrapped = is_wrapped
        self.__wrapped__ = original  # inspect.signature() follows it
        self.__name__ = getattr(original, "__name__", "function")
        self.__qualname__ = getattr(original, "__qualname__", self.__name__)
        self.__doc__ = getattr(original, "__doc__", None)

    def __call__(self, *args, **kwargs):
        proxy = find_proxy(args, kwargs)
        if proxy is None:
            return self._pyctorch_fx_original(*args, **kwargs)
        result = proxy.tracer.create_proxy("call_function", self._pyctorch_fx_original, args, kwargs)
        if self._is_wrapped:
            result.node.meta["is_wrapped"] = True
        return result

    def __eq__(self, other):
        return other is self or other is self._pyctorch_fx_original

    def __hash__(self):
        return hash(self._pyctorch_fx_original)

    def __repr__(self):
        return repr(self._pyctorch_fx_original)


def recording_wrapper(original, is_wrapped=False):
    """A stand-in for original that records a call_function node when any argument is a Proxy."""
    return _RecordingFunction(original, is_wrapped)


class Patcher:
    """Records (container, name, old value) for each patch and restores them all, newest first, on exit."""

    def __init__(self):
        self._undo = []

    def set_item(self, mapping, name, value):
        """mapping[name] = value until exit (a module's __dict__, a function's globals)."""
        missing = name not in mapping
        self._undo.append((mapping, name, None if missing else mapping[name], missing, False))
        mapping[name] = value

    def set_attr(self, obj, name, value):
        """setattr(obj, name, value) until exit (class attributes such as Module.__call__)."""
        missing = name not in obj.__dict__
        self._undo.append((obj, name, obj.__dict__.get(name), missing, True))
        setattr(obj, name, value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self._undo:
            where, name, old, missing, is_attr = self._undo.pop()
            if is_attr:
                if missing:
                    delattr(where, name)
                else:
                    setattr(where, name, old)
            elif missing:
                where.pop(name, None)
            else:
                where[name] = old
        return False


def patch_torch_namespaces(patcher):
    """Note [Tracing torch functions]: wrap the public functions of the imported torch namespaces."""
    import pyctorch
    for lazy in sorted(getattr(pyctorch, "_DROPIN_FUNCTIONS", ())):  # loaded on first use: load them now
        getattr(pyctorch, lazy, None)
    for module_name in TORCH_NAMESPACES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        namespace = module.__dict__
        for name, value in list(namespace.items()):
            # Plain functions only: classes and callable objects (torch.FloatTensor) must stay isinstance-able.
            if name.startswith("_") or name in _NOT_RECORDED or type(value).__name__ not in _FUNCTION_TYPES:
                continue
            if hasattr(value, "_pyctorch_fx_original"):
                continue
            patcher.set_item(namespace, name, recording_wrapper(value))


def patch_imported_torch_functions(patcher, globals_dicts):
    """Note [Tracing torch functions]: wrap the torch functions imported by name into these globals."""
    seen = set()
    for namespace in globals_dicts:
        if id(namespace) in seen:
            continue
        seen.add(id(namespace))
        for name, value in list(namespace.items()):
            if type(value).__name__ in _FUNCTION_TYPES and is_torch_function(value):
                patcher.set_item(namespace, name, recording_wrapper(value))
