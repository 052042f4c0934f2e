"""One run of a model under the op trace hook: the records torch.export builds its graph from.

Note [Export capture]
torch.export traces with fake tensors and symbolic sizes through its dispatcher. pyctorch captures by running
the model on real tensors while the binding reports every op-table call made from Python (Note [Op trace hook]
in csrc/python/bindings.c): the hook is told the op, the arguments as given and the result, after the op ran.
Each tensor is known by its identity: the user's inputs, the module's parameters and buffers, and every op's
results map to graph values (Refs); a tensor the trace has not seen is a constant and is lifted as an input of
its own. The Python layers above the table (nn.functional's compositions, the Tensor methods written in Python)
run normally, so the graph holds the table's ops they call: the "aten level" of pyctorch.

What escapes a tensor into Python is refused, as torch's tracing refuses it: `bool(t)`, `int(t)`, `float(t)`,
`t.item()`, `t.tolist()`, `t.numpy()` on a traced tensor raise GuardOnDataDependentSymNode (Python control flow
on data cannot be recorded). Basic indexing is recorded as select/slice/unsqueeze (the indexing slots report
too); advanced indexing inside export raises NotImplementedError. In-place ops are recorded as the in-place
overloads, in program order: graphs run by pyctorch alias exactly as eager does (no functionalization).

Sizes are plain ints during a run. Dynamic dimensions are found by running again at other sizes and comparing
the records (Note [Dynamic dims by reruns] in _dynamic.py).
"""
import functools

import pyctorch
from pyctorch import _C

__all__ = ["Ref", "Record", "TraceRun", "GuardOnDataDependentSymNode"]


class GuardOnDataDependentSymNode(RuntimeError):
    """torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Python needed a traced tensor's value."""


class Ref:
    """A value of the graph being recorded: ("input", k), ("param", name), ("buffer", name), ("const", k),
    ("op", i) for record i's result, ("item", i, j) for element j of a record's tuple result."""
    __slots__ = ("key",)

    def __init__(self, *key):
        self.key = key

    def __eq__(self, other):
        return isinstance(other, Ref) and other.key == self.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"Ref{self.key}"


class Record:
    """One recorded op call: the OpOverload, its arguments (Refs for tensors) and the metas of its results
    ((shape, dtype) for a tensor result; a list of them for a sequence of tensors)."""
    __slots__ = ("target", "args", "kwargs", "meta", "multi")

    def __init__(self, target, args, kwargs, meta, multi):
        self.target, self.args, self.kwargs, self.meta, self.multi = target, args, kwargs, meta, multi


def _data_dependent(what):
    raise GuardOnDataDependentSymNode(
        f"Could not guard on data-dependent expression ({what} of a tensor computed from the exported "
        "program's inputs). Python control flow or values that depend on tensor data cannot be captured by "
        "torch.export; use tensor ops instead (torch.where, masking), or move the computation out of the model.")


@functools.lru_cache(maxsize=None)
def _params_of(sig_text):
    """'(Tensor input, int[] size, *, Tensor? out=None)' -> ((type, name, kwarg_only), ...)."""
    from pyctorch._op_overloads import split_params, parse_param
    _, parts = split_params("f" + sig_text)
    out, kw = [], False
    for part in parts:
        if part == "*":
            kw = True
            continue
        type_, name, _ = parse_param(part)
        out.append((type_, name, kw))
    return tuple(out)


def _is_list_type(type_):
    base = type_.rstrip("?")
    return base.endswith("]") and ("int" in base or "SymInt" in base)


def _bind(params, args, kwargs):
    """The call's arguments by parameter name, in parameter order (what the parser accepted: a list parameter
    may have been given as several ints)."""
    positional = [p for p in params if not p[2]]
    bound, i, extra = {}, 0, len(args) - len(positional)
    for type_, name, _ in positional:
        if i >= len(args):
            break
        if extra > 0 and _is_list_type(type_) and isinstance(args[i], int):
            bound[name] = list(args[i:i + extra + 1])
            i, extra = i + extra + 1, 0
            continue
        bound[name] = args[i]
        i += 1
    bound.update(kwargs)
    types = {p[1]: p[0] for p in params}
    for name, value in list(bound.items()):
        type_ = types.get(name, "")
        if _is_list_type(type_):  # int[] parameters: a Size, tuple or single int is a list in the graph
            if isinstance(value, int) and not isinstance(value, bool):
                bound[name] = [value]
            elif isinstance(value, (tuple, list)):
                bound[name] = list(value)
    order = {p[1]: k for k, p in enumerate(params)}
    return dict(sorted(bound.items(), key=lambda kv: order.get(kv[0], len(order)))), params


