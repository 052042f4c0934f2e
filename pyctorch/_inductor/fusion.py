"""Pointwise fusion: groups of float32 pointwise calls of a captured graph become one generated C kernel, with a
generated backward kernel when gradients flow through them.

Note [Pointwise fusion]
Walking the graph in order, a fusable call (pointwise.py: a float32, contiguous CPU result whose tensor operands
have its shape and are contiguous, or are 0-d constants) joins the open group of the operands it reads, merging
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
            full = m.shape == meta.shape and m.dtype == pyctorch.float32 and m.contiguous
            scalar = m.shape == () and m.dtype in _SCALAR_TYPES and not m.requires_grad
            if not (full or scalar):
                return None
        elif not isinstance(operand, (int, float)) or isinstance(operand, bool):
            return None
    return found


class _Group:
    def __init__(self, shape):
        self.shape, self.members, self.open = shape, [], True


def _groups(graph):
    order = {node: k for k, node in enumerate(graph.nodes)}
    group_of, groups, found = {}, [], {}
    for node in graph.nodes:
        fus = _fusable(node)
        read = {group_of[n] for n in node.all_input_nodes if n in group_of}
        read = {g for g in read if g.open}
        if fus is not None:
            shape = _meta(node).shape
            joinable = [g for g in read if g.shape == shape]
            for g in read:
                if g.shape != shape:
                    g.open = False
            if joinable:
                target = joinable[0]
                for g in joinable[1:]:  # merge: the node reads several open groups
                    for member in g.members:
                        group_of[member] = target
                    target.members += g.members
                    g.members, g.open = [], False
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


class FusedKernel:
    """One fused group: called with its operand tensors, returns its output tensor (or a tuple of them)."""

    def __init__(self, name, shape, n_in, scalar_inputs, n_out, source, fwd, bwd):
        self.__name__ = name
        self.shape, self.n_in, self.scalar_inputs, self.n_out = shape, n_in, scalar_inputs, n_out
        self.numel = 1
        for d in shape:
            self.numel *= d
        self.source = source
        import ctypes
        fwd.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * (n_in + n_out)
        bwd.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * (n_in + n_out + n_in)
        self.fwd, self.bwd = fwd, bwd

    def run_forward(self, inputs):
        outs = [pyctorch.empty(self.shape) for _ in range(self.n_out)]
        self.fwd(self.numel, *[t.data_ptr() for t in inputs], *[o.data_ptr() for o in outs])
        return outs

    def run_backward(self, inputs, grads):
        grads = [g.contiguous() if g.dtype == pyctorch.float32 else g.float().contiguous() for g in grads]
        results = [None if k in self.scalar_inputs else pyctorch.empty(self.shape) for k in range(self.n_in)]
        self.bwd(self.numel, *[t.data_ptr() for t in inputs], *[g.data_ptr() for g in grads],
                 *[0 if r is None else r.data_ptr() for r in results])
        return results

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


def _kernel_source(name, group, found, inputs, outputs):
    """The C source of the group's forward and backward kernels."""
    from pyctorch.fx import Node
    var = {}
    loads, scalars, params = [], set(), []
    for k, node in enumerate(inputs):
        meta = _meta(node)
        if meta.shape == ():
            scalars.add(k)
            ctype = _SCALAR_TYPES[meta.dtype]
            params.append(f"const {ctype} *restrict in{k}")
            loads.append(f"    const float x{k} = (float)in{k}[0];\n")
        else:
            params.append(f"const float *restrict in{k}")
        var[node] = f"x{k}"
    body, derivs = [], []
    for j, node in enumerate(group.members):
        operands, forward, partials = found[node]
        exprs = [var[o] if isinstance(o, Node) else c_float(o) for o in operands]
        y = f"y{j}"
        body.append(f"        const float {y} = {forward(exprs)};\n")
        derivs.append((node, operands, partials(exprs, y)))
        var[node] = y
    full_loads = "".join(f"        const float x{k} = in{k}[i];\n" for k in range(len(inputs)) if k not in scalars)
    loop = f"    #pragma omp parallel for simd schedule(static) if (n > {cpp.PARALLEL_MIN})\n" \
           "    for (int64_t i = 0; i < n; i++) {\n"
    outs = [f"float *restrict out{k}" for k in range(len(outputs))]
    fwd = f"void {name}_fwd(int64_t n, {', '.join(params + outs)})\n{{\n" + "".join(loads) + loop + full_loads + \
        "".join(body) + "".join(f"        out{k}[i] = {var[node]};\n" for k, node in enumerate(outputs)) + \
        "    }\n}\n"
    # backward: adjoints of the members (a<j>) and of the full-size operands (g<k>), in reverse order
    index = {node: j for j, node in enumerate(group.members)}
    grads_in = [f"const float *restrict gout{k}" for k in range(len(outputs))]
    grads_out = [f"float *gin{k}" for k in range(len(inputs))]
    back = []
    for j in range(len(group.members)):
        back.append(f"        float a{j} = 0.0f;\n")
    for k in range(len(inputs)):
        if k not in scalars:
            back.append(f"        float g{k} = 0.0f;\n")
    for k, node in enumerate(outputs):
        back.append(f"        a{index[node]} += gout{k}[i];\n")
    for node, operands, parts in reversed(derivs):
        j = index[node]
        for operand, part in zip(operands, parts):
            if not isinstance(operand, Node):
                continue
            if operand in index:
                back.append(f"        a{index[operand]} += a{j} * {part};\n")
            else:
                k = inputs.index(operand)
                if k not in scalars:
                    back.append(f"        g{k} += a{j} * {part};\n")
    writes = "".join(f"        gin{k}[i] = g{k};\n" for k in range(len(inputs)) if k not in scalars)
    bwd = f"void {name}_bwd(int64_t n, {', '.join(params + grads_in + grads_out)})\n{{\n" + "".join(loads) + \
        loop + full_loads + "".join(body) + "".join(back) + writes + "    }\n}\n"
    return fwd, bwd, scalars


def fuse(gm):
    """Fuse gm's pointwise groups in place (Note [Pointwise fusion]); the number of kernels made."""
    graph = gm.graph
    groups, found = _groups(graph)
    plans = []
    for g in groups:
        members = set(g.members)
        inputs = []
        for node in g.members:
            for operand in node.all_input_nodes:
                if operand not in members and operand not in inputs:
                    inputs.append(operand)
        outputs = [node for node in g.members if any(user not in members for user in node.users)]
        if outputs:
            name = f"pct_fused_{len(plans)}"
            fwd, bwd, scalars = _kernel_source(name, g, found, inputs, outputs)
            plans.append((g, members, inputs, outputs, name, fwd + bwd, scalars))
    if not plans:
        return 0
    try:  # one shared object for all the graph's kernels: one compiler run
        functions = cpp.compile_kernel(cpp.HEADER + "".join(p[5] for p in plans),
                                       [f"{p[4]}_{kind}" for p in plans for kind in ("fwd", "bwd")])
    except cpp.CompileError:
        return 0
    replaced = {}  # members of groups already rewritten -> the nodes that now hold their values
    for made, (g, members, inputs, outputs, name, source, scalars) in enumerate(plans):
        kernel = FusedKernel(name, g.shape, len(inputs), scalars, len(outputs), source,
                             functions[2 * made], functions[2 * made + 1])
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
