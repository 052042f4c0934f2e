"""torch.export for pyctorch: whole-model capture into an ExportedProgram of aten calls.

    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("batch", max=64)}})
    print(ep)                       # the graph, its signature, the dynamic dims' ranges
    ep.module()(x2)                 # runs the graph; checks x2's shape against the ranges
    torch.export.save(ep, "m.pt2"); ep2 = torch.export.load("m.pt2")

How the graph is captured: Note [Export capture] (_trace.py); how dynamic dims become symbolic sizes:
Note [Dynamic dims by reruns] (_dynamic.py); the file format of save/load: Note [Exported program files]
(_serialize.py).
"""
import pyctorch
from pyctorch.nn import Module
from pyctorch.utils import _pytree as pytree

from ._dynamic import Dim, dims, ValueRange, input_names, parse_dynamic_shapes, plan_runs, fit_runs
from ._trace import Ref, TraceRun, capturing, GuardOnDataDependentSymNode
from .exported_program import ExportedProgram, build_graph, range_constraints_of
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument, ConstantArgument, SymIntArgument)
from . import graph_signature, exported_program, dynamic_shapes  # noqa: F401
from ._decomp import default_decompositions
from ._serialize import save, load

__all__ = ["export", "ExportedProgram", "Dim", "dims", "save", "load", "ExportGraphSignature",
           "default_decompositions", "ShapesCollection", "export_for_training"]

ShapesCollection = dynamic_shapes.ShapesCollection


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=(),
           prefer_deferred_runtime_asserts_over_guards=False):
    """Capture mod(*args, **kwargs) as an ExportedProgram (see the module docstring)."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        from pyctorch._dynamo.exc import UserError, UserErrorType
        raise UserError(UserErrorType.INVALID_INPUT,
                        f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    kwargs = dict(kwargs or {})
    leaves, in_spec = pytree.tree_flatten((args, kwargs))
    symbols, per_leaf = parse_dynamic_shapes(dynamic_shapes, mod, args, kwargs, leaves)
    return _export(mod, args, kwargs, leaves, in_spec, symbols, per_leaf,
                   input_names(mod, args, kwargs))


def export_for_training(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
                        preserve_module_call_signature=()):
    return export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict)


def _params_and_buffers(mod):
    params = list(mod.named_parameters())
    buffers = []
    for name, b in mod.named_buffers():
        owner_path, _, field = name.rpartition(".")
        owner = mod.get_submodule(owner_path) if owner_path else mod
        buffers.append((name, b, field not in owner._non_persistent_buffers_set))
    return params, buffers


def _constant_paths(mod, registered):
    """id(tensor) -> attribute path, for tensors held by modules as plain attributes (torch lifts them under
    that name)."""
    paths = {}
    for prefix, m in mod.named_modules():
        for attr, value in vars(m).items():
            if isinstance(value, pyctorch.Tensor) and id(value) not in registered and not attr.startswith("_"):
                paths.setdefault(id(value), f"{prefix}.{attr}" if prefix else attr)
    return paths


def _resized(t, dims_to_size):
    """t tiled or cut along the given dims to the given sizes (the run inputs of Note [Dynamic dims by reruns])."""
    for d, size in dims_to_size.items():
        if t.shape[d] != size:
            t = t.index_select(d, pyctorch.arange(size) % t.shape[d])
    return t


def _run_once(mod, leaves, in_spec, per_leaf, sizes, params, buffers):
    state = [(t, t.detach().clone()) for _, t in params] + [(t, t.detach().clone()) for _, t, _ in buffers]
    inputs = []
    with pyctorch.no_grad():
        for k, leaf in enumerate(leaves):
            if isinstance(leaf, pyctorch.Tensor):
                leaf = _resized(leaf.detach(), {d: sizes[s] for d, s in per_leaf[k].items()}).clone()
            inputs.append(leaf)
    run = TraceRun()
    for k, leaf in enumerate(inputs):
        if isinstance(leaf, pyctorch.Tensor):
            run.bind(leaf, Ref("input", k))
    for name, p in params:
        run.bind(p, Ref("param", name))
    for name, b, _ in buffers:
        run.bind(b, Ref("buffer", name))
    call_args, call_kwargs = pytree.tree_unflatten(inputs, in_spec)
    try:
        with capturing(run):
            out = mod(*call_args, **call_kwargs)
            out_leaves, run.out_spec = pytree.tree_flatten(out)
            run.outputs = [run.ref_of(o) if isinstance(o, pyctorch.Tensor) else o for o in out_leaves]
    finally:
        with pyctorch.no_grad():
            for t, saved in state:
                t.copy_(saved)
    return run


def _export(mod, args, kwargs, leaves, in_spec, symbols, per_leaf, names):
    params, buffers = _params_and_buffers(mod)
    steps, corners, check = plan_runs(symbols)
    sizes_list = corners + ([check] if check is not None else [])
    runs = [_run_once(mod, leaves, in_spec, per_leaf, sizes, params, buffers) for sizes in sizes_list]
    records, outputs = fit_runs(runs, symbols, steps, corners, check)
    base = runs[0]
    registered = {id(t) for _, t in params} | {id(t) for _, t, _ in buffers}
    paths = _constant_paths(mod, registered)
    const_names = {k: paths[id(c)] for k, c in enumerate(base.consts) if id(c) in paths}
    graph, signature = build_graph(records, outputs, names=names, leaves=leaves, params=params, buffers=buffers,
                                   consts=base.consts, const_names=const_names, symbols=symbols)
    state_dict = {name: p for name, p in params}
    state_dict.update({name: b for name, b, persistent in buffers if persistent})
    constants = {name: b for name, b, persistent in buffers if not persistent}
    for spec in signature.input_specs:
        if spec.kind == InputKind.CONSTANT_TENSOR:
            k = int(next(key for key, n in ((k, const_names.get(k, f"lifted_tensor_{k}"))
                                            for k in range(len(base.consts))) if n == spec.target))
            constants[spec.target] = base.consts[k]
    return ExportedProgram(Module(), graph, signature, state_dict, range_constraints_of(symbols),
                           constants=constants, example_inputs=(tuple(args), dict(kwargs)), in_spec=in_spec,
                           out_spec=base.out_spec, symbols=symbols)
