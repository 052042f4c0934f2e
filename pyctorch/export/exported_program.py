"""torch.export.ExportedProgram: a graph of aten calls with its parameters, buffers and constants lifted to
inputs, the graph signature saying which placeholder is which, and the ranges of its dynamic dims."""
import math
import operator

import pyctorch
from pyctorch.fx import Graph, GraphModule
from pyctorch.nn import Module, Parameter
from pyctorch.utils import _pytree as pytree

from ._dynamic import SymExpr, ValueRange
from ._trace import Ref
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec, OutputKind,
                              OutputSpec, TensorArgument, SymIntArgument)

__all__ = ["ExportedProgram", "TensorMeta"]

_DTYPE_ABBR = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
               "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8", "uint16": "u16",
               "uint32": "u32", "uint64": "u64"}


class TensorMeta:
    """node.meta['val'] of a tensor value: its shape (ints and SymExprs of the dynamic dims) and dtype."""

    def __init__(self, shape, dtype, device="cpu"):
        self.shape, self.dtype, self.device = tuple(shape), dtype, pyctorch.device(device)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"TensorMeta({self.annotation()})"

    def annotation(self):
        name = str(self.dtype).replace("torch.", "")
        return f"{_DTYPE_ABBR.get(name, name)}[{', '.join(str(s) for s in self.shape)}]"


def _meta_of(meta):
    if isinstance(meta, list):
        return [TensorMeta(*m) for m in meta]
    return TensorMeta(*meta)


