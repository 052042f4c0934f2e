"""torch.overrides: the __torch_function__ protocol for Tensor subclasses, tensor-like types and modes.

Where a call decides to come here: Note [Torch function check] (csrc/python/torch_function.h). Every op of the
table, the Tensor operators, indexing, properties and the functions written in Python (wrapped at import by
`_install`) check their arguments in C; only a call with an overloaded argument, or made while a
TorchFunctionMode is on this thread's stack, reaches `_dispatch_from_c` below, which does what torch's
handle_torch_function does: the innermost mode first (popped while it runs), then each overloaded argument's
`__torch_function__`, subclasses before their bases, left to right, until one returns something other than
NotImplemented.

The `types` handed to handlers: for the op-table functions, operators, indexing and properties (torch's C++
entry points) the overloaded types other than the exact Tensor; for functions written in Python (torch's
Python-level `handle_torch_function` callers: nn.functional, Tensor.backward, ...) the exact Tensor is included,
as in torch.
"""
import collections
import contextlib
import functools
import inspect
import keyword
import types as _types

from . import _C

__all__ = [
    "get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
    "has_torch_function", "resolve_name", "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function",
    "enable_reentrant_dispatch", "TorchFunctionMode", "BaseTorchFunctionMode", "get_default_nowrap_functions",
    "redispatch_function",
]

_disabled_torch_function_impl = _C._disabled_torch_function_impl
has_torch_function = _C._has_torch_function
has_torch_function_unary = _C._has_torch_function_unary
has_torch_function_variadic = _C._has_torch_function_variadic
_Wrapper = _C._torch_function_wrapper


def _is_overloaded_type(t, include_tensor):
    if t is _C.Tensor:
        return include_tensor
    method = getattr(t, "__torch_function__", None)
    return method is not None and method is not _disabled_torch_function_impl


def _get_overloaded_args(relevant_args, get_type_fn=None, include_tensor=True):
    """The arguments whose types implement __torch_function__, one per type, each subclass before its bases and
    otherwise in the order given."""
    get_type = type if get_type_fn is None else get_type_fn
    seen, overloaded = set(), []
    for arg in relevant_args:
        arg_type = get_type(arg)
        if arg_type in seen or not _is_overloaded_type(arg_type, include_tensor):
            continue
        seen.add(arg_type)
        index = len(overloaded)
        for i, old in enumerate(overloaded):
            if issubclass(arg_type, get_type(old)):
                index = i
                break
        overloaded.insert(index, arg)
    return overloaded


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _C._pop_torch_function_stack()
    try:
        yield mode
    finally:
        _C._push_on_torch_function_stack(mode)


def _handle(public_api, relevant_args, args, kwargs, include_tensor=True):
    overloaded = _get_overloaded_args(relevant_args, include_tensor=include_tensor)
    types = tuple(map(type, overloaded))
    if _C._is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = resolve_name(public_api) or f"torch.{getattr(public_api, '__name__', public_api)}"
    tried = ([f"  - mode object {_get_current_function_mode()}"] if _C._is_torch_function_mode_enabled() else []) + \
        [f"  - tensor subclass {type(arg)}" for arg in overloaded]
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
                    "NotImplemented:\n\n" + "\n".join(tried) +
                    "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call public_api through the modes and the __torch_function__ of the overloaded relevant_args."""
    return _handle(public_api, relevant_args, args, kwargs)


def _flatten(args, kwargs):
    """The arguments the C check looked at: each one, and the items of a list or tuple argument."""
    out = []
    for value in list(args) + list(kwargs.values()):
        out.append(value)
        if type(value) in (list, tuple):
            out.extend(value)
    return out


# Tensor slots that torch writes in Python (their handlers get a kwargs dict)
_PYTHON_LEVEL_SLOTS = {"__rsub__": {}, "__rtruediv__": {}, "__rpow__": {}, "__rfloordiv__": {}, "__rlshift__": {},
                       "__rrshift__": {}, "__rmatmul__": {}}


def _dispatch_from_c(func, args, kwargs):
    """What the C check calls (Note [Torch function check]): func(*args, **kwargs) through the protocol.

    As in torch, a function written in Python hands its handlers a kwargs dict and counts plain tensors among the
    overloaded types; the C entry points (ops, C methods, slots, properties) give None for no keywords."""
    python_level = type(func) is _Wrapper and isinstance(func.__wrapped__, _types.FunctionType)
    relevant = _flatten(args, kwargs)
    if not python_level and not kwargs:
        kwargs = None
        if type(func) is _types.WrapperDescriptorType and func.__name__ in _PYTHON_LEVEL_SLOTS:
            kwargs = dict(_PYTHON_LEVEL_SLOTS[func.__name__])
    return _handle(func, relevant, args, kwargs, include_tensor=python_level)


