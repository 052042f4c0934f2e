"""Pointwise fusion: groups of float32 pointwise calls of a captured graph become one generated C kernel, with a
generated backward kernel when gradients flow through them.

Note [Pointwise fusion]
Walking the graph in order, a fusable call (pointwise.py: a float32, contiguous CPU result whose tensor operands
are contiguous float32 of its shape, broadcast trailing dims of it, one value per row of it, or 0-d constants:
_operand_kind) joins the open group of the operands it reads, merging
groups when it reads several; a call that is not fusable closes the groups it reads, and a state switch closes
all. A closed group has no outside reader between its members, so its kernel can run where its last member was.
Groups of two or more calls become one node: a FusedKernel over the group's outside operands, returning the
members read outside (the others never reach memory). When a gradient is needed, the kernel runs as an autograd
Function that saves only its operands; the backward kernel recomputes the members element by element and pushes
the output gradients back through the members' partial derivatives in reverse order (reverse mode within the
element), writing the operands' gradients in one pass.
"""
import operator

import pyctorch

from . import cpp
from .pointwise import c_float, expressions

__all__ = ["fuse", "FusedKernel"]

_SWITCH_NAMES = frozenset({"_set_grad_enabled", "set_autocast_enabled", "set_autocast_cpu_enabled",
                           "set_autocast_dtype", "set_autocast_cpu_dtype", "autocast_increment_nesting",
                           "autocast_decrement_nesting", "clear_autocast_cache", "set_autocast_cache_enabled"})
_SCALAR_TYPES = {pyctorch.float32: "float", pyctorch.float64: "double", pyctorch.int64: "int64_t",
                 pyctorch.int32: "int32_t"}


def _meta(node):
    return node.meta.get("tensor_meta") if hasattr(node, "meta") else None


def _fusable(node):
    if node.op not in ("call_function", "call_method"):
        return None
    found = expressions(node)
    meta = _meta(node)
    if found is None or meta is None or meta.dtype != pyctorch.float32 or meta.device.type != "cpu" \
            or not meta.contiguous or 0 in meta.shape:
        return None
    from pyctorch.fx import Node
    for operand in found[0]:
        if isinstance(operand, Node):
            m = _meta(operand)
            if m is None or m.device.type != "cpu":
                return None
            if _operand_kind(m, meta.shape) is None:
                return None
        elif not isinstance(operand, (int, float)) or isinstance(operand, bool):
            return None
    return found


def _operand_kind(m, shape):
    """How an operand of meta m is read by a kernel over `shape` (Note [Pointwise fusion]): "full" (the same
    shape), "scalar" (0-d, read once, no gradient), "suffix" (the trailing dims of shape, repeated over the
    leading ones: a bias, a weight, a positional table), "row" (shape[:-1] + (1,): one value per row, as a
    normalisation's statistics); None when it cannot be."""
    if m.shape == () and m.dtype in _SCALAR_TYPES and not m.requires_grad:
        return "scalar"
    if m.dtype != pyctorch.float32 or not m.contiguous or not shape:
        return None
    if m.shape == shape:
        return "full"
    dims = tuple(m.shape)
    while dims and dims[0] == 1:
        dims = dims[1:]
    if dims and len(dims) < len(shape) and dims == tuple(shape[len(shape) - len(dims):]):
        return "suffix"
    if len(m.shape) == len(shape) and m.shape[-1] == 1 and tuple(m.shape[:-1]) == tuple(shape[:-1]) and \
            shape[-1] > 1:
        return "row"
    return None


class _Group:
    def __init__(self, shape):
        self.shape, self.members, self.open = shape, [], True
        self.row_shape = tuple(shape[:-1]) + (1,) if shape else None
        self.reductions = []  # last-dim reductions inside (a row group: Note [Row kernels] in row_kernels.py)


