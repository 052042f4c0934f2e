"""The decorators that mark functions for the TorchScript compiler: export, ignore, unused, _drop, _overload.

pyctorch has no TorchScript compiler (Note [Eager TorchScript]), so these only record the same marker
torch records (`fn._torchscript_modifier`) and return the function unchanged: decorated functions and
methods stay callable and behave as plain Python, exactly as in torch outside of script mode.
"""
import ast
import inspect
import textwrap
import warnings


class FunctionModifiers:
    """The values of `fn._torchscript_modifier` (torch's wording, so code that compares them keeps working)."""
    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = "if this method is not scripted, copy the python method onto the scripted model"
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def is_scripting():
    """False: pyctorch never runs code under the TorchScript compiler."""
    return False


def export(fn):
    """Mark a module method as a TorchScript entry point; the method itself is returned unchanged."""
    fn._torchscript_modifier = FunctionModifiers.EXPORT
    return fn


def unused(fn):
    """Mark a function (or a property) the compiler would replace by a raise; it stays callable here."""
    if isinstance(fn, property):
        for accessor in (fn.fget, fn.fset):
            if accessor is not None:
                accessor._torchscript_modifier = FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = FunctionModifiers.UNUSED
    return fn


def ignore(drop=False, **kwargs):
    """Mark a function the compiler leaves to Python: `@ignore` or `@ignore(drop=True)` (then as `unused`)."""
    if callable(drop):  # used bare: @torch.jit.ignore
        drop._torchscript_modifier = FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    if kwargs.pop("drop_on_export", None):
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
        drop = True
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)

    def decorator(fn):
        fn._torchscript_modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
        return fn
    return decorator


def _drop(fn):
    fn._torchscript_modifier = FunctionModifiers._DROP
    return fn


def _copy_to_script_wrapper(fn):
    fn._torchscript_modifier = FunctionModifiers.COPY_TO_SCRIPT_WRAPPER
    return fn


def get_torchscript_modifier(fn):
    if not callable(fn):
        return None
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "_torchscript_modifier", FunctionModifiers.DEFAULT)


def is_ignored_fn(fn):
    return get_torchscript_modifier(fn) in (FunctionModifiers.UNUSED, FunctionModifiers.IGNORE,
                                            FunctionModifiers._DROP)


def should_drop(fn):
    return get_torchscript_modifier(fn) in (FunctionModifiers.UNUSED, FunctionModifiers._DROP)


# ---- overload declarations ----
# `@_overload def f(x: int) -> int: ...` declares a signature of the function defined after it. The
# declarations are kept (the compiler would use them); calls reach whatever `f` is bound to last.

_overloaded_fns = {}      # qualified name -> [declarations]
_overloaded_methods = {}  # qualified name -> {class name -> [declarations]}

_OVERLOAD_EXAMPLE = """
Example usage of overload function:
@torch.jit._overload
def my_function(x: type0) -> type0: # decl 1
    pass

@torch.jit._overload
def my_function(x: type1) -> type1: # decl 2
    pass

def my_function(x):                 # implementation
    if isinstance(x, type0):
        return x
    elif isinstance(x, type1):
        return x
"""


def _qualified_name(fn):
    return f"{fn.__module__}.{fn.__qualname__}"


def _check_overload_body(fn):
    """A declaration's body must be `pass` or `...` (torch's check, raised the same way)."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {fn}.", stacklevel=3)
        return
    body = ast.parse(source).body[0].body
    only = body[0] if len(body) == 1 else None
    is_pass = isinstance(only, ast.Pass)
    is_ellipsis = (isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant)
                   and only.value.value is Ellipsis)
    if not (is_pass or is_ellipsis):
        head = "\n".join(source.split("\n")[:3])
        raise RuntimeError("Only `pass` statement or `...` can be the body of overload declaration:\n" + head
                           + " <- Expecting `pass` or `...` here!\n" + _OVERLOAD_EXAMPLE)


def _overload(func):
    _check_overload_body(func)
    _overloaded_fns.setdefault(_qualified_name(func), []).append(func)
    return func


def _overload_method(func):
    _check_overload_body(func)
    class_name = func.__qualname__.rpartition(".")[0].rpartition(".")[2] or "<module>"
    _overloaded_methods.setdefault(_qualified_name(func), {}).setdefault(class_name, []).append(func)
    return func


def _get_fn_overloads(qual_name):
    return _overloaded_fns.get(qual_name)


def _clear_fn_overloads(qual_name):
    del _overloaded_fns[qual_name]
