"""torch._inductor: pyctorch's graph compiler, the default backend of torch.compile.

compile_fx(gm, example_inputs) returns the callable that runs a captured graph (Note [Compiled callables] in
pyctorch/_dynamo/eval_frame.py). Groups of pointwise calls become generated C kernels with their backward
(fusion.py, Note [Pointwise fusion]); the rest stays calls of the op table's functions, and the whole graph runs
as Python generated from it (codegen.py), with the tensors it holds bound as constants, so none of the Python
module and functional layers that produced the calls runs again. GEMMs, convolutions and attention stay calls
into the hand-written kernels.
"""
from . import config  # noqa: F401

__all__ = ["compile_fx", "config"]


def compile_fx(gm, example_inputs, **kwargs):
    from .codegen import python_runner
    from .fusion import fuse
    gm.fused_kernels = fuse(gm)
    return python_runner(gm)
