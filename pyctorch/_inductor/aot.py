"""Ahead-of-time backward graphs for torch.compile (what torch's AOTAutograd gives its backends).

Note [AOT backward]
A captured graph that computes something needing gradients is compiled as a pair of graphs run by one
autograd.Function, instead of replaying its op calls under the autograd recorder:
- Built once, at compile time: the graph runs once more with grad mode on, on copies of its inputs and of the
  state it holds (the parameters themselves), so that no write of the trial run (an in-place op, batch norm's
  running statistics) reaches the caller's tensors or their version counters, and with the default generator's
  state put back afterwards, so that no random draw is used up. Then autograd.grad of its differentiable
  outputs, with gradients of ones, runs under the op trace hook. The formulas are Python, so their op calls are
  reported; the few ops the engine itself makes (summing the gradients that meet, casts, zeros for outputs nobody
  differentiated) are reported too (Note [The engine's ops in a trace] in csrc/autograd/engine.c). The records
  form the backward graph: the same formulas, in the engine's order, so the same numbers as eager.
- The backward graph's inputs are the output gradients and the forward values its formulas read, found by tensor
  identity, or by storage and geometry for the history-free aliases the engine saves of outputs. A view made
  inside a composite op (matmul's reshape) is read again from its forward value by as_strided; a tensor a
  composite op made inside (matmul's copy of a strided input: the trial run is also watched at the dispatcher for
  this) is made again in the backward graph by the same op call, when that op is an elementwise or layout op
  of the table (no write, no random draw, no state); a 0-d tensor of no traced storage (a number of the forward
  graph as a formula reads it) is a constant.
- Those forward values become extra outputs of the forward graph; the Function saves them (save_for_backward:
  eager's version checks) and hands them to the backward graph with the incoming gradients (made contiguous, as
  traced). A saved value that only pointwise ops read and that a short chain of them computes from other saved
  values is computed again in the backward graph instead (as torch's partitioner recomputes pointwise ops): a
  fused group then writes only its results, and the backward's fusion takes the chain with the formulas.
- Both graphs run without recording, so inductor fuses each with its reductions (Note [Pointwise fusion], Note
  [Row kernels]): the formulas' pointwise chains and row reductions become kernels as the forward's do.
The forward graph runs without recording, so a composite op that chooses its path by whether an operand requires
grad (matmul's fold, as ATen's) may take the other one than the trial run and eager: the same values to rounding;
the fused kernels make an operand laid out otherwise contiguous before reading it. The backward graph runs as
recorded, without the casts of an autocast region around backward(), as torch's does. Under create_graph the
gradients are given, and differentiating them again raises torch's error for double backward through compiled
code.
Where a graph is outside what this can do soundly, it is compiled as before (ops replayed under the recorder):
grad mode off, autocast or forward AD on, or no differentiable output; state switches in the graph; an in-place
op writing into a tensor that needs a gradient (in-place ops on the graph's own values and on state without
gradient are replayed); an input that cannot be copied with its strides; a non-CPU tensor; an output aliasing an
input, a held tensor or another output; a backward that reads a value the trace cannot name (a tensor computed
outside the op table), that writes into a tensor where the trace cannot see it (a version counter moved that no
recorded call explains), that mutates one of its inputs, or that needs a Python value of a traced tensor.
"""
import copy
import operator

import pyctorch
from pyctorch import _C

from .codegen import _fetch

__all__ = ["aot_compile"]

last_refusal = None  # why the newest graph was not made a pair (for tests and debugging), or None


def _refuse(why):
    global last_refusal
    last_refusal = why


_DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


def _mutates(node):
    """Whether a node writes to one of its operands (in-place op, out=, item assignment)."""
    if node.op not in ("call_function", "call_method"):
        return False
    if node.target is operator.setitem or "out" in node.kwargs:
        return True
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    return name in _WRITERS or (name.endswith("_") and not name.endswith("__"))


_WRITERS = frozenset({"_index_accumulate"})  # what formulas call that writes into its first argument


def _load(arg, env):
    from pyctorch.fx.node import map_arg
    return map_arg(arg, lambda n: env[n])


def _storage(t):
    return t.untyped_storage().data_ptr() if t.numel() > 0 else None


