"""torch.onnx for pyctorch: export a model to an ONNX file through torch.export.

    torch.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False)
    program = torch.onnx.export(model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    program.save("model.onnx")

Both paths capture the model with pyctorch's torch.export (pyctorch has no TorchScript, which torch's
dynamo=False path traces with), decompose it (run_decompositions) and lower each aten op to ONNX nodes
(Note [ONNX lowering] in _lowering.py). The `onnx` package is imported only here, when exporting; pyctorch
does not need it otherwise. As torch 2.13 does, dynamo=True (the default) returns an ONNXProgram and
dynamo=False writes f and returns None.
"""
import io
import os

import numpy as np

import pyctorch

__all__ = ["export", "ONNXProgram", "is_in_onnx_export", "OnnxExporterError", "TrainingMode",
           "OperatorExportTypes"]

_DEFAULT_OPSET = 18
_in_export = [False]


class OnnxExporterError(RuntimeError):
    """torch.onnx.OnnxExporterError: the export failed."""


class TrainingMode:
    EVAL, PRESERVE, TRAINING = 0, 1, 2


class OperatorExportTypes:
    ONNX, ONNX_ATEN, ONNX_ATEN_FALLBACK, ONNX_FALLTHROUGH = 0, 1, 2, 3


def is_in_onnx_export():
    return _in_export[0]


def _onnx():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("torch.onnx.export needs the onnx package: pip install onnx") from e
    return onnx


class ONNXProgram:
    """What torch.onnx.export(..., dynamo=True) returns: the ONNX model and the program it came from."""

    def __init__(self, model_proto, exported_program):
        self.model = model_proto
        self.exported_program = exported_program
        self._session = None

    @property
    def model_proto(self):
        return self.model

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        data = self.model.SerializeToString()
        if isinstance(destination, (str, os.PathLike)):
            with open(destination, "wb") as f:
                f.write(data)
        else:
            destination.write(data)

    def optimize(self):
        return None

    def __call__(self, *args, **kwargs):
        """Run the model with onnxruntime (CPU) on pyctorch tensors; the outputs come back as pyctorch tensors."""
        import onnxruntime as ort
        from pyctorch.utils import _pytree as pytree
        if self._session is None:
            self._session = ort.InferenceSession(self.model.SerializeToString(),
                                                 providers=["CPUExecutionProvider"])
        leaves = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, pyctorch.Tensor)]
        feeds = {i.name: x.detach().numpy() for i, x in zip(self._session.get_inputs(), leaves)}
        return [pyctorch.from_numpy(np.ascontiguousarray(o)) for o in self._session.run(None, feeds)]

    def __repr__(self):
        return f"ONNXProgram(\n    model=\n{self.model}\n    ,\n    exported_program=\n{self.exported_program}\n)"


def _dynamic_shapes_from_axes(model, args, kwargs, input_names, dynamic_axes):
    """torch's dynamic_axes ({input name: {dim: name} or [dims]}) as export's dynamic_shapes."""
    from pyctorch.export import Dim
    from pyctorch.export._dynamic import input_names as leaf_names
    names = list(input_names or leaf_names(model, args, kwargs))
    dims, specs = {}, []
    for k, name in enumerate(names):
        axes = dynamic_axes.get(name)
        if axes is None:
            specs.append(None)
            continue
        if isinstance(axes, (list, tuple)):
            axes = {d: f"{name}_dynamic_axes_{i + 1}" for i, d in enumerate(axes)}
        spec = {}
        for d, dim_name in axes.items():
            ident = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(dim_name))
            if ident not in dims:
                dims[ident] = Dim(ident)
            spec[d] = dims[ident]
        specs.append(spec)
    return tuple(specs)


def _value_info(name, meta, dim_names):
    onnx = _onnx()
    from ._lowering import onnx_dtype
    shape = []
    for s in meta.shape:
        if isinstance(s, int):
            shape.append(s)
        else:
            shape.append(dim_names.get(str(s), str(s)))
    return onnx.helper.make_tensor_value_info(name, onnx_dtype(meta.dtype), shape)


