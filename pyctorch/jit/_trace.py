"""torch.jit.trace / trace_module without a graph recorder (Note [Eager TorchScript]).

Note [Tracing without a graph]
torch's trace records the tensor operations of one run into a graph and returns a ScriptModule or
ScriptFunction replaying that graph. pyctorch records nothing: trace runs the callable once on the example
inputs (so a trace that would fail in torch because the code fails still fails here), then returns the
callable itself. Unlike a torch trace, the result still follows data-dependent Python control flow and
still reads globals; that is the case where torch would emit a TracerWarning, and here the eager result
is the one torch's untraced code gives.
"""
import warnings

from ._script import script


class TracerWarning(Warning):
    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error + "\n"
        if tensor_compare_error is not None:
            self.message += tensor_compare_error
        super().__init__(self.message)


def is_tracing():
    """False: pyctorch never records a trace."""
    return False


def _as_args(example_inputs):
    """torch's rule: a tuple is the argument list, anything else (a tensor) is the single argument."""
    return example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)


def _run(fn, example_inputs, example_kwarg_inputs):
    if example_kwarg_inputs is not None:
        if not isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
        return fn(**example_kwarg_inputs)
    return fn(*_as_args(example_inputs))


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """Run `func` (a function, method or nn.Module) once on the example inputs and return `func` itself.

    No graph is recorded (Note [Tracing without a graph]): the returned callable is the original and keeps
    its Python control flow, so code torch would trace with a TracerWarning (branches on tensor values,
    Python numbers taken from tensors) gives its eager result on every later call instead of replaying the
    first one. check_inputs, when given, are run too (each a tuple of arguments).
    """
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs should not be None")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=2)
    _run(func, example_inputs, example_kwarg_inputs)
    if check_trace and check_inputs:
        for inputs in check_inputs:
            if isinstance(inputs, dict):
                func(**inputs)
            else:
                func(*_as_args(inputs))
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5, strict=True,
                 _force_outplace=False, _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """Run each named method of `mod` once on its example inputs ({"forward": x, ...}) and return `mod` itself."""
    warnings.warn("`torch.jit.trace_method` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    from ..nn import Module
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            method(**example)
        else:
            method(*_as_args(example))
    return mod


def script_if_tracing(fn):
    """Script `fn` when called during tracing; pyctorch never traces, so calls run `fn` as Python."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not is_tracing():
            return fn(*args, **kwargs)
        return script(wrapper.__original_fn)(*args, **kwargs)

    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


_script_if_tracing = script_if_tracing
