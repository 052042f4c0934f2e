"""Row kernels: a fused group holding last-dim reductions (a softmax, a layer or RMS norm written in Python) as
one generated C kernel over the rows, for graphs that run without recording (the forward and backward graphs of
Note [AOT backward], graphs compiled under no_grad).

Note [Row kernels]
A reduction over the last dim with keepdim=True (sum, mean, amax, amin of a float32 contiguous value) joins the
group of its input (Note [Pointwise fusion]); the group's later members may read its result (one value per row),
and pointwise ops on such per-row values join as per-row members. The kernel walks the rows (threads over rows);
in a row, each reduction is one pass over the row's columns that computes, element by element, the members it
needs (recomputing what an earlier pass computed: the row is in cache, and nothing but the outputs is written),
then the per-row members that follow it; a last pass computes the element members and writes the outputs. Sums
vectorise with reassociation (the values differ from eager's by rounding, as any fused kernel's); amax and amin
propagate NaN as torch's do. There is no backward kernel: a graph that records takes the plain groups only. In
the graphs that do not record, a pointwise op reading x.expand(shape) (a sum's backward) or x.to(x's own dtype)
reads x itself (fusion.py, _read_broadcasts_directly), so a row value stays a row operand of the kernel.
"""
import ctypes

import pyctorch

from . import cpp
from .pointwise import c_float, op_name

__all__ = ["reduction", "row_kernel_source", "RowKernel"]

_INIT = {"sum": "0.0f", "mean": "0.0f", "amax": "(-INFINITY)", "amin": "INFINITY"}


def _meta(node):
    return node.meta.get("tensor_meta") if hasattr(node, "meta") else None


def reduction(node):
    """(kind, input node) of a reduction a row kernel can take: sum, mean, amax or amin over the last dim with
    keepdim=True of a float32 contiguous CPU value; else None."""
    from pyctorch.fx import Node
    if node.op not in ("call_function", "call_method") or op_name(node) not in _INIT or not node.args:
        return None
    x, rest, kwargs = node.args[0], list(node.args[1:]), dict(node.kwargs)
    dim = kwargs.pop("dim") if "dim" in kwargs else (rest.pop(0) if rest else None)
    keepdim = kwargs.pop("keepdim") if "keepdim" in kwargs else (rest.pop(0) if rest else False)
    mx, m = _meta(x) if isinstance(x, Node) else None, _meta(node)
    if kwargs or rest or keepdim is not True or mx is None or m is None:
        return None
    if mx.dtype != pyctorch.float32 or m.dtype != pyctorch.float32 or not mx.contiguous or \
            mx.device.type != "cpu" or not mx.shape or 0 in mx.shape:
        return None
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    nd = len(mx.shape)
    if len(dims) != 1 or not isinstance(dims[0], int) or isinstance(dims[0], bool) or dims[0] not in (-1, nd - 1):
        return None
    if tuple(m.shape) != tuple(mx.shape[:-1]) + (1,):
        return None
    return op_name(node), x


