"""torch.library: Python custom operators (`custom_op`, `register_fake`, `register_autograd`,
`register_kernel`), callable directly and as `torch.ops.<namespace>.<name>`.

pyctorch runs every op eagerly, so a custom op is its Python function: the fake (meta) function is
stored for callers that ask for it but never traced, and `register_autograd` makes the op
differentiable through an autograd.Function built from the given backward and setup_context.
Without a registered backward, an output of inputs that require grad fails in backward with torch's
message. Not here yet: `Library`/`define`/`impl` (registering kernels for aten ops) and `infer_schema`
of complex annotations.
"""
import inspect

__all__ = ["custom_op", "CustomOpDef", "register_fake", "register_autograd", "register_kernel", "get_custom_op"]

_CUSTOM_OPS = {}  # "ns::name" -> CustomOpDef


_ANNOTATION_TYPES = {int: "SymInt", float: "float", bool: "bool", str: "str"}


def _infer_schema(fn, mutates_args):
    """A schema text for fn's parameters (Tensor for tensor annotations, the scalar types, else Any)."""
    from . import Tensor
    parts = []
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        kind = "Tensor" if ann is Tensor else _ANNOTATION_TYPES.get(ann, "Any")
        if isinstance(mutates_args, (list, tuple, set)) and p.name in mutates_args and kind == "Tensor":
            kind = "Tensor(a!)"
        parts.append(f"{kind} {p.name}")
    return "(" + ", ".join(parts) + ") -> Tensor"


def _qualname(name):
    if isinstance(name, CustomOpDef):
        return name._qualname
    if hasattr(name, "_qualname"):
        return name._qualname
    if "::" not in name:
        raise ValueError(f"Expected the name to be 'namespace::op_name', got '{name}'")
    return name


class _AutogradNotImplemented:
    pass


class CustomOpDef:
    """A custom operator made by custom_op: call it like the function it wraps."""

    def __init__(self, qualname, fn, mutates_args, schema):
        self._qualname = qualname
        self._namespace, _, self._name = qualname.partition("::")
        self._init_fn = fn
        self._kernels = {}
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._mutates_args = mutates_args
        self._schema_text = schema if schema is not None else _infer_schema(fn, mutates_args)
        self.__name__ = self._name
        self.__doc__ = fn.__doc__
        self._autograd_fn = None

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def register_fake(self, fn=None, /):
        def register(f):
            self._abstract_fn = f
            return f
        return register if fn is None else register(fn)

    def register_kernel(self, device_types, fn=None, /):
        types = [device_types] if isinstance(device_types, str) or device_types is None else list(device_types)

        def register(f):
            for t in types:
                self._kernels[t] = f
            return f
        return register if fn is None else register(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        self._backward_fn, self._setup_context_fn = backward, setup_context
        self._autograd_fn = None

    def _kernel_for(self, args, kwargs):
        from . import Tensor
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, Tensor):
                return self._kernels.get(value.device.type, self._init_fn)
        return self._init_fn

    def _run(self, args, kwargs):
        from . import no_grad
        with no_grad():
            return self._kernel_for(args, kwargs)(*args, **kwargs)

    def _function(self):
        if self._autograd_fn is None:
            from .autograd import Function
            op = self

            class _CustomOpFunction(Function):
                @staticmethod
                def forward(ctx, *args):
                    output = op._run(args, {})
                    if op._setup_context_fn is not None:
                        op._setup_context_fn(ctx=ctx, inputs=args, output=output)
                    return output

                @staticmethod
                def backward(ctx, *grads):
                    if op._backward_fn is None:
                        raise RuntimeError(f"Autograd has not been implemented for operator {op._qualname}. "
                                           "Please register an autograd formula with "
                                           "torch.library.register_autograd.")
                    result = op._backward_fn(ctx, *grads)
                    return tuple(result) if isinstance(result, (tuple, list)) else (result,)

            _CustomOpFunction.__name__ = f"{self._name}_backward"
            self._autograd_fn = _CustomOpFunction
        return self._autograd_fn

    def __call__(self, *args, **kwargs):
        from . import Tensor, is_grad_enabled
        needs_grad = is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad
                                               for a in list(args) + list(kwargs.values()))
        if not needs_grad:
            return self._run(args, kwargs)
        if kwargs:  # autograd.Function takes positional arguments: bind by the signature
            bound = inspect.signature(self._init_fn).bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
        return self._function().apply(*args)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Makes `fn` the custom operator `name` ("namespace::op_name"); a decorator when fn is omitted."""
    def make(f):
        qualname = _qualname(name)
        op = CustomOpDef(qualname, f, mutates_args, schema)
        if device_types is not None:
            op.register_kernel(device_types, f)
        _CUSTOM_OPS[qualname] = op
        from . import _ops
        namespace = getattr(_ops.ops, op._namespace)
        namespace.__dict__.pop(op._name, None)  # a re-registration replaces the packet
        return op
    return make if fn is None else make(fn)


def get_custom_op(name):
    return _CUSTOM_OPS.get(_qualname(name))


def _lookup(name):
    op = _CUSTOM_OPS.get(_qualname(name))
    if op is None:
        raise ValueError(f"pyctorch does not implement registering {name} for operators other than "
                         "torch.library.custom_op ones yet")
    return op


def register_fake(op, fn=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Registers the fake (shape and dtype) function of a custom op; pyctorch stores it."""
    return _lookup(op).register_fake(fn) if fn is not None else _lookup(op).register_fake()


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Registers the backward (and setup_context) of a custom op."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    """Registers a per-device implementation of a custom op."""
    return _lookup(op).register_kernel(device_types, fn) if fn is not None else \
        _lookup(op).register_kernel(device_types)