def _choose_overload(packet, entry_id, inplace, bound):
    """The aten overload of packet a call with these arguments is (the op table's entry is one function for all
    of an operator's overloads; the name only says which form the call took)."""
    from pyctorch._ops import _aten_specs
    specs = [s for s in _aten_specs()[packet._opname].values()
             if s.entry_id == entry_id and not s.is_out and s.is_inplace == inplace]
    if not specs:
        specs = [s for s in _aten_specs()[packet._opname].values() if not s.is_out]
    given = {("self" if k == "input" else k): v for k, v in bound.items() if k != "out"}
    for spec in specs:
        schema = getattr(packet, spec.overload)._schema
        names = {a.name for a in schema.arguments}
        if any(k not in names for k in given):
            continue
        ok = True
        for a in schema.arguments:
            value = given.get(a.name)
            if a.name not in given:
                if not a.has_default_value:
                    ok = False
                continue
            if a.type.startswith("Tensor") and not a.type.startswith("Tensor[") and \
                    not isinstance(value, pyctorch.Tensor) and not (a.type.endswith("?") and value is None):
                ok = False
            if a.type.startswith("Scalar") and isinstance(value, pyctorch.Tensor):
                ok = False
        if ok:
            return getattr(packet, spec.overload)
    return getattr(packet, specs[0].overload)


def _meta(t):
    return (tuple(t.shape), t.dtype)


class TraceRun:
    """Records one run of a callable: inputs, parameters and buffers are given Refs before the run."""

    def __init__(self):
        self.records = []
        self.refs = {}       # id(tensor) -> Ref
        self.keep = []       # every tensor seen, so that ids stay unique during the run
        self.consts = []     # the lifted constant tensors, in order of first use
        self.const_names = {}  # id(tensor) -> attribute path of a module tensor that is no buffer
        self.input_of = {}   # input position -> its tensor (kept when an in-place op rebinds the tensor)

    # ---- values ----
    def bind(self, tensor, ref):
        self.refs[id(tensor)] = ref
        self.keep.append(tensor)
        if ref.key[0] == "input":
            self.input_of.setdefault(ref.key[1], tensor)

    def ref_of(self, t):
        ref = self.refs.get(id(t))
        if ref is None:
            ref = Ref("const", len(self.consts))
            self.consts.append(t)
            self.bind(t, ref)
        return ref

    def to_graph_arg(self, value):
        if isinstance(value, pyctorch.Tensor):
            return self.ref_of(value)
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return [self.to_graph_arg(v) for v in value]
        if isinstance(value, (pyctorch.Generator if hasattr(pyctorch, "Generator") else ())):
            raise NotImplementedError("torch.export: a torch.Generator argument cannot be captured")
        return value

    def _result(self, target, args, kwargs, result):
        index = len(self.records)
        if isinstance(result, pyctorch.Tensor):
            self.records.append(Record(target, args, kwargs, _meta(result), False))
            self.bind(result, Ref("op", index))
            return
        if isinstance(result, (tuple, list)) and all(isinstance(r, pyctorch.Tensor) for r in result):
            self.records.append(Record(target, args, kwargs, [_meta(r) for r in result], True))
            for j, r in enumerate(result):
                self.bind(r, Ref("item", index, j))
            return
        raise NotImplementedError(f"torch.export: {target} returned {type(result).__name__}, which pyctorch's "
                                  "export cannot record")

    def record(self, target, args, kwargs, result):
        self._result(target, tuple(self.to_graph_arg(a) for a in args),
                     {k: self.to_graph_arg(v) for k, v in kwargs.items()}, result)

    def opaque_call(self, target, args, kwargs, run_kernel):
        """A torch.library operator's call: its kernel runs with the hook off and the call is one record."""
        hook = _C._set_op_trace_hook(None)
        try:
            result = run_kernel()
        finally:
            _C._set_op_trace_hook(hook)
        self.record(target, args, kwargs, result)
        return result

    # ---- the hook ----
    def hook(self, op_index, name, sig_text, mode, args, kwargs, result):
        if op_index < 0:
            return self._slot(name, args, result)
        entry = _table()[op_index]
        bound, params = _bind(_params_of(sig_text), args, kwargs or {})
        out = bound.pop("out", None)
        if out is not None:
            raise NotImplementedError(f"torch.export: out= arguments ({name}(..., out=...)) cannot be captured; "
                                      "use the functional form")
        from pyctorch._op_overloads import _ATEN_NAME
        op_name = _ATEN_NAME.get(entry["name"], entry["name"]) + ("_" if mode == 2 else "")
        packet = getattr(pyctorch.ops.aten, op_name)
        target = _choose_overload(packet, entry["id"], mode == 2, bound)
        call_args, call_kwargs, positional = [], {}, True
        for type_, pname, kw_only in params:
            if pname not in bound:
                positional = positional and kw_only  # a gap ends the positional run
                continue
            if positional and not kw_only:
                call_args.append(bound[pname])
            else:
                call_kwargs[pname] = bound[pname]
        self.record(target, call_args, call_kwargs, result)
        return None

    def _slot(self, name, args, result):
        if name in ("__bool__", "__int__", "__float__", "__index__"):
            if id(args[0]) in self.refs and self.refs[id(args[0])].key[0] != "const":
                _data_dependent(f"{name[2:-2]}()")
            return None
        if name == "__getitem__":
            self._getitem(args[0], args[1], result)
        elif name == "__setitem__":
            self._setitem(*args)
        return None

    # ---- indexing ----
    def _view_chain(self, base, key):
        """Record base[key] for basic indexing as the table's views; the final real tensor and its Ref."""
        items = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, (pyctorch.Tensor, list)) or (k is not None and not isinstance(k, (int, slice))
                                                        and k is not Ellipsis) for k in items):
            raise NotImplementedError("torch.export: advanced indexing (tensor or list indices) is not captured "
                                      "by pyctorch's export yet; use index_select / gather / masked_fill")
        n_consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
        expanded = []
        for k in items:
            if k is Ellipsis:
                expanded += [slice(None)] * (base.dim() - n_consumed)
            else:
                expanded.append(k)
        cur, dim = base, 0
        aten = pyctorch.ops.aten
        for k in expanded:
            if k is None:
                nxt = cur.unsqueeze(dim)
                self.record(aten.unsqueeze.default, (cur, dim), {}, nxt)
                dim += 1
            elif isinstance(k, bool):
                raise NotImplementedError("torch.export: indexing with a bool is not captured")
            elif isinstance(k, int):
                nxt = cur.select(dim, k)
                self.record(aten.select.int, (cur, dim, k), {}, nxt)
            else:
                start, stop, step = k.indices(cur.shape[dim])
                if (start, stop, step) == (0, cur.shape[dim], 1):
                    dim += 1
                    continue
                stop = max(stop, start)
                nxt = cur.narrow(dim, start, stop - start) if step == 1 else \
                    aten.slice.Tensor(cur, dim, start, stop, step)
                self.record(aten.slice.Tensor, (cur, dim, start, stop) + ((step,) if step != 1 else ()), {}, nxt)
                dim += 1
            cur = nxt
        return cur

    def _getitem(self, base, key, result):
        cur = self._view_chain(base, key)
        if cur is base:  # x[...] / x[:]: the same values, a view of them
            self.bind(result, self.ref_of(base))
        else:
            self.bind(result, self.refs[id(cur)])

    def _setitem(self, base, key, value):
        view = self._view_chain(base, key)
        aten = pyctorch.ops.aten
        if isinstance(value, pyctorch.Tensor):
            self.record(aten.copy_.default, (view, value), {}, view)
        else:
            self.record(aten.fill_.Scalar, (view, value), {}, view)
        if view is base:
            return
        # the base was written through a view: later reads of it go through the runtime tensor it aliases


