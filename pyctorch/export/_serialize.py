"""torch.export.save / torch.export.load.

Note [Exported program files]
torch writes a zip of its own serialized-graph schema. pyctorch writes a zip archive of its own, documented
here (it does not load in torch, nor torch's files in pyctorch):
  * `<archive>/version`: the text "pyctorch.export 1";
  * `<archive>/program.json`: the graph as a list of nodes ({name, op, target, args, kwargs, val}; targets by
    their printed names, `torch.ops.aten.add.Tensor`, `operator.mul`; values tagged: {"node": name},
    {"dtype": "float32"}, {"list": [...]}, {"sym": [[monomial, coefficient], ...]}, ...), the graph
    signature, the dynamic dims (name, range, the input dims they are read from) and the input and output tree
    specs (pytree's JSON);
  * `<archive>/tensors.pt`: the state dict, the constants and the example inputs, written by torch.save and
    read with weights_only=True (no pickled code runs on load);
  * `<archive>/extra/<name>`: the extra_files given to save.
"""
import io
import json
import math
import operator  # noqa: F401  (targets resolve through it)
import os
import zipfile

import pyctorch
from pyctorch.utils import _pytree as pytree

__all__ = ["save", "load"]

_VERSION = "pyctorch.export 1"


def _enc(value):
    from pyctorch.fx import Node
    from ._dynamic import SymExpr
    if isinstance(value, Node):
        return {"node": value.name}
    if isinstance(value, SymExpr):
        return {"sym": value.to_json()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return {"list": [_enc(v) for v in value]}
    if isinstance(value, tuple):
        return {"tuple": [_enc(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[k, _enc(v)] for k, v in value.items()]}
    if isinstance(value, pyctorch.dtype):
        return {"dtype": str(value).replace("torch.", "")}
    if isinstance(value, pyctorch.device):
        return {"device": str(value)}
    text = repr(value)
    if text.startswith("torch.") and getattr(pyctorch, text[6:], None) is value:  # memory formats, layouts
        return {"enum": text[6:]}
    raise NotImplementedError(f"torch.export.save: cannot serialize the graph argument {value!r}")


def _dec(value, nodes):
    from ._dynamic import SymExpr
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "node":
        return nodes[body]
    if tag == "sym":
        return SymExpr.from_json(body)
    if tag == "float":
        return float(body)
    if tag == "list":
        return [_dec(v, nodes) for v in body]
    if tag == "tuple":
        return tuple(_dec(v, nodes) for v in body)
    if tag == "dict":
        return {k: _dec(v, nodes) for k, v in body}
    if tag == "dtype":
        return getattr(pyctorch, body)
    if tag == "device":
        return pyctorch.device(body)
    if tag == "enum":
        return getattr(pyctorch, body)
    raise ValueError(f"torch.export.load: unknown value tag {tag!r}")


def _enc_meta(val):
    from .exported_program import TensorMeta
    if isinstance(val, TensorMeta):
        return {"tensor": [_enc(list(val.shape)), str(val.dtype).replace("torch.", "")]}
    if isinstance(val, list):
        return {"tensors": [_enc_meta(v) for v in val]}
    return _enc(val)


def _dec_meta(val):
    from .exported_program import TensorMeta
    if isinstance(val, dict) and "tensor" in val:
        shape, dtype = val["tensor"]
        return TensorMeta(_dec(shape, {}), getattr(pyctorch, dtype))
    if isinstance(val, dict) and "tensors" in val:
        return [_dec_meta(v) for v in val["tensors"]]
    return _dec(val, {})


def _program_json(ep):
    from pyctorch.fx._names import qualified_name
    nodes = []
    for n in ep.graph.nodes:
        entry = {"name": n.name, "op": n.op, "args": _enc(tuple(n.args)), "kwargs": _enc(dict(n.kwargs))}
        entry["target"] = n.target if isinstance(n.target, str) else qualified_name(n.target)
        if "val" in n.meta:
            entry["val"] = _enc_meta(n.meta["val"])
        nodes.append(entry)
    sig = ep.graph_signature
    return {
        "nodes": nodes,
        "inputs": [{"kind": s.kind.name, "arg": type(s.arg).__name__, "name": s.arg.name, "target": s.target,
                    "persistent": s.persistent, "value": _enc(getattr(s.arg, "value", None))}
                   for s in sig.input_specs],
        "outputs": [{"kind": s.kind.name, "arg": type(s.arg).__name__, "name": s.arg.name, "target": s.target,
                     "value": _enc(getattr(s.arg, "value", None))} for s in sig.output_specs],
        "symbols": [{"index": s.index, "dim_name": s.dim_name, "lower": s.lower,
                     "upper": None if s.upper == math.inf else s.upper, "user_min": s.user_min,
                     "user_max": s.user_max, "sources": s.sources, "base": s.base} for s in ep._symbols],
        "in_spec": pytree.treespec_dumps(ep._in_spec) if ep._in_spec is not None else None,
        "out_spec": pytree.treespec_dumps(ep._out_spec) if ep._out_spec is not None else None,
    }


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ep to f (a path or a binary file object) in the format of Note [Exported program files]."""
    from .exported_program import ExportedProgram
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got '{type(ep).__name__}' "
                        "instead.")
    tensors = io.BytesIO()
    args, kwargs = ep.example_inputs or ((), {})
    pyctorch.save({"state_dict": dict(ep.state_dict), "constants": dict(ep.constants),
                   "example_inputs": [list(args), dict(kwargs)]}, tensors)
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("archive/version", _VERSION)
        z.writestr("archive/program.json", json.dumps(_program_json(ep)))
        z.writestr("archive/tensors.pt", tensors.getvalue())
        for name, content in (extra_files or {}).items():
            z.writestr(f"archive/extra/{name}", content)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read an ExportedProgram written by save (Note [Exported program files])."""
    from pyctorch.fx import Graph
    from pyctorch.fx._names import resolve_qualified_name
    from pyctorch.nn import Parameter
    from . import graph_signature as gs
    from ._dynamic import Symbol
    from .exported_program import ExportedProgram, range_constraints_of
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f) as z:
        if z.read("archive/version").decode() != _VERSION:
            raise RuntimeError("torch.export.load: not a pyctorch exported program of a known version")
        program = json.loads(z.read("archive/program.json"))
        tensors = pyctorch.load(io.BytesIO(z.read("archive/tensors.pt")), weights_only=True)
        for name in list(extra_files or {}):
            extra_files[name] = z.read(f"archive/extra/{name}").decode()
    g, nodes = Graph(), {}
    for entry in program["nodes"]:
        target = entry["target"]
        if entry["op"] == "call_function":
            target = resolve_qualified_name(target)
        n = g.create_node(entry["op"], target, _dec(entry["args"], nodes), _dec(entry["kwargs"], nodes),
                          name=entry["name"])
        if "val" in entry:
            n.meta["val"] = _dec_meta(entry["val"])
        nodes[entry["name"]] = n

    def arg_of(entry):
        cls = getattr(gs, entry["arg"])
        if cls is gs.ConstantArgument:
            return cls(entry["name"], _dec(entry["value"], {}))
        return cls(entry["name"])
    inputs = [gs.InputSpec(gs.InputKind[e["kind"]], arg_of(e), e["target"], e["persistent"])
              for e in program["inputs"]]
    outputs = [gs.OutputSpec(gs.OutputKind[e["kind"]], arg_of(e), e["target"]) for e in program["outputs"]]
    symbols = []
    for s in program["symbols"]:
        sym = Symbol(s["index"], s["dim_name"], s["lower"], math.inf if s["upper"] is None else s["upper"],
                     s["user_min"], s["user_max"])
        sym.sources, sym.base = [tuple(x) for x in s["sources"]], s["base"]
        symbols.append(sym)
    state_dict = {}
    params = {s.target for s in inputs if s.kind == gs.InputKind.PARAMETER}
    for name, t in tensors["state_dict"].items():
        state_dict[name] = t if name not in params or isinstance(t, Parameter) else Parameter(t)
    args, kwargs = tensors["example_inputs"]
    in_spec = pytree.treespec_loads(program["in_spec"]) if program["in_spec"] else None
    out_spec = pytree.treespec_loads(program["out_spec"]) if program["out_spec"] else None
    return ExportedProgram(None, g, gs.ExportGraphSignature(inputs, outputs), state_dict,
                           range_constraints_of(symbols), constants=tensors["constants"],
                           example_inputs=(tuple(args), kwargs), in_spec=in_spec, out_spec=out_spec,
                           symbols=symbols)
