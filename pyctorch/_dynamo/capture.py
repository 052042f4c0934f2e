"""One run of a function under torch.compile's capture: the op calls it made, as an fx graph.

Note [Compile capture]
torch.compile's dynamo reads a frame's bytecode. pyctorch captures by running the function once, eagerly and
with the user's grad and autocast state, while the op trace hook (Note [Op trace hook] in csrc/python/bindings.c)
reports every op-table call made from Python; the run is the first call's real result. The calls are recorded
as they were made (the C function `torch.<op>` or the method `Tensor.<op>`, with the same arguments, tensors
replaced by graph values), so that the graph runs the same kernels in the same order: the same numbers, the
same random draws and the same aliasing as eager. Grad-mode and autocast switches made inside are recorded in
program order too (Note [State switches in the graph]).

What the graph cannot hold makes the capture a graph break (Note [Graph breaks] in eval_frame.py): Python that
needs a traced tensor's value (`bool`, `int`, `float`, `item`, `tolist`, `numpy`, a scalar-returning op on a
traced tensor other than the shape queries), a size read of a tensor whose shape depends on data (the results of
nonzero, unique, masked_select, boolean-mask indexing and what is computed from them), the autograd API
(`backward`, `autograd.grad`, `.grad`, `requires_grad_`, hooks), out-of-table writes to a module's attributes or
to the globals the code names, and a tensor the graph would hold that aliases a traced one (a view made where the
hook cannot see it). The values of everything else Python decides (shapes, non-tensor arguments, module flags
and attributes, global flags) are guarded (guards.py), so a graph never runs where its Python would have gone
another way.
"""
import operator

import pyctorch
from pyctorch import _C
from pyctorch.export._trace import Ref, TraceRun, capturing

__all__ = ["CompileRun", "Call", "TensorMeta", "capture_run", "is_capturing"]

# scalar-returning ops whose result depends only on shapes, dtypes and strides (all guarded)
_SHAPE_QUERIES = frozenset({"size", "stride", "dim", "numel", "nelement", "ndimension", "is_contiguous",
                            "element_size", "storage_offset", "is_floating_point", "is_complex", "is_signed",
                            "get_device", "is_same_size", "is_nonzero_size", "_nnz", "dense_dim", "sparse_dim"})
# ops whose result's shape depends on the values of their inputs
_DATA_SHAPED = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "_unique", "_unique2",
                          "masked_select", "repeat_interleave", "bincount", "nonzero_static_unused"})

_depth = [0]


def is_capturing():
    """True while a torch.compile capture runs (torch.compiler.is_compiling)."""
    return _depth[0] > 0


def active_compile_run():
    """The CompileRun recording now, or None (export's runs are not torch.compile's)."""
    from pyctorch.export._trace import active_run
    run = active_run()
    return run if isinstance(run, CompileRun) else None


class Call:
    """One recorded call: kind is "call_function" (target a callable) or "call_method" (target a Tensor method
    name); args/kwargs hold Refs for graph values; multi: the result is a sequence of `multi` tensors, None for
    one tensor, False for no value (a state switch)."""
    __slots__ = ("kind", "target", "args", "kwargs", "multi", "meta")

    def __init__(self, kind, target, args, kwargs, multi):
        self.kind, self.target, self.args, self.kwargs, self.multi = kind, target, args, kwargs, multi
        self.meta = None  # TensorMeta of a one-tensor result


class TensorMeta:
    """What the compiler needs to know of a tensor value of the graph (node.meta["tensor_meta"])."""
    __slots__ = ("shape", "dtype", "device", "contiguous", "requires_grad")

    def __init__(self, t):
        self.shape, self.dtype, self.device = tuple(t.shape), t.dtype, t.device
        self.contiguous, self.requires_grad = t.is_contiguous(), t.requires_grad

    def __repr__(self):
        return f"TensorMeta({self.shape}, {self.dtype}, {self.device})"


class GraphBreak(Exception):
    """Raised by explain's strict capture (fullgraph=True) when a break is found."""