def row_kernel_source(name, group, found, inputs, outputs):
    """(C source of the group's row kernel, the operands' kinds), or None when a member reads what a row kernel
    cannot (a per-row member reading a whole row)."""
    from pyctorch.fx import Node
    from .fusion import _operand_kind, operand_code
    shape, row_shape = tuple(group.shape), group.row_shape
    cols = shape[-1]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    kinds = [_operand_kind(_meta(n), shape) for n in inputs]
    if None in kinds:
        return None
    per_row = [node for node in group.members if tuple(_meta(node).shape) == row_shape and shape != row_shape]
    per_row = set(per_row) | set(group.reductions)
    var = {node: f"x{k}" for k, node in enumerate(inputs)}
    params, outer, row_loads, elem_loads = operand_code(inputs, kinds, cols)
    elem_loads = [f"const int64_t i = r * {cols} + c;"] + elem_loads
    elem_inputs = {node for node, kind in zip(inputs, kinds) if kind in ("full", "suffix")}
    for j, node in enumerate(group.members):
        var[node] = f"y{j}"

    def expression(node):
        operands, forward, _ = found[node]
        return forward([var[o] if isinstance(o, Node) else c_float(o) for o in operands])

    for node in per_row - set(group.reductions):  # a per-row value computed from a whole row: not here
        if any(isinstance(o, Node) and (o in elem_inputs or (o in group.members and o not in per_row))
               for o in found[node][0]):
            return None
    body = []

    def elem_lines(limit):
        return [f"const float {var[n]} = {expression(n)};" for n in group.members[:limit]
                if n not in per_row]

    def loop(lines, pragma):
        return [f"#pragma omp simd{pragma}", f"for (int64_t c = 0; c < {cols}; c++) {{"] + \
            ["    " + line for line in elem_loads + lines] + ["}"]

    for j, node in enumerate(group.members):
        if node in group.reductions:
            kind, x = found[node]
            acc = f"a{j}"
            body.append(f"float {acc} = {_INIT[kind]};")
            if kind in ("sum", "mean"):
                step, pragma = f"{acc} += {var[x]};", f" reduction(+:{acc})"
            else:
                cmp = ">" if kind == "amax" else "<"
                body.append(f"int nan{j} = 0;")
                step = f"{acc} = {var[x]} {cmp} {acc} ? {var[x]} : {acc}; nan{j} |= {var[x]} != {var[x]};"
                pragma = f" reduction({'max' if kind == 'amax' else 'min'}:{acc}) reduction(|:nan{j})"
            body += loop(elem_lines(j) + [step], pragma)
            value = {"sum": acc, "mean": f"{acc} / {c_float(cols)}", "amax": f"(nan{j} ? NAN : {acc})",
                     "amin": f"(nan{j} ? NAN : {acc})"}[kind]
            body.append(f"const float {var[node]} = {value};")
        elif node in per_row:
            body.append(f"const float {var[node]} = {expression(node)};")
    outs = [f"float *restrict out{k}" for k in range(len(outputs))]
    elem_writes = [f"out{k}[i] = {var[n]};" for k, n in enumerate(outputs) if n not in per_row]
    row_writes = [f"out{k}[r] = {var[n]};" for k, n in enumerate(outputs) if n in per_row]
    if elem_writes:
        body += loop(elem_lines(len(group.members)) + elem_writes, "")
    body += row_writes
    src = (f"void {name}_fwd({', '.join(params + outs)})\n{{\n" + "".join(outer) +
           f"    #pragma omp parallel for schedule(static) if ({rows * cols} > {cpp.PARALLEL_MIN})\n"
           f"    for (int64_t r = 0; r < {rows}; r++) {{\n" +
           "".join(f"        {line}\n" for line in row_loads + body) + "    }\n}\n")
    return src, kinds


class RowKernel:
    """One row group: called with its operand tensors, returns its outputs (each of the group's shape, or one
    value per row). Forward only (Note [Row kernels])."""

    def __init__(self, name, shape, kinds, out_shapes, source, fwd):
        self.__name__ = name
        self.shape, self.kinds, self.out_shapes, self.source = shape, kinds, out_shapes, source
        self.n_in, self.n_out = len(kinds), len(out_shapes)
        fwd.argtypes = [ctypes.c_void_p] * (self.n_in + self.n_out)
        self.fwd = fwd

    def __call__(self, *inputs):
        if pyctorch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            raise RuntimeError(f"pyctorch's inductor: the row kernel {self.__name__} has no backward, but was called "
                               "where gradients are recorded; please report a bug")
        inputs = [t if t.is_contiguous() else t.contiguous() for t in inputs]
        outs = [pyctorch.empty(s) for s in self.out_shapes]
        self.fwd(*[t.data_ptr() for t in inputs], *[o.data_ptr() for o in outs])
        return outs[0] if self.n_out == 1 else tuple(outs)

    def __repr__(self):
        return f"<row kernel {self.__name__}: {self.n_in} in, {self.n_out} out>"
