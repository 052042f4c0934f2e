"""torch.jit.script and the script classes, with TorchScript's eager meaning.

Note [Eager TorchScript]
pyctorch has no TorchScript compiler or graph IR. torch.jit behaves here as torch's own does with
TorchScript turned off (PYTORCH_JIT=0): `script` returns the function, module or class it is given,
`trace` returns the traced callable (after running it once on the example inputs), so the code runs as
ordinary Python with eager results. What needs the graph (saving a scripted model, `.graph`, `.code`,
operator lists) raises a RuntimeError that says so. The script classes exist for isinstance checks and
subclassing; nothing pyctorch returns is an instance of ScriptFunction or RecursiveScriptModule.
"""
import inspect
import sys
import typing
import warnings

from ._types import Attribute


def _deprecated(name):
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=3)


class ScriptWarning(Warning):
    pass


def _module_base():
    from ..nn import Module
    return Module


class ScriptModule(_module_base()):
    """Base of modules meant for TorchScript. Here an ordinary nn.Module whose methods run as Python; a
    `torch.jit.Attribute(value, type)` assigned to it stores `value`, as torch's ScriptModule does."""

    def __init__(self, arg=None):
        super().__init__()

    def __setattr__(self, name, value):
        if isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)

    def save(self, f, **kwargs):
        from ._serialization import save
        save(self, f)

    def define(self, src):
        raise RuntimeError("ScriptModule.define compiles TorchScript source, which pyctorch cannot: "
                           "write the method in Python instead")


class RecursiveScriptModule(ScriptModule):
    """The class torch.jit.script gives a scripted nn.Module in torch; pyctorch's script returns the module itself."""


class TracedModule(ScriptModule):
    """The class torch.jit.trace gives a traced nn.Module in torch; pyctorch's trace returns the module itself."""


class TopLevelTracedModule(TracedModule):
    pass


class RecursiveScriptClass:
    """A scripted class instance in torch; never made by pyctorch."""


class ScriptFunction:
    """A compiled function in torch; pyctorch's script returns the Python function itself, never one of these."""

    def __reduce__(self):
        import pickle
        raise pickle.PickleError("ScriptFunction cannot be pickled")


def script_method(fn):
    """Marks a ScriptModule method for compilation in torch; the method is returned unchanged."""
    return fn


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Return `obj` (a function, nn.Module, class, dict or list) itself: eager TorchScript (Note [Eager TorchScript]).

    The result computes what torch's scripted object computes, as Python; it is not a ScriptModule or
    ScriptFunction and has no `.graph`/`.code`, and torch.jit.save refuses it.
    """
    _deprecated("script")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=2)
    return obj


def interface(obj):
    """Declare a TorchScript interface class (checked as torch checks it); the class is returned unchanged."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    module_interface = issubclass(obj, _module_base()) and len(obj.mro()) == 3
    if not module_interface and len(obj.mro()) > 2:
        raise RuntimeError("TorchScript interface does not support inheritance yet. "
                           "Please directly inherit from 'object' or 'nn.Module'.")
    obj.__torch_script_interface__ = f"__torch__.{obj.__module__}.{obj.__qualname__}"
    return obj


# names a TorchScript source can use without importing them (the Python spellings of its builtins)
_SOURCE_NAMESPACE = {name: getattr(typing, name) for name in ("Any", "Dict", "List", "Optional", "Tuple", "Union")}


class CompilationUnit:
    """A namespace of functions defined from TorchScript source text.

    TorchScript source is Python syntax, so `define` executes it as Python (with `torch` bound to pyctorch and
    the typing names available): the functions then run with eager semantics (Note [Eager TorchScript]).
    """

    def __init__(self, lang=None, _frames_up=0):
        self._functions = {}
        if lang is not None:
            self.define(lang, _frames_up=_frames_up + 1)

    def define(self, src, rcb=None, _frames_up=0):
        import pyctorch
        caller = sys._getframe(_frames_up + 1)
        namespace = dict(caller.f_globals)
        namespace.update(caller.f_locals)
        namespace.update(_SOURCE_NAMESPACE)
        namespace["torch"] = pyctorch
        before = set(namespace)
        exec(compile(src, "<torch.jit.CompilationUnit>", "exec"), namespace)
        for name, value in namespace.items():
            if name not in before and inspect.isfunction(value):
                self._functions[name] = value

    def find_function(self, name):
        return self._functions.get(name)

    def get_functions(self):
        return list(self._functions.values())

    def __getattr__(self, name):
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"'CompilationUnit' has no function named '{name}'")
