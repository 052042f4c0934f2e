"""torch._inductor: pyctorch's graph compiler, the default backend of torch.compile.

compile_fx(gm, example_inputs) returns the callable that runs a captured graph (Note [Compiled callables] in
pyctorch/_dynamo/eval_frame.py). Groups of pointwise calls become generated C kernels with their backward
(fusion.py, Note [Pointwise fusion]; with last-dim reductions where nothing records: row_kernels.py, Note [Row
kernels]), in the forward graph and in the backward graph built ahead of time (aot.py, Note [AOT backward]); the
rest stays calls of the op table's functions, and the whole graph runs
as Python generated from it (codegen.py), with the tensors it holds bound as constants, so none of the Python
module and functional layers that produced the calls runs again. GEMMs, convolutions and attention stay calls
into the hand-written kernels.
"""
from . import config  # noqa: F401

__all__ = ["compile_fx", "config"]


def compile_fx(gm, example_inputs, **kwargs):
    """Where gradients are needed, a forward graph and a backward graph built ahead of time (Note [AOT backward] in
    aot.py), each fused with its reductions (they run without recording); else the graph fused as it is, its
    reductions too when it runs without recording."""
    import pyctorch
    from .aot import aot_compile
    from .codegen import python_runner
    from .fusion import fuse
    run = aot_compile(gm, example_inputs, _unrecorded_runner, _unrecorded_runner)
    if run is not None:
        gm.fused_kernels = run.forward_graph.fused_kernels
        return run
    gm.fused_kernels = fuse(gm, reductions=not pyctorch.is_grad_enabled())
    return python_runner(gm)


def _unrecorded_runner(gm):
    """The runner of a graph that runs without recording: its groups fused, reductions included."""
    from .codegen import python_runner
    from .fusion import fuse
    gm.fused_kernels = fuse(gm, reductions=True)
    return python_runner(gm)