def build_graph(records, outputs, *, names, leaves, params, buffers, consts, const_names, symbols):
    """The lifted fx Graph and its signature from the fitted records of a capture."""
    g = Graph()
    node_of, specs = {}, []

    def placeholder(name, ref, meta):
        n = g.placeholder(name)
        n.meta["val"] = meta
        node_of[ref] = n
        return n

    for target, p in params:
        n = placeholder("p_" + target.replace(".", "_"), Ref("param", target), TensorMeta(p.shape, p.dtype))
        specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(n.name), target))
    for target, b, persistent in buffers:
        n = placeholder("b_" + target.replace(".", "_"), Ref("buffer", target), TensorMeta(b.shape, b.dtype))
        specs.append(InputSpec(InputKind.BUFFER, TensorArgument(n.name), target, persistent))
    for k, c in enumerate(consts):
        target = const_names.get(k, f"lifted_tensor_{k}")
        n = placeholder("c_" + target.replace(".", "_"), Ref("const", k), TensorMeta(c.shape, c.dtype))
        specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(n.name), target))
    dynamic = {}
    for sym in symbols:
        for leaf, d in sym.sources:
            dynamic[(leaf, d)] = sym.index
    for k, (name, leaf) in enumerate(zip(names, leaves)):
        if isinstance(leaf, pyctorch.Tensor):
            shape = [SymExpr({(dynamic[(k, d)],): 1}) if (k, d) in dynamic else s for d, s in enumerate(leaf.shape)]
            n = placeholder(name, Ref("input", k), TensorMeta(shape, leaf.dtype))
            specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(n.name), None))
        else:
            n = g.placeholder(name)
            specs.append(InputSpec(InputKind.USER_INPUT, ConstantArgument(n.name, leaf), None))

    sym_nodes, expr_nodes = {}, {}

    def sym_node(i):
        if i not in sym_nodes:
            leaf, d = symbols[i].sources[0]
            n = g.call_function(pyctorch.ops.aten.sym_size.int, (node_of[Ref("input", leaf)], d))
            n.meta["val"] = SymExpr({(i,): 1})
            sym_nodes[i] = n
        return sym_nodes[i]

    def binary(fn, a, b, val):
        n = g.call_function(fn, (a, b))
        n.meta["val"] = val
        return n

    def expr_node(expr):
        if expr in expr_nodes:
            return expr_nodes[expr]
        total, acc_terms = None, {}
        for mono, c in sorted(expr.terms.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            if not mono:
                continue
            term, term_terms = None, {}
            for i in mono:
                term = sym_node(i) if term is None else binary(operator.mul, term, sym_node(i), None)
            if len(mono) > 1:
                term.meta["val"] = SymExpr({mono: 1})
            if c != 1:
                term = binary(operator.mul, term, c, SymExpr({mono: c}))
            if total is None:
                total, acc_terms = term, {mono: c}
            else:
                acc_terms[mono] = c
                total = binary(operator.add, total, term, SymExpr(dict(acc_terms)))
        const = expr.terms.get((), 0)
        if const:
            total = binary(operator.add if const > 0 else operator.sub, total, abs(const), expr)
        expr_nodes[expr] = total
        return total

    def conv(a):
        if isinstance(a, Ref):
            return node_of[a]
        if isinstance(a, SymExpr):
            return expr_node(a)
        if isinstance(a, list):
            return [conv(v) for v in a]
        if isinstance(a, tuple):
            return tuple(conv(v) for v in a)
        if isinstance(a, dict):
            return {k: conv(v) for k, v in a.items()}
        return a

    for i, rec in enumerate(records):
        n = g.create_node("call_function", rec.target, tuple(conv(a) for a in rec.args),
                          {k: conv(v) for k, v in rec.kwargs.items()}, name=rec.target._opname)
        n.meta["val"] = _meta_of(rec.meta)
        node_of[Ref("op", i)] = n
        if rec.multi:
            for j, m in enumerate(rec.meta):
                item = g.call_function(operator.getitem, (n, j))
                item.meta["val"] = TensorMeta(*m)
                node_of[Ref("item", i, j)] = item
    out_nodes, out_specs = [], []
    for o in outputs:
        v = conv(o)
        out_nodes.append(v)
        if hasattr(v, "name") and hasattr(v, "op"):
            arg = TensorArgument(v.name) if isinstance(v.meta.get("val"), TensorMeta) else SymIntArgument(v.name)
        else:
            arg = ConstantArgument("", v)
        out_specs.append(OutputSpec(OutputKind.USER_OUTPUT, arg, None))
    g.output(tuple(out_nodes))
    return g, ExportGraphSignature(specs, out_specs)


class ExportedProgram:
    """What torch.export.export returns (see the module docstring)."""

    def __init__(self, root, graph, graph_signature, state_dict, range_constraints, *, constants=None,
                 example_inputs=None, in_spec=None, out_spec=None, symbols=None, verifiers=None):
        self._graph_module = root if isinstance(root, GraphModule) else GraphModule(
            root if isinstance(root, Module) else Module(), graph)
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._constants = constants or {}
        self._example_inputs = example_inputs
        self._in_spec, self._out_spec = in_spec, out_spec
        self._symbols = symbols or []
        self.module_call_graph = []

    # ---- torch's attributes ----
    @property
    def graph_module(self):
        return self._graph_module

    @property
    def graph(self):
        return self._graph_module.graph

    @property
    def graph_signature(self):
        return self._graph_signature

    @property
    def state_dict(self):
        return self._state_dict

    @property
    def constants(self):
        return self._constants

    @property
    def tensor_constants(self):
        return self._constants

    @property
    def range_constraints(self):
        return self._range_constraints

    @property
    def example_inputs(self):
        return self._example_inputs

    @property
    def call_spec(self):
        from types import SimpleNamespace
        return SimpleNamespace(in_spec=self._in_spec, out_spec=self._out_spec)

    @property
    def dialect(self):
        return "ATEN"

    @property
    def verifiers(self):
        return []

    def parameters(self):
        for name in self._graph_signature.parameters:
            yield self._state_dict[name]

    def named_parameters(self):
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for spec in self._graph_signature.input_specs:
            if spec.kind == InputKind.BUFFER:
                yield spec.target, (self._constants[spec.target] if spec.persistent is False
                                    else self._state_dict[spec.target])

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use `exported_program.module()` "
                           "instead.")

    # ---- values of the lifted inputs ----
    def _lifted_value(self, spec):
        if spec.kind == InputKind.PARAMETER:
            return self._state_dict[spec.target]
        if spec.kind == InputKind.BUFFER:
            return self._constants[spec.target] if spec.persistent is False else self._state_dict[spec.target]
        return self._constants[spec.target]

    def _flat_inputs(self, args, kwargs):
        leaves, spec = pytree.tree_flatten((tuple(args), dict(kwargs or {})))
        if self._in_spec is not None and spec != self._in_spec:
            raise ValueError(f"Trying to flatten user inputs with exported input tree spec:\n{self._in_spec}\n"
                             f"but actually got inputs with tree spec of:\n{spec}")
        return leaves

    # ---- module() ----
    def module(self):
        """An nn.Module (a GraphModule) running the graph with the parameters and buffers as attributes; calls
        check the inputs' shapes against the export's ranges, as torch's do."""
        g = Graph()
        root = Module()
        val_map = {}
        user = [n for n in self.graph.nodes if n.op == "placeholder"]
        kinds = {s.arg.name: s for s in self._graph_signature.input_specs}
        for n in user:
            spec = kinds[n.name]
            if spec.kind == InputKind.USER_INPUT:
                val_map[n] = g.node_copy(n)
        for n in user:
            spec = kinds[n.name]
            if spec.kind == InputKind.USER_INPUT:
                continue
            value = self._lifted_value(spec)
            target = spec.target
            if spec.kind == InputKind.PARAMETER:
                _set_path(root, target, value if isinstance(value, Parameter) else Parameter(value, False))
            else:
                _set_path(root, target, value, buffer=True, persistent=spec.persistent is not False and
                          spec.kind == InputKind.BUFFER)
            new = g.get_attr(target)
            new.meta = dict(n.meta)
            val_map[n] = new
        for n in self.graph.nodes:
            if n.op != "placeholder":
                val_map[n] = g.node_copy(n, lambda x: val_map[x])
        gm = GraphModule(root, g)
        program = self

        def pre_hook(module, args, kwargs):
            leaves = program._flat_inputs(args, kwargs)
            program._check_inputs(leaves)
            return tuple(leaves), {}

        def post_hook(module, args, output):
            if program._out_spec is None:
                return output
            return pytree.tree_unflatten(list(output), program._out_spec)

        gm.register_forward_pre_hook(pre_hook, with_kwargs=True)
        gm.register_forward_hook(post_hook)
        return gm

    def _check_inputs(self, leaves):
        names = [s.arg.name for s in self._graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
        placeholders = {n.name: n for n in self.graph.nodes if n.op == "placeholder"}
        seen = {}
        for name, leaf in zip(names, leaves):
            meta = placeholders[name].meta.get("val")
            if not isinstance(meta, TensorMeta):
                continue
            if not isinstance(leaf, pyctorch.Tensor):
                raise AssertionError(f"Guard failed: {name} must be a Tensor, got {type(leaf).__name__}")
            if leaf.dim() != meta.dim():
                raise RuntimeError(f"Unexpected number of dimensions in input at {name}.shape: expected "
                                   f"{meta.dim()}, but got {leaf.dim()}")
            for d, (want, got) in enumerate(zip(meta.shape, leaf.shape)):
                where = f"{name}.size()[{d}]"
                if isinstance(want, int):
                    if got != want:
                        raise AssertionError(f"Guard failed: {where} == {want}")
                    continue
                sym = self._symbols[want.symbols[0]]
                if sym.user_min is not None and got < sym.user_min:
                    raise AssertionError(f"Guard failed: {where} >= {sym.user_min}")
                if sym.user_max is not None and got > sym.user_max:
                    raise AssertionError(f"Guard failed: {where} <= {sym.user_max}")
                if sym.index in seen and seen[sym.index][0] != got:
                    raise AssertionError(f"Guard failed: {where} == {seen[sym.index][1]}")
                seen.setdefault(sym.index, (got, where))

    # ---- decompositions ----
    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """The program traced again with each op of decomp_table (default: default_decompositions()) replaced
        by its decomposition, which calls other aten ops."""
        from ._decomp import default_decompositions, retrace
        table = default_decompositions() if decomp_table is None else decomp_table
        return retrace(self, table)

    # ---- printing ----
    def __str__(self):
        body = readable_graph(self.graph_module).replace("\n", "\n    ")
        ranges = "{" + ", ".join(f"{k}: {v}" for k, v in self._range_constraints.items()) + "}"
        sig = str(self._graph_signature).replace("\n", "\n    ")
        return f"ExportedProgram:\n    {body}\nGraph signature: {sig}\nRange constraints: {ranges}\n"

    __repr__ = __str__


def _set_path(root, target, value, buffer=False, persistent=True):
    *prefix, field = target.split(".")
    mod = root
    for part in prefix:
        nxt = getattr(mod, part, None)
        if nxt is None:
            nxt = Module()
            setattr(mod, part, nxt)
        mod = nxt
    if buffer:
        mod.register_buffer(field, value, persistent=persistent)
    else:
        setattr(mod, field, value)


def _annotation(node):
    val = node.meta.get("val")
    if isinstance(val, TensorMeta):
        return val.annotation()
    if isinstance(val, list) and val and all(isinstance(v, TensorMeta) for v in val):
        return "[" + ", ".join(v.annotation() for v in val) + "]"
    if isinstance(val, (SymExpr, int)) and not isinstance(val, bool):
        return f"Sym({val})"
    return None


def readable_graph(gm):
    """The graph module as torch prints exported programs: a class whose forward has typed values."""
    nodes = {n.name: n for n in gm.graph.nodes}
    lines = gm.code.strip("\n").splitlines()
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("def forward("):
            params = stripped[len("def forward("):-2].split(", ")
            typed = []
            for p in params:
                ann = _annotation(nodes[p]) if p in nodes else None
                typed.append(f'{p}: "{ann}"' if ann else p)
            out.append(f"    def forward({', '.join(typed)}):")
            continue
        name = stripped.split(" = ", 1)[0] if " = " in stripped else None
        if name in nodes and _annotation(nodes[name]):
            stripped = f'{name}: "{_annotation(nodes[name])}" = ' + stripped.split(" = ", 1)[1]
        out.append("        " + stripped if stripped else "")
    return "class GraphModule(torch.nn.Module):\n" + "\n".join(out) + "\n"


def range_constraints_of(symbols):
    return {s.name: ValueRange(s.lower, s.upper if s.upper != math.inf else math.inf) for s in symbols}
