"""torch._dynamo.explain: one capture of a call, reported as torch's ExplainOutput."""
import time

__all__ = ["ExplainOutput", "GraphCompileReason", "explain_call"]


class GraphCompileReason:
    """Why a graph ended: `reason` and the user frames (`user_stack`) where it happened."""

    def __init__(self, reason, user_stack, graph_break=True):
        self.reason, self.user_stack, self.graph_break = reason, user_stack, graph_break

    def __repr__(self):
        return f"GraphCompileReason(reason={self.reason!r}, user_stack={self.user_stack!r})"


class ExplainOutput:
    def __init__(self, graphs, graph_count, graph_break_count, break_reasons, op_count, ops_per_graph=None,
                 out_guards=None, compile_times=None):
        self.graphs, self.graph_count, self.graph_break_count = graphs, graph_count, graph_break_count
        self.break_reasons, self.op_count, self.ops_per_graph = break_reasons, op_count, ops_per_graph
        self.out_guards, self.compile_times = out_guards, compile_times

    def __str__(self):
        out = f"Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\n" \
              f"Op Count: {self.op_count}\n"
        out += "Break Reasons:\n"
        for k, reason in enumerate(self.break_reasons):
            out += f"  Break Reason {k + 1}:\n    Reason: {reason.reason}\n    User Stack:\n"
            for frame in reason.user_stack:
                out += f"      <FrameSummary file {frame.filename}, line {frame.lineno} in {frame.name}>\n"
        if self.ops_per_graph is not None:
            out += "Ops per Graph:\n"
            for k, ops in enumerate(self.ops_per_graph):
                out += f"  Ops {k + 1}:\n" + "".join(f"    {op}\n" for op in ops)
        if self.compile_times is not None:
            out += f"Compile Times: {self.compile_times}\n"
        return out


def explain_call(fn, args, kwargs):
    from pyctorch.nn import Module
    from .eval_frame import CompiledCallable
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    module = fn if isinstance(fn, Module) else getattr(fn, "__self__", None)
    compiled = CompiledCallable(fn, module=module if isinstance(module, Module) else None, backend=keep)
    start = time.perf_counter()
    compiled(*args, **kwargs)
    seconds = time.perf_counter() - start
    breaks = getattr(compiled, "last_breaks", [])
    reasons = [GraphCompileReason(reason, [frame] if frame is not None else []) for reason, frame in breaks]
    ops = [[node.target for node in gm.graph.nodes if node.op in ("call_function", "call_method")]
           for gm in graphs]
    guards = [entry.guards for entry in compiled.entries]
    return ExplainOutput(graphs, len(graphs), len(reasons), reasons, sum(len(o) for o in ops), ops, guards,
                         f"TorchDynamo compilation metrics: capture {seconds:.4f} s")