def _groups(graph, reductions=False):
    """The pointwise groups of graph; with reductions, a last-dim reduction joins the group of its input and the
    group's later members may read it (a row group, for graphs that run without recording)."""
    from .row_kernels import reduction
    order = {node: k for k, node in enumerate(graph.nodes)}
    group_of, groups, found = {}, [], {}
    for node in graph.nodes:
        red = reduction(node) if reductions else None
        if red is not None:
            x = red[1]
            g = group_of.get(x)
            if g is None or not g.open or g.shape != _meta(x).shape:
                g = _Group(_meta(x).shape)
                groups.append(g)
            g.members.append(node)
            g.reductions.append(node)
            group_of[node] = g
            found[node] = red
            continue
        fus = _fusable(node)
        read = {group_of[n] for n in node.all_input_nodes if n in group_of}
        read = {g for g in read if g.open}
        if fus is not None:
            shape = _meta(node).shape
            joinable = [g for g in read if g.shape == shape]
            rows = [g for g in read if g.reductions and g.row_shape == tuple(shape)]
            if not joinable and rows and len(rows) == len(read):  # a per-row value of row groups: one group
                target = rows[0]
                for g in rows[1:]:
                    for member in g.members:
                        group_of[member] = target
                    target.members += g.members
                    target.reductions += g.reductions
                    g.members, g.reductions, g.open = [], [], False
                target.members.append(node)
                group_of[node] = target
                found[node] = fus
                continue
            for g in read:
                if g.shape != shape:
                    g.open = False
            if joinable:
                target = joinable[0]
                for g in joinable[1:]:  # merge: the node reads several open groups
                    for member in g.members:
                        group_of[member] = target
                    target.members += g.members
                    target.reductions += g.reductions
                    g.members, g.reductions, g.open = [], [], False
            else:
                target = _Group(shape)
                groups.append(target)
            target.members.append(node)
            group_of[node] = target
            found[node] = fus
            continue
        for g in read:
            g.open = False
        name = getattr(node.target, "__name__", "") if node.op == "call_function" else ""
        if node.op == "output" or name in _SWITCH_NAMES or node.target is operator.setitem:
            for g in groups:
                g.open = False
    out = []
    for g in groups:
        if len(g.members) >= 2:
            g.members.sort(key=order.__getitem__)
            out.append(g)
    return out, found


def _dense(tensors):
    """The kernels read their operands as contiguous memory, as captured; an operand laid out otherwise on some
    call is made so, never read wrongly."""
    return [t if t.is_contiguous() else t.contiguous() for t in tensors]


class FusedKernel:
    """One fused group: called with its operand tensors, returns its output tensor (or a tuple of them)."""

    def __init__(self, name, shape, kinds, input_shapes, n_out, source, fwd, bwd):
        self.__name__ = name
        self.shape, self.kinds, self.input_shapes, self.n_out = shape, kinds, input_shapes, n_out
        self.n_in = len(kinds)
        self.source = source
        import ctypes
        fwd.argtypes = [ctypes.c_void_p] * (self.n_in + n_out)
        bwd.argtypes = [ctypes.c_void_p] * (self.n_in + n_out + self.n_in)
        self.fwd, self.bwd = fwd, bwd

    def run_forward(self, inputs):
        inputs = _dense(inputs)
        outs = [pyctorch.empty(self.shape) for _ in range(self.n_out)]
        self.fwd(*[t.data_ptr() for t in inputs], *[o.data_ptr() for o in outs])
        return outs

    def run_backward(self, inputs, grads):
        inputs = _dense(inputs)
        grads = [g.contiguous() if g.dtype == pyctorch.float32 else g.float().contiguous() for g in grads]
        results = [None if kind == "scalar" else pyctorch.empty(self.shape) for kind in self.kinds]
        self.bwd(*[t.data_ptr() for t in inputs], *[g.data_ptr() for g in grads],
                 *[0 if r is None else r.data_ptr() for r in results])
        # a broadcast operand's gradient: the full-size one summed over the dims it was repeated along
        return [r.sum_to_size(shape) if kind in ("suffix", "row") else r
                for r, kind, shape in zip(results, self.kinds, self.input_shapes)]

    def __call__(self, *inputs):
        if pyctorch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            return _FusedFunction.apply(self, *inputs)
        outs = self.run_forward(inputs)
        return outs[0] if self.n_out == 1 else tuple(outs)

    def __repr__(self):
        return f"<fused kernel {self.__name__}: {self.n_in} in, {self.n_out} out>"


def _function_class():
    from pyctorch.autograd import Function

    class FusedFunction(Function):
        @staticmethod
        def forward(ctx, kernel, *inputs):
            ctx.kernel = kernel
            ctx.save_for_backward(*inputs)
            outs = kernel.run_forward(inputs)
            return outs[0] if kernel.n_out == 1 else tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            return (None, *ctx.kernel.run_backward(ctx.saved_tensors, grads))
    return FusedFunction


class _Lazy:
    cls = None

    def apply(self, *args):
        if _Lazy.cls is None:
            _Lazy.cls = _function_class()
        return _Lazy.cls.apply(*args)


_FusedFunction = _Lazy()