class CompileRun(TraceRun):
    """Records one eager run for torch.compile; self.breaks lists why the run cannot be a graph (empty: it can)."""

    def __init__(self, fullgraph=False):
        super().__init__()
        self.calls = []
        self.breaks = []        # (reason, user frame summary)
        self.dyn = set()        # ids of traced tensors whose shape depends on data
        self.fullgraph = fullgraph

    def bind_inputs(self, args, kwargs):
        """Give the argument tensors (each object once) graph inputs; their positions among the pytree leaves."""
        from pyctorch.utils import _pytree as pytree
        positions = []
        for i, leaf in enumerate(pytree.tree_leaves((args, kwargs))):
            if isinstance(leaf, pyctorch.Tensor) and id(leaf) not in self.refs:
                self.bind(leaf, Ref("input", len(positions)))
                positions.append(i)
        return positions

    # ---- breaks ----
    def graph_break(self, reason):
        from .eval_frame import user_frame
        self.breaks.append((reason, user_frame()))
        if self.fullgraph:
            from .exc import Unsupported
            raise Unsupported(reason)

    def data_dependent(self, what):
        self.graph_break(f"Data-dependent operation: {what} of a traced tensor needs its value in Python")

    def traced(self, t):
        ref = self.refs.get(id(t))
        return ref is not None and ref.key[0] != "const"

    # ---- records ----
    def _bind_result(self, call, result, inputs_dyn):
        index = len(self.calls)
        self.calls.append(call)
        if isinstance(result, pyctorch.Tensor):
            call.meta = TensorMeta(result)
            self.bind(result, Ref("op", index))
            if inputs_dyn:
                self.dyn.add(id(result))
            return
        call.multi = len(result)
        for j, r in enumerate(result):
            self.bind(r, Ref("item", index, j))
            if inputs_dyn:
                self.dyn.add(id(r))

    def _any_traced(self, values):
        for v in values:
            if isinstance(v, pyctorch.Tensor):
                if self.traced(v):
                    return True
            elif isinstance(v, (list, tuple)) and self._any_traced(v):
                return True
        return False

    def _any_dyn(self, values):
        for v in values:
            if isinstance(v, pyctorch.Tensor):
                if id(v) in self.dyn:
                    return True
            elif isinstance(v, (list, tuple)) and self._any_dyn(v):
                return True
        return False

    def record_call(self, kind, target, args, kwargs, result, data_shaped=False):
        values = list(args) + list(kwargs.values())
        if isinstance(result, pyctorch.Tensor) or (
                isinstance(result, (tuple, list)) and result and all(isinstance(r, pyctorch.Tensor) for r in result)):
            call = Call(kind, target, tuple(self.to_graph_arg(a) for a in args),
                        {k: self.to_graph_arg(v) for k, v in kwargs.items()}, None)
            self._bind_result(call, result, data_shaped or self._any_dyn(values))
            return
        name = target if isinstance(target, str) else getattr(target, "__name__", str(target))
        if self._any_traced(values) and name.rstrip("_") not in _SHAPE_QUERIES:
            self.data_dependent(f"{name}() returning {type(result).__name__}")

    # ---- the hook ----
    def hook(self, op_index, name, sig_text, mode, args, kwargs, result):
        if op_index < 0:
            return self._slot(name, args, result)
        kwargs = kwargs or {}
        data_shaped = name in _DATA_SHAPED or (name == "where" and len(args) + len(kwargs) == 1)
        if mode == 0:
            self.record_call("call_function", getattr(_C, name), args, kwargs, result, data_shaped)
        else:  # a method (self first) or an in-place method: replayed by name, as Python called it
            self.record_call("call_method", name, args, kwargs, result, data_shaped)
        return None

    def _slot(self, name, args, result):
        if name in ("__bool__", "__int__", "__float__", "__index__"):
            if self.traced(args[0]):
                self.data_dependent(f"{name[2:-2]}()")
            return None
        if name == "__len__":
            if id(args[0]) in self.dyn:
                self.graph_break("Dynamic shape operator: len() of a tensor whose shape depends on data")
            return None
        if name == "__getitem__":
            base, key = args
            mask = any(isinstance(k, pyctorch.Tensor) and k.dtype == pyctorch.bool
                       for k in (key if isinstance(key, tuple) else (key,)))
            self.record_call("call_function", operator.getitem, (base, key), {}, result, data_shaped=mask)
        elif name == "__setitem__":
            base, key, value = args
            self.calls.append(Call("call_function", operator.setitem,
                                   (self.to_graph_arg(base), self.to_graph_arg(key), self.to_graph_arg(value)),
                                   {}, False))
        return None

    def to_graph_arg(self, value):
        if isinstance(value, slice):
            return slice(self.to_graph_arg(value.start), self.to_graph_arg(value.stop),
                         self.to_graph_arg(value.step))
        return super().to_graph_arg(value)

    def record_switch(self, fn, args):
        """A state switch (grad mode, autocast) made inside the run: replayed in program order."""
        self.calls.append(Call("call_function", fn, tuple(args), {}, False))


