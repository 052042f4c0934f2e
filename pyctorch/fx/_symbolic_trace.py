"""Tracer and symbolic_trace: run a module's forward on Proxies and record what it does as a Graph."""
import builtins
import enum
import functools
import inspect
import math
import operator
import types
import warnings

from ._patching import Patcher, patch_imported_torch_functions, patch_torch_namespaces, recording_wrapper
from .graph import Graph
from .node import Node, has_side_effect, map_aggregate
from .proxy import ParameterProxy, Proxy, TraceError

__all__ = ["Tracer", "GraphAppendingTracer", "symbolic_trace", "wrap", "PH", "PHBase"]


class PHBase:
    """A placeholder marker inside concrete_args: this part of the argument stays symbolic."""

    def __repr__(self):
        return "PH"


PH = PHBase()

# (id of a globals dict, function name) -> that globals dict, filled by wrap() at import time of user code.
_wrapped_functions = {}


def wrap(fn_or_name):
    """At module level: calls to this function (by name, from this module) become one call_function node
    when traced, instead of being traced through. Returns its argument, so it also works as a decorator."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise AssertionError("Unsupported type for global function! Must be either a callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__code__.co_name
    frame = inspect.currentframe().f_back
    try:
        if frame.f_code.co_name != "<module>":
            raise NotImplementedError("wrap must be called at the top level of a module")
        _wrapped_functions[(id(frame.f_globals), name)] = frame.f_globals
    finally:
        del frame
    return fn_or_name


def _assert(condition, message=""):
    """torch._assert for the checks of concrete_args; given a Proxy (code generated with it, traced again)
    it records itself."""
    if isinstance(condition, Proxy):
        return condition.tracer.create_proxy("call_function", _assert, (condition, message), {})
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value, msg):
    if isinstance(value, Proxy):
        return value.tracer.create_proxy("call_function", _assert_is_none, (value, msg), {})
    if value is not None:
        raise AssertionError(msg)


has_side_effect(_assert)  # kept by dead-code elimination although nothing uses their value
has_side_effect(_assert_is_none)


def _star_params_as_positional(fn):
    """fn with its *args / **kwargs turned into plain positional parameters (same code, flags cleared), so
    the trace can pass each of them one Proxy: `args[0]` then records a getitem, as in torch."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return fn
    star_flags = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
    extra = bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    if not extra:
        return fn
    if code.co_kwonlyargcount:  # keyword-only names sit between the positional ones and *args in co_varnames
        raise RuntimeError("pyctorch.fx cannot trace a function with both keyword-only parameters and "
                           "*args/**kwargs")
    new_code = code.replace(co_flags=code.co_flags & ~star_flags, co_argcount=code.co_argcount + extra)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _is_pyctorch_nn_class(cls):
    module = getattr(cls, "__module__", "") or ""
    return module == "pyctorch.nn" or module.startswith("pyctorch.nn.")