def operand_code(inputs, kinds, cols):
    """How a kernel reads its operands x<k> (Note [Pointwise fusion]): its parameters, the loads before the loops
    (0-d constants), those per row r (a "row" operand's value, a "suffix" operand's row), and those per element
    (index i; column c in a row)."""
    params, outer, per_row, inner = [], [], [], []
    for k, (node, kind) in enumerate(zip(inputs, kinds)):
        meta = _meta(node)
        if kind == "scalar":
            params.append(f"const {_SCALAR_TYPES[meta.dtype]} *restrict in{k}")
            outer.append(f"    const float x{k} = (float)in{k}[0];\n")
            continue
        params.append(f"const float *restrict in{k}")
        if kind == "full":
            inner.append(f"const float x{k} = in{k}[i];")
        elif kind == "row":
            per_row.append(f"const float x{k} = in{k}[r];")
        else:
            period = 1
            for d in meta.shape:
                period *= d
            per_row.append(f"const float *restrict b{k} = in{k} + (r % {period // cols}) * {cols};")
            inner.append(f"const float x{k} = b{k}[c];")
    return params, outer, per_row, inner


def _kernel_source(name, group, found, inputs, outputs):
    """The C source of the group's forward and backward kernels, and how each operand is read. Without broadcast
    operands the loop is flat over the elements; with them it walks rows of the last dim (one value per row of a
    "row" operand, a period of rows of a "suffix" one), the inner loop over the row vectorised."""
    from pyctorch.fx import Node
    shape = group.shape
    numel = 1
    for d in shape:
        numel *= d
    cols = shape[-1] if shape else 1
    rows = numel // cols if cols else 0
    kinds = [_operand_kind(_meta(node), shape) for node in inputs]
    two_d = any(kind in ("suffix", "row") for kind in kinds)
    var = {node: f"x{k}" for k, node in enumerate(inputs)}
    params, outer, per_row, inner = operand_code(inputs, kinds, cols)
    body, derivs = [], []
    for j, node in enumerate(group.members):
        operands, forward, partials = found[node]
        exprs = [var[o] if isinstance(o, Node) else c_float(o) for o in operands]
        y = f"y{j}"
        body.append(f"const float {y} = {forward(exprs)};")
        derivs.append((node, operands, partials(exprs, y)))
        var[node] = y

    def loop(statements):
        if not two_d:
            return (f"    #pragma omp parallel for simd schedule(static) if ({numel} > {cpp.PARALLEL_MIN})\n"
                    f"    for (int64_t i = 0; i < {numel}; i++) {{\n" +
                    "".join(f"        {line}\n" for line in inner + statements) + "    }\n")
        return (f"    #pragma omp parallel for schedule(static) if ({numel} > {cpp.PARALLEL_MIN})\n"
                f"    for (int64_t r = 0; r < {rows}; r++) {{\n" +
                "".join(f"        {line}\n" for line in per_row) +
                "        #pragma omp simd\n"
                f"        for (int64_t c = 0; c < {cols}; c++) {{\n"
                f"            const int64_t i = r * {cols} + c;\n" +
                "".join(f"            {line}\n" for line in inner + statements) + "        }\n    }\n")
    outs = [f"float *restrict out{k}" for k in range(len(outputs))]
    writes = [f"out{k}[i] = {var[node]};" for k, node in enumerate(outputs)]
    fwd = f"void {name}_fwd({', '.join(params + outs)})\n{{\n" + "".join(outer) + loop(body + writes) + "}\n"
    # backward: adjoints of the members (a<j>) and of the operands (g<k>), pushed back in reverse order
    index = {node: j for j, node in enumerate(group.members)}
    grads_in = [f"const float *restrict gout{k}" for k in range(len(outputs))]
    grads_out = [f"float *gin{k}" for k in range(len(inputs))]
    back = [f"float a{j} = 0.0f;" for j in range(len(group.members))]
    back += [f"float g{k} = 0.0f;" for k in range(len(inputs)) if kinds[k] != "scalar"]
    back += [f"a{index[node]} += gout{k}[i];" for k, node in enumerate(outputs)]
    for node, operands, parts in reversed(derivs):
        j = index[node]
        for operand, part in zip(operands, parts):
            if not isinstance(operand, Node):
                continue
            if operand in index:
                back.append(f"a{index[operand]} += a{j} * {part};")
            elif kinds[inputs.index(operand)] != "scalar":
                back.append(f"g{inputs.index(operand)} += a{j} * {part};")
    back += [f"gin{k}[i] = g{k};" for k in range(len(inputs)) if kinds[k] != "scalar"]
    bwd = f"void {name}_bwd({', '.join(params + grads_in + grads_out)})\n{{\n" + "".join(outer) + \
        loop(body + back) + "}\n"
    return fwd, bwd, kinds