def _geometry(t):
    return (_storage(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)


def _autocast_on():
    return any(_C.is_autocast_enabled(device) for device in ("cpu", "cuda"))


def _eligible(gm):
    from .fusion import _SWITCH_NAMES
    from pyctorch.autograd import _forward_ad
    if not pyctorch.is_grad_enabled() or _autocast_on() or _forward_ad._levels:
        return False
    for node in gm.graph.nodes:
        if node.op == "call_function" and getattr(node.target, "__name__", "") in _SWITCH_NAMES:
            return False
        meta = node.meta.get("tensor_meta")
        if meta is not None and meta.device.type != "cpu":
            return False
    return True


def _writes_what_needs_grad(gm, env):
    """Whether an in-place op of the graph writes into an input or held tensor that needs a gradient (or a view of
    one). Writes into the graph's own intermediates (dropout's mask drawn in place) are replayed as recorded, and
    writes into state that needs none (batch norm's counters) are undone after the trial run."""
    needs = {_storage(env[n]) for n in gm.graph.nodes if n.op in ("placeholder", "get_attr")
             and isinstance(env.get(n), pyctorch.Tensor) and env[n].requires_grad}
    for node in gm.graph.nodes:
        if _mutates(node):
            target = node.kwargs.get("out", node.args[0] if node.args else None)
            value = env.get(target) if hasattr(target, "op") else None
            if not isinstance(value, pyctorch.Tensor) or _storage(value) in needs:
                return True
    return False


class _NoCopy(Exception):
    """A tensor the trial run cannot copy with its strides (an expanded or overlapping one)."""


def _trial_copies():
    """copy(t): what the trial run reads for a tensor it must leave as it is (Note [AOT backward]): a copy with t's
    strides, a leaf when t needs a gradient; parameters themselves (written in place, they would fail eagerly)."""
    made = {}

    def copy_of(t, is_input):
        if not isinstance(t, pyctorch.Tensor) or (not is_input and t.requires_grad and t.is_leaf):
            return t
        if id(t) not in made:
            with pyctorch.no_grad():
                c = t.clone()
            if any(a != b and n > 1 for a, b, n in zip(c.stride(), t.stride(), t.shape)):  # size-1 dims: any
                if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
                    return t  # an expanded tensor: no write can go into it, so the trial run reads it as it is
                raise _NoCopy()
            made[id(t)] = c.requires_grad_() if t.requires_grad else c
        return made[id(t)]
    return copy_of


def _run_forward(gm, example_inputs):
    """The graph run node by node with grad mode on, on copies of its inputs and held state: {node: value} and
    the output values."""
    env, inputs, copy_of = {}, iter(example_inputs), _trial_copies()
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            env[node] = copy_of(next(inputs), True)
        elif node.op == "get_attr":
            env[node] = copy_of(_fetch(gm, node.target), False)
        elif node.op == "call_function":
            env[node] = node.target(*_load(node.args, env), **_load(node.kwargs, env))
        elif node.op == "call_method":
            self, *rest = _load(node.args, env)
            env[node] = getattr(self, node.target)(*rest, **_load(node.kwargs, env))
        elif node.op == "output":
            return env, list(_load(node.args[0], env))
        else:
            raise NotImplementedError(node.op)
    return env, []


def _split_items(gm, env):
    """Every tensor of a multi-output call gets its getitem node (a saved mean or rstd the forward never read)."""
    graph = gm.graph
    for node in list(graph.nodes):
        value = env.get(node)
        if not isinstance(value, (tuple, list)) or not value or \
                not all(isinstance(v, pyctorch.Tensor) for v in value):
            continue
        have = {user.args[1] for user in node.users if user.op == "call_function" and user.target is operator.getitem
                and isinstance(user.args[1], int)}
        anchor = node
        for k, item in enumerate(value):
            if k in have:
                continue
            with graph.inserting_after(anchor):
                anchor = graph.call_function(operator.getitem, (node, k))
            from pyctorch._dynamo.capture import TensorMeta
            anchor.meta["tensor_meta"] = TensorMeta(item)
            env[anchor] = item


# the ops _op_again may call again: elementwise ops of the table and layout ops (new views or copies of their
# input), none of which draws random numbers or writes anything but its result
_LAYOUT_OPS = frozenset({"reshape", "contiguous", "clone", "view", "_unsafe_view", "flatten", "unflatten", "expand",
                         "transpose", "permute", "t", "squeeze", "unsqueeze", "narrow", "select", "slice",
                         "as_strided", "movedim", "to", "cat", "stack", "split", "chunk", "unbind"})


class _Producers:
    """The trial forward run seen at the dispatcher (every op call, those a composite op makes inside too): for a
    tensor a call made that can run again with the same result (an elementwise or layout op, no write, no
    Generator in its schema), the op's index, its arguments, its result, the item, and the tensor's version then."""

    def __init__(self):
        self.by_id, self.by_geometry, self.keep = {}, {}, []
        self.redoable = {k for k, entry in enumerate(_C._op_table())
                         if (entry["kind"] in ("unary", "binary") or entry["name"] in _LAYOUT_OPS)
                         and "Generator" not in entry["schema"]}

    def hook(self, op_index, mode, args):
        if op_index < 0 or mode != 0 or op_index not in self.redoable:
            return None

        def finish(result):
            items = result if isinstance(result, (tuple, list)) else (result,)
            self.keep.append((args, result))
            for j, r in enumerate(items):
                if isinstance(r, pyctorch.Tensor) and not any(r is a for a in args):
                    entry = (op_index, args, result, j if items is result else None, r, r._version)
                    self.by_id.setdefault(id(r), entry)
                    if _storage(r) is not None:
                        self.by_geometry.setdefault(_geometry(r), entry)
        return finish

    def find(self, t):
        """The call that made t (or a tensor of t's storage and geometry) and that can run again, or None."""
        entry = self.by_id.get(id(t)) or (self.by_geometry.get(_geometry(t)) if _storage(t) is not None else None)
        if entry is None or entry[4]._version != entry[5]:
            return None  # written after it was made: running the op again would not give what was saved
        return entry


def _op_again(op_index, *values):
    """An op called again with the values the dispatcher saw (one per parameter of its schema)."""
    return _C._call_op(op_index, values)


class _seen_at_dispatch:
    """Context manager: while open, the dispatcher reports every op call to `producers` (through the forward AD
    hook, which sees them all: Note [Forward AD] in csrc/autograd/forward_ad.c)."""

    def __init__(self, producers):
        self.producers = producers

    def __enter__(self):
        _C._set_forward_ad_hook(self.producers.hook, lambda src, dst: None)

    def __exit__(self, *exc):
        _C._set_forward_ad_hook(None, None)
        return False


def _backward_run_class():
    from pyctorch._dynamo.capture import CompileRun

    class BackwardRun(CompileRun):
        """Records autograd.grad's op calls; tensors it did not see made are named through `geometry` (an alias of
        a forward value) or listed in `unknown`."""

        def __init__(self):
            super().__init__()
            self.geometry = {}   # _geometry of a forward value -> its Ref
            self.storages = {}   # storage address -> a forward value of that storage
            self.unknown = []
            self.zeros = set()   # ids of the zeros the engine made for outputs nobody differentiated
            self.versions = {}   # id -> (tensor, its version when last seen made or written by a recorded call)
            self.producers = None  # _Producers of the trial forward run
            self.resolving = set()

        def bind(self, tensor, ref):
            super().bind(tensor, ref)
            self.versions[id(tensor)] = (tensor, tensor._version)

        def _written(self, t):
            """A recorded call wrote into t: every tracked tensor of its storage has its new version."""
            ptr = _storage(t)
            for key, (other, _) in list(self.versions.items()):
                if other is t or (ptr is not None and _storage(other) == ptr):
                    self.versions[key] = (other, other._version)

        def _record_partial(self, kind, target, args, kwargs, result):
            """A call returning tensors and Nones (a backward kernel's gradients where output_mask asks for some)."""
            from pyctorch._dynamo.capture import Call
            from pyctorch.export._trace import Ref
            call = Call(kind, target, tuple(self.to_graph_arg(a) for a in args),
                        {k: self.to_graph_arg(v) for k, v in kwargs.items()}, len(result))
            index = len(self.calls)
            self.calls.append(call)
            for j, r in enumerate(result):
                if r is not None:
                    self.bind(r, Ref("item", index, j))

        def written_unseen(self):
            """Whether some tensor of the trace was written by a call the trace did not see."""
            return any(t._version != v for t, v in self.versions.values())

        def record_call(self, kind, target, args, kwargs, result, data_shaped=False):
            if isinstance(result, (tuple, list)) and None in result and \
                    all(r is None or isinstance(r, pyctorch.Tensor) for r in result):
                self._record_partial(kind, target, args, kwargs, result)
            else:
                super().record_call(kind, target, args, kwargs, result, data_shaped)
            name = target if isinstance(target, str) else getattr(target, "__name__", "")
            if "out" in kwargs or (name.endswith("_") and not name.endswith("__")):
                written = kwargs.get("out", args[0] if args else None)
                if isinstance(written, pyctorch.Tensor):
                    self._written(written)

        def ref_of(self, t):
            ref = self.refs.get(id(t))
            if ref is not None:
                return ref
            ptr = _storage(t)
            ref = self.geometry.get(_geometry(t)) if ptr is not None else None
            if ref is not None:  # an alias the engine saved of a forward value
                self.bind(t, ref)
                return ref
            base = self.storages.get(ptr)
            if base is not None and base.dtype == t.dtype:
                # a view of a forward value made where the trace did not see it (inside a composite op): the same
                # elements of the same storage, read again from that value
                self.record_call("call_function", _C.as_strided,
                                 (base, tuple(t.shape), tuple(t.stride()), t.storage_offset()), {}, t)
                return self.refs[id(t)]
            made = self.producers.find(t) if self.producers is not None and id(t) not in self.resolving else None
            if made is not None:
                # a value made inside a composite op (matmul's copy of a strided input): that op runs again in
                # the backward graph, on values the trace can name
                op_index, args, result, _, produced, _ = made
                self.resolving.add(id(t))
                try:
                    self.record_call("call_function", _op_again, (op_index, *args), {}, result)
                finally:
                    self.resolving.discard(id(t))
                ref = self.refs.get(id(produced))
                if ref is not None:
                    self.bind(t, ref)
                    return ref
            if t.dim() != 0:
                self.unknown.append(t)
            # else a number of the forward graph as the formulas read it (a wrapped scalar): a constant
            return super().ref_of(t)

        def _slot(self, name, args, result):
            if name == "_engine_add":
                self.record_call("call_function", _C.add, args, {}, result)
            elif name == "_engine_cast":
                self.record_call("call_method", "to", args, {}, result)
            elif name == "_index_accumulate":  # getitem's backward: zeros, then the gradient added at the key
                from pyctorch._dynamo.capture import Call
                self.calls.append(Call("call_function", _C._index_accumulate,
                                       tuple(self.to_graph_arg(a) for a in args), {}, False))
                self._written(args[0])
            elif name == "__setitem__":
                super()._slot(name, args, result)
                self._written(args[0])
            elif name == "_engine_zeros":
                size, dtype, device = args
                self.record_call("call_function", _C.zeros, (size,), {"dtype": dtype, "device": device}, result)
                self.zeros.add(id(result))
            else:
                return super()._slot(name, args, result)
            return None
    return BackwardRun


def _trace_backward(gm, env, outs, producers):
    """The backward graph of the trial run, or None. Returns (bgm, n_grads, saved nodes of gm, grad slots)."""
    from pyctorch.export._trace import Ref, capturing
    from pyctorch._dynamo.graph_build import build_graph_module
    diff = [k for k, o in enumerate(outs) if o.requires_grad]
    targets, seen = [], set()
    for node in gm.graph.nodes:
        t = env.get(node)
        if node.op in ("placeholder", "get_attr") and isinstance(t, pyctorch.Tensor) and t.requires_grad \
                and id(t) not in seen:
            seen.add(id(t))
            targets.append(node)
    if not diff or not targets:
        return _refuse('no differentiable output or nothing to differentiate')
    run = _backward_run_class()()
    run.producers = producers
    grads_in = [pyctorch.ones(tuple(outs[k].shape), dtype=outs[k].dtype) for k in diff]
    for k, g in enumerate(grads_in):
        run.bind(g, Ref("input", k))
    fwd_of_input = {}
    for node in gm.graph.nodes:
        t = env.get(node)
        if not isinstance(t, pyctorch.Tensor) or id(t) in run.refs:
            continue
        ref = Ref("input", len(grads_in) + len(fwd_of_input))
        fwd_of_input[ref.key[1]] = node
        run.bind(t, ref)
        if _storage(t) is not None:
            run.geometry.setdefault(_geometry(t), ref)
            run.storages.setdefault(_storage(t), t)
    from pyctorch.autograd import _norm_formulas
    _norm_formulas.structural_nonzero = lambda g: id(g) not in run.zeros
    try:
        with capturing(run, keep_grad_mode=True, refuse_values=False):
            grads = pyctorch.autograd.grad([outs[k] for k in diff], [env[n] for n in targets],
                                           grad_outputs=grads_in, allow_unused=True)
    finally:
        _norm_formulas.structural_nonzero = None
    if run.breaks or run.unknown:
        return _refuse('the backward read a value the trace cannot name or needed a traced value in Python')
    if run.written_unseen():
        return _refuse('the backward wrote into a tensor where the trace could not see it')
    slots = [j for j, g in enumerate(grads) if g is not None]
    if not slots:
        return _refuse('no gradient reaches an input')
    bgm = build_graph_module(run, [grads[j] for j in slots])
    graph = bgm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node in graph.nodes:
        if _mutates(node) and node.args and getattr(node.args[0], "op", None) == "placeholder":
            return _refuse('a formula writes into a gradient or a saved value')
    graph.eliminate_dead_code(lambda n: n.is_impure() or _mutates(n))
    saved = []
    for k, node in enumerate(placeholders[len(grads_in):], start=len(grads_in)):
        if node.users:
            saved.append(fwd_of_input[k])
        else:
            graph.erase_node(node)
    bgm.recompile()
    return bgm, diff, saved, [targets[j] for j in slots]


_RECOMPUTE_LIMIT = 16  # pointwise ops a saved value may be computed again from


def _recompute_pointwise(fgm, bgm, n_grads, saved):
    """A saved value that pointwise ops compute from other saved values is computed again in the backward graph
    instead of saved (Note [AOT backward]); the saved forward nodes that remain, in the backward's order."""
    from pyctorch.fx.node import map_arg
    from .pointwise import expressions
    graph = bgm.graph
    placeholder_of = dict(zip(saved, [n for n in graph.nodes if n.op == "placeholder"][n_grads:]))
    order = {n: k for k, n in enumerate(fgm.graph.nodes)}

    def cheap(n):
        return n.op in ("call_function", "call_method") and expressions(n) is not None

    def chain(n, seen):
        """The pointwise nodes computing n back to saved values, or None when it reaches an unsaved one."""
        if n in seen:
            return seen
        if not cheap(n):
            return seen if n in placeholder_of else None
        seen.add(n)
        for m in n.all_input_nodes:
            if m not in placeholder_of or cheap(m):
                if chain(m, seen) is None or len(seen) > _RECOMPUTE_LIMIT:
                    return None
        return seen

    recompute = set()
    for n in saved:
        # a value the forward writes anyway (read by a GEMM, an output) stays saved; one only a pointwise group
        # reads would be written just to be saved
        if cheap(n) and n not in recompute and all(cheap(u) for u in n.users):
            found = chain(n, set())
            if found is not None:
                recompute |= {m for m in found if cheap(m)}
    if not recompute:
        return saved
    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    copies = {}
    with graph.inserting_after(last):
        for n in sorted(recompute, key=order.__getitem__):
            copies[n] = graph.node_copy(n, lambda m: copies[m] if m in copies else placeholder_of[m])
    for n, copy_ in copies.items():
        if n in placeholder_of:
            placeholder_of[n].replace_all_uses_with(copy_)
    kept = []
    for n in saved:
        ph = placeholder_of[n]
        if ph.users:
            kept.append(n)
        else:
            graph.erase_node(ph)
    bgm.recompile()
    return kept


class _Plan:
    __slots__ = ("forward", "backward", "n_out", "diff", "n_saved", "saved_is_output", "params", "n_inputs",
                 "grad_slots")


def aot_compile(gm, example_inputs, compile_forward, compile_backward):
    """A callable running gm as a forward/backward pair (Note [AOT backward]), or None where the pair cannot be
    built; compile_forward and compile_backward make a graph's runner from a GraphModule."""
    from pyctorch.fx import GraphModule
    global last_refusal
    last_refusal = None
    if not _eligible(gm):
        return _refuse('grad mode off, autocast or forward AD on, a state switch or a non-CPU tensor')
    fgm = GraphModule(gm, copy.deepcopy(gm.graph))
    rng = pyctorch.get_rng_state()
    try:
        producers = _Producers()
        try:
            with _seen_at_dispatch(producers):
                env, outs = _run_forward(fgm, example_inputs)
        except _NoCopy:
            return _refuse("an input or held tensor the trial run cannot copy with its strides")
        except RuntimeError:  # an in-place op on an input that needs a gradient (its copy is a leaf)
            return _refuse("an in-place op writes into a tensor that needs a gradient")
        if _writes_what_needs_grad(fgm, env):
            return _refuse("an in-place op writes into a tensor that needs a gradient")
        if not outs or not all(isinstance(o, pyctorch.Tensor) for o in outs):
            return _refuse('an output that is not a tensor')
        held = {_storage(env[n]) for n in fgm.graph.nodes
                if n.op in ("placeholder", "get_attr") and isinstance(env.get(n), pyctorch.Tensor)}
        out_storages = [_storage(o) for o in outs if _storage(o) is not None]
        if len(set(out_storages)) != len(out_storages) or held & set(out_storages):
            return _refuse('an output aliasing an input, a held tensor or another output')
        _split_items(fgm, env)
        traced = _trace_backward(fgm, env, outs, producers)
    finally:
        pyctorch.set_rng_state(rng)
    if traced is None:
        return None  # _trace_backward said why
    bgm, diff, saved, grad_targets = traced
    saved = _recompute_pointwise(fgm, bgm, len(diff), saved)
    output = next(n for n in fgm.graph.nodes if n.op == "output")
    out_nodes = list(output.args[0])
    output.args = (tuple(out_nodes) + tuple(saved),)
    fgm.graph.eliminate_dead_code(lambda n: n.is_impure() or _mutates(n))
    fgm.recompile()
    plan = _Plan()
    plan.n_out, plan.diff, plan.n_saved = len(out_nodes), diff, len(saved)
    plan.saved_is_output = [n in out_nodes for n in saved]
    plan.n_inputs = len(example_inputs)
    placeholders = [n for n in fgm.graph.nodes if n.op == "placeholder"]
    inputs_by_node = {n: k for k, n in enumerate(placeholders)}
    extra = [n for n in grad_targets if n.op == "get_attr"]
    plan.params = [_fetch(fgm, n.target) for n in extra]
    plan.grad_slots = [inputs_by_node[n] if n in inputs_by_node else plan.n_inputs + extra.index(n)
                       for n in grad_targets]
    plan.forward = compile_forward(fgm)
    plan.backward = compile_backward(bgm)
    function = _function_class()

    def run(*inputs):
        return function.apply(plan, *inputs, *plan.params)
    run.forward_graph, run.backward_graph = fgm, bgm
    return run


def _function_class():
    if _Cache.cls is None:
        from pyctorch.autograd import Function

        class CompiledFunction(Function):
            @staticmethod
            def forward(ctx, plan, *args):
                values = plan.forward(*args[:plan.n_inputs])
                outs, saved = values[:plan.n_out], values[plan.n_out:]
                ctx.plan = plan
                # a saved output is kept as an alias without history (the output itself would own this node)
                ctx.save_for_backward(*[s.detach() if is_out else s for s, is_out in zip(saved, plan.saved_is_output)])
                ctx.mark_non_differentiable(*[o for k, o in enumerate(outs) if k not in plan.diff])
                return tuple(outs)

            @staticmethod
            def backward(ctx, *grads):
                plan = ctx.plan
                given = [grads[k].contiguous() for k in plan.diff]
                saved = ctx.saved_tensors
                if _autocast_on():  # the graph is fixed: no casts of an autocast region around backward()
                    with pyctorch.autocast("cpu", enabled=False), pyctorch.autocast("cuda", enabled=False):
                        return CompiledFunction.backward(ctx, *grads)
                if pyctorch.is_grad_enabled():  # create_graph: the gradients are given; their own backward raises
                    with pyctorch.no_grad():
                        results = plan.backward(*given, *saved)
                    results = _NoDoubleBackward.get().apply(tuple(results), *given, *saved)
                else:
                    results = plan.backward(*given, *saved)
                out = [None] * (1 + plan.n_inputs + len(plan.params))
                for slot, g in zip(plan.grad_slots, results):
                    out[1 + slot] = g
                return tuple(out)
        _Cache.cls = CompiledFunction
    return _Cache.cls


class _Cache:
    cls = None


class _NoDoubleBackward:
    """The gradients of a backward run under create_graph, given a node whose own backward raises torch's error."""
    cls = None

    @staticmethod
    def get():
        if _NoDoubleBackward.cls is None:
            from pyctorch.autograd import Function

            class CompiledFunctionBackward(Function):
                @staticmethod
                def forward(ctx, results, *depends_on):
                    return tuple(r.view_as(r) for r in results)

                @staticmethod
                def backward(ctx, *grads):
                    raise RuntimeError(_DOUBLE_BACKWARD)
            _NoDoubleBackward.cls = CompiledFunctionBackward
        return _NoDoubleBackward.cls