class Tracer:
    """Records a Graph from a module or function. Override is_leaf_module, create_arg, ... to customize."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        self.graph = None
        self.root = None
        self.param_shapes_constant = param_shapes_constant
        # Functions of these modules imported by name into the traced code's globals (`from math import sqrt`)
        # are recorded rather than called, as torch does for math.
        self._autowrap_ids = {id(v): v for m in autowrap_modules for k, v in m.__dict__.items()
                              if not k.startswith("_") and callable(v)}
        self._autowrap_ids.update({id(f): f for f in autowrap_functions})
        self._module_paths = None
        self._tensor_attrs = {}

    # ---- the node factories ----
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """The graph argument for a Python value: Proxies become their nodes, parameters/buffers/tensors of the
        root become get_attr nodes, other tensors become new `_tensor_constantN` attributes of the root."""
        import pyctorch
        from pyctorch.nn import Module, Parameter
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, pyctorch.Tensor):
            for name, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", name, (), {})
            path = self._tensor_attrs.get(id(a))
            if path is None:  # a tensor made inside forward: stored on the root as a constant attribute
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                path = f"_tensor_constant{i}"
                setattr(self.root, path, a)
                self._tensor_attrs[id(a)] = path
            return self.create_node("get_attr", path, (), {})
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(x) for x in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(x) for x in a)
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                key = self.create_arg(k)
                if isinstance(key, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. "
                                       f"Got key: {k}")
                out[key] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if a is None or a is ... or isinstance(a, (str, int, float, bool, complex, type, enum.Enum,
                                                   pyctorch.dtype, pyctorch.device)):
            return a
        if type(a).__name__ in ("memory_format", "layout") or callable(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    # ---- decisions a subclass may change ----
    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
                         "loop or as a *args or **kwargs function argument. See the torch.fx docs on "
                         "pytorch.org for a more detailed explanation of what types of control flow can be "
                         "traced, and check out the Proxy docstring for help troubleshooting Proxy "
                         "iteration errors")

    def keys(self, obj):
        from .proxy import Attribute
        return Attribute(obj, "keys")()

    def is_leaf_module(self, m, module_qualified_name):
        """torch's default: the modules pyctorch.nn defines are leaves (kept as call_module), except
        Sequential, which is traced through; user modules are traced through."""
        from pyctorch.nn import Sequential
        return _is_pyctorch_nn_class(type(m)) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        if self._module_paths is None:
            self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A parameter read inside forward (`self.weight`) becomes a get_attr node (one per name)."""
        from pyctorch.nn import Parameter
        if not isinstance(attr_val, Parameter):
            return attr_val
        for name, p in self.root.named_parameters():
            if attr_val is p:
                if name not in parameter_proxy_cache:
                    if self.param_shapes_constant:
                        parameter_proxy_cache[name] = self.create_proxy(
                            "get_attr", name, (), {}, proxy_factory_fn=lambda n: ParameterProxy(self, n, name, p))
                    else:
                        parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return attr_val

    # ---- the trace ----
    def _placeholders(self, fn, skip_first, concrete_args):
        """The Proxies (or concrete values) forward is called with, one placeholder node per parameter."""
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1 if skip_first else 0:]
        if isinstance(concrete_args, tuple):
            if len(params) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(params)} arguments but got {len(concrete_args)} "
                                   "concrete arguments")
            concrete_args = {p.name: v for p, v in zip(params, concrete_args)}
        concrete_args = concrete_args or {}
        args, kwargs = [], {}
        annotations = getattr(fn, "__annotations__", {})
        for p in params:
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            if p.kind == p.VAR_POSITIONAL:
                args.append(self.create_proxy("placeholder", "*" + p.name, (), {}))
                continue
            if p.kind == p.VAR_KEYWORD:
                args.append(self.create_proxy("placeholder", "**" + p.name, (), {}))
                continue
            value = self._concrete_placeholder(p.name, default, concrete_args[p.name]) if p.name in concrete_args \
                else self.create_proxy("placeholder", p.name, default, {}, type_expr=annotations.get(p.name))
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
        return args, kwargs

    def _concrete_placeholder(self, name, default, value):
        """A concrete argument keeps a placeholder (the signature is unchanged) whose value is asserted; PH
        markers inside it stay symbolic."""
        count = [0]

        def replace(x):
            count[0] += 1
            out = self.create_proxy("placeholder", f"{name}_{count[0]}", default, {})
            if isinstance(x, PHBase):
                return out
            if type(x) in (bool, int, float, str):
                check = self.create_proxy("call_function", operator.eq, (out, x), {})
                self.create_proxy("call_function", _assert, (check, f"{name} has been specialized to have value "
                                                             f"{x} but got another value"), {})
            elif x is None:
                self.create_proxy("call_function", _assert_is_none, (out, f"{name} has been specialized to have "
                                                                     "value None but got another value"), {})
            else:
                warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to specialized "
                              "function. It is up to the user to make sure that your inputs match the inputs "
                              "you specialized the function with.")
            return x
        return map_aggregate(value, replace)

    def _collect_tensor_attrs(self, module, prefix=""):
        import pyctorch
        for k, v in module.__dict__.items():
            if isinstance(v, pyctorch.Tensor):
                self._tensor_attrs.setdefault(id(v), prefix + k)
        for name, child in module.named_children():
            self._collect_tensor_attrs(child, prefix + name + ".")

    def trace(self, root, concrete_args=None):
        """The Graph of root's forward (root an nn.Module) or of the function root."""
        from pyctorch.nn import Module
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            skip_first = True
        else:
            self.root = Module()
            fn = root
            skip_first = False
        self.graph = Graph(tracer_cls=type(self))
        self._module_paths = None
        self._tensor_attrs = {}
        self._collect_tensor_attrs(self.root)
        fn_globals = getattr(fn, "__globals__", {})
        parameter_proxy_cache = {}
        tracer = self
        original_call = Module.__call__
        original_getattr = Module.__getattr__

        @functools.wraps(original_call)
        def module_call(mod, *args, **kwargs):
            def forward(*a, **k):
                return original_call(mod, *a, **k)
            return tracer.call_module(mod, forward, args, kwargs)

        @functools.wraps(original_getattr)
        def module_getattr(mod, attr):
            return tracer.getattr(attr, original_getattr(mod, attr), parameter_proxy_cache)

        with Patcher() as patcher:
            args, kwargs = self._placeholders(fn, skip_first, concrete_args)
            patcher.set_attr(Module, "__call__", module_call)
            patcher.set_attr(Module, "__getattr__", module_getattr)
            patch_torch_namespaces(patcher)
            patch_imported_torch_functions(patcher, [fn_globals] + [
                getattr(type(m).forward, "__globals__", {}) for m in self.root.modules()
                if not _is_pyctorch_nn_class(type(m))])
            for (_, name), globals_ in list(_wrapped_functions.items()):
                if hasattr(globals_.get(name), "_pyctorch_fx_original"):  # already recording (nested trace)
                    continue
                if name in globals_:
                    patcher.set_item(globals_, name, recording_wrapper(globals_[name], is_wrapped=True))
                elif name in builtins.__dict__:  # wrap("len"): the module's own name shadows the builtin
                    patcher.set_item(globals_, name, recording_wrapper(builtins.__dict__[name], is_wrapped=True))
            for name, value in list(fn_globals.items()):
                if id(value) in self._autowrap_ids and self._autowrap_ids[id(value)] is value:
                    patcher.set_item(fn_globals, name, recording_wrapper(value))
            traced = _star_params_as_positional(fn)
            result = traced(self.root, *args, **kwargs) if skip_first else traced(*args, **kwargs)
            self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph


class GraphAppendingTracer(Tracer):
    """The tracer of Proxies built by hand over an existing graph (`Proxy(graph.placeholder("x"), tracer)`):
    operators and methods on them append nodes to that graph. pyctorch functions are not patched outside
    trace() (Note [Tracing torch functions]); call graph.call_function for those."""

    def __init__(self, graph):
        super().__init__()
        from pyctorch.nn import Module
        self.graph = graph
        self.root = Module()


def symbolic_trace(root, concrete_args=None):
    """Trace root (an nn.Module or a function) into a GraphModule."""
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    from pyctorch.nn import Module
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
