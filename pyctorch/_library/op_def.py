"""The operators users add at run time (torch.library): one object per overload, and how a call reaches a kernel.

Note [Library operators]
pyctorch's op table is compiled; an operator defined from Python (`torch.library.custom_op`, or
`Library.define` with kernels given by `Library.impl`) is an OpDef held in a registry by its qualified name
("ns::name" or "ns::name.overload") and reached as `torch.ops.ns.name.overload` (pyctorch/_ops.py builds the
handles from the registry). A call goes through the steps torch's dispatcher takes for such an operator:
  1. capture: a Proxy argument (torch.fx symbolic tracing) records one call_function node whose target is the
     OpOverload; inside torch.export's capture the kernel runs with the op trace hook off and the call is
     recorded as one node. Either way the operator stays opaque: its insides are not in the graph.
  2. the profiler sees one event named "ns::name" (record_function) around the rest;
  3. autocast (register_autocast): inside an autocast region of the registered device type, floating-point
     tensor arguments are cast to the registered dtype and the call goes on with autocast off;
  4. autograd: a kernel registered for the Autograd key runs first (it computes its own gradients; a call of
     the same operator made inside it skips this step, as torch's AutoDispatchBelowAutograd does); a
     CompositeImplicitAutograd kernel runs as is (its gradient comes from the ops it calls). Otherwise, when
     an argument requires grad and a backward is registered (register_autograd), the backend kernel runs under
     no_grad inside one autograd.Function node; a custom_op without one records a node whose backward raises
     torch's "Autograd has not been implemented"; a Library operator without one runs its kernel with grad
     on, so the kernel's own ops record the gradient (torch's autograd fallback does the same, with a warning
     in backward).
  5. the backend kernel by the device of the first tensor argument: "cpu", "cuda", "meta" (the fake function
     when no Meta kernel is registered), then CompositeExplicitAutograd; none gives torch's NotImplementedError.
What pyctorch does not do: kernels for the op table's own aten operators cannot be replaced from Python
(Library("aten", "IMPL").impl refuses), and dispatch keys other than the ones above are refused by impl.
"""
import inspect
import threading

__all__ = ["OpDef", "REGISTRY", "DISPATCH_KEYS", "parse_definition"]

REGISTRY = {}  # "ns::name" or "ns::name.overload" -> OpDef

# Library.impl's dispatch keys -> the kernel slot they fill
DISPATCH_KEYS = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta", "": "default",
                 "CompositeExplicitAutograd": "default", "CompositeImplicitAutograd": "implicit",
                 "Autograd": "autograd", "AutogradCPU": "autograd", "AutogradCUDA": "autograd"}

_below_autograd = threading.local()  # the OpDefs whose Autograd kernel is running on this thread


def parse_definition(namespace, text):
    """'name.overload(args) -> ret' -> (name, overload, '(args) -> ret'); ValueError for a malformed one."""
    head, paren, rest = text.partition("(")
    if not paren or "->" not in rest or not head.strip():
        raise RuntimeError(f"Expected a schema such as 'name(Tensor x) -> Tensor' for namespace {namespace}, "
                           f"got '{text}'")
    if "::" in head:
        ns, _, head = head.partition("::")
        if ns != namespace:
            raise ValueError(f"Explicitly provided namespace ({ns}) in schema string does not match namespace "
                             f"of enclosing TORCH_LIBRARY ({namespace}).")
    name, _, overload = head.strip().partition(".")
    return name, overload or "default", "(" + rest


def _tensors(args, kwargs):
    from pyctorch import Tensor
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, Tensor))


