"""torch.compile's backends: a name or a callable turned into what compiles a captured GraphModule.

A backend is called as torch calls it, `backend(gm, example_inputs)`, and returns a callable taking the graph's
inputs (the argument tensors, in order) and returning its outputs. "eager" runs the GraphModule's generated Python
(the recorded op calls, without the Python layers between them); "aot_eager" too, with the backward built ahead of
time (Note [AOT backward] in pyctorch/_inductor/aot.py); "inductor", the default, is pyctorch's compiler
(pyctorch/_inductor).
"""
__all__ = ["register_backend", "lookup_backend", "list_backends"]

_REGISTRY = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """torch._dynamo.backends.registry.register_backend: makes compiler_fn usable as torch.compile(backend=name)."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    _REGISTRY[name or compiler_fn.__name__] = compiler_fn
    return compiler_fn


def _eager(gm, example_inputs, **kwargs):
    return gm.forward


def _aot_eager(gm, example_inputs, **kwargs):
    """The graph and its backward built ahead of time (Note [AOT backward]), run as generated Python, unfused."""
    from pyctorch._inductor.aot import aot_compile
    from pyctorch._inductor.codegen import python_runner
    return aot_compile(gm, example_inputs, python_runner, python_runner) or gm.forward


def _inductor(gm, example_inputs, **kwargs):
    from pyctorch._inductor import compile_fx
    return compile_fx(gm, example_inputs, **kwargs)


register_backend(_eager, "eager")
register_backend(_aot_eager, "aot_eager")
register_backend(_inductor, "inductor")


def lookup_backend(backend):
    """The compiler function of a backend name or callable; torch's InvalidBackend error for unknown names."""
    if callable(backend):
        return lambda gm, example_inputs, **kwargs: backend(gm, example_inputs)
    if backend in _REGISTRY:
        return _REGISTRY[backend]
    from . import list_backends as known
    if backend in known(exclude_tags=()):
        return _REGISTRY["eager"]  # accepted names with no pyctorch compiler of their own run the graph as is
    from .exc import InvalidBackend
    raise InvalidBackend(name=backend)


def list_backends(exclude_tags=("debug", "experimental")):
    from . import list_backends as known
    return known(exclude_tags)