def is_tensor_like(inp):
    """Whether inp is a Tensor or an object whose type implements __torch_function__."""
    return type(inp) is _C.Tensor or hasattr(inp, "__torch_function__")


def wrap_torch_function(dispatcher):
    """Decorator: the function goes through __torch_function__ for the arguments dispatcher(*args, **kwargs)
    returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch re-enables its Python dispatcher inside; pyctorch has no such dispatcher, so this is empty."""
    yield


# ---------------------------------------------------------------- modes

def _get_current_function_mode():
    n = _C._len_torch_function_stack()
    return _C._get_function_stack_at(n - 1) if n else None


def _get_current_function_mode_stack():
    return [_C._get_function_stack_at(i) for i in range(_C._len_torch_function_stack())]


def _push_mode(mode):
    _C._push_on_torch_function_stack(mode)


def _pop_mode():
    return _C._pop_torch_function_stack()


def _is_torch_function_mode_enabled():
    return _C._is_torch_function_mode_enabled()


class TorchFunctionMode:
    """A context manager whose __torch_function__ sees every torch call made while it is innermost on the stack.

    While it runs, the mode is off the stack, so calling `func` inside it does not come back here."""

    inner = None

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function unchanged (a base for modes that handle only some)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# ---------------------------------------------------------------- Tensor's default handler

def get_default_nowrap_functions():
    """Functions whose results the default handler leaves as they are: the field accesses (the gradient and the
    view's base), whose users expect `a.grad is a.grad`."""
    Tensor = _C.Tensor
    return {Tensor._base.__get__, Tensor.grad.__get__}


_get_default_nowrap_functions = get_default_nowrap_functions


def redispatch_function(func, types, args, kwargs=None):
    """Calls func skipping one level of __torch_function__ dispatch (from a handler): func's own check is skipped,
    the ops it calls are dispatched as usual."""
    return _C._skip_one_hop_torch_function(func, types, args, kwargs)


def _convert(ret, cls):
    if cls is _C.Tensor:
        return ret
    if isinstance(ret, _C.Tensor) and not isinstance(ret, cls):
        ret = _C._as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret)
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """torch.Tensor.__torch_function__: run func with subclasses' handlers off, results as cls."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with _C.DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _get_default_nowrap_functions():
            return ret
        return _convert(ret, cls)


def _as_subclass(self, cls):
    """Tensor.as_subclass(cls): self's data as an instance of cls, in self's autograd graph."""
    return _C._as_subclass(self, cls)


# ---------------------------------------------------------------- what is overridable

# Tensor methods the protocol leaves alone (torch ignores them too)
_TENSOR_IGNORED = frozenset({
    "as_subclass", "_make_subclass", "__torch_function__", "__new__", "__init__", "__init_subclass__",
    "__subclasshook__", "__class_getitem__", "__getattribute__", "__setattr__", "__delattr__", "__dir__",
    "__sizeof__", "__class__", "_is_view", "__reduce__", "__getstate__",
    "__hash__", "__str__", "__init_subclass__",
})
# Tensor dunder methods that go through the protocol when written in Python or C as methods
_TENSOR_DUNDERS = frozenset({"__format__", "__reduce_ex__", "__deepcopy__", "__array__", "__array_wrap__",
                             "__setstate__", "__dlpack__", "__dlpack_device__", "__contains__", "__reversed__"})
# functions of the torch namespace that take no tensor to dispatch on, or are the protocol's own
_TORCH_IGNORED_NAMES = frozenset({
    "typename", "is_tensor", "is_storage", "set_default_tensor_type", "set_default_device", "get_default_device",
    "set_rng_state", "get_rng_state", "manual_seed", "initial_seed", "seed", "set_default_dtype",
    "get_default_dtype", "is_grad_enabled", "set_grad_enabled", "is_inference_mode_enabled", "compile",
    "set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads", "promote_types",
    "can_cast", "result_type", "set_printoptions", "get_printoptions", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "set_float32_matmul_precision", "get_float32_matmul_precision",
    "install_as_torch", "save", "load", "from_numpy", "frombuffer", "from_dlpack", "broadcast_shapes",
    "set_autocast_enabled", "is_autocast_enabled", "has_torch_function", "handle_torch_function",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "printoptions",
})


def _is_python_function(value):
    return isinstance(value, _types.FunctionType) and (getattr(value, "__module__", "") or "").startswith("pyctorch")


_wrappers = {}  # function -> its wrapper: a function exported by several namespaces gets one wrapper


def _wrap_namespace(namespace, names=None, ignored=frozenset()):
    """Replace the Python functions of a module namespace (a dict) by wrappers that check for
    __torch_function__ first (Note [Torch function check])."""
    home = namespace.get("__name__")
    for name in list(namespace if names is None else names):
        value = namespace.get(name)
        if name.startswith("_") or name in ignored or not _is_python_function(value):
            continue
        known = value in _wrappers
        namespace[name] = _wrappers.setdefault(value, _C._torch_function_wrap(value))
        if home and value.__qualname__ == name and not known:
            value.__module__ = home  # pickled by reference as <namespace>.<name>, where the wrapper is found


def _wrap_function(name, value):
    """One function of the torch namespace loaded on first use (pyctorch/_dropin.py), behind the check unless
    it takes no tensor."""
    if name in _TORCH_IGNORED_NAMES or not _is_python_function(value):
        return value
    return _wrappers.setdefault(value, _C._torch_function_wrap(value))


def _property_through_protocol(name, prop):
    """A Tensor property written in Python whose getter reaches handlers as Tensor.<name>.__get__, as the C
    properties' getters do (Note [Torch function check])."""
    getter = prop.fget

    def fget(self):
        if _C._has_torch_function_unary(self):
            return handle_torch_function(getattr(_C.Tensor, name).__get__, (self,), self)
        return getter(self)
    fget.__name__ = getattr(getter, "__name__", name)
    return property(fget, prop.fset, prop.fdel, prop.__doc__)


