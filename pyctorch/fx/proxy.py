"""Proxy: the stand-in value symbolic tracing passes through user code; each use records a Node.

Python operators on a Proxy record operator.* call_function nodes, attribute access records a
builtins.getattr node (or a call_method node when the attribute is then called), and calling pyctorch
functions on Proxies is recorded by the function patching of Note [Tracing torch functions] (_patching.py)
(Proxy does not use the __torch_function__ protocol of pyctorch/overrides.py).
"""
import dis
import inspect
import operator

from ._codegen import REFLECTABLE, OPERATOR_SYNTAX

__all__ = ["Proxy", "Attribute", "TraceError", "ParameterProxy"]


class TraceError(ValueError):
    pass


class Proxy:
    """The symbolic value of one Node while tracing; operations on it extend the tracer's graph."""

    def __init__(self, node, tracer=None):
        if tracer is None:  # a bare proxy (over a hand-built graph) records into its node's graph
            from ._symbolic_trace import GraphAppendingTracer
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):  # protocol probes (copy, pickle, numpy) are not tensor attributes
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks a known number of values: give that many getitem proxies. Any other iteration
        # (a for loop, *proxy) has no length to trace and is refused by the tracer.
        frame = inspect.currentframe().f_back
        try:
            for inst in dis.get_instructions(frame.f_code):
                if inst.offset == frame.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        finally:
            del frame
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    __hash__ = object.__hash__  # __eq__ below records a node, so identity hashing is restated


class Attribute(Proxy):
    """`proxy.name`: becomes a call_method node when called, else (on first use) a getattr node."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:  # created lazily: `x.view(...)` should record call_method only
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A get_attr proxy of an nn.Parameter that answers shape/size/dim/ndim/numel from the real parameter."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _install_operators():
    """Give Proxy one method per Python operator, each recording the operator.* function."""
    for name in OPERATOR_SYNTAX:
        fn = getattr(operator, name, None)
        if fn is None:  # "div" is Python 2's
            continue
        dunder = f"__{name.rstrip('_')}__"

        def method(*args, _fn=fn):
            return args[0].tracer.create_proxy("call_function", _fn, args, {})
        method.__name__ = dunder
        setattr(Proxy, dunder, method)
    for name in REFLECTABLE:
        fn = getattr(operator, name, None)
        if fn is None or name == "getitem":
            continue
        dunder = f"__r{name.rstrip('_')}__"

        def reflected(self, rhs, _fn=fn):
            return self.tracer.create_proxy("call_function", _fn, (rhs, self), {})
        reflected.__name__ = dunder
        setattr(Proxy, dunder, reflected)


_install_operators()


def __getattr__(name):
    if name == "GraphAppendingTracer":  # defined with Tracer, which imports this module
        from ._symbolic_trace import GraphAppendingTracer
        return GraphAppendingTracer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
