"""torch.jit with TorchScript's eager meaning: pyctorch has no TorchScript compiler, tracer or graph IR.

Everything here behaves as torch.jit does when TorchScript is off (Note [Eager TorchScript] in _script.py):
the decorators (export, ignore, unused, _overload, interface...) mark and return their function or class,
`script` returns its argument, `trace` runs the callable once on the example inputs and returns it
(Note [Tracing without a graph] in _trace.py), fork runs at once and returns a completed Future,
is_scripting()/is_tracing() are False, and the fusion settings are stored. What only a compiled graph
can do (jit.save / jit.load, export_opnames) raises a RuntimeError saying so.
"""
from . import annotations  # noqa: F401
from ._async import fork, wait
from ._freeze import freeze, optimize_for_inference, run_frozen_optimizations  # noqa: F401
from ._fuser import (enable_onednn_fusion, fuser, last_executed_optimized_graph,  # noqa: F401
                     onednn_fusion_enabled, optimized_execution, set_fusion_strategy, strict_fusion)
from ._modifiers import (FunctionModifiers, _drop, _copy_to_script_wrapper, _overload,  # noqa: F401
                         _overload_method, export, ignore, is_scripting, unused)
from ._script import (Attribute, CompilationUnit, RecursiveScriptClass, RecursiveScriptModule,  # noqa: F401
                      ScriptFunction, ScriptModule, ScriptWarning, TopLevelTracedModule, TracedModule, interface,
                      script, script_method)
from ._serialization import (export_opnames, jit_module_from_flatbuffer, load, save,  # noqa: F401
                             save_jit_module_to_flatbuffer)
from ._trace import (TracerWarning, TracingCheckError, _script_if_tracing, is_tracing,  # noqa: F401
                     script_if_tracing, trace, trace_module)
from ._types import Final, annotate, isinstance, _isinstance, _unwrap_optional  # noqa: F401
from ..futures import Future

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze", "interface", "ignore",
           "isinstance", "load", "onednn_fusion_enabled", "optimize_for_inference", "save", "script",
           "script_if_tracing", "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]


class Error(Exception):
    """torch.jit.Error: the exception a TorchScript `raise` becomes (never raised by pyctorch itself)."""


# torch's private aliases, which some libraries call
_fork = fork
_wait = wait
_set_fusion_strategy = set_fusion_strategy