# Note [State switches in the graph]
# no_grad, enable_grad, set_grad_enabled, inference_mode and autocast switch state through these _C functions
# (looked up on _C at each call). While capturing they are wrapped so that each switch is also a graph node; the
# graph's runner puts the state back if a node raises (eval_frame.py).
_SWITCHES = ("_set_grad_enabled", "set_autocast_enabled", "set_autocast_cpu_enabled", "set_autocast_dtype",
             "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "autocast_increment_nesting",
             "autocast_decrement_nesting", "clear_autocast_cache", "set_autocast_cache_enabled")


def _switch(run, fn):
    def switch(*args):
        run.record_switch(fn, args)
        return fn(*args)
    return switch


def _breaking(run, what, original):
    def method(self, *args, **kwargs):
        run.graph_break(what)
        return original(self, *args, **kwargs)
    return method


def _value_reading(run, what, original):
    def method(self, *args, **kwargs):
        if run.traced(self):
            run.data_dependent(what)
        return original(self, *args, **kwargs)
    return method


def _size_reading(run, what, original):
    """A size query that is fine on any tensor but one whose shape depends on data."""
    def method(self, *args, **kwargs):
        if id(self) in run.dyn:
            run.graph_break(f"Dynamic shape operator: {what} of a tensor whose shape depends on data")
        return original(self, *args, **kwargs)
    return method


def _property(getter, descriptor):
    return property(getter, getattr(descriptor, "__set__", None), getattr(descriptor, "__delete__", None))


class capture_run:
    """Context manager: `run` records the op calls (and state switches) made while it is open; grad mode and
    autocast stay as the caller has them."""

    def __init__(self, run):
        self.run = run

    def __enter__(self):
        from pyctorch._tensor import _methods_replaced
        run, T = self.run, pyctorch.Tensor
        patches = {}
        for meth in ("backward", "register_hook", "retain_grad", "requires_grad_",
                     "register_post_accumulate_grad_hook"):
            if hasattr(T, meth):
                patches[meth] = _breaking(run, f"autograd API Tensor.{meth}() inside compiled code", getattr(T, meth))
        for meth in ("item", "tolist", "numpy", "__array__"):
            patches[meth] = _value_reading(run, f"{meth}()", getattr(T, meth))
        for meth in ("size", "numel", "nelement"):
            patches[meth] = _size_reading(run, f"{meth}()", getattr(T, meth))
        shape, data, grad = T.__dict__["shape"], T.__dict__["data"], T.__dict__["grad"]
        patches["shape"] = _property(_size_reading(run, ".shape", shape.__get__), shape)
        patches["data"] = _property(lambda t: t.detach(), data)  # a recorded alias

        def read_grad(t):
            run.graph_break("Tensor.grad read inside compiled code (the autograd API is not captured)")
            return grad.__get__(t)
        patches["grad"] = _property(read_grad, grad)
        self.replaced = _methods_replaced(patches)
        self.replaced.__enter__()
        self.switches = {name: getattr(_C, name) for name in _SWITCHES if hasattr(_C, name)}
        for name, fn in self.switches.items():
            setattr(_C, name, _switch(run, fn))
        import pyctorch.autograd as autograd
        self.autograd_grad = autograd.grad

        def grad_call(*args, **kwargs):
            run.graph_break("torch.autograd.grad inside compiled code")
            return self.autograd_grad(*args, **kwargs)
        autograd.grad = grad_call
        self.inner = capturing(run, keep_grad_mode=True, refuse_values=False)
        self.inner.__enter__()
        _depth[0] += 1
        return run

    def __exit__(self, *exc):
        _depth[0] -= 1
        self.inner.__exit__(*exc)
        import pyctorch.autograd as autograd
        autograd.grad = self.autograd_grad
        for name, fn in self.switches.items():
            setattr(_C, name, fn)
        self.replaced.__exit__(*exc)
        return False
