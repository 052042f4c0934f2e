"""torch._inductor: pyctorch's graph compiler, the default backend of torch.compile.

compile_fx(gm, example_inputs) returns the callable that runs a captured graph (Note [Compiled callables] in
pyctorch/_dynamo/eval_frame.py): Python generated from the graph (codegen.py) that calls the recorded op-table
functions straight after each other, with the tensors the graph holds bound as constants, so none of the Python
module and functional layers that produced the calls runs again.
"""
from . import config  # noqa: F401

__all__ = ["compile_fx", "config"]


def compile_fx(gm, example_inputs, **kwargs):
    from .codegen import python_runner
    return python_runner(gm)