@functools.lru_cache(maxsize=None)
def _table_cached():
    return tuple(_C._op_table())


def _table():
    return _table_cached()


def _to_dtype(dtype):
    def method(self, memory_format=None):
        return self.to(dtype)
    return method


# Tensor methods written in C that are no op of the table: while capturing they go through ops that report
# (the dtype conversions), or refuse (what turns a traced tensor into Python values).
_DTYPE_METHODS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                  "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool"}


def _refusing(run, what, original):
    def method(self, *args, **kwargs):
        ref = run.refs.get(id(self))
        if ref is not None and ref.key[0] != "const":
            _data_dependent(what)
        return original(self, *args, **kwargs)
    return method


def _chained(outer, inner):
    """A hook that reports to the hook set before the capture (a FlopCounterMode) and then records."""
    def hook(*args):
        outer(*args)
        return inner(*args)
    return hook


_ACTIVE = []  # the TraceRuns of the capturing blocks in progress, innermost last


def active_run():
    """The TraceRun recording right now, or None."""
    return _ACTIVE[-1] if _ACTIVE else None


class capturing:
    """Context manager: the trace hook set to run.hook, the C methods above replaced, grad mode off (torch.compile's
    capture keeps the grad mode and replaces the value-reading methods itself: keep_grad_mode, refuse_values)."""

    def __init__(self, run, keep_grad_mode=False, refuse_values=True):
        self.run = run
        self.keep_grad_mode = keep_grad_mode
        self.refuse_values = refuse_values

    def __enter__(self):
        from pyctorch._tensor import _methods_replaced
        T = pyctorch.Tensor
        patches = {}
        for meth, dt in _DTYPE_METHODS.items():
            patches[meth] = _to_dtype(getattr(pyctorch, dt))
        for meth in ("item", "tolist", "numpy", "__array__") if self.refuse_values else ():
            patches[meth] = _refusing(self.run, f"{meth}()", getattr(T, meth))
        patches["cpu"] = lambda self, *a, **k: self.to("cpu")
        self.replaced = _methods_replaced(patches)
        self.replaced.__enter__()
        self.grad = pyctorch.is_grad_enabled()
        if not self.keep_grad_mode:
            pyctorch._C._set_grad_enabled(False)
        self.previous = _C._set_op_trace_hook(None)
        _C._set_op_trace_hook(self.run.hook if self.previous is None else _chained(self.previous, self.run.hook))
        _ACTIVE.append(self.run)
        return self.run

    def __exit__(self, *exc):
        _ACTIVE.pop()
        _C._set_op_trace_hook(self.previous)
        if not self.keep_grad_mode:
            pyctorch._C._set_grad_enabled(self.grad)
        self.replaced.__exit__(*exc)
        return False
