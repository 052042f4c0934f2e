"""From a capture's records to a cache entry: the fx GraphModule, the backend's compiled callable, the output
layout; or, when the capture found a graph break, an entry that runs eagerly (Note [Graph breaks])."""
import operator

import pyctorch
from pyctorch.utils import _pytree as pytree

from .eval_frame import _Entry

__all__ = ["build_entry", "build_graph_module", "capture_breaks"]


def _tensor_names(compiled, guards):
    """id(tensor) -> a readable attribute name, for the parameters and buffers of the guarded modules."""
    names = {}
    if compiled is not None and compiled.module is not None:
        for name, t in list(compiled.module.named_parameters(remove_duplicate=False)) + \
                list(compiled.module.named_buffers(remove_duplicate=False)):
            names.setdefault(id(t), "self_" + name.replace(".", "_"))
    return names


def capture_breaks(run, guards, seen, owned=()):
    """Why the captured run cannot be replayed as a graph: [(reason, frame or None)]. owned: ids of the tensors
    of the guarded modules (their views in the graph are the graph's own)."""
    breaks = list(run.breaks)
    why = guards.changed_by_run()
    if why:
        breaks.append((why, None))
    name = seen.changed()
    if name:
        breaks.append((f"the run assigned the global '{name}', which its graph cannot redo", None))
    if not breaks:
        traced = {t.untyped_storage().data_ptr() for t in run.keep
                  if run.traced(t) and t.numel() > 0 and t.device.type != "meta"}
        for t in run.consts:
            if id(t) not in owned and t.numel() > 0 and t.device.type != "meta" and t.untyped_storage().data_ptr() in traced:
                breaks.append(("a tensor made outside the op table (where the capture cannot see it) aliases "
                               "one computed in the graph", None))
                break
    return breaks


def build_graph_module(run, output_tensors, names=None):
    """The fx GraphModule of the run's calls: placeholders for the inputs, get_attr for the tensors it holds
    (parameters, buffers, constants), the calls in order, and a tuple of output_tensors' values as output."""
    from pyctorch import fx
    names = names or {}
    graph = fx.Graph()
    root = {}
    env = {}
    from .capture import TensorMeta
    inputs = run.input_of  # an input written in place is rebound to the op's value, but stays the input
    for k in range(len(inputs)):
        env[("input", k)] = graph.placeholder(f"arg{k}_1")
        env[("input", k)].meta["tensor_meta"] = TensorMeta(inputs[k])

    def held(key):
        node = env.get(key)
        if node is None:
            t = run.consts[key[1]]
            attr = names.get(id(t)) or f"_tensor_constant{key[1]}"
            root[attr] = t
            node = env[key] = graph.get_attr(attr)
            node.meta["tensor_meta"] = TensorMeta(t)
        return node

    def value(ref):
        key = ref.key
        if key[0] == "const":
            return held(key)
        if key[0] == "item" and key not in env:
            env[key] = graph.call_function(operator.getitem, (env[("op", key[1])], key[2]))
        return env[key]

    def lower(arg):
        from pyctorch.export._trace import Ref
        if isinstance(arg, Ref):
            return value(arg)
        if isinstance(arg, list):
            return [lower(a) for a in arg]
        if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
            return tuple(lower(a) for a in arg)
        if isinstance(arg, slice):
            return slice(lower(arg.start), lower(arg.stop), lower(arg.step))
        return arg

    for index, call in enumerate(run.calls):
        args = tuple(lower(a) for a in call.args)
        kwargs = {k: lower(v) for k, v in call.kwargs.items()}
        if call.kind == "call_method":
            node = graph.call_method(call.target, args, kwargs)
        else:
            node = graph.call_function(call.target, args, kwargs)
        if call.meta is not None:
            node.meta["tensor_meta"] = call.meta
        env[("op", index)] = node
    outs = tuple(value(run.ref_of(t)) for t in output_tensors)
    graph.output(outs)
    return fx.GraphModule(root, graph)


def _log_break(compiled, breaks):
    from .._logging import artifact_enabled, log_artifact
    if not artifact_enabled("graph_breaks"):
        return
    for reason, frame in breaks:
        lines = []
        if frame is not None:
            lines.append(f"Graph break in user code at {frame.filename}:{frame.lineno}")
        lines.append(f"Graph Break Reason: {reason}")
        if frame is not None:
            lines += ["User code traceback:", f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}']
            if frame.line:
                lines.append(f"    {frame.line}")
        log_artifact("graph_breaks", "\n".join(lines), f"[{compiled.frame_id}/{len(compiled.entries)}]")


def build_entry(compiled, run, guards, seen, input_positions, args, kwargs, result):
    entry = _Entry()
    entry.guards, entry.inputs, entry.gm, entry.compiled = guards, input_positions, None, None
    entry.switches = any(c.multi is False and c.target is not operator.setitem for c in run.calls)
    out_leaves, out_spec = pytree.tree_flatten(result)
    names = _tensor_names(compiled, guards)
    breaks = capture_breaks(run, guards, seen, names)
    if breaks:
        compiled.last_breaks = breaks
        _log_break(compiled, breaks)
        return entry
    compiled.last_breaks = []
    slots = [i for i, leaf in enumerate(out_leaves) if isinstance(leaf, pyctorch.Tensor)]
    gm = build_graph_module(run, [out_leaves[i] for i in slots], names)
    leaves = pytree.tree_leaves((args, kwargs))
    example_inputs = [leaves[i] for i in input_positions]
    from .backends import lookup_backend
    entry.compiled = lookup_backend(compiled.backend)(gm, example_inputs, **_backend_options(compiled))
    entry.gm = gm
    if out_spec.is_leaf() and slots == [0]:  # the result is the one tensor itself
        entry.out_spec, entry.out_leaves, entry.out_slots = None, None, None
    else:
        entry.out_spec, entry.out_leaves, entry.out_slots = out_spec, [
            None if isinstance(leaf, pyctorch.Tensor) else leaf for leaf in out_leaves], slots
    return entry


def _backend_options(compiled):
    return {}