def tensor_methods():
    """What pyctorch/_tensor.py attaches last: Tensor.__torch_function__, as_subclass, and the Tensor methods
    written in Python or in C behind the check (the op table's methods have it already)."""
    method_descriptor = type(_C.Tensor.dim)
    methods = {}
    for name, value in list(vars(_C.Tensor).items()):
        if name in _TENSOR_IGNORED or (name.startswith("__") and name not in _TENSOR_DUNDERS):
            continue
        if isinstance(value, _types.FunctionType) or type(value) is method_descriptor:
            methods[name] = _C._torch_function_wrap(value)
        elif isinstance(value, property) and value.fget is not None:
            methods[name] = _property_through_protocol(name, value)
    methods["__torch_function__"] = classmethod(_tensor_torch_function)
    methods["as_subclass"] = _as_subclass
    return methods


def _torch_namespaces():
    import pyctorch
    from pyctorch import nn, linalg, functional
    spaces = {pyctorch: "torch", pyctorch.Tensor: "torch.Tensor", nn.functional: "torch.nn.functional",
              linalg: "torch.linalg", functional: "torch.functional", nn.init: "torch.nn.init"}
    for name, torch_name in (("special", "torch.special"), ("fft", "torch.fft")):
        module = getattr(pyctorch, name, None)
        if module is not None:
            spaces[module] = torch_name
    return spaces


# private Tensor methods torch lists among the overridable ones (the sparse COO accessors)
_TENSOR_PRIVATE_OVERRIDABLE = frozenset({"_indices", "_values", "_nnz"})


def _public_callables(namespace):
    is_type = isinstance(namespace, type)
    items = vars(namespace).items() if not is_type else ((n, getattr(namespace, n)) for n in dir(namespace))
    for name, value in items:
        if name.startswith("_") and not (is_type and (name.startswith("__") or name in _TENSOR_PRIVATE_OVERRIDABLE)):
            continue
        if isinstance(value, (type, _types.ModuleType)) or not callable(value):
            continue
        yield name, value


@functools.lru_cache(None)
def _overridable_and_names():
    import pyctorch
    for name in pyctorch._DROPIN_FUNCTIONS:  # load the functions kept out of `import pyctorch`
        getattr(pyctorch, name)
    ignored = get_ignored_functions()
    overridable, names = collections.defaultdict(list), {}
    for space, torch_name in _torch_namespaces().items():
        for name, value in _public_callables(space):
            if isinstance(space, type) and name.startswith("__") and name not in _TENSOR_DUNDERS and \
                    (type(value) is not _types.WrapperDescriptorType or name in _TENSOR_IGNORED):
                continue  # of the dunders, the operators' slots (Tensor.__add__, ...) are overridable
            try:
                if value in ignored:
                    continue
            except TypeError:
                continue
            overridable[space].append(value)
            names.setdefault(value, f"{torch_name}.{name}")
    for name, descr in vars(pyctorch.Tensor).items():  # properties: handlers see Tensor.<name>.__get__
        if (type(descr).__name__ == "getset_descriptor" and name != "__dict__") or isinstance(descr, property):
            getter = descr.__get__
            overridable[pyctorch.Tensor].append(getter)
            names.setdefault(getter, f"torch.Tensor.{name}.__get__")
    return dict(overridable), names


