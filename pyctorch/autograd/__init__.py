"""pyctorch.autograd: reverse-mode automatic differentiation.

The graph, the engine and the recording of every operator live in C (csrc/autograd/);
this package holds the Python API around them."""
from .. import _C
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                        is_grad_enabled, is_inference_mode_enabled)
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable, InplaceFunction  # noqa: F401
from . import graph  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from . import functional  # noqa: F401
from . import forward_ad  # noqa: F401


def __getattr__(name):
    # torch.autograd.profiler (and its profiler_util) load on first use
    if name in ("profiler", "profiler_util"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'pyctorch.autograd' has no attribute '{name}'")


__all__ = ["backward", "grad", "Function", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "detect_anomaly", "set_detect_anomaly", "gradcheck", "gradgradcheck", "functional"]


class _ImperativeEngine:
    """torch.autograd.Variable._execution_engine: queue_callback(callback) runs callback (no arguments)
    once the backward pass now running has finished, before backward()/grad() return; callbacks
    queued by callbacks run too. The engine is C (csrc/autograd/engine.c); the callbacks of each
    (possibly re-entrant) backward call are kept here, one list per call."""

    def __init__(self):
        self._callbacks = []  # one list per backward call in progress, innermost last

    def queue_callback(self, callback):
        if not self._callbacks:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        self._callbacks[-1].append(callback)

    def is_checkpoint_valid(self):
        return True

    def run_backward(self, *args):
        queue = []
        self._callbacks.append(queue)
        try:
            result = _C._run_backward(*args)
            while queue:  # callbacks may queue more callbacks
                queue.pop(0)()
        finally:
            self._callbacks.pop()
        return result


_engine = _ImperativeEngine()


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates the gradients of `tensors` into the .grad of the graph's leaves (or of `inputs`)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if grad_tensors is not None and len(grad_tensors) != len(tensors):
        raise RuntimeError(f"Mismatch in number of gradients: got {len(grad_tensors)} gradients for "
                           f"{len(tensors)} outputs")
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    _engine.run_backward(tensors, grad_tensors, bool(retain_graph), bool(create_graph), inputs, True, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} elements but outputs has {len(outputs)}")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        result = _grad_batched(outputs, inputs, grad_outputs, bool(retain_graph), bool(create_graph),
                               bool(allow_unused))
    else:
        result = _engine.run_backward(outputs, grad_outputs, bool(retain_graph), bool(create_graph), inputs,
                                  bool(allow_unused), False)
    if materialize_grads:
        # as torch: an unused input's zeros have the input's shape, without the batch dimension
        result = tuple(_C.zeros_like(i) if r is None else r for r, i in zip(result, inputs))
    return result


def _batched_grad_outputs(outputs, grad_outputs):
    """torch's checks of batched grad_outputs (the dims after the first must be the output's shape) and the
    implicit ones of scalar outputs, as one tuple (None where an output needs no gradient)."""
    gos = grad_outputs if grad_outputs is not None else (None,) * len(outputs)
    made = []
    for out, go in zip(outputs, gos):
        if isinstance(go, _C.Tensor):
            first = go[0]  # torch's IndexError for a 0-d or empty batch
            if tuple(first.shape) != tuple(out.shape):
                # torch's message drops the first dim of the first vector again: a (4, 3) batch shows Size([])
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                    "dimension. The sizes of the remaining dimensions are expected to match the shape of "
                    f"corresponding output, but a mismatch was detected: grad_output[{gos.index(go)}] has a shape of "
                    f"{first.shape[1:]} and output[{outputs.index(out)}] has a shape of {out.shape}. If you only want "
                    "some tensors in `grad_output` to be considered batched, consider using vmap.")
            made.append(go)
        elif go is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                made.append(_C.ones_like(out))
            else:
                made.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(go).__name__}")
    return tuple(made)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """grad(..., is_grads_batched=True): one vector-Jacobian product per index of the grad_outputs' first
    dimension, stacked along a new first dimension (an unused input's None stays None). A loop over the batch
    (pyctorch's vmap over the engine call loops too: the outputs are not batched, only the grad_outputs, see
    _batched_gradients in _functorch/eager_transforms.py); its checks and errors are those of torch's vmap over
    the engine call."""
    gos = _batched_grad_outputs(outputs, grad_outputs)
    for g in gos:  # torch's vmap maps dim 0 of every grad_output, in order
        if g is None:  # an output that needs no gradient, given None
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for an input but the input is of type "
                             "<class 'NoneType'>. We cannot vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        if g.dim() == 0:  # an implicit ones_like of a 0-d output
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
                             "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0.")
    if not gos:
        raise IndexError("list index out of range")  # torch's vmap finds no batch size
    sizes = [g.shape[0] for g in gos]
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    n = sizes[0]
    rows = []
    for b in range(n):
        keep = retain_graph or b + 1 < n  # the graph serves every vector of the batch
        rows.append(_engine.run_backward(outputs, tuple(g[b] for g in gos), keep, create_graph, inputs, allow_unused,
                                     False))
    return tuple(None if col[0] is None else _C.stack(col) for col in zip(*rows))


from .variable import Variable  # noqa: E402
Variable._execution_engine = _engine
from . import variable  # noqa: E402,F401  (torch.autograd.variable)
