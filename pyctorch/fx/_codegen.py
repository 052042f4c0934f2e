"""Turn a Graph into the Python source of its forward function (Graph.python_code)."""
import builtins
import inspect
import math

from ._names import Namespace, qualified_name
from .node import Node

__all__ = ["PythonCode", "generate_python_code"]

_REFLECTABLE_INFIX = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
                      "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
                      "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
                      "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}"}
# The operator-module functions printed as Python syntax rather than as calls.
OPERATOR_SYNTAX = {**_REFLECTABLE_INFIX, "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}",
                   "le": "{} <= {}", "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}"}
REFLECTABLE = tuple(_REFLECTABLE_INFIX)


class PythonCode:
    """The source of forward (`src`) and the globals it must run with (`globals`)."""

    def __init__(self, src, globals_):
        self.src = src
        self.globals = globals_


def _format_target(base, target):
    """self + "a.0.b" -> 'getattr(self.a, "0").b' (attribute names that are not identifiers)."""
    out = base
    for part in target.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


def _is_operator(fn):
    return getattr(fn, "__module__", None) in ("_operator", "operator") and \
        getattr(fn, "__name__", None) in OPERATOR_SYNTAX


def generate_python_code(graph, root_module="self"):
    import pyctorch
    namespace = Namespace()
    for node in graph.nodes:  # node names are taken first: globals must not shadow them
        namespace.mark_used(node.name)
    globals_ = {"torch": pyctorch, "inf": math.inf, "nan": math.nan, "NoneType": type(None),
                "device": pyctorch.device}

    def add_global(hint, obj):
        """The name generated code uses for obj, binding it in globals when it is not a builtin."""
        if getattr(builtins, getattr(obj, "__name__", ""), None) is obj and not isinstance(obj, type(pyctorch)):
            return obj.__name__
        qualified = qualified_name(obj)
        if qualified.startswith("torch."):  # Note [Printed names]
            return qualified
        for name, value in globals_.items():
            if value is obj:
                return name
        name = namespace.create_name(hint.split(".")[-1])
        globals_[name] = obj
        return name

    def rep(arg):
        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            cls = add_global(type(arg).__name__, type(arg))
            return f"{cls}({', '.join(rep(a) for a in arg)})"
        if isinstance(arg, tuple):
            inner = ", ".join(rep(a) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return "[" + ", ".join(rep(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{rep(k)}: {rep(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({rep(arg.start)}, {rep(arg.stop)}, {rep(arg.step)})"
        if isinstance(arg, float) and not math.isfinite(arg):
            return ("-" if arg < 0 else "") + ("inf" if math.isinf(arg) else "nan")
        if isinstance(arg, type) or inspect.isfunction(arg) or inspect.isbuiltin(arg) or \
                type(arg).__name__ in ("builtin_function", "_torch_function_wrapper"):
            return add_global(getattr(arg, "__name__", "obj"), arg)
        return repr(arg)  # dtypes print as torch.float32, devices as device(type='cpu'): both are globals

    def fmt_args(args, kwargs):
        parts = [rep(a) for a in args] + [f"{k} = {rep(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    # The last node that uses each value: after it, the value's name is set to None so memory frees early.
    last_use = {}
    for node in graph.nodes:
        for inp in node.all_input_nodes:
            last_use[inp] = node

    params, body = [], []
    wrapped = []
    return_line = "return None"
    for node in graph.nodes:
        if node.op == "placeholder":
            if node.target.startswith("*"):
                params.append(node.target)
                body.append(f"{node.name} = {node.target.lstrip('*')}")  # the name is `_args`: `*` is no identifier
            else:
                default = f" = {rep(node.args[0])}" if node.args else ""
                params.append(f"{node.target}{default}")
                if node.name != node.target:
                    body.append(f"{node.name} = {node.target}")
            continue
        if node.op == "output":
            return_line = f"return {rep(node.args[0])}"
            continue
        if node.op == "call_method":
            method = _format_target(rep(node.args[0]), node.target)
            line = f"{node.name} = {method}({fmt_args(node.args[1:], node.kwargs)})"
        elif node.op == "call_module":
            line = f"{node.name} = {_format_target(root_module, node.target)}({fmt_args(node.args, node.kwargs)})"
        elif node.op == "get_attr":
            line = f"{node.name} = {_format_target(root_module, node.target)}"
        else:  # call_function
            fn = node.target
            if _is_operator(fn) and not node.kwargs:
                line = f"{node.name} = " + OPERATOR_SYNTAX[fn.__name__].format(*(rep(a) for a in node.args))
            elif fn is builtins.getattr and len(node.args) == 2 and isinstance(node.args[1], str) \
                    and node.args[1].isidentifier() and not node.kwargs:
                line = f"{node.name} = {_format_target(rep(node.args[0]), node.args[1])}"
            else:
                name = add_global(qualified_name(fn), fn)
                line = f"{node.name} = {name}({fmt_args(node.args, node.kwargs)})"
                if node.meta.get("is_wrapped"):
                    wrapped.append(name)
        freed = [v.name for v in node.all_input_nodes if last_use[v] is node]  # in argument order
        if not node.users:
            freed.append(node.name)
        if freed:
            line += ";  " + " = ".join(freed) + " = None"
        body.append(line)
    body.append(return_line)
    header = ""
    for name in dict.fromkeys(wrapped):  # functions torch.fx.wrap()ed stay calls when this code is traced again
        header += f"wrap({name!r})\n"
    if wrapped:
        from ._symbolic_trace import wrap
        globals_["wrap"] = wrap
    code = "\n".join("    " + line for line in body)
    src = f"{header}\n\n\ndef forward({', '.join([root_module] + params)}):\n{code}\n    "
    return PythonCode(src, globals_)
