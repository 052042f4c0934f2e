"""Node: one operation of an fx Graph, and map_arg / map_aggregate over the nested arguments.

A node is one of six kinds (its `op`): placeholder (a forward input), get_attr (a parameter, buffer or
attribute of the root module), call_function, call_method, call_module and output. Its `args`/`kwargs`
hold constants, other nodes, and tuples/lists/dicts/slices of those; the nodes found in them are the
node's inputs, and each input keeps the reverse edge in its `users` dict (insertion-ordered, used as a set).
"""
import operator

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root")


def map_aggregate(a, fn):
    """Apply fn to every leaf of a nested tuple/list/dict/slice structure, keeping the containers' types."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped  # namedtuples take positional fields
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return type(a)((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply fn to every Node inside the nested argument structure a; other leaves are kept as they are."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _collect_nodes(args, kwargs):
    """The distinct nodes used by (args, kwargs), in first-use order."""
    found = {}
    map_arg(args, lambda n: found.setdefault(n))
    map_arg(kwargs, lambda n: found.setdefault(n))
    return found


def _type_repr(t):
    if t is None:
        return "None"
    if isinstance(t, type):
        module = t.__module__
        return t.__qualname__ if module == "builtins" else f"{module}.{t.__qualname__}"
    return repr(t)


class Node:
    """One operation in a Graph; see the module docstring for the six kinds."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise ValueError(f"Unknown op '{op}'")
        if op in ("call_method", "call_module", "get_attr", "placeholder", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected for op {op}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.users = {}
        self.meta = {}
        self._input_nodes = {}
        self._args = ()
        self._kwargs = {}
        self._prev = self
        self._next = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list of the graph (Note: the graph's root sentinel closes the ring) ----
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Move node x to just before self."""
        if x is self:
            raise AssertionError("Cannot prepend self")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Move node x to just after self."""
        self._next.prepend(x)

    def _remove_from_list(self):
        # The node's own links are kept: a loop over graph.nodes standing on it can still step on.
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- arguments ----
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The distinct nodes among args and kwargs, in order of first use."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self._kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args = map_aggregate(new_args, lambda x: x)  # a private copy of the containers
        self._kwargs = map_aggregate(new_kwargs, lambda x: x)
        self._input_nodes = _collect_nodes(self._args, self._kwargs)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Make every user of self use replace_with instead; returns the users that changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = []
        for user in list(self.users):
            if user is replace_with or not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Use new_input wherever self's arguments use old_input."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---- queries ----
    def is_impure(self):
        """Whether dead-code elimination must keep this node although nothing uses its value. As torch's:
        placeholders, outputs, operator.setitem, the tracer's asserts, random sampling, and modules marked
        `_is_impure`; methods (in-place ones included) and other functions count as pure."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _SIDE_EFFECTFUL or getattr(self.target, "__name__", None) in _RANDOM_FUNCTION_NAMES
        if self.op == "call_module":
            root = self.graph.owning_module
            if root is not None:
                try:
                    return getattr(root.get_submodule(self.target), "_is_impure", False)
                except AttributeError:
                    return False
        return False

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    # ---- printing ----
    def __repr__(self):
        return self.name

    def _pretty(self, arg, as_code=False):
        """torch's spelling: `%name` for nodes and bare dict keys in node lines; the output line reads as code."""
        if isinstance(arg, Node):
            return arg.name if as_code else "%" + arg.name
        if isinstance(arg, tuple):
            inner = ", ".join(self._pretty(a, as_code) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return "[" + ", ".join(self._pretty(a, as_code) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{repr(k) if as_code else k}: {self._pretty(v, as_code)}"
                                   for k, v in arg.items()) + "}"
        return repr(arg) if as_code else str(arg)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """One line describing the node, as in `print(graph)`; None for a placeholder when names are collected."""
        from ._names import qualified_name
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
                return None
            typ = f": {_type_repr(self.type)}" if self.type is not None else ""
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name}{typ} : [num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "output":
            if self.type is not None and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self._pretty(self.args[0], as_code=True)}"
        target = qualified_name(self.target) if self.op == "call_function" else self.target
        typ = f": {_type_repr(self.type)}" if self.type is not None else ""
        if self.op == "get_attr":
            return f"%{self.name}{typ} : [num_users={len(self.users)}] = get_attr[target={target}]"
        return (f"%{self.name}{typ} : [num_users={len(self.users)}] = {self.op}[target={target}]"
                f"(args = {self._pretty(self.args)}, kwargs = {self._pretty(self.kwargs)})")


# Functions kept by dead-code elimination whatever their use: torch.fx.has_side_effect() adds to it.
_SIDE_EFFECTFUL = {operator.setitem}


def has_side_effect(fn):
    """Mark fn as side-effectful: graphs keep its call_function nodes even when their value is unused."""
    _SIDE_EFFECTFUL.add(fn)
    return fn


# Sampling functions: eliminating an unused one would change the random stream of the ones after it.
_RANDOM_FUNCTION_NAMES = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                                    "randint_like", "bernoulli", "multinomial", "normal", "poisson"})
