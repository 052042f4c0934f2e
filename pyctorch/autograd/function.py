"""torch.autograd.Function: user-defined forward/backward pairs.

A Function's context object is its graph node: each Function subclass gets a node class
`<Name>Backward` (a subclass of the C node type), so `y.grad_fn` is the ctx and the engine
calls `ctx._apply_backward(grads)`, which calls the user's backward."""
import functools

from .. import _C
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction"]


class FunctionCtx(_C._Node):
    """What forward/setup_context see as ctx."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument %d is not a Tensor"
                                % tensors.index(t))
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        if _C._node_released(self):
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
        saved = getattr(self, "_saved", ())
        if getattr(self, "_saved_packed", False):  # Note [Saved tensor hooks]: unpack (no version check)
            return tuple(t if version is not None else _C._saved_tensors_unpack(*t) for t, version in saved)
        for i, (t, version) in enumerate(saved):
            if t is not None and t._version != version:
                # torch names this node for a saved output of it, else the tensor's grad_fn now
                nr = getattr(self, "_saved_output_nr", ())[i] if i < len(getattr(self, "_saved_output_nr", ())) else None
                if nr is not None:
                    _C._raise_modified(t, version, self, nr)
                _C._raise_modified(t, version, t.grad_fn, t.output_nr)
        return tuple(t for t, _ in saved)

    saved_variables = saved_tensors


class BackwardCFunction(FunctionCtx):
    _forward_cls = None

    def _apply_backward(self, grads):
        grads = list(grads)
        if getattr(self, "materialize_grads", True):
            for i, g in enumerate(grads):
                if g is None and i < len(self._output_meta) and self._output_meta[i] is not None:
                    shape, dtype = self._output_meta[i]
                    grads[i] = _C.zeros(shape, dtype=dtype)
        backward = self._forward_cls.backward
        if getattr(self._forward_cls, "_once_differentiable", False) or \
                getattr(backward, "_once_differentiable", False):
            with no_grad():
                result = backward(self, *grads)
        else:
            result = backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = self._num_inputs
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(result)})")
        out = []
        for i, (r, inp) in enumerate(zip(result, self._input_is_tensor)):
            if r is not None and not inp:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            out.append(r)
        return tuple(out)


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with staticmethods forward(ctx, *args) (or forward(*args) + setup_context(ctx,
    inputs, output)) and backward(ctx, *grads); call with Fn.apply(*args)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = _C.Tensor
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.materialize_grads = True
        uses_setup_context = cls.setup_context is not Function.setup_context
        with no_grad():
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        if not (_C.is_grad_enabled() and any(ctx.needs_input_grad)):
            _release_outputs(ctx, outs)
            return outputs
        dirty = getattr(ctx, "dirty_tensors", ())
        nondiff = getattr(ctx, "non_differentiable", ())
        fixed = []
        for o in outs:
            if isinstance(o, Tensor):
                if any(o is d for d in dirty):
                    _C._check_inplace(o)
                elif any(o is a for a in args) or o.grad_fn is not None or o.requires_grad:
                    # an input (or a tensor with history) returned as is: hand back an alias with new history
                    with no_grad():
                        o = o.view_as(o)
            fixed.append(o)
        outs = tuple(fixed)
        ctx._num_inputs = len(args)
        ctx._input_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        ctx._output_meta = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outs]
        _C._function_attach(ctx, tuple(args), outs, tuple(nondiff), tuple(dirty))
        for o in outs:
            if isinstance(o, Tensor) and any(o is d for d in dirty) and o._base is not None:
                _C._rebase_view(o)
        ctx._saved = tuple((t, t._version if t is not None else 0) for t in getattr(ctx, "to_save", ()))
        ctx._saved_output_nr = tuple(next((k for k, o in enumerate(outs) if o is t), None) if t is not None else None
                                     for t, _ in ctx._saved)
        if ctx._saved and _C._current_saved_tensors_hooks() is not None:
            _pack_saved(ctx)
        if hasattr(ctx, "to_save"):
            del ctx.to_save
        return outs if is_tuple else outs[0]


def _pack_saved(ctx):
    """Note [Saved tensor hooks]: the ctx's saved tensors through the current pack hook; a packed entry is
    ((packed, unpack), None)."""
    out = []
    for t, version in ctx._saved:
        packed = _C._saved_tensors_pack(t) if t is not None else None
        out.append((t, version) if packed is None else (packed, None))
    ctx._saved = tuple(out)
    ctx._saved_packed = True


def _release_outputs(ctx, outs):
    ctx._saved = tuple((t, t._version if t is not None else 0) for t in getattr(ctx, "to_save", ()))


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn):
    """Marks a backward as not differentiable itself: it runs without recording."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    wrapper._once_differentiable = True
    return wrapper
