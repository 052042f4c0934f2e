"""Tensor-argument checks for the functions pyctorch writes in Python (Note [Python-level tensor arguments]).

Note [Python-level tensor arguments]
torch's functions are C bindings whose argument parser rejects a list (or any non-tensor) where a Tensor is
expected with a TypeError naming the argument: "relu_(): argument 'input' (position 1) must be Tensor, not list".
The same functions written in Python in pyctorch would instead fail somewhere inside with an AttributeError (or,
for the trivial ones such as `conj`, return the list). `guard(namespace, table)` wraps the functions a module
lists, once at import, so the check runs before the body and raises torch's TypeError. Only the listed tensor
parameters are checked (an isinstance per argument); a parameter whose default is None, or whose name the table
writes with a trailing '?', may be None.
A name written '*name' is the var-positional parameter: each element must be a tensor, and where torch accepts
one sequence of tensors in its place (`meshgrid([a, b])`) the table says so with a trailing '...'.
"""
import functools

from . import _C

__all__ = ["guard"]

_Tensor = _C.Tensor


def _fail_arg(op, name, position, value):
    where = f" (position {position})" if position is not None else ""
    raise TypeError(f"{op}(): argument '{name}'{where} must be Tensor, not {type(value).__name__}")


def _fail_element(index, value):
    raise TypeError(f"expected Tensor as element {index} in argument 0, but got {type(value).__name__}")


def _plan(fn, names):
    """(positional checks, keyword checks, var-positional check) for `fn` and the parameter names of the table
    (made on the first call, keeping inspect out of `import pyctorch`)."""
    import inspect
    params = list(inspect.signature(fn).parameters.values())
    by_name = {p.name: (i, p) for i, p in enumerate(params)}
    positional, keyword, variadic = [], [], None
    for k, spec in enumerate(names):
        if spec.startswith("*"):
            variadic = (spec.endswith("..."), k)
            continue
        may_be_none = spec.endswith("?")
        spec = spec.rstrip("?")
        entry = by_name.get(spec)
        if entry is None:  # a generic (self, *args) wrapper: torch's name at the table's position
            positional.append((k, spec, may_be_none))
            continue
        i, p = entry
        optional = may_be_none or p.default is None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append((i, spec, optional))
        keyword.append((spec, i if p.kind != p.KEYWORD_ONLY else None, optional))
    return tuple(positional), tuple(keyword), variadic


def _wrap(fn, op, names, method=False):
    """fn checked; `method`: fn serves as a Tensor method (self is not checked, positions count from the first
    argument after it, as torch's method messages do)."""
    plan = None
    first = 1 if method else 0

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        nonlocal plan
        if plan is None:
            plan = _plan(fn, names)
        positional, keyword, variadic = plan
        n = len(args)
        for i, name, optional in positional:
            if first <= i < n:
                a = args[i]
                if not isinstance(a, _Tensor) and not (optional and a is None):
                    _fail_arg(op, name, i + 1 - first, a)
        if kwargs:
            for name, i, optional in keyword:
                if name in kwargs:
                    a = kwargs[name]
                    if not isinstance(a, _Tensor) and not (optional and a is None):
                        _fail_arg(op, name, None, a)
        if variadic is not None:
            elements = args
            if variadic[0] and n == 1 and isinstance(args[0], (list, tuple)):
                elements = args[0]
            for j, a in enumerate(elements):
                if not isinstance(a, _Tensor):
                    _fail_element(j, a)
        return fn(*args, **kwargs)
    checked.__tensor_args__ = names
    return checked


def guard_methods(methods, table):
    """{name: checked method} for the methods of `methods` ({name: function}) whose table entry has tensor
    parameters besides self."""
    return {name: _wrap(methods[name], op or name, names, method=True)
            for name, (op, names) in table.items() if len(names) > 1}


def guard(namespace, table):
    """Replace each function `namespace[name]` of `table` ({name: (torch's op name or None, parameter names)})
    by its checked form (once: a function already checked is left as it is)."""
    for name, (op, names) in table.items():
        fn = namespace[name]
        if getattr(fn, "__tensor_args__", None) is None:
            namespace[name] = _wrap(fn, op or name, names)