def _to_model(ep, input_names, output_names, opset_version, export_params=True, dim_names=None):
    onnx = _onnx()
    from ._lowering import Builder, Lowering
    from pyctorch.export.graph_signature import InputKind
    if opset_version < 17:
        raise ValueError(f"pyctorch's ONNX export needs opset_version >= 17 (LayerNormalization), got "
                         f"{opset_version}")
    b = Builder()
    lowering = Lowering(ep, b)
    specs = {s.arg.name: s for s in ep.graph_signature.input_specs}
    graph_inputs = []
    user_k = 0
    dim_names = dim_names or {}
    for node in ep.graph.nodes:
        if node.op != "placeholder":
            continue
        spec = specs[node.name]
        if spec.kind == InputKind.USER_INPUT:
            if not hasattr(node.meta.get("val"), "shape"):
                user_k += 1
                continue  # a non-tensor input is specialized into the graph
            name = input_names[user_k] if input_names and user_k < len(input_names) else node.name
            user_k += 1
            lowering.env[node] = name
            graph_inputs.append(_value_info(name, node.meta["val"], dim_names))
            continue
        if not node.users:
            continue  # an unused parameter or buffer (num_batches_tracked) is left out of the model
        value = ep._lifted_value(spec)
        lowering.env[node] = b.initializer(node.name, value.detach().numpy())
    out_values = lowering.run()
    graph_outputs = []
    out_nodes = list(out_values)
    for k, out in enumerate(out_nodes):
        src = lowering.v(out)
        name = output_names[k] if output_names and k < len(output_names) else out.name
        b.op("Identity", [src], hint="out")
        b.nodes[-1].output[0] = name
        graph_outputs.append(_value_info(name, out.meta["val"], dim_names))
    graph = onnx.helper.make_graph(b.nodes, "main_graph", graph_inputs, graph_outputs, b.initializers)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset_version)],
                                   producer_name="pyctorch", producer_version=pyctorch.__version__)
    model.ir_version = min(model.ir_version, 10)
    onnx.checker.check_model(model)
    return model


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None,
           custom_translation_table=None, report=False, optimize=True, verify=False, profile=False,
           dump_exported_program=False, artifacts_dir=".", export_params=True, keep_initializers_as_inputs=False,
           dynamic_axes=None, training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Export model to ONNX (see the module docstring). Returns an ONNXProgram (dynamo=True) or None."""
    _onnx()
    from pyctorch.export import ExportedProgram, export as export_program
    from pyctorch.export._dynamic import SymExpr
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict) and kwargs is None and not dynamo:
        args, kwargs = args[:-1], args[-1]  # torch's legacy convention: a trailing dict holds the kwargs
    kwargs = dict(kwargs or {})
    opset = _DEFAULT_OPSET if opset_version is None else opset_version
    if dynamic_axes and dynamic_shapes is not None:
        raise ValueError("dynamic_axes and dynamic_shapes cannot both be given")
    _in_export[0] = True
    try:
        if isinstance(model, ExportedProgram):
            ep = model
        else:
            if training == TrainingMode.EVAL and hasattr(model, "training"):
                was_training = model.training
                model.eval()
            else:
                was_training = None
            try:
                shapes = dynamic_shapes
                if dynamic_axes:
                    shapes = _dynamic_shapes_from_axes(model, args, kwargs, input_names, dynamic_axes)
                ep = export_program(model, args, kwargs, dynamic_shapes=shapes)
            finally:
                if was_training:
                    model.train()
        ep = ep.run_decompositions()
        dim_names = {}
        for sym in ep._symbols:
            dim_names[str(SymExpr({(sym.index,): 1}))] = sym.dim_name or sym.name
        if dynamic_axes:  # output axes named by the user
            outs = [n for n in ep.graph.nodes if n.op == "output"][0].args[0]
            for k, out in enumerate(outs):
                key = output_names[k] if output_names and k < len(output_names) else out.name
                axes = dynamic_axes.get(key)
                meta = out.meta.get("val")
                if not axes or meta is None:
                    continue
                if isinstance(axes, (list, tuple)):
                    axes = {d: f"{key}_dynamic_axes_{i + 1}" for i, d in enumerate(axes)}
                for d, dim_name in axes.items():
                    if not isinstance(meta.shape[d], int):
                        dim_names.setdefault(str(meta.shape[d]), str(dim_name))
        proto = _to_model(ep, input_names, output_names, opset, export_params, dim_names)
    finally:
        _in_export[0] = False
    program = ONNXProgram(proto, ep)
    if f is not None:
        program.save(f if not isinstance(f, io.IOBase) else f)
    return program if dynamo else None
