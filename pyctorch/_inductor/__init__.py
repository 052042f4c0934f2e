"""torch._inductor: pyctorch's graph compiler, the default backend of torch.compile.

compile_fx(gm, example_inputs) returns the callable that runs a captured graph (Note [Compiled callables] in
pyctorch/_dynamo/eval_frame.py). Groups of pointwise calls become generated C kernels with their backward
(fusion.py, Note [Pointwise fusion]), in the forward graph and in the backward graph built ahead of time (aot.py,
Note [AOT backward]); the rest stays calls of the op table's functions, and the whole graph runs
as Python generated from it (codegen.py), with the tensors it holds bound as constants, so none of the Python
module and functional layers that produced the calls runs again. GEMMs, convolutions and attention stay calls
into the hand-written kernels.
"""
from . import config  # noqa: F401

__all__ = ["compile_fx", "config"]


def compile_fx(gm, example_inputs, **kwargs):
    """The graph fused; where gradients are needed, run with a backward graph built ahead of time and fused too
    (Note [AOT backward] in aot.py), else as it is."""
    from .aot import aot_compile
    from .codegen import python_runner
    from .fusion import fuse
    gm.fused_kernels = fuse(gm)
    return aot_compile(gm, example_inputs, python_runner, _fused_runner) or python_runner(gm)


def _fused_runner(gm):
    from .codegen import python_runner
    from .fusion import fuse
    gm.fused_kernels = fuse(gm)
    return python_runner(gm)