def get_overridable_functions():
    """{namespace: [functions]} of what __torch_function__ can override."""
    return _overridable_and_names()[0]


def resolve_name(f):
    """The public name of an overridable function ('torch.add', 'torch.Tensor.add'), or None."""
    name = _overridable_and_names()[1].get(f)
    if name is None and isinstance(f, (_types.MethodWrapperType, _types.WrapperDescriptorType)):
        return str(f)
    return name


@functools.lru_cache(None)
def get_ignored_functions():
    """Public functions that do not go through __torch_function__ (no tensor argument to dispatch on)."""
    import pyctorch
    ignored = set()
    for name in _TORCH_IGNORED_NAMES:
        value = getattr(pyctorch, name, None)
        if value is not None:
            ignored.add(value)
    for name, value in vars(pyctorch).items():
        if type(value).__name__ == "builtin_function" and not _takes_tensor(value.__doc__):
            ignored.add(value)  # factories of the op table: only modes see them
    for name in _TENSOR_IGNORED:
        value = vars(pyctorch.Tensor).get(name)
        if value is not None and callable(value):
            ignored.add(value)
    return ignored


def _takes_tensor(doc):
    """Whether an op function's first overload (its __doc__'s first line) has a tensor parameter other than out."""
    import re
    first = (doc or "").split("\n")[0]
    return any(not re.search(r"\bout\s*=", p) for p in re.findall(r"Tensor[^,)]*", first))


def is_tensor_method_or_property(func):
    """Whether func is a Tensor method or a Tensor property's __get__ (which receive self first)."""
    if getattr(func, "__name__", None) == "__get__":
        return True
    return func in _overridable_and_names()[0].get(_C.Tensor, ())


def _signature_from_schema(doc):
    """inspect.Signature of the first overload in an op function's __doc__ ('pyctorch.add(Tensor input, ...)')."""
    first = (doc or "").split("\n")[0]
    if "(" not in first:
        return None
    from ._op_overloads import split_params
    try:
        _, parts = split_params("f" + first[first.index("("):first.rindex(")") + 1])
    except Exception:
        return None
    params, kind = [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    for part in parts:
        if part == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        decl, eq, default = part.partition("=")
        pname = decl.split()[-1].strip("*") if decl.split() else ""
        if not pname.isidentifier() or keyword.iskeyword(pname) or pname in ("self",) and params:
            continue
        dflt = inspect.Parameter.empty
        if eq:
            try:
                import ast
                dflt = ast.literal_eval(default.strip())
            except (ValueError, SyntaxError):
                dflt = None
        if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and params and dflt is inspect.Parameter.empty \
                and params[-1].default is not inspect.Parameter.empty:
            dflt = None  # a required parameter after a defaulted one: not a valid Python signature
        params.append(inspect.Parameter(pname, kind, default=dflt))
    try:
        return inspect.Signature(params)
    except ValueError:
        return None


def _dummy_for(func, is_method):
    sig = None
    target = getattr(func, "__wrapped__", func)
    if isinstance(target, _types.FunctionType):
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):
            sig = None
    elif type(target).__name__ == "builtin_function":
        sig = _signature_from_schema(target.__doc__)
        if sig is not None and is_method and (not sig.parameters or next(iter(sig.parameters)) != "self"):
            params = list(sig.parameters.values())
            if params and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
                params[0] = params[0].replace(name="self")
            sig = sig.replace(parameters=params)

    def dummy(*args, **kwargs):
        return -1
    dummy.__name__ = getattr(func, "__name__", "dummy")
    if sig is not None:
        dummy.__signature__ = sig
    return dummy


def get_testing_overrides():
    """{overridable function: a dummy with its signature that returns -1}, for testing __torch_function__
    implementations (torch writes them out by hand; here they come from the op table's schemas and the Python
    functions' own signatures)."""
    import pyctorch
    out = {}
    for space, funcs in get_overridable_functions().items():
        for func in funcs:
            if func not in out:
                out[func] = _dummy_for(func, space is pyctorch.Tensor)
    return out


# ---------------------------------------------------------------- installation

def _install():
    """Called once by pyctorch/__init__.py, after every namespace is assembled."""
    import pyctorch
    from . import nn  # noqa: F401
    _C._set_torch_function_dispatcher(_dispatch_from_c)
    _wrap_namespace(vars(pyctorch.functional), ignored=_TORCH_IGNORED_NAMES)
    _wrap_namespace(vars(pyctorch.nn.init))
    _wrap_namespace(vars(pyctorch), ignored=_TORCH_IGNORED_NAMES)
    _wrap_namespace(vars(pyctorch.linalg), ignored=_TORCH_IGNORED_NAMES)