def _broadcast_shape(shapes):
    out = []
    for dims in zip(*[(1,) * (max(map(len, shapes)) - len(sh)) + tuple(sh) for sh in shapes]):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _read_broadcasts_directly(graph):
    """In a graph that runs without recording, a pointwise op reading x.expand(shape) (a sum's backward) or
    x.to(its own dtype) reads x itself: broadcasting gives the same values, and x is an operand the fuser can take
    (a row or suffix operand) where the expanded one is not contiguous."""
    for node in list(graph.nodes):  # x.to(its own dtype) is x
        mx = _meta(node.args[0]) if node.op == "call_method" and node.target == "to" and node.args else None
        if mx is not None and not node.kwargs and len(node.args) == 2 and node.args[1] == mx.dtype:
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
    for node in list(graph.nodes):
        if node.op != "call_method" or node.target != "expand" or not node.args:
            continue
        x, m, mx = node.args[0], _meta(node), _meta(node.args[0])
        if m is None or mx is None or mx.dtype != m.dtype or mx.device != m.device or not mx.contiguous:
            continue
        for user in list(node.users):
            found = expressions(user)
            if found is None or _meta(user) is None:
                continue
            shapes = [tuple(_meta(o).shape) if o is not node else tuple(mx.shape)
                      for o in found[0] if hasattr(o, "op") and _meta(o) is not None]
            if _broadcast_shape(shapes) == tuple(_meta(user).shape):
                user.replace_input_with(node, x)
        if not node.users:
            graph.erase_node(node)


def fuse(gm, reductions=False):
    """Fuse gm's pointwise groups in place (Note [Pointwise fusion]); the number of kernels made. reductions: the
    graph runs without recording, so last-dim reductions may join groups (forward-only row kernels)."""
    from .row_kernels import row_kernel_source, RowKernel
    graph = gm.graph
    if reductions:
        _read_broadcasts_directly(graph)
    groups, found = _groups(graph, reductions)
    plans = []
    for g in groups:
        members = set(g.members)
        inputs = []
        for node in g.members:
            for operand in node.all_input_nodes:
                if operand not in members and operand not in inputs:
                    inputs.append(operand)
        outputs = [node for node in g.members if any(user not in members for user in node.users)]
        if not outputs:
            continue
        name = f"pct_fused_{len(plans)}"
        if g.reductions:
            made = row_kernel_source(name, g, found, inputs, outputs)
            if made is not None:
                plans.append((g, members, inputs, outputs, name, made[0], made[1], ("fwd",)))
        else:
            fwd, bwd, kinds = _kernel_source(name, g, found, inputs, outputs)
            plans.append((g, members, inputs, outputs, name, fwd + bwd, kinds, ("fwd", "bwd")))
    if not plans:
        return 0
    try:  # one shared object for all the graph's kernels: one compiler run
        functions = cpp.compile_kernel(cpp.HEADER + "".join(p[5] for p in plans),
                                       [f"{p[4]}_{kind}" for p in plans for kind in p[7]])
    except cpp.CompileError:
        return 0
    replaced = {}  # members of groups already rewritten -> the nodes that now hold their values
    functions = iter(functions)
    for g, members, inputs, outputs, name, source, kinds, symbols in plans:
        if g.reductions:
            kernel = RowKernel(name, g.shape, kinds, [_meta(n).shape for n in outputs], source, next(functions))
        else:
            kernel = FusedKernel(name, g.shape, kinds, [_meta(n).shape for n in inputs], len(outputs), source,
                                 next(functions), next(functions))
        last = g.members[-1]
        with graph.inserting_after(last):
            fused = graph.call_function(kernel, tuple(replaced.get(n, n) for n in inputs))
        replacements = {}
        if len(outputs) == 1:
            replacements[outputs[0]] = fused
        else:
            anchor = fused
            for k, node in enumerate(outputs):
                with graph.inserting_after(anchor):
                    anchor = graph.call_function(operator.getitem, (fused, k))
                replacements[node] = anchor
        replaced.update(replacements)
        for node, new in replacements.items():
            new.meta["tensor_meta"] = _meta(node)
            node.replace_all_uses_with(new, delete_user_cb=lambda user: user not in members)
        for node in reversed(g.members):
            graph.erase_node(node)
    gm.recompile()
    return len(plans)