class OpDef:
    """One overload of an operator defined from Python: its schema and its kernels (Note [Library operators])."""

    kind = "library"  # custom_op's subclass says "custom_op"

    def __init__(self, namespace, name, overload, schema_text):
        self._namespace, self._name, self._overload = namespace, name, overload
        self._qualname = f"{namespace}::{name}"
        self._schema_text = schema_text
        self._kernels = {}            # slot of DISPATCH_KEYS -> function
        self._abstract_fn = None      # register_fake
        self._backward_fn = None      # register_autograd
        self._setup_context_fn = None
        self._autocast = {}           # device type -> dtype
        self._vmap_fn = None
        self._autograd_fn = None
        self.__name__ = name

    # ---- registration ----
    @property
    def _key(self):
        return self._qualname + ("" if self._overload == "default" else "." + self._overload)

    @property
    def schema(self):
        """The full schema text, as torch prints the OpOverload's _schema."""
        suffix = "" if self._overload == "default" else "." + self._overload
        return f"{self._qualname}{suffix}{self._schema_text}"

    def register_fake(self, fn=None, /):
        def register(f):
            self._abstract_fn = f
            return f
        return register if fn is None else register(fn)

    def register_kernel(self, device_types, fn=None, /):
        types = [device_types] if isinstance(device_types, str) or device_types is None else list(device_types)

        def register(f):
            for t in types:
                self._kernels["default" if t is None else t] = f
            return f
        return register if fn is None else register(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        self._backward_fn, self._setup_context_fn = backward, setup_context
        self._autograd_fn = None

    def overload_handle(self):
        """torch.ops.ns.name.overload"""
        from pyctorch._ops import ops
        return getattr(getattr(getattr(ops, self._namespace), self._name), self._overload)

    # ---- the call (Note [Library operators]) ----
    def __call__(self, *args, **kwargs):
        from pyctorch.fx._patching import find_proxy
        proxy = find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", self.overload_handle(), args, kwargs)
        from pyctorch.export._trace import active_run
        run = active_run()
        if run is not None:
            return run.opaque_call(self.overload_handle(), args, kwargs, lambda: self._profiled(args, kwargs))
        return self._profiled(args, kwargs)

    def _profiled(self, args, kwargs):
        from pyctorch import _C
        handle = _C._record_function_enter(self._qualname)
        try:
            return self._autocast_step(args, kwargs)
        finally:
            if handle is not None and handle != -1:
                _C._record_function_exit(handle)

    def _autocast_step(self, args, kwargs):
        if self._autocast:
            import pyctorch
            for device_type, dtype in self._autocast.items():
                if pyctorch.is_autocast_enabled(device_type):
                    def cast(v):
                        if isinstance(v, pyctorch.Tensor) and v.is_floating_point() and \
                                v.device.type == device_type:
                            return v.to(dtype)
                        return v
                    args = tuple(cast(a) for a in args)
                    kwargs = {k: cast(v) for k, v in kwargs.items()}
                    with pyctorch.autocast(device_type, enabled=False):
                        return self._autograd_step(args, kwargs)
        return self._autograd_step(args, kwargs)

    def _autograd_step(self, args, kwargs):
        below = getattr(_below_autograd, "ops", None)
        if below is None:
            below = _below_autograd.ops = set()
        autograd_kernel = self._kernels.get("autograd")
        if autograd_kernel is not None and self not in below:
            below.add(self)
            try:
                return autograd_kernel(*args, **kwargs)
            finally:
                below.discard(self)
        implicit = self._kernels.get("implicit")
        if implicit is not None:
            return implicit(*args, **kwargs)
        import pyctorch
        needs_grad = pyctorch.is_grad_enabled() and any(t.requires_grad for t in _tensors(args, kwargs))
        if needs_grad and (self._backward_fn is not None or self.kind == "custom_op"):
            if kwargs:  # autograd.Function takes positional arguments: bind by the signature
                args = self._bind(args, kwargs)
            return self._function().apply(*args)
        if needs_grad:  # a Library operator without a backward: its kernel's ops record the gradient
            return self._backend_kernel(args, kwargs)(*args, **kwargs)
        with pyctorch.no_grad():
            return self._backend_kernel(args, kwargs)(*args, **kwargs)

    def _bind(self, args, kwargs):
        bound = inspect.signature(self._signature_source()).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def _signature_source(self):
        return self._backend_kernel((), {})

    def _backend_kernel(self, args, kwargs):
        device = next((t.device.type for t in _tensors(args, kwargs)), "cpu")
        kernel = self._kernels.get(device)
        if kernel is None and device == "meta":
            kernel = self._abstract_fn
        if kernel is None:
            kernel = self._kernels.get("default")
        if kernel is not None:
            return kernel
        if device == "meta":
            raise NotImplementedError(
                f"{self._qualname}: attempted to run this operator with Meta tensors, but there was no fake impl "
                "or Meta kernel registered. Register one with torch.library.register_fake to run it on meta "
                "tensors or under torch.export.")
        backends = sorted(k for k in ("CPU", "CUDA", "Meta") if DISPATCH_KEYS[k] in self._kernels)
        raise NotImplementedError(
            f"Could not run '{self._qualname}' with arguments from the '{device.upper()}' backend. This could be "
            f"because the operator doesn't exist for this backend. '{self._qualname}' is only available for "
            f"these backends: [{', '.join(backends)}].")

    def _function(self):
        if self._autograd_fn is None:
            import pyctorch
            from pyctorch.autograd import Function
            op = self

            class _LibraryOpFunction(Function):
                @staticmethod
                def forward(ctx, *args):
                    with pyctorch.no_grad():
                        output = op._backend_kernel(args, {})(*args)
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

            _LibraryOpFunction.__name__ = f"{self._name}_backward"
            self._autograd_fn = _LibraryOpFunction
        return self._autograd_fn

    def __repr__(self):
        return f"<OpDef({self._key})>"
